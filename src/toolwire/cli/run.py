"""The command line's agent commands: ``run``, ``resume`` and ``mcp-serve``, and what every
command that runs an agent shares (checking its options, building its agent, its outputs); the
options themselves, flags and typed values, are `toolwire.cli.options`'.

Owns the terminal side of a run: the live status line, streamed text, approval prompts, the
``ask_user`` prompt, and the closing summary. The loop, the tools and the model are library
calls; nothing here decides anything a library user could not.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from toolwire.cli import chains, checks, settings, trust
from toolwire.cli.common import UserError
from toolwire.cli.options import AgentOptions, agent_options
from toolwire.cli.outputs import Outputs, default_log, protected
from toolwire.cli.terminal import Terminal, answerer, approver, finish, policy
from toolwire.escapes import neutral

SYSTEM = ("You are a careful software engineer working in the project folder you were given. "
          "Use the tools to inspect and change it. When you are done, say what you found and "
          "what you changed.")


def check_agent_options(args: argparse.Namespace) -> AgentOptions:
    """Read a command's settled arguments into its `AgentOptions` and make the checks every
    agent command shares, before anything starts."""
    opts = AgentOptions.read(args)
    if opts.mcp_servers_given:
        checks.need_extra("mcp", "--mcp" if opts.mcp else "--mcp-deferred")
        opts.mcp_access = _mcp_access(opts)
    elif opts.mcp_header:
        raise UserError("--mcp-header goes with an MCP server given by URL: add --mcp URL")
    if opts.model:
        checks.model_id(opts.model, opts.model_source or "--model")
    chains.check_fallbacks(args)
    if opts.temperature is not None and opts.reasoning not in (None, "off"):
        raise UserError("--temperature and --reasoning together: reasoning models refuse a "
                        "sampling temperature; give one of them (or --reasoning off)")
    if opts.model:
        for line in checks.not_sent(opts.model, opts.temperature):
            print(f"note: {line}", file=sys.stderr)
    return opts


def _mcp_access(opts: AgentOptions) -> dict[str, Any]:
    """What the MCP servers given by URL are sent: the config file's sections, --mcp-header."""
    from toolwire.errors import ConfigError
    from toolwire.mcp.access import access_map

    urls = opts.mcp_servers_given
    headers = opts.mcp_header
    if headers and not any(u.strip().startswith(("http://", "https://")) for u in urls):
        raise UserError("--mcp-header is for MCP servers given by URL; the --mcp servers "
                        "given are commands (give them credentials in their environment)")
    try:
        return access_map(urls, settings.mcp_table(), headers)
    except ConfigError as exc:
        if str(exc).startswith("--mcp-header"):
            raise
        raise UserError(f"{settings.config_path()}: {exc}") from None


def _agent(opts: AgentOptions, model: Any, workdir: Path, term: Terminal,
           test_command: str | None = None, journal: Any = None) -> Any:
    from toolwire.agent.loop import Agent
    from toolwire.agent.settings import Limits, RequestSettings, ToolPolicy
    from toolwire.tools.coding import coding_tools, describe_call
    from toolwire.tools.sandbox import Sandbox

    sandbox = Sandbox(opts.sandbox or "auto", pass_env=opts.pass_env, protect=opts.protect)
    network = opts.allow_network
    stream = streaming(opts, term)
    tools: list[Any] = []
    if opts.tools == "coding":
        tools = coding_tools(workdir, answer=answerer(term), test_command=test_command,
                             sandbox=sandbox, allow_network=network, journal=journal)

    def shown(req: Any) -> str:
        return describe_call(req.call.name, req.arguments, sandbox=sandbox,
                             test_command=test_command, allow_network=network)

    system = opts.system or SYSTEM
    builtin: list[Any] = list(tools)
    deferred: Collection[str] = ()
    sources: list[Any] = []
    if opts.mcp_servers_given:
        from toolwire.mcp import open_servers

        servers = open_servers(opts.mcp, deferred=opts.mcp_deferred,
                               resources=opts.mcp_resources,
                               reserved=[t.name for t in tools], cwd=str(workdir),
                               answer=answerer(term, ""), access=opts.mcp_access)
        opts.mcp_servers = servers  # closed by the command when the run ends
        for note in servers.notes:
            print(neutral(f"mcp: {note}"), file=sys.stderr)  # a server's words
        tools = [*builtin, *servers.tools]
        deferred, sources = servers.deferred, [servers.tool_source]
        if opts.mcp_instructions:
            system = servers.system_prompt(system) or system
    usual = sandbox.kind == "bubblewrap" and (opts.sandbox or "auto") == "auto" and not network
    if opts.tools == "coding" and (not usual or opts.verbose):
        # said once everything the run needs has started; the usual confinement only with -v
        print(f"sandbox: {sandbox.describe(network)}", file=sys.stderr)
    return Agent(
        model=model, tools=tools, system=system, on_event=term.on_event,
        context=_context(opts, model, workdir, test_command),
        limits=Limits(max_turns=opts.max_turns, time_limit=opts.max_seconds),
        request=RequestSettings(temperature=opts.temperature, reasoning=opts.reasoning,
                                stream=stream),
        tool_policy=ToolPolicy(
            approval=policy(opts.approve or "ask", sandbox, [t.name for t in builtin],
                            _trusted(tools[len(builtin):])),
            approve=approver(term, shown), eager=stream, deferred=deferred, sources=sources))


def _trusted(tools: list[Any]) -> list[str]:
    """The MCP tools their server marks read-only, when the ``mcp_read_only`` setting lets
    them run without approval."""
    if not tools or settings.resolve({})["mcp_read_only"].value != "allow":
        return []
    return [t.name for t in tools if t.read_only]


def streaming(opts: AgentOptions, term: Terminal) -> bool:
    """Whether replies stream: ``--stream``/``--no-stream`` when given, else when the model's
    text goes to a terminal (and not as ``--json``)."""
    if opts.stream is not None:
        return opts.stream
    return not opts.json and term.out.isatty()


def _context(opts: AgentOptions, model: Any, workdir: Path,
             test_command: str | None = None) -> dict[str, Any]:
    """What a resume or a replay in another process needs to rebuild this run's agent."""
    from toolwire.protocol import model_name

    endpoint = getattr(model, "endpoint", None)
    return {"workdir": str(workdir), "tools": opts.tools, "approve": opts.approve,
            "sandbox": opts.sandbox, "allow_network": opts.allow_network,
            "model": model_name(model), "base_url": getattr(endpoint, "base_url", None),
            "test_command": test_command}


def from_log(args: argparse.Namespace, path: str, logged: Any, command: str,
             decisions: bool = False) -> tuple[Path, AgentOptions]:
    """The settings a resumed run takes from its log (`trust.from_record`: the security
    settings only from this user's own unchanged log), the flags and the config file; then,
    for a log that is not this user's own, what the run would do and the person's go-ahead
    (`trust.confirm`). With ``decisions`` (``--allow``, ``--deny``) given, later calls that
    need approval wait as well unless an approval policy is given. Returns the folder, checked,
    and the options."""
    record = trust.standing(path, "run log")
    assert record is not None  # a default kind was given
    trust.from_record(args, logged.header, record.own)
    if decisions and args.approve is None:
        args.approve = "defer"  # the decisions answer waiting calls; later ones wait as well
    args.tools = args.tools or "coding"
    if args.tools not in ("coding", "none"):
        raise UserError(f"the log's tool set {args.tools!r} is not one this toolwire knows; "
                        "give --tools coding or --tools none")
    workdir = checks.workdir(args.workdir or ".")
    settings.apply(args)
    opts = check_agent_options(args)
    if not record.own:
        context = logged.header.get("context")
        test = context.get("test_command") if isinstance(context, dict) else None
        tools = ("the model's commands run there (run_command, run_tests" +
                 (f": {test}" if isinstance(test, str) and test else "") + ")"
                 if opts.tools == "coding" else "none that run commands")
        mcp = opts.mcp_servers_given
        plan = [("model", trust.endpoint_line(opts.model)), ("folder", str(workdir)),
                ("tools", tools + (f"; MCP servers: {', '.join(mcp)}" if mcp else "")),
                *trust.security_plan(args)]
        trust.confirm(args, path, record, command, plan)
    return workdir, opts


def _decisions(args: argparse.Namespace, logged: Any) -> dict[str, Any]:
    """``--allow`` and ``--deny`` as decisions by call id, each for a call the log waits on."""
    import getpass

    from toolwire.agent.dispatch import Approval

    waiting = set(logged.awaiting) | {c.id for c in logged.pending}
    by = f"{getpass.getuser()} (toolwire resume)"
    decided: dict[str, Any] = {}
    for call_id, allowed in [*((i, True) for i in args.allow), *((i, False) for i in args.deny)]:
        if call_id not in waiting:
            raise UserError(f"call {call_id!r} is not waiting for a decision in {args.log}; "
                            f"the calls waiting are: {', '.join(sorted(waiting)) or 'none'}")
        if call_id in decided:
            raise UserError(f"call {call_id!r} is given both --allow and --deny; choose one")
        decided[call_id] = (Approval.allow(by=by) if allowed
                            else Approval.deny(args.reason, by=by))
    return decided


def _close_mcp(opts: AgentOptions) -> None:
    if opts.mcp_servers is not None:
        opts.mcp_servers.close()


def _terminal(opts: AgentOptions, **kwargs: Any) -> Terminal:
    color = "never" if opts.no_color else opts.color
    color = settings.resolve({"color": color})["color"].value or "auto"
    return Terminal(out=sys.stderr if opts.json else sys.stdout, verbose=opts.verbose,
                    color=color, **kwargs)


def _go(opts: AgentOptions, model: Any, workdir: Path, term: Terminal, outputs: Outputs,
        start: Any, test_command: str | None = None) -> Any:
    """Build the agent, then run ``start(agent)``; a run that fails to start leaves nothing."""

    async def go(agent: Any) -> Any:
        from toolwire.cli.interrupts import signals_to_the_main_thread

        signals_to_the_main_thread(asyncio.get_running_loop())
        try:
            return await start(agent)
        finally:
            await model.aclose()

    from toolwire.cli.interrupts import interrupts

    started = False
    try:
        agent = _agent(opts, model, workdir, term, test_command)
        started = True
        with interrupts().caught():
            return asyncio.run(go(agent))
    except BaseException:
        if not started:  # a run that began keeps its log, whatever ended it
            asyncio.run(model.aclose())
            outputs.remove()
        raise
    finally:
        _close_mcp(opts)


def _task(args: argparse.Namespace) -> str:
    """The task: TASK, standard input for ``-``, or ``--task-file``; never empty."""
    if args.task_file is not None and args.task is not None:
        raise UserError("give TASK or --task-file FILE, not both")
    if args.task_file is not None:
        where = f"--task-file {args.task_file}"
        task = checks.read_text(args.task_file, "--task-file")
    elif args.task == "-":
        if sys.stdin.isatty():
            print("reading the task from standard input; end it with Ctrl-D", file=sys.stderr)
        try:
            task = sys.stdin.read()
        except UnicodeDecodeError:
            raise UserError("the task on standard input is not UTF-8 text") from None
        where = "the task read from standard input"
    elif args.task is None:
        raise UserError("no task: give TASK, - to read it from standard input, or "
                        "--task-file FILE")
    else:
        task, where = args.task, "TASK"
    if not task.strip():
        raise UserError(f"{where} is empty; say what the agent should do")
    return task


def cmd_run(args: argparse.Namespace) -> int:
    from toolwire.http import client

    workdir = checks.workdir(args.workdir or ".")
    args.tools = args.tools or "coding"
    args.task = _task(args)
    attached = [checks.attachment(path) for path in args.attach]
    settings.apply(args)
    opts = check_agent_options(args)
    checks.attachments_fit(attached, args.attach, checks.wire_of(opts.model_id))
    opts.protect = trust.record_place(args, workdir, [("--log", args.log),
                                                      ("--record", args.record)])
    outputs = Outputs()
    log = str(outputs.file(checks.output_path(args.log, "--log", fresh=True))) if args.log else None
    protected(opts.protect, outputs)
    transport, limits = None, settings.limits(args)
    if args.record:
        from toolwire.http.cassette import RecordTransport
        from toolwire.http.transport import HttpTransport

        record = outputs.file(checks.output_path(args.record, "--record", fresh=True))
        transport = RecordTransport(record, HttpTransport(limits=limits))
    model = chains.chained(args, client.model(opts.model_id, transport=transport, limits=limits),
                           transport=transport)
    term = _terminal(opts)
    log = args.stop_log = log or default_log(workdir, outputs)
    task = [args.task, *attached] if attached else args.task
    result = _go(opts, model, workdir, term, outputs, lambda a: a.arun(task, log=log))
    return finish(result, term, opts.json, log)


def cmd_resume(args: argparse.Namespace) -> int:
    from toolwire.agent.runlog import read_log
    from toolwire.http import client

    checks.read_text(args.log, "LOG")
    if args.workdir is not None:
        checks.workdir(args.workdir)
    logged = read_log(args.log)
    workdir, opts = from_log(args, args.log, logged, "resume",
                             decisions=bool(args.allow or args.deny))
    decisions = _decisions(args, logged)
    model = chains.chained(args, client.model(opts.model_id, limits=settings.limits(args)))
    term = _terminal(opts)
    args.stop_log = args.log
    result = _go(opts, model, workdir, term, Outputs(),
                 lambda a: a.aresume(args.log, decisions=decisions))
    return finish(result, term, opts.json, args.log)


def cmd_mcp_serve(args: argparse.Namespace) -> int:
    from toolwire.mcp.cli import serve_from_args

    checks.need_extra("mcp", "mcp-serve")
    if args.workdir is not None:
        checks.workdir(args.workdir)
    if args.target:
        module = args.target.partition(":")[0]
        if module.endswith(".py") or "/" in module:
            checks.read_text(module, "the tools file")
    if args.transport == "http":
        checks.free_port(args.port)
    return int(serve_from_args(args))


def add_commands(sub: Any, epilog: str) -> None:
    from toolwire.http.endpoints import MODEL_ID_FORMS

    forms = "; ".join(MODEL_ID_FORMS)

    p = sub.add_parser(
        "run", epilog=epilog, help="run the agent on a task",
        description="Run the agent on TASK with the built-in coding tools in --workdir. A live "
                    "status line shows the turn, the tool running and the tokens so far. Tools "
                    "that change things ask before running. The run log is always written "
                    "(default: in toolwire's state directory, ~/.local/state/toolwire/runs/); "
                    "`toolwire resume LOG` continues it.")
    p.add_argument("task", metavar="TASK", nargs="?",
                   help="what to do; - reads it from standard input")
    p.add_argument("--task-file", metavar="FILE",
                   help="read the task from this text file (for a task too long to type)")
    p.add_argument("--model", metavar="ID", help=f"model id: {forms} (default: "
                   "TOOLWIRE_MODEL, or model in the config file; see toolwire config show)")
    p.add_argument("--log", metavar="FILE", help="where to write the run log (a new file)")
    p.add_argument("--record", metavar="FILE",
                   help="also write every request and reply to this cassette (a new file), "
                        "for toolwire replay or the cassette tests")
    p.add_argument("--system", metavar="TEXT",
                   help="the system prompt (default: one for working on a software project)")
    p.add_argument("--temperature", type=checks.temperature, metavar="T",
                   help="sampling temperature, 0 or more (default: the provider's)")
    p.add_argument("--attach", action="append", default=[], metavar="FILE",
                   help="send an image, PDF or audio file with the task (repeatable; the type "
                        "is read from the file's first bytes)")
    agent_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "resume", epilog=epilog, help="continue a run from its log",
        description="Continue the run recorded in LOG. Calls that were made but never "
                    "answered get a result: re-run if the tool is idempotent, else an error "
                    "saying the run was interrupted.")
    p.add_argument("log", metavar="LOG")
    p.add_argument("--model", metavar="ID", help="model id (default: the one in the log)")
    p.add_argument("--allow", action="append", default=[], metavar="ID",
                   help="allow the call ID that the run stopped to wait for (repeatable)")
    p.add_argument("--deny", action="append", default=[], metavar="ID",
                   help="deny the call ID that the run stopped to wait for (repeatable)")
    p.add_argument("--reason", metavar="TEXT",
                   help="why the calls given to --deny are denied (the model is told)")
    trust.add_trust_option(p)
    agent_options(p)
    p.set_defaults(func=cmd_resume)

    from toolwire.mcp.cli import add_serve_arguments

    p = sub.add_parser(
        "mcp-serve", epilog=epilog, help="serve toolwire tools to MCP clients",
        description="Expose toolwire tools as a Model Context Protocol server, over stdio or "
                    "streamable HTTP, with the same schemas, validation messages and workspace "
                    "confinement: a list of tools named MODULE:ATTR, or the built-in coding "
                    "tools with --builtin coding --workdir DIR. Needs toolwire[mcp].")
    add_serve_arguments(p)
    p.set_defaults(func=cmd_mcp_serve)
