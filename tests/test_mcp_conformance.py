"""The official MCP conformance suite (`conformance.VERSION`) run with ``--suite all`` against
``toolwire mcp-serve --transport http`` serving tools, resources and prompts declared in
``fixtures/mcp_conformance.py``: every server scenario passes every check."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from conformance import environment, suite
from test_mcp import start_http_server

FIXTURES = Path(__file__).parent / "fixtures"

ALLOWED_WARNINGS = {
    # The pinned suite's server-sse-polling scenario opens its stream with the header
    # ``MCP-Protocol-Version: 2025-03-26`` although the session agreed on 2025-11-25; the SDK
    # (rightly) sends the priming event and ``retry`` only to clients of 2025-11-25 or later,
    # so these two recommendations go unmet for that request alone. Later versions of the
    # suite send the agreed version, and tests/test_mcp_serve_streams.py checks priming,
    # retry and Last-Event-ID with it.
    ("server-sse-polling", "server-sse-priming-event"),
    ("server-sse-polling", "server-sse-retry-field"),
}


def serve() -> tuple[subprocess.Popen[str], str]:
    return start_http_server(f"{FIXTURES / 'mcp_conformance.py'}:OFFER")


def scenarios() -> list[str]:
    listed = subprocess.run([*suite(), "list", "--server"], env=environment(),
                            capture_output=True, text=True, timeout=120, check=True)
    return re.findall(r"^\s+- (\S+)", listed.stdout, re.MULTILINE)


def test_every_server_scenario_of_the_whole_suite_passes(tmp_path: Path) -> None:
    expected = scenarios()
    proc, url = serve()
    try:
        run = subprocess.run([*suite(), "server", "--url", url, "--suite", "all",
                              "--output-dir", str(tmp_path)],
                             env=environment(), capture_output=True, text=True, timeout=600,
                             check=False)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    summary = run.stdout[run.stdout.find("=== SUMMARY ==="):]
    assert run.returncode == 0, summary or run.stderr[-3000:]
    checked: dict[str, list[dict[str, object]]] = {}
    for folder in tmp_path.iterdir():
        name = re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", folder.name)
        checked[name] = json.loads((folder / "checks.json").read_text())
    assert sorted(checked) == sorted(expected) and len(expected) >= 32, summary
    unmet = [(name, check["id"], check["status"], check.get("errorMessage"))
             for name, checks in checked.items() for check in checks
             if check["status"] not in ("SUCCESS", "INFO")
             and (name, check["id"]) not in ALLOWED_WARNINGS]
    assert unmet == [], summary
    assert re.search(r"^Total: \d+ passed, 0 failed", summary, re.MULTILINE), summary
