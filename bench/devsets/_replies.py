"""Long assistant replies used between the facts of the development sets.

Real assistant answers are long, generic and full of the topic's vocabulary, so they compete
with the user's short factual turns for every query about that topic. Each key has a few
variants; the builder picks one per use so replies are not all identical.
"""

from __future__ import annotations

LONG: dict[str, list[str]] = {
    "deploy": [
        "Deploying a containerised Python service usually comes down to three things: a small, "
        "reproducible image, health checks the platform can use, and a way to run database "
        "migrations before new instances take traffic. Start from a slim base image, install "
        "dependencies in a separate layer so they are cached, and run the app with a process "
        "manager such as gunicorn with uvicorn workers. Configure a readiness endpoint, keep "
        "secrets in the platform's secret store rather than in the image, and pin versions.",
        "For a web service in Docker, make the image small and the start-up fast: multi-stage "
        "builds, no compilers in the final layer, and environment variables for configuration. "
        "Rolling deploys need a health check; blue-green deploys need a way to switch traffic "
        "back. Watch memory limits, because Python workers grow over time under load.",
    ],
    "style": [
        "Code style is mostly about consistency: the formatter decides, so reviews can focus on "
        "behaviour. If a team standardises on a formatter, configure it in pyproject.toml, run it "
        "in pre-commit and in CI, and let editors format on save. Line length is a team choice; "
        "longer lines reduce wrapping in data-heavy code, shorter ones suit side-by-side diffs. "
        "Personal preferences can live in your editor settings for your own projects.",
    ],
    "flaky": [
        "Intermittent test failures usually come from shared state, time, randomness, ordering or "
        "concurrency. Run the test in a loop with a fixed seed, then with random seeds, and log "
        "every input. Check whether it depends on the current date or on the order of tests, "
        "isolate it in a fresh process, and look for global caches or fixtures that leak between "
        "tests. Once reproduced, add a regression test that fails deterministically.",
    ],
    "debug": [
        "A good debugging loop is: reproduce, reduce, hypothesise, test one change at a time. "
        "Write down what you expect at each step and compare it with what you observe; bisect the "
        "history if the problem is new. Print the actual values rather than assuming them, and "
        "check the boundaries: empty inputs, platform differences, encodings, rounding and "
        "ordering. When it is fixed, keep the test that caught it.",
        "When a build or a test breaks only on one platform, compare the environments first: "
        "paths, line endings, locale, file system case sensitivity and available tools. Reduce "
        "the failing case to the smallest input, and add a CI job for that platform so it does "
        "not come back.",
    ],
    "queue": [
        "Background job systems differ in how they handle retries, concurrency and memory. "
        "Async-native queues fit async web frameworks well and keep one event loop per worker; "
        "older queues with prefork workers can grow in memory with long-lived processes, which "
        "is often mitigated by restarting workers after a number of tasks. Make every job "
        "idempotent, set timeouts, and monitor the queue length and failure rate.",
    ],
    "planning": [
        "To hit a deadline, work backwards from it: list the milestones, estimate each with a "
        "buffer, and identify what can be done in parallel. Agree on a definition of done, keep "
        "a short weekly check-in, and surface risks early so scope can be cut rather than "
        "quality. A release checklist helps: tests green, documentation updated, rollback plan "
        "ready, and stakeholders informed of the date.",
        "Plans work best when they are written down with owners and dates. Break the work into "
        "steps of a day or two, keep a visible list, and review it every week. Leave slack for "
        "surprises and decide early what you would drop if time runs short.",
    ],
    "db": [
        "Large tables in Postgres stay fast with the right access paths: check the slow queries "
        "with EXPLAIN ANALYZE, add indexes that match the filters, and avoid indexing columns "
        "that are rarely queried because every index slows writes. Partitioning helps when "
        "queries filter on the partition key and old data can be dropped by partition; vacuum "
        "and autovacuum settings matter more as tables grow into tens of millions of rows.",
    ],
    "rust": [
        "Rust command-line tools are pleasant to build: structure the program as a library plus "
        "a thin main, return Result everywhere, and use anyhow or thiserror for errors. For "
        "argument parsing, derive-based parsers give help text and validation for free. Walk "
        "directories with walkdir, match patterns with a glob library, and test with temporary "
        "directories so tests never touch real files.",
    ],
    "perf": [
        "Compile times in Rust depend on dependencies, generics and codegen units. Caching "
        "compiler output, using the mold or lld linker, reducing dependencies with many "
        "features, and splitting a crate into a workspace all help. On machines with little "
        "memory, limit parallel jobs so the system does not swap.",
    ],
    "travel": [
        "For a trip around a fixed event, book the transport first, since prices rise closer to "
        "the date, then accommodation near the venue. Arriving a day or two early leaves room "
        "for delays. Keep copies of bookings offline, check the weather, and plan how you will "
        "get from the airport to the hotel. Public transport in most European capitals is "
        "cheap and reliable; taxis and ride-hailing fill the gaps late at night.",
        "Travel planning checklist: documents, tickets, accommodation, local transport, money, "
        "adapters and medication. Share the itinerary with someone, and note the address of "
        "your accommodation in the local language.",
    ],
    "food": [
        "When eating out with dietary restrictions, call the restaurant ahead, ask about "
        "cross-contamination rather than only ingredients, and carry a card in the local "
        "language that explains the restriction. Many cuisines use nuts in sauces and desserts, "
        "so ask specifically. Plan meals so there is always a safe option available.",
        "A balanced diet for training includes enough protein, complex carbohydrates and "
        "vegetables. Legumes, tofu, tempeh, eggs, dairy and whole grains are good protein "
        "sources; timing a meal with carbohydrates and protein after long sessions helps "
        "recovery.",
    ],
    "budget": [
        "To keep a trip within budget, split it into transport, accommodation, food, activities "
        "and a reserve of about ten percent. Track spending as you go, book refundable options "
        "where possible, and compare total prices including fees rather than headline prices.",
    ],
    "gift": [
        "Good wedding gifts are personal or useful: something connected to the place or to the "
        "couple's story, an experience, or a contribution to something they are saving for. "
        "Hand-made local crafts travel well if packed carefully, and a short note explaining "
        "the choice makes any gift more memorable.",
    ],
    "running": [
        "A half marathon plan usually runs twelve to sixteen weeks with three or four runs a "
        "week: one long run that grows gradually, one session of intervals or tempo, and easy "
        "runs. Increase weekly distance by no more than about ten percent, take a lighter week "
        "every third or fourth week, and taper in the last two weeks. Good shoes and strength "
        "training for the hips and legs reduce injury risk.",
    ],
    "health": [
        "Pain around the knee after running is common and often improves with rest, strength "
        "exercises for the hips and thighs, and gradual return to distance. Check your shoes "
        "and running form, avoid sudden increases in mileage, and see a professional if the "
        "pain is sharp or lasts. Ice and gentle stretching can help in the short term.",
    ],
    "zh_work": [
        "关于工作和学习，建议先把目标拆成小的阶段，每周复盘一次进度。前端开发可以多关注性能优化、"
        "组件设计和工程化工具，考试准备则要按照大纲制定计划，先系统学习知识点，再做历年真题，最后"
        "集中练习论文写作。注意劳逸结合，保证睡眠，效率会更高。",
    ],
    "zh_food": [
        "饮食方面要注意规律和均衡，多吃蔬菜水果，适量摄入蛋白质。点外卖时可以在备注里写清楚忌口，"
        "必要时打电话和商家确认，避免交叉污染。茶和咖啡都含有咖啡因，晚上最好少喝，以免影响睡眠。",
    ],
    "zh_family": [
        "家庭的安排需要提前规划，比如孩子上学前可以先熟悉学校环境，养成规律的作息。搬家时建议列一个"
        "清单，提前联系搬家公司，处理好水电燃气的过户，同时考虑通勤时间和周边配套设施。",
    ],
    "zh_travel": [
        "出行前建议提前预订交通和酒店，节假日人多，热门景点最好提前在网上预约门票。带孩子出行要准备"
        "常用药品、零食和换洗衣物，行程不要安排得太满。自驾的话要检查车辆状况，规划好充电或加油。",
    ],
    "zh_health": [
        "保持健康需要适量运动、合理饮食和充足睡眠。跑步前要热身，跑后拉伸，循序渐进地增加距离。"
        "高血压患者饮食要清淡，少盐少油，定期测量血压，按医嘱服药，并保持心情舒畅。",
    ],
}

# Ordinary requests between the facts: on the same topics, but stating nothing about the user.
FILLER: dict[str, list[tuple[str, str]]] = {
    "coding": [
        ("Can you explain what a context manager is in Python?", "debug"),
        ("How do I write a Dockerfile that caches dependencies?", "deploy"),
        ("What's the difference between a process and a thread?", "queue"),
        ("Show me how to use EXPLAIN ANALYZE on a slow query.", "db"),
        ("How should I structure error handling in a CLI?", "rust"),
        ("What does the borrow checker complain about when I return a reference?", "rust"),
        ("Is it worth adding type hints to an old codebase?", "style"),
        ("How do I retry a failed HTTP call with backoff?", "debug"),
        ("What is a good way to review a large pull request?", "planning"),
        ("Why would a linker be slow on a big project?", "perf"),
    ],
    "planning": [
        ("What should I pack for a long weekend in a warm city?", "travel"),
        ("How early should I book trains in Europe?", "travel"),
        ("How many rest days per week does a beginner need?", "running"),
        ("Can you give me a simple stretching routine?", "health"),
        ("What are cheap ways to eat well while travelling?", "food"),
        ("How do I split costs fairly on a group trip?", "budget"),
        ("What's a polite way to decline an invitation?", "planning"),
        ("Any tips for sleeping well before a big event?", "health"),
        ("How do interval sessions differ from tempo runs?", "running"),
        ("What souvenirs travel well in hand luggage?", "gift"),
    ],
    "zh": [
        ("怎么提高工作效率？", "zh_work"),
        ("周末带孩子去哪里玩比较好？", "zh_travel"),
        ("晚饭吃什么比较健康？", "zh_food"),
        ("跑步膝盖疼怎么办？", "zh_health"),
        ("搬家要注意哪些事情？", "zh_family"),
        ("推荐几本适合通勤时看的书。", "zh_work"),
        ("长途开车怎么避免疲劳？", "zh_travel"),
        ("老人怎么锻炼身体比较好？", "zh_health"),
    ],
}

# One-speaker transcripts have no assistant: their filler is the speaker's own everyday notes.
NOTES = [
    "Long day, lots of small tasks, nothing that really needs remembering.",
    "Took a walk in the evening, the weather is turning colder.",
    "Listened to a podcast about sleep on the way home, interesting but long.",
    "Cleaned the kitchen and did two loads of laundry.",
    "Watched half a film and fell asleep on the sofa.",
    "Had a call that could have been an email, as usual.",
    "Made soup with whatever was left in the fridge.",
    "Read the news for too long this morning, should stop doing that.",
]
