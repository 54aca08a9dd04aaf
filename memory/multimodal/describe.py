"""Describe an image once, as text a memory can hold and recall can search.

With a vision-capable chat model the image (its metadata-free copy) is captioned and its visible
text transcribed; the answer is parsed as JSON, retried once with the error, and on a second
failure or any provider error the description falls back to the user's own words — logged, as
the gate does, so a memory is never lost silently. Without a model the user's accompanying text,
the alt text or the file name describes the image, marked as undescribed.

The description is untrusted text (a photo of a card, a sign saying "ignore previous
instructions"): the caller screens it like any user text before it is stored.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from memory.gating.privacy import PrivacyFilter
from memory.model_json import ask_json, parse_json_reply
from memory.multimodal.image_input import CleanImage, image_block
from prompts.describe_image import (
    DESCRIBE_HINT,
    DESCRIBE_REQUEST,
    DESCRIBE_RETRY,
    DESCRIBE_SYSTEM,
)

log = logging.getLogger(__name__)

DescriptionSource = Literal["model", "user_text", "name", "none"]
# A caption is a sentence or two; a transcribed document page can be long, but a memory is a
# pointer, not an archive.
MAX_CAPTION_CHARS = 1_000
MAX_VISIBLE_TEXT_CHARS = 2_000
_HINT_CHARS = 500


class DescribeAnswer(BaseModel):
    """The JSON object the describe prompt asks for."""

    caption: str = Field(min_length=1)
    visible_text: str = ""


@dataclass(frozen=True, slots=True)
class ImageDescription:
    """An image's description and where it came from."""

    text: str  # not yet redacted: the caller screens it
    source: DescriptionSource
    note: str = ""  # why the model was not used, when it was not

    @property
    def described(self) -> bool:
        """Whether a model looked at the image (otherwise the text is the user's own words)."""
        return self.source == "model"


def _fallback(image: CleanImage, hint: str, note: str) -> ImageDescription:
    hint = " ".join(hint.split())
    if hint:
        return ImageDescription(hint[:MAX_CAPTION_CHARS], "user_text", note)
    name = image.features["name"]
    if name:
        return ImageDescription(f"file {name[:200]}", "name", note)
    f = image.features
    return ImageDescription(f"a {f['format']} image, {f['width']}x{f['height']}", "none", note)


def _text(answer: DescribeAnswer) -> str | None:
    caption = " ".join(answer.caption.split())[:MAX_CAPTION_CHARS]
    visible = " ".join(answer.visible_text.split())[:MAX_VISIBLE_TEXT_CHARS]
    if not caption:
        return None
    return f"{caption} Text in it: {visible}" if visible else caption


async def describe_image(
    image: CleanImage,
    *,
    model: BaseChatModel | None,
    hint: str = "",
    privacy: PrivacyFilter | None = None,
) -> ImageDescription:
    """Describe `image` with `model` (falls back to `hint`, the file name, or its format)."""
    if model is None:
        return _fallback(image, hint, "no vision model configured")
    # The provider sees the user's words only redacted, like the gate model does.
    safe_hint = (privacy or PrivacyFilter()).clean(hint[:_HINT_CHARS]) if hint.strip() else ""
    request = DESCRIBE_REQUEST.format(
        hint=DESCRIBE_HINT.format(text=safe_hint) if safe_hint else ""
    )
    messages: list[BaseMessage] = [
        SystemMessage(DESCRIBE_SYSTEM),
        HumanMessage(
            content=[
                {"type": "text", "text": request},
                image_block(image.data, image.mime_type),
            ]
        ),
    ]

    def read(message: BaseMessage) -> tuple[str | None, str]:
        answer, error = parse_json_reply(message, DescribeAnswer)
        text = _text(answer) if answer is not None else None
        return (text, "") if text else (None, error or "empty caption")

    asked = await ask_json(model, messages, read, retry=DESCRIBE_RETRY,
                           what="image description", fallback="using the user's text",
                           log=log, echo_chars=2000)  # fmt: skip
    if asked.value is not None:
        return ImageDescription(asked.value, "model")
    return _fallback(image, hint, asked.why)


__all__ = ["DescribeAnswer", "DescriptionSource", "ImageDescription", "describe_image"]
