"""Exploration on a Spark cluster of separate executor processes: ``--master 'local-cluster[2,1,2048]'`` (a standalone
master, two workers and two executor JVMs on this machine, launched from the pip-installed pyspark's own ``bin`` and
``jars``) reaches the counts of one process on a manifest model, and its executors write a checkpoint that one
process resumes.

Slow: the cluster takes 20–40 s to start on a loaded machine, and a SparkContext is one per process, so the run is
a subprocess of its own (the in-process tests use ``local[2]``)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load

from tests.support.timing import scaled

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.spark,
    pytest.mark.skipif(
        find_spec("pyspark") is None, reason="pyspark not installed: pip install 'kcspec[spark]'"
    ),
]

MASTER = "local-cluster[2,1,2048]"
MODEL = next(e for e in load() if e.name == "one-broker-minimal-2.8")

RUN = """
import json, os, sys
from pathlib import Path
from kcspec.conformance.selfcheck.explore.spark_explore import spark_search, start_session
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load
entry = next(e for e in load() if e.name == sys.argv[1])
spark = start_session(sys.argv[2])
sc = spark.sparkContext
pids = sorted(set(sc.parallelize(range(8), 8).map(lambda _: os.getppid()).collect()))
run = spark_search(model_space(entry.profile, entry.config), spark, checkpoint=Path(sys.argv[3]))
s = run.result.stats
print(json.dumps({
    "master": run.master, "executors": len(pids), "driver": os.getpid(), "found": run.result.finding is not None,
    "states": s.distinct_states, "transitions": s.transitions, "levels": s.level_sizes,
}))
"""


def test_local_cluster_reaches_the_counts_of_one_process(tmp_path: Path) -> None:
    folder = tmp_path / "ck"
    done = subprocess.run(
        [sys.executable, "-c", RUN, MODEL.name, MASTER, str(folder)],
        capture_output=True,
        text=True,
        timeout=scaled(900),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["master"] == MASTER
    # the tasks ran in the Python workers of two executors (one Python daemon per executor JVM)
    assert got["executors"] == 2, got

    space = model_space(MODEL.profile, MODEL.config)
    one = search(space)
    assert not got["found"]
    assert got["states"] == one.stats.distinct_states == MODEL.distinct_states
    assert got["transitions"] == one.stats.transitions
    assert got["levels"] == one.stats.level_sizes

    # the executors wrote the checkpoint's files: one process reads the finished search back
    resumed = search(space, checkpoint=folder, resume=True)
    assert resumed.stats.distinct_states == MODEL.distinct_states
    assert resumed.stats.transitions == one.stats.transitions
