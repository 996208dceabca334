"""What a person reading a journal in a Markdown preview does not see of a bullet's text:
the one rule of docs/security.md ("What a person sees"), `unseen`, made of `invisible` (by
this Python's Unicode table), `hiding` (raw HTML, as markdown-it with HTML on reads it) and
`in_attributes` (words only in an image's alt text or a title). Pure."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator
from html.entities import html5
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

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
EXACT_TEXT = 10_000  # characters of one text markdown-it reads inline (~0.2 s when hostile)


@functools.lru_cache(maxsize=1)
def _inline(text: str) -> list[Token]:
    """markdown-it's inline tokens of `text`, HTML on (the last kept: both readers want it)."""
    return [c for t in _parser().parseInline(text) for c in (t.children or [])]


def pieces(text: str, *, exact: bool = True) -> list[tuple[str, str, str]]:
    """The raw HTML (`("html", html, "")`) and character references (`("ref", shown as,
    written)`) a renderer finds in `text`, in order (markdown-it's reading when `exact`)."""
    if not _MAYBE.search(text):
        return []
    if exact and any(span in text for span in _SPANS):
        tokens = _inline(text)
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
    renderer may show (not `html.unescape`'s empty text or Windows-1252 guess)."""
    from markdown_it.common.utils import fromCodePoint, isValidEntityCode

    digits = reference[2:-1]
    code = int(digits[1:], 16) if digits[0] in "xX" else int(digits)
    return fromCodePoint(code) if isValidEntityCode(code) else "\ufffd"


def _tags(text: str) -> Iterator[re.Match[str]]:
    """What `HTML_TAG_RE.finditer(text)` finds, in linear time: a `<` whose form's end (`>`,
    `-->`, `]]>`, `?>`) occurs nowhere after it is passed over (20 000 `<?` cost 6 s)."""
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


def hiding(text: str, *, exact: bool = True, html: bool = False) -> str | None:
    """What an HTML-rendering preview would not show of this text, or which later text it
    would swallow, said briefly (with `html`, any raw HTML at all); None."""
    if (found := _left_open(text)) is not None:
        return found
    for kind, content, written in pieces(text, exact=exact):
        if kind == "ref":
            shows = any(_renders_nothing(c) for c in content)
            found = f"the reference {written} shows an invisible character" if shows else None
        else:
            found = f"HTML ({_shown(content)})" if html else _hides(content)
        if found is not None:
            return found
    return None


def unseen(text: str, *, exact: bool = True) -> str | None:
    """What a person reading this bullet in a Markdown preview would not see of it, or which
    later text it would hide from them, said briefly; None when it shows it all."""
    return invisible(text) or hiding(text, exact=exact) or in_attributes(text, exact=exact)


EXACT = 2000  # bullets of one reading that may cost markdown-it's inline reading (~0.1 s)
EXACT_CHARS = 100_000  # … and their characters: up to ~30 µs each on a hostile item (~3 s)


class Hiding:
    """`unseen` for one reading of a journal: markdown-it's inline reading within EXACT,
    EXACT_CHARS and EXACT_TEXT, the bare patterns after (which may name more, never less)."""

    def __init__(self, exact: int = EXACT, chars: int = EXACT_CHARS) -> None:
        self.left = exact
        self.chars = chars

    def __call__(self, text: str) -> str | None:
        exact = self.left > 0 and len(text) <= min(self.chars, EXACT_TEXT)
        if exact and any(span in text for span in _SPANS) and (_MAYBE.search(text) or "](" in text):
            self.left -= 1
            self.chars -= len(text)
        return unseen(text, exact=exact)


# --- code points that render as nothing ---------------------------------------------------
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]+")
_JOINERS = "\N{ZERO WIDTH JOINER}\N{ZERO WIDTH NON-JOINER}"
_PRESENTATION = "\N{VARIATION SELECTOR-15}\N{VARIATION SELECTOR-16}"
# An emoji tag sequence (a subdivision's flag, UTS #51): the waving black flag, the tag
# letters or digits of its code, the cancel tag.
_FLAG_TAGS = re.compile("[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,6}\U000e007f")


def _renders_nothing(char: str) -> bool:
    """Whether the Unicode table makes `char` show nothing of its own (tab and line feed do)."""
    category = unicodedata.category(char)
    if category in ("Cf", "Cs", "Zl", "Zp") or (category == "Cc" and char not in "\t\n"):
        return True
    if category == "Mn":
        return "VARIATION SELECTOR" in unicodedata.name(char, "")
    return category == "Cn" and ord(char) >> 16 == 14


@functools.cache
def _nothing() -> re.Pattern[str]:
    """Runs of the code points that render as nothing (built once, ~0.15 s, when needed)."""
    codes = [code for code in range(0x110000) if _renders_nothing(chr(code))]
    steps = itertools.groupby(enumerate(codes), lambda pair: pair[1] - pair[0])
    runs = [[code for _, code in run] for _, run in steps]
    return re.compile("[" + "".join(f"\\U{r[0]:08x}-\\U{r[-1]:08x}" for r in runs) + "]+")


def _drawn(char: str) -> bool:
    """A letter, mark or symbol outside ASCII: what a joiner or a selector may go with (not a
    selector itself: a run of them after one letter would carry a bit each, unseen)."""
    return char > "\x7f" and unicodedata.category(char)[0] in "LMS" and not _renders_nothing(char)


def _needed(text: str, at: int) -> bool:
    """Whether the code point at `at` is part of what shows: a joiner between letters or emoji
    outside ASCII (Persian's ZWNJ, 👩‍💻), an emoji selector after one or on a keycap (1️⃣)."""
    char, before, after = text[at], text[at - 1 : at], text[at + 1 : at + 2]
    if char in _JOINERS:
        return (_drawn(before) or (before != "" and before in _PRESENTATION)) and _drawn(after)
    keycap = before != "" and before in "#*0123456789" and after == "\N{COMBINING ENCLOSING KEYCAP}"
    return char in _PRESENTATION and (_drawn(before) or keycap)


_KINDS = {
    "Cc": "a control character",
    "Cf": "an invisible format character",
    "Mn": "a variation selector",
}


def _unneeded(text: str) -> Iterator[int]:
    """Where `text` holds a code point that renders as nothing where it stands."""
    runs = _ASCII_CONTROL if text.isascii() else _nothing()
    for run in runs.finditer(text):
        flag = text[run.start() - 1 : run.start()] == "\N{WAVING BLACK FLAG}"
        if not (flag and _FLAG_TAGS.fullmatch(run[0])):
            yield from (at for at in range(run.start(), run.end()) if not _needed(text, at))


def invisible(text: str) -> str | None:
    """The first code point of `text` that renders as nothing where it stands, said with its
    number (`an invisible format character (U+202E)`); None. Tab and line feed are text."""
    for at in _unneeded(text):
        kind = _KINDS.get(unicodedata.category(text[at]), "an invisible code point")
        return f"{kind} (U+{ord(text[at]):04X})"
    return None


def escaped(text: str) -> str:
    """`text` with each code point that renders as nothing shown where it stands as its
    number (`<U+200B>`)."""
    out, last = [], 0
    for at in _unneeded(text):
        out += [text[last:at], f"<U+{ord(text[at]):04X}>"]
        last = at + 1
    return "".join([*out, text[last:]])


# --- words only in an attribute -----------------------------------------------------------
# Past the exact budget: an image with words in its alt, a title after a destination, `data:`.
# Each stretch is read from one opener only: an opener's reading stops at the next one, which
# reads on alike (read from every opener to the end, `](a` repeated cost ~40 min a MiB).
_ATTRIBUTE = re.compile(
    r"!\[(?:[^\]\w!]|!(?!\[))*\w[^\]]{0,56}"
    r"|\]\((?:[^)\s\]]|\](?!\())*\s+[\"'(]|\]\(\s*<?data:|(?<!!)\[\s*\]\(",
    re.I,
)


def in_attributes(text: str, *, exact: bool = True) -> str | None:
    """Words a preview shows only in an attribute, or not at all: an image's alt text, a
    link's or image's title (a tooltip), a `data:` URI (its payload), a link with no text (its
    address, with nothing to hover or click); None."""
    if "](" not in text:
        return None
    if not exact or len(text) > EXACT_TEXT:
        found = _ATTRIBUTE.search(text)
        return None if found is None else f"{_shown(found[0])}: words only in an attribute"
    tokens = _inline(text)
    for n, token in enumerate(tokens):
        if token.type not in ("image", "link_open"):
            continue
        title, target = token.attrs.get("title"), token.attrs.get("src", token.attrs.get("href"))
        if token.type == "image" and re.search(r"\w", token.content):
            return f"words only in an image's alt text ({_shown(token.content)})"
        if title:
            return f"words only in a link's title ({_shown(str(title))})"
        if str(target).lower().startswith("data:"):
            return f"a data: URI ({_shown(str(target))})"
        shows = itertools.takewhile(lambda t: t.type != "link_close", tokens[n + 1 :])
        if token.type == "link_open" and not any(
            t.content.strip() for t in shows if t.type != "html_inline"
        ):
            return f"a link with no text, only its address ({_shown(str(target))})"
    return None


# What may open a tag, a comment, a declaration or an instruction.
_MARKUP = re.compile(r"<[A-Za-z/!?]")


def _left_open(text: str) -> str | None:
    """A line of the bullet that opens an HTML block (CommonMark's kinds 1-6) holding markup
    left without its end: the preview reads what follows it as a tag's attributes or a comment."""
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


def _shown(raw: str) -> str:
    flat = " ".join(raw.split())
    return flat if len(flat) <= 60 else flat[:57] + "..."
