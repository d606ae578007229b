"""What every codec shares: stream events, stream framing, notes, and tool-name mapping.

Owns: the `StreamEvent` values, the `SSEFramer` and `NDJSONFramer` byte framers, `Note` and
`Encoded`, `NameMap`, and `drive_stream` (the generic ``decode_stream`` over a codec's
incremental decoder). Pure: no HTTP, no vendor SDK, no globals that change.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from toolwire.errors import (
    AuthenticationError,
    ContextLengthError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
    WireFormatError,
)
from toolwire.transcript import JSON, Reply, Request, ToolCallPart

WireName = Literal[
    "anthropic-messages", "openai-chat", "openai-responses", "ollama-chat", "gemini-generate"
]
WIRES: tuple[WireName, ...] = (
    "anthropic-messages",
    "openai-chat",
    "openai-responses",
    "ollama-chat",
    "gemini-generate",
)

# --------------------------------------------------------------------------- notes


@dataclass(frozen=True, kw_only=True, slots=True)
class Note:
    """Something a codec or a conversion changed or could not carry over.

    ``kind``: ``tool_name_mapped``, ``schema_rewritten``, ``reasoning_dropped``, ``id_rewritten``,
    ``opaque_dropped``, ``field_dropped``, ``choice_changed``, ... ``subject`` names what it is
    about (a tool, a call id, a message index); ``detail`` says what was done.
    """

    kind: str
    subject: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.subject}: {self.detail}"


@dataclass(frozen=True, kw_only=True, slots=True)
class Encoded:
    """A request body in one wire, with every change made to fit it."""

    body: dict[str, Any]
    notes: tuple[Note, ...] = ()


# --------------------------------------------------------------------------- stream events


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallStarted:
    index: int
    id: str
    name: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallDelta:
    index: int
    fragment: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallFinished:
    index: int
    call: ToolCallPart


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamEnd:
    """The last event of every stream: the whole reply, as `decode_response` would give it."""

    reply: Reply


StreamEvent = (
    TextDelta | ReasoningDelta | ToolCallStarted | ToolCallDelta | ToolCallFinished | StreamEnd
)


class StreamDecoder(Protocol):
    """An incremental decoder: feed it bytes as they arrive, then finish."""

    def feed(self, data: bytes) -> list[StreamEvent]: ...

    def finish(self) -> Reply: ...


def drive_stream(decoder: StreamDecoder, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
    """Run a decoder over chunks; the last event is `StreamEnd`."""
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield StreamEnd(reply=decoder.finish())


# --------------------------------------------------------------------------- framing


@dataclass(slots=True)
class SSEEvent:
    event: str | None
    data: str


class SSEFramer:
    """Server-sent events from bytes split anywhere (mid-line, mid-UTF-8 character).

    Follows the spec: ``event:`` and ``data:`` fields, multi-line data joined with newlines, a
    blank line ends an event, lines starting with ``:`` are comments (keep-alives). CR, LF and
    CRLF all end lines.
    """

    __slots__ = ("_buf", "_data", "_event")

    def __init__(self) -> None:
        self._buf = b""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[SSEEvent]:
        self._buf += data
        out: list[SSEEvent] = []
        while True:
            nl = self._buf.find(b"\n")
            cr = self._buf.find(b"\r")
            if nl < 0 and cr < 0:
                break
            if cr >= 0 and (nl < 0 or cr < nl):
                if cr == len(self._buf) - 1:
                    break  # a CR at the end may be the first half of CRLF
                end, skip = cr, (2 if self._buf[cr + 1 : cr + 2] == b"\n" else 1)
            else:
                end, skip = nl, 1
            line = self._buf[:end].decode("utf-8")
            self._buf = self._buf[end + skip :]
            self._line(line, out)
        return out

    def _line(self, line: str, out: list[SSEEvent]) -> None:
        if not line:
            if self._data or self._event is not None:
                out.append(SSEEvent(self._event, "\n".join(self._data)))
            self._event, self._data = None, []
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value

    def close(self) -> list[SSEEvent]:
        """Flush what is left when the connection ends (a last event with no blank line)."""
        out: list[SSEEvent] = []
        if self._buf:
            rest, self._buf = self._buf.decode("utf-8"), b""
            for line in rest.splitlines():
                self._line(line, out)
        self._line("", out)
        return out


class NDJSONFramer:
    """One JSON value per line, from bytes split anywhere. Blank lines are skipped."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = b""

    def feed(self, data: bytes) -> list[str]:
        self._buf += data
        if b"\n" not in self._buf:
            return []
        *lines, self._buf = self._buf.split(b"\n")
        return [s for s in (ln.decode("utf-8").strip() for ln in lines) if s]

    def close(self) -> list[str]:
        rest, self._buf = self._buf.decode("utf-8").strip(), b""
        return [rest] if rest else []


# --------------------------------------------------------------------------- names

PORTABLE_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")


@dataclass(frozen=True, slots=True)
class NameMap:
    """A two-way mapping between the user's tool names and the names a wire accepts.

    Built deterministically from the tool list alone, so every turn of a conversation maps the
    same names the same way, in the tool list and in the history alike.
    """

    to_wire: Mapping[str, str] = field(default_factory=dict)
    from_wire: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        names: Sequence[str],
        *,
        pattern: re.Pattern[str] = PORTABLE_NAME,
        max_len: int = 64,
        bad_char: re.Pattern[str] = re.compile(r"[^a-zA-Z0-9_-]"),
    ) -> NameMap:
        fit = {n for n in names if pattern.match(n)}
        if len(fit) == len(names) or fit.issuperset(names):
            return cls({}, {})  # the usual case: every name is already one the wire accepts
        to_wire: dict[str, str] = {}
        taken = set(fit)
        for name in names:
            if name in fit:
                continue
            base = bad_char.sub("_", name) or "tool"
            if not re.match(r"[a-zA-Z_]", base):
                base = "t_" + base
            candidate = base[:max_len]
            if candidate in taken or not pattern.match(candidate):
                digest = hashlib.sha256(name.encode()).hexdigest()[:8]
                candidate = f"{base[: max_len - 9]}_{digest}"
            to_wire[name] = candidate
            taken.add(candidate)
        return cls(to_wire, {v: k for k, v in to_wire.items()})

    def wire(self, name: str) -> str:
        return self.to_wire.get(name, name)

    def user(self, name: str) -> str:
        return self.from_wire.get(name, name)

    def notes(self) -> list[Note]:
        return [
            Note(kind="tool_name_mapped", subject=user,
                 detail=f"sent as {wire!r}: the wire does not accept this name")
            for user, wire in self.to_wire.items()
        ]


# --------------------------------------------------------------------------- small helpers


def call_id_for(seed: str, index: int) -> str:
    """A deterministic id for a call that came without one (same reply, same id)."""
    digest = hashlib.sha256(f"{seed}\x00{index}".encode()).hexdigest()[:24]
    return f"call_{digest}"


def dumps(value: JSON) -> str:
    """Compact JSON text, non-ASCII kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loads_or_none(text: str) -> JSON:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


class Codec(Protocol):
    """The functions every codec module has (checked by the contract test)."""

    WIRE: str
    STOP_REASONS: Mapping[str, str]

    def encode(self, request: Request) -> Encoded: ...

    def encode_request(self, request: Request) -> dict[str, Any]: ...

    def decode_request(self, body: Mapping[str, Any]) -> Request: ...

    def decode_response(
        self, body: Mapping[str, Any], *, request: Request | None = None
    ) -> Reply: ...

    def encode_response(
        self, reply: Reply, *, request: Request | None = None
    ) -> dict[str, Any]: ...

    def encode_stream(self, reply: Reply, *, request: Request | None = None) -> list[bytes]: ...

    def stream_decoder(self, *, request: Request | None = None) -> StreamDecoder: ...

    def decode_stream(
        self, chunks: Iterable[bytes], *, request: Request | None = None
    ) -> Iterator[StreamEvent]: ...

    def decode_error(
        self, status: int, body: Any, headers: Mapping[str, str] | None = None
    ) -> ProviderError: ...


# --------------------------------------------------------------------------- errors

_CONTEXT_WORDS = (
    "context length",
    "context_length",
    "context window",
    "prompt is too long",
    "too many tokens",
    "maximum context",
    "input is too long",
    "exceeds the maximum number of tokens",
    "input token count",
)


def provider_error(
    status: int,
    message: str,
    *,
    wire: str,
    error_type: str | None = None,
    body: Any = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The typed error for an HTTP status and a provider's message."""
    lowered = f"{error_type or ''} {message}".lower()
    cls: type[ProviderError]
    if any(word in lowered for word in _CONTEXT_WORDS):
        cls = ContextLengthError
    elif status == 429:
        cls = RateLimitError
    elif status in (503, 529) or "overloaded" in lowered:
        cls = OverloadedError
    elif status == 401:
        cls = AuthenticationError
    elif status == 403:
        cls = PermissionDeniedError
    elif status == 404:
        cls = NotFoundError
    elif status in (408, 409) or status >= 500:
        cls = ServerError
    elif 400 <= status < 500:
        cls = InvalidRequestError
    else:
        cls = ProviderError
    return cls(message, status=status, error_type=error_type, wire=wire, body=body,
               retry_after=retry_after)


def retry_after_from(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds), if given."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = lower.get(key)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            continue
    return None


# --------------------------------------------------------------------------- shared by the codecs


def own_options(options: Mapping[str, Any] | None, wire: str, notes: list[Note]) -> dict[str, Any]:
    """``wire``'s entry of `Request.provider_options` (a shallow copy, values as given).

    Adds a ``field_dropped`` note for each setting meant for another wire, and for an entry
    that is not an object of body keys: nothing is dropped silently.
    """
    mine: dict[str, Any] = {}
    for other, entry in (options or {}).items():
        subject = f"provider_options[{other!r}]"
        if not isinstance(entry, Mapping):
            notes.append(Note(kind="field_dropped", subject=subject,
                              detail=f"not an object of body keys; not sent to {wire}"))
        elif other == wire:
            mine = dict(entry)
        else:
            notes.extend(Note(kind="field_dropped", subject=subject,
                              detail=f"{key!r} is set for {other} only; not sent to {wire}")
                         for key in entry)
    return mine


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "a list", str: "a string", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def wrong_shape(where: str, expected: str, value: Any) -> WireFormatError:
    """The error for a body field of the wrong shape: where, what was expected, what came."""
    return WireFormatError(f"{where}: expected {expected}, got {_json_kind(value)}")
