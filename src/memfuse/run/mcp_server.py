"""An MCP server over stdio for a long-lived command (`memfuse serve`), on the official SDK.

The SDK speaks the protocol; this module bounds what it is fed (a line longer than
`request_max` is dropped in chunks, and answered when its id can be read; at most
`pending_max` calls wait) and where the work runs: a tool that writes on ONE worker thread,
in order, `after_write` on a thread of its own (one running, one waiting: the next write never
waits for it); the read-only tools on READERS threads of their own. What
a handler raises is an error result. While serving, fd 0 is the null device (a child never
reads the client's requests) and fd 1 is stderr (stray output never corrupts the channel).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import re
import sys
import threading
import traceback
from collections.abc import Callable, Mapping
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

OVERSIZED = "memfuse/oversized"  # the request a too-long line is replaced with
DRAIN_MAX = 120.0  # seconds the calls running at the end of stdin may take to finish
WARM_WAIT = 10.0  # seconds the handshake waits for the warm-up (the store's start included)
KEEP = 4096  # bytes of a too-long line's head and tail kept to find its id
READERS = 2  # read-only calls answered side by side
SWITCH = 0.0005  # seconds a thread back from a system call waits for the GIL (5 ms by default)
_ID = r'("(?:[^"\\]|\\.){0,200}"|-?\d{1,18})'
_HEAD_ID = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID.encode())
_TAIL_ID = re.compile(rb'"id"\s*:\s*' + _ID.encode() + rb"\s*\}\s*$")


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the client lists it."""

    name: str
    description: str
    schema: Mapping[str, Any]
    read_only: bool = True  # False for a tool that writes (the client may ask before it runs)


@dataclass(frozen=True)
class ToolAnswer:
    """A tool's answer: the text the client shows (the model reads it), its structured form,
    and whether it is an error the caller should correct (bad arguments) rather than a result."""

    text: str
    data: dict[str, Any] | None = None
    error: bool = False


ENVELOPE_KEY = "memfuse/envelope"  # the result's `_meta` key that holds the envelope


def call_result(answer: ToolAnswer) -> dict[str, Any]:
    """A tool's answer as an MCP `CallToolResult`: the text its one content block, for the
    model; the envelope, for a program, under `_meta` — never `structuredContent`, which a
    host may hand the model beside the text: the answer reaches the model once."""
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": answer.text}],
        "isError": answer.error,
    }
    if answer.data is not None:
        result["_meta"] = {ENVELOPE_KEY: answer.data}
    return result


class UnknownTool(Exception):
    """The client called a tool the server does not offer (a protocol error, not a result)."""


Handler = Callable[[str, dict[str, Any]], ToolAnswer]


def oversized_line(head: bytes, tail: bytes) -> str | None:
    """The request a line too long to read is answered as: its id, read from where JSON-RPC
    clients put it (first, or last), with the method that says why; None when it has none."""
    found = _HEAD_ID.match(head) or _TAIL_ID.search(tail)
    if found is None:
        return None
    msg_id = found[1].decode("utf-8", "replace")
    return f'{{"jsonrpc":"2.0","id":{msg_id},"method":"{OVERSIZED}","params":{{}}}}'


_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def whole_characters(line: str) -> str:
    """A message line whose JSON escapes name half a character (`\\ud83d` alone) with U+FFFD in
    its place: the SDK would drop it unanswered (it cannot be written back as UTF-8). Any other
    line is left for the SDK to read or refuse."""
    if not _SURROGATE.search(line):
        return line
    try:  # a message nested deeper than `_whole` can walk is the SDK's to refuse, too
        return json.dumps(_whole(json.loads(line)), ensure_ascii=False)
    except (ValueError, RecursionError):
        return line


def _whole(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_whole(k): _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


class BoundedLines:
    """The client's messages, one line each, from a binary stream, at most `limit` bytes a
    line. Blocking reads run on a thread of their own (anyio's), never the worker's."""

    def __init__(
        self,
        stream: io.BufferedIOBase,
        limit: int,
        log: logging.Logger,
        busy: Callable[[], bool] = lambda: False,
    ) -> None:
        self._stream = stream
        self._limit = limit
        self._log = log
        self._busy = busy

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        import anyio.to_thread

        line = await anyio.to_thread.run_sync(self._next, abandon_on_cancel=True)
        if line is None:
            await self._drain()
            raise StopAsyncIteration
        return line

    async def _drain(self) -> None:
        """At the end of stdin, let the calls already sent finish and their answers be written
        (`printf '…' | memfuse serve` gets every answer): the SDK ends the connection at EOF
        and would answer those still running "Connection closed". Bounded by DRAIN_MAX."""
        import anyio

        with anyio.move_on_after(DRAIN_MAX):
            quiet = 0
            while quiet < 3:  # three looks in a row with nothing running
                await anyio.sleep(0.02)
                quiet = 0 if self._busy() else quiet + 1

    def _next(self) -> str | None:
        while True:
            raw = self._stream.readline(self._limit + 1)
            if not raw:
                return None
            if len(raw) <= self._limit or raw.endswith(b"\n"):
                if raw.strip():
                    return whole_characters(raw.decode("utf-8", "replace"))
                continue
            head, tail = raw[:KEEP], raw[-KEEP:]
            while (rest := self._stream.readline(65536)) and not rest.endswith(b"\n"):
                tail = (tail + rest)[-KEEP:]
            tail = (tail + rest)[-KEEP:]
            replaced = oversized_line(head, tail)
            self._log.warning("a request of more than %d bytes was refused", self._limit)
            if replaced is not None:
                return replaced


@contextlib.contextmanager
def _claimed_stdio() -> Any:
    """The client's stdin and stdout as private fds; meanwhile fd 0 is null, fd 1 stderr."""
    stdin_fd, stdout_fd = os.dup(0), os.dup(1)
    saved = (os.dup(0), os.dup(1))
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        with (
            io.open(stdin_fd, "rb", closefd=True) as stdin,  # noqa: UP020 - a descriptor
            io.open(stdout_fd, "wb", closefd=True) as stdout,  # noqa: UP020
        ):
            yield stdin, stdout
    finally:
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, null):
            os.close(fd)


def serve_stdio(
    tools: list[ToolSpec],
    handle: Handler,
    *,
    name: str,
    version: str,
    instructions: str,
    log: logging.Logger,
    mask: Callable[[str], str],
    warm: Callable[[], None] | None = None,
    close: Callable[[], None] | None = None,
    request_max: int = 256 * 1024,
    pending_max: int = 16,
    after_write: Callable[[], None] | None = None,
) -> int:
    """Serve `tools` over stdin/stdout until stdin closes; the number of calls answered.
    `warm` runs first on a questions' thread, holding the handshake at most WARM_WAIT seconds
    (a question may wait for the rest, a note never does); `close` runs last."""
    import importlib

    import anyio

    # The SDK is imported here, before the worker thread imports it too: two threads
    # importing it at once can meet a module half-initialised.
    for module in ("mcp.client.stdio", "mcp.server.lowlevel", "mcp.server.stdio"):
        importlib.import_module(module)

    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memfuse-serve")
    readers = ThreadPoolExecutor(max_workers=READERS, thread_name_prefix="memfuse-ask")
    lanes = {t.name: worker if not t.read_only else readers for t in tools}
    later = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memfuse-after")
    after = _queued(later, _logged(after_write, log, mask)) if after_write is not None else None
    counts = {"answered": 0, "waiting": 0}
    # back from each of a note's longer system calls, its thread waited up to a switch
    # interval for a CPU-bound thread (the warm-up's catch-up) to give the GIL back
    switch = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH)
    try:
        with _claimed_stdio() as (stdin, stdout):
            if warm is not None:  # with fd 0 and 1 claimed: a child it starts cannot take them
                warmed(readers, _logged(warm, log, mask), WARM_WAIT)
            server = _server(
                tools, handle, name, version, instructions, (lanes, readers, after), counts,
                log=log, mask=mask, pending_max=pending_max, limit=request_max,
            )  # fmt: skip
            lines = BoundedLines(stdin, request_max, log, lambda: counts["waiting"] > 0)

            async def main() -> None:
                from mcp.server.stdio import stdio_server

                writer = anyio.wrap_file(io.TextIOWrapper(stdout, encoding="utf-8"))
                async with stdio_server(stdin=lines, stdout=writer) as (read, write):  # type: ignore[arg-type]
                    await server.run(read, write, server.create_initialization_options())

            with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
                anyio.run(main)
    finally:
        sys.setswitchinterval(switch)
        readers.shutdown(wait=True, cancel_futures=False)
        later.shutdown(wait=True, cancel_futures=False)
        if close is not None:
            worker.submit(_logged(close, log, mask))
        worker.shutdown(wait=True, cancel_futures=False)
    return counts["answered"]


def _queued(later: ThreadPoolExecutor, step: Callable[[], None]) -> Callable[[], None]:
    """`step` handed to `later`: one running and one waiting at most (a write while one
    waits is covered by it, which takes all that is new when it runs)."""
    slots = threading.BoundedSemaphore(2)

    def run() -> None:
        try:
            step()
        finally:
            slots.release()

    def queue() -> None:
        if slots.acquire(blocking=False):
            later.submit(run)

    return queue


def warmed(worker: ThreadPoolExecutor, warm: Callable[[], None], wait: float) -> bool:
    """Run `warm` on the worker and wait for it at most `wait` seconds; whether it finished."""
    done, _ = futures.wait([worker.submit(warm)], timeout=wait)
    return bool(done)


def _logged(step: Callable[[], None], log: logging.Logger, mask: Callable[[str], str]) -> Any:
    def run() -> None:
        try:
            step()
        except Exception as exc:  # warming up: the first call will meet the same and say so
            log.warning("%s failed: %s", step.__name__, mask(f"{type(exc).__name__}: {exc}"))

    return run


def _server(
    tools: list[ToolSpec],
    handle: Handler,
    name: str,
    version: str,
    instructions: str,
    # each tool's thread pool, the read-only tools' (an unknown tool's), the step after a write
    lanes: tuple[dict[str, ThreadPoolExecutor], ThreadPoolExecutor, Callable[[], None] | None],
    counts: dict[str, int],
    *,
    log: logging.Logger,
    mask: Callable[[str], str],
    pending_max: int,
    limit: int,
) -> Any:
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    listed = [
        types.Tool(
            name=t.name,
            description=t.description,
            input_schema=dict(t.schema),
            annotations=types.ToolAnnotations(
                read_only_hint=t.read_only,
                destructive_hint=False,
                idempotent_hint=t.read_only,
                open_world_hint=False,
            ),
        )
        for t in tools
    ]

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if counts["waiting"] >= pending_max:
            raise MCPError(types.INTERNAL_ERROR, f"busy: {pending_max} calls are waiting already")
        counts["waiting"] += 1
        lane = lanes[0].get(params.name, lanes[1])
        try:
            arguments = params.arguments if params.arguments is not None else {}
            future = lane.submit(_answer, handle, params.name, arguments, log, mask)
            answer = await asyncio.wrap_future(future)
            if lane is not lanes[1] and lanes[2] is not None and answer and not answer.error:
                lanes[2]()  # after the answer, on its own thread: nothing waits for it
        finally:
            counts["waiting"] -= 1
        if answer is None:
            raise MCPError(types.INVALID_PARAMS, mask(f"no tool {params.name!r}")[:200])
        counts["answered"] += 1
        return types.CallToolResult.model_validate(call_result(answer))

    async def oversized(_ctx: Any, _params: Any) -> types.EmptyResult:
        raise MCPError(types.INVALID_REQUEST, f"a request of more than {limit} bytes is refused")

    server = Server(
        name, version=version, instructions=instructions,
        on_list_tools=list_tools, on_call_tool=call_tool,
    )  # fmt: skip
    server.add_request_handler(OVERSIZED, types.RequestParams, oversized)
    return server


def _answer(
    handle: Handler,
    tool: str,
    arguments: dict[str, Any],
    log: logging.Logger,
    mask: Callable[[str], str],
) -> ToolAnswer | None:
    """The handler's answer on the worker thread; None for an unknown tool. Anything it
    raises is an error result (the trace in the log), never the end of the server."""
    try:
        return handle(tool, arguments)
    except UnknownTool:
        return None
    except Exception as exc:
        log.error("%s failed\n%s", tool, mask(traceback.format_exc()))
        why = mask(f"internal error: {type(exc).__name__}: {exc}")[:500]
        return ToolAnswer(f"{why} (the trace is in memfuse's log)", None, error=True)
