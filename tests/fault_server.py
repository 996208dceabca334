"""An MCP stdio server for fault tests: the reference server, broken on purpose.

FAULT_MODE (env) picks the fault; FAULT_COUNTER names a file counting tools/call requests across
processes (mcporter starts one server per call), and FAULT_COUNTER.starts the servers started;
FAULT_AFTER is K for the `*-after` modes.

  ok             behave exactly like the reference server
  hang           read requests, never answer anything
  hang-call      answer initialize and tools/list, hang on tools/call
  crash-start    exit 1 at once, with a message on stderr
  crash-after    serve K tool calls, then exit 1 on the next (before handling it)
  crash-after-write  serve K tool calls, then handle the next one and exit 1 before answering
  garbage        answer tool calls with text that is not JSON
  error          answer tool calls with {"error": "injected failure"}
  slow           sleep FAULT_DELAY seconds (default 3) before each tool answer
  gated          hold each tool answer until the file FAULT_GATE exists (the test opens it)
  noise          print non-protocol lines on stdout before each answer
  prose          answer reflect in prose (like agent-memory 3.x), other tools normally
  huge           answer tool calls with one line of 20 MiB (a text result that never ends)
  deep           answer tool calls with JSON text nested 200 000 deep
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from typing import Any

from memfuse.refserver.server import handle, make_clock
from memfuse.refserver.store import Store


def bump_counter(path: str) -> int:
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        count = int(fh.read().strip() or 0) + 1
        fh.seek(0)
        fh.truncate()
        fh.write(str(count))
        return count


def text_result(msg_id: Any, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": text}]}}


def main() -> None:
    mode = os.environ.get("FAULT_MODE", "ok")
    if os.environ.get("FAULT_COUNTER"):
        bump_counter(os.environ["FAULT_COUNTER"] + ".starts")
    if mode == "crash-start":
        print("fault_server: crashing at start on purpose", file=sys.stderr)
        sys.exit(1)
    store = Store(
        os.environ.get("AGENT_MEMORY_DB", "./agent-memory.db"),
        os.environ.get("AGENT_MEMORY_AGENT_ID", "default"),
        make_clock(os.environ),
        gate=os.environ.get("AGENT_MEMORY_GATE", "on") != "off",
    )
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        is_call = message.get("method") == "tools/call" and "id" in message
        if mode == "hang" or (mode == "hang-call" and is_call):
            continue
        count = 0
        if is_call and os.environ.get("FAULT_COUNTER"):
            count = bump_counter(os.environ["FAULT_COUNTER"])
        crash_now = is_call and count > int(os.environ.get("FAULT_AFTER", "0"))
        if mode == "crash-after" and crash_now:
            print(f"fault_server: crashing on call {count}", file=sys.stderr)
            sys.exit(1)
        reply = handle(store, message)
        if is_call:
            tool = message["params"]["name"]
            if mode == "crash-after-write" and crash_now:
                print(f"fault_server: crashing after storing call {count}", file=sys.stderr)
                sys.exit(1)
            if mode == "garbage":
                reply = text_result(message["id"], "<html>502 Bad Gateway</html>")
            elif mode == "error":
                reply = text_result(message["id"], json.dumps({"error": "injected failure"}))
            elif mode == "slow":
                time.sleep(float(os.environ.get("FAULT_DELAY", "3")))
            elif mode == "gated":
                while not os.path.exists(os.environ["FAULT_GATE"]):
                    time.sleep(0.02)
            elif mode == "noise":
                out.write(b"debug: this line is not JSON-RPC\n")
            elif mode == "huge":
                reply = text_result(message["id"], "x" * (20 << 20))
            elif mode == "deep":
                reply = text_result(message["id"], "[" * 200_000 + "]" * 200_000)
            elif mode == "prose" and tool == "reflect":
                reply = text_result(
                    message["id"], "Sleep cycle complete. Decayed 3 memories; archived 1."
                )
        if reply is not None:
            out.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
            out.flush()


if __name__ == "__main__":
    main()
