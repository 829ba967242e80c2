"""Serve one mutant of the bug zoo over protocol v1 on stdin/stdout.

The reference controller runs with one historical Kafka controller bug injected for the life of the process. It is how the zoo's mutants meet the kit the way an
implementer's controller does, through the default ``kcspec conformance run`` (``tests/bugzoo``):

    kcspec conformance run --sut "python -m kcspec.conformance.selfcheck.bugzoo.serve_mutant kafka-9946" \\
        --level controller

``--list`` lists the mutants; an unknown name exits 2 with the usage.
"""

from __future__ import annotations

import sys

from kcspec.conformance.adapters.serve import serve
from kcspec.conformance.reference_sut import ReferenceSut
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in (*HISTORICAL_BY_NAME, "--list"):
        names = ", ".join(HISTORICAL_BY_NAME)
        print(f"usage: serve_mutant NAME | --list  (NAME one of {names})", file=sys.stderr)
        return 2
    if argv[0] == "--list":
        for name, mutant in HISTORICAL_BY_NAME.items():
            print(f"{name} ({mutant.ticket}, {mutant.profile}): {mutant.wrong}")
        return 0
    mutant = HISTORICAL_BY_NAME[argv[0]]

    class MutantSut(ReferenceSut):
        name = mutant.name  # what ``hello`` and the report name

    with mutant.active():
        return serve(MutantSut())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
