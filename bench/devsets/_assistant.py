# ruff: noqa: E501  (data: one turn per line reads better than wrapped strings)
"""The personal-assistant development set: many short undated chats, two questions each.

Each chat is a user asking a general assistant for help with everyday things (health, money,
home, family, work), with the facts the user mentions in passing between long generic
replies; questions name the people and things the user talked about, the way they would ask
weeks later. Unlike the other sets, every conversation is short and scored on only two
questions, so one conversation's quirks cannot dominate; unlike LoCoMo there are no named
speakers and no dates.
"""

from __future__ import annotations

from bench.devsets._facts import A, U

ASSISTANT: list[dict[str, object]] = [
    {
        "id": "assistant-1",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "Can you help me plan meals for the week? My partner Tomasz is vegetarian and I eat everything.",
                    "tomasz",
                ),
                (A, "LONG:food", None),
                (U, "Also I can only cook on weekends, weekdays I get home after eight.", "cook"),
                (A, "LONG:planning", None),
            ],
            [
                (U, "We have a slow cooker that my mother gave us, I never used it.", "cooker"),
                (A, "LONG:food", None),
                (U, "thanks, that's useful", None),
            ],
        ],
        "questions": [
            ("What does Tomasz not eat?", ["tomasz"], 4),
            ("Which days can I cook and what appliance could save me time?", ["cook", "cooker"], 1),
        ],
    },
    {
        "id": "assistant-2",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "My knee has been hurting since I started training for the Utrecht half marathon.",
                    "knee",
                ),
                (A, "LONG:running", None),
                (
                    U,
                    "The physio, Dr. Amrani, said to cut my long runs to 12 km for a month.",
                    "physio",
                ),
                (A, "LONG:health", None),
            ],
            [
                (U, "I switched to cycling twice a week to keep my fitness up.", "cycling"),
                (A, "LONG:running", None),
            ],
        ],
        "questions": [
            ("What did Dr. Amrani tell me to change?", ["physio"], 4),
            ("Which race am I preparing for, and what is bothering me?", ["knee"], 4),
        ],
    },
    {
        "id": "assistant-3",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "I want to save for a deposit on a flat; I put away 600 euros a month right now.",
                    "saving",
                ),
                (A, "LONG:budget", None),
                (U, "My bank is ING and the savings account pays 2.1 percent.", "bank"),
                (A, "LONG:budget", None),
            ],
            [
                (U, "My brother Luca offered to lend me 5,000 euros without interest.", "luca"),
                (A, "LONG:budget", None),
                (U, "ok, I'll think about it", None),
            ],
        ],
        "questions": [
            ("How much does Luca want to lend me?", ["luca"], 4),
            ("How much am I saving monthly and what interest do I get?", ["saving", "bank"], 1),
        ],
    },
    {
        "id": "assistant-4",
        "dated": False,
        "sessions": [
            [
                (U, "Our bathroom ceiling has a damp patch above the shower.", "damp"),
                (A, "LONG:planning", None),
                (
                    U,
                    "The landlord, Mrs. Vermeulen, only answers by email and takes a week.",
                    "landlord",
                ),
                (A, "LONG:planning", None),
            ],
            [
                (
                    U,
                    "I bought a dehumidifier for the bathroom, it fills a tank every two days.",
                    "dehumidifier",
                ),
                (A, "LONG:health", None),
            ],
        ],
        "questions": [
            ("How do I reach Mrs. Vermeulen?", ["landlord"], 4),
            (
                "What is wrong in the bathroom and what did I get for it?",
                ["damp", "dehumidifier"],
                1,
            ),
        ],
    },
    {
        "id": "assistant-5",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "My daughter Noor starts primary school in September and she is nervous.",
                    "noor",
                ),
                (A, "LONG:planning", None),
                (
                    U,
                    "Her school is the Montessori one on Linnaeusstraat, a ten minute bike ride.",
                    "school",
                ),
                (A, "LONG:travel", None),
            ],
            [
                (U, "Noor is allergic to kiwi, I have to tell the teacher.", "kiwi"),
                (A, "LONG:food", None),
            ],
        ],
        "questions": [
            ("What must Noor's teacher know about food?", ["kiwi"], 4),
            ("Which school will my child go to?", ["school"], 3),
        ],
    },
    {
        "id": "assistant-6",
        "dated": False,
        "sessions": [
            [
                (U, "I have a job interview at Adyen for a data analyst role.", "interview"),
                (A, "LONG:planning", None),
                (U, "The recruiter said there will be a SQL test and a case study.", "test"),
                (A, "LONG:planning", None),
            ],
            [
                (
                    U,
                    "My friend Ayasha works there and said the team uses Looker for dashboards.",
                    "ayasha",
                ),
                (A, "LONG:planning", None),
                (U, "great, thank you", None),
            ],
        ],
        "questions": [
            ("Which dashboard tool did Ayasha mention?", ["ayasha"], 4),
            ("What should I practise before the interview?", ["test"], 3),
        ],
    },
    {
        "id": "assistant-7",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "I'd like to learn to bake sourdough; my starter is called Bubbles and lives in the fridge.",
                    "starter",
                ),
                (A, "LONG:food", None),
                (U, "My oven runs about 20 degrees hotter than the dial says.", "oven"),
                (A, "LONG:food", None),
            ],
            [
                (U, "The last loaf came out flat and dense, I think I over-proofed it.", "loaf"),
                (A, "LONG:food", None),
            ],
        ],
        "questions": [
            ("Where do I keep Bubbles?", ["starter"], 4),
            ("Why might my bread be failing?", ["loaf", "oven"], 1),
        ],
    },
    {
        "id": "assistant-8",
        "dated": False,
        "sessions": [
            [
                (U, "I'm buying a birthday present for my grandfather Henk, he turns 90.", "henk"),
                (A, "LONG:gift", None),
                (U, "He loves chess and listens to jazz records every evening.", "hobbies"),
                (A, "LONG:gift", None),
            ],
            [
                (
                    U,
                    "My budget for the present is about 150 euros, shared with my cousins.",
                    "gift_budget",
                ),
                (A, "LONG:budget", None),
            ],
        ],
        "questions": [
            ("How old will Henk be?", ["henk"], 4),
            (
                "What does my grandfather enjoy, and how much can we spend on him?",
                ["hobbies", "gift_budget"],
                1,
            ),
        ],
    },
]
