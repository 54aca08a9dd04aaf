"""Rules that spot decision state in conversation text (English and Chinese).

Shared by the extractive summary, the selective context strategy and the task state: a
sentence is a *constraint* ("must", "never", "不要"), a *decision* ("we decided", "决定"), a
*failure* ("error", "403", "失败"), an *open item* ("TODO", "next", "待办") or a *fact* worth
keeping (numbers, names, dates). Rules, not a model: ~10 µs per message, deterministic.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

ItemKind = Literal["constraint", "decision", "failure", "open_item", "fact"]

# Order matters: a sentence matching several kinds takes the first (most decision-relevant).
KIND_ORDER: tuple[ItemKind, ...] = ("constraint", "decision", "failure", "open_item", "fact")

CONSTRAINT_RE = re.compile(
    r"\b(must|mustn't|must not|never|always|do not|don't|dont|cannot|can't|shall not|"
    r"should not|shouldn't|only use|no more than|at most|at least|make sure|required?|"
    r"forbidden|not allowed|avoid)\b"
    r"|必须|务必|一定要|不要|不能|不得|不准|禁止|不许|只能|只用|至少|最多|始终|总是|永远"
    # 别 alone is too common inside words (特别, 区别); only as a sentence-initial "don't".
    r"|(?:^|[，,。！!\s])别(?=[用再做写改删碰动])",
    re.IGNORECASE,
)
DECISION_RE = re.compile(
    r"\b(decided?|decision|we'll go with|let's go with|go with|chose|choose|chosen|"
    r"confirmed?|agreed?|settled on|will use|switch(ed)? to|picked|approved?)\b"
    r"|决定|确认|选择|选定|采用|定了|就用|改用|同意|批准",
    re.IGNORECASE,
)
FAILURE_RE = re.compile(
    r"\b(error|errors|failed|fails|failure|exception|traceback|timeout|timed out|crash(ed)?|"
    r"refused|denied|forbidden|rate limit(ed)?|401|403|404|429|502|503|504)\b"
    r"|失败|报错|错误|异常|超时|崩溃|拒绝|限流",
    re.IGNORECASE,
)
OPEN_RE = re.compile(
    r"\b(todo|to do|next step|next steps|pending|still need|need to|remaining|open question|"
    r"follow up|not yet|unresolved)\b"
    r"|待办|下一步|还需要|尚未|未完成|待定|接下来|之后再",
    re.IGNORECASE,
)
NUMBER_RE = re.compile(r"\d")
# A capitalised word after the first of a sentence: a crude but cheap proper-noun signal.
NAME_RE = re.compile(r"(?<=\s)[A-Z][a-z]+|[A-Z]{2,}")

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_WS = re.compile(r"\s+")
_NORM_STRIP = re.compile(r"[^\w]+")

_PATTERNS: dict[ItemKind, re.Pattern[str]] = {
    "constraint": CONSTRAINT_RE,
    "decision": DECISION_RE,
    "failure": FAILURE_RE,
    "open_item": OPEN_RE,
}


def split_sentences(text: str) -> list[str]:
    """Split text into trimmed, non-empty sentences (English and Chinese punctuation)."""
    return [s for s in (_WS.sub(" ", p).strip() for p in _SENTENCE_SPLIT.split(text)) if s]


def sentence_kind(sentence: str, role: str) -> ItemKind | None:
    """The decision-state kind of one sentence, or None when it carries none.

    Constraints come only from the user: an assistant or a tool saying "you must" is not a
    rule the user set. Tool output only ever yields failures (it is untrusted text).
    """
    allowed: tuple[ItemKind, ...]
    if role == "tool":
        allowed = ("failure",)
    elif role == "user":
        allowed = KIND_ORDER
    else:
        allowed = ("decision", "failure", "open_item", "fact")
    for kind in allowed:
        if kind == "fact":
            if len(sentence) >= 12 and (NUMBER_RE.search(sentence) or NAME_RE.search(sentence)):
                return "fact"
        elif _PATTERNS[kind].search(sentence):
            return kind
    return None


def normalise_key(text: str) -> str:
    """A dedupe key: lower case, punctuation and spacing removed."""
    return _NORM_STRIP.sub(" ", text.lower()).strip()


# Weights for the selective strategy: constraints outrank decisions outrank errors (losing a
# constraint breaks the task; an old error only costs a retry).
_IMPORTANCE: dict[ItemKind, float] = {
    "constraint": 3.0,
    "decision": 2.5,
    "failure": 2.0,
    "open_item": 1.0,
    "fact": 0.0,
}


# The selective strategy rescores the whole history every turn; the same strings come back each
# time, so a cache turns ~70 µs of regex work per message into one dict lookup.
@lru_cache(maxsize=8192)
def importance(text: str, role: str) -> float:
    """Rule-based importance of a message: constraints, decisions, errors, numbers, names."""
    score = 0.3 if role == "user" else 0.0
    for kind, pattern in _PATTERNS.items():
        if kind == "constraint" and role != "user":
            continue
        if pattern.search(text):
            score += _IMPORTANCE[kind]
    if NUMBER_RE.search(text):
        score += 1.0
    if NAME_RE.search(text):
        score += 0.5
    return score
