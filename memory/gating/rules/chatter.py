"""Chit-chat at clause level: reactions, compliments, thanks, agreement, non-answers, platitudes.

A clause is social when it is small talk, a reaction to the other speaker, advice or support
for them, a non-answer ("not sure yet"), or when what is left after removing its evaluative
words ("great", "so much fun", "太棒了") is too thin to say anything. A clause that names a
thing, a place, a time or a number informs, even when it opens like a reaction: "It's a map of
Middle-earth". Sign-offs and wishes ("Have a great weekend!") stay social whatever they name.
"""

from __future__ import annotations

import re
from typing import Literal

from memory.gating.rules import lexicon_en as lex
from memory.gating.rules import lexicon_zh as zh
from memory.gating.rules.explicit import is_closing
from memory.gating.rules.signals import content_words, normalise
from memory.gating.rules.specifics import specifics, times, without_vocatives

EVALUATIVE = re.compile(
    r"\b(?:great|awesome|amazing|cool|nice|fun|lovely|beautiful|wonderful|fantastic|incredible"
    r"|inspir\w*|proud|happy|glad|excit\w*|rewarding|important|key|tough|hard|rough|special"
    r"|stunning|gorgeous|cute|adorable|sweet|impressive|best|blast|fulfilling|meaningful"
    r"|motivat\w*|support\w*|passion\w*|joy|peace\w*|positive|strength|thanks?|appreciate\w*"
    r"|totally|definitely|absolutely|super|crazy|wild|helpful|interesting|brave|talented|healing"
    r"|powerful|true|truly|sure|lot|lots|good|bad|worth|sorry|wow|exactly|agree\w*|stoked"
    r"|thrilled|perfect|wise|kind|beautifully|honou?r|grateful|blessed|lucky|bummer|shame|sad"
    r"|hope|wish|luck|congrat\w*|yay|feel|feels|felt|feeling|thing|things|stuff|way|guess|think"
    r"|bet|mean|means|meant|sounds?|looks?|seems?|must|makes?|keep|keeps|gotta|always|hear"
    r"|heard|see|know|knew|love|loved|like|enjoy\w*)\b"
    r"|太棒|真棒|厉害|好看|漂亮|开心|高兴|感动|重要|不错|有意思|好玩|羡慕|佩服|加油|辛苦|真好|挺好|好的"
    r"|谢谢|感谢|支持|觉得|其实|真的|非常|特别|一直|确实",
    re.IGNORECASE,
)
NON_ANSWER = re.compile(
    r"^(?:not (?:sure|yet|really|much)|no idea|who knows|long story|maybe|nothing (?:much|really)"
    r"|same (?:here|old)|you too|you know|not bad|can't complain|all good|so far so good"
    r"|hard to say|good question|i don't know|dunno|haha\w*|lol)\b"
    r"|^(?:不知道|不好说|还没|没什么|就那样|一般般|还行|说来话长)",
    re.IGNORECASE,
)
ZH_CHATTER = re.compile(
    r"^(?:谢谢|多谢|感谢|哈哈|嘿嘿|呵呵)|我也(?:这么|是这么|一样)?(?:觉得|认为|想)|同感|注意(?:休息|身体|安全)"
    r"|别太(?:累|辛苦|担心)|有空(?:一起|再)|改天(?:一起|再)|回头(?:聊|见)"
)
_DISCOURSE = re.compile(
    r"^(?:by the way|btw|anyway|also|plus|and|so|well|oh|actually|honestly|对了|另外|顺便说一下)"
    r"[\s.!,。！]*$"
)
# Forms that commit to something together or ahead: "let's …", "can't wait to/for …", "how
# about Wednesday", "our hike next month". A wish ("have a great weekend") is not a plan.
_PLANNED = re.compile(
    r"\b(?:let's|let us|can't wait|cannot wait|looking forward|how about|shall we|we'll|we will"
    r"|i'll|see you|meet (?:up|you)|our|we're|we are)\b"
    r"|我们|咱们|一起|约"
)
_WISH = re.compile(
    r"^(?:have|enjoy|happy|good luck|best of luck|hope|wish|take care)\b|祝|希望你|玩得开心"
)
_ROLE = re.compile(r"\b(?:i'm|i am|we're|we are) (?:now |finally )?(?:an?|the) \w+")
# An exclamation headed by praise, with no subject or verb ("Cute little guys!").
_EXCLAIMED = re.compile(
    r"^(?:oh |aw+ |wow |ooh )?(?:so |such |what |how )?(?:a |an )?(?:cute|nice|great|lovely"
    r"|beautiful|gorgeous|awesome|amazing|cool|sweet|adorable|stunning|fantastic|wonderful|good"
    r"|neat|fun|impressive|incredible|pretty|perfect)\b[^.?]*!\s*$"
)
_ABOUT_IT = re.compile(r"^(?:it|this|that|these|those)(?:'s| is| was| are| were)\b")


def clause_kind(clause: str) -> Literal["social", "thin", "content"]:
    """What a clause does: social (small talk, reactions, support), thin (says little), content.

    "It's about a lighthouse keeper who raises a seal" is content though it opens like a
    reaction; "That's so cool!", "You're so talented" and "Have a great weekend!" are social;
    "not npm" (a fragment after a comma) is thin.
    """
    low = normalise(without_vocatives(clause))
    if _DISCOURSE.match(low):
        return "thin"
    if not low or lex.NOISE_WORDS.match(low) or zh.NOISE_WORDS.match(low) or is_closing(low):
        return "social"
    if NON_ANSWER.search(low) or ZH_CHATTER.search(low) or lex.ADVICE.search(low):
        return "social"
    if lex.MOOD.match(low) or zh.MOOD.match(low) or lex.ACTING_UP.match(low):
        return "social"
    if lex.CHAT_REMARK.search(low) or zh.CHAT_REMARK.search(low):
        # "Sorry, I think I sent that twice": about this chat, not the speaker's life.
        return "social"
    if _EXCLAIMED.match(low) and not lex.PREDICATE.search(low) and not specifics(clause):
        # "Cute little guys!", "Nice set-up!": a verbless exclamation is a reaction.
        return "social"
    substance = content_words(EVALUATIVE.sub(" ", low))
    if _PLANNED.search(low) and times(clause) and not _WISH.search(low):
        # "Can't wait to paint with you next Saturday": eagerness around a dated plan is a
        # plan, the kind of thing a later "when are we…?" asks about.
        return "content"
    if lex.REACTION.search(low) or zh.REACTION.search(low):
        about_it = _ABOUT_IT.match(low) and (substance >= 3 or specifics(clause))
        told = substance >= 2 and _disclosed(low)
        return "content" if about_it or told else "social"
    if specifics(clause) or substance >= 2:
        return "content"
    return "social" if content_words(low) > substance else "thin"


def _disclosed(low: str) -> bool:
    """A reaction that carries news of the speaker: "…now that I'm an assistant manager"."""
    return bool(lex.I_PAST.search(low) or lex.PLAN.search(low) or _ROLE.search(low))
