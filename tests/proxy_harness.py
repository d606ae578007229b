"""A proxy served from a thread of the test process (uvicorn on a socket of its own), in
front of the emulator or any upstream a model id names."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolwire.proxy import ProxySettings, bind


@contextmanager
def running_proxy(model: str, **options: object) -> Iterator[str]:
    """Serve a proxy for ``model`` on 127.0.0.1 while the block runs; yields its base URL."""
    import uvicorn

    from toolwire.proxy.app import make_app

    settings = ProxySettings(model=model, **options)  # type: ignore[arg-type]
    sock = bind(settings)
    server = uvicorn.Server(uvicorn.Config(make_app(settings), log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the proxy did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


DOCS = Path(__file__).resolve().parent.parent / "docs" / "proxy.md"
_NEXT_LOSS = re.compile(r"; (?=[a-z_]+: )")


def loss_labels(losses: str) -> set[str]:
    """The losses of one ``x-toolwire-losses`` value as short labels: ``KIND: FIELD`` (a field
    set for the client's wire only is named by its key), or ``KIND`` when no field is named."""
    labels: set[str] = set()
    for entry in _NEXT_LOSS.split(losses):
        kind, _, rest = entry.partition(": ")
        option = re.match(r"provider_options\['[^']+'\]: '([^']+)'", rest)
        field = option or re.match(r"([\w.\[\]'-]+): ", rest)
        labels.add(f"{kind}: {field.group(1)}" if field else kind)
    return labels


def recorded_losses(folder: Path) -> set[str]:
    """The labels of every loss in a ``--record`` folder's log, over all its requests."""
    lines = (folder / "proxy.jsonl").read_text().splitlines()
    return {label for line in lines if (losses := json.loads(line).get("losses"))
            for label in loss_labels(losses)}


def recipe(title: str) -> str:
    """The text of the recipe headed ``### title`` in docs/proxy.md."""
    text = DOCS.read_text()
    start = text.index(f"\n### {title}\n")
    end = min((i for i in (text.find("\n## ", start + 1), text.find("\n### ", start + 1))
               if i != -1), default=len(text))
    return text[start:end]


def documented_losses(title: str) -> set[str]:
    """The labels the recipe ``title`` lists on its line starting ``Loses:``."""
    line = next(line for line in recipe(title).splitlines() if line.startswith("Loses:"))
    return set(re.findall(r"`([^`]+)`", line))
