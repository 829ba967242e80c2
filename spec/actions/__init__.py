"""The controller actions of §7 and §8 as guarded updates of ``ClusterState``, per profile.

``build_actions(profile)`` returns one ``Action`` per event kind (``kcspec.spec.events``).
"""

from __future__ import annotations

from kcspec.spec.lang import Action
from kcspec.spec.profiles import Profile


def build_actions(profile: Profile) -> dict[str, Action]:
    """Every action of ``profile``, keyed by event kind."""
    from kcspec.spec.actions import registry

    return registry.build(profile)
