"""Colour for people at a terminal: doctor's verdicts, a failed run's line, a warning.

Only where a person reads (`wanted`). The text is made printable before it gets here
(memfuse.untrusted): colour is only the style rich adds around it, never an escape it carries.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

# The start of a line and its style: doctor's verdicts, a run's failure, a warning.
_STYLES = (
    (re.compile(r"FAIL\b"), "bold red"),
    (re.compile(r"warn\b"), "yellow"),
    (re.compile(r"ok\b"), "green"),
    (re.compile(r"memfuse [a-z-]+: "), "bold red"),
    (re.compile(r"warning: "), "yellow"),
    (re.compile(r"[a-z]+ needs a person: "), "bold red"),
)


def wanted(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Whether `stream` is read by a person who wants colour."""
    env = os.environ if env is None else env
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


def console(stream: TextIO) -> Console:
    """A console that writes colour to `stream` (asked only when `wanted`)."""
    from rich.console import Console

    return Console(
        file=stream, force_terminal=True, no_color=False, color_system="standard",
        highlight=False, soft_wrap=True, emoji=False, markup=False,
    )  # fmt: skip


def painted(line: str) -> Text:
    """The line with its leading verdict, failure or warning in colour; the rest as it is."""
    from rich.text import Text

    text = Text(line)
    stripped = len(line) - len(line.lstrip(" "))
    for pattern, style in _STYLES:
        found = pattern.match(line, stripped)
        if found is not None:
            text.stylize(style, found.start(), found.end())
            break
    return text
