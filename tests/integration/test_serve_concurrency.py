"""serve answers a question while a note, or another question, is still running (issue 57):
calls run side by side where they are safe, writes one at a time. Shown without timing: a
handler that blocks on an event only the next call sets. Called one at a time, the first
would wait for its guard (`GUARD`) and say so; side by side, it is released."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

import pytest

from tests.integration.test_serve import HELLO, rpc

pytestmark = pytest.mark.integration

HARNESS = """
import logging, sys, threading
from memfuse.run.mcp_server import ToolAnswer, ToolSpec, serve_stdio

GUARD = 60.0  # a hang guard, not a measure: side by side the event is set at once
released = {"note": threading.Event(), "status": threading.Event()}
writes = []

def handle(tool, arguments):
    if tool == "note":  # a note that waits for a question to be answered
        writes.append(arguments["text"])
        if arguments["text"] == "first":
            return ToolAnswer("released" if released["note"].wait(GUARD) else "held")
        return ToolAnswer(f"after {writes[0]}")
    if tool == "status":  # a question that waits for another question
        return ToolAnswer("released" if released["status"].wait(GUARD) else "held")
    released[arguments["frees"]].set()
    return ToolAnswer("answered")

tools = [ToolSpec("note", "", {"type": "object"}, read_only=False),
         ToolSpec("status", "", {"type": "object"}), ToolSpec("recall", "", {"type": "object"})]
embedded = []
serve_stdio(tools, handle, name="t", version="0", instructions="", log=logging.getLogger("t"),
            mask=str, after_write=lambda: embedded.append(len(writes)))
print(f"after each write: {embedded}", file=sys.stderr)
"""


def call(msg_id: int, tool: str, arguments: dict[str, Any]) -> bytes:
    return rpc(msg_id, "tools/call", {"name": tool, "arguments": arguments})


def served(
    script: str, lines: list[bytes]
) -> tuple[subprocess.CompletedProcess[bytes], dict[Any, Any]]:
    """The harness `script` run on these requests: the process, and its answers by id."""
    done = subprocess.run(
        [sys.executable, "-c", script], input=b"".join(line + b"\n" for line in lines),
        capture_output=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    return done, {a.get("id"): a for a in map(json.loads, done.stdout.splitlines())}


def test_a_question_is_answered_while_a_note_and_another_question_run() -> None:
    lines = [
        *HELLO,
        call(1, "note", {"text": "first"}),
        call(2, "status", {}),
        call(3, "recall", {"frees": "note"}),
        call(4, "recall", {"frees": "status"}),
        call(5, "note", {"text": "second"}),
    ]
    done, answers = served(HARNESS, lines)
    text = {i: answers[i]["result"]["content"][0]["text"] for i in range(1, 6)}
    assert text == {1: "released", 2: "released", 3: "answered", 4: "answered",
                    5: "after first"}  # fmt: skip
    # the step after a write ran once after each note (on the writes' own thread)
    assert re.search(r"after each write: \[[12], 2\]", done.stderr.decode())


WARMING = """
import logging, sys, threading
import memfuse.run.mcp_server as mcp_server
from memfuse.run.mcp_server import ToolAnswer, ToolSpec, serve_stdio

mcp_server.WARM_WAIT = 0.1  # the handshake's wait for the warm-up, cut: the warm-up goes on
GUARD = 60.0  # a hang guard, not a measure: a note that does not wait sets the event at once
noted = threading.Event()

def warm():  # a warm-up that lasts until a note has been answered
    print("warm-up " + ("outlived a note" if noted.wait(GUARD) else "held it"), file=sys.stderr)

def handle(tool, arguments):
    noted.set()
    return ToolAnswer("noted")

serve_stdio([ToolSpec("note", "", {"type": "object"}, read_only=False)], handle, name="t",
            version="0", instructions="", log=logging.getLogger("t"), mask=str, warm=warm)
"""


def test_a_note_never_waits_for_the_warm_up() -> None:
    """A fresh serve's first note is written while the index is still being brought up to
    date (tens of seconds on a big journal under load): the warm-up runs beside the notes."""
    lines = [*HELLO, call(1, "note", {"text": "first"})]
    done, answers = served(WARMING, lines)
    assert answers[1]["result"]["content"][0]["text"] == "noted"
    assert "warm-up outlived a note" in done.stderr.decode()


AFTER = """
import logging, sys, threading
from memfuse.run.mcp_server import ToolAnswer, ToolSpec, serve_stdio

GUARD = 60.0  # a hang guard, not a measure: a note that does not wait sets the event at once
second = threading.Event()
said = []

def after():  # the embedding of what a note wrote, lasting until the next note is answered
    said.append("after a note: " + ("the next one was not held" if second.wait(GUARD) else "held"))

def handle(tool, arguments):
    if arguments["text"] == "second":
        second.set()
    return ToolAnswer("noted")

serve_stdio([ToolSpec("note", "", {"type": "object"}, read_only=False)], handle, name="t",
            version="0", instructions="", log=logging.getLogger("t"), mask=str,
            after_write=after)
print("; ".join(said), file=sys.stderr)
"""


def test_a_note_never_waits_for_the_step_after_the_note_before() -> None:
    """What runs after a note (serve embeds what it wrote: seconds on a big journal) runs on a
    thread of its own: the next note, sent once the first is answered, is written meanwhile."""
    server = subprocess.Popen(
        [sys.executable, "-c", AFTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(b"".join(line + b"\n" for line in [*HELLO, call(1, "note", {"text": "a"})]))
    server.stdin.flush()
    answers = {}
    while 1 not in answers:  # the first note answered: its step after it is under way
        answer = json.loads(server.stdout.readline())
        answers[answer.get("id")] = answer
    out, err = server.communicate(call(2, "note", {"text": "second"}) + b"\n", timeout=300)
    answers |= {a.get("id"): a for a in map(json.loads, out.splitlines())}
    assert server.returncode == 0, err.decode()
    assert [answers[i]["result"]["content"][0]["text"] for i in (1, 2)] == ["noted", "noted"]
    first_step = err.decode().split("; ")[0]  # the step after the first note
    assert first_step.strip().endswith("after a note: the next one was not held")


SWITCHING = """
import logging, sys
from memfuse.run.mcp_server import ToolAnswer, ToolSpec, serve_stdio

def handle(tool, arguments):
    return ToolAnswer(repr(sys.getswitchinterval()))

serve_stdio([ToolSpec("note", "", {"type": "object"}, read_only=False)], handle, name="t",
            version="0", instructions="", log=logging.getLogger("t"), mask=str)
print(f"after serving: {sys.getswitchinterval()!r}", file=sys.stderr)
"""


def test_a_note_waits_for_the_gil_a_short_switch_interval_while_serving() -> None:
    """Issue 57: a fresh serve's first note ran beside the warm-up's catch-up of the index
    (seconds of pure Python on an 8 MiB journal); back from each of its system calls, the
    note waited up to the interpreter's switch interval (5 ms) for the GIL, 120–250 ms a
    note in all. While serving, the interval is a tenth of that (SWITCH); it is put back after."""
    done, answers = served(SWITCHING, [*HELLO, call(1, "note", {"text": "a"})])
    assert float(answers[1]["result"]["content"][0]["text"]) < 0.005 / 5
    assert f"after serving: {0.005!r}" in done.stderr.decode()
