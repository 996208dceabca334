"""A tool's answer as it leaves `memfuse serve`: masked, bounded, and rendered twice — the
envelope as structured content, and a compact text meant for a model.

A client that hands the model both (some MCP hosts do) must not give it the same envelope twice,
so the text is not the JSON again: a few lines per result with what a model cites (the
journal line, the URI, the date) and what it reads (the whole bullet, up to TEXT_MAX), the
warnings last. Every part is bounded: each text at TEXT_MAX characters, the warnings at
WARNINGS_MAX (the rest counted in one line), the envelope at ANSWER_MAX bytes (the last
rows dropped, counted in `data.truncated`), and the text at ANSWER_MAX bytes as well.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from memfuse.run.render import HELD
from memfuse.untrusted import printable

TEXT_MAX = 4000  # characters of one text in an answer (a bullet may be a page long)
ANSWER_MAX = 256 * 1024  # bytes of one answer's JSON, and of its text
WARNINGS_MAX = 20  # warnings one answer lists; the rest are counted (the log has them all)
CUT = "… [cut]"


def masked(value: Any, mask: Callable[[str], str]) -> Any:
    """Every text in an answer with the secrets masked, and cut at TEXT_MAX characters."""
    if isinstance(value, str):
        text = mask(value)
        return text if len(text) <= TEXT_MAX else text[:TEXT_MAX] + CUT
    if isinstance(value, dict):
        return {k: masked(v, mask) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [masked(v, mask) for v in value]
    return value


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())


def bounded(envelope: dict[str, Any]) -> dict[str, Any]:
    """The envelope within ANSWER_MAX bytes: its warnings cut to WARNINGS_MAX, then the last
    rows of its list dropped (and counted in `data.truncated`) until it fits; a `data` that
    still does not fit is replaced by an error saying so."""
    warnings = envelope["warnings"]
    if len(warnings) > WARNINGS_MAX:
        more = len(warnings) - WARNINGS_MAX + 1
        warnings[WARNINGS_MAX - 1 :] = [f"and {more} more warnings (memfuse's log has them all)"]
    data = envelope["data"]
    rows = next((data[k] for k in ("results", "bullets") if isinstance(data.get(k), list)), None)
    dropped = 0
    while _size(envelope) > ANSWER_MAX:
        if not rows:
            envelope["data"] = {"error": f"the answer is over {ANSWER_MAX} bytes"}
            return envelope
        rows.pop()
        dropped += 1
        data["truncated"] = dropped
    if dropped:
        warnings.append(f"the answer was cut to {ANSWER_MAX} bytes: {dropped} dropped")
    return envelope


Lines = Callable[[Any], list[str]]  # a tool's compact lines for a model, from its data


def text_of(
    envelope: dict[str, Any], human: Sequence[str] = (), lines_of: Lines | None = None
) -> str:
    """The compact text a model reads, from the bounded, masked envelope: the tool's own
    `lines_of` its data, else the command's `human` lines (masked by the caller), then the
    warnings; within ANSWER_MAX bytes, every line printable."""
    data = envelope["data"]
    command = envelope["command"]
    if "error" in data and len(data) == 1:
        lines = [f"{command}: {data['error']}"]
    elif lines_of is not None:
        lines = lines_of(data)
    else:
        lines = [str(line)[:TEXT_MAX] for line in human]
    if envelope["status"] != "ok":
        lines.append(f"status: {envelope['status']}")
    lines += [f"warning: {w}" for w in envelope["warnings"]]
    text = printable("\n".join(lines))
    if len(text.encode()) > ANSWER_MAX:
        text = text.encode()[: ANSWER_MAX - len(CUT.encode())].decode("utf-8", "ignore") + CUT
    return text


def recall_lines(data: dict[str, Any]) -> list[str]:
    results = data["results"]
    origin = " and ".join(data["sources"]) or "nothing"
    lines = [f"{len(results)} results for {data['query']!r} from {origin}"]
    if data.get("truncated"):
        lines[0] += f" ({data['truncated']} more cut for size)"
    for n, row in enumerate(results, start=1):
        cited = [row.get("location"), row.get("date"), row.get("type"), row.get("uri")]
        lines.append(f"{n}. [{' · '.join(str(c) for c in cited if c)}]")
        lines.append(f"   {row['content']}".replace("\n", "\n   "))
    if not results:
        lines.append("no record of it in the journals, MEMORY.md or the store")
    return lines


def where_lines(data: dict[str, Any]) -> list[str]:
    bullets = data["bullets"]
    if not bullets:
        return [f"no bullet matches {data['query']!r} in any journal"]
    lines = [f"{data['matches']} bullets match {data['query']!r}"]
    if data["matches"] > len(bullets):
        lines[0] += f" (the first {len(bullets)} shown)"
    for row in bullets:
        lines.append(f"- {row['location']} {row['uri']} ({row['type']}): {row['text']}")
        settled = row["outcome"] or "not settled"
        lines.append(f"  ledger: {settled}; {HELD[row['in_store']]}")
        if "store_text" in row:
            lines.append(f"  at that URI now: {row['store_text']}")
        lines += [
            f"  {a['at']} {a['outcome']}" + (f": {a['reason']}" if a["reason"] else "")
            for a in row["attempts"]
        ]
    return lines
