"""The rule gate's English lexicon. Text is matched lower-cased with straight quotes.

Each pattern is a general grammatical cue (a verb of preference, a modal of obligation, a
first-person event), not a topic word list: the gate must judge conversations it never saw.
The signals of a turn (persistence, questions, chatter, injection) come first, then the cues of
the five memory-worthy categories (preference, constraint, decision, failure lesson, fact).
"""

from __future__ import annotations

import re

_F = re.IGNORECASE


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(parts), _F)


# Chat drops apostrophes ("im lena", "whats a good gift", "dont"): the cues are written with
# them. Only forms that are not also words are restored ("its", "ill", "were", "id" stay).
_BARE_FORMS = {
    "im": "i'm",
    "ive": "i've",
    "dont": "don't",
    "doesnt": "doesn't",
    "didnt": "didn't",
    "cant": "can't",
    "isnt": "isn't",
    "arent": "aren't",
    "wasnt": "wasn't",
    "werent": "weren't",
    "couldnt": "couldn't",
    "wouldnt": "wouldn't",
    "shouldnt": "shouldn't",
    "havent": "haven't",
    "hasnt": "hasn't",
    "whats": "what's",
    "wheres": "where's",
    "whos": "who's",
    "hows": "how's",
    "thats": "that's",
    "theres": "there's",
    "youre": "you're",
    "theyre": "they're",
    "youve": "you've",
    "weve": "we've",
    "u": "you",
    "ur": "your",
}
# "were renting a van" opening a clause: a past progressive without its subject is
# rare, "we're" without its apostrophe is not.
_WERE = re.compile(r"(?:^|(?<=[,.;!?] ))were(?= (?:\w+ing|gonna)\b)")
_BARE = re.compile(r"\b(?:" + "|".join(_BARE_FORMS) + r")\b(?![.'-]\w)")  # not "U.S."


def normalise(text: str) -> str:
    """Lower-case with straight quotes and chat's dropped apostrophes restored (the cues' form)."""
    low = text.replace("’", "'").replace("‘", "'").replace("`", "'").strip().lower()
    return _WERE.sub("we're", _BARE.sub(lambda m: _BARE_FORMS[m.group(0)], low))


_NUM = r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|fifty|hundred)"
DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
MONTHS = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
)
PERSIST = _rx(
    r"\b(?:always|from now on|going forward|from here on|in (?:the )?future|by default"
    r"|every time|each time|whenever|every (?:day|week|month|morning|evening|night|weekday"
    r"|weeknight|weekend|other (?:day|week|weekend)|"
    + DAYS[:-3]
    + r"\w*)|each (?:day|week|month))\b"
)
STANDING = _rx(
    r"\b(?:from now on|going forward|from here on|by default|in (?:the )?future|every time"
    r"|each time|whenever (?:i|we|you (?:book|write|send|reply|answer|schedule|make|create"
    r"|generate|draft|plan|order|buy|pay)))\b"
)
# "Always" after a subject describes ("Dogs always cheer us up", "Board games are always a
# blast"); an instruction puts it first ("Always cc Dana") or after its verb phrase, last.
GENERIC_ALWAYS = _rx(
    r"^(?!(?:please|can|could|would|will|just|and|so|also|then)\b)(?:[\w'-]+\s+){1,6}"
    r"always\b(?=\s+\w)"
)
SUBJECT_START = _rx(
    r"^(?:i|i'm|i've|i'd|i'll|we|we're|they|they're|he|he's|she|she's|it|it's|you|you're|that"
    r"|that's|this|there|there's|these|those|my|our|your|his|her|their|its|the|a|an|what|so"
    r"|and|but|yeah|yes|oh|wow)\b"
)
I_PAST = _rx(
    r"\b(?:i|we)\s+(?:\w+\s+){0,2}?(?!(?:felt|thought|wondered|guessed|hoped|meant|wished"
    r"|figured|noticed|agreed|appreciated|needed|used|mentioned|asked|said|supposed|loved it)\b)"
    r"(?:\w{3,}ed|went|got|had|made|took|saw|found|gave|came|ran|won|lost|bought|brought|caught"
    r"|taught|met|left|kept|sold|told|wrote|read|built|began|drove|flew|grew|heard|held|spent"
    r"|sent|swam|wore|became|broke|chose|fell|rode|sang|spoke|woke|paid|did|fed|dug|hung|led"
    r"|lit|quit|set up|shot|slept|struck|threw|won|whipped)\b",
    # The present perfect: "I've started eating healthier", "we've just moved".
    r"\b(?:i|we)(?:'ve| have)\s+(?:just\s+|recently\s+|finally\s+|also\s+|already\s+)?"
    r"(?!(?:felt|thought|wondered|guessed|hoped|meant|wished|noticed|heard|always|never|been"
    r"|got to|to)\b)(?:\w{3,}ed|got|made|taken|took|seen|found|given|won|lost|bought|met|left"
    r"|sold|written|read|built|begun|grown|spent|sent|become|broken|chosen|paid|done|quit)\b",
    r"\b(?:i'm|i am|we're|we are)\s+(?:\w+\s+)?(?:planning|going to|heading|flying|moving"
    r"|starting|getting|about to|hoping to|working on|learning|taking|thinking of|signed)\b",
)
PLAN = _rx(
    r"\b(?:i|we)(?:'ll| will|'m going to|'m gonna| am going to|'re going to|'re gonna| are going to"
    r"|'m planning to|'re planning to|'d like to|'m hoping to|'re hoping to)\s+(?:\w+ly\s+)?"
    r"(?!be\b|see\b|check\b|try\b|think\b|let\b|keep\b|have to\b|do (?:that|it|this)\b|talk\b"
    r"|get back\b|take (?:your|that|it)\b|look into\b|give it\b|tell\b|say\b|make sure\b)\w{3,}",
    r"^(?:and |so |also |then )?(?:gonna|gotta|going to|planning to|hoping to|about to)\s+\w{3,}",
    r"\b(?:i'm|i am|we're|we are) (?:off to|heading (?:to|out|off|over|home|back))\b",
    # An ongoing activity: "I'm now mentoring the younger players", not "I'm loving it".
    r"\b(?:i'm|i am|we're|we are)\s+(?:now |currently |still |also )?(?!feel|lov|lik|do|think|hop"
    r"|wonder|try|go|get|look|glad|happy|excit|trying|struggl|hav|enjoy|kidd|jok|thrill)\w{3,}ing\b",
)
# Narration with the subject dropped: "Sold my old bike and bought a kayak", "Just got back".
NARRATED = _rx(
    r"^(?:just |finally |recently |also |then |and |so |oh,? )?(?:\w{3,}ed|went|got|made|took|saw"
    r"|found|gave|came|ran|won|lost|bought|sold|brought|caught|taught|met|left|kept|wrote|read"
    r"|built|began|drove|flew|grew|spent|sent|became|broke|chose|paid|did|quit|set up|had)\b"
    r"(?! (?:it|that|this|you)\b)",
)
# Announcing news: what follows is self-disclosure ("Guess what? ...", "Big news: ...").
NEWS = _rx(
    r"\b(?:guess what|(?:big|great|good|amazing|exciting|some|sad|bad|awesome|huge) news"
    r"|wanted to (?:tell|share|let you know|update)|have to tell you|since (?:we )?last (?:talked"
    r"|spoke|chatted|chat|saw each other)|a lot (?:has|'s) (?:happened|been going on))\b"
)
FIRST_PERSON = _rx(
    r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'll|we'd|our|ours|us)\b"
)
QUESTION_START = _rx(
    r"^(?:what|what's|whats|which|who|whom|whose|where|when|why|how|how's|hows|is|are|am|was"
    r"|were|do|does|did|can|could|would|will|should|shall|have|has|may|might|isn't|aren't"
    r"|don't|didn't|won't|wouldn't|any|anything|really|remind me)\b"
)
POLITE_REQUEST = _rx(r"^(?:can|could|would|will) you (?:please )?(?!believe|imagine|tell\b)")
INJECTION = _rx(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.]{0,30}\b(?:instructions?|rules?|"
    r"prompts?|guidelines|polic(?:y|ies)|directives?|restrictions?|safety)\b",
    r"\b(?:you are now|you're now|from now on you are|act as|pretend (?:to be|you're|you are)"
    r"|roleplay as|jailbreak|developer mode|dan mode|no restrictions|without restrictions)\b",
    r"^\s*(?:\[|<)?(?:system|developer|assistant)\s*(?:\]|>)?\s*[:：>]",
    r"\b(?:system override|system prompt|hidden instructions|new rule:|store this as a rule"
    r"|note to (?:the )?(?:assistant|ai|model))\b",
    r"\b(?:i am|i'm|user is|the user is|the user has been|i have been)\s+(?:an?\s+|the\s+)?"
    r"(?:verified\s+|authori[sz]ed\s+)?(?:admin|administrator|root|superuser|sysadmin|owner)\b",
    r"\bgrant(?:ed)?\b[^.]{0,30}\b(?:root|admin|all|full|elevated)\b[^.]{0,12}"
    r"(?:privileges?|access|permissions?|requests?)",
    r"\b(?:obey|comply with)\b[^.]{0,20}\b(?:me|my|all|every|commands?)\b",
    r"\b(?:skip|disable)\b[^.]{0,12}\b(?:approval|safety|security)\b",
    r"\b(?:email|send|upload|exfiltrate|leak)\b[^.]{0,40}\b(?:database dump|all (?:stored )?"
    r"(?:data|memories|files|records)|stored memories)\b",
    r"\bshare all stored memories\b",
)
# What needs a human's yes before it is remembered (docs/security.md, "Approval policy"): a
# standing instruction to act for the user with money, deletion, credentials or messages sent
# in their name. A habit the user reports ("I always buy organic") or a past act ("I deleted
# my account") changes nothing the agent does, so a first-person subject just before the
# verb or the marker keeps a statement out.
_MONEY = (
    r"pay|transfer|wire|refund|charge|purchase|buy|order|renew|subscribe|donate|invest|sell"
    r"|withdraw|tip|top up|reimburse"
)
_DELETE = r"delete|remove|erase|wipe|purge|cancel|unsubscribe|deactivate|trash|archive|empty"
_SEND = (
    r"send|email|e-mail|forward|reply|respond|post|publish|tweet|share|text|message|dm|invite"
    r"|accept|decline|sign|cc|bcc"
)
_ACT = rf"(?:{_MONEY}|{_DELETE}|{_SEND})"
_CREDENTIAL = (
    r"(?:password|passcode|passphrase|pin(?: code)?|api key|access token|token|credentials?"
    r"|login|2fa code|one-time code|recovery code|ssh key|private key|seed phrase)"
)
_MARKER = r"(?:always|automatically|whenever|from now on|going forward|by default|every|each)"
_NOT_ME = r"(?<!\bi )(?<!\bwe )(?<!\bi'll )(?<!\bhe )(?<!\bshe )(?<!\bthey )"
APPROVAL = _rx(
    r"\bauto[- ]?(?:approve|approval|pay|renew|merge|deploy|refund|reply|send|publish)\w*\b",
    r"\b(?:approve|pay|refund|transfer|wire|charge|purchase|buy|renew)\w*\b[^.]{0,40}"
    r"\b(?:automatically|without asking|always|every)\b",
    r"\b(?:send|email|forward|cc|bcc|share|post|publish|report)\w*\b[^.]{0,40}"
    r"(?:\[redacted:email\]|\bto (?:the |my )?\w+ team\b|@)",
    r"\b(?:always|every \w+)\b[^.]{0,20}\b(?:cc|bcc|send|email|forward)\b",
    r"\b(?:without (?:asking|approval|confirmation|review|checking)|no need to ask)\b",
    r"\b(?:add|make|grant|give|remove|revoke)\b[^.]{0,30}\b(?:admin|owner|access|permissions?"
    r"|role|billing)\b",
    r"\bdeploy\w*\b[^.]{0,20}\b(?:prod|production)\b",
    # A standing marker, then the act: "Always pay my rent from account X".
    rf"{_NOT_ME}\b{_MARKER}\b(?: \w+){{0,3}}? (?:please )?{_ACT}\b",
    # The act, then the marker: "Delete newsletters automatically", "Forward ... every Monday".
    rf"(?:^|[.!;] ){_NOT_ME}(?:please |just |go ahead and )?{_ACT}\b[^.]{{0,60}}"
    rf"\b(?:{_MARKER}|without asking|on my behalf)\b",
    # In the user's name, whatever the tense of the rest.
    r"\b(?:on my behalf|in my name|as me|for me without)\b",
    # Credentials handed over for use: "Use my work login for the VPN".
    rf"\b(?:use|share|give|send|enter|type|store|save|remember)\b[^.]{{0,30}}\b{_CREDENTIAL}\b",
    # An imperative to act at the start of a sentence: "Delete all emails from my boss".
    rf"(?:^|[.!;] )(?:please |just |go ahead and |you (?:can|may|should) |feel free to )?"
    rf"(?:{_MONEY}|{_DELETE}|forward|reply|post|publish|tweet|sign|cc|bcc) (?!me\b|us\b)\w",
)


def token_run(alternation: str, separators: str) -> re.Pattern[str]:
    """A whole text made only of the tokens of `alternation` with `separators` between them.

    Each token is taken once, the longest that fits first, and never given back. Written as a
    plain repetition ("(?:ok|k|kk)+"), "kkkk…x" tries every way of splitting the run of k's
    before it fails, exponential in its length; longest first keeps "okay" from stopping at "ok".
    """
    tokens, depth, start = [], 0, 0
    i = 0
    while i < len(alternation):  # split at the top-level "|" (groups and classes stay whole)
        char = alternation[i]
        if char == "\\":
            i += 1
        elif char == "[":
            i = alternation.index("]", i + 1)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            tokens.append(alternation[start:i])
            start = i + 1
        i += 1
    tokens.append(alternation[start:])
    ordered = sorted(tokens, key=len, reverse=True)
    return re.compile(r"^(?:(?:" + "|".join(ordered) + ")" + separators + r"*+)++$", _F)


NOISE_WORDS = token_run(
    r"hi|hello|hey|hiya|yo|howdy|greetings|good (?:morning|afternoon|evening|night|luck"
    r"|job|question|point|idea|one)|thanks?|thank you|thx|ty|cheers|ok|okay|k|kk|sure|yes|yeah"
    r"|yep|yup|yea|no|nope|nah|cool|nice|great|awesome|amazing|wow|whoa|lol|lmao|haha\w*|hehe"
    r"|hmm+|um+|uh+|oh|ah|aw+|oops|yay|woo+hoo+|omg|got it|gotcha|i see|makes sense|sounds"
    r" (?:good|great|fun|fine|perfect|awesome)|fair enough|no worries|no problem|bye|goodbye"
    r"|bye for now|see you|see ya|later|congrats|congratulations|interesting|right|true"
    r"|exactly|indeed|of course|definitely|totally|absolutely|nice one|my bad|sorry|please"
    r"|continue|go on|next|done|perfect|agreed|same|me too|wonderful|fantastic|brilliant"
    r"|excellent|neat|sweet|so|very|really|a lot|so much|very much|too|again|all|it|that|this"
    r"|for now|buddy|dude|man|mate|friend|guys|everyone|there|happy birthday|well done"
    r"|ttyl|talk (?:to you )?(?:soon|later)|(?:catch|see) you (?:soon|later|around|then|tomorrow)"
    r"|(?:speak|chat) (?:soon|later)|gotta go|have to go|i have to go|got to go|good|fine"
    r"|not bad|pretty good|doing (?:well|good|great|fine)|all good"
    r"|take care|long time no see|how are you|how's it going|what's up|you too|will do"
    r"|of course|for sure|anytime|you're welcome|welcome|hugs|love it|love that",
    r"[\s,!.?~…:;)(*-]",
)
# A remark on the chat itself: "sorry, I pasted the wrong thing", "ignore that".
_CHAT_REMARK = (
    r"\b(?:pasted|sent|typed|attached|uploaded|copied|clicked) (?:the |a )?wrong\b"
    r"|\b(?:sent|posted|pasted|typed) (?:that|this|it) twice\b"
    r"|^(?:please )?ignore (?:that|my last|the last|the previous|what i|my tone)\b|^my bad\b"
    r"|\b(?:excuse|ignore|pardon) my (?:tone|typos?|french|english)\b"
    # On the answer just given: "did not expect that answer", "cheaper than I expected".
    r"|\b(?:did ?n[o']t|didnt|wasn't|was not|never) expect(?:ing)? (?:that|this|your)\b"
    r"|\b(?:than|as) (?:i|we) (?:expected|thought|imagined|feared)\b"
    r"|\bthan (?:what|the one|the thing) (?:i|we) (?:had|wrote|did|made)\b"
    r"|\b(?:in|on) (?:my |the )?(?:previous|last|earlier) (?:message|msg|reply|question)\b"
)
CHAT_REMARK = _rx(_CHAT_REMARK)
REACTION = _rx(
    r"^(?:oh |wow |aw+ |haha |yeah |yes |well )?(?:that|this|it|which|those|these)(?:'s| is| was|"
    r" sounds| looks| seems| must be| must have been| feels)\b"
    r"(?! (?:my|our|me|us|what i|what we)\b)",
    r"^(?:sounds|looks|seems|must be|what a|such a|how (?:cool|nice|fun|awesome|sweet|lovely))\b",
    r"^(?:aw+,? )?(?:they|he|she) (?:look|looks|sound|sounds|seem|seems)(?: like| so| really)?\b",
    r"^(?:you|you're|you've|you'll|you are|your)\b",
    r"^(?:good luck|best of luck|happy|have (?:a|an|fun)|hope (?:you|it|that|your)|take care"
    r"|keep (?:it up|going|up|at it|on)|well done|way to go|go for it|congrat\w*|thanks for"
    r"|thank you for|glad|sorry to|sorry about|so sorry|can't wait|cannot wait|let's get)\b",
    r"\b(?:happy|glad|proud|sorry|excited|thrilled|stoked|pumped)\s+(?:for you|to hear|that you"
    r"|about your|of you|you're|you)\b",
    r"^i\s+(?:totally\s+|completely\s+|really\s+|just\s+|definitely\s+)?(?:agree|know|"
    # "I see my therapist on Tuesdays" sees someone; "I see" alone understands.
    r"see(?!\s+(?:my|our|a|an|him|her|them)\b)|"
    r"understand|guess|bet|mean|meant|hope you|wish you|can't wait|cannot wait|can't believe|"
    r"couldn't agree|appreciate|love (?:that|this|it|your|how|the idea|hearing|seeing|those|"
    r"these)|like (?:that|this|your|how)|admire|totally get|get it|feel you|hear you)\b",
    r"\b(?:let me|i'll (?:definitely |surely |)(?:check it out|give it a (?:try|go|shot)|try it"
    r"|think about it|keep (?:that|it|this) in mind|let you know|get back to you|look into it"
    r"|take (?:your|that) advice|do that|keep you posted))\b",
    r"^(?:i'm|i am)\s+(?:just\s+)?(?:curious|not sure|wondering|confused|kidding|joking"
    r"|(?:so |really |very |super )?(?:happy|glad|proud|sorry) (?:for|to|that|it|about you)"
    r"|(?:so |really |very |super )?(?:excited|thrilled|stoked) (?:for you|about your)"
    r"|here for you|with you|all ears|in)\b",
    r"^i don't (?:know|think so|mind)\b|^i was (?:just )?(?:wondering|kidding|joking)\b",
    # Word that an answer worked: "worked first try", "that did the trick".
    r"^(?:it |that |this )?(?:worked|works) (?:now|perfectly|great|like a charm|fine|a treat"
    r"|(?:on the )?first (?:try|time))\b|^(?:that|this|it) (?:fixed|did) (?:it|the trick)\b"
    r"|^problem solved\b",
    _CHAT_REMARK,
    # A remark on the asking itself: "…, i never remember", "i keep forgetting".
    r"^i (?:always |never |keep |can never |sometimes )?(?:forget(?:ting)?|remember"
    r"|mix(?:ing)? (?:it|them|those) up)[\s.!~…]*$",
)
# A passing state, said of today or right now ("im wiped out today", "ugh it's so humid",
# "thirsty rn"): nothing to remember weeks later. Anchored at both ends: the whole clause.
# A device or a connection acting up right now: "the wifi is being weird", "laptop's dying".
ACTING_UP = _rx(
    r"^(?:the |my |our )?(?:wifi|wi-fi|internet|connection|network|laptop|phone|computer|app"
    r"|browser|signal)(?:'s| is| keeps)\s+(?:being weird|acting up|down|slow|lagging|dying"
    r"|freezing|crashing|glitching|cutting out|dropping)\b"
)
MOOD = _rx(
    # Possessive quantifiers: the adjacent optional parts never trade characters on a miss.
    r"^(?:(?:ugh+|omg|oh my (?:goodness|god|gosh)|man|god|oh|welp|whew|phew|ah+|argh+|lol|so|and"
    r"|but|honestly|tbh|meh|wah"
    r"|aiyo|aiya)"
    r"[\s,!.]*+)*+"
    r"(?:(?:i'm feeling|i am feeling|it sure is|sure is|i'm|i am|i feel|feeling|feel|it's|it is"
    r"|getting|got"
    r"|(?:this|the) (?:week|day|morning"
    r"|shift)(?: is| has been)?|today(?: is| has been)?|work(?: is| has been)?)\s++)?+"
    r"(?:(?:so+|really|super|kinda|kind of|a little bit|little bit|a bit|bit|a little|pretty|very"
    r"|totally|absolutely"
    r"|way too|too)\s++)?+"
    r"(?:tired|exhausted|sleepy|knackered|wiped(?: out)?|drained|shattered|hungry|starving"
    r"|not feeling it|hangry|melting|bored out of my mind"
    r"|thirsty|bored|hot|cold|freezing|boiling|humid|stressed(?: out)?|sore|full|stuffed|lazy"
    r"|grumpy|cranky|hungover|burnt out|burned out|fried|sweaty|sunburnt|jet ?lagged"
    r"|cold out|hot out|pouring|raining|snowing|drizzling|sunny|windy|muggy|grey|gray|meh|blah"
    r"|chucking it down|bucketing down|tipping down"
    r"|off|down|low|rough|crappy|awful|long|dragg++in++g*+|slow"
    r"|overwhelmed|anxious|frazzled|swamped|slammed|run down|under the weather)"
    r"(?:\s++(?:today|tonight|rn|right now|atm|at the moment|this morning|this afternoon"
    r"|this evening|lol|haha\w*|tbh|af|ngl|already|here|outside|out there|again))*+"
    r"[\s!.~…]*+$",
)
ADVICE = _rx(
    r"\b(?:yourself|yourselves|(?:support|help|here for|there for|proud of|happy for|rooting for"
    r"|believe in|count on|thinking of|with|for) you(?:r (?:success|dreams?|goals?))?[\s!.]*$"
    r"|you(?:'ve| have)? got this|you can do (?:it|this)|you'll (?:get there|do great|nail it))\b",
)
ONE_OFF_IMPERATIVE = _rx(
    r"^(?:please\s+)?(?:write|translate|summari[sz]e|fix|make|try|tell|explain|give|show|find"
    r"|check|convert|list|draft|generate|create|help|rewrite|continue|repeat|say|compute"
    r"|calculate|look up|search|open|read|describe|compare|pretend|imagine|go|let's see)\b",
)
# A one-off task for the assistant that names a new thing to produce ("Write a short poem",
# "Show me an example with a dataclass", "Write me a cover letter"), unlike a style rule in the
# same imperative form ("Write docstrings in Google style"). A standing or every-time marker
# makes it a rule again ("Write a test for every new function").
ONE_OFF_TASK = _rx(
    r"^(?:please\s+)?(?:write|show|draft|make|give|generate|create|compose|build)(?:\s+(?:me|us))?"
    r"\s+(?:a|an|another|some|one|two|three|the following)\b(?!.*\b(?:every|each|all|any|always"
    r"|never|whenever|from now on|by default|in (?:the )?future)\b)",
)
# A reply that takes interest in what was just said: surprise, praise or sympathy up front, or a
# follow-up question ("Wow! Where did you take them?"). A helper's stock question ("What else
# can I help with?") is not interest.
REPLY_INTEREST = _rx(
    r"^\W*(?:wow|whoa|woah|omg|oh wow|no way|congrat\w*|how exciting|awesome|amazing"
    r"|that's (?:so )?(?:awesome|amazing|great|cool|exciting|impressive))\b",
    r"\bsorry (?:to hear|about)\b",
)
# A follow-up question in a reply: a sentence that ends in "?" with a question word that no
# offer of help follows ("What breed is she?", not "What can I help with?"). Read sentence by
# sentence (`turn.took_interest`): a pattern that scanned to the sentence's end from every
# question word was quadratic in a long sentence of them.
QUESTION_SENTENCE = re.compile(r"(?:^|(?<=[.!?]))[^.!?]*+\?")
WH_WORD = _rx(r"\b(?:what|where|when|how|which|who|why)\b")
OFFER_OF_HELP = _rx(r"\b(?:help|assist)\b")
# A subject or a finite verb: "Three times a week." needs its question to mean anything,
# "Two of them are Jack Russell mixes." does not.
PREDICATE = _rx(
    r"\b(?:i|we|he|she|they|it|this|that|there|my|our|his|her|their|is|are|was|were|am|be|been"
    r"|have|has|had|do|does|did|will|would|can|could|got|get|gets|went|go|goes|gotta|gonna|wanna"
    r"|\w+ed)\b|'s\b|'re\b"
    r"|^(?:\w+ly )?\w{3,}ing\b|[我你他她它]|是|有|了|过|在|[去来搬买卖做学跑吃喝看住上开拿考养生]"
)


# -- the five memory-worthy categories: grammatical cues, not topical ones --------------------

_ADV = (
    r"(?:really |much |kind of |totally |also |usually |generally |definitely |actually |now |"
    r"still |just |do |absolutely |very much |)"
)

# The form of every answer of a kind: "give me steps as a numbered list", "keep replies in
# bullet points". A plural says every one, not this one: a standing preference, not a task.
_ANSWER_FORM = (
    r"^(?:please\s+|pls\s+)?(?:give|send|show|write|keep|put|do|make)\s+(?:me\s+)?(?:the\s+"
    r"|your\s+|all\s+)?(?:steps|answers|replies|responses|instructions|recipes|examples"
    r"|summaries|explanations|units|measurements|code samples|lists|dates|times|prices|numbers)"
    r"\s+(?:as|in|with|using)\b"
    r"|^(?:please\s+|pls\s+)?keep (?:the |your |all |my )?(?:answers|replies|responses"
    r"|explanations|summaries|emails|messages) (?:short|brief|concise|simple|under|to|in|casual"
    r"|formal|plain)\b"
)
ANSWER_FORM = _rx(_ANSWER_FORM)
PREFERENCE = _rx(
    r"\bi(?:'d| would) (?:rather|prefer|like)\b",
    # One thing over another: "I'd take a paper book over an e-reader any day".
    r"\bi(?:'d| would) (?:take|pick|choose) [^.?!,]{1,40}? over\b",
    r"\bi\s+" + _ADV + r"(?:prefer|like|love|enjoy|adore|hate|dislike|detest|loathe|can't stand"
    r"|stick to|stick with|learn best|work best|do best"
    r"|cannot stand|don't like|do not like|don't enjoy|don't mind|'d rather|would rather|'d prefer"
    r"|would prefer|'d like|would like|want|favou?r|care about|am into|'m into|am keen on"
    r"|'m keen on|am fond of|'m fond of)\b(?! (?:your|that|it(?! when\b| if\b)"
    r"|this|those|how you)\b)",
    r"\b(?:i'm|im|i am)\s+(?:\w+\s+){0,3}?(?:a|an)\s+(?:\w+\s+){1,2}person\b",
    # How the assistant should do a kind of thing: "When you explain code, show an example first".
    r"^(?:when|whenever|if) you (?:explain|give|write|answer|reply|recommend|suggest|show|send"
    r"|make|summari[sz]e|translate|correct|review)\b",
    r"\bi'm\s+(?:not\s+|really\s+|more\s+)?(?:a\s+(?:big\s+|huge\s+)?fan|into|more of an?\b"
    r"|an?\s+(?:\w+\s+){1,2}person|used to|partial to|obsessed with|passionate about)",
    r"\b(?:my|our)\s+(?:all[- ]time\s+|absolute\s+)?(?:favou?rites?|preferred|go-to"
    r"|preferences?|choice)\b|\bwhat (?:i|we) (?:like|prefer|want|love|enjoy)\b",
    r"\bnot (?:a |the )?(?:big |huge )?fan of\b|^(?:fav|fave|favou?rite)\s+[a-z]+\s+(?:is|are)\b"
    r"|\bi (?:don't|do not) care for\b"
    r"|^(?:not |really not )?(?:really |much of )?(?:a|an) [a-z]+ person\b"
    r"|\bmy (?:fav|fave)\b",
    r"\btoo\s+\w+\s+for\s+me\b|\bfor me\b.*\bplease\b",
    r"\b(?:suits?|works?)\s+(?:me|(?:best|better|well|great) for me)\b",
    r"\b(?:i|we)\s+(?:find|found)\b.+\b(?:stiff|boring|annoying|confusing|easier|harder|better"
    r"|worse|helpful|useless|distracting|clearer)\b",
    r"\bi learn better\b|\bbetter that way\b|\b(?:please|pls)[.!]?$|^\w[\w\s-]{1,30}\bplease\b",
    r"\bi\s+(?:usually|always|normally|typically|tend to|mostly|rarely)\s+(?!think|feel|say)",
    r"^(?:please\s+)?(?:use|write|format|reply|respond|answer|call me|address me|speak|talk"
    r"|include|avoid|stop|start|put|sign|show me)\b(?!.*\b(?:it|this|that|above)\b)",
    r"\b(?:for|to) me\b.*\b(?:whenever|every time|always)\b|[,.]\s*always[.!]?$|^\w+ \w+, always",
    r"\bthe \w+er the better\b",
    # Chat drops the subject: "adore old jazz records", "can't stand olives".
    r"^(?:really |totally |absolutely |honestly |kinda |genuinely |lowkey |low key )?"
    r"(?:love|adore|hate|prefer|enjoy|dislike|loathe|despise|can't stand|cannot stand"
    r"|can't live without|not a fan of|big fan of|obsessed with)\s+"
    r"(?!(?:it|that|this|you|your|yours|how|when|the idea|to hear|hearing|seeing|those|these)\b)\w",
    r"^(?:really|super|so|totally|big|kinda|lowkey|low key|very much|heavily|deep) into\s+\w",
    _ANSWER_FORM,
)
CONSTRAINT = _rx(
    # "must" of obligation, not of inference: "must have taken ages", "must be so fun".
    r"\bmust\b(?!-|\s*(?:(?:have|'ve) (?:\w+ed|\w+en|been|had|made|felt|brought|thought|got|gone"
    r"|done|seen|known|kept|found|come|become|won|lost|spent|built|meant|heard|left)\b"
    r"|be (?!(?:\w+ed|done|kept|sent|paid|written|in|at|on|under|below|within|approved)\b)"
    r"|feel|love|know|mean|think|say|admit|see))",
    r"(?<!'ll )(?<!will )(?<!'ll definitely )(?<!gonna )\bhave to\b(?! (?:say|admit|agree"
    r"|check|try|see|look|give|wait|go|run|leave|head|get going))",
    r"\b(?:mustn't|must not|shall not|has to|had to be|needs? to be|is required"
    r"|are required|required to|not allowed|aren't allowed|isn't allowed|prohibited|forbidden"
    r"|mandatory|non-negotiable)\b",
    r"^(?:please\s+|pls\s+|plz\s+|and\s+|so\s+)?"
    r"(?:never|always|don't|do not|dont|make sure|ensure|avoid"
    r"|only|no more)\b(?! (?:worry|mind|forget|be sorry|know|let|give up|quit|stop|be afraid"
    r"|hesitate|beat yourself|be so hard|lose|\w+ing\b|happy|glad|great|good|nice|here|there|a "
    r"|so |fun|welcome|be there|thought|the best|been|by|here|ready|calm|up for|down for))",
    r"\b(?:i|we|they|you)\s+(?:can't|cannot|can not|can only|am unable to|are unable to"
    r"|mustn't|shouldn't|won't be able to)\b(?!\s+(?:wait|believe|imagine|stand|stop thinking"
    r"|help|thank|get over|remember|tell|decide|find|right now|complain|say|agree|deny|argue))",
    r"\b(?:allergic|allergy|allergies|intolerant|intolerance|vegetarian|vegan|gluten[- ]free"
    r"|halal|kosher|lactose|teetotal)\b",
    r"\b(?:i|we)\s+(?:don't|do not|never)\s+(?:drink|eat|smoke|use|work|fly|drive|do|take"
    r"|allow|accept|ship|support)\b",
    r"\b(?:budget|deadline|due|no later than|at most|at least|no more than|maximum|minimum"
    r"|max|min|limit|cap)\b[^.]{0,25}" + _NUM,
    r"\b(?:under|below|within|up to|over)\s+(?:[$€£¥]\s?)?\d",
    r"\bby\s+(?:the end of|end of|eod|eow|tomorrow|tonight|noon|" + DAYS + r"|" + MONTHS + r"|\d)",
    r"\b(?:sign-?off|approval|approved vendors?|compliance|policy|regulation|sla|gdpr|hipaa"
    r"|license|licensed|licence)\b",
    r"^no\s+\w+(?:\s+\w+)?\s+(?:on|before|after|during|in)\b|\b(?:never|not) (?:during|before"
    r"|after|on weekends)\b|\bonly[.!]?$",
    r"\b(?:without asking|no need to ask|before publishing|before sending|before merging)\b",
    r"\b(?:i|we)\s+(?:can\s+|could\s+)?only\s+(?:\w+\s+)?(?:speak|read|write|understand|eat|drink|use"
    r"|work|travel|fly|drive|wear|watch|listen to)\b",
    r"\bwe\s+(?:only\s+|always\s+|never\s+)?use\b[^.]{0,30}\bnot\b|\bcan only\b|\bbecause of "
    r"(?:a|my) (?:\w+ )?(?:injury|condition|allergy)",
)
DECIDED = _rx(
    # The subject left out: "going to take the job in austin", "not renewing my gym membership".
    r"^(?:gonna|going to|decided to|finally)\s+(?:take|accept|go with|buy|move|quit|switch|sell"
    r"|sign|book|start|stop|join|leave|rent|get|keep|cancel|turn down)\b",
    r"^(?:(?:i'm|im|i am|we're|we are) )?not (?:renewing|going back|taking|buying|keeping"
    r"|continuing|signing|accepting|doing)\b",
    r"^(?:ok |okay |so |i think |think )?(?:going with|gonna go with|sticking with|settled on"
    r"|final answer|switching to|opting for|signing up for)\b",
    r"\b(?:decided|decide to|decision|agreed|chose|chosen|picked|settled on|opted|went with"
    r"|committed|signed up|registered|booked|accepted|declined|approved|rejected|hired"
    r"|resigned|enrolled|applied|postponed|cancel(?:l?ed)|rescheduled|switched (?:to|from))\b",
    r"\bmade up (?:my|our) minds?\b"
    r"|\b(?:i'm|im|i am|we're|we are) (?:not|no longer) \w+ing (?:\w+ ){0,3}?"
    r"(?:anymore|any more)\b",
)
DECISION = _rx(
    r"\b(?:go(?:ing)? with|sign up|book the|book a"
    r"|scheduled|postponed?|postponing|cancel(?:l?ed|ling)|rescheduled|(?:moves?|moved|pushed"
    r"|bumped) (?:back )?to"
    r"|switch(?:ing|ed)? (?:to|from|our)"
    r"|migrat(?:e|ing|ed) (?:to|from|the|our)|drop(?:ping|ped)? (?:support|the)|keeping the"
    r"|the plan is|plan is to|final answer|final decision|we're (?:going|keeping|dropping"
    r"|switching|moving|using|launching|hiring)|let's (?:use|go with|name|call|pick|choose"
    r"|switch|move|schedule|book|meet|postpone|keep|stick)|name the|stick with|sticking with)\b",
    r"\b(?:i|we)(?:'ll| will)\s+(?!be\b|see\b|check\b|try\b|think\b|let\b|keep you|have to"
    r"|always\b|catch you|definitely let)",
)
FAILURE = _rx(
    r"\b(?:fail(?:ed|s|ing|ure|ures)?|broke|broken|crash(?:ed|es|ing)?|errors?|exception|bug"
    r"|outage|incident|timed? ?out|times out|rate[- ]limit\w*|throttl\w+|oom|out of memory"
    r"|ran out of|corrupt\w*|flaky|regression|rolled (?:it )?back|rollback|didn't work"
    r"|did not work|doesn't work|does not work|won't work|not working|stopped working|chokes?"
    r"|misread|silently|charged twice|rounding|lesson(?:s)? learned|lesson:|root cause"
    r"|caused by|post-?mortem|workaround|the fix was|gotcha|pitfall|came out (?:flat|wrong|bad)"
    r"|missed the|went wrong|blew up|expired|leaked|lacks?|denied|rejected by)\b",
    r"\b(?:4\d\d|5\d\d)\b(?!\s*(?:ms|km|m|kg|g|%|people|users|\$))",
    r"\bnext time\b(?!,? (?:then|!))|\bshould have\b|\bshouldn't have\b",
    r"(?<!how it )\bturns? out\b(?! (?:great|good|well|fine|better|so|ok|okay))",
)
FACT = _rx(
    r"\bmy name is\b|\bi'm called\b|\bi go by\b|\b(?:name is|is called|is named)\b",
    r"^(?:just |finally |recently |also |and |anyway,? |oh,? )?(?:got|went|started|finished|had"
    r"|made|took|bought|been|joined|moved|adopted|visited|met|tried|picked up|signed up|spent"
    r"|celebrated|landed|booked|won|lost|found|saw|watched|ran|did|gave|received)\b",
    r"\b(?:i|we)(?:'ll| will) be (?:in|at|there|away|out|off|back|traveling|travelling|visiting"
    r"|staying|moving|starting|working|flying|going)\b",
    r"\b(?:i|we)\s+(?:just |recently |also |finally |actually |still |now |already |even )?"
    r"(?:live|lived|work|worked|study|studied|grew up|was born|moved|relocated|graduated|retired"
    r"|teach|coach|volunteer|play|run|ran|train|paint|own|have|had|got|get|went|go|started"
    r"|joined|left|bought|sold|adopted|visited|met|married|lost|won|finished|took|made|built"
    r"|founded|manage|lead|drive|speak|need|hope to|want to|volunteered|coached|taught|learned"
    r"|picked up|tried|saw|watched|read|wrote|attended|traveled|travelled|spent|celebrated"
    r"|received|gave|created|launched|opened|found|bake|cook|collect|grow|climb|hike|swim"
    r"|surf|ski|dance|sing|draw|knit|garden|camp|camped|hiked|baked|cooked|painted|signed|use"
    r"|host|deploy|run|sell)\b(?! (?:it|that|this|you|what you mean|where you're)\b)",
    # Subject left out: "Drive a 2012 Honda Civic", "going to japan may 3rd to 17th",
    # "Boyfriend (Alex, 31) is a chef", "dentist appt on the 12th at 3".
    r"^(?:i )?(?:drive|own) (?:a|an)\s",
    r"^(?:going|flying|heading|moving|off|travell?ing) to [a-z]+(?: [a-z]+)?\s+"
    r"(?:on |in |from |this |next )?"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun|next|tomorrow"
    r"|\d)",
    r"^(?:boyfriend|girlfriend|bf|gf|husband|hubby|wife|partner|fianc\w*|son|daughter|mom|mum|dad"
    r"|sister|brother|roommate|flatmate|boss)\b(?:\s*\([^()]{1,30}\))?\s+(?:is|was|works|lives|just"
    r"|has|started|got)\b",
    r"^(?:[a-z]+ ){0,2}(?:appt|appointment|surgery|interview|exam|flight|checkup|check-up)\s+"
    r"(?:on|at|is|this|next|tomorrow)\b(?![^.?!]{0,20}\b(?:what|when|which)\b)",
    r"\bmy (?:phone|laptop|computer|pc|car|tablet|watch|camera|os|editor|ide|browser|router"
    r"|tv|bike|bicycle|scooter|e-?bike)\s+is\b",
    # "I do all my data analysis in R": the tool one works in.
    r"\b(?:i|we) do (?:all |most |everything |)(?:of )?(?:my|our) [a-z]+(?: [a-z]+)?"
    r" (?:in|with|on)\s",
    # A habit told with its adverb: "I sell mostly at farmers markets", "we usually eat at 6".
    r"\b(?:i|we)\s+(?:[a-z]+\s+)?(?:mostly|usually|normally|typically|generally|mainly)\s+[a-z]",
    r"\b(?:i'm|i am|i was|i've been|i have been|we're|we are|we were|we've been)\s+"
    r"(?:now |still |currently |also |really |finally |just |)"
    r"(?:a|an|the|from|in|at|on|based|married"
    r"|engaged|pregnant|retired|divorced|single|allergic|left-handed|right-handed|getting"
    r"|\w+ing)\b",
    r"\b(?:my|our)\s+(?:\w+\s+)?(?:wife|husband|partner|spouse|sons?|daughters?|kids?|children"
    r"|child|baby|twins|boys?|girls?|toddlers?|teens?|teenagers?|grandkids"
    r"|mom|mum|mother|dad|father|parents?|brothers?|sisters?|siblings?"
    r"|cousins?|grand\w+|aunt|uncle|family|friends?|boyfriend|girlfriend|fianc\w*|dogs?|cats?"
    r"|pets?|puppy|kitten|team|company|startup|business|boss|manager|colleagues?|coworkers?"
    r"|clients?|customers?|office|house|home|apartment|car|job|school|university|college"
    r"|birthday|anniversary|wedding|project|repo|stack|cluster|servers?|database|product|app"
    r"|fiscal|band|hobby|garden|doctor|therapist|landlord|neighbou?r|roommate|mentor|name"
    r"|co-?founder|business partner|flatmate|housemate|landlady|tutor|coach|trainer|physio"
    r"|dentist|vet|nanny|babysitter|step\w+|in-laws|\w+-in-law|niece|nephew|god\w+|bestie|bff"
    r"|shop|store|restaurant|cafe|salon|practice|firm|studio|clinic|farm|bakery|lab|agency"
    r"|bf|gf|hubby|wifey|fiance|fiancee|teammates?|classmates?|pup|doggo|kitty|sis|bro|granny"
    r"|staging|production|main)\b",
    r"\b(?:i've|we've)\s+(?:been|got|had|started|learned|finished|decided|moved|never)\b",
    r"^\w+ing\b[^.]{0,40}\b(?:helps?|makes?|keeps?|lets?) (?:me|us)\b",
    r"\b(?:i|we)(?:'re| are|'m| am) (?:\w+ )?(?:going to|gonna|planning to|planning on|about to"
    r"|hoping to|aiming to|saving for|saving up)\s+(?!be\b|see\b|check\b|try\b|think\b|let\b"
    r"|have to|keep you)|\b(?:i|we) (?:\w+ )?plan to\b",
    r"\b(?:helps?|help) (?:me|us) (?!out\b)\w+",
    r"(?:\b(?:is|are|was)|'s) (?:my|our)\b(?! (?:pleasure|bad)\b)|\b(?:important|special|therapy"
    r"|everything|a big deal|the world|a lifesaver) (?:to|for) (?:me|us)\b",
    r"^(?:still |just |currently |been |also )?(?:working on|planning|learning|getting into"
    r"|training for|saving for|preparing for|studying)\b",
    # Where chat leaves out "I": "teach at a primary school in Hove", "based in Cork".
    r"^(?:currently |now |still |mostly |also )?(?:live|work|study|teach|commute|volunteer"
    r"|intern)\s+(?:at|in|for|as|from|out of|near|remotely|part[- ]time|full[- ]time|nights"
    r"|shifts)\b",
    r"^(?:i )?live (?:about |around |just |right )?(?:an? |\d+ |half an )?(?:hour|hours|mile|miles"
    r"|km|minutes?|mins?|block|blocks|street|streets)? ?(?:outside|from|away from|near|north of"
    r"|south of|east of|west of|out of)\b|\bcommute (?:in |to work |into \w+ )?by\b",
    r"^(?:currently |now |still )?(?:based|living|working|studying|located|stationed|settled)"
    r"\s+(?:in|at|out of|near|from)\b",
    # A habit with a tool or a place for one's things: "I keep all my recipes in Notion", "we
    # plan everything in Trello at work".
    r"\b(?:i|we)\s+(?:\w+\s+){1,2}?(?:all\s+|most\s+|some\s+)?(?:of\s+)?(?:my|our|everything"
    r"|all the)\s+(?:[\w-]+\s+){0,3}?(?:in|on|with|using|via)\s+[\w.-]{2,}",
    # Keeping animals or a plot: "we keep hens", not "I keep forgetting", "keep it short".
    r"\b(?:i|we)\s+keep\s+(?!(?:\w+ing|it|this|that|them|you|in|track|an eye|up|on)\b)\w+",
    # Who is who, with "my" left out: "manager is Ruth", "husband Theo drives a bus", "three
    # hens, Dot, Pip and Mo".
    r"^(?:the )?(?:wife|husband|partner|spouse|son|daughter|kids?|mom|mum|dad|brother|sister"
    r"|boss|manager|landlord|roommate|flatmate|cofounder|co-founder|fianc\w*|bf|gf|hubby"
    r"|bestie|grandson|granddaughter|grandkids|grandma|grandpa|nan|nana|aunt|uncle|cousin|niece"
    r"|nephew|girlfriend|boyfriend)(?:'s)?\s+(?:is|was|\w+s|just|still|now|[a-z]+\s+(?:is|works"
    r"|lives|just|still|\w+s))\b",
    r"^(?:\d+|one|two|three|four|five|a|an)\s+(?:\w+\s+)?(?:kids|children|sons|daughters|boys"
    r"|girls|dogs|cats|pets|rabbits|birds|horses|chickens|fish|grandkids|grandchildren)\b",
    r"^(?:doing|finishing|starting|studying for|halfway through)\s+(?:my|a)\s+(?:masters|master's"
    r"|phd|degree|bachelors|undergrad|mba|residency|internship|apprenticeship|diploma)\b",
    r"^(?:grew up|born and raised|was born|raised)\b",
    # A plan or subscription the speaker is on: "on the spotify family plan", "on metformin".
    r"^(?:still |currently |now |also )?on (?:the |a |an )?(?:[\w-]+ ){0,3}?(?:plan|subscription"
    r"|tier|contract|membership)\b",
    # Doing one's own thing with a tool: "writing my thesis in latex on overleaf".
    r"^(?:still |currently |now |also |just )?[a-z]{3,}ing (?:my|our) (?:[\w-]+ ){0,3}?"
    r"(?:in|on|with|using) [\w.+#-]{2,}",
)
# Who the speaker is, said as "<role> here": "long haul trucker here", "retired teacher here,
# ...". The word before "here" names a person (a role noun), not a place or the weather.
ROLE_HERE = _rx(
    r"^(?!(?:same|anyone|anybody|someone|somebody|nobody|everyone|no one|it|this|that|me|us"
    r"|new|stuck|back|still|just|over|right|out|up|down|all|who|what|not|also|only|nothing"
    r"|everything|weather|the|im|i'm|i|we|you|they|he|she|hi|hey|hello)\b)"
    r"(?:[a-z][a-z'-]+ ){0,3}(?!(?:weather|summer|winter|water|dinner|power|paper|center|centre"
    r"|corner|river|border|letter|number|order|answer|other|computer|printer|server|later|ever"
    r"|never|over|after|under|rather|together|whatever|there)\b)"
    r"[a-z'-]*(?:er|or|ist|ian|ant|ent|man|woman|person|mom|mum|dad|parent|nurse|chef|cook|guy"
    r"|gal|student|grad|major|vet|medic|doc|dev|nerd|owner|mama|papa|retiree|newbie)"
    r"\s+here\b(?!\s+(?:is|are|was|were|too|as well|and there)\b)",
)
# A routine: a frequency ("4 days a week", "twice a month") or days said in the plural or
# listed ("mondays free", "mon wed 7pm", "weeknights"). Habitual, so a fact about the speaker.
# Said of the moment, not of the speaker's life: "spilled a glass ten minutes ago", "on a
# borrowed laptop today". Beside a question it sets the scene for that one answer.
MOMENT = _rx(
    r"\b(?:today|tonight|this (?:morning|afternoon|evening|week)|last night|right now|rn|atm"
    r"|at the moment|just now|earlier today|(?:a few|a couple of|\d+|ten|five|twenty) (?:minutes?"
    r"|mins?|seconds?|hours?) ago)\b"
    # "Just got a segfault", "I just burned the garlic again": an event a moment old.
    r"|\bjust (?:got|had|spent|burn(?:ed|t)|watched|saw|did|made|broke|ate|took|lost|found|woke"
    r"|fell|heard|read|tried|sent|dropped|spilled|spilt|failed|crashed|realized|realised|noticed"
    r"|finished|texted|called|ended|sat|knocked|hit|left|arrived|landed)\b"
    # "an hour ago", "in an hour", "staring at it for twenty minutes", "forever".
    r"|\b(?:an?|one|half an|like \d+|a good) (?:minutes?|mins?|hours?) ago\b"
    r"|\bin (?:an?|one|half an|\d+|a few|a couple of|ten|twenty|thirty) (?:minutes?|mins?|hours?)\b"
    r"|\bfor (?:an?|one|half an|the last|the past|\d+|ten|twenty|thirty|five|two|three|forty)"
    r" (?:minutes?|mins?|hours?)\b|\b(?:been|keep) \w+ing (?:\w+ ){0,3}forever\b"
    # "after forty minutes of…", "out in the sun all afternoon", "watched it earlier".
    r"|\bafter (?:an?|one|half an|\d+|ten|twenty|thirty|forty|two|three)"
    r" (?:minutes?|mins?|hours?)\b"
    r"|\ball (?:morning|afternoon|evening)\b|\bat the last minute\b"
    r"|(?<!\bthe )(?<!\btheir )(?<!\bhis )(?<!\bher )(?<!\bits )(?<!\bour )(?<!\bmy )(?<!'s )"
    r"\bearlier\b(?=\s*(?:$|[.!?;:,]|today|tonight|and\b|but\b|so\b))"
    # "The microwave just beeped", "the dough I'm looking at", "the alarm keeps chirping".
    r"|\b(?:is|are|keeps) (?:showing|saying|giving|throwing|displaying) (?:an? )?(?:error|warning"
    r"|code|message)\b"
    r"|\bjust (?!(?:moved|started|adopted|married|retired|graduated|joined|switched|signed|enrolled"
    r"|relocated|quit|bought|got)\b)\w+ed\b|\bin front of me\b|\bon (?:my|the) screen\b"
    r"|\b(?:i'm|i am|im) (?:looking at|holding|staring at)\b|\bkeeps \w+ing\b"
    # "so tired after all that gift wrapping", "finally friday": a passing state.
    r"|\bso (?:tired|sleepy|hungry|stuffed|bored|stressed|done)\b"
    r"|\b(?:finally|thank god it's|tgi) (?:friday|the weekend|weekend|home)\b"
    # "I'm settling a bet", "I'm already late": what the speaker is in the middle of.
    r"|\b(?:i'm|i am|im) (?:settling|in the middle of|waiting (?:for|on)|stuck (?:on|in|at)"
    r"|(?:already |running |so )?late)\b"
    # "I keep getting deleted by this boss": what keeps happening while the user tries.
    r"|\b(?:i|we) keep (?:on )?\w+ing\b|\bgoing to bed\b"
    # Not knowing the answer asked for: "I have zero clue".
    r"|\b(?:i have|i've got|got) (?:zero|no|absolutely no) (?:clue|idea)\b"
)
# Past news that lasts: a move, a new pet, a job, a diagnosis. Any other event narrated beside
# a question ("Got a parking ticket yesterday", "Saw a double rainbow") is that answer's scene.
LASTING_CHANGE = _rx(
    r"\b(?:moved|relocated|adopted|married|engaged|divorced|separated|retired|graduated|enrolled"
    r"|joined|started|quit|hired|promoted|diagnosed|born|became|switched|signed up|converted"
    r"|passed away|died|broke up|gave birth|inherited|rescued|fostered|named"
    r"|had (?:a|our|my) (?:baby|son|daughter|kid)"
    # "got home" is arriving; "got a home" is a change.
    r"|(?:got|bought|found) (?!home\b)(?:a |an |my |our )?(?:new |first |second )?"
    r"(?:job|dog|puppy|cat|kitten|car|house|home|flat|apartment|condo|place|promotion|degree|license|licence|tattoo|braces"
    r"|glasses|bike|motorbike|boat|piano|guitar)"
    r"|(?:finished|completed|earned|passed|got) (?:my |a |an |the )?(?:\w+ )?(?:degree|diploma|phd"
    r"|masters?|certificat\w+|license|licence|apprenticeship|residency|bar exam|boards)"
    r"|passed (?:my |the |a |an )?(?:\w+ )?(?:test|exams?|finals|thesis|defen[cs]e|interview))\b"
)
# The lasting changes that no task's scene is told with: "I just broke up with my boyfriend
# and now I keep checking his Instagram".
LIFE_EVENT = _rx(
    r"\b(?:broke up|divorced|separated|passed away|gave birth|got (?:married|engaged|diagnosed)"
    r"|was diagnosed|lost my (?:job|mom|mum|mother|dad|father|wife|husband|baby)"
    r"|(?:got|was) laid off|miscarried|had a miscarriage)\b"
)
# An event the speaker narrates: "I was reading on the bus", "we forgot the charger", "so I
# tried holding the button"; the subject-less form is `NARRATED`.
I_NARRATE = _rx(
    r"^(?:(?:so|and|then|oh|ok|okay|well|ugh|honestly|anyway),?\s+)?(?:(?:i|we)\s+)?"
    r"(?:(?:was|were) (?!(?:thinking|planning|hoping|considering|wondering|going|meaning|looking"
    r" forward)\b)\w+ing|(?:just |finally |also |then |already )?(?:\w{3,}ed|went|got|had|made"
    r"|took|saw|found|came|ran|bought|caught|left|spent|forgot|ate|drank|broke|lost|did|read"
    r"|wrote|heard|fell|woke|sent|threw|dropped|spilled|spilt|burnt|knocked|hit|tried))\b"
)
# Someone or something of the speaker's: an event told about them is the speaker's life ("I
# ordered a photo album for my mom's anniversary"), not a question's scene.
MY_OWN = _rx(
    r"\b(?:my|our)\s+(?:\w+\s+)?(?:wife|husband|partner|spouse|sons?|daughters?|kids?|children"
    r"|child|baby|mom|mum|mother|dad|father|parents?|brothers?|sisters?|siblings?|grand\w+|aunt"
    r"|uncle|cousins?|family|friends?|boyfriend|girlfriend|fianc\w*|dogs?|cats?|pets?|puppy|kitten"
    r"|boss|manager|colleagues?|coworkers?|team|company|house|home|apartment|flat|car|job|school"
    r"|favou?rite|collection|wedding|anniversary|birthday)\b"
)
# Dated far enough back to be the speaker's history: "last year", "in 2019", "years ago".
LONG_AGO = _rx(
    r"\b(?:last|this) (?:year|month|spring|summer|fall|autumn|winter)\b|\byears ago\b"
    r"|\b(?:\d+|two|three|four|five|six|several|a few|many) (?:years?|months?) ago\b"
    r"|\bin (?:19|20)\d\d\b|\bback in\b|\bas a (?:kid|child|teen|teenager)\b"
    r"|\bgrowing up\b|\b(?:after|for|in) (?:\d+|two|three|four|five|six|seven|eight|nine|ten|many"
    r"|several) years\b"
)
# Devices people name in lower case: "i game on a ps5", "i only have a chromebook".
DEVICE = _rx(
    r"\b(?:ps[2-5]|playstation|xbox|nintendo switch|steam deck|chromebook|macbook(?: air| pro)?"
    r"|imac|ipad|iphone|android|kindle|thinkpad|fitbit|apple watch|airpods|roku|firestick"
    r"|echo dot|raspberry pi|linux|ubuntu)\b"
)
# Words relayed from anyone or anything: 'my boss emailed "circle back EOD"', 'the sign says
# "no diving"', "my mum asked whether…", 'manager on slack: "…"'.
RELAYED = _rx(
    r"\b(?:says?|said|wrote|writes|emailed|texted|messaged|asked|asks|insists?|keeps saying"
    r"|replied|posted|sent(?: me)? this|told me)\b(?: me)?\s*(?:[\"“:]|(?:whether|if|why|how)\b)",
    r"\b(?:sent|forwarded|shared) (?:me |us )?this\b"
    r"|\b(?:keeps|won't stop|wont stop|can't stop|never stops) (?:saying|telling me)\b",
    r"\bon (?:slack|teams|whatsapp|wechat|email|the group chat)\s*(?::|$)"
    r"|\b(?:terminal|console|screen|output|error) (?:says|said|shows)\b",
)
# The material a question is about, not the speaker: "the text below", "I read an article
# saying…", "someone on Reddit claimed…", "the console says…".
MATERIAL = _rx(
    r"\b(?:below|above|attached|pasting|pasted)\b",
    r"\b(?:read|saw|found|came across|watched|heard) (?:an?|this|that|the|some) (?:\w+ ){0,2}?"
    r"(?:article|post"
    r"|quote|video|thread|study|paper|tweet|meme|ad|claim|story|podcast)\b",
    r"\b(?:someone|somebody|people|(?:an?|my)(?: \w+)? (?:friend|coworker|colleague)"
    r"|reviewers?(?: \d)?)"
    r" (?:on \w+ |at (?:the )?\w+ (?:last night |today |yesterday )?|just )?"
    r"(?:said|says|claimed|claims|told me|brought it up|mentioned|asked|texted|wrote|replied"
    r"|messaged|sent me)\b",
    # A premise for this one answer: "if I invest 200 a month…".
    r"^if (?:i|we)\b",
    r"\bthe (?:console|error|log|doc|docs|document|email|text|code|script|article|term|word)"
    r"\s+(?:says|keeps|shows|is from|came)\b|\bit came up\b",
)
ROUTINE = _rx(
    r"\b(?:\d+|one|two|three|four|five|six|seven|once|twice|a few|several)\s+(?:[a-z]+\s+){0,2}?"
    r"(?:a|per|each|every)\s+(?:week|month|day|night|fortnight)\b",
    r"\b(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekdays|weeknights"
    r"|weekends)\b",
    r"\bmwf\b|\bm/w/f\b|\b(?:daily|nightly)\b",
    r"\b(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?\s*(?:[/&,+]|and|n)?\s*"
    r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?\b",
)
# Health, diet and medication: who the speaker is wherever they are. "im on metformin 500mg
# twice a day", "type 1 diabetic", "pregnant!".
HEALTH = _rx(
    r"\b(?:allergic|allerg(?:y|ies)|intoleran(?:t|ce)|diabet\w*|asthma\w*|epilep\w*|celiac"
    r"|coeliac|pregnan(?:t|cy)|diagnosed|adhd|autis\w*|dyslexi\w*|migraines?|arthritis"
    r"|hypertension|high blood pressure|ibs|crohn'?s|colitis|an(?:a)?emi\w*|insomnia|gout|eczema"
    r"|psoriasis|deaf|colou?r[- ]?blind|wheelchair|vegan|vegetarian|pescatarian|teetotal"
    r"|hard of hearing|hearing aids?|short-?sighted|near-?sighted|bad (?:back|knee|hip|shoulder)"
    r"|heart (?:thing|condition|problem|issue)s?"
    r"|can(?:'t|not|t) (?:have|eat|drink) (?:caffeine|dairy|gluten|sugar|alcohol|nuts|salt|spicy)"
    r"|(?:knee|back|shoulder|ankle|wrist) injury|torn (?:acl|meniscus|ligament)|sprained"
    r"|recovering from|chemo|dialysis|sober|in recovery|blood thinners?|statins?|inhaler"
    r"|antidepressants?|beta blockers?|hives|bipolar|schizophreni\w*|ptsd|ocd|lupus|fibromyalgia"
    r"|endometriosis|pcos|tinnitus|vertigo|scoliosis|sleep apnea|cpap|narcolep\w*|parkinson'?s"
    r"|dementia|copd|(?:hypo|hyper)thyroid\w*|high cholesterol|chronic pain|visually impaired"
    r"|low vision|legally blind|partially sighted|screen reader|epi-?pen"
    r"|gluten[- ]free|dairy[- ]free|nut[- ]free|halal|kosher)\b",
    r"\b(?:on|taking)\s+(?:meds|medication|insulin|antidepressants|the pill|blood thinners"
    r"|birth control|statins|lithium|metformin|levothyroxine|warfarin|sertraline|prozac|zoloft"
    r"|lexapro|ssris?|adderall|ritalin|prednisone|hrt|methotrexate|\w+\s+\d+\s?(?:mg|mcg))\b|\b\d+\s?(?:mg|mcg)\b",
)
# Someone else is the subject: "she's diabetic" is not the speaker's health.
OTHER_START = _rx(r"^(?:he|she|they|you|he's|she's|they're|you're|his|her|their|your)\b")
SPECIFIC = _rx(
    r"\b(?:yesterday|today|tonight|tomorrow|last|next|ago|since|recently|lately|weekend|"
    + DAYS
    + r"|"
    + MONTHS
    + r"|spring|summer|autumn|fall|winter|week|month|year|\d{4}|\d+(?:st|nd|rd|th))\b",
    r"\d",
)
NAMED_TOOL = re.compile(
    r"\b(?:I|[Ww]e)\s+(?:(?:usually|mostly|always|only|still|now)\s+)?[a-z]{2,12}\s+(?:\w+\s+)?"
    r"(?:on|with|using|in)\s+(?:an?\s+|my\s+|our\s+|the\s+)?[A-Z][\w.+#-]*"
)
PROPER_NOUN = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+|(?<=[a-z,;] )[A-Z]{2,}\b")
NAMED = re.compile(r"\b(?:called|named|titled)\s+[\"'“]?[A-Z]")
# Facts about who the speaker is that stay true and matter everywhere: name, home, work, health,
# family, birthday, age. A high-value fact: kept even when stated in four words.
CORE_FACT = _rx(
    r"\bmy name is\b|\bi'm called\b|\bi go by\b|\b(?:i|we) live (?:in|at|on|near)\b"
    r"|\b(?:i|we) (?:just |recently )?(?:moved|relocated) (?:to|into)\b",
    r"\b(?:i|we) (?:work|worked) (?:at|for|as)\b|\bmy (?:job|boss|manager|employer|company)\b",
    r"\b(?:allergic|diabet\w*|asthma\w*|epilep\w*|celiac|coeliac|pregnant|diagnosed|disorder"
    r"|left-handed|right-handed|wheelchair|deaf|blind)\b",
    r"\bmy (?:wife|husband|partner|son|daughter|mom|mum|mother|dad|father|brother|sister|dog|cat)"
    r"(?:'s name)? (?:is called|is named|is)\b",
    r"\b(?:my birthday|i was born|i'm \d+ years old|i am \d+ years old)\b",
    r"\bi(?:'m| am) \d{1,2}(?=\s*(?:$|[,.!;]|and\b|y/?o\b|years\b))",
    # "i do freelance illustration for a living", "Me: 29F, UX designer".
    r"\bfor a living\b|^(?:me|about me)\s*[:：]\s*\S|,\s*that's me\W*$",
    # Where they come from and what they study: "grew up in texas", "first year of law school".
    r"\bgrew up (?:in|on|near|around|by)\b|\b(?:i'm|i am|im) (?:originally )?from\b"
    r"|\b(?:first|second|third|fourth|final|last) year (?:of|at|in) (?:\w+ )?(?:school|college"
    r"|uni|university|med school|law school|my \w+|the \w+)\b"
    r"|\b(?:freshman|sophomore|junior|senior) (?:at|in|year)\b"
    r"|^originally from\b|\bworking as (?:an?|the)\b",
    # Age and sex first, profile style: "22f, college student", "29M".
    r"^\d{2}\s?(?:f|m|yo|y/o|nb)\b",
    # Sizes they buy in: "I wear a size 10.5", "I take a medium".
    r"\b(?:i|we) (?:wear|take) (?:a |an )?(?:size|us|uk|eu|xs|small|medium|large|xl|xxl)\b",
)
# A convention, one thing over another, judged on the whole sentence since the comma would
# split it: "We use pnpm, not npm", "I use tabs instead of spaces".
CONVENTION = _rx(
    r"\b(?:i|we) (?:always )?(?:use|go with|stick (?:to|with)|write|deploy (?:to|with))"
    r"\s+[\w.+#/-]+(?:\s+[\w.+#/-]+)?,?\s+(?:not|instead of|rather than|over)\s+[\w.+#/-]+",
)
