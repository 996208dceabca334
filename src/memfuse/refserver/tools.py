"""Tool schemas and argument validation, mirroring agent-memory 2.2's zod schemas.

Validation failures answer `isError: true` with an `MCP error -32602` text (as the real server's
SDK does); unknown extra arguments are dropped; handler errors answer `{"error": …}` text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from memfuse.refserver.store import Store, ToolError

TYPES = ["identity", "emotion", "knowledge", "event"]
PHASES = ["decay", "tidy", "govern", "all"]

# Each tool with the generation that added it (docs/reference.md, "agent-memory 3.x, 4.x, 5.x"): the
# reference server lists a generation's own, so that memfuse can tell it from the tool list.
TOOLS: dict[str, tuple[int, dict[str, Any]]] = {
    "remember": (2, {
        "description": "Store a memory (dedup, URI update, merge, write gate).",
        "properties": {
            "content": {"type": "string", "description": "Memory content"},
            "type": {"type": "string", "enum": TYPES, "default": "knowledge"},
            "uri": {"type": "string", "description": "URI path, e.g. knowledge://lessons/x"},
            "emotion_val": {"type": "number", "minimum": -1, "maximum": 1, "default": 0},
            "source": {"type": "string"},
        },
        "required": ["content"],
    }),
    "recall": (2, {
        "description": "Search memories (BM25) with priority/recency/vitality weighting.",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "number", "default": 10},
        },
        "required": ["query"],
    }),
    "recall_path": (2, {
        "description": "Read a memory by exact URI, or list memories under a URI prefix.",
        "properties": {
            "uri": {"type": "string"},
            "traverse_hops": {"type": "number", "default": 0},
        },
        "required": ["uri"],
    }),
    "reflect": (2, {
        "description": "Run the sleep cycle: decay, tidy, govern, or all.",
        "properties": {"phase": {"type": "string", "enum": PHASES}},
        "required": ["phase"],
    }),
    "status": (2, {
        "description": "Counts of memories, paths, links and snapshots.", "properties": {},
    }),
    "forget": (2, {
        "description": "Decay a memory to vitality 0.1, or delete it with hard=true.",
        "properties": {
            "id": {"type": "string"},
            "hard": {"type": "boolean", "default": False},
        },
        "required": ["id"],
    }),
    "ingest": (3, {
        "description": "Ingest Markdown text: each bullet becomes an event memory.",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }),
    "surface": (3, {
        "description": "The most vital recent memories.",
        "properties": {"limit": {"type": "number", "default": 10}},
    }),
    "reindex": (4, {"description": "Rebuild the search index.", "properties": {}}),
    "archive": (5, {
        "description": "List, restore or purge memories moved aside by capacity eviction.",
        "properties": {
            "action": {"type": "string", "enum": ["list", "restore", "purge"]},
            "id": {"type": "string"},
        },
        "required": ["action"],
    }),
}  # fmt: skip
PRETTY = {"remember", "recall", "recall_path", "reflect", "status"}


def schemas(generation: int = 2) -> dict[str, dict[str, Any]]:
    """The tools a generation offers."""
    return {name: spec for name, (since, spec) in TOOLS.items() if generation >= since}


def tool_list(generation: int = 2) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "description": spec["description"],
            "inputSchema": {
                "type": "object",
                "properties": spec["properties"],
                "required": spec.get("required", []),
                "additionalProperties": False,
                "$schema": "http://json-schema.org/draft-07/schema#",
            },
        }
        for name, spec in schemas(generation).items()
    ]


class InvalidArguments(Exception):
    def __init__(self, tool: str, issues: list[dict[str, Any]]) -> None:
        super().__init__(
            f"MCP error -32602: Input validation error: Invalid arguments for tool {tool}: "
            + json.dumps(issues, indent=2)
        )


def _type_ok(value: Any, expected: str) -> bool:
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "number":
        return (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        )
    return True


def validate(tool: str, arguments: Mapping[str, Any], generation: int = 2) -> dict[str, Any]:
    """Arguments with defaults applied and unknown keys dropped, or InvalidArguments."""
    spec = schemas(generation)[tool]
    issues: list[dict[str, Any]] = []
    clean: dict[str, Any] = {}
    for name, prop in spec["properties"].items():
        if name not in arguments or (
            arguments[name] is None and name not in spec.get("required", [])
        ):
            if name in spec.get("required", []):
                issues.append(
                    {"code": "invalid_type", "expected": prop["type"], "received": "undefined",
                     "path": [name], "message": "Required"}
                )  # fmt: skip
            elif "default" in prop:
                clean[name] = prop["default"]
            continue
        value = arguments[name]
        if not _type_ok(value, prop["type"]):
            issues.append(
                {"code": "invalid_type", "expected": prop["type"],
                 "received": type(value).__name__, "path": [name],
                 "message": f"Expected {prop['type']}, received {type(value).__name__}"}
            )  # fmt: skip
            continue
        if "enum" in prop and value not in prop["enum"]:
            issues.append(
                {"code": "invalid_enum_value", "options": prop["enum"], "path": [name],
                 "message": f"Invalid enum value. Expected {' | '.join(prop['enum'])}"}
            )  # fmt: skip
            continue
        if ("minimum" in prop and value < prop["minimum"]) or (
            "maximum" in prop and value > prop["maximum"]
        ):
            issues.append(
                {"code": "out_of_range", "path": [name],
                 "message": f"Number must be between {prop['minimum']} and {prop['maximum']}"}
            )  # fmt: skip
            continue
        clean[name] = value
    if issues:
        raise InvalidArguments(tool, issues)
    return clean


def handlers(store: Store) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    return {
        "remember": lambda a: store.remember(
            a["content"], a["type"], a.get("uri"), a["emotion_val"], a.get("source")
        ),
        "recall": lambda a: store.recall(a["query"], int(a["limit"])),
        "recall_path": lambda a: store.recall_path(a["uri"]),
        "reflect": lambda a: store.reflect(a["phase"]),
        "status": lambda _a: store.status(),
        "forget": lambda a: store.forget(a["id"], a["hard"]),
        "ingest": lambda a: store.ingest(a["text"]),
        "surface": lambda a: store.surface(int(a["limit"])),
        "reindex": lambda _a: store.reindex(),
        "archive": lambda a: store.archive(a["action"], a.get("id")),
    }


def call_tool(store: Store, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """An MCP tools/call result: one text item with the JSON answer."""
    if tool not in schemas(store.generation):
        return _text(f"MCP error -32602: Tool {tool} not found", is_error=True)
    try:
        clean = validate(tool, arguments, store.generation)
    except InvalidArguments as exc:
        return _text(str(exc), is_error=True)
    before = store.total() if tool == "reflect" else 0
    try:
        answer = handlers(store)[tool](clean)
    except ToolError as exc:
        return _text(json.dumps({"error": str(exc)}, ensure_ascii=False))
    except Exception as exc:
        return _text(json.dumps({"error": f"{type(exc).__name__}: {exc}"}, ensure_ascii=False))
    if tool == "reflect" and store.generation >= 3:
        return _text(reflect_markdown(answer, store.generation, before, store.total()))
    indent = 2 if tool in PRETTY else None
    return _text(json.dumps(answer, ensure_ascii=False, indent=indent))


# 3.x's heading and sentence for each phase of reflect.
PROSE_3 = {
    "decay": ("Decay（衰减）", "处理 {updated} 条记忆，其中 {decayed} 条 vitality 下降。"),
    "tidy": ("Tidy（整理）", "归档 {archived} 条，清理孤儿路径 {orphansCleaned} 条。"),
    "govern": ("Govern（治理）", "清理孤儿路径 {orphanPaths} 条，空记忆 {emptyMemories} 条。"),
}


def reflect_markdown(report: Mapping[str, Any], generation: int, before: int, after: int) -> str:
    """reflect's answer from 3.x on: Chinese prose (3.x), or a heading and a JSON object per
    phase (4.x/5.x), then a summary. Approximates the real servers' layout."""
    import uuid

    phases = [p for p in ("decay", "tidy", "govern") if p in report]
    if generation == 3:
        lines = ["## 🌙 Sleep Cycle 报告", ""]
        for phase in phases:
            heading, prose = PROSE_3[phase]
            lines += [f"### {heading}", prose.format(**report[phase]), ""]
    else:
        lines = [f"job: {uuid.uuid4()}", ""]
        for phase in phases:
            lines += [f"### {phase}", json.dumps(report[phase], ensure_ascii=False, indent=2), ""]
    change = f"{after - before:+d}" if after != before else "0"
    lines += ["### 📊 总结", f"记忆总数：{before} → {after}（{change}）"]
    return "\n".join(lines) + "\n"


def _text(text: str, *, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result
