"""A misbehaving protocol v1 SUT for the adapter's robustness tests (plain json, no kcspec import).

Usage: fake_sut.py MODE [GOOD]  — answer GOOD requests after ``hello`` correctly, then misbehave:
crash (exit 3 with a message on stderr), hang, garbage, wrong_id, huge (a 100 MB line), exit (exit 0),
slow_start (sleep 1 s before hello), none (never misbehave).
"""

import json
import sys
import time

mode = sys.argv[1]
good = int(sys.argv[2]) if len(sys.argv) > 2 else 0
if mode == "slow_start":
    time.sleep(1.0)


def reply(msg_id, body):
    sys.stdout.write(json.dumps({"id": msg_id, **body}) + "\n")
    sys.stdout.flush()


answered = 0
for line in sys.stdin:
    req = json.loads(line)
    rid, kind = req["id"], req["type"]
    if kind == "hello":
        reply(
            rid,
            {
                "type": "hello",
                "protocol_version": 1,
                "implementation": {"name": "fake", "version": mode},
                "profiles": ["kafka-2.8", "kafka-1.1"],
                "capabilities": ["elections"],
            },
        )
        continue
    if kind == "shutdown":
        reply(rid, {"type": "ok"})
        break
    if answered >= good and mode != "none":
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
        if mode == "exit":
            sys.exit(0)
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
