"""Recall quality, measured: hit@1, hit@5 and MRR on a small bilingual evaluation set.

    .venv/bin/python benchmarks/recall_eval.py [--stand-in] [--no-write]
    # prints, and replaces its section of docs/recall-quality.md

The set (benchmarks/recall_eval/queries.json) is queries over examples/workspace with the text
fragments of their relevant bullets; benchmarks/recall_eval/paraphrases.json adds questions that
say what a bullet says in other words, six in English and six in Chinese. The workspace is
synced into a fresh reference server, then each query is asked: the store's own `recall`
(agent-memory's BM25 and local weighting), `memfuse recall` without a reranker (by words and,
with the `semantic` extra installed, by meaning), the same by words alone (`--without meaning`),
and `memfuse recall` with the reranker from the environment (AGENT_MEMORY_RERANK_*), when one is
configured. Each set is also scored by the language of its questions (a Chinese question must
find its bullet as well as an English one does). `--stand-in` adds a row for
the tests' loopback reranker (tests/rerank_server.py: term overlap, CJK included): it shows the
reranking path end to end, deterministic and offline; it is not a cross-encoder, and its
numbers say nothing about Qwen3-Reranker's. Every number is measured.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from sections import replace_section

ROOT = Path(__file__).resolve().parent.parent
MEMFUSE = str(Path(sys.executable).parent / "memfuse")


def score(ranked: list[str], relevant: list[str]) -> tuple[int, int, float]:
    """(hit@1, hit@5, reciprocal rank) of one ranked list of texts."""
    for rank, text in enumerate(ranked, start=1):
        if any(fragment in text for fragment in relevant):
            return int(rank == 1), int(rank <= 5), 1 / rank
    return 0, 0, 0.0


def run(argv: list[str], env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run([MEMFUSE, *argv, "--json"], capture_output=True, env=env, check=False)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


STAND_IN = "memfuse recall + stand-in reranker (term overlap)"


def stand_in(stack: ExitStack) -> dict[str, str]:
    """Start the loopback reranker; the variables that point memfuse at it."""
    sys.path.insert(0, str(ROOT))
    from tests.rerank_server import base_url, serve

    server = stack.enter_context(serve("ok"))
    return {"AGENT_MEMORY_RERANK_PROVIDER": "jina", "AGENT_MEMORY_RERANK_API_KEY": "stand-in",
            "AGENT_MEMORY_RERANK_BASE_URL": base_url(server)}  # fmt: skip


WORDS = "memfuse recall, by words alone (--without meaning)"
PLAIN = "memfuse recall, no reranker"


def chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def table(title: str, systems: dict[str, list[tuple[int, int, float]]]) -> list[str]:
    lines = [title, "", "| system | hit@1 | hit@5 | MRR |", "|---|---:|---:|---:|"]
    for name, rows in systems.items():
        n = len(rows)
        lines.append(f"| {name} | {sum(r[0] for r in rows) / n:.2f} | {sum(r[1] for r in rows) / n:.2f}"
                     f" | {sum(r[2] for r in rows) / n:.2f} |")  # fmt: skip
    return lines


def main() -> None:
    folder = ROOT / "benchmarks" / "recall_eval"
    spec = json.loads((folder / "queries.json").read_text())
    paraphrases = json.loads((folder / "paraphrases.json").read_text())["queries"]
    sets = {"queries.json": spec["queries"], "paraphrases.json": paraphrases}
    sys.path.insert(0, str(ROOT / "src"))
    from memfuse.recall.semantic import describe, installed

    model = describe(installed())
    with tempfile.TemporaryDirectory(prefix="memfuse-eval-") as tmp, ExitStack() as stack:
        root = Path(tmp)
        ws = root / "workspace"
        shutil.copytree(ROOT / spec["workspace"] / "memory", ws / "memory")
        shutil.copy(ROOT / spec["workspace"] / "MEMORY.md", ws / "MEMORY.md")
        config = root / "mcporter.json"
        entry = {"command": sys.executable, "args": ["-m", "memfuse.refserver"],
                 "env": {"AGENT_MEMORY_DB": str(root / "store.db")}}  # fmt: skip
        config.write_text(json.dumps({"mcpServers": {"agent-memory": entry}, "imports": []}))
        base = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_MEMORY_RERANK")}
        base |= {"MEMFUSE_WORKSPACE": str(ws), "MEMFUSE_MCPORTER_CONFIG": str(config),
                 "HOME": str(root)}  # fmt: skip
        run(["sync", "--all", "--now", spec["now"]], base)
        with_reranker = {**base, **{k: v for k, v in os.environ.items()
                                    if k.startswith("AGENT_MEMORY_RERANK")}}  # fmt: skip
        reranker = bool(with_reranker.get("AGENT_MEMORY_RERANK_API_KEY"))
        asked: list[tuple[str, dict[str, str], list[str]]] = [
            (PLAIN, base, []), (WORDS, base, ["--without", "meaning"])]  # fmt: skip
        if reranker:
            asked.append(("memfuse recall + reranker", with_reranker, []))
        if "--stand-in" in sys.argv:
            asked.append((STAND_IN, {**base, **stand_in(stack)}, []))
        from datetime import UTC, datetime

        from memfuse.refserver.store import Store

        store = Store(str(root / "store.db"), "default", lambda: datetime.now(UTC))
        scored: dict[str, dict[str, list[tuple[str, tuple[int, int, float]]]]] = {}
        for set_name, queries in sets.items():
            systems: dict[str, list[tuple[str, tuple[int, int, float]]]] = {
                "store recall only": []}  # fmt: skip
            for item in queries:
                q, relevant = item["query"], item["relevant"]
                own = [m["content"] for m in store.recall(q, 10)["memories"]]
                systems["store recall only"].append((q, score(own, relevant)))
                for name, env, extra in asked:
                    data = run(["recall", q, "--now", spec["now"], *extra], env)["data"]
                    ranked = [r["content"] for r in data["results"]]  # type: ignore[index]
                    systems.setdefault(name, []).append((q, score(ranked, relevant)))
            scored[set_name] = systems
    lines = [f"recall's model of meaning: {model}.", ""]
    for set_name, systems in scored.items():
        n = len(next(iter(systems.values())))
        lines += table(f"{set_name}: {n} queries over {spec['workspace']}:",
                       {k: [s for _q, s in v] for k, v in systems.items()})  # fmt: skip
        if not reranker and set_name == "queries.json":
            lines.append(
                "| memfuse recall + reranker | not measured: no AGENT_MEMORY_RERANK_* configured"
                " | | |"
            )
        for language, test in (("Chinese", chinese), ("English", lambda q: not chinese(q))):
            by = {
                k: [s for q, s in v if test(q)] for k, v in systems.items() if k in (PLAIN, WORDS)
            }
            count = len(by[PLAIN])
            lines += ["", *table(f"{set_name}, the {count} {language} questions:", by)]
        lines.append("")
    print("\n".join(lines))
    if "--no-write" not in sys.argv:
        from datetime import datetime

        head = (
            "## The bilingual example set\n\n"
            f"Measured by `benchmarks/recall_eval.py` on {datetime.now():%Y-%m-%d %H:%M}"
            " against the reference server (`.venv/bin/python benchmarks/recall_eval.py` to"
            " reproduce). A hit is a result containing one of the query's relevant fragments"
            " (benchmarks/recall_eval/queries.json, paraphrases.json). Without a reranker memfuse"
            " orders by the fused rank; agent-memory's priority/vitality weighting applies to"
            " reranker scores only (docs/decisions.md 66).\n\n"
        )
        if any(name == STAND_IN for name, _e, _x in asked):
            head += (
                "The stand-in row (`--stand-in`) is the tests' loopback reranker, which scores a"
                " document by the share of the query's terms it contains: it exercises the"
                " reranking path offline and deterministically. It is not a cross-encoder; what"
                " a real reranker does on this set is measured only where one is"
                " configured.\n\n"
            )
        path = ROOT / "docs" / "recall-quality.md"
        replace_section(path, "## The bilingual example set", head + "\n".join(lines).rstrip())


if __name__ == "__main__":
    main()
