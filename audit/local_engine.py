"""The audit of Kafka logs without Spark, for inputs one machine handles (``kcspec audit --engine local``).

Why: a Spark session's start alone costs about 10 JVM CPU s; on a broker's folder of thousands of rotated
files (876,000 lines) that is four times a single-process Python pass over the same lines, and the reading,
parsing and rules cost a few seconds more. This engine runs the same reader (``LineParser.java``) and the same
rules' pass (``HistoryRules.java``) in one plain JVM process (``LocalAudit.java``: no SparkContext), with the
same configuration strings the Spark path ships (``jvm_parser.grammar_config``, ``replay.history_config``),
and writes the same outputs: what follows the pass (file names, messages, the quarantine, the findings'
columns, tallies, samples, the summary) is done here on the pass's rows, and Parquet is written by the JVM
with the parquet-mr that Spark writes with. Nothing of the grammar or the rules exists twice.

The two processes work at once where the outputs allow it (decision, measured on the 5,000-file folder: the
run was the read, then Python alone, then the JVM alone, then Python alone): once the reader has answered, the
JVM writes the findings and quarantined lines the pass passes on (they need neither the eras nor the rules'
order) and sorts the histories for the rules while this side reads the cells and infers the facts; then the
rules walk while this side writes ``findings.jsonl`` (unless a 0.8 log's violations may still become findings).

Which engine runs (``chosen_engine``, decision): ``--engine spark`` or a ``--master`` named on the command line
always get Spark (a user who names a cluster gets it); ``--engine local`` this engine; ``auto`` (the default)
this engine when the inputs are Kafka logs only (JSONL traces are decoded by Spark queries) of at most
``LOCAL_MAX_BYTES``, else Spark. The bound keeps the rows the pass reads within a default JVM heap (a quarter of
the machine's memory): the 876,000-line folder (200 MB) kept about 0.5 GB of them.

The JVM ends with the audit: it is started as a child that gets SIGKILL when this process dies (Linux's
parent-death signal), is ended when the audit ends in any way (``LocalJvm``'s exit: closed standard input,
then SIGTERM, then SIGKILL), and ends by itself when its standard input closes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from kcspec.audit import class_cache, findings, jvm_parser, layouts, replay, report, stats
from kcspec.audit.pipeline import (
    OUTPUTS,
    SAMPLE,
    FileIds,
    OutputExists,
    Step,
    Tallies,
    _First,
    _Least,
    finding_counts,
    finding_severities,
    log_facts,
    start_inference,
    summarise,
)
from kcspec.audit.spark_job import InputError, Inputs, ParserUnavailable
from kcspec.model.kafka_log import lines as g
from kcspec.spec.profiles import PROFILES, Profile

ENGINES = ("auto", "local", "spark")
LOCAL_MAX_BYTES = 256 << 20
"""``--engine auto`` audits Kafka logs of at most this many bytes (compressed files by their size on disk)
with this engine, larger inputs with Spark."""

VIOLATION_TYPES = (
    "file string, line long, ts string, rule string, section string, message string, machine string, "
    "topic string, partition int, replica int, controller_id int, controller_epoch int, compared_file string, "
    "compared_line long"
)
"""``violations.parquet``'s columns (``replay.VIOLATION_COLUMNS``) with the types the Spark path writes."""
QUARANTINE_TYPES = "file string, line long, reason string, detail string, text string"
"""``quarantine.parquet``'s columns with the types the Spark path writes."""
_SPARK_TYPES = {"string": "string", "int": "integer", "long": "long"}


def chosen_engine(engine: str, master: str | None, inputs: Inputs) -> tuple[str, str]:
    """``(engine, why)``: ``local`` or ``spark`` for ``--engine`` and ``--master`` (``None``: not given) on
    ``inputs``. ``InputError`` when ``--engine local`` cannot audit them (a ``--master`` given, or traces)."""
    if engine not in ENGINES:
        raise InputError(f"--engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if engine == "spark":
        return "spark", "--engine spark"
    if engine == "local":
        if master is not None:
            raise InputError(f"--engine local runs no Spark: --master {master} cannot be used with it")
        if inputs.traces:
            raise InputError(
                f"--engine local audits Kafka logs only: {inputs.traces[0]} is a JSONL trace (use --engine spark)"
            )
        return "local", "--engine local"
    if master is not None:
        return "spark", f"--master {master} given"
    if inputs.traces:
        return "spark", "JSONL traces are decoded by Spark"
    size = _size(inputs.kafka_logs)
    if size > LOCAL_MAX_BYTES:
        return "spark", f"{size:,} bytes of logs, more than the local engine's {LOCAL_MAX_BYTES:,}"
    return "local", f"{size:,} bytes of logs (at most {LOCAL_MAX_BYTES:,}: no Spark needed)"


def _size(paths: tuple[str, ...]) -> int:
    total = 0
    for p in paths:
        with contextlib.suppress(OSError):  # read, and reported, by the reader itself
            total += os.path.getsize(p)
    return total


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


JVM_OPTIONS = (
    "-XX:+UseSerialGC",
    "-XX:InitialRAMPercentage=8",
    "-XX:MetaspaceSize=64m",
    "-XX:TieredStopAtLevel=1",
    "-Xss4m",
    "-Dslf4j.provider=org.slf4j.helpers.NOP_FallbackServiceProvider",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
)
"""The local JVM's options: one thread's work needs no parallel collector (its threads cost CPU on a shared
machine); the heap starts at 8 % of the memory the JVM sees (1.9 GB of 24 GB; never above the maximum heap,
which a user's -Xmx or a container's limit sets: the JVM clamps it) — decision (measured on the 876,000-line
folder of 5,000 files, whose kept rows fill 850 MB): from the default 1/64 the heap grew through 3 full
collections and 32 young ones that copied the kept rows, 2.7 s of pauses in a 10.7 s audit; the run took 9.5 s
with it; the first collection of class metadata is put off to 64 MB of it (decision, measured on the same
folder: the classes the run loads, 21.5 MB of metadata, crossed the JVM's default threshold of 21 MB and
caused a full collection of the whole heap, kept rows and all, 0.45 s); the JIT compiles with C1 only
(``session.SMALL_INPUT_JVM_OPTIONS``' decision, for the same reason: measured on the same folder, C2's compiler
threads took 4 CPU s, recompiling the parser's large methods several times, while the run lasts seconds; with C1
only the JVM's CPU 13.4 → 11.3 s, load 4, and the largest input this engine takes, ``LOCAL_MAX_BYTES``, is only
a third larger); the libraries' logging goes nowhere (loading log4j's 500 classes cost a good part of the JVM's
fixed second); Spark's row classes need the module openings Spark gives its own JVM."""


def _die_with_parent() -> None:
    """In the child before ``exec``: SIGKILL when this process dies (Linux), so no JVM outlives the audit."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


ARCHIVE_SECONDS = 60.0
"""How long an audit that ended well waits for its JVM to write the class-data archive (``class_cache``, role
``local``; only a run that found none writes one, once): the JVM writes it as it exits, and one cut short by
``end_jvm``'s SIGTERM/SIGKILL would be thrown away by the next run, which would write it again."""


class LocalJvm:
    """The ``LocalAudit`` JVM process of one run; its output (a library's warnings) goes to ``log``, whose
    folder is the run's work folder (the JVM's scratch files go there too; the audit removes it). It maps the
    classes an earlier run archived (``class_cache.plan``, role ``local``), or writes them when it ends."""

    def __init__(self, log: Path) -> None:
        jar, why = jvm_parser.build()
        java = _java()
        if jar is None or java is None:
            raise ParserUnavailable(
                f"the JVM line parser is not available ({why if jar is None else 'java not found'}): the audit "
                "of Kafka logs needs a JDK (Java 17; JAVA_HOME or PATH)"
            )
        self.log = log
        self.archive = class_cache.plan(JVM_OPTIONS, role="local")
        classpath = f"{jar}{os.pathsep}{jvm_parser._pyspark_jars() / '*'}"
        # The answers come on a pipe of their own (its descriptor is LocalAudit's argument), not on the
        # JVM's standard output: the JVM itself writes there before LocalAudit's main runs and beside it
        # (-Xlog, whose default output is stdout, -XX:+PrintFlagsFinal, a flight recording's notice, an
        # agent's banner, all reachable through JAVA_TOOL_OPTIONS), and one stray byte in the answers'
        # framing would leave both processes waiting on each other for ever. Standard output goes to the
        # log with stderr.
        answers, child_end = os.pipe()
        try:
            with log.open("ab") as err:
                self.proc = subprocess.Popen(
                    [
                        java,
                        *JVM_OPTIONS,
                        *(self.archive.options if self.archive is not None else ()),
                        "-cp",
                        classpath,
                        "kcspec.audit.LocalAudit",
                        str(child_end),
                        str(log.parent),
                    ],
                    stdin=subprocess.PIPE,
                    stdout=err,
                    stderr=err,
                    pass_fds=(child_end,),
                    start_new_session=True,  # a Ctrl-C at the terminal reaches this process, which ends the JVM
                    preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
                )
        except BaseException:
            os.close(answers)
            raise
        finally:
            os.close(child_end)
        self.answers = os.fdopen(answers, "rb")
        if self.archive is not None:
            self.archive.launched(self.proc.pid)

    def __enter__(self) -> LocalJvm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end(ended_well=exc[0] is None)

    def end(self, ended_well: bool) -> None:
        """End the JVM: closed standard input, then SIGTERM, then SIGKILL; after an audit that ``ended_well``,
        once it has written its class-data archive if it writes one."""
        from kcspec.model.spark.session import end_jvm

        try:
            if ended_well and self.archive is not None and self.archive.writes:
                with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                    assert self.proc.stdin is not None
                    self.proc.stdin.close()  # LocalAudit returns, and the JVM writes the archive as it exits
                    self.proc.wait(timeout=ARCHIVE_SECONDS)
        finally:  # a Ctrl-C during that wait ends the JVM too
            try:
                end_jvm(self.proc, grace=0.5)
            finally:
                self.answers.close()

    def call(self, *parts: str) -> list[str]:
        """Send one command (``LocalAudit``'s protocol) and return its answer."""
        self.send(*parts)
        return self.answer(parts[0])

    def send(self, *parts: str) -> None:
        """Send one command without waiting for its answer (``answer``): the JVM works on it meanwhile."""
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            for part in parts:
                data = part.encode("utf-8")
                stdin.write(struct.pack(">i", len(data)) + data)
            stdin.write(struct.pack(">i", -1))
            stdin.flush()
        except OSError as exc:
            raise RuntimeError(f"the local engine's JVM failed ({parts[0]}): {self._tail()}") from exc

    def answer(self, command: str) -> list[str]:
        """The answer to the command sent last (``command``: its name, for the error)."""
        answer: list[str] = []
        try:
            while (n := struct.unpack(">i", _exactly(self.answers, 4))[0]) >= 0:
                answer.append(_exactly(self.answers, n).decode("utf-8"))
        except (OSError, EOFError, struct.error) as exc:
            raise RuntimeError(f"the local engine's JVM failed ({command}): {self._tail()}") from exc
        return answer

    def _tail(self) -> str:
        self.proc.poll()
        try:
            text = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            text = []
        return f"exit {self.proc.returncode}; " + " / ".join(text[-5:])[:600]


def _exactly(stream: IO[bytes], n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise EOFError("the JVM closed its output")
    return data


class Reading:
    """The first part of a local audit, which needs no profile: the outputs' folder checked, the run's work
    folder made, the JVM started (``LocalJvm``) and sent the logs to read. ``run_local`` goes on from it
    (``reading``) and ends it; ``close`` ends it when no audit follows.

    Why: ``kcspec audit`` infers the profile from the logs' formats (``layouts.chosen_profile``, reading every
    file's first lines in Python: about 0.8 s on a folder of 5,000 rotated files) before the audit, and only the
    rules' pass needs it; started first, the JVM loads its classes and reads the logs meanwhile."""

    def __init__(self, inputs: Inputs, out: Path, history_key: str) -> None:
        if inputs.traces:
            raise InputError("the local engine audits Kafka logs only (JSONL traces need --engine spark)")
        taken = [name for name in OUTPUTS if (out / name).exists()] + [
            p.name for p in out.glob("coverage-*.json")
        ]
        if taken:
            raise OutputExists(f"{out}: already holds {', '.join(sorted(taken))} (not written by this run)")
        self.ids = FileIds.of(inputs.kafka_logs, history_key)
        out.mkdir(parents=True, exist_ok=True)
        self.work = Path(tempfile.mkdtemp(prefix=".kcspec-audit-work-", dir=out))
        self.closed = False
        try:
            self.jvm = LocalJvm(self.work / "jvm.log")
        except BaseException:
            shutil.rmtree(self.work, ignore_errors=True)
            raise
        # sent by a thread of its own: the command (every file's name) fills the pipe, which the JVM empties
        # only once its main method runs, after it has loaded its classes (about a second); meanwhile this
        # thread goes on (the profile's choice, the version inference: Python work beside the JVM's start)
        try:
            sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kcspec-local-read")
            self._read_sent = sender.submit(self.jvm.send, "read", *_read_command(self.ids))
            sender.shutdown(wait=False)
        except BaseException:
            self.close(failed=True)
            raise

    def read_answer(self) -> list[str]:
        """The read's answer: the statistics' cells (``LocalAudit``'s ``read``)."""
        self._read_sent.result()
        return self.jvm.answer("read")

    def close(self, failed: bool = True) -> None:
        """End the JVM (after it has written its class-data archive when the audit ended well: ``failed``
        false) and remove the work folder; once. A JVM that has not taken the read yet is killed first (its
        standard input, which the sending thread holds, could not be closed before)."""
        if self.closed:
            return
        self.closed = True
        try:
            sent = getattr(self, "_read_sent", None)
            if sent is not None and not sent.done():
                with contextlib.suppress(OSError):
                    self.jvm.proc.kill()
                with contextlib.suppress(Exception):
                    sent.result(timeout=ARCHIVE_SECONDS)
            self.jvm.end(ended_well=not failed)
        finally:
            shutil.rmtree(self.work, ignore_errors=True)


def _read_command(ids: FileIds) -> tuple[str, ...]:
    """``LocalAudit``'s ``read`` command's arguments for the files of ``ids``."""
    listing = "".join(f"{fid},{hid},{len(p.encode('utf-16-le')) // 2}:{p}" for p, fid, hid in ids.listing())
    return (
        jvm_parser.grammar_config(),
        listing,
        ",".join(str(g.ALL_FIELDS.index(f)) for f in jvm_parser.STORED_FIELDS),
        ",".join(stats.TRANSITION_KINDS),
        ",".join(stats.DELETION_KINDS),
        ",".join(str(g.ALL_FIELDS.index(f)) for f in jvm_parser.CUBE_FIELDS),
        jvm_parser.stored_schema() + ", role int, era int",
        ",".join(replay.WRITE_KINDS),
        ",".join(findings.FINDING_KINDS),
        _ROLES,
    )


_ROLES = ",".join(str(replay.ROLES[r]) for r in ("event", "finding", "quarantined"))
"""The rows' roles (``replay.ROLES``) as ``LocalAudit`` takes them."""


def run_local(
    inputs: Inputs,
    out: Path,
    profile: Profile,
    step: Step,
    history_key: str = "cluster",
    explicit_profile: bool = True,
    reading: Reading | None = None,
) -> report.Summary:
    """``pipeline.run_audit`` without Spark (Kafka logs only): the same outputs in ``out``. ``reading``: the
    run's first part, started earlier on the same ``inputs``, ``out`` and ``history_key`` (else started here);
    ended here in any case."""
    if reading is None:
        reading = Reading(inputs, out, history_key)
    failed = True
    try:
        summary = _run(reading, inputs, out, profile, step, history_key, explicit_profile)
        failed = False
        return summary
    finally:
        reading.close(failed)


def _columns(ddl: str) -> list[str]:
    return [c.strip().split(" ")[0] for c in ddl.split(",")]


def _run(
    reading: Reading,
    inputs: Inputs,
    out: Path,
    profile: Profile,
    step: Step,
    history_key: str,
    explicit_profile: bool,
) -> report.Summary:
    jvm, work, ids = reading.jvm, reading.work, reading.ids
    inferring = start_inference(ids, history_key, profile, explicit_profile)
    step(f"parsing {len(ids.names)} Kafka log file(s) with the JVM line parser (local engine, no Spark)")
    cube = reading.read_answer()
    # The findings and quarantined lines the pass passes on (no rule reads them): asked for at once, with the
    # run's profile's configuration (they need nothing of it but the outputs' names), and written by the JVM
    # while the cells are read here; the JVM then sorts the histories for the rules (LocalAudit.presort).
    passed_on = work / "passed-on.jsonl"
    jvm.send("pass", replay.history_config(profile), "", "", "only", str(passed_on), _ROLES)
    cells = stats.cells_from_text(cube[0])
    facts = log_facts(ids, cells, history_key, inferring, step)
    jvm.answer("pass")
    names = ids.names
    quirky = {names[i] for i in facts.quirky}
    starts = facts.eras.starts_of() or {}
    found: list[dict[str, Any]] = []
    finding_rows: list[dict[str, Any]] = []
    quarantine: list[dict[str, Any]] = []
    written: tuple[Counter[tuple[Any, ...]], list[dict[str, Any]]] | None = None

    def passed_on_rows() -> None:
        """The passed-on rows as the outputs' rows; ``findings.jsonl`` written unless a violation may still
        become a finding (``quirky``)."""
        nonlocal finding_rows, quarantine, written
        on = _rows(passed_on)
        finding_rows = [_finding(r, names) for r in on if r["what"] == replay.OUTPUTS[1]]
        quarantine = [_quarantined(r, names) for r in on if r["what"] == replay.OUTPUTS[2]]
        if not quirky:
            step("writing findings")
            written = _write_findings(out, finding_rows)

    for i, p in enumerate(facts.passes):
        step(f"replaying {len(p.fids)} log file(s) against profile {p.profile}")
        config = replay.history_config(
            PROFILES[p.profile],
            replay.fence_records(facts.eras),
            replay.deletion_records(facts.deletions),
            p.traced,
        )
        rows_path = work / f"pass-{i}.jsonl"
        jvm.send(
            "pass",
            config,
            ";".join(f"{h}:{','.join(map(str, ts))}" for h, ts in sorted(starts.items()) if ts),
            "" if p.only is None else ",".join(map(str, p.only)),
            "0",
            str(rows_path),
            _ROLES,
        )
        if i == 0:  # while the JVM walks
            passed_on_rows()
        jvm.answer("pass")
        found += _rows(rows_path)
    if not facts.passes:
        passed_on_rows()
    violations = [_violation(r, names) for r in found if r["what"] == replay.OUTPUTS[0]]
    del found
    if quirky:  # pipeline._run's decision: a rule the log's Kafka version breaks is a finding there
        moot = [v for v in violations if v["file"] in quirky and v["rule"] in layouts.UNCHECKABLE_0_8]
        violations = [
            v for v in violations if not (v["file"] in quirky and v["rule"] in layouts.UNCHECKABLE_0_8)
        ]
        finding_rows += [_not_checkable(v) for v in moot]

    step("writing violations")
    violations.sort(key=lambda v: (v["file"], v["line"], v["rule"]))
    first_violations = _First(SAMPLE)
    n_viol, v_tally = _write(
        jvm,
        work,
        violations,
        out / "violations",
        VIOLATION_TYPES,
        ("rule", "controller_id", "controller_epoch"),
        first_violations,
    )
    by_signature = report.violation_groups_of(violations) if n_viol else []
    step("writing quarantine")
    quarantine.sort(key=lambda q: (q["file"], q["line"]))
    first_quarantined = _First(SAMPLE)
    n_quar, q_tally = _write(
        jvm, work, quarantine, out / "quarantine", QUARANTINE_TYPES, ("reason",), first_quarantined
    )
    broken = [
        (q["file"], f"unreadable from line {q['line']} on ({q['reason']}: {q['detail']})")
        for q in quarantine
        if q["reason"] in jvm_parser.BROKEN_REASONS
    ]
    if written is None:
        step("writing findings")
        written = _write_findings(out, finding_rows)
    f_tally, finding_sample = written
    by_finding = {str(k[0]): n for k, n in f_tally.items()}
    if not quirky and f_tally != finding_counts(cells)[1]:  # the Spark path writes the reader's count
        raise RuntimeError(f"the pass passed on {sum(f_tally.values())} findings, the reader counted others")
    by_severity = finding_severities(cells, by_finding)
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
            finding_sample,
        ),
        inputs,
        out,
        step,
        list(facts.per_file),
        broken,
        cells,
        facts.edges,
        facts.layouts,
        facts.version,
        list(facts.notes),
        facts.checked,
    )


def _rows(path: Path) -> list[dict[str, Any]]:
    """A pass's rows (``replay.RESULT_SCHEMA``, JSON arrays one a line) from ``path``, which is then removed."""
    columns = _columns(replay.RESULT_SCHEMA)
    with path.open(encoding="utf-8") as rows:
        found = [dict(zip(columns, json.loads(line), strict=True)) for line in rows]
    path.unlink()
    return found


def _write_findings(
    out: Path, finding_rows: list[dict[str, Any]]
) -> tuple[Counter[tuple[Any, ...]], list[dict[str, Any]]]:
    """``findings.jsonl`` of ``finding_rows`` (sorted here, as the Spark path sorts them); their count per
    finding and their sample (``findings.SAMPLE_KEY``)."""
    finding_rows.sort(key=lambda f: (f["file"], f["line"], f["finding"]))
    first_findings = _Least(SAMPLE, findings.SAMPLE_KEY)
    f_tally: Counter[tuple[Any, ...]] = Counter()
    with (out / "findings.jsonl").open("w", encoding="utf-8") as sink:
        for f in finding_rows:
            sink.write(report.json_line(f))
            f_tally[(f["finding"],)] += 1
            first_findings(f)
    return f_tally, first_findings.rows()


def _write(
    jvm: LocalJvm,
    work: Path,
    rows: list[dict[str, Any]],
    stem: Path,
    types: str,
    tally: tuple[str, ...],
    sampler: _First,
) -> tuple[int, Counter[tuple[Any, ...]]]:
    """``rows`` (sorted) as ``stem.jsonl`` (``report.json_line``) and ``stem.parquet`` (by the JVM, one part
    file, Spark's schema in its footer), counted per ``tally`` and sampled."""
    counts: Counter[tuple[Any, ...]] = Counter()
    jsonl = stem.with_suffix(".jsonl")
    with jsonl.open("w", encoding="utf-8") as sink:
        for r in rows:
            sink.write(report.json_line(r))
            counts[tuple(r[c] for c in tally)] += 1
            sampler(r)
    jvm.call(
        "parquet", str(jsonl), types, spark_schema(types), _spark_version(), str(stem.with_suffix(".parquet"))
    )
    return len(rows), counts


def spark_schema(ddl: str) -> str:
    """Spark's JSON of a struct of ``ddl``'s columns (every one nullable), as its Parquet writer puts it in a
    file's footer (``org.apache.spark.sql.parquet.row.metadata``)."""
    fields = []
    for c in ddl.split(","):
        name, kind = c.strip().split(" ")
        fields.append({"name": name, "type": _SPARK_TYPES[kind], "nullable": True, "metadata": {}})
    return json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))


def _spark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def _cat(*parts: Any) -> str | None:
    """Spark's ``concat``: the parts' text, or ``None`` if one is ``None``."""
    return None if any(p is None for p in parts) else "".join(str(p) for p in parts)


def _name(names: tuple[str, ...], fid: int | None) -> str | None:
    return None if fid is None else names[fid]


def _violation(r: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """A pass's violation row as ``replay.violations_of`` and ``replay.named`` make it."""
    where = _cat(_name(names, r["compared_fid"]), ":", r["compared_line"])
    message = r["message"]
    if r["rule"] == replay.HISTORY_RULES[2]:
        message = _cat(message, where)
    elif r["rule"] == replay.ROW_RULES["rule-stale"] and r["compared_fid"] is not None:
        message = _cat(message, " (", where, ")")
    return {
        "file": names[r["fid"]],
        "line": r["line"],
        "ts": stats.ts_text(r["ts"]),
        **{c: r[c] for c in replay.VIOLATION_COLUMNS[3:-2]},
        "message": message,
        "compared_file": _name(names, r["compared_fid"]),
        "compared_line": r["compared_line"],
    }


def _finding(r: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """A pass's finding row as ``findings.dressed`` makes it (``findings.FINDING_COLUMNS``)."""
    kind = findings.FINDING_KINDS.get(r["kind"])
    return {
        "file": names[r["fid"]],
        "line": r["line"],
        "ts": stats.ts_text(r["ts"]),
        "severity": findings.severity_of(r["kind"], r["from_state"], r["to_state"]),
        "finding": None if kind is None else kind.finding,
        "meaning": None if kind is None else kind.meaning,
        **{c: r[c] for c in findings.RECORD_FIELDS},
    }


def _quarantined(r: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """A quarantined line as ``quarantine.jsonl`` holds it."""
    return {
        "file": names[r["fid"]],
        "line": r["line"],
        "reason": r["reason"],
        "detail": r["text"] if r["reason"] in jvm_parser.BROKEN_REASONS else None,
        "text": r["text"],
    }


def _not_checkable(v: dict[str, Any]) -> dict[str, Any]:
    """``pipeline._not_checkable`` of one violation."""
    return {
        "file": v["file"],
        "line": v["line"],
        "ts": v["ts"],
        "severity": "warning",
        "finding": layouts.NOT_CHECKABLE,
        "meaning": _cat(
            "not checkable for this version (Kafka 0.8.0/0.8.1 log the from-state after the update): ",
            v["rule"],
            ": ",
            v["message"],
        ),
        "kind": v["rule"],
        "topic": v["topic"],
        "partition": v["partition"],
        "controller_id": v["controller_id"],
        "controller_epoch": v["controller_epoch"],
        "broker": None,
        "exception": None,
    }
