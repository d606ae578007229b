"""What the emulator counts and bills for a request: tokens, prompt caching, the context window.

Owns `Billing`, `Counted`, `billed` (a scripted reply with its prompt's counts), `count_reply`
(what a token-counting endpoint answers), `prompt_tokens` and `count_blocks`. A request body is
read as its provider reads the prompt: the fields named by the wire's
`toolwire.codecs.registry.CacheRules.sections`, in order, each list item one block (a message's
content blocks each one block); a wire whose record names none is read as its usual fields
(tools, system, messages) and then every other list the body holds, in its order, whatever the
fields are called. A block counts one token per four
characters of its compact JSON, ``cache_control`` markers left out; a prefix is the chain hash
of its blocks. Caching follows the wire's rules:

- ``breakpoints`` (Anthropic): only prefixes ending at a marked block are written, at most
  ``max_breakpoints`` markers (more is a 400), each marker finds an earlier entry only within
  ``lookback`` blocks before it; prefixes shorter than the model's minimum are not cached;
  writes are billed (``cache_write_tokens``), reads are the longest prefix found.
- ``prefix`` (OpenAI, Gemini): every block boundary of a prompt at least the model's minimum is
  remembered, under the request's cache key when the wire has one; a later prompt reads the
  longest remembered prefix, rounded down to ``step`` tokens; writes cost nothing.

Tools added mid-conversation are billed as the providers describe them: a deferred tool
(``defer_loading``) is not in the prompt where the tools are, and an Anthropic ``tool_addition``
renders the definition of the tool it names at its own place in the conversation, so the
prefix before it is read from the cache; a Responses ``additional_tools`` item is an input item
like any other, at its place. A tool appended to the tool list changes the prefix from there.

Entries live ``ttl`` seconds (a marker's ``"1h"`` for an hour) and each read renews them. A
prompt longer than the model's window (`toolwire.context.windows`, or the emulator's own
table) is refused with the wire's own "context too long" wording; a server that truncates
instead (Ollama, `toolwire.codecs.record.Wire.truncate_at`) cuts it silently at the size the
body sets (``num_ctx``) and reports the truncated count. Must not import a codec module nor
compare wire names: what differs is in the registry.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from toolwire.codecs.registry import CacheRules, Wire
from toolwire.context.estimate import PER_MESSAGE, estimate_messages
from toolwire.context.windows import OLLAMA_DEFAULT_CONTEXT, cache_minimum, context_window
from toolwire.transcript import Reply, replace

_TTLS = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True, slots=True)
class Block:
    tokens: int
    digest: bytes
    marker: Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class Counted:
    """A request's prompt as billed: every token, and how many were read from or written to
    the cache."""

    tokens: int
    cache_read: int = 0
    cache_write: int = 0
    cache_write_long: int = 0
    """Of ``cache_write``, the tokens written by a breakpoint with the long lifetime (1h)."""


def unmarked(value: Any) -> Any:
    """``value`` without its ``cache_control`` markers, at any depth."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def _tokens(value: Any) -> int:
    text = json.dumps(unmarked(value), ensure_ascii=False, separators=(",", ":"))
    return max(1, -(-len(text) // 4))


def _deferred(item: Any) -> bool:
    return isinstance(item, dict) and item.get("defer_loading") is True


def _added(block: Any, tools: Mapping[str, Any]) -> Any:
    """A ``tool_addition`` block as the prompt holds it: the definition of the tool it adds,
    rendered at its place (a block naming a tool of ``tools``); any other block as it is."""
    if not (isinstance(block, dict) and block.get("type") == "tool_addition"):
        return block
    tool = block.get("tool")
    if isinstance(tool, dict) and tool.get("type") == "tool_reference":
        found = tools.get(str(tool.get("name")))
        return {"added": found, **({"cache_control": block["cache_control"]}
                                   if "cache_control" in block else {})}
    return block


def _items(body: Mapping[str, Any], rules: CacheRules) -> list[Any]:
    """The prompt's blocks in order. A deferred tool (``defer_loading``) is not in the prompt
    where the tools are; a mid-conversation addition renders its definition where it stands."""
    items: list[Any] = []
    listed = body.get("tools")
    tools = {str(t.get("name")): t for t in listed if isinstance(t, dict)} if isinstance(
        listed, list) else {}
    for section in rules.sections:
        value = body.get(section)
        if value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            if _deferred(item):
                continue
            content = item.get("content") if isinstance(item, dict) else None
            if isinstance(content, list) and content:
                items.append({"role": item.get("role")})
                items.extend(_added(b, tools) for b in content)
            else:
                items.append(item)
    return items


def count_blocks(body: Mapping[str, Any], rules: CacheRules) -> list[Block]:
    """The prompt of ``body`` as blocks, each with its tokens, its prefix's chain hash and its
    cache marker."""
    blocks: list[Block] = []
    digest = b""
    for item in _items(body, rules):
        digest = hashlib.sha256(digest + json.dumps(unmarked(item), sort_keys=True).encode()
                                ).digest()
        marker = item.get("cache_control") if isinstance(item, dict) else None
        blocks.append(Block(_tokens(item), digest, marker if isinstance(marker, dict) else None))
    return blocks


class ContextTooLong(Exception):
    """The prompt does not fit: ``str()`` is the wire's own wording."""


class TooManyBreakpoints(Exception):
    """More cache markers than the wire takes: ``str()`` is the provider's wording."""


class Billing:
    """The emulator's prompt cache and context windows, shared by every request it serves.

    ``windows`` maps a model name to its window (before the table in
    `toolwire.context.windows`); ``clock`` gives seconds (`time.monotonic`), for entries' TTLs.
    """

    def __init__(self, windows: Mapping[str, int] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.windows = dict(windows or {})
        self.clock = clock
        self._entries: dict[tuple[str, bytes], float] = {}
        self._lock = threading.Lock()

    def window(self, model: str) -> int | None:
        return self.windows.get(model) or context_window(model)

    def count(self, wire: Wire, body: Mapping[str, Any], model: str) -> Counted:
        """Bill ``body``'s prompt: raise `ContextTooLong` or `TooManyBreakpoints` when the
        provider would refuse it, else count it and read and write the cache."""
        rules = wire.cache
        blocks = count_blocks(body, _prompt_rules(rules, body))
        total = sum(b.tokens for b in blocks)
        limit = self.window(model)
        if wire.truncate_at:
            return Counted(min(total, _num_ctx(body, wire.truncate_at)))
        if limit is not None and total > limit:
            raise ContextTooLong(wire.context_error.format(tokens=total, limit=limit))
        with self._lock:
            if rules.kind == "breakpoints":
                return self._breakpoints(rules, blocks, total, model)
            if rules.kind == "prefix":
                key = body.get(rules.key_field) if rules.key_field else None
                return self._prefix(rules, blocks, total, model, str(key or ""))
        return Counted(total)

    def _alive(self, key: tuple[str, bytes], now: float, ttl: float) -> bool:
        until = self._entries.get(key)
        if until is None or until < now:
            return False
        self._entries[key] = max(until, now + ttl)  # a read renews the entry
        return True

    def _breakpoints(self, rules: CacheRules, blocks: list[Block], total: int,
                     model: str) -> Counted:
        marks = [i for i, b in enumerate(blocks) if b.marker is not None]
        if len(marks) > rules.max_breakpoints:
            raise TooManyBreakpoints(f"A maximum of {rules.max_breakpoints} blocks with "
                                     f"cache_control may be provided. Found {len(marks)}.")
        now, minimum = self.clock(), cache_minimum(model)
        ends = _prefix_tokens(blocks)
        read = 0
        for mark in marks:
            ttl = _ttl(blocks[mark].marker, rules)
            for j in range(mark, max(-1, mark - rules.lookback - 1), -1):
                if ends[j] >= minimum and self._alive((model, blocks[j].digest), now, ttl):
                    read = max(read, ends[j])
                    break
        written = read
        long = 0  # tokens written up to a breakpoint with the long lifetime
        for mark in marks:
            if ends[mark] >= minimum and ends[mark] > read:
                ttl = _ttl(blocks[mark].marker, rules)
                self._entries[(model, blocks[mark].digest)] = now + ttl
                if ttl > rules.ttl and ends[mark] > written:
                    long += ends[mark] - written
                written = max(written, ends[mark])
        return Counted(total, cache_read=read, cache_write=written - read,
                       cache_write_long=long)

    def _prefix(self, rules: CacheRules, blocks: list[Block], total: int, model: str,
                key: str) -> Counted:
        now, minimum = self.clock(), cache_minimum(model)
        if total < minimum:
            return Counted(total)
        ends = _prefix_tokens(blocks)
        read = 0
        for j in range(len(blocks) - 1, -1, -1):
            if ends[j] >= minimum and self._alive((model + key, blocks[j].digest), now,
                                                  rules.ttl):
                read = ends[j] - ends[j] % rules.step
                break
        for j, block in enumerate(blocks):
            if ends[j] >= minimum:
                self._entries[(model + key, block.digest)] = now + rules.ttl
        return Counted(total, cache_read=read if read >= minimum else 0)


def prompt_tokens(wire: Wire, body: Mapping[str, Any]) -> int:
    """The tokens of ``body``'s prompt, counted as a request's are (no cache touched)."""
    return sum(b.tokens for b in count_blocks(body, _prompt_rules(wire.cache, body)))


def count_reply(wire: Wire, body: Any) -> dict[str, Any]:
    """What the wire's token-counting endpoint answers for ``body``: the prompt's tokens,
    counted as a request's are (the cache is never touched)."""
    counting = wire.count
    assert counting is not None
    return {counting.field: prompt_tokens(wire, counting.prompt(body))}


def billed(reply: Reply, counted: Counted | None) -> Reply:
    """``reply`` with the counts of its prompt, when its script said nothing of them (a script
    that gives input tokens keeps its own); output tokens estimated from its message when the
    script gave none."""
    usage = reply.usage
    if counted is None or usage.input_tokens:
        return reply
    output = usage.output_tokens or max(
        1, estimate_messages([reply.message]) - PER_MESSAGE)
    return replace(reply, usage=replace(
        usage, input_tokens=counted.tokens, cache_read_tokens=counted.cache_read,
        cache_write_tokens=counted.cache_write, cache_write_long_tokens=counted.cache_write_long,
        output_tokens=output))


_USUAL = ("tools", "system", "messages")
"""The prompt's usual fields, in the order providers read them."""


def _prompt_rules(rules: CacheRules, body: Mapping[str, Any]) -> CacheRules:
    """``rules``, when they name the body's sections; else the usual fields (a system prompt
    given as a string too), then every other list of ``body`` in its order: the prompt of a
    wire whose record names no sections (its conversation, whatever the field holding it is
    called)."""
    if rules.sections:
        return rules
    return CacheRules(sections=(*_USUAL, *(key for key, value in body.items()
                                           if key not in _USUAL and isinstance(value, list))))


def _prefix_tokens(blocks: list[Block]) -> list[int]:
    ends, running = [], 0
    for block in blocks:
        running += block.tokens
        ends.append(running)
    return ends


def _ttl(marker: Mapping[str, Any] | None, rules: CacheRules) -> float:
    ttl = marker.get("ttl") if marker is not None else None
    return _TTLS.get(ttl, rules.ttl) if isinstance(ttl, str) else rules.ttl


def _num_ctx(body: Mapping[str, Any], path: tuple[str, ...]) -> int:
    """The context size the body sets at ``path``, else the server's default."""
    value: Any = body
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, int) and value > 0 else OLLAMA_DEFAULT_CONTEXT


__all__ = [
    "Billing", "ContextTooLong", "Counted", "TooManyBreakpoints", "billed", "count_blocks",
    "count_reply",
    "unmarked",
]
