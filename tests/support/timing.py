"""One setting for every wait in the tests, so that a loaded machine slows the suite down instead of failing it.

``KCSPEC_TEST_TIME_SCALE`` (a positive number, default 1, or 3 when ``CI`` is set) multiplies every timeout a
test waits with: how long a subprocess may take to answer, to start, to stop. A timeout that is itself the
subject of a test (an adapter's per-message limit against a SUT that never answers) is not scaled: scaling it
would only make the test slower. Nothing here asserts on elapsed time: a timeout only bounds a wait.
"""

from __future__ import annotations

import os


def _scale() -> float:
    raw = os.environ.get("KCSPEC_TEST_TIME_SCALE")
    if raw is None:
        return 3.0 if os.environ.get("CI") else 1.0
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"KCSPEC_TEST_TIME_SCALE={raw!r}: expected a positive number") from None
    if not value > 0:
        raise SystemExit(f"KCSPEC_TEST_TIME_SCALE={raw!r}: expected a positive number")
    return value


SCALE = _scale()


def scaled(seconds: float) -> float:
    """``seconds`` times the suite's time scale: the bound for a wait that a busy machine makes longer."""
    return seconds * SCALE
