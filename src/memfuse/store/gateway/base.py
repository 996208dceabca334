"""The gateway interface every transport implements, the typed failures it raises, and how a
stdio server is started (what the session transport is given)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from memfuse.errors import MemfuseError
from memfuse.untrusted import UntrustedJSON, load_json

ANSWER_CHARS = 16 << 20  # what one answer may hold (the transports cap what they read too)


class GatewayError(MemfuseError):
    """A call to the store that did not produce a usable answer. The guard catches every one;
    one that escapes a command is still a one-line error, never a traceback."""


class ToolMissing(GatewayError):
    """The bridge (mcporter) or the server command cannot be started at all."""


class CallFailed(GatewayError):
    """The bridge exited non-zero, or the session broke."""


class CallTimeout(GatewayError):
    """No answer within the wall-clock limit; the process group was killed."""


class ServerError(GatewayError):
    """The server answered `{"error": …}` (agent-memory's handler errors, exit code 0)."""


class BadOutput(GatewayError):
    """The answer is not the JSON object the caller needs. `text` keeps it raw."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text


@dataclass(frozen=True)
class Answer:
    """One tool answer: the text the server sent and, when it parses, its JSON value."""

    tool: str
    text: str
    value: Any = None

    def require_object(self) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            preview = self.text.strip().replace("\n", " ")[:120]
            raise BadOutput(
                f"{self.tool} answered something that is not JSON: {preview!r}", self.text
            )
        return self.value


def parse_answer(tool: str, text: str) -> Answer:
    """Parse a tool's text; `{"error": …}` becomes ServerError, anything else is kept (JSON
    that is malformed, nested too deep or too large is kept as text, never parsed)."""
    stripped = text.strip()
    try:
        value = load_json(stripped, limit=ANSWER_CHARS) if stripped else None
    except UntrustedJSON:
        value = None
    if isinstance(value, dict) and "error" in value and len(value) <= 2:
        raise ServerError(f"{tool} answered an error: {value['error']}")
    return Answer(tool=tool, text=text, value=value)


@dataclass(frozen=True)
class ServerSpec:
    """How to start a stdio MCP server."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str | None


class Gateway(Protocol):
    """A way to call agent-memory's tools. Implementations must be thread-safe."""

    name: str
    # Listing the tools costs a process of its own (mcporter's does): the client then learns
    # the store's generation from an answer it misreads instead of asking.
    costly_listing: bool

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        """Call one tool; raise a GatewayError subclass when there is no usable answer."""
        ...

    def list_tools(self) -> list[str]:
        """The names of the tools the server offers."""
        ...

    def close(self) -> None:
        """Release whatever the transport holds (a session, a daemon)."""
        ...

    def version(self) -> str | None:
        """The bridge's version where calls go through one (mcporter), else None."""
        ...
