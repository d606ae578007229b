"""Run-log lines: a line is written as its values are after secrets are taken out and media
moved to the log's folder, byte for byte, whether or not the line needed either."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.agent.runlog import RunLog, _line
from toolwire.media import Image
from toolwire.mediafiles import INLINE_MAX, MediaFiles, fold_fields
from toolwire.records import unsigned
from toolwire.secrets import Redactor, redact_json
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
