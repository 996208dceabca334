"""OpenClaw's configuration file, `openclaw.json`, as memfuse reads it: JSON5, with the other
files its `$include`s name.

OpenClaw's own docs write it with unquoted keys, single quotes, comments and trailing commas,
and a hand-edited file is likely to have them; memfuse reads its agents, dreaming's zone, the
failure-alert route and the MCP servers there. The file is the user's but lies beside what an
agent may write, so it is read as hostile input: through the confined reader (no link
followed out, no FIFO waited on), at most CONFIG_LIMIT bytes, by `pyjson5` (C: 250 KiB in
milliseconds, docs/performance.md), nested at most as deep as the interpreter's recursion
limit. A file that cannot be read is said (`problem`), never taken for OpenClaw's defaults.

`$include` is followed as OpenClaw 2026.9.6 follows it (dist/includes-*.mjs; docs/operations.md,
"Several agents"), within memfuse's own bounds (INCLUDE_*). A reading is kept for the process
while every file it read is unchanged (size, time, inode).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyjson5

from memfuse.confine import UnsafePath, nameable, read_file, within
from memfuse.untrusted import one_line

CONFIG_LIMIT = 1 << 20  # bytes of openclaw.json (or one included file) read at all
INCLUDE = "$include"
INCLUDE_DEPTH = 10  # OpenClaw's own limit of nested includes
INCLUDE_FILES = 32  # files included in all: a diamond of lists would read one 2**10 times
INCLUDE_BYTES = 4 << 20  # bytes of included files read in all
LONE = re.compile(  # the escape of half a surrogate pair, without its other half
    r"\\u(d[89ab][0-9a-f]{2})(?!\\ud[c-f])|(?<!\\ud[89ab]..)\\u(d[c-f][0-9a-f]{2})", re.I
)
PATH_LIMIT = 4096  # OpenClaw's limit of an include's path, as given and resolved


@dataclass(frozen=True)
class ConfigReading:
    """The configuration (None: no file), and why it could not be read when it could not."""

    settings: dict[str, Any] | None = field(default=None)
    problem: str | None = None


class _Unread(Exception):
    """Why a file of the configuration (or one of its includes) was not read: said whole."""


def state_dir(env: Mapping[str, str]) -> Path:
    home = env.get("HOME") or "/nonexistent"
    return Path(env.get("OPENCLAW_STATE_DIR") or Path(home) / ".openclaw")


def config_path(env: Mapping[str, str]) -> Path:
    return Path(env.get("OPENCLAW_CONFIG_PATH") or state_dir(env) / "openclaw.json")


ConfigStamp = tuple[int, int, int, int, int] | None
_KEPT: dict[tuple[str, str], tuple[list[tuple[str, ConfigStamp]], ConfigReading]] = {}


def reading(env: Mapping[str, str]) -> ConfigReading:
    """OpenClaw's configuration as this environment names it, its includes followed ({} with
    a `problem` when the file is there but it, or a file it includes, cannot be read)."""
    path = str(config_path(env).absolute())
    key = (path, "\0".join([env.get("OPENCLAW_INCLUDE_ROOTS") or "", env.get("HOME") or ""]))
    kept = _KEPT.get(key)
    if kept is not None and all(_stamp(p) == stamp for p, stamp in kept[0]):
        return kept[1]
    follow = _Follow(path, env)
    try:
        found = follow.whole()
    except _Unread as exc:  # it names the configuration's paths: one line, whatever they hold
        found = ConfigReading({}, one_line(str(exc)))
    if len(_KEPT) >= 8:
        _KEPT.clear()
    _KEPT[key] = (follow.read, found)
    return found


def _stamp(path: str) -> ConfigStamp:
    """What changes when the file at `path` does: its content, its owner, its links."""
    try:
        named, info = os.lstat(path), os.stat(path)
    except OSError:
        return None
    return (named.st_ino, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class _Follow:
    """One reading of a configuration: its file, then each include it names, within bounds."""

    def __init__(self, path: str, env: Mapping[str, str]) -> None:
        self.path, self.env = os.path.normpath(path), env
        self.read: list[tuple[str, ConfigStamp]] = []  # every file read, with its stamp before
        self.included = 0  # files included so far
        self.size = 0  # their bytes

    def whole(self) -> ConfigReading:
        self.read.append((self.path, _stamp(self.path)))
        try:
            found = self._parse(self.path, self._bytes(Path("/"), self.path, one_link=False))
        except FileNotFoundError:
            return ConfigReading()
        if not isinstance(found, dict):
            return ConfigReading({}, f"{self.path} is not a JSON5 object")
        try:
            if INCLUDE not in json.dumps(found):  # the common case: nothing to follow
                return ConfigReading(found)
            return ConfigReading(self._resolve(found, (self.path,)))
        except RecursionError:
            raise _Unread(f"{self.path} nests too deep to read") from None

    def _bytes(self, root: Path, path: str, *, one_link: bool, owner: int | None = None) -> bytes:
        try:
            raw = read_file(root, Path(path), CONFIG_LIMIT, one_link=one_link, owner=owner)
        except FileNotFoundError:
            raise
        except UnsafePath as exc:
            raise _Unread(f"{path} was not read: {exc}") from None
        except OSError as exc:
            raise _Unread(f"{path} cannot be read: {exc.strerror or exc}") from None
        if len(raw) >= CONFIG_LIMIT:
            raise _Unread(f"{path} is over {CONFIG_LIMIT >> 10} KiB: not read")
        return raw

    def _parse(self, path: str, raw: bytes) -> Any:
        text = raw.decode("utf-8", "replace")
        try:
            try:
                return pyjson5.decode(text, maxdepth=-1)
            except pyjson5.Json5IllegalCharacter:  # pyjson5 refuses a lone surrogate's escape
                return pyjson5.decode(
                    LONE.sub(lambda m: chr(int(m[1] or m[2], 16)), text), maxdepth=-1
                )
        except (RecursionError, pyjson5.Json5NestingTooDeep):
            raise _Unread(f"{path} nests too deep to read") from None
        except pyjson5.Json5Exception as exc:  # it says where: "Stray b'comma' near 7"
            raise _Unread(f"{path} is not JSON5: {str(exc.args[0])[:200]}") from None

    def _resolve(self, value: Any, chain: tuple[str, ...]) -> Any:
        """`value` with every `$include` in it replaced as OpenClaw replaces it; `chain`: the
        files that led here, the one holding `value` last."""
        if isinstance(value, list):
            return [self._resolve(v, chain) for v in value]
        if not isinstance(value, dict):
            return value
        rest = {k: self._resolve(v, chain) for k, v in value.items() if k != INCLUDE}
        if INCLUDE not in value:
            return rest
        named = value[INCLUDE]
        if isinstance(named, str):
            included = self._file(named, chain)
        elif isinstance(named, list) and all(isinstance(n, str) for n in named):
            included = {}
            for each in named:
                included = _merge(included, self._file(each, chain))
        else:
            raise _Unread(f"{chain[-1]} has a {INCLUDE} that is not a path or a list of paths")
        if not rest:
            return included
        if not isinstance(included, dict):
            raise _Unread(
                f"{chain[-1]}: {INCLUDE} {_shown(named)} beside other keys is not an object"
            )
        return _merge(included, rest)

    def _file(self, named: str, chain: tuple[str, ...]) -> Any:
        """The value of one included file, its own includes followed."""
        said = f"{chain[-1]} includes {_shown(named)}"
        if "\0" in named or len(named) >= PATH_LIMIT or not nameable(named):
            raise _Unread(f"{said}: not a path OpenClaw takes")
        target = os.path.normpath(os.path.join(os.path.dirname(chain[-1]), named))
        self.read.append((target, _stamp(target)))
        if target in chain:
            raise _Unread(f"{said}, which includes itself: {' -> '.join([*chain, target])}")
        if len(chain) > INCLUDE_DEPTH:
            raise _Unread(f"{said}: more than {INCLUDE_DEPTH} includes deep")
        self.included += 1
        if self.included > INCLUDE_FILES:
            raise _Unread(f"{said}: more than {INCLUDE_FILES} included files in all")
        root = self._root(target, said)
        try:
            info = os.stat(target)
        except FileNotFoundError:
            raise _Unread(f"{said}: there is no {target}") from None
        except OSError as exc:
            raise _Unread(f"{said}: {target} cannot be read: {exc.strerror or exc}") from None
        if info.st_uid != os.geteuid():
            raise _Unread(f"{said}: {target} belongs to another user")
        self.size += info.st_size
        if self.size > INCLUDE_BYTES:
            raise _Unread(f"{said}: more than {INCLUDE_BYTES >> 20} MiB included in all")
        try:
            raw = self._bytes(root, target, one_link=True, owner=os.geteuid())
        except FileNotFoundError:
            raise _Unread(f"{said}: there is no {target}") from None
        return self._resolve(self._parse(target, raw), (*chain, target))

    def _root(self, target: str, said: str) -> Path:
        """The folder an include may lie in that holds `target` (its real path too): the
        configuration's own, or one `OPENCLAW_INCLUDE_ROOTS` names."""
        home = self.env.get("HOME") or "/nonexistent"
        roots = [os.path.dirname(self.path)]
        for given in (self.env.get("OPENCLAW_INCLUDE_ROOTS") or "").split(os.pathsep):
            entry = given.strip()
            entry = home + entry[1:] if entry == "~" or entry.startswith("~/") else entry
            if os.path.isabs(entry):
                roots.append(os.path.normpath(entry))
        holding = [root for root in roots if within(root, target)]
        if not holding:
            raise _Unread(
                f"{said}: {target} lies outside {roots[0]}, the configuration's folder, and"
                " every folder OPENCLAW_INCLUDE_ROOTS names"
            )
        real = os.path.realpath(target)
        for root in map(os.path.realpath, roots):  # the link may lead into another of them
            if within(root, real):
                return Path(root)
        raise _Unread(f"{said}: it is a link out of {holding[0]}")


def _merge(base: Any, over: Any) -> Any:
    """OpenClaw's deep merge of includes: objects by key, lists joined, the rest replaced."""
    if isinstance(base, list) and isinstance(over, list):
        return [*base, *over]
    if not isinstance(base, dict) or not isinstance(over, dict):
        return over
    merged = dict(base)
    for key, value in over.items():
        merged[key] = _merge(merged[key], value) if key in merged else value
    return merged


def _shown(named: object) -> str:
    return json.dumps(named)[:200]


def dig(value: object, *keys: str) -> object:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value
