"""The OpenAI Responses (``openai-responses``) wire, in the same modules as every wire.

The wire's registry record, ``RECORD``, and what it names (its recognisers, how it asks for
reasoning, its patterns); the folder's other modules are the ones every wire has
(`toolwire.codecs.record` lists them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.detect import Kind, squeezed
from toolwire.codecs.prompt_rules import CacheRules, Counting
from toolwire.codecs.reasoning import Triple, effort
from toolwire.codecs.record import Wire

NAME = "openai-responses"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def recognise_body(body: Mapping[str, Any]) -> Kind | None:
    if body.get("object") == "response" or ("output" in body and "status" in body):
        return "response"
    if "input" in body or "instructions" in body:
        return "request"
    return None


def recognise_stream(head: str, text: str) -> bool:
    return "event: response." in head or '"type":"response.' in squeezed(head)


def reasoning(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    given = body.get("reasoning")
    body["reasoning"] = {**(given if isinstance(given, dict) else {}), "effort": effort(level)}


RECORD = Wire(
    name=NAME,
    module="toolwire.codecs.openai_responses.codec",
    path="/v1/responses",
    detect=recognise_body,
    detect_stream=recognise_stream,
    detect_rank=20,
    cache=CacheRules(kind="prefix", sections=("tools", "instructions", "input"), step=128,
                     key_field="prompt_cache_key"),
    context_error="Your input exceeds the context window of this model ({tokens} tokens > "
                  "{limit}). Please adjust your input and try again.",
    count=Counting(path="/v1/responses/input_tokens", keys=frozenset({
        "model", "input", "instructions", "tools", "tool_choice", "text", "reasoning",
        "truncation", "parallel_tool_calls"})),
    reasoning=reasoning,
    media_tokens="tiles-512",
    context_management=True,  # its compaction entry; ``compaction`` items go back as they came
    native_tool_search=True,  # ``tool_search_call`` and ``tool_search_output`` go back too
)
"""The wire's registry record."""

__all__ = ["NAME", "NAME_PATTERN", "RECORD", "reasoning", "recognise_body", "recognise_stream"]
