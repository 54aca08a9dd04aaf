"""English cues for the five memory-worthy categories (seed 002): grammatical, not topical."""

from __future__ import annotations

import re

from memory.gating.gate_lexicon_en import _DAYS, _MONTHS, _NUM, _rx

_ADV = (
    r"(?:really |much |kind of |totally |also |usually |generally |definitely |actually |now |"
    r"still |just |do |absolutely |very much |)"
)

PREFERENCE = _rx(
    r"\bi(?:'d| would) (?:rather|prefer|like)\b",
    r"\bi\s+" + _ADV + r"(?:prefer|like|love|enjoy|adore|hate|dislike|detest|loathe|can't stand"
    r"|cannot stand|don't like|do not like|don't enjoy|don't mind|'d rather|would rather|'d prefer"
    r"|would prefer|'d like|would like|want|favou?r|care about|am into|'m into|am keen on"
    r"|'m keen on|am fond of|'m fond of)\b(?! (?:your|that|it"
    r"|this|those|how you)\b)",
    r"\bi'm\s+(?:not\s+|really\s+|more\s+)?(?:a\s+(?:big\s+|huge\s+)?fan|into|more of an?\b"
    r"|an?\s+(?:\w+\s+){1,2}person|used to|partial to|obsessed with|passionate about)",
    r"\b(?:my|our)\s+(?:all[- ]time\s+|absolute\s+)?(?:favou?rites?|preferred|go-to"
    r"|preferences?|choice)\b|\bwhat (?:i|we) (?:like|prefer|want|love|enjoy)\b",
    r"\bnot (?:a |the )?(?:big |huge )?fan of\b",
    r"\btoo\s+\w+\s+for\s+me\b|\bfor me\b.*\bplease\b",
    r"\b(?:suits?|works?)\s+(?:me|(?:best|better|well|great) for me)\b",
    r"\b(?:i|we)\s+(?:find|found)\b.+\b(?:stiff|boring|annoying|confusing|easier|harder|better"
    r"|worse|helpful|useless|distracting|clearer)\b",
    r"\bi learn better\b|\bbetter that way\b|\b(?:please|pls)[.!]?$|^\w[\w\s-]{1,30}\bplease\b",
    r"\bi\s+(?:usually|always|normally|typically|tend to|mostly|rarely)\s+(?!think|feel|say)",
    r"^(?:please\s+)?(?:use|write|format|reply|respond|answer|call me|address me|speak|talk"
    r"|include|avoid|stop|start|put|sign|show me)\b(?!.*\b(?:it|this|that|above)\b)",
    r"\b(?:for|to) me\b.*\b(?:whenever|every time|always)\b|[,.]\s*always[.!]?$|^\w+ \w+, always",
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
    r"^(?:please\s+|and\s+|so\s+)?(?:never|always|don't|do not|dont|make sure|ensure|avoid"
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
    r"\bby\s+(?:the end of|end of|eod|eow|tomorrow|tonight|noon|"
    + _DAYS
    + r"|"
    + _MONTHS
    + r"|\d)",
    r"\b(?:sign-?off|approval|approved vendors?|compliance|policy|regulation|sla|gdpr|hipaa"
    r"|license|licensed|licence)\b",
    r"^no\s+\w+(?:\s+\w+)?\s+(?:on|before|after|during|in)\b|\b(?:never|not) (?:during|before"
    r"|after|on weekends)\b|\bonly[.!]?$",
    r"\b(?:without asking|no need to ask|before publishing|before sending|before merging)\b",
    r"\bwe\s+(?:only\s+|always\s+|never\s+)?use\b[^.]{0,30}\bnot\b|\bcan only\b|\bbecause of "
    r"(?:a|my) (?:\w+ )?(?:injury|condition|allergy)",
)
DECIDED = _rx(
    r"\b(?:decided|decide to|decision|agreed|chose|chosen|picked|settled on|opted|went with"
    r"|committed to|signed up|registered|booked|accepted|declined|approved|rejected|hired"
    r"|resigned|enrolled|applied|postponed|cancel(?:l?ed)|rescheduled|switched (?:to|from))\b"
)
DECISION = _rx(
    r"\b(?:go(?:ing)? with|sign up|book the|book a"
    r"|scheduled|postponed?|postponing|cancel(?:l?ed|ling)|rescheduled"
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
    r"|host|deploy|run)\b(?! (?:it|that|this|you|what you mean|where you're)\b)",
    r"\b(?:i'm|i am|i was|i've been|i have been|we're|we are|we were|we've been)\s+"
    r"(?:now |still |currently |also |really |finally |just |)"
    r"(?:a|an|the|from|in|at|on|based|married"
    r"|engaged|pregnant|retired|divorced|single|allergic|left-handed|right-handed|getting"
    r"|\w+ing)\b",
    r"\b(?:my|our)\s+(?:\w+\s+)?(?:wife|husband|partner|spouse|sons?|daughters?|kids?|children"
    r"|child|baby|twins|mom|mum|mother|dad|father|parents?|brothers?|sisters?|siblings?"
    r"|cousins?|grand\w+|aunt|uncle|family|friends?|boyfriend|girlfriend|fianc\w*|dogs?|cats?"
    r"|pets?|puppy|kitten|team|company|startup|business|boss|manager|colleagues?|coworkers?"
    r"|clients?|customers?|office|house|home|apartment|car|job|school|university|college"
    r"|birthday|anniversary|wedding|project|repo|stack|cluster|servers?|database|product|app"
    r"|fiscal|band|hobby|garden|doctor|therapist|landlord|neighbou?r|roommate|mentor|name"
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
)
SPECIFIC = _rx(
    r"\b(?:yesterday|today|tonight|tomorrow|last|next|ago|since|recently|lately|weekend|"
    + _DAYS
    + r"|"
    + _MONTHS
    + r"|spring|summer|autumn|fall|winter|week|month|year|\d{4}|\d+(?:st|nd|rd|th))\b",
    r"\d",
)
PROPER_NOUN = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+|(?<=[a-z,;] )[A-Z]{2,}\b")
NAMED = re.compile(r"\b(?:called|named|titled)\s+[\"'“]?[A-Z]")
# Facts about who the speaker is that stay true and matter everywhere: name, home, work, health,
# family, birthday, age. Seed 002's "high-value fact": kept even when stated in four words.
CORE_FACT = _rx(
    r"\bmy name is\b|\bi'm called\b|\bi go by\b|\b(?:i|we) live (?:in|at|on|near)\b",
    r"\b(?:i|we) (?:work|worked) (?:at|for|as)\b|\bmy (?:job|boss|manager|employer|company)\b",
    r"\b(?:allergic|diabet\w*|asthma\w*|epilep\w*|celiac|coeliac|pregnant|diagnosed|disorder"
    r"|left-handed|right-handed|wheelchair|deaf|blind)\b",
    r"\bmy (?:wife|husband|partner|son|daughter|mom|mum|mother|dad|father|brother|sister|dog|cat)"
    r"(?:'s name)? (?:is called|is named|is)\b",
    r"\b(?:my birthday|i was born|i'm \d+ years old|i am \d+ years old)\b",
)
# A convention, one thing over another, judged on the whole sentence since the comma would
# split it: "We use pnpm, not npm", "I use tabs instead of spaces".
CONVENTION = _rx(
    r"\b(?:i|we) (?:always )?(?:use|go with|stick (?:to|with)|write|deploy (?:to|with))"
    r"\s+[\w.+#/-]+(?:\s+[\w.+#/-]+)?,?\s+(?:not|instead of|rather than|over)\s+[\w.+#/-]+",
)
