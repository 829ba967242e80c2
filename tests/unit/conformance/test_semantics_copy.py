"""The semantics document ships with the protocol (implementers outside this repository need it: PROTOCOL.md's
controller parts cite its sections), and the shipped copy is the team's ground truth, not a drifting copy."""

from __future__ import annotations

import re

import pytest

from tests.support.paths import ROOT

SHIPPED = ROOT / "conformance" / "protocol" / "kafka-semantics.md"
GROUND_TRUTH = ROOT.parent / "shared" / "kafka-semantics.md"


def test_the_shipped_document_has_every_section_protocol_md_cites() -> None:
    text = SHIPPED.read_text(encoding="utf-8")
    protocol = (SHIPPED.parent / "PROTOCOL.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"§(\d+(?:\.\d+)?)", protocol))
    headings = set(re.findall(r"^#+\s*(\d+(?:\.\d+)?)[.\s]", text, flags=re.MULTILINE))
    missing = sorted(c for c in cited if c not in headings and c.split(".")[0] not in headings)
    assert not missing, f"PROTOCOL.md cites sections the shipped document does not have: {missing}"


@pytest.mark.skipif(not GROUND_TRUTH.exists(), reason=f"{GROUND_TRUTH} is not beside this clone")
def test_the_shipped_document_is_the_ground_truth() -> None:
    assert SHIPPED.read_bytes() == GROUND_TRUTH.read_bytes(), (
        f"{SHIPPED} differs from {GROUND_TRUTH}: copy the ground truth over it"
    )
