"""Colour on stderr follows the same rule as on stdout (memfuse.run.colour.wanted): a person at
a terminal who has not set NO_COLOR; a pipe, a file and cron's mail get the plain bytes."""

from __future__ import annotations

import io

import pytest

from memfuse.run import runner


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, keeping what is written."""

    def isatty(self) -> bool:
        return True


LINE = "memfuse sync: the store was not reached"


def _said(monkeypatch: pytest.MonkeyPatch, stream: io.StringIO, **env: str) -> str:
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stderr", stream)
    runner._say(LINE)
    return stream.getvalue()


def test_no_color_at_a_terminal_gets_no_escape_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    said = _said(monkeypatch, _Terminal(), NO_COLOR="1", TERM="xterm-256color")
    assert said == LINE + "\n", repr(said)  # not even bold: no-color.org's "no ANSI"


def test_a_pipe_gets_no_escape_on_stderr_whatever_forces_colour(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """cron mails stderr, and a log keeps it: the plain bytes, as docs/decisions.md 387 says."""
    said = _said(monkeypatch, io.StringIO(), FORCE_COLOR="1", TERM="xterm-256color")
    assert said == LINE + "\n", repr(said)


def test_a_terminal_still_gets_its_colour_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    said = _said(monkeypatch, _Terminal(), TERM="xterm-256color")
    assert "\x1b[1;31mmemfuse sync: \x1b[0m" in said, repr(said)
