"""A controller with one bug that only event sequences reveal, served over protocol v1 (the mutants are
``kcspec.conformance.session_mutants``, which ``tests/bugzoo`` checks). Every conformance vector passes; differential
testing, which the controller level runs by default, finds the bug. Run it with:

    kcspec conformance run --sut "python conformance/examples/mutant_controller.py mutant-stale-controller-epoch"

``python conformance/examples/mutant_controller.py --list`` lists the mutants and their bugs.
"""

from __future__ import annotations

import sys

from kcspec.conformance.adapters.serve import serve
from kcspec.conformance.session_mutants import BY_NAME, ORDER_MUTANTS

MUTANTS = {**BY_NAME, **{cls.name: cls for cls in ORDER_MUTANTS}}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in (*MUTANTS, "--list"):
        print(
            f"usage: mutant_controller.py NAME | --list  (NAME one of {', '.join(MUTANTS)})", file=sys.stderr
        )
        return 2
    if argv[0] == "--list":
        for name, cls in MUTANTS.items():
            print(f"{name}: {getattr(cls, 'bug', '')}")
        return 0
    return serve(MUTANTS[argv[0]]())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
