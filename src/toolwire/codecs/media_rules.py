"""What each provider refuses of the media in a raw request body, worded as it words it.

Owns one function per wire (`anthropic_problem`, `chat_problem`, `responses_problem`,
`gemini_problem`, `converse_problem`): the first media rule a body breaks (a type, a size, an
image's sides, a count, a place media may not appear), or None. Each wire's ``check_body``
ends with its own; the emulator answers a body that breaks one with the provider's 400. Bodies
come from outside: every value is checked for its type before it is read. Pure functions over
JSON; imports only `toolwire.codecs.media` (sizes) and `toolwire.media` (image headers);
never a wire's modules.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
from collections.abc import Iterator, Sequence
from typing import Any

from toolwire.codecs.media import MB
from toolwire.codecs.model_rules import RULES, refusal
from toolwire.media import image_size

ANTHROPIC_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
OPENAI_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _head(text: str) -> bytes:
    """Enough of the bytes of base64 ``text`` to read an image's header from (empty when it is
    not base64: another check names that)."""
    try:
        return base64.b64decode(text[:4096], validate=True)
    except (binascii.Error, ValueError):
        return b""


# --------------------------------------------------------------------------- Anthropic Messages


def _anthropic_images(body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every base64 image source, user content and tool results alike, with its path."""
    for i, message in enumerate(_items(body.get("messages"))):
        for j, block in enumerate(_items(_obj(message).get("content"))):
            block = _obj(block)
            inner = _items(block.get("content")) if block.get("type") == "tool_result" else []
            for path, item in [(f"messages.{i}.content.{j}", block)] + [
                    (f"messages.{i}.content.{j}.content.{k}", b) for k, b in enumerate(inner)]:
                item = _obj(item)
                source = _obj(item.get("source"))
                if item.get("type") == "image" and source.get("type") == "base64":
                    yield path, source


def anthropic_problem(body: dict[str, Any]) -> str | None:
    images = list(_anthropic_images(body))
    side = 2000 if len(images) > 20 else 8000
    many = " for many-image requests" if side == 2000 else ""
    for path, source in images:
        kind = source.get("media_type")
        if kind not in ANTHROPIC_IMAGE_TYPES:
            return (f"{path}.image.source.base64.media_type: Input should be 'image/jpeg', "
                    "'image/png', 'image/gif' or 'image/webp'")
        data = source.get("data")
        size = len(data) if isinstance(data, str) else 0
        if size > 5 * MB:
            return (f"{path}.image.source.base64: image exceeds 5 MB maximum: {size} bytes > "
                    f"{5 * MB} bytes")
        sides = image_size(_head(data)) if isinstance(data, str) else None
        if sides is not None and max(sides) > side:
            return (f"{path}.image.source.base64.data: At least one of the image dimensions "
                    f"exceed max allowed size{many}: {side} pixels")
    return None


# --------------------------------------------------------------------------- OpenAI wires

_CHAT_MEDIA = {"image_url": "an image URL", "input_audio": "audio", "file": "a file"}


def _data_type(url: Any) -> str | None:
    """The media type of a ``data:`` URL; None for any other URL."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    return url[5:].partition(";")[0].partition(",")[0]


def chat_problem(body: dict[str, Any]) -> str | None:
    for i, message in enumerate(_items(body.get("messages"))):
        role = _obj(message).get("role")
        for item in _items(_obj(message).get("content")):
            kind = _obj(item).get("type")
            if isinstance(kind, str) and kind in _CHAT_MEDIA and role != "user":
                what = _CHAT_MEDIA[kind]
                label = "Image URLs are" if kind == "image_url" else f"Parts with {what} are"
                return (f"Invalid 'messages[{i}]'. {label} only allowed for messages with role "
                        f"'user', but this message with role '{role}' contains {what}.")
            if kind == "image_url":
                url = _obj(_obj(item).get("image_url")).get("url")
                media_type = _data_type(url)
                if media_type is not None and media_type not in OPENAI_IMAGE_TYPES:
                    return ("Invalid MIME type. Only image types are supported. "
                            f"(messages[{i}] has {media_type!r})")
    return None


def responses_problem(body: dict[str, Any]) -> str | None:
    for i, item in enumerate(_items(body.get("input"))):
        item = _obj(item)
        parts = item.get("content") if item.get("type", "message") == "message" else (
            item.get("output") if item.get("type") == "function_call_output" else None)
        for j, part in enumerate(_items(parts)):
            part = _obj(part)
            if part.get("type") != "input_image":
                continue
            if item.get("role") == "assistant":
                return (f"Invalid value: 'input_image'. Supported values are: 'output_text' and "
                        f"'refusal'. (input[{i}].content[{j}])")
            media_type = _data_type(part.get("image_url"))
            if media_type is not None and media_type not in OPENAI_IMAGE_TYPES:
                return (f"Invalid 'input[{i}]': the image at {j} has media type "
                        f"{media_type!r}; only image/png, image/jpeg, image/webp and image/gif "
                        "are supported.")
    return None


# --------------------------------------------------------------------------- Gemini

RESULT_PARTS_MODELS: tuple[str, ...] = next(
    row.models for row in RULES if row.code == "result_parts")
"""Model-name patterns (fnmatch, matched without a ``models/``-style prefix) of the Gemini
families that take media inside ``functionResponse.parts``, from the per-model rules
(`toolwire.codecs.model_rules`); older families answer 400 to them (the gemini-generate codec's
``_result_parts`` setting beats the table)."""


def takes_result_parts(model: str) -> bool:
    """Whether Gemini ``model`` takes media inside a function response, by the table."""
    base = model.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(base, pattern) for pattern in RESULT_PARTS_MODELS)


def gemini_problem(body: dict[str, Any]) -> str | None:
    """``body`` may carry the model the URL named under ``model``."""
    model = body.get("model")
    inline = 0
    for content in _items(body.get("contents")):
        for part in _items(_obj(content).get("parts")):
            part = _obj(part)
            response = _obj(part.get("functionResponse"))
            inner = _items(response.get("parts"))
            if inner and isinstance(model, str) and model and not takes_result_parts(model):
                return refusal("result_parts", "gemini-generate", model)
            for blob in [part, *map(_obj, inner)]:
                data = _obj(blob.get("inlineData")).get("data")
                inline += len(data) if isinstance(data, str) else 0
    if inline > 20 * MB:
        return f"Request payload size exceeds the limit: {20 * MB} bytes."
    return None


# --------------------------------------------------------------------------- Bedrock Converse


def _violation(path: str, constraint: str) -> str:
    return (f"1 validation error detected: Value at '{path}' failed to satisfy constraint: "
            f"{constraint}")


def converse_problem(body: dict[str, Any]) -> str | None:
    for i, message in enumerate(_items(body.get("messages"))):
        blocks: Sequence[Any] = _items(_obj(message).get("content"))
        kinds = [next(iter(b), "") if isinstance(b, dict) else "" for b in blocks]
        at = f"messages.{i + 1}.member.content"
        if kinds.count("image") > 20:
            return _violation(at, "Member must contain at most 20 image blocks")
        if kinds.count("document") > 5:
            return _violation(at, "Member must contain at most 5 document blocks")
        if "document" in kinds and "text" not in kinds:
            return ("The model returned the following errors: a message with a document must "
                    f"also contain a text block (messages.{i})")
        if _obj(message).get("role") == "assistant" and {"image", "document"} & set(kinds):
            return _violation(at, "Member must not hold image or document blocks in an "
                                  "assistant message")
        for j, block in enumerate(blocks):
            image = _obj(_obj(block).get("image"))
            data = _obj(image.get("source")).get("bytes")
            if not isinstance(data, str):
                continue
            if len(data) * 3 // 4 > 3750 * 1024:
                return _violation(f"{at}.{j + 1}.member.image.source.bytes",
                                  "Member must have length less than or equal to 3840000")
            sides = image_size(_head(data))
            if sides is not None and max(sides) > 8000:
                return ("The model returned the following errors: image dimensions exceed "
                        f"max allowed size: 8000 pixels (messages.{i}.content.{j})")
    return None
