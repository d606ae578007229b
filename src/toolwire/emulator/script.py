"""The emulator's script: replies and faults, read from values or JSON.

Owns `ScriptReply`, `Fault`, `Raw`, `ByMedia` (a reply chosen by the media a request carries),
`parse_item` and `load_script`. A file is a JSON object
``{"replies": [...]}`` or a bare JSON list of items. What a fault looks like in a wire (the
overloaded status) is the wire registry's. Must not import the HTTP server or a codec module.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire import _json
from toolwire.codecs.registry import Wire, get_wire
from toolwire.errors import TranscriptError
from toolwire.transcript import (
    MediaPart,
    Message,
    Part,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
    replace,
)
from toolwire.transcript_json import from_json

FAULTS = ("rate_limit", "overloaded", "server_error", "drop_mid_stream", "slow_first_byte",
          "malformed_chunk", "auth", "bad_request", "error_mid_stream")


@dataclass(frozen=True, slots=True)
class ScriptReply:
    reply: Reply
    delay: float = 0.0


@dataclass(frozen=True, slots=True)
class Fault:
    """A scripted failure.

    ``kind``: ``rate_limit`` (429, with ``retry_after``), ``overloaded`` (the wire's
    ``overloaded_status``: 529 on Anthropic, 503 elsewhere), ``server_error`` (500), ``auth``
    (401), ``bad_request`` (400),
    ``drop_mid_stream`` (the connection closes half way through a streamed ``reply``),
    ``malformed_chunk`` (a broken event in the middle of a stream), ``error_mid_stream`` (half
    of a streamed ``reply``, then the exception ``exception`` inside the AWS event stream, as
    Bedrock sends ``throttlingException``, ``modelStreamErrorException``,
    ``internalServerException`` or ``serviceUnavailableException``), ``slow_first_byte`` (waits
    ``delay`` seconds, then answers with ``reply``: put it in the script as a reply with a
    ``delay`` instead when no failure is wanted).
    """

    kind: str
    retry_after: float | None = None
    delay: float = 0.0
    message: str | None = None
    reply: Reply | None = None
    exception: str = "throttlingException"

    def status_for(self, wire: Wire | str) -> int:
        """The HTTP status this fault answers with in ``wire`` (a record or a wire's name)."""
        if self.kind == "overloaded":
            return (get_wire(wire) if isinstance(wire, str) else wire).overloaded_status
        return {"rate_limit": 429, "server_error": 500, "auth": 401,
                "bad_request": 400}.get(self.kind, 500)

    def default_message(self) -> str:
        return {
            "rate_limit": "Rate limit reached; retry after a pause.",
            "overloaded": "Overloaded",
            "server_error": "Internal server error",
            "auth": "invalid x-api-key",
            "bad_request": "The request was rejected.",
        }.get(self.kind, "scripted failure")


@dataclass(frozen=True, slots=True)
class Raw:
    """Bytes served as they are, in any wire: a body or a stream that no codec wrote.

    ``body`` is sent whole with ``status``. ``chunks`` (any iterable of bytes, an endless one
    too) are sent instead one by one, ``interval`` seconds apart, with chunked transfer
    encoding; ``drop`` then closes the connection without ending the body. ``content_type``
    defaults to JSON for a body and to the wire's stream media type for chunks. JSON form:
    ``{"raw": TEXT, "status": 200}`` or ``{"raw_chunks": [TEXT, ...], "interval": 0.1}``.
    """

    body: bytes = b""
    status: int = 200
    chunks: Iterable[bytes] | None = None
    interval: float = 0.0
    drop: bool = False
    content_type: str | None = None


MEDIA_KEYS = ("image", "document", "audio", "any", "none")


@dataclass(frozen=True, slots=True)
class ByMedia:
    """Replies chosen by the media in the request's newest user or tool turn (its own parts
    and its tool results'): the first key, in the mapping's order, that fits: ``image``,
    ``document`` or ``audio`` (the turn holds media of that kind), ``any`` (it holds media),
    ``none`` (it holds none). ``{media}`` in a reply's text becomes what the turn held (kind,
    type and size of each, or ``no media``). JSON form: ``{"by_media": {"image": REPLY,
    "none": REPLY}}``, each reply as a script item gives it."""

    replies: Mapping[str, Reply]

    def __post_init__(self) -> None:
        unknown = [k for k in self.replies if k not in MEDIA_KEYS]
        if unknown or not self.replies:
            raise TranscriptError(f"by_media keys must be among {', '.join(MEDIA_KEYS)}; got "
                                  f"{', '.join(map(repr, unknown)) or 'none'}")

    def choose(self, request: Request) -> Reply | Fault:
        """The reply for ``request``, or a fault naming what no key fitted."""
        media = newest_media(request)
        kinds = {m.kind for m in media}
        for key, reply in self.replies.items():
            if key in kinds or (key == "any" and media) or (key == "none" and not media):
                said = ", ".join(f"{m.kind} {m.media_type} ({m.size} bytes)" for m in media)
                return _filled(reply, said or "no media")
        return Fault(kind="server_error", message=(
            f"the script's by_media item has no reply for a turn holding "
            f"{', '.join(sorted(kinds)) or 'no media'}; add a key for it"))


def newest_media(request: Request) -> list[MediaPart]:
    """The media of the request's newest user or tool turn, results' media included."""
    for message in reversed(request.messages):
        if message.role in ("user", "tool"):
            out: list[MediaPart] = []
            for part in message.parts:
                if isinstance(part, MediaPart):
                    out.append(part)
                elif isinstance(part, ToolResultPart):
                    out.extend(part.media)
            return out
    return []


def _filled(reply: Reply, said: str) -> Reply:
    parts = tuple(TextPart(text=p.text.replace("{media}", said))
                  if isinstance(p, TextPart) and "{media}" in p.text else p
                  for p in reply.message.parts)
    return replace(reply, message=replace(reply.message, parts=parts))


ScriptItem = ScriptReply | Fault | Raw | ByMedia


def _shorthand(item: dict[str, Any], where: str) -> Reply:
    parts: list[Part] = []
    if item.get("text"):
        parts.append(TextPart(text=str(item["text"])))
    for n, call in enumerate(item.get("tool_calls", ())):
        if "name" not in call:
            raise TranscriptError(f"{where}: tool call #{n} has no 'name'")
        digest = hashlib.sha256(json.dumps(item, sort_keys=True).encode()).hexdigest()[:10]
        call_id = call.get("id") or f"call_{digest}{n}"
        caller = call.get("caller")  # the server-side code that made it, if not the model
        if caller is not None and not isinstance(caller, str):
            raise TranscriptError(f"{where}: tool call #{n}: 'caller' must be a string")
        if "input" in call:  # a custom tool's call: free text
            parts.append(ToolCallPart(id=call_id, name=call["name"], arguments=call["input"],
                                      raw_arguments=call["input"], freeform=True, caller=caller))
        elif "raw_arguments" in call:
            parts.append(ToolCallPart.from_raw(id=call_id, name=call["name"],
                                               raw_arguments=call["raw_arguments"],
                                               caller=caller))
        else:
            parts.append(ToolCallPart(id=call_id, name=call["name"],
                                      arguments=call.get("arguments", {}), caller=caller))
    calls = any(isinstance(p, ToolCallPart) for p in parts)
    usage = item.get("usage", {})
    return Reply(
        message=Message(role="assistant", parts=tuple(parts)),
        stop=item.get("stop", "tool_calls" if calls else "end_turn"),
        usage=Usage(input_tokens=usage.get("input_tokens", 0),
                    output_tokens=usage.get("output_tokens", 0)),
    )


_NUMBER, _TEXT = (int, float), (str,)
_FIELD_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "delay": (_NUMBER, "a number of seconds"), "retry_after": (_NUMBER, "a number of seconds"),
    "interval": (_NUMBER, "a number of seconds"), "status": ((int,), "an HTTP status number"),
    "usage": ((dict,), "an object of token counts"), "tool_calls": ((list,), "a list of calls"),
    "text": (_TEXT, "a string"), "stop": (_TEXT, "a string"), "message": (_TEXT, "a string"),
    "exception": (_TEXT, "a string"), "raw": (_TEXT, "a string"),
    "raw_chunks": ((list,), "a list of strings"), "drop": ((bool,), "true or false"),
    "reply": ((dict,), "a reply object"),
}
_CALL_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "id": (_TEXT, "a string"), "name": (_TEXT, "a string"),
    "arguments": ((dict, str), "an object"), "raw_arguments": (_TEXT, "a string"),
    "input": (_TEXT, "a string (a custom tool's text)"),
}


def _check_types(item: dict[str, Any], where: str,
                 types: dict[str, tuple[tuple[type, ...], str]] = _FIELD_TYPES) -> None:
    """Refuse a field whose value is of the wrong type, naming it (None means not given)."""
    for key, (kinds, said) in types.items():
        value = item.get(key)
        wrong = isinstance(value, bool) and bool not in kinds
        if value is not None and (wrong or not isinstance(value, kinds)):
            raise TranscriptError(f"{where}: {key!r} must be {said}, got {value!r}")
    for key, value in (item.get("usage") or {}).items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise TranscriptError(f"{where}: usage {key!r} must be a whole number, got "
                                  f"{value!r}")
    if types is _FIELD_TYPES:
        for n, call in enumerate(item.get("tool_calls") or ()):
            if not isinstance(call, dict):
                raise TranscriptError(f"{where}: tool call #{n} must be an object, got "
                                      f"{call!r}")
            _check_types(call, f"{where}: tool call #{n}", _CALL_TYPES)


def parse_item(item: Any, where: str = "script item") -> ScriptItem:
    """One script item from a value or its JSON form."""
    if isinstance(item, ScriptReply | Fault | Raw | ByMedia):
        return item
    if isinstance(item, Reply):
        return ScriptReply(item)
    if not isinstance(item, dict):
        raise TranscriptError(f"{where}: expected an object, got {type(item).__name__}")
    _check_types(item, where)
    if "raw" in item or "raw_chunks" in item:
        chunks = item.get("raw_chunks")
        return Raw(body=str(item.get("raw", "")).encode(), status=int(item.get("status", 200)),
                   chunks=None if chunks is None else [str(c).encode() for c in chunks],
                   interval=float(item.get("interval", 0.0)), drop=bool(item.get("drop")))
    if "by_media" in item:
        table = item["by_media"]
        if not isinstance(table, dict):
            raise TranscriptError(f"{where}: by_media must be an object of replies by kind")
        return ByMedia({str(k): _reply(v, f"{where} by_media {k}") if isinstance(v, dict)
                        else _not_reply(where, k) for k, v in table.items()})
    if "fault" in item:
        kind = item["fault"]
        if kind not in FAULTS:
            raise TranscriptError(
                f"{where}: unknown fault {kind!r}; use one of {', '.join(FAULTS)}")
        reply = item.get("reply")
        return Fault(kind=kind, retry_after=item.get("retry_after"), delay=item.get("delay", 0.0),
                     message=item.get("message"),
                     reply=_reply(reply, where) if reply is not None else None,
                     exception=str(item.get("exception", "throttlingException")))
    return ScriptReply(_reply(item, where), delay=float(item.get("delay", 0.0)))


def _not_reply(where: str, key: Any) -> Reply:
    raise TranscriptError(f"{where}: by_media {key!r} must be a reply object")


def _reply(item: dict[str, Any], where: str) -> Reply:
    if item.get("type") == "reply":
        value = from_json(item)
        assert isinstance(value, Reply)
        return value
    return _shorthand(item, where)


def load_script(path: Path) -> list[ScriptItem]:
    """Read a script file; errors name the file and the item."""
    try:
        data = _json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TranscriptError(f"script file {path} does not exist") from None
    except ValueError as exc:
        raise TranscriptError(f"script file {path} is not valid JSON: {exc}") from None
    items = data.get("replies") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise TranscriptError(f"script file {path}: expected a list of replies or "
                              '{"replies": [...]}')
    return [parse_item(item, f"{path} item #{n}") for n, item in enumerate(items)]
