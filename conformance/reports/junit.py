"""JUnit XML: kcspec's one writer (``render_suites``), for a conformance run (one ``testcase`` per vector, one
``testsuite`` per level) and for ``kcspec verify`` (one ``testcase`` per case, one ``testsuite`` per check).

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
from collections.abc import Sequence
from dataclasses import dataclass

from kcspec.conformance.verdicts import Outcome, RunReport, Verdict

SKIPPED_VERDICTS = (Verdict.skipped, Verdict.not_supported, Verdict.known)
"""Verdicts written as ``<skipped>``: nothing ran, or what ran is not counted against the system checked."""


@dataclass(frozen=True)
class JunitCase:
    """One ``testcase``: ``message`` is the failure's, error's or skip's one line, ``body`` the text under it."""

    classname: str
    name: str
    seconds: float
    verdict: Verdict
    message: str = ""
    body: str = ""
    stderr: str = ""
    failure_type: str = ""
    error_type: str = ""


@dataclass(frozen=True)
class JunitSuite:
    name: str
    cases: tuple[JunitCase, ...]
    properties: tuple[tuple[str, str], ...] = ()


def _case(parent: ET.Element, c: JunitCase) -> None:
    case = ET.SubElement(parent, "testcase", classname=c.classname, name=c.name, time=f"{c.seconds:.6f}")
    if c.verdict is Verdict.failed:
        failure = ET.SubElement(case, "failure", message=c.message)
        if c.failure_type:
            failure.set("type", c.failure_type)
        failure.text = c.body
    elif c.verdict is Verdict.errored:
        error = ET.SubElement(case, "error", message=c.message)
        if c.error_type:
            error.set("type", c.error_type)
        error.text = c.body
        if c.stderr:
            ET.SubElement(case, "system-err").text = c.stderr
    elif c.verdict in SKIPPED_VERDICTS:
        ET.SubElement(case, "skipped", message=c.message)


def render_suites(name: str, suites: Sequence[JunitSuite], seconds: float | None = None) -> str:
    """The XML document: one ``testsuite`` per suite with its counts, every text made XML-safe."""
    root = ET.Element("testsuites", name=name)
    if seconds is not None:
        root.set("time", f"{seconds:.6f}")
    for s in suites:
        counts = {v: sum(1 for c in s.cases if c.verdict is v) for v in Verdict}
        suite = ET.SubElement(
            root,
            "testsuite",
            name=s.name,
            tests=str(len(s.cases)),
            failures=str(counts[Verdict.failed]),
            errors=str(counts[Verdict.errored]),
            skipped=str(sum(counts[v] for v in SKIPPED_VERDICTS)),
            time=f"{sum(c.seconds for c in s.cases):.6f}",
        )
        if s.properties:
            props = ET.SubElement(suite, "properties")
            for key, value in s.properties:
                ET.SubElement(props, "property", name=key, value=value)
        for c in s.cases:
            _case(suite, c)
    _make_safe(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _outcome_case(o: Outcome, classname: str) -> JunitCase:
    body = "\n".join(
        [o.description, "sections: " + ", ".join(o.sections), *(d.render() for d in o.differences)]
        + ([f"request: {o.request.strip()}"] if o.request else [])
    )
    message = f"{o.verdict.value}: {o.reason}" if o.verdict in SKIPPED_VERDICTS else o.reason
    return JunitCase(
        classname, o.id, o.seconds, o.verdict, message, body, o.stderr, "divergence", "sut-error"
    )


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
    """A conformance run: one suite per level, with the SUT as the suite's properties."""
    by_level: dict[str, list[Outcome]] = defaultdict(list)
    for o in report.outcomes:
        by_level[o.level].append(o)
    properties = (
        ("sut", report.sut.description),
        ("implementation", f"{report.sut.name} {report.sut.version}"),
        ("capabilities", ",".join(report.sut.capabilities)),
    )
    suites = [
        JunitSuite(
            f"{report.profile}.{level}",
            tuple(_outcome_case(o, f"kcspec.{report.profile}.{level}") for o in outcomes),
            properties,
        )
        for level, outcomes in by_level.items()
    ]
    return render_suites(f"kcspec conformance {report.profile}", suites)
