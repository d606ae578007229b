"""The tests that loop over the wire registry take a wire added later up with no edit: what
they need of a wire is in its module in tests/wire_data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import dialogue_wire
from toolwire.codecs.registry import wire_names
from wire_data import data, looped, table

TESTS = Path(__file__).resolve().parent
LOOPING = ["test_context_emulator.py", "test_context_usage.py", "test_context_compaction.py",
           "test_fallback.py", "test_emulator.py", "test_cassette.py", "test_agent_http.py",
           "test_explain.py", "test_media_http.py", "test_hostile_decoders.py",
           "test_three_way_rule.py", "test_codec_contract.py", "codecs/test_real_reply_shapes.py",
           "test_proxy_loss_table.py", "test_convert.py", "test_proxy_same_wire.py",
           "test_media_wires.py", "test_agent_requests.py"]
"""The test files that loop over the registry with per-wire data from tests/wire_data."""
NAMES = ("MODEL_ID", "HISTORY_KEY", "CACHES_PROMPTS", "IMAGE_TOKENS", "REASONING",
         "REPLY_CALL_IDS", "MEDIA_MODEL", "MEDIA_MOVED", "result_image", "USAGE_TEXT",
         "KEEPS_UNKNOWN_FIELDS", "ERROR_AS_REPLY", "ERROR_NAMES_KIND", "SDK_BODY",
         "SECRET_REASONING", "LOOKUPS_REASONING", "TEXT_ARGUMENTS", "tool_names", "SETTINGS",
         "ALWAYS_SENT", "MEDIA_CARRIED", "MEDIA_NAMES", "MEDIA_NOTES", "CACHE_MARKERS_TAKEN",
         "SDK_ANY_OF", "STREAM_QUERY", "PROXY_BODY", "PROXY_ENV")
"""What every wire's module in tests/wire_data holds."""


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLWIRE_TEST_WIRES": "dialogue_wire"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o",
                           "addopts=", *args],
                          cwd=TESTS.parent, env=env, capture_output=True, text=True,
                          timeout=600)


def test_every_registered_wire_has_its_test_data() -> None:
    assert looped() == wire_names()
    for name in NAMES:
        assert set(table(name)) == set(wire_names())
    assert data(dialogue_wire.WIRE).HISTORY_KEY == "dialogue"


@pytest.fixture(scope="module")
def added_run() -> subprocess.CompletedProcess[str]:
    """The looping test files run once with the added wire registered, only its cases (and
    the tables that hold every wire) selected, each passed test named (``-rA``)."""
    return _pytest("-q", "-rA", "-p", "no:warnings", *(f"tests/{name}" for name in LOOPING),
                   "-k", f"{dialogue_wire.WIRE} or media_count")


def test_the_looping_tests_collect_a_wire_added_later(
        added_run: subprocess.CompletedProcess[str]) -> None:
    """Every looping file has cases of the added wire, and they passed."""
    passed = [line.removeprefix("PASSED ") for line in added_run.stdout.splitlines()
              if line.startswith("PASSED ")]
    for name in LOOPING:
        assert any(line.startswith(f"tests/{name}::") and dialogue_wire.WIRE in line
                   for line in passed), name


def test_looping_tests_run_for_a_wire_added_later(
        added_run: subprocess.CompletedProcess[str]) -> None:
    """Whole runs, failing over to and from it, the emulator, cassettes, prompt caching and the
    context window, compaction when the provider says the context is full, a tool's image in
    the next request and the media estimate's table, hostile input to its decoders, the codec
    contract, conversions to and from every wire (media, settings, ids, reasoning, real
    clients' requests), the proxy's loss reports and same-wire bytes, each with the added
    wire's data from its module: they pass for it as they do for the built-in wires."""
    ran = added_run
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert " passed" in ran.stdout and "failed" not in ran.stdout and "skipped" not in ran.stdout
