"""The ``ask_user`` tool: the model asks the person running it a question.

Owns `ask_user` (builds the tool) and `Answerer`. The answer comes from a callback given when
the tool is made (a terminal prompt, a web form, a test's canned answer); made without one, the
tool answers every question with an error result saying no user is available, so a
non-interactive run goes on without hanging. Must not import codecs, the transport or the loop.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias

from toolwire.errors import ToolError
from toolwire.schema.tool import Tool

Answerer: TypeAlias = Callable[[str, Sequence[str] | None], "str | Awaitable[str]"]
"""Gets the question and the offered choices (or None) and returns the user's answer.

A plain function runs in a worker thread (so ``input()`` does not block other tool calls);
an async function runs on the event loop. Raise `toolwire.errors.ToolError` to send the model
a message instead of an answer (for example when the user declines to answer)."""

NO_USER = (
    "No user is available to answer questions in this run. Go on with your best judgement "
    "and say what you assumed."
)

SCHEMA = {
    "type": "object",
    "properties": {
        "question": {
            "type": "string",
            "description": "The question, written so the user can answer it without context.",
        },
        "choices": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Answers to offer, if the question has a few likely ones. "
            "The user may still answer something else.",
        },
    },
    "required": ["question"],
}


def ask_user(
    answer: Answerer | None = None, *, name: str = "ask_user", timeout: float | None = 3600.0
) -> Tool:
    """A tool that asks the user ``question`` (with optional ``choices``) and returns the answer.

    ``answer=None`` makes a non-interactive tool: every call gets an error result saying no user
    is available. ``timeout`` is how long a user may take to answer (seconds).
    """

    async def ask(question: str, choices: list[str] | None = None) -> str:
        if answer is None:
            raise ToolError(NO_USER)
        offered = tuple(choices) if choices else None
        if inspect.iscoroutinefunction(answer):
            given = await answer(question, offered)
        else:
            given = await asyncio.to_thread(answer, question, offered)
            if inspect.isawaitable(given):
                given = await given
        return str(given)

    return Tool(
        name=name,
        description="Ask the user a question and wait for the answer. Use it only when you "
        "cannot go on without their decision or information only they have.",
        input_schema=SCHEMA,
        fn=ask,
        timeout=timeout,
    )


__all__ = ["NO_USER", "Answerer", "ask_user"]
