"""A tool call's arguments, each checked against the bounds the tool lists."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class BadArguments(ValueError):
    """A call's arguments the tool does not take: said to the caller, who can correct them."""


def only(arguments: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    if not isinstance(arguments, Mapping):
        raise BadArguments("arguments must be an object")
    unknown = sorted(str(k)[:40] for k in arguments if k not in allowed)
    if unknown:
        raise BadArguments(
            f"no argument {', '.join(map(repr, unknown[:5]))} (it takes {', '.join(allowed)})"
        )


def text(arguments: Mapping[str, Any], name: str, longest: int) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise BadArguments(f"{name} must be a non-empty string")
    if len(value) > longest:
        raise BadArguments(f"{name} is longer than {longest} characters")
    return value.strip()


def integer(arguments: Mapping[str, Any], name: str, low: int, high: int) -> int | None:
    value = arguments.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadArguments(f"{name} must be a whole number from {low} to {high}")
    return value


def day(arguments: Mapping[str, Any], name: str) -> date | None:
    value = arguments.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not _DAY.fullmatch(value):
        raise BadArguments(f"{name} must be a date as YYYY-MM-DD")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise BadArguments(f"{name} {value!r} is not a day of the calendar") from None
