"""Word lists for conflict detection: frame words, preference verbs, markers (en + zh).

Frame words carry the predicate ("i", "is", "用"); preference verbs collapse to PREF so "I like
X" and "I prefer X" share a frame; markers (correction, negation, addition) are recorded and
kept out of both frame and values.
"""

from __future__ import annotations

import re

PREF = frozenset(
    "prefer prefers preferred preference preferences like likes liked love loves loved enjoy "
    "enjoys hate hates dislike dislikes want wants rather favourite favorite fave favourites "
    "favorites fan please pls".split()
)
EXCLUSIVE = frozenset("prefer prefers preferred preference rather favourite favorite fave".split())
FRAME = frozenset(
    "i me my mine myself we us our you your it its they them this that these those there here "
    "am is are was were be been being 'm 's 're do does did have has had will would 'd 'll can "
    "could should must shall may might a an the to of in on at for with and or but than over as "
    "by from into so just really always usually much more better best most too very quite "
    "everywhere everything all any some what which who use using used go going set make give get "
    "keep work works stuff thing things lot lots way kind sort person one".split()
)
CORRECTION = re.compile(
    r"\b(?:actually|now|nowadays|these days|instead|anymore|any more|no longer|changed my mind"
    r"|switched(?!\s+(?:off|on)\b)|switching|changed|correction|rather than|not anymore"
    r"|from now on"
    r"|moved|postponed|rescheduled|delayed|pushed back|brought forward)\b"
    # 以后 after a clock time is "after" ("八点以后我不回消息"), no change.
    r"|其实|现在|如今|改成|改用|改喝|改吃|改为|改|换成|不再|已经不|(?<![点时号半])以后"
    r"|挪到|推迟|延期|提前到|调到",
    re.IGNORECASE,
)
NEGATION = re.compile(
    r"\b(?:don't|do not|doesn't|does not|didn't|never|no longer|not|stopped|quit|gave up"
    r"|can't stand|hate|dislike)\b|不再|不喜欢|不要|不吃|不喝|不用|戒了|讨厌|没有",
    re.IGNORECASE,
)
# "too" adds only at the end of its clause ("I like tea too"); before a word it is the
# intensifier ("the extensions are too good", "too far to cycle").
ADDITIVE = re.compile(
    r"\b(?:also|as well|another|add|plus|in addition|besides)\b"
    r"|\btoo\b(?!\s+(?!and\b|but\b|so\b|because\b)[a-z])|也|还|另外|加上|再加",
    re.IGNORECASE,
)
CLITICS = frozenset({"m", "s", "re", "ve", "d", "ll"})
# Correction, negation and additive words: recorded as markers, kept out of frame and values.
SKIP = frozenset(
    "actually now nowadays days instead anymore no not longer don't doesn't didn't never "
    "stopped quit mind changed switched switching correction also too well another plus "
    "besides add addition again still moved postponed rescheduled delayed".split()
)
LIST = re.compile(r"(?<!\d),|,(?!\d)|[，、;；]|\band\b|和|以及|及|\btags?\b", re.IGNORECASE)
# Longest first, so "更喜欢" is removed before "喜欢" and "我们" before "我". Scheduling verbs
# ("定在", "改到", "推迟到") are frame words: inside a run without spaces they would otherwise
# glue onto the event or the time ("周会定"), and two schedules of one event would share nothing.
ZH_FRAME = sorted(
    "再加上 还有 加上 也要 另外 再加 我们 我 你 他 她 更喜欢 最喜欢 比较喜欢 喜欢 偏好 习惯 爱 "
    "讨厌 想要 想 要 用 喝 吃 看 听 玩 穿 坐 住 在 现在 如今 其实 改成 改用 改为 换成 改 不再 已经 "
    "开始 还是 也 还 都 很 最 比较 更 了 的 是 请 一直 总是 平时 不 没 就 啊 吧 呢 吗 喔 哦 一下 "
    "东西 定在 定于 安排在 改到 改在 挪到 推迟到 延期到 提前到 调到".split(),
    key=len,
    reverse=True,
)
ZH_PREF = frozenset("更喜欢 最喜欢 比较喜欢 喜欢 偏好 习惯 爱 讨厌 想要".split())
ZH_MARKERS = frozenset(
    "再加上 还有 加上 也要 另外 再加 现在 如今 其实 改成 改用 改为 换成 改 不再 已经 开始 还是 "
    "也 还 了 的 吧 啊 呢 吗 改到 改在 挪到 推迟到 延期到 提前到 调到".split()
)
