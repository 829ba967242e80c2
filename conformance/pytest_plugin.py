"""A pytest plugin that turns the conformance vectors into pytest items.

Installing kcspec registers it with pytest (a ``pytest11`` entry point under its module name, so
``-p kcspec.conformance.pytest_plugin`` works too); give a SUT to enable it:

    pytest --kcspec-sut "node conformance/examples/node/sut.js" --kcspec-level elections

Each vector becomes one item named after its id: a divergence fails it with the differences, a
misbehaving SUT errors it with the SUT's stderr, and a vector the SUT does not support is skipped
with the reason. Without ``--kcspec-sut`` the plugin adds nothing.

``--kcspec-known FILE`` takes the SUT's acknowledged deviations, the same file as ``kcspec conformance run
--known`` (``kcspec.conformance.known``): a listed vector that fails is reported as xfailed with the entry's
reason and does not fail the run; a listed vector that passes fails (a stale entry: remove it), as pytest's
strict xfail does; entries that were not checked (their vector did not run, or a divergence signature, which
only differential testing meets) are listed in the terminal summary. A file that cannot be used is a usage
error naming the file and the JSON path.

At ``--kcspec-level controller`` the differential part runs too (``--kcspec-differential N`` sequences, the
CLI's default when not given, 0 turns it off): the search runs while the items are collected (its groups are
only known then), and each divergence group becomes one item that fails with the group's shrunk counterexample
and trace (xfailed when ``--kcspec-known`` acknowledges it); no divergence is one passing item. Vectors come from
the same cache as ``kcspec conformance run``'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kcspec.conformance import known as known_file
from kcspec.conformance import runner
from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from kcspec.conformance.vectors.model import Level, Vector
from kcspec.conformance.verdicts import Outcome, Verdict

_SESSION_KEY = "kcspec_session"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcspec", "kcspec conformance suite")
    group.addoption("--kcspec-sut", metavar="CMD", default=None, help="Command that starts the SUT.")
    group.addoption("--kcspec-profile", default="kafka-2.8", choices=("kafka-2.8", "kafka-1.1"))
    group.addoption("--kcspec-level", default="controller", choices=tuple(Level.__members__))
    group.addoption("--kcspec-vectors", default=None, metavar="DIR", help="Exported vectors to run.")
    group.addoption("--kcspec-timeout", type=float, default=10.0, help="Seconds per message.")
    group.addoption(
        "--kcspec-differential",
        type=int,
        default=None,
        metavar="N",
        help="Random event sequences against the reference controller at level controller (default as "
        "kcspec conformance run; 0: off); one item per divergence group.",
    )
    group.addoption("--kcspec-seed", type=int, default=0, help="Seed of the differential search.")
    group.addoption(
        "--kcspec-known",
        default=None,
        metavar="FILE",
        help="JSON file of the SUT's acknowledged deviations (as kcspec conformance run --known): listed vectors "
        "that fail are xfailed with the reason; a listed vector that passes fails (stale entry).",
    )


_KNOWN_KEY = "kcspec_known"
_CHECKED_KEY = "kcspec_known_checked"


def _store(config: pytest.Config) -> dict[str, Any]:
    store: dict[str, Any] = config.__dict__.setdefault("_kcspec_store", {})
    return store


def _known(config: pytest.Config) -> known_file.KnownDeviations:
    """The ``--kcspec-known`` file, read once; a file that cannot be used is a usage error naming it."""
    store = _store(config)
    if _KNOWN_KEY not in store:
        path = config.getoption("--kcspec-known")
        try:
            store[_KNOWN_KEY] = known_file.load(Path(path)) if path else known_file.NO_KNOWN
        except known_file.KnownFileError as exc:
            raise pytest.UsageError(f"--kcspec-known: {exc}") from None
    known: known_file.KnownDeviations = store[_KNOWN_KEY]
    return known


class ConformanceFailure(Exception):
    """Raised by a failed vector item; pytest shows its text as the failure."""


class VectorItem(pytest.Item):
    def __init__(self, *, vector: Vector, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.vector = vector

    def _session(self) -> runner.Session:
        store: dict[str, Any] = self.config.__dict__.setdefault("_kcspec_store", {})
        session = store.get(_SESSION_KEY)
        if session is None:
            adapter = SubprocessAdapter(
                str(self.config.getoption("--kcspec-sut")),
                timeout=float(self.config.getoption("--kcspec-timeout")),
            )
            try:
                session = runner.open_session(adapter, str(self.config.getoption("--kcspec-profile")))
            except runner.SessionError as exc:
                raise pytest.UsageError(str(exc)) from None
            store[_SESSION_KEY] = session
        return session

    def runtest(self) -> None:
        session = self._session()
        if session.hello is None:
            try:
                session.open()
            except Exception as exc:
                raise ConformanceFailure(f"the SUT could not be restarted: {exc}") from None
        outcome = runner.run_one(session, self.vector)
        if outcome.verdict in (Verdict.not_supported, Verdict.skipped):
            pytest.skip(f"{outcome.verdict.value}: {outcome.reason}")
        store = _store(self.config)
        store[_RAN_KEY] = store.get(_RAN_KEY, 0) + 1
        known = _known(self.config)
        if outcome.id in known.vectors:
            store.setdefault(_CHECKED_KEY, set()).add(outcome.id)
            [outcome], _ = known_file.apply_to_vectors([outcome], known)
        if outcome.verdict is Verdict.known:
            pytest.xfail(outcome.reason)
        if outcome.verdict is not Verdict.passed:
            raise ConformanceFailure(_render(outcome))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return Path("kcspec-vectors"), 0, f"{self.vector.id} ({', '.join(self.vector.sections)})"


def _render(o: Outcome) -> str:
    lines = [f"{o.verdict.value}: {o.id} ({', '.join(o.sections)})", o.description, o.reason]
    lines += [f"  {d.render()}" for d in o.differences]
    if o.request:
        lines.append(f"request: {o.request.strip()}")
    if o.stderr.strip():
        lines.append("SUT stderr:\n" + o.stderr.strip()[-2000:])
    return "\n".join(lines)


class VectorCollector(pytest.Collector):
    def __init__(self, *, vectors: list[Vector], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.vectors = vectors

    def collect(self) -> Iterator[pytest.Item]:
        for v in self.vectors:
            yield VectorItem.from_parent(self, name=v.id, vector=v)


def _load(config: pytest.Config) -> list[Vector]:
    from kcspec.conformance.vectors import cache, files, generate

    profile = str(config.getoption("--kcspec-profile"))
    level = Level[str(config.getoption("--kcspec-level"))]
    source = config.getoption("--kcspec-vectors")
    if source:
        vectors = files.load_dir(Path(source))
    else:
        cached = cache.load(profile)
        vectors = cached if cached is not None else generate.generate([profile]).vectors
        if cached is None:
            cache.store(profile, list(vectors))
    return runner.select_vectors(vectors, profile, level)


class DifferentialItem(pytest.Item):
    """One divergence group of the differential search (or its single passing outcome)."""

    def __init__(self, *, outcome: Outcome, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outcome = outcome

    def runtest(self) -> None:
        o = self.outcome
        if o.verdict in (Verdict.not_supported, Verdict.skipped):
            pytest.skip(f"{o.verdict.value}: {o.reason}")
        if o.verdict is Verdict.known:
            pytest.xfail(o.reason)
        if o.verdict is not Verdict.passed:
            raise ConformanceFailure(_render(o))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return Path("kcspec-differential"), 0, self.outcome.id


def _differential_items(session: pytest.Session, config: pytest.Config) -> list[pytest.Item]:
    """Run the differential search (at level controller) and make one item per outcome."""
    import io
    import tempfile

    from kcspec.conformance import differential
    from rich.console import Console

    examples = config.getoption("--kcspec-differential")
    examples = differential.DEFAULT_EXAMPLES if examples is None else int(examples)
    if Level[str(config.getoption("--kcspec-level"))] is not Level.controller or examples <= 0:
        return []
    adapter = SubprocessAdapter(
        str(config.getoption("--kcspec-sut")), timeout=float(config.getoption("--kcspec-timeout"))
    )
    trace_dir = Path(tempfile.mkdtemp(prefix="kcspec-traces-"))
    outcomes, _notes = differential.run_differential(
        adapter,
        profile=str(config.getoption("--kcspec-profile")),
        examples=examples,
        seed=int(config.getoption("--kcspec-seed")),
        trace_dir=trace_dir,
        budget=differential.DEFAULT_SECONDS,
        console=Console(file=io.StringIO()),
        known=_known(config),
    )
    parent = VectorCollector.from_parent(session, name="kcspec-differential", vectors=[])
    return [DifferentialItem.from_parent(parent, name=o.id, outcome=o) for o in outcomes]


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("--kcspec-sut"):
        return
    _known(config)  # a bad --kcspec-known file stops the run before any vector
    collector = VectorCollector.from_parent(session, name="kcspec-conformance", vectors=_load(config))
    items.extend(collector.collect())
    items.extend(_differential_items(session, config))


_RAN_KEY = "kcspec_ran"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run in which no vector ran (every one skipped or not supported, or none selected) is not a pass."""
    if not session.config.getoption("--kcspec-sut", default=None) or session.config.option.collectonly:
        return
    ran = session.config.__dict__.get("_kcspec_store", {}).get(_RAN_KEY, 0)
    if ran == 0 and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = (
            "kcspec: NOTHING RAN: no conformance vector ran against the SUT (each was skipped, not supported "
            "by its declared capabilities, or none was selected for this profile and level)"
        )
        if reporter is not None:
            reporter.write_line(message, red=True, bold=True)
        session.exitstatus = pytest.ExitCode.USAGE_ERROR


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The ``--kcspec-known`` entries this run did not check."""
    if not config.getoption("--kcspec-sut", default=None) or not config.getoption(
        "--kcspec-known", default=None
    ):
        return
    store = _store(config)
    known = store.get(_KNOWN_KEY)
    if known is None:
        return
    checked: set[str] = store.get(_CHECKED_KEY, set())
    lines = [
        f"known deviation not checked (the vector did not run): {d.describe()}"
        for ident, d in known.vectors.items()
        if ident not in checked
    ]
    lines += [
        f"known deviation not checked (a signature: only differential testing meets it): {d.describe()}"
        for d in known.signatures
    ]
    for line in lines:
        terminalreporter.write_line(f"kcspec: {line}", yellow=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    store = config.__dict__.get("_kcspec_store", {})
    session = store.get(_SESSION_KEY)
    if session is not None:
        session.adapter.close()
