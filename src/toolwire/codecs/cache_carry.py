"""A decoded body's own prompt-cache breakpoints, carried across a conversion between the two
wires that mark blocks themselves: Anthropic's ``cache_control`` and Converse's ``cachePoint``.

Owns `carry_breakpoints`: the markers a decoded request keeps in its parts' and tools' provider
data (and in its provider options) rewritten in the target wire's words, with the same
``ttl``, so a conversion keeps where the caller asked the provider to cache. Placing
breakpoints in a body is `toolwire.codecs.caching`'s. Imports only the transcript.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import msgspec

from toolwire.transcript import OpaquePart, Request

_ANTHROPIC, _CONVERSE = "anthropic-messages", "bedrock-converse"
_MARK_KEYS = {_ANTHROPIC: "cache_control", _CONVERSE: "cachePoint"}
"""The field each wire with breakpoints of its own keeps on a decoded part's provider data."""
_PLAIN_TOOL = frozenset({"type", "name", "description", "input_schema", "strict"})
_PLAIN_SPEC = frozenset({"name", "description", "inputSchema", "strict"})
"""What a tool of either wire says that a canonical tool carries itself."""


def _as_marker(point: Any, target: str) -> dict[str, Any]:
    """One wire's breakpoint in ``target``'s words: Anthropic's ``{"type": "ephemeral"}`` and
    Converse's ``{"type": "default"}``, each with the same ``ttl`` when it has one."""
    out: dict[str, Any] = {"type": "ephemeral" if target == _ANTHROPIC else "default"}
    if isinstance(point, Mapping) and point.get("ttl") is not None:
        out["ttl"] = point["ttl"]
    return out


def _moved(data: Any, source: str, target: str) -> tuple[Any, Any] | None:
    """A part's provider data with its ``source`` breakpoint moved to ``target``, or None."""
    if not isinstance(data, Mapping):
        return None
    mine = data.get(source)
    key = _MARK_KEYS[source]
    if not isinstance(mine, Mapping) or key not in mine:
        return None
    rest = {k: v for k, v in mine.items() if k != key}
    theirs = data.get(target)
    point = {**(dict(theirs) if isinstance(theirs, Mapping) else {}),
             _MARK_KEYS[target]: _as_marker(mine[key], target)}
    moved = {k: v for k, v in data.items() if k not in (source, target)}
    if rest:
        moved[source] = rest
    moved[target] = point
    return moved, mine[key]


def _carried_options(options: Mapping[str, Any], source: str, target: str) -> dict[str, Any]:
    """The source's system blocks and tool list, when they carry breakpoints, as the
    target's: each marked block followed by (Converse) or carrying (Anthropic) the marker."""
    mine = dict(options.get(source) or {})
    theirs = dict(options.get(target) or {})
    system, tools = mine.get("system"), mine.get("tools")
    if source == _ANTHROPIC:
        if isinstance(system, list) and any(isinstance(b, Mapping) and "cache_control" in b
                                            for b in system):
            blocks: list[Any] = []
            for b in system:
                if isinstance(b, Mapping) and isinstance(b.get("text"), str):
                    blocks.append({"text": b["text"]})
                    if "cache_control" in b:
                        blocks.append({"cachePoint": _as_marker(b["cache_control"], target)})
            theirs["system"] = blocks
            if not [b for b in system if isinstance(b, Mapping) and b.keys() - {
                    "type", "text", "cache_control"}]:
                mine.pop("system")
        if isinstance(tools, list) and any(isinstance(t, Mapping) and "cache_control" in t
                                           for t in tools):
            entries: list[Any] = []
            for t in tools:
                if isinstance(t, Mapping) and isinstance(t.get("name"), str):
                    entries.append({"toolSpec": {"name": t["name"]}})
                    if "cache_control" in t:
                        entries.append({"cachePoint": _as_marker(t["cache_control"], target)})
            theirs["toolConfig"] = {"tools": entries}
            kept = [{k: v for k, v in t.items() if k != "cache_control"}
                    if isinstance(t, Mapping) else t for t in tools]
            if all(isinstance(t, Mapping) and t.get("type") in (None, "custom")
                   and t.keys() <= _PLAIN_TOOL for t in kept):
                mine.pop("tools")
            else:
                mine["tools"] = kept
    else:
        marks = [b for b in system if isinstance(b, Mapping)] if isinstance(system, list) else []
        if any("cachePoint" in b for b in marks):
            out: list[dict[str, Any]] = []
            for b in marks:
                if isinstance(b.get("text"), str):
                    out.append({"type": "text", "text": b["text"]})
                elif "cachePoint" in b and out:
                    out[-1]["cache_control"] = _as_marker(b["cachePoint"], target)
            theirs["system"] = out
            if all(b.keys() <= {"text", "cachePoint"} for b in marks):
                mine.pop("system")
        config = mine.get("toolConfig")
        listed = config.get("tools") if isinstance(config, Mapping) else None
        if isinstance(config, Mapping) and isinstance(listed, list) and any(
                isinstance(e, Mapping) and "cachePoint" in e for e in listed):
            rest = [e for e in listed if not (isinstance(e, Mapping) and "cachePoint" in e)]
            if all(isinstance(e, Mapping) and e.keys() == {"toolSpec"} and isinstance(
                    e["toolSpec"], Mapping) and e["toolSpec"].keys() <= _PLAIN_SPEC
                   for e in rest) and config.keys() <= {
                    "tools", "toolChoice"}:
                mine.pop("toolConfig")
            else:
                mine["toolConfig"] = {**config, "tools": rest}
    return {**{k: v for k, v in options.items() if k not in (source, target)},
            **({source: mine} if mine else {}), **({target: theirs} if theirs else {})}


def carry_breakpoints(request: Request, source: str, target: str) -> Request:
    """``request``, decoded from ``source``, with the cache breakpoints its body placed written
    for ``target`` in the same places, between the two wires whose breakpoints mark blocks:
    Anthropic's ``cache_control`` and Bedrock Converse's ``cachePoint`` (on the system
    prompt, the tools and the parts of messages). Any other pair: ``request`` as it is."""
    if source == target or source not in _MARK_KEYS or target not in _MARK_KEYS:
        return request
    messages = []
    for message in request.messages:
        parts = []
        for part in message.parts:
            moved = _moved(getattr(part, "provider_data", None), source, target) \
                if not isinstance(part, OpaquePart) else None
            parts.append(part if moved is None else
                         msgspec.structs.replace(part, provider_data=moved[0]))  # type: ignore[arg-type]
        messages.append(msgspec.structs.replace(message, parts=tuple(parts)))
    tools = request.tools
    options = request.provider_options
    if options and source == _CONVERSE:  # a cache point after a tool: that tool marked
        config = (options.get(source) or {}).get("toolConfig")
        entries = config.get("tools") if isinstance(config, Mapping) else None
        if isinstance(entries, list):
            marked = {str(prev["toolSpec"].get("name")): entry["cachePoint"]
                      for prev, entry in itertools.pairwise(entries)
                      if isinstance(prev, Mapping) and isinstance(prev.get("toolSpec"), Mapping)
                      and isinstance(entry, Mapping) and "cachePoint" in entry}
            if marked:
                target_tools = [{"name": t.name, **({"cache_control": _as_marker(
                    marked[t.name], target)} if t.name in marked else {})} for t in tools]
                options = {**options, target: {**(options.get(target) or {}),
                                               "tools": target_tools}}
    if options:
        options = _carried_options(options, source, target)
    return msgspec.structs.replace(request, messages=tuple(messages), tools=tools,
                                   provider_options=options or None)
