"""The Ollama native chat (``ollama-chat``) wire, in the same modules as every wire.

The wire's registry record, ``RECORD``, and what it names or the folder alone uses: its
recognisers, how it asks for reasoning, its tool-name pattern. The folder's other modules are
the ones every wire has (`toolwire.codecs.record` lists them); this one imports only what
codecs share.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.detect import Kind
from toolwire.codecs.prompt_rules import CacheRules
from toolwire.codecs.reasoning import Triple
from toolwire.codecs.record import Wire, WireRules

NAME = "ollama-chat"
NAME_PATTERN = re.compile(r".+", re.DOTALL)

_OLLAMA_KEYS = ("options", "think", "keep_alive", "format")


def _ollama_message(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    if "tool_name" in m or "thinking" in m or "images" in m:
        return True
    calls = m.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        args = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(args, dict):
            return True
    return False


def recognise_body(body: Mapping[str, Any]) -> Kind | None:
    if "choices" in body:  # an OpenAI chat reply, whatever else it holds
        return None
    if "done" in body and "message" in body:
        return "response"
    if "messages" not in body:
        return None
    if any(k in body for k in _OLLAMA_KEYS):
        return "request"
    messages = body.get("messages")
    if any(_ollama_message(m) for m in (messages if isinstance(messages, list) else ())):
        return "request"
    return None


def recognise_stream(head: str, text: str) -> bool:
    return head.startswith("{") and '"done"' in head


def reasoning(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    body["think"] = False if level == "off" else level


RECORD = Wire(
    usual_pass=True,  # the codec's encode_usual
    closed_body=True,  # its SDK sends only the fields its types know
    name=NAME,
    module="toolwire.codecs.ollama_chat.codec",
    path="/api/chat",
    framing="ndjson",
    streams_by_default=True,
    rules=WireRules(results_by="position", name_pattern=NAME_PATTERN,
                    name_wording="a name that is not empty"),
    detect=recognise_body,
    detect_stream=recognise_stream,
    detect_rank=40,
    cache=CacheRules(sections=("tools", "messages")),
    truncate_at=("options", "num_ctx"),
    reasoning=reasoning,
    media_tokens="grid",  # a local vision model reads an image as one fixed grid
    live_writer="toolwire.proxy.writers:OllamaWriter",
)
"""The wire's registry record."""

__all__ = ["NAME", "NAME_PATTERN", "RECORD", "reasoning", "recognise_body", "recognise_stream"]
