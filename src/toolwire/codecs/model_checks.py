"""What a model refuses of a raw request body, by the per-model rules (`model_rules`),
worded as its provider words it.

Owns `chat_model_problem`, `gemini_model_problem` and `anthropic_model_problem` (each wire's
``check_body`` ends with its own, so the emulator answers such a body with the provider's 400),
and `function_tools` and `tool_turns`, which the fixes in `toolwire.codecs.per_model` share.
Bodies come from outside: every value's type is checked before it is read. Pure functions
over JSON; imports only the table.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from toolwire.codecs.model_rules import applies, refusal

CHAT = "openai-chat"


def _obj(value: Any) -> Mapping[str, Any]:
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def function_tools(body: Mapping[str, Any]) -> bool:
    """Whether a Chat Completions body offers function tools."""
    return any((type(t) is dict or isinstance(t, Mapping))
               and t.get("type", "function") == "function"
               for t in _items(body.get("tools")))


def tool_turns(messages: Sequence[Any]) -> Iterator[int]:
    """The indexes of the assistant messages inside a turn (between two user messages) that
    holds a tool call: the ones DeepSeek's thinking mode wants reasoning on."""
    turn: list[int] = []
    calls = False
    for i, message in enumerate([*messages, {"role": "user"}]):
        role = _obj(message).get("role")
        if role == "user":
            if calls:
                yield from turn
            turn, calls = [], False
        elif role == "assistant":
            turn.append(i)
            calls = calls or bool(_obj(message).get("tool_calls"))


def thinking_off(body: Mapping[str, Any]) -> bool:
    """Whether a DeepSeek body turns thinking mode off."""
    return _obj(body.get("thinking")).get("type") == "disabled"


def _marked(value: Any, key: str) -> Iterator[Any]:
    if isinstance(value, Mapping):
        if key in value:
            yield value
        for inner in value.values():
            yield from _marked(inner, key)
    elif isinstance(value, list):
        for inner in value:
            yield from _marked(inner, key)


def chat_model_problem(body: Mapping[str, Any]) -> str | None:
    """GPT-5's reasoning effort with tools, DeepSeek's reasoning passback, OpenAI's explicit
    cache breakpoints on a model without them."""
    model = body.get("model")
    if not isinstance(model, str):
        return None
    effort = body.get("reasoning_effort")
    if function_tools(body):
        if applies("effort_with_tools_by_default", CHAT, model) and effort != "none":
            return refusal("effort_with_tools_by_default", CHAT, model)
        if applies("effort_with_tools", CHAT, model) and effort not in (None, "none"):
            return refusal("effort_with_tools", CHAT, model)
    messages = _items(body.get("messages"))
    if applies("reasoning_refused", CHAT, model) and any(
            "reasoning_content" in _obj(m) for m in messages):
        return refusal("reasoning_refused", CHAT, model)
    if applies("reasoning_passback", CHAT, model) and not thinking_off(body):
        for i in tool_turns(messages):
            if "reasoning_content" not in messages[i]:
                return refusal("reasoning_passback", CHAT, model, index=i)
    return explicit_cache_problem(body, CHAT)


def explicit_cache_problem(body: Mapping[str, Any], wire: str) -> str | None:
    """OpenAI's explicit cache fields sent to a model without them."""
    model = body.get("model")
    if applies("explicit_breakpoints", wire, model if isinstance(model, str) else None):
        return None
    for key in ("prompt_cache_options", "prompt_cache_breakpoint"):
        if key in body or next(_marked(body.get("messages") or body.get("input"), key), None):
            return refusal("explicit_breakpoints", wire, None, found=key)
    return None


def gemini_model_problem(body: Mapping[str, Any]) -> str | None:
    """Gemini 3: a function response must carry the id of the call it answers.
    ``body`` may carry the model the URL named under ``model``."""
    model = body.get("model")
    if not isinstance(model, str) or not applies("call_ids", "gemini-generate", model):
        return None
    ids: list[str] = []
    for content in _items(body.get("contents")):
        parts = [_obj(p) for p in _items(_obj(content).get("parts"))]
        calls = [_obj(p["functionCall"]).get("id") for p in parts if "functionCall" in p]
        answers = [_obj(p["functionResponse"]).get("id") for p in parts
                   if "functionResponse" in p]
        if calls:
            ids = [i for i in calls if isinstance(i, str) and i]
        elif answers and ids and any(a not in ids for a in answers):
            return refusal("call_ids", "gemini-generate", model)
    return None


def system_message_problem(body: Mapping[str, Any]) -> str | None:
    """Anthropic: a ``system`` message inside ``messages`` on a model that takes none, or
    placed where the model refuses it."""
    model = body.get("model")
    messages = [_obj(m) for m in _items(body.get("messages"))]
    wire = "anthropic-messages"
    for i, message in enumerate(messages):
        if message.get("role") != "system":
            continue
        if not applies("system_messages", wire, model if isinstance(model, str) else None):
            return f"messages.{i}.role: Input should be 'user' or 'assistant', got 'system'"
        before = messages[i - 1] if i else {}
        after = messages[i + 1].get("role") if i + 1 < len(messages) else "assistant"
        blocks = _items(before.get("content"))
        server = before.get("role") == "assistant" and bool(blocks) and \
            _obj(blocks[-1]).get("type") == "server_tool_use"
        if not (before.get("role") == "user" or server) or after != "assistant":
            return refusal("system_messages", wire, None, index=i)
    return None


def anthropic_model_problem(body: Mapping[str, Any]) -> str | None:
    """Anthropic: system messages where the model takes them, at most four cache_control
    markers."""
    problem = system_message_problem(body)
    if problem:
        return problem
    found = sum(1 for _ in _marked(dict(body), "cache_control"))
    if found > 4:
        return refusal("four_breakpoints", "anthropic-messages", None, found=found)
    return None


__all__ = [
    "anthropic_model_problem", "chat_model_problem", "explicit_cache_problem",
    "function_tools", "gemini_model_problem", "system_message_problem", "thinking_off",
    "tool_turns",
]
