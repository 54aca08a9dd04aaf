"""Explicit requests to remember, and conversation closings.

"Remember that my niece plays the oboe" is the user asking for a memory: the gate keeps it
unless it is unsafe (secrets, instruction-like text: the screen runs first and still decides).
"Thanks, that's all for today" closes a conversation and says nothing about the user, even
though it names a day. Both are recognised by anchored patterns without nested repetition, so
matching is linear in the text's length.
"""

from __future__ import annotations

import re

REMEMBER_REQUEST = re.compile(
    r"^\s*(?:(?:please|pls|kindly|hey|ok|okay|so)[\s,]+)?(?:(?:can|could|would|will) you[\s,]+)?"
    r"(?:please[\s,]+)?(?:remember|don't forget|do not forget|never forget|keep in mind"
    r"|make a note|take note|note down|save (?:this|that)|write (?:this|that) down|memori[sz]e)"
    r"(?:\s+(?:that|this|of it|it))?\s*[:,\-]?\s*"
    r"|^\s*(?:请|麻烦|帮我)?(?:你)?(?:记住|记一下|记下来|记下|别忘了|不要忘了|不要忘记|帮我记)[：:，,]?\s*",
    re.IGNORECASE,
)

_THANKS = r"(?:thanks|thank you|thx|cheers|many thanks|谢谢(?:你|您|啦)?|多谢|感谢)"
_CORE_EN = (
    r"that'?s (?:all|it|everything)(?: i needed)?|that will be all|that'?ll be all"
    r"|nothing else|no more questions|i'?m (?:all )?(?:done|good|set)"
    r"|we'?re (?:all )?(?:done|good|set)|(?:talk|speak|chat) (?:to you )?(?:later|soon|tomorrow)"
    r"|catch you later|see (?:you|ya)(?: later| soon| tomorrow| next time)?|bye(?:-bye)?"
    r"|good ?bye|good ?night|have a (?:good|great|nice) (?:one|day|night|evening|weekend)"
    r"|signing off|until next time"
)
_CORE_ZH = (
    r"今天就到这里|今天先这样|先这样|就这样|没有?(?:别的|其他)(?:问题|事)?|回头见|下次再聊|再见|拜拜"
    r"|晚安|明天见"
)
# [thanks,] [ok,] core [for now] [i needed] [, thanks] [punctuation]
CLOSING = re.compile(
    rf"^(?:{_THANKS}[\s,，!！。.]*)?(?:(?:ok(?:ay)?|alright|great|perfect|cool|好的|嗯)[\s,，]*)?"
    rf"(?:{_CORE_EN}|{_CORE_ZH})(?: for (?:now|today|tonight|this week))?(?: i needed)?"
    rf"(?:吧|了|啦)*(?:[\s,，]*{_THANKS})?[\s.!~。！]*$",
    re.IGNORECASE,
)


def asks_to_remember(text: str) -> bool:
    """True when the text opens with a request to remember something."""
    return bool(REMEMBER_REQUEST.match(text))


def without_request(text: str) -> str:
    """The text after its "remember that ..." opening (the text itself when there is none)."""
    match = REMEMBER_REQUEST.match(text)
    return text[match.end() :] if match else text


def is_closing(clause: str) -> bool:
    """True for a sign-off such as "that's all for today", "talk to you later", "先这样吧"."""
    return bool(CLOSING.match(clause.strip().lower()))
