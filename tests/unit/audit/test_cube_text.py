"""``stats.cells_from_text``: the cells of ``LineParser.Cube``'s text, plain (split at U+0001) or
length-prefixed (a value that holds U+0001, U+0002 or a line feed), read the same either way."""

from __future__ import annotations

import random

from kcspec.audit.stats import Cell, cells_from_text

Values = tuple[str | None, ...]

CELLS: list[tuple[int, Values, str]] = [
    (
        3,
        ("record", "replica_transition", "1", "1", "7", "NewReplica", "OnlineReplica", None, None, "kafka"),
        "12,5,9,40",
    ),
    (
        3,
        (
            "record",
            "replica_transition",
            "1",
            "1",
            "7",
            "OnlineReplica",
            "OfflineReplica",
            None,
            None,
            "kafka",
        ),
        "2,6,6,41",
    ),
    (0, ("continuation", None, None, None, None, None, None, None, None, None), "4,,,"),
    (
        1,
        ("record", "topic_deletion_queued", "2", None, "8", None, None, "a,b", "20210101000000000", "x"),
        "1,7,7,3",
    ),
    (1, ("record", "request_summary", None, None, None, None, None, None, None, ""), "1,,,"),
    (
        2,
        ("record", "topic_deletion_queued", "2", None, "8", None, None, "a\u0001b", "20210101000000001", "x"),
        "1,8,8,4",
    ),
    (
        2,
        ("record", "topic_deletion_queued", "2", None, "8", None, None, "c\u0002d", "20210101000000002", "x"),
        "1,9,9,5",
    ),
    (2, ("record", "controller_message", "2", None, "8", None, None, None, None, "line\nfeed"), "1,9,9,6"),
    (2, ("record", "controller_message", "2", None, "8", None, None, None, None, "-"), "1,9,9,7"),
]


def _prefixed(fid: int, values: Values, counts: str) -> str:
    return f"{fid}," + "".join("-" if v is None else f"{len(v)}:{v}" for v in values) + counts + "\n"


def _plain(fid: int, values: Values, counts: str) -> str:
    return (
        f"\u0001{fid}\u0001"
        + "".join(("\u0002" if v is None else v) + "\u0001" for v in values)
        + counts
        + "\n"
    )


def _text(cells: list[tuple[int, Values, str]]) -> str:
    """As ``LineParser.Cube.text`` writes them: the length-prefixed cells (a value with U+0001, U+0002 or a
    line feed) first, then the plain ones."""
    odd = [c for c in cells if any(v is not None and any(x in v for x in "\u0001\u0002\n") for v in c[1])]
    return "".join(_prefixed(*c) for c in odd) + "".join(_plain(*c) for c in cells if c not in odd)


def test_plain_and_prefixed_cells_read_alike() -> None:
    expected = cells_from_text("".join(_prefixed(*c) for c in CELLS))
    assert len(expected) == len(CELLS)
    assert cells_from_text(_text(CELLS)) == expected
    shuffled = CELLS[:]
    random.Random(1).shuffle(shuffled)
    assert cells_from_text(_text(shuffled)) == expected


def test_values_and_order() -> None:
    cells = cells_from_text(_text(CELLS))
    assert [c.fid for c in cells] == [0, 1, 1, 2, 2, 2, 2, 3, 3]
    assert cells[0] == Cell(
        0, "continuation", None, None, None, None, None, None, None, None, None, 4, None, None, None
    )
    deletion = cells[2]
    assert (deletion.kind, deletion.del_topics, deletion.del_ts, deletion.broker) == (
        "topic_deletion_queued",
        "a,b",
        20210101000000000,
        None,
    )
    assert cells[1].layout == "" and cells[1].kind == "request_summary"
    assert {c.del_topics for c in cells if c.fid == 2} == {None, "a\u0001b", "c\u0002d"}
    assert {c.layout for c in cells if c.fid == 2} == {"x", "line\nfeed", "-"}
    # None first, then the values: the tracked transitions of file 3 by from-state
    assert [c.from_state for c in cells if c.fid == 3] == ["NewReplica", "OnlineReplica"]
    assert (cells[-1].lines, cells[-1].first_ts, cells[-1].last_ts, cells[-1].first_line) == (2, 6, 6, 41)


def test_empty() -> None:
    assert cells_from_text("") == []
