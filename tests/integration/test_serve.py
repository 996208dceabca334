"""`memfuse serve` as an agent reaches it: the installed command, through a raw MCP client
(the official SDK's stdio client, and bare JSON-RPC lines) and through the real mcporter,
against the reference server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import UNREACHED, StoreServer
from tests.integration.ten_bullets import DAY, JOURNAL, NOW, journal, sync

pytestmark = pytest.mark.integration

MEMFUSE = str(Path(sys.executable).parent / "memfuse")


def serve_argv(ws: Path, store: StoreServer) -> list[str]:
    return ["serve", "-w", str(ws), "--now", NOW, *store.cli_args("session")]


def synced(ws: Path, store: StoreServer) -> None:
    journal(ws).write_text(JOURNAL)
    code, envelope, stderr = sync(ws, store)
    assert code == 0, (envelope, stderr)


def ask(ws: Path, store: StoreServer, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each call through the SDK's stdio client, in one session; a callable in `calls` is run
    between two calls (to change a journal)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=MEMFUSE, args=serve_argv(ws, store), env=dict(os.environ)
    )
    results: list[Any] = []

    async def main() -> None:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            results.append(sorted(t.name for t in listed.tools))
            for tool, arguments in calls:
                if callable(arguments):
                    arguments()
                    continue
                results.append(await session.call_tool(tool, arguments))

    with tempfile.TemporaryFile("w+") as errlog:
        anyio.run(main)
        errlog.seek(0)
        assert "Traceback" not in errlog.read()
    return results


def envelope(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is None  # the model would read it beside the text
    value: dict[str, Any] = result.meta["memfuse/envelope"]
    assert value["schema"] == 2
    assert not result.content[0].text.startswith("{")  # a summary, not the envelope twice
    return value


def test_a_raw_mcp_client_recalls_follows_a_journal_and_asks_where_and_status(
    store: StoreServer, workspace: Path
) -> None:
    synced(workspace, store)

    def add_a_bullet() -> None:
        with journal(workspace).open("a") as fh:
            fh.write("- Ordered the zeppelin model for the team room\n")

    tools, first, refused, second, where, status, noted, airship = ask(workspace, store, [
        ("recall", {"query": "Lisbon offsite flights", "limit": 3}),
        ("recall", {"query": "x", "limit": 500}),
        ("", add_a_bullet),  # type: ignore[list-item]
        ("recall", {"query": "zeppelin model"}),
        ("where", {"what": "Lisbon"}),
        ("status", {}),
        ("note", {"text": "Booked the airship tour for the team"}),
        ("recall", {"query": "airship tour"}),
    ])  # fmt: skip
    assert tools == ["note", "recall", "status", "where"]
    data = envelope(first)["data"]
    assert data["sources"] == ["agent-memory", "journals"]
    assert data["results"][0]["content"] == "Booked flights to Lisbon for the March offsite"
    assert data["results"][0]["location"] == f"memory/{DAY}.md:17" and data["results"][0]["id"]
    assert refused.is_error and "limit must be a whole number" in refused.content[0].text
    found = envelope(second)["data"]["results"][0]
    assert found["content"] == "Ordered the zeppelin model for the team room"
    assert found["location"] == f"memory/{DAY}.md:18"
    assert envelope(where)["data"]["bullets"][0]["in_store"] is True
    assert envelope(status)["data"]["ledger"]["positions"] == 10
    note = envelope(noted)["data"]
    assert note["file"] == f"memory/{DAY}.md" and note["line"] > 18
    assert noted.content[0].text.startswith(f"noted at memory/{DAY}.md:{note['line']}")
    top = envelope(airship)["data"]["results"][0]
    assert top["content"] == "Booked the airship tour for the team"
    assert top["location"] == f"{note['file']}:{note['line']}"


def test_the_store_going_away_leaves_the_journals_answering(
    counted_store: StoreServer, workspace: Path
) -> None:
    synced(workspace, counted_store)
    done = counted_store.tool_calls()
    # The store's server answers one more tool call, then every server started dies at its
    # next one: the session breaks, its one reopening breaks too.
    counted_store.set_mode("crash-after", FAULT_AFTER=str(done + 1))
    _, answered, gone, resting = ask(workspace, counted_store, [
        ("recall", {"query": "Lisbon offsite flights"}),
        ("recall", {"query": "Lisbon offsite flights"}),
        ("recall", {"query": "Lisbon offsite flights"}),
    ])  # fmt: skip
    assert envelope(answered)["data"]["sources"] == ["agent-memory", "journals"]
    for result in (gone, resting):
        got = envelope(result)
        assert got["data"]["sources"] == ["journals"]
        assert got["data"]["results"][0]["location"] == f"memory/{DAY}.md:17"
        assert len(got["warnings"]) == 1 and "store did not answer" in got["warnings"][0]
    assert "asked again in" in envelope(resting)["warnings"][0]


def raw(ws: Path, store: StoreServer, lines: list[bytes]) -> tuple[list[dict[str, Any]], str, int]:
    done = subprocess.run(
        [MEMFUSE, *serve_argv(ws, store)], input=b"".join(line + b"\n" for line in lines),
        capture_output=True, timeout=UNREACHED, check=False,
    )  # fmt: skip
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    return answers, done.stderr.decode(), done.returncode


def rpc(msg_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


HELLO = [
    rpc(
        0,
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    ),
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
]


def test_bare_json_rpc_lines_malformed_and_oversized_get_errors_and_eof_ends_it(
    store: StoreServer, workspace: Path
) -> None:
    synced(workspace, store)
    lines = [
        *HELLO,
        b"this is not json",
        rpc(1, "tools/call", {"name": "recall", "arguments": {"query": "q" * 400_000}}),
        rpc(2, "tools/call", {"name": "recall", "arguments": "not an object"}),
        rpc(3, "tools/call", {"name": "drop_everything", "arguments": {}}),
        rpc(4, "tools/call", {"name": "recall", "arguments": {"query": "Lisbon flights"}}),
        # Half an emoji: a client that cut a string in two. Never answered before.
        rb'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"recall",'
        rb'"arguments":{"query":"Lisbon flights \ud83d"}}}',
    ]
    answers, stderr, code = raw(workspace, store, lines)
    assert code == 0, stderr
    by_id = {a.get("id"): a for a in answers}
    assert "a request of more than" in by_id[1]["error"]["message"]
    assert "error" in by_id[2]  # the SDK refuses arguments that are not an object
    assert "no tool 'drop_everything'" in by_id[3]["error"]["message"]
    answer = by_id[4]["result"]["_meta"]["memfuse/envelope"]
    assert answer["data"]["results"][0]["location"] == f"memory/{DAY}.md:17"
    halved = by_id[5]["result"]["_meta"]["memfuse/envelope"]
    assert halved["data"]["query"] == "Lisbon flights \ufffd"
    assert halved["data"]["results"][0]["location"] == f"memory/{DAY}.md:17"
    assert stderr == ""  # quietly: the log has what happened


def test_mcporter_calls_serve_with_arguments_on_stdin(
    store: StoreServer, workspace: Path, tmp_path: Path
) -> None:
    synced(workspace, store)
    config = tmp_path / "agent-mcporter.json"
    entry = {"command": MEMFUSE, "args": serve_argv(workspace, store),
             "env": {"HOME": os.environ["HOME"]}}  # fmt: skip
    config.write_text(json.dumps({"mcpServers": {"memfuse": entry}, "imports": []}))

    def call(
        tool: str, arguments: dict[str, Any], output: str = "json"
    ) -> subprocess.CompletedProcess[str]:
        argv = [*store.mcporter.split(), "--config", str(config), "call", f"memfuse.{tool}",
                "--args", "-", "--output", output]  # fmt: skip
        return subprocess.run(argv, input=json.dumps(arguments), capture_output=True, text=True,
                              timeout=UNREACHED, check=False)  # fmt: skip

    # Text mcporter's key=value form would mangle (a leading space, "true", an @path).
    done = call("recall", {"query": " Lisbon @/etc/passwd true", "limit": 2})
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)["_meta"]["memfuse/envelope"]
    assert answer["data"]["query"] == "Lisbon @/etc/passwd true"
    assert answer["data"]["results"][0]["location"] == f"memory/{DAY}.md:17"
    text = call("recall", {"query": "Lisbon offsite", "limit": 1}, "text")
    assert text.stdout.startswith("1 results for 'Lisbon offsite' from agent-memory and journals")
    assert f"memory/{DAY}.md:17" in text.stdout
    refused = call("recall", {"query": "Lisbon", "since": "last spring"}, "text")
    assert refused.returncode == 1 and "since must be a date as YYYY-MM-DD" in refused.stdout
