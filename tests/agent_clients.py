"""Real coding agents for the tests: Claude Code and Codex CLI at pinned versions (their npm
packages, whose native Linux x86-64 binaries come as optional dependencies, installed by
`node_tools`), each run non-interactively in a folder of its own with a home of its own and a
fake key, pointed at a base URL on 127.0.0.1; and `TwoTools`, an emulator script that has the
agent call two of its own tools and then answer.

Run as a script (``python3 tests/agent_clients.py``) it captures each agent's first request
straight from the emulator into ``fixtures/clients/``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import node_tools
from toolwire.transcript import Request, ToolResultPart

CLAUDE_CODE = ("@anthropic-ai/claude-code", "2.1.332")
CODEX = ("@openai/codex", "0.171.0")
FAKE_KEY = "unused"
"""The key every agent presents: the proxy without ``--key`` (and the emulator) takes any."""
FIXTURES = Path(__file__).parent / "fixtures" / "clients"


@dataclass(frozen=True, slots=True)
class Run:
    """One agent's command line, environment and working folder."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path

    def __call__(self, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv, env=self.env, cwd=self.cwd, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)


QUIET = {"DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
         "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
"""Claude Code's switches for telemetry, updates, error reports and other traffic: off."""


def _quiet_env(home: Path) -> dict[str, str]:
    """A bare environment: our PATH, a home of its own (no user config is read or written)."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "LANG": "C.UTF-8", "NO_COLOR": "1"}


def claude_code(base_url: str, task: str, work: Path, home: Path) -> Run:
    """``claude -p TASK --output-format json`` against ``base_url`` (its Anthropic base URL),
    with Read, Write and Bash allowed without asking, telemetry, error reports and updates
    off."""
    binary = node_tools.package(*CLAUDE_CODE) / "bin" / "claude.exe"
    env = {**_quiet_env(home), "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": FAKE_KEY,
           **QUIET}
    argv = [str(binary), "-p", task, "--output-format", "json",
            "--allowedTools", "Read,Write,Bash"]
    return Run(argv, env, work)


def codex_config(base_url: str) -> str:
    """Codex CLI's ``config.toml``: a model provider of its own at ``base_url`` (which ends in
    ``/v1``), speaking the Responses API, its key in ``TOOLWIRE_KEY``."""
    return (f'model = "claude-sonnet-4-5"\nmodel_provider = "toolwire"\n\n'
            f'[model_providers.toolwire]\nname = "toolwire"\nbase_url = "{base_url}"\n'
            f'wire_api = "responses"\nenv_key = "TOOLWIRE_KEY"\n')


def codex(base_url: str, task: str, work: Path, home: Path) -> Run:
    """``codex exec TASK`` against ``base_url`` (a custom model provider in ``CODEX_HOME``'s
    config.toml), never asking for approval, commands sandboxed to the working folder."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(codex_config(base_url + "/v1"))
    env = {**_quiet_env(home), "CODEX_HOME": str(home), "TOOLWIRE_KEY": FAKE_KEY}
    argv = [*node_tools.command(*CODEX, "bin/codex.js"), "exec", "--skip-git-repo-check",
            "--ephemeral", "--sandbox", "workspace-write", "-c", 'approval_policy="never"',
            "--json", task]
    return Run(argv, {**node_tools.environment(), **env}, work)


@dataclass
class TwoTools:
    """An emulator script: the first call, then (once its result came back) the second, then
    ``answer``. A request that offers no tools (a title, a summary) gets ``aside``. Keeps every
    request it answered, and the results each one carried."""

    calls: Sequence[tuple[str, dict[str, Any]]]
    answer: str
    aside: str = "ok"
    requests: list[Request] = field(default_factory=list)
    answered: int = 0
    """How many requests it answered, asides included (the emulator's checks refused none of
    the others it received)."""

    def results(self, request: Request) -> list[ToolResultPart]:
        return [p for m in request.messages for p in m.parts if isinstance(p, ToolResultPart)]

    def __call__(self, request: Request, wire: str) -> dict[str, Any]:
        self.answered += 1
        if not request.tools:
            return {"text": self.aside}
        self.requests.append(request)
        done = len(self.results(request))
        if done < len(self.calls):
            name, arguments = self.calls[done]
            return {"tool_calls": [{"name": name, "arguments": arguments,
                                    "id": f"call_{done + 1}"}]}
        return {"text": self.answer}

    def result_texts(self) -> list[str]:
        """The text of each tool result the agent sent back, in order."""
        if not self.requests:
            return []
        return [r.text for r in self.results(self.requests[-1])]


PROSE = 120
"""Text at least this long with a space in it is the agent's own writing (its system prompt,
its tool descriptions, what it tells the model about the machine): a fixture keeps its shape
and its length, not its words."""


def without_prose(value: Any) -> Any:
    """``value`` with every long run of prose replaced by a note of its length."""
    if isinstance(value, dict):
        return {k: without_prose(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_prose(v) for v in value]
    if isinstance(value, str) and len(value) >= PROSE and " " in value:
        return f"({len(value)} characters of the agent's own text, left out of the fixture)"
    return value


def capture() -> None:
    """Each agent's first request, straight to the emulator in its own wire, into FIXTURES."""
    import tempfile

    from toolwire.emulator import Emulator

    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, make, version, more in (
            ("claude-code", claude_code, CLAUDE_CODE[1], []),
            ("codex", codex, CODEX[1], []),
            # a model Codex knows: it then offers `apply_patch` as a custom tool too
            ("codex-gpt-5.5", codex, CODEX[1], ["-c", 'model="gpt-5.5"'])):
        with Emulator(lambda request, wire: {"text": "hello"}, check=False) as emu, \
                tempfile.TemporaryDirectory() as scratch:
            work, home = Path(scratch, "work"), Path(scratch, "home")
            work.mkdir()
            home.mkdir()
            run = make(emu.base_url, "Say hello.", work, home)
            done = Run([*run.argv[:-1], *more, run.argv[-1]], run.env, run.cwd)()
            assert done.returncode == 0, done.stderr[-2000:]
            first = emu.received[0]
            out = {"client": name, "version": version, "wire": first.wire, "path": first.path,
                   "headers": first.headers, "body": without_prose(first.body)}
        (FIXTURES / f"{name}.json").write_text(json.dumps(out, indent=1, ensure_ascii=False)
                                               + "\n")
        print(f"{name} {version}: {first.wire} {first.path}", file=sys.stderr)


if __name__ == "__main__":
    capture()
