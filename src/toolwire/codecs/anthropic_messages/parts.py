"""Anthropic Messages: content blocks <-> canonical parts, ids, usage and stop reasons.

Owns the block-level rules that requests, replies and streams of the ``anthropic-messages``
wire share: how each block type becomes a part and back, the id and tool-name rules, the
usage arithmetic (prompt = input + cache writes + cache reads) and the stop-reason map, plus
the whole-reply decode and encode. Pure functions over JSON values. Imports only
`toolwire.transcript`, `toolwire.errors` and `toolwire.codecs.base`; never HTTP, never a
vendor SDK.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import NameMap, Note, call_id_for, dumps
from toolwire.errors import WireFormatError
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
    ToolResultPart,
    Usage,
)

WIRE = "anthropic-messages"

ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
NAME_MAX = 128

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "model_context_window_exceeded": "context_window_exceeded",
}
"""Every ``stop_reason`` the API sends, normalised. Unknown values decode as ``"other"``."""

_STOP_TO_WIRE: dict[str, str] = {
    "end_turn": "end_turn",
    "tool_calls": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "content_filter": "refusal",
    "context_window_exceeded": "model_context_window_exceeded",
}
_CUT_OFF = ("max_tokens", "model_context_window_exceeded")

REASONING_TYPES = ("thinking", "redacted_thinking")
TEXT_KEYS = frozenset({"type", "text"})
CALL_KEYS = frozenset({"type", "id", "name", "input"})
RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})
REPLY_KEYS = frozenset({"id", "type", "role", "model", "content", "stop_reason", "usage"})
_QUIET_REPLY_KEYS = REPLY_KEYS | {"stop_sequence"}  # with stop_sequence null: nothing to keep
USAGE_KEYS = frozenset(
    {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
)


# --------------------------------------------------------------------------- names and ids


def full_name_map(request: Request | None) -> NameMap:
    """The tool-name mapping for a request: its tools first, then names only seen in history."""
    if request is None:
        return NameMap()
    names = [t.name for t in request.tools]
    seen = set(names)
    extra = [p.name for m in request.messages for p in m.parts if isinstance(p, ToolCallPart)]
    if request.tool_choice is not None and request.tool_choice.name:
        extra.append(request.tool_choice.name)
    for name in extra:
        if name not in seen:
            names.append(name)
            seen.add(name)
    return NameMap.build(names, pattern=NAME_PATTERN, max_len=NAME_MAX)


class ToolNames:
    """`full_name_map` of a request, built only once a name that needs mapping turns up.

    A name that fits the wire's rule is never mapped, and no user's name is ever chosen as the
    wire name of another (wire names are picked among names no tool has, and all fit), so
    while every name seen fits, or is one of the tools, there is nothing to build: no scan of
    the history. ``fit`` holds names already seen to fit, which are sent as they are even once
    the mapping is built: a hot loop may send a name found there, and ask `wire` for any other.
    """

    __slots__ = ("_map", "_request", "_tools", "fit")

    def __init__(self, request: Request | None) -> None:
        self._request = request
        self._map: NameMap | None = None if request is not None else NameMap()
        self._tools: set[str] | None = None
        self.fit: set[str] = set()

    @property
    def built(self) -> bool:
        """Whether a name needed the whole mapping (only then can there be notes)."""
        return self._map is not None and self._request is not None

    def full(self) -> NameMap:
        if self._map is None:
            self._map = full_name_map(self._request)
        return self._map

    def wire(self, name: str) -> str:
        if self._map is None:
            if name in self.fit:
                return name
            if NAME_PATTERN.match(name):
                self.fit.add(name)
                return name
        return self.full().wire(name)

    def user(self, name: str) -> str:
        if self._map is None:
            tools = self._tools
            if tools is None:
                assert self._request is not None
                tools = self._tools = {t.name for t in self._request.tools}
            if name in tools:  # a user's name is never the wire name of another
                return name
        return self.full().user(name)

    def notes(self) -> list[Note]:
        return self.full().notes() if self.built else []


def name_map(request: Request | None) -> ToolNames:
    """The tool names of a request as the wire sees them (see `ToolNames`)."""
    return ToolNames(request)


def wire_id(call_id: str) -> str:
    """``call_id`` if the API accepts it, else a deterministic rewrite that it accepts."""
    if ID_PATTERN.match(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:10]
    clean = re.sub(r"[^a-zA-Z0-9_-]+", "_", call_id).strip("_")
    return f"{clean}_{digest}" if clean else f"toolu_{digest}"


class IdRewriter:
    """Rewrites ids the API would reject, the same way for calls and results, noting each once.

    ``done`` maps every id seen so far to its wire id: a hot loop may look an id up there and
    call the rewriter only for one it has not seen.
    """

    __slots__ = ("_notes", "done")

    def __init__(self, notes: list[Note] | None) -> None:
        self._notes = notes
        self.done: dict[str, str] = {}

    def __call__(self, call_id: str) -> str:
        new = self.done.get(call_id)
        if new is None:
            new = self.done[call_id] = wire_id(call_id)
            if new != call_id and self._notes is not None:
                self._notes.append(Note(
                    kind="id_rewritten", subject=call_id,
                    detail=f"sent as {new!r}: ids must match {ID_PATTERN.pattern}",
                ))
        return new


def reply_seed(body: Mapping[str, Any]) -> str:
    """What generated call ids are derived from: the reply id, else a hash of its content."""
    rid = body.get("id")
    if isinstance(rid, str) and rid:
        return rid
    return hashlib.sha256(dumps(body.get("content")).encode()).hexdigest()


# --------------------------------------------------------------------------- block -> part


def has_extras(block: Mapping[str, Any], known: frozenset[str]) -> bool:
    if block.keys() <= known:
        return False
    for key, value in block.items():  # noqa: SIM110 (a loop: any() over a generator is slower)
        if value is not None and key not in known:
            return True
    return False


def own_data(provider_data: Mapping[str, JSON] | None) -> Any:
    """This wire's entry of a part's provider_data (None when there is none)."""
    return provider_data.get(WIRE) if provider_data is not None else None


def extras_of(data: JSON, known: frozenset[str]) -> dict[str, Any]:
    """The keys of a stored block beyond the ones a part carries itself.

    Values are shared, not copied: bodies are only ever serialised.
    """
    if data is None or not isinstance(data, Mapping):
        return {}
    return {k: v for k, v in data.items() if k not in known}


def _keep(block: Mapping[str, Any], known: frozenset[str]) -> dict[str, JSON] | None:
    return {WIRE: dict(block)} if has_extras(block, known) else None


def _text(value: Any) -> str:
    return value if type(value) is str else str(value or "")


def text_from_block(block: Mapping[str, Any]) -> TextPart:
    return TextPart(text=_text(block.get("text")), provider_data=_keep(block, TEXT_KEYS))


def call_from_block(
    block: Mapping[str, Any], *, nm: ToolNames, seed: str, ordinal: int
) -> ToolCallPart:
    """A ``tool_use`` block as a call; the input may be an object or (leniently) JSON text."""
    call_id = block.get("id")
    if type(call_id) is not str or not call_id:
        call_id = call_id if isinstance(call_id, str) and call_id else call_id_for(seed, ordinal)
    name = block.get("name")
    name = nm.user(name if type(name) is str else _text(name))
    pd = {WIRE: dict(block)} if not block.keys() <= CALL_KEYS and has_extras(block, CALL_KEYS) \
        else None
    value = block.get("input")
    if type(value) is dict:
        pass
    elif isinstance(value, str):
        if not value.strip():
            value = {}
        else:
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=value,
                                             provider_data=pd)
    elif value is None:
        value = {}
    return ToolCallPart(id=call_id, name=name, arguments=value, provider_data=pd)


def part_from_block(block: Mapping[str, Any], *, nm: ToolNames, seed: str, ordinal: int) -> Part:
    """One assistant-side block as a part. Unknown and server-tool blocks stay opaque."""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return TextPart(text=text if type(text) is str else _text(text),
                        provider_data=None if block.keys() <= TEXT_KEYS
                        else _keep(block, TEXT_KEYS))
    if kind == "tool_use":
        return call_from_block(block, nm=nm, seed=seed, ordinal=ordinal)
    if kind in REASONING_TYPES:
        text = block.get("thinking") if kind == "thinking" else ""
        return ReasoningPart(text=str(text or ""), provider_data={WIRE: dict(block)})
    return OpaquePart(wire=WIRE, kind=str(kind), payload=dict(block))


def parts_from_blocks(blocks: Sequence[Any], *, nm: ToolNames, seed: str) -> list[Part]:
    parts: list[Part] = []
    ordinal = 0
    for block in blocks:
        if type(block) is not dict and not isinstance(block, Mapping):
            raise WireFormatError(f"{WIRE}: a content block must be an object, got {block!r}")
        kind = block.get("type")
        if kind == "tool_use":
            call_id, name, value = block.get("id"), block.get("name"), block.get("input")
            if (type(call_id) is str and call_id and type(name) is str and type(value) is dict
                    and block.keys() <= CALL_KEYS):  # the usual block, read directly
                parts.append(ToolCallPart(id=call_id, name=nm.user(name), arguments=value))
            else:
                parts.append(call_from_block(block, nm=nm, seed=seed, ordinal=ordinal))
            ordinal += 1
        elif kind == "text" and block.keys() <= TEXT_KEYS and type(block.get("text")) is str:
            parts.append(TextPart(text=block["text"]))
        else:
            parts.append(part_from_block(block, nm=nm, seed=seed, ordinal=ordinal))
    return parts


def result_text(content: Any) -> tuple[str, bool]:
    """A ``tool_result`` content as text, and whether that text says everything it held."""
    if content is None:
        return "", True
    if isinstance(content, str):
        return content, True
    if not isinstance(content, list):
        return dumps(content), False
    texts = [str(b.get("text") or "") for b in content
             if isinstance(b, Mapping) and b.get("type") == "text"]
    exact = len(content) == 1 and len(texts) == 1 and not has_extras(content[0], TEXT_KEYS)
    return "\n".join(texts), exact


def result_from_block(block: Mapping[str, Any], names: Mapping[str, str]) -> ToolResultPart:
    call_id = str(block.get("tool_use_id") or "")
    content, exact = result_text(block.get("content"))
    keep = not exact or has_extras(block, RESULT_KEYS)
    return ToolResultPart(
        call_id=call_id,
        content=content,
        is_error=bool(block.get("is_error")),
        name=names.get(call_id),
        provider_data={WIRE: dict(block)} if keep else None,
    )


# --------------------------------------------------------------------------- part -> block


def as_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    """A stored block to send: the same dict (bodies are only serialised), else a copy."""
    return value if type(value) is dict else copy.deepcopy(dict(value))


def reasoning_block(part: ReasoningPart) -> dict[str, Any] | None:
    """This wire's own reasoning block, verbatim, or None when the part holds none."""
    data = own_data(part.provider_data)
    if isinstance(data, Mapping) and data.get("type") in REASONING_TYPES:
        return dict(data)  # its own dict (the fields are strings), never the stored one
    return None


def text_block(part: TextPart) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": part.text}
    if part.provider_data is not None:
        block.update(extras_of(own_data(part.provider_data), TEXT_KEYS))
    return block


def call_block(part: ToolCallPart, *, nm: ToolNames, ids: IdRewriter,
               notes: list[Note] | None) -> dict[str, Any]:
    args = part.arguments
    if type(args) is not dict or part.parse_error is not None:
        if not isinstance(args, Mapping) or part.parse_error is not None:
            if notes is not None:
                why = "did not parse" if part.parse_error or args is None else "are not an object"
                notes.append(Note(
                    kind="arguments_replaced", subject=part.id,
                    detail=f"arguments {why}; sent as {{}} (input must be an object)"))
            args = {}
        else:
            args = as_dict(args)
    block: dict[str, Any] = {"type": "tool_use", "id": ids(part.id), "name": nm.wire(part.name),
                             "input": args}
    if part.provider_data is not None:
        block.update(extras_of(own_data(part.provider_data), CALL_KEYS))
    return block


def result_block(part: ToolResultPart, *, ids: IdRewriter) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": ids(part.call_id)}
    stored = own_data(part.provider_data)
    if stored is None:
        if part.content:
            block["content"] = part.content
        if part.is_error:
            block["is_error"] = True
        return block
    original = stored.get("content") if isinstance(stored, Mapping) else None
    if isinstance(original, list) and result_text(original)[0] == part.content:
        block["content"] = original
    elif part.content:
        block["content"] = part.content
    if part.is_error:
        block["is_error"] = True
    block.update(extras_of(stored, RESULT_KEYS))
    return block


# --------------------------------------------------------------------------- usage and stop


def _int(value: Any) -> int:
    return value if type(value) is int or (isinstance(value, int)
                                           and not isinstance(value, bool)) else 0


def usage_from(raw: Any) -> Usage:
    if type(raw) is not dict and not isinstance(raw, Mapping):
        return Usage()
    get = raw.get
    given = get("input_tokens")
    output = get("output_tokens")
    write = get("cache_creation_input_tokens")
    read = get("cache_read_input_tokens")
    if type(given) is not int or type(output) is not int:
        given, output = _int(given), _int(output)
    if write is None and read is None:  # older bodies and some gateways leave both out
        write = read = 0
    else:
        write, read = _int(write), _int(read)
    details = get("output_tokens_details")
    thinking = 0
    if details is not None and isinstance(details, Mapping):
        thinking = _int(details.get("thinking_tokens"))
    return Usage(
        input_tokens=given + write + read,
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=thinking,
    )


def usage_extras(raw: Any) -> dict[str, Any]:
    """Usage keys the canonical `Usage` does not carry (service tier, server-tool counts...)."""
    if type(raw) is not dict and not isinstance(raw, Mapping):
        return {}
    out: dict[str, Any] = {}
    for key in raw:
        if key not in USAGE_KEYS:
            out = {k: v for k, v in raw.items()
                   if k not in USAGE_KEYS and k != "output_tokens_details" and v is not None}
            details = raw.get("output_tokens_details")
            if isinstance(details, Mapping) and set(details) - {"thinking_tokens"}:
                out["output_tokens_details"] = dict(details)
            break
    return out


def usage_body(usage: Usage, extras: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input_tokens": max(0, usage.input_tokens - usage.cache_read_tokens
                            - usage.cache_write_tokens),
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
    }
    if usage.reasoning_tokens:
        out["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    if isinstance(extras, Mapping):
        for k, v in extras.items():
            if k == "output_tokens_details" and isinstance(v, Mapping):
                out[k] = {**v, **out.get(k, {})}
            elif k not in out:
                out[k] = copy.deepcopy(v)
    return out


def stop_for(raw: Any, parts: Sequence[Part]) -> tuple[StopReason, bool]:
    """The normalised stop and whether a call was cut off by a limit.

    A call counts as cut off when the reply ended on a limit and a call's arguments do not
    parse, or the reply's last block is a call (the limit hit while it was being written).
    """
    known: StopReason | None = STOP_REASONS.get(raw) if isinstance(raw, str) else None
    if known == "tool_calls" and parts and type(parts[-1]) is ToolCallPart:
        return "tool_calls", False  # the common case, decided without a look at every part
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    if calls and raw in _CUT_OFF:
        broken = any(c.parse_error is not None or c.arguments is None for c in calls)
        if broken or isinstance(parts[-1], ToolCallPart):
            return (known or "max_tokens"), True
    if calls:
        return "tool_calls", False
    if raw is None or known == "tool_calls":
        return "end_turn", False  # the content decides: no call, no request for tools
    return (known or "other"), False


def stop_to_wire(reply: Reply) -> str:
    if reply.raw_stop in STOP_REASONS:
        return reply.raw_stop
    if reply.message.tool_calls and not reply.truncated_call:
        return "tool_use"
    return _STOP_TO_WIRE.get(reply.stop, "end_turn")


# --------------------------------------------------------------------------- whole replies


def decode_reply(body: Mapping[str, Any], *, nm: ToolNames) -> Reply:
    if type(body) is not dict and not isinstance(body, Mapping):
        raise WireFormatError(f"{WIRE}: a reply must be a JSON object")
    get = body.get
    if get("type") == "error":
        raise WireFormatError(f"{WIRE}: this is an error body, not a reply: {dumps(body)[:300]}")
    content = get("content")
    if content is None:
        content = []
    if type(content) is not list and not isinstance(content, list):
        raise WireFormatError(f"{WIRE}: 'content' must be a list of blocks")
    rid = get("id")
    parts = parts_from_blocks(content, nm=nm,
                              seed=rid if type(rid) is str and rid else reply_seed(body))
    raw = get("stop_reason")
    stop: StopReason
    truncated: bool
    if raw == "tool_use" and parts and type(parts[-1]) is ToolCallPart:
        stop, truncated = "tool_calls", False  # the usual tool turn
    else:
        stop, truncated = stop_for(raw, parts)
    extras: dict[str, Any] | None = None
    if not body.keys() <= _QUIET_REPLY_KEYS or get("stop_sequence") is not None:
        for key, value in body.items():
            if value is not None and key not in REPLY_KEYS:
                if extras is None:
                    extras = {}
                extras[key] = value
    usage = get("usage")
    if type(usage) is not dict or not usage.keys() <= USAGE_KEYS:
        more_usage = usage_extras(usage)
        if more_usage:
            if extras is None:
                extras = {}
            extras["usage"] = more_usage
    model = get("model")
    return Reply(
        message=Message(role="assistant", parts=tuple(parts)),
        stop=stop,
        raw_stop=raw if isinstance(raw, str) else None,
        usage=usage_from(usage),
        model=model if isinstance(model, str) else None,
        id=rid if isinstance(rid, str) else None,
        truncated_call=truncated,
        provider_data={WIRE: extras} if extras else None,
    )


def reply_blocks(reply: Reply, *, nm: ToolNames) -> list[dict[str, Any]]:
    """A reply's parts as the blocks the API would have sent (unsigned thinking for foreign
    reasoning, other wires' opaque blocks left out)."""
    ids = IdRewriter(None)
    blocks: list[dict[str, Any]] = []
    for part in reply.message.parts:
        if isinstance(part, ReasoningPart):
            own = reasoning_block(part)
            blocks.append(own or {"type": "thinking", "thinking": part.text, "signature": ""})
        elif isinstance(part, TextPart):
            blocks.append(text_block(part))
        elif isinstance(part, ToolCallPart):
            blocks.append(call_block(part, nm=nm, ids=ids, notes=None))
        elif (isinstance(part, OpaquePart) and part.wire == WIRE
              and isinstance(part.payload, Mapping)):
            blocks.append(copy.deepcopy(dict(part.payload)))
        # A ToolResultPart never belongs in a reply; there is no block for it.
    return blocks


def reply_id(reply: Reply) -> str:
    if reply.id:
        return reply.id
    digest = hashlib.sha256(repr(reply.message).encode()).hexdigest()[:24]
    return f"msg_{digest}"


def reply_extras(reply: Reply) -> dict[str, Any]:
    data = (reply.provider_data or {}).get(WIRE)
    return dict(data) if isinstance(data, Mapping) else {}


def encode_reply(reply: Reply, *, nm: ToolNames, model: str) -> dict[str, Any]:
    extras = reply_extras(reply)
    body: dict[str, Any] = {
        "id": reply_id(reply),
        "type": "message",
        "role": "assistant",
        "model": reply.model or model,
        "content": reply_blocks(reply, nm=nm),
        "stop_reason": stop_to_wire(reply),
        "stop_sequence": None,
        "usage": usage_body(reply.usage, extras.pop("usage", None)),
    }
    body.update(copy.deepcopy(extras))
    return body
