"""A request fitted to one model of a fallback chain, and what the conversation lost on the way.

Owns `ChainLink` (a model of the chain with its own settings), `shaped` (the request as that
model takes it: its max tokens and reasoning level, tools and media taken out for a model that
takes none, each change with a note) and `losses` (what a request loses when it goes to one
wire rather than another: the notes its codec makes there and not on the wire before).

The transcript is wire-neutral, so the next model's codec writes the conversation in its own
wire; what only the first wire understands (signed reasoning, its server-tool and fallback
blocks) is left out there with a note, and ids are rewritten where the next wire's rules want
it (`toolwire.codecs`). Imports codecs only through ``get_codec``.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolwire.codecs import get_codec
from toolwire.protocol import Model
from toolwire.transcript import (
    MediaPart,
    Message,
    Part,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    replace,
)

REASONING_LEVELS = ("low", "medium", "high", "off")


@dataclass(frozen=True, slots=True)
class ChainLink:
    """One model of a fallback chain and its own settings: ``max_tokens`` and ``reasoning``
    (a level: low, medium, high or off) replace the request's for this model; ``tools=False``
    (a model that takes no tools) sends it no tool definitions and the history's calls and
    results as text; ``media=False`` (a model that takes no images, documents or audio) sends
    a line of text in place of each medium. None keeps what the request says."""

    model: Model
    max_tokens: int | None = None
    reasoning: str | None = None
    tools: bool = True
    media: bool = True

    def __post_init__(self) -> None:
        if self.reasoning is not None and self.reasoning not in REASONING_LEVELS:
            raise ValueError(f"reasoning must be one of {', '.join(REASONING_LEVELS)}; got "
                             f"{self.reasoning!r}")
        if self.max_tokens is not None and (type(self.max_tokens) is not int
                                            or self.max_tokens < 1):
            raise ValueError(f"max_tokens must be a positive whole number; got "
                             f"{self.max_tokens!r}")


def _medium(part: MediaPart) -> TextPart:
    return TextPart(text=f"[{part.kind} {part.media_type} left out: this model takes no media]")


def _without_media(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    out: list[Part] = []
    for part in parts:
        if isinstance(part, MediaPart):
            out.append(_medium(part))
        elif isinstance(part, ToolResultPart) and part.media:
            content = tuple(_medium(p) if isinstance(p, MediaPart) else p
                            for p in part.content)
            out.append(replace(part, content=content))
        else:
            out.append(part)
    return tuple(out)


def _as_text(part: Part) -> Part:
    if isinstance(part, ToolCallPart):
        return TextPart(text=f"[called tool {part.name} with {part.arguments_text}]")
    if isinstance(part, ToolResultPart):
        body = part.content if isinstance(part.content, str) else " ".join(
            p.text if isinstance(p, TextPart) else f"[{p.kind}]" for p in part.content)
        failed = " (an error)" if part.is_error else ""
        return TextPart(text=f"[result of tool {part.name or part.call_id}{failed}: {body}]")
    return part


def _without_tools(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    out: list[Message] = []
    for message in messages:
        parts = tuple(_as_text(p) for p in message.parts)
        role = "user" if message.role == "tool" else message.role
        if out and role == "user" and out[-1].role == "user":  # results after the task
            out[-1] = replace(out[-1], parts=out[-1].parts + parts)
        else:
            out.append(replace(message, role=role, parts=parts))
    return tuple(out)


def shaped(request: Request, link: ChainLink) -> tuple[Request, tuple[str, ...]]:
    """``request`` as ``link``'s model takes it, with a note for each thing changed."""
    changes: dict[str, object] = {}
    notes: list[str] = []
    if link.max_tokens is not None:
        changes["max_tokens"] = link.max_tokens
    if link.reasoning is not None:
        changes["reasoning"] = link.reasoning
    messages = request.messages
    if not link.media and any(m.media or any(r.media for r in m.tool_results)
                              for m in messages):
        messages = tuple(replace(m, parts=_without_media(m.parts)) for m in messages)
        notes.append("media_dropped: messages: this model takes no media; each went as a line "
                     "of text")
    if not link.tools and (request.tools or any(m.tool_calls or m.tool_results
                                                for m in messages)):
        messages = _without_tools(messages)
        changes["tools"] = ()
        changes["tool_choice"] = None
        notes.append("tools_dropped: tools: this model takes no tools; it was sent no tool "
                     "definitions and the history's calls and results as text")
    if messages is not request.messages:
        changes["messages"] = messages
    return (replace(request, **changes) if changes else request), tuple(notes)


def wire_of(model: object) -> str | None:
    """The wire ``model`` speaks (an HTTP model's ``wire``), None when it does not say."""
    wire = getattr(model, "wire", None)
    return wire if isinstance(wire, str) else None


LOST = frozenset({
    "reasoning_dropped", "opaque_dropped", "part_dropped", "message_dropped", "id_rewritten",
    "media_dropped", "media_moved", "role_changed", "arguments_replaced", "empty_text_dropped",
    "tool_name_mapped", "schema_rewritten", "custom_tool_call", "compaction", "field_dropped",
})
"""The kinds of codec note that say the conversation lost or changed something (the others
say how a setting was written: a budget raised, a cache key placed)."""


def _notes(request: Request, wire: str) -> list[str]:
    return [str(n) for n in get_codec(wire).encode(request).notes if n.kind in LOST]


def losses(request: Request, source: str | None, target: str | None) -> tuple[str, ...]:
    """What ``request`` loses in ``target``'s wire that it did not lose in ``source``'s: the
    notes its codec makes there and not before (reasoning and blocks of another wire dropped,
    ids rewritten, schemas and tool names fitted), in the order the codec made them."""
    if target is None or source == target:
        return ()
    try:
        before = set(_notes(request, source)) if source is not None else set()
    except Exception:  # the request no longer fits the wire it came from: all is news
        before = set()
    try:
        made = _notes(request, target)
    except Exception as exc:  # its model says so when the request is sent
        return (f"unwritable: {target}: {type(exc).__name__}: {exc}",)
    return tuple(n for n in made if n not in before)


__all__ = ["REASONING_LEVELS", "ChainLink", "losses", "shaped", "wire_of"]
