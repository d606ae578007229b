"""A long text, reasoning text or argument string sent in many small deltas costs each delta the
same, however much came before, on every wire (the cases are tests/long_streams.py's).

Work is counted, not timed: a decoder that adds each fragment to a growing string (or copies a
growing list, or joins what came so far to look at it) makes, for every delta, a new object as
large as everything before it. So tracemalloc measures, for each chunk, the most memory it
needed beyond what was held before it, added up over the stream: for 4n deltas instead of n
that sum grows fourfold when each delta costs the same, and about tenfold when each delta
copies what came before. The cases that only look through what came before, without copying
it, show in time: bench/hostile_streams.py times every case for n and 10n.
"""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import pytest

from long_streams import CASES, Case
from toolwire.codecs import get_codec
from toolwire.codecs.assembly import WholeObject

N = 500


def peak_per_chunk(case: Case, n: int) -> tuple[int, Any]:
    """The most memory each chunk of the case's stream needed beyond what was held before it,
    added up, and what the reply read back."""
    decoder = get_codec(case.wire).stream_decoder()
    chunks = case.make(n)
    total = 0
    tracemalloc.start()
    try:
        for chunk in chunks:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            decoder.feed(chunk)
            total += tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return total, case.read(decoder.finish())


@pytest.mark.parametrize("case", [c for c in CASES if c.copies], ids=lambda c: c.id)
def test_a_delta_late_in_a_long_stream_needs_what_an_early_one_needs(case: Case) -> None:
    small, value = peak_per_chunk(case, N)
    assert value == case.expect(N)
    large, value = peak_per_chunk(case, 4 * N)
    assert value == case.expect(4 * N)
    assert large < 5 * small, (small, large)


@pytest.mark.parametrize("case", [c for c in CASES if not c.copies], ids=lambda c: c.id)
def test_many_items_in_one_stream_all_arrive(case: Case) -> None:
    decoder = get_codec(case.wire).stream_decoder()
    for chunk in case.make(4 * N):
        decoder.feed(chunk)
    assert case.read(decoder.finish()) == case.expect(4 * N)


@pytest.mark.parametrize("text", [
    '{"a": "x\\"}"}', '{"a": [1, {"b": "}{"}], "c": "\\\\"}', ' \n{} \t', '{}{}', '{} x',
    '[1]', '"{}"', '{"a" 1}', '{"a": tru}', '{"a": 1', '{"\\u007d": 2}',
])
def test_whole_object_agrees_with_parsing_at_every_piece(text: str) -> None:
    for size in (1, 2, 5):
        pieces: list[str] = []
        scan = WholeObject()
        for at in range(0, len(text), size):
            pieces.append(text[at:at + size])
            try:
                expected = isinstance(json.loads("".join(pieces)), dict)
            except ValueError:
                expected = False
            assert scan.whole(pieces) is expected, (text, size, pieces)
