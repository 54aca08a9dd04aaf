"""What a sentence does, whatever its punctuation: asks, requests, introduces, or tells.

The gate must judge meaning, not form. "what's my dog's name" and "明天北京会下雨吗" ask
something with or without a question mark; "do you know where I parked" and "你还记得我上次说
的吗" ask the assistant to recall, they tell it nothing new. A question or a request is never
stored as a fact, even when it mentions the user's dog or trip. "I'm Bob." and "我叫王伟" are
short, but they say who the user is.

Every pattern is anchored or bounded, without nested repetition: matching is linear in the
text's length. `asks` and `introduces` read at most MAX_SENTENCE_CHARS of a clause.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice

from memory.gating.rules import lexicon_en as lex
from memory.gating.rules import lexicon_zh as zh
from memory.gating.rules.specifics import plans_ahead, without_vocatives
from memory.gating.rules.split import split_candidates, split_clauses

# A question or an introduction is said in its first few hundred characters; a longer
# sentence is a paste, judged on its opening only.
MAX_SENTENCE_CHARS = 400

_F = re.IGNORECASE
# Openers that do not change what the sentence does: "so", "ok", "hey", "quick question:".
_LEAD = re.compile(
    r"^(?:(?:so|and|ok|okay|also|oh|hey|hi|hello|um+|uh+|well|btw|by the way|anyway|actually"
    r"|quick question|quick q|qq|one more thing|sorry|and also|but|wait|hmm+|oh wait|right"
    r"|realistically|honestly|seriously|genuinely|basically"
    r"|yo|bruh|dude|ngl|lol|lmao|bestie|bro|fam|mate|guys"
    r"|嗯|哦|那|那么|对了|另外|还有|请问)(?![a-z'])"
    r"[\s,，:：.。!！]*){1,3}",
    _F,
)
_SUBJECT = r"(?:i|we|you|he|she|it|they|there|this|that|these|those|my|our|your|his|her|their)"
_AUX = (
    r"(?:is|are|am|was|were|do|does|did|can|could|would|will|should|shall|may|might|isn't|aren't"
    r"|wasn't|weren't|don't|doesn't|didn't|can't|couldn't|won't|wouldn't|shouldn't)"
)
# "what's my dog's name", "where did I park", "how long does it take", "who won".
_WH_QUESTION = re.compile(
    r"^(?:what|which|who|whom|whose|where|when|why|how)(?:'s|'re|'d|'ll|'ve|\s+" + _AUX + r"\b"
    r"|\s+(?:have|has|had)\s+" + _SUBJECT + r"\b)"
    r"|^how\s+(?:much|many|long|often|far|old|about|come|do|to)\b"
    # "Why my wifi keep dropping": the auxiliary left out.
    r"|^why\s+(?:my|the|your|this|that|our)\s+\w"
    # A learner's word order: "how i can make…", "what it means", "where i can buy".
    r"|^(?:how|what|where|when|why|which)\s+(?:i|we|you|it|this|that)\s+(?:can|could|should"
    r"|must|means?|do|does)\b"
    r"|^(?:in|at|on|from|to|for|with|by|of) (?:which|what|whom|whose)\s+\w"
    r"|^what\s+(?:about|if|else|happened|time|day|date|kind|sort|type|year|month|size|colou?r"
    r"|number|was|were)\b"
    r"|^(?:what|which|who|whose|whom)\s+(?!(?:" + _SUBJECT + r"|a|an|ever)\b)\w",
    _F,
)
# Statements that open with a question word: "which is why I moved", "what matters is…",
# "what happened was my car broke down".
_WH_STATEMENT = re.compile(
    r"^which (?:is|was|means|meant) (?:why|how|what|when|where|that)\b"
    r"|^what (?:really |actually |first |also )?(?:matters|happened|counts|helped|helps|worked"
    r"|works|annoys me|bugs me|worries me|scares me|surprised me|i \w+|we \w+)"
    r"(?: (?:most|me|us|then|next))? (?:is|was)\b",
    _F,
)
# "is it going to rain", "do you know where I parked", "can I bring my dog". "Have" inverts
# only before a pronoun: "have a great day" is a wish.
_INVERTED = re.compile(
    # "Did a 10k this morning" narrates with its subject dropped; "did the parcel come" asks.
    r"^(?!did an? )" + _AUX + r"\s+(?:" + _SUBJECT + r"|the|a|an|any|anyone|anybody"
    r"|someone|somebody|[a-z]+'s)\b"
    r"|^(?:have|has|had|haven't|hasn't)\s+(?:i|we|you|he|she|it|they|there|anyone)\b"
    # A statement hardly opens with "is" or "does": "is Lisbon warmer than Madrid".
    r"|^(?:is|are|isn't|aren't|does|doesn't)\s+[\"'“‘]?\w"
    # A passive after a modal: "can metformin ER be crushed", "will the fee be waived".
    r"|^(?:can|could|should|will|would|must|may|might)\s+(?:[\w-]+\s+){1,4}?be\s+\w+(?:ed|en)\b"
    # "do kids really need homework": a plural noun and its verb after "do".
    r"|^do\s+[a-z]+s\s+(?:really\s+|actually\s+|usually\s+|still\s+|even\s+)?(?:need|have|get"
    r"|count|work|matter|cost|take|go|make|help|hurt|like|eat|sleep|know|use|pay|charge|expire"
    r"|apply)\b",
    _F,
)
# The best of something asked for by name: "best cover crop to follow soybeans in zone 5".
_BEST = re.compile(
    r"^(?:the\s+)?(?:best|cheapest|easiest|quickest|fastest|safest|simplest|healthiest)\s+"
    r"(?!friend)(?:[\w-]+\s+){0,3}?(?:to|for)\b",
    _F,
)
# A request to the listener, which a standing marker makes a rule ("can you always…").
_ASKS_YOU_TO = re.compile(
    r"^(?:can|could|would|will|won't|can't|cannot)\s+(?:you|u)\b"
    r"|^(?:are you able to|do you mind)\b",
    _F,
)
# How a thing to make is described before it is named: "a short, calm reply", "a one-star
# review", "a 生日快乐 message" (never a subject and its verb: "We use Toast for POS").
_MAKE_LIKE = (
    r"(?:quick|short|shorter|simple|brief|polite|formal|casual|calm|friendly|funny|nice|cute"
    r"|sweet|professional|heartfelt|gentle|firm|clear|concise|long|little|good|witty|kind|warm"
    r"|catchy|proper|basic|cheesy|silly|serious|sincere|[a-z]+-[a-z-]+|\d\S*|[^\sa-z]\S*)"
)
# Requests to look something up, recall it or explain it, and indirect questions.
_REQUEST = re.compile(
    r"^(?:please\s+|pls\s+|can you\s+|could you\s+|would you\s+)?(?:remind me (?:what|where"
    r"|when|who|how|which|whether|if|of|about)|tell me|let me know|look up|search"
    r"|find out|figure out|help me (?:find|remember|recall|figure|work out|decide|pick|choose)"
    r"|recommend|suggest|explain|describe|check (?:if|whether|what|when|where)"
    r"|any (?:[a-z]+ ){0,3}?(?:idea|ideas|thoughts|suggestions|recommendations|recs|tips|advice"
    r"|chance|way)\b"
    r"|any (?:good |other |quick |easy |cheap |simple )?[a-z]+s (?:to|for|on|that|which)\b)"
    r"|^(?:dear \w+,?\s*)?(?:i would be grateful (?:if you could|if you would"
    r"|to (?:learn|know|hear))"
    r"|kindly (?:advise|let me know|suggest|explain|tell|confirm|provide|share|help|recommend"
    r"|summari[sz]e|inform|list|translate|check)|i (?:kindly |respectfully )?request that you"
    r"|i would (?:really )?appreciate (?:it )?if you (?:could|would)|please be so kind as to"
    r"|(?:could|would|can) you kindly)\b"
    r"|^i(?:\s+|(?='))(?:wonder|was wondering|am wondering|'m wondering|want to know|wanna know"
    r"|need to know|would like to know|'d like to know|forgot (?:what|where|when|who|how|which)"
    r"|can't remember (?:what|where|when|who|how|which))\b"
    r"|^(?:wondering|curious) (?:if|whether|what|where|when|who|how|which)\b"
    # A request said as a wish: "I'd love a summary of this", "it would be great if you could…".
    r"|^i(?:'d| would| want| need) (?:like )?you to\b"
    r"|^(?:i'd love|i would love|i'd appreciate|i would appreciate)\s+(?:a|an|some|your|it if you"
    r"|if you|help|to get|to see)\b"
    r"|^(?:it would|it'd|would) be (?:great|nice|awesome|helpful|amazing|lovely|good) if you\b"
    # Weighing a choice aloud asks for advice: "not sure if I should…", "can't decide between…".
    r"|^(?:i'm |i am )?(?:not sure|unsure|torn|undecided) (?:if|whether|about whether)"
    r" (?:i|we) should\b|^(?:i )?can't decide (?:if|whether|between|which)\b"
    r"|^(?:does )?(?:anyone|anybody) (?:know|have|seen|tried)\b"
    # The thing the speaker needs made: "I need a recipe for dumplings", "I'd like a packing list".
    r"|^i(?:\s+|(?='))(?:need|want|would like|'d like|am looking for|'m looking for)\s+"
    r"(?:a|an|some|another|a few|\d+)\s+(?:[a-z-]+\s+){0,2}?"
    r"(?:recipes?|list|plan|template|summary|outline|draft|poem"
    r"|names?|slogan|caption|itinerary|playlist|script|email|letter|toast|speech|checklist|quiz"
    r"|cover letter|bio|tagline|title|haiku|story|joke|riddle|workout|meal plan|message|note"
    r"|card|reply|text)\b"
    # The thing to make named first, the subject and verb left out: "packing list for a weekend
    # camping trip", "need a short birthday message for a coworker".
    r"|^(?:need |want )?(?:a |an )?(?:" + _MAKE_LIKE + r",?\s+){0,3}?"
    # One word may say what kind ("a cosplay shopping list", "a tier list of …").
    r"(?:[a-z0-9-]+\s+(?=(?:\w+ )?(?:list|plan|checklist|guide|template|schedule|itinerary)\b))?"
    r"(?:packing list|checklist|shopping list|cover note|cover letter|itinerary|meal plan"
    r"|workout plan|training plan|template|poem|haiku|limerick|caption|toast|speech|message"
    r"|card|script|summary|outline|slogan|tagline|bio|joke|riddle|song|regex|formula"
    r"|(?:talking|counsell?ing|bullet) points)"
    r"\s+(?:for|about|to|on|that|which|please|pls)\b|^(?:a |an )?(?:[a-z0-9-]+\s+)?list of\b"
    # A word that is also a verb needs its article or how it should be: "a quick text to the
    # driver" asks for one, "Reply to recruiters on my behalf" acts for the user.
    r"|^(?:need |want )?(?:(?:a |an )(?:"
    + _MAKE_LIKE
    + r",?\s+){0,3}?|(?:"
    + _MAKE_LIKE
    + r",?\s+){1,3}?)(?:reply|email|tweet|post|text|note(?! to (?:self|myself))|dm|review"
    r"|complaint|response)\s+(?:for|about|to|on|that|which|please|pls)\b"
    # How the answer should look, named before a task's colon: "bullet points: …".
    r"|^(?:in\s+)?(?:bullet points|bullets|a table|a list|a numbered list|steps)\s*$"
    r"|^(?:a |an )?(?:" + _MAKE_LIKE + r",?\s+){0,3}?(?:poem|haiku|limerick|joke|riddle|song|toast)"
    r"\s+(?:please|pls)?\W*$",
    _F,
)
# A task for the assistant in the imperative ("translate this into Dutch pls", "list three
# board games for kids", "give me a packing list"): the verbs that only ever ask for work,
# and the ones that do when an object follows. A standing marker makes it a rule instead
# (`_STANDING_REQUEST`, checked first).
_TASK = re.compile(
    r"^(?:please\s+|pls\s+|plz\s+|just\s+|now\s+|quickly\s+|real quick\s+)?"
    r"(?:translate|summari[sz]e|estimate|critique|rewrite|rephrase|reword|paraphrase|shorten|condense|proofread"
    r"|brainstorm|generate|compose|convert|calculate|compute|simplify|elaborate|clarify|recap"
    r"|add up|sum up|total up|tally up|split|(?:choose|pick|decide) for (?:me|us)"
    r"|(?:choose|pick) between"
    r"|quiz me|teach me|walk me through|help me|help us|tl;?dr|eli5|compare|contrast|break down"
    r"|weigh up|(?:outline|list|give me) (?:the )?pros and cons"
    r"|keep (?:this|that|it|these|those)\b"
    # "longer pls", "more formal": this answer redone, not a standing style (that names
    # what it is for: "shorter answers in general").
    r"|(?:a bit |much |way |even )?(?:shorter|longer|simpler|more (?:formal|casual|concise"
    r"|detailed|polite)|less (?:formal|wordy))\b(?!\s+(?:answers|replies|responses|messages"
    r"|emails|in general))"
    r"|(?:give|show|send|get|find|make|write|tell|pick|choose|name|draw|plan(?: out)?|map out"
    r"|draw up|write up|create|fix|edit|rate|rank|grade|roast"
    r"|check|review|format|sort|organi[sz]e|improve|correct|polish|list|draft|outline|design"
    r"|sketch|suggest|recommend|come up with|put together|turn|go over|look over|read through"
    r"|scale|flip|toss|roll|double|halve|triple|resize"
    r"|take a look at|have a look at|look at|read|repeat|say)\s+(?:me|us|him|her|them|this"
    r"|that|these|those|it|a|an|another|some|the|one|two|three|four|five|six|seven|eight|nine"
    r"|ten|\d+|few|a few|something|anything|every|each|all|my|our)\b(?!-))"
    # "Write a test for every new function" is a house rule in a task's form; in "write a
    # script that runs every night" the frequency is the script's.
    r"(?!(?:(?!\b(?:that|which)\b).)*\b(?:every|each|all|any|always|never|whenever|from now on"
    r"|by default|in (?:the )?future)\b)",
    _F,
)
# A reminder asked for, opened by nothing but politeness or the time it is for.
_REMIND = re.compile(
    r"^(?:please\s+|pls\s+|plz\s+|can you\s+|could you\s+|can u\s+|could u\s+)?remind me\s+"
    r"(?:(?:in|at|on|after|before|by|around|tomorrow|tonight|this|next)\b[^.!?,]{0,30}?\s+)?to\b",
    _F,
)
_ZH_REMIND = re.compile(
    r"^(?:请|麻烦(?:你)?|你)?(?:记得)?[0-9一二三四五六七八九十两半点分钟刻小时个以之后明今天晚上下中午早凌晨待等会儿过再周星期号月]{0,12}"
    r"提醒我(?!一下(?:我|什么|之前|上次))"
)
# "you know if the pool's open today", "do you remember when we talked about Rome": asking the
# assistant, however it opens. ("You know what, ..." is a filler, not a question.)
_YOU_KNOW = re.compile(
    r"^(?:do |did )?you (?:know|remember|recall|happen to know) (?:if|whether|when|where|who"
    r"|how|which|why)\b",
    _F,
)
# A tag that turns a statement into a question: "..., right", "... or not", "isn't it".
_TAG = re.compile(
    r"(?:,\s*(?:right|correct|yeah|no\?)|\s(?:or not|or nah|isn't it|aren't (?:they|you|we)"
    r"|don't (?:they|you|we)|doesn't (?:it|he|she)|didn't (?:it|i|you|we|they|he|she)"
    r"|won't (?:it|they|you)|wasn't it|weren't they))\W*$",
    _F,
)
# Chinese asks in place: a question word inside the clause, a final particle, or A-not-A. An
# indefinite use ("我什么都吃", "哪儿都行", "几个朋友") tells, it does not ask.
_ZH_WH = re.compile(
    r"(?<![没不])什么(?![都也的]|时候[都也])|(?<!随便)啥(?![都也的])|(?<![不没])怎么(?![都也样]|说呢)|怎么样|怎样|如何"
    r"|(?<!不)咋(?![都也])|点样|点解|边度|边个|乜嘢|乜野|(?<![了过好])几个月(?![前后])"
    r"|哪(?:里|儿|个|些|家|天|年|一)?+(?![都也怕])|几(?:点|号|月|岁|天|时|个人|位)|星期几|周几|礼拜几"
    r"|(?<![没不有])多(?:大|高|长|远|重|宽|厚|深|贵)(?![了点些])"
    r"|多少(?![有些])|多久|多长时间|为什么|为啥|谁(?![都也])|到底[^，。！？,.!?]{0,8}?几"
    # "煮饺子要点几次凉水": how many times something needs doing.
    r"|(?:要|得|该|需要|应该)[^，。！？,.!?]{0,6}?几(?:次|遍|回|下|分钟|个小时)",
)
# Yes/no questions: a final particle, A-not-A ("能不能", "交了没有"), or an alternative
# ("是住在珠海还是中山").
_ZH_QUESTION = re.compile(
    r"[了过]没有?[\s？?！!。~～]*$|是[^，。！？,.!?]{1,15}还是|是[^，。！？,.!?]{1,20}吧[\s？?。~～]*$"
    r"|是否|是不是|能不能|可不可以|要不要|有没有|行不行|好不好|对不对|会不会|用不用|该不该|真的假的"
    r"|有冇|([\u4e00-\u9fff])唔\1",
)
# What the speaker does not know, or is asked by others ("讨厌被亲戚问什么时候结婚").
_ZH_INDIRECT = re.compile(
    r"(?:不知道|不确定|不清楚|忘了|不记得|记不清|想不起来?)|被[^，。！？]{0,6}问"
    r"|(?:讨厌|烦|怕|受不了)[^，。！？]{0,8}?问"
)
_ZH_REQUEST = re.compile(
    r"^(?:请|麻烦(?:你)?|你)?(?:能|可以|能不能|可不可以)?(?:帮我|替我)?(?:查一下|查查|查询|搜一下|搜搜"
    r"|告诉我|提醒我(?:一下)?(?:我|什么|之前|上次)|推荐|介绍一下|解释一下|说说|讲讲|算一下|看看)"
    r"|^你(?:还)?(?:记得|知道|记不记得|知不知道)"
    r"|^你(?:觉得|认为|看看|说说)"
)
# Any task asked for: "帮我想个理由", "给我列个清单", "来个标题", "把这段改短一点", "润色一下这封
# 邮件". "帮我搬家的那个朋友" tells (a 的 follows). Like `_TASK`, a dated one carries a plan.
_ZH_TASK = re.compile(
    r"^(?:本人|我)?(?:请|恳请|烦请|劳烦|拜托(?:你|您)?|麻烦(?:你|您)?|唔该(?:你)?|你|您)?(?:从[^，。！？]{1,8}?(?:里|中))?(?:随便|随机|直接|赶紧|快)?(?:(?:这|那|上面|下面|以下)[\u4e00-\u9fff]{0,8}?)?(?:这次|这回|那就|就|也|先|再){0,3}"
    r"(?:能|可以|能不能|可不可以)?(?<!别)(?<!不要)(?<!不用)(?:帮我|替我|帮忙|帮手|帮帮我|帮(?:阿拉|俺|咱)|给我(?=[来写列出做推荐找讲说想整编起画算查翻改发排拟弄搞挑选配订定设制准安念读唱放播]))"
    r"(?![\u4e00-\u9fff]{1,3}的)"
    # A text named first, then what to do with it: "这段话缩短到一百字", "上面那封改得客气点".
    r"|^(?:这|那|上面|下面|以下)[\u4e00-\u9fff]{0,6}?(?:改(?![到在成为])|缩短|缩写|扩写|翻译|翻成|润色|总结|压缩|精简"
    r"|整理|检查|优化|重写)"
    r"|^(?:请|烦请|劳烦|拜托(?:你|您)?|麻烦(?:你|您)?)?帮(?:想|写|看|查|做|改|列|出|算|找|选|起|编|翻|整理|规划|推荐"
    r"|设计|画|搜)"
    # Politeness, then the task: "麻烦列几个场地", "烦请用通俗的语言概括一下",
    # "要是能帮我想几个…就太好了".
    r"|^(?:烦请|劳烦|拜托(?:你|您)?|麻烦(?:你|您)?)(?:列|推荐|整理|总结|翻译|校对|检查|看看|改|写|查|想|出|做|发|算)"
    r"|^(?:请|烦请|麻烦(?:你|您)?)?用[^，。！？]{1,10}?(?:概括|总结|解释|翻译|改写|讲讲|说明|写|说清楚|讲清楚|说明白"
    r"|描述|表达|回复|整理|归纳|对比|比较|列|画|帮我|帮忙)"
    # The thing named first, then how many: "雅思口语常见话题来20个".
    r"|^(?![我俺咱])[^，。！？]{1,20}来[0-9一二三四五六七八九十两几]+(?:个|条|道|首|句|篇|份|套)[吧呗]?$"
    r"|^(?:要是|如果)(?:你|您)?能(?:帮我|帮忙|帮)"
    r"|^再(?:[\u4e00-\u9fff]{1,3})(?:一点|一些|一下|点)"
    r"|^(?:请|麻烦(?:你)?)?(?:随便|随机)?给我(?:[来写列出做推荐找讲说想整编起画算查翻改发讲]|一个|一份|几个)"
    r"|^(?:改|修|查|检查|纠正|校对)(?:下|一下)"
    r"|^(?:来|整|写|列|出|做|起|想|编|画|算|查|给|推荐|找|搞|拟|讲)(?:个|一个|一份|一下|几个|一些|一段|一篇|一首|一张|句|一句|封|一封|条|一条|套|一套|几道|一道|道|首|篇|段|份|张)"
    r"|^出[0-9一二三四五六七八九十两几]+(?:道|个|组)"
    # Cheer me up, in a few words: "说几句给我打打气", "夸夸我".
    r"|^(?:说|讲|来)几句|^(?:给我)?打打?气|^(?:安慰|鼓励|夸)(?:安慰|鼓励|夸)?我"
    # In an order, then the task: "按离太阳的顺序列一下"; and one more: "再给个口诀".
    r"|^按[^，。！？]{1,12}?(?:列|排|整理|分类|排序)(?:一下|出来|个)"
    r"|^再(?:给|来|写|列|出|加|举)(?:个|一个|几个|一些|点|一下)"
    # A conversion said tersely: "华氏68度换成摄氏度", "100美元换算成人民币".
    r"|^(?![我俺咱把])[^，。！？了]{1,16}(?:换算成|转换成|换成|转成|折合成|翻译成|译成)[^，。！？了]{1,10}$"
    r"|^[带教]我(?:做|练|读|过|复习|走|玩|学|写|画|弹|唱|说|认)"
    r"|^(?:请|麻烦(?:你|您)?)?(?:一步一步|一步步|手把手|详细|简单|仔细)地?[带教]我(?!们)"
    # A request in the polite second person: "恳请您代拟一份…", "请你写…".
    r"|^(?:本人|我)?(?:恳请|烦请|劳烦|请)(?:您|你)(?!以后|今后|每次|记住|记得)"
    # Something to make for someone named: "给同事写句生日祝福".
    r"|^给[\u4e00-\u9fff]{1,6}?(?:写|编|做|画|想|起|列|挑|选|推荐|准备|发)(?:[0-9一二三四五六七八九十两几]+(?:个|条|句|首|篇|份)|个|一个|一份|几个|一些|一段|一篇|一首|一张|句|一句|封|一封|条|一条|套|一套|点)"
    # A part to play: "你扮演一个客栈老板", "假装你是面试官".
    r"|^(?:你|请你)?(?:扮演|假装(?:你是|成)|假设你是|来当|当一回|模拟一个)"
    # Reduplicated verbs ask: "考考我", "帮帮我", "讲讲这个".
    r"|^(?:请|你)?(?:考考|教教|测测|查查|算算|讲讲|改改|找找|列列|理理|捋捋|评评|比比|翻翻|写写|看看)"
    # The artefact the speaker needs made: "我需要一份去成都的旅游攻略".
    r"|^(?:我)?(?:需要|想要|要|求)(?:一份|一个|一篇|一套|个|份|篇)[^，。！？]{0,16}?"
    r"(?:攻略|计划|方案|清单|菜谱|食谱|做法|模板|文案|邮件|简历|大纲|教程|总结|提纲|训练|歌单|书单|名单|祝福|感言|发言稿|演讲稿|介绍)"
    r"|^(?:请|烦请|劳烦|麻烦(?:你|您)?|望|恳请|敬请)?(?:协助|帮忙)?[把将](?:这|那|它|下面|上面|以下|刚才|该|此)"
    r"|^(?:翻译|总结|润色|改写|缩写|扩写|翻成|概括|分析一下|检查一下|修改一下|优化一下|对比一下|比较一下)"
    # The thing to write named alone: "幼儿园毕业典礼家长代表发言稿，三分钟的".
    # Named, not said to be made or had ("上周做了个装修清单" tells).
    r"|^(?![我俺咱])(?:(?![了过是有在建做列写])[^，。！？\s]){0,16}(?:发言稿|演讲稿|祝福语|文案|邀请函|请假条|感谢信|道歉信|检讨书"
    r"|清单|攻略|模板|大纲|计划表|时间表|书单|歌单)(?=$|[，,。])"
)
# A standing instruction in a request's form ("could you always reply in Spanish") is a rule.
_STANDING_REQUEST = re.compile(
    r"\b(?:always|from now on|going forward|by default|in (?:the )?future|every time|whenever"
    r"|never)\b|以后|今后|每次|默认|一直|始终|总是",
    _F,
)

# "I'm Bob.", "I am Ana Souza, by the way", "Bob here", "call me Liz", "name's Liz".
_INTRO_EN = re.compile(
    # A label, then the name: "me: sarah, 34, accountant", "About me: Priya Nair, 31, PM".
    r"^(?i:me|about me|quick intro|intro|a bit about me|a little about me)\s*[:：-]\s*"
    r"(?P<label>[A-Za-z][a-z]+)(?=\s*(?:[A-Z][a-z]+\s*)?,)|"
    r"(?:^|[,;]\s*)(?i:i'm|i am|im)\s+(?P<name>[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?)"
    r"(?:\s+[A-Z][a-z]+)?(?=\s*$|\s*[.!,;]|\s+(?i:here|again|speaking|from|by the way|btw)\b)"
    # "It's Python, not Ruby" names no one: "it's" and "this is" need "here" or "again".
    r"|(?:^|[,;]\s*)(?i:it's|it is|this is)\s+(?P<it>[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)?"
    r"\s+(?i:here|again|speaking)\b"
    r"|^(?P<here>[A-Z][a-z]+) (?:here|speaking)\b"
    # A profile's line: "- Name: Daniel Okafor".
    r"|^[\s*•-]*(?i:name|full name)\s*[:：]\s*(?P<field>[A-Z][a-z]+)"
    r"|\b(?i:name's|name is|call me|calls me|go by)\s+[\"'“]?[A-Z]",
)
# Chat in lower case gives a name no capital, so the words around it must say it is one: a
# greeting before "im …", "nice to meet you" or "btw" after it, "name's …", "call me …" with
# nothing after the name. Read on the normalised text ("im" → "i'm").
_INTRO_LOWER = re.compile(
    r"^(?:hey|hi|hello|hiya|heya|yo|howdy|hey there|hi there)\W+(?:i'm|i am)\s+"
    r"(?P<greeted>[a-z][a-z'-]+)"
    r"(?=\s*(?:$|[.!,;~]|\s(?:here|btw|by the way|from|and)\b))"
    r"|(?:^|[,;]\s*)(?:i'm|i am)\s+(?P<met>[a-z][a-z'-]+)"
    r"(?=\s*,?\s*(?:nice|pleased|glad|good|great) to meet\b|\s+(?:btw|by the way)\b)"
    # "im jess, a nurse on nights": a word set off by a comma and said more of, opening.
    r"|^(?:i'm|i am)\s+(?P<appos>[a-z][a-z'-]+)(?=\s*,\s*(?:a |an |the )?[a-z]+(?:\s+[a-z]+){1,})"
    r"|^(?:hey|hi|hello|hiya|heya|yo|howdy)\W+(?:it's|its|this is)\s+(?P<its>[a-z][a-z'-]+)"
    r"(?=\s*(?:$|[.!,;~]|\s(?:here|btw|by the way|from|again|speaking)\b))"
    r"|^(?:hey|hi|hello|hiya|heya|yo|howdy)\W+(?P<here>[a-z][a-z'-]+)\s+here\b"
    r"|(?:^|[,;]\s*)this is\s+(?P<this>[a-z][a-z'-]+)\s+(?:from|here|speaking)\b"
    r"|\b(?:i'm|i am)\s+(?:dr|doctor|prof|professor|mr|mrs|ms|miss)\.?\s+(?P<titled>[a-z][a-z'-]+)"
    r"|\b(?:my name's|my name is|name's|name is|i go by|go by)\s+[\"'“]?(?P<named>[a-z][a-z'-]+)"
    r"|\b(?:call me|calls me)\s+[\"'“]?(?P<called>[a-z][a-z'-]+)"
    r"(?=[\"'”]?\s*(?:$|[.!,;~]|\s(?:btw|please|pls|for short|instead|everyone|everybody"
    r"|most people|all my|that's|thats)\b))"
    # "names marco, im italian": "name's" typed without its apostrophe, opening.
    r"|^names\s+(?P<names>[a-z][a-z'-]+)(?=\s*(?:$|[.!,;~]))"
    r"|^[\s*•-]*(?:name|full name)\s*[:：]\s*(?P<fieldlow>[a-z][a-z'-]+)",
)
# Words after "call me" or "I go by" that are no name: "call me back", "call me tomorrow".
_CALL_NOT = frozenset(
    "back later tomorrow tonight anytime whenever sometime asap crazy maybe old-fashioned a an "
    "the when if after before again now soon first please names something what".split()
)
# Capitalised words after "I'm" that are not a name: states, places in a sentence, titles.
_NOT_NAMES = frozenset(
    "ok okay fine good great back here home sorry sure done ready just so not also really in "
    "out off on at tired busy free new still always never very well glad happy excited afraid "
    "allergic vegan vegetarian monday tuesday wednesday thursday friday saturday sunday "
    "january february march april may june july august september october november december "
    "same right over up down out me us you everyone nobody somebody stuck almost nearly "
    "thanks hello hi hey sick lost broke late bored hungry thirsty sleepy cold hot full sad mad "
    "angry upset confused nervous scared worried curious serious honest certain aware alone "
    "single married divorced pregnant retired sober early away gone alive dead cool alright bad "
    "awake old young tall short different".split()
)
# Chinese: "我叫王伟", "叫我小李", "我是王伟" (a surname and a given name, not "我是学生").
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任"
    "沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_INTRO_ZH = re.compile(
    r"我的?(?:英文|中文|大|小|网)?名(?:字)?叫(?!什么|啥)|我叫(?!什么|啥)|我姓(?!什么|啥)"
    # "叫我小陈就行" names; "老板叫我明天早点来" asks the speaker to do something.
    r"|(?:叫|喊)我\s*(?!什么|啥)(?:[\u4e00-\u9fff]{1,3}|[A-Za-z]{2,20})\s*"
    r"(?=就行|就好|就可以|吧|[，,。.！!~～]|$)"
    r"|(?:^|[，,])我是[^，。！？]{0,10}?的?\s*[A-Z][a-z]+\s*(?=$|[，,。.！!~～])"
    r"|(?:^|[，,])(?:本人|鄙人|敝人|在下)(?:叫|姓)?(?:小|老)?["
    + _SURNAMES
    + r"][\u4e00-\u9fff]{1,2}"
    r"(?=$|[，,。.！!~～\s])"
    r"|^[\s*•-]*(?:姓名|名字|称呼)\s*[:：]\s*[\u4e00-\u9fff]{2,4}"
    r"|(?:^|[，,])我是(?:小|老)?[" + _SURNAMES + r"][\u4e00-\u9fff]{1,2}"
    r"(?<![员师生者家人长工手迷控粉党族官士])(?=$|[，,。.！!~～\s]|啊|呀|哦)"
)
_INTRO_ZH_NOT = re.compile(r"叫我(?:去|来|做|帮|别|不|一起|吃|回|起|早|过)")


def _head(sentence: str) -> str:
    text = without_vocatives(sentence[:MAX_SENTENCE_CHARS]).strip()
    return _LEAD.sub("", lex_normalise(text)).strip()


lex_normalise = lex.normalise


def asks(clause: str) -> bool:
    """True when `clause` asks a question or requests something, with or without a "?".

    "what's my dog's name", "is it going to rain tomorrow in Paris", "can you remind me what
    I said about the trip", "我的狗叫什么名字", "你还记得我上次说的吗". A standing rule in a
    request's form ("could you always answer in Spanish") does not ask: it is a preference.
    """
    low = zh.without_laughter(_head(clause))
    if not low:
        return False
    if _WH_STATEMENT.match(low):
        return False
    if _WH_QUESTION.match(low) or (_zh_wh(low) and not _indirect(low, _ZH_WH)):
        # "why does my bread always come out flat", "为什么我的面包总是发不起来": a question
        # word asks, whatever "always" says.
        return True
    if _ZH_WONDER.match(low) and (_zh_wh(low) or _ZH_QUESTION.search(low)):
        return True
    if _ZH_ANNOUNCE.match(low):
        return True
    if _INVERTED.match(low) and not _ASKS_YOU_TO.match(low) and not _STANDING_REQUEST.search(low):
        # "is it bad to drink energy drinks every day": "every day" is what is asked about;
        # "is it ok if from now on you reply in Spanish" still sets a rule.
        return True
    if _STANDING_REQUEST.search(low) or persists(low):
        return False
    if lex.ANSWER_FORM.search(low) or zh.ANSWER_FORM.search(low):
        # "give me steps as a numbered list", "单位用公制吧": how every answer should look.
        return False
    if lex.POLITE_REQUEST.search(low):
        # "Could you use British spelling in my documents": a style asked for is a preference.
        rest = lex.POLITE_REQUEST.sub("", low)
        if _TASK.match(rest) and not plans_ahead(clause):
            # "can you shorten this to under 100 characters": a task with its limit.
            return True
        if lex.PREFERENCE.search(rest) or lex.CONSTRAINT.search(rest):
            return False
    if _INVERTED.match(low) or _REQUEST.match(low) or _YOU_KNOW.match(low) or _BEST.match(low):
        return True
    if _TAG.search(low):
        return True
    if (
        (_TASK.match(low) or _ZH_TASK.match(low))
        and not plans_ahead(clause)
        and not _ZH_WHENEVER.search(low)
    ):
        # "Help me plan my wedding on 14 September": a task dated weeks ahead carries a plan
        # to keep; one for tomorrow or Saturday ("fix my speech for saturday") only asks.
        return True
    if _REMIND.match(low) or _ZH_REMIND.match(low):
        # "remind me to call the vet at 5", "一小时后提醒我回电话": a reminder is a task;
        # "remind me to stretch every morning" sets a routine (`_STANDING_REQUEST`, above).
        return True
    if _ZH_REQUEST.match(low) and not _ZH_WHENEVER.search(low):
        # "推荐餐厅的时候注意一下" sets a rule for every recommendation; it asks for none.
        return True
    if zh.particle_question(low) or _ZH_A_NOT_A.search(low):
        return True
    if _ZH_EITHER.match(low) and not zh.PREFERENCE.search(low) and not zh.DECISION.search(low):
        # "小米还是华为": two things named and nothing said of them asks which.
        return True
    return bool(_ZH_QUESTION.search(low) and not _indirect(low, _ZH_QUESTION))


def persists(low: str) -> bool:
    """A frequency said of the speaker, not of the thing a task makes.

    "Send me a summary every morning" sets a routine; in "write a script that backs up a
    folder every night" the frequency is the script's.
    """
    found = lex.PERSIST.search(low)
    return found is not None and not _MADE_THING.match(low, 0, found.start())


_MADE_THING = re.compile(
    r"^(?:\w+\s+){0,3}(?:write|make|build|create|code|set up)\b.*\b(?:that|which)\b"
)
_ZH_EITHER = re.compile(
    r"^[^\s，。！？还我俺咱]{1,6}还是(?![能会要用是在也都就得没不挺很])[^\s，。！？还我]{1,6}[呢啊呀]?[，,。？?\s]*$"
)
# "推荐餐厅的时候…", "给我推荐菜谱的话…": a condition on every such task, not one task.
_ZH_WHENEVER = re.compile(r"的时候|的话(?:$|[，,\s])")
# In a habit ("每周都去游几次泳", "一般跑几公里"), 几 is "a few", not "how many".
_ZH_FEW = re.compile(r"几(?:天|次|个(?!月)|回|趟|周|年|小时|公里|页)")
_ZH_HABIT = re.compile(r"每|经常|常常|一般|通常|总是|偶尔")
# A-not-A asks ("划不划算", "去不去"); after 不管/无论 it does not ("不管去不去都…").
_ZH_A_NOT_A = re.compile(r"(?<!不管)(?<!无论)(?<!不论)([\u4e00-\u9fff])不\1")
# "不知道地铁上能不能吃东西", "想知道…": opening with what the speaker does not know asks the
# assistant; further in ("他说不知道什么时候到") it reports.
_ZH_WONDER = re.compile(r"^(?:我)?(?:也|还|就)?(?:不知道|不确定|不清楚|想知道|好奇|想问问?|想请教)")
# Announcing a question asks: "想问个App的问题", "请教一个问题".
_ZH_ANNOUNCE = re.compile(
    r"^(?:我)?(?:想|要)?(?:问|请教)(?:个|一个|一下|几个|下)[^，。！？]{0,12}?问题"
)


def _zh_wh(low: str) -> bool:
    """A Chinese question word that asks (not 几 as "a few" in a habit)."""
    found = list(_ZH_WH.finditer(low))
    if found and _ZH_HABIT.search(low) and "你" not in low and "您" not in low:
        return not all(_ZH_FEW.match(low, m.start()) for m in found)
    return bool(found)


def _indirect(low: str, pattern: re.Pattern[str]) -> bool:
    """True when the question word sits in what the speaker does not know ("我不知道…")."""
    match = pattern.search(low)
    return bool(match and _ZH_INDIRECT.search(low[: match.start()]))


def introduces(clause: str) -> bool:
    """True when `clause` says the speaker's name: "I'm Bob.", "call me Liz", "我叫王伟"."""
    text = clause[:MAX_SENTENCE_CHARS].strip()
    for found in (_INTRO_EN.search(text), _INTRO_LOWER.search(lex_normalise(text))):
        if found and _a_name(next((n for n in found.groups() if n), "")):
            return True
    return bool(_INTRO_ZH.search(text) and not _INTRO_ZH_NOT.search(text))


def _a_name(word: str) -> bool:
    low = re.split(r"[-']", word.lower())[0]
    if low in _NOT_NAMES or low in _CALL_NOT:
        return False
    # "hey im starving btw": a state, a participle or an adverb is no name.
    return not low.endswith(("ing", "ed", "ly"))


# A leading "since", "as", "because" ties the fact to a question that follows it.
_TIE = re.compile(
    r"^(?:so|and|but|since|as|because|given that|considering|now that"
    r"|因为|既然|由于|所以|鉴于|考虑到)\s*[,，]?\s*",
    _F,
)


# "I'm allergic to peanuts so what snacks are safe": a question joined on without a comma.
_ASK_BREAK = re.compile(
    r"(?<!\s)\s+(?:so|and|but)\s+(?=(?:what|which|where|when|how|who|why|can|could|should|would|is"
    r"|are|do|does)\b)|(?<=[\u4e00-\u9fff])(?=(?:那|所以)(?:我|有什么|哪|什么|怎么))",
    _F,
)


# A question or a task run on after a statement with no comma, as a phone types it: "my son is
# 7 whats a good bike size", "we use slack at work how do i schedule a message", "hate long
# emails so write me a reply". Only a break whose right side asks is taken (`_run_on`).
_RUN_ON = re.compile(
    r"(?<=[a-z0-9\u2600-\u27bf\U0001f300-\U0001faff])\s+(?:(?:um+|uh+|so|like|and|but|anyway)\s+)?"
    r"(?=(?:what's|whats|what (?:is|are|should|would|do|does|can|(?:\w+ly )?(?:causes|makes|helps"
    r"|happens|works))"
    r"|when (?:is|are|do|does|should|can)|why (?:is|are|do|does|did|would|can)|which"
    r"|how (?:do|does|can|should"
    r"|would|often|long|much|many|far)|where (?:can|do|should|is|are)|can (?:you|u|i)"
    r"|could (?:you|u)|would (?:you|u)|should (?:i|we)|do you|is there|are there|any"
    r"|(?:pls|please|plz) |write|give|make|tell|send|suggest|recommend|help|find|draft|list"
    r"|show)\b)",
    _F,
)
# Words after which a question word opens what is known, not a question: "I don't know what
# to get her", "that's how much it costs".
_KNOWS = frozenset(
    "know knew wonder wondered wondering sure remember remembered forget forgot forgotten decide"
    " decided tell told ask asked see saw understand understood explain explained learn learned"
    " learnt figure figured idea care matter mind show showed shows is was that's thats it's its"
    " about on of to i we you they he she it u ur".split()
)
_WH_WORDS = frozenset("what whats what's which who where when why how".split())


def clauses(sentence: str) -> list[str]:
    """`sentence` split into clauses, also where a question is joined on by "so" or "and"."""
    parts = [s for p in (split_clauses(sentence) or [sentence]) for s in _after_latin(p)]
    return [r for p in parts for q in _ASK_BREAK.split(p) if q.strip() for r in _run_on(q.strip())]


# "我有adhd 学习老走神有啥办法", "我用的MacBook 怎么装Python": what the speaker has, then a space
# and the question. Only a clause that opens with the speaker is cut, so "用 Python 怎么读文件"
# stays one question.
_LATIN_BREAK = re.compile(
    r"^(?:我|本人|俺|咱)[^\s，。！？]{0,40}?[A-Za-z0-9]\s+(?=[\u4e00-\u9fff])"
)


def _after_latin(part: str) -> list[str]:
    found = _LATIN_BREAK.match(part)
    if not found:
        return [part]
    return [part[: found.end()].strip(), part[found.end() :].strip()]


def _run_on(part: str) -> list[str]:
    """`part` split before a question run on without a comma, when one is there.

    At most three candidate breaks in the first MAX_SENTENCE_CHARS are tried, so the cost
    stays bounded whatever the text.
    """
    breaks = list(islice(_RUN_ON.finditer(part[:MAX_SENTENCE_CHARS]), 3))
    if not breaks or asks(part):
        return [part]
    for found in breaks:
        left, right = part[: found.start()].strip(), part[found.end() :].strip()
        words = left.lower().split()
        if len(words) < 2 or words[-1] in _KNOWS or words[0] in _WH_WORDS:
            continue
        if _STANDING_REQUEST.search(left):
            # A rule in a task's form ("from now on always give me metric units") is one
            # clause; "always" in the question that follows is what is asked about.
            return [part]
        if asks(right) and not asks(left):
            return [left, right]
    return [part]


def asking(pieces: list[str]) -> list[bool]:
    """Which clauses of a sentence ask.

    Each is judged on its own, and a subject-less clause after one that asks carries on its
    question ("how come my tests pass locally, but fail in CI").
    """
    judged: dict[str, bool] = {}
    for c in pieces:
        if c not in judged:
            judged[c] = asks(c)
    flags = [judged[c] for c in pieces]
    marked = pieces[-1].rstrip(" \"'”’)").endswith(("?", "？"))
    for i in range(1, len(pieces)):
        if not marked and _PREDICATE_ON.match(lex_normalise(pieces[i])):
            # "Our chef, Marco, is also my cousin.": the verb goes on from its subject.
            flags[i] = False
        if _TAG_ONLY.match(lex_normalise(pieces[i])):
            # "The last season was the best, isn't it?", "…，对吧": the tag asks about what it
            # follows.
            flags[i] = flags[i - 1] = True
    for i in range(1, len(pieces)):
        if not marked and not flags[i - 1] and _RELATIVE.match(lex_normalise(pieces[i])):
            # "I moved to Leeds, which is near York": a relative clause after a statement.
            flags[i] = False
    for i in range(1, len(pieces)):
        if len(pieces[i].strip()) < 3:
            # "Rule 26(a)(1)": a letter or a number cut off by brackets goes with its clause.
            flags[i] = flags[i - 1]
        elif flags[i - 1] and not flags[i]:
            low = lex_normalise(pieces[i])
            # "给我写个做法，不要太复杂": how to do the task just asked goes with it.
            for_it = _FOR_THIS_ANSWER.match(low) and not _STANDING_REQUEST.search(low)
            flags[i] = bool(for_it) or not (lex.SUBJECT_START.match(low) or _ZH_SUBJECT.match(low))
    return flags


# A relative clause, not a question: "which means…", "which really helps", "who's eight",
# "where I grew up". "which app would you recommend" and "where should I go" still ask.
_RELATIVE = re.compile(
    r"^(?:which|who)(?:'s\b|\s+(?:(?:really|also|often|always|usually|then|now|just|still"
    r"|probably|basically|sometimes|never)\s+)?(?!(?:does|is|was|has|makes? sense)\b)\w+(?:s|ed)\b)"
    r"|^(?:where|when)\s+(?:i|we|he|she|they|my|our)\s+(?!" + _AUX + r"\b|am\b|have\b)\w+",
    _F,
)
_PREDICATE_ON = re.compile(
    r"^(?:is|are|was|were)\s(?!(?:it|there|this|that|he|she|they|we|you|i|your|my|the|a|an)\b)"
)
# A sentence that is all quotation: the material of a task asked before it.
_QUOTED = re.compile(r"^\s*[\"'“‘「『](?s:.*)[\"'”’」』]\s*[.!?。！？]*\s*$")
# The label of a structured message's question ("Question: …", "问题：…", "P.S. …"). A
# "Context:" label stays with what it labels: what it sets up is the scene check's to judge.
_LABEL = re.compile(
    r"^\s*(?:(?:my\s+)?(?:question|q)\s*[:：]|p\.\s?s\.?(?!\w)[:：]?|(?:问题|提问)\s*[:：])\s*",
    _F,
)
_IN_QUOTES = re.compile(r"[\"“「『][^\"”」』]*(?:[\"”」』]|$)")
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,2}[.)、])\s")


def _own_line(sentence: str) -> bool:
    """A line that speaks of the user ("I", "my", "我"), outside what it quotes."""
    # A quote runs to its closer or, split across sentences, to the end of this one.
    own = _IN_QUOTES.sub("", sentence[:MAX_SENTENCE_CHARS])
    return bool(lex.FIRST_PERSON.search(lex_normalise(own)) or zh.FIRST_PERSON.search(own))


# A markdown header ("## Task") names a part of the message; it tells nothing itself.
_HEADER = re.compile(r"^#{1,6}\s")
# The colon that opens a task's material (not "3:15", not a "[REDACTED:email]" placeholder).
PAYLOAD = re.compile(r"：|:(?=\s|$)")
_TAG_ONLY = re.compile(
    r"^(?:isn't it|aren't they|don't you think|wasn't it|right|correct|no|yeah|对吧|是吧|对不对"
    r"|是不是|没错吧)\W*$"
)
_ZH_SUBJECT = re.compile(
    r"^[我你他她它咱这那]|^(?!还是|或者|要么)[\u4e00-\u9fff]{1,4}(?:是|在|有|要|会)"
)


# An instruction for the answer just asked for: "Use an example with dolls", "不用太长".
_FOR_THIS_ANSWER = re.compile(
    r"^(?:please |pls |and |also |but )?(?:don't|do not|just|use|keep it|make it|make sure"
    r"|include|avoid|no need to|only|focus on|add|skip|leave out|mention|start with|end with"
    r"|feel free|try to|under \d+|no more than|at most|max \d+|short|brief|plain|simple"
    r"|(?:one|two|three|four|five|\d+) (?:sentences?|lines?|paragraphs?|words?|bullets?)"
    r"|no explanation)\b|^[a-z]+ only\W*$|^(?:不用|不要|别|只要|记得|尽量|最好|重点|顺便)",
    _F,
)
# The conversation itself: "as you know", "we went through", "上周我们聊过", "问你…的时候".
_ABOUT_CHAT = re.compile(
    r"\b(?:as you know|you know from|as (?:i|we) (?:said|mentioned)|we (?:talked|chatted|spoke"
    r"|went through|discussed|covered|went over)|i (?:told|asked|mentioned to|showed) you"
    r"|you (?:told|said|suggested|mentioned|asked|recommended))\b"
    r"|(?:我们|咱们)?(?:聊过|聊到过|说过|讨论过|聊的)|问你|跟你说|和你说|你说过|你提到|你推荐"
    r"|(?:一直|早就|好久|老早)(?:都|就)?想问"
    r"|\bi(?:'ll| will|'m going to|'m gonna) (?:paste|send|share|upload|attach|post)\b"
    r"|(?:待会儿?|等下|一会儿?|等会儿?)(?:再)?(?:贴|发|传)",
    _F,
)
_GREETING = re.compile(r"^(?:hey|hi|hello|嗨|你好|您好)\b[\s,，!！]*", _F)
# A place or time named only by the question: "I'll be there", "那时候".
_REFERS_BACK = re.compile(
    # "There are forty of them" says nothing is there: the existential "there" is no place.
    r"\b(?:there(?!\s*(?:is|are|was|were|'s|'re|will be|might be|may be|seems?|used to)\b)|then"
    r"|that day|that week|that place)\b|那里|那儿|那边|那时",
    _F,
)


def _told_before_task(sentence: str) -> str:
    """The clauses that tell before a sentence's first asking one, if they say enough."""
    pieces = clauses(sentence)
    flags = asking(pieces)
    first = flags.index(True) if True in flags else len(pieces)
    kept = [c.strip(" ,，;；") for c in pieces[:first]]
    # "TL;DR this:" leaves "TL": a fragment of the request, not something told.
    if not kept or any(len(c) < 4 for c in kept):
        return ""
    start = sentence.find(kept[0])
    end = sentence.find(kept[-1], max(start, 0)) + len(kept[-1])
    return sentence[start:end] if 0 <= start < end else kept[0]


# The gate reads a turn's told part several times (its decision, its kept text, the scene
# check): computed once per text.
@lru_cache(maxsize=64)
def told(text: str) -> str:
    """`text` without the sentences and clauses that ask: the part of a mixed turn that tells.

    "I'm allergic to peanuts, what snacks are safe?" → "I'm allergic to peanuts". Returns ""
    when every sentence asks or requests something. The kept part is cut from `text` itself:
    it never holds a word the user did not write.
    """
    parts: list[str] = []
    removed = asked = material = fenced = False
    for sentence in split_candidates(text):
        sentence = _LABEL.sub("", sentence)
        if not sentence:
            # "P.S." on its own: the label of what follows.
            continue
        fence = sentence.strip()
        if fence.startswith("```"):
            # A fenced block is pasted material, whatever it says; "```sql" opens one, "```"
            # closes it, and a fence that opens and closes on its line changes nothing.
            if not (len(fence) > 6 and fence.endswith("```")):
                fenced = not fenced
            removed = True
            continue
        if fenced or _HEADER.match(sentence):
            continue
        if (material or (asked and _BULLET.match(sentence))) and not _own_line(sentence):
            # What follows "Translate this:", and the points listed under a task ("- mid
            # budget"), are its material; a line in the user's own voice ("- I'm vegan") tells.
            continue
        if (
            asked
            and _FOR_THIS_ANSWER.match(_head(sentence))
            and not _STANDING_REQUEST.search(sentence)
        ):
            # "Can you proofread this? Don't change the tone.": how to do the task just asked.
            removed = True
            continue
        if removed and _QUOTED.match(sentence):
            # "Can you summarise this abstract? 'We propose…'": the quoted material of a task.
            continue
        colon = PAYLOAD.search(sentence)
        if colon and asks(sentence[: colon.start()]):
            # "make this sound polite: rent goes up in May": the material a task is about says
            # nothing about the user; what is told before the task still does
            # ("儿子花生过敏，帮我看看这个配料有没有问题：…").
            removed = True
            before = _told_before_task(sentence[: colon.start()])
            if before:
                parts.append(before)
            # "Translate this:" closing its line: the lines after it are the material too.
            material = not sentence[colon.end() :].strip()
            continue
        pieces = clauses(sentence)
        flags = asking(pieces)
        questioned = sentence.rstrip(" \"'”’)~～").endswith(("?", "？")) or asks(sentence)
        polite = lex.POLITE_REQUEST.search(lex_normalise(pieces[-1]))
        if questioned and not any(flags) and not polite:
            # "My sister Ana, remember her?": a question mark with no asking clause asks with
            # the last one, as the rule gate reads it (`turn.clause_cues`).
            flags[-1] = True
        if not any(flags):
            if removed and _REFERS_BACK.search(lex_normalise(sentence)):
                # "Where should I stay in Kyoto? I'll be there in November": without its
                # question the fact loses its place; the turn is kept whole.
                return text.strip()
            parts.append(sentence)
            continue
        removed = True
        asked = all(flags)
        # "As you know from last week we went through the budget, what did we settle on?":
        # beside a question, what the chat itself covered only sets up the asking.
        kept = [
            c for c, f in zip(pieces, flags, strict=True) if not f and not _ABOUT_CHAT.search(c)
        ]
        if not kept:
            continue
        start, end = sentence.find(kept[0]), sentence.rfind(kept[-1]) + len(kept[-1])
        # "I'm on nights (10pm-6am), can you…": a bracket the kept part opened is closed.
        end += _closers(sentence, start, end)
        piece = sentence[start:end] if 0 <= start < end else kept[0]
        if any(asks(c) for c in clauses(piece)):
            piece = kept[0]  # the kept clauses were not contiguous: the first one alone
        piece = _TIE.sub("", _GREETING.sub("", piece)).strip(" ,，;；:：-–—")
        if piece:
            parts.append(piece)
    if not removed:
        return text.strip()
    # "Our kid starts school in September; what should we pack?": the ";" joined a question.
    return " ".join(parts).rstrip(";；").strip()


def _closers(sentence: str, start: int, end: int) -> int:
    """How many closing brackets right after `end` close what `sentence[start:end]` opened."""
    piece = sentence[start:end]
    missing = sum(map(piece.count, "(（[【")) - sum(map(piece.count, ")）]】"))
    found = 0
    while found < missing and end + found < len(sentence) and sentence[end + found] in ")）]】":
        found += 1
    return found


def introduction(text: str) -> bool:
    """True when a clause of `text` that does not ask gives the speaker's name."""
    sentences = split_candidates(told(text))
    # "Tom. Electrician. From Cork.": a name said alone, then what the speaker does.
    if (
        len(sentences) > 1
        and _NAME_ALONE.match(sentences[0])
        and _a_name(sentences[0][:-1])
        and sentences[0][:-1].lower() not in _NOT_ALONE
        and _ROLE_NEXT.match(sentences[1][:MAX_SENTENCE_CHARS])
    ):
        return True
    # Whole sentences too: "im jess, a nurse on nights" gives its name only before the comma.
    return any(introduces(c) for sentence in sentences for c in [sentence, *clauses(sentence)])


_NAME_ALONE = re.compile(r"^[A-Z][a-z]{1,15}\.$")
# Words said alone that are no name: "Update. New printer."
_NOT_ALONE = frozenset(
    "yes no nope yep yeah update note question again wow nice cool right true agreed exactly "
    "perfect morning evening night weekend anyway whatever wait".split()
)
# A trade, said first and alone: "Electrician.", "Journeyman electrician, IBEW Local 46"
# (not "Manager said no.").
_ROLE_NEXT = re.compile(
    r"^(?:[A-Za-z-]+\s+){0,2}?[A-Za-z-]*(?:er|or|ist|ian|ant|ent|nurse|chef|cook|student|medic"
    r"|officer|dev|engineer|tech|mechanic)\b(?=\s*(?:[,.;!]|$))",
)
