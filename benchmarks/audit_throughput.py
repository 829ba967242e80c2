"""Audit throughput: a corpus of valid Kafka 2.8 histories with a known set of injected faults, audited on Spark.

Usage::

    .venv/bin/python benchmarks/audit_throughput.py --lines 10000000 --master 'local[2]'

The corpus comes from the reference controller: one seeded random walk (``conformance/selfcheck/simulate.py``, TRACE
logging on) yields a cluster's ``state-change.log`` and ``controller.log`` lines, routed to the broker that
was controller. That history is copied into ``cluster-NNNN/`` directories (one cluster history each, audited
with ``--history dir``), each copy's timestamps moved one hour later, until the corpus has
``--lines`` lines. Into ``--inject`` copies the generator writes, after a logged replica transition of that
copy's controller and with that line's timestamp and controller prefix:

* a partition change to a leader outside the ISR (rule ``leader-not-in-isr``),
* a replica transition NonExistentReplica → OnlineReplica (rule ``invalid-transition``),
* one line that is not a log record (quarantined, reason ``no-layout``),
* an exception with one stack frame after the transition (two continuation lines, not quarantined).

The benchmark then asserts that the audit found exactly the injected violations (rule, file and line) and
exactly the injected quarantined lines; a walk whose own history the audit flags fails the benchmark.
Nothing of the corpus is collected to the driver beyond aggregates and samples.

Side by side, in the same run and on the same corpus (the default), three figures, each with its wall and
CPU seconds: **the audit** (Spark's start-up + ``run_audit``), **Spark's own floor** (the same start-up +
read + parse with the JVM reader + one shuffle and sort of the records by partition, to a no-op sink) and
**a single-process Python pass** (read every file, one regular expression per line, records grouped by
partition and each group sorted by timestamp). The ratio audit / floor is the figure the target is about
(≤ 1.5 at 10 M lines). ``--rounds N`` (default 3) measures the floor and the audit N times, each round in a
fresh Spark session (a new JVM: each audit compiles its code as a user's run does): every round's pair is
recorded, and the target is judged on the median ratio, since one pair moves by about 0.05 between runs of
the same tree on this 2-core machine. ``--end-to-end N`` (default 10,000; 0: not) also times ``kcspec audit`` run as a
command on a fresh corpus of about N lines (``kcspec simulate --emit-logs DIR --brokers 5 --partitions 8
--events 460 --seed 1`` for 10,000), start-up of its JVM included (target ≤ 10 s at 10,000). The figures, the
ratio and the targets are written into the generated section of ``--results`` (default
``benchmarks/results/audit_throughput.md``; the rest of that file is kept). The machine may be shared: the
load average is printed with every figure and recorded.

``--small-files N`` (default 5,000; 0: not) adds the case of a real broker's log folder (issue 30): ``N``
hourly-rotated files (``state-change.log.2026-01-01-00``, ``controller.log.2026-01-01-00``, …) cut, each at a
record, from one walk of ``--small-files-steps`` events (3,000: about 876,000 lines, as the 9-month folder of a
Kafka 2.1.1 broker), audited as one cluster by the local engine (``local_engine.run_local``: what ``kcspec
audit`` runs for such a folder, no Spark session; its JVM's CPU counted once the audit has ended it) and in the
same Spark session, each measured side by side with the single-process Python pass over the same files (target:
the audit ≤ 3× the Python pass), and the same lines concatenated into 2 files audited on Spark too (what the
files themselves cost). The audit must find no violation and quarantine nothing there, and both engines must
write the same outputs.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gzip
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import harness  # beside this script
from kcspec.audit import jvm_parser, report
from kcspec.audit.local_engine import run_local
from kcspec.audit.pipeline import run_audit
from kcspec.audit.session import make_session
from kcspec.audit.spark_job import expand_inputs
from kcspec.conformance.selfcheck.simulate import WalkConfig, route_lines, walk
from kcspec.reference_impl.logs import DEFAULT_START
from kcspec.reference_impl.reference import ReferenceController
from kcspec.spec.profiles import KAFKA_2_8
from pyspark.sql import functions as F
from results_section import write_section as write_generated_section  # beside this script

USER_SPARK_CONF_DIR = os.environ.get("SPARK_CONF_DIR")
"""The user's own ``SPARK_CONF_DIR`` (read before this process starts a session, which sets one of its own): the
command timed end to end gets the user's environment, not this process's session folder (with which a small
audit would run without its class-data sharing archive)."""

HOUR_PREFIX = DEFAULT_START.strftime("[%Y-%m-%d %H:")
TRANSITION = "] Changed state of replica "


@dataclass(frozen=True)
class Expected:
    violations: frozenset[tuple[str, int, str]]
    quarantined: frozenset[tuple[str, int]]


def base_history(cfg: WalkConfig, steps: int, seed: int) -> dict[str, list[str]]:
    """One walk's log lines per file name (``broker-<id>-state-change.log`` / ``broker-<id>-controller.log``)."""
    ctl = ReferenceController(cfg.profile, trace=True)
    for _ in walk(ctl, cfg, steps, seed):
        pass
    files: dict[str, list[str]] = {}
    for kind, lines in (("state-change", ctl.state_change_log), ("controller", ctl.controller_log)):
        for broker, broker_lines in sorted(route_lines(lines, 0).items()):
            files[f"broker-{broker}-{kind}.log"] = broker_lines
    last = max(line for lines in files.values() for line in lines if line.startswith("["))
    if not last.startswith(HOUR_PREFIX):
        raise SystemExit(f"the walk's log spans more than an hour ({last[:26]}): use fewer --steps")
    return files


def inject(lines: list[str], site: int, tag: str) -> list[str]:
    """``lines`` with the fault lines after line ``site`` (a replica transition; 0-based)."""
    record = lines[site]
    head = record[: record.index(TRANSITION) + 2]  # "[ts] TRACE [Controller id=C epoch=E] "
    ts_level = head[: head.index("] ") + 2]
    prefix = head[len(ts_level) :].split(" ", 1)[1]  # "[Controller id=C epoch=E] "
    stamp = ts_level.split(" ")[0] + " " + ts_level.split(" ")[1]  # "[date time]"
    faults = [
        "java.lang.IllegalStateException: injected",
        "\tat kafka.controller.Injected.fault(Injected.scala:1)",
        f"{stamp} INFO {prefix}Changed partition {tag}-0 from OnlinePartition to OnlinePartition with state "
        "LeaderAndIsr(leader=9, leaderEpoch=5, isr=List(1, 2), zkVersion=5) (state.change.logger)",
        f"{stamp} TRACE {prefix}Changed state of replica 1 for partition {tag}-0 from NonExistentReplica to "
        "OnlineReplica (state.change.logger)",
        f"#### {tag}: not a log line ####",
    ]
    return lines[: site + 1] + faults + lines[site + 1 :]


def generate(
    corpus: Path, target: int, files: dict[str, list[str]], injected: int, write: bool = True
) -> tuple[int, Expected]:
    """Write copies of ``files`` until ``target`` lines; returns the line count and what must be found.

    ``write=False`` only computes them (the corpus of an earlier run with the same arguments is reused)."""
    per_copy = sum(len(v) for v in files.values())
    copies = max(1, -(-target // per_copy))
    violations: set[tuple[str, int, str]] = set()
    quarantined: set[tuple[str, int]] = set()
    # the injection site: the first replica transition in the file of the walk's first controller
    name = next(
        n for n in sorted(files) if n.endswith("-state-change.log") and any(TRANSITION in x for x in files[n])
    )
    site = next(i for i, x in enumerate(files[name]) if TRANSITION in x)
    total = 0
    for k in range(copies):
        d = corpus / f"cluster-{k:04d}"
        d.mkdir(exist_ok=not write)
        hour = (DEFAULT_START + timedelta(hours=k)).strftime("[%Y-%m-%d %H:")
        for fname, lines in files.items():
            if k < injected and fname == name:
                lines = inject(lines, site, f"injected{k}")
                path = str((d / fname).resolve())
                violations.add((path, site + 4, "leader-not-in-isr"))
                violations.add((path, site + 5, "invalid-transition"))
                quarantined.add((path, site + 6))
            if write:
                text = "\n".join(lines) + "\n"
                (d / fname).write_text(text.replace(HOUR_PREFIX, hour) if k else text)
            total += len(lines)
    return total, Expected(frozenset(violations), frozenset(quarantined))


ROTATED_START = "2026-01-01-00"
"""The first hour of the small-files folder's names (``controller.log.2026-01-01-00``: log4j's hourly
``DailyRollingFileAppender`` pattern ``'.'yyyy-MM-dd-HH``, Kafka's config/log4j.properties)."""


def small_files(folder: Path, count: int, steps: int, seed: int) -> int:
    """A broker's log folder of ``count`` hourly-rotated small files (half ``state-change.log.<hour>``, half
    ``controller.log.<hour>``) cut in order from one seeded random walk of the reference controller at TRACE
    (``steps`` events; 3,000 give about 876,000 lines, as many as the 9-month folder of issue 30): one clean
    cluster history, audited as one cluster. Returns the lines written."""
    cfg = WalkConfig(brokers=5, topics=12, partitions=12, rf=3)
    ctl = ReferenceController(cfg.profile, trace=True)
    for _ in walk(ctl, cfg, steps, seed):
        pass
    folder.mkdir(parents=True, exist_ok=True)
    start = datetime.strptime(ROTATED_START, "%Y-%m-%d-%H")
    total = 0
    for kind, lines, n in (
        ("state-change", ctl.state_change_log, count - count // 2),
        ("controller", ctl.controller_log, count // 2),
    ):
        # each file starts at a record (a rotated file is cut between two records, never inside a stack trace)
        cuts = [next_record(lines, i * len(lines) // n) for i in range(n)] + [len(lines)]
        for i in range(n):
            hour = (start + timedelta(hours=i)).strftime("%Y-%m-%d-%H")
            chunk = lines[cuts[i] : cuts[i + 1]]
            (folder / f"{kind}.log.{hour}").write_text("".join(x + "\n" for x in chunk))
            total += len(chunk)
    return total


def next_record(lines: list[str], at: int) -> int:
    """The index of the first record (a line starting with ``[``) at or after ``at``."""
    while at < len(lines) and not lines[at].startswith("["):
        at += 1
    return at


def one_file_each(folder: Path, into: Path) -> None:
    """``folder``'s rotated files concatenated in name order into one ``state-change.log`` and one
    ``controller.log`` in ``into``: the same lines in two files."""
    into.mkdir(parents=True, exist_ok=True)
    for kind in ("state-change", "controller"):
        with (into / f"{kind}.log").open("w") as out:
            for f in sorted(folder.glob(f"{kind}.log.*")):
                out.write(f.read_text())


def stale_corpus(corpus: Path, files: dict[str, list[str]]) -> str | None:
    """Why a kept corpus is not the one these arguments generate (a file of its last copy has another number of
    lines than the walk's history, with or without the injected faults: other arguments, or another reference
    controller), else ``None``."""
    copies = sorted(corpus.glob("cluster-*"))
    if not copies:
        return f"{corpus} holds no cluster-NNNN copy"
    for name, lines in files.items():
        path = copies[-1] / name
        try:
            with path.open(encoding="utf-8") as f:
                n = sum(1 for _ in f)
        except OSError as exc:
            return f"{path}: {exc.strerror or exc}"
        site = next((i for i, x in enumerate(lines) if TRANSITION in x), None)
        if n not in (len(lines), len(lines) if site is None else len(inject(lines, site, "-"))):
            return f"{path} has {n:,} lines where the walk gives {len(lines):,}"
    return None


def peak_rss_mib(pid: int) -> float:
    """The peak resident set size (``VmHWM``) of process ``pid`` in MiB, 0 when it cannot be read."""
    try:
        for row in Path(f"/proc/{pid}/status").read_text().splitlines():
            if row.startswith("VmHWM:"):
                return int(row.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (0 when it cannot be read)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def machine_note() -> str:
    """Commit and load average, printed with every figure (the machine is shared)."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        commit = "?"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"commit {commit or '?'}, load average {load}"


BEFORE_STORED_COLUMNS = (
    *("uri", "block", "rid", "status", "reason", "ts", "kind", "controller_id", "controller_epoch", "broker"),
    *("replica", "topic", "partition", "from_state", "to_state", "leader", "leader_epoch", "isr", "topics"),
)
"""What the stored parse held before the JVM reader (Spark's text source, the parser as a UDF)."""


def ceiling(spark: Any, corpus: Path, note: Callable[[str], None]) -> None:
    """What Spark costs on this corpus before any audit logic: read and count, read and parse (noop sink),
    read, parse and one shuffle and sort of the records by partition, read, parse and store as Parquet."""
    from kcspec.audit import pipeline, spark_job

    files = expand_inputs([str(corpus)]).kafka_logs
    raw = spark_job.raw_lines(spark, files)
    n = raw.select(F.length("text").alias("n")).agg(F.count(F.lit(1)), F.sum("n")).collect()[0]
    note(f"(a) read the text, count lines and characters: {n[0]:,} lines, {n[1]:,} characters")
    parsed = spark_job.parse_kafka(raw)
    stored = parsed.select(*BEFORE_STORED_COLUMNS)
    stored.write.format("noop").mode("overwrite").save()
    note(f"(b) read + parse ({jvm_parser.status(spark)}), the stored columns to a noop sink")
    for variant, df in pipeline.ceiling_variants(spark, files).items():
        df.write.format("noop").mode("overwrite").save()
        note(f"(b') read + parse, {variant}, to a noop sink")
    records = stored.where(F.col("status") == "record").select(
        "uri",
        "rid",
        "ts",
        "kind",
        "topic",
        "partition",
        "replica",
        "controller_epoch",
        "from_state",
        "to_state",
    )
    records.repartition("topic", "partition").sortWithinPartitions(
        "topic", "partition", "ts", "uri", "rid"
    ).write.format("noop").mode("overwrite").save()
    note("(c) read + parse + one shuffle and sort of the records by partition (10 columns), noop sink")
    new = pipeline.ceiling_variants(spark, files)["the stored parse (JVM reader)"]
    new.where(F.col("status") == "record").select(
        "fid",
        "line",
        "ts",
        "kind",
        "topic",
        "partition",
        "replica",
        "controller_epoch",
        "from_state",
        "to_state",
    ).repartition("topic", "partition").sortWithinPartitions(
        "topic", "partition", "ts", "fid", "line"
    ).write.format("noop").mode("overwrite").save()
    note("(c') as (c) with the JVM reader's stored parse (integer file ids, long timestamps)")
    new.write.mode("overwrite").parquet(str(corpus.parent / "ceiling.parquet"))
    note("(d) read + parse (JVM reader) and store as Parquet, as the audit does")
    shutil.rmtree(corpus.parent / "ceiling.parquet", ignore_errors=True)


RECORD = re.compile(
    r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] \w+ .*?(?:partition |for partition )"
    r"(?:\[)?([A-Za-z0-9._-]+?)[-,](\d+)"
)
"""The Python pass's one regular expression: timestamp, topic and partition of a record that names one."""


def python_pass(files: tuple[str, ...]) -> tuple[int, int, int]:
    """One process, no Spark: every line of ``files`` read and matched once against ``RECORD``, the matches
    grouped by partition and each group sorted by (timestamp, file, line). ``(lines, records, partitions)``."""
    groups: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    lines = records = 0
    for fid, name in enumerate(files):
        opener: Any = gzip.open if name.endswith(".gz") else open
        with opener(name, "rt", encoding="utf-8", errors="replace") as f:
            for n, text in enumerate(f, start=1):
                lines += 1
                m = RECORD.match(text)
                if m is not None:
                    records += 1
                    groups.setdefault((m[2], m[3]), []).append((m[1], fid, n))
    for g in groups.values():
        g.sort()
    return lines, records, len(groups)


@dataclass(frozen=True)
class Figure:
    """One measured thing: wall seconds, CPU seconds (JVM and this process), lines."""

    what: str
    seconds: float
    cpu: float
    lines: int

    def row(self) -> str:
        rate = self.lines / self.seconds if self.seconds else 0.0
        return f"| {self.what} | {self.seconds:.1f} | {self.cpu:.1f} | {rate:,.0f} |"


def floor(spark: Any, corpus: Path) -> None:
    """Spark's own floor on ``corpus``: read + parse (the JVM reader, as the audit) + one shuffle and sort of
    the records by partition, to a no-op sink."""
    from kcspec.audit import pipeline

    files = expand_inputs([str(corpus)]).kafka_logs
    stored = pipeline.ceiling_variants(spark, files)["the stored parse (JVM reader)"]
    stored.where(F.col("status") == "record").select(
        "fid",
        "line",
        "ts",
        "kind",
        "topic",
        "partition",
        "replica",
        "controller_epoch",
        "from_state",
        "to_state",
    ).repartition("topic", "partition").sortWithinPartitions(
        "topic", "partition", "ts", "fid", "line"
    ).write.format("noop").mode("overwrite").save()


def end_session(spark: Any) -> None:
    """Stop ``spark`` and end its JVM, so that the next ``make_session`` starts a new one."""
    from kcspec.model.spark.session import end_jvm
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    spark.stop()
    proc = getattr(gateway, "proc", None)
    if gateway is not None:
        gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None
    if proc is not None:
        end_jvm(proc)


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def children_cpu() -> float:
    """CPU seconds of this process's ended children (the local engine's JVM, once the audit has ended it)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def end_to_end(root: Path, lines: int, master: str, seed: int) -> list[Figure]:
    """``kcspec audit`` as a command (its own JVM) on a simulated cluster of about ``lines`` lines, twice: the
    first run's JVM writes the driver's class-data sharing archive when there is none (``class_cache``: a
    user's first small audit, or the first after a new JDK or Spark), the second is every later run."""
    kcspec = str(Path(sys.executable).with_name("kcspec"))
    logs = root / "e2e-logs"
    events = max(
        10, lines * 46 // 1000
    )  # 10,000 lines: `--events 460` (10,740 lines at seed 1), as the target says
    while True:
        shutil.rmtree(logs, ignore_errors=True)
        subprocess.run(
            [
                kcspec,
                "simulate",
                "--emit-logs",
                str(logs),
                "--brokers",
                "5",
                "--partitions",
                "8",
                "--events",
                str(events),
                "--seed",
                str(seed),
            ],
            check=True,
            capture_output=True,
        )
        n = sum(len(p.read_text().splitlines()) for p in logs.rglob("*.log"))
        if n >= lines or events > 100 * lines:
            break
        events = int(events * lines / max(n, 1) * 1.05) + 1
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONF_DIR"}
    if USER_SPARK_CONF_DIR is not None:
        env["SPARK_CONF_DIR"] = USER_SPARK_CONF_DIR
    return [_timed_audit(kcspec, logs, root / f"e2e-out-{run}", master, env, n) for run in (1, 2)]


def _timed_audit(kcspec: str, logs: Path, out: Path, master: str, env: dict[str, str], n: int) -> Figure:
    """One ``kcspec audit`` command on ``logs``: its wall time and its process tree's CPU seconds."""
    shutil.rmtree(out, ignore_errors=True)
    t = time.monotonic()
    proc = subprocess.Popen(
        [kcspec, "audit", str(logs), "--out", str(out), "--master", master],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    seen: dict[int, float] = {}  # CPU seconds of the command and every process under it (its JVM), sampled
    while proc.poll() is None:
        for pid in descendants(proc.pid):
            seen[pid] = max(seen.get(pid, 0.0), cpu_seconds(pid))
        time.sleep(0.2)
    dt = time.monotonic() - t
    output = proc.stdout.read() if proc.stdout is not None else ""
    if proc.returncode != 0:
        raise SystemExit(f"kcspec audit exited {proc.returncode} on a clean corpus:\n{output[-2000:]}")
    run = out.name.rsplit("-", 1)[-1]
    what = "first run: its JVM writes the class archive if there is none" if run == "1" else "run again"
    return Figure(f"`kcspec audit` end to end, {n:,} lines (own JVM; {what})", dt, sum(seen.values()), n)


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (from ``/proc``)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


RESULTS = Path(__file__).resolve().parent / "results" / "audit_throughput.md"
BEGIN = "<!-- begin: written by benchmarks/audit_throughput.py (its latest run; do not edit by hand) -->"
END = "<!-- end: written by benchmarks/audit_throughput.py -->"
FLOOR_TARGET, END_TO_END_TARGET, SMALL_FILES_TARGET = 1.5, 10.0, 3.0


def results_section(
    args: argparse.Namespace,
    lines: int,
    figures: list[Figure],
    load: list[float],
    s: report.Summary,
    small: list[Figure] | None = None,
    rounds: list[tuple[Figure, Figure]] | None = None,
    small_rounds: list[tuple[Figure, Figure]] | None = None,
) -> str:
    """The run's figures as the results file's generated section: command, machine, the side-by-side table,
    the ratio audit / floor (wall and CPU; with ``rounds``, each round's (floor, audit) and their median), the
    end-to-end time, and the small files' figures (``small``: the audit on Spark, the same lines in 2 files;
    ``small_rounds``: each round's (Python pass, local engine), judged on the median of their ratios), each against
    its target."""
    argv = " ".join(sys.argv[1:])
    pairs = rounds or [(figures[0], figures[2])]
    walls = [a.seconds / f.seconds for f, a in pairs]
    cpus = [a.cpu / f.cpu if f.cpu else 0.0 for f, a in pairs]
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    head = list(figures[:3])
    if len(pairs) > 1:  # every round's pair named by its round
        head[0] = dataclasses.replace(head[0], what=f"{head[0].what} (round 1)")
        head[2] = dataclasses.replace(head[2], what=f"{head[2].what} (round 1)")
    rows = head + [f for pair in pairs[1:] for f in pair]
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out = [
        BEGIN,
        "## Latest run (written by the script)",
        "",
        f"    .venv/bin/python benchmarks/audit_throughput.py {argv}",
        "",
        f"{when}; {machine_note()} at the end; load average (1 min) during the run {min(load):.2f}–"
        f"{max(load):.2f} on {os.cpu_count()} CPUs{' (a loaded machine: compare CPU seconds)' if max(load) > 2.5 else ''}"
        f"; master `{args.master}`, seed {args.seed}, {args.steps} steps; {lines:,} lines; the audit found exactly "
        f"the injected {s.violations} violations and {s.quarantined} quarantined lines. CPU s = the Spark JVM's "
        "and the benchmark process's (for the command: its process tree, sampled).",
        "",
        "| what | wall s | CPU s | lines/s |",
        "|---|---:|---:|---:|",
        *(f.row() for f in rows),
        "",
    ]
    if len(pairs) > 1:
        out.append(
            f"audit / Spark's floor in the {len(pairs)} rounds (each a fresh Spark session): "
            + ", ".join(f"{w:.2f}" for w in walls)
            + " wall; "
            + ", ".join(f"{c:.2f}" for c in cpus)
            + " CPU."
        )
        out.append("")
    median = f" (the median of the {len(pairs)} rounds)" if len(pairs) > 1 else ""
    out.append(
        f"**audit / Spark's floor = {wall:.2f} wall, {cpu:.2f} CPU**{median} at {lines:,} lines (target ≤ "
        f"{FLOOR_TARGET} at 10 M lines: {'met' if wall <= FLOOR_TARGET else 'not met'} in this run)."
    )
    if len(figures) > 4:
        first, e2e = figures[3], figures[4]
        verdict = "met" if e2e.seconds <= END_TO_END_TARGET else "not met"
        out.append(
            f"**`kcspec audit` end to end on {e2e.lines:,} lines: {e2e.seconds:.1f} s wall, {e2e.cpu:.1f} CPU s** "
            f"(target ≤ {END_TO_END_TARGET:.0f} s: {verdict} in this run); the first run "
            f"{first.seconds:.1f} s wall, {first.cpu:.1f} CPU s."
        )
    if small and small_rounds:
        audit_small, joined = small
        small_pairs = small_rounds
        ratios = [loc.seconds / py.seconds for py, loc in small_pairs]
        cpu_ratios = [loc.cpu / py.cpu if py.cpu else 0.0 for py, loc in small_pairs]
        ratio, cpu_ratio = statistics.median(ratios), statistics.median(cpu_ratios)
        local_f = small_pairs[0][1]
        python_median = statistics.median(py.seconds for py, _ in small_pairs)
        verdict = "met" if ratio <= SMALL_FILES_TARGET else "not met"
        out += [
            "",
            "| what | wall s | CPU s | lines/s |",
            "|---|---:|---:|---:|",
            *(f.row() for pair in small_pairs for f in pair),
            audit_small.row(),
            joined.row(),
            "",
        ]
        if len(small_pairs) > 1:
            out += [
                f"local engine / Python pass in the {len(small_pairs)} rounds: "
                + ", ".join(f"{r:.2f}" for r in ratios)
                + " wall; "
                + ", ".join(f"{r:.2f}" for r in cpu_ratios)
                + " CPU.",
                "",
            ]
        median = f" (the median of the {len(small_pairs)} rounds)" if len(small_pairs) > 1 else ""
        out.append(
            f"**{args.small_files:,} small files: the audit (local engine, `kcspec audit`'s default for them) / "
            f"single-process Python pass = {ratio:.2f} wall, {cpu_ratio:.2f} CPU**{median} on {local_f.lines:,} "
            f"lines (target ≤ {SMALL_FILES_TARGET:.0f}: {verdict} in this run; no violation, nothing quarantined, "
            "the same outputs as the Spark path); on Spark: "
            f"{audit_small.seconds / python_median:.2f} wall, the same lines in 2 files "
            f"{joined.seconds / python_median:.2f} × the Python pass (its median)."
        )
    out.append(END)
    return "\n".join(out)


def write_section(path: Path, text: str) -> None:
    """Rewrite this script's section of ``path`` (between ``BEGIN`` and ``END``)."""
    write_generated_section(path, text, begin=BEGIN, end=END, title="# kcspec audit throughput")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000, help="corpus size (rounded up to whole copies)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=3000, help="random events in the walk")
    ap.add_argument("--topics", type=int, default=12)
    ap.add_argument("--partitions", type=int, default=12)
    ap.add_argument("--inject", type=int, default=5, help="copies that receive the injected faults")
    ap.add_argument("--keep", type=Path, help="write the corpus and the audit output here (kept)")
    ap.add_argument(
        "--ceiling",
        action="store_true",
        help="measure what Spark costs for reading, parsing and one shuffle (no audit) and stop",
    )
    ap.add_argument(
        "--reuse", action="store_true", help="with --keep: audit the corpus already there (same arguments)"
    )
    ap.add_argument(
        "--end-to-end",
        type=int,
        default=10_000,
        metavar="N",
        help="also time `kcspec audit` as a command on a simulated cluster of about N lines (0: not)",
    )
    ap.add_argument(
        "--small-files",
        type=int,
        default=5000,
        metavar="N",
        help="also audit a folder of N hourly-rotated small files, side by side with the Python pass (0: not)",
    )
    ap.add_argument(
        "--small-files-steps",
        type=int,
        default=3000,
        help="random events of the walk the small files are cut from (3,000: about 876,000 lines)",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        metavar="N",
        help="measure the floor and the audit N times, each round in a fresh Spark session; the target is "
        "judged on the median ratio (default: %(default)s)",
    )
    ap.add_argument(
        "--results",
        type=Path,
        default=RESULTS,
        help="the results file whose generated section this run rewrites (default: %(default)s)",
    )
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, not {args.rounds}")
    harness.print_header(f"Audit throughput: {args.lines:,} lines, master {args.master}")
    with tempfile.TemporaryDirectory(prefix="kcspec-audit-bench-") as tmp:
        root = args.keep if args.keep is not None else Path(tmp)
        corpus, out = root / "corpus", root / "out"
        reuse = args.reuse and args.keep is not None and corpus.is_dir()
        corpus.mkdir(parents=True, exist_ok=reuse)
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        t0 = time.monotonic()
        cfg = WalkConfig(brokers=5, topics=args.topics, partitions=args.partitions, rf=3)
        base = base_history(cfg, args.steps, args.seed)
        if reuse:
            stale = stale_corpus(corpus, base)
            if stale is not None:
                raise SystemExit(f"--reuse: {stale}; run without --reuse to generate it again")
        lines, expected = generate(corpus, args.lines, base, args.inject, write=not reuse)
        print(
            f"{'reused' if reuse else 'generated'} {lines:,} lines ({sum(len(v) for v in base.values()):,} per cluster copy) in "
            f"{time.monotonic() - t0:.1f}s (seed {args.seed}, {args.steps} steps)",
            flush=True,
        )
        t_start = time.monotonic()
        spark = make_session(args.master)
        jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
        print(
            f"Spark session started in {time.monotonic() - t_start:.1f}s (JVM CPU {cpu_seconds(jvm_pid):.1f}s); "
            f"parser: {jvm_parser.status(spark)}; {machine_note()}",
            flush=True,
        )
        t1, c1 = time.monotonic(), cpu_seconds(jvm_pid)

        def step(message: str) -> None:
            dc = cpu_seconds(jvm_pid) - c1
            print(f"  {time.monotonic() - t1:7.1f}s (JVM CPU {dc:6.1f}s) {message}", flush=True)

        if args.ceiling:
            last = [time.monotonic(), cpu_seconds(jvm_pid)]

            def note(message: str) -> None:
                now, cpu = time.monotonic(), cpu_seconds(jvm_pid)
                print(f"  {now - last[0]:7.1f}s (JVM CPU {cpu - last[1]:6.1f}s) {message}", flush=True)
                last[:] = [now, cpu]

            ceiling(spark, corpus, note)
            print(
                f"peak RSS: JVM {peak_rss_mib(jvm_pid):,.0f} MiB; {machine_note()}",
                flush=True,
            )
            return

        startup = time.monotonic() - t_start
        startup_cpu = cpu_seconds(jvm_pid)
        figures: list[Figure] = []
        load = [os.getloadavg()[0]]

        def measure(
            what: str, run: Callable[[], object], with_startup: bool = True, n: int | None = None
        ) -> object:
            t, c, p = time.monotonic(), cpu_seconds(jvm_pid), self_cpu()
            result = run()
            dt = time.monotonic() - t + (startup if with_startup else 0.0)
            cpu = cpu_seconds(jvm_pid) - c + self_cpu() - p + (startup_cpu if with_startup else 0.0)
            figures.append(Figure(what, dt, cpu, lines if n is None else n))
            load.append(os.getloadavg()[0])
            print(f"  {what}: {dt:.1f}s, CPU {cpu:.1f}s; {machine_note()}", flush=True)
            return result

        measure(
            "Spark's floor: start-up + read + parse + one sort by partition", lambda: floor(spark, corpus)
        )
        files = expand_inputs([str(corpus)]).kafka_logs
        counted = measure(
            "single-process Python pass (one regex per line, grouped by partition)",
            lambda: python_pass(files),
            with_startup=False,
        )
        print(f"  Python pass: {counted}", flush=True)
        # the copies are unrelated clusters (their epochs restart): one history per directory
        t1, c1 = time.monotonic(), cpu_seconds(jvm_pid)
        s = measure(
            "the audit: start-up + run_audit",
            lambda: run_audit(spark, expand_inputs([str(corpus)]), out, KAFKA_2_8, step, "dir"),
        )
        assert isinstance(s, report.Summary)
        dt = time.monotonic() - t1
        cpu = cpu_seconds(jvm_pid) - c1
        print(
            f"master={args.master} lines={s.lines_read} parsed={s.parsed} quarantined={s.quarantined} "
            f"violations={s.violations} seconds={dt:.1f} lines/s={s.lines_read / dt:,.0f} "
            f"JVM-CPU-seconds={cpu:.1f} lines/CPU-s={s.lines_read / cpu if cpu else 0:,.0f}",
            flush=True,
        )
        driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"peak RSS: JVM (driver and local executors) {peak_rss_mib(jvm_pid):,.0f} MiB, "
            f"Python driver {driver:,.0f} MiB; {machine_note()}",
            flush=True,
        )
        found = {
            (v["file"], v["line"], v["rule"])
            for v in map(json.loads, (out / "violations.jsonl").read_text().splitlines())
        }
        quarantined = {
            (q["file"], q["line"])
            for q in map(json.loads, (out / "quarantine.jsonl").read_text().splitlines())
        }
        assert s.lines_read == lines, (s.lines_read, lines)
        assert found == expected.violations, sorted(found ^ expected.violations)[:10]
        assert quarantined == expected.quarantined, sorted(quarantined ^ expected.quarantined)[:10]
        print(f"found exactly the {len(found)} injected violations and {len(quarantined)} quarantined lines")
        rounds = [(figures[0], figures[2])]
        for r in range(2, args.rounds + 1):
            # a fresh JVM: the audit compiles its code again, as every user's run does
            print(f"round {r} of {args.rounds}: a fresh Spark session", flush=True)
            end_session(spark)
            t_start = time.monotonic()
            spark = make_session(args.master)
            jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
            startup, startup_cpu = time.monotonic() - t_start, cpu_seconds(jvm_pid)
            few = len(figures)
            measure(
                f"Spark's floor: start-up + read + parse + one sort by partition (round {r})",
                functools.partial(floor, spark, corpus),
            )
            shutil.rmtree(out)
            out.mkdir()
            t1, c1 = time.monotonic(), cpu_seconds(jvm_pid)
            s_r = measure(
                f"the audit: start-up + run_audit (round {r})",
                functools.partial(
                    run_audit, spark, expand_inputs([str(corpus)]), out, KAFKA_2_8, step, "dir"
                ),
            )
            assert isinstance(s_r, report.Summary) and s_r == s, "a round's summary differs from the first's"
            rounds.append((figures[few], figures[few + 1]))
            del figures[few:]
        small: list[Figure] = []
        small_rounds: list[tuple[Figure, Figure]] = []
        if args.small_files:
            folder = root / "small-files"
            shutil.rmtree(folder, ignore_errors=True)
            n_small = small_files(folder, args.small_files, args.small_files_steps, args.seed)
            print(
                f"generated {args.small_files:,} hourly-rotated files, {n_small:,} lines, in {folder}",
                flush=True,
            )
            small_files_list = expand_inputs([str(folder)]).kafka_logs
            local_out = root / "out-small-files-local"
            # the pair the target is judged on, alternated in rounds as the floor and the audit (the local engine's
            # JVM is a new one each time; a single pair of runs of a few seconds moves by a quarter between runs)
            s_local: report.Summary | None = None
            for r in range(args.rounds):
                named = f" (round {r + 1})" if args.rounds > 1 else ""
                measure(
                    f"{args.small_files:,} small files: single-process Python pass{named}",
                    lambda: python_pass(small_files_list),
                    with_startup=False,
                    n=n_small,
                )
                shutil.rmtree(local_out, ignore_errors=True)
                local_out.mkdir()
                t, c = time.monotonic(), self_cpu() + children_cpu()
                s_round = run_local(expand_inputs([str(folder)]), local_out, KAFKA_2_8, step, "cluster")
                local_f = Figure(
                    f"{args.small_files:,} small files: the audit, local engine (run_local: one JVM, no Spark)"
                    + named,
                    time.monotonic() - t,
                    self_cpu() + children_cpu() - c,
                    n_small,
                )
                figures.append(local_f)
                load.append(os.getloadavg()[0])
                print(
                    f"  {local_f.what}: {local_f.seconds:.1f}s, CPU {local_f.cpu:.1f}s; {machine_note()}",
                    flush=True,
                )
                assert s_local is None or s_round == s_local, (
                    "a round's local summary differs from the first's"
                )
                s_local = s_round
                small_rounds.append((figures[-2], figures[-1]))
            few = len(figures)
            small_out = root / "out-small-files"
            shutil.rmtree(small_out, ignore_errors=True)
            small_out.mkdir()
            t1, c1 = time.monotonic(), cpu_seconds(jvm_pid)
            s_small = measure(
                f"{args.small_files:,} small files: the audit (start-up + run_audit, one cluster)",
                lambda: run_audit(spark, expand_inputs([str(folder)]), small_out, KAFKA_2_8, step, "cluster"),
                n=n_small,
            )
            assert isinstance(s_small, report.Summary)
            joined = root / "small-files-joined"
            shutil.rmtree(joined, ignore_errors=True)
            one_file_each(folder, joined)
            joined_out = root / "out-small-files-joined"
            shutil.rmtree(joined_out, ignore_errors=True)
            joined_out.mkdir()
            measure(
                "the same lines in 2 files: the audit (start-up + run_audit, one cluster)",
                lambda: run_audit(
                    spark, expand_inputs([str(joined)]), joined_out, KAFKA_2_8, step, "cluster"
                ),
                n=n_small,
            )
            assert s_small.lines_read == n_small and s_small.violations == 0 and s_small.quarantined == 0, (
                s_small.lines_read,
                s_small.violations,
                s_small.quarantined,
            )
            assert s_local == s_small, "the local engine's summary differs from the Spark path's"
            for name in (
                "violations.jsonl",
                "quarantine.jsonl",
                "findings.jsonl",
                "stats.json",
                "summary.html",
            ):
                same = (local_out / name).read_bytes() == (small_out / name).read_bytes()
                assert same, f"{name}: the local engine's differs from the Spark path's"
            small = figures[few:]
        if args.end_to_end:
            figures += end_to_end(root, args.end_to_end, args.master, args.seed)
            load.append(os.getloadavg()[0])
        paired = [f for pair in small_rounds for f in pair]
        text = results_section(
            args,
            lines,
            [f for f in figures if f not in small and f not in paired],
            load,
            s,
            small,
            rounds,
            small_rounds,
        )
        print("\n" + text)
        write_section(args.results, text)
        print(f"results written to {args.results}")


if __name__ == "__main__":
    main()
