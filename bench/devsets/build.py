"""Build the development sets (LoCoMo file format) from `_facts` and `_replies`.

    python -m bench.devsets.build            # rewrites bench/devsets/*.json

The sets are the project's own data for choosing recall signals, weights and the relevance
floor: coding help and planning chats with long assistant replies, one-speaker transcripts,
undated sessions, Chinese conversations, many short personal-assistant chats, dated
journals asked about by month and date, and multi-hop / open-domain questions whose evidence
turns only an entity links (English and Chinese). They are deliberately unlike LoCoMo (short turns
between two named friends in dated sessions). Output is deterministic.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.devsets._assistant import ASSISTANT
from bench.devsets._dated import DATED
from bench.devsets._facts import CHINESE, CODING, MONOLOGUE, PLANNING
from bench.devsets._hops import HOPS, HOPS_ZH
from bench.devsets._replies import FILLER, LONG, NOTES

HERE = Path(__file__).parent
SETS: dict[str, list[dict[str, object]]] = {
    "coding": CODING,
    "planning": PLANNING,
    "monologue": MONOLOGUE,
    "zh": CHINESE,
    "assistant": ASSISTANT,
    "dated": DATED,
    "hops": HOPS,
    "hops_zh": HOPS_ZH,
}
_START = datetime(2025, 3, 3, 10, 0, tzinfo=UTC)
# Filler exchanges added to each session, so every question competes with ~50-80 turns.
_FILLER_PER_SESSION = 5
_FILLER_POOL = {
    "coding": "coding",
    "planning": "planning",
    "zh": "zh",
    "assistant": "planning",
    "dated": "planning",
    "hops": "planning",
    "hops_zh": "zh",
}


def _with_filler(conv: dict[str, Any], pool: str | None, rng: random.Random) -> list[list[Any]]:
    """The sessions with filler exchanges inserted at random places (facts keep their order)."""
    sessions = []
    for session in conv["sessions"]:
        turns = list(session)
        user, helper = turns[0][0], next((t[0] for t in turns if t[0] != turns[0][0]), None)
        for _ in range(_FILLER_PER_SESSION):
            at = rng.randrange(len(turns) + 1)
            if pool is None or helper is None:
                turns.insert(at, (user, rng.choice(NOTES), None))
            else:
                ask, topic = rng.choice(FILLER[pool])
                turns[at:at] = [(user, ask, None), (helper, f"LONG:{topic}", None)]
        sessions.append(turns)
    return sessions


def _date(day: datetime) -> str:
    return (
        f"{day:%I:%M %p} on {day.day} {day:%B, %Y}".lstrip("0")
        .lower()
        .replace(day.strftime("%B").lower(), day.strftime("%B"))
    )


def _text(raw: str, uses: dict[str, int]) -> str:
    if not raw.startswith("LONG:"):
        return raw
    key = raw.removeprefix("LONG:")
    variants = LONG[key]
    n = uses.get(key, 0)
    uses[key] = n + 1
    return variants[n % len(variants)]


def sample(conv: dict[str, Any], pool: str | None) -> dict[str, Any]:
    """One conversation as a LoCoMo sample with gold evidence dia_ids."""
    rng = random.Random(str(conv["id"]))
    body: dict[str, Any] = {}
    keys: dict[str, str] = {}
    speakers: list[str] = []
    uses: dict[str, int] = {}
    for s, session in enumerate(_with_filler(conv, pool, rng), 1):
        turns = []
        for t, (speaker, raw, key) in enumerate(session, 1):
            dia = f"D{s}:{t}"
            if key:
                keys[key] = dia
            if speaker not in speakers:
                speakers.append(speaker)
            turns.append({"speaker": speaker, "dia_id": dia, "text": _text(raw, uses)})
        body[f"session_{s}"] = turns
        if conv["dated"]:
            body[f"session_{s}_date_time"] = _date(_START + timedelta(days=9 * s, hours=s))
    for i, name in enumerate(speakers[:2]):
        body[f"speaker_{'ab'[i]}"] = name
    qa = [
        {"question": q, "answer": "", "evidence": [keys[k] for k in gold], "category": cat}
        for q, gold, cat in conv["questions"]
    ]
    return {"sample_id": conv["id"], "conversation": body, "qa": qa}


def main() -> int:
    """Write every set to bench/devsets/<name>.json."""
    for name, convs in SETS.items():
        out = [sample(c, _FILLER_POOL.get(name)) for c in convs]
        path = HERE / f"{name}.json"
        path.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        turns = sum(len(v) for c in out for k, v in c["conversation"].items()
                    if k.startswith("session_") and isinstance(v, list))  # fmt: skip
        print(f"{path.name}: {len(out)} conversations, {turns} turns")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
