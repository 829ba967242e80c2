"""Benchmark: how long ``kcspec verify`` takes to end after Ctrl-C (or SIGTERM) in each kind of check, against the
target of 2 s (issue 33), and with which exit code.

Run: ``.venv/bin/python benchmarks/verify_interrupt.py [--signal INT|TERM] [--check NAME ...]``; prints a Markdown
table (recorded in ``benchmarks/results/verify_interrupt.md``). For each check, ``kcspec verify --check NAME`` is
started without a terminal; once its heartbeat says the check runs, and 2 s later (inside a Z3 query, a level of
the exploration, a SUT exchange), the signal is sent the way a terminal (Ctrl-C: the process group) or a service
manager (SIGTERM: the main process) sends it, and the time to the process's end is measured. The load average is
printed because the development machine is shared.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

CHECKS = ("prove", "explore", "conformance", "tla", "spec-vs-reference")


def measure(check: str, sig: signal.Signals, out: str) -> tuple[int | None, float | None, str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-P",
            "-m",
            "kcspec",
            "verify",
            "--check",
            check,
            "--heartbeat",
            "0.5",
            "--out",
            out,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("... running"):  # the heartbeat: the check (the only one) runs
            break
    else:
        return proc.wait(), None, "ended before it ran"
    time.sleep(2.0)
    if proc.poll() is not None:
        return proc.returncode, None, "ended before the signal"
    start = time.monotonic()
    if sig is signal.SIGINT:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    rest: list[str] = []
    reader = threading.Thread(target=lambda: rest.extend(proc.stdout or ()), daemon=True)
    reader.start()  # the output after the signal is read while waiting: a full pipe never holds the process up
    try:
        code = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None, None, "did not end within 120 s of the signal (killed): " + "".join(rest)[-300:].strip()
    seconds = time.monotonic() - start
    reader.join(timeout=10)
    return code, seconds, "interrupted, reported" if "the gate did not pass" in "".join(rest) else "no report"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--signal", choices=("INT", "TERM"), default="INT")
    parser.add_argument("--check", action="append", choices=CHECKS)
    args = parser.parse_args()
    sig = signal.Signals[f"SIG{args.signal}"]
    print(f"load before: {os.getloadavg()[0]:.1f}")
    print("\n| check | signal | exit | seconds to end | output |\n|---|---|---|---|---|")
    hung: list[str] = []
    with tempfile.TemporaryDirectory() as out:
        for check in args.check or CHECKS:
            code, seconds, what = measure(check, sig, out)
            if what.startswith("did not end"):
                hung.append(check)
            shown = f"{seconds:.2f}" if seconds is not None else "—"
            print(f"| {check} | {sig.name} | {code} | {shown} | {what} |", flush=True)
    print(f"\nload after: {os.getloadavg()[0]:.1f}")
    if hung:
        print(f"did not end after the signal: {', '.join(hung)}", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
