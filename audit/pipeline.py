"""The whole audit, step by step: the Kafka logs are read and parsed once, on the way into the shuffle of the
log rules' pass (``replay.shuffled``), whose one pass finds the violations and passes on the findings and the
quarantined lines; traces are decoded once to Parquet; then count and report from there.

Intermediate tables live in a private folder of this run (``mkdtemp`` in ``out``, mode 0700, removed at
the end; a small input's in Spark's block manager instead, see ``_run``'s ``kept``), so each input line is
read and parsed once and nothing of the corpus is collected to the driver: only aggregates (counts, per-epoch
first timestamps, topic-deletion intervals) and bounded samples are. Files and histories are integer ids
(``FileIds``, in the order of their names) in everything that is stored, shuffled or sorted; names return in
the outputs. Nothing that this run did not create is deleted or
overwritten: ``run_audit`` refuses an ``out`` that already holds one of its outputs (``OUTPUTS``).

The counts are taken where they arise: lines read by the reader, records where lines are parsed,
continuation and blank lines where they are attached, quarantined lines in what is written; ``conclude``
checks that they add up and judges the run (``verdict``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcspec.audit import (
    eras,
    findings,
    jvm_parser,
    layouts,
    replay,
    report,
    salvage,
    stats,
    verdict,
)
from kcspec.audit.spark_job import (
    Inputs,
    decode_trace_lines,
    history_of,
    numbered_lines,
    stored_parse,
    trace_parts,
)
from kcspec.model.kafka_log import lines
from kcspec.model.spark import session
from kcspec.spec.profiles import PROFILES, Profile
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

EVENT_KINDS = (
    *replay.WRITE_KINDS,
    "controller_elected",
    "controller_ready",
    "resigned",
    "topic_deletion_queued",
    "topic_deletion_completed",
    "request_summary",
    "response_error",
    "replicas_marked_offline",
    "reassign_lair_failed",
    "election_started",
    "leader_elected",
    "state_machine_bulk",
)
SAMPLE = 20
LINE_BYTES = 200
"""Bytes per line assumed when the number of Kafka log records is estimated before the logs are read (the
shuffle of the log rules' pass is sized by it, ``replay.spread``): a little below the simulated corpus's 230,
so the estimate errs towards more, smaller sorts."""
_BACKGROUND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kcspec-audit")
"""Runs the driver's own work that needs no Spark (the version inference's sampling) beside a Spark query."""

Step = Callable[[str], None]
OUTPUTS = (
    "violations.parquet",
    "violations.jsonl",
    "quarantine.parquet",
    "quarantine.jsonl",
    "stats.json",
    "summary.html",
    "verdict.json",
    "findings.jsonl",
)
"""What ``run_audit`` (and ``conclude``) write into ``out``, besides ``coverage-*.json``."""
STATUSES = ("record", "continuation", "blank", "quarantined")
CHECKED_KINDS = (*replay.HISTORY_KINDS[:2], *replay.FAILED_KINDS)
"""The records that are state transitions the rules check (the headline's "state transitions checked")."""


class OutputExists(ValueError):
    """``out`` already holds an audit output: this run would overwrite what it did not create."""


NAME_SEPARATOR = "\u0000"
"""Joins the file names of ``FileIds.column`` (a regex for ``split`` that matches itself: no path holds it)."""


@dataclass(frozen=True)
class FileIds:
    """Kafka log files by id (``fid``: their order by name) and their histories by id (``hid``, by name)."""

    names: tuple[str, ...]
    history: tuple[int, ...]
    """``history[fid]``: the file's history id."""

    @staticmethod
    def of(files: Iterable[str], history_key: str) -> FileIds:
        names = tuple(sorted(files))
        histories = sorted({history_of(n, history_key) for n in names})
        hid = {h: i for i, h in enumerate(histories)}
        return FileIds(names, tuple(hid[history_of(n, history_key)] for n in names))

    def listing(self) -> list[tuple[str, int, int]]:
        return [(n, i, self.history[i]) for i, n in enumerate(self.names)]

    def column(self) -> Column:
        """An array column of the names: ``element_at(column, fid + 1)`` is the file's name.

        Decision (measured): one literal split on NUL (no path holds one), not one literal per file: each
        ``F.lit`` is a round trip to the JVM, and 5,000 rotated files cost 5.9 s of the audit's driver there."""
        if not self.names:
            return F.array().cast("array<string>")
        return F.split(F.lit(NAME_SEPARATOR.join(self.names)), NAME_SEPARATOR)


@dataclass(frozen=True)
class ProfilePass:
    """One pass of the log rules: the ``profile`` it checks, the file ids whose records it reads (``fids``;
    ``only``: those, or ``None`` when the pass reads every file) and the (history, controller epoch) pairs whose
    log is at TRACE (``replay.traced_epochs``)."""

    profile: str
    fids: tuple[int, ...]
    only: list[int] | None
    traced: frozenset[tuple[int, int]]


@dataclass(frozen=True)
class Counted:
    """What the reader's cells say that the rules' pass does not need (``counted_facts``): the lines per file and
    status, the transitions to check, the notes, the layouts per file and the coverage's edges."""

    per_file: list[dict[str, Any]]
    checked: int
    notes: list[str]
    layouts: dict[str, dict[str, int]]
    edges: dict[str, dict[tuple[str, str], int]]


def counted_facts(ids: FileIds, cells: list[stats.Cell], found_eras: eras.Eras) -> Counted:
    """``Counted`` from the reader's ``cells`` (``found_eras``: the eras ``log_facts`` found in them)."""
    # the lines the reader read, per file and status (its cells), and the records the parser recognised
    read_per_file = {n: 0 for n in ids.names}
    by_status: dict[tuple[int, str], int] = {}
    for c in cells:
        read_per_file[ids.names[c.fid]] += c.lines
        if c.status != "record":
            by_status[(c.fid, c.status)] = by_status.get((c.fid, c.status), 0) + c.lines
    records_per_file = stats.record_counts(cells, ids.names)
    per_file: list[dict[str, Any]] = [
        {"file": n, "read": read_per_file[n], "record": records_per_file.get(n, 0)} for n in ids.names
    ]
    per_file.extend({"file": ids.names[fid], status: n} for (fid, status), n in sorted(by_status.items()))
    checked = sum(c.lines for c in cells if c.status == "record" and c.kind in CHECKED_KINDS)
    notes = [s.describe(ids.names) for s in found_eras.starts]
    layouts_per_file = stats.layout_counts(cells, ids.names, layouts.NOT_A_RECORD)
    notes += undated_notes(layouts_per_file)
    edges = {m: stats.edge_counts(cells, m) for m in ("replica", "partition")}
    return Counted(per_file, checked, notes, layouts_per_file, edges)


@dataclass(frozen=True)
class LogFacts:
    """What the reader's cells say before the rules' pass, the same for every engine (``log_facts``): what
    the pass needs, and the rest (``Counted``), which the driver works out beside the pass (``counting``)."""

    eras: eras.Eras
    deletions: dict[tuple[int, str], list[tuple[int, int | None]]]
    version: dict[str, Any]
    passes: tuple[ProfilePass, ...]
    quirky: tuple[int, ...]
    """File ids of histories whose Kafka version breaks a rule (``layouts.UNCHECKABLE_0_8``)."""
    counting: Future[Counted]

    @property
    def per_file(self) -> list[dict[str, Any]]:
        return self.counting.result().per_file

    @property
    def checked(self) -> int:
        return self.counting.result().checked

    @property
    def notes(self) -> list[str]:
        return self.counting.result().notes

    @property
    def layouts(self) -> dict[str, dict[str, int]]:
        return self.counting.result().layouts

    @property
    def edges(self) -> dict[str, dict[tuple[str, str], int]]:
        return self.counting.result().edges


def log_facts(
    ids: FileIds, cells: list[stats.Cell], history_key: str, inferring: Future[dict[str, Any]], step: Step
) -> LogFacts:
    """From the reader's ``cells``: the controller epochs' eras, the topic deletions, the inferred version
    (``inferring``), the passes to run, and, started in a driver thread, the rest (``counted_facts``).

    Decision (measured on 10 M lines, 119,000 cells): the rules' pass needs only the eras, the deletions, the
    version and the traced epochs; the rest (about 0.7 s of the driver) is worked out while the JVM runs the
    pass, where the driver waited for it with the JVM idle."""
    found_eras = eras.find(eras.acts_of(cells, replay.ACTING_KINDS, ids.history))
    deletions = stats.deletion_intervals(cells, ids.history)
    step("inferring the Kafka version from the logs' formats")
    version = inferring.result()
    counting = _BACKGROUND.submit(counted_facts, ids, cells, found_eras)
    hists = version["histories"]
    fid_history = [history_of(n, history_key) or "all files" for n in ids.names]
    used = sorted({str(h["profile_used"]) for h in hists.values()})
    passes = []
    for name in used:
        fids = tuple(i for i, h in enumerate(fid_history) if hists[h]["profile_used"] == name)
        only = list(fids) if len(used) > 1 else None
        passes.append(ProfilePass(name, fids, only, replay.traced_epochs(cells, PROFILES[name], ids.history)))
    return LogFacts(
        found_eras,
        deletions,
        version,
        tuple(passes),
        tuple(i for i, h in enumerate(fid_history) if hists[h]["unchecked_rules"]),
        counting,
    )


def start_inference(ids: FileIds, history_key: str, profile: Profile, explicit_profile: bool) -> Future[Any]:
    """The version inference (``layouts.version_report``) started in the background: the driver samples the
    files (in Python) while the JVM parses them."""
    groups: dict[str, list[str]] = {}
    for file_name in ids.names:
        groups.setdefault(history_of(file_name, history_key) or "all files", []).append(file_name)
    return _BACKGROUND.submit(
        layouts.version_report,
        groups,
        profile.name,
        per_history=history_key != "cluster" and not explicit_profile,
    )


def run_audit(
    spark: SparkSession,
    inputs: Inputs,
    out: Path,
    profile: Profile,
    step: Step,
    history_key: str = "cluster",
    explicit_profile: bool = True,
) -> report.Summary:
    """Run the audit; ``history_key`` ``cluster`` (the default) treats every file given as one cluster's
    history (merged per partition and replica, ordered by timestamp across files), ``dir`` each directory,
    ``file`` each file on its own (``spark_job.history_of``). Unless ``explicit_profile`` (the user chose
    ``profile``), each history of ``dir``/``file`` is audited with the profile its formats say."""
    taken = [name for name in OUTPUTS if (out / name).exists()] + [
        p.name for p in out.glob("coverage-*.json")
    ]
    if taken:
        raise OutputExists(f"{out}: already holds {', '.join(sorted(taken))} (not written by this run)")
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".kcspec-audit-work-", dir=out))
    try:
        with session.settings_for(spark, session.input_bytes((*inputs.kafka_logs, *inputs.traces))) as small:
            if small is not None:
                step(small)
            return _run(
                spark, inputs, out, work, profile, step, history_key, explicit_profile, small is not None
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _not_checkable(moot: DataFrame) -> DataFrame:
    """Violations of ``layouts.UNCHECKABLE_0_8`` rules on a 0.8 history as findings (``findings.FINDING_COLUMNS``)."""
    return moot.select(
        "file",
        "line",
        "ts",
        F.lit("warning").alias("severity"),
        F.lit(layouts.NOT_CHECKABLE).alias("finding"),
        F.concat(
            F.lit("not checkable for this version (Kafka 0.8.0/0.8.1 log the from-state after the update): "),
            F.col("rule"),
            F.lit(": "),
            F.col("message"),
        ).alias("meaning"),
        F.col("rule").alias("kind"),
        "topic",
        "partition",
        "controller_id",
        "controller_epoch",
        F.lit(None).cast("int").alias("broker"),
        F.lit(None).cast("string").alias("exception"),
    )


def _run(
    spark: SparkSession,
    inputs: Inputs,
    out: Path,
    work: Path,
    profile: Profile,
    step: Step,
    history_key: str,
    explicit_profile: bool = True,
    small: bool = False,
) -> report.Summary:
    def uri(name: str) -> str:
        return str((work / name).resolve())

    def kept(frame: DataFrame, name: str, by: str | None = None) -> DataFrame:
        """``frame`` computed once and kept for the queries that read it: in the run's Parquet folder (``by``:
        in one folder per value of that column, so a query of one value reads only its rows), or, for a
        small input, in Spark's block manager (``localCheckpoint``, eager). Decision: a small input's
        intermediate tables cost their file commits (output committer, ``_SUCCESS``, a ``chmod`` process per
        file) more than their rows; the rows and what reads them are the same either way."""
        if small:
            return frame.localCheckpoint(eager=True)
        writer = frame.write if by is None else frame.write.partitionBy(by)
        writer.parquet(uri(name))
        # the schema given: a table without rows has no file to read it from
        return spark.read.schema(frame.schema).parquet(uri(name))

    violations: list[DataFrame] = []
    non_records: list[DataFrame] = []
    per_file: list[dict[str, Any]] = []
    kafka = False
    edges: dict[str, dict[tuple[str, str], int]] = {"replica": {}, "partition": {}}
    cells: list[stats.Cell] = []
    broken: list[tuple[str, str]] = []
    found_findings: DataFrame | None = None
    quirky: list[int] = []
    layouts_per_file: dict[str, dict[str, int]] = {}
    version: dict[str, Any] = {}
    notes: list[str] = []
    checked = 0
    if inputs.kafka_logs:
        ids = FileIds.of(inputs.kafka_logs, history_key)
        names = ids.column()
        # Decision: with --history file/dir each history is audited with the profile its own formats say (one
        # run over unrelated clusters of different Kafka versions), unless --profile was given: then that one;
        # a history no profile models gets the run's profile. Which was used is in the report, per history.
        # The driver samples the files for it (in Python) while the JVM parses them: the report waits for it
        # only after the parse (on 10 M lines the sampling took 4.5 s that the parse now hides).
        inferring = start_inference(ids, history_key, profile, explicit_profile)
        step(f"parsing {len(inputs.kafka_logs)} Kafka log file(s) with the JVM line parser")
        # The parse is not stored: what the log rules, the findings and the quarantine read of it crosses
        # the rules' shuffle, computed here (replay.shuffled); the reader counted every line on the way.
        frame, counted = stored_parse(spark, ids.listing())
        estimate = session.input_bytes(inputs.kafka_logs) // LINE_BYTES
        split = replay.shuffled(replay.pass_rows(frame), estimate)
        cells = counted()
        kafka = True
        facts = log_facts(ids, cells, history_key, inferring, step)
        version, quirky = facts.version, list(facts.quirky)
        passes: list[DataFrame] = []
        for p in facts.passes:
            step(f"replaying {len(p.fids)} log file(s) against profile {p.profile}")
            passes.append(
                replay.log_pass(
                    split,
                    PROFILES[p.profile],
                    facts.eras,
                    facts.deletions,
                    p.only,
                    passthrough=not passes,
                    traced=p.traced,
                )
            )
        # what the passes found, and the findings and quarantined lines the first one passed on: few rows,
        # kept once for the queries below
        result = kept(_union(passes), "results.parquet", "what")
        per_file.extend(facts.per_file)  # counted while the passes ran
        checked += facts.checked
        notes += facts.notes
        layouts_per_file = facts.layouts
        what = F.col("what")
        violations.append(replay.named(replay.violations_of(result, names), names))
        found_findings = findings.narrow(result.where(what == replay.OUTPUTS[1]))
        quarantined = result.where(what == replay.OUTPUTS[2])
        non_records.append(
            quarantined.select(
                F.element_at(names, F.col("fid") + 1).alias("file"),
                "line",
                "text",
                F.lit("quarantined").alias("status"),
                "reason",
                F.when(F.col("reason").isin(*jvm_parser.BROKEN_REASONS), F.col("text")).alias("detail"),
            )
        )
        # Decision: a rule the log's own Kafka version is documented to break (layouts.UNCHECKABLE_0_8: 0.8.0/
        # 0.8.1 log the from-state after the update) cannot be checked on that history: its violations there
        # are reported as findings "not checkable for this version" and do not fail the run.
        if quirky:
            found_v = _union(violations)
            moot = F.col("file").isin([ids.names[i] for i in quirky]) & F.col("rule").isin(
                *layouts.UNCHECKABLE_0_8
            )
            violations = [found_v.where(~moot)]
            moot_found = _not_checkable(found_v.where(moot))
            found_findings = findings.dressed(found_findings, names).unionByName(moot_found)
        edges = facts.edges
    if inputs.traces:
        step(f"decoding {len(inputs.traces)} JSONL trace file(s)")
        # a broken .gz would fail Spark's text source: its readable part is read, the rest quarantined
        rescued = salvage.salvage(inputs.traces, work / "salvaged")
        lines = numbered_lines(spark, rescued.paths, history_key)
        if rescued.original:
            names_of = F.create_map(*[F.lit(x) for pair in rescued.original.items() for x in pair])
            lines = lines.withColumn("file", F.coalesce(names_of[F.col("file")], F.col("file")))
        decoded_lines = decode_trace_lines(lines)
        if rescued.breaks:
            marks = spark.createDataFrame(
                [
                    (b.file, b.line, b.error, "quarantined", salvage.BROKEN_COMPRESSED, b.error)
                    for b in rescued.breaks
                ],
                "file string, line long, text string, status string, reason string, detail string",
            )
            decoded_lines = decoded_lines.unionByName(marks, allowMissingColumns=True)
            broken.extend((b.file, f"unreadable from line {b.line} on ({b.error})") for b in rescued.breaks)
        decoded = kept(decoded_lines, "traces.parquet")
        facts_df, tnr_df = trace_parts(decoded)
        non_records.append(tnr_df)
        # every line has one status, decided where it was decoded
        for r in decoded.groupBy("file", "status").count().collect():
            per_file.append({"file": r["file"], str(r["status"]): r["count"], "read": r["count"]})
            if r["status"] == "record":
                checked += int(r["count"])  # each step's states are checked against the one before
        step(f"replaying {len(inputs.traces)} trace file(s) against profile {profile.name}")
        violations.append(replay.trace_rules(facts_df, profile))

    def write_findings(found: DataFrame) -> tuple[dict[str, int], dict[str, int], list[dict[str, Any]]]:
        """``findings.jsonl`` from ``found``: the findings per ``finding`` and per severity, and the sample."""
        # the sample: by severity (findings.SEVERITIES' order), then in time order
        first_findings = _Least(SAMPLE, findings.SAMPLE_KEY)
        if quirky:  # dressed, with the findings the 0.8 quirk made of violations
            _, f_tally = report.write_jsonl_tallied(
                found, out / "findings.jsonl", findings.ORDER, ("finding",), first_findings
            )
        else:
            dressing = report.Dressing(lambda rows: findings.dressed(rows, names), findings.ORDER)
            first_findings.narrow = (findings.narrow_sample_key(), dressing)
            _, f_tally = report.write_jsonl_tallied(
                found,
                out / "findings.jsonl",
                findings.NARROW_ORDER,
                ("finding",),
                first_findings,
                finding_counts(cells),
                dressing,
            )
        by_finding = {str(k[0]): n for k, n in f_tally.items()}
        return by_finding, finding_severities(cells, by_finding), first_findings.rows()

    # Decision (measured on 10 M lines): the findings (624,000 rows there: a global sort and 350 MB of JSON,
    # both cores busy for about 8 s) are written by a driver thread while this one writes the violations and
    # the quarantine, whose dozen small queries (about 2.5 s) otherwise ran alone, the cores mostly idle
    # between them. The outputs are the same files; the steps are reported in the same order.
    side = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kcspec-findings")
    writing = side.submit(write_findings, found_findings) if found_findings is not None else None
    try:
        step("writing violations")
        all_v = _union(violations).repartition(1, "file").sortWithinPartitions("file", "line", "rule")
        all_v.write.parquet(str((out / "violations.parquet").resolve()))
        # sorted where they are written (write_jsonl_tallied: a partition at a time to the driver, or by Spark)
        vdf = spark.read.parquet(str((out / "violations.parquet").resolve()))
        # the counts the summary needs are taken while the lines are written (no query of their own)
        first_violations = _First(SAMPLE)  # the sample: the first violations in the file's order
        n_viol, v_tally = report.write_jsonl_tallied(
            vdf,
            out / "violations.jsonl",
            ("file", "line", "rule"),
            ("rule", "controller_id", "controller_epoch"),
            first_violations,
        )
        by_signature = report.violation_groups(vdf) if n_viol else []
        step("writing quarantine")
        quarantine = (
            _union(non_records)
            .where(F.col("status") == "quarantined")
            .select("file", "line", "reason", "detail", "text")
        )
        quarantine.write.parquet(str((out / "quarantine.parquet").resolve()))
        qdf = spark.read.parquet(str((out / "quarantine.parquet").resolve()))
        first_quarantined = _First(SAMPLE)
        n_quar, q_tally = report.write_jsonl_tallied(
            qdf, out / "quarantine.jsonl", ("file", "line"), ("reason",), first_quarantined
        )
        if inputs.kafka_logs and any(q_tally.get((r,), 0) for r in jvm_parser.BROKEN_REASONS):
            # where a Kafka log broke off: the line that stands for its unreadable rest (a trace's is known)
            known = {name for name, _ in broken}
            for r in qdf.where(F.col("reason").isin(*jvm_parser.BROKEN_REASONS)).collect():
                if r["file"] not in known:
                    why = f"unreadable from line {r['line']} on ({r['reason']}: {r['detail']})"
                    broken.append((r["file"], why))

        by_finding: dict[str, int] = {}
        by_severity: dict[str, int] = {}
        finding_rows: list[dict[str, Any]] = []
        if writing is not None:
            step("writing findings")
            by_finding, by_severity, finding_rows = writing.result()
    finally:
        side.shutdown(wait=True)  # on an error above, no query of the findings' is left running
    return summarise(
        Tallies(
            n_viol,
            v_tally,
            first_violations.rows,
            by_signature,
            n_quar,
            q_tally,
            first_quarantined.rows,
            by_finding,
            by_severity,
            finding_rows,
        ),
        inputs,
        out,
        step,
        per_file,
        broken,
        cells,
        edges if kafka else None,
        layouts_per_file,
        version,
        notes,
        checked,
    )


@dataclass(frozen=True)
class Tallies:
    """What writing the violations, the quarantine and the findings counted and sampled, for the summary."""

    violations: int
    by_violation: Counter[tuple[Any, ...]]
    """Per (rule, controller_id, controller_epoch)."""
    violation_rows: list[dict[str, Any]]
    by_signature: list[dict[str, Any]]
    quarantined: int
    by_quarantine: Counter[tuple[Any, ...]]
    """Per (reason,)."""
    quarantine_rows: list[dict[str, Any]]
    by_finding: dict[str, int]
    by_severity: dict[str, int]
    finding_rows: list[dict[str, Any]]


def summarise(
    t: Tallies,
    inputs: Inputs,
    out: Path,
    step: Step,
    per_file: list[dict[str, Any]],
    broken: list[tuple[str, str]],
    cells: list[stats.Cell],
    edges: dict[str, dict[tuple[str, str], int]] | None,
    layouts_per_file: dict[str, dict[str, int]],
    version: dict[str, Any],
    notes: list[str],
    checked: int,
) -> report.Summary:
    """The run's ``report.Summary`` from what was counted on the way (``edges``: ``None`` without Kafka
    logs), written to ``out`` with the coverage files (``report.write_outputs``): the same for every engine."""
    by_signature = t.by_signature
    v_tally = t.by_violation
    n_viol, n_quar, q_tally = t.violations, t.quarantined, t.by_quarantine
    by_finding, by_severity = t.by_finding, t.by_severity
    kafka = edges is not None
    finding_sample, violation_sample = findings.with_texts(t.finding_rows, t.violation_rows)
    instances = [x for g in by_signature for x in g["first"]]
    _, shown = findings.with_texts([], instances)
    for g in by_signature:  # the first instances with their lines' texts, in the groups' order
        g["first"], shown = shown[: len(g["first"])], shown[len(g["first"]) :]

    step("statistics and coverage")
    files = _file_stats(per_file, (*inputs.kafka_logs, *inputs.traces), dict(broken))
    lines_read = sum(f["read"] for f in files)
    coverage: list[dict[str, Any]] = []
    if kafka:
        for name in sorted(PROFILES):
            for machine in ("replica", "partition"):
                coverage.append(report.coverage_matrix(PROFILES[name], machine, (edges or {})[machine]))
    by_rule: dict[str, int] = {}
    v_broker: dict[int, int] = {}
    v_epoch: dict[int, int] = {}
    for (rule, controller_id, controller_epoch), n in v_tally.items():
        by_rule[str(rule)] = by_rule.get(str(rule), 0) + n
        if controller_id is not None:
            v_broker[int(controller_id)] = v_broker.get(int(controller_id), 0) + n
        if controller_epoch is not None:
            v_epoch[int(controller_epoch)] = v_epoch.get(int(controller_epoch), 0) + n
    summary = report.Summary(
        lines_read=lines_read,
        parsed=sum(f["record"] + f["continuation"] + f["blank"] for f in files),
        quarantined=n_quar,
        violations=n_viol,
        per_file=files,
        kinds=stats.kind_counts(cells, EVENT_KINDS) if kafka else {},
        by_rule=by_rule,
        by_reason={str(k[0]): n for k, n in q_tally.items()},
        per_broker=stats.per_broker(cells, v_broker),
        per_epoch=stats.per_epoch(cells, EVENT_KINDS, v_epoch) if kafka else [],
        quarantine_sample=t.quarantine_rows,
        violation_sample=violation_sample,
        coverage=coverage,
        findings=sum(by_finding.values()),
        by_finding=by_finding,
        by_severity=by_severity,
        finding_sample=finding_sample,
        layouts=layouts_per_file,
        version=version,
        warnings=[str(version[k]) for k in ("warning", "mixed") if version.get(k)],
        skipped=[{"file": name, "why": why} for name, why in inputs.skipped],
        notes=notes,
        checked=checked,
        violation_groups=by_signature,
        unreadable=[{"file": name, "why": why} for name, why in inputs.unreadable],
    )
    report.write_outputs(
        out, summary, [(f"coverage-{m['profile']}-{m['machine']}.json", m) for m in coverage]
    )
    return summary


def ceiling_variants(spark: SparkSession, files: tuple[str, ...]) -> dict[str, DataFrame]:
    """The stored parse as the audit computes it, for the benchmark's ceiling measurement."""
    return {"the stored parse (JVM reader)": stored_parse(spark, FileIds.of(files, "dir").listing())[0]}


class _First:
    """The first ``limit`` rows handed to it: a sample of a stream, in the stream's order."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.rows: list[dict[str, Any]] = []

    def __call__(self, row: dict[str, Any]) -> None:
        if len(self.rows) < self.limit:
            self.rows.append(row)

    def take(self, df: DataFrame, order: tuple[str, ...]) -> None:
        """The first rows of ``df`` in ``order``: those the stream in that order would have handed first."""
        self.rows = [r.asDict() for r in df.orderBy(*order).limit(self.limit).collect()]


class _Least:
    """The ``limit`` least rows handed to it by the ``key`` columns, ascending with nulls first (as Spark's
    ``orderBy(*key).limit(limit)``); rows with equal keys in the order they were handed. ``narrow``: for an
    output written with a ``report.Dressing``, the same key over the rows its sort moves (columns), and the
    dressing: ``take`` is then given those rows and dresses only the least."""

    def __init__(
        self,
        limit: int,
        key: tuple[str, ...],
        narrow: tuple[tuple[Column, ...], report.Dressing] | None = None,
    ) -> None:
        self.limit = limit
        self.key = key
        self.narrow = narrow
        self.kept: list[dict[str, Any]] = []

    def _order(self, row: dict[str, Any]) -> tuple[tuple[bool, Any], ...]:
        def value(k: str) -> Any:
            ranked = findings.RANKED.get(k)
            return row[k] if ranked is None or row[k] not in ranked else ranked.index(row[k])

        return tuple((row[k] is not None, value(k)) for k in self.key)

    def __call__(self, row: dict[str, Any]) -> None:
        self.kept.append(row)
        if len(self.kept) >= 50 * self.limit:
            self.kept = self.rows()

    def rows(self) -> list[dict[str, Any]]:
        return sorted(self.kept, key=self._order)[: self.limit]

    def take(self, df: DataFrame, order: tuple[str, ...]) -> None:
        """The least rows of ``df`` by the key, ties in ``order`` (as a stream in that order would give them)."""
        if self.narrow is not None:
            key, dressing = self.narrow
            least = dressing.make(_least(df, key, order, self.limit))
        else:
            cols = [findings.rank_column(F.col(k)) if k in findings.RANKED else F.col(k) for k in self.key]
            least = _least(df, tuple(cols), order, self.limit)
        self.kept = [r.asDict() for r in least.collect()]


def _least(df: DataFrame, key: tuple[Column, ...], order: tuple[str, ...], limit: int) -> DataFrame:
    """``df.orderBy(*key, *order).limit(limit)`` (the key ascending, nulls first), the key's columns computed once
    per row. Decision (measured on 10 M lines, 624,000 findings): sorted by the expressions themselves, the
    top-``limit`` sort evaluated them at every comparison (a finding's severity is a case over every finding
    rule, and its rank a map lookup), and the JIT compiled them twice over."""
    names = [f"_least_key_{i}" for i in range(len(key))]
    keyed = df.select("*", *[k.alias(n) for k, n in zip(key, names, strict=True)])
    ordered = keyed.orderBy(*[F.col(n).asc_nulls_first() for n in names], *order)
    return ordered.limit(limit).drop(*names)


def finding_counts(cells: Iterable[stats.Cell]) -> tuple[int, Counter[tuple[Any, ...]]]:
    """How many findings the log rules' pass passes on, in all and per ``finding``: the records of
    ``findings.FINDING_KINDS``, as the reader counted them (its cells; ``severity_counts`` counts them by
    severity). Decision: the pass passes each such
    record on once (its first pass; ``replay.log_pass``), so these are the findings' own counts, and the
    findings' Parquet needs no count or aggregation of its own (on 10 M lines, 624,000 findings: the two
    queries and the table kept for them cost about 6 JVM CPU s)."""
    tally: Counter[tuple[Any, ...]] = Counter()
    for c in cells:
        kind = findings.FINDING_KINDS.get(c.kind or "") if c.status == "record" else None
        if kind is not None:
            tally[(kind.finding,)] += c.lines
    return sum(tally.values()), tally


def undated_notes(per_file: Mapping[str, Mapping[str, int]]) -> list[str]:
    """A note for the files whose records have no timestamp (``lines.UNDATED`` layouts, from ``per_file``'s
    layout counts): they are ordered by their position in the file (``lines.LAYOUTS``' decision)."""
    found = {
        f: n
        for f, counts in per_file.items()
        if (n := sum(k for name, k in counts.items() if name.startswith(lines.UNDATED)))
    }
    if not found:
        return []
    first, n = next(iter(found.items()))
    more = f" and {sum(found.values()) - n} in {len(found) - 1} more file(s)" if len(found) > 1 else ""
    return [
        f"{n} record(s) without a timestamp in {first}{more}: ordered by their position in the file, before the "
        "dated records of their controller epoch; their ts is null in the outputs, and no rule compares their "
        "time with another record's"
    ]


def severity_counts(cells: Iterable[stats.Cell]) -> dict[str, int]:
    """The findings of ``finding_counts`` per severity (``findings.severity_of``: the cells keep each
    transition's logged from- and to-state), in ``findings.SEVERITIES``' order."""
    tally: Counter[str] = Counter()
    for c in cells:
        if c.status == "record":
            severity = findings.severity_of(c.kind, c.from_state, c.to_state)
            if severity is not None:
                tally[severity] += c.lines
    return {s: tally[s] for s in findings.SEVERITIES if tally[s]}


def finding_severities(cells: Iterable[stats.Cell], by_finding: Mapping[str, int]) -> dict[str, int]:
    """``severity_counts`` and the warnings the 0.8 quirk made of violations (``_not_checkable``: no cell of
    theirs), from ``by_finding``: the findings per ``finding`` as written."""
    by_severity = severity_counts(cells)
    if by_finding.get(layouts.NOT_CHECKABLE):
        by_severity["warning"] = by_severity.get("warning", 0) + by_finding[layouts.NOT_CHECKABLE]
    return by_severity


def _union(dfs: list[DataFrame]) -> DataFrame:
    result = dfs[0]
    for df in dfs[1:]:
        result = result.unionByName(df, allowMissingColumns=True)
    return result


def _file_stats(
    parts: list[dict[str, Any]], names: Iterable[str], broken: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Per input file (every one, also those without a line): ``read`` (counted by the reader), the lines of
    each status (counted where they were parsed, attached or quarantined; ``lines`` is their sum), and
    ``unreadable`` for a file that broke off."""
    acc: dict[str, dict[str, int]] = {n: {"read": 0, **{k: 0 for k in STATUSES}} for n in names}
    for row in parts:
        d = acc.setdefault(row["file"], {"read": 0, **{k: 0 for k in STATUSES}})
        for k in d:
            if row.get(k) is not None:
                d[k] += int(row[k])
    out = []
    for f, d in sorted(acc.items()):
        lines = sum(d[k] for k in STATUSES)
        out.append({"file": f, "lines": lines, **d, "unreadable": broken.get(f)})
    return out


def conclude(
    out: Path, summary: report.Summary, max_quarantine: float = verdict.DEFAULT_MAX_QUARANTINE
) -> verdict.AuditOutcome:
    """The run's verdict (``verdict.judge``), written to ``out/verdict.json`` and put at the top of
    ``out/summary.html``."""
    v = verdict.judge(
        summary.lines_read,
        summary.parsed,
        summary.quarantined,
        summary.violations,
        summary.per_file,
        max_quarantine,
        summary.warnings,
        summary.notes,
        summary.checked,
        [f"{u['file']}: {u['why']}, not audited" for u in summary.unreadable],
        sum(summary.by_reason.get(r, 0) for r in lines.EXCUSED_REASONS),
        summary.by_severity,
    )
    (out / "verdict.json").write_text(json.dumps(v.as_json(), indent=1) + "\n")
    if (out / "summary.html").exists():
        verdict.mark_html(out / "summary.html", v)
    return v
