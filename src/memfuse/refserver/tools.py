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

SCHEMAS: dict[str, dict[str, Any]] = {
    "remember": {
        "description": "Store a memory (dedup, URI update, merge, write gate).",
        "properties": {
            "content": {"type": "string", "description": "Memory content"},
            "type": {"type": "string", "enum": TYPES, "default": "knowledge"},
            "uri": {"type": "string", "description": "URI path, e.g. knowledge://lessons/x"},
            "emotion_val": {"type": "number", "minimum": -1, "maximum": 1, "default": 0},
            "source": {"type": "string"},
        },
        "required": ["content"],
    },
    "recall": {
        "description": "Search memories (BM25) with priority/recency/vitality weighting.",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "number", "default": 10},
        },
        "required": ["query"],
    },
    "recall_path": {
        "description": "Read a memory by exact URI, or list memories under a URI prefix.",
        "properties": {
            "uri": {"type": "string"},
            "traverse_hops": {"type": "number", "default": 0},
        },
        "required": ["uri"],
    },
    "reflect": {
        "description": "Run the sleep cycle: decay, tidy, govern, or all.",
        "properties": {"phase": {"type": "string", "enum": PHASES}},
        "required": ["phase"],
    },
    "status": {"description": "Counts of memories, paths, links and snapshots.", "properties": {}},
    "forget": {
        "description": "Decay a memory to vitality 0.1, or delete it with hard=true.",
        "properties": {
            "id": {"type": "string"},
            "hard": {"type": "boolean", "default": False},
        },
        "required": ["id"],
    },
}

PRETTY = {"remember", "recall", "recall_path", "reflect", "status"}


def tool_list() -> list[dict[str, Any]]:
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
        for name, spec in SCHEMAS.items()
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


def validate(tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments with defaults applied and unknown keys dropped, or InvalidArguments."""
    spec = SCHEMAS[tool]
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
        "recall_path": lambda a: store.recall_path(a["uri"], int(a["traverse_hops"])),
        "reflect": lambda a: store.reflect(a["phase"]),
        "status": lambda _a: store.status(),
        "forget": lambda a: store.forget(a["id"], a["hard"]),
    }


def call_tool(store: Store, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """An MCP tools/call result: one text item with the JSON answer."""
    if tool not in SCHEMAS:
        return _text(f"MCP error -32602: Tool {tool} not found", is_error=True)
    try:
        clean = validate(tool, arguments)
    except InvalidArguments as exc:
        return _text(str(exc), is_error=True)
    try:
        answer = handlers(store)[tool](clean)
    except ToolError as exc:
        return _text(json.dumps({"error": str(exc)}, ensure_ascii=False))
    except Exception as exc:
        return _text(json.dumps({"error": f"{type(exc).__name__}: {exc}"}, ensure_ascii=False))
    indent = 2 if tool in PRETTY else None
    return _text(json.dumps(answer, ensure_ascii=False, indent=indent))


def _text(text: str, *, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result
