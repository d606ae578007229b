"""The saved JSON form of transcript values, versioned.

Owns `to_json` and `from_json`. ``from_json(to_json(x)) == x`` for every value of
`toolwire.transcript`. The form is plain JSON (dicts, lists, strings, numbers) so it can be
written to run logs and cassettes; every object carries ``"type"`` and top-level documents
carry ``"toolwire": FORMAT_VERSION``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, assert_never

import msgspec

from toolwire.errors import TranscriptError
from toolwire.transcript import (
    JSON,
    MEDIA_KINDS,
    Cache,
    ContextManagement,
    Grammar,
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Reply,
    Request,
    ResultPart,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Usage,
)

FORMAT_VERSION = 2
"""Version 2 added media parts and tool results made of parts; version 1 documents still read."""

READABLE_VERSIONS = (1, 2)

Value = Part | Message | Request | Reply | Usage | ToolSpec | ToolChoice


def _pd(out: dict[str, Any], provider_data: Any) -> dict[str, Any]:
    if provider_data is not None:
        out["provider_data"] = dict(provider_data)
    return out


def _part(p: Part) -> dict[str, Any]:
    if isinstance(p, TextPart):
        return _pd({"type": "text", "text": p.text}, p.provider_data)
    if isinstance(p, ReasoningPart):
        return _pd({"type": "reasoning", "text": p.text}, p.provider_data)
    if isinstance(p, ToolCallPart):
        out: dict[str, Any] = {"type": "tool_call", "id": p.id, "name": p.name}
        out["arguments"] = p.arguments
        if p.raw_arguments is not None:
            out["raw_arguments"] = p.raw_arguments
        if p.parse_error is not None:
            out["parse_error"] = p.parse_error
        if p.caller is not None:
            out["caller"] = p.caller
        if p.freeform:
            out["freeform"] = True
        return _pd(out, p.provider_data)
    if isinstance(p, ToolResultPart):
        content = p.content if isinstance(p.content, str) else [_part(c) for c in p.content]
        out = {"type": "tool_result", "call_id": p.call_id, "content": content}
        if p.is_error:
            out["is_error"] = True
        if p.name is not None:
            out["name"] = p.name
        return _pd(out, p.provider_data)
    if isinstance(p, OpaquePart):
        return {"type": "opaque", "wire": p.wire, "kind": p.kind, "payload": p.payload}
    if isinstance(p, MediaPart):
        return _pd(_media(p), p.provider_data)
    assert_never(p)


def _media(p: MediaPart) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "media", "kind": p.kind, "media_type": p.media_type}
    if p.data is not None:
        out["data"] = base64.b64encode(p.data).decode("ascii")
    if p.url is not None:
        out["url"] = p.url
    if p.file_ids:
        out["file_ids"] = dict(p.file_ids)
    if p.name is not None:
        out["name"] = p.name
    return out


def _load_media(d: dict[str, Any]) -> MediaPart:
    kind = _req(d, "kind", "media part")
    if kind not in MEDIA_KINDS:
        raise TranscriptError(f"media part: kind {kind!r} is not image, document or audio")
    media_type = _req(d, "media_type", "media part")
    data, url, file_ids, name = d.get("data"), d.get("url"), d.get("file_ids"), d.get("name")
    if not isinstance(media_type, str):
        raise TranscriptError("media part: 'media_type' must be a string")
    raw: bytes | None = None
    if data is not None:
        if not isinstance(data, str):
            raise TranscriptError("media part: 'data' must be a base64 string")
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise TranscriptError("media part: 'data' is not valid base64") from None
    if url is not None and not isinstance(url, str):
        raise TranscriptError("media part: 'url' must be a string")
    if file_ids is not None and not (isinstance(file_ids, dict) and all(
            isinstance(v, str) for v in file_ids.values())):
        raise TranscriptError("media part: 'file_ids' must map wire names to strings")
    if name is not None and not isinstance(name, str):
        raise TranscriptError("media part: 'name' must be a string")
    return MediaPart(kind=kind, media_type=media_type, data=raw, url=url, file_ids=file_ids,
                     name=name, provider_data=d.get("provider_data"))


def _load_result_content(raw: Any) -> str | tuple[ResultPart, ...]:
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, list):
        raise TranscriptError("tool_result part: 'content' must be a string or a list of parts")
    out: list[ResultPart] = []
    for item in raw:
        part = _load_part(item) if isinstance(item, dict) else None
        if not isinstance(part, (TextPart, MediaPart)):
            raise TranscriptError(
                "tool_result part: each item of 'content' must be a text or media part")
        out.append(part)
    return tuple(out)


def _message(m: Message) -> dict[str, Any]:
    out = {"type": "message", "role": m.role, "parts": [_part(p) for p in m.parts]}
    if m.tools:
        out["tools"] = [_spec(t) for t in m.tools]
    return _pd(out, m.provider_data)


def _usage(u: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "usage"}
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                 "cache_write_long_tokens", "reasoning_tokens"):
        value = getattr(u, name)
        if value:
            out[name] = value
    if u.cost is not None:
        out["cost"] = u.cost
    return out


def _spec(t: ToolSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "tool", "name": t.name, "description": t.description,
                           "input_schema": dict(t.input_schema)}
    if t.strict:
        out["strict"] = True
    if t.deferred:
        out["deferred"] = True
    if t.examples:
        out["examples"] = [dict(e) for e in t.examples]
    if t.allowed_callers:
        out["allowed_callers"] = list(t.allowed_callers)
    if t.freeform:
        out["freeform"] = True
    if t.grammar is not None:
        out["grammar"] = {"syntax": t.grammar.syntax, "definition": t.grammar.definition}
    return out


def _choice(c: ToolChoice) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "tool_choice", "mode": c.mode}
    if c.name is not None:
        out["name"] = c.name
    if c.parallel is not None:
        out["parallel"] = c.parallel
    return out


def to_json(value: Value) -> dict[str, Any]:
    """The saved JSON form of any transcript value."""
    if isinstance(value, Message):
        out = _message(value)
    elif isinstance(value, Request):
        out = {"type": "request", "model": value.model}
        if value.system is not None:
            out["system"] = value.system
        out["messages"] = [_message(m) for m in value.messages]
        if value.tools:
            out["tools"] = [_spec(t) for t in value.tools]
        if value.tool_choice is not None:
            out["tool_choice"] = _choice(value.tool_choice)
        for name in ("max_tokens", "temperature"):
            if getattr(value, name) is not None:
                out[name] = getattr(value, name)
        if value.stream:
            out["stream"] = True
        if value.provider_options is not None:
            out["provider_options"] = dict(value.provider_options)
        for name in ("cache", "context_management"):
            setting = getattr(value, name)
            if setting is not None:
                out[name] = {k: v for k, v in msgspec.structs.asdict(setting).items()
                             if v is not None and v is not False}
    elif isinstance(value, Reply):
        out = {"type": "reply", "message": _message(value.message), "stop": value.stop}
        if value.raw_stop is not None:
            out["raw_stop"] = value.raw_stop
        out["usage"] = _usage(value.usage)
        if value.model is not None:
            out["model"] = value.model
        if value.id is not None:
            out["id"] = value.id
        if value.truncated_call:
            out["truncated_call"] = True
        _pd(out, value.provider_data)
    elif isinstance(value, Usage):
        out = _usage(value)
    elif isinstance(value, ToolSpec):
        out = _spec(value)
    elif isinstance(value, ToolChoice):
        out = _choice(value)
    else:
        out = _part(value)
    return out


def dump(value: Value) -> dict[str, Any]:
    """`to_json` as a top-level document, stamped with the format version."""
    return {"toolwire": FORMAT_VERSION, **to_json(value)}


def _req(d: dict[str, Any], key: str, where: str) -> Any:
    try:
        return d[key]
    except KeyError:
        raise TranscriptError(f"{where}: missing key {key!r}") from None


def _load_part(d: dict[str, Any]) -> Part:
    kind = d.get("type")
    pd = d.get("provider_data")
    if kind == "text":
        return TextPart(text=_req(d, "text", "text part"), provider_data=pd)
    if kind == "reasoning":
        return ReasoningPart(text=d.get("text", ""), provider_data=pd)
    if kind == "tool_call":
        return ToolCallPart(
            id=_req(d, "id", "tool_call part"),
            name=_req(d, "name", "tool_call part"),
            arguments=d.get("arguments"),
            raw_arguments=d.get("raw_arguments"),
            parse_error=d.get("parse_error"),
            provider_data=pd,
            caller=d["caller"] if isinstance(d.get("caller"), str) else None,
            freeform=d.get("freeform") is True,
        )
    if kind == "tool_result":
        return ToolResultPart(
            call_id=_req(d, "call_id", "tool_result part"),
            content=_load_result_content(_req(d, "content", "tool_result part")),
            is_error=bool(d.get("is_error", False)),
            name=d.get("name"),
            provider_data=pd,
        )
    if kind == "media":
        return _load_media(d)
    if kind == "opaque":
        return OpaquePart(
            wire=_req(d, "wire", "opaque part"),
            kind=_req(d, "kind", "opaque part"),
            payload=d.get("payload"),
        )
    raise TranscriptError(
        f"unknown part type {kind!r}; expected text, reasoning, tool_call, tool_result, "
        "media or opaque"
    )


def _load_message(d: dict[str, Any]) -> Message:
    role = _req(d, "role", "message")
    if role not in ("system", "user", "assistant", "tool"):
        raise TranscriptError(f"message role {role!r} is not system, user, assistant or tool")
    return Message(
        role=role,
        parts=tuple(_load_part(p) for p in _req(d, "parts", "message")),
        provider_data=d.get("provider_data"),
        tools=tuple(_load_spec(t) for t in d.get("tools") or ()),
    )


def _load_managed(d: Any) -> ContextManagement | None:
    if d is None:
        return None
    if not isinstance(d, dict):
        raise TranscriptError("a request's 'context_management' must be an object, got "
                              f"{type(d).__name__}")
    try:
        return msgspec.convert({"compact": False, **d}, ContextManagement)
    except msgspec.ValidationError as exc:
        raise TranscriptError(f"a request's 'context_management': {exc}") from None


def _load_cache(d: Any) -> Cache | None:
    if d is None:
        return None
    if not isinstance(d, dict):
        raise TranscriptError(f"a request's 'cache' must be an object, got {type(d).__name__}")
    return Cache(ttl=d.get("ttl"), key=d.get("key"), retention=d.get("retention"),
                 markers=bool(d.get("markers", False)), explicit=bool(d.get("explicit", False)))


def _load_usage(d: dict[str, Any]) -> Usage:
    return Usage(
        input_tokens=d.get("input_tokens", 0),
        output_tokens=d.get("output_tokens", 0),
        cache_read_tokens=d.get("cache_read_tokens", 0),
        cache_write_tokens=d.get("cache_write_tokens", 0),
        cache_write_long_tokens=d.get("cache_write_long_tokens", 0),
        reasoning_tokens=d.get("reasoning_tokens", 0),
        cost=d.get("cost"),
    )


def _load_spec(d: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        name=_req(d, "name", "tool"),
        description=d.get("description", ""),
        input_schema=_req(d, "input_schema", "tool"),
        strict=bool(d.get("strict", False)),
        deferred=bool(d.get("deferred", False)),
        examples=tuple(d.get("examples", ())),
        allowed_callers=tuple(str(c) for c in d.get("allowed_callers", ())),
        freeform=d.get("freeform") is True,
        grammar=Grammar(syntax=str(grammar.get("syntax")), definition=str(
            grammar.get("definition"))) if isinstance(grammar := d.get("grammar"), dict) else None,
    )


def _load_choice(d: dict[str, Any]) -> ToolChoice:
    return ToolChoice(mode=_req(d, "mode", "tool_choice"), name=d.get("name"),
                      parallel=d.get("parallel"))


def from_json(data: JSON) -> Value:
    """Read back any value written by `to_json` or `dump`."""
    if not isinstance(data, dict):
        raise TranscriptError(f"expected a JSON object, got {type(data).__name__}")
    version = data.get("toolwire", FORMAT_VERSION)
    if version not in READABLE_VERSIONS:
        raise TranscriptError(
            f"transcript format version {version!r} is not supported; this toolwire reads "
            f"versions {', '.join(map(str, READABLE_VERSIONS))}"
        )
    kind = data.get("type")
    if kind == "message":
        return _load_message(data)
    if kind == "request":
        choice = data.get("tool_choice")
        return Request(
            model=_req(data, "model", "request"),
            system=data.get("system"),
            messages=tuple(_load_message(m) for m in data.get("messages", ())),
            tools=tuple(_load_spec(t) for t in data.get("tools", ())),
            tool_choice=_load_choice(choice) if choice is not None else None,
            max_tokens=data.get("max_tokens"),
            temperature=data.get("temperature"),
            stream=bool(data.get("stream", False)),
            provider_options=data.get("provider_options"),
            cache=_load_cache(data.get("cache")),
            context_management=_load_managed(data.get("context_management")),
        )
    if kind == "reply":
        return Reply(
            message=_load_message(_req(data, "message", "reply")),
            stop=_req(data, "stop", "reply"),
            raw_stop=data.get("raw_stop"),
            usage=_load_usage(data.get("usage", {})),
            model=data.get("model"),
            id=data.get("id"),
            truncated_call=bool(data.get("truncated_call", False)),
            provider_data=data.get("provider_data"),
        )
    if kind == "usage":
        return _load_usage(data)
    if kind == "tool":
        return _load_spec(data)
    if kind == "tool_choice":
        return _load_choice(data)
    return _load_part(data)
