"""A small rerank HTTP server on 127.0.0.1 for tests and the recall benchmark: scores by term
overlap with the query (a deterministic stand-in for a cross-encoder, CJK included).

MODE picks its behaviour: ok, constant (0.5 for every document, like a broken Qwen3
deployment), error500, error429, truncated (cut-off JSON), wrong-index, stall (answers only
once the test is done with the server, or after `stall_seconds`: never within any deadline the
client keeps, however slow the machine), and the hostile ones: slowloris (headers at once, then a byte
every 0.2 s for ever), huge (an endless body), deep (JSON nested 200 000 deep). Every
request's Authorization header is recorded.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memfuse.text.similarity import search_terms


def overlap(query: str, doc: str) -> float:
    """The share of the query's terms (Latin words, CJK characters and bigrams) in the doc."""
    words = set(search_terms(query))
    found = set(search_terms(doc))
    return len(words & found) / (len(words) or 1)


class RerankServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    mode = "ok"
    stall_seconds = 3600.0
    auth_headers: list[str]
    released: threading.Event


class Handler(BaseHTTPRequestHandler):
    server: RerankServer

    def log_message(self, *_args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.auth_headers.append(self.headers.get("Authorization", ""))
        docs = body.get("documents") or body.get("texts") or []
        mode = self.server.mode
        if mode == "stall":
            self.server.released.wait(self.server.stall_seconds)
        if mode in ("error500", "error429"):
            self._send(int(mode[-3:]), b'{"error": "rerank backend exploded"}')
            return
        if mode in ("slowloris", "huge"):
            self._stream(mode)
            return
        if mode == "deep":
            self._send(200, b"[" * 200_000 + b"]" * 200_000)
            return
        scores = [
            0.5 if mode == "constant" else round(overlap(body.get("query", ""), d), 4) for d in docs
        ]
        results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
        if mode == "wrong-index":
            results = [{"index": i + 10, "relevance_score": s} for i, s in enumerate(scores)]
        results.sort(key=lambda r: -r["relevance_score"])
        payload = json.dumps({"results": results, "model": body.get("model")}).encode()
        self._send(200, payload[: len(payload) // 2] if mode == "truncated" else payload)

    def _stream(self, mode: str) -> None:
        """An answer that never ends: a byte at a time (slowloris) or as fast as it can go."""
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"results": [')
            block = b" " * 65536
            for _ in range(100_000):
                if mode == "slowloris":
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.2)
                else:
                    self.wfile.write(block)

    def _send(self, status: int, payload: bytes) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)


@contextmanager
def serve(mode: str = "ok") -> Iterator[RerankServer]:
    server = RerankServer(("127.0.0.1", 0), Handler)
    server.mode = mode
    server.auth_headers = []
    server.released = threading.Event()
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.released.set()
        server.shutdown()
        server.server_close()


def base_url(server: RerankServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/v1"
