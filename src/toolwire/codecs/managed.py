"""What the provider keeps on its side of a conversation, written into a request body.

Owns the pieces of programmatic tool calling that a body carries (`container_id`: the code
execution container a request names to go on with it; `results_only`: the answer to calls
made by code holds their results alone; `code_call_problem`: what the provider refuses
there). Pure functions over canonical messages and JSON
bodies, told which wire they write for. Imports only `toolwire.codecs.base` and the
transcript; no wire module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolwire.codecs.base import Note
from toolwire.transcript import ContextManagement, Message

CONTEXT_EDITING_BETA = "context-management-2025-06-27"
"""The ``anthropic-beta`` value Anthropic's context editing (clearing) is sent with."""
COMPACTION_BETA = "compact-2026-01-12"
"""The ``anthropic-beta`` value Anthropic's server-side compaction is sent with."""
SERVER_FALLBACK_BETA = "server-side-fallback-2026-07-01"
"""The ``anthropic-beta`` value a body with ``fallbacks`` (the models Anthropic's API falls
back to when the requested one declines) is sent with."""


def container_id(messages: Sequence[Message], wire: str) -> str | None:
    """The id of the code execution container the latest assistant message used (kept in its
    ``provider_data[wire]["container"]``): the next request names it, so code waiting on its
    calls' results goes on where it stopped."""
    for m in reversed(messages):
        if m.role == "assistant":
            if m.provider_data is None:  # the usual message: nothing kept
                return None
            data = m.provider_data.get(wire)
            box = data.get("container") if isinstance(data, Mapping) else None
            found = box.get("id") if isinstance(box, Mapping) else None
            return found if isinstance(found, str) and found else None
    return None


def results_only(out: list[dict[str, Any]], by_code: Sequence[int], notes: list[Note]) -> None:
    """The message after each of ``by_code`` (body messages holding calls made by code), their
    answer, keeps its ``tool_result`` blocks alone, as the API asks; anything else that would
    have gone with them is left out, with a note."""
    for k in (n + 1 for n in by_code):
        content = out[k].get("content") if k < len(out) else None
        if not isinstance(content, list):
            continue
        kept = [b for b in content if b.get("type") == "tool_result"]
        if kept and len(kept) < len(content):
            out[k]["content"] = kept
            notes.append(Note(kind="part_dropped", subject=f"body messages[{k}]", detail=(
                f"{len(content) - len(kept)} blocks left out: the answer to calls made by "
                "code may hold tool_result blocks only")))


def code_call_problem(body: Mapping[str, Any],
                      caller: Callable[[Mapping[str, Any]], str | None]) -> str | None:
    """What the provider refuses in a body going on from calls made by code (``caller`` says
    which ``tool_use`` block code made): an answer holding more than their results, or no
    ``container`` when the latest assistant message holds them; None when it is fine."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    by_code = -2
    for i, m in enumerate(messages):
        content = m.get("content") if isinstance(m, Mapping) else None
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_use" and caller(block) is not None:
                by_code = i
            elif i == by_code + 1 and block.get("type") != "tool_result":
                return (f"messages.{i}.content.{j}: the answer to calls made by code must "
                        "contain only tool_result blocks")
    if by_code == len(messages) - 2 and not body.get("container"):
        return ("container: the request goes on from calls made by code, so it must name "
                "their container")
    return None


# --------------------------------------------------------------------------- context management


def _count(kind: str, value: int | None) -> dict[str, Any] | None:
    return None if value is None else {"type": kind, "value": value}


def _edit(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **{k: v for k, v in fields.items() if v is not None}}


def anthropic_edits(cm: ContextManagement | None) -> dict[str, Any]:
    """Anthropic's ``context_management`` field for ``cm`` (thinking is cleared first, as the
    API asks; compaction comes last), as body keys: none when ``cm`` is None."""
    if cm is None:
        return {}
    trigger = _count("input_tokens", cm.trigger)
    edits: list[dict[str, Any]] = []
    if cm.clear_thinking:
        edits.append(_edit("clear_thinking_20251015",
                           keep=_count("thinking_turns", cm.keep_thinking)))
    if cm.clear_tool_results:
        edits.append(_edit("clear_tool_uses_20250919", trigger=trigger,
                           keep=_count("tool_uses", cm.keep)))
    if cm.compact:
        edits.append(_edit("compact_20260112", trigger=trigger,
                           instructions=cm.instructions or None))
    return {"context_management": {"edits": edits}}


def anthropic_betas(body: Mapping[str, Any]) -> dict[str, str] | None:
    """The ``anthropic-beta`` header the edits of ``body``'s ``context_management`` need, and
    its ``fallbacks``."""
    raw = body.get("context_management")
    fallbacks = [SERVER_FALLBACK_BETA] if "fallbacks" in body else []
    if raw is None:  # the usual body: no edits
        return {"anthropic-beta": fallbacks[0]} if fallbacks else None
    edits = raw.get("edits") if isinstance(raw, Mapping) else None
    kinds = {e.get("type") for e in edits if isinstance(e, Mapping)} if isinstance(
        edits, list) else set()
    betas = [CONTEXT_EDITING_BETA] if kinds - {"compact_20260112"} else []
    if "compact_20260112" in kinds:
        betas.append(COMPACTION_BETA)
    betas += fallbacks
    return {"anthropic-beta": ",".join(betas)} if betas else None


def _value(raw: Any, kind: str) -> int | None:
    if isinstance(raw, Mapping) and raw.get("type") == kind and type(raw.get("value")) is int:
        return int(raw["value"])
    return None


def read_edits(options: dict[str, Any]) -> ContextManagement | None:
    """Anthropic's ``context_management`` of a body's ``options`` (the keys a request has no
    field for) as the canonical setting (None when it names no edit toolwire knows); taken out
    of ``options`` when the setting says all it said."""
    cm, exact = _edits(options.get("context_management"))
    if exact:
        del options["context_management"]
    return cm


def _edits(raw: Any) -> tuple[ContextManagement | None, bool]:
    edits = raw.get("edits") if isinstance(raw, Mapping) else None
    if not isinstance(edits, list):
        return None, False
    found: dict[str, Any] = {"compact": False}
    exact = len(raw) == 1
    triggers = set()
    for edit in edits:
        kind = edit.get("type") if isinstance(edit, Mapping) else None
        keys = set(edit) if isinstance(edit, Mapping) else set()
        if kind == "clear_thinking_20251015":
            found["clear_thinking"] = True
            found["keep_thinking"] = _value(edit.get("keep"), "thinking_turns")
            exact = exact and keys <= {"type", "keep"} and (
                "keep" not in edit or found["keep_thinking"] is not None)
        elif kind == "clear_tool_uses_20250919":
            found["clear_tool_results"] = True
            found["keep"] = _value(edit.get("keep"), "tool_uses")
            triggers.add(_value(edit.get("trigger"), "input_tokens"))
            exact = exact and keys <= {"type", "keep", "trigger"} and (
                "keep" not in edit or found["keep"] is not None)
        elif kind == "compact_20260112":
            found["compact"] = True
            found["instructions"] = edit.get("instructions")
            triggers.add(_value(edit.get("trigger"), "input_tokens"))
            exact = exact and keys <= {"type", "trigger", "instructions"}
        else:
            exact = False
    if len(triggers) > 1:
        exact = False
    if len(found) == 1 and not found["compact"]:
        return None, False
    found["trigger"] = next((t for t in triggers if t is not None), None)
    if not isinstance(found.get("instructions"), str | None):
        found["instructions"], exact = None, False
    return ContextManagement(**found), exact


def responses_entries(cm: ContextManagement, notes: list[Note], wire: str) -> list[Any]:
    """The Responses API's ``context_management`` for ``cm``: its compaction entry (it clears
    nothing itself: asking it to is left out, with a note)."""
    if cm.clear_tool_results or cm.clear_thinking or cm.instructions:
        notes.append(Note(kind="field_dropped", subject="context_management", detail=(
            f"{wire} compacts on its side but clears nothing and takes no instructions; only "
            "the compaction was asked for")))
    if not cm.compact:
        return []
    entry: dict[str, Any] = {"type": "compaction"}
    if cm.trigger is not None:
        entry["compact_threshold"] = cm.trigger
    return [entry]


def read_entries(options: dict[str, Any]) -> ContextManagement | None:
    """The Responses API's ``context_management`` of a body's ``options`` as the canonical
    setting; taken out of ``options`` when the setting says all it said."""
    raw = options.get("context_management")
    if not isinstance(raw, list):
        return None
    found = [e for e in raw if isinstance(e, Mapping) and e.get("type") == "compaction"]
    if not found:
        return None
    threshold = found[0].get("compact_threshold")
    if len(raw) == 1 and set(found[0]) <= {"type", "compact_threshold"} and (
            threshold is None or type(threshold) is int):
        del options["context_management"]
    return ContextManagement(trigger=threshold if type(threshold) is int else None)


__all__ = [
    "COMPACTION_BETA", "CONTEXT_EDITING_BETA", "anthropic_betas", "anthropic_edits",
    "code_call_problem",
    "container_id", "read_edits", "read_entries", "responses_entries", "results_only",
]
