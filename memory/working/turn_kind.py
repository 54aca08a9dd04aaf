"""Classify a user turn: question, instruction, preference/constraint, correction or chit-chat.

Rules in English and Chinese, checked in a fixed order (a correction that asks a question is a
correction; a polite request ending in "?" is an instruction). Deterministic and ~10 µs.
"""

from __future__ import annotations

import re
from typing import Literal

from memory.working.context_rules import CONSTRAINT_RE, split_sentences

TurnKind = Literal["question", "instruction", "preference", "correction", "chitchat"]

_CORRECTION = re.compile(
    r"^\s*(no[,.!]|nope|actually\b|wrong\b|that'?s (not|wrong|incorrect)|that is (not|wrong)|"
    r"i meant\b|i mean\b|correction\b|not quite\b|you misunderstood)"
    r"|\b(that'?s not what i (asked|meant|said)|i said\b|not \w+,? but\b)"
    r"|^\s*(不对|不是|错了|我是说|我的意思是|更正|纠正|搞错了|你理解错了)",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(i prefer|i'd prefer|i would prefer|i like|i love|i hate|i dislike|i'd rather|"
    r"i would rather|my favou?rite|call me|from now on|in the future|going forward|"
    r"please always|please never|remember that)\b"
    r"|我喜欢|我更喜欢|我偏好|我讨厌|我不喜欢|以后(?:都|请|要|不要|别|总是|一律)|今后|从现在开始|请记住|记住|叫我",
    re.IGNORECASE,
)
_CHITCHAT = re.compile(
    r"^\s*(hi|hello|hey|yo|thanks|thank you|thx|ty|ok|okay|k|cool|nice|great|lol|haha|"
    r"good (morning|night|evening|afternoon)|bye|goodbye|see you|how are you|sounds good|"
    r"got it|you'?re welcome|你好|您好|嗨|谢谢|多谢|好的|好|嗯|哈哈+|早上好|晚安|再见|收到|明白了?)"
    r"[\s!.,?~。！，？]*$",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^\s*(please\b|pls\b|can you|could you|would you|will you|help me|let'?s|i need|"
    r"i want you to|new task|write|create|make|build|fix|add|remove|delete|generate|implement|"
    r"refactor|translate|summari[sz]e|explain|draft|update|change|rename|convert|show me|"
    r"give me|list|find|run|deploy|set up|configure|install|review|check|compare|plan)\b"
    r"|^\s*(请|帮我|帮忙|麻烦|给我|替我|写|生成|实现|修复|创建|添加|删除|翻译|总结|解释|"
    r"检查|部署|配置|列出|比较|新任务|把)",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^\s*(what|why|how|when|where|who|whom|which|whose|is|are|am|was|were|do|does|did|"
    r"can|could|should|would|will|shall|may|might|have|has|had)\b",
    re.IGNORECASE,
)
_QUESTION_ZH = re.compile(
    r"[吗呢么]\s*[？?]?\s*$|什么|为什么|怎么|怎样|如何|哪|几|多少|是否|是不是"
)


def is_question(text: str) -> bool:
    """True when the text asks something (question mark, wh-word / auxiliary start, 吗/什么)."""
    stripped = text.rstrip()
    if stripped.endswith(("?", "？")):
        return True
    return bool(_QUESTION_START.match(stripped) or _QUESTION_ZH.search(stripped))


def classify_turn(text: str) -> TurnKind:
    """Classify a user turn with English + Chinese rules (first match wins).

    Order: correction, stated preference, chit-chat, request (instruction, even when phrased
    "can you ...?" or carrying a constraint), constraint statement (preference when every
    sentence is a rule, else an instruction with rules), question;
    anything else is an instruction when it has at least 4 words (or 8 non-ASCII characters),
    else chit-chat.
    """
    if _CORRECTION.search(text):
        return "correction"
    if _PREFERENCE.search(text):
        return "preference"
    if _CHITCHAT.match(text):
        return "chitchat"
    if _REQUEST.match(text):
        return "instruction"
    if CONSTRAINT_RE.search(text) and not is_question(text):
        # Only rules: a constraint statement. Rules plus something else: a task with rules.
        rules_only = all(CONSTRAINT_RE.search(s) for s in split_sentences(text))
        return "preference" if rules_only else "instruction"
    if is_question(text):
        return "question"
    long_enough = len(text.split()) >= 4 or (len(text.strip()) >= 8 and not text.isascii())
    return "instruction" if long_enough else "chitchat"
