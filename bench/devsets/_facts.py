# ruff: noqa: E501  (data: one turn per line reads better than wrapped strings)
"""Hand-written facts and questions of the development sets (see `bench.devsets.build`).

Each conversation lists its sessions; a session is a list of (speaker, text, key) turns where
`key` names a turn that questions cite as evidence. Questions are (question, [keys], category)
with LoCoMo's categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop. Questions are
worded the way a user asks later, not copied from the turn, so word overlap alone is not enough.
"""

from __future__ import annotations

Turn = tuple[str, str, str | None]
Question = tuple[str, list[str], int]

U, A = "user", "assistant"

CODING: list[dict[str, object]] = [
    {
        "id": "coding-1",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "Our backend is a FastAPI service on Python 3.11 and we deploy it with Docker on Fly.io.",
                    "stack",
                ),
                (A, "LONG:deploy", None),
                (
                    U,
                    "I prefer tabs for indentation in my own repos, but this team uses black with 100 columns.",
                    "style",
                ),
                (A, "LONG:style", None),
                (U, "thanks, that helps", None),
            ],
            [
                (
                    U,
                    "The flaky test is test_invoice_totals; it fails about once in twenty runs on CI.",
                    "flaky",
                ),
                (A, "LONG:flaky", None),
                (
                    U,
                    "Turned out the flakiness came from a dict ordering assumption in the rounding helper.",
                    "flaky_cause",
                ),
                (A, "LONG:debug", None),
            ],
            [
                (
                    U,
                    "We moved the job queue from Celery to arq because Celery kept leaking memory in the workers.",
                    "queue",
                ),
                (A, "LONG:queue", None),
                (
                    U,
                    "My manager Priya wants the migration finished before the March release.",
                    "manager",
                ),
                (A, "LONG:planning", None),
                (U, "ok great", None),
            ],
            [
                (
                    U,
                    "The Postgres database is version 15 and the biggest table, events, has about 80 million rows.",
                    "db",
                ),
                (A, "LONG:db", None),
                (
                    U,
                    "We decided to partition the events table by month instead of adding more indexes.",
                    "partition",
                ),
                (A, "LONG:db", None),
            ],
        ],
        "questions": [
            ("Which web framework does our backend use?", ["stack"], 4),
            ("Where is the service hosted?", ["stack"], 4),
            ("What formatter and line length does the team use?", ["style"], 4),
            ("Which test was unreliable and what caused it?", ["flaky", "flaky_cause"], 1),
            ("Why did we drop Celery?", ["queue"], 4),
            ("Who needs the queue migration done and by when?", ["manager", "queue"], 1),
            ("How large is the biggest table in our database?", ["db"], 4),
            ("What did we choose to do about the huge events table?", ["partition"], 4),
            ("What background task library do we use now?", ["queue"], 3),
        ],
    },
    {
        "id": "coding-2",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "I'm writing a Rust CLI called tidyup that sorts files in my Downloads folder.",
                    "project",
                ),
                (A, "LONG:rust", None),
                (
                    U,
                    "I'd rather use clap with the derive API than parse arguments by hand.",
                    "clap",
                ),
                (A, "LONG:rust", None),
            ],
            [
                (
                    U,
                    "The build fails on Windows because of a path separator bug in the glob matching.",
                    "windows",
                ),
                (A, "LONG:debug", None),
                (U, "hello again", None),
                (U, "I fixed the Windows problem by switching to the globset crate.", "globset"),
                (A, "LONG:rust", None),
            ],
            [
                (
                    U,
                    "My laptop is a 2019 ThinkPad with 8 GB of RAM, so compile times are painful.",
                    "laptop",
                ),
                (A, "LONG:perf", None),
                (
                    U,
                    "I set up sccache and incremental builds dropped from 90 seconds to 25.",
                    "sccache",
                ),
                (A, "LONG:perf", None),
                (U, "cool, thanks a lot", None),
            ],
            [
                (U, "I plan to publish tidyup on crates.io once it has a dry-run mode.", "publish"),
                (A, "LONG:planning", None),
            ],
        ],
        "questions": [
            ("What does my side project do?", ["project"], 4),
            ("Which argument parser did I pick?", ["clap"], 4),
            ("What broke on Windows and how was it solved?", ["windows", "globset"], 1),
            ("What machine do I develop on?", ["laptop"], 4),
            ("How much faster did the builds get?", ["sccache"], 4),
            ("What must be done before the tool is released?", ["publish"], 4),
            (
                "Why are compilation times slow for me and what fixed them?",
                ["laptop", "sccache"],
                1,
            ),
        ],
    },
]

PLANNING: list[dict[str, object]] = [
    {
        "id": "planning-1",
        "dated": True,
        "sessions": [
            [
                (U, "My sister Ines is getting married in Lisbon on the 14th of June.", "wedding"),
                (A, "LONG:travel", None),
                (U, "I want to fly from Berlin and arrive at least two days early.", "flight"),
                (A, "LONG:travel", None),
            ],
            [
                (U, "good morning!", None),
                (
                    U,
                    "I have a peanut allergy, so the restaurant for the rehearsal dinner must be nut-free.",
                    "allergy",
                ),
                (A, "LONG:food", None),
                (U, "Budget for the whole trip is 1,500 euros including the hotel.", "budget"),
                (A, "LONG:budget", None),
            ],
            [
                (U, "I booked the Hotel Lumiar, three nights, with a view of the river.", "hotel"),
                (A, "LONG:travel", None),
                (
                    U,
                    "My partner Tomasz will join on the second day because of his work.",
                    "partner",
                ),
                (A, "LONG:planning", None),
                (U, "thanks, that's all for today", None),
            ],
            [
                (U, "For the gift we agreed on a set of hand-painted azulejo tiles.", "gift"),
                (A, "LONG:gift", None),
            ],
        ],
        "questions": [
            ("Where and when is the wedding?", ["wedding"], 4),
            ("Which city am I flying out of?", ["flight"], 4),
            ("Are there dietary restrictions for the dinner?", ["allergy"], 4),
            ("How much can I spend on the trip?", ["budget"], 4),
            ("Where am I staying and for how long?", ["hotel"], 4),
            ("Who arrives later than me?", ["partner"], 4),
            ("What present are we giving the couple?", ["gift"], 4),
            ("Whose wedding is it and what are we giving them?", ["wedding", "gift"], 1),
            ("What should I keep in mind when picking restaurants in Portugal?", ["allergy"], 3),
        ],
    },
    {
        "id": "planning-2",
        "dated": True,
        "sessions": [
            [
                (U, "I'm training for the Amsterdam half marathon in October.", "race"),
                (A, "LONG:running", None),
                (U, "I can only run on Tuesdays, Thursdays and Sunday mornings.", "days"),
                (A, "LONG:running", None),
            ],
            [
                (
                    U,
                    "My left knee hurts after long runs, the physio said it is runner's knee.",
                    "knee",
                ),
                (A, "LONG:health", None),
                (U, "hey", None),
                (U, "I switched to Hoka Clifton shoes and the knee pain got better.", "shoes"),
                (A, "LONG:running", None),
            ],
            [
                (U, "My goal is to finish under 1 hour 50 minutes.", "goal"),
                (A, "LONG:running", None),
                (U, "I'm vegetarian, so I need protein ideas without meat or fish.", "diet"),
                (A, "LONG:food", None),
                (U, "awesome, thank you", None),
            ],
        ],
        "questions": [
            ("Which race am I preparing for?", ["race"], 4),
            ("On which days can I train?", ["days"], 4),
            ("What injury do I have?", ["knee"], 4),
            ("What helped with the injury?", ["shoes", "knee"], 1),
            ("What finishing time am I aiming for?", ["goal"], 4),
            ("What should my meals avoid?", ["diet"], 4),
            ("What kind of recovery food would suit me after a long run?", ["diet"], 3),
        ],
    },
]

MONOLOGUE: list[dict[str, object]] = [
    {
        "id": "monologue-1",
        "dated": False,
        "sessions": [
            [
                (
                    "Mara",
                    "Voice note. I started learning the cello this month, lessons every Wednesday with Mr. Okafor.",
                    "cello",
                ),
                (
                    "Mara",
                    "Work was long again, the quarterly report took most of the day and I barely ate.",
                    None,
                ),
                (
                    "Mara",
                    "I keep forgetting to water the plants on the balcony, I should set a reminder.",
                    "plants",
                ),
                (
                    "Mara",
                    "Note to self: the landlord is raising the rent by 8 percent from September.",
                    "rent",
                ),
            ],
            [
                (
                    "Mara",
                    "Another note. I think I'll move to a smaller flat closer to the river because of the rent.",
                    "move",
                ),
                (
                    "Mara",
                    "Dinner with Jonas tonight, he recommended a Georgian restaurant called Saperavi.",
                    "jonas",
                ),
                (
                    "Mara",
                    "Today was mostly emails and meetings, nothing worth noting really, just tired.",
                    None,
                ),
                ("Mara", "My cello teacher says my bow hold is much better now.", "bow"),
            ],
            [
                (
                    "Mara",
                    "I finally booked a trip to Kyoto for the cherry blossoms next spring.",
                    "kyoto",
                ),
                ("Mara", "The dentist appointment got moved to Friday at 9.", "dentist"),
                (
                    "Mara",
                    "I want to read more fiction this year, currently on The Remains of the Day.",
                    "book",
                ),
            ],
        ],
        "questions": [
            ("What instrument am I learning and who teaches me?", ["cello"], 4),
            ("What is happening with my housing costs?", ["rent"], 4),
            ("Why am I thinking of moving?", ["move", "rent"], 1),
            ("Which restaurant did a friend suggest?", ["jonas"], 4),
            ("How is my music practice going?", ["bow", "cello"], 1),
            ("Where am I travelling in spring?", ["kyoto"], 4),
            ("When is my dental check?", ["dentist"], 2),
            ("What novel am I reading?", ["book"], 4),
            ("What chore do I keep neglecting?", ["plants"], 4),
        ],
    },
    {
        "id": "monologue-2",
        "dated": False,
        "sessions": [
            [
                (
                    "Kofi",
                    "Journal. The new job at the logistics startup starts on Monday, I'm a data analyst there.",
                    "job",
                ),
                (
                    "Kofi",
                    "Spent the evening sorting old photos, lots of memories, nothing specific.",
                    None,
                ),
                (
                    "Kofi",
                    "I'm allergic to cats, which is a shame because Ama wants to adopt one.",
                    "cats",
                ),
            ],
            [
                (
                    "Kofi",
                    "First week done. The team uses Looker and dbt, I need to learn dbt quickly.",
                    "tools",
                ),
                (
                    "Kofi",
                    "Ama and I agreed to adopt a dog instead, probably a greyhound from the rescue.",
                    "dog",
                ),
                ("Kofi", "Rainy day, stayed in, watched a documentary about bees.", None),
            ],
            [
                (
                    "Kofi",
                    "Started a dbt course on weekends, module three is about incremental models.",
                    "course",
                ),
                (
                    "Kofi",
                    "My mother's 60th birthday is in November, we're planning a party in Kumasi.",
                    "mother",
                ),
            ],
        ],
        "questions": [
            ("What is my new role?", ["job"], 4),
            ("Which pet can I not live with?", ["cats"], 4),
            ("What animal are we getting and why not a cat?", ["dog", "cats"], 1),
            ("Which tools does my team work with?", ["tools"], 4),
            ("How am I getting up to speed on the data tooling?", ["course", "tools"], 1),
            ("Whose birthday is coming up and where is the celebration?", ["mother"], 4),
        ],
    },
]

CHINESE: list[dict[str, object]] = [
    {
        "id": "zh-1",
        "dated": True,
        "sessions": [
            [
                ("用户", "我在杭州的一家电商公司做前端开发，主要用 Vue 3。", "job"),
                ("助手", "LONG:zh_work", None),
                ("用户", "我对花生过敏，点外卖的时候要特别注意。", "allergy"),
                ("助手", "LONG:zh_food", None),
            ],
            [
                ("用户", "你好", None),
                ("用户", "我女儿小雨今年六岁，九月份上小学一年级。", "daughter"),
                ("助手", "LONG:zh_family", None),
                ("用户", "我们打算国庆节带她去成都看大熊猫。", "trip"),
                ("助手", "LONG:zh_travel", None),
            ],
            [
                ("用户", "最近在准备软考高级架构师考试，十一月考试。", "exam"),
                ("助手", "LONG:zh_work", None),
                ("用户", "谢谢你，今天就到这里吧", None),
            ],
        ],
        "questions": [
            ("我的工作是什么？用什么框架？", ["job"], 4),
            ("我对什么食物过敏？", ["allergy"], 4),
            ("我女儿多大了？", ["daughter"], 4),
            ("国庆假期我们要去哪里？", ["trip"], 4),
            ("我在准备什么考试？", ["exam"], 4),
            ("带孩子去旅行的计划是什么？", ["trip", "daughter"], 1),
        ],
    },
    {
        "id": "zh-2",
        "dated": True,
        "sessions": [
            [
                ("用户", "我每天早上六点半起床跑步，一般跑五公里。", "run"),
                ("助手", "LONG:zh_health", None),
                ("用户", "我喜欢喝乌龙茶，不太喝咖啡。", "tea"),
                ("助手", "LONG:zh_food", None),
            ],
            [
                ("用户", "我的车是一辆白色的比亚迪汉，去年买的。", "car"),
                ("助手", "LONG:zh_travel", None),
                ("用户", "好的，明白了", None),
                ("用户", "下个月要搬家到上海浦东，离公司近一点。", "move"),
                ("助手", "LONG:zh_family", None),
            ],
            [
                ("用户", "我妈妈有高血压，医生让她少吃盐。", "mother"),
                ("助手", "LONG:zh_health", None),
            ],
        ],
        "questions": [
            ("我早上有什么运动习惯？", ["run"], 4),
            ("我平时喝什么饮料？", ["tea"], 4),
            ("我开什么车？", ["car"], 4),
            ("我要搬到哪里？为什么？", ["move"], 4),
            ("家里谁的身体需要注意饮食？", ["mother"], 4),
        ],
    },
]
