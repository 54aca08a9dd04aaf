"""Reading a LoCoMo-format file into conversations, turns and questions.

Tolerant by design: the benchmark must accept any file of this format, so missing dates,
odd session keys, non-string fields and malformed evidence ids are handled, never fatal.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_SESSION = re.compile(r"^session_(\d+)$")
_ID_CHARS = re.compile(r"[^A-Za-z0-9_.@:\-]")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y", "%Y-%m-%d")
# Sessions without a usable date are placed a day after the previous one (or at this epoch).
_FALLBACK_DATE = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(slots=True)
class Turn:
    """One utterance of a conversation."""

    dia_id: str
    speaker: str
    text: str
    caption: str
    session: int
    date: datetime


@dataclass(slots=True)
class Question:
    """A question with its category and gold evidence turn ids."""

    question: str
    category: int
    evidence: list[str]


@dataclass(slots=True)
class Conversation:
    """A sample: its turns in order, and its questions."""

    sample_id: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    @property
    def last_date(self) -> datetime:
        """The date of the last session: the benchmark's `now`."""
        return max((t.date for t in self.turns), default=_FALLBACK_DATE)


def parse_date(text: object) -> datetime | None:
    """'1:56 pm on 8 May, 2023' (and a few other layouts) as UTC, or None."""
    if not isinstance(text, str):
        return None
    cleaned = " ".join(text.replace("\u202f", " ").split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _turns(conv: dict[str, Any]) -> list[Turn]:
    numbers = sorted(int(m.group(1)) for key in conv if (m := _SESSION.match(str(key))))
    turns: list[Turn] = []
    previous = _FALLBACK_DATE
    for number in numbers:
        date = parse_date(conv.get(f"session_{number}_date_time")) or previous
        previous = date
        session = conv.get(f"session_{number}")
        for raw in session if isinstance(session, list) else []:
            if not isinstance(raw, dict) or not raw.get("dia_id"):
                continue
            turns.append(
                Turn(
                    dia_id=str(raw["dia_id"]),
                    speaker=str(raw.get("speaker") or "unknown"),
                    text=str(raw.get("text") or ""),
                    caption=str(raw.get("blip_caption") or ""),
                    session=number,
                    date=date,
                )
            )
    return turns


def _questions(qa: object) -> list[Question]:
    out: list[Question] = []
    for raw in qa if isinstance(qa, list) else []:
        if not isinstance(raw, dict) or not isinstance(raw.get("question"), str):
            continue
        try:
            category = int(raw.get("category", 0))
        except (TypeError, ValueError):
            category = 0
        evidence = raw.get("evidence")
        if isinstance(evidence, str):
            evidence = [evidence]
        ids = [str(e) for e in evidence] if isinstance(evidence, list) else []
        out.append(Question(raw["question"], category, ids))
    return out


def load(path: Path, *, limit: int | None = None) -> list[Conversation]:
    """Conversations from a LoCoMo-format JSON file (a list of samples)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    samples = data if isinstance(data, list) else [data]
    out: list[Conversation] = []
    seen: set[str] = set()
    for i, sample in enumerate(samples[:limit] if limit else samples):
        if not isinstance(sample, dict):
            continue
        conv = sample.get("conversation")
        # Sample ids become user ids: make them valid and unique, or two samples would share
        # one user's memories.
        sample_id = _ID_CHARS.sub("_", str(sample.get("sample_id") or ""))[:100] or "sample"
        if sample_id in seen:
            sample_id = f"{sample_id}-{i}"
        seen.add(sample_id)
        out.append(
            Conversation(
                sample_id=sample_id,
                turns=_turns(conv) if isinstance(conv, dict) else [],
                questions=_questions(sample.get("qa")),
            )
        )
    return out
