"""JUnit XML for a conformance run: one ``testcase`` per vector, one ``testsuite`` per level.

failed → ``<failure>`` with the differences; errored → ``<error>`` with the SUT's stderr;
skipped, not supported and known → ``<skipped>`` whose message starts with the verdict.

The XML is well-formed whatever the SUT wrote: its stderr and replies may hold ANSI colour codes, NUL
and other control characters, or undecodable bytes, none of which XML 1.0 can carry (not even escaped).
ANSI escape sequences are removed; any other character XML cannot hold is written as a visible ``\\xNN``
(or ``\\uNNNN``) escape, in text and attributes alike.
"""

from __future__ import annotations

import re
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


_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
"""CSI sequences (colours, cursor movement) and two-character escapes."""
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot hold: C0 controls but tab/newline/return, surrogates, U+FFFE and U+FFFF."""


def xml_safe(text: str) -> str:
    """``text`` without ANSI escape sequences, other characters XML cannot hold written as escapes."""
    if not _NOT_XML.search(text):
        return text
    text = _ANSI.sub("", text)
    return _NOT_XML.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _make_safe(root: ET.Element) -> None:
    for element in root.iter():
        if element.text:
            element.text = xml_safe(element.text)
        if element.tail:
            element.tail = xml_safe(element.tail)
        for key, value in element.attrib.items():
            element.attrib[key] = xml_safe(value)


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
    _make_safe(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
