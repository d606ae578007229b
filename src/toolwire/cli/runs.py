"""The ``runs`` command: the runs whose logs a folder keeps, newest first.

Owns `cmd_runs` and its parser. Each run is one line: when it started, how it ended (its stop,
``interrupted`` for a log with no stop line, ``unreadable`` for one that cannot be read), its
model and the start of its task; under it, the command that goes on with it. Reads the logs
where `toolwire.cli.outputs.runs_folder` says a run writes them; nothing below imports it.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any

from toolwire.cli import checks
from toolwire.cli.common import EXIT_OK, for_people, one_line
from toolwire.cli.outputs import runs_folder

TASK_CHARS = 60


def _row(path: Path) -> dict[str, Any]:
    from toolwire.agent.runlog import read_log
    from toolwire.errors import ToolwireError

    try:
        logged = read_log(path)
    except (ToolwireError, OSError, UnicodeDecodeError, ValueError) as exc:
        return {"log": str(path), "status": "unreadable", "error": one_line(exc)}
    header = logged.header
    task = next((m.text for m in logged.messages if m.role == "user" and not m.tool_results),
                "")
    stamp = header.get("t")
    when = (dt.datetime.fromtimestamp(stamp).isoformat(" ", "seconds")
            if isinstance(stamp, int | float) else None)
    status = logged.stop or "interrupted"
    if logged.awaiting:
        go_on = (f"toolwire resume {path} " + " ".join(f"--allow {i}" for i in logged.awaiting))
    elif status == "answered":
        go_on = f"toolwire chat --resume {path}"
    else:
        go_on = f"toolwire resume {path}"
    return {"log": str(path), "status": status, "model": header.get("model"), "started": when,
            "task": task, "turns": logged.turns, "go_on": go_on}


def cmd_runs(args: argparse.Namespace) -> int:
    import json

    folder = runs_folder(checks.workdir(args.workdir or "."))
    logs = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True) \
        if folder.is_dir() else []
    rows = [_row(path) for path in logs]
    if args.json:
        print(for_people(json.dumps(rows, indent=2, ensure_ascii=False)))
        return EXIT_OK
    if not rows:
        print(f"no runs in {folder}")
        return EXIT_OK
    for row in rows:
        if row["status"] == "unreadable":
            print(f"{row['log']}: unreadable ({row['error']})")
            continue
        task = " ".join(row["task"].split())
        task = task if len(task) <= TASK_CHARS else task[:TASK_CHARS - 1] + "…"
        print(for_people(f"{row['started'] or '-'}  {row['status']:<17} {row['model']}  "
                         f"{task!r}\n    {row['go_on']}"))
    return EXIT_OK


def add_command(sub: Any, epilog: str) -> None:
    p = sub.add_parser(
        "runs", epilog=epilog, help="list the runs recorded in a folder and how to go on",
        description="List the runs whose logs a folder keeps (newest first): when each "
                    "started, how it ended, its model and task, and the command that goes on "
                    "with it.")
    p.add_argument("--workdir", metavar="DIR",
                   help="the folder the runs worked in (default: this one)")
    p.add_argument("--json", action="store_true", help="print the runs as JSON")
    p.set_defaults(func=cmd_runs)
