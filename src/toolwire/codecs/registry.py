"""The wire registry: what each wire (a body format) is, one record per wire.

Owns `Wire` and `WireRules` (the record, with the prompt's parts from
`toolwire.codecs.prompt_rules`: `CacheRules`, `Counting`, `ExplicitCache`), `Route`
(what a URL path says), the registry itself (`count_at`, `explicit_cache_at`, `register_wire`,
`unregister_wire`, `get_wire`, `wire_names`, `wire_at`, `detect_body`, `detect_stream_text`),
the built-in records and `WIRES` / `WireName` (the built-in names). A wire's record names its
codec module, its stream framing, whether a body without ``stream`` streams, the path its API
serves (and whether the model and streaming are in the URL), how to recognise its bodies, its id
and tool-name rules, the status it answers when overloaded, how its provider caches prompts, how
it words a prompt too long for the model, its token-counting endpoint and its explicit cache if
it has them. Which servers speak a wire, and how to authenticate to them, is
`toolwire.http.providers`'.

Adding a wire is one codec folder plus one `register_wire` call. Everything that needs to know
something about a wire (``get_codec``, ``convert``, ``rules``, the emulator, the command line)
reads it here instead of comparing wire names.

Must not import: any codec module (``get_codec`` imports one on first use, by the module path
recorded here; ``detect`` and ``prompt_rules`` are records and recognisers, not wires), the
transport, anything that does I/O. Importing this module stays cheap.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from toolwire.codecs import detect
from toolwire.codecs.detect import Kind
from toolwire.codecs.prompt_rules import CacheRules, Counting, ExplicitCache, bedrock_count_input

WireName = Literal[
    "anthropic-messages", "openai-chat", "openai-responses", "ollama-chat", "gemini-generate",
    "bedrock-converse", "gemini-interactions",
]
"""The built-in wires' names (a type; `wire_names` also lists the wires registered later)."""

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
    ``explicit_cache`` its explicit prompt cache.
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


@dataclass(frozen=True, slots=True)
class Route:
    """What a request path says: the wire served there, and the model and streaming if the
    path carries them (``model`` is None and ``stream`` False for wires that do not)."""

    wire: Wire
    model: str | None = None
    stream: bool = False
    framing: Framing | None = None
    errors: str | None = None

    @property
    def error_wire(self) -> str:
        """The wire whose shape this path's error bodies take."""
        return self.errors or self.wire.name

    @property
    def in_url(self) -> bool:
        """Whether this path names the model and whether to stream."""
        return self.model is not None

    @property
    def stream_framing(self) -> Framing:
        """The framing a stream takes at this path (a cloud host may wrap the wire's own)."""
        return self.framing or self.wire.framing

    def url_says(self) -> dict[str, Any]:
        """The keywords for the codec's ``decode_request``: the model and streaming this path
        names, for a path that carries them; nothing for the others."""
        return {"model": self.model, "stream": self.stream} if self.in_url else {}


# --------------------------------------------------------------------------- built-in wires

_PORTABLE = "letters, digits, '_' and '-'"

ANTHROPIC_MESSAGES = Wire(
    name="anthropic-messages",
    module="toolwire.codecs.anthropic_messages.codec",
    path="/v1/messages",
    overloaded_status=529,
    rules=WireRules(
        id_pattern=re.compile(r"[a-zA-Z0-9_-]+"),
        id_wording=f"an id may hold only {_PORTABLE}",
        name_pattern=re.compile(r"[a-zA-Z0-9_-]{1,128}"),
        name_wording=f"{_PORTABLE}, 1 to 128 characters",
        results_first=True,
    ),
    detect=detect.anthropic_body,
    detect_stream=detect.anthropic_stream,
    detect_rank=30,
    hosted=(HostedPath("/model/{model}/invoke", "/model/{model}/invoke-with-response-stream",
                       framing="eventstream", errors="bedrock-converse"),
            HostedPath("/models/{model}:rawPredict", "/models/{model}:streamRawPredict",
                       count="/anthropic/models/count-tokens:rawPredict")),
    cache=CacheRules(kind="breakpoints", sections=("tools", "system", "messages")),
    context_error="prompt is too long: {tokens} tokens > {limit} maximum",
    count=Counting(path="/v1/messages/count_tokens", keys=frozenset({
        "model", "messages", "system", "tools", "tool_choice", "thinking"})),
)
OPENAI_CHAT = Wire(
    name="openai-chat",
    module="toolwire.codecs.openai_chat.codec",
    path="/v1/chat/completions",
    detect=detect.chat_body,
    detect_stream=detect.chat_stream,
    detect_rank=90,  # any other body with "messages" is taken for an OpenAI chat body
    cache=CacheRules(kind="prefix", sections=("tools", "messages"), step=128,
                     key_field="prompt_cache_key"),
    context_error="This model's maximum context length is {limit} tokens. However, your "
                  "messages resulted in {tokens} tokens. Please reduce the length of the "
                  "messages.",
)
OPENAI_RESPONSES = Wire(
    name="openai-responses",
    module="toolwire.codecs.openai_responses.codec",
    path="/v1/responses",
    detect=detect.responses_body,
    detect_stream=detect.responses_stream,
    detect_rank=20,
    cache=CacheRules(kind="prefix", sections=("tools", "instructions", "input"), step=128,
                     key_field="prompt_cache_key"),
    context_error="Your input exceeds the context window of this model ({tokens} tokens > "
                  "{limit}). Please adjust your input and try again.",
    count=Counting(path="/v1/responses/input_tokens", keys=frozenset({
        "model", "input", "instructions", "tools", "tool_choice", "text", "reasoning",
        "truncation", "parallel_tool_calls"})),
)
OLLAMA_CHAT = Wire(
    name="ollama-chat",
    module="toolwire.codecs.ollama_chat.codec",
    path="/api/chat",
    framing="ndjson",
    streams_by_default=True,
    rules=WireRules(results_by="position", name_pattern=re.compile(r".+", re.DOTALL),
                    name_wording="a name that is not empty"),
    detect=detect.ollama_body,
    detect_stream=detect.ollama_stream,
    detect_rank=40,
    cache=CacheRules(sections=("tools", "messages")),
    truncate_at=("options", "num_ctx"),
)
GEMINI_GENERATE = Wire(
    name="gemini-generate",
    module="toolwire.codecs.gemini_generate.codec",
    path="/v1beta/models/{model}:generateContent",
    stream_path="/v1beta/models/{model}:streamGenerateContent",
    rules=WireRules(
        results_by="position",
        name_pattern=re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}"),
        name_wording="a letter or '_' first, then letters, digits, '_', '.', ':' or '-', "
                     "at most 128 characters",
        call_after_user=True,
        one_result_per_call=True,
    ),
    detect=detect.gemini_body,
    detect_stream=detect.gemini_stream,
    detect_rank=10,
    cache=CacheRules(kind="prefix", sections=("tools", "systemInstruction", "contents")),
    context_error="The input token count ({tokens}) exceeds the maximum number of tokens "
                  "allowed ({limit}).",
    count=Counting(path="/v1beta/models/{model}:countTokens", field="totalTokens",
                   wrap="generateContentRequest", keys=frozenset({
                       "contents", "systemInstruction", "tools", "toolConfig",
                       "generationConfig"})),
    explicit_cache=ExplicitCache(collection="cachedContents", field="cachedContent",
                                 fixed=("systemInstruction", "tools", "toolConfig"),
                                 items="contents"),
)

BEDROCK_CONVERSE = Wire(
    name="bedrock-converse",
    module="toolwire.codecs.bedrock_converse.codec",
    path="/model/{model}/converse",
    stream_path="/model/{model}/converse-stream",
    framing="eventstream",
    rules=WireRules(
        id_pattern=re.compile(r"[a-zA-Z0-9_.:-]{1,64}"),
        id_wording="an id may hold only letters, digits, '_', '.', ':' and '-', 1 to 64 "
                   "characters",
        results_first=True,
    ),
    detect=detect.converse_body,
    detect_stream=detect.converse_stream,
    detect_rank=15,
    count=Counting(path="/model/{model}/count-tokens", field="inputTokens",
                   keys=frozenset({"messages", "system", "toolConfig",
                                   "additionalModelRequestFields"}),
                   read=bedrock_count_input),
)


GEMINI_INTERACTIONS = Wire(
    name="gemini-interactions",
    module="toolwire.codecs.gemini_interactions.codec",
    path="/v1beta/interactions",
    rules=WireRules(
        name_pattern=re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}"),
        name_wording="a letter or '_' first, then letters, digits, '_', '.', ':' or '-', "
                     "at most 128 characters",
    ),
    detect=detect.interactions_body,
    detect_stream=detect.interactions_stream,
    detect_rank=18,
    cache=CacheRules(kind="prefix", sections=("tools", "system_instruction", "input")),
    context_error="The input token count ({tokens}) exceeds the maximum number of tokens "
                  "allowed ({limit}).",
)


_BUILT_IN = (ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES, OLLAMA_CHAT, GEMINI_GENERATE,
             BEDROCK_CONVERSE, GEMINI_INTERACTIONS)
WIRES: tuple[WireName, ...] = cast("tuple[WireName, ...]", tuple(w.name for w in _BUILT_IN))
"""The built-in wires, in their usual order (`wire_names` adds wires registered later)."""

_REGISTRY: dict[str, Wire] = {w.name: w for w in _BUILT_IN}


# --------------------------------------------------------------------------- the registry


def register_wire(wire: Wire, *, replace: bool = False) -> Wire:
    """Add ``wire`` to the registry (``replace=True`` lets it take the place of a same-named
    one); from then on every part of toolwire knows it."""
    if wire.name in _REGISTRY and not replace:
        raise ValueError(f"a wire named {wire.name!r} is already registered")
    _REGISTRY[wire.name] = wire
    return wire


def unregister_wire(name: str) -> None:
    """Remove a wire registered with `register_wire` (a missing name is not an error)."""
    _REGISTRY.pop(name, None)


def wire_names() -> tuple[str, ...]:
    """Every registered wire's name: the built-in ones first, then in order of registration."""
    return tuple(_REGISTRY)


def get_wire(name: str) -> Wire:
    """The record for wire ``name``; `ValueError` naming the registered wires otherwise."""
    wire = _REGISTRY.get(name)
    if wire is None:
        raise ValueError(f"unknown wire {name!r}; choose one of: {', '.join(_REGISTRY)}")
    return wire


def _versionless(path: str) -> str:
    """``path`` without its leading API version segment (``/v1/x`` -> ``/x``)."""
    return re.sub(r"^/v\d+[a-z0-9]*/", "/", path, count=1)


def _templated(wire: Wire, path: str, templates: tuple[tuple[str | None, bool], ...],
               framing: Framing | None = None, errors: str | None = None) -> Route | None:
    for template, stream in templates:
        if template is None:
            continue
        prefix, _, suffix = template.partition("{model}")
        if not path.endswith(suffix):
            continue
        head = path[: len(path) - len(suffix)]
        before, _, model = head.rpartition("/")
        if model and (before + "/").endswith(_versionless(prefix)):
            return Route(wire, model=model, stream=stream, framing=framing, errors=errors)
    return None


def _match(wire: Wire, path: str) -> Route | None:
    if not wire.model_in_path:
        if path.endswith(wire.path) or path.endswith(_versionless(wire.path)):
            return Route(wire)
        route = None
    else:
        route = _templated(wire, path, ((wire.path, False), (wire.stream_path, True)))
    for hosted in wire.hosted if route is None else ():
        route = _templated(wire, path, ((hosted.path, False), (hosted.stream_path, True)),
                           hosted.framing, hosted.errors)
        if route is not None:
            break
    return route


def count_at(path: str) -> Route | None:
    """The wire whose token-counting endpoint is ``path``, with the model when the path
    carries it (a host's own counting path first: its model is in the body)."""
    path = path.split("?", 1)[0]
    for wire in _REGISTRY.values():
        if any(h.count and path.endswith(h.count) for h in wire.hosted):
            return Route(wire)
    for wire in _REGISTRY.values():
        if wire.count is not None:
            route = _match(dataclasses.replace(wire, path=wire.count.path, stream_path=None,
                                               hosted=()), path)
            if route is not None:
                return Route(wire, model=route.model)
    return None


def explicit_cache_at(path: str) -> Wire | None:
    """The wire whose explicit caches are created at ``path`` (a POST to the collection)."""
    path = path.split("?", 1)[0]
    return next((w for w in _REGISTRY.values() if w.explicit_cache is not None
                 and path.endswith("/" + w.explicit_cache.collection)), None)


def wire_at(path: str) -> Route | None:
    """The wire whose API serves ``path`` (with or without its version prefix, after any base
    path a server adds), with the model and streaming when the path carries them."""
    path = path.split("?", 1)[0]
    for wire in _REGISTRY.values():
        route = _match(wire, path)
        if route is not None:
            return route
    return None


def _by_rank() -> list[Wire]:
    return sorted(_REGISTRY.values(), key=lambda w: w.detect_rank)


def detect_body(body: Mapping[str, Any]) -> tuple[str, Kind] | None:
    """The wire of a JSON object and whether it is a request or a reply; None if no wire's."""
    for wire in _by_rank():
        kind = wire.detect(body) if wire.detect is not None else None
        if kind is not None:
            return wire.name, kind
    return None


def detect_stream_text(text: str) -> str | None:
    """The wire of raw stream text (server-sent events or JSON lines); None if no wire's."""
    head = text.lstrip()[:4000]
    for wire in _by_rank():
        if wire.detect_stream is not None and wire.detect_stream(head, text):
            return wire.name
    return None


__all__ = [
    "ANTHROPIC_MESSAGES",
    "BEDROCK_CONVERSE",
    "GEMINI_GENERATE",
    "GEMINI_INTERACTIONS",
    "MEDIA_TYPES",
    "OLLAMA_CHAT",
    "OPENAI_CHAT",
    "OPENAI_RESPONSES",
    "WIRES",
    "BodyKind",
    "CacheRules",
    "Counting",
    "ExplicitCache",
    "Framing",
    "HostedPath",
    "Route",
    "Wire",
    "WireName",
    "WireRules",
    "count_at",
    "detect_body",
    "detect_stream_text",
    "explicit_cache_at",
    "get_wire",
    "register_wire",
    "unregister_wire",
    "wire_at",
    "wire_names",
]
