"""Structured logs and metrics: AWS Lambda Powertools' Logger and Metrics.

In Lambda every log line is one JSON object (level, message, service, the
request id as ``correlation_id``) and every metric is a CloudWatch Embedded
Metric Format record, which CloudWatch turns into a metric without an API call.
Locally (``BUTAI_LOCAL=1``, set by the local runtime) both print one readable
line each instead.  What is counted, by name and dimensions:

==========================  ===========================  =====================================
metric                      dimensions                   when
==========================  ===========================  =====================================
``ClassifierCalls``         ``backend``, ``outcome``     every interpretation (``ok`` or the error kind)
``ModelCircuit``            ``state``                    a model server's circuit breaker changed
                                                         (``open``, ``half_open``, ``closed``)
``Fallbacks``               ``reason``                   free conversation answered without its model
``TurnLatency`` (ms)        —                            every scenario turn computed
``TurnConflicts``           ``kind``                     a turn recomputed (``stale_game``, ``claimed``)
==========================  ===========================  =====================================

Every point also carries ``service`` (``butai``) and ``stack`` (``BUTAI_STACK``: the CloudFormation stack
the function belongs to, ``local`` elsewhere), so two stacks in one account never mix their metrics; the
stack's alarms and dashboard (infra/resources.json) read them with both.

A failure is never only in a stage's debug record: it is logged (warning) and
counted, so a dead classifier endpoint shows as ``ClassifierCalls
outcome=unreachable`` rather than as every input quietly becoming なし.
"""
from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from . import env

SERVICE = "butai"
NAMESPACE = "butai"
LOCAL_STACK = "local"


def stack() -> str:
    return os.environ.get(env.STACK) or LOCAL_STACK


def default_dimensions() -> dict[str, str]:
    """The dimensions every metric point carries."""
    return {"service": SERVICE, "stack": stack()}


def _local() -> bool:
    return os.environ.get(env.LOCAL) == "1"


class _StderrHandler(logging.StreamHandler):
    """Writes to ``sys.stderr`` as it is when a line is written, not as it was when the handler was
    made (a process that swaps its stderr — a test's capture, a daemonised runtime — still sees them)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


@lru_cache(maxsize=1)
def logger():
    """The one structured logger (Powertools in Lambda, a plain readable one locally)."""
    if _local():
        log = logging.getLogger(f"{SERVICE}.local")  # not the Powertools logger of the same service
        if not any(isinstance(h, _StderrHandler) for h in log.handlers):
            handler = _StderrHandler()
            handler.setFormatter(logging.Formatter("butai %(levelname)s %(message)s"))
            log.addHandler(handler)
        log.propagate = False
        log.setLevel(logging.INFO)
        return log
    from aws_lambda_powertools import Logger

    # chalice's app logger has this service's name, and chalice gives it a plain stdout handler: every line
    # would be written twice (plain, then JSON), and a Powertools logger made again in the process (tests clear
    # this cache) would take that first handler for its own and fail on its first correlation id.
    # A logger Powertools marked as configured takes the first handler it finds on the logging logger as its
    # own; that can be anyone's (a test runner attaches its capture handlers to every logger that does not
    # propagate), so each one made here is configured afresh, with its own handler, in place of an earlier one.
    from aws_lambda_powertools.logging.constants import (
        LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER,
        LOGGER_ATTRIBUTE_PRECONFIGURED,
    )
    underlying = logging.getLogger(SERVICE)
    for plain in list(underlying.handlers):
        if type(plain) is logging.StreamHandler:      # chalice's plain one, or an earlier Powertools logger's
            underlying.removeHandler(plain)
    setattr(underlying, LOGGER_ATTRIBUTE_PRECONFIGURED, False)
    setattr(underlying, LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER, None)
    return Logger(service=SERVICE)


def set_correlation_id(request_id: str | None) -> None:
    """Every log line of this request carries its id (API Gateway's request id in Lambda)."""
    log = logger()
    if hasattr(log, "set_correlation_id"):
        log.set_correlation_id(request_id)


def warn(message: str, **fields: Any) -> None:
    log = logger()
    if _local():
        log.warning("%s %s", message, " ".join(f"{k}={v}" for k, v in fields.items()))
    else:
        log.warning(message, extra=fields)


_QUIET = {"depth": 0}


@contextmanager
def no_metrics() -> Iterator[None]:
    """No metric is written inside: a tool that plays a scenario in memory (`butai trace`, `butai lint`)
    serves nobody, and its output is its own."""
    _QUIET["depth"] += 1
    try:
        yield
    finally:
        _QUIET["depth"] -= 1


def metric(name: str, value: float = 1.0, unit: str = "Count", **dimensions: str) -> None:
    """One metric data point with its own dimensions (flushed at once: dimensions differ per point)."""
    if _QUIET["depth"]:
        return
    if _local():
        logger().info("metric %s=%g%s %s", name, value, "" if unit == "Count" else f" {unit}",
                      " ".join(f"{k}={v}" for k, v in dimensions.items()))
        return
    from aws_lambda_powertools.metrics import MetricUnit, single_metric
    with single_metric(name=name, unit=MetricUnit[unit], value=value, namespace=NAMESPACE,
                       default_dimensions=default_dimensions()) as point:
        for key, val in dimensions.items():
            point.add_dimension(name=key, value=str(val))


def classified(backend: str, error: str | None, detail: str | None = None) -> None:
    metric("ClassifierCalls", backend=backend or "unknown", outcome=error or "ok")
    if error:
        warn("classifier call failed; the input is read as なし", backend=backend, kind=error,
             detail=(detail or "")[:300])


def circuit_changed(server: str, old: str, new: str) -> None:
    """A model server's circuit breaker changed state (chalicelib/llm/breaker.py)."""
    metric("ModelCircuit", state=new)
    if new != "closed":
        warn("model circuit breaker " + new.replace("_", "-"), server=server, was=old)


def fell_back(reason: str | None) -> None:
    metric("Fallbacks", reason=reason or "no_model")
    if reason not in (None, "no_model"):
        warn("free conversation fell back to an authored line", reason=reason)


def turn_latency(ms: float) -> None:
    metric("TurnLatency", ms, "Milliseconds")


def turn_conflict(kind: str) -> None:
    metric("TurnConflicts", kind=kind)


def unplayable(error: str) -> None:
    """A reply the director could not play (answered with a fallback line; the error is in its debug record)."""
    metric("UnplayableTurns", error=error)
