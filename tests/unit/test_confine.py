"""Reads and writes confined to the workspace: links out, FIFOs, devices and size caps."""

from __future__ import annotations

import errno
import os
import socket
import stat
from pathlib import Path

import pytest

from memfuse import confine
from memfuse.confine import UnsafePath, WorkspaceFiles
from memfuse.state.folder import StateFolder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    return tmp_path / "ws"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "bashrc"
    target.parent.mkdir()
    target.write_text("export PATH=/usr/bin\n")
    return target


def test_atomic_write_keeps_the_old_file_on_a_full_disk(ws: Path) -> None:
    target = ws / "RECENT.md"
    target.write_text("old content\n")

    def full_disk(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        WorkspaceFiles(ws).write(target, b"new content\n", write=full_disk)
    assert target.read_text() == "old content\n"
    assert sorted(p.name for p in ws.iterdir()) == ["RECENT.md", "memory"]


@pytest.mark.parametrize("target", ["MEMORY.md", "memory/2026-01-01.md", "missing.md"])
def test_a_link_where_memfuse_writes_is_refused_even_to_a_file_inside(
    ws: Path, target: str
) -> None:
    """Issue 54: RECENT.md linked to MEMORY.md (or a journal) was written through: every fact
    of MEMORY.md gone in one surface. The link is refused by name; its target is untouched."""
    (ws / "MEMORY.md").write_text("# Memory\n- a fact of the person's\n")
    (ws / "memory" / "2026-01-01.md").write_text("- a bullet of New Year's day\n")
    link = ws / "RECENT.md"
    link.symlink_to(target)
    before = {p: p.read_bytes() for p in (ws / "MEMORY.md", ws / "memory" / "2026-01-01.md")}
    with pytest.raises(UnsafePath, match=r"RECENT\.md is a symbolic link"):
        WorkspaceFiles(ws).write(link, b"new\n")
    with pytest.raises(UnsafePath, match=r"RECENT\.md is a symbolic link"):
        WorkspaceFiles(ws).read(link, own=True)
    assert link.is_symlink() and os.readlink(link) == target
    assert {p: p.read_bytes() for p in before} == before
    assert not (ws / "missing.md").exists()


def test_a_hard_link_where_memfuse_writes_is_refused_by_name(ws: Path) -> None:
    (ws / "MEMORY.md").write_text("# Memory\n- a fact\n")
    os.link(ws / "MEMORY.md", ws / "RECENT.md")
    with pytest.raises(UnsafePath, match=r"RECENT\.md has 2 hard links"):
        WorkspaceFiles(ws).write(ws / "RECENT.md", b"new\n")
    with pytest.raises(UnsafePath, match=r"RECENT\.md has 2 hard links"):
        WorkspaceFiles(ws).read(ws / "RECENT.md", own=True)
    assert (ws / "MEMORY.md").read_text() == "# Memory\n- a fact\n"
    assert os.stat(ws / "MEMORY.md").st_nlink == 2


def test_a_link_swapped_in_after_the_check_is_never_read_or_written_through(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name is checked, then made a link to MEMORY.md before it is opened: the read opens
    it O_NOFOLLOW, and the write's rename replaces the link itself, never its target."""
    memory_md = ws / "MEMORY.md"
    memory_md.write_text("# Memory\n- a fact\n")
    recent = ws / "RECENT.md"
    recent.write_text("old\n")
    real_inside = confine.inside

    def swap_after_check(root: Path, path: Path, **options: bool) -> Path:
        checked = real_inside(root, path, **options)
        if recent.exists() and not recent.is_symlink():
            recent.unlink()
            recent.symlink_to("MEMORY.md")
        return checked

    monkeypatch.setattr(confine, "inside", swap_after_check)
    with pytest.raises(UnsafePath, match="symbolic link"):
        WorkspaceFiles(ws).read(recent, own=True)
    recent.unlink()
    recent.write_text("old\n")

    def swap_while_writing(fd: int, data: bytes) -> int:
        if not recent.is_symlink():
            recent.unlink()
            recent.symlink_to("MEMORY.md")
        return os.write(fd, data)

    monkeypatch.setattr(confine, "inside", real_inside)
    WorkspaceFiles(ws).write(recent, b"new\n", write=swap_while_writing)
    assert memory_md.read_text() == "# Memory\n- a fact\n"
    assert not recent.is_symlink() and recent.read_text() == "new\n"


def test_a_link_out_of_the_workspace_is_refused_and_its_target_untouched(
    ws: Path, outside: Path
) -> None:
    (ws / "RECENT.md").symlink_to(outside)
    with pytest.raises(UnsafePath, match="symbolic link"):
        WorkspaceFiles(ws).write(ws / "RECENT.md", b"rm -rf ~\n")
    assert outside.read_text() == "export PATH=/usr/bin\n"
    assert sorted(p.name for p in outside.parent.iterdir()) == ["bashrc"]


def test_a_linked_folder_out_of_the_workspace_is_refused(ws: Path, outside: Path) -> None:
    (ws / "memory" / "archive").symlink_to(outside.parent)
    with pytest.raises(UnsafePath):
        WorkspaceFiles(ws).write(ws / "memory" / "archive" / "MEMORY.md.bak", b"x")
    with pytest.raises(UnsafePath):
        WorkspaceFiles(ws).write(
            ws / "memory" / "archive" / "new" / "x.md", b"x", create_parents=True
        )
    assert sorted(p.name for p in outside.parent.iterdir()) == ["bashrc"]


def test_a_folder_swapped_for_a_link_after_the_check_is_caught_once_open(
    ws: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race a check-then-write loses: the name is checked, then replaced by a link.
    weekly = ws / "memory" / "weekly"
    weekly.mkdir()
    real_inside = confine.inside

    checks: list[Path] = []

    def swap_after_check(root: Path, path: Path, **options: bool) -> Path:
        checked = real_inside(root, path, **options)
        checks.append(path)
        if checks.count(weekly) == 2:  # open_folder's check passes, then the name is swapped
            weekly.rmdir()
            weekly.symlink_to(outside.parent)
        return checked

    monkeypatch.setattr(confine, "inside", swap_after_check)
    with pytest.raises(UnsafePath, match="moved outside"):
        WorkspaceFiles(ws).write(weekly / "2026-02-23.md", b"x")
    assert sorted(p.name for p in outside.parent.iterdir()) == ["bashrc"]


def test_reading_a_fifo_never_blocks(ws: Path) -> None:
    fifo = ws / "memory" / "2026-02-28.md"
    os.mkfifo(fifo)
    with pytest.raises(UnsafePath, match="FIFO"):
        WorkspaceFiles(ws).read(fifo)


def test_reading_a_socket_is_refused(tmp_path: Path) -> None:
    short = Path("/tmp") / f"mf-{os.getpid()}"  # AF_UNIX paths are short
    (short / "memory").mkdir(parents=True, exist_ok=True)
    path = short / "memory" / "2026-02-28.md"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(UnsafePath, match="socket"):
            WorkspaceFiles(short).read(path)
    finally:
        server.close()
        path.unlink()
        (short / "memory").rmdir()
        short.rmdir()


def test_a_link_to_a_device_or_outside_file_is_not_read(ws: Path, outside: Path) -> None:
    zero = ws / "memory" / "2026-02-27.md"
    zero.symlink_to("/dev/zero")
    with pytest.raises(UnsafePath, match="outside the workspace"):
        WorkspaceFiles(ws).read(zero)
    secret = ws / "memory" / "2026-02-26.md"
    secret.symlink_to(outside)
    with pytest.raises(UnsafePath, match="outside the workspace"):
        WorkspaceFiles(ws).read(secret)


def test_a_file_above_the_cap_is_refused_naming_the_limit(ws: Path) -> None:
    big = ws / "memory" / "2026-02-28.md"
    with big.open("wb") as out:
        out.truncate(3 * 1024 * 1024)  # sparse: costs no disk
    with pytest.raises(UnsafePath, match="above the 2 MiB read limit"):
        WorkspaceFiles(ws, read_cap=2 * 1024 * 1024).read(big)
    assert WorkspaceFiles(ws, read_cap=4 * 1024 * 1024).read(big) == bytes(3 * 1024 * 1024)


def test_a_directory_under_a_journal_name_is_refused(ws: Path) -> None:
    (ws / "memory" / "2026-02-28.md").mkdir()
    with pytest.raises(UnsafePath, match="a directory"):
        WorkspaceFiles(ws).read(ws / "memory" / "2026-02-28.md")


def test_a_missing_file_is_file_not_found(ws: Path) -> None:
    with pytest.raises(FileNotFoundError):
        WorkspaceFiles(ws).read(ws / "MEMORY.md")


def test_move_into_never_overwrites_and_moves_a_link_as_a_link(ws: Path, outside: Path) -> None:
    files = WorkspaceFiles(ws)
    daily = ws / "memory" / "2026-02-01.md"
    daily.write_text("- one\n")
    (ws / "memory" / "archive").mkdir()
    (ws / "memory" / "archive" / "2026-02-01.md").write_text("earlier\n")
    moved = files.move_into(daily, ws / "memory" / "archive")
    assert moved.name == "2026-02-01.1.md"
    assert moved.read_text() == "- one\n"
    assert (ws / "memory" / "archive" / "2026-02-01.md").read_text() == "earlier\n"
    assert outside.read_text() == "export PATH=/usr/bin\n"


def test_state_dir_is_created_private_and_tightened(ws: Path) -> None:
    path = StateFolder(ws / ".memfuse").ensure()
    assert stat.S_IMODE(path.stat().st_mode) == 0o700
    os.chmod(path, 0o755)
    StateFolder(ws / ".memfuse").ensure()
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_state_dir_that_is_a_link_is_refused(ws: Path, outside: Path) -> None:
    (ws / ".memfuse").symlink_to(outside.parent)
    with pytest.raises(UnsafePath, match="symbolic link"):
        StateFolder(ws / ".memfuse").ensure()


def test_state_dir_of_another_user_is_refused(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    StateFolder(ws / ".memfuse").ensure()
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    with pytest.raises(UnsafePath, match="another user"):
        StateFolder(ws / ".memfuse").ensure()


def test_private_files_are_0600_and_never_opened_through_a_link(ws: Path, outside: Path) -> None:
    folder = StateFolder(ws / ".memfuse")
    state = folder.ensure()
    os.close(folder.open("lock", os.O_RDWR))
    assert stat.S_IMODE((state / "lock").stat().st_mode) == 0o600
    (state / "memfuse.log").symlink_to(outside)
    with pytest.raises(UnsafePath, match="symbolic link"):
        folder.open("memfuse.log", os.O_WRONLY | os.O_APPEND)
    os.mkfifo(state / "history.jsonl")
    with pytest.raises(UnsafePath, match="FIFO"):
        folder.open("history.jsonl", os.O_WRONLY | os.O_APPEND)
    os.link(outside, state / "runs.json")
    with pytest.raises(UnsafePath, match="hard links"):
        folder.open("runs.json", os.O_WRONLY | os.O_APPEND)
    assert outside.read_text() == "export PATH=/usr/bin\n"
