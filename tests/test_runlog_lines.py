"""Run-log lines: a line is written as its values are after secrets are taken out and media
moved to the log's folder, byte for byte, whether or not the line needed either."""

from __future__ import annotations

import copy
import json
import math
import struct
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.agent import runlog
from toolwire.agent.runlog import RunLog, _line
from toolwire.media import Image
from toolwire.mediafiles import INLINE_MAX, MediaFiles, fold_fields
from toolwire.secrets import Redactor, redact_json
from toolwire.signing import unsigned
from toolwire.transcript import Message
from toolwire.transcript_json import to_json

PLAIN = "svc-4f7d1c9e2b8a6d3f"
ODD = 'pass"word\\with-escapes'  # JSON writes it otherwise than it is
LOOKALIKES = [
    "sk-ant-api03-" + "Q" * 40, "sk-proj-" + "d" * 40, "AIza" + "e" * 35, "ya29." + "c" * 25,
    "aws_secret_access_key = " + "A" * 30, "AWS_SESSION_TOKEN: '" + "B" * 30,
    "DefaultEndpointsProtocol=https;AccountKey=" + "k" * 30, "task-1", "sk-short",
    'a quote " and a \\ backslash', "line\u2028separator", "ünïcödé",
]
_keys = st.sampled_from(["text", "provider_data", "media_type", "note", "args", "type"])


def _strings(secret: str) -> st.SearchStrategy[str]:
    known = st.sampled_from([secret, *LOOKALIKES])
    return st.one_of(st.text(max_size=12), known,
                     st.builds(lambda a, b, c: a + b + c, st.text(max_size=4), known,
                               st.text(max_size=4)))


def _values(secret: str) -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), _strings(secret))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner, inner),
        st.dictionaries(_keys, inner, max_size=3)), max_leaves=10)


def written_as_before(path: Path, event: str, fields: dict[str, Any]) -> None:
    """Writes ``fields`` to the log at ``path`` and checks the line against the values with
    media folded and secrets out, written with the same time."""
    with RunLog(path) as log:
        log.write(event, **copy.deepcopy(fields))
    line, _ = unsigned(path.read_bytes().splitlines()[-1])
    folded = copy.deepcopy(fields)
    fold_fields(folded, MediaFiles(path))
    t = json.loads(line)["t"]
    assert line == _line({"event": event, "t": t, **redact_json(folded, Redactor.shared())})


@pytest.mark.parametrize("secret", [PLAIN, ODD])
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_line_is_its_values_with_secrets_out(
        secret: str, data: st.DataObject, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", secret)
    fields = data.draw(st.dictionaries(st.sampled_from(["message", "result", "error", "notes"]),
                                       _values(secret), max_size=3))
    with tempfile.TemporaryDirectory() as tmp:
        written_as_before(Path(tmp) / "run.jsonl", "note", fields)


def test_a_line_with_media_keeps_it_in_the_folder(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", PLAIN)
    big = Image.from_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (INLINE_MAX // 200))
    message = to_json(Message(role="user", parts=(big,)))
    written_as_before(tmp_path / "run.jsonl", "message", {"index": 0, "message": message})
    line = json.loads(unsigned((tmp_path / "run.jsonl").read_bytes().splitlines()[-1])[0])
    assert "file" in line["message"]["parts"][0] and "data" not in line["message"]["parts"][0]


_TEXT = st.one_of(st.text(max_size=20), st.sampled_from(LOOKALIKES))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT, result=_TEXT, turn=st.integers(1, 50), index=st.integers(0, 99),
       seconds=st.floats(0, 1e4, allow_nan=False),
       choice=st.sampled_from([None, "auto", "required"]))
def test_the_turn_events_write_the_lines_the_log_methods_write(
        tmp_path: Path, text: str, result: str, turn: int, index: int, seconds: float,
        choice: str | None) -> None:
    """A message, request, reply and tool result given to the log as a run's events are
    written as `RunLog.message`, `request`, `reply` and `call_end` write them."""
    from toolwire.events import MessageAdded, ReplyReceived, RequestSent, ToolFinished
    from toolwire.transcript import Reply, Request, ToolCallPart, ToolChoice, ToolResultPart

    call = ToolCallPart(id="c1", name="look", arguments={"q": text})
    message = Message(role="assistant", parts=(call,))
    reply = Reply(message=message, stop="tool_calls")
    request = Request(model="m", messages=(Message.user(text),) * (index % 4 + 1),
                      tool_choice=None if choice is None else ToolChoice(mode=choice))  # type: ignore[arg-type]
    done = ToolResultPart(call_id="c1", content=result, name="look")
    with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
        by_events, by_methods = Path(folder, "events.jsonl"), Path(folder, "methods.jsonl")
        with RunLog(by_events) as log:
            log(MessageAdded(index, message))
            log(RequestSent(turn, request))
            log(ReplyReceived(turn, index, reply, seconds))
            log(ToolFinished(turn=turn, call=call, result=done, seconds=seconds))
        with RunLog(by_methods) as log:
            log.message(index, message)
            log.request(turn, len(request.messages), request.tool_choice)
            log.reply(turn, index, reply, seconds)
            log.call_end(turn, done, seconds)

        def lines(path: Path) -> list[dict[str, Any]]:
            found = [json.loads(unsigned(x)[0]) for x in path.read_bytes().splitlines()]
            return [{k: v for k, v in x.items() if k != "t"} for x in found]

        assert lines(by_events) == lines(by_methods)


_SEPARATORS = {"\u2028": b"\\u2028", "\u2029": b"\\u2029", "\x85": b"\\u0085"}
_WIDE = st.text(alphabet=st.sampled_from(["a", '"', "\\", "é", "\u2028", "\u2029", "\x85",
                                          "\u2027", "\u20ac", "\x84", "\U0001f600", "\udcff"]),
                max_size=12)


@given(st.dictionaries(st.sampled_from(["text", "note", "\u2028"]),
                       _WIDE | st.lists(_WIDE, max_size=3) | st.integers(), max_size=3))
def test_a_line_is_its_json_with_the_line_separators_escaped(fields: dict[str, Any]) -> None:
    """`_line` skips its search for the separators in a line of ASCII only: it writes what
    encoding the line and escaping every separator in it gives."""
    try:
        expected = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:  # a lone surrogate: escaped ASCII throughout
        expected = json.dumps(fields, ensure_ascii=True).encode()
    else:
        for raw, escaped in _SEPARATORS.items():
            expected = expected.replace(raw.encode(), escaped)
    assert _line(fields) == expected
    assert json.loads(_line(fields)) == fields and len(_line(fields).splitlines()) == 1



@settings(max_examples=60)
@given(st.lists(st.floats(1e9, 4e9) | st.floats(2.0 ** 33, 2.0 ** 44) | st.floats(-2.0, 2.0)
                | st.floats(-1e300, 1e300), max_size=12),
       st.lists(st.integers(-6, 6), max_size=12))
def test_a_line_is_stamped_with_its_time_rounded_to_the_millisecond(
        times: list[float], nudges: list[int]) -> None:
    # each time, then times a fraction of a millisecond or an ulp from it (the stamp of the
    # last line is kept for those), every one stamped as `round` stamps it
    clock = [x for now, nudge in zip(times, nudges + [0] * len(times), strict=False)
             for x in (now, now + nudge * 0.0001, math.nextafter(now, math.inf))]
    with tempfile.TemporaryDirectory() as folder:
        log = RunLog(Path(folder) / "run.jsonl", key=b"k")
        with mock.patch.object(runlog.time, "time", iter(clock).__next__):
            for _ in clock:
                log.write("first_token", turn=1)
        log.close()
        stamps = [json.loads(unsigned(line)[0])["t"]
                  for line in (Path(folder) / "run.jsonl").read_bytes().splitlines()]
    assert [struct.pack("<d", t) for t in stamps] == [struct.pack("<d", round(x, 3))
                                                      for x in clock]
