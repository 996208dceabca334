"""Reading what others wrote, and showing it to a person, safely (docs/security.md: the caps
on JSON from outside, and text for people made safe)."""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64  # agent-memory's deepest answer nests 5 levels; a reranker's 3


class UntrustedJSON(ValueError):
    """Not JSON memfuse will read: malformed, too large or nested too deep."""


def load_json(data: str | bytes, *, limit: int) -> Any:
    """Parse JSON of at most `limit` bytes and `MAX_DEPTH` levels; UntrustedJSON otherwise."""
    if len(data) > limit:
        raise UntrustedJSON(f"{len(data)} bytes, above the limit of {limit}")
    depth = nesting(data)
    if depth > MAX_DEPTH:
        raise UntrustedJSON(f"nested {depth} levels deep, above the limit of {MAX_DEPTH}")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise UntrustedJSON(str(exc)) from None


_STRING_OR_BRACKET = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]', re.DOTALL)


def nesting(data: str | bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (strings skipped), in one pass.
    Stops counting once past MAX_DEPTH: that is all a caller needs to know."""
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
    depth = deepest = 0
    for match in _STRING_OR_BRACKET.finditer(raw):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                break
        elif token in (b"]", b"}"):
            depth -= 1
    return deepest


# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embeddings,
# overrides and isolates (U+202A–U+202E, U+2066–U+2069), plus the line and paragraph
# separators a terminal may take as a new line, and lone surrogates (valid in JSON, no
# stream encodes them: a raw one in output is a traceback).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def printable(text: str) -> str:
    """Text as a terminal may show it: every unsafe character as a visible escape (`\\x1b`,
    `\\u202e`); tabs and newlines kept."""
    return _UNSAFE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """Text from another's file (a name, a path) shown inside one line: `printable`, and its
    line breaks and tabs shown as escapes too, so it cannot print a line of its own."""
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")


def json_printable(text: str) -> str:
    """JSON text with the same characters escaped the JSON way (`\\u001b`): still exact."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
