"""``toolwire replay`` of a conversation the proxy recorded: its model side only.

Owns `replay_model_side`. A ``toolwire proxy --record`` cassette holds each request the proxy
sent upstream and the reply it got; the tools were the client's own (an agent's Read or Bash),
which toolwire cannot run, so their results are taken from the recording (each recorded request
already holds them). Each recorded request is sent again, over loopback HTTP, through the
provider emulator in the recorded wire or ``--wire``, which checks it against that wire's rules
and answers with the recorded reply; the reply as read back is compared with the recorded one
(its text, its calls' names and arguments, its stop reason). Exit 0 when every turn comes back
as recorded, 1 at the first that does not (or that the emulator refuses), with what differed.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
from typing import Any

from toolwire.cli.common import EXIT_OK, EXIT_PROBLEM, UserError
from toolwire.escapes import neutral


def _said(reply: Any) -> list[str]:
    """What a reply says, as lines every wire carries: its text, each call's name and
    arguments, and its stop reason."""
    from toolwire.transcript import TextPart, ToolCallPart

    lines = []
    for part in reply.message.parts:
        if isinstance(part, TextPart) and part.text:
            lines.append(f"text: {part.text}")
        elif isinstance(part, ToolCallPart):
            args = json.dumps(part.arguments, sort_keys=True, ensure_ascii=False)
            lines.append(f"call: {part.name} {args}")
    return [*lines, f"stop: {reply.stop}"]


def replay_model_side(args: argparse.Namespace, rec: Any) -> int:
    """Send each turn of the proxy's recording ``rec`` (a `toolwire.cli.recording.Recording`)
    again through the emulator, and compare each reply with the recorded one."""
    if args.workdir or args.in_place or args.sandbox:
        raise UserError(f"{args.log} is a conversation the proxy recorded: its tools were the "
                        "client's, so replay runs none and takes their results from the "
                        "recording; leave out --workdir, --in-place and --sandbox")
    wire = args.wire or rec.wire
    first, got, error = asyncio.run(_play(rec, wire))
    turns = len(rec.turns)
    if first is None:
        print(f"replayed the model side of {turns} turn(s) of {args.log} in the {wire} wire "
              "(the client's tool results as recorded): every reply is as recorded")
        return EXIT_OK
    recorded = _said(rec.turns[first].reply)
    print(f"turn {first + 1} of {turns}:", end=" ")
    if error is not None:
        print(f"the emulator refused the recorded request in the {wire} wire: "
              f"{neutral(error)}")
    else:
        print(f"the reply read back in the {wire} wire differs from the recorded one")
        print(neutral("".join(difflib.unified_diff(
            [line + "\n" for line in recorded], [line + "\n" for line in got],
            fromfile="recorded", tofile="replayed")).rstrip("\n")))
    return EXIT_PROBLEM


async def _play(rec: Any, wire: str) -> tuple[int | None, list[str], str | None]:
    """The first turn whose reply differs (None when none does), what it said, and the
    error that stopped it."""
    from toolwire.emulator import Emulator
    from toolwire.errors import ToolwireError
    from toolwire.http import client
    from toolwire.http.providers import provider_for
    from toolwire.transcript import replace

    at = [0]

    def answer(request: Any, _: str) -> Any:
        reply = rec.turns[at[0]].reply  # another wire's encoder writes its own stop value
        return reply if wire == rec.wire else replace(reply, raw_stop=None)

    with Emulator(answer) as emu:
        model = client.model(f"{provider_for(wire)}:replay@{emu.base_url}", env={},
                             retry=client.RetryPolicy(max_attempts=1))
        try:
            for n, request in enumerate(rec.requests):
                at[0] = n
                try:
                    reply = await model.complete(replace(request, model="replay"))
                except ToolwireError as exc:
                    return n, [], f"{type(exc).__name__}: {exc}"
                said = _said(reply)
                if said != _said(rec.turns[n].reply):
                    return n, said, None
        finally:
            await model.aclose()
    return None, [], None


__all__ = ["replay_model_side"]
