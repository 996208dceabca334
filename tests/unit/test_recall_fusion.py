"""How recall by words and by meaning make one order (memfuse.recall.meaning, issue 49): a Chinese
question's words count for what it shares with a bullet beyond one everyday character; the first
result is the words' where they find the question's terms; a day that holds the question's
other candidates lifts its own."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memfuse.recall import vectors
from memfuse.recall.index import RecallIndex
from memfuse.recall.meaning import DAY_WEIGHT, with_day, with_meaning
from memfuse.recall.terms import full_match
from memfuse.state.folder import StateFolder
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Workspace
from tests.fakes import FakeEmbedder

pytest.importorskip("numpy")  # the vectors' arithmetic, as with the `semantic` extra

DAY = date(2026, 11, 29)
# Days of other bullets, so that a term is as rare in the index as in a journal of weeks.
OTHER_DAYS = (
    "Went to the post office to send a parcel", "Paid the electricity bill online",
    "Tried a new ramen place downtown", "Fixed the leaking kitchen tap",
    "Read two chapters of a mystery novel", "Called the bank about a card fee",
    "楼下新开了一家面包店", "下午开会讨论季度预算", "晚上看了一部老电影",
    "把阳台上的花浇了水", "给车换了机油", "学了二十分钟吉他",
    "Cleaned the windows in the living room", "Ordered a new desk lamp",
    "Walked the dog in the park at noon", "Backed up the laptop to the external drive",
    "Met Jonas for coffee at the station", "Sorted the recycling",
    "中午吃了一碗牛肉面", "整理了书架上的旧杂志", "去超市买了水果和牛奶",
    "晚饭后散步半小时", "写完了周报", "约了周六理发",
)  # fmt: skip


class Pointing(FakeEmbedder):
    """A model for which the question means exactly `meant` and nothing else: every other text
    points its own way, far from both."""

    def __init__(self, question: str, meant: str) -> None:
        super().__init__()
        self.question, self.meant = question, meant

    def embed(self, texts: Any, *, question: bool = False) -> Any:
        import numpy as np

        from memfuse.recall.semantic import quantize

        rows = np.zeros((len(texts), 64), dtype=np.float32)
        for n, text in enumerate(texts):
            if text in (self.question, self.meant):
                rows[n, 0] = 1.0
            else:
                rows[n, 1 + hashlib.blake2b(text.encode(), digest_size=2).digest()[0] % 63] = 1.0
        return quantize(rows)


def first_of(tmp_path: Path, journal: str, question: str, model: FakeEmbedder) -> list[str]:
    """The fused local order of a question over `journal` (the day's) and the other days."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / f"{DAY}.md").write_text(journal)
    for n in range(4):
        bullets = "".join(f"- {t}\n" for t in OTHER_DAYS[n * 6 : (n + 1) * 6])
        (ws / "memory" / f"2026-11-2{n}.md").write_text("## 09:00\n" + bullets)
    state = StateFolder(tmp_path / "state")
    index = RecallIndex(state)
    try:
        index.refresh(
            Workspace(ws, state.path),
            Classifier((), ()),
            print,
            model,
            vectors.EmbedBudget(1000, 60.0),
        )
        words = index.search(question, 50, DAY)
        return [hit.content for hit, _found in with_meaning(index, model, question, words, print)]
    finally:
        index.close()


NEIGHBOURS = (
    "## 08:00\n- 早上给妈妈打了电话，她让我多做运动\n- 包了一盘饺子送给隔壁王阿姨\n"
    "- 今天下雨，在家看书\n- 周末去爬山，风景很好\n- 修好了自行车的刹车\n- 买了新的跑步鞋\n"
)

# Each character of the question about the neighbour stands for one of the answer's.
NEIGHBOUR_SYNONYMS = {
    "邻": "隔",
    "居": "壁",
    "菜": "饺",
    "感": "送",
    "谢": "阿",
    "表": "姨",
    "示": "包",
}


def test_a_chinese_question_is_not_answered_first_by_one_shared_everyday_character(
    tmp_path: Path,
) -> None:
    # The words' best shares 做 with the question and nothing else; the model says the
    # dumplings for the neighbour are what it asks about (each character of the question
    # stands for one of the answer's).
    model = FakeEmbedder(synonyms=NEIGHBOUR_SYNONYMS)
    order = first_of(tmp_path, NEIGHBOURS, "给邻居做了什么菜表示感谢", model)
    assert order[0] == "包了一盘饺子送给隔壁王阿姨"
    assert "早上给妈妈打了电话，她让我多做运动" in order[:3]


def test_a_chinese_question_that_shares_its_words_with_a_bullet_still_finds_it_first(
    tmp_path: Path,
) -> None:
    question = "韭菜饺子送给了谁"
    journal = NEIGHBOURS.replace("一盘饺子", "一盘韭菜饺子")
    model = Pointing(question, meant="周末去爬山，风景很好")
    order = first_of(tmp_path, journal, question, model)
    assert order[0] == "包了一盘韭菜饺子送给隔壁王阿姨"
    assert "周末去爬山，风景很好" in order[:3]


CHOIR = """## 08:00
- Caroline joined the choir rehearsals at the town hall
- Watered the plants on the balcony
- Booked the dentist for Thursday
## 12:00
- Bought a new kettle
- Finished the quarterly report
## 20:00
- Took the bins out
- Caroline said the choir rehearsals were cancelled this week, so she sang at home alone
"""


def test_the_bullet_that_holds_the_questions_terms_stays_first_over_the_closest_in_meaning(
    tmp_path: Path,
) -> None:
    # The words' best holds every term of the question; the bullet the model finds closest
    # holds three of its four. Meaning brings the second up to second place, not over it.
    question = "When did Caroline join the choir rehearsals?"
    closest = (
        "Caroline said the choir rehearsals were cancelled this week, so she sang at home alone"
    )
    order = first_of(tmp_path, CHOIR, question, Pointing(question, closest))
    assert order[:2] == ["Caroline joined the choir rehearsals at the town hall", closest]


TEETH = """## 08:30
- The dentist found a cavity in my back molar; the filling is booked for December 3.
- Mia lost her first tooth at breakfast and put it under her pillow.
- Switched our home internet to a fibre plan.
## 19:00
- Cooked a mushroom risotto; it needed more salt.
- Read half a novel on the train.
"""


def test_a_shared_everyday_word_does_not_override_a_model_that_is_sure(tmp_path: Path) -> None:
    # The words' best shares "tooth" with the question and nothing else (a quarter of what a
    # bullet holding its terms would score); the model is sure of the dentist's bullet (issue
    # 56): the words found little of the question, and meaning leads.
    question = "when do I get the hole in my aching tooth fixed?"
    dentist = "The dentist found a cavity in my back molar; the filling is booked for December 3."
    order = first_of(tmp_path, TEETH, question, Pointing(question, dentist))
    assert order[0] == dentist
    assert order[1] == "Mia lost her first tooth at breakfast and put it under her pillow."


def test_a_day_that_holds_the_questions_other_candidates_lifts_its_own() -> None:
    score = {1: 1.0, 2: 0.9, 3: 0.8, 4: 0.7}
    day = {1: "2026-11-01", 2: "2026-11-02", 3: "2026-11-02", 4: "2026-11-02"}
    lifted = with_day(score, day)
    assert lifted[2] > lifted[1]  # a lone best passed by the first of a day of three
    assert lifted[2] == pytest.approx(0.9 + DAY_WEIGHT)
    assert lifted[1] == pytest.approx(1.0 + DAY_WEIGHT * 1.0 / 2.4)
    assert with_day({1: 0.0}, {1: "MEMORY.md:3"}) == {1: 0.0}  # nothing to lift by


def test_a_full_match_counts_every_term_of_the_question_a_term_no_row_holds_the_rarest() -> None:
    rows = {"做": 40, "饺子": 1}
    every = full_match(["做", "饺子", "邻居"], rows, 100)
    rarest = full_match(["邻居"], rows, 100)
    assert every == pytest.approx(sum(full_match([t], rows, 100) for t in ("做", "饺子", "邻居")))
    assert rarest > full_match(["饺子"], rows, 100) > full_match(["做"], rows, 100) > 0
    assert full_match(["做", "做"], rows, 100) == full_match(["做"], rows, 100)
    assert full_match(["的"], {"的": 90}, 100) == pytest.approx(1e-6)  # held by most rows


def test_memfuse_recall_answers_a_chinese_paraphrase_with_its_note_first(world: Any) -> None:
    # The whole command, the store included: the synced copy of the one-character match does
    # not bring it back to the top.
    world.embedder = FakeEmbedder(synonyms=NEIGHBOUR_SYNONYMS)
    world.journal(str(DAY), NEIGHBOURS)
    for n in range(4):
        bullets = "".join(f"- {t}\n" for t in OTHER_DAYS[n * 6 : (n + 1) * 6])
        world.journal(f"2026-11-2{n}", "## 09:00\n" + bullets)
    now = f"{DAY}T22:00"
    assert world.run("sync", "--now", now).code == 0
    out = world.json("recall", "给邻居做了什么菜表示感谢", "--now", now)
    assert out.code == 0
    first = out.data["results"][0]
    assert first["content"] == "包了一盘饺子送给隔壁王阿姨"
    assert first["location"] == f"memory/{DAY}.md:3"


def test_a_full_match_over_counts_read_apart_from_their_total_is_a_score() -> None:
    """Review of issue 49: `full_match_in` reads the terms' counts and the rows' total in two
    statements; a refresh dropping a file between them left a term held by more rows than the
    total, and the log of a negative number failed the question (ValueError)."""
    score = full_match(["做", "饺子"], {"做": 9, "饺子": 2}, 5)
    assert score == pytest.approx(full_match(["做", "饺子"], {"做": 5, "饺子": 2}, 5))
    assert full_match(["做"], {"做": 3}, 0) == pytest.approx(1e-6)


class Cosines(FakeEmbedder):
    """A model whose question has the cosine `meant[text]` with each text named there and 0
    with every other (each points its own way, far from the question and the named)."""

    def __init__(self, question: str, meant: dict[str, float]) -> None:
        super().__init__()
        self.question, self.meant = question, meant

    def embed(self, texts: Any, *, question: bool = False) -> Any:
        import numpy as np

        from memfuse.recall.semantic import quantize

        rows = np.zeros((len(texts), 64), dtype=np.float32)
        for n, text in enumerate(texts):
            cos = self.meant.get(text)
            if text == self.question:
                rows[n, 0] = 1.0
            elif cos is None:
                rows[n, 16 + hashlib.blake2b(text.encode(), digest_size=2).digest()[0] % 48] = 1
            else:  # its own dimension among the first 16, past the question's
                rows[n, 0], rows[n, 1 + list(self.meant).index(text) % 15] = (
                    cos,
                    (1 - cos**2) ** 0.5,
                )
        return quantize(rows)


RUN = """## 08:00
- Repainted the garden shed green
- Sorted the winter clothes into boxes
- Repainted the garden fence white
- Went for an evening walk with Anna
- 晚上跑步五公里，膝盖有点疼
- 给车换了新的雨刷
"""


def test_a_question_across_languages_is_answered_first_by_the_cosine_that_stands_clear(
    tmp_path: Path,
) -> None:
    # Issue 56: fusion at least as good as its parts. The English question's answer is a Chinese
    # bullet, which its words cannot see; the words' best shares one everyday word ("evening") of
    # the question's six. The model's cosine ranks the answer first, clear of the next; its
    # closeness (with the neighbour's, decision 370) ranks the boxes between two sheds higher,
    # and not clear of them, so main answered with the evening walk. Where the words found
    # little, the first is the cosine's (decision 890).
    question = "How did my knee feel after the long evening run by the river?"
    answer = "晚上跑步五公里，膝盖有点疼"
    model = Cosines(question, {
        answer: 0.9, "Repainted the garden shed green": 0.7,
        "Sorted the winter clothes into boxes": 0.6, "Repainted the garden fence white": 0.7,
    })  # fmt: skip
    order = first_of(tmp_path, RUN, question, model)
    assert order[0] == answer


def test_a_cosine_barely_ahead_does_not_take_the_first_from_the_words(tmp_path: Path) -> None:
    # The same question: the answer's cosine is barely above the sheds' (0.72 against 0.7); the
    # words found one term in six, so the model must stand clearer than that to choose the first.
    question = "How did my knee feel after the long evening run by the river?"
    model = Cosines(question, {
        "晚上跑步五公里，膝盖有点疼": 0.72, "Repainted the garden shed green": 0.7,
        "Sorted the winter clothes into boxes": 0.6, "Repainted the garden fence white": 0.7,
    })  # fmt: skip
    order = first_of(tmp_path, RUN, question, model)
    assert order[0] == "Went for an evening walk with Anna"
