"""The per-model rules (`toolwire.codecs.model_rules`) applied to an encoded body: what a model
accepts, sent in place of what it refuses.

Owns `fitted` (a wire's ``encode`` followed by its model's fixes: a wire's ``codec.py`` names
it, with its fixes, as ``FIT``, which `toolwire.codecs.base.Codec` applies after the reasoning
setting) and the fixes themselves:

- `effort_with_tools` (Chat Completions, GPT-5 models): with function tools, no effort asked
  sends ``reasoning_effort: "none"`` to the models that apply an effort by default (with a
  note); an effort asked is refused before sending, naming the two ways out.
- `reasoning_passback` (Chat Completions, DeepSeek thinking models): every assistant message
  of a turn with tool calls carries ``reasoning_content`` (its reasoning text, else empty);
  the models that refuse it get none (``reasoning_refused``).
- `system_messages` (Anthropic Messages): system messages before the conversation join the
  system prompt; later ones stay only where the model takes them, else they are the user's.
- `four_breakpoints` (Anthropic Messages): never more than four ``cache_control`` markers.

The ``_rules`` setting is taken out of the body. A request without system messages or anything
in the wire's own words (`toolwire.codecs.traits`) pays nearly nothing for the last two.
Imports `toolwire.codecs.base`, `toolwire.codecs.caching`, `toolwire.codecs.model_checks`,
`toolwire.codecs.traits` and the table; no wire module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolwire.codecs.base import Encoded, Note
from toolwire.codecs.caching import MAX_BREAKPOINTS, cap_markers
from toolwire.codecs.model_checks import function_tools, thinking_off, tool_turns
from toolwire.codecs.model_rules import EFFORT_RULES, SETTING, applies, covers
from toolwire.codecs.traits import encoding, known, traits
from toolwire.errors import ConfigError
from toolwire.transcript import Message, ReasoningPart, Request

Fix = Callable[[dict[str, Any], Request, list[Note]], None]
CHAT = "openai-chat"


def _options(request: Request, wire: str) -> Mapping[str, Any] | None:
    if request.provider_options is None:
        return None
    entry = request.provider_options.get(wire)
    return entry if entry is not None and isinstance(entry, Mapping) else None


def _rules_set(request: Request, wire: str) -> bool:
    """Whether ``request`` holds a ``_rules`` setting for ``wire``."""
    options = _options(request, wire)
    return options is not None and options.get(SETTING) is not None


def fitted(encode: Callable[[Request], Encoded], wire: str,
           fixes: Sequence[Fix]) -> Callable[[Request], Encoded]:
    """``encode``, then each of ``fixes`` on a copy of the body, its notes added. Fixes that
    ask what the request holds have it found at most once for the whole call
    (`toolwire.codecs.traits`): by the wire's encode, whose own walk over the usual request
    settles it, or by the one pass, made at the first check that asks. A fix that does
    something only under rules of the table (`RULED`) is not called for a model none of them
    covers, unless the request's ``_rules`` setting may turn one on."""
    whole = any(fix in _ASKING for fix in fixes)
    ruled = [(fix, RULED.get(fix)) for fix in fixes]

    def due(model: Any, request: Request | None) -> tuple[Fix, ...]:
        """The fixes to call for a body naming ``model`` (``request`` None: one without
        provider options, which turn no rule on)."""
        return tuple(fix for fix, rules in ruled
                     if rules is None or not isinstance(model, str)
                     or covers(rules[1], rules[0], model)
                     or (request is not None and _rules_set(request, rules[0])))

    due_by_model = functools.lru_cache(maxsize=256)(due)
    asking = all(fix in _ASKING for fix in fixes)

    @functools.wraps(encode)
    def encoded(request: Request) -> Encoded:
        out = encode(request)  # the wire's encode settles what the request holds, once
        if asking and (found := known(request)) is not None and not (
                found.system or found.verbatim):
            return out  # no fix has anything to do, and no ``_rules`` setting (an option)
        model = out.body.get("model")
        fixing = due_by_model(model, None) if type(model) is str \
            and request.provider_options is None else due(model, request)
        if not fixing and SETTING not in out.body:  # no rule of a fix's holds for the model
            return out
        body = dict(out.body)
        body.pop(SETTING, None)
        notes: list[Note] = []
        for fix in fixing:
            fix(body, request, notes)
        return Encoded(body=body, notes=(*out.notes, *notes), headers=out.headers)

    return encoding(encoded) if whole else encoded


# --------------------------------------------------------------------------- GPT-5 effort


def effort_with_tools(body: dict[str, Any], request: Request, notes: list[Note]) -> None:
    """GPT-5 models refusing function tools with a reasoning effort on Chat Completions."""
    model = body.get("model")
    if not isinstance(model, str):
        return
    options = _options(request, CHAT)  # the rules first: they are remembered per model
    by_default = applies("effort_with_tools_by_default", CHAT, model, options)
    if not by_default and not applies("effort_with_tools", CHAT, model, options):
        return
    if not function_tools(body):
        return
    effort = body.get("reasoning_effort")
    if effort is None:
        if by_default:
            body["reasoning_effort"] = "none"
            notes.append(Note(kind="reasoning_effort_set", subject="reasoning_effort", detail=(
                f"{model} applies a reasoning effort by default, which Chat Completions "
                "refuses with function tools; sent reasoning_effort 'none'")))
        return
    if effort != "none":
        raise ConfigError(
            f"{CHAT}: {model} refuses function tools with reasoning_effort {effort!r} on Chat "
            f"Completions; use the Responses wire (model id 'openai-responses:{model}') to "
            "reason with tools, or turn reasoning off (--reasoning off)")


# --------------------------------------------------------------------------- DeepSeek


def _reasoning_texts(messages: Sequence[Message]) -> list[str]:
    return ["".join(p.text for p in m.parts if isinstance(p, ReasoningPart))
            for m in messages if m.role == "assistant"]


def reasoning_passback(body: dict[str, Any], request: Request, notes: list[Note]) -> None:
    """DeepSeek's thinking mode and tool calls: reasoning_content passed back, or left out
    for the models that refuse it."""
    model, options = body.get("model"), _options(request, CHAT)
    messages = body.get("messages")
    if not isinstance(messages, list) or not isinstance(model, str):
        return
    if applies("reasoning_refused", CHAT, model, options):
        for i, message in enumerate(messages):
            if isinstance(message, Mapping) and "reasoning_content" in message:
                messages[i] = {k: v for k, v in message.items() if k != "reasoning_content"}
                notes.append(Note(kind="reasoning_dropped", subject=f"message {i}", detail=(
                    f"{model} refuses reasoning_content in its input; left out")))
        return
    if not applies("reasoning_passback", CHAT, model, options) or thinking_off(body):
        return
    assistants = [i for i, m in enumerate(messages)
                  if isinstance(m, Mapping) and m.get("role") == "assistant"]
    texts = _reasoning_texts(request.messages)
    text_of = dict(zip(assistants, texts, strict=False)) if len(texts) == len(assistants) else {}
    for i in tool_turns(messages):
        message = messages[i]
        if "reasoning_content" in message:
            continue
        text = message.get("reasoning") if isinstance(message.get("reasoning"), str) else (
            text_of.get(i, ""))
        messages[i] = {**message, "reasoning_content": text}
        notes.append(Note(kind="reasoning_passed_back", subject=f"message {i}", detail=(
            f"{model} in thinking mode wants reasoning_content on the assistant messages of "
            f"a turn with tool calls; sent {'its reasoning' if text else 'an empty one'}")))


# --------------------------------------------------------------------------- Anthropic


def four_breakpoints(body: dict[str, Any], request: Request, notes: list[Note]) -> None:
    """At most four cache_control markers, the latest kept. A body encoded from a request
    holding nothing in the wire's own words has none but those `place_breakpoints` put, which
    keeps within the cap itself: only the others are counted."""
    if traits(request).verbatim:
        notes.extend(cap_markers(body, MAX_BREAKPOINTS))


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _is_system(message: Any) -> bool:
    return (type(message) is dict or isinstance(message, Mapping)) and (
        message.get("role") == "system")


def system_messages(body: dict[str, Any], request: Request, notes: list[Note]) -> None:
    """System messages where the model takes them: those before the conversation join the
    system prompt; the others stay where the model takes them (``system_messages``) and are
    otherwise sent as the user's words, joined to a user turn next to them."""
    found = traits(request)  # a system message comes from the request or its own words
    messages = body.get("messages")
    if not (found.system or found.verbatim) or not isinstance(messages, list):
        return
    for message in messages:
        if _is_system(message):
            break
    else:
        return  # the usual body: nothing to move
    model = body.get("model") if isinstance(body.get("model"), str) else None
    takes = applies("system_messages", "anthropic-messages", model,
                    _options(request, "anthropic-messages"))
    out: list[Any] = []
    for i, message in enumerate(messages):
        if not _is_system(message):
            out.append(message)
            continue
        content = message.get("content") or []
        after = messages[i + 1].get("role") if i + 1 < len(messages) else "assistant"
        if not out:
            system = body.get("system")
            texts = [b.get("text", "") for b in _blocks(content) if isinstance(b, Mapping)]
            body["system"] = "\n\n".join([system, *texts]) if isinstance(system, str) else \
                [*_blocks(system or []), *_blocks(content)] if system else "\n\n".join(texts)
            notes.append(Note(kind="role_changed", subject=f"message {i}", detail=(
                "a system message before the conversation joined the system prompt")))
        elif takes and out[-1].get("role") == "user" and after == "assistant":
            out.append(message)
        elif out[-1].get("role") == "user":
            out[-1] = {**out[-1], "content": [*_blocks(out[-1]["content"]), *_blocks(content)]}
            notes.append(Note(kind="role_changed", subject=f"message {i}", detail=(
                f"{model} takes no system message here; its text joined the user turn")))
        else:
            out.append({"role": "user", "content": content})
            notes.append(Note(kind="role_changed", subject=f"message {i}", detail=(
                f"{model} takes no system message here; sent as a user turn")))
    body["messages"] = out


_ASKING = frozenset({system_messages, four_breakpoints})
"""The fixes that ask `traits`: each leaves alone the body of a request holding no system
message and nothing in a wire's own words."""
RULED: dict[Fix, tuple[str, tuple[str, ...]]] = {
    effort_with_tools: (CHAT, EFFORT_RULES),
    reasoning_passback: (CHAT, ("reasoning_refused", "reasoning_passback")),
}
"""The fixes that change nothing for a model that none of these rules covers on their wire
(and no ``_rules`` setting may turn on): that wire and the rules each asks."""
CHAT_FIXES: tuple[Fix, ...] = (effort_with_tools, reasoning_passback)
ANTHROPIC_FIXES: tuple[Fix, ...] = (system_messages, four_breakpoints)
NO_FIXES: tuple[Fix, ...] = ()

__all__ = [
    "ANTHROPIC_FIXES", "CHAT_FIXES", "NO_FIXES", "RULED", "Fix", "effort_with_tools", "fitted",
    "four_breakpoints", "reasoning_passback", "system_messages",
]
