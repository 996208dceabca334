"""Recall quality on LoCoMo, a public benchmark of long-term conversational memory nobody here
wrote: evidence recall@5/@10 and MRR per question category, for the store alone, a standard BM25
(bm25s), and `memfuse recall` with each of its stages switched off in turn — side by side, one run.
With the `semantic` extra installed, `memfuse recall` ranks by meaning too, and the row "by words
alone" is the lexical path (`--without meaning`); without the extra (or with MEMFUSE_SEMANTIC=off,
which the benchmark passes on) the two rows are the same.

    .venv/bin/pip install -e '.[bench]'                 # bm25s, for the baseline
    .venv/bin/python benchmarks/recall_locomo.py ../shared/data/locomo-dev
    # prints, and replaces the LoCoMo section of docs/recall-quality.md (--no-write: print only)

Each conversation is one agent's workspace: each session a `## HH:MM` section of the journal of
its date, each turn a bullet `- Speaker: text` (a shared photo's caption appended). The
workspace is synced into its own reference server (`memfuse sync --all`), then every question
is asked through `memfuse recall --batch` (one session, one index for all): the index as a user
has it after the sync, no tidy in between (the sync embeds what it stored once it let go of the
lock). Then `memfuse tidy` runs and the questions are asked again: the figure after the night.
The difference with meaning and without is given with its 95 % paired bootstrap interval
(2 000 resamples of the questions, a fixed seed). `--quick` asks only those three rows. A question is
answered as far as its evidence turns are in the top k: recall@k is the share of its evidence
turns among the first k results, MRR the reciprocal rank of the first one (within the first 20).
The data stays where it is (its licence is non-commercial): the benchmark takes the folder.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from sections import replace_section

ROOT = Path(__file__).resolve().parent.parent
MEMFUSE = str(Path(sys.executable).parent / "memfuse")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SECTION = "## LoCoMo"
BILINGUAL = "## The bilingual example set"
DEPTH = 20  # results asked for: recall@5, @10 and MRR within 20
SHIPPED = "memfuse recall, after sync (as shipped)"
WORDS = "  by words alone (without meaning)"
TIDIED = "memfuse recall, after tidy"
# memfuse recall's variants: the full pipeline, then each stage switched off (--without).
VARIANTS = {
    SHIPPED: [],
    WORDS: ["meaning"],
    "  without the store": ["store"],
    "  without neighbouring bullets": ["near"],
    "  without dates": ["dates"],
    "  without the local index (the store, through memfuse)": ["index"],
}


@dataclass
class Conversation:
    name: str
    workspace: Path
    by_location: dict[str, str] = field(default_factory=dict)  # memory/D.md:LINE -> dia_id
    by_position: dict[str, str] = field(default_factory=dict)  # D#HHMM-N -> dia_id
    by_text: dict[str, str] = field(default_factory=dict)
    texts: list[tuple[str, str]] = field(default_factory=list)  # (dia_id, bullet text)
    questions: list[tuple[str, int, list[str]]] = field(default_factory=list)
    last_day: str = ""


def bullet(turn: dict[str, str]) -> str:
    text = " ".join(turn["text"].split())
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return f"{turn['speaker']}: {text}"


def build(path: Path, root: Path) -> Conversation:
    """A LoCoMo conversation as a workspace of journals, and how its bullets map back."""
    from memfuse.workspace.journal import parse

    data = json.loads(path.read_text(encoding="utf-8"))
    conv = Conversation(path.stem, root / path.stem)
    (conv.workspace / "memory").mkdir(parents=True)
    days: dict[str, list[tuple[str, list[dict[str, str]]]]] = defaultdict(list)
    k = 1
    while f"session_{k}" in data:
        when = datetime.strptime(data[f"session_{k}_date_time"].strip(), "%I:%M %p on %d %B, %Y")
        days[f"{when:%Y-%m-%d}"].append((f"{when:%H:%M}", data[f"session_{k}"]))
        k += 1
    for day, sessions in sorted(days.items()):
        lines, ids = ["# Journal", ""], []
        for at, turns in sessions:
            lines.append(f"## {at}")
            for turn in turns:
                lines.append(f"- {bullet(turn)}")
                ids.append(turn["dia_id"])
            lines.append("")
        text = "\n".join(lines)
        (conv.workspace / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
        parsed = parse(text)
        assert len(parsed) == len(ids), (path.stem, day)
        for b, dia in zip(parsed, ids, strict=True):
            conv.by_location[f"memory/{day}.md:{b.line}"] = dia
            conv.by_position[f"{day}#{b.key}-{b.n}"] = dia
            conv.by_text[" ".join(b.text.split())] = dia
            conv.texts.append((dia, b.text))
        conv.last_day = day
    known = set(conv.by_location.values())
    for qa in data["qa"]:
        evidence = [e.strip() for item in qa.get("evidence", []) for e in re.split(r"[;,]", item)]
        evidence = list(dict.fromkeys(e for e in evidence if e in known))
        if evidence:
            conv.questions.append((qa["question"], int(qa["category"]), evidence))
    return conv


def memfuse(env: dict[str, str], *argv: str, stdin: str | None = None) -> str:
    done = subprocess.run([MEMFUSE, *argv], input=stdin, capture_output=True, text=True, env=env,
                          check=False)  # fmt: skip
    if done.returncode not in (0, 4):
        raise SystemExit(f"memfuse {' '.join(argv[:2])} failed: {done.stderr[-500:]}")
    return done.stdout


def environment(conv: Conversation, root: Path) -> dict[str, str]:
    config = root / f"{conv.name}.mcporter.json"
    entry = {"command": sys.executable, "args": ["-m", "memfuse.refserver"],
             "env": {"AGENT_MEMORY_DB": str(root / f"{conv.name}.db")}}  # fmt: skip
    config.write_text(json.dumps({"mcpServers": {"agent-memory": entry}, "imports": []}))
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("MEMFUSE_", "AGENT_MEMORY"))}
    if "MEMFUSE_SEMANTIC" in os.environ:  # the caller's choice of meaning, as a user's
        keep["MEMFUSE_SEMANTIC"] = os.environ["MEMFUSE_SEMANTIC"]
    return keep | {"MEMFUSE_WORKSPACE": str(conv.workspace), "MEMFUSE_MCPORTER_CONFIG": str(config),
                   "HOME": str(root / "home"), "MEMFUSE_TRANSPORT": "session"}  # fmt: skip


def ask(
    conv: Conversation, env: dict[str, str], without: list[str]
) -> tuple[list[list[str]], float]:
    """The ranked dia_ids of every question, and memfuse's own milliseconds per question."""
    now = f"{conv.last_day}T23:00"
    args = ["recall", "--batch", "--limit", str(DEPTH), "--now", now]
    for stage in without:
        args += ["--without", stage]
    out = memfuse(env, *args, stdin="\n".join(q for q, _c, _e in conv.questions) + "\n")
    ranked, own = [], []
    for line in out.splitlines():
        envelope = json.loads(line)
        data = envelope["data"]
        own.append(envelope["duration_ms"] - data.get("store_ms", 0))
        ranked.append([dia for row in data["results"] if (dia := locate(conv, row))])
    return ranked, statistics.median(own)


def locate(conv: Conversation, row: dict[str, str | None]) -> str | None:
    """The turn a result is: by its journal line, its URI's position, or its text."""
    if row.get("location") and row["location"] in conv.by_location:
        return conv.by_location[row["location"]]
    uri = row.get("uri") or ""
    if "://journal/" in uri:
        return conv.by_position.get(uri.split("://journal/", 1)[1])
    return conv.by_text.get(" ".join(str(row.get("content", "")).split()))


def bm25s_baseline(conv: Conversation) -> list[list[str]]:
    """The standard BM25 of the bm25s package, as shipped (its English stop words)."""
    import bm25s

    ids = [dia for dia, _t in conv.texts]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([t for _d, t in conv.texts], stopwords="en", show_progress=False),
                    show_progress=False)  # fmt: skip
    queries = bm25s.tokenize([q for q, _c, _e in conv.questions], stopwords="en",
                             show_progress=False)  # fmt: skip
    k = min(DEPTH, len(ids))
    found, _scores = retriever.retrieve(queries, k=k, show_progress=False)
    return [[ids[int(i)] for i in row] for row in found]


def scores(ranked: list[str], evidence: list[str]) -> tuple[float, float, float]:
    at5 = len(set(ranked[:5]) & set(evidence)) / len(evidence)
    at10 = len(set(ranked[:10]) & set(evidence)) / len(evidence)
    first = next((n for n, dia in enumerate(ranked[:DEPTH], start=1) if dia in evidence), None)
    return at5, at10, 1 / first if first else 0.0


def table(results: dict[str, list[tuple[int, tuple[float, float, float]]]]) -> list[str]:
    cats = sorted({category for rows in results.values() for category, _s in rows})
    head = ["system", "R@5", "R@10", "MRR", *(f"{CATEGORIES[c]} R@10" for c in cats)]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for name, rows in results.items():
        mean = [statistics.fmean(r[1][i] for r in rows) for i in range(3)]
        per = [statistics.fmean(r[1][1] for r in rows if r[0] == c) for c in cats]
        lines.append(f"| {name} | " + " | ".join(f"{v:.3f}" for v in (*mean, *per)) + " |")
    return lines


def first_table(results: dict[str, list[tuple[int, tuple[float, float, float]]]]) -> list[str]:
    """Each category's R@5 and MRR, with meaning and without (issue 49: the first hits)."""
    cats = sorted({category for rows in results.values() for category, _s in rows})
    head = ["system", *(f"{CATEGORIES[c]} @5 / MRR" for c in cats)]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for name in (SHIPPED, WORDS.strip()):
        cells = [
            f"{statistics.fmean(r[1][0] for r in results[name] if r[0] == c):.3f} / "
            f"{statistics.fmean(r[1][2] for r in results[name] if r[0] == c):.3f}"
            for c in cats
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def bootstrap(pairs: list[tuple[float, float]], n: int = 2000) -> tuple[float, float, float]:
    """The mean of a − b over the questions, with its 95 % paired bootstrap interval."""
    import random

    rng = random.Random(56)
    diffs = [a - b for a, b in pairs]
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(n))
    return statistics.fmean(diffs), means[int(0.025 * n)], means[int(0.975 * n) - 1]


def meaning_lines(named: dict[str, list[tuple[int, tuple[float, float, float]]]]) -> list[str]:
    """What meaning adds after sync (as shipped) and after tidy, with its intervals."""
    words = named[WORDS.strip()]
    lines = []
    for name in (SHIPPED, TIDIED):
        cells = []
        for metric, i in (("R@10", 1), ("MRR", 2)):
            pairs = [(a[1][i], b[1][i]) for a, b in zip(named[name], words, strict=True)]
            mean, low, high = bootstrap(pairs)
            cells.append(f"{metric} {mean:+.3f} [{low:+.3f}, {high:+.3f}]")
        lines.append(f"- {name}, with meaning less without: " + "; ".join(cells))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the folder of LoCoMo's conv-*.json files")
    parser.add_argument("--first", type=int, help="only the first N questions of each (a try)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/ alone")
    parser.add_argument("--quick", action="store_true", help="as shipped, words, after tidy")
    options = parser.parse_args()
    files = sorted(options.data.glob("conv-*.json"))
    if not files:
        raise SystemExit(f"no conv-*.json under {options.data}")
    sys.path.insert(0, str(ROOT / "src"))
    results: dict[str, list[tuple[int, tuple[float, float, float]]]] = defaultdict(list)
    own_ms: dict[str, list[float]] = defaultdict(list)
    embedded: list[int] = []
    variants = {k: v for k, v in VARIANTS.items() if not options.quick or k in (SHIPPED, WORDS)}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memfuse-locomo-") as tmp:
        root = Path(tmp)
        for path in files:
            conv = build(path, root)
            if options.first:
                conv.questions = conv.questions[: options.first]
            env = environment(conv, root)
            now = f"{conv.last_day}T23:00"
            synced = json.loads(memfuse(env, "sync", "--all", "--now", now, "-q", "--json"))
            embedded.append(int(synced["data"].get("recall_index_embedded", 0)))
            rows = {}
            if importlib.util.find_spec("bm25s") is not None:
                rows["bm25s, as shipped (baseline)"] = bm25s_baseline(conv)
            for name, without in variants.items():
                rows[name], ms = ask(conv, env, without)
                own_ms[name].append(ms)
            memfuse(env, "tidy", "--now", now, "-q")
            rows[TIDIED], _ms = ask(conv, env, [])
            order = ["  without the local index (the store, through memfuse)",
                     "bm25s, as shipped (baseline)", *variants, TIDIED]  # fmt: skip
            for name in (n for n in dict.fromkeys(order) if n in rows):
                for (_q, category, evidence), ranked in zip(
                    conv.questions, rows[name], strict=True
                ):
                    results[name].append((category, scores(ranked, evidence)))
            print(f"{conv.name}: {len(conv.questions)} questions, {len(conv.texts)} bullets,"
                  f" {embedded[-1]} embedded by the sync", flush=True)  # fmt: skip
    named = {("the store alone (agent-memory's BM25 and weighting, through memfuse)"
              if k.startswith("  without the local index") else k.strip()): v
             for k, v in results.items()}  # fmt: skip
    count = len(next(iter(results.values())))
    from memfuse.recall.semantic import describe, installed

    off = os.environ.get("MEMFUSE_SEMANTIC") == "off"
    lines = [
        f"recall's model of meaning: {describe(installed(), off)}.",
        "",
        f"{count} questions of {len(files)} conversations ({options.data.name}); measured"
        f" {datetime.now():%Y-%m-%d %H:%M} in {time.monotonic() - started:.0f} s; bullets"
        f" embedded by the sync, per conversation: {', '.join(map(str, embedded))}:",
        "",
        *table(named),
        "",
        "What meaning adds (95 % paired bootstrap intervals):",
        "",
        *meaning_lines(named),
        "",
        "The first hits by category, with meaning and without:",
        "",
        *first_table(named),
        "",
    ]
    if "bm25s, as shipped (baseline)" in named:
        base = statistics.fmean(r[1][1] for r in named["bm25s, as shipped (baseline)"])
        full = statistics.fmean(r[1][1] for r in named[SHIPPED])
        lines.append(
            f"memfuse recall's evidence recall@10 is {full / base:.2f}× the BM25 baseline's."
        )
    lines += [
        "Every memory in these stores is a synced bullet, which the local index ranks and the"
        " store's vote no longer reorders (docs/decisions.md 93): the store changes the answer"
        ' only by a bullet the local index did not return, so "without the store" is close'
        " to, or equal to, the whole pipeline here. It counts for memories the agent stored"
        " itself, which LoCoMo has none of.",
        "memfuse's own time per question in these batches (the envelope's duration less the time"
        " spent waiting on the store), median of the conversations' medians: "
        + ", ".join(f"{k.strip()} {statistics.median(v):.1f} ms" for k, v in own_ms.items()),
    ]
    print("\n".join(lines))
    if not options.no_write:
        write_section(lines, options.data)


def write_section(lines: list[str], data: Path) -> None:
    """The LoCoMo section of docs/recall-quality.md (the rest is left as it is)."""
    section = (
        f"{SECTION} (the development split)\n\n"
        "Reproduce: `.venv/bin/pip install -e '.[bench]' && .venv/bin/python"
        f" benchmarks/recall_locomo.py PATH/TO/{data.name}` (the data is not in this"
        " repository: LoCoMo, Maharana et al., ACL 2024, CC BY-NC 4.0). How it is built and"
        " scored: the benchmark's docstring.\n\n" + "\n".join(lines) + "\n"
    )
    replace_section(ROOT / "docs" / "recall-quality.md", SECTION, section, before=BILINGUAL)


if __name__ == "__main__":
    main()
