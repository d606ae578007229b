"""Property: whatever bytes a server answers with, `Agent.run` ends with a named stop and a log
that reads back.

Hypothesis draws a wire, whole or streamed, a status and a body: arbitrary bytes, arbitrary
JSON, or a real reply of that wire (a tool call or an answer) broken by cutting, splitting,
flipping bytes or swapping a value, served over loopback HTTP by the emulator for both of the
run's attempts at it. Bounded to a few dozen runs so the file takes seconds.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bad_server import ANSWER, CALL, assert_ends_well, chunks, run_against, whole
from toolwire import RunStop
from toolwire.codecs import WIRES
from toolwire.emulator import Raw

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=20,
)


@st.composite
def broken(draw: st.DrawFn, wire: str, streamed: bool) -> list[bytes]:
    """A real reply of ``wire`` in pieces, then broken in one or more ways."""
    reply = draw(st.sampled_from([ANSWER, CALL]))
    data = b"".join(chunks(wire, reply)) if streamed else whole(wire, reply)
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["cut", "flip", "insert", "swap"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if how == "cut":
            data = data[:at]
        elif how == "flip":
            data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
        elif how == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
        else:
            value = json.dumps(draw(json_values)).encode()
            data = data[:at] + value + data[at + draw(st.integers(0, 12)):]
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=4)))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


@st.composite
def answers(draw: st.DrawFn) -> tuple[str, bool, Raw]:
    wire = draw(st.sampled_from(WIRES))
    streamed = draw(st.booleans())
    status = draw(st.sampled_from([200, 200, 200, 201, 400, 429, 500, 503]))
    kind = draw(st.sampled_from(["bytes", "json", "broken"]))
    if kind == "bytes":
        pieces = [draw(st.binary(max_size=200))]
    elif kind == "json":
        pieces = [json.dumps(draw(json_values)).encode()]
    else:
        pieces = draw(broken(wire, streamed))
    raw = Raw(chunks=pieces, status=status) if streamed else Raw(body=b"".join(pieces),
                                                                  status=status)
    return wire, streamed, raw


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(answer=answers())
def test_any_answer_ends_the_run_with_a_named_stop_and_a_log(answer: Any,
                                                             tmp_path: Path) -> None:
    wire, streamed, raw = answer
    log = tmp_path / "run.jsonl"
    log.unlink(missing_ok=True)
    result = asyncio.run(run_against(wire, [raw, raw, ANSWER, ANSWER], log, stream=streamed,
                                     time_limit=30))
    assert result.stop in set(RunStop)
    if result.stop is not RunStop.ANSWERED:
        assert result.error is not None or result.stop is RunStop.TIME_LIMIT
    assert_ends_well(result, log)
