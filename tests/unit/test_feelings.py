"""The feelings lexicon on the labelled bullets of benchmarks/ (issue 58): the floors of the
figures docs/operations.md gives, the seed's words kept, knowledge still first."""

from __future__ import annotations

from pathlib import Path

import pytest

from memfuse.settings import DEFAULT_EMOTION, DEFAULT_KNOWLEDGE
from memfuse.text.classify import Classifier

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
SEED_EMOTION = "开心 安心 难过 害羞 生气 担心 爱 想你 感动 温柔 幸福 寂寞 心疼 甜 happy sad angry love miss worried"
SEED_KNOWLEDGE = "喜欢 讨厌 禁止 偏好 必须 记住 规则 习惯 prefer must rule always never remember"
LEXICON = Classifier(DEFAULT_KNOWLEDGE, DEFAULT_EMOTION)


def _figures(name: str) -> tuple[float, float, int]:
    rows = [line.split("\t", 1) for line in (BENCH / name).read_text("utf-8").splitlines()]
    said = [
        (label, LEXICON.classify(text).type) for label, text in (r for r in rows if len(r) == 2)
    ]
    hits = sum(1 for label, got in said if label == got == "emotion")
    predicted = sum(1 for _label, got in said if got == "emotion")
    actual = sum(1 for label, _got in said if label == "emotion")
    return hits / max(predicted, 1), hits / actual, len(said)


@pytest.mark.parametrize(
    ("name", "precision", "recall"),
    [
        ("feelings.tsv", 0.97, 0.97),  # the set the lexicon was written on: 1.00 / 0.99
        ("feelings-unseen.tsv", 0.95, 0.9),  # read once the lexicon was frozen: 1.00 / 0.93
        ("feelings-heldout.tsv", 0.85, 0.5),  # never tuned on: 0.91 / 0.53
    ],
)
def test_feelings_are_read_as_emotions_on_the_labelled_bullets(
    name: str, precision: float, recall: float
) -> None:
    got_precision, got_recall, size = _figures(name)
    assert got_precision >= precision and got_recall >= recall, (got_precision, got_recall)
    assert size >= (200 if name == "feelings.tsv" else 70)


def test_the_seeds_words_are_all_kept() -> None:
    assert set(SEED_EMOTION.split()) <= set(DEFAULT_EMOTION)
    assert set(SEED_KNOWLEDGE.split()) <= set(DEFAULT_KNOWLEDGE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("用户今天有点焦虑", "emotion"),
        ("心情不错，一直在哼歌", "emotion"),
        ("User felt anxious about the review", "emotion"),
        ("She is stressed out by the move", "emotion"),
        ("I'd love to ship the fix on Friday", "event"),  # a false friend, not a feeling
        ("User would love the numbers by noon", "event"),
        ("他的爱好是拍照", "event"),
        ("去甜品店买了蛋糕", "event"),
        ("User loves the new flat", "emotion"),
        ("用户喜欢安静，今天很焦虑", "knowledge"),  # knowledge words still win (the seed's order)
        ("We decided to ship, everyone was nervous", "knowledge"),
    ],
)
def test_feelings_false_friends_and_the_seeds_order(text: str, expected: str) -> None:
    assert LEXICON.classify(text).type == expected
