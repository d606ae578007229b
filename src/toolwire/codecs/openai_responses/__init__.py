"""The OpenAI Responses (``openai-responses``) wire, in the same modules as every wire.

The wire's registry record, ``RECORD``, and what it names or the folder alone uses: its
recognisers, how it asks for reasoning, its tool-name pattern, what the Responses API refuses
of the images in a raw body, its cache fields, its compaction entry and how its server keeps
responses (`continued`, `keep`: the emulator keeps them the same way, through the record's
``memory``). The folder's other
modules are the ones every wire has (`toolwire.codecs.record` lists them); this one imports
only what codecs share.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import Note
from toolwire.codecs.caching import Marking, cache_key_fields
from toolwire.codecs.detect import Kind, squeezed
from toolwire.codecs.media import (
    OPENAI_IMAGE_TYPES,
    data_url_type,
    dict_or_empty,
    list_or_empty,
)
from toolwire.codecs.prompt_rules import CacheRules, Counting
from toolwire.codecs.reasoning import Carrier, Triple, effort
from toolwire.codecs.record import Kept, ServerMemory, Wire, continued_from, keep_reply
from toolwire.transcript import Cache, ContextManagement

NAME = "openai-responses"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def recognise_body(body: Mapping[str, Any]) -> Kind | None:
    if body.get("object") == "response" or ("output" in body and "status" in body):
        return "response"
    if "input" in body or "instructions" in body:
        return "request"
    return None


def recognise_stream(head: str, text: str) -> bool:
    return "event: response." in head or '"type":"response.' in squeezed(head)


def reasoning(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    given = body.get("reasoning")
    body["reasoning"] = {**(given if isinstance(given, dict) else {}), "effort": effort(level)}


def media_problem(body: dict[str, Any]) -> str | None:
    """What the Responses API refuses of the images in ``body``."""
    for i, item in enumerate(list_or_empty(body.get("input"))):
        item = dict_or_empty(item)
        parts = item.get("content") if item.get("type", "message") == "message" else (
            item.get("output") if item.get("type") == "function_call_output" else None)
        for j, part in enumerate(list_or_empty(parts)):
            part = dict_or_empty(part)
            if part.get("type") != "input_image":
                continue
            if item.get("role") == "assistant":
                return (f"Invalid value: 'input_image'. Supported values are: 'output_text' and "
                        f"'refusal'. (input[{i}].content[{j}])")
            media_type = data_url_type(part.get("image_url"))
            if media_type is not None and media_type not in OPENAI_IMAGE_TYPES:
                return (f"Invalid 'input[{i}]': the image at {j} has media type "
                        f"{media_type!r}; only image/png, image/jpeg, image/webp and image/gif "
                        "are supported.")
    return None


def _input_text(block: dict[str, Any]) -> bool:
    return block.get("type") == "input_text"


EXPLICIT_RESPONSES = Marking(key="prompt_cache_breakpoint", text="input_text", items="input",
                             fields=("content", "output"), skip_role="assistant")
"""The same in a Responses input."""


def cache_fields(body: dict[str, Any], cache: Cache) -> list[Note]:
    """The Responses API's cache fields, explicit breakpoints on input text for the models
    that have them."""
    return cache_key_fields(body, cache, wire="openai-responses", how=EXPLICIT_RESPONSES,
                            markable=_input_text)


def context_entries(cm: ContextManagement, notes: list[Note], wire: str) -> list[Any]:
    """The Responses API's ``context_management`` for ``cm``: its compaction entry (it clears
    nothing itself: asking it to is left out, with a note)."""
    if cm.clear_tool_results or cm.clear_thinking or cm.instructions:
        notes.append(Note(kind="field_dropped", subject="context_management", detail=(
            f"{wire} compacts on its side but clears nothing and takes no instructions; only "
            "the compaction was asked for")))
    if not cm.compact:
        return []
    entry: dict[str, Any] = {"type": "compaction"}
    if cm.trigger is not None:
        entry["compact_threshold"] = cm.trigger
    return [entry]


def read_entries(options: dict[str, Any]) -> ContextManagement | None:
    """The Responses API's ``context_management`` of a body's ``options`` as the canonical
    setting; taken out of ``options`` when the setting says all it said."""
    raw = options.get("context_management")
    if not isinstance(raw, list):
        return None
    found = [e for e in raw if isinstance(e, Mapping) and e.get("type") == "compaction"]
    if not found:
        return None
    threshold = found[0].get("compact_threshold")
    if len(raw) == 1 and set(found[0]) <= {"type", "compact_threshold"} and (
            threshold is None or type(threshold) is int):
        del options["context_management"]
    return ContextManagement(trigger=threshold if type(threshold) is int else None)


def carried(text: str, sealed: str) -> dict[str, Any]:
    """A ``reasoning`` item holding ``sealed`` as its ``encrypted_content`` (its id drawn
    from it, so the same every time), ``text`` as its summary."""
    digest = hashlib.sha256(sealed.encode()).hexdigest()[:32]
    summary = [{"type": "summary_text", "text": text}] if text else []
    return {"type": "reasoning", "id": f"rs_{digest}", "summary": summary,
            "encrypted_content": sealed}


def carried_in(block: Any) -> str | None:
    """The ``encrypted_content`` of a ``reasoning`` item `carried` made."""
    found = block.get("encrypted_content") if isinstance(block, Mapping) else None
    return found if isinstance(found, str) else None


def input_items(value: Any) -> list[Any]:
    """``input`` in either of its forms as items: text is one user message."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


def continued(body: Mapping[str, Any], kept: Mapping[str, list[Any]]) -> dict[str, Any]:
    """``body`` as a server that keeps responses reads it: the items of the stored response
    it names in ``previous_response_id`` (its input and output) before its own input.
    `LookupError` worded as the API words it when nothing is stored under that id."""
    return continued_from(body, kept, "previous_response_id", input_items,
                          "Previous response with id '{id}' not found.")


def keep(kept: Kept, body: Mapping[str, Any], reply: Mapping[str, Any]) -> None:
    """Store a response as the server does unless ``store`` is false (it is true by
    default): its input (``body`` as `continued` made it) and its output, under its id."""
    keep_reply(kept, body, reply, input_items, "output")


RECORD = Wire(
    name=NAME,
    per_model=True,  # the codec's FIT
    module="toolwire.codecs.openai_responses.codec",
    path="/v1/responses",
    detect=recognise_body,
    detect_stream=recognise_stream,
    detect_rank=20,
    cache=CacheRules(kind="prefix", sections=("tools", "instructions", "input"), step=128,
                     key_field="prompt_cache_key"),
    context_error="Your input exceeds the context window of this model ({tokens} tokens > "
                  "{limit}). Please adjust your input and try again.",
    count=Counting(path="/v1/responses/input_tokens", keys=frozenset({
        "model", "input", "instructions", "tools", "tool_choice", "text", "reasoning",
        "truncation", "parallel_tool_calls"})),
    reasoning=reasoning,
    media_tokens="tiles-512",
    context_management=True,  # its compaction entry; ``compaction`` items go back as they came
    native_tool_search=True,  # ``tool_search_call`` and ``tool_search_output`` go back too
    freeform_calls=True,  # custom tools' calls (custom_tool_call items) with their text input
    added_tools=True,  # a system message's tools as an ``additional_tools`` item, in place
    check_headers=True,  # Codex's own request shape is named by a header
    carrier=Carrier(wrap=carried, unwrap=carried_in),
    memory=ServerMemory(continued=continued, keep=keep, missing_status=400, missing_error={
        "code": "previous_response_not_found", "param": "previous_response_id"}),
    live_writer="toolwire.proxy.writers:ResponsesWriter",
)
"""The wire's registry record."""

__all__ = [
    "EXPLICIT_RESPONSES",
    "NAME",
    "NAME_PATTERN",
    "RECORD",
    "cache_fields",
    "carried",
    "carried_in",
    "context_entries",
    "continued",
    "input_items",
    "keep",
    "media_problem",
    "read_entries",
    "reasoning",
    "recognise_body",
    "recognise_stream",
]
