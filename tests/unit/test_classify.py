from __future__ import annotations

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from memfuse.settings import DEFAULT_EMOTION, DEFAULT_KNOWLEDGE
from memfuse.text.classify import Classifier

DEFAULT = Classifier(DEFAULT_KNOWLEDGE, DEFAULT_EMOTION)


@pytest.mark.parametrize(
    ("text", "expected", "keyword"),
    [
        ("mission accomplished", "event", None),
        ("the ruler", "event", None),
        ("mustard on the side", "event", None),
        ("missing the bus", "event", None),
        ("put on a glove", "event", None),
        ("I missed the train", "event", None),
        ("I loved it", "emotion", "loved"),
        ("we must ship", "knowledge", "must"),
        ("We MUST ship", "knowledge", "MUST"),
        ("记住：周五发版", "knowledge", "记住"),
        ("今天很开心", "emotion", "开心"),
        ("I love rules", "knowledge", "rules"),
        ("Alice prefers tea", "knowledge", "prefers"),
        ("(happy) day", "emotion", "happy"),
    ],
)
def test_default_keywords(text: str, expected: str, keyword: str | None) -> None:
    verdict = DEFAULT.classify(text)
    assert (verdict.type, verdict.keyword) == (expected, keyword)


def test_knowledge_wins_over_emotion() -> None:
    assert DEFAULT.classify("我喜欢你，好开心").type == "knowledge"


def test_custom_lists_replace_the_defaults() -> None:
    custom = Classifier(["decided"], ["yay"])
    assert custom.classify("we decided").type == "knowledge"
    assert custom.classify("we must").type == "event"


def test_classify_command_prints_type_and_keyword(tmp_path: object) -> None:
    result = CliRunner().invoke(app, ["classify", "I loved it", "-w", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stdout.strip() == "emotion (keyword 'loved')"


def test_classify_uses_keyword_lists_from_the_config_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / ".memfuse").mkdir()
    (tmp_path / ".memfuse" / "config.toml").write_text('[classify]\nemotion = ["yay"]\n')
    result = CliRunner().invoke(app, ["classify", "yay, shipped", "-w", str(tmp_path), "--json"])
    assert '"type": "emotion"' in result.stdout
