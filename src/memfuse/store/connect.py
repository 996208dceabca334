"""From settings to a gateway: which transport a run uses, and the gateway built for it.

The only place where memfuse's settings meet the gateway package (which knows nothing of them).
Every process memfuse starts for the store runs in a folder memfuse chose, never the workspace
(docs/security.md).
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Callable
from typing import TextIO

from memfuse.confine import within
from memfuse.errors import ConfigError
from memfuse.settings import Settings
from memfuse.store.gateway import Gateway, McporterGateway, ServerSpec
from memfuse.store.server_entry import server_spec

Server = ServerSpec | ConfigError  # the server's entry, or why it cannot be read


def find_server(settings: Settings) -> Server:
    """The server's entry, read once for the run: its spec, or the reason there is none."""
    try:
        return server_spec(settings)
    except ConfigError as exc:
        return exc


def choose_transport(settings: Settings, server: Server) -> tuple[str, str]:
    """The transport a run uses, and why. `auto` takes the session transport (one server
    process per run) whenever it can start the server itself (a stdio entry and the MCP SDK);
    anything else goes through mcporter, which knows every kind of entry."""
    if settings.transport != "auto":
        return settings.transport, f"--transport {settings.transport}"
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return "mcporter", "auto: the MCP SDK (the `mcp` package) is not installed"
    if isinstance(server, ConfigError):
        return "mcporter", f"auto: no stdio server entry memfuse can start ({server})"
    return "session", f"auto: {settings.server} is a stdio server ({server.command})"


def connect(
    settings: Settings, server: Server, server_log: Callable[[], TextIO] | None = None
) -> tuple[Gateway, str]:
    """The transport the settings ask for, and why it was chosen (`server_log`: where the
    stderr of a server the session transport starts is kept)."""
    if isinstance(server, ServerSpec):
        server = placed(server, settings)
    transport, why = choose_transport(settings, server)
    if transport == "session":
        from memfuse.store.gateway.session import SessionGateway

        if isinstance(server, ConfigError):
            raise server
        return SessionGateway(server, settings.timeout, server_log, name=settings.server), why
    return McporterGateway(
        _absolute_program(settings.mcporter),
        settings.server,
        config=settings.mcporter_config,
        timeout=settings.timeout,
        cwd=server_folder(settings),
    ), why


def server_folder(settings: Settings) -> str:
    """The working folder of every process memfuse starts for the store: the state folder;
    `/` when it does not exist yet or lies inside the workspace (`--state-dir` there)."""
    state, top = settings.state_dir, os.path.realpath(settings.workspace)
    if state is not None and state.is_dir() and not within(top, os.path.realpath(state)):
        return str(state)
    return "/"


def placed(server: ServerSpec, settings: Settings) -> ServerSpec:
    """The server's entry with the working folder it will run in (its own `cwd`, else the
    server folder); ConfigError when that lies inside the workspace (the agent's files)."""
    cwd = server.cwd or server_folder(settings)
    if within(os.path.realpath(settings.workspace), os.path.realpath(cwd)):
        raise ConfigError(
            f"the store's server would run in {cwd}, inside the workspace {settings.workspace}:"
            " a server started there may load the agent's files (python -m imports them); give"
            " it a cwd outside the workspace"
        )
    return dataclasses.replace(server, cwd=cwd)


def _absolute_program(command: str) -> str:
    """`command` with a relative program path made absolute: mcporter runs in the server
    folder, where `./bin/mcporter` would name another file."""
    argv = shlex.split(command)
    if argv and "/" in argv[0] and not os.path.isabs(argv[0]):
        return shlex.join([os.path.abspath(argv[0]), *argv[1:]])
    return command
