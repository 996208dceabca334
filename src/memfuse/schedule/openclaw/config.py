"""OpenClaw's configuration file, `openclaw.json`, as memfuse reads it: JSON5.

OpenClaw's own docs write it with unquoted keys, single quotes, comments and trailing commas,
and a hand-edited file is likely to have them; memfuse reads its agents, dreaming's zone, the
failure-alert route and the MCP servers there. The file is the user's but lies beside what an
agent may write, so it is read as hostile input: through the confined reader (no link
followed out, no FIFO waited on), at most CONFIG_LIMIT bytes, strict JSON (and JSONC) first —
the fast, common case, which OpenClaw's own `config set` writes — and the `json5` parser only
for a file within JSON5_LIMIT bytes (it is pure Python: ~30 KB a second on a loaded machine),
its nesting bounded by the interpreter's recursion limit. A file that cannot be read at all is
said (`problem`), never taken silently for "OpenClaw's defaults". A reading is kept for the
process while the file is unchanged (its size, time and inode), since one command asks it
several things.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import json5

from memfuse.confine import UnsafePath, read_file
from memfuse.store.server_entry import strip_jsonc

CONFIG_LIMIT = 1 << 20  # bytes of openclaw.json read at all
JSON5_LIMIT = 256 << 10  # bytes the (slow, pure Python) JSON5 parser is given


@dataclass(frozen=True)
class Reading:
    """The configuration (None: no file), and why it could not be read when it could not."""

    settings: dict[str, Any] | None = field(default=None)
    problem: str | None = None


def state_dir(env: Mapping[str, str]) -> Path:
    home = env.get("HOME") or "/nonexistent"
    return Path(env.get("OPENCLAW_STATE_DIR") or Path(home) / ".openclaw")


def config_path(env: Mapping[str, str]) -> Path:
    return Path(env.get("OPENCLAW_CONFIG_PATH") or state_dir(env) / "openclaw.json")


def reading(env: Mapping[str, str]) -> Reading:
    """OpenClaw's configuration as this environment names it ({} with a `problem` when the
    file is there but cannot be read)."""
    path = config_path(env).absolute()
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return Reading()
    except OSError as exc:
        return Reading({}, f"{path} cannot be read: {exc.strerror or exc}")
    return _read(str(path), info.st_size, info.st_mtime_ns, info.st_ino)


@functools.lru_cache(maxsize=8)
def _read(path: str, _size: int, _mtime: int, _inode: int) -> Reading:
    try:
        raw = read_file(Path("/"), Path(path), CONFIG_LIMIT)
    except FileNotFoundError:
        return Reading()
    except UnsafePath as exc:
        return Reading({}, f"{path} was not read: {exc}")
    except OSError as exc:
        return Reading({}, f"{path} cannot be read: {exc.strerror or exc}")
    if len(raw) >= CONFIG_LIMIT:
        return Reading({}, f"{path} is over {CONFIG_LIMIT >> 10} KiB: not read")
    text = raw.decode("utf-8", "replace")
    try:
        found = json.loads(strip_jsonc(text))
    except (ValueError, RecursionError):
        found = _json5(path, text)
        if isinstance(found, Reading):
            return found
    if not isinstance(found, dict):
        return Reading({}, f"{path} is not a JSON5 object")
    return Reading(found)


def _json5(path: str, text: str) -> Any:
    if len(text.encode("utf-8")) > JSON5_LIMIT:
        return Reading({}, f"{path} is not JSON, and over {JSON5_LIMIT >> 10} KiB to read as JSON5")
    try:
        return json5.loads(text)
    except RecursionError:
        return Reading({}, f"{path} nests too deep to read")
    except ValueError as exc:  # json5 says where: "<string>:3 Unexpected …"
        return Reading({}, f"{path} is not JSON5: {str(exc)[:200]}")


def dig(value: object, *keys: str) -> object:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value
