"""How to tell each built-in wire's bodies and stream text apart, one recogniser per wire.

Owns the recognisers the wire registry (`toolwire.codecs.registry`) attaches to the built-in
wires: ``*_body(body)`` says ``"request"`` or ``"response"`` when the JSON object is one of that
wire's, else None; ``*_stream(head, text)`` says whether raw stream text is that wire's (``head``
is the first few thousand characters, spaces kept; ``text`` the whole). The registry tries
them in its own order, so each recogniser only looks for its wire's marks.

Must not import: the registry, any codec module, anything that does I/O. Pure functions over
JSON values and text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Kind = Literal["request", "response"]

_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
_OLLAMA_KEYS = ("options", "think", "keep_alive", "format")


def _blocks(messages: Any) -> set[str]:
    kinds: set[str] = set()
    for m in messages if isinstance(messages, list) else ():
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):
            kinds.update(b["type"] for b in content
                         if isinstance(b, dict) and isinstance(b.get("type"), str))
    return kinds


_CONVERSE_BLOCKS = frozenset({"text", "toolUse", "toolResult", "reasoningContent", "cachePoint",
                              "image", "document"})


def converse_body(body: Mapping[str, Any]) -> Kind | None:
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


def gemini_body(body: Mapping[str, Any]) -> Kind | None:
    if "contents" in body:
        return "request"
    if "candidates" in body or "promptFeedback" in body:
        return "response"
    return None


_INTERACTION_KEYS = ("system_instruction", "generation_config", "previous_interaction_id",
                     "store", "response_format")


def interactions_body(body: Mapping[str, Any]) -> Kind | None:
    """Gemini Interactions: a reply with ``steps`` and ``status``; a request with ``input`` and
    a key only this API has (toolwire always sends ``store``)."""
    if "steps" in body and "status" in body:
        return "response"
    if "input" in body and any(k in body for k in _INTERACTION_KEYS):
        return "request"
    return None


def responses_body(body: Mapping[str, Any]) -> Kind | None:
    if body.get("object") == "response" or ("output" in body and "status" in body):
        return "response"
    if "input" in body or "instructions" in body:
        return "request"
    return None


def anthropic_body(body: Mapping[str, Any]) -> Kind | None:
    if "choices" in body:  # an OpenAI chat reply, whatever else it holds
        return None
    if body.get("type") == "message" and "content" in body:
        return "response"
    if "messages" not in body:
        return None
    if _blocks(body.get("messages")) & _ANTHROPIC_BLOCKS:
        return "request"
    if "system" in body or any("input_schema" in t for t in body.get("tools") or ()
                               if isinstance(t, dict)):
        return "request"
    return None


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


def ollama_body(body: Mapping[str, Any]) -> Kind | None:
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


def chat_body(body: Mapping[str, Any]) -> Kind | None:
    """OpenAI chat: a reply with ``choices``, or any other body with ``messages`` (tried last)."""
    if "choices" in body:
        return "response"
    if "messages" in body:
        return "request"
    return None


def _squeezed(head: str) -> str:
    return head.replace(" ", "")


def anthropic_stream(head: str, text: str) -> bool:
    return "event: message_start" in head or '"type":"message_start"' in _squeezed(head)


def responses_stream(head: str, text: str) -> bool:
    return "event: response." in head or '"type":"response.' in _squeezed(head)


def interactions_stream(head: str, text: str) -> bool:
    return '"event_type":"interaction.' in _squeezed(head)


def chat_stream(head: str, text: str) -> bool:
    return "chat.completion.chunk" in head or "data: [DONE]" in text


def gemini_stream(head: str, text: str) -> bool:
    # An object that opens with "candidates" (not merely a tool of that name in another wire).
    return '{"candidates":' in _squeezed(head)


def converse_stream(head: str, text: str) -> bool:
    return ":event-type" in head and "messageStart" in head


def ollama_stream(head: str, text: str) -> bool:
    return head.startswith("{") and '"done"' in head
