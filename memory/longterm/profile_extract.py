"""Reading structured profile fields out of long-term preference statements (rules, no model).

Seed 002 §四.1: long-term preferences are best kept structured — language, output format,
style, risk level — because they are injected before every decision and structure leaves less
room for ambiguity than prose. Each pattern maps a statement to one field value; a negated
statement ("don't use tables") sets nothing, since a missing preference is not its opposite.
"""

from __future__ import annotations

import re

from memory.longterm.consolidation.agreement import is_negative

_LANGUAGES = {
    "chinese": "zh-CN", "mandarin": "zh-CN", "中文": "zh-CN", "汉语": "zh-CN",
    "english": "en", "英文": "en", "英语": "en", "german": "de", "french": "fr",
    "spanish": "es", "japanese": "ja", "日语": "ja", "korean": "ko", "portuguese": "pt",
    "italian": "it", "russian": "ru", "dutch": "nl",
}  # fmt: skip
_CODE = (
    "typescript|javascript|python|rust|golang|java|kotlin|swift|ruby|scala|haskell|elixir"
    "|c\\+\\+|c#|php|sql"
)

# (field, value, pattern). A value of None means "the matched group, normalised".
PATTERNS: list[tuple[str, str | None, re.Pattern[str]]] = [
    ("language", None, re.compile(
        r"\b(?:in|reply in|respond in|answer in|write in|use)\s+(" + "|".join(
            k for k in _LANGUAGES if k.isascii()) + r")\b|(中文|汉语|英文|英语|日语)")),
    ("output_format", "markdown", re.compile(r"\bmarkdown\b")),
    ("output_format", "table", re.compile(r"\btables?\b|表格")),
    ("output_format", "bullet points", re.compile(r"\bbullet(?:ed)?(?: points?| lists?)?\b|要点")),
    ("output_format", "json", re.compile(r"\bjson\b")),
    ("output_format", "plain text", re.compile(r"\bplain text\b|纯文本")),
    ("verbosity", "concise", re.compile(
        r"\b(?:concise|brief|short|terse|succinct|to the point)\b|简洁|简短|精简")),
    ("verbosity", "detailed", re.compile(r"\b(?:detailed|thorough|in[- ]depth|in detail)\b|详细")),
    ("style", "examples-first", re.compile(
        r"\bexamples?\b.{0,30}\b(?:first|before)\b|先.{0,6}(?:示例|例子)")),
    ("style", "formal", re.compile(r"\bformal\b|正式")),
    ("style", "casual", re.compile(r"\b(?:casual|informal|relaxed)\b|随意|轻松")),
    ("report_style", "executive-summary-first", re.compile(
        r"\b(?:executive )?summary\b.{0,20}\b(?:first|on top|up front)\b|tl;?dr|先.{0,4}结论")),
    ("code_style", "readability-first", re.compile(r"\breadab(?:le|ility)\b|可读性")),
    ("code_style", "performance-first", re.compile(r"\bperforman(?:ce|t)\b.{0,20}\bfirst\b")),
    ("code_language", None, re.compile(r"(?<![\w+#])(" + _CODE + r")(?![\w+#])")),
    ("risk_level", "low", re.compile(
        r"\b(?:conservative|cautious|low[- ]risk|risk[- ]averse|safe bets?)\b|保守|低风险")),
    ("risk_level", "medium", re.compile(r"\b(?:moderate|balanced) risk\b|稳健|中等风险")),
    ("risk_level", "high", re.compile(
        r"\b(?:aggressive|high[- ]risk|risk[- ]tolerant)\b|激进|高风险")),
]  # fmt: skip

FIELDS = ("language", "output_format", "verbosity", "style", "report_style", "code_style",
          "code_language", "risk_level")  # fmt: skip


def _normalise(field: str, raw: str) -> str:
    raw = raw.lower()
    if field == "language":
        return _LANGUAGES.get(raw, raw)
    return {"golang": "go", "c#": "csharp"}.get(raw, raw)


def extract(statement: str) -> dict[str, str]:
    """The profile fields one statement sets (the first match per field)."""
    if is_negative(statement):
        return {}
    text = statement.lower()
    found: dict[str, str] = {}
    for field, value, pattern in PATTERNS:
        if field in found:
            continue
        match = pattern.search(text)
        if match is None:
            continue
        if value is None:
            group = next((g for g in match.groups() if g), match.group(0))
            value = _normalise(field, group)
        found[field] = value
    return found
