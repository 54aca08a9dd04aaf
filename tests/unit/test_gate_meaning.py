"""The gate reads meaning: questions and requests are not facts, names and mixed turns are.

The figures are asserted on the held-out split of tests/data/gate_meaning/, which no rule,
weight or threshold was chosen on (`python -m bench.gate_meaning` prints them), and on every
batch of it: each was written by someone who had not read the code. The "blind" split's
batches have not been read at all; their figures are reported, not asserted.
"""

from __future__ import annotations

import time

import pytest

from bench.gate_meaning import figures, load
from memory.gating.gate import gate
from memory.gating.rules.meaning import asks, introduction, told

ITEMS = load()


def test_corpus_shape() -> None:
    assert len(ITEMS) >= 300
    for lang in ("en", "zh"):
        part = [i for i in ITEMS if i["lang"] == lang]
        assert len(part) >= 100
        # Each round of blind batches is read into `tune` once the next is written, so the
        # held part's share falls as the corpus grows; its count is what bounds the error of
        # a held-out figure (600 turns: a standard error near 0.9 points at 0.95).
        held = sum(i["split"] in ("holdout", "blind") for i in part)
        assert held >= 600
    kinds = {i["kind"] for i in ITEMS}
    assert kinds >= {"question", "request", "social", "intro", "mixed", "schedule", "decision"}
    assert all(i["kept"] for i in ITEMS if i["kind"] == "mixed")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_held_out_keep_drop_accuracy(lang: str) -> None:
    held = [i for i in ITEMS if i["split"] == "holdout" and i["lang"] == lang]
    result = figures(held)
    print(f"holdout {lang}: {result.line()}")
    assert result.accuracy >= 0.95
    assert result.intros_kept == result.intros


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_first_held_out_batches_store_no_question(lang: str) -> None:
    # Batch 7 (casual chat from many walks of life), held out too, now stores none either;
    # these two batches also keep exactly the fact of every mixed turn.
    held = [
        i for i in ITEMS if i["split"] == "holdout" and i["lang"] == lang and i.get("batch", 1) <= 2
    ]
    result = figures(held)
    assert result.asked_stored == 0
    assert result.mixed_exact == result.mixed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_batch_keeps_its_accuracy(lang: str) -> None:
    # The "blind" split has not been read by anyone changing the rules: its figures are
    # measured and reported (docs/benchmarks.md), not a bar the rules were fitted to clear.
    # A "reading" batch's errors are being read and not all of its classes are ruled on yet.
    batches = sorted({i.get("batch", 1) for i in ITEMS if i["split"] in ("tune", "holdout")})
    assert len(batches) >= 9
    for batch in batches:
        part = [i for i in ITEMS if i["lang"] == lang and i.get("batch", 1) == batch]
        assert figures(part).accuracy >= 0.95, batch


@pytest.mark.parametrize(
    "text",
    [
        "what's my dog's name",
        "is it going to rain tomorrow in Paris",
        "do you know where I parked",
        "can you remind me what I said about the trip",
        "我的狗叫什么名字",
        "明天北京会下雨吗",
        "你还记得我上次说的吗",
        "lol that's great",
        "好的谢谢",
        "wow",
    ],
)
def test_questions_requests_and_reactions_are_not_facts(text: str) -> None:
    assert not gate(text).keep


@pytest.mark.parametrize(
    "text",
    [
        "I'm Bob.",
        "call me Liz",
        "我叫王伟",
        "my sister Ana lives in Lisbon",
        "I have dentist on Tuesdays at 3",
        "I use neovim",
        "we decided to go with Postgres",
        "I'm allergic to peanuts",
    ],
)
def test_facts_about_the_user_are_kept(text: str) -> None:
    assert gate(text).keep


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I'm allergic to peanuts, what snacks are safe?", "I'm allergic to peanuts"),
        ("I'm allergic to peanuts so what snacks are safe", "I'm allergic to peanuts"),
        ("Since I'm vegetarian, what should I cook tonight?", "I'm vegetarian"),
        ("我对花生过敏，有什么零食是安全的？", "我对花生过敏"),
        ("I just moved to Austin. Where should I get tacos?", "I just moved to Austin."),
    ],
)
def test_a_mixed_turn_keeps_its_fact_clause_not_its_question(text: str, kept: str) -> None:
    decision = gate(text)
    assert decision.keep
    assert decision.content == kept


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # Typed on a phone: no comma, no question mark between the fact and the question.
        ("my wife is a vet whats a good gift for her", "my wife is a vet"),
        ("we use jira at work how do i make a filter", "we use jira at work"),
        ("i own a 2015 civic um how often should i rotate the tires", "i own a 2015 civic"),
        ("hate small talk so write me a short intro for the meetup", "hate small talk"),
        ("我对猫过敏 推荐个好养的宠物吧", "我对猫过敏"),
        ("我住大连 冬天怎么防冻", "我住大连"),
    ],
)
def test_a_run_on_mixed_turn_keeps_only_its_fact(text: str, kept: str) -> None:
    decision = gate(text)
    assert decision.keep, decision.reason
    assert decision.content == kept


@pytest.mark.parametrize(
    "text",
    [
        "I don't know what to get her",
        "that's how much it costs",
        "from now on always give me prices in euros",
    ],
)
def test_a_question_word_inside_a_statement_splits_nothing(text: str) -> None:
    assert gate(text).content == text or not gate(text).keep
    assert told(text) == text


@pytest.mark.parametrize(
    ("text", "keep"),
    [
        ("remind me to water the plants at 6", False),
        ("半小时后提醒我关火", False),
        ("明早八点提醒我带护照", False),
        ("remind me to take my vitamins every morning", True),
        ("每天晚上提醒我吃药", True),
        ("proofread my toast for friday", False),
        ("帮我把明天的汇报改短一点", False),
        ("Help me plan my sister's hen party on 3 October", True),
    ],
)
def test_a_task_for_today_asks_and_one_dated_weeks_ahead_keeps_its_plan(
    text: str, keep: bool
) -> None:
    assert gate(text).keep is keep, gate(text).reason


@pytest.mark.parametrize(
    "text",
    [
        "give me recipes in metric please",
        "keep replies short, I read on my phone",
        "代码注释用英文",
        "回复简短一点就行",
        "night shift nurse here",
        "普通上班族一个",
        "on the family plan with my sister",
        "组里的老张管数据库",
        "not renewing the lease, moving in june",
        "这学期合唱团排练改到周三晚上了",
        "给我推荐电影的话，最好是九十分钟以内的",
    ],
)
def test_said_without_a_subject_these_still_tell(text: str) -> None:
    assert gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    "text",
    [
        "As we discussed yesterday we looked at two laptops, which one did I pick?",
        "上次问你的时候我说的是哪家酒店来着",
        "I'd love a quick summary of this thread",
        "要是能帮我写个开场白就太好了",
        "麻烦您帮我看看这段话通不通顺",
        "oops pasted the wrong link",
        "feeling a bit anxious today",
        "没事了，问题我自己搞定了",
        # Formal requests and a learner's word order ask, with no question mark.
        "Kindly advise whether the museum opens on public holidays.",
        "I would be grateful if you could shorten the paragraph below.",
        "how i can change the language of my keyboard",
        "望协助将以下名单整理成表格，谢谢。",
        # Praise for an answer is no field of study.
        "这个回答很专业",
    ],
)
def test_setting_up_a_question_requests_as_wishes_and_remarks_on_the_chat_are_not_facts(
    text: str,
) -> None:
    assert not gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    "text",
    [
        "How do I get candle wax off a tablecloth? Knocked one over ten minutes ago.",
        "Can you tidy up the paragraph below? It's from a report I wrote last week.",
        "Is it true that goldfish have a three-second memory? Someone at work said so.",
        "Translate this menu for me. The restaurant is tonight.",
        "Could you shorten my bio? Keep it under fifty words.",
        "香蕉能放冰箱吗？刚刚买了一大串",
        "帮我润色下面这段话，是给客户的邮件",
        "Sorry, I think I sent that twice.",
        "终于熬到周末了",
        # An event narrated in passing, with or without a date, before the point.
        "Dropped my sandwich on the train. Is the five-second rule real?",
        "I was scrolling through recipes at lunch and got confused. What does blanching mean?",
        "Tried a new running route yesterday and got lost twice. How do GPS watches work?",
        "waited for the bus forever 😩 why are buses always late",
        "Been staring at this spreadsheet all afternoon. Explain VLOOKUP simply?",
        "衣柜门从昨晚开始就关不严，这是什么原因？",
        "刚读了篇讲咖啡因的文章，帮我总结一下",
        "华氏100度换算成摄氏度",
        "按字母顺序排一下这些城市",
    ],
)
def test_what_only_sets_up_a_question_or_a_task_is_not_kept(text: str) -> None:
    assert not gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    "text",
    [
        "Ugh, spilled coffee all over the sofa this morning.",
        "phew, just finished mowing the lawn lol",
        "刚洗完碗，终于可以躺会儿了，好累",
    ],
)
def test_a_remark_on_the_moment_is_not_kept(text: str) -> None:
    assert not gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    "text",
    [
        # What a task makes runs every night; the user's routine is not in it.
        "Help me write a bash script that backs up a folder every night.",
        # Two things named and nothing said of them asks which.
        "小米还是华为，你直接帮我挑一个",
        "请一步一步教我重置路由器管理密码",
        # The day's verdict and word that an answer worked are remarks on the moment.
        "honestly today has been a lot",
        "Perfect, worked first try.",
    ],
)
def test_tasks_choices_and_verdicts_on_the_day_are_not_kept(text: str) -> None:
    assert not gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    "text",
    [
        # Words relayed beside a question are its material, whoever relayed them.
        'Doctor said "take with food, twice daily". Does a glass of milk count as food?',
        'My boss just emailed "please circle back on the Q3 deck EOD" — does she want it done?',
        "my mum asked whether you can freeze cooked rice safely. can you?",
        '老板在群里说"这个需求下周一前给我个 draft"，draft 一般要做到什么程度啊',
        "我爸非说吃味精致癌，有科学依据吗？",
        # Relief at something just come to pass.
        "刚接完娃回来，累瘫",
        "Finally Friday. Survived another week of school runs.",
        # A statement about the world beside its question; the thing to make named first.
        "存款利率都降到1.5%了，大额存单还有必要买吗",
        "packing list for a weekend camping trip, 2 people, no car",
        "幼儿园毕业典礼家长代表发言稿，三分钟的",
        "Compare Notion vs Obsidian for me in a table please",
        "do kids really need homework in year 2 or is that just the school being extra",
    ],
)
def test_relayed_words_and_relief_are_not_kept(text: str) -> None:
    assert not gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    "text",
    [
        # What follows a task's colon at the end of its line, a fenced block, the points
        # listed under a task: the task's material.
        "Proofread this for me:\nThe shipment will arrive on Monday. Please sign for it.",
        "把下面这段改得正式一点：\n周五下午全体开会，不许请假。",
        "why does this fail\n```\nSELECT id FROM users WHERE name = NULL\n```",
        "Make a weekend plan for Porto\n- cheap eats\n- one museum\n- no hiking",
        # Labelled parts of a structured message; questions with quotes, passives, superlatives.
        "Question: is 'kind regards' too stiff for a thank-you email",
        "## Task\nSummarise the points below",
        "should raw honey be refrigerated after opening",
        "cheapest way to get from Narita to Shinjuku late at night",
        # The thing to make named first, with how it should be.
        "a funny, short toast for my brother's wedding please",
        "talking points for a salary review. Three bullets, no fluff.",
        # Remarks on the weather and the day.
        "it's snowing sideways out there today lol",
        "今天又下暴雨，服了",
    ],
)
def test_task_material_structured_questions_and_weather_are_not_kept(text: str) -> None:
    assert not gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    "text",
    [
        "- Name: Ines Duarte\n- Job: midwife\n- Based in Porto",
        "姓名：周晓梅\n职业：会计",
        "搞装修的，干了二十多年了",
        "产品经理一枚",
        "我们主任姓黄，人挺好",
        "我口味比较重，做菜盐放得多",
        "每周五下午对账，雷打不动",
        "Priya. Paediatric nurse. Grew up in Leicester.",
        "31m, warehouse supervisor, night owl",
        "95后，程序员，单身",
        "晕车很厉害，坐大巴必须吃药",
        "can't have dairy, it wrecks my stomach",
        "我的手机是华为的，用了三年了",
        "目前租在杭州滨江，离公司近",
        "Note to self: my passport expires in March 2027.",
    ],
)
def test_terse_profiles_and_trades_are_kept(text: str) -> None:
    assert gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    "text",
    [
        # Others' habits and hearsay beside a question are the question's world.
        "隔壁天天早上六点装修，能投诉吗",
        "they always lose the paperwork, who do I escalate to",
        "网上都说空腹喝咖啡伤胃，真的假的",
        "炖排骨要焯几次水啊",
        # A question about the situation told beside it.
        "房东说押金要扣一半，因为地板有划痕，这合理吗",
        "my landlord wants three months' rent upfront, is that even legal",
        "what do I leave out for the cat sitter? she comes Friday and I have no idea",
        "麻烦检查一下语病：\n会议于明天召开，请各部门准时出席。",
        "讲个睡前故事吧",
        # Things to make, named with what kind; tasks said as verbs of work.
        "a ranked list of the Zelda games by soundtrack",
        "weekly gym schedule for a beginner, 3 days max",
        "Estimate the paint I need for two 4x3 m walls",
        "roast my resume, don't hold back",
        "考研英语高频词来50个",
        "用表格对比一下三款扫地机器人",
        "搬家打包清单，越全越好",
        # Of the moment: home just now, the weather, going to bed, stepping away.
        "just got back from the dentist, face is numb lol",
        "night all, off to bed before my alarm ruins me",
        "so windy today my bins blew over",
        "等我一下，有人敲门",
    ],
)
def test_others_habits_and_hearsay_beside_a_question_are_not_kept(text: str) -> None:
    assert not gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Help me plan dinners this week:\n- I'm vegetarian\n- nothing spicy", "vegetarian"),
        (
            "Background: I run a small bakery in Leeds.\nQuestion: how do I price wedding cakes?",
            "bakery in Leeds",
        ),
        ("I live in Cork.\nP.S. what's the best time to see puffins around here?", "Cork"),
    ],
)
def test_the_users_own_lines_in_a_structured_message_are_kept(text: str, kept: str) -> None:
    decision = gate(text)
    assert decision.keep, decision.reason
    assert kept in decision.content
    assert "?" not in decision.content and "P.S" not in decision.content


@pytest.mark.parametrize(
    "text",
    [
        "Send me a summary every morning",
        "导航还是高德好用",
        # A clause of its own beside the request tells.
        "Explain it without jargon please, I'm a complete beginner with computers.",
        # Someone of the user's named in the request: the rest is about them.
        "Can you help me write a birthday note for my daughter Zoe? She's turning 16 on Saturday.",
        # A lasting change told with the moment is not a task's scene.
        "我上个月刚跟前任分手，现在老是忍不住看他朋友圈，怎么办",
        # Conditions, skills and ages in the forms people use.
        "I'm bipolar and on lithium — is it okay to have coffee?",
        "我会弹古筝，烦的时候就弹一会儿。",
        "我儿子才两岁，特别黏人",
        "我特别讨厌被亲戚问什么时候结婚。",
        # What the user tells beside the words they relay stays.
        'I live in Osaka and my coworker says "the trains all stop at midnight" — is that true?',
        '老板说"下季度全员用飞书"，我是做财务的，飞书报销功能好用吗',
        "开学第一周终于熬过去了，我九月开始在浙大读研。",
        # The subject left out is the user or theirs; a label before a name introduces.
        "Starting a new job in Chicago on the 1st — what neighborhoods should I look at?",
        "女儿九月上幼儿园了，要准备些什么",
        "About me: Priya Nair, 31, PM at a fintech startup",
        "工资卡是招行的",
        # Told before a task's colon: kept without the material after it.
        "儿子花生过敏，帮我看看这个蛋糕配料有没有问题：面粉、鸡蛋、黄油、杏仁粉、白砂糖",
    ],
)
def test_routines_preferences_and_what_the_user_tells_beside_a_task_are_kept(text: str) -> None:
    assert gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    "text",
    [
        # A first, a named person, a decision or news that lasts is kept, reaction or not.
        "Phew, finally passed my driving test today!",
        "ugh, had dinner with Priya tonight and she's moving to Oslo",
        "Finally signed up for the half marathon today lol",
        "终于第一次自己换好了自行车胎，哈哈",
    ],
)
def test_news_told_with_a_reaction_is_kept(text: str) -> None:
    assert gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # An event told about someone or something of the user's is their life, not a scene.
        (
            "I sent a framed print to my sister for her birthday last week. How do I ship a "
            "cake safely?",
            "I sent a framed print to my sister for her birthday last week.",
        ),
        (
            "I was thinking of hanging my grandfather's old map in the hallway. Would that "
            "look odd?",
            "I was thinking of hanging my grandfather's old map in the hallway.",
        ),
    ],
)
def test_an_event_about_the_users_own_beside_a_question_is_kept(text: str, kept: str) -> None:
    decision = gate(text)
    assert decision.keep, decision.reason
    assert decision.content == kept


@pytest.mark.parametrize(
    "text",
    [
        "I have a bad knee, which makes stairs slow.",
        "My daughter, who's nine, plays the cello.",
        "We moved to Porto, where my wife grew up.",
    ],
)
def test_a_relative_clause_asks_nothing(text: str) -> None:
    decision = gate(text)
    assert decision.keep, decision.reason
    assert decision.content == text


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Any tips for a long flight? I have a bad back.", "I have a bad back."),
        (
            "I'm hosting my book club on 12 March, what should I cook?",
            "I'm hosting my book club on 12 March",
        ),
        ("我十月去冰岛，要带什么衣服？", "我十月去冰岛"),
        (
            "Our team deploys every Thursday, can you draft the notes?",
            "Our team deploys every Thursday",
        ),
        # Past news that lasts: a pet named, a move, a thing of theirs by name, history.
        (
            "We adopted a tabby called Biscuit on Friday. How often should kittens eat?",
            "We adopted a tabby called Biscuit on Friday.",
        ),
        (
            "Moved to Glasgow three weeks ago. Where do locals buy fish?",
            "Moved to Glasgow three weeks ago.",
        ),
        (
            "I just bought a Kobo Libra, can you suggest some free ebook sites?",
            "I just bought a Kobo Libra",
        ),
        ("前年做了膝盖手术，现在爬楼还疼，有什么锻炼办法？", "前年做了膝盖手术，现在爬楼还疼"),
        ("上周领养了一只小狗叫豆包，怎么教它定点上厕所？", "上周领养了一只小狗叫豆包"),
    ],
)
def test_who_the_user_is_beside_a_question_is_kept(text: str, kept: str) -> None:
    decision = gate(text)
    assert decision.keep, decision.reason
    assert decision.content == kept


def test_what_is_told_before_a_tasks_material_is_kept_without_it() -> None:
    decision = gate("儿子花生过敏，帮我看看这个蛋糕配料有没有问题：面粉、鸡蛋、黄油")
    assert decision.keep and decision.content == "儿子花生过敏"
    # A fragment of the request itself is not something told.
    assert told("TL;DR this for me pls: The committee met Tuesday and agreed to wait.") == ""


def test_an_explicit_request_to_remember_keeps_its_fact_not_its_question() -> None:
    decision = gate("Remember that I'm allergic to peanuts, what snacks are safe?")
    assert decision.keep
    assert decision.content == "Remember that I'm allergic to peanuts"


def test_a_fact_that_refers_to_the_question_keeps_the_whole_turn() -> None:
    text = "Where should I stay in Kyoto? I'll be there for 4 nights in November."
    assert gate(text).content == text


@pytest.mark.parametrize(
    "text",
    [
        "Could you always answer in Spanish",
        "Could you please use British spelling in my documents",
        "以后能不能都用中文回答",
        "When I was a kid I lived in Ohio",
        "上周做了个装修清单",
        "Reply to recruiters on my behalf that I'm not interested",
        "Text my sister every Sunday that I'm fine",
        "搬家时建议列一个清单",
        "Note to self: the dentist moved to Elm Street",
        "What I love most is hiking in the Alps",
        "我和几个朋友去爬山了",
        "推荐餐厅的时候注意一下",
        "Which is why I moved to Lyon",
        "Did a 10k this morning",
        "What happened was my car broke down on the A1",
        "我什么时候都可以",
        "我记不清是哪天了",
    ],
)
def test_statements_and_standing_requests_do_not_ask(text: str) -> None:
    assert not asks(text)


@pytest.mark.parametrize(
    ("text", "introduced"),
    [
        ("I'm Bob.", True),
        ("Hey! Marcus here.", True),
        ("I go by Kat, not Katherine.", True),
        ("我是王伟。", True),
        ("I'm fine.", False),
        ("It's Python, not Ruby.", False),
        ("It's Rachel again, from yesterday.", True),
        ("I'm Monday-ready.", False),
        ("Same here!", False),
        ("我是程序员", False),
        ("我是高中生", False),
        ("叫我去开会", False),
        ("老板叫我明天早点来", False),
        ("叫我小陈就行", True),
        ("你可以叫我Liz。", True),
        ("Priya. Paediatric nurse.", True),
        ("Dana. Welder, mostly pipelines.", True),
        ("Yes. Manager said no.", False),
        ("Update. New printer.", False),
        ("Sam. Manager said no.", False),
        ("- Name: Ines Duarte", True),
        ("姓名：周晓梅", True),
    ],
)
def test_self_introductions(text: str, introduced: bool) -> None:
    assert introduction(text) is introduced


def test_only_questions_leave_nothing_to_tell() -> None:
    assert told("what's my dog's name? and where did I park") == ""
    assert told("I'm vegan. I live in Oslo.") == "I'm vegan. I live in Oslo."


@pytest.mark.parametrize(
    "text",
    [
        "is it " + " " * 60_000 + "so what",
        "I'm Bob, " * 7_000,
        "吗 " * 30_000,
        "what " * 12_000,
        "k" * 5_000 + "!x",
        "haha" * 2_000 + "!x",
        "嗯" * 5_000 + "!x",
        "ugh " * 20_000 + "so tired x",
        "so " * 20_000 + "x",
        "hi im " * 10_000,
        "call me " * 10_000,
        "哈" * 50_000 + "吗x",
        "帮我" + "好" * 50_000,
        "值不" * 25_000,
        "不管" * 25_000 + "去不去",
        "translate this: " * 5_000,
        "I'm on nights (" * 5_000 + ")" * 5_000 + ", can you help?",
        "we " + "keep my " * 10_000 + "in",
        "每" + "几天" * 25_000,
        "my son is 7 " + "whats a good " * 8_000,
        "我住海口 " * 20_000,
        "remind me to " * 10_000,
        "提醒" * 30_000 + "我",
        "long haul " * 15_000 + "trucker here",
        "as you know " * 10_000 + "what?",
        "help me write a script " + "that runs " * 8_000 + "every night",
        "小米还是" * 20_000,
        "讨厌被" * 20_000 + "问什么",
        "my boss said “" * 10_000 + "ok?",
        'he said "' + "x, and y said " * 8_000 + "what?",
        "都" * 40_000 + "在",
        "need a short " * 8_000 + "message",
        "about me: " + " " * 50_000 + "x",
        "a short, " * 8_000 + "reply to him",
        "```\n" * 20_000 + "x",
        "translate:\n" + "- my x\n" * 3_000,
        "can x " * 10_000 + "be crushed",
        "Question: " * 10_000 + "why",
        '"' * 50_000 + "- I x",
        "Tom. " + "electricianer" * 8_000,
        "是个同事，" + " " * 50_000 + "叫",
        "a cosplay " * 8_000 + "list of",
    ],
)
def test_meaning_checks_are_linear_on_long_input(text: str) -> None:
    start = time.perf_counter()
    told(text)
    asks(text)
    gate(text)
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize(
    "text", ["Anyway, thanks.", "So, thanks!", "Oh well, thanks", "Actually, thank you"]
)
def test_a_discourse_marker_with_thanks_is_not_a_named_request(text: str) -> None:
    assert not gate(text).keep


@pytest.mark.parametrize("text", ["Dark mode, please.", "Metric units, please", "深色主题，谢谢"])
def test_a_thing_named_and_asked_for_is_still_a_preference(text: str) -> None:
    decision = gate(text)
    assert decision.keep and decision.category.value == "preference"
