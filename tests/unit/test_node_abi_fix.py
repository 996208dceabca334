"""The rebuild a Node ABI mismatch names (issue 47) is of the package whose native module it
is, in the folder whose node_modules holds it: the innermost, as `npm install -g` lays a
package's own dependencies out under it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memfuse.settings import Settings
from memfuse.store.diagnose import abi_fix, node_abi

SAID = """Error: The module '{module}'
was compiled against a different Node.js version using
NODE_MODULE_VERSION 115. This version of Node.js requires
NODE_MODULE_VERSION 137. Please try re-compiling or re-installing
"""
GLOBAL = "/usr/local/lib/node_modules/@smyslenny/agent-memory"


@pytest.mark.parametrize(
    ("module", "rebuild"),
    [
        (  # npm install -g: the server's dependencies under its own node_modules
            f"{GLOBAL}/node_modules/better-sqlite3/build/Release/better_sqlite3.node",
            f"`npm rebuild better-sqlite3` in {GLOBAL}",
        ),
        (  # npm install --prefix (the README): hoisted beside it
            "/home/u/.local/share/agent-memory/node_modules/better-sqlite3/build/Release/x.node",
            "`npm rebuild better-sqlite3` in /home/u/.local/share/agent-memory",
        ),
        (  # a scoped native package
            "/srv/am/node_modules/@img/sharp/build/Release/sharp.node",
            "`npm rebuild @img/sharp` in /srv/am",
        ),
    ],
)
def test_the_rebuild_named_is_of_the_module_in_its_own_folder(
    tmp_path: Path, module: str, rebuild: str
) -> None:
    said = node_abi(SAID.format(module=module))
    assert said is not None
    settings = Settings(workspace=tmp_path, now=datetime(2026, 11, 29, tzinfo=UTC))
    assert rebuild in abi_fix(settings, said)
