"""``toolwire proxy``: any client, in any wire, to one model, in any wire.

An HTTP server (uvicorn, the ``proxy`` extra, under the proxy's own ASGI layer,
`toolwire.proxy.asgi`) that serves every wire at its real paths and sends each request on to
one model id, converting the request and the reply between the client's wire and the
upstream's (`toolwire.proxy.forward`), with call ids valid in each
(`toolwire.proxy.ids`), every request checked against the transcript rules
(`toolwire.proxy.app`) and, when asked, every conversation recorded
(`toolwire.proxy.record`). Owns `serve`, which binds the socket and runs one process or
several. Importing this package does not import uvicorn.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

from toolwire.proxy.settings import ENVIRONMENT, ProxySettings

KEEP_ALIVE = 75
"""Seconds a client's idle connection stays open. uvicorn closes one after 5 by default; a
client that sends its next request on a connection just as the server closes it gets a broken
read it does not retry (a POST), which many clients in flight at once on a busy machine met.
Clients keep their own idle connections open for less than this."""



def bind(settings: ProxySettings) -> socket.socket:
    """The listening socket for ``settings`` (port 0: any free port), listening already."""
    from toolwire.http.listen import listening_socket

    return listening_socket(settings.host, settings.port)


def serve(settings: ProxySettings, sock: socket.socket,
          ready: Callable[[str], None] | None = None) -> None:
    """Serve on ``sock`` until interrupted: in this process, or in ``settings.workers``
    worker processes sharing the socket."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    if ready is not None:
        ready(f"http://{shown}:{port}")
    if settings.workers <= 1:
        from toolwire.proxy.app import make_app

        # uvicorn is told to keep no access log (a line made for every answer and then
        # dropped at this log level) and to read no X-Forwarded-For (the proxy decides
        # nothing by the client's address)
        config = uvicorn.Config(make_app(settings), log_level="warning", lifespan="on",
                                access_log=False, proxy_headers=False,
                                timeout_graceful_shutdown=5, timeout_keep_alive=KEEP_ALIVE)
        uvicorn.Server(config).run(sockets=[sock])
        return
    from uvicorn.supervisors import Multiprocess

    os.environ[ENVIRONMENT] = settings.to_json()
    config = uvicorn.Config("toolwire.proxy.app:from_environment", factory=True,
                            workers=settings.workers, log_level="warning", lifespan="on",
                            access_log=False, proxy_headers=False,
                            timeout_graceful_shutdown=5, timeout_keep_alive=KEEP_ALIVE)
    Multiprocess(config, sockets=[sock]).run()


__all__ = ["KEEP_ALIVE", "ProxySettings", "bind", "serve"]
