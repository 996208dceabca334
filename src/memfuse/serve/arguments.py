"""A tool's arguments, each declared once (`Arg`): the JSON schema the client lists, and the
reading of a call's value against the same bounds. `schema(ARGS)` is a tool's input schema,
`read(arguments, ARGS)` a call's values (BadArguments, said to the caller, when it cannot)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

_DAY = "[0-9]{4}-[0-9]{2}-[0-9]{2}"


class BadArguments(ValueError):
    """A call's arguments the tool does not take: said to the caller, who can correct them."""


@dataclass(frozen=True)
class Arg:
    name: str
    schema: Mapping[str, Any]
    read: Callable[[Any], Any]  # the call's value (None when absent) → the tool's
    required: bool = False


def schema(args: Sequence[Arg]) -> dict[str, Any]:
    """The input schema of a tool taking exactly these arguments."""
    required = [a.name for a in args if a.required]
    return {
        "type": "object", "properties": {a.name: dict(a.schema) for a in args},
        **({"required": required} if required else {}), "additionalProperties": False,
    }  # fmt: skip


def read(arguments: Mapping[str, Any], args: Sequence[Arg]) -> dict[str, Any]:
    """Each argument's value, read in the order declared; one not declared is refused."""
    if not isinstance(arguments, Mapping):
        raise BadArguments("arguments must be an object")
    allowed = [a.name for a in args]
    unknown = sorted(str(k)[:40] for k in arguments if k not in allowed)
    if unknown:
        raise BadArguments(
            f"no argument {', '.join(map(repr, unknown[:5]))} (it takes {', '.join(allowed)})"
        )
    return {a.name: a.read(arguments.get(a.name)) for a in args}


def text(name: str, longest: int, description: str | None = None) -> Arg:
    """A required, non-empty string of at most `longest` characters, read stripped."""

    def value(given: Any) -> str:
        if not isinstance(given, str) or not given.strip():
            raise BadArguments(f"{name} must be a non-empty string")
        if len(given) > longest:
            raise BadArguments(f"{name} is longer than {longest} characters")
        return given.strip()

    shown = {"type": "string", "minLength": 1, "maxLength": longest, **_told(description)}
    return Arg(name, shown, value, required=True)


def whole(
    name: str, low: int, high: int, description: str | None = None, default: int | None = None
) -> Arg:
    """A whole number from `low` to `high` (5.0 counts as 5), or `default` when absent."""

    def value(given: Any) -> int | None:
        if given is None:
            return default
        if isinstance(given, float) and given.is_integer():
            given = int(given)
        if isinstance(given, bool) or not isinstance(given, int) or not low <= given <= high:
            raise BadArguments(f"{name} must be a whole number from {low} to {high}")
        return given

    shown = {"type": "integer", "minimum": low, "maximum": high, **_told(description)}
    shown |= {} if default is None else {"default": default}
    return Arg(name, shown, value)


def day(name: str, description: str) -> Arg:
    """A day of the calendar as YYYY-MM-DD, or None."""

    def value(given: Any) -> date | None:
        if given is None:
            return None
        if not isinstance(given, str) or not re.fullmatch(_DAY, given):
            raise BadArguments(f"{name} must be a date as YYYY-MM-DD")
        try:
            return date.fromisoformat(given)
        except ValueError:
            raise BadArguments(f"{name} {given!r} is not a day of the calendar") from None

    return Arg(name, {"type": "string", "pattern": f"^{_DAY}$", **_told(description)}, value)


def some_of(name: str, choices: tuple[str, ...]) -> Arg:
    """A list of some of `choices`; empty when absent."""

    def value(given: Any) -> tuple[str, ...]:
        given = [] if given is None else given  # "" or 0 is a mistake, not "every type"
        fits = isinstance(given, list) and len(given) <= len(choices)
        if not fits or not all(isinstance(g, str) and g in choices for g in given):
            raise BadArguments(f"{name} must be a list of {', '.join(choices)}")
        return tuple(given)

    shown = {"type": "array", "items": {"enum": list(choices)}, "maxItems": len(choices)}
    return Arg(name, shown, value)


def _told(description: str | None) -> dict[str, str]:
    return {} if description is None else {"description": description}
