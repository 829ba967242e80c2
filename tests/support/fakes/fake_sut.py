"""A misbehaving protocol v1 SUT for the adapter's robustness tests (plain json, no kcspec import).

Usage: fake_sut.py MODE [GOOD]  — answer GOOD requests after ``hello`` correctly, then misbehave:
crash (exit 3 with a message on stderr), hang, garbage, wrong_id, huge (a 100 MB line), exit (exit 0),
slow_start (sleep 1 s before hello), none (never misbehave), deep (a 2 KB reply nested 1,000 levels),
bigint (a reply holding a 4,400-digit integer), orphan (start a grandchild that keeps stdout open, then
crash), ansi (crash with ANSI colour codes, NUL and invalid
UTF-8 on stderr), no_capabilities (declare no capability at all; otherwise like none), crash_for_good
(declare controller_events too; crash at the first event, and from then on fail to start: the file named
by ``FAKE_SUT_MARKER`` records the crash), daemon (start a grandchild detached from the SUT's pipes, then
exit 0 mid-run like exit), surrogate (answer with an internal error whose message holds a lone surrogate,
``\\ud800``: valid JSON, but not text that can be written as UTF-8), hang_events (declare
controller_events too; hang at the first event), refuse_hello (answer hello with an error, then wait).

If the environment variable ``FAKE_SUT_PIDS`` names a file, the fake appends its pid (and the pid of any
grandchild it starts) to it, one per line, so that tests can check nothing is left running.
"""

import json
import os
import subprocess
import sys
import time

mode = sys.argv[1]
good = int(sys.argv[2]) if len(sys.argv) > 2 else 0
PIDS = os.environ.get("FAKE_SUT_PIDS")


def record_pid(pid: int) -> None:
    if PIDS:
        with open(PIDS, "a") as f:
            f.write(f"{pid}\n")


record_pid(os.getpid())
MARKER = os.environ.get("FAKE_SUT_MARKER", "")
if mode == "crash_for_good" and MARKER and os.path.exists(MARKER):
    sys.stderr.write("fake: cannot start again after the crash\n")
    sys.exit(1)
if mode == "daemon":
    daemon = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    record_pid(daemon.pid)
if mode == "slow_start":
    time.sleep(1.0)


def reply(msg_id: int, body: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"id": msg_id, **body}) + "\n")
    sys.stdout.flush()


answered = 0
for line in sys.stdin:
    req = json.loads(line)
    rid, kind = req["id"], req["type"]
    if kind == "hello" and mode == "refuse_hello":
        reply(rid, {"type": "error", "code": "unsupported", "message": "fake: not today"})
        continue
    if kind == "hello":
        reply(
            rid,
            {
                "type": "hello",
                "protocol_version": 1,
                "implementation": {"name": "fake", "version": mode},
                "profiles": ["kafka-2.8", "kafka-1.1"],
                "capabilities": {
                    "no_capabilities": [],
                    "crash_for_good": ["elections", "controller_events"],
                    "hang_events": ["elections", "controller_events"],
                }.get(mode, ["elections"]),
            },
        )
        continue
    if kind == "shutdown":
        reply(rid, {"type": "ok"})
        break
    if mode == "crash_for_good" and kind == "event":
        if MARKER:
            with open(MARKER, "w") as f:
                f.write("crashed\n")
        sys.stderr.write("fake: crashed at the first event\n")
        sys.exit(3)
    if mode == "hang_events" and kind == "event":
        time.sleep(3600)
    if answered >= good and mode not in ("none", "no_capabilities", "crash_for_good", "hang_events"):
        if mode == "crash":
            sys.stderr.write("fake: simulated crash while handling request\n")
            sys.stderr.flush()
            sys.exit(3)
        if mode == "hang":
            time.sleep(3600)
        if mode == "garbage":
            sys.stdout.write("this is not json at all\n")
            sys.stdout.flush()
            continue
        if mode == "wrong_id":
            reply(rid + 100, {"type": "ok"})
            continue
        if mode == "huge":
            sys.stdout.write("x" * (100 * 1024 * 1024) + "\n")
            sys.stdout.flush()
            continue
        if mode in ("exit", "daemon"):
            sys.exit(0)
        if mode == "deep":
            nested = "[" * 1000 + "]" * 1000  # 2 KB
            sys.stdout.write(f'{{"id": {rid}, "type": "election", "result": {nested}}}\n')
            sys.stdout.flush()
            continue
        if mode == "surrogate":
            reply(rid, {"type": "error", "code": "internal", "message": "lone \ud800 surrogate"})
            continue
        if mode == "bigint":
            big = "7" * 4400  # written as text: Python itself refuses int() of more than 4,300 digits
            sys.stdout.write(f'{{"id": {rid}, "type": "election", "result": {{"leader": {big}}}}}\n')
            sys.stdout.flush()
            continue
        if mode == "orphan":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
            record_pid(child.pid)
            sys.stderr.write("fake: left a grandchild holding stdout\n")
            sys.stderr.flush()
            os._exit(3)
        if mode == "ansi":
            sys.stderr.buffer.write(b"\x1b[31mred alert\x1b[0m NUL:\x00 bad utf-8:\xff\xfe ]]> end\n")
            sys.stderr.flush()
            sys.exit(4)
    answered += 1
    if kind == "elect":
        inp = req["input"]
        reply(
            rid,
            {
                "type": "election",
                "result": {
                    "leader": -1,
                    "isr": inp["leader_and_isr"]["isr"],
                    "recipients": [],
                    "unclean": False,
                },
            },
        )
    elif kind == "load":
        reply(rid, {"type": "ok"})
    else:
        reply(rid, {"type": "error", "code": "unsupported", "message": f"fake does not do {kind}"})
