"""memfuse.text.hidden's bare patterns find what markdown-it's inline reading (HTML on) finds,
in every text they read (those without a code span, an escape or a link destination)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memfuse.text import hidden
from tests.conftest import examples

PIECES = ["<", ">", "/", "!", "?", "-", "&", "#", ";", "=", '"', "'", " ", "\n", "a", "x", "1",
          "span", "hidden", "style", "amp", "x202E", "shy", "[", "]", "CDATA", "DOCTYPE", "@", ":",
          ".", "http", "b@c.d"]  # fmt: skip


def by_markdown_it(text: str) -> list[tuple[str, str, str]]:
    tokens = [c for t in hidden._parser().parseInline(text) for c in (t.children or [])]
    return [
        ("html", t.content, "") if t.type == "html_inline" else ("ref", t.content, t.markup)
        for t in tokens
        if t.type == "html_inline" or (t.type == "text_special" and t.info == "entity")
    ]


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_the_bare_patterns_find_what_markdown_it_finds(text: str) -> None:
    if any(span in text for span in hidden._SPANS):
        return
    mine = hidden.pieces(text)
    theirs = by_markdown_it(text)
    # markdown-it keeps a reference it shows as itself (an unknown name) as text: so do we
    assert mine == [p for p in theirs if p[0] == "html" or p[1] != p[2]]


@pytest.mark.parametrize("text", ["&#1;", "&#127;", "&#128;", "&#65535;", "&#xD800;", "&#13;"])
def test_a_numeric_reference_shows_what_markdown_it_shows(text: str) -> None:
    """Python's html.unescape gives "" for &#1; and "€" for &#128;; a renderer shows U+FFFD."""
    assert hidden.pieces(text) == [p for p in by_markdown_it(text) if p[1] != p[2]]


def test_the_named_forms() -> None:
    assert hidden.pieces("Ship it <span hidden>x</span> &#x202E; `<b>`") == [
        ("html", "<span hidden>", ""), ("html", "</span>", ""), ("ref", "\u202e", "&#x202E;"),
    ]  # fmt: skip
    assert hidden.pieces("a < b, x<3, <https://example.com>, Tom & Jerry") == []


def test_past_its_budget_a_reading_names_by_the_bare_patterns() -> None:
    """A journal of many items in backticks costs markdown-it's inline reading for the first
    EXACT only: past them a tag in backticks is named too (a warning more, never a bullet
    less), and the cost stays that of a regular expression."""
    check = hidden.Hiding(exact=2)
    quoted = "use `<style>` for it"
    assert [check(quoted) for _ in range(4)] == [None, None, "<style> hides the text after it",
                                                 "<style> hides the text after it"]  # fmt: skip
    assert check("plain text") is None and check.left == 0


ENDS = ["<", ">", "!", "?", "-", "--", "-->", "<!--", "<![CDATA[", "]]>", "<?", "?>", "<!X",
        "a", " ", '"', "'", "=", "/", "&amp;", "&#x202E;"]  # fmt: skip


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(ENDS), max_size=30).map("".join))
def test_the_linear_scan_finds_what_the_pattern_finds(text: str) -> None:
    from markdown_it.common.html_re import HTML_TAG_RE

    assert [m.span() for m in hidden._tags(text)] == [m.span() for m in HTML_TAG_RE.finditer(text)]


def test_markup_without_its_end_is_not_read_to_the_end_at_each_opener(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review of issue 46: a bullet of 20 000 `<?` (or `<![CDATA[`, `<!X`) cost `hiding` 6 s,
    and four times that length 16 times as much — the HTML pattern, run from every `<`, read to
    the text's end for an end that is not there. Such a `<` is now passed over unread; the
    pattern runs only where its end exists (and then consumes to it)."""
    from markdown_it.common import html_re

    asked: list[int] = []
    pattern = html_re.HTML_TAG_RE

    class Counting:
        def match(self, text: str, at: int = 0) -> re.Match[str] | None:
            asked.append(at)
            return pattern.match(text, at)

        def finditer(self, text: str) -> object:
            raise AssertionError("the whole text scanned from every `<`")

    monkeypatch.setattr(html_re, "HTML_TAG_RE", Counting())
    for opener in ("<?", "<![CDATA[", "<!X", "<a"):
        asked.clear()
        assert hidden.hiding("Ship it " + opener * 20_000, exact=False) is None
        assert asked == [], opener
    assert hidden.pieces("a <?x?> b <![CDATA[y]]> " + "<?" * 100, exact=False) == [
        ("html", "<?x?>", ""), ("html", "<![CDATA[y]]>", ""),
    ]  # fmt: skip


def test_past_its_characters_a_reading_names_by_the_bare_patterns() -> None:
    """Review of issue 46: the inline reading's budget counted bullets only, and markdown-it
    reads a hostile item at ~30 µs a character (`![a` repeated): 200 items of 8 KB cost a
    reading 23 CPU-s, a 16 MiB journal of them minutes. The budget holds characters too."""
    check = hidden.Hiding(exact=100, chars=50)
    quoted = "use `<style>` for it"  # 20 characters
    assert [check(quoted) for _ in range(4)] == [None, None, "<style> hides the text after it",
                                                 "<style> hides the text after it"]  # fmt: skip
    assert check.left == 98 and check.chars == 10
    assert hidden.Hiding().chars == hidden.EXACT_CHARS


def test_the_bare_attribute_pattern_reads_a_hostile_bullet_once() -> None:
    """Review of issue 54: past the exact budget, the bare pattern for words only in an
    attribute read from every `](` (and every `![` followed by a word) to the bullet's end:
    one bullet of `](a` repeated cost sync's reading 2 s at 32 KB, 140 s at 256 KB, ~40 min
    at 1 MiB (days for the 16 MiB read limit). An opener's reading now stops at the next
    opener, which reads on alike: each stretch read once, the same bullets named."""
    from memfuse.workspace.journal import read

    for hostile in ("](a" * 350_000, "](\\" * 350_000, "![" + "a" * 1_000_000 + "]x]("):
        bullets, _tally = read(f"- {hostile}\n")  # on main: minutes to hours each
        assert [b.text for b in bullets] == [hostile]
    named = {
        'a](b](c](d "title")': '](d "',  # the stretch of the last opener before the title
        "](a" * 2000 + " 'title')": "](a '",
        "x ![a ![](u)](v)": "![a ![",
        "](  data:x": "]( data:",
    }
    for text, shown in named.items():
        assert hidden.in_attributes(text, exact=False) == f"{shown}: words only in an attribute"
    assert hidden.in_attributes("[x](u) ![](v) " + "](a" * 2000, exact=False) is None
