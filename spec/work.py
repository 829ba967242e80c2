"""``Work``: what one controller step has done so far, threaded through the spec's procedures.

A spec action is a chain of procedures (state-machine calls, batch sends, ZK writes); each takes
the ``Work`` so far and returns the next one. ``moved`` records a ControllerMovedException: every
later procedure of the event is skipped and the event ends with the controller's resignation
(§2.3 step 7, §7 preamble, §7.12). ``answers`` are what the callbacks of queued requests were answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcspec.spec.requests import ElectionAnswer, Request, RequestBatch, StateChangeFailure
from kcspec.spec.state import ClusterState


@dataclass(frozen=True)
class Work:
    state: ClusterState
    batch: RequestBatch = field(default_factory=RequestBatch)
    sent: frozenset[Request] = frozenset()
    failures: frozenset[StateChangeFailure] = frozenset()
    moved: bool = False
    answers: frozenset[ElectionAnswer] = frozenset()
    """The answers of the callbacks the step called (``spec/actions/event_queue.py``)."""
