"""The stdio MCP plumbing of `memfuse serve`: a request line too long is read and dropped in
bounded pieces (its caller answered when its id can be read), and a handler that raises is
an error result with the secrets masked, never the end of the server."""

from __future__ import annotations

import io
import json
import logging

import anyio
import pytest

from memfuse.run.mcp_server import (
    OVERSIZED,
    BoundedLines,
    ToolAnswer,
    _answer,
    oversized_line,
    warmed,
    whole_characters,
)

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


def test_half_a_character_becomes_a_replacement_and_the_rest_is_kept() -> None:
    """`{"query":"billing rollout \ud83d"}`: a client that cut an emoji in two. The SDK could
    not write an answer holding it, so the request went unanswered."""
    cut = r'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"recall",'
    cut += (
        r'"arguments":{"query":"billing rollout \ud83d","pair":"\ud83d\ude00","text":"\\ud83d"}}}'
    )
    plain = '{"jsonrpc":"2.0","id":5,"method":"ping"}'
    got = lines_of(f"{cut}\n{plain}\n".encode(), limit=4096)
    message = json.loads(got[0])
    assert message["id"] == 4
    assert message["params"]["arguments"] == {
        "query": "billing rollout \ufffd", "pair": "\U0001f600", "text": "\\ud83d",
    }  # fmt: skip
    assert got[0].encode("utf-8")  # every character can be written back
    assert got[1].strip() == plain  # a line without one is passed on untouched
    assert whole_characters("not json \\ud83d") == "not json \\ud83d"  # the SDK refuses it


def test_half_a_character_in_a_deeply_nested_request_does_not_end_the_reader() -> None:
    """A message json.loads can read but nested deeper than the walk that mends half
    characters can go (600 lists): the walk's RecursionError came out of the reader, the
    server's loop over the client's lines. It is passed on as it came, for the SDK to refuse
    as it refuses such a line without half a character."""
    deep = "[" * 600 + "]" * 600
    cut = r'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"recall",'
    cut += r'"arguments":{"query":"\ud83d","x":' + deep + "}}}"
    plain = '{"jsonrpc":"2.0","id":7,"method":"ping"}'
    got = lines_of(f"{cut}\n{plain}\n".encode(), limit=4096)
    assert got[0].strip() == cut
    assert got[1].strip() == plain


def test_the_warm_up_is_waited_for_before_serving_but_only_so_long() -> None:
    from concurrent.futures import ThreadPoolExecutor
    from threading import Event

    worker = ThreadPoolExecutor(max_workers=1)
    done: list[str] = []
    assert warmed(worker, lambda: done.append("warm"), 5.0) is True
    assert done == ["warm"]  # finished before serving starts: the first call does not wait
    stuck = Event()
    assert warmed(worker, stuck.wait, 0.05) is False  # a store that hangs does not stop serving
    stuck.set()
    worker.shutdown(wait=True)
