"""The proxy reports what the conversion table lists: the conversation docs/wires.md's table
of losses is built from (`toolwire.conversion._sample`), sent through the proxy in each client
wire to the emulator in each upstream wire, has exactly the losses the table's conversion
names for that pair in its ``x-toolwire-losses`` header and its ``--record`` log line: the same
kinds and subjects, whole and streamed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx2
import pytest

from proxy_harness import loss_labels, running_proxy
from toolwire.codecs import get_codec
from toolwire.codecs.registry import get_wire
from toolwire.conversion import _sample, convert, loss_table_markdown
from toolwire.emulator import Emulator
from toolwire.http.providers import provider_for
from toolwire.transcript import Message, Reply, replace
from wire_data import data, looped

pytest.importorskip("uvicorn")

PAIRS = [(c, u) for c in looped() for u in looped()]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("records")


@pytest.fixture(scope="module")
def proxies(records: Path) -> Iterator[dict[str, str]]:
    """A proxy in front of the emulator for each upstream wire, recording in
    ``records/<wire>``."""
    with Emulator(lambda request, wire: Reply(message=Message.assistant("ok"))) as emu, \
            ExitStack() as stack, pytest.MonkeyPatch.context() as env:
        for wire in looped():
            for name, value in data(wire).PROXY_ENV.items():
                env.setenv(name, value)
        yield {wire: stack.enter_context(running_proxy(
            f"{provider_for(wire)}:m@{emu.base_url}", record=str(records / wire)))
               for wire in looped()}


def test_every_wire_has_a_provider_to_name_the_emulator_by() -> None:
    """The provider serving each wire, to name the emulator as the proxy's upstream."""
    for wire in looped():
        assert get_wire(wire).name == wire and provider_for(wire)


def path_for(wire: str, stream: bool) -> str:
    """Where a client of ``wire`` sends the conversation, whole or streamed."""
    found = get_wire(wire)
    if stream and found.stream_path:
        return found.stream_path.replace("{model}", "m") + data(wire).STREAM_QUERY
    return found.path.replace("{model}", "m")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("client", "upstream"), PAIRS, ids=[f"{c}>{u}" for c, u in PAIRS])
def test_the_proxy_reports_the_losses_the_table_lists(
        client: str, upstream: str, stream: bool, proxies: dict[str, str],
        records: Path) -> None:
    body = get_codec(client).encode_request(replace(_sample(), stream=stream))
    reply = httpx2.post(proxies[upstream] + path_for(client, stream), json=body)
    assert reply.status_code == 200, reply.text
    reported = reply.headers.get("x-toolwire-losses", "")
    logged = json.loads((records / upstream / "proxy.jsonl").read_text().splitlines()[-1])
    assert (logged["client"], logged["upstream"]) == (client, upstream)
    assert logged.get("losses", "") == reported
    listed = "; ".join(str(n) for n in convert(body, client, upstream, model="m").losses)
    assert (loss_labels(reported) if reported else set()) == (
        loss_labels(listed) if listed else set())
    row = next(line for line in loss_table_markdown(looped()).splitlines()
               if line.startswith(f"| `{client}` |"))
    cell = row.split(" | ")[1 + looped().index(upstream)].strip(" |")
    kinds = {label.split(":")[0] for label in loss_labels(reported)} if reported else set()
    assert kinds == ({k.strip() for k in cell.split(",")} - {"—", "nothing"})
