"""The generated-code cache across processes: identities of enum members are recomputed by the loading process,
and the spec's actions loaded from the cache give the same steps as compiled ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.timing import scaled

_PROGRAM = r"""
import json, sys
from kcspec.model import codecache
from kcspec.model.step import SpecMachine
from kcspec.spec import lang as L
from kcspec.spec.codec import encode
from kcspec.spec.events import BrokerStartup, ControllerFailover, TopicCreation
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ReplicaState

unit = codecache.compile_unit(
    "test", "p", {"m": (L.Member(L.Var("x"), L.Const(frozenset(ReplicaState))), ("x",))}
)
verdicts = [unit["m"].call(s) for s in ReplicaState] + [unit["m"].call("OnlineReplica")]
machine = SpecMachine("kafka-2.8")
state, steps = ClusterState(), []
for event in [BrokerStartup(0), BrokerStartup(1), ControllerFailover(0), TopicCreation("t", ((0, 1),))]:
    result = machine.step(state, event)
    state = result.state
    steps.append(encode(result))
print(json.dumps({"verdicts": verdicts, "steps": steps}, sort_keys=True, default=str))
"""


def _run(cache: Path) -> dict[str, object]:
    env = {**os.environ, "KCSPEC_CACHE_DIR": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-c", _PROGRAM], env=env, capture_output=True, text=True, timeout=scaled(300)
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_a_second_process_loads_the_cache_and_computes_the_same(tmp_path: Path) -> None:
    first = _run(tmp_path)
    saved = sorted(p.name for p in tmp_path.glob("*.pickle"))
    assert any(name.startswith("actions-kafka-2.8-") for name in saved), saved
    second = _run(tmp_path)
    assert first["verdicts"] == [True] * 7 + [False]
    assert second == first
