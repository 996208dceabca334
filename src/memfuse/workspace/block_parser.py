"""markdown-it's block parser as memfuse runs it: CommonMark, its block pass alone, with two of
its rules made to cost each level of a line the same however deep it nests. Pure.

Every container a line opens runs the block rules again on the rest of the line, so a rule
that reads all of the rest of the line, or everything a container holds, costs the square of
the nesting on each line: a journal of `- - - … a` lines 90 markers deep read at ~28 s/MiB,
two thirds of it in these two rules (cProfile):

- the thematic break (`* * *`) read the rest of the line at every level, looking for a run
  of one of `*`, `-`, `_` and blanks; here each line's tail of such characters is found once
  per parse, and a level only compares its position with it;
- the list rule, closing a list, walked every token below it to mark its paragraphs
  `hidden` (a tight list's, for rendering): a chain of k lists walked them k times. memfuse
  never renders, and reads no `hidden`; the rule runs here without that walk.

The tokens are markdown-it's own in every other respect (`tests/unit/test_block_parser.py`).
"""

from __future__ import annotations

import functools
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.parser_block import RuleFuncBlockType
    from markdown_it.rules_block import StateBlock

NESTING = 400  # token levels CommonMark may open: well inside Python's stack

# The block rules each may end, as markdown-it registers them (`alt`).
_BREAK_ENDS = ["paragraph", "reference", "blockquote", "list"]
_LIST_ENDS = ["paragraph", "reference", "blockquote"]
_TAILS = "memfuse.break_tails"  # the parse's env key for the lines' tails, by (line, marker)


@functools.cache
def block_parser() -> MarkdownIt:
    """The block parser, made when a journal first needs it: importing markdown-it costs a run
    ~40 ms, and a run whose journals are all plain never does."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"maxNesting": NESTING}).disable(["inline", "text_join"])
    parser.block.ruler.at("hr", thematic_break, {"alt": _BREAK_ENDS})
    parser.block.ruler.at("list", _list_rule(), {"alt": _LIST_ENDS})
    return parser


def thematic_break(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """markdown-it's `hr` rule: three or more of one of `*`, `-`, `_`, and blanks, alone on
    what is left of the line (`start`); the same tokens, the rest of the line read once."""
    pos = state.bMarks[start] + state.tShift[start]
    if state.is_code_block(start) or pos >= state.eMarks[start]:
        return False
    marker = state.src[pos]
    if marker not in "*-_":
        return False
    tail, third_last = _tail(state, start, marker)
    if not tail <= pos <= third_last:  # another character follows, or fewer than 3 markers
        return False
    if silent:
        return True
    state.line = start + 1
    token = state.push("hr", "hr", 0)
    token.map = [start, state.line]
    # markdown-it's markup: one marker more than the line holds
    token.markup = marker * (state.src.count(marker, pos, state.eMarks[start]) + 1)
    return True


def _tail(state: StateBlock, line: int, marker: str) -> tuple[int, int]:
    """Where the line's closing run of `marker` and blanks begins, and where the third `marker`
    from its end stands (-1 when it holds fewer): found once per parse for each line."""
    tails: dict[tuple[int, str], tuple[int, int]] = state.env.setdefault(_TAILS, {})
    found = tails.get((line, marker))
    if found is None:
        first = state.eMarks[line - 1] + 1 if line else 0  # where the line begins in the source
        end = state.eMarks[line]
        tail = first + len(state.src[first:end].rstrip(marker + " \t"))
        third_last = end
        for _ in range(3):
            third_last = state.src.rfind(marker, first, third_last) if third_last >= 0 else -1
        found = tails[line, marker] = (tail, third_last)
    return found


def _list_rule() -> RuleFuncBlockType:
    """markdown-it's list rule, run with its names but for the tight-paragraph walk, which is
    left out (see above): the same function, its globals one name apart."""
    from markdown_it.rules_block import list as rules

    scope = {**vars(rules), "markTightParagraphs": _no_walk}
    rule: RuleFuncBlockType = types.FunctionType(rules.list_block.__code__, scope, "list_block")
    return rule


def _no_walk(state: StateBlock, index: int) -> None:
    """Instead of marking a tight list's paragraphs `hidden`: nothing (memfuse never renders)."""
