"""``kcspec tla check`` prints each counterexample step with TLC's label; a step TLC labels ``Next`` (an action whose
entry in ``Next`` checks part of its guard first) also names the action, read from the module's line map."""

from __future__ import annotations

from kcspec.model.tlc.trace import TlcAction

from kcspec.commands.tla import _action_label

ORIGINS: list[list[str | None]] = [
    ["Next", None],
    ["Next", "TopicCreation (§7.6)"],
    ["Next", "IsrChange (§7.11)"],
]


def test_a_next_step_names_the_action_of_its_entry() -> None:
    step = TlcAction("Next", location="line 2, col 12 to line 3, col 48 of module M")
    assert _action_label(step, ORIGINS) == "Next (TopicCreation)"


def test_other_labels_and_unknown_lines_are_printed_as_tlc_gives_them() -> None:
    assert _action_label(
        TlcAction("BrokerStartup", location="line 2, col 5 to line 2, col 9 of module M"), ORIGINS
    ) == ("BrokerStartup")
    assert (
        _action_label(TlcAction("Next", location="line 1, col 1 to line 1, col 2 of module M"), ORIGINS)
        == "Next"
    )
    assert (
        _action_label(TlcAction("Next", location="line 99, col 1 to line 99, col 2 of module M"), ORIGINS)
        == "Next"
    )
    assert (
        _action_label(TlcAction("Next", location="line 2, col 1 to line 2, col 2 of module M"), None)
        == "Next"
    )
