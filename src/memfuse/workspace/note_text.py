"""What the `note` tool takes as a note's text: one bullet of plain text, as the journal reader
reads it back and as a person sees it in a preview (docs/security.md, "The note tool").

- The text is one bullet or nothing: a heading, fence or comment opener, a list marker or a
  quote at its start, a comment anywhere, a control character, a line break or more than
  NOTE_MAX characters is refused (`NoteRefused`, saying what to change); surrounding
  whitespace is trimmed, as the journal reader trims it.
- Nothing of it hidden from the person reading: raw HTML anywhere outside code spans (a tag,
  a processing instruction, a declaration), and whatever else a preview would not show of
  it (memfuse.text.hidden's one rule: an invisible code point, words only in an attribute, a
  link reference definition) are refused.
"""

from __future__ import annotations

import re

from memfuse.errors import MemfuseError
from memfuse.text.hidden import hiding, unseen
from memfuse.workspace.journal import read

NOTE_MAX = 2000  # characters of one note (a bullet is a line; a page belongs in a file)

# What may not open a note: it would be a heading, a fence, a quote, a nested list, a table
# row read as text, or an HTML block, not the text of one bullet.
_OPENERS = (
    (re.compile(r"#{1,6}(?:\s|$)"), "a heading marker (#)"),
    (re.compile(r"(?:`{3,}|~{3,})"), "a code fence opener (``` or ~~~)"),
    (re.compile(r"(?:[-*+]|[0-9]{1,9}[.)])(?:\s|$)"), "a list marker (-, *, +, 1.)"),
    (re.compile(r">"), "a block quote marker (>)"),
    (re.compile(r"<"), "an HTML tag or comment (<)"),
    (re.compile(r"(?:[-*_=]\s*){3,}$"), "a rule or heading underline (---, ===)"),
)
_BREAK = re.compile("[\t\n\r\x0b\x0c\x85\u2028\u2029]")  # a line's end, or a tab


class NoteRefused(MemfuseError):
    """A note memfuse will not write: the text, or the journal, says why (nothing written)."""


def checked_text(text: str) -> str:
    """The note's text as it will read back (trimmed), or NoteRefused saying what to change."""
    value = text.strip()
    if not value:
        raise NoteRefused("text must hold some words")
    if len(value) > NOTE_MAX:
        raise NoteRefused(f"text is {len(value)} characters, above the {NOTE_MAX} of one note")
    if (broken := _BREAK.search(value)) is not None:
        what = "a tab" if broken[0] == "\t" else "a line break"
        raise NoteRefused(f"text holds {what} (U+{ord(broken[0]):04X}): a note is one line of text")
    for pattern, what in _OPENERS:
        if pattern.match(value):
            raise NoteRefused(f"text opens with {what}: a note is the text of one bullet")
    if "<!--" in value or "-->" in value:
        raise NoteRefused("text holds an HTML comment marker (<!-- or -->), which hides text")
    if (found := hiding(value, html=True)) is not None:
        raise NoteRefused(
            f"text holds {found}, which a preview rendering HTML does not show as written: a"
            " note is plain text (write it without the tag; code goes in backticks)"
        )
    if (found := unseen(value)) is not None:
        raise NoteRefused(
            f"text holds {found}, which makes it read otherwise than it is stored: a person"
            " reading the journal in a preview would not see it (write it as plain text)"
        )
    alone, tally = read(f"- {value}\n")
    if tally.hidden_items:  # a line a preview drops: `[name]: target`, `[a\]b]: target`
        raise NoteRefused(
            "text is a link reference definition ([name]: target): a viewer shows nothing of it"
            " and turns [name] in other bullets into a link"
        )
    if [b.text for b in alone] != [value]:  # whatever else Markdown makes of it
        raise NoteRefused("text would not read back as written as one bullet: write it plainly")
    return value
