"""Secrets as users type them, for tests that look for raw secrets at rest.

Each sample is (kind, the raw secret, a sentence carrying it). The sentences vary the phrasing
and position; `recognised()` keeps the ones the privacy filter in use redacts, so the tests
follow the filter as its patterns widen and never assert on a secret it does not know.
"""

from __future__ import annotations

import base64

from memory.gating.privacy import PrivacyFilter

_B64_KEY = base64.b64encode(b"sk-live-Vb7Nm2Qw9Er4Ty6Ui1Op3As8Df").decode()
_HEX_PASSWORD = b"Db password: Kestrel#5510".hex()
# Pasted with no-break spaces or typographic dashes between the groups; a wallet's seed phrase.
_NBSP_CARD = "\u00a0".join(["4111", "1111", "1111", "1111"])
_DASH_CARD = "\u2013".join(["5500", "0055", "5555", "5559"])
_SEED = "witch collapse practice feed shame open despair creek road again ice least"
_SPELLED_TOKEN = " ".join("ghp_T5r6E7w8Q9a0S1d2F3g4H5j6K7l8Z9x0C1v2")

SAMPLES: list[tuple[str, str, str]] = [
    ("card", "4111 1111 1111 1111", "my visa is 4111 1111 1111 1111, use it for the hotel"),
    ("card", "5500-0055-5555-5559", "Card number 5500-0055-5555-5559 please"),
    ("card", "4242424242424242", "charge 4242424242424242 for the order"),
    ("card", "378282246310005", "amex 378282246310005 is the company card"),
    ("card", "6011000990139424", "我的卡号是6011000990139424"),
    ("card_cvv", "4000 0566 5566 5556", "card 4000 0566 5566 5556 exp 12/29 cvv 123"),
    ("card", _NBSP_CARD, f"my visa {_NBSP_CARD}, exp 09/27"),
    ("card", _DASH_CARD, f"card {_DASH_CARD} for the hotel"),
    ("ssn", "123-45-6789", "my SSN is 123-45-6789"),
    ("ssn", "219-09-9999", "social security number: 219-09-9999, keep it safe"),
    ("cn_id", "11010519491231002X", "身份证号 11010519491231002X"),
    ("password", "Tr0ub4dor&3x", "my password is Tr0ub4dor&3x"),
    ("password", "hunter2hunter2", "Password: hunter2hunter2"),
    ("password", "s3cr3t-Pa55", "the wifi password is s3cr3t-Pa55 by the way"),
    ("password", "CorrectHorse99", "密码是 CorrectHorse99"),
    ("password", "letmein!2024", "pwd=letmein!2024"),
    ("password", "new york yankees 1998", "my password is new york yankees 1998"),
    ("password", "Tr0ub4dor&3!", "my wifi password - Tr0ub4dor&3!"),
    ("seed_phrase", _SEED, f"my seed phrase is {_SEED}"),
    ("recovery_code", "8473-2918 3391-0042", "2FA backup codes: 8473-2918 3391-0042"),
    ("api_key", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
     "use sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD as the OpenAI key"),
    ("api_key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
     "anthropic key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"),
    ("github_token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
     "my GitHub token is ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("aws_key", "AKIAIOSFODNN7EXAMPLE", "aws access key AKIAIOSFODNN7EXAMPLE for the bucket"),
    ("api_key", "glpat-Xk3vT9qLm2Rw8Zp4Yn6B", "my GitLab token glpat-Xk3vT9qLm2Rw8Zp4Yn6B for CI"),
    ("api_key", "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",
     "huggingface token 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"),
    ("slack_token", "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx",
     "slack bot token xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx"),
    ("jwt",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "here is my session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
     "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("bearer_token", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg",
     "Authorization: Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg"),
    ("private_key", "MIIEowIBAAKCAQEAx3kQ9rT7bW2pL5mN8vC4jH6gF1dS0aZ",
     "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx3kQ9rT7bW2pL5mN8vC4jH6gF1dS0aZ\n"
     "-----END RSA PRIVATE KEY-----"),
    ("email", "zed.quill@example.org", "write to zed.quill@example.org about it"),
    ("phone", "+1 415 555 0132", "call me on +1 415 555 0132 tomorrow"),
    ("phone", "13812345678", "我的手机号是13812345678"),
    # Disguised: encoded, spelled out, split by invisible characters, other languages.
    ("disguised", _B64_KEY, f"the prod key, base64: {_B64_KEY}"),
    ("disguised", _HEX_PASSWORD, f"hex dump {_HEX_PASSWORD} from the config"),
    ("disguised", _SPELLED_TOKEN, f"dictating it: {_SPELLED_TOKEN}"),
    ("disguised", "AKIA\u2060ZX4CV6BN8ML2KJ5H", "bucket id AKIA\u2060ZX4CV6BN8ML2KJ5H for backups"),
    ("disguised", "Jacaranda#4420", "mi contraseña es Jacaranda#4420"),
    ("disguised", "Hirondelle77", "le mot de passe du NAS : Hirondelle77"),
    ("disguised", "Kastanie!909", "Das Kennwort lautet Kastanie!909"),
    ("disguised", "Raven_0815", "creds - backup / Raven_0815"),
    ("disguised", "Gl4cier!x", "mongodb://ops:Gl4cier!x@10.9.8.7/admin"),
]  # fmt: skip


def recognised(privacy: PrivacyFilter | None = None) -> list[tuple[str, str, str]]:
    """The samples whose secret the filter removes from its sentence."""
    privacy = privacy or PrivacyFilter()
    return [s for s in SAMPLES if s[1] not in privacy.clean(s[2])]


__all__ = ["SAMPLES", "recognised"]
