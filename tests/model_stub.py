"""A stand-in OpenAI-compatible model on 127.0.0.1 for the opt-in OpenClaw tests: every
request body is appended to the file named by its first argument (one JSON line each), and
every answer is "ok" (streamed when asked). It prints its port on its first line."""

from __future__ import annotations

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

LOG = Path(sys.argv[1])
LIMIT = 1 << 24


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
        if request.get("stream"):
            chunks = [
                {"role": "assistant", "content": "ok"},
            ]
            lines = [
                {"id": "c1", "object": "chat.completion.chunk", "created": made,
                 "model": "stub-model",
                 "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
                for d in chunks
            ]  # fmt: skip
            lines.append({"id": "c1", "object": "chat.completion.chunk", "created": made,
                          "model": "stub-model",
                          "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                    "total_tokens": 2}})  # fmt: skip
            text = "".join(f"data: {json.dumps(line)}\n\n" for line in lines) + "data: [DONE]\n\n"
            self._send(200, "text/event-stream", text.encode())
            return
        answer = {
            "id": "c1", "object": "chat.completion", "created": made, "model": "stub-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                         "finish_reason": "stop"}],
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
