# ruff: noqa: E501  (data: one turn per line reads better than wrapped strings)
"""The dated development set: journals over two months, asked about by time.

The same kind of thing happens again and again (dinner parties, climbing sessions, budget
reviews, interviews), so a question that names a month ("in April") can only find its turn
through when it happened; "when" questions ask for a date that one turn states while other
turns talk about the same thing without one. This is what the temporal and "when" weights of
recall need to be chosen on; the other sets have almost no dated questions. Sessions are nine
days apart from 12 March 2025, so the last one (the benchmark's `now`) is 14 May 2025.
"""

from __future__ import annotations

from bench.devsets._facts import A, U

DATED: list[dict[str, object]] = [
    {
        "id": "dated-1",
        "dated": True,
        "sessions": [
            [
                (
                    U,
                    "I hosted a dinner party tonight and made a mushroom risotto for six people.",
                    "dinner_mar",
                ),
                (A, "LONG:food", None),
                (
                    U,
                    "I need to renew my passport, the old one expires this summer.",
                    "passport_need",
                ),
            ],
            [
                (
                    U,
                    "Went bouldering at the gym with Jonas and finally sent my first V4.",
                    "climb_mar",
                ),
                (A, "LONG:planning", None),
            ],
            [
                (
                    U,
                    "Booked the passport appointment for the 2nd of June at nine in the morning.",
                    "passport_when",
                ),
                (A, "LONG:planning", None),
            ],
            [
                (
                    U,
                    "Had people over for dinner again, this time I cooked a lamb tagine with apricots.",
                    "dinner_apr",
                ),
                (A, "LONG:food", None),
                (
                    U,
                    "The passport photos got rejected because of the shadow behind my head.",
                    "passport_photo",
                ),
            ],
            [
                (
                    U,
                    "Climbing with Jonas again, we drove out to the limestone crag near the river.",
                    "climb_apr",
                ),
                (A, "LONG:planning", None),
            ],
            [
                (
                    U,
                    "My brother's flight lands on the 15th of May at 6 pm and I'll pick him up.",
                    "brother_when",
                ),
                (A, "LONG:planning", None),
                (U, "My brother wants to see the castle while he is here.", "brother_castle"),
            ],
            [
                (
                    U,
                    "Hosted friends for dinner and made a Thai green curry, too spicy for Jonas.",
                    "dinner_may",
                ),
                (A, "LONG:food", None),
            ],
            [
                (U, "Bouldering session today, I twisted my ankle falling off a V3.", "climb_may"),
                (A, "LONG:planning", None),
            ],
        ],
        "questions": [
            ("What did I cook for my dinner party in March?", ["dinner_mar"], 2),
            ("What dish did I make for guests in April?", ["dinner_apr"], 2),
            ("Where did I go climbing in April?", ["climb_apr"], 2),
            ("What happened at climbing in May?", ["climb_may"], 2),
            ("What grade did I manage in March?", ["climb_mar"], 2),
            ("When is my passport appointment?", ["passport_when"], 2),
            ("When does my brother arrive?", ["brother_when"], 2),
        ],
    },
    {
        "id": "dated-2",
        "dated": True,
        "sessions": [
            [
                (
                    U,
                    "Ran the quarterly budget review with finance, we cut the travel budget by a fifth.",
                    "budget_mar",
                ),
                (A, "LONG:planning", None),
            ],
            [
                (
                    U,
                    "Interviewed a backend candidate today, Amara, very strong on Postgres.",
                    "interview_mar",
                ),
                (A, "LONG:planning", None),
            ],
            [
                (U, "The team offsite is on the 22nd of May in Lisbon.", "offsite_when"),
                (A, "LONG:planning", None),
            ],
            [
                (
                    U,
                    "Budget review again, finance approved two new hires for the platform team.",
                    "budget_apr",
                ),
                (A, "LONG:planning", None),
            ],
            [
                (
                    U,
                    "Interviewed Kenji for the data role, good with dbt but weak on query tuning.",
                    "interview_apr",
                ),
                (A, "LONG:planning", None),
                (U, "Still not sure where to book the offsite dinner.", "offsite_dinner"),
            ],
            [
                (U, "My performance review with Priya is on the 9th of June.", "review_when"),
                (A, "LONG:planning", None),
            ],
            [
                (
                    U,
                    "Interviewed Sofia for the frontend opening, she built a design system at her last job.",
                    "interview_may",
                ),
                (A, "LONG:planning", None),
            ],
            [
                (
                    U,
                    "Budget review for May: we are five percent over on cloud costs.",
                    "budget_may",
                ),
                (A, "LONG:planning", None),
                (U, "Priya said my performance review will focus on mentoring.", "review_topic"),
            ],
        ],
        "questions": [
            ("Who did I interview in March?", ["interview_mar"], 2),
            ("Which candidate did I talk to in April and how did it go?", ["interview_apr"], 2),
            ("What came out of the budget meeting in April?", ["budget_apr"], 2),
            ("What did the budget review in March decide?", ["budget_mar"], 2),
            ("Who was the candidate I met in May?", ["interview_may"], 2),
            ("When is the offsite?", ["offsite_when"], 2),
            ("When is my performance review?", ["review_when"], 2),
        ],
    },
]
