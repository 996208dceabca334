"""The `semantic` extra's model and the vector arithmetic recall uses: the real model where it is
installed (offline, home untouched, Chinese as well as English), the arithmetic everywhere."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memfuse.recall import semantic

np = pytest.importorskip("numpy")

NOTES = [
    "Send the quarterly report to finance before Friday",
    "The dentist appointment moved to Thursday afternoon",
    "Renew the server's TLS certificate next month",
    "周五前把季度报告发给财务部",
    "牙医的预约改到了周四下午",
    "服务器证书下个月过期，需要续签",
]
# (question, the note it means), each in the note's own language, sharing few of its words
QUESTIONS = [
    ("when is the finance summary due", 0),
    ("rescheduled my teeth check-up", 1),
    ("SSL cert expiring soon", 2),
    ("财务的季度总结什么时候交", 3),
    ("看牙的时间换了", 4),
    ("网站的安全证书快到期了", 5),
]


def _nearest(matrix: Any, query: Any, limit: int) -> list[tuple[int, float]]:
    """The `limit` rows nearest `query` by cosine, best first, as recall's index takes them."""
    return semantic.best(semantic.cosines(matrix, query), limit)


def test_nearest_gives_the_same_order_from_int8_chunks_as_from_floats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(7)
    matrix = semantic.quantize(rng.normal(size=(50, 16)))
    query = semantic.quantize(rng.normal(size=(1, 16)))[0]
    floats = semantic.unpacked(matrix)
    assert floats.dtype == np.float32
    monkeypatch.setattr(semantic, "FLOAT_ROWS_MAX", 10)
    monkeypatch.setattr(semantic, "CHUNK", 7)
    packed = semantic.unpacked(matrix)
    assert packed.dtype == np.int8
    best = _nearest(floats, query, 10)
    assert [i for i, _s in _nearest(packed, query, 10)] == [i for i, _s in best]
    assert best[0][1] >= best[-1][1] and len(best) == 10
    expected = np.argsort(-(matrix.astype(np.float32) @ query.astype(np.float32)))[:10]
    assert [i for i, _s in best] == expected.tolist()
    assert _nearest(floats, query, 0) == []


def test_quantized_rows_are_unit_vectors_times_the_scale() -> None:
    rows = semantic.quantize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert rows.dtype == np.int8
    assert rows[0].tolist() == [76, 102]  # 0.6 and 0.8 of 127
    assert rows[1].tolist() == [0, 0]


def real_model() -> Any:
    found = semantic.info()
    if found is None or semantic.installed() is None:
        pytest.skip("the semantic extra is not installed")
    return semantic.UniversalSentenceEncoder(found)  # a fresh one: loaded in the test


def test_the_real_model_runs_offline_and_writes_only_memfuses_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = real_model()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the model tried to reach the network")

    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    rows = model.embed(NOTES)
    assert rows.shape == (len(NOTES), 512) and rows.dtype == np.int8
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert [Path(p).parent for p in written] == [Path(".cache/memfuse/model")] * 2, written


def test_the_real_model_finds_a_chinese_note_as_well_as_an_english_one() -> None:
    model = real_model()
    notes = semantic.unpacked(model.embed(NOTES))
    found = {}
    for question, meant in QUESTIONS:
        best = _nearest(notes, model.embed([question], question=True)[0], 1)
        found[question] = best[0][0] == meant
    english = [found[q] for q, n in QUESTIONS if n < 3]
    chinese = [found[q] for q, n in QUESTIONS if n >= 3]
    assert sum(chinese) == sum(english) == 3, found


def test_closeness_lifts_the_neighbour_of_a_close_row_and_zeroes_the_crowd() -> None:
    # rows 0-2 are one file's, 3-5 another's: row 2 is close, the last of its file
    scores = np.array([0.1, 0.1, 0.9, 0.1, 0.1, 0.1], dtype=np.float32)
    before = np.array([0, 0, 1, 3, 3, 4])
    after = np.array([1, 2, 2, 4, 5, 5])
    lifted = semantic.closeness(scores, before, after).tolist()
    assert lifted[2] > lifted[1] > 0  # the close row, then the one beside it
    assert lifted[0] == lifted[3] == lifted[4] == lifted[5] == 0.0  # not the next file's row
    flat = semantic.closeness(np.full(4, 0.5, dtype=np.float32), *[np.arange(4)] * 2)
    assert flat.tolist() == [0.0] * 4  # nothing stands above the rest: nothing is close
    assert len(semantic.closeness(np.zeros(0, dtype=np.float32), *[np.arange(0)] * 2)) == 0


def _blas_threads() -> list[int]:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]


def test_the_model_and_the_cosines_run_on_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A question's small products on a BLAS thread a core cost ~40× their work (decisions
    330): the model is called, and the cosines taken, with numpy's BLAS held to one thread,
    whatever the process had, which is given back after."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    seen: list[list[int]] = []

    class Model:
        def __init__(self, threads: int) -> None:
            pass

        def encode(self, texts: list[str]) -> Any:
            seen.append(_blas_threads())
            return np.ones((len(texts), 4), dtype=np.float32)

    monkeypatch.setattr(semantic, "load", lambda found: (Model(1), None))
    if not _blas_threads():
        pytest.skip("numpy's BLAS is not one threadpoolctl can see")
    blocks: list[list[int]] = []
    real_block = semantic.one_thread

    @contextlib.contextmanager
    def watched() -> Iterator[None]:
        with real_block():
            blocks.append(_blas_threads())
            yield

    monkeypatch.setattr(semantic, "one_thread", watched)
    with threadpoolctl.threadpool_limits(limits=4, user_api="blas"):
        before = _blas_threads()
        assert before and max(before) > 1
        semantic.UniversalSentenceEncoder(semantic.ModelInfo("test", 0, Path())).embed(
            ["one question"], question=True
        )
        assert seen == [[1] * len(before)]
        matrix = semantic.quantize(np.eye(4))
        assert _nearest(semantic.unpacked(matrix), matrix[2], 1)[0][0] == 2
        assert blocks == [[1] * len(before)] * 2  # the model's call, then the cosines
        assert _blas_threads() == before
