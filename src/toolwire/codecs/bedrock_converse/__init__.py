"""The Amazon Bedrock Converse (``bedrock-converse``) wire, in the same modules as every wire.

The wire's registry record, ``RECORD``, and what it names or the folder alone uses: its
recognisers, how it asks for reasoning, its patterns, where its counting body holds the prompt,
and what Converse refuses of the media in a raw body. The folder's other modules are the ones
every wire has (`toolwire.codecs.record` lists them); this one imports only what codecs share.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.detect import Kind
from toolwire.codecs.media import dict_or_empty, image_head, list_or_empty
from toolwire.codecs.prompt_rules import Counting
from toolwire.codecs.reasoning import Carrier, Triple, thinking
from toolwire.codecs.record import Wire, WireRules
from toolwire.media import image_size

NAME = "bedrock-converse"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ID_PATTERN = re.compile(r"^[a-zA-Z0-9_.:-]{1,64}$")

_CONVERSE_BLOCKS = frozenset({"text", "toolUse", "toolResult", "reasoningContent", "cachePoint",
                              "image", "document"})


def recognise_body(body: Mapping[str, Any]) -> Kind | None:
    """Bedrock Converse: a reply with ``output.message`` and ``stopReason``; a request whose
    content blocks are one-key unions (no ``type``), or with ``toolConfig``/``inferenceConfig``."""
    if "stopReason" in body and isinstance(body.get("output"), dict):
        return "response"
    if "toolConfig" in body or "inferenceConfig" in body:
        return "request"
    messages = body.get("messages")
    for m in messages if isinstance(messages, list) else ():
        content = m.get("content") if isinstance(m, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and "type" not in block and len(block) == 1 \
                    and next(iter(block)) in _CONVERSE_BLOCKS:
                return "request"
    return None


def recognise_stream(head: str, text: str) -> bool:
    return ":event-type" in head and "messageStart" in head


def reasoning(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    config = body.setdefault("inferenceConfig", {})
    extra = body.setdefault("additionalModelRequestFields", {})

    def put(n: int) -> None:
        config["maxTokens"] = n

    thinking(body, level, notes, wire=NAME, holder=extra,
             tokens=lambda: config.get("maxTokens"), set_tokens=put)
    notes.append(("reasoning_as_thinking", "reasoning", (
        "bedrock-converse: sent as Anthropic's thinking in additionalModelRequestFields, "
        "which Claude models read; other models on Bedrock take their own fields")))


def count_input(body: Mapping[str, Any]) -> Any:
    """The prompt in Bedrock's CountTokens body: a Converse request under ``input.converse``,
    or an InvokeModel body (base64 JSON) under ``input.invokeModel.body``."""
    given = body.get("input")
    if not isinstance(given, Mapping):
        return None
    if "converse" in given:
        return given["converse"]
    invoke = given.get("invokeModel")
    raw = invoke.get("body") if isinstance(invoke, Mapping) else None
    try:
        return json.loads(base64.b64decode(raw, validate=True)) if isinstance(raw, str) else None
    except ValueError:
        return None


def violation(path: str, constraint: str) -> str:
    """A rule broken at ``path``, worded as Bedrock's ValidationException is."""
    return (f"1 validation error detected: Value at '{path}' failed to satisfy constraint: "
            f"{constraint}")


def media_problem(body: dict[str, Any]) -> str | None:
    """What Converse refuses of the media in ``body``."""
    for i, message in enumerate(list_or_empty(body.get("messages"))):
        blocks: Sequence[Any] = list_or_empty(dict_or_empty(message).get("content"))
        kinds = [next(iter(b), "") if isinstance(b, dict) else "" for b in blocks]
        at = f"messages.{i + 1}.member.content"
        if kinds.count("image") > 20:
            return violation(at, "Member must contain at most 20 image blocks")
        if kinds.count("document") > 5:
            return violation(at, "Member must contain at most 5 document blocks")
        if "document" in kinds and "text" not in kinds:
            return ("The model returned the following errors: a message with a document must "
                    f"also contain a text block (messages.{i})")
        if dict_or_empty(message).get("role") == "assistant" and {"image", "document"} & set(kinds):
            return violation(at, "Member must not hold image or document blocks in an "
                                  "assistant message")
        for j, block in enumerate(blocks):
            image = dict_or_empty(dict_or_empty(block).get("image"))
            data = dict_or_empty(image.get("source")).get("bytes")
            if not isinstance(data, str):
                continue
            if len(data) * 3 // 4 > 3750 * 1024:
                return violation(f"{at}.{j + 1}.member.image.source.bytes",
                                  "Member must have length less than or equal to 3840000")
            sides = image_size(image_head(data))
            if sides is not None and max(sides) > 8000:
                return ("The model returned the following errors: image dimensions exceed "
                        f"max allowed size: 8000 pixels (messages.{i}.content.{j})")
    return None


def carried(text: str, sealed: str) -> dict[str, Any]:
    """A ``reasoningContent`` block holding ``sealed`` as its ``reasoningText``'s signature."""
    return {"reasoningText": {"text": text, "signature": sealed}}


def carried_in(block: Any) -> str | None:
    """The signature of a ``reasoningContent`` block `carried` made."""
    readable = block.get("reasoningText") if isinstance(block, Mapping) else None
    found = readable.get("signature") if isinstance(readable, Mapping) else None
    return found if isinstance(found, str) else None


RECORD = Wire(
    closed_body=True,  # its SDK sends only the fields its types know
    name=NAME,
    module="toolwire.codecs.bedrock_converse.codec",
    path="/model/{model}/converse",
    stream_path="/model/{model}/converse-stream",
    framing="eventstream",
    rules=WireRules(
        id_pattern=ID_PATTERN,
        id_max_length=64,
        id_wording="an id may hold only letters, digits, '_', '.', ':' and '-', 1 to 64 "
                   "characters",
        name_pattern=NAME_PATTERN,
        results_first=True,
    ),
    detect=recognise_body,
    detect_stream=recognise_stream,
    detect_rank=15,
    count=Counting(path="/model/{model}/count-tokens", field="inputTokens",
                   keys=frozenset({"messages", "system", "toolConfig",
                                   "additionalModelRequestFields"}),
                   read=count_input),
    reasoning=reasoning,
    media_tokens="area",  # Bedrock bills an image by its area, as Anthropic does
    carrier=Carrier(wrap=carried, unwrap=carried_in),
    live_writer="toolwire.proxy.writers:BedrockWriter",
)
"""The wire's registry record."""

__all__ = [
    "ID_PATTERN",
    "NAME",
    "NAME_PATTERN",
    "RECORD",
    "carried",
    "carried_in",
    "count_input",
    "media_problem",
    "reasoning",
    "recognise_body",
    "recognise_stream",
]
