"""OpenAI Chat Completions: the pieces shared by requests, replies and streams.

Owns: the wire name and stop map, tool-name mapping, reading and writing one assistant message
(reasoning fields, content, refusal, tool calls), usage, and turning a whole reply body into a
`Reply` (the stream decoder assembles such a body and calls the same function, so both paths
agree). Pure functions over JSON; imports only the transcript, `_base` and errors.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from toolwire._json import parse as parse_json
from toolwire.codecs.base import NameMap, Note, call_id_for
from toolwire.transcript import (
    JSON,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Reply,
    Request,
    StopReason,
    TextPart,
    ToolCallPart,
    ToolSpec,
    Usage,
)

WIRE = "openai-chat"

NAME_RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Function names this wire accepts."""

STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "error": "error",
    # values seen from compatible servers
    "eos": "end_turn",
    "eos_token": "end_turn",
    "end_turn": "end_turn",
    "stop_sequence": "stop_sequence",
    "max_tokens": "max_tokens",
    "tool_use": "tool_calls",
    "refusal": "refusal",
    "abort": "error",
    "cancelled": "error",
    "model_context_window_exceeded": "context_window_exceeded",
}

# A call whose arguments do not parse counts as cut off only when the reply says it hit the
# token limit. Broken JSON under any other signal (including a server that reports
# "tool_calls" for a cut-off call) goes back to the model as an error result it can fix.
_LIMIT_STOPS = frozenset({"length", "max_tokens"})
REASONING_KEYS = ("reasoning", "reasoning_content", "reasoning_details")
REFUSAL: Mapping[str, JSON] = {WIRE: {"type": "refusal"}}
"""``provider_data`` of a `TextPart` that holds a refusal."""

# top-level reply keys read into Reply fields (or meaningless per chunk)
_REPLY_KEYS = frozenset({"id", "object", "created", "model", "choices", "usage", "error",
                         "obfuscation"})


# --------------------------------------------------------------------------- small helpers


_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain(value: Any) -> JSON:
    """A deep copy made only of dict, list and scalars (Mappings and tuples converted).

    Only for values that are kept or handed on; what is only read is read in place.
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict or isinstance(value, Mapping):
        return {k if type(k) is str else str(k): plain(v) for k, v in value.items()}
    if kind is list or kind is tuple or isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def extras_of(value: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any] | None:
    """Copies of the keys of ``value`` outside ``known``, or None when it has none."""
    for key in value:
        if key not in known:
            return {k: plain(v) for k, v in value.items() if k not in known}
    return None


def real_id(value: Any) -> str | None:
    """An id worth keeping: a non-empty string that is not a placeholder."""
    if isinstance(value, str) and value and value != "null":
        return value
    return None


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is an object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def string(value: Any, default: str = "") -> str:
    """``value`` when it is a string, else ``default``."""
    return value if isinstance(value, str) else default


def as_int(value: Any) -> int:
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return 0


def wire_data(provider_data: Mapping[str, JSON] | None) -> dict[str, Any] | None:
    """This wire's entry of a provider_data mapping, when it is an object."""
    if provider_data is None:
        return None
    entry = provider_data.get(WIRE)
    return dict(entry) if isinstance(entry, Mapping) else None


def is_refusal(part: TextPart) -> bool:
    data = wire_data(part.provider_data)
    return data is not None and data.get("type") == "refusal"


def reply_seed(body: Mapping[str, Any]) -> str:
    """What synthetic call ids derive from: the reply id, else its model and creation time."""
    rid = real_id(body.get("id"))
    if rid is not None:
        return rid
    return f"{body.get('model') or ''}:{body.get('created') or ''}"


def name_map(tools: Sequence[ToolSpec]) -> NameMap:
    return NameMap.build([t.name for t in tools], pattern=NAME_RULE)


class NameReader(Protocol):
    """What reading a reply needs of a name map: the user's name for a wire name."""

    def user(self, name: str) -> str: ...


class ReplyNames:
    """`name_map` of the tools, built only for a name that is not one of the tools' own.

    A tool's own name is never chosen as the wire name of another (wire names all fit the
    rule, and are picked among names no fitting tool has), so it maps back to itself.
    """

    __slots__ = ("_map", "_names", "_tools")

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        self._tools = tools
        self._names: set[str] | None = None
        self._map: NameMap | None = None

    def user(self, name: str) -> str:
        if self._map is None:
            names = self._names
            if names is None:
                names = self._names = {t.name for t in self._tools}
            if name in names:
                return name
            self._map = name_map(self._tools)
        return self._map.user(name)


class Names:
    """Tool names as sent: the tool list's map, plus a map for names only the history uses.

    A name the wire accepts is never mapped, so the history is read for names (``history``,
    called at most once) only when a name that needs mapping turns up outside the tool list.
    """

    __slots__ = ("_history", "_specs", "_stray", "tools")

    def __init__(self, tools: Sequence[ToolSpec], history: Callable[[], Iterable[str]]) -> None:
        self.tools = name_map(tools)
        self._specs = tools
        self._history = history
        self._stray: NameMap | None = None

    def _strays(self) -> NameMap:
        if self._stray is None:
            known = {t.name for t in self._specs}
            extra = list(dict.fromkeys(n for n in self._history() if n not in known))
            self._stray = NameMap.build(extra, pattern=NAME_RULE)
        return self._stray

    def wire(self, name: str) -> str:
        mapped = self.tools.to_wire.get(name)
        if mapped is not None:
            return mapped
        if NAME_RULE.match(name):
            return name
        return self._strays().wire(name)

    def notes(self) -> list[Note]:
        return self.tools.notes() + (self._stray.notes() if self._stray is not None else [])


# --------------------------------------------------------------------------- reading messages


def reasoning_part(message: Mapping[str, Any]) -> ReasoningPart | None:
    """The reasoning fields of an assistant message, kept exactly, as one part."""
    payload: dict[str, Any] | None = None
    for key in REASONING_KEYS:
        if key in message:
            value = message[key]
            if value is not None and value != "" and value != []:
                if payload is None:
                    payload = {}
                payload[key] = plain(value)
    if payload is None:
        return None
    return ReasoningPart(text=reasoning_text(payload), provider_data={WIRE: payload})


def reasoning_text(payload: Mapping[str, Any]) -> str:
    for key in ("reasoning", "reasoning_content"):
        if isinstance(payload.get(key), str):
            return str(payload[key])
    return details_text(payload.get("reasoning_details"))


def details_text(details: Any) -> str:
    if not isinstance(details, list):
        return ""
    out: list[str] = []
    for item in details:
        if isinstance(item, Mapping):
            for key in ("text", "summary"):
                if isinstance(item.get(key), str):
                    out.append(item[key])
    return "".join(out)


_TEXT_ITEM_KEYS = frozenset({"type", "text"})


def content_parts(content: Any, *, keep_empty: bool) -> list[Part]:
    """Text and other content items of a message (non-text items kept as opaque parts)."""
    if isinstance(content, str):
        return [TextPart(text=content)] if content or keep_empty else []
    parts: list[Part] = []
    if not isinstance(content, list):
        return parts
    for item in content:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        text = item.get("text")
        if kind == "text" and isinstance(text, str):
            extras = extras_of(item, _TEXT_ITEM_KEYS)
            parts.append(TextPart(text=text, provider_data={WIRE: extras} if extras else None))
        elif kind == "refusal" and isinstance(item.get("refusal"), str):
            parts.append(TextPart(text=item["refusal"], provider_data=REFUSAL))
        else:
            parts.append(OpaquePart(wire=WIRE, kind=str(kind or "content"), payload=plain(item)))
    return parts


_CALL_KEYS = frozenset({"id", "type", "function", "index", "custom"})
_PLAIN_CALL_KEYS = frozenset({"id", "type", "function", "index"})
_PLAIN_FN_KEYS = frozenset({"name", "arguments"})
_USUAL_CALL_KEYS = frozenset({"id", "type", "function"})


def plain_call(call: Any, names: NameReader | None) -> ToolCallPart | None:
    """One entry of ``tool_calls`` when it has the usual shape, else None.

    The usual shape: an id, a function name and argument text, and no other keys. Anything
    else (a missing id, arguments as an object, extra keys) goes through `decode_call`.
    """
    if type(call) is not dict:
        return None
    keys = call.keys()
    if keys == _USUAL_CALL_KEYS:
        if call["type"] != "function":
            return None
    elif not keys <= _PLAIN_CALL_KEYS or call.get("type", "function") != "function":
        return None
    fn = call.get("function")
    if type(fn) is not dict or fn.keys() != _PLAIN_FN_KEYS:
        return None
    call_id, name, raw = call.get("id"), fn["name"], fn["arguments"]
    if (type(call_id) is not str or type(name) is not str or type(raw) is not str
            or not call_id or call_id == "null"):
        return None
    if names is not None:
        name = names.user(name)
    try:
        return ToolCallPart(id=call_id, name=name, arguments=parse_json(raw), raw_arguments=raw)
    except (ValueError, TypeError, RecursionError):  # empty or broken: the general reading
        return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=raw)


def plain_calls(calls: list[Any], names: NameReader | None) -> list[ToolCallPart] | None:
    """Every call of a ``tool_calls`` list, when all have the usual shape (`plain_call`)."""
    out: list[ToolCallPart] = []
    for call in calls:
        part = plain_call(call, names)
        if part is None:
            return None
        out.append(part)
    return out


def decode_call(
    call: Mapping[str, Any], position: int, seed: str, names: NameReader | None
) -> ToolCallPart | OpaquePart:
    """One entry of ``tool_calls``; ``position`` is its place in the message (for missing ids)."""
    usual = plain_call(call, names)
    if usual is not None:
        return usual
    fn = call.get("function")
    if type(fn) is not dict and not isinstance(fn, Mapping):
        if isinstance(call.get("custom"), Mapping):
            return OpaquePart(wire=WIRE, kind="custom_tool_call", payload=plain(call))
        fn = {}
    if "type" in call and call["type"] == "custom":
        return OpaquePart(wire=WIRE, kind="custom_tool_call", payload=plain(call))
    name = fn.get("name")
    if not isinstance(name, str):
        name = ""
    if names is not None:
        name = names.user(name)
    call_id = real_id(call.get("id")) or call_id_for(seed, position)
    extras = extras_of(call, _CALL_KEYS)
    data = {WIRE: extras} if extras else None
    args = fn.get("arguments")
    if args is None or isinstance(args, str):
        return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=args or "",
                                     provider_data=data)
    return ToolCallPart(id=call_id, name=name, arguments=plain(args), provider_data=data)


def assistant_parts(
    message: Mapping[str, Any], *, seed: str, names: NameReader | None,
    made_ids: list[str] | None = None,
) -> list[Part]:
    """Canonical parts of an assistant message: reasoning, text, refusal, then calls.

    ``made_ids`` (when given) receives the ids made up for calls that came without one.
    """
    parts: list[Part] = []
    if "reasoning" in message or "reasoning_content" in message or (
            "reasoning_details" in message):
        reasoning = reasoning_part(message)
        if reasoning is not None:
            parts.append(reasoning)
    content = message.get("content")
    if isinstance(content, str):
        if content:
            parts.append(TextPart(text=content))
    else:
        parts.extend(content_parts(content, keep_empty=False))
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(TextPart(text=refusal, provider_data=REFUSAL))
    calls = message.get("tool_calls")
    if type(calls) is list and calls:
        usual = plain_calls(calls, names)
        if usual is not None:
            parts += usual
            return parts
        for i, call in enumerate(calls):
            if type(call) is dict or isinstance(call, Mapping):
                part = decode_call(call, i, seed, names)
                parts.append(part)
                if (made_ids is not None and type(part) is ToolCallPart
                        and part.id != call.get("id")):
                    made_ids.append(part.id)
    elif "function_call" in message and string(mapping(message["function_call"]).get("name")):
        # the legacy single-function shape, still sent by a few servers
        parts.append(decode_call({"function": message["function_call"]}, 0, seed, names))
    return parts


# --------------------------------------------------------------------------- writing messages


def encode_call(call: ToolCallPart, wire_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": wire_name, "arguments": call.raw_arguments
                     if call.raw_arguments is not None else call.arguments_text},
    }
    if call.provider_data is not None:
        extras = wire_data(call.provider_data)
        if extras:
            out.update(plain(extras))
    return out


def merge_reasoning(target: dict[str, Any], payload: Mapping[str, Any]) -> None:
    """Put one reasoning payload on a message, joining it with what is already there."""
    for key, value in payload.items():
        have = target.get(key)
        if isinstance(have, str) and isinstance(value, str):
            target[key] = have + value
        elif isinstance(have, list) and isinstance(value, list):
            target[key] = have + plain(value)
        else:
            target[key] = plain(value)


def reasoning_payload(part: ReasoningPart) -> dict[str, Any] | None:
    return wire_data(part.provider_data)


def part_subject(message: int, part: int) -> str:
    """How notes name one part of one canonical message."""
    return f"messages[{message}].parts[{part}]"


def dropped_reasoning_note(subject: str) -> Note:
    return Note(kind="reasoning_dropped", subject=subject,
                detail="reasoning from another wire cannot be sent to openai-chat")


def dropped_opaque_note(subject: str, part: OpaquePart) -> Note:
    return Note(kind="opaque_dropped", subject=subject,
                detail=f"{part.kind} block belongs to {part.wire}")


# --------------------------------------------------------------------------- usage


def decode_usage(raw: Any) -> Usage:
    if raw is None or not isinstance(raw, Mapping):
        return Usage()
    get = raw.get
    prompt = get("prompt_tokens_details")
    if prompt is None or not isinstance(prompt, Mapping):
        prompt = {}
    completion = get("completion_tokens_details")
    if completion is None or not isinstance(completion, Mapping):
        completion = {}
    cached = (as_int(prompt.get("cached_tokens")) or as_int(get("prompt_cache_hit_tokens"))
              or as_int(get("num_cached_tokens")))
    cost = get("cost")
    return Usage(
        input_tokens=as_int(get("prompt_tokens")),
        output_tokens=as_int(get("completion_tokens")),
        cache_read_tokens=cached,
        cache_write_tokens=as_int(prompt.get("cache_write_tokens")),
        reasoning_tokens=as_int(completion.get("reasoning_tokens")),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )


def encode_usage(usage: Usage) -> dict[str, Any]:
    prompt: dict[str, Any] = {"cached_tokens": usage.cache_read_tokens}
    if usage.cache_write_tokens:
        prompt["cache_write_tokens"] = usage.cache_write_tokens
    out: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": prompt,
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }
    if usage.cost is not None:
        out["cost"] = usage.cost
    return out


# --------------------------------------------------------------------------- whole replies


def decide_stop(raw: str | None, parts: Sequence[Part]) -> tuple[StopReason, bool]:
    """Normalised stop and whether a call was cut off: the content decides, not the signal."""
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    if calls:
        if raw in _LIMIT_STOPS and any(c.parse_error is not None for c in calls):
            return "max_tokens", True
        return "tool_calls", False
    if not raw:
        return "end_turn", False
    stop = STOP_REASONS.get(raw, "other")
    refused = any(isinstance(p, TextPart) and is_refusal(p) for p in parts)
    if stop == "end_turn" and refused:
        return "refusal", False
    return stop, False


def pick_choice(body: Mapping[str, Any]) -> Mapping[str, Any]:
    choices = body.get("choices")
    if not isinstance(choices, list):
        return {}
    for choice in choices:
        if (type(choice) is dict or isinstance(choice, Mapping)) and choice.get("index", 0) == 0:
            return choice
    first = choices[0] if choices else {}
    return first if isinstance(first, Mapping) else {}


def decode_body(body: Mapping[str, Any], request: Request | None) -> Reply:
    """A whole (non-streamed) reply body as a `Reply`."""
    names = ReplyNames(request.tools) if request is not None else None
    choice = pick_choice(body)
    message = choice.get("message")
    if type(message) is not dict and not isinstance(message, Mapping):
        message = {}
    parts = assistant_parts(message, seed=reply_seed(body), names=names)
    raw = choice.get("finish_reason")
    raw_stop = raw if isinstance(raw, str) else None
    stop, truncated = decide_stop(raw_stop, parts)
    extras = {} if body.keys() <= _REPLY_KEYS else {
        k: plain(v) for k, v in body.items() if k not in _REPLY_KEYS and v is not None}
    for key in ("native_finish_reason", "error"):
        if key in choice and choice[key] is not None:
            extras[key] = plain(choice[key])
    model = body.get("model")
    return Reply(
        message=Message(role="assistant", parts=tuple(parts)),
        stop=stop,
        raw_stop=raw_stop,
        usage=decode_usage(body.get("usage")),
        model=model if isinstance(model, str) and model else None,
        id=real_id(body.get("id")),
        truncated_call=truncated,
        provider_data={WIRE: extras} if extras else None,
    )


FINISH_FOR: dict[StopReason, str] = {
    "end_turn": "stop",
    "tool_calls": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "refusal": "stop",
    "content_filter": "content_filter",
    "context_window_exceeded": "length",
    "tool_call_failed": "stop",
    "error": "error",
    "other": "stop",
}


def finish_reason_of(reply: Reply) -> str:
    return reply.raw_stop if reply.raw_stop is not None else FINISH_FOR[reply.stop]


def reply_id(reply: Reply) -> str:
    if reply.id is not None:
        return reply.id
    digest = hashlib.sha256(repr(reply.message).encode()).hexdigest()[:24]
    return f"chatcmpl-{digest}"


def reply_extras(reply: Reply) -> tuple[dict[str, Any], dict[str, Any]]:
    """Provider data of a reply split into (top-level keys, choice keys)."""
    extras: dict[str, Any] = plain(wire_data(reply.provider_data) or {})
    choice: dict[str, Any] = {k: extras.pop(k) for k in ("native_finish_reason", "error")
                              if k in extras}
    return extras, choice


def reply_message(reply: Reply, names: NameMap | None) -> dict[str, Any]:
    """The ``message`` object of a reply body."""
    text: list[str] = []
    refusal: list[str] = []
    calls: list[dict[str, Any]] = []
    message: dict[str, Any] = {"role": "assistant"}
    reasoning: dict[str, Any] = {}
    for part in reply.message.parts:
        if isinstance(part, TextPart):
            (refusal if is_refusal(part) else text).append(part.text)
        elif isinstance(part, ReasoningPart):
            payload = reasoning_payload(part)
            if payload is not None:
                merge_reasoning(reasoning, payload)
            elif part.text:
                merge_reasoning(reasoning, {"reasoning": part.text})
        elif isinstance(part, ToolCallPart):
            calls.append(encode_call(part, names.wire(part.name) if names else part.name))
        elif isinstance(part, OpaquePart) and part.wire == WIRE and part.kind == "custom_tool_call":
            calls.append(plain(part.payload))
    message["content"] = "".join(text) if text else None
    message["refusal"] = "".join(refusal) if refusal else None
    message.update(reasoning)
    if calls:
        message["tool_calls"] = calls
    return message


def dumps_body(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
