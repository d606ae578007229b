"""A proxy served from a thread of the test process (uvicorn on a socket of its own), in
front of the emulator or any upstream a model id names."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

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
