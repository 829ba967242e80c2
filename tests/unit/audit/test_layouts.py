"""Every line layout of real-log FORMATS.md, behind any line prefix, wrapped or not: ≥ 99 % of the controller
and state-change records of a generated corpus are parsed (reference parser; the Spark parsers are held to it
in test_spark_job), and the real corpus in ../shared/real-logs when it is there."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from kcspec.audit import layouts
from kcspec.model.kafka_log import lines as g
from kcspec.model.kafka_log.reference_parser import ParsedLine, parse_file, parse_lines

from tests.support.layout_corpus import LAYOUTS, PREFIXES, Corpus, corpus
from tests.support.paths import SHARED

REAL_LOGS = SHARED / "real-logs"
TARGET = 0.99
SEEDS = (11, 12)


def coverage(c: Corpus, parsed: list[ParsedLine]) -> tuple[float, list[str]]:
    """The share of the corpus's records parsed as what they are (layout and kind), and the misses."""
    by_line = {p.line: p for p in parsed}
    misses = []
    for e in c.expected:
        p = by_line[e.line]
        if (p.status, p.layout, p.kind) != ("record", e.layout, e.kind):
            misses.append(
                f"line {e.line}: expected {e.layout}/{e.kind}, got {p.status} {p.layout}/{p.kind} "
                f"{p.reason or ''}: {p.text!r}"
            )
    return 1 - len(misses) / len(c.expected), misses


@pytest.mark.parametrize("prefix", sorted(PREFIXES))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_layout_behind_every_prefix(layout: str, prefix: str) -> None:
    for seed in SEEDS:
        print(f"corpus seed {seed}, layout {layout}, prefix {prefix}")
        c = corpus(seed, layout, prefix)
        parsed = list(parse_lines("gen.log", c.lines))
        share, misses = coverage(c, parsed)
        assert share >= TARGET, (seed, share, misses[:3])
        # ERROR records keep their stack trace: every line after a record is attached to it, none quarantined
        quarantined = [p for p in parsed if p.status == "quarantined"]
        assert quarantined == [], (seed, quarantined[:3])


@pytest.mark.parametrize("prefix", sorted(PREFIXES))
@pytest.mark.parametrize("layout", ["kafka-default", "kafka-default-line", "strimzi"])
def test_wrapped_records_are_rejoined(layout: str, prefix: str) -> None:
    for seed in SEEDS:
        print(f"corpus seed {seed}, layout {layout}, prefix {prefix}, wrapped at 80 columns")
        c = corpus(seed, layout, prefix, wrap=80)
        parsed = list(parse_lines("gen.log", c.lines))
        share, misses = coverage(c, parsed)
        assert share >= TARGET, (seed, share, misses[:3])
        records = {e.line for e in c.expected}
        for p in parsed:  # the pieces of a wrapped record are its continuation lines
            if p.line - 1 in records and p.status == "continuation" and p.owner is not None:
                assert p.owner in records
        # wrapped stack frames too: once the file is known to be wrapped, a line after a full-width one is its rest
        quarantined = [p for p in parsed if p.status == "quarantined"]
        assert quarantined == [], (seed, quarantined[:3])


def test_wrapped_record_fields_come_from_the_joined_text() -> None:
    text = (
        "[2021-01-10 14:19:29,100] INFO [Controller id=1 epoch=9] Changed partition t-0 from OfflinePartition "
        "to OnlinePartition with state LeaderAndIsr(leader=3, leaderEpoch=5, isr=List(3), zkVersion=1) "
        "(state.change.logger)"
    )
    pieces = [text[k : k + 60] for k in range(0, len(text), 60)]
    out = list(parse_lines("f", pieces))
    assert (out[0].status, out[0].kind, out[0].fields["leader"], out[0].fields["leader_epoch"]) == (
        "record",
        "partition_transition",
        3,
        5,
    )
    assert [(p.status, p.owner) for p in out[1:]] == [("continuation", 1)] * (len(pieces) - 1)
    # line by line (the Spark parsers' view) the pieces are not records
    alone = list(parse_lines("f", pieces, join_wrapped=False))
    assert all(p.status != "record" for p in alone)


def test_prefix_is_found_by_where_a_record_starts() -> None:
    """No prefix shape is known in advance: any text before a record start is a prefix."""
    record = "[2021-01-10 14:19:29,100] INFO [Controller id=1] Resigned (kafka.controller.KafkaController)"
    for lead in ("kafka_1  | ", "[pod/kafka-0/kafka] ", "<13>1 2021-01-10T14:19:29Z host kafka - - - ", "x "):
        [p] = list(parse_lines("f", [lead + record]))
        assert (p.status, p.layout, p.kind) == ("record", "kafka-default" + g.PREFIXED, "resigned"), lead
    assert g.normalise_ts("2024/03/18 05:33:09.5") == "2024-03-18 05:33:09,500"
    assert g.normalise_ts("2024-03-18 05:33:09") == "2024-03-18 05:33:09,000"


def test_per_file_layout_report() -> None:
    from kcspec.audit.layouts import layout_counts

    c = corpus(3, "strimzi", "docker-compose", records=30)
    parsed = list(parse_lines("gen.log", c.lines))
    counts = layout_counts(parsed)
    assert counts["strimzi+prefix"] == 30
    assert sum(counts.values()) == len(c.lines)


@pytest.mark.skipif(
    not REAL_LOGS.is_dir(), reason=f"{REAL_LOGS} not present: real-corpus coverage not measured"
)
def test_real_logs_coverage() -> None:
    """Controller and state-change records of the real corpus: ≥ 99 % parsed (the rest named)."""
    seen = Counter[str]()
    missed: list[str] = []
    for path in sorted(REAL_LOGS.glob("*.log")):
        for p in parse_file(path):
            if p.status == "record" and (
                p.logger == g.STATE_CHANGE_LOGGER or (p.logger or "").startswith("kafka.controller")
            ):
                seen["parsed"] += 1
            elif p.status == "quarantined" and p.reason not in g.ORPHAN_REASONS:
                seen["missed"] += 1
                missed.append(f"{path.name}:{p.line}: {p.reason}: {p.text[:120]}")
    share = seen["parsed"] / (seen["parsed"] + seen["missed"])
    print(f"real-logs: {seen['parsed']} records parsed, {seen['missed']} missed ({share:.2%})")
    assert share >= TARGET, missed[:5]


def test_a_broken_record_never_swallows_the_next_one() -> None:
    lines = [
        "[2021-01-10 14:19:32,000] INFO trailing text (kafka.Foo) x",
        "[2021-01-10 14:19:33,000] INFO [Controller id=1] Resigned (kafka.controller.KafkaController)",
        "[2021-01-10 14:19:34,000] INFO cut here",
        "2021-01-10 14:19:35,000 INFO [Controller id=1] Resigned (kafka.Foo) [main]",
    ]
    out = list(parse_lines("f", lines))
    assert [(p.status, p.reason, p.kind) for p in out] == [
        ("quarantined", "no-layout", None),
        ("record", None, "resigned"),
        ("quarantined", "no-layout", None),
        ("record", None, "resigned"),
    ]


def test_a_line_after_a_full_width_line_is_its_rest_once_the_file_is_known_wrapped() -> None:
    record = (
        "[2021-01-10 14:19:31,000] ERROR [Controller id=1 epoch=9] Controller 1 epoch 9 failed to change state for "
        "partition t-0 from OfflinePartition to OnlinePartition (state.change.logger)"
    )
    frame = (
        "\tat kafka.controller.ZkPartitionStateMachine.doHandleStateChanges(PartitionStateMachine.scala:175)"
    )
    lines = [record[k : k + 50] for k in range(0, len(record), 50)]
    lines += [frame[k : k + 50] for k in range(0, len(frame), 50)]
    out = list(parse_lines("f", lines))
    assert [(p.status, p.owner) for p in out[1:]] == [("continuation", 1)] * (len(lines) - 1)
    # not known to be wrapped (no record was re-joined): the same frame pieces are quarantined
    alone = list(parse_lines("f", [record, *lines[len(lines) - 2 :]]))
    assert alone[-1].status == "quarantined"


@pytest.mark.skipif(
    not REAL_LOGS.is_dir(), reason=f"{REAL_LOGS} not present: the real corpus's folder audit not checked"
)
def test_real_corpus_folder_as_one_cluster_is_reported_honestly() -> None:
    """The folder of the real corpus: its ``.md`` documents are skipped and said to be, every log is audited, and
    files of Kafka 0.8 to 3.1 in one history are flagged as probably several clusters."""
    from kcspec.audit.spark_job import expand_inputs

    inputs = expand_inputs([str(REAL_LOGS)])
    assert set(inputs.kafka_logs) == {str(p.resolve()) for p in REAL_LOGS.glob("*.log")}
    skipped = dict(inputs.skipped)
    assert {Path(f).name for f in skipped} == {p.name for p in REAL_LOGS.glob("*.md")}
    assert all(why.startswith("not a log by its name (.md file)") for why in skipped.values())
    report = layouts.version_report({"all files": list(inputs.kafka_logs)}, "kafka-2.8")
    assert report["mixed"] is not None and "--history file" in report["mixed"]
