"""The vectors of the phased runs (``conformance/vectors/inputs.py``: ``TOPIC_ID_TESTS``,
``ISR_NOTIFICATION_TESTS``), each settled on both oracles, for the tests that look at their replies."""

from __future__ import annotations

from collections.abc import Iterable

from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut, SpecSut
from kcspec.conformance.vectors import generate, inputs


def settled(
    profile: str, sequences: Iterable[inputs.KafkaTestSequence]
) -> dict[str, tuple[inputs.Case, m.StepReply]]:
    """Vector id → (vector, the reply both oracles agree on) for every step of ``sequences`` under ``profile``;
    fails naming the vector when the oracles disagree or do not answer with a step."""
    prefixes = tuple(f"event.kafka-test.{s.name}." for s in sequences)
    gen = generate.Generation()
    out: dict[str, tuple[inputs.Case, m.StepReply]] = {}
    for case in generate._kafka_test_cases(profile, SpecSut()):
        if not case.id.startswith(prefixes):
            continue
        reply = generate._settle(profile, case, [SpecSut(), ReferenceSut()], gen)
        assert isinstance(reply, m.StepReply), (case.id, case.description, gen.disagreements, gen.unanswered)
        out[case.id] = (case, reply)
    return out
