"""``kcspec simulate --inject``: an unknown bug is a usage error before anything is printed or run; the summary
says whether the injected bug fired (log lines that differ from a clean run with the same seed), and a bug that
never fired is a plain warning (exit 0: the logs are written as asked)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kcspec.cli import main


def _simulate(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["simulate", *args])
    return result.exit_code, result.output


def test_an_unknown_bug_is_exit_2_before_the_seed_line(tmp_path: Path) -> None:
    code, out = _simulate("--inject", "nosuchbug", "--emit-logs", str(tmp_path / "logs"), "--seed", "7")
    assert code == 2, out
    assert "unknown bug 'nosuchbug'" in out and "kafka-6082" in out, out
    assert "seed" not in out.lower().replace("--seed", ""), f"printed before the usage error:\n{out}"
    assert not (tmp_path / "logs").exists()


def test_inject_without_emit_logs_is_exit_2() -> None:
    code, out = _simulate("--spark", "--inject", "kafka-6082")
    assert code == 2 and "--inject goes with --emit-logs" in out, out


def test_a_bug_that_never_fired_is_said_plainly(tmp_path: Path) -> None:
    code, out = _simulate(
        "--inject", "kafka-6082", "--emit-logs", str(tmp_path), "--seed", "7", "--events", "50"
    )
    assert code == 0, out
    assert "warning: kafka-6082 never fired" in out.replace("\n", " "), out


def test_a_bug_that_fired_is_counted(tmp_path: Path) -> None:
    code, out = _simulate(
        "--inject",
        "kafka-9866",
        "--emit-logs",
        str(tmp_path),
        "--seed",
        "7",
        "--brokers",
        "3",
        "--events",
        "200",
    )
    text = out.replace("\n", " ")
    assert code == 0, out
    assert "kafka-9866 fired:" in text and "log line(s) differ from a clean run with seed 7" in text, out
