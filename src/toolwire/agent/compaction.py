"""What a run does about the cost and the size of its context: caching and compaction.

Owns `cache_setting` (the `Cache` an agent's requests carry), `Compaction` (how an agent keeps
its history under the model's window), `Keeper` (does it for each run: `Keeper.before_call`
and `Keeper.overflowed`), and the strategies' pieces `clear_results` and `drop_turns`.

Before each model call the keeper estimates the context: the last reply's reported usage (prompt
and output tokens) plus a local estimate of the messages added since
(`toolwire.context.estimate`); only near the threshold does it ask the model's own counter
(``count_tokens``, a round trip) when the model has one. At ``threshold`` of the window it
compacts down to ``target`` of it; when the provider still says the context is too long, the
loop compacts again and retries the turn. Strategies: ``"clear"`` replaces old tool results by a
stub saying what was cleared and how to get it again, then, if that is not enough, removes the
oldest whole turns (a call never loses its result); ``"summarize"`` asks the model for a summary
of the older turns and keeps it in their place; ``"provider"`` asks the provider to compact on
its side (`ContextManagement` on every request, triggered at ``threshold`` of the window) where
the model's wire and provider can (`toolwire.protocol.native_compaction`), drops what came
before the provider's summary once a reply holds one, and clears like ``"clear"`` when the
provider still says the context is too long, or where it cannot (with a note); a function of
your own takes the messages and returns the new ones. The first message (the task) always stays,
and the latest turns stay as they are, reasoning blocks included. Every compaction is checked
(`unpaired`: a call without its result, or a result without its call, and the compaction is not
used), goes into the notes, and is a `toolwire.events.Compacted` event (the run log keeps the
new history, so a resumed run goes on from it). Must not import the loop, resume, codecs, the
transport or the client.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolwire.agent.run import RunState
from toolwire.context.estimate import estimate_messages, estimate_tokens
from toolwire.context.windows import context_window
from toolwire.events import Compacted
from toolwire.protocol import CountingModel, native_compaction, provider_model
from toolwire.transcript import (
    Cache,
    ContextManagement,
    Message,
    OpaquePart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    replace,
)


def cache_setting(
    cache: bool | Cache, model: str, system: str | None, tools: Sequence[ToolSpec]
) -> Cache | None:
    """The `Cache` for an agent's requests: None when caching is off; else ``cache`` with a key
    made from what stays the same across the agent's runs (model, system prompt, tool names)
    when it has none, so that its runs share one cache (the OpenAI wires route by the key)."""
    if cache is False:
        return None
    found = Cache() if cache is True else cache
    if found.key is not None:
        return found
    seed = "\n".join([model, system or "", *(t.name for t in tools)])
    return replace(found, key="toolwire-" + hashlib.sha256(seed.encode()).hexdigest()[:16])


Compactor = Callable[[list[Message]], "list[Message] | Awaitable[list[Message]]"]
"""A compaction of your own: the history in, the smaller history out."""

CLEARED = ("[cleared to keep the context small: the result of {name} was here ({held}). "
           "Call {name} again with the same arguments to get it back.]")
"""What an old tool result's content becomes (its text and media alike)."""

REMOVED = "[{count} earlier messages were removed to keep the context small.]"
SUMMARY = "[A summary of {count} earlier messages, written to keep the context small:]\n{text}"
SUMMARY_ASK = ("Summarise the conversation below for yourself, to go on with the task without "
               "it: what was asked, what was done, what was found (names, paths, numbers, "
               "errors) and what is left to do. Write only the summary.")


@dataclass(frozen=True, slots=True)
class Compaction:
    """How an agent keeps its history under the model's context window.

    ``strategy``: ``"clear"``, ``"summarize"`` or a function of your own (`Compactor`).
    It runs when the context reaches ``threshold`` of the window and makes it at most
    ``target`` of it; the latest ``keep`` tool results (clear) or messages (summarize) stay
    as they are.
    """

    strategy: str | Compactor = "clear"
    threshold: float = 0.8
    target: float = 0.6
    keep: int = 3


def compaction_setting(value: Compaction | str | Compactor | None) -> Compaction | None:
    """An agent's ``compaction`` argument as a `Compaction` (None: never compact)."""
    if value is None or isinstance(value, Compaction):
        return value
    if isinstance(value, str) and value not in ("clear", "summarize", "provider"):
        raise ValueError(f"unknown compaction {value!r}: use 'clear', 'summarize', 'provider', "
                         "a function, a toolwire Compaction or None")
    return Compaction(strategy=value)


def _a(kind: str) -> str:
    return "an" if kind[0] in "aeiou" else "a"


NO_PROVIDER = ("compaction 'provider': this model's provider does not manage the context "
               "itself, so old tool results are cleared by the harness instead ('clear')")


def clear_results(messages: Sequence[Message], keep: int) -> tuple[list[Message], int]:
    """``messages`` with every tool result but the latest ``keep`` replaced by a stub saying
    what it held, media included (results of a few characters and no media stay); and how many
    were cleared."""
    names = {c.id: c.name for m in messages if m.role == "assistant" for c in m.tool_calls}
    places = [(i, n) for i, m in enumerate(messages) for n, p in enumerate(m.parts)
              if type(p) is ToolResultPart]
    out, cleared = list(messages), 0
    for i, n in places[: max(0, len(places) - keep)]:
        part = out[i].parts[n]
        assert type(part) is ToolResultPart
        media = part.media
        if (len(part.text) < 200 and not media) or part.text.startswith("[cleared"):
            continue
        name = part.name or names.get(part.call_id, "the tool")
        held = [f"{len(part.text)} characters"] if part.text or not media else []
        held += [f"{_a(m.kind)} {m.kind} ({m.media_type}, {m.size} bytes)" for m in media]
        stub = CLEARED.format(name=name, held=" and ".join(held))
        parts = list(out[i].parts)
        parts[n] = replace(part, content=stub)
        out[i] = replace(out[i], parts=tuple(parts))
        cleared += 1
    return out, cleared


def _cuts(messages: Sequence[Message]) -> list[int]:
    """Where the history may be cut: before an assistant message that follows a non-assistant
    one (a turn starts there, and no call is apart from its result)."""
    return [i for i in range(2, len(messages) - 1)
            if messages[i].role == "assistant" and messages[i - 1].role != "assistant"]


def _with_note(first: Message, note: str) -> Message:
    parts = [p for p in first.parts if not (type(p) is TextPart and p.text.startswith("[")
                                            and "to keep the context small" in p.text)]
    return replace(first, parts=(*parts, TextPart(text=note)))


def drop_turns(messages: Sequence[Message], fits: Callable[[list[Message]], bool]
               ) -> list[Message]:
    """``messages`` without the oldest whole turns, as few as make ``fits`` true (or all but
    the latest turn); the first message stays and says how many were removed."""
    cuts = _cuts(messages)
    for cut in cuts:
        kept = [_with_note(messages[0], REMOVED.format(count=cut - 1)), *messages[cut:]]
        if fits(kept) or cut == cuts[-1]:
            return kept
    return list(messages)


class Keeper:
    """Keeps one agent's runs under the model's context window (see the module)."""

    def __init__(self, model: Any, setting: Compaction | None, window: int | None) -> None:
        self.model = model
        self.setting = setting
        found = window or getattr(model, "context_window", None)
        self.window: int | None = found if isinstance(found, int) else context_window(
            provider_model(model))
        rule = getattr(model, "media_tokens", None)  # media are estimated as the wire bills them
        self.media_rule: str | None = rule if isinstance(rule, str) else None
        self.managed: ContextManagement | None = None
        """What every request asks of the provider (strategy ``"provider"``, where it can)."""
        self.fallback: str | None = None
        if setting is not None and setting.strategy == "provider":
            if native_compaction(model):
                self.managed = ContextManagement(trigger=None if self.window is None else int(
                    setting.threshold * self.window))
            else:
                self.fallback = NO_PROVIDER
        self.idle = setting is None or (
            self.window is None and self.managed is None and self.fallback is None)
        """Whether `before_call` has nothing to do for any run (no compaction, or nothing to
        measure against: no window, no provider-side compaction, no note to give)."""

    def estimate(self, s: RunState) -> int:
        """The context the next request would hold: the last reply's usage and an estimate of
        what came after it; a local estimate of everything before the first reply."""
        last = s.last_usage
        if last is not None and last.input_tokens:
            return (last.input_tokens + last.output_tokens
                    + estimate_messages(s.messages[s.last_index + 1:], self.media_rule))
        return self._size(s, s.messages)

    async def _measure(self, s: RunState, limit: float) -> int:
        size = self.estimate(s)
        model = self.model
        if size >= 0.9 * limit and isinstance(model, CountingModel):  # near it: ask the counter
            try:
                counted = await model.count_tokens(
                    replace(s.request_base, messages=tuple(s.messages)))
            except Exception:  # a counter that fails leaves the estimate
                return size
            if isinstance(counted, int) and counted > 0:
                return counted
        return size

    async def before_call(self, s: RunState) -> None:
        """Compact ``s``'s history when it has reached the threshold of the window."""
        if self.setting is None or len(s.messages) < 3:
            return
        if self.fallback is not None and self.fallback not in s.notes:
            s.notes.append(self.fallback)
        if self.managed is not None:
            self._after_provider(s)
            return
        if self.window is None:
            return
        limit = self.setting.threshold * self.window
        size = await self._measure(s, limit)
        if size >= limit:
            await self.compact(s, size, self.setting.target * self.window,
                               f"the context reached {size} tokens of a {self.window}-token "
                               "window")

    async def overflowed(self, s: RunState, error: BaseException) -> bool:
        """The provider said the context is too long: compact to half of what it holds (or the
        target), and say whether the history changed (then the turn is tried again)."""
        if self.setting is None:
            return False
        size = self.estimate(s)
        goal = size / 2 if self.window is None else min(size / 2,
                                                         self.setting.target * self.window)
        return await self.compact(s, size, goal, f"the provider said: {error}")

    def _after_provider(self, s: RunState) -> None:
        """The provider compacted (a reply holds its ``compaction`` part): what came before that
        reply is no longer read, so it goes too, the task kept first."""
        at = next((i for i in range(len(s.messages) - 1, 1, -1)
                   if s.messages[i].role == "assistant" and any(
                       type(p) is OpaquePart and p.kind == "compaction"
                       for p in s.messages[i].parts)), None)
        if at is not None:
            self._adopt(s, list(s.messages), [s.messages[0], *s.messages[at:]], "provider",
                        "the provider compacted the context: it reads nothing before its "
                        "summary", self.estimate(s), 1.0)

    def _size(self, s: RunState, messages: list[Message]) -> int:
        return estimate_tokens(replace(s.request_base, messages=tuple(messages)), self.media_rule)

    async def compact(self, s: RunState, before: int, goal: float, why: str) -> bool:
        """Make ``s``'s history fit in ``goal`` tokens; True when it changed."""
        assert self.setting is not None
        strategy = self.setting.strategy
        old = list(s.messages)
        ratio = before / max(1, self._size(s, old))  # the provider's count over the estimate

        def fits(messages: list[Message]) -> bool:
            return self._size(s, messages) * ratio <= goal

        if callable(strategy):
            made = strategy(list(old))
            new = list(await made) if inspect.isawaitable(made) else list(made)
            how = getattr(strategy, "__name__", "function")
        elif strategy == "summarize":
            new = await self._summarized(s, old)
            how = "summarize"
        else:
            new, _ = clear_results(old, self.setting.keep)
            if not fits(new):
                new = drop_turns(new, fits)
            how = "clear"
        return self._adopt(s, old, new, how, why, before, ratio)

    async def _summarized(self, s: RunState, old: list[Message]) -> list[Message]:
        """``old`` with the turns before the latest ``keep`` messages replaced by the model's
        summary of them, kept after the task."""
        cuts = _cuts(old)
        keep = self.setting.keep if self.setting is not None else 3
        keep_from = next((c for c in cuts if len(old) - c <= max(2, keep)),
                         cuts[-1] if cuts else None)
        if keep_from is None:
            return old
        dropped = old[1:keep_from]
        text = "\n".join(f"{m.role}: {_plain(m)}" for m in dropped)
        request = Request(model=s.request_base.model, system=SUMMARY_ASK,
                          messages=(Message.user(text),), max_tokens=s.request_base.max_tokens)
        reply = await self.model.complete(request)
        s.usage = s.usage + reply.usage
        summary = SUMMARY.format(count=len(dropped), text=reply.text.strip())
        return [_with_note(old[0], summary), *old[keep_from:]]

    def _adopt(self, s: RunState, old: list[Message], new: list[Message], how: str, why: str,
               before: int, ratio: float) -> bool:
        if new == old:
            return False
        problem = unpaired(new)
        if problem is not None:
            s.notes.append(f"turn {s.turns}: compaction ({how}) was not used: it would break "
                           f"the transcript ({problem})")
            return False
        after = round(self._size(s, new) * ratio)
        s.messages[:] = new
        s.last_usage = None
        s.notes.append(f"turn {s.turns}: the context was compacted ({how}), about {before} to "
                       f"{after} tokens: {why}")
        s.emit(Compacted(how=how, why=why, before=before, after=after,
                         messages=tuple(new)))
        return True


def unpaired(messages: Sequence[Message]) -> str | None:
    """What breaks the pairing of calls and results in ``messages`` (a call without its one
    result in the next message, a result without its call), or None."""
    waiting: list[str] = []
    for i, message in enumerate(messages):
        results = [p.call_id for p in message.parts if type(p) is ToolResultPart]
        if waiting and sorted(results) != sorted(waiting):
            return f"message {i} does not answer the calls {waiting} of the message before it"
        if results and not waiting:
            return f"message {i} holds results of calls no message before it made"
        waiting = [c.id for c in message.tool_calls] if message.role == "assistant" else []
    return None


def _plain(message: Message) -> str:
    """A message as plain text for a summary request."""
    said = []
    for part in message.parts:
        if isinstance(part, TextPart):
            said.append(part.text)
        elif isinstance(part, ToolResultPart):
            said.append(f"(result of {part.call_id}) {part.content[:2000]}")
        elif isinstance(part, ToolCallPart):
            said.append(f"(call {part.name} {part.arguments_text[:500]})")
    return " ".join(said)


__all__ = [
    "CLEARED", "Compaction", "Compactor", "Keeper", "cache_setting", "clear_results",
    "compaction_setting", "drop_turns", "unpaired",
]
