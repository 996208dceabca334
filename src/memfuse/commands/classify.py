"""`memfuse classify`: the type a bullet would get, and the keyword that decided it."""

from __future__ import annotations

from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult


def run(ctx: RunContext, text: str) -> CommandResult:
    verdict = ctx.classifier.classify(text)
    data = {"type": verdict.type, "keyword": verdict.keyword, "text": text}
    return CommandResult("classify", data, (verdict.explain(),))
