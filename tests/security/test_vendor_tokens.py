"""Vendors' tokens are redacted by their documented shape, with or without a word before them.

Before, only a handful of prefixes were known (`sk-`, `ghp_`, `xox?-`, `AIza`, `AKIA`), and any
other token needed "token is" or "key:" before it: "my GitLab token glpat-…" was stored as
written (sec3 finding 2). Each shape below is a random token of the vendor's format (as secret
scanners such as gitleaks list them), said the way people say it.
"""

from __future__ import annotations

import random
import string

import pytest

from memory.gating.gate import gate
from memory.gating.privacy import PrivacyFilter

FILTER = PrivacyFilter()
RNG = random.Random(20240611)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def _r(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


TOKENS = {
    "gitlab pat": "glpat-" + _r(20, ALNUM + "-_"),
    "gitlab deploy": "gldt-" + _r(20),
    "gitlab runner": "glrt-" + _r(20),
    "gitlab pipeline trigger": "glptt-" + _r(40, HEX),
    "hugging face": "hf_" + _r(34, string.ascii_letters),
    "npm": "npm_" + _r(36),
    "sendgrid": "SG." + _r(22, ALNUM + "-_") + "." + _r(43, ALNUM + "-_"),
    "digitalocean pat": "dop_v1_" + _r(64, HEX),
    "digitalocean oauth": "doo_v1_" + _r(64, HEX),
    "twilio key": "SK" + _r(32, HEX),
    "twilio account": "AC" + _r(32, HEX),
    "slack app": "xapp-1-A" + _r(10, string.ascii_uppercase + string.digits) + "-"
    + _r(13, string.digits) + "-" + _r(64, HEX),
    "slack config": "xoxe-1-" + _r(40, ALNUM),
    "slack webhook": "https://hooks.slack.com/services/T" + _r(10, string.ascii_uppercase)
    + "/B" + _r(10, string.ascii_uppercase) + "/" + _r(24),
    "stripe restricted": "rk_live_" + _r(24),
    "stripe secret": "sk_live_" + _r(24),
    "stripe prod": "sk_prod_" + _r(24),
    "shopify": "shpat_" + _r(32, HEX),
    "pypi": "pypi-AgEIcHlwaS5vcmc" + _r(60, ALNUM + "-_"),
    "groq": "gsk_" + _r(52),
    "replicate": "r8_" + _r(37),
    "databricks": "dapi" + _r(32, HEX),
    "linear": "lin_api_" + _r(40),
    "postman": "PMAK-" + _r(24, HEX) + "-" + _r(34, HEX),
    "pulumi": "pul-" + _r(40, HEX),
    "vault": "hvs." + _r(95, ALNUM + "-_"),
    "doppler": "dp.pt." + _r(43),
    "notion": "ntn_" + _r(46),
    "grafana": "glsa_" + _r(32) + "_" + _r(8, HEX),
    "xai": "xai-" + _r(80),
    "perplexity": "pplx-" + _r(48),
    "langsmith": "lsv2_pt_" + _r(32, HEX) + "_" + _r(10, HEX),
    "webhook secret": "whsec_" + _r(32),
    "age": "AGE-SECRET-KEY-1" + _r(58, string.ascii_uppercase + string.digits),
    "square": "sq0atp-" + _r(22, ALNUM + "-_"),
    "rubygems": "rubygems_" + _r(48, HEX),
    "planetscale": "pscale_tkn_" + _r(43),
    "google oauth": "ya29." + _r(60, ALNUM + "-_"),
    "google client secret": "GOCSPX-" + _r(28, ALNUM + "-_"),
    "supabase": "sbp_" + _r(40, HEX),
}  # fmt: skip

PHRASES = [
    "my {name} token {token}",
    "{token}",
    "here it is: {token} (don't share it)",
    "Remember the {name} credential {token} for the CI job",
    "export KEY={token}",
]


@pytest.mark.parametrize("name", sorted(TOKENS))
def test_each_vendor_shape_is_redacted(name: str) -> None:
    token = TOKENS[name]
    for phrase in PHRASES:
        text = phrase.format(name=name, token=token)
        result = FILTER.redact(text)
        assert token not in result.text, (name, result.text)
        assert token[-12:] not in result.text, (name, result.text)
        assert {"api_key", "slack_token"} & set(result.kinds), result.kinds


@pytest.mark.parametrize("name", ["gitlab pat", "hugging face", "npm", "sendgrid", "twilio key"])
def test_the_gate_stores_no_vendor_token(name: str) -> None:
    token = TOKENS[name]
    decision = gate(f"Remember my {name} token {token} for the deploy job", role="user")
    assert token not in decision.content and token[-12:] not in decision.content
    assert "[REDACTED:api_key]" in decision.content or not decision.keep


@pytest.mark.parametrize(
    "text",
    [
        "the gitlab token glpat-" + "a1B2c3D4e5F6g7H8i9J0",
        "huggingface token: hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        "the api key abc123def456ghi789jkl0mno",
        "session token 3f2a9c4e-1b7d-4e8f-a6c5-9d0b2e4f6a81",
        "my deploy key -> Zx9Lm2Qw8Er4Ty6Ui1Op3As",
    ],
)
def test_a_token_word_then_a_long_mixed_token_is_redacted(text: str) -> None:
    token = text.split()[-1]
    result = FILTER.redact(text)
    assert token not in result.text and "api_key" in result.kinds, result.text


@pytest.mark.parametrize(
    "text",
    [
        "the token expired yesterday, log in again",
        "use a token bucket to rate limit the API",
        "tokens are counted per request and per response",
        "the access token lifetime is 3600 seconds",
        "a secret santa gift exchange on Friday",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the token refresh",
        "SKU SK-1234 is out of stock",
        "the hf_hub_download helper caches the model",
        "install it with npm_config_registry set",
        "The GOCSPX prefix marks a Google client secret.",
    ],
)
def test_ordinary_talk_about_tokens_is_left_alone(text: str) -> None:
    assert FILTER.clean(text) == text
