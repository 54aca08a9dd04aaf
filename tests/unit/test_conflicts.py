"""Conflict policy: duplicates, paraphrases, contradictions, lists, pins, and strategies.

Similarities come from the real all-MiniLM-L6-v2 embedder, as the storage layer would pass them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.gating.conflicts import Candidate, Existing, Resolution, Strategy, resolve
from memory.gating.conflicts.frames import analyse
from memory.gating.gate import gate
from memory.storage.embedding import Embedder, get_embedder
from memory.types import Category, Origin
from tests.support.ports import REPO_ROOT as REPO

T0 = datetime(2025, 3, 1, tzinfo=UTC)
PREF = Category.PREFERENCE


@pytest.fixture(scope="module")
def embedder(embedding_model_dir: Path) -> Embedder:
    return get_embedder("local:all-MiniLM-L6-v2", embedding_model_dir)


def cosine(embedder: Embedder, a: str, b: str) -> float:
    vectors = embedder.embed([a, b])
    return float(vectors[0] @ vectors[1])


def memory(
    embedder: Embedder,
    incoming: str,
    content: str,
    *,
    id: str = "m1",
    category: Category = PREF,
    origin: Origin = Origin.EXPLICIT,
    pinned: bool = False,
    age_days: float = 1.0,
) -> Existing:
    return Existing(
        id=id,
        content=content,
        similarity=cosine(embedder, incoming, content),
        origin=origin,
        category=category,
        created_at=T0 - timedelta(days=age_days),
        pinned=pinned,
    )


def run(
    embedder: Embedder,
    text: str,
    olds: Sequence[Existing | str],
    *,
    category: Category = PREF,
    origin: Origin = Origin.EXPLICIT,
    strategy: Strategy = "policy",
) -> Resolution:
    existing = [
        memory(embedder, text, o, id=f"m{i + 1}", category=category) if isinstance(o, str) else o
        for i, o in enumerate(olds)
    ]
    incoming = Candidate(text, category, origin, created_at=T0)
    return resolve(incoming, existing, strategy=strategy, embed=embedder.embed)


def test_nothing_similar_is_inserted(embedder: Embedder) -> None:
    result = run(embedder, "I prefer window seats.", ["I live in Toronto."])
    assert result.action == "insert"
    assert result.target_ids == ()


def test_near_duplicate_updates_existing(embedder: Embedder) -> None:
    result = run(embedder, "I prefer dark mode.", ["I prefer dark mode!", "I live in Toronto."])
    assert result.action == "update_existing"
    assert result.target_ids == ("m1",)
    assert not result.conflict


def test_dup_threshold_is_configurable() -> None:
    old = Existing("m1", "Standup is at 9:30", 0.95, Origin.EXPLICIT, Category.FACT, T0)
    new = Candidate("The standup happens at 9:30", Category.DECISION, created_at=T0)
    assert resolve(new, [old]).action == "update_existing"
    assert resolve(new, [old], dup_threshold=0.97).action == "insert"


PARAPHRASES = [
    "I prefer dark mode.",
    "Dark mode please, I like it better.",
    "I'd rather use dark mode.",
    "Please use dark mode for me.",
    "I like dark mode.",
    "Dark mode is my preference.",
    "I always want dark mode.",
    "My preferred theme is dark mode.",
    "Give me dark mode, always.",
    "I really like using dark mode.",
    "Dark mode, please.",
    "I'm a dark mode person.",
    "I want the interface in dark mode.",
    "Switch everything to dark mode for me, that's what I like.",
    "Dark mode works best for me.",
    "I find dark mode easier on my eyes.",
    "I love dark mode.",
    "Set my UI to dark mode.",
    "Dark mode is what I prefer.",
    "I'd like dark mode everywhere.",
]


def test_twenty_paraphrases_make_one_memory(embedder: Embedder) -> None:
    store: list[str] = []
    low_cosine = 0
    for text in PARAPHRASES:
        existing = [memory(embedder, text, s, id=f"m{i}") for i, s in enumerate(store)]
        low_cosine += any(e.similarity < 0.92 for e in existing)
        result = resolve(Candidate(text, PREF, created_at=T0), existing, embed=embedder.embed)
        if result.action == "insert":
            store.append(text)
        else:
            assert result.action == "update_existing", (text, result)
    assert store == [PARAPHRASES[0]]
    assert low_cosine >= 15  # the cosine alone would have inserted most of them


def test_python_to_rust_supersedes(embedder: Embedder) -> None:
    result = run(
        embedder, "Actually I now prefer Rust.", ["I prefer Python.", "I live in Toronto."]
    )
    assert result.action == "supersede"
    assert result.target_ids == ("m1",)
    assert result.conflict


def test_chinese_coffee_to_tea_supersedes(embedder: Embedder) -> None:
    result = run(embedder, "我现在改喝茶了", ["我喜欢喝咖啡", "我住在上海浦东"])
    assert (result.action, result.target_ids) == ("supersede", ("m1",))


def test_polarity_flip_and_changed_numbers_are_contradictions(embedder: Embedder) -> None:
    assert run(embedder, "I don't drink coffee anymore.", ["I like coffee."]).action == "supersede"
    budget = run(
        embedder,
        "The trip budget is $3,000.",
        ["The budget for this trip is at most $2,000."],
        category=Category.CONSTRAINT,
    )
    assert budget.action == "supersede"


def test_exclusive_preference_for_a_value_of_the_same_type(embedder: Embedder) -> None:
    assert run(embedder, "I prefer tea.", ["I prefer coffee."]).action == "supersede"
    # A liked value replaced by one of the same type is an update, marker or not.
    assert run(embedder, "I like tea.", ["I like coffee."]).action == "supersede"
    assert run(embedder, "I also like tea.", ["I like coffee."]).action != "supersede"
    assert run(embedder, "I prefer dark chocolate.", ["I prefer dark mode."]).action == "insert"


def test_events_do_not_contradict_but_states_do(embedder: Embedder) -> None:
    trips = run(
        embedder, "I went to Rome in May.", ["I went to Paris last week."], category=Category.FACT
    )
    assert trips.action == "insert"
    moved = run(
        embedder, "Actually I live in Boston now.", ["I live in Toronto."], category=Category.FACT
    )
    assert moved.action == "supersede"


def test_inferred_never_overrides_explicit(embedder: Embedder) -> None:
    result = run(
        embedder, "Actually I now prefer Rust.", ["I prefer Python."], origin=Origin.INFERRED
    )
    assert result.action == "reject"
    assert result.conflict


def test_explicit_beats_inferred_even_when_older(embedder: Embedder) -> None:
    inferred = memory(embedder, "x", "I prefer Python.", origin=Origin.INFERRED, age_days=-5)
    result = run(embedder, "Actually I now prefer Rust.", [inferred])
    assert result.action == "supersede"


def test_older_explicit_statement_is_marked_not_applied(embedder: Embedder) -> None:
    newer = memory(embedder, "x", "I prefer Python.", age_days=-5)
    assert run(embedder, "Actually I now prefer Rust.", [newer]).action == "mark_conflict"


def test_pinned_business_rule_is_never_overridden(embedder: Embedder) -> None:
    text = "Actually refunds up to $900 are fine now."
    rule = memory(
        embedder,
        text,
        "Refunds above $500 need manager approval.",
        category=Category.CONSTRAINT,
        pinned=True,
    )
    result = run(embedder, text, [rule], category=Category.CONSTRAINT)
    assert (result.action, result.target_ids, result.conflict) == ("reject", ("m1",), True)


def test_list_like_memory_is_merged(embedder: Embedder) -> None:
    result = run(embedder, "I also like Rust.", ["My favourite languages are Python and Go."])
    assert result.action == "merge"
    assert result.merged_content == "My favourite languages are Python, Go and Rust"
    tags = run(embedder, "兴趣标签再加上摄影", ["我的兴趣标签：旅行、美食"], category=Category.FACT)
    assert (tags.action, tags.merged_content) == ("merge", "我的兴趣标签：旅行、美食、摄影")
    unrelated = run(embedder, "我也喜欢猫", ["我的兴趣标签：旅行、美食"], category=Category.FACT)
    assert unrelated.action == "insert"


def test_ambiguous_slot_is_marked_as_conflict(embedder: Embedder) -> None:
    result = run(
        embedder, "Actually I now prefer Rust.", ["I prefer Python.", "I prefer dark mode."]
    )
    assert result.action == "mark_conflict"
    assert set(result.target_ids) == {"m1", "m2"}


@pytest.mark.parametrize(
    ("strategy", "action"),
    [("last_write_wins", "supersede"), ("merge", "merge"), ("mark_conflict", "mark_conflict")],
)
def test_strategies(embedder: Embedder, strategy: Strategy, action: str) -> None:
    result = run(embedder, "Actually I now prefer Rust.", ["I prefer Python."], strategy=strategy)
    assert result.action == action
    assert result.target_ids == ("m1",)
    if action == "merge":
        assert result.merged_content == "I prefer Python; Actually I now prefer Rust."


def test_last_write_wins_rejects_an_older_write(embedder: Embedder) -> None:
    newer = memory(embedder, "x", "I prefer Python.", age_days=-5)
    result = run(embedder, "Actually I now prefer Rust.", [newer], strategy="last_write_wins")
    assert result.action == "reject"


def test_frames_mask_values_and_keep_markers() -> None:
    old, new = analyse("I prefer Python"), analyse("Actually I now prefer Rust")
    assert old.frame == new.frame == ("i", "PREF", "X")
    assert (old.values, new.values) == (frozenset({"python"}), frozenset({"rust"}))
    assert new.correction and not old.correction
    zh = analyse("我不再喝咖啡了")
    assert zh.values == frozenset({"咖啡"}) and zh.negative


def test_fact_and_preference_meet_only_through_a_correction(embedder: Embedder) -> None:
    liked = memory(embedder, "我现在改喝茶了", "我喜欢喝咖啡", category=PREF)
    switched = run(embedder, "我现在改喝茶了", [liked], category=Category.FACT)
    assert switched.action == "supersede"
    habit = memory(embedder, "I drank coffee with Ana yesterday.", "I like coffee.", category=PREF)
    event = run(embedder, "I drank coffee with Ana yesterday.", [habit], category=Category.FACT)
    assert event.action == "insert"


def test_paraphrase_filed_as_a_fact_still_updates_the_preference(embedder: Embedder) -> None:
    liked = memory(embedder, "Dark mode is my preference.", "I prefer dark mode.", category=PREF)
    result = run(embedder, "Dark mode is my preference.", [liked], category=Category.FACT)
    assert (result.action, result.target_ids) == ("update_existing", ("m1",))


def test_paraphrases_through_the_gate_make_one_memory(embedder: Embedder) -> None:
    store: list[tuple[str, Category]] = []
    for text in PARAPHRASES:
        decision = gate(text)
        if not decision.keep:
            continue
        existing = [
            memory(embedder, decision.content, c, id=f"m{i}", category=cat)
            for i, (c, cat) in enumerate(store)
        ]
        incoming = Candidate(decision.content, decision.category, decision.origin)
        result = resolve(incoming, existing, embed=embedder.embed)
        if result.action == "insert":
            store.append((decision.content, decision.category))
    assert [c for c, _ in store] == [PARAPHRASES[0]]


def _held_out_scores(embedder: Embedder) -> tuple[float, float]:
    from bench.conflict_detection import PAIRS, detect, scores

    pairs = [json.loads(line) for line in (REPO / PAIRS).read_text("utf-8").splitlines() if line]
    assert len(pairs) >= 60 and any("\u4e00" <= c <= "\u9fff" for p in pairs for c in p["new"])
    held = [p for p in pairs if p["split"] == "holdout"]
    assert 3 * len(held) >= len(pairs)
    return scores([p["update"] for p in held], detect(held, embedder.embed))


def test_labelled_updates_and_compatible_pairs_precision_and_recall(embedder: Embedder) -> None:
    precision, recall = _held_out_scores(embedder)
    assert precision >= 0.90, precision
    assert recall >= 0.85, recall


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("I love pizzas.", "I love pizza."),
        ("I like dog.", "I like dogs."),
        ("I prefer dark chocolate.", "I prefer dark mode."),
        ("I prefer window seats on short flights.", "I prefer aisle seats on long flights."),
    ],
)
def test_plurals_and_modifiers_are_not_updates(embedder: Embedder, new: str, old: str) -> None:
    assert run(embedder, new, [old]).action != "supersede"


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("I prefer TypeScript for side projects.", "I prefer JavaScript for side projects."),
        ("I like tea in the morning.", "I like coffee in the morning."),
        ("I prefer window seats.", "I prefer aisle seats."),
    ],
)
def test_one_value_replaced_is_an_update(embedder: Embedder, new: str, old: str) -> None:
    assert run(embedder, new, [old]).action == "supersede"


@pytest.mark.parametrize(
    ("new", "old", "category", "action"),
    [
        ("My team switched to Linear.", "My team uses Jira.", Category.FACT, "supersede"),
        ("My team uses Confluence for docs.", "My team uses Jira.", Category.FACT, "insert"),
        ("周会改到周三下午了。", "周会定在周一上午。", Category.DECISION, "supersede"),
        ("评审推迟到下周一了。", "评审安排在周五。", Category.DECISION, "supersede"),
        ("团建安排在下个月。", "周会定在周一上午。", Category.DECISION, "insert"),
    ],
)
def test_a_third_person_tool_and_a_rescheduled_chinese_event_are_updates(
    embedder: Embedder, new: str, old: str, category: Category, action: str
) -> None:
    assert run(embedder, new, [old], category=category).action == action


def test_a_moved_date_is_an_update_even_by_a_single_digit(embedder: Embedder) -> None:
    moved = run(embedder, "The deadline moved to March 10.", ["The deadline is March 3."],
                category=Category.DECISION)  # fmt: skip
    assert moved.action == "supersede"
    assert "3" in analyse("The deadline is March 3.").values


def test_a_number_in_another_slot_is_no_update(embedder: Embedder) -> None:
    other = run(embedder, "The trip is ten days long.", ["My budget for the trip is 2,000 euros."],
                category=Category.CONSTRAINT)  # fmt: skip
    assert other.action == "insert"


def test_two_values_changed_at_once_is_a_second_preference(embedder: Embedder) -> None:
    both = run(embedder, "I prefer coffee after lunch.", ["I prefer tea in the morning."])
    assert both.action == "insert"
    assert run(embedder, "I prefer tea in the afternoon.", ["I prefer coffee in the afternoon."]
               ).action == "supersede"  # fmt: skip


def test_the_new_value_preferred_over_the_old_one(embedder: Embedder) -> None:
    assert run(embedder, "Actually I like dogs more than cats now.", ["I like cats."]
               ).action == "supersede"  # fmt: skip
    # Without a correction marker it is a comparison, not a change of mind.
    assert run(embedder, "I like dogs more than cats.", ["I like cats."]).action != "supersede"
