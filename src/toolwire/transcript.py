"""The canonical transcript: frozen, keyword-only, vendor-neutral values.

Owns: `Message`, `ToolSpec`, `ToolChoice`, `Cache`, `ContextManagement`, `Request`, `Reply`,
`Usage` and the normalised stop reasons; the parts of a message (text, reasoning, tool calls and
results, media) are `toolwire.message_parts`, whose names are re-exported here.
Must not import anything else from toolwire except `message_parts`, `errors` and `_json`;
every other layer (codecs, loop, CLI) speaks in these values.

Provider-only data (Anthropic thinking signatures, OpenRouter ``reasoning_details``, Responses
``encrypted_content``, Gemini ``thoughtSignature``, server-tool blocks) rides in
``provider_data``: a mapping from wire name to the payload exactly as that wire sent it. A codec
sends it back to its own wire unchanged and ignores every other wire's entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

import msgspec

from toolwire._json import broken_arguments as broken_arguments  # the paths codecs import
from toolwire._json import read_arguments as read_arguments
from toolwire.errors import TranscriptError
from toolwire.message_parts import JSON as JSON
from toolwire.message_parts import MEDIA_KINDS as MEDIA_KINDS
from toolwire.message_parts import MediaKind as MediaKind
from toolwire.message_parts import MediaPart as MediaPart
from toolwire.message_parts import OpaquePart as OpaquePart
from toolwire.message_parts import Part as Part
from toolwire.message_parts import ProviderData as ProviderData
from toolwire.message_parts import ReasoningPart as ReasoningPart
from toolwire.message_parts import ResultPart as ResultPart
from toolwire.message_parts import TextPart as TextPart
from toolwire.message_parts import ToolCallPart as ToolCallPart
from toolwire.message_parts import ToolResultPart as ToolResultPart

Role = Literal["system", "user", "assistant", "tool"]

StopReason = Literal[
    "end_turn",
    "tool_calls",
    "max_tokens",
    "stop_sequence",
    "pause_turn",
    "refusal",
    "content_filter",
    "context_window_exceeded",
    "tool_call_failed",
    "error",
    "other",
]
"""Normalised reason a reply ended. The raw provider value is kept on `Reply.raw_stop`."""

STOP_REASONS: tuple[StopReason, ...] = (
    "end_turn",
    "tool_calls",
    "max_tokens",
    "stop_sequence",
    "pause_turn",
    "refusal",
    "content_filter",
    "context_window_exceeded",
    "tool_call_failed",
    "error",
    "other",
)


# Every value below is a frozen, keyword-only `msgspec.Struct`, compared field by field. Structs
# are cheap to make, which matters because making them is most of what a codec does. A value
# never refers back to itself, so the garbage collector need not track it (``gc=False``).
# Change a field with `replace`.

_force_set = msgspec.structs.force_setattr

V = TypeVar("V", bound=msgspec.Struct)


def replace(value: V, /, **changes: Any) -> V:
    """A copy of a transcript value with some fields changed: ``replace(msg, parts=(...))``."""
    return msgspec.structs.replace(value, **changes)


def _freeze_parts(parts: Any) -> tuple[Part, ...]:
    return parts if isinstance(parts, tuple) else tuple(parts)




class Message(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One turn of the conversation.

    Roles: ``user``; ``assistant``; ``tool`` (the results answering the previous assistant
    message's calls, in call order); ``system`` (instructions placed mid-conversation; the main
    system prompt lives on `Request.system`). A ``system`` message may also add ``tools`` from
    its place in the conversation on (Anthropic's tool additions, the Responses API's
    ``additional_tools`` items), with or without text; a wire that cannot add tools there
    offers them from the start, with a note.
    """

    role: Role
    parts: tuple[Part, ...] = ()
    provider_data: ProviderData | None = None
    tools: tuple[ToolSpec, ...] = ()
    """Tools offered to the model from this message on (``system`` messages only)."""

    def __post_init__(self) -> None:
        if type(self.parts) is tuple and type(self.tools) is tuple:  # the usual, in one look
            return
        if not isinstance(self.parts, tuple):
            _force_set(self, "parts", _freeze_parts(self.parts))
        if not isinstance(self.tools, tuple):
            _force_set(self, "tools", tuple(self.tools))

    @property
    def text(self) -> str:
        """All text parts joined."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        return _calls(self.parts)

    @property
    def media(self) -> tuple[MediaPart, ...]:
        return tuple(p for p in self.parts if isinstance(p, MediaPart))

    @property
    def tool_results(self) -> tuple[ToolResultPart, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolResultPart))

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role="user", parts=(TextPart(text=text),))

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls(role="assistant", parts=(TextPart(text=text),))


class Grammar(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What a freeform tool's text must match: a ``definition`` in a ``syntax`` (``"lark"`` or
    ``"regex"``, the OpenAI APIs' custom tool grammars)."""

    syntax: str
    definition: str


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What the model is shown of a tool: a name, a description and a JSON Schema.

    ``strict=True`` asks wires that support it (OpenAI, Anthropic) to make the model's calls
    follow the schema exactly; codecs rewrite the schema as that mode needs and report it.
    ``deferred=True``: see the field.
    """

    name: str
    description: str = ""
    input_schema: Mapping[str, JSON] = msgspec.field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    strict: bool = False
    deferred: bool = False
    """Left out of the prompt until the provider's own tool search finds it (Anthropic's and
    the Responses API's ``defer_loading``); set by an agent with deferred tools on a wire that
    searches itself."""
    examples: tuple[Mapping[str, JSON], ...] = ()
    """Arguments that fit the schema, to show the model how the tool is called (Anthropic's
    ``input_examples``; on other wires folded into the description)."""
    allowed_callers: tuple[str, ...] = ()
    """Who may call the tool, on a wire where code the provider runs can call it (Anthropic's
    ``allowed_callers``: ``"direct"`` for the model, ``"code_execution_20260120"`` and the other
    code execution versions for its code). Empty: the wire's default (the model only)."""
    freeform: bool = False
    """The tool takes free text, not JSON arguments (a custom tool of the OpenAI APIs, as
    Codex's ``apply_patch``): its calls are freeform `ToolCallPart`s, ``input_schema`` is not
    sent, and ``grammar`` (when set) is what the text must match. A wire without such tools
    gets a function tool whose one string argument ``input`` holds the text, with a note."""
    grammar: Grammar | None = None


class ToolChoice(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """How the model may use tools.

    ``mode``: ``auto`` (may call), ``required`` (must call some tool), ``tool`` (must call
    ``name``), ``none`` (must not call). ``parallel=False`` asks for at most one call per reply.
    """

    mode: Literal["auto", "required", "tool", "none"] = "auto"
    name: str | None = None
    parallel: bool | None = None


class Cache(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Prompt caching asked of a request; each codec writes it the way its wire takes it.

    Wires with cache breakpoints (Anthropic, OpenRouter's breakpoint models when ``markers``)
    get them on the fixed prefix (tools and system) and at the end of the latest and the
    previous request, with ``ttl`` (``"5m"`` or ``"1h"``; None: the provider's default). The
    OpenAI wires get ``key`` as ``prompt_cache_key`` and ``retention`` as
    ``prompt_cache_retention``, or for the models with explicit breakpoints, breakpoints in the
    same places (``ttl`` ``"30m"`` or ``"12h"``). Gemini and Ollama cache a repeated prefix by
    themselves.
    """

    ttl: str | None = None
    key: str | None = None
    retention: str | None = None
    markers: bool = False
    """Whether a wire without breakpoints of its own (OpenAI chat) carries Anthropic-style
    ``cache_control`` markers on text parts: OpenRouter passes them to its upstream."""
    explicit: bool = False
    """Whether a wire with explicit caches (Gemini's cached contents) makes one for the
    conversation's prefix and sends requests naming it, living ``ttl`` (``"5m"``, ``"1h"`` or
    seconds as ``"600s"``; None: the provider's default hour)."""


class ContextManagement(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The provider's own management of a long context, asked of a request; each codec writes
    it the way its wire takes it, and a wire without it leaves it out with a note.

    ``compact``: once the prompt reaches ``trigger`` tokens the provider summarises the
    conversation itself and its reply starts with the summary, kept as an `OpaquePart` of kind
    ``"compaction"`` that goes back as it came (Anthropic's ``compact_20260112`` edit, the
    Responses API's ``compaction`` entry). ``clear_tool_results``: once the prompt reaches
    ``trigger`` the provider leaves all but the latest ``keep`` tool results out of what the
    model reads (Anthropic's ``clear_tool_uses_20250919``); ``clear_thinking`` leaves out the
    reasoning of all but the latest ``keep_thinking`` turns (``clear_thinking_20251015``).
    None leaves a number to the provider's default. ``instructions`` guide a summary.
    """

    compact: bool = True
    clear_tool_results: bool = False
    clear_thinking: bool = False
    trigger: int | None = None
    keep: int | None = None
    keep_thinking: int | None = None
    instructions: str | None = None


class Request(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Everything needed to ask a model for its next reply, in no particular wire.

    ``cache`` asks for prompt caching (None: the request carries no cache fields);
    ``context_management`` asks the provider to manage a long context itself. ``reasoning``
    (``low``, ``medium``, ``high`` or ``off``; None: the provider's default) asks for the
    model's reasoning as each wire does (`toolwire.codecs.reasoning`).
    """

    model: str
    messages: tuple[Message, ...] = ()
    system: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stream: bool = False
    provider_options: ProviderData | None = None
    cache: Cache | None = None
    context_management: ContextManagement | None = None
    reasoning: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.messages, tuple):
            _force_set(self, "messages", tuple(self.messages))
        tools = self.tools
        if tools is _CHECKED_TOOLS[0]:  # the tuple checked last: the loop's, turn after turn
            return
        if isinstance(tools, tuple):
            for tool in tools:  # a loop, not a generator: no frame to make
                if not isinstance(tool, ToolSpec):
                    break
            else:
                if tools:
                    _CHECKED_TOOLS[0] = tools
                return
        _force_set(self, "tools", tuple(_spec(t, n) for n, t in enumerate(tools)))
        if self.tools:
            _CHECKED_TOOLS[0] = self.tools


def _calls(parts: tuple[Part, ...]) -> tuple[ToolCallPart, ...]:
    """The tool calls among ``parts``: ``parts`` itself when it is one call (a turn's usual
    reply), with no new tuple made."""
    if len(parts) == 1 and isinstance(parts[0], ToolCallPart):
        return parts  # type: ignore[return-value]  # its one part is a call
    return tuple([p for p in parts if isinstance(p, ToolCallPart)])


_CHECKED_TOOLS: list[tuple[ToolSpec, ...]] = [()]
"""The tuple of tools `Request` checked last (held, so it stays the same object): a loop's
requests, and the copies a model makes of each, pass the same tuple again and again."""


def _spec(tool: Any, n: int) -> ToolSpec:
    """What the model is shown of ``tool``: a `ToolSpec` as it is, a tool's spec (an object
    whose ``spec`` is one, such as `toolwire.Tool`); anything else is refused here, where it
    was given, not deep in an encoder."""
    if isinstance(tool, ToolSpec):
        return tool
    spec = getattr(tool, "spec", None)
    if isinstance(spec, ToolSpec):
        return spec
    raise TranscriptError(f"Request(tools=...): item {n} is a {type(tool).__name__}, not a "
                          "ToolSpec or a Tool")


class Usage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Token counts for one reply (or summed over a run with ``+``).

    ``input_tokens`` counts every prompt token, cached ones included; ``cache_read_tokens`` and
    ``cache_write_tokens`` say how many of those were read from or written to a prompt cache;
    ``cache_write_long_tokens``, part of ``cache_write_tokens``, were written with the long
    lifetime (Anthropic's one hour), billed at a higher rate. ``reasoning_tokens`` are part of
    ``output_tokens``.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_long_tokens: int = 0
    reasoning_tokens: int = 0
    cost: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost is not None or other.cost is not None:
            cost = (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_write_long_tokens=self.cache_write_long_tokens + other.cache_write_long_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cost=cost,
        )


class Reply(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A model's reply: the assistant message and why it ended.

    ``stop`` is normalised and follows the content: a reply holding tool calls has
    ``stop == "tool_calls"`` whatever the provider said, unless a call was cut off by the token
    limit, which gives ``stop == "max_tokens"`` and ``truncated_call=True``. ``raw_stop`` keeps the
    provider's own value.
    """

    message: Message
    stop: StopReason = "end_turn"
    raw_stop: str | None = None
    usage: Usage = msgspec.field(default_factory=Usage)
    model: str | None = None
    id: str | None = None
    truncated_call: bool = False
    provider_data: ProviderData | None = None

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        return _calls(self.message.parts)

    @property
    def text(self) -> str:
        return self.message.text
