"""Each benchmark owns one section of a document in docs/ and replaces only that one."""

from __future__ import annotations

from pathlib import Path


def replace_section(path: Path, title: str, block: str, *, before: str | None = None) -> None:
    """Put `block` (starting with its own heading line, which begins with `title`) in place of
    the section whose heading begins with `title`, up to the next heading of the same level.
    A new section goes before the heading `before` if there is one, else at the end."""
    level = title.split(" ", 1)[0] + " "
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    block = block.strip("\n") + "\n"
    start = text.find(title)
    if start >= 0:
        end = text.find("\n" + level, start + 1)
        text = text[:start] + block + (text[end:] if end >= 0 else "")
    elif before is not None and (anchor := text.find(before)) >= 0:
        text = text[:anchor] + block + "\n" + text[anchor:]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    path.write_text(text, encoding="utf-8")
    print(f"\nupdated {path}")


def publish(
    lines: list[str], path: Path, title: str, *, write: bool, before: str | None = None
) -> None:
    """Print a benchmark's section and, when `write`, put it in place in `path`
    (`replace_section`)."""
    text = "\n".join(lines)
    print(text)
    if write:
        replace_section(path, title, text, before=before)
