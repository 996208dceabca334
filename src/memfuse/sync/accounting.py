"""A sync's accounting of what it read (issue 39): for every journal form, the list items read
and what each exclusion rule took; for the run, the bullets sent, unchanged and shared; and the
text a viewer shows that is neither a bullet nor taken by a named rule, each such form named.
Pure: from what was read and planned."""

from __future__ import annotations

from memfuse.run.results import AccountingData, DeepRow, HiddenRow, UnaccountedRow
from memfuse.sync.plan import Plan
from memfuse.sync.reading import Reading
from memfuse.workspace.bullets import Tally

SHOWN = 20  # forms with unaccounted text listed; the rest are counted
SHARED = ("skipped", "merged")  # outcomes of a bullet the store keeps in another's memory


def account(reading: Reading, the_plan: Plan) -> AccountingData:
    """What this run read, form by form summed, and what became of its bullets."""
    total = sum(reading.tallies.values(), Tally())
    unaccounted = [
        UnaccountedRow(file=location, lines=tally.other_lines, first_line=tally.first_other)
        for location, tally in sorted(reading.tallies.items())
        if tally.other_lines
    ]
    deep = [
        DeepRow(file=location, lines=tally.deep_lines)
        for location, tally in sorted(reading.tallies.items())
        if tally.deep_lines
    ]
    hidden = [
        HiddenRow(file=location, bullets=tally.hidden_items, first_line=tally.first_hidden)
        for location, tally in sorted(reading.tallies.items())
        if tally.hidden_items
    ]
    shared = sum(
        1 for i in reading.items if i.unchanged and i.previous and i.previous.outcome in SHARED
    )
    carried = {m.entry.position for r in the_plan.refold for m in r.carries}
    return {
        "forms": len(reading.tallies),
        "items": total.items,
        "empty_items": total.empty,
        "bullets": len(reading.items),
        "to_send": len(the_plan.send) + len(the_plan.resend) + len(carried),
        "unchanged": the_plan.unchanged,
        "shared": shared,
        "code_lines": total.code_lines,
        "comments": total.comments,
        "comment_chars": total.comment_chars,
        "dreaming_blocks": total.dreaming_blocks,
        "dreaming_lines": total.dreaming_lines,
        "deep_lines": total.deep_lines,
        "deep": deep[:SHOWN],
        "hidden_items": total.hidden_items,
        "hidden": hidden[:SHOWN],
        "unaccounted_lines": total.other_lines,
        "unaccounted": unaccounted[:SHOWN],
        "unaccounted_forms": len(unaccounted),
    }


def warnings(data: AccountingData) -> list[str]:
    """One warning for each form holding text a viewer shows that memfuse does not sync, for
    each form read in part past the parser's reach, and for each form holding bullets or
    blocks a preview does not show whole (issues 46, 54)."""
    said = [
        f"{row['file']}: {row['lines']} line(s) of text from line {row['first_line']} are no"
        " list item, code, comment or dreaming block: a viewer shows them, sync does not send"
        " them (start a line with `- ` to make it a bullet)"
        for row in data["unaccounted"]
    ]
    more = data["unaccounted_forms"] - len(data["unaccounted"])
    if more > 0:
        said.append(f"and {more} more journal form(s) hold text that is not a bullet")
    said += [
        f"{row['file']}: {row['lines']} line(s) nest too deep to read as a viewer shows them"
        " in bounded time: each such block was read as one bullet of its lines as written, or"
        " as text (docs/reliability.md, nesting)"
        for row in data["deep"]
    ]
    said += [
        f"{row['file']}: {row['bullets']} bullet(s), heading(s) or block(s) from line"
        f" {row['first_line']} hold text a Markdown preview does not show (an invisible"
        " character, words only in an image's alt text or a title, a link definition, HTML"
        " that hides them or the bullets after it): synced as written, so recall carries text"
        " the person reading the journal does not see (RECENT.md shows it escaped)"
        for row in data["hidden"]
    ]
    return said
