"""The gate on conversational turns: facts kept, chit-chat dropped, the turn weighed whole."""

from __future__ import annotations

import pytest

from memory.gating.gate import GatePolicy, gate
from memory.gating.rules.chatter import clause_kind
from memory.gating.rules.specifics import names, numbers, times
from memory.gating.rules.split import split_media
from memory.types import Category


def test_split_media_reads_both_caption_formats() -> None:
    assert split_media("Look! [image: a dog on a beach]") == ("Look!", "a dog on a beach")
    assert split_media("Mine. [shares a photo of a red bike]") == ("Mine.", "a red bike")
    assert split_media("Key is [REDACTED:api_key]") == ("Key is [REDACTED:api_key]", "")


def test_the_addressee_is_not_a_name_and_times_are_counted() -> None:
    assert names("Thanks, Mel! I met Tom in Boston.") == 2
    assert names("Hey Evan, how are you?") == 0
    assert times("We moved there last spring, in May 2021.") == 3
    assert numbers("We have two dogs and 3 cats.") == 2


@pytest.mark.parametrize(
    ("text", "count"),
    [("今晚八点开会", 1), ("明早八点出发", 1), ("下午一点到", 1), ("改短一点", 0), ("再快一点", 0)],
)
def test_a_clock_time_is_a_time_and_a_bit_more_is_not(text: str, count: int) -> None:
    assert times(text) == count


@pytest.mark.parametrize(
    ("clause", "kind"),
    [
        ("That's so cool!", "social"),
        ("You're so talented", "social"),
        ("Have a great weekend!", "social"),
        ("It's a map of Middle-earth from the books", "content"),
        ("by the way", "thin"),
        ("They're all mutts", "content"),
    ],
)
def test_clause_kinds(clause: str, kind: str) -> None:
    assert clause_kind(clause) == kind


def test_an_answer_needs_its_question() -> None:
    question = "What are your dogs called?"
    kept = gate("Max and Daisy.", context=question)
    assert kept.keep
    assert kept.category is Category.FACT
    assert not gate("Max and Daisy.").keep
    assert not gate("Max and Daisy.", context="I love dogs.").keep
    assert not gate("Haha, long story!", context="Where did you get that?").keep


def test_a_fact_inside_chit_chat_is_kept_and_chit_chat_alone_is_not() -> None:
    fact = gate("Thanks so much, Mel! Last weekend I took my kids to the aquarium in Monterey.")
    assert fact.keep
    assert fact.content.startswith("Last weekend")
    assert not gate("Thanks so much, Mel! You're the best, that means a lot.").keep


def test_a_shared_photo_counts_but_does_not_rescue_a_reaction() -> None:
    built = "Here's the bookshelf I built over the weekend."
    photo = gate(f"{built} [shares a photo of a wooden bookshelf]")
    assert photo.keep
    assert photo.importance > gate(built).importance or photo.importance == 1.0
    assert not gate("That's so pretty! [image: a sunset over the sea]").keep


def test_specifics_raise_and_chatter_lowers_importance() -> None:
    plain = gate("I went to a concert.").importance
    assert gate("I went to a concert last Friday.").importance > plain
    fact = gate("I'm left-handed.").importance
    assert gate("Haha, that's so funny, you're hilarious! I'm left-handed.").importance < fact


@pytest.mark.parametrize(
    "text",
    [
        "That must have been so much fun!",
        "You must have worked really hard.",
        "Talk to you soon!",
        "Let me know how it turns out.",
        "I'll always be there for you.",
    ],
)
def test_conversational_must_always_and_sign_offs_are_not_rules(text: str) -> None:
    assert not gate(text).keep


def test_rules_still_hold_in_conversation() -> None:
    rule = gate("Deploys must be approved by the lead.")
    assert (rule.keep, rule.category) == (True, Category.CONSTRAINT)


def test_model_answers_keep_their_own_threshold() -> None:
    policy = GatePolicy()
    assert policy.model_keep_threshold < policy.keep_threshold


def test_only_the_user_s_cue_less_content_becomes_a_fact() -> None:
    said = "Paris is the capital of France, founded in the 3rd century BC."
    assert not gate(said, role="assistant").keep
    assert gate("I have scheduled the review for Thursday at 3pm.", role="assistant").keep
