"""The reference server's memory store: agent-memory 2.2's semantics on SQLite.

Several server processes may share one database (mcporter starts one per call), so every write
runs in a `BEGIN IMMEDIATE` transaction with a generous busy timeout.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from memfuse.state.sqlite import immediate
from memfuse.store.decay import STABILITY_DAYS, priority_of, vitality, weighted
from memfuse.store.generations import CAPACITY_5, GEN4_LIMITS, limit_variable
from memfuse.text.similarity import CJK, dice, profile
from memfuse.text.similarity import search_terms as tokens

PATH_DOMAINS = {"core", "emotion", "knowledge", "event", "system"}
URI_SHAPE = re.compile(r"^([a-z]+)://(.+)$", re.DOTALL)
NEAR_DUPLICATE = 0.92
SEMANTIC_NEAR = 0.8  # 4.x/5.x merge "semantic" near-duplicates of looser wording
GATE_EFFECTIVE = 20  # 4.x/5.x: effective characters a non-P0/P1 memory needs
NEAR_CANDIDATES = 8  # BM25's best few are checked exactly; a near-duplicate is always among them
RARE_TERMS = 6  # a near-duplicate shares nearly every term, so it shares the rarest ones too
LOW_VITALITY = 0.1
TIDY_THRESHOLD = 0.05

SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY, content TEXT NOT NULL, type TEXT NOT NULL, priority INTEGER NOT NULL,
    emotion_val REAL NOT NULL DEFAULT 0, vitality REAL NOT NULL DEFAULT 1,
    stability REAL NOT NULL, access_count INTEGER NOT NULL DEFAULT 0, last_accessed TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, source TEXT, agent_id TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_hash ON memories(agent_id, hash);
CREATE TABLE IF NOT EXISTS paths (
    id TEXT PRIMARY KEY, memory_id TEXT NOT NULL, agent_id TEXT NOT NULL, uri TEXT NOT NULL,
    domain TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE(agent_id, uri)
);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_terms USING fts5(
    memory_id UNINDEXED, agent_id UNINDEXED, type UNINDEXED, terms
);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_terms_vocab USING fts5vocab(memory_terms, 'row');
CREATE TABLE IF NOT EXISTS archived (
    id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, row TEXT NOT NULL, uris TEXT NOT NULL,
    archived_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS feedback (agent_id TEXT NOT NULL, memory_id TEXT, created_at TEXT);
CREATE TABLE IF NOT EXISTS snapshots (
    id TEXT PRIMARY KEY, memory_id TEXT NOT NULL, content TEXT NOT NULL, changed_by TEXT,
    action TEXT NOT NULL, created_at TEXT NOT NULL
);
"""

_STOPWORDS = {"the", "and", "for", "are", "was", "but", "not", "you", "with", "this", "that"}


class ToolError(Exception):
    """A handler error: answered as `{"error": …}` text, not as an MCP error."""


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def content_hash(content: str) -> str:
    return hashlib.sha256(content.strip().encode("utf-8")).hexdigest()[:16]


def gate_failures(content: str, memory_type: str, generation: int = 2) -> list[str]:
    """The write gate's failed checks, in agent-memory's wording; empty when it passes."""
    failures: list[str] = []
    effective = generation >= 4  # 4.x counts a CJK character as 3
    minimum = 4 if memory_type in ("identity", "emotion") else GATE_EFFECTIVE if effective else 8
    length = sum(3 if CJK.match(c) else 1 for c in content) if effective else len(content)
    if length < minimum:
        shown = f"effective {length}" if effective else length
        failures.append(f"specificity (too short: {shown} < {minimum} chars)")
    meaningful = [
        t for t in tokens(content) if CJK.match(t[0]) or (len(t) >= 2 and t not in _STOPWORDS)
    ]
    if not meaningful:
        failures.append("novelty (no meaningful content)")
    has_topic = (
        bool(CJK.search(content))
        or re.search(r"\b[A-Z][a-zA-Z]+", content) is not None
        or re.search(r"\d", content) is not None
        or "://" in content
        or re.search(r"[@#]", content) is not None
        or len(content) >= 15
    )
    if not has_topic:
        failures.append("relevance (no identifiable topics/entities)")
    garbled = sum(1 for c in content if c == "\ufffd" or (ord(c) < 32 and c not in "\n\t"))
    if content and garbled / len(content) > 0.3:
        failures.append("garbled (mostly unreadable characters)")
    return failures


class Store:
    """One agent's memories in one SQLite file."""

    def __init__(
        self,
        path: str,
        agent_id: str,
        clock: Callable[[], datetime],
        *,
        gate: bool = True,
        generation: int = 2,
        caps: dict[str, int | None] | None = None,
    ) -> None:
        self.generation = generation
        self.caps = caps if caps is not None else default_caps(generation)
        self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.executescript(SCHEMA)
        self.agent = agent_id
        self.clock = clock
        self.gate = gate

    def remember(
        self,
        content: str,
        memory_type: str = "knowledge",
        uri: str | None = None,
        emotion_val: float = 0.0,
        source: str | None = None,
    ) -> dict[str, Any]:
        content = content.strip()
        now = iso(self.clock())
        digest = content_hash(content)
        with immediate(self.db):
            same = self.db.execute(
                "SELECT id FROM memories WHERE agent_id = ? AND hash = ?", (self.agent, digest)
            ).fetchone()
            if same is not None:
                return {
                    "action": "skipped",
                    "reason": "Exact duplicate (hash match)",
                    "memoryId": same["id"],
                }
            if uri:
                at_uri = self.db.execute(
                    "SELECT memory_id FROM paths WHERE agent_id = ? AND uri = ?", (self.agent, uri)
                ).fetchone()
                if at_uri is not None:
                    self._rewrite(at_uri["memory_id"], content, "update", now)
                    canonical = " canonical content" if self.generation >= 4 else ""
                    return {
                        "action": "updated",
                        "memoryId": at_uri["memory_id"],
                        "reason": f"URI {uri} already exists, updating{canonical}",
                    }
            merged = self._merge(content, memory_type, uri, now)
            if merged is not None:
                return merged
            failures = gate_failures(content, memory_type, self.generation) if self.gate else []
            if failures:
                return {"action": "skipped", "reason": "Gate rejected: " + ", ".join(failures)}
            memory_id = str(uuid.uuid4())
            priority = priority_of(memory_type)
            self.db.execute(
                "INSERT INTO memories (id, content, type, priority, emotion_val, vitality,"
                " stability, created_at, updated_at, source, agent_id, hash)"
                " VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)",
                (
                    memory_id, content, memory_type, priority, emotion_val,
                    _stored_stability(priority), now, now, source, self.agent, digest,
                ),
            )  # fmt: skip
            self._index(memory_id, memory_type, content)
            self._attach(memory_id, uri, now)
        return {"action": "added", "memoryId": memory_id, "reason": "Passed all guard checks"}

    def _attach(self, memory_id: str, uri: str | None, now: str) -> None:
        shape = URI_SHAPE.match(uri or "")
        if shape is not None and shape.group(1) in PATH_DOMAINS:
            self.db.execute(
                "INSERT OR IGNORE INTO paths (id, memory_id, agent_id, uri, domain, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (str(uuid.uuid4()), memory_id, self.agent, uri, shape.group(1), now),
            )

    def _merge(
        self, content: str, memory_type: str, uri: str | None, now: str
    ) -> dict[str, Any] | None:
        """The write folded into the most similar memory of its type, if near enough: 2.x/3.x
        append it to a near-exact one as `[Updated] …`; 4.x/5.x take looser wording in as
        `old；new` and attach the write's URI to the merged memory."""
        semantic = self.generation >= 4
        near = self._near_duplicate(
            content, memory_type, SEMANTIC_NEAR if semantic else NEAR_DUPLICATE
        )
        if near is None:
            return None
        score, row = near
        if semantic:
            text = f"{row['content']}；{content}"
            reason = f"Semantic near-duplicate detected (score={score:.3f}), applying synthesize"
        else:
            text = f"{row['content']}\n\n[Updated] {content}"
            reason = "Near-duplicate of an existing memory, merged"
        self._rewrite(row["id"], text, "merge", now)
        self._attach(row["id"], uri if semantic else None, now)
        return {"action": "merged", "memoryId": row["id"], "reason": reason}

    def _rewrite(self, memory_id: str, content: str, action: str, now: str) -> None:
        """Replace a memory's text (its old one kept as a snapshot) and its indexed terms."""
        self.db.execute(
            "INSERT INTO snapshots (id, memory_id, content, changed_by, action, created_at)"
            " SELECT ?, id, content, 'remember', ?, ? FROM memories WHERE id = ?",
            (str(uuid.uuid4()), action, now, memory_id),
        )
        self.db.execute(
            "UPDATE memories SET content = ?, hash = ?, updated_at = ? WHERE id = ?",
            (content, content_hash(content), now, memory_id),
        )
        kind = self.db.execute("SELECT type FROM memories WHERE id = ?", (memory_id,))
        self._index(memory_id, kind.fetchone()["type"], content)

    def _near_duplicate(
        self, content: str, memory_type: str, threshold: float
    ) -> tuple[float, sqlite3.Row] | None:
        """The most similar memory of the same type and its score, if similar enough.
        Candidates come from the term index (BM25), as the real server's come from its FTS
        index."""
        terms = list(dict.fromkeys(tokens(content)))
        if not terms:
            return None
        found: dict[str, int] = {}
        for start in range(0, len(terms), 500):  # SQLite's bound-parameter limit
            chunk = terms[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                self.db.execute(
                    f"SELECT term, doc FROM memory_terms_vocab WHERE term IN ({marks})",  # noqa: S608
                    chunk,
                ).fetchall()
            )
        rare = sorted(found, key=lambda term: found[term])[:RARE_TERMS]
        if not rare:
            return None  # no term of this text is in any memory: nothing can be near it
        query = " OR ".join('"' + term.replace('"', '""') + '"' for term in rare)
        rows = self.db.execute(
            "SELECT m.id, m.content FROM memory_terms t JOIN memories m ON m.id = t.memory_id"
            " WHERE memory_terms MATCH ? AND t.agent_id = ? AND t.type = ?"
            " ORDER BY t.rank LIMIT ?",
            (query, self.agent, memory_type, NEAR_CANDIDATES),
        ).fetchall()
        wanted = profile(content)
        scored = [(dice(profile(r["content"]), wanted), r) for r in rows]
        best = max(scored, key=lambda pair: pair[0], default=None)
        return best if best is not None and best[0] >= threshold else None

    def _index(self, memory_id: str, memory_type: str, content: str) -> None:
        self.db.execute("DELETE FROM memory_terms WHERE memory_id = ?", (memory_id,))
        self.db.execute(
            "INSERT INTO memory_terms (memory_id, agent_id, type, terms) VALUES (?, ?, ?, ?)",
            (memory_id, self.agent, memory_type, " ".join(tokens(content))),
        )

    def recall(self, query: str, limit: int = 10) -> dict[str, Any]:
        intent, confidence = classify_intent(query)
        rows = self.db.execute(
            "SELECT * FROM memories WHERE agent_id = ?", (self.agent,)
        ).fetchall()
        scored = bm25(query, rows)
        now = self.clock()
        ranked: list[tuple[float, sqlite3.Row]] = []
        for row, score in scored:
            days = (
                (now - parse_iso(row["updated_at"])).total_seconds() / 86400
                if intent == "temporal"  # only recency needs the age
                else None
            )
            ranked.append((weighted(score, row["priority"], row["vitality"], days, intent), row))
        ranked.sort(key=lambda pair: pair[0], reverse=True)
        chosen = ranked[: max(int(limit), 0)]
        memories: list[dict[str, Any]] = []
        stamp = iso(now)
        with immediate(self.db):
            for final, row in chosen:
                boosted = min(1.0, row["vitality"] * 1.2)
                self.db.execute(
                    "UPDATE memories SET access_count = access_count + 1, last_accessed = ?,"
                    " stability = stability * 1.5, vitality = ? WHERE id = ?",
                    (stamp, boosted, row["id"]),
                )
                item: dict[str, Any] = {
                    "id": row["id"],
                    "content": row["content"],
                    "type": row["type"],
                    "priority": row["priority"],
                    "vitality": boosted,
                    "score": round(final, 4),
                    "updated_at": row["updated_at"],
                }
                if self.generation >= 3:
                    item["uri"] = None  # 3.x and later never fill it
                if self.generation >= 4:
                    item["bm25_rank"] = len(memories) + 1
                    item["bm25_score"] = round(final, 4)
                memories.append(item)
                if self.generation >= 5:
                    self.db.execute(
                        "INSERT INTO feedback (agent_id, memory_id, created_at) VALUES (?, ?, ?)",
                        (self.agent, row["id"], stamp),
                    )
        head = {"intent": intent, "confidence": confidence} if self.generation < 3 else {}
        answer: dict[str, Any] = {**head, "count": len(memories), "memories": memories}
        if self.generation >= 4:
            answer["mode"] = "bm25-only"
        return answer

    def recall_path(self, uri: str) -> dict[str, Any]:
        exact = self.db.execute(
            "SELECT m.* FROM paths p JOIN memories m ON m.id = p.memory_id"
            " WHERE p.agent_id = ? AND p.uri = ?",
            (self.agent, uri),
        ).fetchone()
        if exact is not None:
            # 2.x answers the memory's links too; this stand-in makes none.
            related: dict[str, list[Any]] = {"related": []} if self.generation < 3 else {}
            return {"found": True, "memory": dict(exact), **related}
        escaped = uri.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        vitality = ", m.vitality" if self.generation >= 3 else ""  # prefix items carry it from 3.x
        rows = self.db.execute(
            f"SELECT p.uri, m.content, m.type, m.priority{vitality} FROM paths p"  # noqa: S608
            " JOIN memories m ON m.id = p.memory_id"
            " WHERE p.agent_id = ? AND p.uri LIKE ? ESCAPE '\\' ORDER BY p.uri",
            (self.agent, escaped + "%"),
        ).fetchall()
        if not rows:
            return {"found": False, "uri": uri}
        return {
            "found": True,
            "prefix": uri,
            "count": len(rows),
            "memories": [dict(r) for r in rows],
        }

    def reflect(self, phase: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        steps = {"decay": self._decay, "tidy": self._tidy, "govern": self._govern}
        with immediate(self.db):
            for name, step in steps.items():
                if phase in (name, "all"):
                    out[name] = step()
        return out

    def _decay(self) -> dict[str, int]:
        now = self.clock()
        updated = decayed = below = 0
        rows = self.db.execute(
            "SELECT id, priority, vitality, stability, last_accessed, created_at FROM memories"
            " WHERE agent_id = ?",
            (self.agent,),
        ).fetchall()
        for row in rows:
            since = parse_iso(row["last_accessed"] or row["created_at"])
            age = (now - since).total_seconds() / 86400
            stability = _loaded_stability(row["stability"])
            new = round(vitality(row["priority"], age, stability), 6)
            if new != round(row["vitality"], 6):
                updated += 1
                decayed += new < row["vitality"]
                self.db.execute("UPDATE memories SET vitality = ? WHERE id = ?", (new, row["id"]))
            below += new < LOW_VITALITY
        return {"updated": updated, "decayed": decayed, "belowThreshold": below}

    def _delete_where(self, condition: str, *args: Any) -> int:
        """Delete this agent's memories that meet `condition` (a constant); how many."""
        found = self.db.execute(
            f"SELECT id FROM memories WHERE agent_id = ? AND {condition}",  # noqa: S608
            (self.agent, *args),
        ).fetchall()
        for row in found:
            self._delete(row["id"])
        return len(found)

    def _orphan_paths(self) -> int:
        return self.db.execute(
            "DELETE FROM paths WHERE agent_id = ? AND memory_id NOT IN (SELECT id FROM memories)",
            (self.agent,),
        ).rowcount

    def _tidy(self) -> dict[str, int]:
        doomed = self._delete_where("priority = 3 AND vitality < ?", TIDY_THRESHOLD)
        orphans = self._orphan_paths()
        pruned = self.db.execute(
            "DELETE FROM snapshots WHERE id IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER"
            " (PARTITION BY memory_id ORDER BY created_at DESC) AS n FROM snapshots) WHERE n > 10)"
        ).rowcount
        out = {"archived": doomed, "orphansCleaned": orphans}
        if self.generation < 3:
            out["snapshotsPruned"] = pruned
        elif self.generation >= 5:
            out["staleDecayed"] = 0
        return out

    def _govern(self) -> dict[str, int]:
        orphan_paths = self._orphan_paths()
        empty = self._delete_where("trim(content) = ''")
        out: dict[str, Any] = {"orphanPaths": orphan_paths}
        if self.generation < 3:
            out["orphanLinks"] = 0  # this stand-in makes no links
        out["emptyMemories"] = empty
        if self.generation >= 4:
            by_type = self._evict()
            out["evicted"] = sum(by_type.values())
            if self.generation >= 5:
                out |= {"archived": out["evicted"], "evictedByType": by_type}
        return out

    def _evict(self) -> dict[str, int]:
        """4.x/5.x capacity eviction: the least vital memories above a cap go (5.x keeps them
        in the archive, where the `archive` tool lists and restores them)."""
        evicted: Counter[str] = Counter()
        for memory_type in ("identity", "emotion", "knowledge", "event", "total"):
            limit = self.caps.get(memory_type)
            if limit is None:
                continue
            where = "" if memory_type == "total" else " AND type = ?"
            args: tuple[Any, ...] = (self.agent,) if memory_type == "total" else (
                self.agent, memory_type,
            )  # fmt: skip
            rows = self.db.execute(
                f"SELECT id, type FROM memories WHERE agent_id = ? AND priority > 0{where}"  # noqa: S608
                " ORDER BY vitality ASC, updated_at ASC",
                args,
            ).fetchall()
            kept = int(
                self.db.execute(
                    f"SELECT COUNT(*) FROM memories WHERE agent_id = ?{where}",  # noqa: S608
                    args,
                ).fetchone()[0]
            )
            for row in rows[: max(kept - limit, 0)]:
                if self.generation >= 5:
                    self._archive(row["id"])
                self._delete(row["id"])
                evicted[row["type"]] += 1
        return dict(evicted)

    def _archive(self, memory_id: str) -> None:
        row = self.db.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
        found = self.db.execute("SELECT uri FROM paths WHERE memory_id = ?", (memory_id,))
        uris = [r[0] for r in found]
        self.db.execute(
            "INSERT OR REPLACE INTO archived (id, agent_id, row, uris, archived_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (memory_id, self.agent, json.dumps(dict(row)), json.dumps(uris), iso(self.clock())),
        )

    def archive(self, action: str, memory_id: str | None = None) -> dict[str, Any]:
        """5.x's archive tool: list, restore or purge what capacity eviction moved aside."""
        if action == "list":
            rows = self.db.execute(
                "SELECT id, row, uris, archived_at FROM archived WHERE agent_id = ?"
                " ORDER BY archived_at",
                (self.agent,),
            ).fetchall()
            items = [
                {**{k: json.loads(r["row"])[k] for k in ("content", "type", "priority")},
                 "id": r["id"], "uris": json.loads(r["uris"]), "archived_at": r["archived_at"]}
                for r in rows
            ]  # fmt: skip
            return {"count": len(items), "archived": items}
        if memory_id is None:
            raise ToolError(f"archive {action} needs an id")
        with immediate(self.db):
            row = self.db.execute(
                "SELECT row, uris FROM archived WHERE agent_id = ? AND id = ?",
                (self.agent, memory_id),
            ).fetchone()
            if row is None:
                raise ToolError("Archived memory not found")
            self.db.execute("DELETE FROM archived WHERE id = ?", (memory_id,))
            if action == "purge":
                return {"action": "purged", "id": memory_id}
            values = json.loads(row["row"])
            marks = ",".join("?" * len(values))
            self.db.execute(
                f"INSERT INTO memories ({', '.join(values)}) VALUES ({marks})",  # noqa: S608
                tuple(values.values()),
            )
            self._index(memory_id, values["type"], values["content"])
            for uri in json.loads(row["uris"]):
                self._attach(memory_id, uri, iso(self.clock()))
        return {"action": "restored", "id": memory_id}

    def reindex(self) -> dict[str, Any]:
        """4.x/5.x: rebuild the search index."""
        with immediate(self.db):
            self.db.execute("DELETE FROM memory_terms WHERE agent_id = ?", (self.agent,))
            rows = self.db.execute(
                "SELECT id, type, content FROM memories WHERE agent_id = ?", (self.agent,)
            ).fetchall()
            for row in rows:
                self._index(row["id"], row["type"], row["content"])
        return {"reindexed": len(rows)}

    def surface(self, limit: int = 10) -> dict[str, Any]:
        """3.x+: the most vital recent memories, newest first."""
        rows = self.db.execute(
            "SELECT id, content, type, priority, vitality, updated_at FROM memories"
            " WHERE agent_id = ? ORDER BY vitality DESC, updated_at DESC LIMIT ?",
            (self.agent, limit),
        ).fetchall()
        return {"count": len(rows), "memories": [dict(r) for r in rows]}

    def ingest(self, text: str) -> dict[str, Any]:
        """3.x+: remember each Markdown bullet of a text as an event."""
        results = Counter(
            self.remember(line[2:].strip(), "event", source="ingest")["action"]
            for line in text.splitlines()
            if line.startswith("- ") and line[2:].strip()
        )
        return {"ingested": sum(results.values()), "actions": dict(results)}

    def _delete(self, memory_id: str) -> None:
        self.db.execute("DELETE FROM memory_terms WHERE memory_id = ?", (memory_id,))
        self.db.execute("DELETE FROM paths WHERE memory_id = ?", (memory_id,))
        self.db.execute("DELETE FROM memories WHERE id = ?", (memory_id,))

    def total(self) -> int:
        row = self.db.execute("SELECT COUNT(*) FROM memories WHERE agent_id = ?", (self.agent,))
        return int(row.fetchone()[0])

    def status(self) -> dict[str, Any]:
        def count(sql: str, *args: Any) -> int:
            return int(self.db.execute(sql, (self.agent, *args)).fetchone()[0])

        def grouped(column: str) -> dict[Any, int]:
            query = f"SELECT {column}, COUNT(*) FROM memories WHERE agent_id = ? GROUP BY 1"  # noqa: S608
            return dict(self.db.execute(query + " ORDER BY 1", (self.agent,)).fetchall())

        by_type = grouped("type")
        total = sum(by_type.values())
        answer: dict[str, Any] = {
            "total": total,
            "by_type": by_type,
            "by_priority": {f"P{p}": n for p, n in grouped("priority").items()},
            "paths": count("SELECT COUNT(*) FROM paths WHERE agent_id = ?"),
        }
        if self.generation < 3:
            answer["links"] = 0  # this stand-in makes no links
            answer["snapshots"] = count(
                "SELECT COUNT(*) FROM snapshots WHERE memory_id IN"
                " (SELECT id FROM memories WHERE agent_id = ?)"
            )
        answer["low_vitality"] = count(
            "SELECT COUNT(*) FROM memories WHERE agent_id = ? AND vitality < ?", LOW_VITALITY
        )
        if self.generation >= 4:
            answer["feedback_events"] = count("SELECT COUNT(*) FROM feedback WHERE agent_id = ?")
        if self.generation >= 5:
            counts = {**by_type, "total": total}
            answer["capacity"] = {
                t: {"count": counts.get(t, 0), "limit": self.caps.get(t)}
                for t in ("emotion", "knowledge", "event", "identity", "total")
            }
        answer["agent_id"] = self.agent
        return answer

    def forget(self, memory_id: str, hard: bool = False) -> dict[str, Any]:
        with immediate(self.db):
            row = self.db.execute(
                "SELECT id FROM memories WHERE agent_id = ? AND id = ?",
                (self.agent, memory_id),
            ).fetchone()
            if row is None:
                raise ToolError("Memory not found")
            if hard:
                self._delete(memory_id)
                return {"action": "deleted", "id": memory_id}
            new = 0.1
            self.db.execute("UPDATE memories SET vitality = ? WHERE id = ?", (new, memory_id))
            return {"action": "decayed", "id": memory_id, "new_vitality": new}


def default_caps(generation: int, env: dict[str, str] | None = None) -> dict[str, int | None]:
    """The capacity limits of a generation (AGENT_MEMORY_MAX_* in `env` override them)."""
    if generation < 4:
        return {}
    env = env or {}
    if generation == 4:
        return {"total": int(env.get(limit_variable("total"), GEN4_LIMITS["total"]))}
    caps: dict[str, int | None] = dict(CAPACITY_5)
    for name in caps:
        key = limit_variable(name)
        if env.get(key):
            caps[name] = int(env[key])
    return caps


def _stored_stability(priority: int) -> float:
    # SQLite has no infinity literal that survives every driver; a huge number stands in.
    stability = STABILITY_DAYS[priority]
    return 1e18 if math.isinf(stability) else stability


def _loaded_stability(stored: float) -> float:
    return math.inf if stored >= 1e17 else stored


def classify_intent(query: str) -> tuple[str, float]:
    """A coarse intent, as agent-memory's recall reports it."""
    lowered = query.casefold()
    temporal = ("最近", "昨天", "今天", "上周", "recent", "yesterday", "today", "when", "last week")
    causal = ("为什么", "why", "because", "原因")
    if any(word in lowered for word in temporal):
        return "temporal", 0.8
    if any(word in lowered for word in causal):
        return "causal", 0.7
    return "factual", 0.95


def bm25(
    query: str, rows: list[sqlite3.Row], k1: float = 1.2, b: float = 0.75
) -> list[tuple[sqlite3.Row, float]]:
    """Okapi BM25 of each row's content against the query; rows with no match are dropped."""
    wanted = set(tokens(query))
    if not wanted or not rows:
        return []
    docs = [Counter(tokens(r["content"])) for r in rows]
    average = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    frequency = Counter(t for d in docs for t in wanted if t in d)
    out = []
    for row, doc in zip(rows, docs, strict=True):
        length = sum(doc.values())
        score = 0.0
        for term in wanted & doc.keys():
            idf = math.log(1 + (len(docs) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            tf = doc[term]
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))
        if score > 0:
            out.append((row, score))
    return out
