"""The proof suite of ``kcspec prove``: table sanity, election lemmas, metric bookkeeping and inductiveness, per
profile.

``run_proofs(profile, brokers)`` is the API (``kcspec verify`` can include it); ``brokers`` bounds the
election lemmas (every input over 1..brokers brokers). Each part reports ``ProofResult``s; a part that
cannot run (e.g. the spec has no invariants yet) reports itself as skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Callable

from kcspec.model.z3.election_lemmas import prove_elections
from kcspec.model.z3.metric_lemmas import prove_metric_bookkeeping
from kcspec.model.z3.results import ProofResult
from kcspec.model.z3.table_sanity import prove_tables
from kcspec.spec.profiles import Profile, get_profile

DEFAULT_BROKERS = 8
MAX_BROKERS = 12


def _induction_not_run(profile: Profile) -> list[ProofResult]:
    return [
        ProofResult(
            "induction: §11 invariants over the spec's actions",
            "§11",
            "skipped",
            0.0,
            "not run: --no-induction (every action over 12 symbolic state families, about 35-60 s for both profiles"
            " in 2 worker processes, see benchmarks/results/prove.md)",
        )
    ]


def parts(brokers: int, induction: bool) -> list[tuple[str, Callable[[Profile], list[ProofResult]]]]:
    """The suite's parts, in order: (name, runner)."""
    from kcspec.model.z3.induction import prove_induction

    return [
        ("transition tables", prove_tables),
        ("election lemmas", lambda p: prove_elections(p, brokers)),
        ("metric bookkeeping", prove_metric_bookkeeping),
        ("inductive invariants", prove_induction if induction else _induction_not_run),
    ]


def run_proofs(profile: str, brokers: int = DEFAULT_BROKERS, induction: bool = True) -> list[ProofResult]:
    """Every proof for ``profile``; ``KeyError`` for an unknown profile, ``ValueError`` for a bad bound.

    ``induction`` runs the inductiveness checks of ``induction.py`` (the slowest part, in 2 worker processes);
    without it they are reported as skipped with the reason."""
    p = get_profile(profile)
    if not 1 <= brokers <= MAX_BROKERS:
        raise ValueError(f"--brokers must be between 1 and {MAX_BROKERS}, got {brokers}")
    out: list[ProofResult] = []
    for _, run in parts(brokers, induction):
        out.extend(run(p))
    return out
