"""What OpenClaw 2026.9.6 hands the model of an MCP tool's result, on its two routes, ported
from the package's own code (read, not run): dist/mcp-content-*.mjs
(`projectMcpCallToolResult`: a `structuredContent` object becomes a text block
`structuredContent:\\n<its JSON, 2-space indented, keys sorted>` put first, then every content
block except a text that is exactly that JSON unsorted; the details carry `structuredContent`)
and dist/local-model-lean-*.mjs (Tool Search's `tool_call`: the model reads
`JSON.stringify({tool, result}, null, 2)`, `result` being that projection with its details).
`_meta` is never read by either."""

from __future__ import annotations

import json
from typing import Any


def _js(value: Any, *, sort: bool = False) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort)


def direct(result: dict[str, Any], server: str, tool: str) -> dict[str, Any]:
    """The agent result of a direct MCP tool call: `content` is what the model reads."""
    source = list(result.get("content") or [])
    structured = result.get("structuredContent")
    content = source
    if isinstance(structured, dict):
        mirror = _js(structured)
        kept = [b for b in source if not (b.get("type") == "text" and b.get("text") == mirror)]
        content = [{"type": "text", "text": f"structuredContent:\n{_js(structured, sort=True)}"},
                   *kept]  # fmt: skip
    details: dict[str, Any] = {"mcpServer": server, "mcpTool": tool}
    if structured is not None:
        details["structuredContent"] = structured
    return {"content": content, "details": details}


def model_text_direct(result: dict[str, Any], server: str, tool: str) -> str:
    return "\n".join(b["text"] for b in direct(result, server, tool)["content"])


def model_text_tool_search(result: dict[str, Any], server: str, tool: str) -> str:
    """What the model reads from `tool_call` (no network content: no external wrapper)."""
    name = f"{server}__{tool}"
    wrapped = {"tool": {"id": name, "name": name, "source": "mcp"},
               "result": direct(result, server, tool)}  # fmt: skip
    return _js(wrapped)
