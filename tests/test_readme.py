"""README.md cannot go stale: its commands, examples and shown output are checked here."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", README, flags=re.DOTALL)


def marked_block(marker: str) -> str:
    match = re.search(rf"<!-- {marker} -->\n```text\n(.*?)```", README, flags=re.DOTALL)
    assert match, f"README has no block marked {marker}"
    return match.group(1)


def test_quick_start_is_three_commands_in_a_venv_and_ci_runs_the_test_one() -> None:
    quick = README.split("## Quick start", 1)[1]
    commands = [ln for ln in blocks("sh")[0].splitlines() if ln.strip()]
    assert quick.index("```sh") < quick.index("##")
    assert len(commands) == 3
    assert commands[0] == "python3 -m venv .venv && . .venv/bin/activate"
    assert commands[1] == 'pip install ".[demo]" && toolwire demo'
    assert commands[2] == "bash scripts/test"
    assert "Python 3.11 or newer" in quick.split("##")[0]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash scripts/test" in ci
    assert (ROOT / "scripts" / "test").exists()


def test_python_examples_run_and_print_what_the_readme_shows() -> None:
    """Python blocks run in order in one namespace; the text block after each is its output."""
    pairs = re.findall(r"```python\n(.*?)```\s*```text\n(.*?)```", README, flags=re.DOTALL)
    assert len(pairs) == len(blocks("python")) >= 2
    namespace: dict[str, object] = {"__name__": "readme"}
    for code, expected in pairs:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), namespace)
        assert out.getvalue() == expected


def normalise(text: str) -> str:
    # the demo folder is made in the temporary folder, wherever TMPDIR puts it
    text = re.sub(r"/(?:\S*/)?toolwire-demo-[^/\s]+", "/tmp/toolwire-demo-<random>", text)
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", text)
    text = re.sub(r"in \d+\.\d+s", "in <time>", text)
    text = re.sub(r"\((\d+) chars\)", "(<n> chars)", text)  # test output length varies
    lines = [ln.rstrip() for ln in text.splitlines()]
    return "\n".join(ln for ln in lines if not ln.startswith("stopped: "))


def test_demo_output_in_the_readme_is_real(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.run([sys.executable, "-m", "toolwire.cli", "demo"], capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert normalise(proc.stdout) == normalise(marked_block("demo-output"))


def test_help_output_in_the_readme_is_real() -> None:
    env = {**os.environ, "COLUMNS": "80"}
    proc = subprocess.run([sys.executable, "-m", "toolwire.cli", "--help"], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0
    assert proc.stdout == marked_block("help-output")


def test_python_examples_leave_nothing_open(tmp_path: Path) -> None:
    """The README's Python blocks, run as one script under ``-X dev`` with warnings as errors:
    no connection, socket or file is left for the garbage collector to close."""
    script = tmp_path / "readme_examples.py"
    script.write_text("\n".join(blocks("python")), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning",
                           str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "ResourceWarning" not in proc.stderr and "unclosed" not in proc.stderr



def _command_flags() -> dict[str, list[set[str]]]:
    """Each command's options, each as the set of its spellings (``-v``, ``--verbose``), help
    left out."""
    import argparse

    from toolwire.cli.app import build_parser

    def flags(parser: argparse.ArgumentParser) -> list[set[str]]:
        return [set(a.option_strings) for a in parser._actions
                if a.option_strings and "--help" not in a.option_strings
                and a.help != argparse.SUPPRESS]

    def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        found = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)),
                     None)
        return dict(found.choices) if found is not None else {}

    found: dict[str, list[set[str]]] = {}
    for name, parser in commands(build_parser()).items():
        found[name] = flags(parser)
        for inner, below in commands(parser).items():  # toolwire mcp login ...
            found[f"{name} {inner}"] = flags(below)
    return found


def test_the_command_line_synopsis_names_every_flag_and_only_real_ones() -> None:
    """The synopsis under "The command line" lists each command with its flags: a flag it names
    exists on that command, and the commands written out in full (no "run's flags") name all of
    theirs."""
    block = next(b for b in blocks("text") if b.startswith("toolwire run TASK"))
    options = _command_flags()
    for entry in re.split(r"\n(?=toolwire )", block.strip()):
        words = entry.split()
        command = f"{words[1]} {words[2]}" if f"{words[1]} {words[2]}" in options else words[1]
        named = set(re.findall(r"(?<![\w-])--?[a-z][a-z-]*", entry))
        known = set().union(*options[command])
        assert named - known == set(), f"{command}: not flags of the command"
        if "run's flags" not in entry:
            left_out = [sorted(o) for o in options[command] if not o & named]
            assert left_out == [], f"{command}: flags the synopsis leaves out"
