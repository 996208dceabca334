"""sh's words: the argv and the leading NAME=value words of a command line, as sh reads them.

A job's line (the command field of a cron line, an agent job's `exec:` line) is run by sh: this
is how a check reads back what it would run, without running anything.
"""

from __future__ import annotations

import re

from memfuse.schedule.runs import ENV_NAME, ParseError

_OPERATORS = set(";|&<>()")
_DQ_ESCAPE = re.compile(r'\\([$`"\\])')
_DOUBLE_QUOTED = re.compile(r'((?:\\[$`"\\]|\\(?![$`"\\])|[^"\\])*)"')


def split_command(command: str, where: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """(argv up to the first shell operator, the leading NAME=value words) of a sh command.

    Quotes and backslashes are undone as sh does; `$`, backquotes, globs and `~` are kept as
    written (a check runs the words literally). A redirection's file descriptor (`2>`) is not
    an argument.
    """
    words = _sh_words(command, where)
    assigned: dict[str, str] = {}
    while words:
        text, first_quoted = words[0]
        name, eq, value = text.partition("=")
        if not (eq and ENV_NAME.fullmatch(name) and len(name) < first_quoted):
            break
        assigned[name] = value
        words.pop(0)
    if not words:
        raise ParseError(f"{where}: no command to run: {command!r}")
    return tuple(text for text, _ in words), assigned


def _sh_words(command: str, where: str) -> list[tuple[str, int]]:
    """The words before the first unquoted operator or comment: (text, index of the first
    character that came from quoting, or the text's length when none did)."""
    words: list[tuple[str, int]] = []
    i, n = 0, len(command)
    while i < n:
        while i < n and command[i] in " \t":
            i += 1
        if i >= n or command[i] in _OPERATORS or command[i] == "#":
            break
        text: list[str] = []
        first_quoted: int | None = None
        while i < n and command[i] not in " \t" and command[i] not in _OPERATORS:
            ch = command[i]
            if ch in "'\"\\" and first_quoted is None:
                first_quoted = len("".join(text))
            if ch == "'":
                close = command.find("'", i + 1)
                if close < 0:
                    raise ParseError(f"{where}: unterminated single quote: {command!r}")
                text.append(command[i + 1 : close])
                i = close + 1
            elif ch == '"':
                i = _double_quoted(command, i + 1, text, where)
            elif ch == "\\":
                text.append(command[i + 1 : i + 2])
                i += 2
            else:
                text.append(ch)
                i += 1
        word = "".join(text)
        if i < n and command[i] in "<>" and first_quoted is None and word.isdigit():
            break  # `2>file`: the digits name a file descriptor
        words.append((word, len(word) if first_quoted is None else first_quoted))
    return words


def _double_quoted(command: str, i: int, text: list[str], where: str) -> int:
    """Append a double-quoted string's text (from just after its quote); return the index after
    the closing quote. Inside, a backslash escapes only `$`, a backquote, `"` and itself."""
    found = _DOUBLE_QUOTED.match(command, i)
    if found is None:
        raise ParseError(f"{where}: unterminated double quote: {command!r}")
    text.append(_DQ_ESCAPE.sub(r"\1", found[1]))
    return found.end()
