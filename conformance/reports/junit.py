"""JUnit XML for a conformance run: one ``testcase`` per vector, one ``testsuite`` per level.

failed → ``<failure>`` with the differences; errored → ``<error>`` with the SUT's stderr;
skipped, not supported and known → ``<skipped>`` whose message starts with the verdict.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from kcspec.conformance.verdicts import Outcome, RunReport, Verdict


def _case(parent: ET.Element, o: Outcome, classname: str) -> None:
    case = ET.SubElement(parent, "testcase", classname=classname, name=o.id, time=f"{o.seconds:.6f}")
    body = "\n".join(
        [o.description, "sections: " + ", ".join(o.sections), *(d.render() for d in o.differences)]
        + ([f"request: {o.request.strip()}"] if o.request else [])
    )
    if o.verdict is Verdict.failed:
        ET.SubElement(case, "failure", message=o.reason, type="divergence").text = body
    elif o.verdict is Verdict.errored:
        ET.SubElement(case, "error", message=o.reason, type="sut-error").text = body
        if o.stderr:
            ET.SubElement(case, "system-err").text = o.stderr
    elif o.verdict in (Verdict.skipped, Verdict.not_supported, Verdict.known):
        ET.SubElement(case, "skipped", message=f"{o.verdict.value}: {o.reason}")


def render(report: RunReport) -> str:
    root = ET.Element("testsuites", name=f"kcspec conformance {report.profile}")
    by_level: dict[str, list[Outcome]] = defaultdict(list)
    for o in report.outcomes:
        by_level[o.level].append(o)
    for level, outcomes in by_level.items():
        counts = {v: sum(1 for o in outcomes if o.verdict is v) for v in Verdict}
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"{report.profile}.{level}",
            tests=str(len(outcomes)),
            failures=str(counts[Verdict.failed]),
            errors=str(counts[Verdict.errored]),
            skipped=str(counts[Verdict.skipped] + counts[Verdict.not_supported] + counts[Verdict.known]),
            time=f"{sum(o.seconds for o in outcomes):.6f}",
        )
        props = ET.SubElement(suite, "properties")
        for name, value in (
            ("sut", report.sut.description),
            ("implementation", f"{report.sut.name} {report.sut.version}"),
            ("capabilities", ",".join(report.sut.capabilities)),
        ):
            ET.SubElement(props, "property", name=name, value=value)
        for o in outcomes:
            _case(suite, o, f"kcspec.{report.profile}.{level}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
