"""`memfuse doctor --install-config FILE`: agent-memory's entry merged into an mcporter config.

The file is the operator's and holds other servers' secrets (issue 33): what is printed shows
none of them, and the file keeps its numbers' own text, its mode, its shape and its links
(docs/security.md names each rule and its test).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import secrets
from datetime import datetime
from pathlib import Path
from typing import Any

from memfuse.confine import UnsafePath, write_atomic
from memfuse.errors import ConfigError
from memfuse.store.server_entry import CONFIG_MAX, read_config, strip_jsonc
from memfuse.untrusted import MAX_DEPTH, nesting

MASK = "****"
SECRET_NAME = re.compile(r"key|token|secret|passw|auth|credential|cookie|session|signature", re.I)
_SECRET_FLAG = re.compile(r"--?[\w-]*(?:key|token|secret|passw|auth|credential)[\w-]*", re.I)
_BEARER = re.compile(r"\b(Bearer|Basic|Token)\s+[^\s\"',]+", re.I)
_USERINFO = re.compile(r"(://)[^/\s@\"']+@")
# `token: abc`, `API_KEY=abc` in a comment or any other text a line may hold
_NAMED = re.compile(
    r"([\w-]*(?:key|token|secret|passw|auth)[\w-]*\"?\s*[:=]\s*\"?)([^\s\",}\]]+)", re.I
)
_MIN_SECRET = 3  # shorter values are not masked by value (they would mask half the text)


class LoadedConfig:
    """A config's text parsed with every number's own text kept, to be written back as it was."""

    def __init__(self, text: str, where: Path) -> None:
        self.text = text
        self._nonce = secrets.token_hex(8)
        self._numbers: list[str] = []
        if not text.strip():
            self.value: Any = {"mcpServers": {}}
            return
        stripped = strip_jsonc(text)
        if len(stripped) > CONFIG_MAX or nesting(stripped) > MAX_DEPTH:
            raise ConfigError(f"{where} is too large or nested too deep: nothing changed")

        def constant(name: str) -> Any:
            raise ConfigError(
                f"{where} holds {name}, which is not JSON (Node's parser refuses the whole file):"
                " fix it first; nothing changed"
            )

        try:
            self.value = json.loads(stripped, parse_float=self._keep, parse_constant=constant)
        except (ValueError, RecursionError) as exc:
            raise ConfigError(
                f"{where} is not JSON ({exc}): fix it first; nothing changed"
            ) from None

    def _keep(self, text: str) -> str:
        self._numbers.append(text)
        return f"\0{self._nonce}:{len(self._numbers) - 1}\0"

    def dump(self, value: Any, *, one_line: bool) -> str:
        """The config as JSON in the file's own shape: one line, or its own indent."""
        found = re.search(r"^([ \t]+)\S", self.text, re.M)
        indent = found[1] if found else 2
        shape: dict[str, Any] = {"separators": (", ", ": ")} if one_line else {"indent": indent}
        text = json.dumps(value, ensure_ascii=False, **shape)
        marker = re.compile(r'"\\u0000' + self._nonce + r':(\d+)\\u0000"')
        return marker.sub(lambda m: self._numbers[int(m[1])], text)

    def shown(self, value: Any) -> Any:
        """`value` with each kept number as its text (for secrets and --json)."""
        if isinstance(value, dict):
            return {k: self.shown(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.shown(v) for v in value]
        if isinstance(value, str) and value.startswith(f"\0{self._nonce}:"):
            return self._numbers[int(value.strip("\0").split(":")[1])]
        return value


def secret_values(value: Any, name: str = "") -> set[str]:
    """Every secret-looking string in a config (docs/security.md says which)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            headers = key.lower() in ("headers", "http_headers")
            found |= secret_values(item, "auth" if headers else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found |= secret_values(item, name)
            if isinstance(item, str) and _SECRET_FLAG.fullmatch(item) and i + 1 < len(value):
                found |= {str(value[i + 1])}
            if isinstance(item, str) and "=" in item and _SECRET_FLAG.fullmatch(item.split("=")[0]):
                found.add(item.split("=", 1)[1])
    elif isinstance(value, str):
        if SECRET_NAME.search(name):
            found.add(value)
        found |= {m[0].split(None, 1)[1] for m in _BEARER.finditer(value)}
        found |= _url_secrets(value)
    return {s for s in found if len(s) >= _MIN_SECRET}


def _url_secrets(text: str) -> set[str]:
    from urllib.parse import parse_qsl, urlsplit

    found: set[str] = set()
    for url in re.findall(r"[a-z][a-z0-9+.-]*://[^\s\"']+", text, re.I):
        with contextlib.suppress(ValueError):
            parts = urlsplit(url)
            if parts.password:
                found.add(parts.password)
            found |= {v for k, v in parse_qsl(parts.query) if SECRET_NAME.search(k) or len(v) > 16}
    return found


def mask(line: str, values: set[str]) -> str:
    """`line` with every secret (as written, or as JSON escapes it) and every bearer token,
    URL password or `name: value` of a secret's name shown as ****."""
    for value in sorted(values, key=len, reverse=True):
        line = line.replace(value, MASK).replace(json.dumps(value)[1:-1], MASK)
    line = _BEARER.sub(lambda m: f"{m[1]} {MASK}", line)
    line = _NAMED.sub(lambda m: f"{m[1]}{MASK}", line)
    return _USERINFO.sub(lambda m: f"{m[1]}{MASK}@", line)


def install(target: Path, server: str, entry: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Merge `entry` into the mcporter config at `target`: (its data for the result, the
    changes said). Everything that can be refused is refused before anything is written."""
    target = target.expanduser().absolute()
    real = Path(os.path.realpath(target))
    changes: list[str] = []
    if target.is_symlink():
        if not real.parent.is_dir():
            raise ConfigError(
                f"{target} links to {real}, whose folder does not exist: nothing changed"
            )
        changes.append(f"{target} is a link to {real}: that file is changed, the link kept")
    try:
        before = read_config(real)
        mode: int | None = None  # kept as it is
    except FileNotFoundError:
        before, mode = "", 0o600  # it will hold the servers' tokens
    except OSError as exc:
        raise ConfigError(f"cannot read {target}: {exc}") from None
    loaded = LoadedConfig(before, target)
    config = loaded.value
    if not isinstance(config, dict) or not isinstance(config.setdefault("mcpServers", {}), dict):
        raise ConfigError(f"{target} has no mcpServers object: nothing changed")
    one_line = bool(before.strip()) and "\n" not in before.strip()
    hidden = secret_values(loaded.shown(config))
    config["mcpServers"][server] = entry
    after = loaded.dump(config, one_line=one_line) + (
        "\n" if not one_line or before.endswith("\n") else ""
    )
    hidden |= secret_values(entry)
    backup = None
    if after == before:
        changes.append(f"{target} already holds this entry: nothing changed")
    else:
        if before:
            backup = _backup_name(real, datetime.now().strftime("%Y%m%dT%H%M%S"))
            _write(backup, before, 0o600, "nothing changed")
            changes.append(f"{target} as it was is kept in {backup}")
        try:
            _write(real, after, mode, "the file is as it was")
        except ConfigError:
            if backup is not None:
                with contextlib.suppress(OSError):
                    backup.unlink()
            raise
        if one_line:
            changes.append(f"{target} was one line and stays one line")
        changes += difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"{target} (before)", f"{target} (now)",
            lineterm="",
        )  # fmt: skip
    if after != before and strip_jsonc(before) != before:
        changes.append(
            "the file had comments or trailing commas (JSONC): the rewritten file has none;"
            " the copy does"
        )
    shown_entry = json.loads(mask(json.dumps(entry), hidden))
    data = {"path": str(target), "backup": str(backup) if backup else None,
            "entry": shown_entry}  # fmt: skip
    return data, [mask(line, hidden) for line in changes]


def _backup_name(real: Path, stamp: str) -> Path:
    """A name for the copy of `real` as it was that no earlier copy holds: of two changes in one
    second (an entry per agent), the first copy, the user's own file, is never written over."""
    for n in range(1, 1000):
        name = real.with_name(f"{real.name}.before-memfuse-{stamp}" + (f"-{n}" if n > 1 else ""))
        if not os.path.lexists(name):
            return name
    raise ConfigError(f"{real} has a thousand copies from this second: nothing changed")


def _write(path: Path, text: str, mode: int | None, otherwise: str) -> None:
    try:
        write_atomic(path.parent, path, text.encode("utf-8"), mode=mode, create_parents=True)
    except (OSError, UnsafePath) as exc:
        raise ConfigError(f"cannot write {path}: {exc}; {otherwise}") from None
