"""The reasoning setting (`Request.reasoning`: ``low``, ``medium``, ``high`` or ``off``) as each
wire asks for it, put into a request body its wire's codec encoded.

Owns `REASONING_LEVELS`, `BUDGETS` and `put_reasoning`, which `toolwire.codecs.base.Codec`
calls after every wire's ``encode``. Anthropic Messages (and Claude on Bedrock Converse, in
``additionalModelRequestFields``): ``thinking`` with a token budget, ``max_tokens`` raised above
the budget when it is not, or ``thinking`` disabled; Chat Completions: ``reasoning_effort``
(``off``: ``none``); Responses: ``reasoning.effort`` (``off``: ``none``); Gemini:
``generationConfig.thinkingConfig.thinkingBudget`` (``off``: 0); Ollama: ``think`` (the level,
or false). Reasoning models refuse a sampling temperature (Anthropic's extended thinking and
OpenAI's reasoning models answer it with an error), so while reasoning is on a temperature is
left out, with a ``field_dropped`` note; ``off`` keeps it. A wire without a reasoning setting
leaves it out, with a note. Pure functions over JSON; imports nothing of the codecs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Triple = tuple[str, str, str]
"""A note as (kind, subject, detail), made a `toolwire.codecs.base.Note` by the codec."""

REASONING_LEVELS = ("low", "medium", "high", "off")
BUDGETS = {"low": 1024, "medium": 8192, "high": 24576}
"""Thinking tokens per level where a wire takes a budget (Anthropic's least is 1,024)."""
ANSWER_ROOM = 4096
"""Tokens left for the answer above a thinking budget when ``max_tokens`` is raised."""


def _thinking(body: dict[str, Any], level: str, notes: list[Triple], *, wire: str,
              holder: dict[str, Any], tokens: Callable[[], int | None],
              set_tokens: Callable[[int], None]) -> None:
    """Anthropic's ``thinking`` in ``holder``, with room for the answer above the budget."""
    if level == "off":
        holder["thinking"] = {"type": "disabled"}
        return
    budget = BUDGETS[level]
    holder["thinking"] = {"type": "enabled", "budget_tokens": budget}
    have = tokens()
    if have is None or have <= budget:
        set_tokens(budget + ANSWER_ROOM)
        notes.append(("max_tokens_raised", "max_tokens", (
            f"{wire}: thinking with a budget of {budget} tokens needs max_tokens above it; "
            f"{have if have is not None else 'none'} became {budget + ANSWER_ROOM}")))


def _anthropic(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    def put(n: int) -> None:
        body["max_tokens"] = n

    _thinking(body, level, notes, wire="anthropic-messages", holder=body,
              tokens=lambda: body.get("max_tokens"), set_tokens=put)


def _bedrock(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    config = body.setdefault("inferenceConfig", {})
    extra = body.setdefault("additionalModelRequestFields", {})

    def put(n: int) -> None:
        config["maxTokens"] = n

    _thinking(body, level, notes, wire="bedrock-converse", holder=extra,
              tokens=lambda: config.get("maxTokens"), set_tokens=put)
    notes.append(("reasoning_as_thinking", "reasoning", (
        "bedrock-converse: sent as Anthropic's thinking in additionalModelRequestFields, "
        "which Claude models read; other models on Bedrock take their own fields")))


def _effort(level: str) -> str:
    return "none" if level == "off" else level


def _chat(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    body["reasoning_effort"] = _effort(level)


def _responses(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    reasoning = body.get("reasoning")
    body["reasoning"] = {**(reasoning if isinstance(reasoning, dict) else {}),
                         "effort": _effort(level)}


def _gemini(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    config = body.setdefault("generationConfig", {})
    thinking = config.get("thinkingConfig")
    config["thinkingConfig"] = {**(thinking if isinstance(thinking, dict) else {}),
                                "thinkingBudget": 0 if level == "off" else BUDGETS[level]}


def _interactions(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    config = body.setdefault("generation_config", {})
    config["thinking_level"] = "minimal" if level == "off" else level
    if level == "off":
        notes.append(("reasoning_as_minimal", "reasoning", (
            "gemini-interactions: thinking cannot be turned off; the least, 'minimal', "
            "was asked for")))


def _ollama(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    body["think"] = False if level == "off" else level


_PUT: dict[str, Callable[[dict[str, Any], str, list[Triple]], None]] = {
    "anthropic-messages": _anthropic, "bedrock-converse": _bedrock, "openai-chat": _chat,
    "openai-responses": _responses, "gemini-generate": _gemini, "ollama-chat": _ollama,
    "gemini-interactions": _interactions,
}
"""How each wire asks for reasoning; a wire not here has no such setting."""


def takes_reasoning(wire: str) -> bool:
    """Whether ``wire`` has a reasoning setting."""
    return wire in _PUT


def put_reasoning(body: dict[str, Any], wire: str, level: str) -> list[Triple]:
    """Ask for reasoning ``level`` in ``body``, a request in ``wire`` (one that
    `takes_reasoning`); the notes to give, as (kind, subject, detail)."""
    notes: list[Triple] = []
    _PUT[wire](body, level, notes)
    return notes


__all__ = ["BUDGETS", "REASONING_LEVELS", "Triple", "put_reasoning", "takes_reasoning"]
