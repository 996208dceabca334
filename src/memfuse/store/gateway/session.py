"""The session transport: one stdio MCP session per run, through the official `mcp` SDK.

mcporter starts a fresh server for every call (~0.3-0.7 s each); one session pays the start-up
once and then ~2 ms per call. The SDK is async; a blocking portal runs its event loop on a
background thread so the rest of memfuse stays synchronous and thread-pool friendly.

The server's command, args, env and cwd come as a `ServerSpec` (memfuse.store.server_entry resolves
it from memfuse's `[session]` table or mcporter's config entry).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractContextManager, asynccontextmanager
from typing import Any, TextIO

from memfuse.errors import MemfuseError
from memfuse.store.gateway.base import Answer, CallFailed, CallTimeout, ToolMissing, parse_answer
from memfuse.store.gateway.spec import ServerSpec

ErrlogOpener = Callable[[], TextIO]


def _devnull() -> TextIO:
    return open(os.devnull, "a", encoding="utf-8")


# One JSON-RPC line from the server may hold at most this many characters: the SDK gathers a
# line in memory (by repeated concatenation) before it parses it, so a server that answers an
# endless line would cost memfuse its memory. Past the limit the session is closed.
LINE_LIMIT = 16 << 20
# Where the bounded reader tells what it saw: the list of the session whose reader it is (the
# SDK makes the reader, so it cannot be handed one). A context variable, set where the session
# opens and inherited by the reader's task: sessions running side by side (serve) never see,
# or take, one another's overflow.
_OVERFLOWED: contextvars.ContextVar[list[str]] = contextvars.ContextVar("overflowed")


def _bounded_stdout() -> None:
    """Have the SDK's stdio client read the server's stdout through a reader that ends the
    session at a line longer than LINE_LIMIT (the SDK offers no such limit of its own)."""
    import anyio
    from anyio.streams.text import TextReceiveStream
    from mcp.client import stdio

    if getattr(getattr(stdio, "TextReceiveStream", None), "bounded", False):
        return

    class BoundedText(TextReceiveStream):
        bounded = True
        _open_line = 0

        async def receive(self) -> str:
            chunk = await super().receive()
            newline = chunk.rfind("\n")
            opened = len(chunk) - newline - 1 if newline >= 0 else self._open_line + len(chunk)
            self._open_line = opened
            if self._open_line > LINE_LIMIT:
                _OVERFLOWED.get([]).append(f"a line of more than {LINE_LIMIT >> 20} MiB")
                # Closed, not just left: the SDK drains stdout to its end before it tells the
                # session, and the server's stdout would not end.
                await self.transport_stream.aclose()
                raise anyio.ClosedResourceError  # the SDK's reader ends quietly on this
            return chunk

    setattr(stdio, "TextReceiveStream", BoundedText)  # noqa: B010 - the SDK's own name for it


def _root_cause(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (anyio's task groups wrap what went wrong)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class SessionGateway:
    """Calls tools over one long-lived MCP session. Thread-safe; reopens a dead session once."""

    name = "session"

    def __init__(
        self,
        spec: ServerSpec,
        timeout: float = 30.0,
        errlog: ErrlogOpener | None = None,
        name: str | None = None,
    ) -> None:
        self.spec = spec
        # What a warning calls the server: its name (agent-memory), not its program (node).
        self.server = name or repr(spec.command)
        self.timeout = timeout
        self._errlog_open = errlog or _devnull
        self._lock = threading.Lock()
        self._portal_cm: AbstractContextManager[Any] | None = None
        self._portal: Any = None
        self._session_cm: AbstractContextManager[Any] | None = None
        self._session: Any = None
        self._errlog: TextIO | None = None
        self._reopens_left = 1
        self._dead: str | None = None
        self._overflowed: list[str] = []  # what this session's bounded reader saw

    # --- lifecycle ----------------------------------------------------------------------
    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[Any]:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=self.spec.command,
            args=list(self.spec.args),
            env=dict(self.spec.env),
            cwd=self.spec.cwd,
            encoding_error_handler="replace",
        )
        assert self._errlog is not None
        _bounded_stdout()
        _OVERFLOWED.set(self._overflowed)  # this task's, and the reader tasks it starts
        async with (
            stdio_client(params, errlog=self._errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            import anyio

            with anyio.fail_after(self.timeout):
                await session.initialize()
            yield session

    def _open(self) -> Any:
        try:
            from anyio.from_thread import start_blocking_portal
        except ImportError:  # pragma: no cover - depends on the install
            raise ToolMissing(
                "the session transport needs the MCP SDK: pip install 'memfuse[session]'"
            ) from None
        if self._portal is None:
            self._portal_cm = start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
        if self._errlog is None:
            try:
                self._errlog = self._errlog_open()
            except (OSError, MemfuseError):
                self._errlog = _devnull()  # the server's stderr is kept where it can be
        self._session_cm = self._portal.wrap_async_context_manager(self._connect())
        try:
            self._session = self._session_cm.__enter__()
        except Exception as exc:
            self._session_cm = None
            cause = _root_cause(exc)
            if isinstance(cause, FileNotFoundError | PermissionError):
                raise ToolMissing(
                    f"cannot start the MCP server {self.server} ({self.spec.command!r}: {cause})"
                ) from None
            if isinstance(cause, TimeoutError):
                raise CallTimeout(
                    f"the MCP server {self.server} did not initialize within {self.timeout:g}s"
                ) from None
            raise CallFailed(f"the MCP session to {self.server} did not open: {cause}") from None
        return self._session

    def _drop_session(self) -> None:
        cm, self._session_cm, self._session = self._session_cm, None, None
        if cm is not None:
            with contextlib.suppress(BaseException):
                cm.__exit__(None, None, None)

    def close(self) -> None:
        with self._lock:
            self._drop_session()
            if self._portal_cm is not None:
                with contextlib.suppress(BaseException):
                    self._portal_cm.__exit__(None, None, None)
                self._portal_cm = self._portal = None
            if self._errlog is not None:
                self._errlog.close()
                self._errlog = None

    # --- calls --------------------------------------------------------------------------
    def _session_or_open(self) -> Any:
        with self._lock:
            if self._session is None:
                if self._dead is not None and self._reopens_left <= 0:
                    raise CallFailed(f"the MCP session is gone ({self._dead}); not reopening again")
                if self._dead is not None:
                    self._reopens_left -= 1
                self._open()
            return self._session

    def _mark_dead(self, session: Any, why: str) -> None:
        with self._lock:
            if self._session is session:
                self._dead = why
                self._drop_session()

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        session = self._session_or_open()
        try:
            result = self._portal.call(self._call, session, tool, dict(arguments))
        except Exception as exc:
            cause = _root_cause(exc)
            if isinstance(cause, TimeoutError):
                self._mark_dead(session, "timeout")
                raise CallTimeout(
                    f"{tool} did not answer within {self.timeout:g}s; the session was closed"
                ) from None
            self._mark_dead(session, type(cause).__name__)
            why = f"the server answered {self._overflowed.pop()}" if self._overflowed else cause
            raise CallFailed(
                f"{tool} failed over the MCP session: {why or type(cause).__name__}"
            ) from None
        text = "\n".join(getattr(item, "text", "") for item in result.content)
        if result.is_error:
            raise CallFailed(f"{tool} failed: {text.strip()[:300]}")
        return parse_answer(tool, text)

    async def _call(self, session: Any, tool: str, arguments: dict[str, Any]) -> Any:
        import anyio

        with anyio.fail_after(self.timeout):
            return await session.call_tool(tool, arguments)

    def list_tools(self) -> list[str]:
        session = self._session_or_open()

        async def names() -> list[str]:
            import anyio

            with anyio.fail_after(self.timeout):
                listing = await session.list_tools()
            return [t.name for t in listing.tools]

        try:
            result: list[str] = self._portal.call(names)
        except TimeoutError:
            raise CallTimeout("listing tools timed out") from None
        return result
