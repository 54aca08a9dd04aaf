"""The floor through the real embedder, on a stored history of realistic size and variety.

A question about the world injects nothing from a long personal history, while a paraphrase
of something the user said passes with the memory that answers it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench._locomo_backends import SystemBackend
from bench._locomo_vectors import VectorCache
from memory.storage.embedding import get_embedder
from memory.types import NewMemory, Scope

USER = Scope("acme", "long-history")
NOW = datetime(2024, 6, 1, tzinfo=UTC)
ANSWER = "I practise the guitar for about forty-five minutes every evening after dinner."
HISTORY = [
    ANSWER,
    "Can you suggest a beginner fingerpicking pattern for folk songs?",
    "My daughter starts primary school in September and I'm nervous about the routine.",
    "I've been trying to cut down on coffee, I'm at two cups a day now.",
    "We adopted a rescue greyhound called Pepper last spring.",
    "Help me write an email to my landlord about the broken boiler.",
    "I work as a data analyst at a logistics company, mostly SQL and dashboards.",
    "What's a good recipe for a vegetarian lasagne for eight people?",
    "My knee has been sore since the half marathon in March.",
    "Remind me which stretches help with runner's knee.",
    "I'm planning a week in Scotland in August, probably Edinburgh and Skye.",
    "Could you compare a few budget mirrorless cameras for travel photography?",
    "My partner's birthday is on the 14th of July, I want to book a nice restaurant.",
    "I switched my phone plan to a cheaper provider last month.",
    "How do I keep basil alive on a north-facing windowsill?",
    "I'm reading a novel about a lighthouse keeper, it's slow but lovely.",
    "Our team moved from weekly to fortnightly sprints this quarter.",
    "Can you explain how compound interest works on a savings account?",
    "I volunteer at the food bank on Saturday mornings.",
    "The car needs its MOT before the end of the month.",
    "I'd like to learn a few phrases in Japanese before my conference trip.",
    "My brother is moving to Canada for a job in Vancouver.",
    "What are some easy stretches to do at my desk?",
    "I've started journaling before bed, it helps me sleep.",
    "Suggest a playlist for a long drive, something upbeat.",
    "We're repainting the living room a pale sage green.",
    "I'm allergic to cats, so visiting my aunt is always tricky.",
    "How should I prepare for a salary review meeting?",
    "My grandmother turns ninety next year and we're planning a party.",
    "I keep forgetting to water the tomatoes on the balcony.",
]


@pytest.fixture
async def backend(embedding_model_dir: Path) -> SystemBackend:
    system = SystemBackend(VectorCache(get_embedder("local:all-MiniLM-L6-v2", embedding_model_dir)))
    start = NOW - timedelta(days=len(HISTORY))
    await system.ingest(
        USER,
        [
            NewMemory(
                content=text,
                occurred_at=start + timedelta(days=i),
                provenance={"dia_ids": [str(i)]},
            )
            for i, text in enumerate(HISTORY)
        ],
    )
    return system


@pytest.mark.parametrize(
    "query",
    ["what's the capital of Peru?", "Who wrote the Odyssey?", "How many moons does Mars have?"],
)
async def test_a_world_question_injects_nothing(backend: SystemBackend, query: str) -> None:
    hits = await backend.recall(USER, query, 10, now=NOW)
    assert hits
    assert not any(h.passed for h in hits), [h.relevance for h in hits if h.passed]


@pytest.mark.parametrize(
    "query",
    ["How long do I play guitar each day?", "how much guitar practice do I do in the evenings?"],
)
async def test_an_on_topic_paraphrase_passes_with_its_answer(
    backend: SystemBackend, query: str
) -> None:
    hits = await backend.recall(USER, query, 10, now=NOW)
    passed = [h for h in hits if h.passed]
    assert passed, [h.relevance for h in hits[:3]]
    assert ["0"] in [h.dia_ids for h in passed]
