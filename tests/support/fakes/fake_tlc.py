"""A stand-in for ``java -cp tla2tools.jar tlc2.TLC -tool …`` in tests of the crosscheck's plumbing.

It does not model-check anything: it prints TLC's ``-tool`` messages and writes a ``-dump`` file in TLC's
format (``State N:`` then ``/\\ var = value`` lines) for the states listed in the JSON file named by
``FAKE_TLC_STATES`` (canonical ``ClusterState`` JSON, one per line), minus the last ``FAKE_TLC_DROP``
of them; with ``FAKE_TLC_STATES_DIR``, the listing in that folder named by the hash of the run's ``.cfg``.
Without either, the states are those of the explorer's TLA+-model mode on the model
that the ``.cfg`` describes (so ``kcspec verify``'s plumbing can be run on every manifest model).
``FAKE_TLC_EXIT`` makes it print the recorded invariant-violation transcript instead. ``FAKE_TLC_NICE`` names a file
it writes its niceness to (the priority TLC's JVM would run at).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

from kcspec.model.tla.values import value_text
from kcspec.spec import codec
from kcspec.spec.state import ClusterState

FIXTURES = Path(__file__).resolve().parents[1] / "tla_transcripts"


def _msg(code: int, body: str) -> str:
    return f"@!@!@STARTMSG {code}:0 @!@!@\n{body}\n@!@!@ENDMSG {code} @!@!@\n"


def _explored(module: Path, cfg: Path) -> list[ClusterState]:
    """The explorer's states of the model in ``cfg`` (the module's name tells the profile)."""
    from kcspec.conformance.selfcheck.explore.tla_model import explore_model
    from kcspec.model.tla.config import ModelConfig
    from kcspec.model.tla.module import module_name
    from kcspec.spec.profiles import PROFILES

    profile = next(p for p, prof in PROFILES.items() if module_name(prof) == module.stem)
    consts = dict(re.findall(r"^\s+(\w+) = (.*)$", cfg.read_text(), re.M))
    config = ModelConfig(
        brokers=len(consts["Brokers"].strip("{}").split(",")),
        topics=len(consts["Topics"].strip("{}").split(",")),
        partitions=int(consts["PartitionCount"]),
        rf=int(consts["ReplicationFactor"]),
        max_controller_epoch=int(consts["MaxControllerEpoch"]),
        max_leader_epoch=int(consts["MaxLeaderEpoch"]),
        max_zxid=int(consts["MaxZxid"]),
        max_zk_version=int(consts["MaxZkVersion"]),
    )
    result = explore_model(profile, config, keep_states=True)
    assert result.states is not None
    return [s for s in result.states if isinstance(s, ClusterState)]


def write_dump(path: Path, states: list[ClusterState]) -> Path:
    """``states`` written to ``path`` as TLC's ``-dump`` writes them."""
    with path.open("w") as f:
        for i, st in enumerate(states, 1):
            f.write(f"State {i}:\n")
            f.write(
                "\n".join(f"/\\ {v} = {value_text(getattr(st, v))}" for v in ("zk", "controller", "config"))
            )
            f.write("\n\n")
    return path


def main(argv: list[str]) -> int:
    if argv[-1] == "KcspecVersionProbe":  # locate.probe_version: answer with a supported TLC's banner
        print("TLC2 Version 2.15 of the stand-in (rev: 0000000)")
        return 255
    nice_file = os.environ.get("FAKE_TLC_NICE")
    if nice_file is not None:
        Path(nice_file).write_text(str(os.nice(0)))
    if os.environ.get("FAKE_TLC_EXIT") == "violation":
        sys.stdout.write((FIXTURES / "out_tool_violation.txt").read_text())
        return 12
    dump = Path(argv[argv.index("-dump") + 1])
    listing = os.environ.get("FAKE_TLC_STATES")
    folder = os.environ.get("FAKE_TLC_STATES_DIR")
    if folder is not None:  # one listing per model, named by the hash of its .cfg (written by the test)
        cfg_text = Path(argv[argv.index("-config") + 1]).read_text()
        listing = str(Path(folder) / f"{hashlib.sha256(cfg_text.encode()).hexdigest()[:16]}.jsonl")
    if listing is not None:
        lines = Path(listing).read_text().splitlines()
        drop = int(os.environ.get("FAKE_TLC_DROP", "0"))
        states = [codec.loads(line, ClusterState) for line in lines[: len(lines) - drop]]
    else:
        states = _explored(Path(argv[-1]), Path(argv[argv.index("-config") + 1]))
    write_dump(dump, states)
    n = len(states)
    sys.stdout.write(_msg(2262, "TLC2 Version 2026.04.29.170100 (rev: cc6b616)"))
    sys.stdout.write(_msg(2193, "Model checking completed. No error has been found."))
    sys.stdout.write(_msg(2199, f"{n} states generated, {n} distinct states found, 0 states left on queue."))
    sys.stdout.write(_msg(2194, "The depth of the complete state graph search is 7."))
    sys.stdout.write(_msg(2186, "Finished in 10ms at (2026-11-22 04:05:16)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
