"""A self-contained HTML report of a conformance run: summary, coverage per semantics section, every
divergence with its differences and the request that reproduces it, and the full list of vectors."""

from __future__ import annotations

import html
from collections import defaultdict

from kcspec.conformance.reports.terminal import _section_key
from kcspec.conformance.verdicts import Outcome, RunReport, Verdict

COLOURS = {
    Verdict.passed: "#2e7d32",
    Verdict.failed: "#c62828",
    Verdict.errored: "#6a1b9a",
    Verdict.skipped: "#f9a825",
    Verdict.not_supported: "#757575",
    Verdict.known: "#00838f",
}

CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f4f4f4}.bar{display:flex;height:14px;width:240px;border:1px solid #ccc}
.bar span{display:block;height:100%}pre{background:#f8f8f8;padding:.6em;overflow-x:auto;white-space:pre-wrap}
details{margin:.4em 0}.v{font-weight:bold}
"""


def _e(text: object) -> str:
    return html.escape(str(text))


def _badge(v: Verdict) -> str:
    return f'<span class="v" style="color:{COLOURS[v]}">{v.value}</span>'


def _bar(counts: dict[Verdict, int]) -> str:
    total = sum(counts.values()) or 1
    spans = "".join(
        f'<span style="width:{100 * n / total:.1f}%;background:{COLOURS[v]}" title="{v.value}: {n}"></span>'
        for v, n in counts.items()
        if n
    )
    return f'<div class="bar">{spans}</div>'


def _detail(o: Outcome) -> str:
    parts = [
        f"<details open><summary>{_badge(o.verdict)} <code>{_e(o.id)}</code> — {_e(', '.join(o.sections))}"
        f"</summary><p>{_e(o.description)}</p><p>{_e(o.reason)}</p>"
    ]
    if o.differences:
        rows = "".join(
            f"<tr><td><code>{_e(d.path)}</code></td><td><code>{_e(d.expected)}</code></td>"
            f"<td><code>{_e(d.actual)}</code></td></tr>"
            for d in o.differences
        )
        parts.append(f"<table><tr><th>path</th><th>expected</th><th>actual</th></tr>{rows}</table>")
    if o.request:
        parts.append(f"<p>request:</p><pre>{_e(o.request.strip())}</pre>")
    if o.stderr.strip():
        parts.append(f"<p>SUT stderr (tail):</p><pre>{_e(o.stderr.strip()[-4000:])}</pre>")
    parts.append("</details>")
    return "".join(parts)


def render(report: RunReport) -> str:
    counts = report.counts()
    per_section: dict[str, dict[Verdict, int]] = defaultdict(lambda: dict.fromkeys(Verdict, 0))
    for o in report.outcomes:
        for s in o.sections:
            per_section[s][o.verdict] += 1
    section_rows = "".join(
        f"<tr><td>{_e(s)}</td><td>{_bar(c)}</td>"
        + "".join(f"<td>{c[v] or ''}</td>" for v in Verdict)
        + "</tr>"
        for s, c in sorted(per_section.items(), key=lambda kv: _section_key(kv[0]))
    )
    heads = "".join(f"<th>{v.value}</th>" for v in Verdict)
    bad = [o for o in report.outcomes if o.verdict in (Verdict.failed, Verdict.errored)]
    all_rows = "".join(
        f"<tr><td><code>{_e(o.id)}</code></td><td>{_e(o.level)}</td><td>{_e(', '.join(o.sections))}</td>"
        f"<td>{_badge(o.verdict)}</td><td>{_e(o.reason)}</td></tr>"
        for o in report.outcomes
    )
    sut = report.sut
    title = f"kcspec conformance — {sut.name} {sut.version} — {report.profile}"
    verdict = "PASS" if report.ok else "FAIL" if report.diverged else "NOTHING RAN"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title><style>{CSS}</style></head><body>
<h1>{_e(title)}: <span style="color:{COLOURS[Verdict.passed] if report.ok else COLOURS[Verdict.failed]}">{verdict}</span></h1>
<p>SUT <code>{_e(sut.description)}</code>; protocol v{sut.protocol_version}; profiles {_e(", ".join(sut.profiles))};
capabilities {_e(", ".join(sut.capabilities) or "none")}. Level {_e(report.level)};
{len(report.outcomes)} vectors in {report.seconds:.2f} s, {report.exchanges} exchanges.</p>
{"".join(f"<p><b>note:</b> {_e(n)}</p>" for n in report.notes)}
{f"<p><b>{_e(report.nothing_ran())}</b></p>" if report.nothing_ran() else ""}
<table><tr>{heads}</tr><tr>{"".join(f"<td>{counts[v]}</td>" for v in Verdict)}</tr></table>
<h2>Coverage by section of the semantics document</h2>
<table><tr><th>section</th><th>verdicts</th>{heads}</tr>{section_rows}</table>
<h2>Divergences and errors ({len(bad)})</h2>
{"".join(_detail(o) for o in bad) or "<p>none</p>"}
<h2>All vectors</h2>
<details><summary>{len(report.outcomes)} vectors</summary>
<table><tr><th>id</th><th>level</th><th>sections</th><th>verdict</th><th>reason</th></tr>{all_rows}</table></details>
</body></html>
"""
