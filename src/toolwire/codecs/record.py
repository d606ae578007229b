"""What a wire's record holds: the shape of `toolwire.codecs.registry`'s entries.

Owns `Wire` (one wire: its codec module, paths, framing, recognisers, rules, how it asks for
reasoning, what its provider caches and counts, what it can carry, what its server keeps),
`WireRules` (the rules its API adds to the common ones), `HostedPath` (another place a cloud
serves it), `ServerMemory` (how a server keeps conversations), `Framing`, `BodyKind` and
`MEDIA_TYPES`. Each wire's folder builds its own record in its ``__init__``
(``RECORD``), from these classes and the shared helpers below them (`toolwire.codecs.detect`,
`toolwire.codecs.reasoning`, `toolwire.codecs.prompt_rules`); the registry lists the records.
Beside its ``__init__``, every wire folder has the same modules: ``codec`` (the functions
`toolwire.codecs.get_codec` hands out, `toolwire.codecs.base.WireModule`), ``request``,
``reply``, ``stream``, ``parts`` and ``schema``.

Must not import: the registry, any wire, anything that does I/O. Importing it stays cheap.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolwire.codecs.detect import Kind
from toolwire.codecs.prompt_rules import CacheRules, Counting, ExplicitCache
from toolwire.codecs.reasoning import Carrier, PutReasoning

Framing = Literal["sse", "ndjson", "eventstream"]
BodyKind = Literal["request", "response", "stream"]

MEDIA_TYPES: dict[str, str] = {"sse": "text/event-stream", "ndjson": "application/x-ndjson",
                                "eventstream": "application/vnd.amazon.eventstream"}


@dataclass(frozen=True, kw_only=True, slots=True)
class WireRules:
    """The rules a wire's API adds to the ones every API shares (see `toolwire.rules`).

    ``results_by``: how the API pairs a result with its call: by ``"id"`` (an id is required)
    or by ``"position"`` (ids are toolwire's own; order and tool names matter). ``id_pattern``
    and ``id_wording``: the characters a call id may hold, when the API restricts them.
    ``name_pattern`` and ``name_wording``: the tool names it accepts. ``results_first``: a tool
    message must hold its results before any other content. ``call_after_user``: a turn with
    calls must follow a user or tool turn. ``one_result_per_call``: the turn after a turn with
    calls answers every call exactly once.
    """

    results_by: Literal["id", "position"] = "id"
    id_pattern: re.Pattern[str] | None = None
    id_wording: str = ""
    name_pattern: re.Pattern[str] = re.compile(r"[a-zA-Z0-9_-]{1,64}")
    name_wording: str = "letters, digits, '_' and '-', 1 to 64 characters"
    results_first: bool = False
    call_after_user: bool = False
    one_result_per_call: bool = False
    id_max_length: int | None = None
    """The longest call id the API accepts, where it limits them (beyond ``id_pattern``)."""


@dataclass(frozen=True, slots=True)
class HostedPath:
    """Another place a cloud serves a wire, with the model (and streaming) in the URL:
    Bedrock's InvokeModel and Vertex's rawPredict serve Anthropic Messages bodies. ``framing``
    is set when that host streams in a framing of its own (Bedrock wraps each server-sent
    event in an event-stream ``chunk``); ``errors`` names the wire whose error bodies the host
    answers with, when they are not the served wire's (Bedrock answers InvokeModel's failures
    as it answers Converse's: its own JSON, the type in ``x-amzn-ErrorType``)."""

    path: str
    stream_path: str
    framing: Framing | None = None
    errors: str | None = None
    count: str | None = None
    """The host's token-counting path for this wire, when it has its own (the model then in
    the body): Vertex AI counts Claude's tokens at ``.../models/count-tokens:rawPredict``."""


Kept = dict[str, list[Any]]
"""The conversations a server keeps, by id: each one's steps (input and output) in order."""


@dataclass(frozen=True, slots=True)
class ServerMemory:
    """How a server that keeps conversations reads and stores them (Gemini Interactions'
    stored interactions, the Responses API's stored responses), for the emulator to do the
    same. ``continued`` reads a request body as that server does, with the kept conversation
    it names put before its input (`LookupError` naming the id when none is kept under it);
    ``keep`` stores a request and its encoded reply under the reply's id, unless the request
    asked the server not to.
    ``missing_status`` is the status the server answers an id it keeps nothing under with, and
    ``missing_error`` the fields its error object adds then (OpenAI's ``code`` and ``param``).
    """

    continued: Callable[[Mapping[str, Any], Mapping[str, list[Any]]], dict[str, Any]]
    keep: Callable[[Kept, Mapping[str, Any], Mapping[str, Any]], None]
    missing_status: int = 404
    missing_error: Mapping[str, str] = field(default_factory=dict)


def continued_from(body: Mapping[str, Any], kept: Mapping[str, list[Any]], key: str,
                   items: Callable[[Any], list[Any]], missing: str) -> dict[str, Any]:
    """``body`` with the kept conversation its ``key`` names (an id) put before its input, read
    by ``items``, and ``key`` taken out; `LookupError` with ``missing`` (``{id}`` filled in)
    when nothing is kept under that id. A `ServerMemory`'s ``continued`` is this with its
    wire's field, items and words."""
    previous = body.get(key)
    out = dict(body)
    if previous is None:
        return out
    found = kept.get(previous) if isinstance(previous, str) else None
    if found is None:
        raise LookupError(missing.format(id=previous))
    del out[key]
    out["input"] = [*found, *items(body.get("input"))]
    return out


def keep_reply(kept: Kept, body: Mapping[str, Any], reply: Mapping[str, Any],
               items: Callable[[Any], list[Any]], output: str) -> None:
    """Store a request's input (read by ``items``) and its reply's ``output`` field under the
    reply's id, unless the request's ``store`` is false: a `ServerMemory`'s ``keep``."""
    rid = reply.get("id")
    if body.get("store") is False or not isinstance(rid, str):
        return
    given = reply.get(output)
    kept[rid] = [*items(body.get("input")), *(given if isinstance(given, list) else [])]


@dataclass(frozen=True, kw_only=True, slots=True)
class Wire:
    """One wire: a request and reply body format, its streaming, its path and its rules.

    ``module`` is the dotted path of the codec module (imported by ``get_codec`` on first use).
    ``path`` is the path its API serves, relative to a server's base URL; ``{model}`` in it
    means the model is in the URL, and then ``stream_path`` is the path that asks for a stream.
    ``detect`` and ``detect_stream`` recognise its bodies and raw stream text; the registry
    tries wires by ``detect_rank`` (lower first), so a catch-all recogniser gets a high rank.
    ``cache`` is how its provider caches prompts; ``context_error`` is how it words a prompt
    longer than the model's window (``{tokens}`` and ``{limit}`` filled in); a server that
    cuts such a prompt silently instead names in ``truncate_at`` the body field (a path) that
    sets its context size. ``count`` is its token-counting endpoint, when it has one, and
    ``explicit_cache`` its explicit prompt cache. The fields after it say how it asks for
    reasoning and what it can carry.
    """

    name: str
    module: str
    path: str
    stream_path: str | None = None
    framing: Framing = "sse"
    streams_by_default: bool = False
    overloaded_status: int = 503
    rules: WireRules = field(default_factory=WireRules)
    detect: Callable[[Mapping[str, Any]], Kind | None] | None = None
    detect_stream: Callable[[str, str], bool] | None = None
    detect_rank: int = 50
    hosted: tuple[HostedPath, ...] = ()
    cache: CacheRules = field(default_factory=CacheRules)
    context_error: str = ("the input is {tokens} tokens, longer than the model's context "
                          "window of {limit} tokens")
    truncate_at: tuple[str, ...] = ()
    count: Counting | None = None
    explicit_cache: ExplicitCache | None = None
    reasoning: PutReasoning | None = None
    """How the wire asks for reasoning in a body its codec encoded (`toolwire.codecs.reasoning`);
    None when it has no such setting (the reasoning is then left out, with a note)."""
    media_tokens: str | None = None
    """How the local token estimate counts media on this wire (one of
    `toolwire.context.estimate`'s rules), None when it counts none."""
    input_examples: bool = False
    """Tools carry their examples in the body (Anthropic's ``input_examples``); elsewhere
    `toolwire.codecs.base.Codec` leaves them out, with a note."""
    allowed_callers: bool = False
    """Tools say who may call them (``allowed_callers``: code the server runs may)."""
    context_management: bool = False
    """The provider edits or compacts a long context itself (``context_management``)."""
    native_tool_search: bool = False
    """The provider searches deferred tools itself (``defer_loading``, its search tool)."""
    server_fallbacks: bool = False
    """The provider falls back by itself to the models a body's ``fallbacks`` names."""
    added_tools: bool = False
    """Tools can be added in the middle of a conversation (the Responses API's
    ``additional_tools`` item): a system message's tools go there, in their place; on any
    other wire they are offered from the start, with a note."""
    freeform_calls: bool = False
    """Calls may carry free text in place of JSON arguments (the Responses API's custom tool
    calls); elsewhere `toolwire.codecs.base.Codec` sends such a call's text as the argument
    ``input`` of a function call, with a note."""
    closed_body: bool = False
    """The wire's clients (its SDK's types) send only the fields toolwire's decoder reads, so a
    field beyond them, from another client, is named as a loss where the same wire's re-encode
    lacks it (`toolwire.conversion`)."""
    check_headers: bool = False
    """The wire's body rules depend on the request's headers (a request shape a header names),
    so its ``check_body`` takes them."""
    memory: ServerMemory | None = None
    """How the server keeps conversations a request may continue by id, when it keeps any."""
    resumable: bool = False
    """The server serves a broken stream again from its last event, and the wire's
    ``StreamDecoder`` is a `toolwire.codecs.reading.ResumableDecoder` that says where
    (`toolwire.http.resumes` takes the stream up there)."""
    usual_pass: bool = False
    """The wire's ``codec`` module writes the usual request in one pass of its own, as
    ``encode_usual`` (None for any other request), which `toolwire.codecs.base.Codec` tries
    before the fitting around ``encode`` (`toolwire.codecs.fitting.usual_first`)."""
    per_model: bool = False
    """The wire's ``codec`` module has per-model fixes for an encoded body, as ``FIT``
    (`toolwire.codecs.per_model`), which `toolwire.codecs.base.Codec` applies."""
    carrier: Carrier | None = None
    """Where the wire's clients keep a provider's opaque reasoning and send it back untouched
    (`toolwire.codecs.reasoning.Carrier`); None when its reasoning has no such field. The proxy
    carries another wire's signed reasoning there."""
    unsigned_calls: Mapping[str, Any] | None = None
    """The codec options (``Request.provider_options`` under the wire's name) that put the
    provider's documented placeholder on calls that come back without the signature it kept on
    them, for a provider that refuses such calls; None when it takes them."""
    client_headers: tuple[str, ...] = ()
    """Request headers only this wire's clients send (their key's header), by which the proxy
    words an answer in this wire at a path no wire serves; the first wire whose header a
    request carries wins."""
    answers_unknown: bool = False
    """This wire words answers at a path no wire serves when no wire's ``client_headers``
    are there (the most common client's shape)."""
    live_writer: str | None = None
    """Where the proxy's live writer for this wire's streams is, as ``module:Class`` (a
    `toolwire.proxy.live.Writer`, imported on first use); None streams a reply to this wire's
    clients whole once the upstream's stream has ended."""

    @property
    def native(self) -> frozenset[str]:
        """What the provider's own API does on its side for this wire: ``tool_search``,
        ``compaction``, ``fallbacks`` (`toolwire.protocol.native_search` and its siblings)."""
        return frozenset(name for name, on in (
            ("tool_search", self.native_tool_search), ("compaction", self.context_management),
            ("fallbacks", self.server_fallbacks)) if on)

    @property
    def model_in_path(self) -> bool:
        """Whether the URL carries the model and whether to stream (not the body)."""
        return "{model}" in self.path

    @property
    def media_type(self) -> str:
        """The content type of this wire's streamed replies."""
        return MEDIA_TYPES[self.framing]

    def wants_stream(self, body: Mapping[str, Any]) -> bool:
        """Whether a request body in this wire asks for a streamed reply."""
        return bool(body.get("stream", self.streams_by_default))


__all__ = [
    "MEDIA_TYPES",
    "BodyKind",
    "CacheRules",
    "Counting",
    "ExplicitCache",
    "Framing",
    "HostedPath",
    "Kept",
    "Kind",
    "ServerMemory",
    "Wire",
    "WireRules",
    "continued_from",
    "keep_reply",
]
