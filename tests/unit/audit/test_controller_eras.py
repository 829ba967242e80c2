"""Controller-epoch eras (``eras``) from the reader's cells, in process: a ZooKeeper reset (an election with a
lower epoch) starts an era, a stale controller (its epoch acted before the newer one) does not, epochs going
back without an election line start an era only when the higher epochs have stopped acting, and each era is
fenced on its own with the line of the newer epoch's first act."""

from __future__ import annotations

from kcspec.audit import eras
from kcspec.audit.stats import Cell

ELECTED, WRITE = "controller_elected", "partition_transition"


def _cell(fid: int, kind: str, epoch: int, first: int, last: int, line: int) -> Cell:
    return Cell(
        fid, "record", kind, 1, None, epoch, None, None, None, None, "kafka-default", 1, first, last, line
    )


def _find(*cells: Cell) -> eras.Eras:
    return eras.find(eras.acts_of(cells, (ELECTED, WRITE), [0, 0, 0]))


def test_an_election_with_a_lower_epoch_starts_an_era_and_fences_stay_inside_it() -> None:
    found = _find(
        _cell(0, ELECTED, 57, 100, 100, 1),
        _cell(1, WRITE, 57, 110, 190, 1),
        _cell(0, ELECTED, 1, 200, 200, 9),  # "Epoch incremented to 1": the znode started over
        _cell(1, WRITE, 1, 210, 400, 40),
        _cell(0, ELECTED, 2, 300, 300, 12),
    )
    assert [(s.era, s.ts, s.epoch, s.after, s.election, s.fid, s.line) for s in found.starts] == [
        (1, 200, 1, 57, True, 0, 9)
    ]
    assert found.starts_of() == {0: [200]}
    # era 1: epoch 1 is fenced by epoch 2's election line; epoch 57 fences nothing in it
    assert [(f.era, f.epoch, f.ts, f.newer, f.fid, f.line) for f in found.fences] == [(1, 1, 300, 2, 0, 12)]
    assert "controller epochs start over at 0000-00-00 00:00:00,200 (c.log:9)" in found.starts[0].describe(
        ["c.log", "s.log", "x"]
    )


def test_a_stale_controller_is_no_new_era() -> None:
    found = _find(
        _cell(0, ELECTED, 5, 100, 100, 1),
        _cell(1, WRITE, 5, 110, 500, 3),  # epoch 5 writes on after epoch 6 acted: stale
        _cell(2, ELECTED, 6, 200, 200, 7),
        _cell(2, WRITE, 6, 210, 600, 8),
    )
    assert found.starts == ()
    assert [(f.era, f.epoch, f.ts, f.newer, f.fid, f.line) for f in found.fences] == [(0, 5, 200, 6, 2, 7)]


def test_epochs_going_back_without_an_election_line() -> None:
    # epoch 1 first acts after epoch 9's last act: a new era (state-change logs only)
    reset = _find(_cell(1, WRITE, 9, 100, 150, 1), _cell(1, WRITE, 1, 300, 400, 20))
    assert [(s.ts, s.epoch, s.after, s.election) for s in reset.starts] == [(300, 1, 9, False)]
    # epoch 1 first acts while epoch 9 still acts: a stale writer, no new era
    overlap = _find(_cell(1, WRITE, 9, 100, 350, 1), _cell(2, WRITE, 1, 300, 400, 20))
    assert overlap.starts == ()
    assert [(f.epoch, f.newer) for f in overlap.fences] == [(1, 9)]
