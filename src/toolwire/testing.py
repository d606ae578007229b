"""Test doubles shipped with the package: `ScriptedModel` and helpers to write its script.

Owns `ScriptedModel`, `ScriptError`, `reply` and `call`. A scripted model answers each request
with the next entry of its script, records every request it was sent, and fails loudly both on a
request it has no answer for and on answers never asked for. No network, no clocks.

Must not import the loop, dispatch, transport or codec modules: it only speaks canonical values.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from types import TracebackType
from typing import TypeAlias

from toolwire.events import (
    ReasoningDelta,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolwire.transcript import (
    JSON,
    Message,
    Part,
    ReasoningPart,
    Reply,
    Request,
    StopReason,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
    replace,
)

ScriptEntry: TypeAlias = (
    Reply | str | BaseException | Callable[[Request], Reply | Awaitable[Reply]]
)
"""One scripted answer: a `Reply`; a string (a plain text reply); an exception to raise
(a provider failure, say); or a function of the request returning a reply (sync or async)."""


class ScriptError(AssertionError):
    """The script and the requests it got do not match. The message says how."""


def call(
    name: str,
    arguments: JSON = None,
    *,
    id: str = "",
    raw: str | None = None,
) -> ToolCallPart:
    """A tool call for a script.

    ``arguments`` is the parsed object (default ``{}``); ``raw`` is argument text as a wire that
    sends strings would carry it, which may be broken JSON. Without an ``id`` the scripted model
    gives the call ``call_<request number>_<index>``.
    """
    if raw is not None:
        return ToolCallPart.from_raw(id=id, name=name, raw_arguments=raw)
    return ToolCallPart(id=id, name=name, arguments={} if arguments is None else arguments)


def reply(
    *content: str | Part,
    stop: StopReason | None = None,
    usage: Usage | None = None,
    truncated_call: bool = False,
    model: str | None = None,
) -> Reply:
    """An assistant reply made of text (strings) and parts (calls from `call`, reasoning, ...).

    ``stop`` defaults to ``tool_calls`` when there is a call and ``end_turn`` otherwise;
    ``truncated_call=True`` makes it a reply cut off mid-call (``stop="max_tokens"``).
    """
    parts = tuple(TextPart(text=c) if isinstance(c, str) else c for c in content)
    if stop is None:
        if truncated_call:
            stop = "max_tokens"
        else:
            has_call = any(isinstance(p, ToolCallPart) for p in parts)
            stop = "tool_calls" if has_call else "end_turn"
    return Reply(
        message=Message(role="assistant", parts=parts),
        stop=stop,
        usage=usage or Usage(),
        model=model,
        truncated_call=truncated_call,
    )


def _describe_entry(entry: ScriptEntry) -> str:
    if isinstance(entry, Reply):
        names = [c.name for c in entry.tool_calls]
        if names:
            return f"reply calling {', '.join(names)}"
        return f"reply {entry.text[:40]!r} (stop={entry.stop})"
    if isinstance(entry, str):
        return f"text reply {entry[:40]!r}"
    if isinstance(entry, BaseException):
        return f"raise {type(entry).__name__}({entry})"
    return f"function {getattr(entry, '__name__', repr(entry))}"


def _describe_message(message: Message | None) -> str:
    if message is None:
        return "(no messages)"
    bits: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            bits.append(repr(part.text[:60]))
        elif isinstance(part, ToolResultPart):
            flag = " error" if part.is_error else ""
            bits.append(f"result{flag} for {part.call_id}: {part.content[:60]!r}")
        elif isinstance(part, ToolCallPart):
            bits.append(f"call {part.name}")
        else:
            bits.append(type(part).__name__)
    return f"{message.role}: {'; '.join(bits) or '(empty)'}"


def _with_ids(result: Reply, number: int) -> Reply:
    if not any(isinstance(p, ToolCallPart) and not p.id for p in result.message.parts):
        return result
    parts: list[Part] = []
    index = 0
    for part in result.message.parts:
        if isinstance(part, ToolCallPart):
            if not part.id:
                part = replace(part, id=f"call_{number}_{index}")
            index += 1
        parts.append(part)
    message = replace(result.message, parts=tuple(parts))
    return replace(result, message=message)


class ScriptedModel:
    """A model that answers from a script, for tests and benchmarks.

    Each request takes the next entry of ``replies``. ``requests`` holds every request received.
    A request after the script ran out raises `ScriptError` naming the request; `assert_done`
    (also run on leaving a ``with ScriptedModel(...) as model:`` block without an error) raises
    `ScriptError` listing the entries nobody asked for.
    """

    def __init__(self, replies: Iterable[ScriptEntry], *, name: str = "scripted") -> None:
        self.name = name
        self._script: list[ScriptEntry] = list(replies)
        self._next = 0
        self.requests: list[Request] = []

    def __repr__(self) -> str:
        return f"ScriptedModel({self.name!r}, {self._next}/{len(self._script)} used)"

    def __str__(self) -> str:
        return self.name

    @property
    def remaining(self) -> int:
        """How many scripted entries are still unused."""
        return len(self._script) - self._next

    async def complete(self, request: Request) -> Reply:
        """Record ``request`` and answer it with the next scripted entry."""
        self.requests.append(request)
        number = len(self.requests)
        if self._next >= len(self._script):
            last = request.messages[-1] if request.messages else None
            raise ScriptError(
                f"ScriptedModel {self.name!r} got request #{number} but its script has only "
                f"{len(self._script)} entries; the request ended with {_describe_message(last)}"
            )
        entry = self._script[self._next]
        self._next += 1
        if isinstance(entry, Reply):
            return _with_ids(entry, number)
        if isinstance(entry, str):
            return reply(entry)
        if isinstance(entry, BaseException):
            raise entry
        produced = entry(request)
        if inspect.isawaitable(produced):
            produced = await produced
        if not isinstance(produced, Reply):
            raise ScriptError(
                f"script entry #{number} ({_describe_entry(entry)}) returned "
                f"{type(produced).__name__}, not a Reply"
            )
        return _with_ids(produced, number)

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """The scripted reply as stream events: deltas per part, then `StreamEnd`."""
        result = await self.complete(request)
        index = 0
        for part in result.message.parts:
            if isinstance(part, TextPart):
                yield TextDelta(text=part.text)
            elif isinstance(part, ReasoningPart):
                yield ReasoningDelta(text=part.text)
            elif isinstance(part, ToolCallPart):
                yield ToolCallStarted(index=index, id=part.id, name=part.name)
                yield ToolCallDelta(index=index, fragment=part.arguments_text)
                yield ToolCallFinished(index=index, call=part)
                index += 1
        yield StreamEnd(reply=result)

    def assert_done(self) -> None:
        """Raise `ScriptError` if any scripted entry was never asked for."""
        if self._next < len(self._script):
            unused = [
                f"#{i + 1}: {_describe_entry(e)}"
                for i, e in enumerate(self._script[self._next :], start=self._next)
            ]
            raise ScriptError(
                f"ScriptedModel {self.name!r}: {len(unused)} of {len(self._script)} scripted "
                f"entries were never requested ({len(self.requests)} requests came): "
                + "; ".join(unused)
            )

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.assert_done()


__all__ = ["ScriptEntry", "ScriptError", "ScriptedModel", "call", "reply"]
