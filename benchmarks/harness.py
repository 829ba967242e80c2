"""What every benchmark prints and measures the same way: the machine header, load average, CPU time, tables.

The shared machines differ from day to day and are often loaded, so a figure means something only with the
machine it was taken on. One header names it everywhere (``benchmarks/run.py`` prints it before a run and writes
it into the benchmark's results log; a script run on its own prints it itself):

* the date (UTC), the git revision and whether the working tree had uncommitted changes;
* the CPU model and count, and the Python build (implementation, version, build, compiler, executable);
* the calibration (``calibration.py``: a fixed plain-Python workload's best CPU seconds, lower is faster): figures
  of two runs compare only with it;
* the load average before (and, from the runner, after) the run.

When ``benchmarks/run.py`` starts a script it has already printed the header, and it passes its calibration on
in the environment (``KCSPEC_BENCH_CALIBRATION``), so the script neither prints the header twice nor calibrates
again (``print_header`` is then silent; ``machine`` reuses the figure).
"""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import calibration

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CALIBRATION_ENV = "KCSPEC_BENCH_CALIBRATION"
"""Set by the runner for the scripts it starts: its calibration figure (CPU seconds)."""
RUNNER_ENV = "KCSPEC_BENCH_RUNNER"
"""Set by the runner for the scripts it starts: the header has been printed already."""

Load = tuple[float, float, float]


def load_average() -> Load:
    """The 1, 5 and 15-minute load averages."""
    one, five, fifteen = os.getloadavg()
    return (one, five, fifteen)


def format_load(load: Load | None = None) -> str:
    """``load`` (now, when not given) as ``1.23 1.10 0.98``."""
    return " ".join(f"{x:.2f}" for x in (load if load is not None else load_average()))


def load_note() -> str:
    """``load average 1.23 1.10 0.98`` (now)."""
    return f"load average {format_load()}"


def cpu_note() -> str:
    """This process's CPU seconds and its finished children's, as one phrase."""
    t = os.times()
    return f"CPU {t.user + t.system:.1f} s here + {t.children_user + t.children_system:.1f} s in finished children"


def process_cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its finished (waited-for) children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's finished (waited-for) children."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def peak_rss_mib(pid: int | str = "self") -> float:
    """The peak resident set size (``VmHWM``) of process ``pid`` in MiB; this process's ``ru_maxrss`` when
    ``/proc`` cannot be read (not Linux)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 if pid == "self" else 0.0


def git_revision() -> tuple[str, bool | None]:
    """The short revision of ``HEAD`` and whether the working tree differs from it (``None``: not known, e.g.
    outside a git checkout)."""

    def git(*args: str) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run(
                ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False
            )
        except OSError:
            return None

    rev = git("rev-parse", "--short", "HEAD")
    if rev is None or rev.returncode != 0:
        return "unknown", None
    status = git("status", "--porcelain", "--untracked-files=no")
    dirty = None if status is None or status.returncode != 0 else bool(status.stdout.strip())
    return rev.stdout.strip(), dirty


def python_build() -> str:
    """The interpreter: implementation, version, build, compiler and executable."""
    number, date = platform.python_build()
    return (
        f"{platform.python_implementation()} {platform.python_version()} ({number}, {date}; "
        f"{platform.python_compiler()}; {sys.executable})"
    )


def now_utc() -> str:
    """The current time as ``YYYY-MM-DD HH:MM:SS UTC``."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


@dataclass(frozen=True)
class Machine:
    """The machine a run is taken on, as the header names it."""

    started: str
    revision: str
    dirty: bool | None
    cpu: str
    cpus: int
    python: str
    calibration: float
    load_before: Load

    def tree(self) -> str:
        state = {True: "dirty tree", False: "clean tree", None: "tree state unknown"}[self.dirty]
        return f"{self.revision} ({state})"

    def lines(self, load_after: Load | None = None) -> list[str]:
        """The header, one fact per line."""
        out = [
            f"date: {self.started}",
            f"revision: {self.tree()}",
            f"host: {self.cpu}, {self.cpus} CPUs",
            f"python: {self.python}",
            f"calibration: {self.calibration:.3f} CPU s (benchmarks/calibration.py; lower is faster; figures "
            "of two runs compare only with their calibrations)",
            f"load average before: {format_load(self.load_before)}",
        ]
        if load_after is not None:
            out.append(f"load average after: {format_load(load_after)}")
        note = scheduler_note()
        if note:
            out.append(note)
        return out

    def one_line(self) -> str:
        """The header as one sentence (for a table's caption)."""
        return (
            f"{self.started}, revision {self.tree()}, {self.cpu} ({self.cpus} CPUs), {self.python}; "
            f"calibration {self.calibration:.3f} CPU s; load average {format_load(self.load_before)} at the start"
        )


AUTOGROUP = Path("/proc/sys/kernel/sched_autogroup_enabled")


def scheduler_note(path: Path = AUTOGROUP) -> str:
    """A warning when Linux's autogroup scheduling is on ("" otherwise, or where there is none): it shares the
    CPU between sessions (terminals, ``setsid``) first and between processes only within one, so another
    session's work under ``nice -n 19`` still takes its session's share of the cores from a measured run.
    Found on this 2-core machine: a niced exploration took half of an audit benchmark's CPU."""
    try:
        on = path.read_text().strip() == "1"
    except OSError:
        return ""
    if not on:
        return ""
    return (
        "scheduler: autogroup on, so `nice` does not keep other sessions' processes off this run's cores "
        f"(as root: echo 0 > {path})"
    )


def machine(calibrate_repeat: int = 5) -> Machine:
    """This machine now. The calibration runs here unless the runner passed its figure on."""
    load = load_average()
    given = os.environ.get(CALIBRATION_ENV)
    figure = float(given) if given else calibration.calibrate(calibrate_repeat)
    revision, dirty = git_revision()
    return Machine(
        started=now_utc(),
        revision=revision,
        dirty=dirty,
        cpu=calibration.cpu_model(),
        cpus=os.cpu_count() or 1,
        python=python_build(),
        calibration=figure,
        load_before=load,
    )


def under_runner() -> bool:
    """Whether ``benchmarks/run.py`` started this process (and printed the header already)."""
    return os.environ.get(RUNNER_ENV) == "1"


def print_header(title: str, known: Machine | None = None) -> None:
    """Print ``title`` and the header of ``known`` (or of this machine now), unless the runner printed it already
    (then only ``title``)."""
    print(title)
    if not under_runner():
        for line in (known or machine()).lines():
            print(f"  {line}")
    sys.stdout.flush()


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[object]], numeric: str = "") -> str:
    """A Markdown table; the columns whose letter in ``numeric`` is ``r`` are right-aligned (``"lrr"``)."""
    align = ["---:" if numeric[i : i + 1] == "r" else "---" for i in range(len(columns))]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
