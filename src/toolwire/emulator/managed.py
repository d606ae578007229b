"""What the emulator's provider does with a request that asks it to manage the context itself.

Owns `manage` and `Managed`. For a request carrying a `toolwire.transcript.ContextManagement`
(decoded from the wire's own field by its codec): the provider reads nothing before the
latest ``compaction`` part; once the prompt reaches the trigger (the provider's default,
`DEFAULT_TRIGGER`, when the request names none) it clears all but the latest tool results when
asked to (as `toolwire.agent.compaction.clear_results` does), and when compaction is asked and
the prompt still reaches the trigger, the reply starts with the wire's compaction part (made by
the codec's ``compaction_part``). The body it reads is the request re-encoded by the wire's
codec, so billing and the window see what the provider would. Must not import a codec module
directly nor compare wire names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from toolwire.agent.compaction import clear_results
from toolwire.codecs import Codec
from toolwire.transcript import Message, OpaquePart, Part, Reply, Request, replace

DEFAULT_TRIGGER = 150_000
"""The prompt size, in tokens, at which a provider acts when the request names none."""


@dataclass(frozen=True, slots=True)
class Managed:
    """What the provider made of a request: the body it reads (None: the request's own), the
    compaction part its reply starts with (None: it did not compact), and how many tool results
    it cleared."""

    body: dict[str, Any] | None = None
    compaction: Part | None = None
    cleared: int = 0

    def reply(self, reply: Reply) -> Reply:
        """``reply`` as the provider sends it: after its compaction part, when it compacted."""
        if self.compaction is None:
            return reply
        message = replace(reply.message, parts=(self.compaction, *reply.message.parts))
        return replace(reply, message=message)


def _compacted_at(messages: list[Message]) -> int | None:
    return next((i for i in range(len(messages) - 1, -1, -1) if any(
        type(p) is OpaquePart and p.kind == "compaction" for p in messages[i].parts)), None)


def manage(request: Request, codec: Codec, tokens: Callable[[Mapping[str, Any]], int]) -> Managed:
    """What the provider does with ``request`` (see the module); ``tokens`` counts a body's
    prompt as billing does."""
    cm = request.context_management
    if cm is None:
        return Managed()
    messages = list(request.messages)
    at = _compacted_at(messages)
    if at is not None:
        messages = messages[at:]
    trigger = cm.trigger if cm.trigger is not None else DEFAULT_TRIGGER
    plain = replace(request, messages=tuple(messages), context_management=None)
    body = codec.encode(plain).body
    size, cleared = tokens(body), 0
    if cm.clear_tool_results and size >= trigger:
        messages, cleared = clear_results(messages, cm.keep if cm.keep is not None else 3)
        body = codec.encode(replace(plain, messages=tuple(messages))).body
        size = tokens(body)
    if cm.compact and size >= trigger:
        part = codec.compaction_part(
            f"[the provider's summary of the {len(messages)} messages before this]")
        return Managed(body, part, cleared)
    return Managed(body, None, cleared)


__all__ = ["DEFAULT_TRIGGER", "Managed", "manage"]
