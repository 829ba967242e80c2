"""``local_frames.local_frame`` gives exactly the DataFrame ``spark.createDataFrame(rows, ddl)`` gives (schema and
rows), built in the JVM without Python workers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from kcspec.audit.local_frames import local_frame
from kcspec.audit.session import make_session

pytestmark = pytest.mark.spark

CASES: list[tuple[list[tuple[Any, ...]], str]] = [
    (
        [
            ("broker-0/state-change.log", 3, 20210901000000123),
            ('ü\u2028"x\\,\n', None, -1),
            ("\udcff-undecodable", 2**40, 0),
        ],
        "file string, read long, record long",
    ),
    ([(1, "t0", [20210901000000123, 5]), (2, "t,1", [])], "hid int, topic string, ends array<long>"),
    ([], "hid int, topic string, q long, d long"),
    ([(1, "t", 5, None)], "hid int, topic string, q long, d long"),
    (
        [(0, 3, 20210901000000123, "2021-09-01 00:00:00,123", 4)],
        "hid int, controller_epoch int, fence_ts long, fence_text string, newer_epoch int",
    ),
]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    yield make_session("local[2]", shuffle_partitions=2)


@pytest.mark.parametrize(("rows", "ddl"), CASES)
def test_local_frame_is_what_create_data_frame_gives(
    spark: Any, rows: list[tuple[Any, ...]], ddl: str
) -> None:
    expected = spark.createDataFrame(rows, ddl)
    got = local_frame(spark, rows, ddl)
    assert got.schema == expected.schema
    assert got.collect() == expected.collect()
