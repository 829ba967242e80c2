"""The exploration's progress line: a one-process or ``--workers`` level shows its states expanded so far; a Spark
level, whose size is known only at its end, shows that it is in progress, its job's tasks done and the time
estimated from the previous level; both end with the level sizes."""

from __future__ import annotations

import time

from kcspec.conformance.selfcheck.explore.stats import ExploreStats

from kcspec.commands.explore_spark import progress_text


def test_a_counted_level_shows_its_states_expanded() -> None:
    stats = ExploreStats(distinct_states=24, level_sizes=[1, 6, 17])
    stats.begin_level(2)
    stats.level_expanded = 5
    text = progress_text(stats)
    assert "level 2: 5/17 expanded, done in ~" in text, text
    assert text.endswith("levels 1 6 17"), text


def test_a_spark_level_shows_its_tasks_and_the_estimate() -> None:
    stats = ExploreStats(distinct_states=7, level_sizes=[1, 6])
    stats.end_level(2)
    stats.level_started = time.perf_counter()
    stats.level_estimate = 600.0
    stats.level_tasks = (3, 8)
    text = progress_text(stats)
    assert "level 2: in progress, 3/8 tasks, done in ~10 min" in text, text
    assert text.endswith("levels 1 6"), text

    stats.level_estimate, stats.level_tasks = None, None  # nothing known yet: no claim about the level
    assert "level 2" not in progress_text(stats)
