"""Audit throughput: generate a synthetic Kafka-format corpus in a temp dir, audit it, report lines/s.

Usage: .venv/bin/python benchmarks/audit_throughput.py --lines 10000000 --files 8 --master local[2]
The corpus mimics 2.8 state-change.log files of several brokers (replica and partition transitions,
LeaderAndIsr/UpdateMetadata request lines, ISR removals, controller epochs changing) with a few garbage
lines and stack traces mixed in. Nothing is collected to the driver beyond aggregates and samples.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from kcspec.conformance.audit.pipeline import run_audit
from kcspec.conformance.audit.session import make_session
from kcspec.conformance.audit.spark_job import expand_inputs
from kcspec.spec.profiles import KAFKA_2_8


def generate(dir_: Path, lines: int, files: int, seed: int) -> None:
    rnd = random.Random(seed)
    per_file = lines // files
    for f in range(files):
        broker = f % 3
        epoch = 1 + f
        with (dir_ / f"broker{broker}-state-change.log.{f}").open("w") as out:
            n = 0
            second = 0
            le: dict[int, int] = {}
            while n < per_file:
                p = rnd.randrange(2000)
                ts = f"2024-01-01 {second // 3600 % 24:02d}:{second // 60 % 60:02d}:{second % 60:02d},{n % 1000:03d}"
                pre = f"[{ts}] INFO [Controller id={broker} epoch={epoch}] "
                e = le.get(p, 0) + 1
                le[p] = e
                block = [
                    pre + f"Changed state of replica {broker} for partition t{p % 50}-{p} from OnlineReplica to "
                    "OfflineReplica (state.change.logger)",
                    pre + f"Partition t{p % 50}-{p} state changed to (Leader:1,ISR:1,2,LeaderEpoch:{e},ZkVersion:{e},"
                    f"ControllerEpoch:{epoch}) after removing replica 0 from the ISR as part of transition to "
                    "OfflineReplica (state.change.logger)",
                    pre + f"Changed partition t{p % 50}-{p} from OnlinePartition to OnlinePartition with state "
                    f"LeaderAndIsr(leader=2, leaderEpoch={e}, isr=List(2, 1), zkVersion={e}) (state.change.logger)",
                    pre + f"Sending LeaderAndIsr request to broker 2 with 1 become-leader and 0 become-follower "
                    "partitions (state.change.logger)",
                    pre + "Sending UpdateMetadata request to brokers HashSet(0, 1, 2) for 1 partitions (state.change.logger)",
                    f"[{ts}] INFO [Broker id={broker}] Handling LeaderAndIsr request correlationId {n} from controller "
                    f"{broker} for 1 partitions (state.change.logger)",
                ]
                if rnd.random() < 0.01:
                    block += ["java.lang.IllegalStateException: boom", "\tat kafka.X.y(X.scala:1)"]
                if rnd.random() < 0.005:
                    block.append("#### garbage line ####")
                out.write("\n".join(block) + "\n")
                n += len(block)
                second += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kcspec-audit-bench-") as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        t0 = time.monotonic()
        generate(corpus, args.lines, args.files, args.seed)
        print(f"generated in {time.monotonic() - t0:.1f}s (seed {args.seed})")
        spark = make_session(args.master)
        out = Path(tmp) / "out"
        out.mkdir()
        t1 = time.monotonic()
        s = run_audit(spark, expand_inputs([str(corpus)]), out, KAFKA_2_8, lambda m: print(f"  {time.monotonic() - t1:6.1f}s {m}"))
        dt = time.monotonic() - t1
        print(f"master={args.master} lines={s.lines_read} parsed={s.parsed} quarantined={s.quarantined} "
              f"violations={s.violations} seconds={dt:.1f} lines/s={s.lines_read / dt:,.0f}")


if __name__ == "__main__":
    main()
