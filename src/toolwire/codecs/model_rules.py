"""Rules that depend on the model, not only on the wire: one table, read by the codecs (what
they send), the emulator (what it refuses, in the provider's words) and the prices.

Owns `ModelRule`, `RULES` and the look-ups `find`, `applies`, `refusal` and `bare_model`. A row
names the rule (``code``, also the key of its setting), the wire it is about (``"*"``: any),
the models it covers (fnmatch patterns, matched case-insensitively against the model name
without a ``vendor/`` or ``models/`` prefix), what it is, where it is written (``source``) and,
for a rule the provider refuses, the provider's 400 text. A rule that only users report
(``documented=False``) is also a setting: ``provider_options={wire: {"_rules": {code: bool}}}``
turns it on or off for any model, whatever the table says. ``docs/wires.md`` shows the table;
a test keeps the two the same. Records only: imports nothing of toolwire.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SETTING = "_rules"
"""The provider-option key whose mapping turns rules on or off by code."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRule:
    """One per-model rule: see the module's description."""

    code: str
    wire: str
    models: tuple[str, ...]
    rule: str
    source: str
    documented: bool = True
    refusal: str = ""
    """The provider's 400 message for a body breaking the rule (``{model}``, ``{index}`` and
    ``{found}`` filled in), or empty when the rule is not a refusal."""


DEEPSEEK_GUIDE = "https://api-docs.deepseek.com/guides/thinking_mode"

RULES: tuple[ModelRule, ...] = (
    ModelRule(
        code="effort_with_tools", wire="openai-chat", models=("gpt-5.2*", "gpt-5.4*"),
        rule="Chat Completions refuses function tools together with a reasoning_effort other "
             "than 'none'; sending no effort is accepted (the default is none). With tools, "
             "an asked effort is refused before sending (use the openai-responses wire, or "
             "reasoning off); the setting responses_for_reasoning moves the model's openai: "
             "id to the Responses wire",
        source="reported: github.com/openai/openai-openapi/issues/541, "
               "github.com/pipecat-ai/pipecat/issues/4043",
        documented=False,
        refusal="Function tools with reasoning_effort are not supported for {model} in "
                "/v1/chat/completions. Please use /v1/responses instead."),
    ModelRule(
        code="effort_with_tools_by_default", wire="openai-chat",
        models=("gpt-5.6*", "gpt-6*"),
        rule="as above, and sending no effort is refused too (the model applies a default "
             "effort): with tools and no effort asked, reasoning_effort 'none' is sent, with "
             "a note",
        source="reported: github.com/GoogleChromeLabs/webmcp-tools/issues/417, "
               "github.com/sandialabs/atlas-ui-3/issues/756",
        documented=False,
        refusal="Function tools with reasoning_effort are not supported for {model} in "
                "/v1/chat/completions. To use function tools, use /v1/responses or set "
                "reasoning_effort to 'none'."),
    ModelRule(
        code="reasoning_passback", wire="openai-chat",
        models=("deepseek-reasoner", "deepseek-v3.2*"),
        rule="in thinking mode, every assistant message of a turn with tool calls carries "
             "reasoning_content (its reasoning, or an empty string when there is none)",
        source=f"docs: {DEEPSEEK_GUIDE}#tool-calls",
        refusal="Missing `reasoning_content` field in the assistant message at message index "
                "{index}. For more information, please refer to "
                f"{DEEPSEEK_GUIDE}#tool-calls"),
    ModelRule(
        code="reasoning_passback", wire="openai-chat", models=("deepseek-v4*",),
        rule="the same rule, worded as the V4 models word it",
        source=f"docs: {DEEPSEEK_GUIDE}#tool-calls",
        refusal="The `reasoning_content` in the thinking mode must be passed back to the API."),
    ModelRule(
        code="reasoning_refused", wire="openai-chat", models=("deepseek-r1*",),
        rule="reasoning_content in an input message is refused: it is left out, with a note",
        source="docs: api-docs.deepseek.com/guides/reasoning_model (the R1 reasoner's guide)",
        refusal="The reasoning_content is an intermediate result for display purposes only and "
                "will not be included in the context for inference. Please remove the "
                "reasoning_content from your message to reduce network traffic."),
    ModelRule(
        code="call_ids", wire="gemini-generate", models=("gemini-3*",),
        rule="functionCall.id and functionResponse.id round-trip: every response carries the "
             "id its call came with (also when the response was read without one)",
        source="docs: ai.google.dev/api/caching#FunctionResponse (id: the id of the call it "
               "answers); the refusal's words are reported: "
               "github.com/router-for-me/CLIProxyAPI/issues/5199",
        refusal="functionResponse.id does not match functionCall.id"),
    ModelRule(
        code="result_parts", wire="gemini-generate", models=("gemini-3*",),
        rule="media inside functionResponse.parts; other models get them after the responses",
        source="docs: ai.google.dev/gemini-api/docs/function-calling (multimodal function "
               "responses)",
        refusal="Unable to submit request because `function_response.parts` is not supported "
                "for this model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/"
                "docs/multimodal/function-calling"),
    ModelRule(
        code="system_messages", wire="anthropic-messages",
        models=("claude-opus-4-8*", "claude-opus-5*", "claude-sonnet-5*", "claude-haiku-5-5*",
                "claude-fable-5*", "claude-mythos-5*"),
        rule="role: system messages inside messages: each right after a user message (or an "
             "assistant message ending in server tool use) and followed by an assistant "
             "message or nothing; other models refuse the role",
        source="docs: platform.claude.com/docs/en/build-with-claude/"
               "mid-conversation-system-messages (from Claude Opus 4.8 on, not on Bedrock or "
               "Vertex AI); the later models that take them: langchainjs @langchain/anthropic "
               "1.5.13's model profiles (Opus 5 and 5.5, Sonnet 5 and 5.5, Haiku 5.5, Fable "
               "5 and 5.1, Mythos 5 and 5.1), and Claude Code 2.1.332, which sends one to "
               "claude-opus-5-5; SDK: anthropic 2.15.0 types (SystemMessageParam in "
               "MessageParam)",
        refusal="messages.{index}: a system message must follow a user message and be the last "
                "message or be followed by an assistant message"),
    ModelRule(
        code="four_breakpoints", wire="anthropic-messages", models=("*",),
        rule="at most 4 cache_control markers in a request, counting automatic caching's, "
             "the caller's own and converted ones; beyond 4 the latest ones stay (the longest "
             "prefix) and each dropped one gets a note",
        source="docs: docs.claude.com/en/docs/build-with-claude/prompt-caching",
        refusal="A maximum of 4 blocks with cache_control may be provided. Found {found}."),
    ModelRule(
        code="explicit_breakpoints", wire="*", models=("gpt-5.6*", "gpt-6*"),
        rule="OpenAI's explicit cache breakpoints: prompt_cache_breakpoint on content blocks "
             "(at most 4 written per request) and prompt_cache_options; automatic caching "
             "marks these models' prompts so, and prompt_cache_retention (deprecated for "
             "them) is not sent alongside",
        source="SDK: openai 3.57.0 types (chat.completion_create_params.PromptCacheOptions, "
               "ChatCompletionContentPartTextParam.prompt_cache_breakpoint, "
               "responses ResponseInputTextParam.prompt_cache_breakpoint); the refusal is "
               "the API's usual wording for a parameter a model does not take",
        refusal="Unsupported parameter: '{found}' is not supported with this model."),
    ModelRule(
        code="cache_write_price", wire="*", models=("*claude*",),
        rule="cache writes cost 1.25 times the input price (5-minute entries) and 2 times "
             "(1-hour entries); reads 0.1 times. Used where genai-prices has no such price",
        source="docs: docs.claude.com/en/docs/about-claude/pricing"),
    ModelRule(
        code="input_excludes_cache", wire="*", models=("*",),
        rule="Anthropic's input_tokens and Bedrock's inputTokens leave out cache reads and "
             "writes (toolwire adds them); OpenAI's, Gemini's and DeepSeek's prompt counts "
             "hold them. Usage.input_tokens always holds them",
        source="docs: docs.claude.com/en/docs/build-with-claude/prompt-caching (tracking "
               "cache performance); docs.aws.amazon.com/bedrock (TokenUsage)"),
)

EFFORT_RULES = ("effort_with_tools", "effort_with_tools_by_default")
"""The rules of GPT-5 models refusing to reason with tools on Chat Completions; the setting
``responses_for_reasoning`` (given to `toolwire.model`) moves such a model's ``openai:`` id
to the Responses wire."""

CACHE_WRITE_MULTIPLIER = {"short": 1.25, "long": 2.0}
"""``cache_write_price``: what a cache write costs, times the input price, by lifetime."""


def bare_model(model: str | None) -> str:
    """The model's own name: lowercased, without a ``vendor/`` or ``models/`` prefix."""
    return (model or "").rsplit("/", 1)[-1].lower()


def _matches(row: ModelRule, wire: str, name: str) -> bool:
    return (row.wire in ("*", wire)
            and any(fnmatch.fnmatchcase(name, pattern) for pattern in row.models))


@functools.lru_cache(maxsize=1024)
def find(code: str, wire: str, model: str | None) -> ModelRule | None:
    """The row of rule ``code`` covering ``model`` on ``wire``, or None (remembered per
    model: the table is fixed, and a request asks the same few rules for the same model)."""
    name = bare_model(model)
    return next((row for row in RULES if row.code == code and _matches(row, wire, name)), None)


@functools.lru_cache(maxsize=1024)
def covers(codes: tuple[str, ...], wire: str, model: str | None) -> bool:
    """Whether a row of one of the rules ``codes`` covers ``model`` on ``wire`` (remembered
    per model, as `find` is)."""
    return any(find(code, wire, model) is not None for code in codes)


def setting(code: str, options: Mapping[str, Any] | None) -> bool | None:
    """What the ``_rules`` setting in a wire's provider ``options`` says of rule ``code``."""
    if options is None:
        return None  # the usual request: no setting
    given = options.get(SETTING) if isinstance(options, Mapping) else None
    value = given.get(code) if isinstance(given, Mapping) else None
    return value if isinstance(value, bool) else None


def applies(code: str, wire: str, model: str | None,
            options: Mapping[str, Any] | None = None) -> bool:
    """Whether rule ``code`` holds for ``model`` on ``wire``: the setting when it says, else
    the table."""
    said = setting(code, options)
    return said if said is not None else find(code, wire, model) is not None


def refusal(code: str, wire: str, model: str | None, **values: Any) -> str:
    """The provider's words refusing a body that breaks rule ``code`` (the first row of that
    code when none covers the model)."""
    row = find(code, wire, model) or next(r for r in RULES if r.code == code)
    return row.refusal.format(model=model or "", **values)


def table_markdown() -> str:
    """The table as docs/wires.md shows it."""
    lines = ["| rule | wire | models | what happens | source |", "| --- | --- | --- | --- | --- |"]
    for row in RULES:
        models = ", ".join(f"`{m}`" for m in row.models)
        where = "any" if row.wire == "*" else f"`{row.wire}`"
        source = row.source if row.documented else f"{row.source} (a setting)"
        lines.append(f"| `{row.code}` | {where} | {models} | {row.rule} | {source} |")
    return "\n".join(lines)


__all__ = [
    "CACHE_WRITE_MULTIPLIER", "EFFORT_RULES", "RULES", "SETTING", "ModelRule", "applies",
    "bare_model", "covers", "find", "refusal", "setting", "table_markdown",
]
