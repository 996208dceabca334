"""The session transport: one stdio MCP session per run, spoken directly.

mcporter starts a fresh server for every call (~0.3-0.7 s each); one session pays the start-up
once and then ~2 ms per call. memfuse speaks the four messages of MCP it needs (initialize,
the initialized notification, tools/list, tools/call) itself: the SDK's import alone cost a run
more than half a second (docs/performance.md). One reader thread hands each answer to the call
waiting for its id; calls from several threads run side by side.

Everything the server says is untrusted: a line is read only up to LINE_LIMIT bytes (a longer
one ends the session), an answer that is not JSON-RPC is passed over, every wait is bounded by
the timeout, and a request the server makes of memfuse is answered (ping) or refused. The
server runs in a process group of its own, ended whole when the session closes.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import IO, Any, TextIO

from memfuse import __version__
from memfuse.errors import MemfuseError
from memfuse.store.gateway.base import (
    Answer,
    CallFailed,
    CallTimeout,
    ServerSpec,
    ToolMissing,
    parse_answer,
)

# One JSON-RPC line from the server may hold at most this many bytes: past it the session is
# closed (a server answering an endless line must not cost memfuse its memory).
LINE_LIMIT = 16 << 20
# The protocol revisions memfuse speaks (all use the initialize handshake); it asks for the
# first and accepts any the server answers with.
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
# What the server inherits of memfuse's environment besides its entry's own variables (as the
# SDK did): nothing that could hold a secret.
INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
LIST_PAGES_MAX = 20  # tools/list pages followed at most
EXIT_GRACE = 2.0  # seconds a server has to leave once its stdin is closed, then again after TERM


def _devnull() -> TextIO:
    return open(os.devnull, "a", encoding="utf-8")


class _Ended(Exception):
    """The conversation is over (the server left, or said something it may not)."""


class _RpcError(Exception):
    """The server answered a request with a JSON-RPC error."""


class _Conversation:
    """One server process and the JSON-RPC spoken with it."""

    def __init__(self, spec: ServerSpec, errlog: IO[str], timeout: float) -> None:
        env = {k: v for k in INHERITED if (v := os.environ.get(k)) and not v.startswith("()")}
        self.timeout = timeout
        self.process = subprocess.Popen(
            [spec.command, *spec.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env={**env, **spec.env},
            cwd=spec.cwd,
            start_new_session=True,
        )
        self.ended: str | None = None
        assert self.process.stdin is not None
        self._stdin = self.process.stdin.fileno()
        os.set_blocking(self._stdin, False)  # every write is bounded (`_write_all`)
        self._ids = itertools.count(1)
        self._pending: dict[int, Future[Any]] = {}  # the answer each request waits for
        self._lock = threading.Lock()  # the pending table and `ended`
        self._write = threading.Lock()  # one message at a time on stdin
        self._reader = threading.Thread(target=self._read, name="mcp-session", daemon=True)
        self._reader.start()

    # --- the server's side ------------------------------------------------------------
    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                line = stdout.readline(LINE_LIMIT + 1)
                if not line:
                    self._end(self._gone("the server closed the connection"))
                    return
                if len(line) > LINE_LIMIT:
                    self._end(f"the server answered a line of more than {LINE_LIMIT >> 20} MiB")
                    self._stop()
                    return
                self._take(line)
        except (OSError, ValueError) as exc:  # the pipe closed under the read
            self._end(f"the connection failed ({exc})")

    def _gone(self, what: str) -> str:
        """Why the conversation ended, with the server's exit status when it has one."""
        try:
            code = self.process.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            return what
        return f"{what} (it exited with status {code})"

    def _take(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return  # not JSON-RPC (a server printing to stdout): passed over
        if not isinstance(message, dict):
            return
        ident = message.get("id")
        if "method" in message:
            if ident is not None and isinstance(ident, int | str):
                self._answer_request(ident, message.get("method"))
            return  # a notification: nothing memfuse acts on
        if not isinstance(ident, int):
            return
        with self._lock:
            slot = self._pending.pop(ident, None)
        if slot is None:
            return  # an answer nobody waits for (any more)
        error = message.get("error")
        if error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            text = str(error.get("message", "")) if isinstance(error, dict) else str(error)
            slot.set_exception(_RpcError(f"MCP error {code}: {text[:300]}"))
        else:
            slot.set_result(message.get("result"))

    def _answer_request(self, ident: int | str, method: object) -> None:
        """The server asked memfuse something: a ping is answered, anything else refused. The
        reader never waits to write: a reply that cannot go at once (the server is not reading,
        another write is under way) is dropped, so a server flooding requests cannot stall it."""
        if method == "ping":
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "result": {}}
        else:
            error = {"code": -32601, "message": "memfuse offers no such method"}
            reply = {"jsonrpc": "2.0", "id": ident, "error": error}
        data = json.dumps(reply, ensure_ascii=True).encode("ascii") + b"\n"
        if len(data) > select.PIPE_BUF or not self._write.acquire(blocking=False):
            return
        try:
            os.write(self._stdin, data)  # at most PIPE_BUF bytes: all of it, or none
        except OSError:
            pass  # the pipe is full (the reply dropped) or closed (the reader sees the end)
        finally:
            self._write.release()

    def _end(self, why: str) -> None:
        with self._lock:
            if self.ended is None:
                self.ended = why
            waiting, self._pending = list(self._pending.values()), {}
        for slot in waiting:
            slot.set_exception(_Ended(why))

    # --- memfuse's side ---------------------------------------------------------------
    def send(self, message: Mapping[str, Any]) -> None:
        """Write one message whole within the timeout; TimeoutError when the server does not
        take it (a part written leaves the conversation unusable: it is ended), _Ended when
        the pipe is closed."""
        data = json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n"
        deadline = time.monotonic() + self.timeout
        if not self._write.acquire(timeout=self.timeout):
            raise TimeoutError("another write to the server did not finish")
        try:
            self._write_all(memoryview(data), deadline)
        finally:
            self._write.release()

    def _write_all(self, data: memoryview, deadline: float) -> None:
        started = len(data)
        while data:
            left = deadline - time.monotonic()
            try:
                ready = select.select([], [self._stdin], [], max(left, 0))[1] if left > 0 else []
                if not ready:
                    if len(data) < started:
                        self._end("a message to the server was cut off (it stopped reading)")
                    raise TimeoutError("the server does not read its input")
                data = data[os.write(self._stdin, data) :]
            except BlockingIOError:
                continue
            except (OSError, ValueError):
                raise _Ended(self.ended or self._gone("the server closed its input")) from None

    def request(self, method: str, params: Mapping[str, Any]) -> Any:
        """The result of one request; _Ended, _RpcError or TimeoutError."""
        slot: Future[Any] = Future()
        with self._lock:
            if self.ended is not None:
                raise _Ended(self.ended)
            ident = next(self._ids)
            self._pending[ident] = slot
        try:
            self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": dict(params)})
            return slot.result(self.timeout)  # its exception raised; TimeoutError past the wait
        finally:
            with self._lock:
                self._pending.pop(ident, None)

    def close(self) -> None:
        """Close the server's input, give it EXIT_GRACE to leave, then end its whole process
        group (what it started too), whether or not it left by itself."""
        with contextlib.suppress(OSError, ValueError):
            if self.process.stdin is not None:
                self.process.stdin.close()  # a write under way fails; the lock is not waited on
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=EXIT_GRACE)
        self._stop()
        self._end("the session was closed")
        # Every writer to its stdout is gone now, so the reader sees the end; its buffered
        # stream is closed only once the reader has left it (closing it under a read blocks).
        self._reader.join(timeout=EXIT_GRACE)
        if not self._reader.is_alive() and self.process.stdout is not None:
            with contextlib.suppress(OSError):
                self.process.stdout.close()

    def _stop(self) -> None:
        """End the server's process group (the server and whatever it started): TERM, a
        moment, then KILL. A group already gone is nothing to do."""
        for sig, grace in ((signal.SIGTERM, EXIT_GRACE), (signal.SIGKILL, 1.0)):
            try:
                os.killpg(self.process.pid, sig)
            except OSError:
                return  # no such group left
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=grace)


class SessionGateway:
    """Calls tools over one long-lived MCP session. Thread-safe; reopens a dead session once."""

    name = "session"
    costly_listing = False

    def __init__(
        self,
        spec: ServerSpec,
        timeout: float = 30.0,
        errlog: Callable[[], TextIO] | None = None,
        name: str | None = None,
    ) -> None:
        self.spec = spec
        # What a warning calls the server: its name (agent-memory), not its program (node).
        self.server = name or repr(spec.command)
        self.timeout = timeout
        self._errlog_open = errlog or _devnull
        self._lock = threading.Lock()
        self._session: _Conversation | None = None
        self._errlog: TextIO | None = None
        self._reopens_left = 1
        self._dead: str | None = None
        self._listed: tuple[_Conversation, list[str]] | None = None  # the session's tools

    # --- lifecycle ----------------------------------------------------------------------
    def _open(self) -> _Conversation:
        if self._errlog is None:
            try:
                self._errlog = self._errlog_open()
            except (OSError, MemfuseError):
                self._errlog = _devnull()  # the server's stderr is kept where it can be
        try:
            session = _Conversation(self.spec, self._errlog, self.timeout)
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            raise ToolMissing(
                f"cannot start the MCP server {self.server} ({self.spec.command!r}: {exc})"
            ) from None
        except OSError as exc:
            raise CallFailed(f"the MCP session to {self.server} did not open: {exc}") from None
        try:
            hello = {
                "protocolVersion": PROTOCOL_VERSIONS[0],
                "capabilities": {},
                "clientInfo": {"name": "memfuse", "version": __version__},
            }
            answer = session.request("initialize", hello)
            version = answer.get("protocolVersion") if isinstance(answer, dict) else None
            if version not in PROTOCOL_VERSIONS:
                raise _Ended(f"it speaks MCP protocol {str(version)[:40]!r}, not one memfuse knows")
            session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        except TimeoutError:
            session.close()
            raise CallTimeout(
                f"the MCP server {self.server} did not initialize within {self.timeout:g}s"
            ) from None
        except (_Ended, _RpcError) as exc:
            session.close()
            raise CallFailed(f"the MCP session to {self.server} did not open: {exc}") from None
        return session

    def _drop_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()

    def close(self) -> None:
        with self._lock:
            self._drop_session()
            if self._errlog is not None:
                self._errlog.close()
                self._errlog = None

    # --- calls --------------------------------------------------------------------------
    def _session_or_open(self) -> _Conversation:
        with self._lock:
            if self._session is None:
                if self._dead is not None and self._reopens_left <= 0:
                    raise CallFailed(f"the MCP session is gone ({self._dead}); not reopening again")
                if self._dead is not None:
                    self._reopens_left -= 1
                self._session = self._open()
            return self._session

    def _mark_dead(self, session: _Conversation, why: str) -> None:
        with self._lock:
            if self._session is session:
                self._dead = why
                self._drop_session()

    def _request(self, what: str, method: str, params: Mapping[str, Any]) -> Any:
        session = self._session_or_open()
        try:
            return session.request(method, params)
        except TimeoutError:
            self._mark_dead(session, "timeout")
            raise CallTimeout(
                f"{what} did not answer within {self.timeout:g}s; the session was closed"
            ) from None
        except _Ended as exc:
            self._mark_dead(session, str(exc))
            raise CallFailed(f"{what} failed over the MCP session: {exc}") from None
        except _RpcError as exc:
            raise CallFailed(f"{what} failed: {exc}") from None

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        result = self._request(tool, "tools/call", {"name": tool, "arguments": dict(arguments)})
        if not isinstance(result, dict):
            raise CallFailed(f"{tool} failed: the server's answer is not a tool result")
        content = result.get("content")
        items = content if isinstance(content, list) else []
        text = "\n".join(
            item["text"]
            for item in items
            if isinstance(item, dict) and isinstance(item.get("text"), str)
        )
        if result.get("isError"):
            raise CallFailed(f"{tool} failed: {text.strip()[:300]}")
        return parse_answer(tool, text)

    def version(self) -> None:
        """No bridge: memfuse speaks MCP to the server itself."""

    def list_tools(self) -> list[str]:
        """The server's tool names, listed once a session: a long-lived command (serve) makes
        a client per call, and each would otherwise ask the warm session again."""
        session = self._session_or_open()
        listed = self._listed
        if listed is None or listed[0] is not session:
            listed = self._listed = (session, self._list_tools())
        return list(listed[1])

    def _list_tools(self) -> list[str]:
        names: list[str] = []
        cursor: object = None
        for _ in range(LIST_PAGES_MAX):
            params = {"cursor": cursor} if isinstance(cursor, str) else {}
            result = self._request("listing tools", "tools/list", params)
            tools = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(tools, list):
                raise CallFailed("listing tools: the server's answer holds no tool list")
            names += [
                t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
            ]
            cursor = result.get("nextCursor")
            if not cursor:
                break
        return names
