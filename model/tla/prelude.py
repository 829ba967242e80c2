"""The helper operators every generated module defines (TLA+ text), so the module needs only the standard
modules ``Integers``, ``Sequences``, ``FiniteSets`` and ``TLC``."""

from __future__ import annotations

PRELUDE = r"""Range(q) == {q[i] : i \in DOMAIN q}
Max(a, b) == IF a >= b THEN a ELSE b
Min(a, b) == IF a =< b THEN a ELSE b
FirstOr(q, default) == IF q = <<>> THEN default ELSE Head(q)
RECURSIVE Dedup(_)
Dedup(q) == IF q = <<>> THEN <<>> ELSE <<Head(q)>> \o Dedup(SelectSeq(Tail(q), LAMBDA y : y # Head(q)))
GetOr(m, k, default) == IF k \in DOMAIN m THEN m[k] ELSE default
MapPut(m, k, v) == (k :> v) @@ m
MapDel(m, k) == [x \in DOMAIN m \ {k} |-> m[x]]
MapDelAll(m, ks) == [x \in DOMAIN m \ ks |-> m[x]]
MapMerge(a, b) == b @@ a"""
r"""Maps are functions; ``Range`` is the set of a sequence's elements; ``Dedup`` keeps first occurrences.
``MapPut`` and ``MapMerge`` use the TLC module's ``:>`` and ``@@`` (``(k :> v) @@ m`` is ``m`` with ``k`` mapped to
``v``; ``b @@ a`` takes ``b``'s value where both have a key), which TLC implements natively and builds as an
explicit function, instead of a ``[x \in S |-> …]`` that TLC keeps as a closure and evaluates at each lookup."""

PRELUDE_NAMES = frozenset(
    line.split("(")[0].split(" ")[0].replace("RECURSIVE", "").strip() for line in PRELUDE.splitlines()
) - {""}
