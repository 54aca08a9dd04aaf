"""The secret and PII patterns the privacy filter applies, in priority order.

Each rule pairs a regex with an optional validator (Luhn for cards, the GB 11643 checksum for
Chinese resident ids) so numbers that merely look like secrets are left alone: about 90% of
random 16-digit order numbers fail Luhn, and the id checksum rejects 10 in 11 random 18-digit
strings. Digit boundaries use lookarounds instead of word boundaries, which do not fire between a
CJK character and a digit ("卡号4111...").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

Validator = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of secret: where it is (`group` of `pattern`) and how to confirm it."""

    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0
    validate: Validator | None = None


def luhn_ok(number: str) -> bool:
    """True when the digits of `number` (13-19 of them) pass the Luhn checksum."""
    digits = [int(ch) for ch in number if ch.isdigit()]
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    total = 0
    for i, digit in enumerate(reversed(digits)):
        if i % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def cn_id_ok(value: str) -> bool:
    """True for an 18-character Chinese resident id with a real birth date and checksum."""
    value = value.upper()
    if len(value) != 18 or not value[:17].isdigit():
        return False
    try:
        born = date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    if born.year < 1900:
        return False
    total = sum(int(ch) * w for ch, w in zip(value[:17], _CN_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == value[17]


def iban_ok(value: str) -> bool:
    """True for an IBAN (ISO 13616) whose mod-97 check digits are right.

    1 in 97 random strings of the shape pass, so the shape alone is never enough.
    """
    compact = "".join(value.split()).upper()
    if not 15 <= len(compact) <= 34 or not compact[:2].isalpha() or not compact[2:4].isdigit():
        return False
    if not compact.isalnum() or not compact.isascii():
        return False
    rotated = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rotated)) % 97 == 1


def _aws_secret_ok(value: str) -> bool:
    # A secret access key is 40 base64 characters mixing cases and digits; a git SHA (lower-case
    # hex) or a long word is not one.
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


def _ssn_ok(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in {"000", "666"} and area[0] != "9" and group != "00" and serial != "0000"


_I = re.IGNORECASE


def _first(chars: str, pattern: str) -> str:
    """`pattern` behind a look-ahead for the characters it can start with.

    The engine then scans for those characters instead of trying every alternative at every
    position: the cue-led rules below cost a third of the time on ordinary text.
    """
    return f"(?=[{chars}])(?:{pattern})"


# A value is read to the end of its run of characters, possessively, and nothing after it may
# fail the match: "pw:pw:pw:…" then costs one pass. A value that had to be followed by a
# boundary was re-read from every repeat of the keyword inside a long run (16,000 characters:
# seconds of CPU per message).
_SECRET_VALUE = r"[\"']?(?P<v>[A-Za-z0-9_\-./+=~!@#$%^&*]{6,}+)"
# Up to a space, a quote or a comma; a sentence's closing ".", "!", "?" or ")" is not part of
# it, the same marks inside it are ("p.ss!w0rd").
_PASSWORD_VALUE = r"[\"'“]?(?P<v>(?:[^\s\"'”,;，。；.!?)]++|[.!?)]++(?=[^\s\"'”,;，。；.!?)]))++)"
# "password", "passwd", "pass word", "passphrase", "passcode", "pwd", "pw". Written from its
# first letter, the word boundary checked behind it, so the engine scans for a "p" instead of
# trying the alternation at every position (a third of the time; five rules start with it).
_PASSWORD_WORD = r"p(?<!\wp)(?:ass[ -]?(?:word|wd|phrase|code)|asswd|wd|w)\b"
# Words that follow "password is" in ordinary talk ("the password is wrong") are not passwords,
# nor do the nouns that follow "with the password" ("log in with the password manager").
_NOT_PASSWORDS = frozenset(
    "wrong incorrect correct required changed reset expired set too the a an not still being "
    "invalid valid weak strong missing stored saved manager field prompt policy hint change "
    "rules rule you i it that this from in on of for to and or but again instead "
    # What a password "is" or "has been" in a remark: "compromised", "disabled", "the default".
    "compromised leaked stolen hacked exposed breached disabled enabled locked unlocked revoked "
    "deleted removed updated rotated shared reused used forgotten lost hashed encrypted hidden "
    "visible shown empty blank temporary default fine ok okay good bad great secure insecure "
    "safe unsafe simple easy hard long short complex unique known unknown here there below above "
    "attached same different sensitive optional mandatory needed necessary important old new "
    "expire expires never "
    # The same words after "contraseña es", "mot de passe est", "Passwort ist": wrong, too,
    # very, not, new, the articles and possessives.
    "incorrecta incorrecto correcta muy demasiado nueva nuevo la el mi tu su una un no "
    "incorrect faux trop très tres pas nouveau nouvelle le les mon ma ton une "
    "falsch richtig zu sehr nicht neu neues der die das mein meine dein ein eine kein".split()
)
# "contraseña", "mot de passe", "mdp", "Passwort", "Kennwort", "senha", "clave de acceso".
_PASSWORD_WORD_INTL = (
    r"\b(?:contraseñ?a|contrasena|clave de acceso|mot de passe|mdp|passwort|kennwort|senha)"
)
# A password or passphrase read to the end of its clause: words apart by spaces (not a line
# break) up to a comma, a semicolon, a quote, a closing bracket or the sentence's end; those
# marks inside a word stay ("p.ss!w0rd", "don't"). A passphrase is several words ("my password
# is new york yankees 1998"): reading one word left the rest stored. Word and gap classes are
# disjoint and read possessively, so a clause is read once; a word that names a password again
# ends the clause, so "the password is stored in the vault and my bank password is X" is two
# statements, each judged on its own.
_CLAUSE_WORD = r"(?:[^\s\"“”'’,;，。；！？、.!?)]++|[.!?)'’]++(?=[^\s\"“”'’,;，。；！？、.!?)]))++"
_NOT_A_CUE = r"(?!(?:pass[ -]?(?:word|phrase|code)|passwd|pwd)\b|密码|口令|密碼)"
_PHRASE_VALUE = (
    rf"(?![:=：>→])[\"'“‘]?(?P<v>{_CLAUSE_WORD}(?:[^\S\r\n]++{_NOT_A_CUE}{_CLAUSE_WORD})*+)"
)
# "password for the wifi", "password of the bank account", "password to my laptop".
_PASSWORD_FOR = r"(?:\s+(?:for|to|on|of|at)\s[^.\n:=?]{1,30}?)?"
# A value announced by a mark: "password: X", "password = X", "password -> X", "password - X",
# "my password is: X".
_ANNOUNCED = r"(?:\s+(?:is|was))?\s*(?:[:=：]|->|=>|→|[\-–—](?=\s))\s*"
# A value stated: "password is X", "has always been X", "is still X", "was changed to X".
_STATED = (
    r"\s+(?:(?:(?:is|was|got|has\s+been)\s+)?(?:set|changed|reset|updated)\s+to"
    r"|(?:is|was|has\s+been|had\s+been|has\s+always\s+been|has\s+long\s+been)"
    r"(?:\s+(?:still|now|currently|always|just|simply|actually))?)\b\s*"
)
# Words that open a remark about a password, not the password: "the password is stored in the
# vault", "password: at least 12 characters", "password: see the wiki".
_PROSE_LEAD = frozenset(
    "wrong incorrect required changed reset expired set too not still being invalid valid weak "
    "strong missing stored saved hidden encrypted hashed written sent shown visible empty blank "
    "same different easy hard long short secure insecure unique shared known unknown forgotten "
    "lost locked protected managed generated updated rotated case in on at from for to of with "
    "under inside behind below above attached there here what which where how why when who "
    "none see check ask please forgot forget no yes only also always never now currently "
    "probably definitely really very so quite pretty supposed meant needed must should will "
    "would can could may might has have had does did do is are was were be been".split()
)
# A sentence's grammar (articles, pronouns, prepositions, auxiliaries): a passphrase of plain
# words rarely holds it, a remark about a password does ("the password is the same as before").
_FUNCTION_WORDS = frozenset(
    "a an the and or but so if then than as of in on at to for from with by about into over "
    "after before under between my your his her its our their me you him them us it i we they "
    "he she this that these those is are was were be been am do does did have has had will "
    "would can could should must may might not no yes very too also just still again already "
    "now there here what which who whom whose where when why how all any some each every more "
    "most less same other such only own please thanks thank".split()
)
# "password: 12 characters", "the password is 3 years old": a length or an age.
_UNITS = frozenset(
    "character characters chars letter letters digit digits symbols numbers words days weeks "
    "months years hours minutes times".split()
)
# Marks that make a single word after "password" (no "is" or ":") read as a password:
# "pw Tr0ub4dor&3". A dot, a dash or a slash is in ordinary words and paths.
_PASSWORD_SYMBOLS = frozenset("!@#$%^&*+=~?_<>|\\{}[]")
# "密码学" (cryptography), "密码锁" (a combination lock), "密码箱" (a safe), "密码器", "密码机",
# "密码本": words that begin with 密码 but name no password.
_ZH_PASSWORD = r"(?:密码|口令|密碼)(?![学學锁鎖箱器机機本])"
# What follows "密码是" in a question or a remark: "密码是什么", "密码是错的", "密码至少八位".
_ZH_NOT_PASSWORDS = (
    "什么", "多少", "啥", "几", "哪", "错", "不", "对的", "对了", "正确", "怎么", "如何", "要",
    "需要", "必须", "至少", "最少", "已经", "被", "很", "太", "非常", "重要", "一样", "相同",
    "空", "由", "用来", "指", "在", "和", "跟", "同", "保存", "存在",
)  # fmt: skip
# What may stand between a word that names a key, a phrase or codes and its value: "for my
# Ledger", then "is", "are", ":", "->", "是" (each optional), on the same line or the next.
_KEY_FOR = (
    r"(?:\s+(?i:for|of|to|on)\s[^.\n:=]{1,30}?)?[^\S\n]*+"
    r"(?:(?i:is|are|was|were)\b|[:=：]|->|→|是|为|為)?[^\S\n]*+\n?[^\S\n]*+"
)
# One word of a recovery phrase (numbered or not: "1. witch") and one Chinese character of the
# Chinese list, standing alone. Words are apart by spaces, commas or dashes, or by a line break
# when the next line is a list of such words too (one a line, or a grid): a line of prose after
# the phrase ("creds - deploy / X") is not read into it.
_SEED_WORD = r"(?:\d{1,2}[.)][ \t]*+)?[a-zA-Z]{3,8}+(?!\w)"
_SEED_LINE = (
    r"(?:\d{1,2}[.)][ \t]*)?[a-zA-Z]{3,8}(?:[ \t,;\-]+(?:\d{1,2}[.)][ \t]*)?[a-zA-Z]{3,8})*"
    r"[ \t,;]*(?:\r?\n|$)"
)
_SEED_GAP = rf"(?:[ \t,;\-]++|[ \t,;]*+\r?\n[ \t]*+(?={_SEED_LINE}))"
_HAN = r"[\u4e00-\u9fff](?![\u4e00-\u9fff])"
# A list's number before an item ("1. ", "2) ").
_NUMBERED = r"(?:\d{1,2}[.)]\s++)?"
# One backup code: letters and digits with a digit in them ("8473-2918", "a1b2c-3d4e5"), groups
# of capitals and digits joined by dashes ("ABCD-EFGH-IJKL-MNOP"), or base32 ("JBSWY3DPEHPK3PXP").
_CODE = (
    r"(?:(?=[A-Za-z\-]*[0-9])[A-Za-z0-9]{4,}+(?:-[A-Za-z0-9]{3,}+)*+(?![\w\-])"
    r"|[A-Z0-9]{4,}+(?:-[A-Z0-9]{3,}+)++(?![\w\-])|[A-Z2-7]{16,}+(?![\w\-]))"
)
# Separators between digit groups of a card or an SSN as people type or paste them: one to
# three of any Unicode space (category Zs: a PDF or a French page brings no-break and thin
# spaces) or tab, any dash (category Pd, the minus sign), dots, commas, slashes, underscores and
# middle dots, mixed; or a single line break with up to two of those either side. A blank line
# (two breaks) separates numbers. The class holds no digit, so the groups split one way only.
_SPACES = r"\t \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_DASHES = (
    r"\-\u058a\u05be\u1400\u1806\u2010-\u2015\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u2e5d\u301c"
    r"\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead\u2212"
)
_MARKS = r"._/,\u00b7\u2027\u2219\u22c5\u30fb\uff65\u3001\uff0c\uff0e\uff0f"
_SEP_CHAR = f"[{_SPACES}{_DASHES}{_MARKS}]"
_SEP = rf"(?:{_SEP_CHAR}{{1,3}}|{_SEP_CHAR}{{0,2}}\r?\n{_SEP_CHAR}{{0,2}})"
_SSN_GROUPS = rf"\d{{3}}{_SEP}\d{{2}}{_SEP}\d{{4}}"


def _long_enough(value: str) -> bool:
    return len(value) >= 3


def _password_ok(value: str) -> bool:
    return _long_enough(value) and value.lower().strip(".!?") not in _NOT_PASSWORDS


def _credential_ok(value: str) -> bool:
    return _password_ok(value) and not value.isalpha()


def _generic_secret_ok(value: str) -> bool:
    # "token: expired" is not a secret; real tokens mix digits in or are long.
    return any(ch.isdigit() for ch in value) or len(value) >= 20


def _codes_ok(value: str) -> bool:
    # "backup codes: 2023" is a year; codes together hold eight letters and digits or more.
    return sum(c.isalnum() for c in value) >= 8


def _mixed_token_ok(value: str) -> bool:
    # A key mixes letters and digits; a long word or a number after "token" is not one.
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _phrase_ok(value: str, *, announced: bool) -> bool:
    """Whether a clause after a password word is the password (one word or a passphrase).

    One word is judged by `_NOT_PASSWORDS` ("the password is wrong"). Several are a remark when
    they open like one ("stored in the vault", "at least 12 characters"); otherwise, after a
    mark ("password: correct horse battery staple") they are the value; after "is", when they
    hold a digit or a symbol ("new york yankees 1998"), or are three or more plain words none
    of which is grammar ("purple monkey dishwasher", not "the same as before").
    """
    words = [w.strip("\"'“”‘’([{").lower() for w in value.split()]
    if len(words) <= 1:
        return _password_ok(value)
    if words[0] in _PROSE_LEAD or (words[0].isdigit() and words[1] in _UNITS):
        return False
    if announced or any(c.isdigit() or c in _PASSWORD_SYMBOLS for c in value):
        return True
    return len(words) >= 3 and not any(w in _FUNCTION_WORDS or w in _PROSE_LEAD for w in words)


def _announced_ok(value: str) -> bool:
    return _phrase_ok(value, announced=True)


def _stated_ok(value: str) -> bool:
    return _phrase_ok(value, announced=False)


def _password_shaped(value: str) -> bool:
    """One word that reads as a password without "is" or ":" before it ("pw Tr0ub4dor&3").

    Letters with digits or symbols, or six digits or more; a plain word is what the password
    is for ("password manager", "password reset").
    """
    core = value.strip(".!?")
    if core.lower() in _NOT_PASSWORDS:
        return False
    letters = any(c.isalpha() for c in core)
    marks = any(c.isdigit() for c in core) or any(c in _PASSWORD_SYMBOLS for c in core)
    # A "!" or "?" a password ends in is read as the sentence's ("0000A!" reaches here as
    # "0000A"), so letters with marks count from four; digits alone from six (not a year).
    return (letters and marks and len(core) >= 4) or (core.isdigit() and len(core) >= 6)


def _zh_password_ok(value: str) -> bool:
    return _long_enough(value) and not value.startswith(_ZH_NOT_PASSWORDS)


RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----"
            r"|[\s\S]*\Z)"
        ),
    ),
    Rule("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}")),
    Rule("api_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    Rule("api_key", re.compile(r"\bsk-(?:proj-|live-)?[A-Za-z0-9_\-]{20,}")),
    Rule("api_key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    Rule("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}")),
    Rule("github_token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}")),
    # Bot, user, app-level (xapp-), configuration (xoxe-) tokens and incoming webhooks.
    Rule(
        "slack_token",
        re.compile(
            r"\b(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}"
            r"|hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}"
        ),
    ),
    # Vendors' token shapes, each from a prefix the vendor documents (as secret scanners such as
    # gitleaks list them; the lengths are lower bounds, so a longer token is read whole), before
    # the free-text AWS secret, which would take a 40-character body and leave the prefix:
    # GitLab, Hugging Face, npm, SendGrid, DigitalOcean, Twilio (key SK…, account AC…), Stripe
    # restricted and prod keys, Shopify, PyPI, Groq, Replicate, Databricks, Linear, Postman,
    # Pulumi, HashiCorp Vault, Doppler, Notion, Sentry, Grafana, xAI, Perplexity, LangSmith,
    # webhook signing secrets, age, Atlassian, Square, RubyGems, PlanetScale, Fly.io, Heroku,
    # Google OAuth, Supabase, Alibaba.
    Rule(
        "api_key",
        re.compile(
            _first(
                "gGhanSdAsrpPlxwEfHyL",
                r"\b(?:gl(?:pat|dt|ptt|rt|soat|ft|imt|agent|oas|ffct)-[\w\-]{20,}"
                r"|glcbt-[0-9a-zA-Z]{1,5}_[\w\-]{20,}|GR1348941[\w\-]{20,}"
                r"|hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36,}"
                r"|SG\.[\w\-]{16,}\.[\w\-]{16,}|do[opr]_v1_[a-f0-9]{64}"
                r"|(?:SK|AC)[0-9a-fA-F]{32}(?![0-9A-Za-z])|(?:sk|rk)_prod_[A-Za-z0-9]{10,}"
                r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"
                r"|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|pypi-AgEIcHlwaS5vcmc[\w\-]{50,}"
                r"|gsk_[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|dapi[a-f0-9]{32}"
                r"|lin_(?:api|oauth)_[A-Za-z0-9]{40,}|PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"
                r"|pul-[a-f0-9]{40}|hv[sbr]\.[\w\-]{24,}"
                r"|dp\.(?:pt|st|ct|sa|scim)\.[A-Za-z0-9]{40,}"
                r"|(?:ntn|secret)_[A-Za-z0-9]{43,}|sntry[su]_[\w+/=]{40,}"
                r"|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}"
                r"|xai-[A-Za-z0-9]{60,}|pplx-[A-Za-z0-9]{40,}"
                r"|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"
                r"|whsec_[A-Za-z0-9+/=]{24,}|AGE-SECRET-KEY-1[0-9A-Z]{58}|ATATT3[\w=\-]{100,}"
                r"|sq0(?:atp|csp)-[\w\-]{22,}|EAAA[\w\-]{60,}|rubygems_[a-f0-9]{48}"
                r"|pscale_(?:tkn|pw|oauth)_[\w.=\-]{32,}|fo1_[\w\-]{43,}|HRKU-[\w\-]{58,}"
                r"|ya29\.[\w\-]{30,}|GOCSPX-[\w\-]{24,}|sbp_[a-f0-9]{40}|LTAI[A-Za-z0-9]{16,})",
            )
        ),
    ),
    Rule("aws_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    # A secret access key in free text: exactly 40 base64 characters, mixed case and digits.
    Rule(
        "aws_key",
        re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
        0,
        _aws_secret_ok,
    ),
    Rule("api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    # A wallet's private key after a word that names it: 64 hex digits ("0x" or not) or a WIF
    # key (base58, 51-52 characters from 5, K, L; 9 or c on testnet).
    Rule(
        "crypto_key",
        re.compile(
            _first(
                "pPsSwW私密",
                r"(?:\b(?i:priv(?:ate)?[_\- ]?key|privkey|secret[_\- ]?key|wallet[_\- ]?key"
                r"|signing[_\- ]?key)s?\b|私钥|私鑰|密钥)"
                + _KEY_FOR
                + r"[\"'`]?(?P<v>(?:0x)?[0-9a-fA-F]{64}|[5KL9c][1-9A-HJ-NP-Za-km-z]{50,51})"
                r"(?![0-9A-Za-z])",
            )
        ),
        "v",
    ),
    # A wallet's recovery (BIP-39) phrase after a word that names it: twelve to twenty-four
    # words of 3-8 letters (the list's lengths), on one line or listed, numbered or not ("1.
    # witch 2. collapse ..."); or twelve or more Chinese characters apart by spaces (the Chinese
    # list). A cue is needed: twelve short words alone are ordinary text.
    Rule(
        "seed_phrase",
        re.compile(
            _first(
                "sSrRbBmMwW12助恢种",
                r"(?:\b(?i:(?:(?:secret\s+)?(?:seed|recovery|backup|mnemonic|wallet)[ \-]?"
                r"(?:phrase|words|seed)|mnemonic"
                r"|(?:12|24)[ \-]words?(?:\s+(?:phrase|seed|backup))?)s?)\b"
                r"|助记词|助記詞|恢复短语|种子短语)"
                + _KEY_FOR
                + rf"(?P<v>{_SEED_WORD}(?:{_SEED_GAP}{_SEED_WORD}){{11,23}}+"
                + rf"|{_HAN}(?:[ \u3000,，]++{_HAN}){{11,}}+)",
            )
        ),
        "v",
    ),
    # Two-factor backup and recovery codes, TOTP secrets: after a word that names them, a run of
    # codes (each with a digit, dash-grouped capitals, or base32 of 16 or more), listed on one
    # line or one a line, numbered or not. Prose after the cue ("backup codes are in the drawer")
    # holds no such code.
    Rule(
        "recovery_code",
        re.compile(
            _first(
                "2mMtTbBrRoOaAeEsS",
                r"\b(?i:(?:(?:2fa|mfa|two[ \-]factor|2[ \-]step|two[ \-]step|backup|recovery"
                r"|one[ \-]time|otp|totp|authenticator|emergency|security)[ \-]){1,3}"
                r"(?:codes?|keys?|secrets?))\b"
                + _KEY_FOR
                + rf"(?P<v>{_NUMBERED}{_CODE}(?:[\s,;]++{_NUMBERED}{_CODE})*+)",
            )
        ),
        "v",
        _codes_ok,
    ),
    # "<vendor> token X", "the API key X", "secret X": a word that names a key, then a long
    # token mixing letters and digits, with no "is" or ":" between them.
    Rule(
        "api_key",
        re.compile(
            _first(
                "apsdbrt",
                r"\b(?:(?:api|access|auth|private|personal|secret|deploy|bot|app|session|refresh"
                r"|service)[_\- ]?(?:key|token)s?|apikey|tokens?|secrets?)\b[ \t\"'`:=>\-–—]{1,5}"
                r"(?P<v>[A-Za-z0-9_\-./+=]{20,}+)",
            ),
            _I,
        ),
        "v",
        _mixed_token_ok,
    ),
    Rule("bearer_token", re.compile(r"\bBearer\s+(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)", _I), "v"),
    # A quoted value is the password, all of it: "password = 'correct horse battery staple'",
    # "my Netflix password was 'popcorn99' before I changed it" (the rest of the sentence
    # stays). An apostrophe between letters is inside it ("'I don't know 42'").
    Rule(
        "password",
        re.compile(
            _PASSWORD_WORD + _PASSWORD_FOR + r"(?:" + _ANNOUNCED + r"|" + _STATED + r"|\s+)"
            r"[\"'“‘](?P<v>(?:[^\"'“”‘’\n]|(?<=\w)['’](?=\w)){3,200})[\"'”’]",
            _I,
        ),
        "v",
        _password_ok,
    ),
    Rule(
        "password",
        re.compile(_PASSWORD_WORD + _PASSWORD_FOR + _ANNOUNCED + _PHRASE_VALUE, _I),
        "v",
        _announced_ok,
    ),
    Rule(
        "password",
        re.compile(_PASSWORD_WORD + _PASSWORD_FOR + _STATED + _PHRASE_VALUE, _I),
        "v",
        _stated_ok,
    ),
    # "password Tr0ub4dor&3", "my password? Tr0ub4dor&3", "pw, Tr0ub4dor&3": no verb or mark
    # that announces it, so only one word that reads as a password.
    Rule(
        "password",
        re.compile(
            # A mark is a separator only with a space after it: "#VZEC7" keeps its "#".
            _PASSWORD_WORD + r"(?:\s*[?,;.…!|/*#~]+\s+|\s+)(?![\"'“])" + _PASSWORD_VALUE,
            _I,
        ),
        "v",
        _password_shaped,
    ),
    # "pass" alone is also a bus pass or a mountain pass: one word, after "is" or a mark.
    Rule(
        "password",
        re.compile(
            r"\bpass\b(?:\s+(?:for|to|on)\s[^.\n:=]{1,30}?)?\s*(?:\bis\b|\bwas\b|[:=])\s*"
            + _PASSWORD_VALUE,
            _I,
        ),
        "v",
        _password_ok,
    ),
    # "log in with the password X", "use pw X", "enter passcode X": the verb says what X is.
    Rule(
        "password",
        re.compile(
            r"\b(?:with|using|use|enter|type|try|via)\s+(?:the\s+|my\s+|our\s+|a\s+)?"
            r"(?:new\s+|old\s+|temporary\s+|admin\s+)?" + _PASSWORD_WORD + r"\s+" + _PASSWORD_VALUE,
            _I,
        ),
        "v",
        _password_ok,
    ),
    # "creds: admin / X", "credentials admin:X", "login: root / X", "user/pass: bob/X".
    Rule(
        "password",
        re.compile(
            r"\b(?:creds?|credentials?|log ?in|user(?:name)?\s*/\s*pass(?:word)?)\b\s*[:=\-]?\s*"
            r"[\"']?[^\s/:\"']{1,64}[\"']?\s*[/:|]\s*" + _PASSWORD_VALUE,
            _I,
        ),
        "v",
        # After "creds: name /" the value is the password whatever it says ("correct").
        _long_enough,
    ),
    # "mi contraseña es X", "le mot de passe du wifi c'est X", "das Passwort lautet X",
    # "WLAN-Kennwort: X", "senha do email: X".
    Rule(
        "password",
        re.compile(
            _PASSWORD_WORD_INTL + r"(?:\s+(?:de|del|du|des|für|fur|vom|von|do|da|para)"
            r"\s[^.\n:=]{1,30}?)?\s*(?:\b(?:es|era|est|c'est|était|etait|ist|lautet|war|é)\b"
            r"|[:=])\s*" + _PASSWORD_VALUE,
            _I,
        ),
        "v",
        _password_ok,
    ),
    # "username jdoe password X", "login ops pw X", "user: bob, pass: X": the name, then the
    # password word, then the value.
    Rule(
        "password",
        re.compile(
            r"\b(?:user(?:name)?|login|account)\s*[:=]?\s*[\"']?[^\s\"']{1,64}[\"']?[,;]?\s+"
            r"(?:and\s+)?(?:pass[ -]?(?:word|wd|phrase|code)|passwd|pwd|pw|pass)\b\s*[:=]?\s*"
            + _PASSWORD_VALUE,
            _I,
        ),
        "v",
        _password_ok,
    ),
    # "postgres://app:X@db", "https://bob:X@host": the part between ':' and '@' of a URL.
    Rule(
        "password",
        re.compile(r"\b[a-z][a-z0-9+.\-]{1,15}://[^\s:/@]{1,64}:(?P<v>[^\s/@]{1,128})@", _I),
        "v",
    ),
    # "ssh admin:X@10.0.0.5", "root:X@db01": without a scheme only a value with a digit or
    # symbol counts ("note:bob@example.com" is an address, not credentials).
    Rule(
        "password",
        re.compile(
            r"(?<![\w.+%\-])(?!mailto:|sip:|tel:)[\w.+\-]{1,64}:(?P<v>[^\s:/@]{3,128})@(?=[\w\[])",
            _I,
        ),
        "v",
        _credential_ok,
    ),
    Rule(
        "password",
        re.compile(r"\bpin(?: code| number)?\s*(?:\bis\b|[:=])\s*(?P<v>\d{4,8})\b", _I),
        "v",
    ),
    # "密码是 abc 123", "wifi 密码: X", "密码一直是 X", "密码？X", "密码 -> X": to the clause's end.
    Rule(
        "password",
        re.compile(
            _ZH_PASSWORD
            + r"(?:[^，。,\n？?]{0,10}?(?:是|为|為|:|：|=|->|→)|\s*[？?])\s*"
            + _PHRASE_VALUE
        ),
        "v",
        _zh_password_ok,
    ),
    # "用密码abc123登录", "账号admin密码abc123", "口令 Tr0ub4dor": the value follows directly.
    Rule(
        "password",
        re.compile(_ZH_PASSWORD + r"\s*(?P<v>[A-Za-z0-9!@#$%^&*._+=~\-]{4,})"),
        "v",
    ),
    Rule(
        "api_key",
        re.compile(
            r"\b(?:api[_\- ]?key|apikey|access[_\- ]?token|auth[_\- ]?token|secret[_\- ]?key"
            r"|client[_\- ]?secret|aws_secret_access_key|token|secret)\b\s*(?:\bis\b|[:=])\s*"
            + _SECRET_VALUE,
            _I,
        ),
        "v",
        _generic_secret_ok,
    ),
    Rule(
        "api_key",
        re.compile(r"(?:密钥|秘钥|令牌|token)\s*(?:是|为|:|：|=)\s*(?P<v>[A-Za-z0-9_\-./+=]{8,})"),
        "v",
    ),
    Rule(
        "iban",
        # Compact or in groups of four, upper case as printed; a free run of letters would
        # swallow the words after the number ("NL91ABNA0417164300 for the salary").
        re.compile(
            r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?"
            r"(?![A-Za-z0-9])"
        ),
        0,
        iban_ok,
    ),
    Rule("cn_id", re.compile(r"(?<![\dA-Za-z])\d{17}[\dXx](?![\dA-Za-z])"), 0, cn_id_ok),
    # 4-4-4-4(-3), 4-4-4-3 (Amex typed in fours), 4-4-4-1..2 (13-14 digits) with any mix of
    # separators; then Amex/Diners 4-6-5 and 4-6-4. Luhn decides.
    Rule(
        "card",
        re.compile(
            rf"(?<![\d.\-])\d{{4}}(?:{_SEP}\d{{4}}){{2}}{_SEP}\d{{1,4}}(?:{_SEP}\d{{3}})?(?![\d])"
        ),
        0,
        luhn_ok,
    ),
    Rule(
        "card", re.compile(rf"(?<![\d.\-])\d{{4}}{_SEP}\d{{6}}{_SEP}\d{{4,5}}(?![\d])"), 0, luhn_ok
    ),
    Rule("card", re.compile(r"(?<![\d-])\d{13,19}(?![\d])"), 0, luhn_ok),
    # Any dash between the groups ("078–05–1120" from a word processor).
    Rule(
        "ssn",
        re.compile(
            rf"(?<![\d{_DASHES}])\d{{3}}[{_DASHES}]\d{{2}}[{_DASHES}]\d{{4}}(?![\d{_DASHES}])"
        ),
        0,
        _ssn_ok,
    ),
    # "330 77 9502", "330.77.9502", "330/77/9502": spaced forms only next to an SSN cue
    # (phone-like otherwise), with the card's separators.
    Rule(
        "ssn",
        re.compile(
            r"\b(?:ssn|social security(?: number| no\.?)?|social)\D{0,12}"
            rf"(?P<v>(?<!\d){_SSN_GROUPS})(?![\d])",
            _I,
        ),
        "v",
        _ssn_ok,
    ),
    Rule(
        "ssn",
        re.compile(r"\b(?:ssn|social security(?: number)?)\D{0,12}(?P<v>\d{9})(?!\d)", _I),
        "v",
        _ssn_ok,
    ),
    # Bank account numbers have no checksum to test: only next to a word that names them.
    Rule(
        "bank_account",
        re.compile(
            r"(?:\b(?:bank\s+)?(?:account|acct\.?|a/c)(?:\s+(?:number|no\.?|num|#))?"
            r"(?:\s+(?:is|was))?\s*[:#=]?\s*"
            r"|(?:银行账号|银行卡号|账号|帐号|账户|帳號)\s*(?:是|为|:|：)?\s*)"
            r"(?P<v>(?<![\d])\d(?:[ \-]?\d){5,19})(?![\d])",
            _I,
        ),
        "v",
    ),
    Rule(
        "bank_account",
        re.compile(
            r"\b(?:routing|aba|sort code|bsb)(?:\s+(?:number|no\.?|code))?(?:\s+is)?\s*[:#=]?\s*"
            r"(?P<v>\d{2}[ \-]?\d{2}[ \-]?\d{2}(?:\d{3})?)(?![\d])",
            _I,
        ),
        "v",
    ),
)

EMAIL = Rule(
    "email", re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
)

PHONES: tuple[Rule, ...] = (
    Rule(
        "phone",
        re.compile(
            r"(?<![0-9A-Za-z+])\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}"
            r"(?:[ .-]?\d{2,4}){1,3}(?!\d)"
        ),
    ),
    Rule("phone", re.compile(r"(?<![\d-])\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?![\d-])")),
    Rule("phone", re.compile(r"(?<!\d)1[3-9]\d{9}(?!\d)")),
)

# A card number next to its security code or expiry is enough to charge it: never stored.
CARD_RISK_CONTEXT = re.compile(
    r"\b(?:cvv2?|cvc2?|csc|security code|exp(?:iry|iration|ires)?|valid (?:thru|through))\b"
    r"|\b(?:0[1-9]|1[0-2])\s*/\s*(?:\d{2}|20\d{2})\b|安全码|有效期|验证码",
    _I,
)
