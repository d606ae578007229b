"""The wire registry: what each wire (a body format) is, one record per wire.

Owns `Route` (what a URL path says), the registry itself (`count_at`, `explicit_cache_at`,
`register_wire`, `unregister_wire`, `get_wire`, `wire_names`, `wire_at`, `detect_body`,
`detect_stream_text`), the list of built-in wires and `WIRES` / `WireName` (their names). A
wire's record (`Wire`, `toolwire.codecs.record`) names its codec module, its stream framing,
whether a body without ``stream`` streams, the path its API serves (and whether the model and
streaming are in the URL), how to recognise its bodies, its id and tool-name rules, the status
it answers when overloaded, how it asks for reasoning, how its provider caches prompts, how it
words a prompt too long for the model, its token-counting endpoint and its explicit cache if it
has them, and what it can carry. Which servers speak a wire, and how to authenticate to them,
is `toolwire.http.providers`'.

Each wire's record lives in its own folder (``toolwire.codecs.<wire>.RECORD``, in the folder's
``__init__``), with everything the record names. A built-in wire is its folder plus its record
in `_BUILT_IN` below; a wire from elsewhere is its module plus one `register_wire` call.
Everything that needs to know something about a wire (``get_codec``, ``convert``, ``rules``,
the emulator, the command line) reads it here instead of comparing wire names.

Must not import: a wire's modules beyond its folder's ``__init__`` (``get_codec`` imports the
codec on first use, by the module path recorded here), the transport, anything that does I/O.
Importing this module stays cheap.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import unquote

from toolwire.codecs import (
    anthropic_messages,
    bedrock_converse,
    gemini_generate,
    gemini_interactions,
    ollama_chat,
    openai_chat,
    openai_responses,
)
from toolwire.codecs.detect import Kind
from toolwire.codecs.record import (
    MEDIA_TYPES,
    BodyKind,
    CacheRules,
    Counting,
    ExplicitCache,
    Framing,
    HostedPath,
    Wire,
    WireRules,
)

WireName = Literal[
    "anthropic-messages", "openai-chat", "openai-responses", "ollama-chat", "gemini-generate",
    "bedrock-converse", "gemini-interactions",
]
"""The built-in wires' names (a type; `wire_names` also lists the wires registered later)."""


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

ANTHROPIC_MESSAGES = anthropic_messages.RECORD
OPENAI_CHAT = openai_chat.RECORD
OPENAI_RESPONSES = openai_responses.RECORD
OLLAMA_CHAT = ollama_chat.RECORD
GEMINI_GENERATE = gemini_generate.RECORD
BEDROCK_CONVERSE = bedrock_converse.RECORD
GEMINI_INTERACTIONS = gemini_interactions.RECORD

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
    _forget_routes()
    return wire


def unregister_wire(name: str) -> None:
    """Remove a wire registered with `register_wire` (a missing name is not an error)."""
    _REGISTRY.pop(name, None)
    _forget_routes()


def wire_names() -> tuple[str, ...]:
    """Every registered wire's name: the built-in ones first, then in order of registration."""
    return tuple(_REGISTRY)


def get_wire(name: str) -> Wire:
    """The record for wire ``name``; `ValueError` naming the registered wires otherwise."""
    wire = _REGISTRY.get(name)
    if wire is None:
        raise ValueError(f"unknown wire {name!r}; choose one of: {', '.join(_REGISTRY)}")
    return wire


_VERSION = re.compile(r"^/v\d+[a-z0-9]*/")


def _versionless(path: str) -> str:
    """``path`` without its leading API version segment (``/v1/x`` -> ``/x``)."""
    return _VERSION.sub("/", path, count=1)


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
            # the path as written on the wire: a model id with slashes or colons (an ARN)
            # comes percent-encoded in its one segment
            return Route(wire, model=unquote(model), stream=stream, framing=framing,
                         errors=errors)
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
    return _count_at(path.split("?", 1)[0])


@functools.lru_cache(maxsize=512)
def _count_at(path: str) -> Route | None:
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
    return _wire_at(path.split("?", 1)[0])


@functools.lru_cache(maxsize=512)
def _wire_at(path: str) -> Route | None:
    for wire in _REGISTRY.values():
        route = _match(wire, path)
        if route is not None:
            return route
    return None


def _forget_routes() -> None:
    """The registry changed: what each path was found to serve must be looked up again. (Paths
    come from clients, so the two tables are bounded; a route is immutable.)"""
    _count_at.cache_clear()
    _wire_at.cache_clear()


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
