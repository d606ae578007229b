"""Anthropic Messages: a canonical `Request` as a ``POST /v1/messages`` body.

Owns `encode` of the ``anthropic-messages`` wire and `encode_usual`, the same body written in
one pass for a request of the usual messages only (reading a body back and checking a raw one
are `inbound`'s, which takes this module's top-level keys and its system-block helpers): the
required ``max_tokens``, the top-level ``system``, ``tool_choice``, and the message list, where
tool results travel first in a user message and this wire's own thinking and server-tool
blocks go back verbatim; `Request.cache` puts cache breakpoints in
(`toolwire.codecs.caching`). Body keys the canonical request has no field for ride in
``Request.provider_options["anthropic-messages"]`` and are merged back on encode. An encoded
body shares what needs no change (tool schemas, call arguments, stored blocks) with the
request instead of copying it; bodies are only serialised, never changed. Imports only
`toolwire.transcript`, `toolwire.errors`, the codec helpers and this wire's ``parts`` and
``schema``; never HTTP or a vendor SDK.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolwire.codecs import anthropic_messages as folder
from toolwire.codecs import managed
from toolwire.codecs.anthropic_messages.parts import (
    ID_PATTERN,
    LIMITS,
    WIRE,
    IdRewriter,
    ToolNames,
    as_dict,
    call_block,
    media_block,
    name_map,
    reasoning_block,
    result_block,
    text_block,
)
from toolwire.codecs.anthropic_messages.schema import (
    addition_blocks,
    deferred_additions,
    encode_choice,
    encode_tools,
    in_user_turn,
    leading_additions,
    with_addition_betas,
)
from toolwire.codecs.base import Encoded, Note, own_options
from toolwire.codecs.caching import place_breakpoints
from toolwire.codecs.media import check_limits
from toolwire.codecs.renames import matched, remember
from toolwire.codecs.traits import Traits, known, settle
from toolwire.errors import WireFormatError
from toolwire.transcript import (
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

DEFAULT_MAX_TOKENS = 4096
"""Sent when `Request.max_tokens` is None: the API requires the field."""
TOP_KEYS = frozenset({"model", "messages", "system", "tools", "tool_choice", "max_tokens",
                       "stream"})


# --------------------------------------------------------------------------- encode


def part_subject(message: int, part: int) -> str:
    """How notes name one part of one canonical message."""
    return f"messages[{message}].parts[{part}]"


def _user_blocks(parts: Sequence[Part], *, index: int, ids: IdRewriter, notes: list[Note],
                 positions: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """Blocks of the parts of message ``index`` (``positions``: where each part sits in it)."""
    blocks: list[dict[str, Any]] = []
    for n, part in enumerate(parts):
        if isinstance(part, ToolResultPart):
            if (part.provider_data is None and type(part.content) is str and part.content
                    and not part.is_error):
                blocks.append({"type": "tool_result", "tool_use_id": ids(part.call_id),
                               "content": part.content})
            else:
                blocks.append(result_block(
                    part, ids=ids, notes=notes,
                    subject=part_subject(index, positions[n] if positions else n)))
        elif isinstance(part, MediaPart):
            blocks.append(media_block(
                part, notes=notes, subject=part_subject(index, positions[n] if positions else n)))
        elif isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text} if part.provider_data is None
                              else text_block(part))
            else:
                notes.append(Note(kind="empty_text_dropped",
                                  subject=part_subject(index, positions[n] if positions else n),
                                  detail="the API rejects empty text blocks"))
        elif isinstance(part, OpaquePart) and part.wire == WIRE:
            blocks.append(as_dict(part.payload))
        else:
            kind = "opaque_dropped" if isinstance(part, OpaquePart) else "part_dropped"
            notes.append(Note(kind=kind,
                              subject=part_subject(index, positions[n] if positions else n),
                              detail=_dropped(part)))
    return blocks


def _dropped(part: Part) -> str:
    if isinstance(part, OpaquePart):
        return f"{part.kind!r} from {part.wire} has no meaning here"
    return f"a {type(part).__name__} cannot be sent in this message"


def _assistant_blocks(parts: Sequence[Part], *, index: int, nm: ToolNames, ids: IdRewriter,
                      notes: list[Note]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for n, part in enumerate(parts):
        if isinstance(part, ToolCallPart):
            args = part.arguments
            if (type(args) is dict and part.provider_data is None and part.parse_error is None
                    and part.caller is None):
                blocks.append({"type": "tool_use", "id": ids(part.id),
                               "name": nm.wire(part.name), "input": args})
            else:
                blocks.append(call_block(part, nm=nm, ids=ids, notes=notes))
        elif isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text} if part.provider_data is None
                              else text_block(part))
            else:
                notes.append(Note(kind="empty_text_dropped", subject=part_subject(index, n),
                                  detail="the API rejects empty text blocks"))
        elif isinstance(part, ReasoningPart):
            own = reasoning_block(part)
            if own is None:
                notes.append(Note(kind="reasoning_dropped", subject=part_subject(index, n),
                                  detail="reasoning without an Anthropic signature cannot be "
                                         "sent back to this wire"))
            else:
                blocks.append(own)
        elif isinstance(part, OpaquePart):
            if part.wire == WIRE:
                blocks.append(as_dict(part.payload))
            else:
                notes.append(Note(kind="opaque_dropped", subject=part_subject(index, n),
                                  detail=_dropped(part)))
        else:
            notes.append(Note(kind="part_dropped", subject=part_subject(index, n),
                              detail="a tool result cannot be part of an assistant message"))
    return blocks


def _own(m: Message, item: dict[str, Any]) -> dict[str, Any]:
    """A message as sent, with its own fields as they came (``output_config``, ...)."""
    extras = m.provider_data.get(WIRE) if m.provider_data is not None else None
    if extras is None or not isinstance(extras, Mapping):
        return item  # a reply's container goes in the body (managed), not on the message
    return {**item, **{k: copy.deepcopy(v) for k, v in extras.items()
                        if k != "container" and not k.startswith("_")}}


def _content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A lone plain text block is sent as a string, as the API documents it."""
    if len(blocks) == 1:
        block = blocks[0]
        if len(block) == 2 and block.get("type") == "text" and "text" in block:
            return str(block["text"])
    return blocks


def _encode_messages(messages: Sequence[Message], *, nm: ToolNames, notes: list[Note],
                     declared: Mapping[str, ToolSpec]) -> list[dict[str, Any]]:
    ids = IdRewriter(notes)
    done, fit = ids.done, nm.fit  # ids and names already seen, looked up before any call
    out: list[dict[str, Any]] = []
    by_code: list[int] = []  # assistant messages holding calls made by code
    blocks: list[dict[str, Any]]
    i = 0
    count = len(messages)
    while i < count:
        m = messages[i]
        role = m.role
        if role == "assistant":
            blocks = []
            for part in m.parts:  # the usual parts (text, calls with object arguments) inline
                if type(part) is ToolCallPart:
                    args, call_id, name = part.arguments, part.id, part.name
                    if (type(args) is not dict or part.provider_data is not None
                            or part.parse_error is not None or part.caller is not None):
                        break
                    blocks.append({"type": "tool_use", "id": done.get(call_id) or ids(call_id),
                                   "name": name if name in fit else nm.wire(name),
                                   "input": args})
                elif type(part) is TextPart and part.text and part.provider_data is None:
                    blocks.append({"type": "text", "text": part.text})
                else:
                    break
            else:
                out.append(_own(m, {"role": "assistant", "content": blocks[0]["text"]
                            if len(blocks) == 1 and blocks[0]["type"] == "text" else blocks}))
                i += 1
                continue
            blocks = _assistant_blocks(m.parts, index=i, nm=nm, ids=ids, notes=notes)
            if any(type(p) is ToolCallPart and p.caller is not None for p in m.parts):
                by_code.append(len(out))
            out.append(_own(m, {"role": "assistant", "content": _content(blocks)}))
        elif role == "user" and len(m.parts) == 1:
            part = m.parts[0]
            if type(part) is TextPart and part.text and part.provider_data is None:
                out.append(_own(m, {"role": "user", "content": part.text}))
            else:
                out.append(_own(m, {"role": "user", "content": _content(
                    _user_blocks(m.parts, index=i, ids=ids, notes=notes))}))
        elif role == "tool":
            parts = m.parts
            blocks = []
            for part in parts:  # the usual results inline
                if (type(part) is not ToolResultPart or part.provider_data is not None
                        or part.is_error or not part.content or type(part.content) is not str):
                    break
                call_id = part.call_id
                blocks.append({"type": "tool_result",
                               "tool_use_id": done.get(call_id) or ids(call_id),
                               "content": part.content})
            else:
                if i + 1 < count and messages[i + 1].role == "user":
                    i += 1
                    blocks += _user_blocks(messages[i].parts, index=i, ids=ids, notes=notes)
                out.append(_own(m, {"role": "user", "content": blocks}))
                i += 1
                continue
            for part in parts:
                if type(part) is not ToolResultPart:
                    break
            else:
                part = None
            if part is None:
                blocks = _user_blocks(parts, index=i, ids=ids, notes=notes)
            else:  # results first, whatever else the message holds after them
                order = sorted(range(len(parts)),
                               key=lambda n: not isinstance(parts[n], ToolResultPart))
                blocks = _user_blocks([parts[n] for n in order], index=i, ids=ids, notes=notes,
                                      positions=order)
            if i + 1 < count and messages[i + 1].role == "user":
                i += 1
                blocks += _user_blocks(messages[i].parts, index=i, ids=ids, notes=notes)
            out.append(_own(m, {"role": "user", "content": blocks}))
        elif role == "system":
            texts = [n for n, p in enumerate(m.parts) if isinstance(p, TextPart)]
            blocks = _user_blocks([m.parts[n] for n in texts], index=i, ids=ids, notes=notes,
                                  positions=texts)
            for n, part in enumerate(m.parts):
                if not isinstance(part, TextPart):
                    notes.append(Note(kind="part_dropped", subject=part_subject(i, n),
                                      detail="a system message carries text only"))
            content = addition_blocks(m, blocks, nm, declared) if m.tools else _content(blocks)
            if m.tools and in_user_turn(m) and out and out[-1]["role"] == "user":  # as read
                earlier = content_blocks(out[-1]["content"], "")
                out[-1] = {**out[-1], "content": [*earlier, *content]}
            else:
                out.append(_own(m, {"role": "system", "content": content}))
        else:
            blocks = _user_blocks(m.parts, index=i, ids=ids, notes=notes)
            out.append(_own(m, {"role": "user", "content": _content(blocks)}))
        i += 1
    if by_code:
        managed.results_only(out, by_code, notes)
    return out


def _plain_messages(request: Request, nm: ToolNames,
                    notes: list[Note]) -> list[dict[str, Any]] | None:
    """The messages of a request holding only the usual (a user turn of one text, texts and
    calls with object arguments from the assistant, text results, each user turn after the
    results joined to them), with nothing in the wire's own words, written in one pass as
    `_encode_messages` writes them; None for any other request."""
    if request.provider_options is not None:
        return None
    done: dict[str, str] = {}  # every id seen, as it is sent
    fit, id_fits, fitting = nm.fit, ID_PATTERN.match, _FITTING_IDS
    out: list[dict[str, Any]] = []
    append = out.append
    held: list[dict[str, Any]] | None = None  # the results a user turn after them joins
    part: Any  # told apart by its exact type, the cheapest test
    for m in request.messages:
        if m.provider_data is not None or m.tools:
            return None
        role = m.role
        if role == "assistant":
            if held is not None:
                append({"role": "user", "content": held})
                held = None
            blocks: list[dict[str, Any]] = []
            for part in m.parts:
                kind = type(part)
                if kind is ToolCallPart:
                    args, call_id, name = part.arguments, part.id, part.name
                    if (type(args) is not dict or part.provider_data is not None or part.freeform
                            or part.parse_error is not None or part.caller is not None):
                        return None
                    sent = done.get(call_id)
                    if sent is None:  # an id seen first: one the API takes goes as it is
                        sent = done[call_id] = call_id if call_id in fitting \
                            else _fitted(call_id, id_fits, done, notes)
                    blocks.append({"type": "tool_use", "id": sent,
                                   "name": name if name in fit else nm.wire(name),
                                   "input": args})
                elif kind is TextPart and part.text and part.provider_data is None:
                    blocks.append({"type": "text", "text": part.text})
                else:
                    return None
            append({"role": "assistant", "content": blocks[0]["text"]
                    if len(blocks) == 1 and blocks[0]["type"] == "text" else blocks})
        elif role == "tool":
            if held is not None:
                append({"role": "user", "content": held})
            held = []
            for part in m.parts:
                content = part.content if type(part) is ToolResultPart else None
                if type(content) is not str or part.provider_data is not None:
                    return None
                call_id = part.call_id
                sent = done.get(call_id)
                if sent is None:
                    sent = done[call_id] = call_id if call_id in fitting \
                        else _fitted(call_id, id_fits, done, notes)
                block = {"type": "tool_result", "tool_use_id": sent}
                if content:
                    block["content"] = content
                if part.is_error:
                    block["is_error"] = True
                held.append(block)
        elif role == "user" and held is not None:  # joined to the results before it
            for part in m.parts:
                if type(part) is not TextPart or not part.text or part.provider_data is not None:
                    return None
                held.append({"type": "text", "text": part.text})
            append({"role": "user", "content": held})
            held = None
        elif role == "user" and len(m.parts) == 1 and type(part := m.parts[0]) is TextPart \
                and part.text and part.provider_data is None:
            append({"role": "user", "content": part.text})
        else:
            return None
    if held is not None:
        append({"role": "user", "content": held})
    # what the whole pass would find: nothing but the tools' own freeform ones
    for spec in request.tools:
        if spec.freeform:
            settle(request, _FREEFORM_TOOLS)
            break
    else:
        settle(request, _NOTHING)
    return out


_FITTING_IDS = matched(ID_PATTERN)


def _fitted(call_id: str, fits: Callable[[str], object], done: dict[str, str],
            notes: list[Note]) -> str:
    """``call_id`` (not yet known to fit) as the API takes it: itself if it ``fits``, else
    rewritten with its note by a rewriter keeping its ids in ``done`` (`IdRewriter.done`: the
    ids seen so far)."""
    if fits(call_id):
        remember(_FITTING_IDS, call_id)
        return call_id
    ids = IdRewriter(notes)
    ids.done = done
    return ids(call_id)


_NOTHING = Traits(False, False, False, False, False, False)
_FREEFORM_TOOLS = _NOTHING._replace(freeform=True)
"""What the usual messages hold, with and without a freeform tool among the request's."""


def joined_system(blocks: Sequence[Any]) -> str:
    return "\n".join(str(b.get("text") or "") for b in blocks
                     if isinstance(b, Mapping) and b.get("type") == "text")


def encode_usual(request: Request) -> Encoded | None:
    """`encode` of a request holding only the usual messages (`_plain_messages`), written in
    one pass; None for any other request, which `encode` takes."""
    nm = name_map(request)
    written: list[Note] = []  # the notes of the messages, after those of the options
    plain = _plain_messages(request, nm, written)
    return None if plain is None else _encoded(request, nm, [], plain, written, ())


def encode(request: Request) -> Encoded:
    found = known(request)  # EVERY while the general path is checked against this one
    if found is None or not found.verbatim:
        usual = encode_usual(request)
        if usual is not None:
            return usual
    notes: list[Note] = []
    settle(request)  # the whole pass, once, for the checks below
    check_limits(request, WIRE, LIMITS)
    request = leading_additions(request, notes)
    return _encoded(request, name_map(request), notes, None, notes,
                    deferred_additions(request.messages, request.tools))


def _encoded(request: Request, nm: ToolNames, notes: list[Note],
             plain: list[dict[str, Any]] | None, written: list[Note],
             added: Sequence[ToolSpec]) -> Encoded:
    """The body around the messages: ``plain`` (the usual ones, written with the notes
    ``written``), or, when None, the messages written here; ``notes`` holds those made before
    and ``added`` the tools messages add that are declared deferred."""
    opts = own_options(request.provider_options, WIRE, notes) if request.provider_options \
        else None  # the usual request: no options
    max_tokens = request.max_tokens
    if max_tokens is None:
        max_tokens = DEFAULT_MAX_TOKENS
        notes.append(Note(kind="max_tokens_defaulted", subject="max_tokens",
                          detail=f"the API requires it; sent {DEFAULT_MAX_TOKENS}"))
    body: dict[str, Any] = {"model": request.model, "max_tokens": max_tokens}
    stored_system = opts.pop("system", None) if opts else None
    if request.system is None:
        if stored_system is not None:
            body["system"] = copy.deepcopy(stored_system)
    elif isinstance(stored_system, list) and joined_system(stored_system) == request.system:
        body["system"] = copy.deepcopy(stored_system)
    else:
        body["system"] = request.system
    if plain is None:
        body["messages"] = _encode_messages(request.messages, nm=nm, notes=notes, declared={
            t.name: t for t in (*request.tools, *added)})
    else:
        body["messages"] = plain
        notes += written
    # the usual messages keep no container (nor a tool addition needing a beta, below)
    if plain is None and (container := managed.container_id(request.messages, WIRE)) is not None:
        body["container"] = container  # unless the options name one: they are merged below
    if request.context_management is not None:
        body.update(folder.context_edits(request.context_management))
    stored_tools = opts.pop("tools", None) if opts else None
    if request.tools or stored_tools:
        body["tools"] = encode_tools(request.tools, stored_tools, nm=nm, notes=notes)
    if added:  # tools added mid-conversation: declared, deferred, after the others
        body["tools"] = [*body.get("tools", ()), *({**t, "defer_loading": True} for t in
                                                  encode_tools(added, None, nm=nm, notes=notes))]
    if request.tool_choice is not None:
        body["tool_choice"] = encode_choice(request.tool_choice, nm=nm, notes=notes)
        if request.tool_choice.name:
            nm.wire(request.tool_choice.name)
    if request.temperature is not None and not (opts and "temperature" in opts):
        notes.append(Note(
            kind="field_dropped", subject="temperature",
            detail="current Claude models and the API types have no temperature; put it in "
                   "provider_options['anthropic-messages'] to send it anyway"))
    if request.stream:
        body["stream"] = True
    if opts:
        body.update(opts)
    if request.cache is not None:
        notes.extend(place_breakpoints(body, request.cache, markable=lambda b: b.get(
            "type") not in ("thinking", "redacted_thinking")))  # thinking takes no marker
    if nm.built:  # some name needed mapping: its notes go first, as the names come first
        notes[:0] = nm.notes()
    if plain is not None:  # no option put an edit or a fallback in the body
        return Encoded(body=body, notes=tuple(notes), headers=None if (
            request.context_management is None) else folder.beta_headers(body))
    return Encoded(body=body, notes=tuple(notes),
                   headers=with_addition_betas(folder.beta_headers(body), body, request))


# --------------------------------------------------------------------------- decode


def content_blocks(content: Any, where: str) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    if not isinstance(content, list) or not all(isinstance(b, Mapping) for b in content):
        raise WireFormatError(f"{WIRE}: {where}.content must be a string or a list of blocks")
    return content


# ------------------------------------------------------------------------ what the provider refuses
