"""The structure redactor filters each string once, and remembers no secret while doing so."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory.gating.privacy import PrivacyFilter
from memory.gating.privacy.deep import StructureRedactor

CARD = "4111 1111 1111 1111"
PASSWORD = "hunter2hunter2"


class CountingFilter(PrivacyFilter):
    """The default filter, counting the texts it is asked to clean."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def clean(self, text: str) -> str:
        self.seen.append(text)
        return super().clean(text)


def test_a_string_is_filtered_once_and_its_redacted_form_is_known_clean() -> None:
    privacy = CountingFilter()
    redactor = StructureRedactor(privacy)
    raw = f"my card is {CARD}, thanks"
    cleaned = redactor.text(raw)
    assert CARD not in cleaned and "[REDACTED:card]" in cleaned
    calls = len(privacy.seen)  # the text, then its redacted form once (is it stable?)
    assert redactor.text(raw) == cleaned
    # The next turn loads the redacted text from the checkpoint and saves it again: no filter.
    assert redactor.text(cleaned) == cleaned
    # A copy of the same text (a new object, as a reload makes) is remembered too.
    assert redactor.text("".join(list(raw))) == cleaned
    assert len(privacy.seen) == calls


def test_an_unchanged_message_is_returned_as_it_is() -> None:
    redactor = StructureRedactor()
    message = HumanMessage("the deploy moved to thursday", id="m1")
    assert redactor.value(message) is message
    # A reloaded copy (equal text, new objects) is not copied either.
    again = HumanMessage("the deploy moved to " + "thursday", id="m1")
    assert redactor.value(again) is again


def test_an_old_message_edited_in_place_or_replaced_is_redacted_again() -> None:
    redactor = StructureRedactor()
    old = HumanMessage("my locker is on the second floor", id="m1")
    history = [old, AIMessage("noted", id="m2")]
    assert redactor.value(history) is history
    # Edited in place: same object, same id, new text with a secret.
    old.content = f"my locker is on the second floor, password: {PASSWORD}"
    assert PASSWORD not in str(redactor.value(history))
    # Replaced under the same id (how a state update edits a message), or replayed by a client.
    history[0] = HumanMessage(f"card {CARD}", id="m1")
    assert CARD not in str(redactor.value(history))
    assert [m.id for m in redactor.value(history)] == ["m1", "m2"]


def test_the_cache_holds_no_raw_secret() -> None:
    redactor = StructureRedactor()
    secrets = [f"password: {PASSWORD}{i}" for i in range(50)]
    for text in secrets:
        assert PASSWORD not in redactor.text(f"note {text}")
    held = [v for v in vars(redactor)["_cache"].values() if v is not None]
    assert held and all(PASSWORD not in v for v in held)
    assert all(isinstance(k, bytes) and len(k) == 16 for k in vars(redactor)["_cache"])


class MarkerFilter(PrivacyFilter):
    """A fast stand-in for the bound test: removes the word "secret" and nothing else."""

    def clean(self, text: str) -> str:
        return text.replace("secret", "[REDACTED]")


def test_the_cache_is_bounded_by_characters() -> None:
    redactor = StructureRedactor(MarkerFilter())
    # 2,000 different 10,000-character texts that each change: 20 million characters seen.
    for i in range(2_000):
        assert "secret" not in redactor.text(f"{i} secret " + "x" * 10_000)
    held = sum(len(v or "") for v in vars(redactor)["_cache"].values())
    assert 0 < held <= 4_000_000
    assert vars(redactor)["_chars"] == held


def test_a_tools_structured_result_and_refused_calls_are_redacted_too() -> None:
    redactor = StructureRedactor()
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
    result = ToolMessage(
        "done", tool_call_id="c1", name="finish_task",
        artifact={"op": "finish", "outcome": f"booked with card {CARD} and key {key}"},
    )  # fmt: skip
    refused = AIMessage(
        "", invalid_tool_calls=[{"name": "scratchpad_write", "args": f"{{'note': '{CARD}'}}",
                                 "id": "c2", "error": "bad json", "type": "invalid_tool_call"}],
    )  # fmt: skip
    out = redactor.value([result, refused])
    assert CARD not in str(out[0].artifact) and key not in str(out[0].artifact)
    assert out[0].artifact["op"] == "finish" and "[REDACTED:card]" in out[0].artifact["outcome"]
    assert CARD not in str(out[1].invalid_tool_calls)
