"""Build the development sets (LoCoMo file format) from `_facts` and `_replies`.

    python -m bench.devsets.build            # rewrites bench/devsets/*.json, long/ and paired/

The sets are the project's own data for choosing recall signals, weights and the relevance
floor: coding help and planning chats with long assistant replies, one-speaker transcripts,
undated sessions, Chinese conversations, many short personal-assistant chats, dated
journals asked about by month and date, and multi-hop / open-domain questions whose evidence
turns only an entity links (English and Chinese). They are deliberately unlike LoCoMo (short turns
between two named friends in dated sessions). `long/` holds every English conversation as one
user's history, and `paired/` that history and the Chinese conversations asked two questions
in one message. Output is deterministic.
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


# The long-history check: every English conversation as one user's history, dated journals
# last (so the benchmark's `now` is theirs). Kept in a subfolder so `--dev-sets bench/devsets`
# and the fitting tools leave it out unless asked (`--dev-sets bench/devsets/long`).
LONG_DIR = HERE / "long"
_LONG_SETS = ("coding", "planning", "monologue", "assistant", "hops", "dated")


def long_history(built: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """One LoCoMo sample holding every conversation of `_LONG_SETS`, sessions renumbered.

    Every set's conversations have 2-4 sessions of ~50 turns; a real user's history is long,
    names recur in unrelated conversations, and generic replies repeat. This sample is that
    case, built from the same turns and questions (evidence ids mapped to the new sessions).
    Questions keep their wording, so a fact asked about in one conversation may now have a
    look-alike in another (two partners called Tomasz): every system pays for that alike.
    """
    body: dict[str, Any] = {"speaker_a": "user", "speaker_b": "assistant"}
    qa: list[dict[str, Any]] = []
    number = 0
    for name in _LONG_SETS:
        for conv in built[name]:
            renamed: dict[str, str] = {}
            sessions = sorted(
                (int(k.split("_")[1]), v)
                for k, v in conv["conversation"].items()
                if k.startswith("session_") and isinstance(v, list)
            )
            for old, turns in sessions:
                number += 1
                new_turns = []
                for t, turn in enumerate(turns, 1):
                    renamed[turn["dia_id"]] = f"D{number}:{t}"
                    new_turns.append({**turn, "dia_id": f"D{number}:{t}"})
                body[f"session_{number}"] = new_turns
                date = conv["conversation"].get(f"session_{old}_date_time")
                if date:
                    body[f"session_{number}_date_time"] = date
            qa.extend({**q, "evidence": [renamed[e] for e in q["evidence"]]} for q in conv["qa"])
    return {"sample_id": "long-history", "conversation": body, "qa": qa}


# Two questions in one message: the long history asked pairs of its one-fact questions, and the
# Chinese conversations pairs of their own questions. Real messages often ask two unrelated
# things at once; a single embedding of the whole message sits between the two answers. Kept
# in a subfolder, like the long history, so the fitting tools leave it out unless asked.
PAIRED_DIR = HERE / "paired"
_PAIRS = 60
_ZH_PAIRS = 6  # per Chinese conversation
_WH = ("what", "which", "who", "whose", "why", "how", "when", "where", "is", "are", "do", "does",
       "did", "can", "could", "should", "will", "would", "have", "has")  # fmt: skip


def _joined(first: str, second: str, how: int) -> str:
    """Two English questions as one message, in one of four common ways."""
    bare = first.rstrip("?").rstrip()
    head, _, rest = second.partition(" ")
    if how == 0 or head.lower() not in _WH:
        return f"{first} {second}"
    lower = f"{head.lower()} {rest}"
    return (f"{first} And {lower}", f"{bare}, and {lower}", f"{bare} and {lower}")[how - 1]


def paired(long: dict[str, Any], built: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The paired-question samples: the long history (English) and each Chinese conversation."""
    rng = random.Random("paired")
    single = [q for q in long["qa"] if len(q["evidence"]) == 1 and q["category"] in (2, 4)]
    session = {id(q): int(q["evidence"][0][1:].split(":")[0]) for q in single}
    qa: list[dict[str, Any]] = []
    while len(qa) < _PAIRS:
        a, b = rng.sample(single, 2)
        if abs(session[id(a)] - session[id(b)]) < 3:  # sessions apart: mostly another topic
            continue
        text = _joined(a["question"], b["question"], len(qa) % 4)
        qa.append({"question": text, "answer": "", "evidence": a["evidence"] + b["evidence"],
                   "category": 1})  # fmt: skip
    out = [{**long, "sample_id": "paired-long", "qa": qa}]
    for name in ("zh", "hops_zh"):
        for conv in built[name]:
            asked = [q for q in conv["qa"] if len(q["question"].split("？")) == 2]
            apart = [(a, b) for i, a in enumerate(asked) for b in asked[i + 1 :]
                     if not set(a["evidence"]) & set(b["evidence"])]  # fmt: skip
            pairs = []
            for i, (a, b) in enumerate(rng.sample(apart, min(len(apart), _ZH_PAIRS))):
                text = a["question"] + b["question"] if i % 2 == 0 else (
                    a["question"].rstrip("？") + "，还有" + b["question"])  # fmt: skip
                evidence = a["evidence"] + b["evidence"]
                pairs.append({"question": text, "answer": "", "evidence": evidence, "category": 1})
            out.append({**conv, "sample_id": f"paired-{conv['sample_id']}", "qa": pairs})
    return out


def built_sets() -> dict[str, list[dict[str, Any]]]:
    """Every set as LoCoMo samples."""
    return {name: [sample(c, _FILLER_POOL.get(name)) for c in cs] for name, cs in SETS.items()}


def _write(path: Path, out: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    turns = sum(len(v) for c in out for k, v in c["conversation"].items()
                if k.startswith("session_") and isinstance(v, list))  # fmt: skip
    print(f"{path.name}: {len(out)} conversations, {turns} turns")


def main() -> int:
    """Write every set to bench/devsets/<name>.json, and the long-history check."""
    built = built_sets()
    for name, out in built.items():
        _write(HERE / f"{name}.json", out)
    LONG_DIR.mkdir(exist_ok=True)
    long = long_history(built)
    _write(LONG_DIR / "long.json", [long])
    PAIRED_DIR.mkdir(exist_ok=True)
    _write(PAIRED_DIR / "paired.json", paired(long, built))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
