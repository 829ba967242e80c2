"""``--known`` entries that name values match only what they name: an entry accepting "resigned where the
reference did not" does not hide another wrong value at the same path."""

from __future__ import annotations

import pytest
from kcspec.conformance import known
from kcspec.conformance.reply_diff import Difference
from kcspec.conformance.signature import Signature

PATH = "$.state.controller.controller_id"


def _entry(values: list[dict[str, object]]) -> known.KnownDeviations:
    return known.parse(
        {
            "format": known.FORMAT,
            "deviations": [
                {
                    "signature": {"event": "ControllerFailover", "paths": [PATH], "values": values},
                    "reason": "we resign where Kafka does not",
                }
            ],
        },
        "k.json",
    )


def test_an_entry_with_values_matches_only_those_values() -> None:
    deviations = _entry([{"path": PATH, "expected": 1, "actual": -1}])
    sig = Signature("ControllerFailover", (PATH,))
    assert deviations.match(sig, [Difference(PATH, "1", "-1")]) is not None
    assert deviations.match(sig, [Difference(PATH, "1", "2")]) is None  # another wrong value: not hidden
    assert deviations.match(sig) is not None  # without differences: the signature alone (paths only)


def test_an_entry_naming_only_the_actual_value_accepts_any_expected_one() -> None:
    deviations = _entry([{"path": PATH, "actual": -1}])
    sig = Signature("ControllerFailover", (PATH,))
    assert deviations.match(sig, [Difference(PATH, "0", "-1")]) is not None
    assert deviations.match(sig, [Difference(PATH, "0", "3")]) is None


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([{"path": "$.state.zk.controller", "actual": -1}], "is not one of the entry's paths"),
        ([{"path": PATH}], "name the expected value, the actual value or both"),
        ([], "non-empty list"),
    ],
)
def test_a_bad_value_entry_is_refused_with_its_place(values: list[dict[str, object]], message: str) -> None:
    with pytest.raises(known.KnownFileError, match=message) as info:
        _entry(values)
    assert "k.json $.deviations[0].signature.values" in str(info.value)
