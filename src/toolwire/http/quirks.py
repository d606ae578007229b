"""What servers speaking the Responses wire (``/v1/responses``) refuse, and what toolwire does
instead: Ollama, LM Studio, vLLM, llama.cpp, OpenRouter and Amazon Bedrock's Mantle.

Owns `Quirk` (one gap of a server: its code, what the server refuses in its own words, what
toolwire does instead, where it is written and whether the server's documentation says so),
`QUIRKS` (the table, shown in ``docs/servers.md``), `active` (a provider record's quirks with
the user's settings applied), `fit` (a request body made fit for them, before it is sent),
`refusal` (the first quirk a raw body breaks, worded as the server words it: what the emulator
answers when it plays the server), `codec_settings` (the codec settings a quirk asks for:
``single_input`` continues stored responses, which the codec does since it holds the
history) and `unique_ids` / `reused_ids` (call ids a server restarts with each response made
unique in the transcript, and the ids such a server sends).

Every quirk is also a setting, as the per-model rules are: ``options={"_rules": {code:
bool}}`` given to `toolwire.model` turns it on or off for that model, whatever the provider
record says (for the ones only users report, ``documented=False``, a server may have fixed
them). Pure functions over JSON and the
transcript's values: must not import a codec module, the transport or anything that does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from toolwire.codecs.model_rules import SETTING
from toolwire.schema.names import unique_within
from toolwire.transcript import Reply, Request, ToolCallPart, replace


@dataclass(frozen=True, kw_only=True, slots=True)
class Quirk:
    """One gap of a Responses-compatible server: see the module's description."""

    code: str
    servers: str
    refused: str
    instead: str
    sources: tuple[str, ...]
    documented: bool = True
    words: str = ""
    """The server's words refusing a body that breaks it (empty: it does not refuse, it
    ignores what it cannot do)."""


MAX_CALL_ID = 64
"""The longest call id Bedrock's Mantle takes."""

_ITEMS = frozenset({"message", "function_call", "function_call_output", "reasoning"})

QUIRKS: dict[str, Quirk] = {q.code: q for q in (
    Quirk(code="stateless", servers="Ollama, OpenRouter; vLLM (reported)",
          refused="`previous_response_id`, `conversation`: the server keeps no responses "
                  "(vLLM keeps them but drops the calls and results from what it kept)",
          instead="sends the whole conversation in `input` every time with `store: false`, "
                  "and never a `previous_response_id` or `conversation`",
          sources=("https://docs.ollama.com/api/openai-compatibility",
                   "https://openrouter.ai/docs/api/reference/responses/overview",
                   "https://github.com/vllm-project/vllm/issues/43244"),
          words="previous_response_id is not supported: this server keeps no responses; "
                "send the whole conversation in input"),
    Quirk(code="function_tools_only", servers="Ollama, LM Studio; llama.cpp (reported)",
          refused="tools of any type but `function` (web search, custom and freeform tools, "
                  "tool search)",
          instead="leaves those tools out (and a `tool_choice` naming one)",
          sources=("https://github.com/ggml-org/llama.cpp/issues/22389",
                   "https://github.com/ggml-org/llama.cpp/issues/23465",
                   "https://docs.ollama.com/api/openai-compatibility",
                   "https://lmstudio.ai/blog/lmstudio-v0.3.29"),
          words="'type' of tool must be 'function'"),
    Quirk(code="plain_items", servers="Ollama",
          refused="input items other than messages, function calls, their outputs and "
                  "reasoning (tool search calls, compaction items, added tools)",
          instead="leaves those items out",
          sources=("https://github.com/ollama/ollama/blob/main/openai/responses.go",),
          words="unknown input item type: {found!r}"),
    Quirk(code="typed_items", servers="Ollama, LM Studio, vLLM, llama.cpp, OpenRouter",
          refused="nothing known yet, but they follow the Open Responses specification, where "
                  "every input item names its `type`; OpenAI's own API takes a message "
                  "without one",
          instead="writes `type: \"message\"` on every message item",
          sources=("https://github.com/openresponses/openresponses",
                   "https://openrouter.ai/docs/api/reference/responses/overview")),
    Quirk(code="no_tool_choice", servers="Ollama",
          refused="`tool_choice`: read as if it were not there, so a forced call is not forced "
                  "and `none` does not stop calls",
          instead="leaves `tool_choice` out; for `none` it leaves the tools out too",
          sources=("https://github.com/ollama/ollama/blob/main/openai/responses.go",)),
    Quirk(code="text_tool_output", servers="llama.cpp", documented=False,
          refused="a `function_call_output` whose `output` holds anything but text parts",
          instead="sends the output as one string: the text parts joined, each other part "
                  "named in brackets",
          sources=("https://github.com/ggml-org/llama.cpp/issues/23465",
                   "https://github.com/ggml-org/llama.cpp/issues/23542"),
          words="Output of tool call should be 'Input text'"),
    Quirk(code="no_reasoning_items", servers="older vLLM (reported); no record has it",
          documented=False,
          refused="reasoning items in `input`: vLLM did not read them until a 2025 change, "
                  "and with some reasoning parsers it sends none back",
          instead="leaves reasoning items out of `input` (the setting turns it on)",
          sources=("https://github.com/vllm-project/vllm/pull/28248",
                   "https://github.com/vllm-project/vllm/issues/43395")),
    Quirk(code="no_token_count", servers="Ollama, LM Studio, vLLM, llama.cpp, OpenRouter",
          refused="`POST /v1/responses/input_tokens`: none of them lists the Responses API's "
                  "token counting among what it serves",
          instead="counts a prompt with the local estimate instead of asking the server",
          sources=("https://docs.ollama.com/api/openai-compatibility",
                   "https://lmstudio.ai/blog/lmstudio-v0.3.29",
                   "https://openrouter.ai/docs/api/reference/responses/overview")),
    Quirk(code="reused_call_ids", servers="Bedrock Mantle", documented=False,
          refused="nothing, but it numbers the calls of each response from `call_0` again, so "
                  "ids repeat across a conversation; it refuses a `call_id` over 64 characters",
          instead="renames a call whose id the conversation already holds (`call_0_2`, at "
                  "most 64 characters), so every result pairs with its own call",
          sources=("https://github.com/BerriAI/litellm/pull/30426",
                   "https://github.com/pydantic/pydantic-ai/pull/6538",
                   "https://github.com/pydantic/pydantic-ai/pull/7962",
                   "https://github.com/zed-industries/zed/pull/60998"),
          words="Invalid 'call_id': string too long. Expected a string with maximum length "
                f"{MAX_CALL_ID}."),
    Quirk(code="single_input", servers="LM Studio 0.3.29 (reported); no record has it",
          documented=False,
          refused="an `input` of more than one item (400 Bad Request): a conversation goes on "
                  "only by `previous_response_id`, from the responses the server keeps",
          instead="sends `store: true` and, once the history holds a reply, the "
                  "`previous_response_id` of the last one with only the items after it as "
                  "`input` (the setting turns it on)",
          sources=("https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1064",
                   "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1188"),
          words="Invalid type for 'input'."),
)}
"""Every quirk by code, in the order the docs show them."""


def active(codes: Iterable[str], options: Mapping[str, Any] | None = None) -> frozenset[str]:
    """The quirks a model meets: its provider record's ``codes``, with the ``_rules`` setting
    of ``options`` turning quirks on or off."""
    found = set(codes)
    given = options.get(SETTING) if isinstance(options, Mapping) else None
    for code, value in (given.items() if isinstance(given, Mapping) else ()):
        quirk = QUIRKS.get(code)
        if quirk is not None and isinstance(value, bool):
            (found.add if value else found.discard)(code)
    return frozenset(found)


CONTINUE = "_continue"
"""The openai-responses codec's setting that continues the last stored response of the
history (``previous_response_id``, only the newer items as ``input``, ``store: true``); the
reply's id is then kept on its message for the next request."""


def codec_settings(quirks: frozenset[str]) -> dict[str, Any]:
    """The codec settings ``quirks`` ask for (`CONTINUE` for ``single_input``)."""
    return {CONTINUE: True} if "single_input" in quirks else {}


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _as_text(output: list[Any]) -> str:
    said = []
    for part in output:
        kind = part.get("type") if isinstance(part, dict) else None
        text = part.get("text") if isinstance(part, dict) else None
        said.append(text if kind in ("input_text", "output_text") and isinstance(text, str)
                    else f"[{kind or 'part'} left out]")
    return "\n".join(said)


def fit(body: dict[str, Any], quirks: frozenset[str]) -> dict[str, Any]:
    """``body`` (an encoded Responses request) as a server with ``quirks`` takes it, changed
    on a copy; unchanged when it has none of them."""
    if not quirks:
        return body
    out = dict(body)
    if "stateless" in quirks:
        out.pop("previous_response_id", None)
        out.pop("conversation", None)
        out["store"] = False
    if "single_input" in quirks:
        out["store"] = True
    if "function_tools_only" in quirks and "tools" in out:
        kept = [t for t in _dicts(out["tools"]) if t.get("type") == "function"]
        names = {t.get("name") for t in kept}
        choice = out.get("tool_choice")
        if isinstance(choice, dict) and choice.get("name") not in names:
            out.pop("tool_choice")
        out["tools"] = kept
    items = out.get("input")
    if isinstance(items, list) and quirks & {"plain_items", "text_tool_output", "typed_items",
                                             "no_reasoning_items"}:
        items = [dict(i) if isinstance(i, dict) else i for i in items]
        if "no_reasoning_items" in quirks:
            items = [i for i in items if not isinstance(i, dict) or i.get("type") != "reasoning"]
        if "plain_items" in quirks:
            items = [i for i in items if not isinstance(i, dict)
                     or i.get("type", "message") in _ITEMS]
        for item in items:
            if isinstance(item, dict) and "typed_items" in quirks and "type" not in item:
                item["type"] = "message"
            if (isinstance(item, dict) and "text_tool_output" in quirks
                    and item.get("type") == "function_call_output"
                    and isinstance(item.get("output"), list)):
                item["output"] = _as_text(item["output"])
        out["input"] = items
    if "no_tool_choice" in quirks and out.pop("tool_choice", None) == "none":
        out.pop("tools", None)
    if not out.get("tools"):
        out.pop("tools", None)
        out.pop("tool_choice", None)
    return out


def refusal(body: Mapping[str, Any], quirks: frozenset[str]) -> str | None:
    """The first of ``quirks`` a raw Responses body breaks, in the server's words, or None."""
    said = QUIRKS
    if "stateless" in quirks and (body.get("previous_response_id") or body.get("conversation")):
        return said["stateless"].words
    items = body.get("input")
    if "single_input" in quirks and isinstance(items, list) and len(items) > 1:
        return said["single_input"].words
    if "function_tools_only" in quirks and any(
            t.get("type") != "function" for t in _dicts(body.get("tools"))):
        return said["function_tools_only"].words
    for item in _dicts(body.get("input")):
        kind = item.get("type", "message")
        if "plain_items" in quirks and kind not in _ITEMS:
            return said["plain_items"].words.format(found=kind)
        output = item.get("output")
        if ("text_tool_output" in quirks and kind == "function_call_output"
                and isinstance(output, list) and any(
                    not isinstance(p, dict) or p.get("type") != "input_text" for p in output)):
            return said["text_tool_output"].words
        call_id = item.get("call_id")
        if ("reused_call_ids" in quirks and isinstance(call_id, str)
                and len(call_id) > MAX_CALL_ID):
            return said["reused_call_ids"].words
    return None


def unique_ids(reply: Reply, request: Request) -> Reply:
    """``reply`` with each call whose id the conversation (or the reply before it) already
    holds renamed, so that every result pairs with its own call; unchanged when none repeats."""
    taken = {p.id for m in request.messages for p in m.tool_calls}
    taken |= {p.call_id for m in request.messages for p in m.tool_results}
    parts: list[Any] = []
    changed = False
    for part in reply.message.parts:
        if isinstance(part, ToolCallPart):
            if part.id in taken:
                part = replace(part, id=unique_within(part.id, taken, MAX_CALL_ID))
                changed = True
            taken.add(part.id)
        parts.append(part)
    if not changed:
        return reply
    return replace(reply, message=replace(reply.message, parts=tuple(parts)))


def reused_ids(reply: Reply) -> Reply:
    """``reply`` as a server that numbers each response's calls from ``call_0`` sends it."""
    parts: list[Any] = []
    calls = 0
    for part in reply.message.parts:
        if isinstance(part, ToolCallPart):
            part, calls = replace(part, id=f"call_{calls}"), calls + 1
        parts.append(part)
    return replace(reply, message=replace(reply.message, parts=tuple(parts)))


def table_markdown() -> str:
    """The quirks as ``docs/servers.md`` shows them (a test keeps the two the same)."""
    rows = ["| setting | servers | what the server refuses or does | what toolwire does instead "
            "| written in |", "| --- | --- | --- | --- | --- |"]
    for q in QUIRKS.values():
        said = "the server's docs or code" if q.documented else "users' reports"
        links = ", ".join(f"[{n + 1}]({url})" for n, url in enumerate(q.sources))
        rows.append(f"| `{q.code}` | {q.servers} | {q.refused} | {q.instead} | {said}: "
                    f"{links} |")
    return "\n".join(rows) + "\n"


__all__ = ["CONTINUE", "MAX_CALL_ID", "QUIRKS", "Quirk", "active", "codec_settings", "fit",
           "refusal", "reused_ids", "table_markdown", "unique_ids"]
