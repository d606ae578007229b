"""What the provider keeps on its side of a conversation, written into a request body.

Owns the pieces of programmatic tool calling that a body carries (`container_id`: the code
execution container a request names to go on with it; `results_only`: the answer to calls
made by code holds their results alone; `code_call_problem`: what the provider refuses
there), and the beta header values a provider's own context management is sent with. A wire's
context management as its body writes and reads it is the wire's own (its folder's
``__init__``: Anthropic's ``context_edits``, ``beta_headers`` and ``read_edits``, the Responses
API's ``context_entries`` and ``read_entries``). Pure functions over canonical messages and
JSON bodies, told which wire they write for. Imports only `toolwire.codecs.base` and the
transcript; no wire module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolwire.codecs.base import Note
from toolwire.transcript import Message

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


__all__ = [
    "COMPACTION_BETA", "CONTEXT_EDITING_BETA", "SERVER_FALLBACK_BETA", "code_call_problem",
    "container_id", "results_only",
]
