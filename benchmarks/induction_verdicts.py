"""Compare the inductiveness verdicts of two ``kcspec prove --json`` reports, per (profile, invariant, action).

Run: ``.venv/bin/python benchmarks/induction_verdicts.py BEFORE.json AFTER.json``; prints every pair whose
verdict differs (and pairs present in one report only) and exits 1 when there is any, 0 when every verdict is
the same; exits 2 with a message naming the file when an argument is missing or a report cannot be read.
Used to check that a change to the induction backend's speed left its verdicts alone. The
counterexamples' text (the Z3 model shown) may differ between runs; only the verdicts are compared.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

PREFIX = "induction: "
COUNT = re.compile(r"proved for (\d+) of (\d+) actions")


def verdicts(path: Path) -> dict[tuple[str, str, str], str]:
    """(profile, invariant, action or "*proved*") → verdict; the proved actions are counted, not named, in the
    report, so they appear as one entry per invariant with the count."""
    out: dict[tuple[str, str, str], str] = {}
    for r in json.loads(path.read_text())["results"]:
        if not r["name"].startswith(PREFIX):
            continue
        key = (r["profile"], r["name"].removeprefix(PREFIX))
        lines = r["detail"].split("\ndetails:\n", 1)[0].splitlines()
        m = COUNT.fullmatch(lines[0])
        if m is None:
            out[(*key, "*summary*")] = r["status"] + ": " + r["detail"][:200]
            continue
        out[(*key, "*proved*")] = f"{m[1]} of {m[2]}"
        for line in lines[1:]:
            status, _, kinds = line.partition(": ")
            for kind in kinds.split(", "):
                out[(*key, kind)] = status
    return out


def _read(arg: str) -> dict[tuple[str, str, str], str]:
    try:
        return verdicts(Path(arg))
    except OSError as exc:
        problem = f"cannot read {arg}: {exc.strerror}"
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        problem = f"{arg} is not a `kcspec prove --json` report ({type(exc).__name__}: {exc})"
    print(f"error: {problem}", file=sys.stderr)
    sys.exit(2)


def main() -> None:
    if len(sys.argv) != 3:
        print("usage: induction_verdicts.py BEFORE.json AFTER.json", file=sys.stderr)
        sys.exit(2)
    before, after = _read(sys.argv[1]), _read(sys.argv[2])
    diffs = [
        f"{' / '.join(k)}: {before.get(k, '(absent)')} → {after.get(k, '(absent)')}"
        for k in sorted(before.keys() | after.keys())
        if before.get(k) != after.get(k)
    ]
    print("\n".join(diffs) if diffs else f"same verdicts ({len(before)} entries)")
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
