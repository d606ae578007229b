"""The Gemini generateContent (``gemini-generate``) wire, in the same modules as every wire.

The wire's registry record, ``RECORD``, and what it names or the folder alone uses: its
recognisers, how it asks for reasoning, its tool-name pattern, what Gemini refuses of the media
in a raw body, and which models take media inside a function response. The folder's other
modules are the ones every wire has (`toolwire.codecs.record` lists them); this one imports
only what codecs share.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.detect import Kind, squeezed
from toolwire.codecs.google_shared import NAME_PATTERN
from toolwire.codecs.media import MB, dict_or_empty, list_or_empty
from toolwire.codecs.model_rules import RULES, refusal
from toolwire.codecs.prompt_rules import CacheRules, Counting, ExplicitCache
from toolwire.codecs.reasoning import BUDGETS, Carrier, Triple, as_bytes_field, from_bytes_field
from toolwire.codecs.record import Wire, WireRules

NAME = "gemini-generate"


def recognise_body(body: Mapping[str, Any]) -> Kind | None:
    if "contents" in body:
        return "request"
    if "candidates" in body or "promptFeedback" in body:
        return "response"
    return None


def recognise_stream(head: str, text: str) -> bool:
    # An object that opens with "candidates" (not merely a tool of that name in another wire).
    return '{"candidates":' in squeezed(head)


def reasoning(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    config = body.setdefault("generationConfig", {})
    given = config.get("thinkingConfig")
    config["thinkingConfig"] = {**(given if isinstance(given, dict) else {}),
                                "thinkingBudget": 0 if level == "off" else BUDGETS[level]}


RESULT_PARTS_MODELS: tuple[str, ...] = next(
    row.models for row in RULES if row.code == "result_parts")
"""Model-name patterns (fnmatch, matched without a ``models/``-style prefix) of the Gemini
families that take media inside ``functionResponse.parts``, from the per-model rules
(`toolwire.codecs.model_rules`); older families answer 400 to them (the gemini-generate codec's
``_result_parts`` setting beats the table)."""


def takes_result_parts(model: str) -> bool:
    """Whether Gemini ``model`` takes media inside a function response, by the table."""
    base = model.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(base, pattern) for pattern in RESULT_PARTS_MODELS)


def media_problem(body: dict[str, Any]) -> str | None:
    """What Gemini refuses of the media in ``body``, which may carry the model the URL named
    under ``model``."""
    model = body.get("model")
    inline = 0
    for content in list_or_empty(body.get("contents")):
        for part in list_or_empty(dict_or_empty(content).get("parts")):
            part = dict_or_empty(part)
            response = dict_or_empty(part.get("functionResponse"))
            inner = list_or_empty(response.get("parts"))
            if inner and isinstance(model, str) and model and not takes_result_parts(model):
                return refusal("result_parts", "gemini-generate", model)
            for blob in [part, *map(dict_or_empty, inner)]:
                data = dict_or_empty(blob.get("inlineData")).get("data")
                inline += len(data) if isinstance(data, str) else 0
    if inline > 20 * MB:
        return f"Request payload size exceeds the limit: {20 * MB} bytes."
    return None


def carried(text: str, sealed: str) -> dict[str, Any]:
    """A thought part holding ``sealed`` as its ``thoughtSignature`` (bytes, so in base64)."""
    return {"thought": True, "text": text, "thoughtSignature": as_bytes_field(sealed)}


def carried_in(block: Any) -> str | None:
    """What the ``thoughtSignature`` of a thought part `carried` made holds."""
    return from_bytes_field(block.get("thoughtSignature")) if isinstance(block, Mapping) else None


RECORD = Wire(
    usual_pass=True,  # the codec's encode_usual
    closed_body=True,  # its SDK sends only the fields its types know
    name=NAME,
    module="toolwire.codecs.gemini_generate.codec",
    path="/v1beta/models/{model}:generateContent",
    stream_path="/v1beta/models/{model}:streamGenerateContent",
    rules=WireRules(
        results_by="position",
        name_pattern=NAME_PATTERN,
        name_wording="a letter or '_' first, then letters, digits, '_', '.', ':' or '-', "
                     "at most 128 characters",
        call_after_user=True,
        one_result_per_call=True,
    ),
    detect=recognise_body,
    detect_stream=recognise_stream,
    detect_rank=10,
    cache=CacheRules(kind="prefix", sections=("tools", "systemInstruction", "contents")),
    context_error="The input token count ({tokens}) exceeds the maximum number of tokens "
                  "allowed ({limit}).",
    count=Counting(path="/v1beta/models/{model}:countTokens", field="totalTokens",
                   wrap="generateContentRequest", keys=frozenset({
                       "contents", "systemInstruction", "tools", "toolConfig",
                       "generationConfig"})),
    explicit_cache=ExplicitCache(collection="cachedContents", field="cachedContent",
                                 fixed=("systemInstruction", "tools", "toolConfig"),
                                 items="contents"),
    reasoning=reasoning,
    media_tokens="tiles-768",  # Gemini bills an image by 768-pixel tiles, a PDF page as one
    carrier=Carrier(wrap=carried, unwrap=carried_in),
    # Gemini's thinking models refuse calls of their own turns that come back without the
    # thought signature they kept on them; this is the placeholder Google documents for them
    unsigned_calls={"_fill_signature": "skip_thought_signature_validator"},
    client_headers=("x-goog-api-key",),
    live_writer="toolwire.proxy.writers:GeminiWriter",
)
"""The wire's registry record."""

__all__ = [
    "NAME",
    "NAME_PATTERN",
    "RECORD",
    "RESULT_PARTS_MODELS",
    "carried",
    "carried_in",
    "media_problem",
    "reasoning",
    "recognise_body",
    "recognise_stream",
    "takes_result_parts",
]
