"""The expressions a module emits with their rule copies generalised (``generalise.py``), once per built-in profile.

Generalising a profile's rules — anti-unifying the copies of every rule, then proving that every copy is its
operator's instance — is most of the cost of generating a module (kafka-2.8's: 9.7 CPU s from scratch, 1.0–1.3 s with its rules kept),
and it reads the spec's expressions only: every model (``ModelConfig``) of a profile generalises the same
expressions into the same operators. ``generalise_roots`` rewrites the roots a module emits in the order the
module's builder first asks for them (every invariant, then every action's guard and effect, then the conjuncts of
each guard), so that its answers are the ones the builder would have computed itself; ``for_profile`` keeps them
for a built-in profile in this process and on disk, beside the compiled spec (``codecache``: the same folder, and
a key made of the profile's name and the digest of ``kcspec.spec`` and ``kcspec.model``, so any change to a rule
or to the generator makes a new entry).

A saved entry is bound to a new process's roots by position, after checking that it names the same actions and
invariants in the same order; one that does not read back, or does not match, is computed again and overwritten.
Decision: like the compiled spec's cache, an entry is unpickled (it is a file of the user's own cache folder).
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path

from kcspec.model.codecache import cache_dir, save_entry, source_digest, touch
from kcspec.model.tla.generalise import Generaliser
from kcspec.spec import lang as L

_FORMAT = 1


class Generalised:
    """The generalised form of each root (``rewrite``), the operators it calls (``rule_defs``, by id, as the
    emitter looks them up) and the copies for which the proof failed (``problems``)."""

    def __init__(
        self,
        roots: Sequence[L.Expr],
        rewritten: Sequence[L.Expr],
        rule_defs: Sequence[L.Def],
        problems: Sequence[str],
    ) -> None:
        if len(roots) != len(rewritten):
            raise ValueError(f"{len(roots)} roots, {len(rewritten)} rewritten expressions")
        self._roots = tuple(roots)  # kept alive: the table below is keyed by their ids
        self._by_id = {id(r): w for r, w in zip(roots, rewritten, strict=True)}
        self.rewritten = tuple(rewritten)
        self.rule_defs: dict[int, L.Def] = {id(d): d for d in rule_defs}
        self.problems = tuple(problems)

    def rewrite(self, e: L.Expr) -> L.Expr:
        """The generalised form of the root ``e``."""
        try:
            return self._by_id[id(e)]
        except KeyError:
            raise KeyError(f"not one of the generalised roots: {type(e).__name__}") from None


def generalise_roots(
    collect: Sequence[L.Expr], roots: Sequence[L.Expr], inline: frozenset[str]
) -> Generalised:
    """Generalise the rule copies reachable from ``collect`` and rewrite ``roots`` in their order (``inline``: the
    rules written in place, the actions' own)."""
    g = Generaliser(frozenset({"s"}), inline)
    g.collect(list(collect))
    rewritten = [g.rewrite(r) for r in roots]
    problems = g.verify()
    g.release()
    return Generalised(roots, rewritten, list(g.rule_defs.values()), problems)


def for_profile(
    profile: str,
    names: Sequence[str],
    roots: Sequence[L.Expr],
    compute: Callable[[], Generalised],
) -> Generalised:
    """``compute()``'s answer for the built-in ``profile`` whose roots are ``roots`` (``names``: what they are, in
    order, to check a saved entry against), from this process's memory or the cache folder when kept there."""
    kept = _MEMORY.get(profile)
    if kept is not None and kept[0] == tuple(names):
        return Generalised(roots, kept[1], kept[2], kept[3])
    path = entry_path(profile)
    saved = _load(path, names) if path is not None else None
    if saved is not None:
        out = Generalised(roots, *saved)
    else:
        out = compute()
        if path is not None:
            _save(path, names, out)
    _MEMORY[profile] = (tuple(names), out.rewritten, tuple(out.rule_defs.values()), out.problems)
    return out


_MEMORY: dict[str, tuple[tuple[str, ...], tuple[L.Expr, ...], tuple[L.Def, ...], tuple[str, ...]]] = {}
"""This process's generalised roots, by profile: the roots' names, their rewritten forms, the operators and the
proof's problems (a few MB each; two built-in profiles)."""


def forget() -> None:
    """Forget what this process keeps (the entries on disk stay)."""
    _MEMORY.clear()


def entry_path(profile: str) -> Path | None:
    """The cache file of ``profile``'s generalised roots, or ``None`` when the cache is off."""
    folder = cache_dir()
    if folder is None:
        return None
    h = hashlib.sha256()
    for part in (str(_FORMAT), profile, source_digest()):
        h.update(part.encode())
        h.update(b"\0")
    return folder / f"tla-rules-{profile}-{h.hexdigest()[:32]}.pickle"


def _load(
    path: Path, names: Sequence[str]
) -> tuple[tuple[L.Expr, ...], tuple[L.Def, ...], tuple[str, ...]] | None:
    try:
        with open(path, "rb") as f:
            data = pickle.load(f)
        if data["format"] != _FORMAT or tuple(data["names"]) != tuple(names):
            return None
        touch(path)
        return tuple(data["rewritten"]), tuple(data["rule_defs"]), tuple(data["problems"])
    except FileNotFoundError:
        return None
    except Exception:  # a damaged or foreign file: computed again and overwritten
        return None


def _save(path: Path, names: Sequence[str], g: Generalised) -> None:
    """Save ``g``; a cache that cannot be written (or an expression that does not pickle) costs only the next
    generation."""
    data = {
        "format": _FORMAT,
        "names": list(names),
        "rewritten": list(g.rewritten),
        "rule_defs": list(g.rule_defs.values()),
        "problems": list(g.problems),
    }
    try:
        blob = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return
    save_entry(path, blob)


__all__ = ["Generalised", "entry_path", "for_profile", "forget", "generalise_roots"]
