"""Hostile inputs for every decoder of every wire, shared by the property tests and bench/fuzz.py.

Everything here is driven by a `random.Random` (hypothesis hands one in through
``st.randoms()``; the campaign seeds its own), so one mutation engine serves both. Seeds are real
bodies: the recorded replies and streams in ``tests/fixtures/corpus`` and, for requests and error
bodies, what each codec writes for a conversation with calls, results and reasoning.

`attempt` runs one decoder on one input and names the outcome: ``value``, the toolwire error's
class name, or ``escape:<exception>`` for anything that is not a toolwire error.
"""

from __future__ import annotations

import copy
import json
import random
import reprlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from toolwire.codecs import WIRES, get_codec
from toolwire.codecs.guards import kept_values
from toolwire.codecs.reading import first_problem
from toolwire.errors import ToolwireError
from toolwire.transcript import (
    Message,
    ReasoningPart,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
WIRE_OF_FORMAT = {
    "anthropic": "anthropic-messages",
    "openai_chat": "openai-chat",
    "openai_responses": "openai-responses",
    "ollama": "ollama-chat",
    "gemini": "gemini-generate",
}
DECODERS = ("response", "request", "error", "stream")


@dataclass(frozen=True, slots=True)
class Seeds:
    """Real bodies of one wire to mutate."""

    replies: tuple[dict[str, Any], ...]
    streams: tuple[bytes, ...]
    requests: tuple[dict[str, Any], ...]
    errors: tuple[Any, ...]


_TOOL = ToolSpec(name="lookup.city", description="Find a city.", input_schema={
    "type": "object", "properties": {"city": {"type": "string"}, "days": {
        "type": "array", "items": {"type": "integer", "minimum": 0}}},
    "required": ["city"]})


def _conversation() -> Request:
    call = ToolCallPart(id="call_1", name="lookup.city", arguments={"city": "Zürich", "days": [1]})
    return Request(model="m", system="Be brief.", tools=(_TOOL,), max_tokens=64, messages=(
        Message.user("Weather?"),
        Message(role="assistant", parts=(ReasoningPart(text="Look it up."),
                                         TextPart(text="One moment."), call)),
        Message(role="tool", parts=(ToolResultPart(call_id="call_1", content="18°C",
                                                   name="lookup.city"),)),
        Message.user("Thanks."),
    ))


def _reply() -> Reply:
    call = ToolCallPart(id="call_2", name="lookup.city", arguments={"city": "Bern"})
    return Reply(message=Message(role="assistant", parts=(TextPart(text="Checking."), call)),
                 stop="tool_calls", usage=Usage(input_tokens=10, output_tokens=5), model="m",
                 id="r1")


@cache
def seeds(wire: str) -> Seeds:
    """The bodies of ``wire`` that mutations start from."""
    codec = get_codec(wire)
    request = _conversation()
    replies: list[dict[str, Any]] = [codec.encode_response(_reply(), request=request)]
    streams: list[bytes] = [b"".join(codec.encode_stream(_reply(), request=request))]
    for path in sorted(CORPUS.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if WIRE_OF_FORMAT.get(record.get("fmt")) != wire:
            continue
        body = record["body"]
        if record.get("streaming"):
            streams.append(body.encode() if isinstance(body, str) else json.dumps(body).encode())
        elif isinstance(body, dict):
            replies.append(body)
    errors = [codec.encode_error(status, "slow down") for status in (400, 429, 500)]
    return Seeds(replies=tuple(replies), streams=tuple(streams),
                 requests=(codec.encode_request(request),), errors=tuple(errors))


# --------------------------------------------------------------------------- random values

_WEIRD_TEXT = ("", " ", "\udcff", "a\ud800b", "\x00", "\u2028", "é" * 3, "null", "{", "[]",
               "{\"a\":", "𝄞", "\ufffe", "0" * 40)
_WEIRD_NUMBERS: tuple[Any, ...] = (0, -1, 1, 2**31, 2**63, 2**64 + 1, 10**18, -(10**18), 10**40,
                                   0.5, -0.0, 1e308, float("inf"), float("-inf"), float("nan"),
                                   True, False)


def random_json(rng: random.Random, depth: int = 3) -> Any:
    """A random JSON value (Python's reading of one): scalars, weird text and numbers, nesting."""
    roll = rng.random()
    if depth <= 0 or roll < 0.45:
        kind = rng.randrange(6)
        if kind == 0:
            return None
        if kind == 1:
            return rng.choice(_WEIRD_NUMBERS)
        if kind == 2:
            return rng.choice(_WEIRD_TEXT)
        if kind == 3:
            return rng.randint(-(2**70), 2**70)
        if kind == 4:
            return "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(8)))
        return rng.random() * 10 ** rng.randrange(-5, 300)
    if roll < 0.75:
        return [random_json(rng, depth - 1) for _ in range(rng.randrange(4))]
    keys = ("type", "content", "text", "id", "name", "arguments", "input", "role", "index",
            "choices", "message", "delta", "output", "candidates", "parts", "usage", "error")
    return {rng.choice(keys) if rng.random() < 0.7 else str(rng.random()):
            random_json(rng, depth - 1) for _ in range(rng.randrange(4))}


def nested(depth: int, leaf: Any = 1, *, as_list: bool = False) -> Any:
    """A value nested ``depth`` levels deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value] if as_list else {"a": value}
    return value


class _Odd:
    """A Python object that is no JSON value at all."""

    def __repr__(self) -> str:
        return "<odd>"


def _huge(rng: random.Random) -> Any:
    kind = rng.randrange(6)
    if kind == 0:
        return "x" * rng.choice((10_000, 300_000))
    if kind == 1:
        return [0] * rng.choice((1_000, 50_000))
    if kind == 2:
        return rng.choice((10**18, 10**400, -(10**30), 1e400, -1e400, float("nan")))
    if kind == 3:
        return {str(n): n for n in range(2_000)}
    if kind == 4:
        return rng.choice((2**63, 10**18, -1))
    return "\udcff" * 5


def _replacement(rng: random.Random, old: Any, objects: bool) -> Any:
    op = rng.randrange(8 if objects else 7)
    if op == 0:
        return None
    if op == 1:  # retype
        return rng.choice((0, "", [], {}, True, 1.5, "x", [old], {"value": old}))
    if op == 2:
        return _huge(rng)
    if op == 3:
        return nested(rng.choice((50, 300, 1_200, 10_000)), old, as_list=rng.random() < 0.5)
    if op == 4:
        return random_json(rng)
    if op == 5:
        return rng.choice(_WEIRD_TEXT)
    if op == 6:
        return rng.choice(_WEIRD_NUMBERS)
    return rng.choice((_Odd(), b"bytes", {1, 2}, (1, 2), 3j, {1: "int key"}))


def _places(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in ``value``, breadth first, bounded."""
    out: list[tuple[Any, Any]] = []
    todo = [value]
    while todo and len(out) < 5_000:
        node = todo.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                out.append((node, key))
                todo.append(item)
        elif isinstance(node, list):
            for n, item in enumerate(node):
                out.append((node, n))
                todo.append(item)
    return out


def mutate(rng: random.Random, body: Any, *, objects: bool = True, rounds: int = 0) -> Any:
    """``body`` changed structurally: keys deleted or renamed, values retyped, nulled, made huge
    or deep, lists emptied or grown. ``objects`` also allows values no JSON text can hold."""
    body = copy.deepcopy(body)
    for _ in range(rounds or rng.randint(1, 3)):
        places = _places(body)
        if not places:
            return _replacement(rng, body, objects)
        container, key = rng.choice(places)
        op = rng.randrange(5)
        if op == 0 and isinstance(container, dict):
            del container[key]
        elif op == 1 and isinstance(container, dict):
            container[rng.choice(("type", "x", "", "content", "index", "id"))] = container.pop(key)
        elif op == 2 and isinstance(container, list):
            container.extend(container[:3] * rng.randint(1, 3))
        else:
            container[key] = _replacement(rng, container[key], objects)
    return body


def mutate_stream(rng: random.Random, raw: bytes) -> bytes:
    """A stream's bytes damaged: one event's JSON mutated, bytes flipped, cut, junk added."""
    op = rng.randrange(7)
    if op == 0:
        lines = raw.split(b"\n")
        for n in rng.sample(range(len(lines)), min(3, len(lines))):
            head, sep, tail = lines[n].partition(b"{")
            if not sep:
                continue
            try:
                event = json.loads(sep + tail)
            except ValueError:
                continue
            try:
                text = json.dumps(mutate(rng, event, objects=False), allow_nan=True)
            except RecursionError:  # nested past json's own limit: write the nesting as text
                text = '{"a":' * 10_000 + "1" + "}" * 10_000
            lines[n] = head + text.encode("utf-8", "surrogatepass")
        return b"\n".join(lines)
    if op == 1:
        data = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if op == 2:
        return raw[: rng.randrange(len(raw) + 1)]
    if op == 3:
        at = rng.randrange(len(raw) + 1)
        junk = rng.choice((b"\xff\xfe", b"\xc3", b"data: [DONE]\n\n", b"\r", b"\n\n\n",
                           b"data: {}\n\n", b"event: error\ndata: {\"error\":1}\n\n",
                           b"data: " + b"[" * 5000 + b"\n\n", b"{" * 3000 + b"\n",
                           b"data: {\"output_index\": 1000000000000000000}\n\n",
                           b"{\"index\": 99999999999}\n", b"data: \"\\udcff\"\n\n"))
        return raw[:at] + junk + raw[at:]
    if op == 4:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
    if op == 5:
        return raw.replace(b"\n", b"\r", rng.randint(1, 20))
    return raw + json.dumps(random_json(rng)).encode()


def split(rng: random.Random, raw: bytes) -> Iterator[bytes]:
    """``raw`` cut into chunks at random places (some empty, some single bytes)."""
    at = 0
    while at < len(raw):
        size = rng.choice((0, 1, 2, 7, 64, 1_000, len(raw)))
        yield raw[at : at + size]
        at += size


# --------------------------------------------------------------------------- running decoders


def run_decoder(wire: str, decoder: str, value: Any, rng: random.Random | None = None) -> Any:
    """Run one decoder of ``wire`` on ``value`` to the end (streams: every event)."""
    codec = get_codec(wire)
    if decoder == "response":
        if rng is not None and rng.random() < 0.5:
            value = as_sent(value)  # the bytes, as the HTTP client passes them
        reply = codec.decode_response(value)
        for kept, where in kept_values(reply):  # nothing kept that no JSON text could give
            problem = first_problem(where, kept)
            assert problem is None, f"the reply keeps what JSON cannot hold: {problem}"
        return reply
    if decoder == "request":
        return codec.decode_request(value)
    if decoder == "error":
        return codec.decode_error(value[0], value[1], value[2])
    chunks = split(rng, value) if rng is not None else [value]
    return list(codec.decode_stream(chunks))


def as_sent(value: Any) -> Any:
    """``value`` as the bytes a server would send, when it can be written as JSON at all."""
    try:
        return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError, RecursionError):  # objects JSON has not, or too deep to write
        return value


def outcome(call: Callable[[], Any]) -> str:
    """``value``, a toolwire error's class name, ``net:<exception type>`` for a toolwire error
    that the codec's last net made of another exception (no path named), or
    ``escape:<exception type>`` for anything else."""
    try:
        call()
    except ToolwireError as exc:
        cause = exc.__cause__
        if (cause is not None and not isinstance(cause, ToolwireError)
                and "cannot be read" in str(exc)):
            return f"net:{type(cause).__name__}"
        return type(exc).__name__
    except Exception as exc:  # the point is to name whatever escaped
        return f"escape:{type(exc).__name__}"
    return "value"


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 6, 60, 60, 40


def shown(value: Any) -> str:
    """``value`` in a few hundred characters at most, however deep or large."""
    return _SHORT.repr(value)[:400]


def hostile_input(rng: random.Random, wire: str, decoder: str) -> Any:
    """One hostile input for ``decoder`` of ``wire``."""
    base = seeds(wire)
    if decoder == "stream":
        return mutate_stream(rng, rng.choice(base.streams))
    if decoder == "error":
        status = rng.choice((200, 400, 401, 404, 429, 500, 503, 529, 0, -1, 99999))
        body = (random_json(rng) if rng.random() < 0.3 else
                mutate(rng, rng.choice(base.errors)) if rng.random() < 0.7 else
                rng.choice((b"\xff\xfe", b"", b"{", "\udcff", b"null", b"[" * 5000)))
        headers = rng.choice((None, {}, {"retry-after": "nan"}, {"Retry-After": "1e400"},
                              {"retry-after-ms": "-5"}, {"retry-after": "inf"}))
        return (status, body, headers)
    pool = base.replies if decoder == "response" else base.requests
    if rng.random() < 0.15:
        return random_json(rng) if rng.random() < 0.7 else _replacement(rng, {}, True)
    return mutate(rng, rng.choice(pool))


__all__ = ["DECODERS", "WIRES", "as_sent", "hostile_input", "mutate", "mutate_stream", "nested",
           "outcome", "random_json", "run_decoder", "seeds", "shown", "split"]
