"""What the same tasks cost live and through the provider's batch API, on the emulator's billing.

For each batch API (OpenAI Chat Completions, OpenAI Responses, Anthropic Message Batches,
Gemini batch mode) the same ``TASKS`` tasks run twice against an emulator with billing on
(prompts counted, prompt caches modelled, output estimated from each reply): once with
`toolwire.batch.run_batch`, one request at a time per run, and once with
`toolwire.batch.run_provider_batch`, round by round through the emulated batch API. Each task
has a system prompt, a tool, ``CALLS`` tool calls and an answer. The cost is the sum of the
result lines' ``usage.cost``: the price table's standard prices live, its batch prices (or half
the standard price where it has none) through the batch API. The ratio is batch over live.

Run: ``python bench/batch.py`` (``--tasks N``, ``--calls N``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import table

MODELS = {
    "OpenAI Chat Completions": "openai:gpt-4o-mini@{}",
    "OpenAI Responses": "openai-responses:gpt-4o-mini@{}",
    "Anthropic Message Batches": "anthropic:claude-sonnet-4-5@{}",
    "Gemini batch mode": "gemini:gemini-2.5-flash@{}",
}
SYSTEM = ("You review small Python projects. Look at the files before you answer, say what "
          "you found in two sentences, and name the file that matters most. " * 8)


def responder(calls: int) -> Any:
    from toolwire.transcript import Message, Reply, ToolCallPart

    def reply(request: Any, wire: str) -> Reply:
        turn = sum(1 for m in request.messages if m.role == "tool")
        if turn < calls:
            call = ToolCallPart(id=f"call_{turn}", name="list_files", arguments={})
            return Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls")
        return Reply(message=Message.assistant(
            "The project holds one module and its tests; the tests cover the parser only. "
            "The file that matters most is calc.py."))

    return reply


async def one(form: str, n: int, calls: int, *, provider: bool, folder: Path) -> dict[str, Any]:
    from toolwire.batch import run_batch, run_provider_batch
    from toolwire.emulator import Emulator

    rows = [{"id": f"t{i}", "prompt": f"Review project number {i}.", "system": SYSTEM,
             "tools": ["list_files"]} for i in range(n)]
    out = folder / ("provider.jsonl" if provider else "live.jsonl")
    async with Emulator(responder(calls), bill=True) as emu:
        model = form.format(emu.base_url)
        if provider:
            summary = await run_provider_batch(rows, model, out, poll=0, log=False)
        else:
            summary = await run_batch(rows, model, out, concurrency=20, log=False)
    lines = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    done = [x for x in lines if "id" in x]
    return {"cost": sum(float(x["usage"]["cost"] or 0) for x in done),
            "tokens": sum(int(x["usage"]["total_tokens"]) for x in done),
            "ok": summary.all_ok, "rounds": summary.rounds}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--calls", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for name, form in MODELS.items():
        with tempfile.TemporaryDirectory() as tmp:
            live = await one(form, args.tasks, args.calls, provider=False,
                             folder=Path(tmp))
            batch = await one(form, args.tasks, args.calls, provider=True,
                              folder=Path(tmp))
        if not (live["ok"] and batch["ok"]):
            raise SystemExit(f"{name}: some task ended without an answer")
        model = form.split(":", 1)[1].split("@", 1)[0]
        rows.append([name, model, f"{live['tokens']:,}", f"{batch['tokens']:,}",
                     str(batch["rounds"]), f"${live['cost']:.4f}", f"${batch['cost']:.4f}",
                     f"{batch['cost'] / live['cost']:.2f}"])
    print(f"{args.tasks} tasks, {args.calls} tool calls each, then an answer\n")
    print(table(["batch API", "model", "tokens live", "tokens batched", "rounds", "cost live",
                 "cost batched", "batched / live"], rows))


if __name__ == "__main__":
    asyncio.run(main())
