"""In-process SUTs that misbehave the ways only Python code can: ``sys.exit()``, raising
``KeyboardInterrupt`` themselves, or receiving a real SIGINT while they run; and one that declares no
capability at all."""

from __future__ import annotations

import signal
import sys

from kcspec.conformance.adapters.inprocess import ControllerSut
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import SpecSut
from kcspec.spec.vocabulary import ElectionInput, ElectionResult, ElectionStrategy


class _Elections(SpecSut):
    """The spec's own answers, so that every vector but the misbehaving ones passes."""

    capabilities = frozenset({m.Capability.elections})
    calls = 0

    def misbehave(self) -> None:
        raise NotImplementedError

    def elect(self, strategy: ElectionStrategy, inp: ElectionInput) -> ElectionResult:
        type(self).calls += 1
        if type(self).calls % 2 == 0:
            self.misbehave()
        return super().elect(strategy, inp)


class ExitingSut(_Elections):
    """Calls ``sys.exit(0)`` on every second election."""

    name = "exiting"

    def misbehave(self) -> None:
        sys.exit(0)


class SelfInterruptingSut(_Elections):
    """Raises ``KeyboardInterrupt`` itself (no signal) on every second election."""

    name = "self-interrupting"

    def misbehave(self) -> None:
        raise KeyboardInterrupt("raised by the SUT")


class SignalledSut(_Elections):
    """The run receives a real SIGINT while this SUT answers its second election."""

    name = "signalled"

    def misbehave(self) -> None:
        signal.raise_signal(signal.SIGINT)


class NoCapabilitiesSut(ControllerSut):
    """Greets correctly and declares no capability."""

    name = "no-capabilities"
    capabilities = frozenset()


class MistypedSut(_Elections):
    """Declares its capabilities as strings, not ``Capability`` members, and answers every second election
    with values of the wrong types."""

    name = "mistyped"
    capabilities = frozenset({"elections"})  # type: ignore[arg-type]  # deliberately strings, not Capability members

    def elect(self, strategy: ElectionStrategy, inp: ElectionInput) -> ElectionResult:
        type(self).calls += 1
        if type(self).calls % 2 == 0:
            return ElectionResult("x", None, 3, 1)  # type: ignore[arg-type]
        return SpecSut.elect(self, strategy, inp)


class BrokenConstructorSut(ControllerSut):
    """Its constructor raises."""

    def __init__(self) -> None:
        raise RuntimeError("cannot connect to the controller under test")


class ExitingConstructorSut(ControllerSut):
    """Its constructor calls ``sys.exit(0)``."""

    def __init__(self) -> None:
        sys.exit(0)


class HangingSut(_Elections):
    """Hangs on its second election (records its pid first, for the interrupt tests)."""

    name = "hanging"

    def misbehave(self) -> None:
        import os
        import time

        pids = os.environ.get("FAKE_SUT_PIDS")
        if pids:
            with open(pids, "a") as f:
                f.write(f"{os.getpid()}\n")
        time.sleep(3600)
