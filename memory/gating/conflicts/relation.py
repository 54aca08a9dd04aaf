"""How an incoming statement relates to an existing memory, for the conflict policy.

The answer is one of: duplicate, contradiction, list addition, or unrelated.

The method is general, not a topic list: both statements are cut into a predicate frame and
values (`frames`). Same values with compatible frames are a paraphrase; the same frame
with different values is the same slot filled differently, which counts as a contradiction
when the newcomer marks a correction ("actually", "now", "改"), when the slot is pinned down by
shared words or numbers ("budget ... $2,000" vs "budget ... $3,000"), or when an exclusive
preference ("prefer", "favourite") names a value of the same type (the embedder compares
"coffee" and "tea": cosine 0.62 with MiniLM, against 0.16 for "tea" and "dark mode").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from memory.attribute_meaning import (
    changes_its_topic,
    marks_change,
    names_something_new,
    restates_a_name,
)
from memory.attribute_meaning import compare as meaning_compare
from memory.attributes import compare_settings, different_subjects, opens_with_a_name_of
from memory.gating.conflicts.frames import Frame, frame_similarity, heads
from memory.types import Category

EmbedFn = Callable[[list[str]], npt.NDArray[np.float32]]
# Maps the embedder's raw cosine onto the reference scale the thresholds here are written in
# (`memory.storage.calibration`); None for the reference model.
ToReference = Callable[[float], float]
Kind = Literal["duplicate", "contradiction", "list_add", "unrelated"]

# Categories whose statements fill slots that a newer statement can overwrite. Facts qualify
# only as stable states ("I live in X", "my manager is X", "my team uses X"), never as events
# ("I went to X").
SLOT_CATEGORIES = frozenset({Category.PREFERENCE, Category.CONSTRAINT, Category.DECISION})
_FAMILY = {Category.PREFERENCE: "rule", Category.CONSTRAINT: "rule"}
_STATE_WORDS = frozenset("is are am 'm live lives work works use 我 是 住 在".split())
FRAME_MIN = 0.6  # frames this alike describe the same slot (Jaccard over frame tokens)
TYPE_MIN = 0.45  # values this alike (cosine) are of one type: coffee/tea 0.62, python/rust 0.20
# Values this alike are alternatives for one liked thing ("I like tea" after "I like coffee"
# 0.62, JavaScript/TypeScript 0.40; cat/dog 0.66 counts too). Chosen on the tune split of
# tests/data/conflict_pairs.jsonl (`python -m bench.conflict_detection`).
REPLACE_MIN = 0.35
PARAPHRASE_SIM = 0.75  # caller's cosine above which differently framed same values are one
CROSS_SIM = 0.6
_COMPARED = frozenset(
    {"than", "over"}
)  # the same, across a fact and a preference ("Set my UI to dark mode": 0.62)


@dataclass(frozen=True, slots=True)
class Relation:
    """The relation, and how sure the slot match is (for ranking several contradictions)."""

    kind: Kind
    strength: float = 0.0
    why: str = ""


UNRELATED = Relation("unrelated")


def _cross_slot(a: Category, b: Category) -> bool:
    return {a, b} <= {Category.PREFERENCE, Category.CONSTRAINT, Category.FACT}


def attribute_slot(a: Category, b: Category) -> bool:
    """True when memories of these categories can set one attribute (one can replace another)."""
    # A move or a switch is often filed as a decision ("I moved to Munich last month"); the
    # attribute it sets is the same one a fact or preference states.
    return {a, b} <= {Category.PREFERENCE, Category.CONSTRAINT, Category.FACT, Category.DECISION}


def same_family(a: Category, b: Category) -> bool:
    """Preferences and constraints share slots; other categories only with themselves."""
    return a is b or (_FAMILY.get(a) is not None and _FAMILY.get(a) == _FAMILY.get(b))


def value_similarity(
    a: Frame, b: Frame, embed: EmbedFn | None, to_reference: ToReference | None = None
) -> float:
    """Cosine of the values that differ ("python" vs "rust"); 0 without an embedder.

    Chinese values are not compared: all-MiniLM-L6-v2 is English-only and scores any two
    Chinese strings near 0.9.
    """
    only_a, only_b = a.values - b.values, b.values - a.values
    if embed is None or not only_a or not only_b or a.cjk or b.cjk:
        return 0.0
    vectors = embed([" ".join(sorted(only_a)), " ".join(sorted(only_b))])
    cosine = float(np.dot(vectors[0], vectors[1]))
    return to_reference(cosine) if to_reference is not None else cosine


def relate(
    new: Frame,
    old: Frame,
    *,
    similarity: float,
    categories: tuple[Category, Category],
    dup_threshold: float,
    embed: EmbedFn | None,
    to_reference: ToReference | None = None,
) -> Relation:
    """Classify the pair (incoming `new`, existing `old`); `similarity` on the reference scale."""
    base = _relate(new, old, similarity, categories, dup_threshold, embed, to_reference)
    if not (same_family(*categories) or attribute_slot(*categories)):
        return base
    if base.kind == "contradiction" and different_subjects(new.text, old.text):
        if not opens_with_a_name_of(new.text, old.text):
            return UNRELATED  # "my brother lives in Ottawa now" replaces nothing of the user's
        # "Priya left, so I report to Tom now" after "My manager is Priya": about the person
        # named before, so the attribute read (patterns or meaning) decides, not the frames.
        base = UNRELATED
    # The attribute both statements set decides over surface similarity: "I moved to Munich"
    # updates "I live in Berlin" with no correction marker, and "tea, not coffee" said again
    # agrees with "I drink tea" although one of them holds a negation.
    shared = compare_settings(new.settings, old.settings)
    if shared is None:
        return _by_meaning(new, old, base, embed, categories)
    verdict, attribute = shared
    if verdict == "update":
        return Relation("contradiction", 1.0, f"same attribute ({attribute}), new value")
    if base.kind == "contradiction":
        return Relation("duplicate", max(similarity, 0.5), f"same {attribute}; agrees")
    return base


def _by_meaning(
    new: Frame,
    old: Frame,
    base: Relation,
    embed: EmbedFn | None,
    categories: tuple[Category, Category],
) -> Relation:
    """No pattern reads the attribute: read it by meaning ("Mornings are green tea now").

    Only where the frames found no relation: a list addition ("I also like tea") or a
    correction the frames read stays as it is. Two values of one attribute may hold side by
    side in different situations ("I use Python at work", "I use Rust for hobby projects";
    "tea in the morning", "coffee after lunch"), so meaning replaces a value only when the new
    statement also says that something changed ("now", "since June", "I joined", "搬到").
    """
    if embed is None or base.kind not in ("unrelated", "contradiction") or new.additive:
        return base
    if base.kind == "contradiction":
        # The frames saw one slot; two members of one family are two ("my favourite band" and
        # "my favourite food is pho now").
        found = meaning_compare(new.text, old.text, embed)
        if found is not None and found[0] == "apart":
            return UNRELATED
        if restates_a_name(new.text, old.text) and not names_something_new(new.text, old.text):
            # The frames saw other words in the slot, but the old value's name is said again
            # with more around it and nothing new named beside it ("Been at Google four years,
            # still enjoy the Zurich team" after "I work at Google in the Zurich office").
            return Relation("duplicate", 0.5, "the old value's name said again; agrees")
        return base
    if not (new.correction or marks_change(new.text)):
        return base
    found = meaning_compare(new.text, old.text, embed)
    if found is None and changes_its_topic(new.text, old.text):
        return Relation("contradiction", 0.8, "the old statement's topic, changed")
    if found is None or found[0] != "update":
        return base
    return Relation("contradiction", 0.9, f"same attribute ({found[1]}, by meaning), new value")


def _relate(
    new: Frame,
    old: Frame,
    similarity: float,
    categories: tuple[Category, Category],
    dup_threshold: float,
    embed: EmbedFn | None,
    to_reference: ToReference | None,
) -> Relation:
    family = same_family(*categories)
    shared = new.values & old.values
    only_new, only_old = new.values - old.values, old.values - new.values
    differ = bool(only_new and only_old)
    if not family and not _cross_slot(*categories):
        near = similarity >= dup_threshold and new.negative == old.negative and not differ
        return Relation("duplicate", similarity, "near-identical text") if near else UNRELATED
    frames = frame_similarity(new, old)
    if shared and new.negative != old.negative and not differ:
        return Relation("contradiction", 1.0, "same statement, opposite polarity")
    if not family:
        return _across(new, old, similarity, frames, differ)
    if new.correction and only_new and shared and not only_old and _COMPARED & set(new.frame):
        # "Actually I like dogs more than cats now" after "I like cats": the old value comes
        # back only as what the new one beats.
        return Relation("contradiction", 0.5, "new value preferred over the old one")
    subset = bool(shared) and not differ
    alike = frames >= 0.5 or categories[0] is Category.PREFERENCE or similarity >= PARAPHRASE_SIM
    if new.negative == old.negative and (
        (subset and alike) or (similarity >= dup_threshold and not (only_new and only_old))
    ):
        return Relation("duplicate", max(similarity, frames), "same value in other words")
    if not (only_new and only_old):
        return Relation("unrelated")
    return _different_values(new, old, similarity, categories[1], frames, embed, to_reference)


def _across(new: Frame, old: Frame, similarity: float, frames: float, differ: bool) -> Relation:
    """A fact beside a preference or constraint: the gate may file one statement either way.

    "Dark mode is my preference" can come out of the gate as a fact and "I prefer dark mode"
    as a preference: the same values with closely matching text are one memory. Otherwise
    only an explicit correction links them ("我喜欢喝咖啡" → "我现在改喝茶了"); "I drank
    coffee yesterday" is no duplicate of "I like coffee" (cosine well under 0.6).
    """
    shared = new.values & old.values
    close = frames >= FRAME_MIN or (similarity >= CROSS_SIM and not (new.cjk or old.cjk))
    if shared and not differ and new.negative == old.negative and close:
        return Relation("duplicate", similarity, "same value, filed under another category")
    if differ and new.correction and (shared or frames >= FRAME_MIN):
        return Relation("contradiction", 0.5 if shared else 0.0, "correction marker")
    return UNRELATED


def _different_values(
    new: Frame,
    old: Frame,
    similarity: float,
    category: Category,
    frames: float,
    embed: EmbedFn | None,
    to_reference: ToReference | None = None,
) -> Relation:
    """Both sides name values the other lacks: a list to extend, a slot refilled, or neither."""
    shared = new.values & old.values
    only_new, only_old = new.values - old.values, old.values - new.values
    type_sim = value_similarity(new, old, embed, to_reference)
    # The caller's cosine is no evidence for Chinese (MiniLM scores any two Chinese texts ~0.9).
    related = type_sim >= 0.3 or (similarity >= 0.3 and not (new.cjk or old.cjk))
    if old.listy and new.additive and (shared or frames >= FRAME_MIN or related):
        return Relation("list_add", max(type_sim, similarity), "adds to a list")
    # Words both statements share name the slot ("budget", "live"); the rest are its values.
    slot = category in SLOT_CATEGORIES or bool((set(old.frame) | shared) & _STATE_WORDS)
    if not slot:
        return Relation("unrelated")
    changed = new.values ^ old.values
    # A number refilled is the slot's update ("$2,000" -> "$3,000", "March 3" -> "March 10")
    # only when nothing but numbers changed: "budget for the trip is 2,000 euros" and "the
    # trip is ten days long" share "trip" and differ in a number, but name other slots.
    numbers = all(v[:1].isdigit() for v in changed) and any(v[:1].isdigit() for v in changed)
    exclusive = new.exclusive or old.exclusive
    # Two values swapped at once ("tea in the morning" / "coffee after lunch") reads as a
    # second preference, unless the newcomer says it corrects the first.
    swapped_one = len(only_new) == 1 and len(only_old) == 1
    if shared and (
        new.correction or numbers or (exclusive and swapped_one and type_sim >= TYPE_MIN)
    ):
        return Relation("contradiction", 0.5 + type_sim, "same slot, different value")
    if _one_value_replaced(new, old, category, frames, type_sim >= REPLACE_MIN):
        return Relation("contradiction", 0.5 + type_sim, "same preference, one value replaced")
    if frames < FRAME_MIN:
        return Relation("unrelated")
    if new.correction:
        return Relation("contradiction", type_sim, "correction marker")
    if exclusive and swapped_one and type_sim >= TYPE_MIN:
        return Relation("contradiction", type_sim, "exclusive preference, same kind of value")
    return Relation("unrelated")


def _one_value_replaced(
    new: Frame, old: Frame, category: Category, frames: float, same_type: bool
) -> bool:
    """True when a preference names one value in place of another.

    "I like tea in the morning" after "I like coffee in the morning": a preference frame
    whose shared head words pin the slot ("aisle *seats*" / "window *seats*", not "*dark* mode"
    / "*dark* chocolate"), with exactly one value swapped for another.

    With no shared word ("I like tea" after "I like coffee") the two values must be of one
    type (the embedder's cosine) and the newcomer must not add ("I also like swimming").
    Two values changed at once ("aisle seats on long flights" / "window seats on short
    flights") reads as a second preference, not a replacement.
    """
    only_new, only_old = new.values - old.values, old.values - new.values
    return (
        category is Category.PREFERENCE
        and "PREF" in new.frame
        and "PREF" in old.frame
        and (bool(new.values & old.values & heads(new) & heads(old)) or same_type)
        and not new.additive
        and frames >= FRAME_MIN
        and len(only_new) == 1
        and len(only_old) == 1
        and new.negative == old.negative
    )


def decisive(relations: Sequence[Relation]) -> list[int]:
    """Indexes of the contradictions the evidence singles out.

    "Actually I now prefer Rust" against both "I prefer Python" and "I prefer dark mode" has
    the same frame and the correction marker for both, and MiniLM cannot say which value Rust
    replaces (0.20 vs 0.22): no contradiction is decisive, and the caller marks the conflict.
    """
    found = [i for i, r in enumerate(relations) if r.kind == "contradiction"]
    strong = [i for i in found if relations[i].strength >= 0.5]
    if strong or len(found) <= 1:
        return strong or found
    ranked = sorted(found, key=lambda i: relations[i].strength, reverse=True)
    best, second = relations[ranked[0]].strength, relations[ranked[1]].strength
    return [ranked[0]] if best >= TYPE_MIN and best - second >= 0.1 else []
