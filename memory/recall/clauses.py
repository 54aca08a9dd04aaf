"""The separate questions a query asks ("Which days can I cook, and what appliance could help?").

A message that asks two things is embedded as one vector that sits between them, and each
answer is nearer to its own question than to the blend: in the long-history development check,
"Which days can I cook and what appliance could save me time?" found the turn about cooking
days first and the slow cooker 46th. Recall ranks each clause as a query of its own beside the
whole query and keeps, per memory, its best (`UserIndex.search`).

A query is split where it joins questions:

- after a question mark and a space, then more text ("Where is the dentist? And when do I
  go?"; a "?" inside a word or a link, "page?id=3", splits nothing);
- before "and" that starts a new question: ", and what ...", " and who ...", or an auxiliary
  ("and is", "and did", ...);
- in Chinese, after "？", and at a comma followed by "还有", "以及", "另外" or "并且" (the
  connective, like "and", is no part of either question).

Each part must have content words of its own, or nothing is split ("Where and when is the
wedding?" asks one thing). A part that does not ask anything ("What's the deadline? I forgot.")
stays with the question before it, and so does one that asks about what that question names
("Which test was flaky and what caused it?": "it" is the test, and "what caused it" alone
finds anything that caused anything; on the coding development set splitting there lost an
answer from the top 5). At most `MAX_CLAUSES` parts; a longer list of questions keeps
its tail together in the last. Every pattern is linear in the text (no nested quantifiers) and
reads at most `MAX_CHARS` characters.
"""

from __future__ import annotations

import re

from memory.recall.relevance import content_terms

MAX_CLAUSES = 3
MAX_CHARS = 2000

_WH = (
    r"what|which|who|whom|whose|why|how|when|where|is|are|was|were|do|does|did|can|could|"
    r"should|shall|will|would|has|have|had|may|might|must"
)
# The boundary itself is matched; the part after it starts at the question word, which stays.
# Whitespace is collapsed first, so no pattern repeats over blanks (a run of them would be
# rescanned from every position).
_JOIN = re.compile(
    rf"(?:, ?| )and (?=(?:{_WH})\b)|(?<=\?) (?=\S)|(?<=？) ?(?=\S)|[，,] ?(?:还有|以及|另外|并且)",
    re.IGNORECASE,
)
# A clause with a third-person pronoun asks about what the clause before it names ("Which test
# was flaky and what caused it?"): on its own it is a vague query whose best matches are noise.
_REFERS = re.compile(
    r"\b(?:it|its|they|them|their|theirs|he|him|his|she|her|hers)\b|[它他她]", re.IGNORECASE
)
_ASKS = re.compile(rf"[?？]$|^(?:{_WH})\b|吗|呢|什么|哪|谁|几|多少|怎么|为什么|如何", re.IGNORECASE)


def split_clauses(query: str) -> list[str]:
    """The query's separate questions, or [] when it asks one thing (see the module doc)."""
    text = " ".join(query[:MAX_CHARS].split())
    parts: list[str] = []
    start = 0
    for match in _JOIN.finditer(text):
        parts.append(text[start : match.start()])
        start = match.end()
    parts.append(text[start:])
    merged: list[str] = []
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if merged and (not _ASKS.search(part) or _REFERS.search(part)):
            # A remark after a question, or a question about what the one before it names,
            # belongs to it.
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    if len(merged) > MAX_CLAUSES:
        merged[MAX_CLAUSES - 1 :] = [" ".join(merged[MAX_CLAUSES - 1 :])]
    if len(merged) < 2 or not all(content_terms(part) for part in merged):
        return []
    return merged
