"""Fallback chains: models that answer as one, the next taking over when one fails
(`toolwire.fallback`). `chain` holds the model, `shaping` what each model is sent, `table`
which failures move the chain on."""

from toolwire.failover.chain import FallbackChain, fallback
from toolwire.failover.shaping import ChainLink
from toolwire.failover.table import FAILURES, Failure

__all__ = ["FAILURES", "ChainLink", "Failure", "FallbackChain", "fallback"]
