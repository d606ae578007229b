"""What one proxy serves: `ProxySettings`, kept as JSON so that worker processes read the same.

Must not import: the server, a codec module or anything that does I/O.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
from dataclasses import dataclass

ENVIRONMENT = "TOOLWIRE_PROXY_SETTINGS"
"""The variable a worker process reads its settings from (set by the process that starts it)."""

LOOPBACK = ("127.0.0.1", "::1", "localhost")

MAX_FOLDER = 10**9
"""The default bound on the record folder's size, in bytes (1 GB)."""

MAX_BODY = 64 * 1024 * 1024
"""The largest request body the proxy reads, in bytes; a larger one is refused with a 413."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ProxySettings:
    """``model``: the model id every request goes on to (any id toolwire takes).
    ``host`` and ``port``: where it listens; a host other than loopback needs ``key``, which
    every client then presents the way its wire authenticates. ``strict``: a request that
    breaks a transcript rule is refused (400) instead of only logged. ``record``: a folder
    where each conversation is written as a cassette, with a log of every request.
    ``timeout``: seconds the upstream may stay silent before the request fails.
    ``routes``: other models, chosen by the model name a client asks for.
    ``fallbacks``: models tried in order when the chosen one fails in a way that another
    model may not (`toolwire.failover.FAILURES`), until the first byte reaches the client."""

    model: str
    host: str = "127.0.0.1"
    port: int = 0
    key: str | None = dataclasses.field(default=None, repr=False)
    strict: bool = False
    record: str | None = None
    workers: int = 1
    timeout: float = 600.0
    max_body: int = MAX_BODY
    record_max: int = MAX_FOLDER
    """The most bytes the record folder may hold before new conversations go unrecorded."""
    pass_client_keys: bool = False
    """Send each request upstream with the key its client presented (else the proxy's)."""
    routes: tuple[tuple[str, str], ...] = ()
    """``(PATTERN, ID)`` pairs: a request whose model name matches PATTERN (``*`` and ``?``
    as in file names), the first that does, goes to ID instead of ``model``."""
    fallbacks: tuple[str, ...] = ()
    """Model ids that take over, in order, from the model a request went to."""
    aws_keys: tuple[tuple[str, str], ...] = dataclasses.field(default=(), repr=False)
    """``(ACCESS_KEY_ID, SECRET)`` pairs: a request signed with AWS SigV4 by one of them (as
    boto3 signs) is let in, the signature checked over the request (`toolwire.http.sigv4`)."""

    @property
    def guarded(self) -> bool:
        """Whether every request must present the key or a signature."""
        return self.key is not None or bool(self.aws_keys)

    def model_for(self, asked: str | None) -> str:
        """The model id a request asking for the model ``asked`` goes to."""
        if asked:
            for pattern, model in self.routes:
                if fnmatch.fnmatchcase(asked, pattern):
                    return model
        return self.model

    @property
    def loopback(self) -> bool:
        return self.host in LOOPBACK

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_environment(cls) -> ProxySettings:
        """The settings the starting process left in `ENVIRONMENT`."""
        found = json.loads(os.environ[ENVIRONMENT])
        found["routes"] = tuple(tuple(r) for r in found.get("routes", ()))
        found["fallbacks"] = tuple(found.get("fallbacks", ()))
        found["aws_keys"] = tuple(tuple(k) for k in found.get("aws_keys", ()))
        return cls(**found)


__all__ = ["ENVIRONMENT", "LOOPBACK", "MAX_BODY", "MAX_FOLDER", "ProxySettings"]
