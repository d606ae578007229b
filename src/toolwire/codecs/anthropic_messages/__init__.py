"""The Anthropic Messages (``anthropic-messages``) wire, in the same modules as every wire.

The wire's registry record, ``RECORD``, and what it names or the folder alone uses: its
recognisers, how it asks for reasoning, its patterns, what Anthropic refuses of the images in a
raw body, and its context management: the edits a body carries, their beta headers and the
edits read back. The folder's other modules are the ones every wire has
(`toolwire.codecs.record` lists them); this one imports only what codecs share.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from toolwire.codecs.detect import Kind, block_types, squeezed
from toolwire.codecs.managed import COMPACTION_BETA, CONTEXT_EDITING_BETA, SERVER_FALLBACK_BETA
from toolwire.codecs.media import MB, dict_or_empty, image_head, list_or_empty
from toolwire.codecs.prompt_rules import CacheRules, Counting
from toolwire.codecs.reasoning import Carrier, Triple, thinking
from toolwire.codecs.record import HostedPath, Wire, WireRules
from toolwire.media import image_size
from toolwire.transcript import ContextManagement

NAME = "anthropic-messages"
ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")

_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})


def recognise_body(body: Mapping[str, Any]) -> Kind | None:
    if "choices" in body:  # an OpenAI chat reply, whatever else it holds
        return None
    if body.get("type") == "message" and "content" in body:
        return "response"
    if "messages" not in body:
        return None
    if block_types(body.get("messages")) & _ANTHROPIC_BLOCKS:
        return "request"
    if "system" in body or any("input_schema" in t for t in body.get("tools") or ()
                               if isinstance(t, dict)):
        return "request"
    return None


def recognise_stream(head: str, text: str) -> bool:
    return "event: message_start" in head or '"type":"message_start"' in squeezed(head)


def reasoning(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    def put(n: int) -> None:
        body["max_tokens"] = n

    thinking(body, level, notes, wire=NAME, holder=body,
             tokens=lambda: body.get("max_tokens"), set_tokens=put)


ANTHROPIC_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def _anthropic_images(body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every base64 image source, user content and tool results alike, with its path."""
    for i, message in enumerate(list_or_empty(body.get("messages"))):
        for j, block in enumerate(list_or_empty(dict_or_empty(message).get("content"))):
            block = dict_or_empty(block)
            inner = (list_or_empty(block.get("content")) if block.get("type") == "tool_result"
                     else [])
            for path, item in [(f"messages.{i}.content.{j}", block)] + [
                    (f"messages.{i}.content.{j}.content.{k}", b) for k, b in enumerate(inner)]:
                item = dict_or_empty(item)
                source = dict_or_empty(item.get("source"))
                if item.get("type") == "image" and source.get("type") == "base64":
                    yield path, source


def media_problem(body: dict[str, Any]) -> str | None:
    """What Anthropic refuses of the images in ``body`` (`toolwire.codecs.media_rules`)."""
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
        sides = image_size(image_head(data)) if isinstance(data, str) else None
        if sides is not None and max(sides) > side:
            return (f"{path}.image.source.base64.data: At least one of the image dimensions "
                    f"exceed max allowed size{many}: {side} pixels")
    return None


def _count(kind: str, value: int | None) -> dict[str, Any] | None:
    return None if value is None else {"type": kind, "value": value}


def _edit(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **{k: v for k, v in fields.items() if v is not None}}


def context_edits(cm: ContextManagement | None) -> dict[str, Any]:
    """Anthropic's ``context_management`` field for ``cm`` (thinking is cleared first, as the
    API asks; compaction comes last), as body keys: none when ``cm`` is None."""
    if cm is None:
        return {}
    trigger = _count("input_tokens", cm.trigger)
    edits: list[dict[str, Any]] = []
    if cm.clear_thinking:
        edits.append(_edit("clear_thinking_20251015",
                           keep=_count("thinking_turns", cm.keep_thinking)))
    if cm.clear_tool_results:
        edits.append(_edit("clear_tool_uses_20250919", trigger=trigger,
                           keep=_count("tool_uses", cm.keep)))
    if cm.compact:
        edits.append(_edit("compact_20260112", trigger=trigger,
                           instructions=cm.instructions or None))
    return {"context_management": {"edits": edits}}


def beta_headers(body: Mapping[str, Any]) -> dict[str, str] | None:
    """The ``anthropic-beta`` header the edits of ``body``'s ``context_management`` need, and
    its ``fallbacks``."""
    raw = body.get("context_management")
    fallbacks = [SERVER_FALLBACK_BETA] if "fallbacks" in body else []
    if raw is None:  # the usual body: no edits
        return {"anthropic-beta": fallbacks[0]} if fallbacks else None
    edits = raw.get("edits") if isinstance(raw, Mapping) else None
    kinds = {e.get("type") for e in edits if isinstance(e, Mapping)} if isinstance(
        edits, list) else set()
    betas = [CONTEXT_EDITING_BETA] if kinds - {"compact_20260112"} else []
    if "compact_20260112" in kinds:
        betas.append(COMPACTION_BETA)
    betas += fallbacks
    return {"anthropic-beta": ",".join(betas)} if betas else None


def _value(raw: Any, kind: str) -> int | None:
    if isinstance(raw, Mapping) and raw.get("type") == kind and type(raw.get("value")) is int:
        return int(raw["value"])
    return None


def read_edits(options: dict[str, Any]) -> ContextManagement | None:
    """Anthropic's ``context_management`` of a body's ``options`` (the keys a request has no
    field for) as the canonical setting (None when it names no edit toolwire knows); taken out
    of ``options`` when the setting says all it said."""
    cm, exact = _edits(options.get("context_management"))
    if exact:
        del options["context_management"]
    return cm


def _edits(raw: Any) -> tuple[ContextManagement | None, bool]:
    edits = raw.get("edits") if isinstance(raw, Mapping) else None
    if not isinstance(edits, list):
        return None, False
    found: dict[str, Any] = {"compact": False}
    exact = len(raw) == 1
    triggers = set()
    for edit in edits:
        kind = edit.get("type") if isinstance(edit, Mapping) else None
        keys = set(edit) if isinstance(edit, Mapping) else set()
        if kind == "clear_thinking_20251015":
            found["clear_thinking"] = True
            found["keep_thinking"] = _value(edit.get("keep"), "thinking_turns")
            exact = exact and keys <= {"type", "keep"} and (
                "keep" not in edit or found["keep_thinking"] is not None)
        elif kind == "clear_tool_uses_20250919":
            found["clear_tool_results"] = True
            found["keep"] = _value(edit.get("keep"), "tool_uses")
            triggers.add(_value(edit.get("trigger"), "input_tokens"))
            exact = exact and keys <= {"type", "keep", "trigger"} and (
                "keep" not in edit or found["keep"] is not None)
        elif kind == "compact_20260112":
            found["compact"] = True
            found["instructions"] = edit.get("instructions")
            triggers.add(_value(edit.get("trigger"), "input_tokens"))
            exact = exact and keys <= {"type", "trigger", "instructions"}
        else:
            exact = False
    if len(triggers) > 1:
        exact = False
    if len(found) == 1 and not found["compact"]:
        return None, False
    found["trigger"] = next((t for t in triggers if t is not None), None)
    if not isinstance(found.get("instructions"), str | None):
        found["instructions"], exact = None, False
    return ContextManagement(**found), exact


_PORTABLE = "letters, digits, '_' and '-'"

def carried(text: str, sealed: str) -> dict[str, Any]:
    """A ``thinking`` block holding ``sealed`` as its signature."""
    return {"type": "thinking", "thinking": text, "signature": sealed}


def carried_in(block: Any) -> str | None:
    """The signature of a ``thinking`` block `carried` made."""
    found = block.get("signature") if isinstance(block, Mapping) else None
    return found if isinstance(found, str) else None


RECORD = Wire(
    name=NAME,
    per_model=True,  # the codec's FIT
    usual_pass=True,  # the codec's encode_usual
    module="toolwire.codecs.anthropic_messages.codec",
    path="/v1/messages",
    overloaded_status=529,
    rules=WireRules(
        id_pattern=ID_PATTERN,
        id_wording=f"an id may hold only {_PORTABLE}",
        name_pattern=NAME_PATTERN,
        name_wording=f"{_PORTABLE}, 1 to 128 characters",
        results_first=True,
    ),
    detect=recognise_body,
    detect_stream=recognise_stream,
    detect_rank=30,
    hosted=(HostedPath("/model/{model}/invoke", "/model/{model}/invoke-with-response-stream",
                       framing="eventstream", errors="bedrock-converse"),
            HostedPath("/models/{model}:rawPredict", "/models/{model}:streamRawPredict",
                       count="/anthropic/models/count-tokens:rawPredict")),
    cache=CacheRules(kind="breakpoints", sections=("tools", "system", "messages")),
    context_error="prompt is too long: {tokens} tokens > {limit} maximum",
    count=Counting(path="/v1/messages/count_tokens", keys=frozenset({
        "model", "messages", "system", "tools", "tool_choice", "thinking"})),
    reasoning=reasoning,
    media_tokens="area",  # Anthropic bills an image by its area
    input_examples=True,
    added_tools=True,  # a system message's tools as tool_addition blocks, in place
    allowed_callers=True,  # calls made by the code execution tool's code carry a ``caller``
    context_management=True,  # clearing and compaction, each with its beta header
    native_tool_search=True,
    server_fallbacks=True,  # with its beta header; ``fallback`` blocks go back in place
    carrier=Carrier(wrap=carried, unwrap=carried_in),
    client_headers=("anthropic-version", "x-api-key"),
    live_writer="toolwire.proxy.writers:AnthropicWriter",
)
"""The wire's registry record."""

__all__ = [
    "ANTHROPIC_IMAGE_TYPES",
    "ID_PATTERN",
    "NAME",
    "NAME_PATTERN",
    "RECORD",
    "beta_headers",
    "carried",
    "carried_in",
    "context_edits",
    "media_problem",
    "read_edits",
    "reasoning",
    "recognise_body",
    "recognise_stream",
]
