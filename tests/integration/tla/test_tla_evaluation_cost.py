"""What keeps TLC's work per state down in the generated module (``benchmarks/results/tla_cost.md``): every action
computes its outcome once, and a step invariant's message is built only when the invariant fails.

TLC evaluates an action's body in its next-state mode, where a ``LET`` binds no value: a body written
``LET w == effect IN /\\ zk' = w.state.zk /\\ controller' = … /\\ StepInvariantsHold(w, …)`` evaluates the effect
once per mention of ``w`` (four times per successor, half of TLC's time on the default 2-broker model). The module
passes the outcome to ``TakeStep``, whose argument TLC evaluates once. These tests fail if an action goes back to
the old shape, or if the primed variables are assigned anywhere but in ``TakeStep``."""

from __future__ import annotations

import re

import pytest
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.module import STATE_VARS, TAKE_STEP
from kcspec.spec.actions import build_actions
from kcspec.spec.profiles import get_profile

from tests.support.tla_modules import generated, models

_DEFINITION = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\(.*\))? ==", re.M)


def _definitions(tla: str) -> dict[str, str]:
    """Each top-level definition of the module: its name and its text (up to the next one)."""
    starts = [(m.start(), m[1]) for m in _DEFINITION.finditer(tla)]
    ends = [s for s, _ in starts[1:]] + [len(tla)]
    return {name: tla[start:end] for (start, name), end in zip(starts, ends, strict=True)}


@pytest.mark.parametrize(("profile", "config"), models())
def test_every_action_passes_its_outcome_to_take_step_once(profile: str, config: ModelConfig) -> None:
    module = generated(profile, config)
    definitions = _definitions(module.tla)
    take_step = definitions[TAKE_STEP]
    for v in STATE_VARS:
        assert f"{v}' = w.state.{v}" in take_step, f"{TAKE_STEP} does not set {v}':\n{take_step}"
    primed = [name for name, text in definitions.items() if re.search(r"\w' = ", text) and name != TAKE_STEP]
    assert not primed, f"primed variables assigned outside {TAKE_STEP}: {primed}"
    wrong = []
    for name in build_actions(get_profile(profile)):
        text = definitions[name]
        # the outermost LET binds the outcome; its IN part is the single call of TakeStep, the action's last line
        calls = list(re.finditer(rf'IN  {TAKE_STEP}\((\w+), "(\w+)"\)\n', text))
        rest = text[calls[-1].end() :] if calls else ""
        if [(c[1], c[2]) for c in calls] != [("w", name)] or re.sub(r"\(\*.*\*\)", "", rest).strip():
            wrong.append(f"{name}: {[c[0].strip() for c in calls] or 'no call of ' + TAKE_STEP}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("profile", "config"), models())
def test_a_step_invariant_message_is_built_only_when_it_fails(profile: str, config: ModelConfig) -> None:
    module = generated(profile, config)
    asserts = re.findall(r"Assert\((\w+)", module.tla)
    assert asserts, "no step invariant is checked"
    assert set(asserts) == {"FALSE"}, (
        "an Assert evaluates its message (which names the action) on every successor: "
        f"{sorted(set(asserts) - {'FALSE'})}"
    )
