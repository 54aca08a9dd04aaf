"""Stopwords for the lexical index: English function words and question words, Chinese particles.

Question words ("what", "when", "how") are stopwords on purpose: every question has one and no
memory is about one, so they only add noise to BM25 (question *type* is handled in
`memory.recall.temporal`, where "when" matters).
"""

from __future__ import annotations

ENGLISH_STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does
doesn't doing don't down during each either else ever few for from further get gets got had
hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him
himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself just let's
like me might more most much must mustn't my myself no nor not now of off on once only or
other ought our ours ourselves out over own really same shall shan't she she'd she'll she's
should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those though through to too under
until up upon us very was wasn't we we'd we'll we're we've were weren't what what's when
when's where where's whether which while who who's whom whose why why's will with won't
would wouldn't yet you you'd you'll you're you've your yours yourself yourselves
s t d ll m re ve
""".split()
)

# Single CJK characters that carry grammar, not content: skipped as unigrams (bigrams that
# contain them are kept, so "上周" still matches).
CJK_STOP_CHARS = frozenset("的了是在我你他她它们吗呢吧啊和与及也就都要会很还这那有个把被对于从到给")

# Chinese question words, dropped for the reason English question words are stopwords: one is
# in nearly every Chinese question (and in the user's own past questions to the assistant), so
# "哪里" (where) matched an old question ("周末带孩子去哪里玩比较好？") above the memory that
# answers ("下个月要搬家到上海浦东"). A question word cuts its run of characters in two, as a
# space would: the bigrams across it ("叫什" in "叫什么名字") are no words and, found in no
# memory, would weigh as the rarest terms of the query.
CJK_QUESTION_WORDS = frozenset(
    "为什么 什么 哪里 哪儿 哪个 哪些 哪家 哪位 哪天 怎么 怎样 如何 多少 是否 谁 哪 什 怎".split()
)
CJK_QUESTION_LONGEST = max(len(w) for w in CJK_QUESTION_WORDS)
