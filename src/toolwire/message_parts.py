"""The parts of a message: text, reasoning, tool calls and their results, media, and blocks
carried but not interpreted; `toolwire.transcript` builds messages, requests and replies of
them and re-exports every name here.

Owns: `TextPart`, `ReasoningPart`, `ToolCallPart` (the argument text read once, with where it
broke), `MediaPart`, `ToolResultPart`, `OpaquePart`, the `Part` union and the `JSON` and
`ProviderData` aliases. Must not import anything else from toolwire except `errors` and `_json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

import msgspec

from toolwire import _json
from toolwire.errors import TranscriptError

JSON: TypeAlias = Any
"""A value made of dict, list, str, int, float, bool and None."""

ProviderData: TypeAlias = Mapping[str, JSON]
"""Wire name -> payload kept exactly as that wire sent it."""

_force_set = msgspec.structs.force_setattr


class TextPart(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Plain text written by a person or a model."""

    text: str
    provider_data: ProviderData | None = None


class ReasoningPart(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Reasoning a model produced.

    ``text`` is the readable reasoning or summary when there is one (it may be empty, for example
    for encrypted or redacted reasoning). ``provider_data`` holds the wire's own payload, kept
    exactly, which is what goes back to that wire on the next turn.
    """

    text: str = ""
    provider_data: ProviderData | None = None


class ToolCallPart(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A model's request to run a tool.

    ``raw_arguments`` is the exact text the model sent when its wire carries arguments as a
    string (OpenAI chat, Responses); it is ``None`` when the wire carried a JSON object
    (Anthropic, Ollama, Gemini). ``arguments`` is the parsed value; when the raw text is not valid
    JSON it is ``None`` and ``parse_error`` says where it broke. Use `ToolCallPart.from_raw` to
    build one from text.
    """

    id: str
    name: str
    arguments: JSON = None
    raw_arguments: str | None = None
    parse_error: str | None = None
    provider_data: ProviderData | None = None
    caller: str | None = None
    """Who made the call: None for the model itself, else the server-side tool whose code made
    it (Anthropic's programmatic tool calling: ``"code_execution_20260120"``...)."""
    freeform: bool = False
    """The input is free text (a custom tool's call, as the Responses API's ``custom_tool_call``
    of Codex's ``apply_patch``), in ``raw_arguments`` and ``arguments`` alike; a wire without
    such calls gets a function call whose argument ``input`` holds the text, with a note."""

    @classmethod
    def from_raw(
        cls,
        *,
        id: str,
        name: str,
        raw_arguments: str,
        provider_data: ProviderData | None = None,
        caller: str | None = None,
    ) -> ToolCallPart:
        """Build a call from the argument text a model sent, parsing it once (text a step
        before found broken is not read again: `read_arguments`)."""
        parsed: JSON = None
        error: str | None = None
        if raw_arguments and not raw_arguments.isspace():
            try:
                parsed = _json.read_arguments(raw_arguments)
            except json.JSONDecodeError as exc:
                error = f"{exc.msg} at line {exc.lineno} column {exc.colno} (char {exc.pos})"
        else:
            parsed = {}
        return cls(
            id=id,
            name=name,
            arguments=parsed,
            raw_arguments=raw_arguments,
            parse_error=error,
            provider_data=provider_data,
            caller=caller,
        )

    @property
    def arguments_text(self) -> str:
        """The arguments as JSON text: the model's own text when it sent text."""
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False, separators=(",", ":"))

    @property
    def wire_arguments(self) -> JSON:
        """What to validate: the raw text when there is one, else the parsed object."""
        return self.raw_arguments if self.raw_arguments is not None else self.arguments


MediaKind = Literal["image", "document", "audio"]
MEDIA_KINDS: tuple[MediaKind, ...] = ("image", "document", "audio")


class MediaPart(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """An image, a document (PDF, plain text) or a piece of audio.

    ``media_type`` is the IANA type (``image/png``, ``application/pdf``, ``text/plain``,
    ``audio/wav``...). The content is ``data`` (the bytes), or ``url``, or a provider's own file
    id in ``file_ids`` (wire name -> id, kept per wire like ``provider_data``); at least one is
    set. ``name`` is an optional file name. Build one with `toolwire.Image`, `toolwire.Document`
    or `toolwire.Audio`.
    """

    kind: MediaKind
    media_type: str
    data: bytes | None = None
    url: str | None = None
    file_ids: Mapping[str, str] | None = None
    name: str | None = None
    provider_data: ProviderData | None = None

    def __post_init__(self) -> None:
        if self.kind not in MEDIA_KINDS:
            raise TranscriptError(f"media kind {self.kind!r} is not image, document or audio")
        if self.data is None and self.url is None and not self.file_ids:
            raise TranscriptError(
                f"a {self.kind} part needs its data, a URL or a provider file id; it has none"
            )

    @property
    def size(self) -> int:
        """The number of bytes held inline (0 for a URL or a file id)."""
        return len(self.data) if self.data is not None else 0


ResultPart = TextPart | MediaPart
"""What a tool result's content is made of when it is not one string."""


class ToolResultPart(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The harness's answer to one tool call, matched by ``call_id``.

    ``content`` is one string, or a sequence of text and media parts (a screenshot, a PDF).
    ``text`` is the text either way and ``media`` the media parts. ``name`` is the called tool's
    name; wires that match results by name (Ollama, Gemini) need it.
    """

    call_id: str
    content: str | tuple[ResultPart, ...]
    is_error: bool = False
    name: str | None = None
    provider_data: ProviderData | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.content, (str, tuple)):
            _force_set(self, "content", tuple(self.content))

    @property
    def text(self) -> str:
        """The text of the result: the string, or its text parts joined."""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def media(self) -> tuple[MediaPart, ...]:
        if isinstance(self.content, str):
            return ()
        return tuple(p for p in self.content if isinstance(p, MediaPart))


class OpaquePart(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A provider block carried but not interpreted: server-side tool calls and their results.

    ``wire`` names the only wire it may be sent back to; ``payload`` is the block as it came.
    ``kind`` is a short label for people (for example ``"server_tool_use"``).
    """

    wire: str
    kind: str
    payload: JSON


Part = TextPart | ReasoningPart | ToolCallPart | ToolResultPart | OpaquePart | MediaPart
