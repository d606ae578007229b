"""Whether a record (a run log, a cassette) may decide anything, and where records may be written.

Owns `standing` (what a record's signatures say: this user's and unchanged, edited, another's,
unsigned; `toolwire.records`), `confirm` (before ``resume``, ``chat --resume`` or ``replay`` act
on a record that is not this user's unchanged one: what they would do, then a question on the
terminal or ``--trust-record``), `from_record` (the settings a resumed run takes from its log:
never the security settings of a record that is not this user's own) and `record_place` (a
``--log`` or ``--record`` inside the folder the model's commands can write is refused unless
bubblewrap binds it read-only). Imports the command line's `common`; the rest of toolwire
only inside its functions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NamedTuple

from toolwire.cli.common import UserError

SECURITY = ("approve", "sandbox")
"""The settings a record that is not this user's own never gives (with ``allow_network``)."""


class Standing(NamedTuple):
    """A record's kind (``run log`` or ``cassette``) and what its signatures say."""

    kind: str
    verdict: Any  # toolwire.signing.Verdict

    @property
    def own(self) -> bool:
        return bool(self.verdict.own)

    def describe(self) -> str:
        return str(self.verdict.describe(self.kind))


def standing(path: str | Path, default: str | None = None) -> Standing | None:
    """What the file at ``path`` is (a run log, signed line by line, or a cassette, signed
    whole) and what its signatures say (`toolwire.signing.Verdict`, ``exposed`` when it lies
    where commands could read the key). Anything else is None, or with ``default`` (the kind a
    caller already read it as) that kind, unsigned. The file is read once."""
    from toolwire import records, signing
    from toolwire.agent.runlog import is_log_text

    data = Path(path).read_bytes()
    text = data.decode("utf-8", "replace")
    key = records.record_key()
    if is_log_text(text):
        kind, verdict = "run log", signing.verify(data, key)
    elif text.lstrip().startswith("{") and '"toolwire_cassette"' in text:
        kind, verdict = "cassette", signing.verify_document(data, key)
    elif default is not None:
        kind, verdict = default, signing.Verdict("unsigned", 0, 1)
    else:
        return None
    where = records.exposed(path) if verdict.own else None
    return Standing(kind, verdict if where is None else signing.Verdict("exposed", where=where))


def from_record(args: argparse.Namespace, header: dict[str, Any], own: bool) -> None:
    """The settings a resumed run takes from its log's header where no flag gives them: the
    model, the folder and the tool set always; the approval policy, the sandbox and its
    network only from this user's own unchanged record (else the flags, the environment, the
    config file or the safe defaults decide)."""
    if not args.model and header.get("model"):
        args.model, args.model_source = header["model"], "the run log's model"
    context = header.get("context")
    context = context if isinstance(context, dict) else {}
    names = ("workdir", "tools", *SECURITY) if own else ("workdir", "tools")
    for name in names:
        if getattr(args, name) is None and isinstance(context.get(name), str):
            setattr(args, name, context[name])
    if own:
        args.allow_network = args.allow_network or context.get("allow_network") is True
    args.record_asked = {name: context.get(name) for name in (*SECURITY, "allow_network")}


def endpoint_line(model_id: str | None) -> str:
    """Where a model id sends requests and which credentials go with them, in words."""
    from toolwire.errors import ToolwireError
    from toolwire.http.endpoints import parse_model_id

    if not model_id:
        return "none named"
    try:
        endpoint = parse_model_id(model_id)
    except ToolwireError as exc:
        return f"{model_id} ({exc})"
    if endpoint.signer is not None or (endpoint.key is None and endpoint.key_var is None):
        sent = "your cloud credentials" if endpoint.signer is not None else "no key"
    else:
        sent = f"your {endpoint.key_var}" if endpoint.key is not None else "no key"
    return f"{endpoint.provider}:{endpoint.model} at {endpoint.base_url} ({sent} goes there)"


def confirm(args: argparse.Namespace, path: str, record: Standing, command: str,
            plan: list[tuple[str, str]]) -> None:
    """Go on only when the record is this user's unchanged one, or the person says so (on a
    terminal) or gave ``--trust-record``; else a `UserError` naming how to go on."""
    if record.own:
        return
    lines = [f"toolwire {command}: {path}: {record.describe()}.",
             f"Before acting on it, this is what toolwire {command} would do:"]
    width = max(len(k) for k, _ in plan)
    lines += [f"  {k.ljust(width)}  {v}" for k, v in plan]
    print("\n".join(lines), file=sys.stderr)
    if getattr(args, "trust_record", False):
        print("going on: --trust-record was given", file=sys.stderr)
        return
    if sys.stdin is not None and sys.stdin.isatty():
        try:
            answer = input("Go on with this record? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() in ("y", "yes"):
            return
        raise UserError(f"not confirmed: toolwire {command} did nothing with {path}")
    raise UserError(f"{path} is not your unchanged {record.kind}: toolwire {command} acts on "
                    "it only when you confirm. Run it on a terminal to be asked, or give "
                    "--trust-record to go on with what is listed above")


def security_plan(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The approval, sandbox and network lines of a plan, naming what the record asked for
    when that is not what will be used."""
    asked = getattr(args, "record_asked", {}) or {}
    rows = []
    for name, label, used in (("sandbox", "sandbox", args.sandbox),
                              ("approve", "approval", args.approve),
                              ("allow_network", "network", "on" if args.allow_network else "off")):
        wanted = asked.get(name)
        if name == "allow_network" and wanted is not None:
            wanted = "on" if wanted is True else "off"
        note = f" (the record asks for {wanted}; a record's own setting is not used)" \
            if wanted not in (None, used) else ""
        rows.append((label, f"{used}{note}"))
    return rows


def record_place(args: argparse.Namespace, workdir: Path, paths: list[tuple[str, str]]) -> list[
        Path]:
    """Refuse a record (``--log``, ``--record``) inside the folder the model's commands write,
    unless the commands run under bubblewrap, which binds it read-only: returns the paths to
    bind so (the record and its media folder)."""
    from toolwire import records

    if getattr(args, "tools", None) != "coding":
        return []
    inner = [(flag, Path(p)) for flag, p in paths if p and records.inside(Path(p), workdir)]
    if not inner:
        return []
    from toolwire.errors import ToolwireError
    from toolwire.tools.sandbox import Sandbox

    try:
        kind = Sandbox(args.sandbox or "auto").kind
    except ToolwireError:  # the sandbox's own error comes when the run builds it
        return []
    if kind == "bubblewrap":
        return [q for _, p in inner for q in (p.absolute(), Path(f"{p.absolute()}.media"))]
    flag, where = inner[0]
    how = "under Landlock" if kind == "landlock" else "unconfined (--sandbox off)"
    raise UserError(
        f"{flag} {where} is inside {workdir}, where the model's commands can write: they run "
        f"{how}, so they could rewrite the record. Give a path outside that folder, or leave "
        f"{flag} out (run logs go to {records.runs_folder(workdir)} by default)")


def add_trust_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trust-record", action="store_true",
                   help="act on a record that is not your own unchanged one (another user's, "
                        "edited, or unsigned) without asking; what it would do is still shown")


__all__ = ["Standing", "add_trust_option", "confirm", "endpoint_line", "from_record",
           "record_place", "security_plan", "standing"]
