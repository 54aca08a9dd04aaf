from __future__ import annotations

import pytest

from memory.recall.asked_of import asked_of, role_of
from memory.recall.ranking import RankingWeights
from memory.recall.representation import indexed_memory
from memory.recall.retrieval import UserIndex
from memory.types import NewMemory
from tests.unit._index_helpers import NOW, filler, memory, unit


@pytest.mark.parametrize(
    ("query", "role"),
    [
        ("What was my previous occupation?", "user"),
        ("how many fun runs did I miss in March", "user"),
        ("Which web framework does our backend use?", "user"),
        ("我女儿多大了？", "user"),
        ("咱家的猫叫什么", "user"),
        ("What did you recommend for my trip to Kyoto?", "assistant"),
        ("In our previous chat, you suggested a few alternative terms. Which?", "assistant"),
        ("Can you remind me of the book you previously mentioned?", "assistant"),
        ("what was your advice on the shin splints", "assistant"),
        ("你上次推荐的那本书叫什么？", "assistant"),
        ("您之前建议我每天跑多久？", "assistant"),
        # The user telling the assistant: "you" is the object, the words are the user's.
        ("我跟你说过我女儿叫什么吗？", "user"),
        ("我之前告诉你我住在哪里了吗", "user"),
        ("Did I tell you where my sister lives?", "user"),
        ("Can you tell me what I said about the budget?", "user"),
        # Refers back to the chat without saying whose words: either side may hold it.
        ("I'm checking our previous chat about the rota. Can you remind me who was on Sunday?",
         None),
        ("我们之前的对话里提到的那个网站是什么？", None),
        # Neither person: nothing to go by.
        ("Which seeds were started first, the tomatoes or the marigolds?", None),
        ("Where does Anna live?", None),
        # A dialogue so far is judged by the turn that asks, its last line.
        ("user: you said the museum opens at nine\nassistant: yes\nuser: where is my ticket?",
         "user"),
        ("我的票在哪里？\n你上次推荐的那家店叫什么？", "assistant"),
    ],
)  # fmt: skip
def test_whose_words_a_question_asks_about(query: str, role: str | None) -> None:
    assert asked_of(query) == role


def test_a_recorded_role_is_user_or_assistant_and_nothing_else() -> None:
    assert (role_of("user"), role_of("assistant")) == ("user", "assistant")
    assert role_of("system") is None and role_of(None) is None and role_of(["user"]) is None


def _chat() -> UserIndex:
    """The user's one sentence and the assistant's reply that repeats the topic's words."""
    index = UserIndex()
    index.upsert([
        *filler(30),
        memory("said", "I was a marketing specialist at a startup before this job",
               vector=unit(1), role="user"),
        memory("reply", "As a marketing specialist in a new role, Trello boards per campaign "
               "keep a role's work visible", vector=unit(1), role="assistant"),
    ])  # fmt: skip
    return index


def _first(index: UserIndex, query: str, weights: RankingWeights) -> str:
    return index.search(query, unit(1), k=2, now=NOW, weights=weights)[0][0]


def test_a_first_person_question_prefers_the_users_words_and_you_the_assistants() -> None:
    index, on, off = _chat(), RankingWeights(), RankingWeights(role=0.0)
    assert _first(index, "marketing specialist role with Trello", off) == "reply"
    assert _first(index, "What was my role, marketing specialist with Trello?", on) == "said"
    assert _first(index, "What did you suggest about the marketing specialist role?", on) == (
        "reply"
    )
    # The lift is in the lexical term, where `why` shows it.
    query = "my marketing specialist role with Trello?"
    hits = dict(index.search(query, unit(1), k=2, now=NOW, weights=on))
    off_hits = dict(index.search(query, unit(1), k=2, now=NOW, weights=off))
    assert hits["said"].lexical > off_hits["said"].lexical
    assert hits["reply"].lexical == pytest.approx(off_hits["reply"].lexical)


def test_memories_without_a_role_are_not_left_behind() -> None:
    # Written before roles were recorded (or by a path that records none): lifted with the
    # user's, so a store that mixes old and new rows ranks them on their words.
    index = UserIndex()
    said = "my sister lives in Lyon"
    index.upsert([memory("old", said, vector=unit(2)),
                  memory("new", said, vector=unit(2), role="user")])  # fmt: skip
    hits = dict(index.search("where does my sister live?", unit(2), k=2, now=NOW,
                             weights=RankingWeights(beta=0.0)))  # fmt: skip
    assert hits["old"].total == pytest.approx(hits["new"].total)


def test_the_role_comes_from_provenance() -> None:
    mem = NewMemory(content="I adopted a cat", provenance={"role": "assistant"})
    assert indexed_memory("m", mem, unit(1), now=NOW).role == "assistant"
    forged = NewMemory(content="I adopted a cat", provenance={"role": "system"})
    assert indexed_memory("m", forged, unit(1), now=NOW).role is None


def test_a_question_about_a_side_that_said_nothing_lifts_nothing() -> None:
    # The agent's own store: every row the user's, some older ones without a role. "What did
    # you recommend?" has no assistant's words to find, and the user's rows keep their places.
    index = UserIndex()
    said = "my knee hurts after running"
    index.upsert([memory("old", said, vector=unit(2)),
                  memory("new", said, vector=unit(2), role="user")])  # fmt: skip
    hits = dict(index.search("what did you recommend for my knee after running?", unit(2), k=2,
                             now=NOW, weights=RankingWeights(beta=0.0)))  # fmt: skip
    assert hits["old"].total == pytest.approx(hits["new"].total)


_JUDGMENT = (
    "In our view the Tribunal erred: the occupation certificate was issued after the previous "
    "owner's works were handed over, and we would grant leave to appeal on this ground. "
) * 3


def test_a_long_user_message_that_never_says_i_is_a_document() -> None:
    assert role_of("user", _JUDGMENT) == "document"  # a court's "we" is no speaker's own
    assert role_of("user", _JUDGMENT + "I need a summary of this.") == "user"
    assert role_of("user", "Previous occupation: nurse.") == "user"  # short: the user's note
    assert role_of("assistant", _JUDGMENT) == "assistant"
    zh = "本合同自双方签字之日起生效，租期两年，租金按季度支付，逾期按日加收滞纳金。" * 12
    assert len(zh) >= 400
    assert (role_of("user", zh), role_of("user", zh + "我们要签吗？")) == ("document", "user")


def test_a_pasted_document_is_not_lifted_as_the_users_words() -> None:
    # "What was my previous occupation?": the pasted judgment shares the question's words; the
    # user's own sentence is what answers.
    def index(paste_role: str) -> UserIndex:
        built = UserIndex()
        built.upsert([
            *filler(30),
            memory("said", "I worked as a nurse in my previous job", vector=unit(1),
                   role="user"),
            memory("paste", _JUDGMENT, vector=unit(1), role=paste_role),
            memory("reply", "A previous occupation can be listed on the form", vector=unit(1),
                   role="assistant"),
        ])  # fmt: skip
        return built

    query = "What was my previous occupation?"
    assert _first(index("user"), query, RankingWeights()) == "paste"
    assert _first(index("document"), query, RankingWeights()) == "said"
