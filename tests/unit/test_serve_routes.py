"""Issue 47: with Tool Search on, OpenClaw handed the model serve's answer twice (a
`structuredContent:` block beside the text, and the details again): 4 585 characters for 3
results against 1 287. The answer now reaches the model once on each of OpenClaw's routes
(tests/openclaw_projection.py, ported from the package), and a program still has the
envelope, under `_meta`."""

from __future__ import annotations

import json

from memfuse.run.mcp_server import ENVELOPE_KEY, ToolAnswer, call_result
from tests.fakes import World
from tests.openclaw_projection import model_text_direct, model_text_tool_search
from tests.unit.flows.test_serve_flow import ok, service, synced


def test_a_recall_reaches_the_model_once_on_every_openclaw_route(world: World) -> None:
    synced(world)
    recall: ToolAnswer = service(world).call("recall", {"query": "billing migration", "limit": 3})
    envelope = ok(recall)
    result = json.loads(json.dumps(call_result(recall)))  # as it crosses the wire
    assert "structuredContent" not in result
    assert result["_meta"][ENVELOPE_KEY] == envelope  # a program reads it here
    bullet = envelope["data"]["results"][0]["content"]
    uri = envelope["data"]["results"][0]["uri"]
    direct = model_text_direct(result, "memfuse", "recall")
    searched = model_text_tool_search(result, "memfuse", "recall")
    assert direct == recall.text
    for seen in (direct, searched):
        assert "structuredContent" not in seen and '"schema"' not in seen
        assert seen.count(uri) == 1
    assert json.loads(searched)["result"]["content"][0]["text"] == recall.text
    assert bullet in direct
    # Before (issue 47): the envelope as structuredContent put it in front of the text again.
    before = {**result, "structuredContent": envelope}
    assert model_text_direct(before, "memfuse", "recall").count(uri) == 2
    assert model_text_tool_search(before, "memfuse", "recall").count(uri) == 3


def test_an_error_answer_has_its_text_and_no_envelope() -> None:
    result = call_result(ToolAnswer("recall: limit must be a whole number", None, error=True))
    assert result == {
        "content": [{"type": "text", "text": "recall: limit must be a whole number"}],
        "isError": True,
    }
