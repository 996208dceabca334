from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memfuse.workspace.bullets import Bullet, section_key
from memfuse.workspace.journal import decode, parse, parse_bytes
from tests.conftest import ANY_CHARACTER, examples


def keys(text: str) -> list[tuple[str, int, str]]:
    return [(b.key, b.n, b.text) for b in parse(text)]


def test_section_key_takes_the_first_time_zero_padded() -> None:
    assert section_key("14:00 memory-sync") == "1400"
    assert section_key("Morning (9:00-12:00)") == "0900"
    assert section_key("Notes") == "0000"
    assert section_key("at 25:00 or 123:45") == "0000"


def test_bullets_are_numbered_per_key_across_the_whole_file() -> None:
    text = "- early\n## 14:00 a\n- one\n- two\n## 22:00\n- three\n## 14:00 again\n- four\n"
    assert keys(text) == [
        ("0000", 1, "early"), ("1400", 1, "one"), ("1400", 2, "two"),
        ("2200", 1, "three"), ("1400", 3, "four"),
    ]  # fmt: skip


def test_heading_without_time_uses_key_0000() -> None:
    assert keys("## 10:00\n- a\n## Notes\n- b\n") == [("1000", 1, "a"), ("0000", 1, "b")]


def test_nested_items_and_continuations_belong_to_their_bullet() -> None:
    text = "- parent\n  - child\n    more text\n- next\ncontinued lazily\n\nparagraph\n"
    assert [b.text for b in parse(text)] == ["parent\n- child\nmore text", "next\ncontinued lazily"]


def test_fences_comments_and_empty_bullets_are_skipped_and_not_counted() -> None:
    text = (
        "## 09:00\n- \n```\n- in code\n```\n<!-- - hidden\n- still hidden -->\n"
        "- real <!-- inline note --> text\n~~~python\n- also code\n~~~\n- last\n"
    )
    assert keys(text) == [("0900", 1, "real  text"), ("0900", 2, "last")]


def test_markers_and_indent_limits() -> None:
    text = "* star\n+ plus\n## 10:00\n   - three spaces\n---\n    - four spaces\n-not a bullet\n"
    assert [b.text for b in parse(text)] == ["star", "plus", "three spaces"]


def test_an_item_indented_under_its_parent_content_is_nested_not_top_level() -> None:
    assert [b.text for b in parse("+ plus\n   - nested\n")] == ["plus\n- nested"]


def test_content_is_kept_as_written_apart_from_surrounding_space() -> None:
    text = '-   @/etc/passwd  \n- {"a":1}\n- none\n- `code` **bold** 中文 ✨\n'
    assert [b.text for b in parse(text)] == [
        "@/etc/passwd",
        '{"a":1}',
        "none",
        "`code` **bold** 中文 ✨",
    ]


def test_bom_crlf_and_invalid_utf8_never_crash() -> None:
    parsed = parse_bytes(b"\xef\xbb\xbf## 14:00\r\n- caf\xe9 time\r\n- ok\r\n")
    assert parsed.replaced_bytes
    assert [(b.key, b.text) for b in parsed.bullets] == [("1400", "caf\ufffd time"), ("1400", "ok")]
    assert decode(b"a\rb")[0] == "a\nb"


def test_unterminated_fence_swallows_the_rest_like_markdown_renders_it() -> None:
    assert [b.text for b in parse("- before\n```\n- after\n")] == ["before"]


def test_line_numbers_point_at_the_bullet() -> None:
    assert [b.line for b in parse("# t\n\n- a\n- b\n")] == [3, 4]


journal_lines = st.one_of(
    st.sampled_from(
        ["## 14:00", "## 22:00 sync", "### Notes", "```", "<!--", "-->", "", "  - nested"]
    ),
    st.text(ANY_CHARACTER, max_size=40).map(lambda t: "- " + t),
    st.text(ANY_CHARACTER, max_size=40),
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(journal_lines, max_size=40))
def test_parsing_never_raises_and_positions_are_unique(lines: list[str]) -> None:
    bullets = parse("\n".join(lines))
    positions = [b.position for b in bullets]
    assert len(positions) == len(set(positions))
    assert all(b.text and b.text == b.text.strip() for b in bullets)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(journal_lines, max_size=30),
    st.lists(st.text(ANY_CHARACTER, min_size=1, max_size=30), max_size=5),
)
def test_appending_a_section_never_changes_earlier_uris(lines: list[str], extra: list[str]) -> None:
    text = "\n".join(lines)
    before = parse(text)
    # Close any open fence or comment first, as the agent's next append would start fresh.
    appended = text + "\n```\n-->\n\n## 22:00 appended\n" + "".join(f"- {e}\n" for e in extra)
    after = parse(appended)
    # Markdown's own rule: a fence or comment the text left open swallows the rest, and the
    # appended closer may change what it held; every bullet above its opener keeps its URI.
    opener = _opener_left_open(text)
    kept = [b for b in before if opener is None or b.line < text.count("\n", 0, opener) + 1]
    assert [(b.position, b.text) for b in after[: len(kept)]] == [
        (b.position, b.text) for b in kept
    ]


def _opener_left_open(text: str) -> int | None:
    """Where the fence or comment the text ends inside of opens, or None."""
    openers = []
    if text.count("```") % 2 == 1:
        openers.append(text.rfind("```"))
    if text.rfind("<!--") > text.rfind("-->"):
        openers.append(text.rfind("<!--"))
    return min(openers, default=None)


@given(st.binary(max_size=300))
def test_any_bytes_parse(raw: bytes) -> None:
    assert isinstance(parse_bytes(raw).bullets, tuple)
    assert all(isinstance(b, Bullet) for b in parse_bytes(raw).bullets)


def test_a_code_span_holding_a_comment_opener_hides_no_later_bullet() -> None:
    text = "- use `<!--` to open a comment\n- second\n- third <!-- a real one --> kept\n"
    assert [b.text for b in parse(text)] == [
        "use `<!--` to open a comment", "second", "third  kept",
    ]  # fmt: skip


def test_what_a_viewer_shows_as_a_list_item_is_a_bullet_and_nothing_else() -> None:
    text = (
        "## 09:00\n- first\n  - nested, part of first\n1. numbered\n\n"
        "<details>\n- inside an HTML block: shown as raw text\n</details>\n\n"
        "<!--\n- commented out\n-->\n> - quoted: a viewer shows it as an item\n\n    - indented code\n"
        "```\n- fenced\n```\n- last\n"
    )
    found = [(b.position, b.text) for b in parse(text)]
    assert found == [
        ("0900-1", "first\n- nested, part of first"),
        ("0900-1001", "numbered"),
        ("0900-2", "quoted: a viewer shows it as an item"),
        ("0900-3", "last"),
    ]


def test_a_list_nested_past_the_parsers_depth_hides_no_later_bullet() -> None:
    deep = "- top\n" + "".join("  " * d + "- level\n" for d in range(1, 300))
    quotes = "- " + "> " * 3000 + "deep quote\n"
    text = f"## 09:00\n{deep}{quotes}## 10:00\n- after\n```\n- fenced\n```\n"
    found = [(b.position, b.text.split("\n")[0]) for b in parse(text)]
    assert found[0] == ("0900-1", "top")
    assert found[-1] == ("1000-1", "after")
    assert not any("fenced" in text for _, text in found)


def test_over_a_thousand_items_and_numbered_ones_in_one_section_never_share_a_place() -> None:
    text = "## 10:00\n1. numbered first\n" + "".join(f"- b{i}\n" for i in range(1002))
    bullets = parse(text)
    assert len({(b.key, b.n) for b in bullets}) == len(bullets) == 1003
    assert bullets[0].n == 1001 and bullets[-1].text == "b1001"
    assert parse("## 10:00\n- a\n1. b\n")[1].n == 1001  # an ordinary journal's places stay
