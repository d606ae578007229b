"""The tests that loop over the wire registry take a wire added later up with no edit: what
they need of a wire is in its module in tests/wire_data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dialogue_wire
from toolwire.codecs.registry import wire_names
from wire_data import data, looped, table

TESTS = Path(__file__).resolve().parent
LOOPING = ["test_context_emulator.py", "test_context_usage.py", "test_context_compaction.py",
           "test_fallback.py", "test_emulator.py", "test_cassette.py", "test_agent_http.py",
           "test_explain.py", "test_media_http.py"]
"""The test files that loop over the registry with per-wire data from tests/wire_data."""


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLWIRE_TEST_WIRES": "dialogue_wire"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o",
                           "addopts=", *args],
                          cwd=TESTS.parent, env=env, capture_output=True, text=True,
                          timeout=600)


def test_every_registered_wire_has_its_test_data() -> None:
    assert looped() == wire_names()
    for name in ("MODEL_ID", "HISTORY_KEY", "CACHES_PROMPTS", "IMAGE_TOKENS", "REASONING",
                 "REPLY_CALL_IDS", "MEDIA_MODEL", "MEDIA_MOVED", "result_image"):
        assert set(table(name)) == set(wire_names())
    assert data(dialogue_wire.WIRE).HISTORY_KEY == "dialogue"


def test_the_looping_tests_collect_a_wire_added_later() -> None:
    found = _pytest("--collect-only", "-q", *(f"tests/{name}" for name in LOOPING))
    assert found.returncode == 0, found.stdout + found.stderr
    ids = found.stdout.splitlines()
    for name in LOOPING:
        assert any(line.startswith(f"tests/{name}::") and dialogue_wire.WIRE in line
                   for line in ids), name


def test_looping_tests_run_for_a_wire_added_later() -> None:
    """Whole runs, failing over to and from it, the emulator, cassettes, prompt caching and the
    context window, compaction when the provider says the context is full, a tool's image in
    the next request and the media estimate's table, each with the added wire's data from its
    module: they pass for it as they do for the built-in wires. Only the added wire's cases
    run (and the tables that hold every wire)."""
    ran = _pytest("-q", "-p", "no:warnings", *(f"tests/{name}" for name in LOOPING), "-k",
                  f"{dialogue_wire.WIRE} or media_count")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert " passed" in ran.stdout and "failed" not in ran.stdout
