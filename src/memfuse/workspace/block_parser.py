"""markdown-it's block parser as memfuse runs it: CommonMark, its block pass alone, with two of
its rules made to cost each level of a line the same however deep it nests. Pure.

Every container a line opens runs the block rules again on the rest of the line, so a rule
that reads all of the rest of the line, or everything a container holds, costs the square of
the nesting on each line (`- - - … a` lines 90 deep read at ~28 s/MiB, two thirds of it in the
thematic break and list rules). The tokens are markdown-it's own in every other respect
(`tests/unit/test_block_parser.py`).
"""

from __future__ import annotations

import functools
import re
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
# What is left of a line that is a thematic break: markdown-it's test, as one C scan.
_BREAK = re.compile(r"(?:\*[ \t]*+){3,}+|(?:-[ \t]*+){3,}+|(?:_[ \t]*+){3,}+")


@functools.cache
def block_parser() -> MarkdownIt:
    """The block parser, made when a journal first needs it: importing markdown-it costs a run
    ~40 ms, and a run whose journals are all plain never does."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"maxNesting": NESTING}).disable(["inline", "text_join"])
    parser.block.ruler.at("hr", _break_rule(), {"alt": _BREAK_ENDS})
    parser.block.ruler.at("list", _list_rule(), {"alt": _LIST_ENDS})
    return parser


def _break_rule() -> RuleFuncBlockType:
    """markdown-it's `hr` rule, run only where one regular expression says what is left of the
    line is a thematic break: elsewhere it would read the rest of the line in Python to say no."""
    from markdown_it.rules_block.hr import hr

    def thematic_break(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        pos = state.bMarks[start] + state.tShift[start]
        return bool(_BREAK.fullmatch(state.src, pos, state.eMarks[start])) and hr(
            state, start, end, silent
        )

    return thematic_break


def _list_rule() -> RuleFuncBlockType:
    """markdown-it's list rule without its walk marking a tight list's paragraphs `hidden` (a
    chain of k lists walked them k times; memfuse never renders): its globals one name apart."""
    from markdown_it.rules_block import list as rules

    scope = {**vars(rules), "markTightParagraphs": lambda _state, _index: None}
    rule: RuleFuncBlockType = types.FunctionType(rules.list_block.__code__, scope, "list_block")
    return rule
