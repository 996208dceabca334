"""HTML in a bullet that a preview which renders HTML (VS Code's, Obsidian's, most Markdown
viewers) shows otherwise than it is stored. Pure.

CommonMark passes raw HTML through (a tag, a comment, a processing instruction, a
declaration, a CDATA section, outside code spans), and a browser then shows none of the
tag's own text — its name, its attributes — and, for some tags, not what follows either:
an element it hides (`hidden`, a `style`, `<details>`, `<template>` …) or one whose content
it reads as raw text until its end tag (`<style>`, `<script>`, `<title>`, `<textarea>` …),
which swallows every later bullet of the day when left open. A character reference can show
an invisible or direction-turning character (`&#x202E;`) that the note tool refuses written
plainly. Which text is HTML is what markdown-it (the journal grammar's parser) reads as HTML
with HTML on: its own HTML pattern, or its inline reading where a code span, an escape or a
link destination could claim the text.

- `html_in` (the note tool): the first raw HTML at all, or such a reference. A note is one
  line of plain text: nothing of it may depend on a renderer.
- `hiding` (sync's accounting): what a preview would hide of a bullet an agent wrote in its
  journal directly. A bare tag of an element that only styles the text it holds (`<b>`,
  `<em>`, `<sub>` …, no attribute) hides no word, and is not named.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Iterator
from html.entities import html5
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

# What a browser reads as raw text or hides with all it holds (the HTML standard's raw text,
# escapable raw text and inert elements, and those hidden by default), and `plaintext`,
# which takes the rest of the page.
SWALLOWING = frozenset((
    "script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes", "noscript",
    "plaintext", "template", "object", "select", "datalist", "details", "dialog", "head", "svg",
    "math",
))  # fmt: skip
# Elements that only style the words they hold: a bare tag of one hides nothing.
STYLING = frozenset((
    "b", "i", "em", "strong", "u", "s", "del", "ins", "sub", "sup", "small", "big", "mark",
    "code", "kbd", "samp", "var", "tt", "strike", "cite", "dfn", "q", "abbr", "span", "br",
    "wbr", "p", "div",
))  # fmt: skip
# Characters that do not show as themselves: the note tool's disguise set, by category.
_INVISIBLE = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)(\s[^>]*)?/?>\Z", re.DOTALL)


@functools.cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).disable("text_join")


# Whatever could be raw HTML or a character reference; most bullets hold neither.
_MAYBE = re.compile(r"<[A-Za-z/!?]|&(?:#|[A-Za-z][A-Za-z0-9]*;)")
_REFERENCE = re.compile(r"&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});")
# Where markdown-it's reading differs from the bare patterns: a code span, an escape, a link
# destination (`[a](<b>)` is no tag).
_SPANS = ("`", "\\", "](")


def pieces(text: str, *, exact: bool = True) -> list[tuple[str, str, str]]:
    """The raw HTML (`("html", html, "")`) and character references (`("ref", shown as,
    written)`) a CommonMark renderer finds in `text`, in order. The bare patterns (markdown-it's
    own HTML pattern, a reference's) where nothing else could claim the text; markdown-it's
    inline reading where something could, at ~40 µs a bullet — unless not `exact`: then the
    bare patterns, which may take a tag in backticks for HTML."""
    if not _MAYBE.search(text):
        return []
    if exact and any(span in text for span in _SPANS):
        tokens = [c for t in _parser().parseInline(text) for c in (t.children or [])]
        return [
            ("html", t.content, "") if t.type == "html_inline" else ("ref", t.content, t.markup)
            for t in tokens
            if t.type == "html_inline" or (t.type == "text_special" and t.info == "entity")
        ]
    found = [(m.start(), m.end(), ("html", m[0], "")) for m in _tags(text)]
    starts = [start for start, _, _ in found]
    for m in _REFERENCE.finditer(text):
        before = bisect.bisect_right(starts, m.start()) - 1  # the tags do not overlap
        inside = before >= 0 and m.start() < found[before][1]
        shown = _number_shown(m[0]) if m[0][1] == "#" else html5.get(m[0][1:], m[0])
        if not inside and shown != m[0]:
            found.append((m.start(), m.end(), ("ref", shown, m[0])))
    return [piece for _, _, piece in sorted(found)]


def _number_shown(reference: str) -> str:
    """What markdown-it shows for a numeric reference: the character, or U+FFFD for one no
    renderer may show (a control, a surrogate, a non-character) — not the empty text or the
    Windows-1252 guess Python's `html.unescape` gives for some of those."""
    from markdown_it.common.utils import fromCodePoint, isValidEntityCode

    digits = reference[2:-1]
    code = int(digits[1:], 16) if digits[0] in "xX" else int(digits)
    return fromCodePoint(code) if isValidEntityCode(code) else "\ufffd"


def _tags(text: str) -> Iterator[re.Match[str]]:
    """What `HTML_TAG_RE.finditer(text)` finds, in linear time: a `<` whose form's end (`>`,
    `-->`, `]]>`, `?>`) occurs nowhere after it is passed over without the pattern, whose lazy
    parts would read to the text's end at each (a bullet of 20 000 `<?` cost 6 s, and more
    by the square). The same bounds as markdown-it's own inline rule, which does this."""
    from markdown_it.common.html_re import HTML_TAG_RE

    last = {end: text.rfind(end) for end in (">", "-->", "]]>", "?>")}
    at = text.find("<")
    while at >= 0:
        found = HTML_TAG_RE.match(text, at) if _may_end(text, at, last) else None
        if found is not None:
            yield found
        at = text.find("<", found.end() if found is not None else at + 1)


def _may_end(text: str, at: int, last: dict[str, int]) -> bool:
    """Whether the markup a `<` at `at` opens has its end somewhere after it."""
    if text.startswith("<!--", at):
        return last[">"] >= at + 4 and (
            text.startswith(("<!-->", "<!--->"), at) or last["-->"] >= at + 4
        )
    if text.startswith("<![CDATA[", at):
        return last["]]>"] >= at + 9
    if text.startswith("<?", at):
        return last["?>"] >= at + 2
    if text.startswith("<!", at):
        return last[">"] >= at + 3
    return last[">"] >= at + 2


def html_in(text: str) -> str | None:
    """The first HTML a renderer would pass through in `text`, or a character reference it
    would show as an invisible character, said as a person would look for it; None."""
    for kind, content, written in pieces(text):
        if kind == "html":
            return f"HTML ({_shown(content)})"
        if (found := _reference(content, written)) is not None:
            return found
    return None


def hiding(text: str, *, exact: bool = True) -> str | None:
    """What an HTML-rendering preview would not show of this bullet's text, or which later
    text it would swallow, said briefly; None when it shows it all."""
    if (found := _left_open(text)) is not None:
        return found
    for kind, content, written in pieces(text, exact=exact):
        found = _hides(content) if kind == "html" else _reference(content, written)
        if found is not None:
            return found
    return None


EXACT = 2000  # bullets of one reading that may cost markdown-it's inline reading (~0.1 s)
EXACT_CHARS = 100_000  # … and their characters: up to ~30 µs each on a hostile item (~3 s)


class Hiding:
    """`hiding` for one reading of a journal: markdown-it's inline reading for its first EXACT
    bullets that need it, of EXACT_CHARS characters between them, the bare patterns after (a
    hostile file of 16 MiB of `` `<a `` items would otherwise cost minutes, and 2 000 items of
    8 KB of `![a` ~4 CPU-minutes; past the budget a tag in backticks may be named too)."""

    def __init__(self, exact: int = EXACT, chars: int = EXACT_CHARS) -> None:
        self.left = exact
        self.chars = chars

    def __call__(self, text: str) -> str | None:
        exact = self.left > 0 and len(text) <= self.chars
        if exact and any(span in text for span in _SPANS) and _MAYBE.search(text):
            self.left -= 1
            self.chars -= len(text)
        return hiding(text, exact=exact)


# What may open a tag, a comment, a declaration or an instruction.
_MARKUP = re.compile(r"<[A-Za-z/!?]")


def _left_open(text: str) -> str | None:
    """A line of the bullet that opens an HTML block (CommonMark's kinds 1-6: `<style`, `<div`,
    `<?`, `<!X` … at its start, by markdown-it's own patterns) holding markup left without its
    end: the block goes to the preview raw, where what follows that `<` — the line's words,
    the next item's `</li>` — is read as a tag's attributes or a comment, and a `<style`,
    `<div hidden`, `<details` takes every later bullet too. The inline patterns miss it: an
    open `<style` is no tag to them (markdown-it's inline reading would escape it)."""
    from markdown_it.common.html_re import HTML_TAG_RE
    from markdown_it.rules_block.html_block import HTML_SEQUENCES

    for line in text.split("\n"):
        if not line.startswith("<") or not any(s[0].search(line) for s in HTML_SEQUENCES[:6]):
            continue
        end = 0  # past the last markup found whole (a `<` inside it is its attribute's)
        for start in _MARKUP.finditer(line):
            if start.start() < end:
                continue
            if (whole := HTML_TAG_RE.match(line, start.start())) is None:
                return f"{_shown(line[start.start() :])} is left open: a preview hides what follows"
            end = whole.end()
    return None


def _hides(raw: str) -> str | None:
    tag = _TAG.match(raw)
    if tag is None:  # a comment, processing instruction, declaration or CDATA section
        return f"{_shown(raw)} is not shown"
    closing, name, attributes = tag[1], tag[2].lower(), (tag[3] or "").strip(" \t\n/")
    if closing:
        return None  # an end tag hides nothing of its own but its name
    if name in SWALLOWING:
        return f"<{name}> hides the text after it"
    if attributes:
        return (
            f"{_shown(raw)}: a preview shows none of a tag's attributes, and they may hide"
            " what it holds"
        )
    if name not in STYLING:
        return f"<{name}> is not text a preview shows"
    return None


def _reference(shown: str, written: str) -> str | None:
    """A character reference (`&#x202E;`, `&shy;`) that shows an invisible character."""
    if any(unicodedata.category(c) in _INVISIBLE for c in shown):
        return f"the reference {written} shows an invisible character"
    return None


def _shown(raw: str) -> str:
    flat = " ".join(raw.split())
    return flat if len(flat) <= 60 else flat[:57] + "..."
