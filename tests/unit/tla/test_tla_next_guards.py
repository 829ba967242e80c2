"""Where ``Next`` checks the conjuncts of an action's guard (``module.hoisted_guard``): parameters bound in the
order the guard reads them, each conjunct as soon as its parameters are bound, and never before a conjunct that
comes earlier in the guard (which may protect it: ``tp \\in DOMAIN m`` before ``m[tp]``)."""

from __future__ import annotations

from kcspec.model.tla.module import hoisted_guard


def reads(*names: str) -> frozenset[str]:
    return frozenset(names)


def test_parameters_are_bound_in_the_order_the_guard_reads_them() -> None:
    # StaleAlterIsrReceived's shape: the controller, then tp, the broker, the ISR, the epochs
    order, placed = hoisted_guard(
        ["broker_id", "broker_epoch", "tp", "isr"],
        [
            reads("s"),
            reads("s", "tp"),
            reads("s", "broker_id"),
            reads("isr", "broker_id"),
            reads("broker_epoch"),
        ],
    )
    assert order == ["tp", "broker_id", "isr", "broker_epoch"]
    # level 0: before any binder; level k: right after the k-th binder
    assert placed == [[0], [1], [2], [3], [4]]


def test_a_conjunct_is_never_checked_before_an_earlier_one() -> None:
    # the third conjunct reads only "a", but comes after one that reads "b": it waits for "b" to be bound
    order, placed = hoisted_guard(["a", "b"], [reads("a"), reads("b"), reads("a"), reads()])
    assert order == ["a", "b"]
    assert placed == [[], [0], [1, 2, 3]]


def test_parameters_the_guard_never_reads_come_last_in_their_order() -> None:
    order, placed = hoisted_guard(["x", "y", "z"], [reads("s"), reads("y")])
    assert order == ["y", "x", "z"]
    assert placed == [[0], [1], [], []]
    # no parameter read at all: everything before the binders
    assert hoisted_guard(["x"], [reads("s")]) == (["x"], [[0], []])
