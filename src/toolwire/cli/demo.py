"""The ``demo`` command: a small project whose tests fail, fixed by the agent while the
provider emulator replays the model's replies from a bundled script (or a real model works on
it), every tool running for real. Builds its run with `toolwire.cli.run`'s pieces; must not be
imported by the commands below it.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from toolwire.cli import checks
from toolwire.cli.common import UserError
from toolwire.cli.options import AgentOptions, color_options, sandbox_options, stream_option
from toolwire.cli.otel import add_otel_option
from toolwire.cli.outputs import Outputs, default_log
from toolwire.cli.run import _go, _terminal, check_agent_options
from toolwire.cli.terminal import finish
from toolwire.codecs import WIRES
from toolwire.http.providers import provider_for

DEMO_TASK = "The tests in this project fail. Find out why and fix it."


DEMO_TEST_COMMAND = (f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {shlex.quote(sys.executable)} -m pytest "
                     "-q -p no:cacheprovider")


def _pytest(workdir: Path) -> tuple[int, str]:
    proc = subprocess.run(DEMO_TEST_COMMAND, shell=True, cwd=workdir, capture_output=True,
                          text=True, timeout=300)
    lines = [ln for ln in proc.stdout.strip().splitlines() if ln.strip()]
    return proc.returncode, (lines[-1] if lines else "(no output)")


def demo_project(dest: Path) -> Path:
    """Copy the bundled demo project (whose tests fail) into ``dest``, an empty folder."""
    source = resources.files("toolwire") / "demo" / "project"
    dest.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        if item.is_file() and item.name.endswith((".py", ".md")):
            target = dest / item.name
            with target.open("x", encoding="utf-8") as file:  # never over a file already there
                file.write(item.read_text(encoding="utf-8"))
    return dest


def _demo_folder(path: str | None) -> Path | None:
    """The folder --workdir names, which must be empty or not there yet (None: a temp one)."""
    if path is None:
        return None
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--workdir {path} is a file; give an empty folder or a new path")
    if folder.is_dir() and any(folder.iterdir()):
        raise UserError(f"--workdir {path} is not empty, and the demo would copy its project "
                        "over what is there; give an empty folder or a new path")
    if not folder.parent.is_dir():
        raise UserError(f"--workdir {path}: the folder {folder.parent} does not exist")
    return folder.resolve()


def cmd_demo(args: argparse.Namespace) -> int:
    from toolwire.emulator import Emulator
    from toolwire.emulator.script import load_script
    from toolwire.http import client

    probe = subprocess.run([sys.executable, "-c", "import pytest"], capture_output=True)
    if probe.returncode != 0:
        raise UserError("the demo project's tests run with pytest, which is not installed: "
                        "pip install 'toolwire[demo]' (or pip install pytest)")
    chosen = _demo_folder(args.workdir)
    opts = check_agent_options(args)
    emulator = None
    if args.model:
        model = client.model(args.model)
    else:
        script_name = "recover.json" if args.scenario == "recover" else "script.json"
        script = load_script(Path(str(resources.files("toolwire") / "demo" / script_name)))
        emulator = Emulator(script).start()
        model = client.model(f"{provider_for(args.wire)}:scripted-demo@{emulator.base_url}",
                             env={})
    outputs = Outputs()
    if chosen is None:
        workdir = Path(tempfile.mkdtemp(prefix="toolwire-demo-"))
        outputs.tree(workdir)
    else:
        workdir = outputs.tree(outputs.folder(chosen)) if not chosen.exists() else chosen
    try:
        return _demo_in(args, opts, model, emulator, workdir, outputs)
    finally:
        if emulator is not None:
            emulator.stop()
        if chosen is None and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
            print(f"\nremoved the demo folder {workdir} (--keep keeps it)")


def _demo_in(args: argparse.Namespace, opts: AgentOptions, model: Any, emulator: Any,
             workdir: Path, outputs: Outputs) -> int:
    try:
        demo_project(workdir)
        before, before_line = _pytest(workdir)
    except BaseException:
        outputs.remove()
        raise
    print(f"workspace: {workdir}")
    print(f"tests before: {before_line}")
    if emulator is None:
        print(f"model: {args.model} (live)")
    else:
        script_name = "recover.json" if args.scenario == "recover" else "script.json"
        print(f"model: the model's replies are replayed from a script ({script_name}) by the "
              f"provider emulator at {emulator.base_url}, in the {args.wire} wire; every tool "
              "runs for real")
    print(f"task: {DEMO_TASK}\n")
    opts.tools, opts.approve = "coding", "auto"
    if args.scenario == "recover" and opts.stream is None:
        opts.stream = True  # broken argument JSON reaches a harness through a stream
    term = _terminal(opts, interactive=False)
    log = default_log(workdir, Outputs())
    result = _go(opts, model, workdir, term, Outputs(),
                 lambda a: a.arun(DEMO_TASK, log=log), DEMO_TEST_COMMAND)
    after, after_line = _pytest(workdir)
    code = finish(result, term, False, log)
    print(f"\ntests before: {before_line}\ntests after:  {after_line}")
    if before != 0 and after == 0:
        print("the agent fixed the project: its tests failed before and pass now")
        return code
    print("the project's tests still fail")
    return 1


def add_command(sub: Any, epilog: str) -> None:
    from toolwire.http.endpoints import MODEL_ID_FORMS

    forms = "; ".join(MODEL_ID_FORMS)
    p = sub.add_parser(
        "demo", epilog=epilog, help="watch the agent fix a small project, no key needed",
        description="Copy a small Python project whose tests fail into a temporary folder and "
                    "run the agent on it. The model's replies are replayed from a bundled "
                    "script by the provider emulator over loopback HTTP, in any wire; every "
                    "tool runs for real. `demo recover` replays bad calls (an unknown tool, a "
                    "wrong type, an unknown field, broken JSON) and shows each error going "
                    "back and the next call fixing it. --model runs the task on a real model.")
    p.add_argument("scenario", nargs="?", choices=("fix", "recover"), default="fix",
                   help="fix (default) or recover")
    p.add_argument("--wire", choices=WIRES, default=WIRES[0],
                   help="the wire the emulator speaks (default anthropic-messages)")
    p.add_argument("--model", metavar="ID", help=f"run on a real model instead: {forms}")
    p.add_argument("--workdir", metavar="DIR", help="an empty or new folder to copy the project "
                   "into, kept afterwards (default: a new temporary folder, removed at the end)")
    p.add_argument("--keep", action="store_true",
                   help="keep the temporary folder at the end (it is printed)")
    p.add_argument("--max-turns", type=checks.count, default=20, metavar="N",
                   help=argparse.SUPPRESS)
    sandbox_options(p)
    p.set_defaults(mcp=[], mcp_deferred=[])
    stream_option(p)
    add_otel_option(p)
    color_options(p)
    p.set_defaults(func=cmd_demo)
