"""``toolwire proxy``: the command that serves `toolwire.proxy`.

Checks every flag before anything listens (the model id and its key, the port, the folder for
records, a key when the address is not loopback, the extra that holds the server), then binds
and serves until interrupted. Must not import the proxy's server modules at module level.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from toolwire.cli import checks
from toolwire.cli.common import EXIT_OK, UserError


def cmd_proxy(args: argparse.Namespace) -> int:
    from toolwire.proxy.settings import LOOPBACK, ProxySettings

    if args.pass_client_keys and args.key:
        raise UserError("--pass-client-keys sends each client's key upstream, and --key makes "
                        "every client present the proxy's key; give one of them")
    model = _served(args.model, "--model", keys=not args.pass_client_keys)
    routes = []
    for given in args.route or ():
        pattern, equals, target = given.partition("=")
        if not equals or not pattern.strip() or not target.strip():
            raise UserError(f"--route {given!r}: write it as PATTERN=ID, for example "
                            "'claude-*=openai-responses:gpt-5'")
        routes.append((pattern.strip(), _served(target.strip(), f"--route {pattern}",
                                                keys=not args.pass_client_keys)))
    fallbacks = tuple(_served(given, "--fallback", keys=True) for given in args.fallback or ())
    if model in fallbacks:
        raise UserError(f"--fallback {model} is the --model itself; give models that take "
                        "over from it")
    aws_keys = _aws_keys(args.aws_key_id)
    if args.host not in LOOPBACK and not args.key and not aws_keys:
        raise UserError(f"--host {args.host} lets other machines reach the proxy; give "
                        "--key KEY, which every client must then present as its API key")
    if args.key is not None and not args.key.strip():
        raise UserError("--key is empty; give the key clients must present")
    if args.record is not None:
        folder = Path(args.record)
        if folder.exists() and not folder.is_dir():
            raise UserError(f"--record {args.record} is a file; give a folder (it is made "
                            "when missing)")
        if not folder.parent.is_dir():
            raise UserError(f"--record {args.record}: the folder {folder.parent} does not "
                            "exist; create it first or give another path")
    checks.need_extra("uvicorn", "toolwire proxy")
    checks.free_port(args.port, host=args.host)
    from toolwire.proxy import bind, serve

    settings = ProxySettings(model=model, host=args.host, port=args.port, key=args.key,
                             strict=args.strict, record=args.record, workers=args.workers,
                             timeout=args.timeout, routes=tuple(routes), fallbacks=fallbacks,
                             aws_keys=aws_keys,
                             pass_client_keys=args.pass_client_keys,
                             record_max=int(args.record_max * 1_000_000))
    try:
        sock = bind(settings)
    except OSError as exc:
        raise UserError(f"--host {args.host} --port {args.port}: cannot listen there "
                        f"({exc.strerror or exc})") from None

    def ready(url: str) -> None:
        print(f"toolwire proxy listening on {url}, sending every wire to {model}; "
              "Ctrl-C stops it", flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        serve(settings, sock, ready)
    return EXIT_OK


SIGV4_SECRET = "TOOLWIRE_PROXY_AWS_SECRET_ACCESS_KEY"
"""Where the secret key of ``--aws-key-id`` is read from (never from the command line)."""


def _aws_keys(key_id: str | None) -> tuple[tuple[str, str], ...]:
    """The AWS key pair SigV4-signed requests are checked with, if ``--aws-key-id`` is
    given: the id from the flag, its secret from the environment."""
    import os

    if key_id is None:
        return ()
    if not key_id.strip() or any(c.isspace() or c in "/," for c in key_id):
        raise UserError(f"--aws-key-id {key_id!r}: give an access key id, such as "
                        "AKIAEXAMPLE (no spaces, slashes or commas)")
    secret = os.environ.get(SIGV4_SECRET, "")
    if not secret.strip():
        raise UserError(f"--aws-key-id needs its secret key in the environment: export "
                        f"{SIGV4_SECRET}=... (it is never given on the command line)")
    return ((key_id, secret),)


def _served(model: str, flag: str, *, keys: bool) -> str:
    """A model id the proxy can send to: its form right and (with ``keys``) its key set."""
    checks.model_id(model, flag, keys=keys)
    if model.startswith("local:") and "@" not in model:
        raise UserError(f"{flag}: the proxy sends to a running server; start one and give "
                        "it as openai-compatible:<model>@<base_url>")
    return model


def add_command(sub: Any, epilog: str) -> None:
    from toolwire.http.endpoints import MODEL_ID_FORMS

    p = sub.add_parser(
        "proxy", epilog=epilog, help="serve every wire on 127.0.0.1 and send it to one model",
        description="An HTTP server for agents you did not write: it serves every wire at its "
                    "real path (Anthropic Messages, Chat Completions, Responses, Ollama, "
                    "Gemini, Bedrock) and sends each request on to --model, converting the "
                    "request and the reply when the two wires differ and passing the bytes "
                    "unchanged when they are the same. Each request is checked against the "
                    "transcript rules; see docs/proxy.md.")
    p.add_argument("--model", required=True, metavar="ID",
                   help="where every request goes: " + "; ".join(MODEL_ID_FORMS))
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other needs --key)")
    p.add_argument("--port", type=checks.port, default=0, help="port (default: any free port)")
    p.add_argument("--key", metavar="KEY",
                   help="the key every client must present as its API key (x-api-key, "
                        "Authorization: Bearer, x-goog-api-key or ?key=)")
    p.add_argument("--aws-key-id", metavar="ID",
                   help="let in requests signed with AWS SigV4 (boto3's default) by this "
                        f"access key id, its secret read from {SIGV4_SECRET}; each "
                        "signature is checked over the request")
    p.add_argument("--pass-client-keys", action="store_true",
                   help="send each request upstream with the API key its client presented "
                        "(default: the proxy's own, from its environment)")
    p.add_argument("--strict", action="store_true",
                   help="refuse (400) a request that breaks a transcript rule instead of only "
                        "logging it")
    p.add_argument("--record", metavar="DIR",
                   help="write each conversation to DIR as a cassette, and a log of requests")
    p.add_argument("--record-max", type=checks.positive, default=1000.0, metavar="MB",
                   help="the most the --record folder may hold, in megabytes; past it new "
                        "conversations are not recorded (default 1000)")
    p.add_argument("--route", action="append", metavar="PATTERN=ID",
                   help="send requests whose model name matches PATTERN (* and ? as in file "
                        "names) to ID instead (repeatable; the first that matches wins)")
    p.add_argument("--fallback", action="append", metavar="ID",
                   help="a model that takes a request over when the one it went to fails in "
                        "a way another model may not (overloaded, rate limited, a 5xx, a "
                        "broken stream, a prompt too long), before the client has any byte "
                        "of the reply (repeatable, tried in order; sent with the proxy's own "
                        "keys)")
    p.add_argument("--timeout", type=checks.positive, default=600.0, metavar="S",
                   help="seconds the upstream may send nothing before the request fails "
                        "(default 600)")
    p.add_argument("--workers", type=checks.count, default=1, metavar="N",
                   help="worker processes sharing the port (default 1)")
    p.set_defaults(func=cmd_proxy)
