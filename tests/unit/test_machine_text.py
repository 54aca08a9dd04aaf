"""Pasted machine text: told from prose by its shape, summed up in one memory, bounded."""

from __future__ import annotations

import time

import pytest

from memory.gating.decision import GateDecision, GatePolicy
from memory.gating.ingest.pastes import (
    MAX_DROP_EVENTS,
    MAX_MEMORIES_PER_MESSAGE,
    MAX_MEMORIES_PER_PASTE,
    bounded_drops,
)
from memory.gating.ingest.write_back import _rules_gate_all
from memory.gating.machine_text import (
    MAX_SCAN_CHARS,
    is_machine_line,
    is_machine_text,
    split_pastes,
)
from memory.gating.privacy import PrivacyFilter
from memory.storage.store import AuditEvent
from memory.types import MemoryKind
from tests.support.pastes import (
    CHINESE_PARAGRAPH,
    FACT_LIST,
    PASTES,
    PROSE_PARAGRAPH,
    TRACEBACK,
    application_log,
)

EXPECTED_KIND = {
    "log": "log",
    "traceback": "traceback",
    "json": "JSON document",
    "sql": "SQL script",
    "yaml": "config file",
    "ini": "config file",
    "code": "code listing",
    "csv": "table",
    "repeated": "repeated lines",
}
PRIVACY = PrivacyFilter()


def _gate(text: str, *, explicit: bool = False) -> list[tuple[str, GateDecision]]:
    return _rules_gate_all(
        text,
        role="user",
        policy=GatePolicy(),
        privacy=PRIVACY,
        context=None,
        reply=None,
        explicit=explicit,
    )


@pytest.mark.parametrize("name", sorted(PASTES))
def test_each_paste_class_is_one_paste_of_its_kind(name: str) -> None:
    parts = split_pastes(PASTES[name])
    assert is_machine_text(PASTES[name])
    assert [p.kind for p in parts.pastes] == [EXPECTED_KIND[name]]
    assert parts.prose == ""


@pytest.mark.parametrize("text", [PROSE_PARAGRAPH, CHINESE_PARAGRAPH, FACT_LIST])
def test_prose_is_not_machine_text(text: str) -> None:
    parts = split_pastes(text)
    assert parts.pastes == () and not is_machine_text(text)
    assert parts.prose == text.strip()
    assert not any(is_machine_line(line) for line in text.splitlines())


def test_prose_around_a_paste_stays_prose_in_english_and_chinese() -> None:
    lesson = "This failed because the port was taken. Always check the port first."
    text = f"Here is last night's log:\n{application_log(40)}\n\n{lesson}"
    parts = split_pastes(text)
    assert [p.kind for p in parts.pastes] == ["log"]
    assert parts.prose.split("\n") == ["Here is last night's log:", "", lesson]

    chinese = "这是昨天的错误日志，端口被占用了。以后部署前一定先检查端口。"
    parts = split_pastes(f"{chinese}\n{application_log(30)}")
    assert parts.prose == chinese and [p.kind for p in parts.pastes] == ["log"]


def test_a_fenced_block_is_a_paste_whatever_it_holds() -> None:
    text = "Why does this crash?\n```\n" + TRACEBACK + "\n```\nI only changed the parser."
    parts = split_pastes(text)
    assert [p.kind for p in parts.pastes] == ["traceback"]
    assert parts.prose == "Why does this crash?\nI only changed the parser."
    parts = split_pastes("Some notes:\n~~~\nbuy milk\ncall mum\n~~~")
    assert len(parts.pastes) == 1 and parts.prose == "Some notes:"


def test_one_code_like_line_in_prose_is_not_a_paste() -> None:
    text = "I always run `pip install -e .` before testing.\nMy editor is Vim."
    assert split_pastes(text).pastes == ()


def test_the_account_counts_lines_names_the_error_and_is_short() -> None:
    log = split_pastes(PASTES["log"]).pastes[0]
    account = log.describe(PRIVACY.clean)
    assert account.startswith("pasted a log of 900 lines (")
    assert "connection to 10.2.0.15:5432 refused" in account
    assert len(account) < 200
    trace = split_pastes(TRACEBACK).pastes[0].describe(PRIVACY.clean)
    assert "ValueError: invalid literal" in trace
    repeated = split_pastes(PASTES["repeated"]).pastes[0].describe(PRIVACY.clean)
    assert repeated == "pasted the same line 400 times: Retrying request to upstream service..."


def test_a_secret_in_a_paste_is_redacted_before_the_excerpt_is_cut() -> None:
    key = "sk_live_51HxY2aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    env = f"STRIPE_SECRET_KEY={key}\nDEBUG=false\nPORT=8080\nWORKERS=4"
    decided = _gate(env)
    [(_, decision)] = decided
    assert decision.keep and key not in decision.content
    assert "sk_live" not in decision.content
    # A long first line: the excerpt is cut after redaction, never through a secret.
    long = f"ERROR payment call failed {'x' * 90} key={key}\n" + application_log(10)
    [(_, decision)] = _gate(long)
    assert "sk_live" not in decision.content


@pytest.mark.parametrize("name", sorted(PASTES))
@pytest.mark.parametrize("explicit", [False, True])
def test_a_paste_is_one_episode_never_a_rule(name: str, explicit: bool) -> None:
    decided = _gate(PASTES[name], explicit=explicit)
    kept = [d for _, d in decided if d.keep]
    assert len(kept) == 1
    [account] = kept
    assert account.kind is MemoryKind.EPISODIC and account.trust == "low"
    assert account.content.startswith("pasted ")


def test_a_lesson_stated_around_a_paste_is_still_judged() -> None:
    lesson = "This failed because the port was taken — always check the port first."
    text = f"{lesson}\n```\n{application_log(60)}\n```"
    kept = [d for _, d in _gate(text) if d.keep]
    assert len(kept) == 2
    assert kept[0].content == lesson and kept[0].kind is not MemoryKind.EPISODIC
    assert kept[1].content.startswith("pasted a log of 60 lines")


def test_plain_prose_is_gated_as_before() -> None:
    kept = [d for _, d in _gate(FACT_LIST) if d.keep]
    assert [d.content for d in kept] == FACT_LIST.splitlines()
    zh = [d for _, d in _gate(CHINESE_PARAGRAPH) if d.keep]
    assert len(zh) >= 3


def test_every_message_is_bounded() -> None:
    facts = "\n".join(f"My cousin number {n} lives in town {n} of Norway." for n in range(30))
    decided = _gate(facts)
    kept = [d for _, d in decided if d.keep]
    assert len(kept) == MAX_MEMORIES_PER_MESSAGE
    assert any("past the 12 memories" in d.reason for _, d in decided)
    prose = " ".join(f"I had lunch with my friend Ana on day {n} of May." for n in range(8))
    text = f"{prose}\n{application_log(20)}"
    kept = [d for _, d in _gate(text) if d.keep]
    assert len(kept) == MAX_MEMORIES_PER_PASTE
    assert kept[-1].content.startswith("pasted a log")  # the paste's account always fits


def test_drop_events_are_collapsed() -> None:
    drops = [AuditEvent(None, "gate_drop", "noise", {"digest": f"{i:016x}"}) for i in range(50)]
    kept = bounded_drops(drops)
    assert len(kept) == MAX_DROP_EVENTS
    assert kept[-1].detail["count"] == 50 - (MAX_DROP_EVENTS - 1)
    assert bounded_drops(drops[:2]) == drops[:2]


@pytest.mark.parametrize(
    "hostile",
    [
        "(" + " " * 60_000 + "x",
        "a" * 200_000,
        "\n" * 64_000,
        "x = (" * 12_000,
        "#" * 64_000,
        ("ab," * 20_000 + "\n") * 3,
        '  File "' + "a" * 60_000,
        "2026-01-01 00:00" + ":0" * 30_000,
    ],
)
def test_detection_is_linear_and_bounded(hostile: str) -> None:
    started = time.perf_counter()
    parts = split_pastes(hostile)
    assert time.perf_counter() - started < 1.0
    assert len(parts.prose) <= MAX_SCAN_CHARS


# Formats the fixtures above do not cover: the detector reads shapes, not the examples.
OTHER_PASTES = {
    "nginx": "\n".join(
        f"2024/03/12 10:11:{i % 60:02d} [error] 1234#0: *{i} connect() failed (111: Connection "
        f"refused) while connecting to upstream, client: 10.0.0.{i % 9}, server: api"
        for i in range(20)
    ),
    "java": """Exception in thread "main" java.lang.NullPointerException: Cannot invoke "x()"
	at com.acme.orders.OrderService.total(OrderService.java:42)
	at com.acme.orders.OrderController.create(OrderController.java:18)
	at java.base/java.lang.Thread.run(Thread.java:833)
Caused by: java.io.IOException: stream closed
	... 3 more""",
    "go": """panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.process(...)
	/app/main.go:27
main.main()
	/app/main.go:12 +0x1d
exit status 2""",
    "node": """TypeError: Cannot read properties of undefined (reading 'map')
    at renderList (/app/src/list.js:14:22)
    at Object.<anonymous> (/app/src/index.js:5:1)
    at Module._compile (node:internal/modules/cjs/loader:1256:14)""",
    "toml": """[package]
name = "orders"
version = "0.3.1"
edition = "2021"

[dependencies]
serde = { version = "1", features = ["derive"] }
tokio = "1.36"
""",
    "dotenv": "DATABASE_URL=postgres://db/app\nREDIS_URL=redis://cache:6379\nLOG_LEVEL=debug\nFEATURE_X=true",
    "js": """export function total(lines) {
  return lines
    .map((l) => l.qty * l.price)
    .reduce((a, b) => a + b, 0);
}
""",
    "rust": """fn main() {
    let v = vec![1, 2, 3];
    for x in &v {
        println!("{}", x);
    }
}""",
    "shell": """$ docker compose up -d
[+] Running 3/3
 ✔ Container app-db-1     Started
 ✔ Container app-cache-1  Started
 ✔ Container app-web-1    Started
$ curl localhost:8080/healthz
{"status":"ok"}""",
    "diff": """diff --git a/app.py b/app.py
index 3b18e51..a1d2f3c 100644
--- a/app.py
+++ b/app.py
@@ -1,4 +1,4 @@
-import os
+import sys
 def main():
-    print(os.name)
+    print(sys.argv)""",
    "html": """<!DOCTYPE html>
<html>
<head><title>Orders</title></head>
<body>
  <div class="list"></div>
</body>
</html>""",
    "kubectl": """NAME                      READY   STATUS             RESTARTS   AGE
web-7d9f8b6c5-abcde       1/1     Running            0          3d
web-7d9f8b6c5-fghij       0/1     CrashLoopBackOff   12         3d
worker-5c6d7e8f9-klmno    1/1     Running            2          1d""",
    "md_table": """| name | qty | price |
|------|-----|-------|
| apple | 3 | 1.20 |
| pear | 1 | 0.80 |""",
    "tsv": "name\tqty\tprice\napple\t3\t1.20\npear\t1\t0.80\nplum\t9\t0.10",
    "apache": "\n".join(
        f'10.0.0.{i} - - [12/Mar/2024:10:11:{i:02d} +0000] "GET /index.html HTTP/1.1" 200 512'
        for i in range(10)
    ),
}
OTHER_PROSE = {
    "poem": "\n".join(
        [
            "The fog comes",
            "on little cat feet.",
            "It sits looking",
            "over harbor and city",
            "on silent haunches",
            "and then moves on.",
        ]
    ),
    "refrain": "\n".join(
        [
            "Row, row, row your boat,",
            "Gently down the stream.",
            "Merrily, merrily, merrily, merrily,",
            "Life is but a dream.",
        ]
    ),
    "agenda": "\n".join(
        [
            "Mar 12 10:30 dentist",
            "Mar 14 09:00 school play for Mira",
            "Mar 20 18:00 dinner with Tom's parents",
        ]
    ),
    "shopping": "- eggs\n- oat milk\n- 2 lemons\n- bread (sourdough)\n- coffee beans",
    "recipe": "\n".join(
        [
            "1. Preheat the oven to 200C.",
            "2. Chop the onions and garlic.",
            "3. Fry them in olive oil for 5 minutes.",
            "4. Add the tomatoes and simmer.",
        ]
    ),
    "bullets_facts": "\n".join(
        [
            "- I'm allergic to peanuts",
            "- My son is called Leo (he's 7)",
            "- I work from home on Fridays",
            "- My wife's birthday is 3 June",
        ]
    ),
    "email": "\n".join(
        [
            "Hi team,",
            "",
            "Quick update: the launch moves to Thursday.",
            "Please update your calendars.",
            "",
            "Thanks,",
            "Dana",
        ]
    ),
    "zh_list": "我叫王芳。\n我住在成都。\n我对海鲜过敏。\n我每周三去游泳。",
    "keyvals_facts": "Name: Priya Raman\nAge: 34\nCity: Leeds\nJob: nurse",
    "schedule": "09:00 standup\n10:30 dentist\n14:00 call with mum",
}


@pytest.mark.parametrize("name", sorted(OTHER_PASTES))
def test_other_machine_formats_are_pastes(name: str) -> None:
    parts = split_pastes(OTHER_PASTES[name])
    assert len(parts.pastes) == 1 and parts.machine_share >= 0.9, parts


@pytest.mark.parametrize("name", sorted(OTHER_PROSE))
def test_lists_poems_agendas_and_recipes_are_prose(name: str) -> None:
    assert split_pastes(OTHER_PROSE[name]).pastes == ()
