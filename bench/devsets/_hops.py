# ruff: noqa: E501  (data: one turn per line reads better than wrapped strings)
"""The multi-hop and open-domain development sets (English `HOPS`, Chinese `HOPS_ZH`).

Most questions here need two or more turns, usually from different sessions, that only an
entity links: the question describes a person or thing by what one turn says about it ("the
friend who gave me the oboe"), and the answer sits in another turn that names it without the
question's words ("Ilse moved to Ghent"). Open-domain questions need a little world knowledge
or inference to connect ("would a boat trip suit me?" against "I get very seasick"). The
conversations are undated assistant chats with long generic replies, coding help, and
one-speaker notes, so nothing here has LoCoMo's shape (two named friends in dated sessions).
"""

from __future__ import annotations

from bench.devsets._facts import A, U

HOPS: list[dict[str, object]] = [
    {
        "id": "hops-1",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "My friend Ilse gave me her old oboe when she stopped playing, so I'm finally taking lessons.",
                    "oboe",
                ),
                (A, "LONG:gift", None),
                (U, "ok, thanks", None),
            ],
            [
                (U, "Ilse just moved to Ghent for a job at the university hospital.", "ilse_city"),
                (A, "LONG:travel", None),
            ],
            [
                (
                    U,
                    "My teacher is called Mr. Brandsma; lessons are on Thursday evenings at the community music school.",
                    "teacher",
                ),
                (A, "LONG:planning", None),
                (
                    U,
                    "Mr. Brandsma thinks I could be ready for the spring recital in the church on Veldstraat.",
                    "recital",
                ),
                (A, "LONG:planning", None),
            ],
        ],
        "questions": [
            (
                "Which city does the friend who gave me the oboe live in now?",
                ["oboe", "ilse_city"],
                1,
            ),
            (
                "Where is the concert my music teacher wants me to play in?",
                ["teacher", "recital"],
                1,
            ),
            (
                "What does the woman who gave me her instrument do for work?",
                ["oboe", "ilse_city"],
                1,
            ),
            ("Could I join a woodwind group with what I'm learning?", ["oboe"], 3),
            ("Which evening of the week is taken by music?", ["teacher"], 4),
        ],
    },
    {
        "id": "hops-2",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "Our payments service talks to Stripe through a small wrapper library that Jonas wrote, called paykit.",
                    "paykit",
                ),
                (A, "LONG:deploy", None),
            ],
            [
                (
                    U,
                    "Jonas left the company in June; Mei-Lin maintains all of his libraries now.",
                    "maintainer",
                ),
                (A, "LONG:planning", None),
                (U, "got it", None),
            ],
            [
                (
                    U,
                    "paykit still pins requests 2.25 and that blocks our upgrade to Python 3.12.",
                    "pin",
                ),
                (A, "LONG:debug", None),
                (U, "Staging runs in eu-west-1 and production in eu-central-1.", "regions"),
                (A, "LONG:deploy", None),
            ],
            [
                (
                    U,
                    "Mei-Lin is on parental leave until October, so Arjun does her code reviews meanwhile.",
                    "leave",
                ),
                (A, "LONG:planning", None),
            ],
        ],
        "questions": [
            ("Who maintains the library we use to reach Stripe?", ["paykit", "maintainer"], 1),
            (
                "Why can't we move to the new Python yet, and who wrote the code responsible?",
                ["pin", "paykit"],
                1,
            ),
            (
                "Who reviews changes to Jonas's libraries until the autumn?",
                ["maintainer", "leave"],
                1,
            ),
            ("Which of our environments is closer to customers in Germany?", ["regions"], 3),
            ("Which dependency version is holding the upgrade back?", ["pin"], 4),
        ],
    },
    {
        "id": "hops-3",
        "dated": False,
        "sessions": [
            [
                (
                    "Noor",
                    "Signed up for the pottery course at the Klei studio; the teacher, Hanne, worked in Japan for years.",
                    "pottery",
                ),
                (
                    "Noor",
                    "Train was late again, forty minutes standing between Utrecht and Amersfoort.",
                    None,
                ),
            ],
            [
                (
                    "Noor",
                    "Hanne recommended a glaze supplier in Leiden, so I ordered the celadon from them.",
                    "glaze",
                ),
                (
                    "Noor",
                    "My sister Roos wants a set of bowls for her new house in Zwolle.",
                    "roos",
                ),
            ],
            [
                (
                    "Noor",
                    "Finished four bowls with the celadon glaze; two of them cracked in the kiln.",
                    "bowls",
                ),
                ("Noor", "Need to call the dentist about the crown, keep forgetting.", None),
            ],
        ],
        "questions": [
            (
                "In which city is the shop my pottery teacher told me about?",
                ["pottery", "glaze"],
                1,
            ),
            (
                "How many bowls came out whole, and which city are they going to?",
                ["bowls", "roos"],
                1,
            ),
            ("Where did the person who teaches my clay class live before?", ["pottery"], 4),
            ("What craft could I demonstrate at a weekend workshop?", ["pottery"], 3),
            ("What colour finish did I pick for the ceramics?", ["glaze"], 4),
        ],
    },
    {
        "id": "hops-4",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "My brother Karim lives in Montreal with his wife Sofie and their twins.",
                    "karim",
                ),
                (A, "LONG:gift", None),
            ],
            [
                (
                    U,
                    "The twins turn five on the 14th of August, and I'd like to bring them something from here.",
                    "twins",
                ),
                (A, "LONG:gift", None),
                (U, "thanks, good ideas", None),
            ],
            [
                (
                    U,
                    "I'm flying to Canada for ten days in August, landing in Toronto and going on by train.",
                    "trip",
                ),
                (A, "LONG:travel", None),
                (U, "I get very seasick, so please leave out anything on a boat.", "seasick"),
                (A, "LONG:travel", None),
            ],
        ],
        "questions": [
            (
                "How old will my brother's children be during my holiday?",
                ["karim", "twins", "trip"],
                1,
            ),
            ("Which city is my train ride in Canada heading to?", ["trip", "karim"], 3),
            ("Would a whale-watching tour be a good idea for me?", ["seasick"], 3),
            ("Who is my sister-in-law?", ["karim"], 3),
            ("When is the birthday of Karim's kids?", ["karim", "twins"], 1),
        ],
    },
    {
        "id": "hops-5",
        "dated": False,
        "sessions": [
            [
                (
                    U,
                    "I'm organising the team offsite for 14 people; Dana from finance approved a budget of 9,000 euros.",
                    "budget",
                ),
                (A, "LONG:budget", None),
            ],
            [
                (
                    U,
                    "We picked the Hoge Veluwe lodge; it has a sauna and rents out bikes.",
                    "venue",
                ),
                (A, "LONG:travel", None),
                (
                    U,
                    "Farid and Lotte don't drive, so we need a shuttle from Apeldoorn station.",
                    "shuttle",
                ),
                (A, "LONG:travel", None),
            ],
            [
                (
                    U,
                    "The lodge wants the final headcount by the 20th, and Dana said she'd sign the contract.",
                    "contract",
                ),
                (A, "LONG:planning", None),
                (U, "Lotte is vegan and Farid doesn't drink alcohol.", "diet"),
                (A, "LONG:food", None),
            ],
        ],
        "questions": [
            ("Who signs for the place with the sauna?", ["venue", "contract"], 1),
            (
                "What do the meals and the transport have to allow for, for the two colleagues without a car?",
                ["shuttle", "diet"],
                1,
            ),
            ("Roughly how much can we spend per person?", ["budget"], 3),
            (
                "Which department approved the money, and what does the person who approved it still have to do?",
                ["budget", "contract"],
                1,
            ),
            ("Where do Lotte and Farid need picking up?", ["shuttle"], 4),
        ],
    },
    {
        "id": "hops-6",
        "dated": False,
        "sessions": [
            [
                (U, "The iOS app's crash reports go to Sentry, project fern-ios.", "sentry"),
                (A, "LONG:debug", None),
            ],
            [
                (
                    U,
                    "Most crashes this week come from the image picker on the profile screen.",
                    "crash",
                ),
                (A, "LONG:debug", None),
                (
                    U,
                    "That picker is our fork of a library by Nikhil, who works at Vinted now.",
                    "fork",
                ),
                (A, "LONG:rust", None),
            ],
            [
                (
                    U,
                    "Release 4.2 stays blocked until the crash rate is under 0.5 percent.",
                    "release",
                ),
                (A, "LONG:planning", None),
                (U, "ok", None),
            ],
        ],
        "questions": [
            (
                "Where do I look up the errors that hold back the next release?",
                ["release", "sentry"],
                1,
            ),
            (
                "Which company employs the original author of the component that crashes most?",
                ["crash", "fork"],
                1,
            ),
            ("Can we ship the new version of the phone app yet?", ["release"], 3),
            ("What's the Sentry project called?", ["sentry"], 4),
        ],
    },
]

HOPS_ZH: list[dict[str, object]] = [
    {
        "id": "hops-zh-1",
        "dated": False,
        "sessions": [
            [
                ("用户", "我的大学室友阿杰送了我一台旧的胶片相机，是他爷爷留下来的。", "camera"),
                ("助手", "LONG:zh_family", None),
            ],
            [
                ("用户", "阿杰现在在厦门开了一家咖啡馆。", "ajie"),
                ("助手", "LONG:zh_travel", None),
                ("用户", "好的，谢谢", None),
            ],
            [
                ("用户", "我报了一个冲洗胶片的周末课程，老师姓周，在798那边上课。", "class"),
                ("助手", "LONG:zh_work", None),
                ("用户", "周老师说我在鼓浪屿拍的那组照片曝光都不足。", "photos"),
                ("助手", "LONG:zh_travel", None),
            ],
        ],
        "questions": [
            ("送我相机的那个朋友现在在哪个城市？", ["camera", "ajie"], 1),
            ("那个室友现在做什么生意？", ["camera", "ajie"], 1),
            ("谁说我的照片拍得太暗，他在哪里上课？", ["class", "photos"], 1),
            ("我去厦门玩的时候可以找谁？", ["ajie"], 3),
            ("我在学什么手艺？", ["class"], 4),
        ],
    },
    {
        "id": "hops-zh-2",
        "dated": False,
        "sessions": [
            [
                ("用户", "我爸下个月要做白内障手术，在华山医院，主刀的是李医生。", "surgery"),
                ("助手", "LONG:zh_health", None),
            ],
            [
                ("用户", "李医生说手术后一个月不能提重物，也不能游泳。", "after"),
                ("助手", "LONG:zh_health", None),
            ],
            [
                ("用户", "我打算请年假回南京照顾他两个星期。", "leave"),
                ("助手", "LONG:zh_family", None),
                ("用户", "我老板王姐已经批了。", "boss"),
                ("助手", "LONG:zh_work", None),
            ],
        ],
        "questions": [
            ("我爸做完眼睛手术以后有什么要注意的？", ["surgery", "after"], 1),
            ("谁同意我回家照顾父亲？", ["leave", "boss"], 1),
            ("我父母住在哪个城市？", ["leave"], 3),
            ("我爸能不能在术后几周去游泳馆？", ["after"], 3),
            ("给我爸做手术的医生是谁？", ["surgery"], 4),
        ],
    },
    {
        "id": "hops-zh-3",
        "dated": False,
        "sessions": [
            [
                ("用户", "我们组在做一个智能客服项目，后端负责人是小陈。", "project"),
                ("助手", "LONG:zh_work", None),
            ],
            [
                ("用户", "小陈下周去深圳出差，接口联调只能推迟了。", "trip"),
                ("助手", "LONG:zh_travel", None),
            ],
            [
                ("用户", "项目用的是 Go 和 Redis，部署在阿里云上。", "stack"),
                ("助手", "LONG:zh_work", None),
                ("用户", "产品经理刘洋要求月底前上线第一个版本。", "deadline"),
                ("助手", "LONG:zh_work", None),
            ],
        ],
        "questions": [
            ("客服项目的后端负责人下周为什么不在？", ["project", "trip"], 1),
            ("联调推迟的话，谁定的上线时间会受影响？", ["trip", "deadline"], 1),
            ("这个项目的缓存用的是什么？", ["stack"], 3),
            ("我们的服务器在哪家云厂商？", ["stack"], 4),
        ],
    },
    {
        "id": "hops-zh-4",
        "dated": False,
        "sessions": [
            [
                ("用户", "我表姐林芳在成都开了一家火锅店，生意很好。", "cousin"),
                ("助手", "LONG:zh_food", None),
            ],
            [
                ("用户", "我儿子豆豆不能吃辣，一吃就肚子疼。", "spicy"),
                ("助手", "LONG:zh_health", None),
                ("用户", "嗯嗯", None),
            ],
            [
                ("用户", "暑假我们全家打算去成都玩五天，住在表姐家附近。", "summer"),
                ("助手", "LONG:zh_travel", None),
            ],
        ],
        "questions": [
            ("暑假去玩的时候，我们住的地方附近谁开了饭店？", ["summer", "cousin"], 1),
            ("去表姐的店里吃饭，要给孩子注意什么？", ["cousin", "spicy"], 1),
            ("我儿子能不能吃麻辣的东西？", ["spicy"], 3),
            ("暑假的旅行计划是什么？", ["summer"], 4),
        ],
    },
]
