"""Message content as the GenAI conventions write it on spans, with secrets taken out.

Owns `InputMessages` (a run's histories, each message written once and the text of the
history so far kept for the next request), `input_messages`, `message_text`, `output_messages`,
`system_instructions`, `arguments_text` (each a JSON string for a span attribute: messages are
``{"role", "parts": [...]}`` with ``text``, ``reasoning``, ``tool_call`` and
``tool_call_response`` parts). Secrets are taken out by `toolwire.secrets.Redactor`, the same
function that cleans tool results and cassettes: the values of the process's environment
variables named like a key, token, secret or password, and text shaped like a provider's key or
token, each replaced by ``[redacted: NAME]``. Content reaches a span only through these
functions, and only when content capture is on. Imports only the transcript values, the JSON
writer and the redactor.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

from toolwire import _json
from toolwire.secrets import Redactor
from toolwire.transcript import (
    Message,
    ReasoningPart,
    Reply,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)


def _dumps(value: Any) -> str:
    return _json.dumps(value).decode("utf-8")


def _call(part: ToolCallPart) -> dict[str, Any]:
    arguments: Any = part.arguments if part.parse_error is None else part.raw_arguments
    return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": arguments}


def _parts(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            out.append({"type": "text", "content": part.text})
        elif isinstance(part, ReasoningPart):
            out.append({"type": "reasoning", "content": part.text})
        elif isinstance(part, ToolCallPart):
            out.append(_call(part))
        elif isinstance(part, ToolResultPart):
            out.append({"type": "tool_call_response", "id": part.call_id,
                        "response": part.content})
        else:  # a wire's own part: say what it is, not what it holds
            out.append({"type": type(part).__name__})
    return out


def _message(message: Message) -> dict[str, Any]:
    role = "tool" if any(isinstance(p, ToolResultPart) for p in message.parts) else message.role
    return {"role": role, "parts": _parts(message)}


Kept = dict[int, tuple[Message, str]]
"""Each message's text as a span shows it, by the message's identity (it is kept with it, so
the identity stays its own): a run's history is written once, however many spans show it."""


def message_text(message: Message, redact: Redactor, kept: Kept | None = None) -> str:
    """One message as JSON for ``gen_ai.input.messages``, secrets taken out; from ``kept``
    when it was written before."""
    if kept is not None:
        hit = kept.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
    text = redact(_dumps(_message(message)))
    if kept is not None:
        kept[id(message)] = (message, text)
    return text


def input_messages(messages: Iterable[Message], redact: Redactor,
                   kept: Kept | None = None) -> str:
    """The ``gen_ai.input.messages`` of a request (the system prompt is separate): its
    messages' texts (`message_text`, from ``kept`` where they were written before) as one
    JSON list."""
    return "[" + ",".join(message_text(m, redact, kept) for m in messages) + "]"


class InputMessages:
    """The ``gen_ai.input.messages`` of one run's requests, each the text `input_messages`
    gives, written at the cost of what is new in it.

    A run's next request holds the history of the one before and what came since. When the
    history so far is the very same message objects as last time (checked object by object,
    never by equality: an equal message may be written otherwise), only the new messages are
    written and added to the text kept, which leaves to the history's length only that check
    and the copy of the text, both in C; otherwise (a history compacted, resumed or cut) the
    text is joined again from the messages' texts (`message_text`)."""

    __slots__ = ("_kept", "_messages", "_redact", "_text")

    def __init__(self, redact: Redactor) -> None:
        self._redact = redact
        self._kept: Kept = {}
        self._messages: tuple[Message, ...] = ()
        self._text = "[]"

    def __call__(self, messages: Iterable[Message]) -> str:
        messages = messages if isinstance(messages, tuple) else tuple(messages)
        before, size = self._messages, len(self._messages)
        if size and len(messages) >= size and all(map(operator.is_, messages, before)):
            if len(messages) > size:  # the text so far, its closing bracket left out
                self._text = "".join((self._text[:-1], ",", self._texts(messages[size:]), "]"))
        else:
            self._text = "[" + self._texts(messages) + "]"
        self._messages = messages
        return self._text

    def _texts(self, messages: tuple[Message, ...]) -> str:
        return ",".join([message_text(m, self._redact, self._kept) for m in messages])


def output_messages(reply: Reply, finish_reason: str, redact: Redactor) -> str:
    """The ``gen_ai.output.messages`` of a reply."""
    message = {"role": "assistant", "parts": _parts(reply.message),
               "finish_reason": finish_reason}
    return redact(_dumps([message]))


def system_instructions(system: str, redact: Redactor) -> str:
    """The ``gen_ai.system_instructions`` of a request."""
    return redact(_dumps([{"type": "text", "content": system}]))


def arguments_text(call: ToolCallPart, redact: Redactor) -> str:
    """A call's arguments as JSON text (the raw text when it did not parse)."""
    if call.parse_error is not None:
        return redact(call.raw_arguments or "")
    return redact(_dumps(call.arguments if call.arguments is not None else {}))


__all__ = ["InputMessages", "Kept", "Redactor", "arguments_text", "input_messages",
           "message_text", "output_messages", "system_instructions"]
