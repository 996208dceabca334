"""`note`: the one tool of `memfuse serve` that writes. It appends one bullet to today's
journal (memfuse.workspace.note) and answers where it went and the URI sync will give it.

The agent's turn waits for nothing but the append: a note takes no workspace lock (a long
sync holds it for minutes, and only reads journals), and reads the journal's tail only, from
the line of the last note in it on (Service.marks, kept in the state folder too). The open
index notices the journal changed at the next recall (its Markdown stamp): the note is found
at once.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from memfuse.run import render
from memfuse.run.context import Call
from memfuse.run.output import CommandResult
from memfuse.run.results import NoteData
from memfuse.serve.arguments import BadArguments, text
from memfuse.serve.service import Service, Tool, ToolRefused
from memfuse.state.folder import StateFolder
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Workspace
from memfuse.workspace.note import NOTE_MAX, NoteRefused, append_note, checked_text
from memfuse.workspace.note_file import Marks


def _checked(given: Any) -> str:
    """The note's text as the journal will hold it (NoteRefused's reasons said to the caller)."""
    if not isinstance(given, str) or not given.strip():
        raise BadArguments("text must be a non-empty string")
    try:
        return checked_text(given)
    except NoteRefused as exc:
        raise BadArguments(str(exc)) from None


def answer(service: Service, call: Call, text: str) -> CommandResult:
    try:
        data = written(call.workspace, call.settings.now, call.classifier, service.marks, text)
    except NoteRefused as exc:
        raise ToolRefused(str(exc)) from None
    return CommandResult("note", data)


def written(
    workspace: Workspace, now: datetime, classifier: Classifier, marks: Marks, text: str
) -> NoteData:
    """The one writer of a note, serve's tool's and `memfuse note`'s: `text` appended to the
    journal of `now` on the schedule's clock; where it went, and the URI sync will give it.
    NoteRefused (nothing written) when the text or the journal says no."""
    noted = append_note(workspace, text, in_schedule_zone(workspace.state, now), marks=marks)
    memory_type = classifier.classify(noted.bullet.text).type
    key = noted.position.section
    return {
        "file": workspace.location(noted.path),
        "line": noted.bullet.line,
        "section": f"{key[:2]}:{key[2:]}",
        "made": noted.made,
        "position": noted.position.key,
        "uri": noted.position.uri(memory_type),
        "type": memory_type,
        "text": noted.bullet.text,
    }


def in_schedule_zone(state: StateFolder, now: datetime) -> datetime:
    """`now` on the clock of the zone the installed schedule runs in (its record's), as sync
    and surface run by it see the day and hour; `now` as it is when none is recorded or the
    zone is unknown here. The Gateway that starts `serve` may run in another zone (UTC on a
    server), which put a note's `## HH:MM` hours away from the schedule's (issue 47)."""
    from memfuse.schedule.install import recorded

    schedule = recorded(state)
    zone = schedule.zone if schedule is not None else None
    return now.astimezone(zone) if zone is not None else now


TOOL = Tool(
    "note",
    "Write one memory: appends `text` as a bullet to today's journal (memory/YYYY-MM-DD.md)"
    " under the current `## HH:MM` section, as the agent's own journal entry; the next sync"
    " stores it. One line of plain text, a fact, decision or event in your own words; no"
    " heading, list marker or code fence at its start, and no HTML tag anywhere (code goes in"
    " backticks). Answers the journal line and the"
    " URI the memory will have.",
    (
        replace(
            text("text", NOTE_MAX, "The bullet's text: one line, what to remember."), read=_checked
        ),
    ),
    answer,
    lambda given: given["text"],
    read_only=False,
    lines_of=render.note,
)
