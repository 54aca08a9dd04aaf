"""A password is redacted whole, however it is announced, and talk about passwords is kept.

Before, the value was one token after "is", "was", ":" or "=" only: a passphrase lost its first
word ("my password is new york yankees 1998" kept "york yankees 1998"), a first word such as
"the", "I" or "correct" kept all of it, and "password - X", "password -> X", "my password? X",
"password X" and "my password has always been X" kept the password (sec3 finding 2). Now the
value runs to the end of its clause, any of those marks announce it, and the list of words that
are not passwords ("the password is wrong") applies only to a one-word value.
"""

from __future__ import annotations

import pytest

from memory.gating.gate import gate
from memory.gating.privacy import PrivacyFilter
from memory.gating.privacy.splits import without_split_secrets

FILTER = PrivacyFilter()

# (text, the password in it), the report's shapes first.
PASSPHRASES = [
    ("my password is new york yankees 1998", "new york yankees 1998"),
    ("my wifi password is the quick brown fox 42", "the quick brown fox 42"),
    ("password: correct horse battery staple", "correct horse battery staple"),
    ("my password is: I love Paris 2019!", "I love Paris 2019"),
    ("password = 'correct horse battery staple'", "correct horse battery staple"),
    ("password - Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("password -> Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("my password? Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("password Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("pw Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("my password has always been Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("my password has been blue moon 77 for years", "blue moon 77"),
    ("password of the wifi is Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("the wifi password at the cabin is marmalade fox 42.", "marmalade fox 42"),
    ("my password is correct horse battery staple", "correct horse battery staple"),
    ("the passphrase is purple monkey dishwasher", "purple monkey dishwasher"),
    ("my password is still hunter2", "hunter2"),
    ("my password was changed to Hunter2!", "Hunter2"),
    ("the password \u2014 sunny day 2024 \u2014 is for the guests", "sunny day 2024"),
    ('password: "I don\'t know 42"', "I don't know 42"),
    ("the password is stored in the vault and my bank password is hunter2x", "hunter2x"),
    ("Password:\nnew york yankees 1998", "new york yankees 1998"),
    ("密码是 new york 1998，别忘了", "new york 1998"),
    ("我的密码一直是 Dragon#2023", "Dragon#2023"),
    ("密码？abc123", "abc123"),
    ("密码 -> qwer1234", "qwer1234"),
    ("口令：芝麻开门", "芝麻开门"),
]


@pytest.mark.parametrize(("text", "secret"), PASSPHRASES, ids=[t for t, _ in PASSPHRASES])
def test_a_password_is_redacted_whole(text: str, secret: str) -> None:
    result = FILTER.redact(text)
    assert "password" in result.kinds, result.text
    for word in secret.split():
        if len(word) >= 3 and word.lower() not in ("the", "new", "for", "don't"):
            assert word not in result.text, (word, result.text)


def test_the_rest_of_the_sentence_stays_when_the_value_is_quoted() -> None:
    text = "My Netflix password was 'popcorn99' before I changed it"
    assert FILTER.clean(text) == "My Netflix password was '[REDACTED:password]' before I changed it"


def test_the_gate_stores_no_passphrase() -> None:
    for text in (
        "Remember my home wifi password - Tr0ub4dor&3",
        "Remember: the server password = 'correct horse battery staple'",
        "Remember that my password is new york yankees 1998",
    ):
        decision = gate(text, role="user")
        for word in ("Tr0ub4dor", "horse", "battery", "staple", "york", "yankees", "1998"):
            assert word not in decision.content, (text, decision.content)


def test_a_passphrase_sent_after_its_announcement_is_redacted_in_its_own_message() -> None:
    # Joined across messages, the clause ends with the message that holds it.
    out = without_split_secrets(["my password is", "new york yankees 1998", "ok, see you"])
    assert out == ["my password is", "[REDACTED:password]", "ok, see you"]


@pytest.mark.parametrize(
    "text",
    [
        "my password manager is Bitwarden",
        "Add a password manager like Bitwarden to the onboarding doc.",
        "the password reset email never arrived",
        "Reset your password from the settings page.",
        "I forgot my password again.",
        "The password is wrong, try again.",
        "the password is the same as before",
        "the password is too short, only 6 characters",
        "my password is 12 characters long",
        "the password is stored in 1Password",
        "Your password is required to continue.",
        "the password is case sensitive",
        "the password is correct but login still fails",
        "my password has been compromised",
        "The password was reset to the default",
        "the password for the account is disabled",
        "I changed my password 3 times this year",
        "Password: at least 8 characters",
        "password: see the wiki page",
        "password, username and email are required",
        "what's my password? I forgot it",
        "the password-protected file is on the drive",
        "the wifi password is on the fridge",
        "my bus pass is 12 dollars a month",
        "密码学是一门很有意思的学科",
        "现代密码学的核心是对称加密",
        "你的密码是什么？",
        "密码是错的，请重试",
        "密码强度是很重要的",
        "密码锁是坏的",
        "我忘记密码了，怎么重置？",
    ],
)
def test_talk_about_passwords_is_left_alone(text: str) -> None:
    assert FILTER.clean(text) == text
    assert gate(text, role="user").findings == ()
