"""The unit tier's shared set-up: the spec's compiled code, built once per worker process before its first test.

A unit test's call is held to a CPU budget (``tests/conftest.py``). Without this, the first test of a worker that
steps the spec pays for compiling the spec's actions, invariants and metrics of both profiles — about 5 CPU s with a
cold code cache (after any change to ``spec/``; a fraction of a second from the on-disk cache, ``model/codecache.py``)
— and fails the budget for work that is not its own. Compiling here, in the session's set-up, keeps that cost out of
every test's call; the compiled code is kept per process (``functools.cache``), so the tests use it as they are.
"""

from __future__ import annotations

import pytest
from kcspec.model.invariants_check import InvariantChecker
from kcspec.model.metrics import spec_metrics
from kcspec.model.step import SpecMachine
from kcspec.spec.state import ClusterState


@pytest.fixture(scope="session", autouse=True)
def compiled_spec() -> None:
    for profile in ("kafka-2.8", "kafka-1.1"):
        SpecMachine(profile)
        InvariantChecker(profile)
        spec_metrics(profile, ClusterState())
