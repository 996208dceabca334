"""memfuse's bullets are the list items a second CommonMark implementation sees (issue 39):
commonmark.js, the reference implementation, reads generated journals — the constructs of
issue 39's families and those agents write (tabs, CRLF, setext headings, `1.`/`*`/`+` items,
open fences, emoji, Chinese) — and every outermost item it shows, with its section and kind,
is one of memfuse's bullets, every word it shows of the item is in the bullet, and no bullet
holds text that commonmark.js keeps in a comment.
The recorded divergences (tests/reader/journals.py, DIVERGENCES) are the only ones allowed."""

from __future__ import annotations

import random
import shutil

import pytest

from tests.conftest import examples
from tests.reader.journals import COMMONMARK, commonmark_js, differences, divergence, journal

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not COMMONMARK.is_dir(),
    reason="commonmark.js is installed under tools/ by scripts/setup.sh",
)

FAMILIES = [
    "## 09:00\n- <!-- src:chat --> The deploy key rotates on Monday\n- next\n",
    "- one\n\nProse,\n"
    + " " * 130
    + "\n"
    + " " * 125
    + "indented\n\n- two\nlazy\n\nText\n- three\n",
    "## Light Sleep\n<!-- openclaw:dreaming:light:start -->\n- dreamt\n"
    "<!-- openclaw:dreaming:light:end -->\n- after the block\n## Deep sleep\n- mine\n",
    "> - Migrate billing before Friday\n> > 1. nested quote\n\n- after\n",
    "- Cutover checklist\n  ## Before the cutover\n  - freeze writes\n- next\n",
    "- " + "<!---->" * 2000 + " kept\n- next\n",
    "Setext 10:00\n===\n* star\n+ plus\n1) one\n\t- tabbed\r\n- 中文 ✨\n```\n- open fence\n",
]


def test_the_issues_constructs_read_as_commonmark_js_reads_them() -> None:
    for text, theirs in zip(FAMILIES, commonmark_js(FAMILIES), strict=True):
        assert differences(text, theirs) == [], text


def test_generated_journals_read_as_commonmark_js_reads_them() -> None:
    rng = random.Random(39)
    texts = [journal(rng) for _ in range(examples(3000))]
    allowed: dict[str, int] = {}
    for text, theirs in zip(texts, commonmark_js(texts), strict=True):
        found = differences(text, theirs)
        if found:
            name = divergence(text)
            assert name is not None, f"{found} in {text!r}"
            allowed[name] = allowed.get(name, 0) + 1
    assert sum(allowed.values()) <= 5, allowed  # rare shapes, not a habit of the generator


def test_the_comparison_has_teeth() -> None:
    """A reading that dropped quoted lists, or kept comment text, would be caught."""
    text = "> - quoted\n- a <!-- hidden --> b\n"
    (theirs,) = commonmark_js([text])
    assert differences(text, theirs) == []
    assert differences(text, theirs[1:]) != []
    assert differences(text, [dict(theirs[0]), dict(theirs[1], text="a hidden b")]) != []
    assert differences(text, [dict(theirs[0], text="quoted lazy"), dict(theirs[1])]) != []
