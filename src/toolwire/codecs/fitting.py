"""A wire's ``encode`` wrapped for what its record says it cannot carry, each change with a
note: tool examples folded into the description, allowed callers and the provider's own
context management left out (`fitting_tools`), tools a system message adds offered from the
start (`hoisting_tools`), freeform calls sent as function calls (`plain_calls`), and
`Request.reasoning` written the wire's way, a temperature left out while reasoning is on
(`with_reasoning`). `toolwire.codecs.base.Codec` puts them around every wire's ``encode``;
`hoisting_tools` and `plain_calls` ask `toolwire.codecs.traits`' one pass over the request
whether it needs them. `usual_first` goes around them all for a wire that writes the usual
request in one pass of its own (``encode_usual``), which none of them would change. Must not
import a wire.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Final

import msgspec

from toolwire.codecs.encoded import Encoded, Note
from toolwire.codecs.reasoning import REASONING_LEVELS, PutReasoning, put_reasoning
from toolwire.codecs.traits import adds_tools, freeform, known
from toolwire.transcript import Request, ToolCallPart, ToolSpec


def fitting_tools(
    encode: Callable[[Request], Encoded], wire: str, *, examples: bool, callers: bool,
    managed: bool,
) -> Callable[[Request], Encoded]:
    """``encode`` for a wire without tool examples (``examples`` False: a tool's examples go
    at the end of its description instead), without allowed callers (``callers`` False: they
    are left out) or without context management of the provider's own (``managed`` False: it
    is left out), each change with a note."""

    @functools.wraps(encode)
    def fitted(request: Request) -> Encoded:
        drop = request.context_management is not None and not managed
        if not drop and not any((s.examples and not examples)
                                or (s.allowed_callers and not callers) for s in request.tools):
            return encode(request)
        tools: list[ToolSpec] = []
        notes: list[Note] = []
        if drop:
            notes.append(Note(kind="field_dropped", subject="context_management", detail=(
                f"{wire} has no context management of the provider's own; left out")))
        for spec in request.tools:
            if spec.examples and not examples:
                shown = "\n".join(json.dumps(e, ensure_ascii=False) for e in spec.examples)
                text = f"{spec.description}\n\nExamples of arguments:\n{shown}".lstrip()
                spec = msgspec.structs.replace(spec, description=text, examples=())
                notes.append(Note(kind="examples_folded", subject=spec.name, detail=(
                    f"{wire} has no field for tool examples; they were added to the "
                    "description")))
            if spec.allowed_callers and not callers:
                spec = msgspec.structs.replace(spec, allowed_callers=())
                notes.append(Note(kind="field_dropped", subject=spec.name, detail=(
                    f"{wire} has no code of the provider's own calling tools; allowed_callers "
                    "was left out")))
            tools.append(spec)
        encoded = encode(msgspec.structs.replace(request, tools=tuple(tools),
                                                 context_management=None))
        return Encoded(body=encoded.body, notes=(*notes, *encoded.notes),
                       headers=encoded.headers)

    return fitted


def hoisting_tools(encode: Callable[[Request], Encoded],
                    wire: str) -> Callable[[Request], Encoded]:
    """``encode`` for a wire that cannot add tools mid-conversation: the tools a system
    message adds are offered from the start (a system message with nothing else left out),
    with a note for each such message."""

    @functools.wraps(encode)
    def hoisted(request: Request) -> Encoded:
        if not adds_tools(request):  # what the one pass found, else a look at the messages
            return encode(request)
        tools = list(request.tools)
        messages = []
        notes: list[Note] = []
        for n, message in enumerate(request.messages):
            if not message.tools:
                if message.parts or message.role != "system":  # an empty system message: none
                    messages.append(message)
                continue
            known = {t.name for t in tools}
            tools += [t for t in message.tools if t.name not in known]
            notes.append(Note(kind="tools_moved", subject=f"messages[{n}]", detail=(
                f"{wire} cannot add tools mid-conversation; "
                f"{', '.join(t.name for t in message.tools)} offered from the start")))
            if message.parts:
                messages.append(msgspec.structs.replace(message, tools=()))
        encoded = encode(msgspec.structs.replace(request, tools=tuple(tools),
                                                 messages=tuple(messages)))
        return Encoded(body=encoded.body, notes=(*notes, *encoded.notes),
                       headers=encoded.headers)

    return hoisted


def plain_calls(encode: Callable[[Request], Encoded],
                 wire: str) -> Callable[[Request], Encoded]:
    """``encode`` for a wire without freeform calls: each freeform call (a custom tool's text
    input) goes as a function call whose one argument ``input`` holds the text, with a
    ``custom_tool_call`` note."""

    @functools.wraps(encode)
    def plain(request: Request) -> Encoded:
        if not freeform(request):  # what the one pass found, else a look for freeform ones
            return encode(request)
        notes: list[Note] = []
        messages = []
        request = msgspec.structs.replace(request, tools=_plain_tools(request.tools, notes, wire))
        for n, message in enumerate(request.messages):
            if message.tools:
                message = msgspec.structs.replace(
                    message, tools=_plain_tools(message.tools, notes, wire))
            parts = []
            for j, part in enumerate(message.parts):
                if isinstance(part, ToolCallPart) and part.freeform:
                    text = part.raw_arguments if part.raw_arguments is not None \
                        else str(part.arguments or "")
                    part = ToolCallPart(id=part.id, name=part.name, arguments={"input": text},
                                        caller=part.caller)
                    notes.append(Note(kind="custom_tool_call", subject=f"messages[{n}].parts[{j}]",
                                      detail=f"{wire} has no freeform tool calls; the call's "
                                             "text input sent as the argument 'input'"))
                parts.append(part)
            messages.append(msgspec.structs.replace(message, parts=tuple(parts)))
        encoded = encode(msgspec.structs.replace(request, messages=tuple(messages)))
        return Encoded(body=encoded.body, notes=(*notes, *encoded.notes),
                       headers=encoded.headers)

    return plain


_INPUT_SCHEMA: Final = {"type": "object", "properties": {"input": {"type": "string"}},
                        "required": ["input"]}


def _plain_tools(tools: tuple[ToolSpec, ...], notes: list[Note], wire: str
                 ) -> tuple[ToolSpec, ...]:
    """``tools`` with each freeform tool as a function tool taking its text as ``input``."""
    notes += [Note(kind="custom_tool", subject=t.name, detail=(
        f"{wire} has no freeform tools; sent as a function tool whose argument 'input' holds "
        "the text" + (f", its {t.grammar.syntax} grammar left out" if t.grammar else "")))
        for t in tools if t.freeform]
    return tuple(msgspec.structs.replace(t, freeform=False, grammar=None,
                                         input_schema=_INPUT_SCHEMA) if t.freeform else t
                 for t in tools)


def with_reasoning(encode: Callable[[Request], Encoded], wire: str,
               put: PutReasoning | None) -> Callable[[Request], Encoded]:
    """``encode`` adding what `Request.reasoning` asks for, the way ``put`` (the wire's, None
    when it has no reasoning setting) writes it (`toolwire.codecs.reasoning`); while reasoning
    is on, a temperature is left out (reasoning models refuse one), with a note."""

    @functools.wraps(encode)
    def encoded(request: Request) -> Encoded:
        level = request.reasoning
        if level is None:
            return encode(request)
        ok = level in REASONING_LEVELS and put is not None
        drop = ok and level != "off" and request.temperature is not None
        out = encode(msgspec.structs.replace(
            request, reasoning=None, temperature=None if drop else request.temperature))
        body = dict(out.body)
        if not ok:
            why = (f"{level!r} is not one of {', '.join(REASONING_LEVELS)}"
                   if level not in REASONING_LEVELS else f"{wire} has no reasoning setting")
            notes = [Note(kind="field_dropped", subject="reasoning", detail=f"{why}; left out")]
        else:
            assert put is not None  # ``ok`` says so
            made = put_reasoning(body, put, level)
            notes = [Note(kind=k, subject=s, detail=d) for k, s, d in made]
        if drop:
            notes.append(Note(kind="field_dropped", subject="temperature", detail=(
                f"reasoning models refuse a sampling temperature; with reasoning {level!r} the "
                f"temperature {request.temperature} was left out")))
        return Encoded(body=body, notes=(*notes, *out.notes), headers=out.headers)

    return encoded


def usual_first(usual: Callable[[Request], Encoded | None], encode: Callable[[Request], Encoded],
                *, examples: bool, callers: bool, managed: bool, freeform: bool
                ) -> Callable[[Request], Encoded]:
    """``encode`` (a wire's, inside the wrappers above) preceded by ``usual``, the wire's
    writer of the usual request, which gives None for any request it does not write.

    A request none of the wrappers would change (no reasoning asked, no context management,
    tool examples, allowed callers or freeform tools the wire cannot carry) goes to ``usual``
    first, unless the one pass over it says it holds everything (`toolwire.codecs.traits`:
    every check takes its general path, the test of the two). What the wrappers look for in
    the messages (tools a message adds, an empty system message, a freeform call) is left
    to ``usual``, which writes no request holding any."""

    @functools.wraps(encode)
    def encoded(request: Request) -> Encoded:
        if request.reasoning is None and (managed or request.context_management is None):
            for spec in request.tools:
                if ((spec.freeform and not freeform) or (spec.examples and not examples)
                        or (spec.allowed_callers and not callers)):
                    break
            else:
                found = known(request)
                if found is None or not found.verbatim:
                    out = usual(request)
                    if out is not None:
                        return out
        return encode(request)

    return encoded
