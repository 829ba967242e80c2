"""The checking stack run against one mutant, cheapest check first, stopping at the first that catches it.

1. **scenarios** — the built-in scenarios cross-checked against the spec (``conformance.selfcheck.crosscheck``); a
   divergence is shrunk by removing events one at a time while the mutant still diverges and the unmutated
   reference controller still agrees with the spec on the shorter sequence.
2. **vectors** — the conformance vectors run against the mutant served in-process as a ``ControllerSut``.
3. **context** — stale-context probes (``stale_context``): from states the scenarios pass through, loaded with one
   context entry ZooKeeper does not back, the controller resigns and fails over; the context must not survive.
4. **explore** — bounded breadth-first exploration (``conformance.selfcheck.explore``) of a few small configurations at
   small depth; the first violation has a shortest trace.
5. **hypothesis** — the stateful machine (``conformance.selfcheck.fuzz.machine``), Hypothesis shrinking the failing run.
   The stage has a hard deadline: every step of the machine checks it, and once it has passed the run is
   abandoned (a ``BaseException`` Hypothesis does not treat as a failure), so no round can overrun.
6. **differential** — differential testing of the mutant SUT against the unmutated reference controller
   (shrunk by Hypothesis).

A detection by an event sequence counts only once it is *confirmed*: replayed from the empty cluster state,
the mutant diverges from the spec and the unmutated reference controller does not. A failure of the spec
itself (an invariant violation both controllers share) or a run that does not replay is not a detection; the
stage notes it and goes on. The vectors need no replay: the unmutated controller passes every vector (the zoo's
baseline checks it).

The Z3 layer (``kcspec prove``) checks the spec, not the reference controller: it cannot catch a reference
mutant and is not part of the ladder. Every check gets what is left of the mutant's time budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kcspec.conformance.reference_sut import ReferenceSut
from kcspec.conformance.selfcheck.bugzoo.mutant import Mutant
from kcspec.spec.events import BrokerStartup, ControllerEvent, ControllerFailover, TopicCreation

CHECKS = ("scenarios", "vectors", "context", "explore", "hypothesis", "differential")


@dataclass(frozen=True)
class Detection:
    """A check caught the mutant: the (shrunk) counterexample and what went wrong."""

    check: str
    detail: str
    """Which scenario / configuration / seed / vector."""
    message: str
    events: tuple[ControllerEvent, ...]
    bootstrap: int
    """How many of ``events`` are the cluster set-up (brokers register, a controller fails over, topics)."""
    requests: int = 0
    """Protocol requests that are not events (a conformance vector: a loaded state and one machine request)."""

    @property
    def after_bootstrap(self) -> int:
        return len(self.events) - self.bootstrap + self.requests

    @property
    def total(self) -> int:
        return len(self.events) + self.requests


@dataclass(frozen=True)
class StageRun:
    check: str
    seconds: float
    note: str


@dataclass
class Hunt:
    """Everything the ladder did for one mutant."""

    mutant: Mutant
    detection: Detection | None = None
    seconds_to_detection: float | None = None
    stages: list[StageRun] = field(default_factory=list)

    @property
    def caught(self) -> bool:
        return self.detection is not None


@dataclass(frozen=True)
class LadderConfig:
    budget: float = 60.0
    """Seconds per mutant across all checks."""
    seed: int = 0
    hypothesis_examples: int = 200
    hypothesis_seconds: float = 20.0
    """At most this long in the Hypothesis stage (a hard deadline, checked at every step)."""
    hypothesis_steps: int = 20
    differential_examples: int = 200
    explore_depth: int = 2
    checks: tuple[str, ...] = CHECKS


def setup_length(events: Sequence[ControllerEvent]) -> int:
    """The leading cluster set-up of a scenario: broker registrations, one controller failover, topic creations
    (never the last event, which is where the counterexample diverges)."""
    n = 0
    failovers = 0
    for ev in events[:-1]:
        if isinstance(ev, BrokerStartup | TopicCreation):
            n += 1
        elif isinstance(ev, ControllerFailover) and failovers == 0:
            failovers += 1
            n += 1
        else:
            break
    return n


def setup_prefix(events: Sequence[ControllerEvent], boot: Sequence[ControllerEvent]) -> int:
    """How many leading ``events`` are the stateful machine's bootstrap: ``boot`` in order, some broker
    registrations left out (the machine starts a drawn subset of the brokers)."""
    n = j = 0
    for ev in events[:-1]:
        while j < len(boot) and boot[j] != ev and isinstance(boot[j], BrokerStartup):
            j += 1
        if j >= len(boot) or boot[j] != ev:
            break
        n += 1
        j += 1
    return n


# ------------------------------------------------------------------------------------------ 1. scenarios


def _diverges(profile: str, events: tuple[ControllerEvent, ...]) -> tuple[ControllerEvent, ...] | None:
    """The events up to the divergence, or ``None`` if spec and reference agree (a bad sequence counts as agree)."""
    from kcspec.conformance.selfcheck.crosscheck import crosscheck

    out = crosscheck("bugzoo", profile, events)
    d = out.divergence
    if d is None or (d.kind == "enabled" and "neither" in d.message):
        return None
    return out.trace.events


def confirmed(mutant: Mutant, events: tuple[ControllerEvent, ...]) -> bool:
    """Replayed from the empty cluster state, the unmutated reference controller agrees with the spec on
    ``events`` and the mutant does not: the counterexample shows the mutant's bug and nothing else."""
    if _diverges(mutant.profile, events) is not None:
        return False
    with mutant.active():
        return _diverges(mutant.profile, events) is not None


def shrink_sequence(
    mutant: Mutant, events: tuple[ControllerEvent, ...], deadline: float
) -> tuple[ControllerEvent, ...]:
    """Remove events one at a time (last to first, repeated) while the mutant still diverges and the
    unmutated reference controller does not."""
    current = events
    changed = True
    while changed and time.perf_counter() < deadline:
        changed = False
        for i in range(len(current) - 2, -1, -1):
            if time.perf_counter() > deadline:
                break
            candidate = current[:i] + current[i + 1 :]
            if _diverges(mutant.profile, candidate) is not None:
                continue
            with mutant.active():
                prefix = _diverges(mutant.profile, candidate)
            if prefix is not None:
                current = prefix
                changed = True
                break
    return current


def check_scenarios(mutant: Mutant, cfg: LadderConfig, deadline: float) -> tuple[Detection | None, str]:
    from kcspec.conformance.scenarios import SCENARIOS
    from kcspec.conformance.selfcheck.crosscheck import crosscheck

    ran = 0
    for scenario in SCENARIOS:
        if time.perf_counter() > deadline:
            return None, f"{ran} scenarios before the budget ran out"
        with mutant.active():
            out = crosscheck(scenario.name, mutant.profile, scenario.events(mutant.profile))
        ran += 1
        d = out.divergence
        if d is None:
            continue
        events = shrink_sequence(mutant, out.trace.events, deadline)
        return Detection(
            "scenarios", scenario.name, f"{d.kind}: {d.message}", events, setup_length(events)
        ), f"{ran} scenarios"
    return None, f"{ran} scenarios, no divergence"


# ------------------------------------------------------------------------------------------ 3. context


def check_context(mutant: Mutant, cfg: LadderConfig, deadline: float) -> tuple[Detection | None, str]:
    from kcspec.conformance.scenarios import SCENARIOS
    from kcspec.conformance.selfcheck.bugzoo.stale_context import probe_events, probe_states, stale_variants
    from kcspec.conformance.selfcheck.crosscheck import crosscheck

    ran = 0
    for scenario in SCENARIOS:
        for state in probe_states(mutant.profile, scenario.events(mutant.profile)):
            for field_name, stale in stale_variants(state):
                for events in probe_events(stale):
                    if time.perf_counter() > deadline:
                        return None, f"{ran} probes before the budget ran out"
                    ran += 1
                    with mutant.active():
                        out = crosscheck("stale context", mutant.profile, events, initial=stale)
                    d = out.divergence
                    if d is None or not crosscheck("unmutated", mutant.profile, events, initial=stale).ok:
                        continue
                    where = f"{scenario.name}, stale {field_name}"
                    return Detection(
                        "context", where, f"{d.kind}: {d.message}", events, 0, 1
                    ), f"{ran} probes"
    return None, f"{ran} probes, no divergence"


# ------------------------------------------------------------------------------------------ 4. explore


def explore_configs(profile: str, depth: int) -> list[Any]:
    """The explore stage's models, smallest first (each about a second of CPU at the ladder's depth)."""
    from kcspec.model.explore_config import FAULT_KINDS, ExploreConfig

    return [
        ExploreConfig(profile=profile, brokers=3, partitions=1, rf=2, depth=depth),
        ExploreConfig(
            profile=profile, brokers=3, partitions=1, rf=2, depth=depth, faults=frozenset(FAULT_KINDS)
        ),
        ExploreConfig(profile=profile, brokers=3, partitions=1, rf=3, depth=depth),
        # two topics: a deletion event while another topic is queued (KAFKA-13572 re-queues the queued one)
        ExploreConfig(profile=profile, brokers=3, topics=2, partitions=1, rf=2, depth=depth),
    ]


def check_explore(mutant: Mutant, cfg: LadderConfig, deadline: float) -> tuple[Detection | None, str]:
    from kcspec.conformance.selfcheck.explore.explorer import explore
    from kcspec.model.event_candidates import bootstrap

    ran = unconfirmed = 0
    for ecfg in explore_configs(mutant.profile, cfg.explore_depth):
        if time.perf_counter() > deadline:
            return None, f"{ran} configurations before the budget ran out"
        with mutant.active():
            result = explore(ecfg)
        ran += 1
        f = result.finding
        if f is None:
            continue
        if not confirmed(mutant, tuple(f.events)):
            unconfirmed += 1
            continue
        return Detection(
            "explore", ecfg.describe(), f"{f.kind}: {f.message}", f.events, len(bootstrap(ecfg))
        ), f"{ran} configurations"
    extra = f" ({unconfirmed} findings the unmutated controller shares)" if unconfirmed else ""
    return None, f"{ran} configurations, no violation{extra}"


# ------------------------------------------------------------------------------------------ 5. hypothesis


class OutOfTime(BaseException):
    """Raised inside a Hypothesis run once the stage's deadline has passed. Not an ``Exception``: Hypothesis
    treats it as an interruption, not as a failing example, so it neither shrinks nor retries it."""


def _recording_machine(profile: str, stop_at: float) -> type[Any]:
    """The stateful machine, recording the steps of the last failure (Hypothesis replays the shrunk run last),
    and giving up at ``stop_at``."""
    from kcspec.conformance.selfcheck.fuzz.machine import machine_for
    from kcspec.model.event_candidates import bootstrap
    from kcspec.spec.trace import TraceStep

    base = machine_for(profile)

    class Recording(base):  # type: ignore[valid-type,misc]
        failure: ClassVar[tuple[tuple[ControllerEvent, ...], int, str] | None] = None
        deadline: ClassVar[float] = stop_at

        def apply(self, event: ControllerEvent) -> None:
            if time.perf_counter() > type(self).deadline:
                raise OutOfTime
            try:
                super().apply(event)
            except AssertionError:
                raise
            except Exception as exc:
                self.steps.append(TraceStep(event))
                self.fail(event, f"the reference controller crashed: {type(exc).__name__}: {exc}", [])

        def fail(self, event: ControllerEvent, message: str, details: list[str]) -> None:
            events = tuple(s.event for s in self.steps)
            type(self).failure = (events, setup_prefix(events, bootstrap(self.cfg)), message)
            super().fail(event, message, details)

    Recording.__name__ = base.__name__ + "_bugzoo"
    return Recording


def _hypothesis_settings(cfg: LadderConfig, examples: int) -> Any:
    from hypothesis import HealthCheck, Phase, settings

    return settings(
        max_examples=examples,
        stateful_step_count=cfg.hypothesis_steps,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate, Phase.shrink],
        print_blob=False,
    )


def hypothesis_round(
    mutant: Mutant, cfg: LadderConfig, seed: int, examples: int, stop_at: float
) -> tuple[tuple[tuple[ControllerEvent, ...], int, str] | None, str]:
    """One seeded run of the stateful machine against the mutant: the recorded failure (events, set-up length,
    message) if it failed, and a note (why there is no failure: none found, out of time, Hypothesis gave up)."""
    from hypothesis import seed as hseed
    from hypothesis.stateful import run_state_machine_as_test

    machine = _recording_machine(mutant.profile, stop_at)
    conf = _hypothesis_settings(cfg, examples)

    def run() -> None:
        run_state_machine_as_test(machine, settings=conf)

    try:
        with mutant.active():
            hseed(seed)(run)()
    except OutOfTime:
        return None, "out of time"
    except Exception as exc:
        if machine.failure is None:  # Hypothesis itself gave up (e.g. no rule applicable): not a detection
            first_line = str(exc).splitlines()[0] if str(exc) else ""
            return None, f"{type(exc).__name__}: {first_line[:120]}"
        return machine.failure, "failed"
    return None, "no failure"


def check_hypothesis(mutant: Mutant, cfg: LadderConfig, deadline: float) -> tuple[Detection | None, str]:
    rounds = examples = unconfirmed = 0
    per_round = 10
    stop = min(deadline, time.perf_counter() + cfg.hypothesis_seconds)
    note = ""
    while examples < cfg.hypothesis_examples and time.perf_counter() < stop:
        recorded, note = hypothesis_round(mutant, cfg, cfg.seed + rounds, per_round, stop)
        if recorded is not None:
            events, setup, message = recorded
            if confirmed(mutant, events):
                return Detection(
                    "hypothesis", f"seed {cfg.seed + rounds}", message, events, setup
                ), f"{examples + per_round} examples"
            unconfirmed += 1
        elif note not in ("no failure", "out of time"):
            return None, f"stopped after {examples} examples: {note}"
        rounds += 1
        examples += per_round
    extra = f", {unconfirmed} failing runs that do not replay or that the unmutated controller shares"
    return None, f"{examples} examples of ≤ {cfg.hypothesis_steps} steps, no confirmed failure" + (
        extra if unconfirmed else ""
    )


# ------------------------------------------------------------------------------------------ 2. vectors, 6. differential


class MutantSut(ReferenceSut):
    """The reference controller with the mutant's bug, served in-process over protocol v1."""

    name = "kcspec-reference-mutant"

    def __init__(self, mutant: Mutant) -> None:
        super().__init__()
        self.mutant = mutant

    def _with(self, call: Callable[[], Any]) -> Any:
        with self.mutant.active():
            return call()

    def load(self, state: Any) -> None:
        self._with(lambda: ReferenceSut.load(self, state))

    def event(self, event: Any) -> Any:
        return self._with(lambda: ReferenceSut.event(self, event))

    def elect(self, strategy: Any, inp: Any) -> Any:
        return self._with(lambda: ReferenceSut.elect(self, strategy, inp))

    def replica_state_change(self, replicas: Any, target: Any) -> Any:
        return self._with(lambda: ReferenceSut.replica_state_change(self, replicas, target))

    def partition_state_change(self, partitions: Any, target: Any, election: Any) -> Any:
        return self._with(lambda: ReferenceSut.partition_state_change(self, partitions, target, election))


_VECTORS: dict[str, list[Any]] = {}


def vectors_for(profile: str) -> list[Any]:
    """The conformance vectors of ``profile``, generated once per process from the unmutated oracles."""
    if profile not in _VECTORS:
        from kcspec.conformance.vectors.generate import generate

        _VECTORS[profile] = generate([profile]).vectors
    return _VECTORS[profile]


def check_vectors(mutant: Mutant, cfg: LadderConfig, deadline: float) -> tuple[Detection | None, str]:
    from kcspec.conformance.adapters.inprocess import InProcessAdapter
    from kcspec.conformance.runner import run
    from kcspec.conformance.vectors.model import Level
    from kcspec.conformance.verdicts import Verdict

    vectors = vectors_for(mutant.profile)
    report = run(
        InProcessAdapter(MutantSut(mutant)),
        vectors,
        profile=mutant.profile,
        level=Level.controller,
        budget=max(1.0, deadline - time.perf_counter()),
    )
    bad = [o for o in report.outcomes if o.verdict in (Verdict.failed, Verdict.errored)]
    if not bad:
        return None, f"{len(report.outcomes)} vectors passed"
    first = bad[0]
    vector = next(v for v in vectors if v.id == first.id)
    events = (vector.request.event,) if hasattr(vector.request, "event") else ()
    return Detection(
        "vectors",
        f"vector {first.id}",
        f"{first.verdict.value}: {first.reason}",
        events,
        0,
        0 if events else 1,
    ), f"{len(report.outcomes)} vectors, {len(bad)} failed"


def check_differential(mutant: Mutant, cfg: LadderConfig, deadline: float) -> tuple[Detection | None, str]:
    detection = _differential(mutant, cfg, deadline)
    if detection is None:
        return None, f"no confirmed divergence in ≤ {cfg.differential_examples} sequences"
    return detection, "divergence"


def _differential(mutant: Mutant, cfg: LadderConfig, deadline: float) -> Detection | None:
    """The conformance suite's differential search (``differential.find_divergences``) against the mutant, up to
    the deadline; the first divergence that the mutant alone reproduces is the detection."""
    import io

    from kcspec.conformance.adapters.inprocess import InProcessAdapter
    from kcspec.conformance.differential import Search, bootstrap_events, find_divergences
    from kcspec.conformance.protocol import messages as m
    from rich.console import Console

    profile = mutant.profile
    adapter = InProcessAdapter(MutantSut(mutant))
    adapter.start()
    adapter.call(m.Hello(m.PROTOCOL_VERSION, profile))
    until = time.monotonic() + max(0.0, deadline - time.perf_counter())
    search = Search(adapter, ReferenceSut(), profile, until, {})
    try:
        find_divergences(search, cfg.differential_examples, cfg.seed, Console(file=io.StringIO()))
    finally:
        adapter.close()
    setup_kinds = {e.kind for e in bootstrap_events(profile)}
    for found in search.found.values():
        div = found.divergence
        if confirmed(mutant, tuple(div.events)):
            # the set-up is the leading run of set-up events (shrinking may have removed some of them)
            setup = next((i for i, e in enumerate(div.events) if e.kind not in setup_kinds), len(div.events))
            return Detection(
                "differential",
                f"seed {cfg.seed}",
                div.reason,
                div.events,
                min(setup, len(div.events) - 1),
            )
    return None


# ------------------------------------------------------------------------------------------ the ladder

CHECK_FUNCTIONS: dict[str, Callable[[Mutant, LadderConfig, float], tuple[Detection | None, str]]] = {
    "scenarios": check_scenarios,
    "vectors": check_vectors,
    "context": check_context,
    "explore": check_explore,
    "hypothesis": check_hypothesis,
    "differential": check_differential,
}


def hunt(mutant: Mutant, cfg: LadderConfig) -> Hunt:
    """Run the checks of ``cfg`` in order against ``mutant`` until one catches it or the budget is spent."""
    result = Hunt(mutant)
    start = time.perf_counter()
    deadline = start + cfg.budget
    for name in cfg.checks:
        if time.perf_counter() > deadline:
            result.stages.append(StageRun(name, 0.0, "not run: the budget was spent"))
            continue
        t0 = time.perf_counter()
        detection, note = CHECK_FUNCTIONS[name](mutant, cfg, deadline)
        result.stages.append(StageRun(name, time.perf_counter() - t0, note))
        if detection is not None:
            result.detection = detection
            result.seconds_to_detection = time.perf_counter() - start
            break
    return result
