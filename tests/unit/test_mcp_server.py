"""The stdio MCP plumbing of `memfuse serve`: a request line too long is read and dropped in
bounded pieces (its caller answered when its id can be read), and a handler that raises is
an error result with the secrets masked, never the end of the server."""

from __future__ import annotations

import io
import json
import logging

import anyio
import pytest

from memfuse.run.mcp_server import OVERSIZED, BoundedLines, ToolAnswer, _answer, oversized_line

LOG = logging.getLogger("memfuse.test")


def lines_of(data: bytes, limit: int) -> list[str]:
    reader = BoundedLines(io.BufferedReader(io.BytesIO(data)), limit, LOG)  # type: ignore[arg-type]

    async def collect() -> list[str]:
        return [line async for line in reader]

    return anyio.run(collect)


def test_a_line_too_long_becomes_an_error_request_with_its_id() -> None:
    huge = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": "recall", "arguments": {"query": "x" * 5000}}})  # fmt: skip
    small = '{"jsonrpc":"2.0","id":8,"method":"ping"}'
    got = lines_of(f"{huge}\n\n{small}\n".encode(), limit=1024)
    assert json.loads(got[0]) == {"jsonrpc": "2.0", "id": 7, "method": OVERSIZED, "params": {}}
    assert got[1].strip() == small  # the next request is read whole, the blank line skipped


def test_the_id_is_found_last_too_and_a_line_without_one_is_dropped() -> None:
    # JavaScript clients put the id after the params.
    tail = '{"method":"tools/call","params":{"q":"' + "y" * 5000 + '"},"jsonrpc":"2.0","id":"a-1"}'
    anonymous = '{"method":"notifications/x","params":{"q":"' + "z" * 5000 + '"}}'
    got = lines_of(f"{tail}\n{anonymous}\n".encode(), limit=1024)
    assert len(got) == 1 and json.loads(got[0])["id"] == "a-1"


def test_an_endless_line_is_read_to_its_end_in_bounded_pieces() -> None:
    got = lines_of(b'{"jsonrpc":"2.0","id":3,' + b"x" * (3 << 20), limit=4096)
    assert [json.loads(line)["id"] for line in got] == [3]


@pytest.mark.parametrize(
    ("head", "tail", "found"),
    [
        (b'{"jsonrpc":"2.0","id":12,"method"', b"", "12"),
        (b'{"id": "q\\"1", "jsonrpc"', b"", '"q\\"1"'),
        (b'{"method":"x","params":{"id":5', b',"id":6}', "6"),
        (b'{"method":"x"', b'"params":{"id":9}}', None),
    ],
)
def test_where_an_id_is_read(head: bytes, tail: bytes, found: str | None) -> None:
    line = oversized_line(head, tail)
    assert (json.loads(line)["id"] if line else None) == (json.loads(found) if found else None)


def test_a_handler_that_raises_is_an_error_result_masked() -> None:
    def broken(_tool: str, _args: dict[str, object]) -> ToolAnswer:
        raise RuntimeError("the key sk-live-123 leaked")

    answer = _answer(broken, "recall", {}, LOG, lambda text: text.replace("sk-live-123", "****"))
    assert answer is not None and answer.error
    assert "sk-live-123" not in answer.text and "RuntimeError" in answer.text
