"""The Gemini Interactions (``gemini-interactions``) wire, in the same modules as every wire.

The wire's registry record, ``RECORD``, and what it names or the folder alone uses: its
recognisers, how it asks for reasoning, its tool-name pattern, the shape checks of a step, and
how its server keeps conversations (`continued`, `keep`: the emulator keeps them the same way,
through the record's ``memory``). The folder's other modules are the ones every wire has
(`toolwire.codecs.record` lists them); this one imports only what codecs share.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.detect import Kind, squeezed
from toolwire.codecs.google_shared import NAME_PATTERN, as_list
from toolwire.codecs.prompt_rules import CacheRules
from toolwire.codecs.reasoning import Carrier, Triple, as_bytes_field, from_bytes_field
from toolwire.codecs.record import (
    Kept,
    ServerMemory,
    Wire,
    WireRules,
    continued_from,
    keep_reply,
)

NAME = "gemini-interactions"

_INTERACTION_KEYS = ("system_instruction", "generation_config", "previous_interaction_id",
                     "store", "response_format")
_MEDIA_STEPS = ("text", "image", "document", "audio", "video")


def recognise_body(body: Mapping[str, Any]) -> Kind | None:
    """A reply with ``steps`` and ``status``; a request with ``input`` and a key only this API
    has (toolwire always sends ``store``)."""
    if "steps" in body and "status" in body:
        return "response"
    if "input" in body and any(k in body for k in _INTERACTION_KEYS):
        return "request"
    return None


def recognise_stream(head: str, text: str) -> bool:
    return '"event_type":"interaction.' in squeezed(head)


def reasoning(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    config = body.setdefault("generation_config", {})
    config["thinking_level"] = "minimal" if level == "off" else level
    if level == "off":
        notes.append(("reasoning_as_minimal", "reasoning", (
            f"{NAME}: thinking cannot be turned off; the least, 'minimal', was asked for")))


# --------------------------------------------------------------------------- steps


def as_step(value: Any, where: str) -> Mapping[str, Any]:
    """A step or content block: an object with a text ``type``."""
    if not isinstance(value, Mapping):
        raise wrong(where, "an object", value)
    if not isinstance(value.get("type"), str):
        raise wrong(f"{where}.type", "a string", value.get("type"))
    return value


def input_steps(value: Any) -> list[Mapping[str, Any]]:
    """``input`` in any of its forms as steps: text, one content block, a list of content
    blocks (one user turn) or a list of steps."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "user_input", "content": [{"type": "text", "text": value}]}]
    if isinstance(value, Mapping):
        return [{"type": "user_input", "content": [value]}]
    items = as_list(value, "input", "text, content or a list of steps")
    checked = [as_step(item, f"input[{n}]") for n, item in enumerate(items)]
    if checked and all(s["type"] in _MEDIA_STEPS for s in checked):
        return [{"type": "user_input", "content": checked}]
    return checked


# --------------------------------------------------------------------------- the server's side


def continued(body: Mapping[str, Any], kept: Mapping[str, list[Any]]) -> dict[str, Any]:
    """``body`` as a server that keeps conversations reads it: the steps of the stored
    interaction it names in ``previous_interaction_id`` (its input and output) before its own
    input. `LookupError` naming the id when nothing is stored under it."""
    return continued_from(body, kept, "previous_interaction_id", input_steps,
                          "no stored interaction has the id {id!r}")


def keep(kept: Kept, body: Mapping[str, Any], reply: Mapping[str, Any]) -> None:
    """Store an interaction as the server does unless ``store`` is false: its input (``body``
    as `continued` made it) and its reply's steps, under the reply's id."""
    keep_reply(kept, body, reply, input_steps, "steps")


def carried(text: str, sealed: str) -> dict[str, Any]:
    """A ``thought`` step holding ``sealed`` as its ``signature`` (base64, as the signatures
    the API gives are), ``text`` as its summary."""
    summary = [{"type": "text", "text": text}] if text else []
    return {"type": "thought", "signature": as_bytes_field(sealed), "summary": summary}


def carried_in(block: Any) -> str | None:
    """What the ``signature`` of a ``thought`` step `carried` made holds."""
    if not isinstance(block, Mapping) or block.get("type") != "thought":
        return None
    return from_bytes_field(block.get("signature"))


RECORD = Wire(
    closed_body=True,  # its SDK sends only the fields its types know
    name=NAME,
    module="toolwire.codecs.gemini_interactions.codec",
    path="/v1beta/interactions",
    rules=WireRules(
        name_pattern=NAME_PATTERN,
        name_wording="a letter or '_' first, then letters, digits, '_', '.', ':' or '-', "
                     "at most 128 characters",
    ),
    detect=recognise_body,
    detect_stream=recognise_stream,
    detect_rank=18,
    cache=CacheRules(kind="prefix", sections=("tools", "system_instruction", "input")),
    context_error="The input token count ({tokens}) exceeds the maximum number of tokens "
                  "allowed ({limit}).",
    reasoning=reasoning,
    media_tokens="tiles-768",  # the models of generateContent: an image by 768-pixel tiles
    memory=ServerMemory(continued=continued, keep=keep),
    resumable=True,  # GET .../interactions/{id}?stream=true&last_event_id=...
    carrier=Carrier(wrap=carried, unwrap=carried_in),
    live_writer="toolwire.proxy.steps:InteractionsWriter",
)
"""The wire's registry record."""

__all__ = [
    "NAME",
    "NAME_PATTERN",
    "RECORD",
    "as_list",
    "as_step",
    "carried",
    "carried_in",
    "continued",
    "input_steps",
    "keep",
    "reasoning",
    "recognise_body",
    "recognise_stream",
]
