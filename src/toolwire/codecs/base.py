"""What every codec shares: stream events, stream framing, notes, and tool-name mapping.

Owns: `NameMap`, `Codec` (one wire's functions, with the ones every wire derives the same way
written once, its ``encode`` fitted to what the wire can carry by `toolwire.codecs.fitting`),
`drive_stream` (the generic ``decode_stream`` over a
codec's incremental decoder), and small helpers the wires share; typed provider errors are
`toolwire.codecs.errormap`'s, and `Note` and `Encoded` `toolwire.codecs.encoded`'s, both
re-exported here for the wires. Stream
events are `toolwire.events`'; byte framing is `toolwire.codecs.framing`'s; reading bodies from
outside (the typed readers that name a path, and the guards that make every decoder total) is
`toolwire.codecs.reading`'s, whose readers are re-exported here for the wires. Pure: no HTTP,
no vendor SDK, no globals that change; must not import a wire.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from toolwire.codecs.encoded import Encoded as Encoded
from toolwire.codecs.encoded import Note as Note
from toolwire.codecs.errormap import AWS_RETRIED as AWS_RETRIED
from toolwire.codecs.errormap import aws_error_type as aws_error_type
from toolwire.codecs.errormap import provider_error as provider_error
from toolwire.codecs.errormap import retry_after_from as retry_after_from
from toolwire.codecs.errormap import status_in_words as status_in_words
from toolwire.codecs.fitting import (
    fitting_tools,
    hoisting_tools,
    plain_calls,
    usual_first,
    with_reasoning,
)
from toolwire.codecs.guards import (
    GuardedResumable,
    guard_check,
    guard_error,
    guard_request,
    guard_response,
    guard_stream,
)
from toolwire.codecs.reading import ResumableDecoder, StreamDecoder
from toolwire.codecs.reading import error_body as error_body
from toolwire.codecs.reading import list_at as list_at
from toolwire.codecs.reading import objects_at as objects_at
from toolwire.codecs.reading import plain as plain
from toolwire.codecs.reading import role_problem as role_problem  # the wires' import path
from toolwire.codecs.reading import text_at as text_at
from toolwire.codecs.reading import token_count as token_count
from toolwire.codecs.reading import tools_lack_schemas as tools_lack_schemas
from toolwire.codecs.reading import wrong_shape as wrong_shape
from toolwire.codecs.reasoning import PutReasoning
from toolwire.errors import ProviderError
from toolwire.events import StreamEnd, StreamEvent
from toolwire.transcript import JSON, OpaquePart, Reply, Request

# --------------------------------------------------------------------------- streams


def drive_stream(decoder: StreamDecoder, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
    """Run a decoder over chunks; the last event is `StreamEnd`."""
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield StreamEnd(reply=decoder.finish())


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
            # the usual case: every name is already one the wire accepts
            return _SAME_NAMES if cls is NameMap else cls({}, {})
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


_SAME_NAMES = NameMap({}, {})
"""The map of tools whose names all fit a wire: every name as it is (one for all, as nothing
changes a map once built)."""


# --------------------------------------------------------------------------- small helpers


def call_id_for(seed: str, index: int) -> str:
    """A deterministic id for a call that came without one (same reply, same id)."""
    digest = hashlib.sha256(f"{seed}\x00{index}".encode()).hexdigest()[:24]
    return f"call_{digest}"


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""What `dumps` writes with, made once: ``json.dumps`` with these settings makes an encoder at
every call, which costs more than writing a small event."""


def dumps(value: JSON) -> str:
    """Compact JSON text, non-ASCII kept as is (what ``json.dumps(value, ensure_ascii=False,
    separators=(",", ":"))`` writes)."""
    return _COMPACT.encode(value)


class WireModule(Protocol):
    """What one wire's ``codec`` module defines; `Codec` adds what every wire derives alike."""

    WIRE: str
    STOP_REASONS: Mapping[str, str]
    StreamDecoder: Callable[..., StreamDecoder]

    def encode(self, request: Request) -> Encoded: ...

    def decode_request(
        self, body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
    ) -> Request: ...

    def decode_response(
        self, body: Mapping[str, Any], *, request: Request | None = None
    ) -> Reply: ...

    def encode_response(
        self, reply: Reply, *, request: Request | None = None
    ) -> dict[str, Any]: ...

    def encode_stream(self, reply: Reply, *, request: Request | None = None) -> list[bytes]: ...

    def decode_error(
        self, status: int, body: Any, headers: Mapping[str, str] | None = None
    ) -> ProviderError: ...

    def encode_error(self, status: int, message: str) -> dict[str, Any]: ...

    def check_body(self, body: dict[str, Any]) -> str | None: ...


class ManagingModule(WireModule, Protocol):
    """The ``codec`` module of a wire whose record says ``context_management``: the part its
    provider puts in a reply for the messages it compacted (for the emulator to play)."""

    def compaction_part(self, summary: str) -> OpaquePart: ...


class FittedModule(WireModule, Protocol):
    """The ``codec`` module of a wire whose record says ``per_model``: its per-model fixes of
    an encoded body (`toolwire.codecs.per_model.fitted`), put around its ``encode``."""

    FIT: Callable[[Callable[[Request], Encoded]], Callable[[Request], Encoded]]


class UsualModule(WireModule, Protocol):
    """The ``codec`` module of a wire whose record says ``usual_pass``: the usual request
    written in one pass, None for any other (`toolwire.codecs.fitting.usual_first`)."""

    def encode_usual(self, request: Request) -> Encoded | None: ...


def _without_headers(check: Callable[[dict[str, Any]], str | None]) -> Callable[..., str | None]:
    @functools.wraps(check)
    def checked(body: dict[str, Any], headers: Mapping[str, str] | None = None) -> str | None:
        return check(body)
    return checked


class Codec:
    """One wire's codec: the same functions for every wire, as `toolwire.codecs.get_codec` gives.

    The wire's own ``codec`` module supplies ``WIRE``, ``STOP_REASONS``, ``encode``,
    ``decode_request`` (``model`` and ``stream`` are what a URL said, for wires that carry them
    there), ``decode_response``, ``encode_response``, ``encode_stream``, ``StreamDecoder``,
    ``decode_error``, ``encode_error`` (an error body as the server sends it) and ``check_body``
    (the first rule a raw request body breaks, worded as the provider words it).
    What the wire can carry comes from its registry record (`toolwire.codecs.record.Wire`):
    how it asks for ``reasoning``, its ``media_tokens``, and whether tools keep their
    ``examples``, their allowed ``callers`` and a request its context management
    (``managed``); whatever the wire cannot carry is left out here, with a note.
    A wire whose record says ``usual_pass`` has ``encode_usual`` too: its ``encode`` of the
    usual request written in one pass (None for any other), tried before the fitting around
    ``encode`` (`toolwire.codecs.fitting.usual_first`).
    ``encode_request``, ``stream_decoder`` and ``decode_stream`` are derived from them here,
    once for every wire, and the decoders are made total here (`guard_response` and its
    siblings): whatever they are given, they return a value or raise a `ToolwireError`.
    """

    __slots__ = (
        "MEDIA_TOKENS",
        "STOP_REASONS",
        "StreamDecoder",
        "WIRE",
        "_compaction",
        "_stream_decoder",
        "check_body",
        "decode_error",
        "decode_request",
        "decode_response",
        "encode",
        "encode_error",
        "encode_response",
        "encode_stream",
        "module",
    )

    def __init__(self, module: WireModule, *, reasoning: PutReasoning | None = None,
                 media_tokens: str | None = None, examples: bool = False,
                 callers: bool = False, managed: bool = False, added_tools: bool = False,
                 check_headers: bool = False, resumable: bool = False,
                 per_model: bool = False, freeform: bool = False,
                 usual_pass: bool = False) -> None:
        self.module = module
        self.WIRE = wire = module.WIRE
        self.STOP_REASONS = module.STOP_REASONS
        self.MEDIA_TOKENS: str | None = media_tokens
        self.StreamDecoder = module.StreamDecoder
        self._stream_decoder = guard_stream(module.StreamDecoder, wire, resumable=resumable)
        self._compaction = cast(ManagingModule, module).compaction_part if managed else None
        encode = with_reasoning(module.encode if examples and callers and managed else
                                fitting_tools(module.encode, wire, examples=examples,
                                              callers=callers, managed=managed), wire, reasoning)
        if not added_tools:
            encode = hoisting_tools(encode, wire)
        if not freeform:
            encode = plain_calls(encode, wire)
        if usual_pass:  # its one pass over the usual request, before the fitting
            encode = usual_first(cast(UsualModule, module).encode_usual, encode,
                                 examples=examples, callers=callers, managed=managed,
                                 freeform=freeform)
        # the per-model fixes (`toolwire.codecs.per_model`) of a wire whose record has them
        self.encode = cast(FittedModule, module).FIT(encode) if per_model else encode
        self.decode_request = guard_request(module.decode_request, wire)
        self.decode_response = guard_response(module.decode_response, wire)
        self.encode_response = module.encode_response
        self.encode_stream = module.encode_stream
        self.decode_error = guard_error(module.decode_error, wire)
        self.encode_error = module.encode_error
        # ``check_body(body, headers=None)``: a wire whose rules depend on a request's headers
        # (a request shape a header names) says so in its record (``check_headers``)
        self.check_body: Callable[..., str | None] = guard_check(
            module.check_body if check_headers else _without_headers(module.check_body), wire)

    def __repr__(self) -> str:
        return f"<codec {self.WIRE}>"

    def encode_request(self, request: Request) -> dict[str, Any]:
        """The request body alone; `encode` also gives the notes on what was changed to fit."""
        return self.encode(request).body

    def stream_decoder(self, *, request: Request | None = None) -> StreamDecoder:
        """An incremental decoder: ``feed(bytes) -> events``, then ``finish() -> Reply``; it
        raises only toolwire errors (the wire's own class is ``StreamDecoder``)."""
        return self._stream_decoder(request=request)

    def compaction_part(self, summary: str) -> OpaquePart | None:
        """The part the provider puts in a reply for the messages it compacted (``summary``
        standing for them), when the wire's record says it manages the context; else None."""
        return self._compaction(summary) if self._compaction is not None else None

    @staticmethod
    def resumable(decoder: StreamDecoder) -> ResumableDecoder | None:
        """``decoder`` (one `stream_decoder` made) as the decoder of a stream its server serves
        again from an event, when its wire's record says ``resumable``; else None."""
        return decoder if isinstance(decoder, GuardedResumable) else None

    def decode_stream(
        self, chunks: Iterable[bytes], *, request: Request | None = None
    ) -> Iterator[StreamEvent]:
        """Stream events as the chunks arrive, ending with `StreamEnd`."""
        return drive_stream(self._stream_decoder(request=request), chunks)


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
