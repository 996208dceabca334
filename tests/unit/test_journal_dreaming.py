"""OpenClaw's dreaming blocks in a daily journal are not the agent's memories."""

from __future__ import annotations

from memfuse.workspace.journal import parse

# A journal as OpenClaw 2026.9.6's dreaming leaves it (storage "inline" or "both"): its managed
# blocks appended after the day's notes (memory-host-markdown's replaceManagedMarkdownBlock).
DREAMED = """## 14:00 memory-sync
- Met Bob about the staging deploy

## Light Sleep
<!-- openclaw:dreaming:light:start -->
- Candidate: Bob deploys staging on Fridays
- Candidate: Alice prefers English notes
<!-- openclaw:dreaming:light:end -->

## REM Sleep
<!-- openclaw:dreaming:rem:start -->
- Theme: release process keeps coming up
### Reflections
- a nested heading stays inside the block
<!-- openclaw:dreaming:rem:end -->

## 22:00
- Decided to ship on Monday
"""


def test_dreaming_blocks_hold_no_bullets_and_shift_no_positions() -> None:
    bullets = parse(DREAMED)
    assert [(b.position, b.text) for b in bullets] == [
        ("1400-1", "Met Bob about the staging deploy"),
        ("2200-1", "Decided to ship on Monday"),
    ]


def test_a_heading_of_dreaming_words_takes_nothing_only_the_markers_do() -> None:
    """Issue 39: a user's own `## Deep sleep` notes are theirs; OpenClaw's blocks are known by
    their markers alone (decision 280)."""
    assert [b.text for b in parse("### light   SLEEP\n- slept badly\n## Notes\n- kept\n")] == [
        "slept badly", "kept",
    ]  # fmt: skip
