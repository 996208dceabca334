"""A stand-in OpenAI-compatible model on 127.0.0.1 for the opt-in OpenClaw tests: every
request body is appended to the file named by its first argument (one JSON line each), and
every answer is "ok" (streamed when asked). It prints its port on its first line.

Asked in a user message, it calls tools: `STUB-STEPS: [{"name": …, "arguments": {…}}, …]`
(JSON on the rest of that line) makes it answer with the first step's tool call, then, once a
tool result follows that message, with the next, and with "ok" when all are answered. With
OpenClaw's Tool Search on, an MCP tool is reached through the `tool_call` meta-tool
(`{"name": "tool_call", "arguments": {"id": "memfuse-home__note", "args": {…}}}`)."""

from __future__ import annotations

import json
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

LOG = Path(sys.argv[1])
LIMIT = 1 << 24
STEPS = re.compile(r"STUB-STEPS: (\[.*\])")


def next_call(request: dict[str, Any]) -> dict[str, Any] | None:
    """The tool call this request asks for: the step after those already answered since the
    latest user message that gives steps; None once they are all answered (or none given)."""
    messages = request.get("messages")
    messages = messages if isinstance(messages, list) else []
    for at in range(len(messages) - 1, -1, -1):
        message = messages[at]
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        found = STEPS.search(_text(message.get("content")))
        if found is None:
            continue
        steps = json.loads(found[1])
        done = sum(1 for m in messages[at:] if isinstance(m, dict) and m.get("role") == "tool")
        return dict(steps[done]) if done < len(steps) else None
    return None


def _text(content: object) -> str:
    """A message's text: its string, or its text parts joined."""
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return content if isinstance(content, str) else ""


def chunk(made: int, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "created": made, "model": "stub-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *_args: object) -> None:
        return

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": "stub-model", "object": "model"}]})
        self._send(200, "application/json", body.encode())

    def do_POST(self) -> None:
        size = min(int(self.headers.get("Content-Length") or 0), LIMIT)
        raw = self.rfile.read(size)
        with LOG.open("ab") as log:
            log.write(raw.replace(b"\n", b" ") + b"\n")
        try:
            request = json.loads(raw)
        except ValueError:
            request = {}
        made = int(time.time())
        call = next_call(request) if isinstance(request, dict) else None
        message: dict[str, Any] = {"role": "assistant", "content": "ok"}
        finish = "stop"
        if call is not None:
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{made}_{len(request['messages'])}", "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }]}  # fmt: skip
            finish = "tool_calls"
        if request.get("stream"):
            delta = dict(message)
            if "tool_calls" in delta:
                delta["tool_calls"] = [{"index": 0, **delta["tool_calls"][0]}]
            lines = [chunk(made, delta, None), chunk(made, {}, finish)]
            lines[-1]["usage"] = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            text = "".join(f"data: {json.dumps(line)}\n\n" for line in lines) + "data: [DONE]\n\n"
            self._send(200, "text/event-stream", text.encode())
            return
        answer = {
            "id": "c1", "object": "chat.completion", "created": made, "model": "stub-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }  # fmt: skip
        self._send(200, "application/json", json.dumps(answer).encode())

    def _send(self, code: int, kind: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
