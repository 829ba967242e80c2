"""Unit tier: ``benchmarks/manifest.toml`` is well-formed and complete, and the runner's log keeps its entries.

Every script of ``benchmarks/`` is a declared benchmark or a declared helper; names are unique; every declared
script exists; every path a smoke run is given is in its temporary folder (``{out}``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.bench_modules import BENCHMARKS, harness, run


def test_the_manifest_reads_and_has_no_problem() -> None:
    manifest = run.load_manifest()
    assert manifest.benchmarks, "the manifest declares no benchmark"
    assert run.problems(manifest) == []


def test_every_script_is_declared_and_every_declared_script_exists() -> None:
    manifest = run.load_manifest()
    declared = {b.script for b in manifest.benchmarks} | {h.script for h in manifest.helpers}
    on_disk = {p.name for p in BENCHMARKS.glob("*.py")}
    assert on_disk - declared == set(), "scripts in benchmarks/ that the manifest does not declare"
    assert declared - on_disk == set(), "scripts the manifest declares that do not exist"


def test_names_are_unique_and_smoke_runs_stay_out_of_the_results() -> None:
    manifest = run.load_manifest()
    names = [b.name for b in manifest.benchmarks]
    assert len(names) == len(set(names)), names
    for b in manifest.benchmarks:
        # a path argument: one naming a file or folder (brokers/partitions/RF triples like 2/1/2 are not)
        paths = [arg for arg in b.smoke if "/" in arg and not arg.replace("/", "").isdigit()]
        assert all(p.startswith(run.OUT_PLACEHOLDER + "/") for p in paths), (
            f"{b.name} writes outside {{out}}: {paths}"
        )
        assert b.metric and b.target and b.configuration, b.name
        assert (BENCHMARKS / b.log).parent == BENCHMARKS / "results", b.name


def _manifest_text(body: str, tmp_path: Path) -> Path:
    path = tmp_path / "manifest.toml"
    path.write_text(body, encoding="utf-8")
    return path


ENTRY = """
[[benchmark]]
name = "a"
script = "a.py"
metric = "m"
configuration = "c"
target = "none"
smoke = ["--small"]
log = "results/a.md"
figure = '(\\d+) things'
unit = "things"
"""


def test_a_missing_field_or_a_wrong_type_is_named(tmp_path: Path) -> None:
    with pytest.raises(run.ManifestError, match=r"\(a\): missing field 'log'"):
        run.load_manifest(_manifest_text(ENTRY.replace('log = "results/a.md"\n', ""), tmp_path))
    with pytest.raises(run.ManifestError, match=r"field 'smoke' must be a list of str"):
        run.load_manifest(_manifest_text(ENTRY.replace('["--small"]', '"--small"'), tmp_path))
    with pytest.raises(run.ManifestError, match=r"not valid TOML"):
        run.load_manifest(_manifest_text("[[benchmark]\n", tmp_path))


def test_problems_name_undeclared_missing_and_twice_declared_scripts(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    (tmp_path / "stray.py").write_text("")
    manifest = run.load_manifest(
        _manifest_text(ENTRY + ENTRY.replace('script = "a.py"', 'script = "b.py"'), tmp_path)
    )
    found = run.problems(manifest, tmp_path)
    assert "benchmark 'a' is declared 2 times" in found
    assert any(p.startswith("b.py is declared in the manifest but does not exist") for p in found)
    assert any(p.startswith("stray.py is neither a benchmark nor a helper") for p in found)


def test_the_headline_figure_is_the_first_group_with_its_unit(tmp_path: Path) -> None:
    bench = run.load_manifest(_manifest_text(ENTRY, tmp_path)).benchmarks[0]
    assert bench.headline("we saw 42 things today") == "42 things"
    assert bench.headline("nothing here") is None


def test_log_entries_are_appended_newest_last_and_list_reads_the_newest(tmp_path: Path) -> None:
    bench = run.load_manifest(_manifest_text(ENTRY, tmp_path)).benchmarks[0]
    log = tmp_path / "a.md"
    log.write_text("# a\n\nProse people wrote.\n")
    machine = harness.Machine(
        "2026-01-01 00:00:00 UTC", "abc1234", False, "cpu", 2, "py", 0.5, (1.0, 1.0, 1.0)
    )
    later = harness.Machine("2026-01-02 00:00:00 UTC", "abc1234", True, "cpu", 2, "py", 0.5, (1.0, 1.0, 1.0))
    for m, n in ((machine, 7), (later, 9)):
        outcome = run.Outcome(("python", "a.py"), 0, f"{n} things\n", 1.0, 1.0, False)
        run.append_entry(log, run.log_entry(bench, m, outcome, (2.0, 2.0, 2.0)), "a")
    text = log.read_text()
    assert text.startswith("# a\n\nProse people wrote.\n")
    assert text.count(run.LOG_HEADING) == 1
    assert text.index("2026-01-01") < text.index("2026-01-02")
    assert run.last_logged(log) == ("2026-01-02 00:00:00 UTC", "9 things")
    assert "revision: abc1234 (dirty tree)" in text and "load average after: 2.00 2.00 2.00" in text


def test_the_header_names_date_revision_host_python_calibration_and_load() -> None:
    lines = harness.Machine("d", "r", None, "c", 2, "p", 0.25, (0.1, 0.2, 0.3)).lines((0.4, 0.5, 0.6))
    text = "\n".join(lines)
    for part in ("date: d", "revision: r", "host: c, 2 CPUs", "python: p", "calibration: 0.250 CPU s"):
        assert part in text
    assert "load average before: 0.10 0.20 0.30" in text and "load average after: 0.40 0.50 0.60" in text


def test_markdown_table_aligns_the_numeric_columns() -> None:
    assert harness.markdown_table(("a", "b"), [(1, 2)], "lr") == "| a | b |\n|---|---:|\n| 1 | 2 |"
