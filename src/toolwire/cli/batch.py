"""The command line's ``batch`` command: many runs from a task file, on this machine or on Ray.

Owns the terminal side of a batch: the progress line (done / running / failed and tokens so
far) and the closing summary. Running the batch is `toolwire.batch.run_batch`, with ``--ray``
`toolwire.batch.on_ray.run_batch_ray`, and with ``--provider-batch``
`toolwire.batch.rounds.run_provider_batch`; nothing here decides anything a library user
could not.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from toolwire import _json
from toolwire.cli import chains, checks, settings
from toolwire.cli.common import UserError
from toolwire.cli.otel import add_otel_option

BAR = 24


def progress_text(p: Any, *, bar: bool = False) -> str:
    """One line saying where a batch stands (``p`` is a `toolwire.batch.BatchProgress`)."""
    rate = p.done / p.seconds if p.seconds > 0 else 0.0
    text = (f"{p.finished}/{p.total} done · {p.running} running · {p.failed} failed · "
            f"{p.tokens:,} tokens · {rate:.1f} runs/s")
    if getattr(p, "rounds", 0):  # through the provider's batch API
        text += f" · round {p.rounds}, {p.waiting} waiting · ${p.cost:.4f}"
        if p.provider:
            text += f" · provider: {p.provider}"
    if p.skipped:
        text += f" · {p.skipped} from an earlier run"
    if bar:
        filled = round(BAR * p.finished / p.total) if p.total else BAR
        text = "[" + "#" * filled + "." * (BAR - filled) + "] " + text
    return "batch: " + text


class ProgressLine:
    """Shows batch progress on ``err``: redrawn in place on a terminal, else one line at most
    every ``interval`` seconds (and always the first and the last)."""

    def __init__(self, err: TextIO | None = None, *, interval: float = 2.0,
                 live: bool | None = None) -> None:
        self.err = err or sys.stderr
        self.live = self.err.isatty() if live is None else live
        self.interval = 0.1 if self.live else interval
        self._last = -1e9
        self._shown = ""

    def __call__(self, progress: Any) -> None:
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        self.show(progress)

    def show(self, progress: Any) -> None:
        text = progress_text(progress, bar=self.live)
        if text == self._shown:
            return
        self._shown = text
        if self.live:
            width = shutil.get_terminal_size().columns - 1
            self.err.write("\r\x1b[2K" + text[:width])
        else:
            self.err.write(text + "\n")
        self.err.flush()

    def close(self) -> None:
        if self.live and self._shown:
            self.err.write("\n")
            self.err.flush()


def _enough_files(concurrency: int) -> None:
    """Each run in flight holds a connection and its run log open: raise the soft limit on
    open files toward the hard one when the default would be too low."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 3 * concurrency + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        top = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, top), hard))


def check_batch(args: argparse.Namespace) -> None:
    """Everything a batch needs, checked before any file or folder is made."""
    from toolwire.batch.files import read_tasks

    checks.read_text(args.tasks, "TASKS")
    settings.apply(args)
    _check_provider_batch(args)
    checks.model_id(args.model, args.model_source, keys=True)
    chains.check_fallbacks(args, keys=True)
    checks.output_path(args.out, "--out")
    if Path(args.out).exists() and Path(args.out).samefile(args.tasks):
        raise UserError(f"--out {args.out} is the task file itself; give another path for the "
                        "results")
    if Path(args.out).exists():
        _check_results(args.out)
    if args.runs is not None and Path(args.runs).exists() and not Path(args.runs).is_dir():
        raise UserError(f"--runs {args.runs} is a file; give a folder (made if missing)")
    if args.ray is not None:
        checks.need_extra("ray", "--ray")
        if args.ray.startswith("ray://"):
            checks.need_package("grpc", f"--ray {args.ray} (Ray's client)", "ray[client]")
    if not read_tasks(args.tasks):
        raise UserError(f"TASKS {args.tasks} holds no tasks; write one JSON object per line, "
                        'like {"id": 1, "prompt": "..."}')


def _check_provider_batch(args: argparse.Namespace) -> None:
    """--provider-batch needs a provider with a batch API; its flags need it."""
    if not args.provider_batch:
        for flag, value in (("--max-wait", args.max_wait), ("--finish-live", args.finish_live),
                            ("--poll", args.poll)):
            if value:
                raise UserError(f"{flag} is for --provider-batch; add --provider-batch or "
                                f"leave {flag} out")
        return
    if args.ray is not None:
        raise UserError("--provider-batch and --ray cannot go together: a provider batch "
                        "waits on the provider, with nothing for a cluster to do; pick one")
    if getattr(args, "fallback", None):
        raise UserError("--provider-batch and --fallback cannot go together: a provider's "
                        "batch job answers with one model; leave out --fallback")
    if args.finish_live and args.max_wait is None:
        raise UserError("--finish-live needs --max-wait: it says when to stop waiting for the "
                        "provider's jobs and send the remaining rounds live")
    from toolwire.batch.apis import unsupported

    why = unsupported(str(args.model or "").split(":", 1)[0])
    if why is not None:
        raise UserError(why)


def _check_results(path: str) -> None:
    """An existing --out must be a results file: appending to anything else would damage it."""

    text = checks.read_text(path, "--out")
    first = text.lstrip().split("\n", 1)[0]
    if not first:
        return
    try:
        line = _json.loads(first)
    except ValueError:
        line = None
    if not isinstance(line, dict) or ("id" not in line and "batch_job" not in line):
        raise UserError(f"--out {path} holds something other than batch results (its first "
                        "line is not a result); give a new path, or the results file of an "
                        "earlier batch to continue it")


def cmd_batch(args: argparse.Namespace) -> int:
    from toolwire.batch.runner import BatchProgress, default_runs_dir, run_batch

    check_batch(args)
    options: dict[str, Any] = {}
    for key in ("max_turns", "token_budget", "time_limit"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    if args.provider_batch:  # every run waits on the provider at once, its log open
        from toolwire.batch.files import read_tasks

        _enough_files(len(read_tasks(args.tasks)))
    else:
        _enough_files(args.concurrency)
    model = chains.for_batch(args)
    line = ProgressLine(sys.stderr) if not args.quiet else None
    last: list[BatchProgress] = []

    def on_progress(p: BatchProgress) -> None:
        last[:] = [p]
        if line is not None:
            line(p)

    common: dict[str, Any] = {
        "concurrency": args.concurrency, "runs": args.runs, "options": options,
        "on_progress": on_progress, "retry_failed": args.retry_failed,
    }
    try:
        if args.provider_batch:
            from toolwire.batch.rounds import run_provider_batch

            summary = asyncio.run(run_provider_batch(
                args.tasks, args.model, args.out, poll=args.poll or 30.0,
                max_wait=args.max_wait, finish_live=args.finish_live, **common))
        elif args.ray is not None:
            from toolwire.batch.on_ray import run_batch_ray

            summary = run_batch_ray(args.tasks, args.model, args.out, address=args.ray or None,
                                    cpus_per_run=args.ray_cpus_per_run,
                                    num_cpus=args.ray_cpus, **common)
        else:
            summary = asyncio.run(chains.closing(
                run_batch(args.tasks, model, args.out, **common), model))
    finally:
        if line is not None:
            if last:
                line.show(last[0])
            line.close()
    rate = summary.done / summary.seconds if summary.seconds > 0 else 0.0
    runs = args.runs or default_runs_dir(args.out)
    print(f"batch: {summary.done} run(s) in {summary.seconds:.1f} s ({rate:.1f} runs/s), "
          f"{summary.failed} without an answer, {summary.tokens:,} tokens; "
          f"{summary.skipped} already in {args.out}", file=sys.stderr)
    if summary.rounds:
        print(f"batch: {summary.rounds} round(s) through the provider's batch API, "
              f"${summary.cost:.4f} at the batch price", file=sys.stderr)
    if summary.waiting:
        print(f"batch: stopped after --max-wait with {summary.waiting} task(s) waiting on the "
              "provider's jobs; run the same command again to pick them up (they are not "
              "sent again)", file=sys.stderr)
    print(f"results: {args.out}; run logs and working folders: {runs}", file=sys.stderr)
    return 0 if summary.all_ok else 1


def add_commands(sub: Any, epilog: str) -> None:
    from toolwire.http.endpoints import MODEL_ID_FORMS

    p = sub.add_parser(
        "batch", epilog=epilog, help="run many tasks at once, resumably, here or on Ray",
        description="Run every task in TASKS (JSONL: one object per line with id, prompt and "
                    "optionally workdir, tools, limits, system, output, meta; see "
                    "toolwire.batch) with at most --concurrency runs in flight. Each result "
                    "is appended to --out as its run finishes (id, answer, stop reason, usage, "
                    "turns, seconds, run log path); rerunning the same command skips the ids "
                    "already there and continues cut-short runs from their logs. One backoff "
                    "is shared by every run when the provider rate-limits. With "
                    "--provider-batch the model calls go through the provider's batch API "
                    "instead, round by round, at its batch price. Exit 1 when some task has "
                    "no answer.")
    p.add_argument("tasks", metavar="TASKS", help="the task file (JSONL)")
    p.add_argument("--model", metavar="ID",
                   help="model id: " + "; ".join(MODEL_ID_FORMS) + " (default: TOOLWIRE_MODEL, "
                        "or model in the config file)")
    chains.fallback_options(p)
    p.add_argument("--out", required=True, metavar="RESULTS",
                   help="the results file (JSONL), appended to")
    p.add_argument("--concurrency", type=checks.count, default=10, metavar="N",
                   help="runs in flight at most (default 10)")
    p.add_argument("--runs", metavar="DIR",
                   help="where run logs and working folders go (default: RESULTS.runs/ next to "
                        "the results file, with the results file's name)")
    p.add_argument("--max-turns", type=checks.count, metavar="N",
                   help="model calls per run at most, unless a task sets its own (default 50)")
    p.add_argument("--token-budget", type=checks.count, metavar="N",
                   help="tokens per run at most")
    p.add_argument("--time-limit", type=checks.positive, metavar="S",
                   help="seconds per run at most")
    p.add_argument("--retry-failed", action="store_true",
                   help="also rerun ids whose result says error, provider_error or "
                        "bad_reply")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_otel_option(p)
    p.add_argument("--provider-batch", action="store_true",
                   help="send each round of model calls through the provider's batch API "
                        "(OpenAI, Anthropic, Gemini) at its batch price; answers can take "
                        "hours; a stopped batch continues where it was (see docs/batch.md)")
    p.add_argument("--max-wait", type=checks.positive, metavar="S",
                   help="with --provider-batch: seconds to wait on the provider at most, "
                        "then stop (run again to continue) or, with --finish-live, go live")
    p.add_argument("--finish-live", action="store_true",
                   help="with --provider-batch and --max-wait: past the wait, cancel the "
                        "provider's jobs and send the remaining rounds one request at a time")
    p.add_argument("--poll", type=checks.positive, metavar="S",
                   help="with --provider-batch: seconds between two looks at a job "
                        "(default 30)")
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="run on Ray: each run a Ray task; ADDRESS of a running cluster, or none "
                        "for a local Ray instance (needs toolwire[ray]); put it after TASKS")
    p.add_argument("--ray-cpus-per-run", type=checks.positive, default=1.0, metavar="F",
                   help="CPUs each Ray task asks for (default 1; runs mostly wait, so 0.25 "
                        "runs four per CPU)")
    p.add_argument("--ray-cpus", type=checks.count, metavar="N",
                   help="CPUs of the local Ray instance (default: all)")
    p.set_defaults(func=cmd_batch)
