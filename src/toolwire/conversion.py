"""Conversations across wires: a request body in one format, the same conversation in another.

Owns `convert`, `Conversion` and `detect_wire`. Conversion goes through the canonical form:
decode with the source codec, encode with the target codec. Everything the target cannot carry
is listed in ``Conversion.losses`` (reasoning and provider blocks that only the source wire
understands, ids rewritten to the target's character set, tool names mapped, schema keywords
removed), never dropped silently. Ids are rewritten consistently, so calls and results still
pair up. Which wire a body is in is the wire registry's to say (`toolwire.codecs.registry`).

Must not import: the transport, the agent, anything that does I/O; codec modules only through
``get_codec``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from toolwire.codecs import Note, get_codec
from toolwire.codecs.cache_carry import carry_breakpoints
from toolwire.codecs.registry import BodyKind, detect_body, detect_stream_text, get_wire
from toolwire.codecs.traits import noting
from toolwire.errors import WireFormatError
from toolwire.transcript import OpaquePart, ReasoningPart, Request


class Conversion(msgspec.Struct, frozen=True, kw_only=True):
    """A request body in the target wire, and what could not carry over."""

    body: dict[str, Any]
    source: str
    target: str
    request: Request
    losses: tuple[Note, ...]
    headers: Mapping[str, str] = msgspec.field(default_factory=dict)
    """The headers to send the body with: the request's own that the target takes (its betas
    and versions, to the same wire) and those the target's body needs."""


_NOT_CARRIED = frozenset({
    "authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", "host", "connection",
    "content-length", "content-type", "transfer-encoding", "accept", "accept-encoding",
    "user-agent"})
"""Headers of the transport and of credentials, not of the request's meaning."""
_LISTS = frozenset({"anthropic-beta", "openai-beta"})
"""Headers whose value is a comma-separated list: the request's and the encoder's joined."""


def convert(body: Mapping[str, Any], source: str, target: str, *, model: str | None = None,
            headers: Mapping[str, str] | None = None) -> Conversion:
    """The conversation in ``body`` (a request in wire ``source``) as a request in ``target``.

    ``model`` is the one the source's URL named (Gemini and Converse carry it there), used
    when the body names none; ``headers`` are the request's own (its betas, versions and the
    request shape a header names): to the same wire they go on with the body, to another
    each one that shaped the request is a loss."""
    decoder, encoder = get_codec(source), get_codec(target)  # ValueError naming the wires
    try:
        request = decoder.decode_request(body, model=model) if model else \
            decoder.decode_request(body)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise WireFormatError(
            f"this body is not a request in the {source} format ({type(exc).__name__}: {exc})"
        ) from exc
    request = carry_breakpoints(request, source, target)
    # each setting of source's looked at once
    to_send, lost = _settings(request, source, target) if request.provider_options else (
        request, None)
    # what the encode found of the request on its way: nothing of any wire's own in the
    # messages means no message or part keeps a field to report
    encoded, found = noting(encoder.encode, to_send)
    losses = encoded.notes
    if lost is not None:  # one loss per setting, in place of the codec's notes on the mapping
        whole = f"provider_options[{source!r}]"
        losses = tuple(
            [n for n in losses if not (n.kind == "field_dropped" and n.subject == whole)]
            + lost)
    if source != target and (found is None or found.verbatim):
        kept = _part_losses(request, source, target)
        if kept:
            noted = {n.subject for n in losses if n.kind == "field_dropped"}
            losses += tuple(n for n in kept if n.subject not in noted)
    if get_wire(source).closed_body:  # what its own encoder left out (and did not say)
        again = decoder.encode(request)
        said = " ".join(f"{n.subject} {n.detail}" for n in (*losses, *again.notes))
        losses += tuple(Note(kind="field_dropped", subject=path, detail=(
            f"not a field of a {source} request toolwire reads; not sent to {target}"))
            for path in _unread(body, again.body, "")
            if path not in _URL_KEYS and path.rsplit(".", 1)[-1] not in said)
    sent, dropped = _headers(headers or {}, encoded.headers or {}, same=source == target) \
        if headers or encoded.headers else ({}, None)
    if dropped:
        losses += tuple(Note(kind="header_dropped", subject=f"header {name}", detail=(
            f"{value!r}: a {source} request's header; not sent to {target}"))
            for name, value in dropped.items())
    out = encoded.body
    if source == target:  # the body's own keys in the order they came: the same bytes back
        out = {**{k: out[k] for k in body if k in out}, **out}
    return Conversion(body=out, source=source, target=target, request=request,
                      losses=losses, headers=sent)


_URL_KEYS = frozenset({"model", "modelId"})
"""Keys a body may hold that the wire carries in its URL."""


def _unread(given: Any, sent: Any, path: str) -> list[str]:
    """Where ``given`` (a body as it came) holds a key that ``sent`` (the body read and written
    again to the same wire) lacks, in its own or its lowerCamel spelling: fields the decoder
    did not read."""
    if isinstance(given, Mapping) and isinstance(sent, Mapping):
        out: list[str] = []
        for key, value in given.items():
            where = f"{path}.{key}" if path else str(key)
            head, *rest = str(key).split("_")  # Google's JSON: snake_case read as lowerCamel
            same = key if key in sent else head + "".join(p.title() for p in rest)
            out += [where] if same not in sent else _unread(value, sent[same], where)
        return out
    if isinstance(given, list) and isinstance(sent, list) and len(given) == len(sent):
        return [p for n, (a, b) in enumerate(zip(given, sent, strict=True))
                for p in _unread(a, b, f"{path}[{n}]")]
    return []


def _headers(given: Mapping[str, str], needed: Mapping[str, str], *,
             same: bool) -> tuple[dict[str, str], dict[str, str]]:
    """The headers to send, and the request's own that cannot go."""
    sent = {k.lower(): v for k, v in needed.items()}
    dropped: dict[str, str] = {}
    for key, value in given.items():
        name = key.lower()
        if name in _NOT_CARRIED or name.startswith("x-amz-"):
            continue
        if not same:
            if name in _LISTS or name.startswith("x-openai-internal-"):  # shaped the request
                dropped[name] = value
        elif name in _LISTS and name in sent:
            values = [v.strip() for v in f"{value},{sent[name]}".split(",") if v.strip()]
            sent[name] = ",".join(dict.fromkeys(values))
        else:
            sent[name] = value
    return sent, dropped


_SUBSTANCE = frozenset({
    "type", "text", "id", "name", "input", "arguments", "content", "is_error", "status",
    "tool_use_id", "call_id", "output", "role", "toolUseId", "functionCall", "functionResponse",
    "tool_call_id", "tool_name", "function"})
"""Fields of a kept block that the canonical part itself carries to every wire."""


def _part_losses(request: Request, source: str, target: str) -> list[Note]:
    """A note for each field of ``source``'s own kept on a message or a part (a cache
    marker, a thought signature, an item id, a per-turn setting) that ``target`` is not sent."""
    notes: list[Note] = []
    closed: bool | None = None  # whether the source's bodies are closed, once it matters
    part: Any  # told apart by its exact type, the cheapest test
    for i, message in enumerate(request.messages):  # the usual message keeps nothing
        if message.provider_data:
            _own_fields(notes, f"messages[{i}]", message.provider_data.get(source), source,
                        target)
        whole: list[tuple[int, OpaquePart]] = []  # blocks a closed body kept for a field
        for j, part in enumerate(message.parts):
            kind = type(part)
            if kind is OpaquePart:
                if part.wire == source:
                    if closed is None:
                        closed = get_wire(source).closed_body
                    if closed:
                        whole.append((j, part))
            elif kind is not ReasoningPart and part.provider_data:
                _own_fields(notes, f"messages[{i}].parts[{j}]", part.provider_data.get(source),
                            source, target)
        for j, part in whole:  # named after the message's own parts
            _own_fields(notes, f"messages[{i}].parts[{j}]", part.payload, source, target)
    return notes


def _own_fields(notes: list[Note], subject: str, data: Any, source: str, target: str) -> None:
    """A note on the fields of ``source``'s own in ``data`` (kept on ``subject``) that
    ``target`` is not sent, if it holds any."""
    if not isinstance(data, Mapping):
        return
    fields = sorted(f"{k} ({', '.join(data[k])})" if isinstance(data[k], list) and all(
        isinstance(v, str) for v in data[k]) else k
        for k in data if k not in _SUBSTANCE and not k.startswith("_"))
    if fields:
        notes.append(Note(kind="field_dropped", subject=subject,
                          detail=f"{', '.join(fields)}: {source}'s own, not sent to {target}"))


_CARRIED = {"system": ("the system prompt", frozenset({"type", "text"})),
            "tools": ("the tools", frozenset({"type", "name", "description", "input_schema",
                                              "strict", "defer_loading", "input_examples",
                                              "allowed_callers"}))}
"""Settings a wire keeps whole beside a canonical field that carries their substance: what
that field is called, and the keys the canonical field carries over."""


_HOW_READ = frozenset({"_schema_field", "_result_parts", "_text_format", "_tool_places",
                       "_no_tools"})
"""Settings a codec keeps on how a body said what it carried (Gemini's tool schemas in
``parameters``, its result media inside the responses, a custom tool's free-text format said
out loud, where the tools kept as they came stood, a tool list left out): nothing of the
conversation."""


def without_unlost_settings(request: Request, source: str, target: str) -> Request:
    """``request`` (read from ``source``, to be written in ``target``) without those settings of
    ``source``'s own that `convert` reports nothing for: how the body said what it carried, and
    lists kept whole whose substance the canonical fields carry. An encoder names every
    setting of another wire it is given as dropped; given this, it names only what is lost."""
    return _settings(request, source, target)[0]


def _settings(request: Request, source: str, target: str) -> tuple[Request, list[Note] | None]:
    """`without_unlost_settings` of ``request``, and the loss of each setting kept (None when
    ``source``'s settings are not a mapping to report setting by setting)."""
    options = request.provider_options.get(source) if request.provider_options else None
    if source == target or not isinstance(options, Mapping):
        return request, None
    kept: dict[Any, Any] = {}
    lost: list[Note] = []
    for key, value in options.items():
        if key not in _HOW_READ and (note := _lost(str(key), value, source, target)) is not None:
            kept[key] = value
            lost.append(note)
    if len(kept) == len(options):
        return request, lost
    assert request.provider_options is not None  # ``options`` came from it
    others = {w: e for w, e in request.provider_options.items() if w != source}
    if kept:
        others[source] = kept
    return msgspec.structs.replace(request, provider_options=others or None), lost


def _lost(key: str, value: Any, source: str, target: str) -> Note | None:
    """The loss of one setting of ``source``'s, naming what was really left behind (None for
    a tool list kept whole whose every tool the canonical tools carry)."""
    if key in ("_declarations", "_tool_fields") and isinstance(value, Mapping):  # a tool's own
        fields = sorted(f"{tool}.{k}" for tool, extra in value.items()
                        if isinstance(extra, Mapping) for k in extra)
        return Note(kind="field_dropped", subject=f"tools: {', '.join(fields)}",
                    detail=f"the tools were sent; these fields of theirs are {source}'s own "
                           f"and were not sent to {target}")
    if key in _CARRIED and isinstance(value, list):
        name, carried = _CARRIED[key]
        extras = sorted({k for item in value if isinstance(item, Mapping) for k in item}
                        - carried)
        if extras:
            marker = " (a prompt-cache marker)" if extras == ["cache_control"] else ""
            return Note(kind="field_dropped", subject=f"{key}: {', '.join(extras)}",
                        detail=f"{name} {'were' if key == 'tools' else 'was'} sent; "
                               f"{'their' if key == 'tools' else 'its'} {', '.join(extras)}"
                               f"{marker} is for {source} only and was not sent to {target}")
        if key == "tools" and all(isinstance(t, Mapping) and t.get("type") in (None, "custom")
                                  for t in value):
            return None
    return Note(kind="field_dropped", subject=key,
                detail=f"set for {source} only; not sent to {target}")


def detect_wire(body: Any) -> tuple[str, BodyKind]:
    """Which wire a body is in, and whether it is a request, a reply or raw stream text.

    Asks every registered wire's recogniser (`toolwire.codecs.registry`). Raises
    `WireFormatError` when the body matches no wire.
    """
    if isinstance(body, bytes | str):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        wire = detect_stream_text(text)
        if wire is None:
            raise WireFormatError("this text is not a stream of any known wire")
        return wire, "stream"
    if not isinstance(body, Mapping):
        raise WireFormatError(f"expected a JSON object, got {type(body).__name__}")
    found = detect_body(body)
    if found is None:
        raise WireFormatError(
            "this JSON is not a request or reply of any known wire: expected keys such as "
            "'messages', 'input', 'contents', 'choices', 'content', 'output' or 'candidates'"
        )
    return found


def _sample() -> Request:
    """A conversation holding what a conversation across wires can lose: a call and its
    result, a freeform call (a custom tool's text input) and its result, a parallel setting, a
    system message adding a tool mid-conversation."""
    from toolwire.transcript import (
        Message,
        TextPart,
        ToolCallPart,
        ToolChoice,
        ToolResultPart,
        ToolSpec,
    )

    weather = ToolSpec(name="get_weather", description="Weather for a city.",
                       input_schema={"type": "object", "properties": {"city": {"type": "string"}}})
    return Request(model="m", system="Be brief.", tools=(weather,), max_tokens=256,
                   tool_choice=ToolChoice(mode="auto", parallel=False), messages=(
        Message.user("Weather in Paris?"),
        Message(role="assistant", parts=(
            ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Paris"}),)),
        Message(role="tool", parts=(ToolResultPart(call_id="call_1", content="sunny",
                                                   name="get_weather"),)),
        Message(role="assistant", parts=(ToolCallPart(
            id="call_2", name="get_weather", arguments="Paris", raw_arguments="Paris",
            freeform=True),)),
        Message(role="tool", parts=(ToolResultPart(call_id="call_2", content="sunny",
                                                   name="get_weather"),)),
        Message(role="system", parts=(TextPart(text="Now also check the time."),),
                tools=(ToolSpec(name="get_time", description="The time."),)),
        Message.user("And the time?"),
    ))


def loss_table_markdown(wires: Sequence[str] | None = None) -> str:
    """What each conversion between ``wires`` (the built-in ones unless given) reports for the
    same conversation (`_sample`), wire by wire: the kinds of its losses. docs/wires.md shows
    it for the built-in wires; a test keeps the two the same."""
    from toolwire.codecs import WIRES

    wires = WIRES if wires is None else wires
    request = _sample()
    rows = ["| from \\ to | " + " | ".join(f"`{w}`" for w in wires) + " |",
            "| --- |" + " --- |" * len(wires)]
    for source in wires:
        body = get_codec(source).encode_request(request)
        cells = []
        for target in wires:
            kinds = sorted({n.kind for n in convert(body, source, target, model="m").losses})
            cells.append("—" if source == target and not kinds else
                         ", ".join(kinds) or "nothing")
        rows.append(f"| `{source}` | " + " | ".join(cells) + " |")
    return "\n".join(rows)
