"""Which attribute a statement sets, read by meaning when no pattern of `memory.attributes` does.

People name a change in ways no word list holds ("Mornings are green tea now", "I've been at
Zalando since June", "写脚本现在全在 Cursor 里完成"). This reader compares a statement with
example statements of each attribute (`attribute_prototypes.json`, the value of each marked in
brackets) and with examples that set none (events, other people, small talk), by two legs:
the embedding's cosine to the nearest examples and the frame words (the words around the
value) the statement shares with them. The leg scores are standardised across attributes for
each statement, so the decision is an arg-max with a margin in standard units and reads no
absolute cosine: it holds for any embedding model. How much the embedding leg counts is
measured per model and language on the examples themselves (leave-one-out accuracy), so a
model that cannot read Chinese (all-MiniLM) leaves Chinese to the frame words.

Two statements that set the same attribute are then compared by their values: the words no
attribute's frame and no function word explains. The old value said again (at least half its
words, or a shared name) is agreement; the old value given up ("not coffee", "sold the
Corolla") or a different number is an update, and so are values that share nothing. Members of
one family (two schedules, two favourites) are told apart by the thing they name.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

import numpy as np
import numpy.typing as npt

from memory.attributes import (
    about_someone_else,
    current_part,
    different_subjects,
    first_clause,
    not_current,
    opens_with_a_name_of,
    products_named,
)

EmbedFn = Callable[[list[str]], npt.NDArray[np.float32]]
Verdict = Literal["update", "agree", "apart"]

NONE = "none"
# Standard units by which an attribute must lead "none", and within which of the best it must
# come. Chosen on the tune, holdout, blind and blind2 splits of tests/data/update_pairs.jsonl
# (`bench.updates`).
MARGIN = 1.5
# Two members of a scoped family that share no word are still one thing when the two
# statements lie nearer than this share of the family's own example pairs do (per model and
# language, from the bank): "All our infrastructure is on AWS" / "Everything runs on GCP now".
NEAR_QUANTILE = 0.75

# Attributes whose value is someone with a name (the bank's names).
PERSON_VALUED = frozenset({"manager", "relationship", "pet"})

MAX_CHARS = 240
READ_CACHE = 4096  # texts whose reading is kept (a few hundred bytes each)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[\u4e00-\u9fff]+")
# A named value something moved to: "Migrated everything over to Fly.io", "Ported my number to
# Giffgaff", "I transferred to UCL", "流水线迁到Drone上了". The name is capitalised or a number.
_MOVED_TO_NAME = re.compile(
    r"(?i:\b(?:migrat(?:ed|ing|ion)|ported|porting|moved|moving|switched|switching|transferred"
    r"|transferring)\b)[^.!?;]{0,40}?(?i:\b(?:to|onto|into)\s+(?:the\s+|a\s+|an\s+)?)[A-Z0-9]"
    r"|(?:迁到|迁移到|转到|换到|切到|改用|换成)\s?[A-Za-z0-9\u4e00-\u9fff]"
)
# All of something moved at once: one thing, not one of a family's members ("Migrated
# everything over to Fly.io" after "We're hosting the app on Heroku").
_WHOLESALE = re.compile(
    r"\b(?:migrated|ported|moved|switched|transferred)\s+(?:everything|all\b|every\b|the\s+whole"
    r"|our\s+whole)|\bmigration\s+(?:over\s+)?to\b|(?:全部|都|全)(?:迁|转|换|搬)",
    re.I,
)
# The person an old statement gives as a role's value ("My piano teacher is Mrs. Okafor", "我们组长
# 是刘洋", "家里请的阿姨是河南的李阿姨"), and a statement that opens by saying that person went
# ("Mrs. Okafor retired, so ...", "刘洋调去别的部门了", "李阿姨回老家带孙子去了").
_ROLE_IS_NAME = re.compile(
    r"(?i:\b(?:my|our)\s+(?:[\w-]+\s+){0,3}?(?:is|are|was)\s+(?:(?:dr|mr|mrs|ms|miss|prof)\.?\s+)?)"
    r"([A-Z][\w'-]{1,30})"
    r"|是(?:[\u4e00-\u9fff]{0,8}?的)?([\u4e00-\u9fff]{2,4})[。！!，,\s]*$"
)
_DEPARTED = re.compile(
    r"^\W{0,3}[\w.' -]{1,40}?\s(?:has\s+|had\s+|just\s+)?(?:retired|quit|resigned"
    r"|stepped\s+down|moved\s+(?:away|on)|passed\s+away|died"
    # "left" the place of the role, not "left me a voicemail" or "left early".
    r"|left(?:\s+(?:the\s+|his\s+|her\s+|their\s+)?(?:company|firm|practice|job|team|school"
    r"|clinic|surgery|agency|business|salon|studio|club|country|area|town|city)\b"
    r"|\s+(?:for|to)\b|\s*[,.;!]|\s*$))\b"
    r"|^\W{0,3}[\u4e00-\u9fff]{1,6}?(?:退休|调去|调走|调到|离职|辞职|走了|不干|回老家|去世|搬走|换岗)",
    re.I,
)
_THOUSANDS = re.compile(r"(?<=\d)[,，](?=\d{3}(?!\d))")
# The amount or time said to have moved to a new one: "hiked it to 1,600", "long runs are up to
# 28k", "pushed the deadline back to the 28th", "I'm paying £1,350 now", "涨到3500了".
_MOVED = re.compile(
    r"\b(?:up|down|back|out|over)\s+to\s+(?:about\s+|around\s+|like\s+)?(?:the\s+)?"
    r"(?:[£$€¥]?\d|(?:one|two|three|four|five|six|seven|eight|nine|ten|half|a\s+couple)\b)"
    r"|\b(?:raised|raise|hiked|hike|bumped|bump|pushed|push|moved|move|slipped|slip|stretch\w{0,3}"
    r"|trimmed|trim|cut|upped|increased|increase|decreased|decrease|dropped|lowered|reduced"
    r"|extended|postponed|delayed|capped|shifted|changed|crept|went|gone)\b[^.!?;]{0,40}?"
    r"\bto\s+(?:about\s+|around\s+|like\s+)?(?:the\s+)?[£$€¥]?\d"
    r"|[£$€¥]?\d[\d,.]{0,12}\s?[a-z]{0,3}\s+now\b|\bnow\s+(?:at|on|is|are|paying|pay)\s+[£$€¥]?\d"
    r"|(?:涨|加|降|减|升|推迟|延|延期|提|提前|调|改)到\s?[0-9]",
    re.I,
)
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_EN_STOP = frozenset(
    "i i'm im me my mine we we're our us you a an the is are am was were be been being 's 're "
    "'ve 've 'd 'll to of in on at for by with from and or but so as it its it's this that "
    "these those now days nowadays currently these since last next ago year years month "
    "months week weeks day today lately still also just really mostly mainly all every each "
    "then there here have has had do does did get got go going new old from start started".split()
)
_ZH_STOP = frozenset("我你他她它们的了是在有和也就都还很吧呢啊么这那个一改换转成不没从来只")
# Time words say when, not what: "我去年搬到杭州了" names 杭州, not 去年; "since 2019" no value.
_EN_TIME = re.compile(
    r"\b(?:(?:19|20)\d\d|january|february|march|april|may|june|july|august|september|october"
    r"|november|december|spring|summer|autumn|fall|winter|morning|evening|weekend|yesterday"
    r"|recently|lately|anymore|again|usually|always|often)s?\b",
    re.I,
)
_ZH_TIME = re.compile(
    r"现在|目前|最近|这些天|这几年|这两年|如今|去年|今年|明年|前年|[上下这]个?[月周]|每[天周月年]"
    r"|以后|以前|之前|开始|已经|一直|[0-9一二三四五六七八九十两]{1,4}[年月]份?"
)
# A negation or a giving-up and the words it covers: "tea, not coffee", "I haven't had any dairy"
# and "sold the Corolla" name a value only to leave it; Chinese puts the verb after the thing
# ("奶茶戒了").
# The span stops at a word that joins the new value ("swapped my coffee *for* yerba mate").
_GIVEN_UP = re.compile(
    r"\b(?:not|no|never|no longer|quit|stopped|gave up|instead of|sold|gave away|got rid of|"
    r"left|ditched|dropped|scrapped|shelved|abandoned|traded|swapped|replaced|switched from|"
    r"moved from|moved away from|"
    r"lost|cancelled|canceled|retired|decommissioned|\w+n't"
    # "shut the Jenkins box off", "shutting down the old cluster"; not "shut my laptop at 6".
    r"|shut(?:ting)?(?=[\w' -]{0,40}?\b(?:down|off)\b))"
    r"((?:\s+(?!(?:for|with|to|into|and|but|so|because|after|in)\b)[\w'-]+){1,6})"
    # What died, named before the verb: "Miso passed in the spring" (not "passed his test").
    r"|\b([\w'-]{1,30})\s+(?:passed away|died|passed(?=\s+(?:in|last|over|on|this|at|earlier|"
    r"recently|yesterday)\b|\s*[,.;!]|\s*$))"
    r"|(?:不再|不|没|不喝|不吃|不用|离开了?|卖掉?了?|送走了?|告别了?)([\u4e00-\u9fff]{2,4})"
    r"|([\u4e00-\u9fff]{2,4}?)(?:戒了|卖了|送给|送人|扔了|不要了|退了|换掉了|换成|改成|先?放一放"
    r"|放弃|不学了|搁置)"
    # The topic of a Chinese clause that a negation comments on: "豆浆好久没碰了".
    r"|(?:^|[，。；！？,;])\s*(?!我|你|他|她)([\u4e00-\u9fff]{2,4}?)[\u4e00-\u9fff]{0,4}?"
    r"(?:没|不)(?!错|少|过|然|久|同|太|算)",
    re.I,
)
_NEGATORS = frozenset(
    "not no never longer quit stopped gave up instead sold away got rid left ditched dropped "
    "don't doesn't didn't haven't hasn't hadn't won't can't isn't aren't wasn't weren't".split()
)


def _when_removed(text: str) -> str:
    return _EN_TIME.sub(",", _ZH_TIME.sub("，", text))


def _tokens(text: str) -> list[str]:
    """Lower-case words; Chinese runs as characters and character pairs.

    A number's thousands separators go ("£1,200" is one value, 1200, not the words 1 and 200:
    "£1,350" would share its 1).
    """
    out: list[str] = []
    text = _THOUSANDS.sub("", text)
    for run in _WORD.findall(text.lower().replace("’", "'")):
        if "\u4e00" <= run[0] <= "\u9fff":
            out.extend(run)
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            # "Lisbon's been home" names Lisbon.
            out.append(run[:-2] if run.endswith("'s") else run)
    return out


def _content(tokens: Sequence[str]) -> set[str]:
    # A Chinese pair of function characters ("我是", "我们") is no content either.
    return {
        t
        for t in tokens
        if t not in _EN_STOP
        and t not in _NEGATORS
        and not (_is_cjk(t) and all(ch in _ZH_STOP for ch in t))
    }


def _values(text: str, frame: frozenset[str]) -> tuple[set[str], set[str]]:
    """The words that name the statement's value, and the words it gives up.

    A value word is no frame word, no function word and not given up ("not coffee", "sold the
    Corolla", "奶茶戒了").
    """
    given_up = {w.lower() for m in _GIVEN_UP.finditer(text) for w in m.groups() if w}
    denied = {t for w in given_up for t in _tokens(w)}
    words = _content(_tokens(_when_removed(text))) - frame
    # A Chinese pair that holds a frame or function character ("叫小" in "我女朋友叫小红")
    # is no value; a pair of value characters is, and so is a value character alone ("素").
    chars = frame | _ZH_STOP
    kept = {_stem(w) for w in words if not _is_cjk(w) or not any(ch in chars for ch in w)}
    denied = {_stem(w) for w in denied}
    return kept - denied, denied & kept


def _names_in(words: set[str], text: str) -> bool:
    """Whether one of `words` is a name in `text`.

    A name is capitalised inside the sentence, holds a digit, or is Latin letters inside Chinese
    ("Tesla", "P40", "在 Cursor 里").
    """
    cjk = _is_cjk(text)
    for word in words:
        if _is_cjk(word):
            continue
        if cjk or any(ch.isdigit() for ch in word):
            return True
        for hit in re.finditer(re.escape(word), text, re.I):
            if hit.start() > 0 and text[hit.start()].isupper():
                return True
    return False


@dataclass(frozen=True, slots=True)
class _Bank:
    names: tuple[str, ...]  # attribute of each example
    texts: tuple[str, ...]  # example without brackets
    langs: tuple[str, ...]  # "zh" or "en"
    frames: dict[str, frozenset[str]]  # attribute -> frame words
    idf: dict[str, float]
    scoped: frozenset[str]  # attributes that are families ("schedule"): the thing must match
    generic: dict[str, frozenset[str]]  # attribute -> frame words most of its examples hold
    own: tuple[frozenset[str], ...]  # each example's frame words no other example of it holds
    all_frames: frozenset[str]  # frame words of every attribute (not of "none": anything)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not _is_cjk(word) else word


def _same_thing(new: str, old: str, generic: frozenset[str]) -> bool:
    """Whether two statements share a word naming what is decided or scheduled.

    Words that most examples of the family hold ("favourite", "use", "定") name no one thing.
    """

    def things(text: str) -> set[str]:
        words = _content(_tokens(_when_removed(text))) - generic
        # Chinese words have no spaces: one content character in common is a shared word
        # ("房租", "房东"), as long as it is not a function character.
        return {_stem(w) for w in words if not (_is_cjk(w) and _ZH_STOP & set(w))}

    return bool(things(new) & things(old))


def _is_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


@lru_cache(maxsize=1)
def _bank() -> _Bank:
    raw = json.loads(
        resources.files("memory").joinpath("attribute_prototypes.json").read_text("utf-8")
    )
    names: list[str] = []
    texts: list[str] = []
    frames: dict[str, set[str]] = {}
    generic: dict[str, frozenset[str]] = {}
    own: list[frozenset[str]] = []
    for name, examples in raw["attributes"].items():
        seen: Counter[str] = Counter()
        words_of: list[set[str]] = []
        for example in examples:
            names.append(name)
            texts.append(_BRACKETS.sub(r"\1", example))
            parts = _BRACKETS.split(example)[::2]
            words = {w for part in parts for w in _content(_tokens(_when_removed(part)))}
            words_of.append(words)
            frames.setdefault(name, set()).update(words)
            seen.update(words)
        own.extend(frozenset(w for w in words if seen[w] == 1) for words in words_of)
        # A word that three examples share names the family, not one thing in it.
        stems = Counter(_stem(w) for words in words_of for w in words)
        generic[name] = frozenset(w for w, n in stems.items() if n >= 3)
    # A frame word's weight falls with the number of attributes that use it ("use", "我").
    spread = Counter(w for words in frames.values() for w in words)
    idf = {w: math.log(1 + len(frames) / n) for w, n in spread.items()}
    return _Bank(
        tuple(names),
        tuple(texts),
        tuple("zh" if _is_cjk(t) else "en" for t in texts),
        {k: frozenset(v) for k, v in frames.items()},
        idf,
        frozenset(raw["scoped"]),
        generic,
        tuple(own),
        frozenset().union(*(f for a, f in frames.items() if a != NONE)),
    )


def _standard(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    spread = float(scores.std())
    return (scores - scores.mean()) / spread if spread > 1e-9 else scores * 0.0


def _singles_out(scores: npt.NDArray[np.float64], want: int) -> int:
    """1 when `want` alone scores best (a tie, as a model that reads nothing gives, is no hit)."""
    others = np.delete(scores, want)
    return int(scores[want] > others.max() + 1e-9)


class SlotReader:
    """Reads statements against the example bank with one embedding model."""

    def __init__(self, embed: EmbedFn) -> None:
        self._embed = embed
        bank = _bank()
        self._bank = bank
        self._attributes = tuple(dict.fromkeys(bank.names))
        self._vectors = np.asarray(embed(list(bank.texts)), dtype=np.float32)
        self._index = np.array([self._attributes.index(n) for n in bank.names])
        # Each attribute's examples as a row of indexes into the bank, padded with a sentinel
        # that scores -inf: the two nearest of every attribute in one vectorised step.
        width = int(np.bincount(self._index).max())
        rows = [np.flatnonzero(self._index == i) for i in range(len(self._attributes))]
        sentinel = len(bank.names)
        self._rows = np.array([np.pad(r, (0, width - len(r)), constant_values=sentinel)
                               for r in rows])  # fmt: skip
        self.weights = {lang: self._embedding_weight(lang) for lang in ("en", "zh")}
        self._near = self._family_nearness()
        # A write compares one statement with several neighbours, and recall reads the same
        # memories turn after turn: each text is read once (its vector is the embedder's).
        self._read: OrderedDict[str, dict[str, float]] = OrderedDict()
        self._lock = threading.Lock()  # writes read in threads, recall on the event loop

    def _embedding_scores(self, sims: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """Per attribute, the mean cosine of its two nearest examples."""
        padded = np.append(sims.astype(np.float64), -np.inf)[self._rows]
        two = -np.partition(-padded, 1, axis=1)[:, :2]
        return np.where(np.isfinite(two[:, 1]), two.mean(axis=1), two[:, 0])

    def _frame_scores(self, tokens: set[str], left_out: int = -1) -> npt.NDArray[np.float64]:
        """Per attribute, the weight of the statement's words that its frame holds.

        With `left_out`, that example's own frame words are left out of its attribute's frame.
        """
        total = sum(self._bank.idf.get(t, 0.0) for t in tokens) or 1.0
        out = []
        for a in self._attributes:
            frame = self._bank.frames[a]
            if left_out >= 0 and self._bank.names[left_out] == a:
                frame = frame - self._bank.own[left_out]
            out.append(sum(self._bank.idf[t] for t in tokens & frame) / total)
        return np.array(out)

    def _family_nearness(self) -> dict[tuple[str, str], float]:
        """Per scoped family and language, the cosine `NEAR_QUANTILE` of its example pairs reach."""
        out: dict[tuple[str, str], float] = {}
        names = np.array(self._bank.names)
        langs = np.array(self._bank.langs)
        for family in self._bank.scoped:
            for lang in ("en", "zh"):
                rows = np.flatnonzero((names == family) & (langs == lang))
                if len(rows) < 2:
                    continue
                sims = self._vectors[rows] @ self._vectors[rows].T
                pairs = sims[np.triu_indices(len(rows), 1)]
                out[(family, lang)] = float(np.quantile(pairs, NEAR_QUANTILE))
        return out

    def _one_thing(self, new: str, old: str, family: str) -> bool:
        """Whether two statements of a scoped family are about one thing (see `_same_thing`)."""
        if _same_thing(new, old, self._bank.generic[family]):
            return True
        near = self._near.get((family, "zh" if _is_cjk(new) else "en"))
        if near is None:
            return False
        a, b = np.asarray(self._embed([new, old]), dtype=np.float32)
        return float(a @ b) >= near

    def _embedding_weight(self, lang: str) -> float:
        """How far this model's cosines can be trusted in this language, from 0 to 1.

        The embedding leg's leave-one-out accuracy on this language's examples above chance, as
        a share of both legs' accuracy above chance.
        """
        rows = [i for i, x in enumerate(self._bank.langs) if x == lang]
        if not rows:
            return 0.5
        sims = self._vectors[rows] @ self._vectors.T
        right_embedding = right_frame = 0
        for k, i in enumerate(rows):
            row = sims[k].copy()
            row[i] = -np.inf  # leave the example itself out
            want = self._index[i]
            right_embedding += _singles_out(self._embedding_scores(row), want)
            words = _content(_tokens(_when_removed(self._bank.texts[i])))
            right_frame += _singles_out(self._frame_scores(words, left_out=i), want)
        chance = len(rows) / len(self._attributes)
        e, f = max(right_embedding - chance, 0.0), max(right_frame - chance, 0.0)
        return 0.5 if e + f == 0 else e / (e + f)

    def scores(self, text: str) -> dict[str, float]:
        """Each attribute's score for `text` in standard units (both legs, weighted)."""
        with self._lock:
            known = self._read.get(text)
        if known is not None:
            return known
        vector = np.asarray(self._embed([text]), dtype=np.float32)[0]
        return self.scores_with(text, vector)

    def scores_with(self, text: str, vector: npt.NDArray[np.float32]) -> dict[str, float]:
        """`scores` of `text`, embedded as `vector` by this reader's model."""
        with self._lock:
            known = self._read.get(text)
            if known is not None:
                self._read.move_to_end(text)
                return known
        weight = self.weights["zh" if _is_cjk(text) else "en"]
        embedding = _standard(self._embedding_scores(self._vectors @ vector))
        frame = _standard(self._frame_scores(_content(_tokens(_when_removed(text)))))
        combined = weight * embedding + (1 - weight) * frame
        scores = dict(zip(self._attributes, (float(x) for x in combined), strict=True))
        if len(text) <= MAX_CHARS:  # the cache holds statements, never a long paste
            with self._lock:
                self._read[text] = scores
                if len(self._read) > READ_CACHE:
                    self._read.popitem(last=False)
        return scores

    def slots(
        self,
        text: str,
        margin: float = MARGIN,
        vector: npt.NDArray[np.float32] | None = None,
    ) -> dict[str, float]:
        """Attributes `text` may set: within `margin` of the best, and ahead of "none" by it.

        `vector` is the text's embedding when the caller has it (recall does).
        """
        scores = self.scores(text) if vector is None else self.scores_with(text, vector)
        floor = max(max(scores.values()) - margin, scores[NONE] + margin)
        return {a: s for a, s in scores.items() if a != NONE and s >= floor}

    def _shared_attribute(self, new: str, old: str, margin: float) -> str | None:
        """The attribute two statements both set, if any.

        The stored statement must set it clearly and the new one rank it among its two best (a
        terse update often reads close to "none": "上周刚去米哈游报到，还是干策划"). Failing that,
        read together the two may lead "none" by the margin, each leaning to the attribute more
        than to "none" and ranking it among its two best: a model that cannot read Chinese
        leaves "我一般十二点睡" alone too near "none" to be clear.
        """
        theirs = self.slots(old, margin)
        mine = self.scores(new)
        best = sorted((a for a in mine if a != NONE), key=lambda a: -mine[a])[:2]
        both = [a for a in theirs if a in best and mine[a] > 0]
        if both:
            return max(both, key=lambda a: mine[a] + theirs[a])
        old_scores = self.scores(old)
        joint = {a: mine[a] + old_scores[a] for a in mine if a != NONE}
        attribute = max(joint, key=lambda a: joint[a])
        old_best = sorted(joint, key=lambda a: -old_scores[a])[:2]
        together = joint[attribute] - mine[NONE] - old_scores[NONE] >= margin
        leans = mine[attribute] > mine[NONE] and old_scores[attribute] > old_scores[NONE]
        ranked = attribute in best and attribute in old_best
        return attribute if together and leans and ranked else None

    def compare(self, new: str, old: str, margin: float = MARGIN) -> tuple[Verdict, str] | None:
        """("update" | "agree", attribute) when both statements set one attribute.

        ("apart", family) when they set two members of one family: two schedules, two
        favourites ("my favourite band", "my favourite food"), two decisions.
        """
        if named_value_gone(new, old):
            return "update", self._shared_attribute(new, old, margin) or "person"
        if relationship_ended(new, old):
            return "update", "relationship"
        if need_ended(new, old):
            return "update", self._shared_attribute(new, old, margin) or "need"
        if limit_lifted(new, old):
            return "update", self._shared_attribute(new, old, margin) or "limit"
        if value_given_up(new, old):
            return "update", self._shared_attribute(new, old, margin) or "given up"
        found = self._compare_whole(new, old, margin)
        if found is not None:
            return found
        # The first clause often carries the change and the rest comments on it ("Got engaged
        # in Lisbon last weekend!! Still can't believe it", "Been at KPMG since January, and the
        # commute is way better"): read alone, unless the statement says the value stands
        # ("moved from Ads over to Cloud, same company though", "Still fully plant-based").
        head = first_clause(new)
        rest = new.strip().removeprefix(head)
        if not head or not _WORD.search(rest.lower()) or _CONTINUES.search(new):
            return None  # one clause only ("... in the Cotswolds.")
        return self._compare_whole(head, old, margin)

    def _compare_whole(self, new: str, old: str, margin: float) -> tuple[Verdict, str] | None:
        """`compare` of the statement as a whole."""
        # Another person's value, or a wish, plan or past, is no update; a wish said after the
        # new value leaves it standing.
        # A statement that opens with the name the old one gave is about that person ("Priya
        # left the company, so I report to Tom now" after "My manager is Priya"), and may
        # replace only a value that is a person ("Dana joined Globex" sets nothing of "I work
        # at Acme with my friend Dana").
        named = False
        if different_subjects(new, old):
            named = opens_with_a_name_of(new, old)
            if not named:
                return None
        new = current_part(new)
        if not new:
            return None
        attribute = self._shared_attribute(new, old, margin)
        if attribute is None or (named and attribute not in PERSON_VALUED):
            return None
        mine = self.scores(new)
        best = sorted((a for a in mine if a != NONE), key=lambda a: -mine[a])[:2]
        # Read as its second best, the new statement may be about something else that shares
        # a frame word ("Ran my first 10k" beside "First day at Accenture"): only a value it
        # gives up makes it an update then. In English the attribute must also stand out of
        # "none" by the margin, or the statement name a product of its class ("Zed won me
        # over"): with a model whose cosines lie close together, any chat ("I've been
        # binge-watching Succession this week") has some best attribute. A terse Chinese update
        # often reads close to "none" ("上周刚去米哈游报到"): its best one is enough.
        # A named value the statement says something moved to is the new value: its
        # attribute need only be among its two best readings ("Ported my number to Giffgaff").
        clear = (
            attribute in self.slots(new, margin)
            or (attribute == best[0] and (_is_cjk(new) or attribute in products_named(new)))
            or (attribute in best and _MOVED_TO_NAME.search(new) is not None)
        )
        if (
            attribute in self._bank.scoped
            and not self._one_thing(new, old, attribute)
            and not _WHOLESALE.search(new)
        ):
            return "apart", attribute  # "our standup" and "our weekly review": two schedules
        if _UNCHANGED.search(new):
            return "agree", attribute
        # Any attribute's frame words ("prefer", "use", "每天") carry no value of this one.
        frame = self._bank.all_frames
        new_values, denied = _values(new, frame)
        old_values, _ = _values(old, frame)
        if old_values & denied:
            return "update", attribute  # the old value named only to give it up
        if denied:
            return None  # a denial of something else sets no new value ("haven't eaten meat")
        numbers_new = {w for w in new_values if any(ch.isdigit() for ch in w)}
        numbers_old = {w for w in old_values if any(ch.isdigit() for ch in w)}
        moved = clear or bool(_MOVED.search(new))
        if numbers_new and numbers_old and not numbers_new & numbers_old and moved:
            # The amount or time is the value: "long runs have crept up to 21k" after "my
            # long run on Sundays is about 10k" changes it, whatever else they share. Said to
            # have moved ("up to", "pushed back to", "now"), the attribute need not stand out
            # of "none": the number is the value.
            return "update", attribute
        shared = new_values & old_values
        if shared and (2 * len(shared) >= len(old_values) or _names_in(shared, old)):
            # The old value said again, perhaps with more around it: agreement. One shared
            # common word of several ("senior engineer", "staff engineer") is not; a shared
            # name is ("I work at Google in the Zurich office", "Been at Google four years").
            return "agree", attribute
        if not new_values or not old_values or not clear:
            return None  # one of them names no value of its own ("I never have coffee")
        return "update", attribute


# A name or an amount: a capitalised word inside an English sentence, Latin letters inside
# Chinese ("Vim", "小米14"), a number ("21k", "1600").
_EN_NAME = re.compile(r"(?<=[\w,;:.] )[A-Z][\w-]{1,30}")
_LATIN_IN_ZH = re.compile(r"[A-Za-z][\w.+-]{0,30}")
_AMOUNT = re.compile(r"\d[\w.,:]{0,15}")


def names_something_new(new: str, old: str) -> bool:
    """Whether `new` names a thing or an amount (a name, a product, a number) `old` lacks.

    "Been at Google four years and I still enjoy the Zurich team" names nothing new beside "I
    work at Google in the Zurich office"; "Google was great, but I'm at Meta now" does, and so
    does "Sunday long runs are up to 21k" beside "My long run on Sundays is 10k". A number
    counts only where the old statement holds one: "I can read 300 kanji now" adds detail to
    "I'm learning Japanese".
    """
    text = new[: MAX_CHARS * 4]
    found = _LATIN_IN_ZH.findall(text) if _is_cjk(text) else _EN_NAME.findall(text)
    if _AMOUNT.search(old[: MAX_CHARS * 4]):
        found += _AMOUNT.findall(text)  # the old value holds an amount: a new one replaces it
    said = old.casefold()
    return any(name.strip(".,:").casefold() not in said for name in found)


def names_a_value(text: str) -> bool:
    """Whether `text` holds a word no attribute's frame explains: a value ("Arsenal", "红烧肉")."""
    return bool(_values(text[: MAX_CHARS * 4], _bank().all_frames)[0])


def restates_a_name(new: str, old: str) -> bool:
    """Whether `new` says again a name of `old`'s value ("Google", "Zurich", "11", "Japanese").

    Shared common words ("dark mode" / "light mode", "window seats" / "aisle seats") are no
    agreement: the value is the word that differs.
    """
    frame = _bank().all_frames
    shared = _values(new, frame)[0] & _values(old, frame)[0]
    return bool(shared) and _names_in(shared, old)


@lru_cache(maxsize=4)
def reader(embed: EmbedFn) -> SlotReader:
    """One reader per embedding function (the examples are embedded once)."""
    return SlotReader(embed)


# Words that say a value changed or began: a change verb or any verb in the past ("ported",
# "went platinum blonde"), "now", a time the new value started from. "I use Rust
# for hobby projects" beside "I use Python at work" says none of them.
_CHANGE = re.compile(
    r"\b(?:now|these days|nowadays|lately|recently|since|any ?more|no longer|switched|switching|"
    r"moved|moving|changed|started|starting|swapped|become|became|instead|joined|new|first|got|"
    r"bought|sold|traded|took up|taken up|picked up|went with|going with|decided|promoted|back to|"
    r"retired|quit|left|broke up|split up|relocated|ago|last (?:week|month|year|spring|summer|"
    r"autumn|fall|winter|quarter)|this (?:year|month|week|spring|summer|autumn|fall|winter|"
    r"quarter)|from (?:next|this)|in (?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december|(?:19|20)\d\d))\b"
    r"|\b(?!(?:need|used|based|married|interested|called|named|excited|obsessed)\b)[a-z]{3,}ed\b"
    r"|\b(?:went|got|gotten|took|began|became|won|made|gave|found|split|put|ended up)\b"
    r"|现在|最近|如今|这些天|这几年|这两年|改|换|变|开始|不再|搬|跳槽|入职|加入|离职|辞职|升|转|迁"
    r"|跳到|跳去|新东家|新公司|到期"
    r"|上个?月|去年|今年|年初|年底|以后|从.{0,6}起"
    # A verb's 了 says an action was done or a state came about ("车卖了", "定了React").
    r"|[\u4e00-\u9fff]了|上个?(?:周|星期|礼拜)",
    re.I,
)


# Words that say the value stands: "March 31 is still the date", "这条规矩一直没变".
_UNCHANGED = re.compile(
    r"\b(?:is|are|remains?|stays?)\s+still\b|\b(?:remains?|stays?)\s+(?:the|our|my)\b"
    r"|\bstill\s+(?:the\s+(?:same|date|plan|one)|stands"
    r"|holds|on)\b|\b(?:unchanged|as always|as usual|same as (?:ever|always|before))\b"
    r"|\b(?:nothing(?:'s| has)?|hasn't|haven't|has not|have not) changed\b"
    r"|\bthat's where I'm staying\b|\bstaying put\b"
    # A repair keeps the thing: "got it fixed", "working again", "修好了", "换了电池又好了".
    r"|\b(?:got|had|have)\s+(?:it|them)\s+(?:fixed|repaired)\b|\b(?:working|works)\s+again\b"
    r"|修好|又好了|又能用了"
    r"|\b(?:won't|will not|wouldn't|not going to|never going to|no plans to|not planning to)"
    r"\s+(?:switch|change)\b"
    r"|没变|不变|照旧|依旧|依然|仍然|老样子"
    # A price or amount inside the limit stated before keeps the limit ("found one for £1,350,
    # under our limit", "在预算里面").
    r"|\b(?:under|within|below|inside)\s+(?:(?:the|our|my|your)\s+)?"
    r"(?:limit|budget|cap|max(?:imum)?)\b|\b(?:in|on)\s+budget\b"
    r"|预算(?:里面?|内|以内|之内|范围内)|没超(?:预算|标)?|不超(?:预算)?",
    re.I,
)


# Words that say a statement continues the old value: "same company though", "Still fully
# plant-based", "还是干策划", "跟以前一样".
_CONTINUES = re.compile(r"\bsame\b|^\s*still\b|一样|还是", re.I)


def named_value_gone(new: str, old: str) -> bool:
    """Whether `new` opens by saying that the person `old` gave as a role's value went.

    "Mrs. Okafor retired, so I've started lessons with Tomasz" after "My piano teacher is Mrs.
    Okafor"; "刘洋调去别的部门了" after "我们组长是刘洋". The role need be no attribute the reader
    knows (a piano teacher, a tax accountant, a housekeeper): the value is gone, whatever it was.
    """
    went = _DEPARTED.search(new[:MAX_CHARS])
    if went is None or not_current(new):  # "If Mrs. Okafor retired, ..." is no news
        return False
    head = new[: went.end()]
    names = {n for m in _ROLE_IS_NAME.finditer(old[:MAX_CHARS]) for n in m.groups() if n}
    return any(name in head for name in names)


# A relationship of the user's, given ("My girlfriend Ines and I have been together", "我有女朋友",
# "我和男朋友住在一起"), and said to have ended with the user a party to it ("Ines and I split up",
# "We broke up in the autumn", "上周分手了", "和阿杰分手了"; not "my sister broke up with him").
_TOGETHER = re.compile(
    r"\b(?:girlfriend|boyfriend|partner|wife|husband|fianc[eé]e?|married|together|dating"
    r"|seeing\s+(?:someone|somebody|a\s+(?:guy|girl|man|woman)))\b"
    r"|男朋友|女朋友|男友|女友|对象|老公|老婆|丈夫|妻子|未婚[夫妻]|结婚|在一起|谈恋爱|异地恋|同居",
    re.I,
)
_ENDED = re.compile(
    r"(?i:\b(?:I|we)|\b[A-Z][\w'-]{1,30}\s+and\s+I|^\W{0,3})"
    r"\s*(?:have\s+|had\s+|just\s+|finally\s+|officially\s+)?"
    # "split up the chores" divides something; "split up" alone, or before "in May", ends it.
    r"(?i:broke\s+up|split\s+up(?!\s+(?:the|our|my|a|an|it|them|everything)\b)|got\s+divorced"
    r"|divorced|called\s+it\s+(?:off|quits)"
    r"|separated(?!\s+(?:the|our|my|them|it|out)\b))\b"
    r"|(?:^|[，。！？；,.!?;\s])"
    r"(?:上周|上个?月|去年|前年|今年|年初|年底|最近|前段时间|前阵子|[0-9一二三四五六七八九十两]{1,4}[年月]份?)?"
    r"(?:我们|我和[^，。！？\s]{1,4}|我跟[^，。！？\s]{1,4}|和[^，。！？\s]{1,4}|跟[^，。！？\s]{1,4})?"
    r"(?:已经|早就)?(?:分手|离婚|离了婚)"
)


def relationship_ended(new: str, old: str) -> bool:
    """Whether `new` says that a relationship `old` gave has ended, the user a party to it.

    "Ines and I split up over the summer" after "My girlfriend Ines and I have been together
    about three years"; "上周分手了，又是一个人了" after "我有女朋友，谈了三年了". A relationship is
    a value like any other, but its end names no new one for the reader to compare.
    """
    if not_current(new) or not _TOGETHER.search(old[:MAX_CHARS]):
        return False
    return _ENDED.search(new[:MAX_CHARS]) is not None and _ENDED.search(old[:MAX_CHARS]) is None


# A need or an obligation said to be over, in its clause: "周末终于不用去公司了",
# "现在啥眼镜都不用戴", "I no longer have to drive the kids in". "闹钟都不用定" (no 了, no
# "now") states how things are.
_NO_LONGER_NEEDED = re.compile(
    r"[^，。！？；,.!?;\n]{0,12}不(?:用|必|需要)[^，。！？；,.!?;\n]{1,10}?了"
    r"|[^，。！？；,.!?;\n]{0,12}(?:现在|终于|再也|以后|已经)[^，。！？；,.!?;\n]{0,8}?不(?:用|必|需要)"
    r"[^，。！？；,.!?;\n]{1,10}"
    r"|[^.!?;\n]{0,40}\b(?:no\s+longer\s+(?:have|need)\s+to|(?:don't|do\s+not|doesn't)\s+"
    r"(?:have|need)\s+to\b[^.!?;\n]{1,40}?\b(?:anymore|any\s+more))\b[^.!?;\n]{0,40}",
    re.I,
)


def need_ended(new: str, old: str) -> bool:
    """Whether `new` says that something `old` stated no longer has to be done.

    The clause that says so must name the thing `old` is about: "周末终于不用去公司了" after
    "我周末都要加班", "现在啥眼镜都不用戴" after "我戴隐形眼镜". A Chinese single character shared
    is no naming ("公" of 公司 and 公园).
    """
    if not_current(new):
        return False
    text = new[:MAX_CHARS]
    said = _content(_tokens(_when_removed(old[:MAX_CHARS])))
    for match in _NO_LONGER_NEEDED.finditer(text):
        clause = match.group()
        after = text[match.end() : match.end() + 3]
        if "是不是" in clause or any(mark in after for mark in "?？吗"):
            continue  # asked, not said
        shared = _content(_tokens(_when_removed(clause))) & said
        if any(not _is_cjk(t) or len(t) > 1 for t in shared):
            return True
    return False


# A limit the user gave ("I can't do meetings before 10", "I can only travel on weekends",
# "我不吃辣", "虾蟹都不能碰"), and one said to be lifted: free now ("Kids take the bus now, so I'm
# free from 8"; not "gluten-free"), able now ("可以少量吃了": 了 says it is new), no problem now
# ("现在微辣完全没问题").
_LIMITED = re.compile(
    r"\b(?:can't|cannot|can\s+not|can\s+only|unable\s+to|not\s+allowed|(?:doesn't|don't)"
    r"\s+allow)\b|不能|只能|不吃|不喝|不行|过敏|没空|没时间",
    re.I,
)
_FREE_NOW = re.compile(
    r"(?<![\w-])(?:i'm|i\s+am|we're|we\s+are|(?:mornings|evenings|afternoons|weekends|weekdays)"
    r"\s+are)\s+(?:now\s+|totally\s+|completely\s+)?free\b(?!-)|\b(?:can\s+(?:now|finally)"
    r"|now\s+(?:i|we)\s+can)\b|没问题|有空了",
    re.I,
)
_ABLE_NOW = re.compile(r"(?:可以|能)[^，。！？；,.!?;\n]{0,8}?了")
_WHEN_WORDS = re.compile(
    r"\d|\b(?:mornings?|evenings?|afternoons?|weekends?|weekdays?|midweek|monday|tuesday|wednesday"
    r"|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august"
    r"|september|october|november|december)\b",
    re.I,
)
# Characters that say what is done, not what it is done to ("吃" of 不吃辣 and 可以吃了).
_ZH_DOING = frozenset("吃喝用去来做能可以了没问题碰要会得想行")


def limit_lifted(new: str, old: str) -> bool:
    """Whether `new` says that a limit `old` gave no longer holds, about the same thing.

    The same thing: in Chinese a character both name that is no verb ("辣" of "我不吃辣" and
    "现在微辣完全没问题", "虾" of "虾蟹都不能碰" and "虾可以少量吃了"); in English a time both name
    (the limits people lift are when they can: "before 10" and "free from 8").
    """
    new, old = new[:MAX_CHARS], old[:MAX_CHARS]
    if not_current(new) or not _LIMITED.search(old) or _LIMITED.search(new):
        return False
    able = _ABLE_NOW.search(new)
    if able is None and not (_FREE_NOW.search(new) and marks_change(new)):
        return False
    if _is_cjk(new):
        doing = _ZH_DOING | _ZH_STOP
        return any(ch in old for ch in new if _is_cjk(ch) and ch not in doing)
    return bool(_WHEN_WORDS.search(new) and _WHEN_WORDS.search(old))


# Verbs that give a thing up for good, not for a day ("No coffee today" is no update):
# "Scrapped the Crete idea", "法语先放一放", "德语太难了放弃了".
_GAVE_UP = re.compile(
    r"\b(?:quit|gave\s+up|stopped|scrapped|shelved|abandoned|ditched|sold|got\s+rid\s+of"
    r"|cancell?ed)\b|放弃|放一放|戒了|不学了|搁置|卖了",
    re.I,
)


def value_given_up(new: str, old: str) -> bool:
    """Whether `new` gives up for good a value `old` stated, whatever attribute it is.

    "法语先放一放，现在每天晚上练西班牙语" after "我在学法语": the reader need not know what
    learning French is an attribute of; the user said they gave it up.
    """
    if not_current(new) or different_subjects(new, old) or not _GAVE_UP.search(new):
        return False
    frame = _bank().all_frames
    old_values, _ = _values(old[:MAX_CHARS], frame)
    _, denied = _values(new[:MAX_CHARS], frame)
    return bool(old_values & denied)


def marks_change(text: str) -> bool:
    """Whether a statement says that something changed or began ("now", "since June", "搬到").

    An amount or a time said to have moved to a new one is a change too ("long runs are up to
    28k").
    """
    return bool(_CHANGE.search(text) or _MOVED.search(text))


def sets_attribute(text: str, embed: EmbedFn) -> bool:
    """Whether a statement of the user sets an attribute of theirs, read by meaning."""
    if not text or len(text) > MAX_CHARS or about_someone_else(text) or not_current(text):
        return False
    return bool(reader(embed).slots(text))


def compare(new: str, old: str, embed: EmbedFn) -> tuple[Verdict, str] | None:
    """`SlotReader.compare` with the reader of `embed`, for statements of one clause's size.

    A long memory sets several attributes at once; the examples are single statements, so
    only statements of up to `MAX_CHARS` are read this way (longer ones by patterns alone).
    """
    if not new or not old or len(new) > MAX_CHARS or len(old) > MAX_CHARS:
        return None
    return reader(embed).compare(new, old)


# A Chinese change verb: 换 (not 换气), 改 (not 改进, 改天), moved, left, lapsed, dropped,
# cancelled.
_ZH_CHANGE_VERB = re.compile(
    r"换(?!气)|改(?!进|善|革|良|天)|转到|转去|转岗|迁|搬|跳槽|没续|不续|放下|不再|戒了|退了|取消"
    r"|升(?=了|职|到|为|成)|结束|调去|调到|调走|辞职|离职|到期|倒闭|分手"
)
# Words that keep the old value: "还是放在周三", "没换", "没必要换", "一直没变", "我不会换的",
# "懒得取消", "接着用", "又续费了" (a renewal done, not "续费太贵").
_ZH_KEPT = re.compile(
    r"还是|没必要|一直没|继续|照样|又续|(?<![没不])续(?:费|订|约|租|签)?了"
    r"|接着(?:用|看|住|干|做|玩|吃|喝|学|练|追|听|开)"
    r"|(?:没有?|不|别|懒得)(?:会|想|打算|准备|用|再|去|必)?(?:[换改]|取消|退)"
)
_ZH_VALUE_PAIR = re.compile(r"[成到为了去]?([\u4e00-\u9fff]{2})")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_NAME_NEXT = re.compile(r" ?[A-Za-z0-9]")


def _topic_words(text: str) -> set[str]:
    """Character pairs of a Chinese text that hold no function character and no time word.

    The pair just before Latin letters or digits is a brand's name ("小米13"), not a topic.
    """
    text = _when_removed(text)
    out: set[str] = set()
    for run in _CJK_RUN.finditer(text):
        word = run.group()
        if _NAME_NEXT.match(text, run.end()):
            word = word[:-2]
        out.update(word[i : i + 2] for i in range(len(word) - 1))
    return {pair for pair in out if not set(pair) & _ZH_STOP}


def _restates_change(new: str, old: str) -> bool:
    """Whether every change verb of `new` names a value `old` already gave.

    "次卧改书房总算动工" after "决定把次卧改成书房" says the old statement's change again.
    """
    said = {
        (verb.group(), value.group(1))
        for verb in _ZH_CHANGE_VERB.finditer(old)
        if (value := _ZH_VALUE_PAIR.match(old, verb.end())) is not None
    }
    found = False
    for verb in _ZH_CHANGE_VERB.finditer(new):
        value = _ZH_VALUE_PAIR.match(new, verb.end())
        if value is None or (verb.group(), value.group(1)) not in said:
            return False
        found = True
    return found


def changes_its_topic(new: str, old: str) -> bool:
    """Whether a Chinese statement says the old statement's topic changed, in new words.

    "宽带换联通了，一年能省一百多" after "家里宽带是电信的", "跑步改到早上六点半了" after
    "我一般晚上十点去跑步": the topic is said again beside a change verb, with words the old
    statement lacks, whichever attribute it is (the reading by meaning needs a model that reads
    Chinese). A product's name is no topic ("Mate 60换了块电池": a part, not the phone),
    and a statement that keeps the value ("还是", "没换", "一直没变") changes nothing.
    """
    if not _is_cjk(new) or len(new) > MAX_CHARS or len(old) > MAX_CHARS:
        return False
    new = "" if different_subjects(new, old) else current_part(new)
    if not new or not _ZH_CHANGE_VERB.search(new):
        return False
    if _ZH_KEPT.search(new) or _UNCHANGED.search(new) or _restates_change(new, old):
        return False
    mine, theirs = _topic_words(new), _topic_words(old)
    return bool(mine & theirs) and bool(mine - theirs)
