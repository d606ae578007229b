"""``--fallback ID`` (repeatable) and ``--fallback-sticky``: the command line's fallback chains.

Owns `fallback_options` (the flags), `check_fallbacks` (each id's form, before anything
starts) and `chained` (the command's model followed by its fallbacks, as one model:
`toolwire.fallback`). Without ``--fallback`` the model is used as it is.
"""

from __future__ import annotations

import argparse
from typing import Any

from toolwire.cli import checks
from toolwire.cli.common import UserError


def fallback_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fallback", action="append", default=[], metavar="ID",
                   help="a model to go on with when the one before it fails (overloaded, "
                        "5xx, rate limited after its retries, a broken stream, a prompt too "
                        "long for it); repeat for a chain, tried in order at each turn")
    p.add_argument("--fallback-sticky", action="store_true",
                   help="keep to the model of the chain that answered last instead of "
                        "starting at the top at each turn")


def check_fallbacks(args: argparse.Namespace, *, keys: bool = False) -> None:
    """Each ``--fallback`` id well formed (and, with ``keys``, its API key set); the
    ``--fallback-sticky`` flag only with a chain."""
    given = getattr(args, "fallback", None) or []
    for model_id in given:
        checks.model_id(model_id, "--fallback", keys=keys)
    if getattr(args, "fallback_sticky", False) and not given:
        raise UserError("--fallback-sticky without --fallback: give the models to fall back "
                        "to with --fallback ID")


def chained(args: argparse.Namespace, model: Any, make: Any = None, **kwargs: Any) -> Any:
    """``model`` followed by the ``--fallback`` models (made by ``make``, else by
    `toolwire.model` with ``kwargs``), as one model; ``model`` itself when there are none. A
    fallback that cannot be made closes the models made before it."""
    given = getattr(args, "fallback", None) or []
    if not given:
        return model
    from toolwire.errors import ConfigError
    from toolwire.failover import fallback
    from toolwire.http import client

    made: list[Any] = [model]
    try:
        for model_id in given:
            try:
                made.append(make(model_id) if make is not None
                            else client.model(model_id, **kwargs))
            except ConfigError as exc:
                raise UserError(f"--fallback {model_id}: {exc}") from None
    except BaseException:
        import asyncio

        for each in made:
            asyncio.run(each.aclose())
        raise
    return fallback(*made, sticky=bool(getattr(args, "fallback_sticky", False)))


def for_batch(args: argparse.Namespace) -> Any:
    """The batch's model: its ``--model`` id as it is (the batch makes it), or with
    ``--fallback`` a chain of models, each with a connection per run in flight and a backoff
    of its own (a rate limit at one provider does not slow the others)."""
    if not getattr(args, "fallback", None):
        return args.model
    if args.ray is not None:
        raise UserError("--fallback with --ray: a chain runs in this process; leave out --ray, "
                        "or --fallback")
    from toolwire.batch.runner import RateGate
    from toolwire.http import client
    from toolwire.http.transport import HttpTransport

    def made(model_id: str) -> Any:
        return client.model(model_id, gate=RateGate(),
                            transport=HttpTransport(max_connections=args.concurrency))

    return chained(args, made(args.model), make=made)


async def closing(work: Any, model: Any) -> Any:
    """Await ``work``, then close ``model`` when it is one this command made (not an id)."""
    try:
        return await work
    finally:
        if not isinstance(model, str):
            await model.aclose()


__all__ = ["chained", "check_fallbacks", "closing", "fallback_options", "for_batch"]
