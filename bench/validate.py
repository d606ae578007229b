"""Checking a tool call's arguments: toolwire next to the validators people reach for.

Every validator gets the same schemas and the same argument text, as a model sends it:

- valid calls, JSON text parsed and checked (toolwire's ``validate_call`` against
  jsonschema-rs, fastjsonschema, jsonschema and a Pydantic ``TypeAdapter``, each built once;
  jsonschema-rs also after pydantic-core's parser, toolwire's own, and after orjson);
- invalid calls, with each library's full error text built (toolwire: the message a model
  receives, listing every problem; fastjsonschema stops at the first problem);
- toolwire alone on one failing call with 10^5 and with 10^6 wrong-typed array items: the time
  per item should not grow with the size.

Before timing, every validator is checked to accept and refuse the same instances. Times are
CPU time of this process (so time spent waiting for a busy machine's CPU is not counted),
the fastest of several rounds; each round takes the validators in turn, so a slow moment hits
them all alike. Ratios are toolwire's time over the peer's.

Run: ``python bench/validate.py`` (about 20 s; ``--quick`` for a rough pass, ``--messages`` to
print each library's text for one invalid call, ``--check`` to exit 1 when a target is missed:
a valid call within 1.5x of the fastest peer, an invalid call under 20 µs).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any, Literal

import fastjsonschema
import jsonschema
import jsonschema_rs
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import from_json

from toolwire import ToolCallError
from toolwire.schema.tool import Tool, Toolset, validate_call

try:
    import orjson
except ImportError:  # orjson is optional
    orjson = None

STRICT = ConfigDict(extra="forbid", strict=True)


class EditFile(BaseModel):
    model_config = STRICT
    path: str
    old: str
    new: str
    count: int = Field(1, ge=1)


class Filters(BaseModel):
    model_config = STRICT
    lang: Literal["py", "ts", "go", "rs"] | None = None
    paths: list[str] = []
    min_size: int = Field(0, ge=0)


class Search(BaseModel):
    model_config = STRICT
    query: str = Field(min_length=1)
    filters: Filters
    limit: int | None = None
    flags: list[Literal["case", "regex", "word"]] = []


class Item(BaseModel):
    model_config = STRICT
    name: str
    qty: int = Field(ge=1)
    price: float


class Order(BaseModel):
    model_config = STRICT
    customer: str
    email: str
    items: list[Item]
    notes: str | None = None
    priority: Literal["low", "normal", "high"] = "normal"
    gift: bool = False
    tags: list[str] = []


CASES: dict[str, tuple[type[BaseModel], dict[str, Any], dict[str, dict[str, Any]]]] = {
    "edit_file": (
        EditFile,
        {"path": "src/app.py", "old": "foo = 1", "new": "foo = 2", "count": 1},
        {
            "wrong type": {"path": ["src/app.py"], "old": "foo = 1", "new": "foo = 2"},
            "misspelt field": {"path": "src/app.py", "old_str": "foo = 1", "new": "foo = 2"},
        },
    ),
    "search": (
        Search,
        {
            "query": "def main",
            "filters": {"lang": "py", "paths": ["src", "tests"], "min_size": 10},
            "limit": 20,
            "flags": ["case", "word"],
        },
        {
            "wrong type": {"query": "def main", "filters": {"paths": "src"}, "limit": "20"},
            "misspelt field": {"query": "def main", "filters": {"language": "py"}},
        },
    ),
    "order": (
        Order,
        {
            "customer": "Ada",
            "email": "ada@example.com",
            "items": [
                {"name": "pen", "qty": 2, "price": 1.5},
                {"name": "ink", "qty": 1, "price": 4.0},
                {"name": "pad", "qty": 3, "price": 2.25},
            ],
            "priority": "high",
            "tags": ["office"],
        },
        {
            "wrong type": {
                "customer": "Ada",
                "email": "ada@example.com",
                "items": [{"name": "pen", "qty": 0, "price": "1.5"}],
            },
            "misspelt field": {
                "customer_name": "Ada",
                "email": "ada@example.com",
                "items": [{"name": "pen", "qty": 2, "price": 1.5}],
            },
        },
    ),
}

Check = Callable[[str], Any]


def validators(name: str, model: type[BaseModel]) -> tuple[dict[str, Check], dict[str, Check]]:
    """(valid-call checks, invalid-call checks with error text), toolwire first."""
    tool = Tool.from_model(model, name=name)
    tools = Toolset([tool])
    schema = tool.input_schema
    rs = jsonschema_rs.validator_for(schema)
    fast = fastjsonschema.compile(schema)
    slow = jsonschema.Draft202012Validator(schema)
    adapter = TypeAdapter(model)
    loads = json.loads

    def fast_ok(text: str) -> bool:
        try:
            fast(loads(text))
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    valid: dict[str, Check] = {
        "toolwire": lambda text: validate_call(tools, name, text),
        "jsonschema-rs": lambda text: rs.is_valid(loads(text)),
    }
    valid["jsonschema-rs + pydantic-core"] = lambda text: rs.is_valid(from_json(text))
    if orjson is not None:
        fast_loads = orjson.loads
        valid["jsonschema-rs + orjson"] = lambda text: rs.is_valid(fast_loads(text))
    valid.update(
        {
            "pydantic TypeAdapter": lambda text: adapter.validate_json(text),
            "fastjsonschema": fast_ok,
            "jsonschema": lambda text: slow.is_valid(loads(text)),
        }
    )

    def toolwire_text(text: str) -> str:
        try:
            validate_call(tools, name, text)
        except ToolCallError as exc:
            return str(exc)
        return ""

    def fast_text(text: str) -> str:
        try:
            fast(loads(text))
        except fastjsonschema.JsonSchemaException as exc:
            return str(exc)
        return ""

    def pydantic_text(text: str) -> str:
        try:
            adapter.validate_json(text)
        except ValidationError as exc:
            return str(exc)
        return ""

    invalid: dict[str, Check] = {
        "toolwire": toolwire_text,
        "jsonschema-rs": lambda text: "\n".join(e.message for e in rs.iter_errors(loads(text))),
        "pydantic TypeAdapter": pydantic_text,
        "fastjsonschema": fast_text,
        "jsonschema": lambda text: "\n".join(e.message for e in slow.iter_errors(loads(text))),
    }
    return valid, invalid


def agree(case: str, valid: dict[str, Check], invalid: dict[str, Check], good: str,
          bad: dict[str, str]) -> None:  # fmt: skip
    """Every validator accepts the valid text and refuses each invalid one."""
    for who, check in valid.items():
        if check(good) is False:
            sys.exit(f"{case}: {who} refused the valid call")
    for label, text in bad.items():
        for who, explain in invalid.items():
            if not explain(text):
                sys.exit(f"{case} ({label}): {who} accepted an invalid call")


def timed(checks: dict[str, Check], text: str, rounds: int, budget: float) -> dict[str, float]:
    """Fastest µs per call of each check over ``rounds`` interleaved rounds (CPU time)."""
    clock = time.process_time
    numbers: dict[str, int] = {}
    for who, check in checks.items():
        n, spent = 1, 0.0
        while spent < budget / 4:
            n *= 2
            start = clock()
            for _ in range(n):
                check(text)
            spent = clock() - start
        numbers[who] = max(1, int(n * budget / spent))
    best = {who: float("inf") for who in checks}
    for _ in range(rounds):
        for who, check in checks.items():
            n = numbers[who]
            start = clock()
            for _ in range(n):
                check(text)
            best[who] = min(best[who], (clock() - start) / n * 1e6)
    return best


def table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [c.rjust(w) for c, w in zip(row[2:], widths[2:], strict=True)]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def large_calls(sizes: tuple[int, ...] = (10**5, 10**6)) -> list[str]:
    """CPU time of toolwire's check of one call with ``n`` wrong-typed array items (the message
    built), per size and per item: linear means the same time per item at every size."""
    schema = {"type": "object",
              "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}}
    tools = Toolset([Tool(name="sum", input_schema=schema)])
    lines = []
    for n in sizes:
        text = '{"xs": [' + ",".join(['"x"'] * n) + "]}"
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            with contextlib.suppress(ToolCallError):
                validate_call(tools, "sum", text)
            best = min(best, time.process_time() - started)
        per_item = best / n * 1e9
        lines.append(f"{n:>9,} wrong items: {best * 1e3:8.1f} ms, {per_item:6.1f} ns per item")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--messages", action="store_true", help="print each library's text")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    rounds, budget = (3, 0.005) if args.quick else (9, 0.025)

    rows = [["case", "validator", "µs/call", "toolwire ÷ this"]]
    worst_valid = 0.0
    slowest_invalid = 0.0
    for case, (model, good_value, bad_values) in CASES.items():
        valid, invalid = validators(case, model)
        good = json.dumps(good_value)
        bad = {label: json.dumps(value) for label, value in bad_values.items()}
        agree(case, valid, invalid, good, bad)
        times = timed(valid, good, rounds, budget)
        ours = times["toolwire"]
        fastest_peer = min(t for who, t in times.items() if who != "toolwire")
        worst_valid = max(worst_valid, ours / fastest_peer)
        for who, t in times.items():
            share = "" if who == "toolwire" else f"{ours / t:.2f}x"
            rows.append([f"{case}: valid", who, f"{t:.2f}", share])
        for label, text in bad.items():
            times = timed(invalid, text, rounds, budget)
            ours = times["toolwire"]
            slowest_invalid = max(slowest_invalid, ours)
            for who, t in times.items():
                share = "" if who == "toolwire" else f"{ours / t:.2f}x"
                rows.append([f"{case}: {label}", who, f"{t:.2f}", share])
            if args.messages:
                print(f"--- {case}: {label}: {text}")
                for who, explain in invalid.items():
                    print(f"[{who}]\n{explain(text)}\n")
    reference = min(
        timeit.repeat("sum(range(100))", number=20000, repeat=5, timer=time.process_time)
    )
    print("toolwire parses argument text with pydantic-core's parser; peers use json.loads")
    print("unless their name says otherwise. CPU µs per call, the fastest of the rounds.")
    print(
        f"Reference: sum(range(100)) takes {reference / 20000 * 1e6:.2f} µs of CPU here; "
        "absolute times scale with the machine.\n"
    )
    print(table(rows))
    valid_ok = worst_valid <= 1.5
    invalid_ok = slowest_invalid < 20
    print(
        f"\nvalid call: toolwire within {worst_valid:.2f}x of the fastest peer at worst "
        f"(target 1.5x): {'met' if valid_ok else 'MISSED'}"
    )
    print(
        f"invalid call with the full message: {slowest_invalid:.1f} µs at worst "
        f"(target under 20 µs): {'met' if invalid_ok else 'MISSED'}"
    )
    print("\nA failing call with many wrong items (the check's cost stays linear in its size):")
    print("\n".join(large_calls()))
    return 0 if (valid_ok and invalid_ok) or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
