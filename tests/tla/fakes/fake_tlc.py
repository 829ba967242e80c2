"""A stand-in for ``java -cp tla2tools.jar tlc2.TLC -tool …`` in tests of the crosscheck's plumbing.

It does not model-check anything: it prints TLC's ``-tool`` messages and writes a ``-dump`` file in TLC's
format (``State N:`` then ``/\\ var = value`` lines) for the states listed in the JSON file named by
``FAKE_TLC_STATES`` (canonical ``ClusterState`` JSON, one per line), minus the last ``FAKE_TLC_DROP``
of them. ``FAKE_TLC_EXIT`` makes it print the recorded invariant-violation transcript instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from kcspec.model.tla.values import value_text
from kcspec.spec import codec
from kcspec.spec.state import ClusterState

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "tlc-fixtures"


def _msg(code: int, body: str) -> str:
    return f"@!@!@STARTMSG {code}:0 @!@!@\n{body}\n@!@!@ENDMSG {code} @!@!@\n"


def main(argv: list[str]) -> int:
    if os.environ.get("FAKE_TLC_EXIT") == "violation":
        sys.stdout.write((FIXTURES / "out_tool_violation.txt").read_text())
        return 12
    dump = Path(argv[argv.index("-dump") + 1])
    lines = Path(os.environ["FAKE_TLC_STATES"]).read_text().splitlines()
    drop = int(os.environ.get("FAKE_TLC_DROP", "0"))
    states = [codec.loads(line, ClusterState) for line in lines[: len(lines) - drop]]
    with dump.open("w") as f:
        for i, st in enumerate(states, 1):
            f.write(f"State {i}:\n")
            f.write(
                "\n".join(f"/\\ {v} = {value_text(getattr(st, v))}" for v in ("zk", "controller", "config"))
            )
            f.write("\n\n")
    n = len(states)
    sys.stdout.write(_msg(2262, "TLC2 Version 2026.04.29.170100 (rev: cc6b616)"))
    sys.stdout.write(_msg(2193, "Model checking completed. No error has been found."))
    sys.stdout.write(_msg(2199, f"{n} states generated, {n} distinct states found, 0 states left on queue."))
    sys.stdout.write(_msg(2194, "The depth of the complete state graph search is 7."))
    sys.stdout.write(_msg(2186, "Finished in 10ms at (2026-11-22 04:05:16)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
