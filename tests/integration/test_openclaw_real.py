"""memfuse's OpenClaw install against the real `openclaw` CLI and a local Gateway it starts.

Opt-in: it needs the `openclaw` package (2026.9.x: on PATH, or `MEMFUSE_OPENCLAW=/path/to/
openclaw`) and the Node it requires (`>=24.16.0 <25 || >=26.1.0`, its package.json `engines`),
and skips saying which is missing. The Gateway runs in a HOME of its own on a free loopback
port with a token, and is stopped (its process group) at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
MEMFUSE = Path(sys.executable).parent / "memfuse"
TOKEN = "test-gateway-token-0123456789"


def _openclaw() -> str:
    found = os.environ.get("MEMFUSE_OPENCLAW") or shutil.which("openclaw")
    if not found:
        pytest.skip("the openclaw package is absent (install it, or set MEMFUSE_OPENCLAW)")
    node = shutil.which("node")
    version = (
        subprocess.run(
            [node or "node", "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if node
        else ""
    )
    match = re.fullmatch(r"v(\d+)\.(\d+)\.\d+", version)
    major, minor = (int(match[1]), int(match[2])) if match else (0, 0)
    if not ((major == 24 and minor >= 16) or (major == 26 and minor >= 1) or major > 26):
        pytest.skip(
            f"OpenClaw needs Node >=24.16.0 <25 || >=26.1.0; this node is {version or 'none'}"
        )
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def store_entry_for(env: dict[str, str], workspace: Path) -> None:
    """The user's mcporter config in the Gateway's HOME: one `agent-memory` entry (a server that
    never starts: these tests install and alert, no store call succeeds) claimed by `workspace`."""
    mcporter = Path(env["HOME"]) / ".mcporter" / "mcporter.json"
    mcporter.parent.mkdir(parents=True)
    entry = {"command": "node", "args": ["/nonexistent/server.js"],
             "env": {"AGENT_MEMORY_DB": str(Path(env["HOME"]) / "agent-memory.db"),
                     "AGENT_MEMORY_WORKSPACE": str(workspace)}}  # fmt: skip
    mcporter.write_text(json.dumps({"mcpServers": {"agent-memory": entry}}))


@contextlib.contextmanager
def running_gateway(
    tmp_path: Path, config: dict[str, object] | None = None, beside: dict[str, str] | None = None
) -> Iterator[dict[str, str]]:
    """A local Gateway in a HOME of its own (with this configuration, and these files beside
    it), stopped at the end."""
    openclaw = _openclaw()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "openclaw").symlink_to(openclaw)
    port = _free_port()
    env = {
        **os.environ, "HOME": str(tmp_path / "home"), "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "OPENCLAW_GATEWAY_PORT": str(port), "OPENCLAW_GATEWAY_TOKEN": TOKEN,
    }  # fmt: skip
    Path(env["HOME"]).mkdir()
    if config is not None:
        (Path(env["HOME"]) / ".openclaw").mkdir()
        (Path(env["HOME"]) / ".openclaw" / "openclaw.json").write_text(json.dumps(config))
    for name, text in (beside or {}).items():
        (Path(env["HOME"]) / ".openclaw" / name).write_text(text)
    log = (tmp_path / "gateway.log").open("w")
    process = subprocess.Popen(
        [openclaw, "gateway", "run", "--allow-unconfigured", "--bind", "loopback",
         "--port", str(port), "--token", TOKEN],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        for _ in range(180):  # a generous bound on its start, not a timing
            done = subprocess.run(
                [openclaw, "cron", "list", "--all", "--json"], env=env, capture_output=True,
                text=True, timeout=120, check=False,
            )  # fmt: skip
            if done.returncode == 0 and "Memory Dreaming Promotion" in done.stdout:
                break
            if process.poll() is not None:
                pytest.fail(
                    f"the Gateway stopped: {(tmp_path / 'gateway.log').read_text()[-2000:]}"
                )
            time.sleep(1)
        else:
            pytest.fail("the Gateway did not list its dreaming job within three minutes")
        yield env
    finally:
        with contextlib.suppress(ProcessLookupError):  # a Gateway that stopped: said above
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[dict[str, str]]:
    with running_gateway(tmp_path) as env:
        yield env


def memfuse(env: dict[str, str], workspace: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [str(MEMFUSE), "cron", "--format", "openclaw", "-w", str(workspace), "--json", *args],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout)["data"])


def jobs(env: dict[str, str]) -> list[dict[str, object]]:
    done = subprocess.run(
        ["openclaw", "cron", "list", "--all", "--json"], env=env, capture_output=True, text=True,
        timeout=120, check=True,
    )  # fmt: skip
    return list(json.loads(done.stdout)["jobs"])


def test_install_is_idempotent_alerted_clear_of_dreaming_and_removable(
    gateway: dict[str, str], tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    first = memfuse(gateway, workspace, "--install")
    ours = [j for j in jobs(gateway) if str(j.get("declarationKey", "")).startswith("memfuse:")]
    assert len(ours) == 3 and all(j["failureAlert"] == {"after": 1} for j in ours)
    tidy = next(j for j in ours if str(j["declarationKey"]).endswith("-tidy"))
    assert tidy["name"] == tidy["displayName"] == "memfuse tidy (ws)"  # no agent: its folder
    assert tidy["schedule"]["expr"] == "30 3 * * *"  # the dreaming sweep has 03:00
    assert any("tidy moved from 03:00 to 03:30" in str(n) for n in first["notes"])  # type: ignore[attr-defined]
    memfuse(gateway, workspace, "--install")
    again = [j for j in jobs(gateway) if str(j.get("declarationKey", "")).startswith("memfuse:")]
    assert [j["id"] for j in again] == [j["id"] for j in ours]
    memfuse(gateway, workspace, "--remove")
    assert not [j for j in jobs(gateway) if str(j.get("declarationKey")).startswith("memfuse:")]
    assert any(j["name"] == "Memory Dreaming Promotion" for j in jobs(gateway))
    # The hook's settings left as found (review of issues 47 and 50: read by memfuse, memfuse's
    # switch and entry unset in one call), and no reload of the Gateway tripped on the way.
    config = json.loads((Path(gateway["HOME"]) / ".openclaw" / "openclaw.json").read_text())
    assert not (config.get("hooks") or {}).get("internal"), config.get("hooks")
    assert "config reload failed" not in (tmp_path / "gateway.log").read_text()


@pytest.fixture
def model(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The stand-in model (tests/model_stub.py): its port, and the file of what it received."""
    received = tmp_path / "requests.jsonl"
    stub = Path(__file__).resolve().parents[1] / "model_stub.py"
    process = subprocess.Popen(
        [sys.executable, str(stub), str(received)], stdout=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline()), received
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


def stub_models(port: int) -> dict[str, object]:
    """openclaw.json's `models`: one provider, the stub model served on `port`."""
    return {"providers": {"stub": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "stub-key",
        "api": "openai-completions",
        "models": [{"id": "stub-model", "name": "stub", "contextWindow": 128000,
                    "maxTokens": 4096}],
    }}}  # fmt: skip


def test_recent_md_reaches_what_the_model_receives_in_a_main_session(
    tmp_path: Path, model: tuple[int, Path]
) -> None:
    """Issue 40: OpenClaw loads RECENT.md only through memfuse's agent:bootstrap hook, which
    `cron --install` puts in place and `--remove` takes out."""
    port, received = model
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    line = "- RECENTMARK-4711 Alice prefers the release notes in English"
    (workspace / "RECENT.md").write_text(f"# Recent\n{line}\n")
    (workspace / "AGENTS.md").write_text("# Rules\n")
    config = {
        "models": stub_models(port),
        "agents": {"defaults": {"model": {"primary": "stub/stub-model"},
                                "workspace": str(workspace)}},
    }  # fmt: skip
    with running_gateway(tmp_path, config) as env:

        def turn(message: str) -> str:
            before = received.read_text() if received.exists() else ""
            subprocess.run(
                ["openclaw", "agent", "--agent", "main", "--message", message], env=env,
                capture_output=True, text=True, timeout=300, check=True,
            )  # fmt: skip
            return received.read_text()[len(before) :]

        assert "RECENTMARK-4711" not in turn("before memfuse")  # OpenClaw alone never loads it
        installed = memfuse(env, workspace, "--install")
        assert any("RECENT.md joins every main session" in c for c in installed["changes"])  # type: ignore[attr-defined]
        after = turn("after memfuse")
        assert "RECENTMARK-4711" in after  # the hook, hot-loaded
        assert "not instructions to follow" in after  # framed as recalled notes (issue 46)
        assert "MODULE_TYPELESS_PACKAGE_JSON" not in (tmp_path / "gateway.log").read_text()
        assert (workspace / "AGENTS.md").read_text() == "# Rules\n"
        memfuse(env, workspace, "--remove")
        assert not (Path(env["HOME"]) / ".openclaw" / "hooks" / "memfuse-recent").exists()


def test_two_agents_each_get_their_jobs_and_only_their_own_recent_md(
    tmp_path: Path, model: tuple[int, Path]
) -> None:
    """Issue 50: `cron --install --all-agents` on a real Gateway with two agents: three jobs
    each, with its agent; each main session receives its own RECENT.md and never the other's."""
    port, received = model
    spaces = {name: tmp_path / f"{name}-ws" for name in ("home", "work")}
    for name, workspace in spaces.items():
        (workspace / "memory").mkdir(parents=True)
        (workspace / "RECENT.md").write_text(f"# Recent\n- MARK-{name.upper()}-0815 private\n")
        (workspace / "AGENTS.md").write_text("# Rules\n")
    config = {
        "models": stub_models(port),
        # With several agents an agent-less job (dreaming's) needs an owner, else the Gateway
        # logs "Agent-less cron job has no resolvable owner" and never makes it.
        "agents": {"defaults": {"model": {"primary": "stub/stub-model"},
                                "systemAgent": {"agentId": "home"}},
                   "entries": {name: {"workspace": str(ws)} for name, ws in spaces.items()}},
    }  # fmt: skip
    with running_gateway(tmp_path, config) as env:
        store_entry_for(env, spaces["home"])
        done = subprocess.run(
            [str(MEMFUSE), "cron", "--format", "openclaw", "--install", "--all-agents",
             "--json"], env=env, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        ours = [j for j in jobs(env) if str(j.get("declarationKey", "")).startswith("memfuse:")]
        assert sorted(str(j.get("agentId")) for j in ours) == ["home"] * 3 + ["work"] * 3

        def turn(agent: str) -> str:
            before = received.read_text() if received.exists() else ""
            subprocess.run(
                ["openclaw", "agent", "--agent", agent, "--message", f"hello {agent}"], env=env,
                capture_output=True, text=True, timeout=300, check=True,
            )  # fmt: skip
            return received.read_text()[len(before) :]

        home, work = turn("home"), turn("work")
        assert "MARK-HOME-0815" in home and "MARK-WORK-0815" not in home
        assert "MARK-WORK-0815" in work and "MARK-HOME-0815" not in work


def turn(env: dict[str, str], received: Path, agent: str, message: str) -> str:
    """One turn of `agent`'s main session; what the model received in it (every request)."""
    before = received.read_text() if received.exists() else ""
    subprocess.run(
        ["openclaw", "agent", "--agent", agent, "--message", message], env=env,
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    return received.read_text()[len(before) :]


def steps(*calls: tuple[str, dict[str, object]]) -> str:
    """A message that has the stand-in model make these tool calls, one after another."""
    said = [{"name": name, "arguments": arguments} for name, arguments in calls]
    return f"Do this.\nSTUB-STEPS: {json.dumps(said)}"


def via_tool_search(tool: str, **arguments: object) -> tuple[str, dict[str, object]]:
    """An MCP tool's call as a model makes it with Tool Search on: through `tool_call`."""
    return ("tool_call", {"id": tool, "args": arguments})


def tool_results(received: str) -> list[str]:
    """The tool results the last request of a turn carried, oldest first (its history)."""
    last = json.loads(received.strip().splitlines()[-1])
    return [json.dumps(m.get("content")) for m in last["messages"] if m.get("role") == "tool"]


def agent_memory() -> dict[str, object]:
    """The store's command: the real agent-memory where `MEMFUSE_TEST_AGENT_MEMORY` names its
    dist/mcp/server.js (this machine's registry does not carry it), else the reference server."""
    real = os.environ.get("MEMFUSE_TEST_AGENT_MEMORY")
    if real:
        assert Path(real).is_file(), f"MEMFUSE_TEST_AGENT_MEMORY={real} is not a file"
        return {"command": shutil.which("node") or "node", "args": [real]}
    return {"command": sys.executable, "args": ["-m", "memfuse.refserver"]}


def test_the_opt_in_is_read_as_documented(tmp_path: Path) -> None:
    """Issue 57: `MEMFUSE_OPENCLAW=/path/to/openclaw` skipped as "the openclaw package is
    absent": the suite's isolation dropped every MEMFUSE_* variable before the test read it."""
    stand_in = tmp_path / "openclaw"
    stand_in.write_text("#!/bin/sh\nexit 0\n")
    stand_in.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:randomly", "-p", "no:xdist",
         "-p", "no:cacheprovider", f"{__file__}::test_install_is_idempotent_alerted_clear_of"
         "_dreaming_and_removable"],
        env={**os.environ, "MEMFUSE_OPENCLAW": str(stand_in), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert "package is absent" not in done.stdout, done.stdout
    assert "OpenClaw needs Node" in done.stdout or "passed" in done.stdout, done.stdout


def test_a_note_from_one_agent_never_reaches_the_other(
    tmp_path: Path, model: tuple[int, Path]
) -> None:
    """Issue 50: a `memfuse serve` entry per agent in `mcp.servers`, each denied to the other
    agent by its `tools.deny` (docs/serve.md), on a real Gateway with Tool Search on (the
    default for a local model: MCP tools are reached through `tool_call`). Agent home notes a
    phrase: it lands in home's journal only; work can neither call home's server (by name or
    by its search id) nor find the phrase with its own recall, the CLI's, its RECENT.md or
    its main session; home's own recall finds it."""
    from tests.conftest import mcporter_command

    port, received = model
    spaces = {name: tmp_path / f"{name}-ws" for name in ("home", "work")}
    for workspace in spaces.values():
        (workspace / "memory").mkdir(parents=True)
        (workspace / "AGENTS.md").write_text("# Rules\n")
    mcporter = mcporter_command()
    store = tmp_path / "home" / ".mcporter" / "mcporter.json"

    def serve(name: str, *more: str) -> dict[str, object]:
        flags = ["--mcporter", mcporter, "--mcporter-config", str(store), *more]
        return {"command": str(MEMFUSE), "args": ["serve", "-w", str(spaces[name]), *flags]}

    config = {
        "models": stub_models(port),
        "agents": {"$include": "./agents.json5"},  # followed by OpenClaw and memfuse alike
        "mcp": {"servers": {"memfuse-home": serve("home"),
                            "memfuse-work": serve("work", "--server", "agent-memory-work")}},
    }  # fmt: skip

    def agent(name: str, other: str) -> str:
        return (
            f"{name}: {{ workspace: '{spaces[name]}', tools: {{ deny: ['memfuse-{other}__*'] }} }}"
        )

    agents = (  # JSON5, as OpenClaw's docs write it
        "{ defaults: { model: { primary: 'stub/stub-model' }, systemAgent: { agentId: 'home' } },"
        "\n  ownership: 'explicit',"  # the Gateway migrates it in only when nothing is included
        f"\n  entries: {{ {agent('home', 'work')},\n    {agent('work', 'home')}, }},\n}}\n"
    )
    phrase, words = f"NOTE-{os.getpid()}-{time.time_ns()}", "zebra accordion lighthouse"
    with running_gateway(tmp_path, config, {"agents.json5": agents}) as env:
        store.parent.mkdir(parents=True)
        entry = {**agent_memory(),
                 "env": {"AGENT_MEMORY_DB": str(tmp_path / "agent-memory.db"),
                         "AGENT_MEMORY_WORKSPACE": str(spaces["home"])}}  # fmt: skip
        store.write_text(json.dumps({"mcpServers": {"agent-memory": entry}, "imports": []}))
        done = subprocess.run(
            [str(MEMFUSE), "cron", "--format", "openclaw", "--install", "--all-agents",
             "--json"], env=env, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        ours = [j for j in jobs(env) if str(j.get("declarationKey", "")).startswith("memfuse:")]
        assert sorted(str(j.get("agentId")) for j in ours) == ["home"] * 3 + ["work"] * 3
        assert "can call mcp.servers" not in done.stdout + done.stderr  # the denies, read

        noted = turn(env, received, "home", steps(
            ("tool_search", {"query": "note memory journal"}),
            via_tool_search("memfuse-home__note", text=f"{phrase} {words} is private"),
        ))  # fmt: skip
        found, wrote = tool_results(noted)[-2:]
        assert "mcp:memfuse-home:memfuse-home__note" in found  # Tool Search offers it
        assert "memfuse-work" not in found  # and never work's server
        assert "noted at memory/" in wrote
        journals = {n: "".join(p.read_text() for p in (ws / "memory").glob("*.md"))
                    for n, ws in spaces.items()}  # fmt: skip
        assert phrase in journals["home"] and not journals["work"]

        def cli(name: str, *command: str) -> str:
            store_of = ["--server", "agent-memory-work"] if name == "work" else []
            done = subprocess.run(
                [str(MEMFUSE), *command, "-w", str(spaces[name]), *store_of, "--mcporter",
                 mcporter, "--mcporter-config", str(store)],
                env=env, capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            return done.stdout + done.stderr

        # The phrase in home's store too, not only in its journal.
        assert "1 added" in cli("home", "sync")
        tried = turn(env, received, "work", steps(
            ("tool_search", {"query": "note memory journal recall"}),
            via_tool_search("memfuse-home__note", text="WORK-INTO-HOME"),
            via_tool_search("mcp:memfuse-home:memfuse-home__recall", query=words),
            via_tool_search("memfuse-work__recall", query=words),
        ))  # fmt: skip
        search, by_name, by_id, own = tool_results(tried)[-4:]
        assert "memfuse-work__note" in search and "memfuse-home" not in search
        assert "Unknown tool id: memfuse-home__note" in by_name
        assert "Unknown tool id: mcp:memfuse-home:memfuse-home__recall" in by_id
        assert "mcp:memfuse-work:memfuse-work__recall" in own and "0 results for" in own
        assert phrase not in tried
        assert "WORK-INTO-HOME" not in "".join(
            p.read_text() for ws in spaces.values() for p in (ws / "memory").glob("*.md")
        )

        asked = turn(env, received, "home", steps(
            via_tool_search("memfuse-home__recall", query=words)
        ))  # fmt: skip
        assert phrase in tool_results(asked)[-1]

        assert phrase not in cli("work", "recall", words)
        assert f"{phrase} {words}" in (mine := cli("home", "recall", words))
        assert "rrf:store+journal" in mine  # home's store has it; work's (its own) had not
        cli("work", "surface")
        cli("home", "surface")
        assert phrase in (spaces["home"] / "RECENT.md").read_text()
        assert phrase not in (spaces["work"] / "RECENT.md").read_text()
        assert phrase not in turn(env, received, "work", "hello work")


@pytest.fixture
def webhook() -> Iterator[tuple[int, list[str]]]:
    """A loopback HTTP endpoint: its port, and the bodies posted to it."""
    import http.server
    import threading

    posted: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            posted.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode())
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], posted
    finally:
        server.shutdown()


def test_two_agents_alerts_name_the_run_and_agent_and_older_names_converge_in_place(
    tmp_path: Path, webhook: tuple[int, list[str]]
) -> None:
    """Issue 55: OpenClaw's alert says a job's name and its exit code only. Two agents' jobs
    are named by run and agent; jobs named by hash (an older memfuse) are renamed in place,
    same ids (cron.add by key keeps a name: cron.update sets it); the alert of work's failed
    sync, posted to a webhook, names work's sync and its code."""
    port, posted = webhook
    spaces = {name: tmp_path / f"{name}-ws" for name in ("home", "work")}
    for workspace in spaces.values():
        (workspace / "memory").mkdir(parents=True)
    config = {
        "agents": {"defaults": {"systemAgent": {"agentId": "home"}},
                   "entries": {name: {"workspace": str(ws)} for name, ws in spaces.items()}},
        "cron": {"failureAlert": {"mode": "webhook", "to": f"http://127.0.0.1:{port}/alert"},
                 "webhookSsrfPolicy": {"allowedHostnames": ["127.0.0.1"]}},
    }  # fmt: skip
    with running_gateway(tmp_path, config) as env:
        store_entry_for(env, spaces["home"])

        def install() -> list[str]:
            done = subprocess.run(
                [str(MEMFUSE), "cron", "--format", "openclaw", "--install", "--all-agents",
                 "--json"], env=env, capture_output=True, text=True, timeout=900, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            return [str(c) for c in json.loads(done.stdout)["data"]["changes"]]

        def ours() -> dict[str, dict[str, object]]:
            return {str(j["declarationKey"]): j for j in jobs(env)
                    if str(j.get("declarationKey", "")).startswith("memfuse:")}  # fmt: skip

        install()
        first = ours()
        names = sorted(str(j["name"]) for j in first.values())
        assert names == sorted(
            f"memfuse {run} for agent {agent}"
            for run in ("sync", "surface", "tidy") for agent in ("home", "work")
        )  # fmt: skip
        for key, job in first.items():  # as an older memfuse named them: by hash
            params = {"id": job["id"], "patch": {"name": key.removeprefix("memfuse:")}}
            subprocess.run(
                ["openclaw", "gateway", "call", "cron.update", "--json",
                 f"--params={json.dumps(params)}"], env=env, capture_output=True, text=True,
                timeout=120, check=True,
            )  # fmt: skip
        assert all(str(j["name"]).startswith("memfuse-") for j in ours().values())
        changes = install()
        again = ours()
        assert {k: j["id"] for k, j in again.items()} == {k: j["id"] for k, j in first.items()}
        assert sorted(str(j["name"]) for j in again.values()) == names
        assert sum("): updated" in c for c in changes) == 6, changes
        assert sum("already in place, unchanged" in c for c in install()) == 6

        shutil.rmtree(spaces["work"])  # work's sync now exits 66: its workspace is gone
        sync = next(j for j in again.values() if j["name"] == "memfuse sync for agent work")
        subprocess.run(
            ["openclaw", "cron", "run", "--", str(sync["id"])], env=env, capture_output=True,
            text=True, timeout=300, check=True,
        )  # fmt: skip
        for _ in range(300):  # a generous bound on the run and its post, not a timing
            if posted:
                break
            time.sleep(1)
        said = json.loads(posted[0])
        text = json.dumps(said)
        assert 'Automation \\"memfuse sync for agent work\\" failed 1 times' in text, said
        assert "command exited with code 66" in text, said
        # The cause's words are memfuse's line on stderr, kept in the job's state, never alerted.
        state = next(j for j in jobs(env) if j["id"] == sync["id"])["state"]
        assert "does not exist" in json.dumps(state) and "does not exist" not in text, state
