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
MapPut(m, k, v) == [x \in DOMAIN m \cup {k} |-> IF x = k THEN v ELSE m[x]]
MapDel(m, k) == [x \in DOMAIN m \ {k} |-> m[x]]
MapDelAll(m, ks) == [x \in DOMAIN m \ ks |-> m[x]]
MapMerge(a, b) == [x \in DOMAIN a \cup DOMAIN b |-> IF x \in DOMAIN b THEN b[x] ELSE a[x]]"""
"""Maps are functions; ``Range`` is the set of a sequence's elements; ``Dedup`` keeps first occurrences."""

PRELUDE_NAMES = frozenset(
    line.split("(")[0].split(" ")[0].replace("RECURSIVE", "").strip() for line in PRELUDE.splitlines()
) - {""}
