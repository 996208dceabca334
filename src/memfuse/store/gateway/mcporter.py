"""The mcporter transport: one `mcporter call` subprocess per tool call.

Arguments always travel as one JSON object on stdin (`--args -`): mcporter's `key=value` form
strips whitespace, coerces `true`/`none`/numbers/JSON and reads `@path` values as files.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memfuse.store.gateway.base import Answer, CallFailed, CallTimeout, ToolMissing, parse_answer

# mcporter gets a moment past its own timer to report cleanly before we kill it.
GRACE_SECONDS = 1.0


@dataclass(frozen=True)
class RunOutcome:
    returncode: int
    stdout: bytes
    stderr: bytes


ProcessRunner = Callable[..., RunOutcome]  # as run_in_process_group, its keywords and its errors


# What one call may answer: far above any agent-memory answer (a year of journal memories is a
# few MiB), far below what would cost the machine. stderr keeps its last part only.
ANSWER_LIMIT = 16 << 20
STDERR_TAIL = 64 << 10


class OutputTooLarge(Exception):
    """The child wrote more than it may on stdout; it was killed."""


def run_in_process_group(
    argv: Sequence[str],
    *,
    stdin: bytes,
    timeout: float,
    env: Mapping[str, str] | None,
    cwd: str | None = None,
    limit: int = ANSWER_LIMIT,
) -> RunOutcome:
    """Run argv in a new session so that a timeout can kill it and every child it spawned.

    Past `timeout` or `limit` bytes of stdout the process group is killed. stdin is a file,
    not a pipe: mcporter reads `--args -` in one go and fails with EAGAIN on a pipe still
    being filled, which a large bullet hits.
    """
    with tempfile.TemporaryFile() as payload:
        payload.write(stdin)
        payload.seek(0)
        proc = subprocess.Popen(
            list(argv),
            stdin=payload,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        try:
            out, err = _collect(proc, time.monotonic() + timeout, limit)
        except BaseException:
            kill_process_group(proc)
            raise
    return RunOutcome(proc.returncode, out, err)


def _collect(proc: subprocess.Popen[bytes], deadline: float, limit: int) -> tuple[bytes, bytes]:
    """stdout (at most `limit` bytes) and the tail of stderr, by the deadline, then the exit."""
    assert proc.stdout is not None
    assert proc.stderr is not None
    out, err = bytearray(), bytearray()
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise subprocess.TimeoutExpired(proc.args, 0)
            for key, _events in selector.select(remaining):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                sink = streams[key.fd]
                sink += chunk
                if sink is out and len(out) > limit:
                    raise OutputTooLarge(f"more than {limit >> 20} MiB")
                if sink is err and len(err) > STDERR_TAIL:
                    del err[: len(err) - STDERR_TAIL]
    try:
        proc.wait(max(deadline - time.monotonic(), 0.01))
    except subprocess.TimeoutExpired:
        raise subprocess.TimeoutExpired(proc.args, 0) from None
    return bytes(out), bytes(err)


def kill_process_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole process group, then reap it without waiting on stray pipes."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=2)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait(timeout=2)


def build_argv(
    mcporter: str,
    server: str,
    tool: str,
    *,
    config: Path | None = None,
    timeout_ms: int | None = None,
) -> list[str]:
    """The mcporter command line for one call. Pure: tests assert on it directly."""
    argv = shlex.split(mcporter)
    if config is not None:
        argv += ["--config", str(config)]
    argv += ["call", f"{server}.{tool}", "--args", "-", "--output", "text"]
    if timeout_ms is not None:
        argv += ["--timeout", str(timeout_ms)]
    return argv


def failure_detail(stdout: str, stderr: str, limit: int = 300) -> str:
    """The useful part of a failed mcporter run: its error line, not the server's noise."""
    lines = [line.strip() for line in (stderr + "\n" + stdout).splitlines() if line.strip()]
    for line in lines:
        lowered = line.lower()
        if "error" in lowered or "failed" in lowered or "offline" in lowered:
            return line[:limit]
    return (lines[-1] if lines else "no output")[:limit]


EXIT_NOT_FOUND = 127


class McporterGateway:
    """Calls tools through the mcporter CLI. Stateless, hence safe to use from many threads."""

    name = "mcporter"
    costly_listing = True  # `mcporter list` is a process (and a server start) of its own

    def __init__(
        self,
        mcporter: str,
        server: str,
        *,
        config: Path | None = None,
        timeout: float = 30.0,
        runner: ProcessRunner = run_in_process_group,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.mcporter = mcporter
        self.server = server
        self.config = config
        self.timeout = timeout
        self._run = runner
        self._env = env
        self._cwd = cwd

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        argv = build_argv(
            self.mcporter,
            self.server,
            tool,
            config=self.config,
            timeout_ms=int(self.timeout * 1000),
        )
        where = f"{self.server}.{tool}"
        payload = json.dumps(dict(arguments), ensure_ascii=False).encode("utf-8")  # byte-exact
        outcome = self._mcporter(argv, where, payload)
        stdout = outcome.stdout.decode("utf-8", errors="replace")
        if outcome.returncode != 0:
            stderr = outcome.stderr.decode("utf-8", errors="replace")
            detail = failure_detail(stdout, stderr)
            if outcome.returncode == EXIT_NOT_FOUND:
                # The shell's "command not found": mcporter's `#!/usr/bin/env node` found no
                # node. No retry can fix that, so it trips the breaker at once.
                raise ToolMissing(
                    f"mcporter could not start (exit 127): {detail}; is node on PATH"
                    f" ({(self._env or os.environ).get('PATH', '')})?"
                )
            raise CallFailed(f"{where} failed (mcporter exit {outcome.returncode}): {detail}")
        return parse_answer(tool, stdout)

    def _mcporter(self, argv: list[str], where: str, stdin: bytes = b"") -> RunOutcome:
        """Run one mcporter command within the timeout; a gateway error when it fails."""
        try:
            return self._run(
                argv, stdin=stdin, timeout=self.timeout + GRACE_SECONDS, env=self._env,
                cwd=self._cwd,
            )  # fmt: skip
        except FileNotFoundError:
            raise ToolMissing(
                f"mcporter not found ({argv[0]!r}); install it or set --mcporter / MEMFUSE_MCPORTER"
            ) from None
        except PermissionError:
            raise ToolMissing(
                f"mcporter cannot be executed ({argv[0]!r}): permission denied"
            ) from None
        except subprocess.TimeoutExpired:
            raise CallTimeout(
                f"{where} did not answer within {self.timeout:g}s; the call was killed"
            ) from None
        except OutputTooLarge as exc:
            raise CallFailed(f"{where} answered {exc}; the call was killed") from None

    def close(self) -> None:
        """Nothing is held between calls."""

    def version(self) -> str | None:
        """mcporter's version, or None when it cannot be run."""
        try:
            outcome = self._run(
                [*shlex.split(self.mcporter), "--version"],
                stdin=b"",
                timeout=10,
                env=self._env,
                cwd=self._cwd,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        text = outcome.stdout.decode("utf-8", errors="replace").strip()
        return text.splitlines()[-1] if outcome.returncode == 0 and text else None

    def list_tools(self) -> list[str]:
        """Tool names the server offers, from `mcporter list SERVER --json`."""
        argv = [*shlex.split(self.mcporter)]
        if self.config is not None:
            argv += ["--config", str(self.config)]
        argv += ["list", self.server, "--json"]
        outcome = self._mcporter(argv, f"listing {self.server}'s tools")
        text = outcome.stdout.decode("utf-8", errors="replace")
        try:
            listing = json.loads(text)
        except json.JSONDecodeError:
            raise CallFailed(f"listing {self.server}'s tools: {failure_detail(text, '')}") from None
        tools = listing.get("tools") if isinstance(listing, dict) else None
        if not isinstance(tools, list):
            raise CallFailed(f"listing {self.server}'s tools: {failure_detail(text, '')}")
        return [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
