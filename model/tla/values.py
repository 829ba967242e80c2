"""Python values of the data model as TLA+ text.

Integers and booleans as themselves; strings quoted; enum members as their Kafka names (strings);
vocabulary records (frozen dataclasses, including ``TopicPartition``) as TLA+ records with the same
field names; frozensets as sets, tuples as sequences, ``FMap``s as functions (``k :> v @@ …``, the
empty map as ``<<>>``); ``None`` (an optional value that is absent: a cancelled reassignment target) as the
model value ``NoValue``. TLC compares values only within one kind (a sequence with a sequence, a string with a
string) and stops with "Attempted to compare" otherwise, so ``None`` cannot be a string or an integer: a model
value (a constant assigned ``NoValue = NoValue`` in the configuration) is the one value TLC compares with
anything, so ``r = NoValue`` and ``RfLists \\cup {NoValue}`` are sound. Set members and map entries are written
in a fixed order, so the text of a value is deterministic.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping

from kcspec.model.tla.layout import Block, concat, flat_text, is_flat, seq_items, text

NONE_TEXT = "NoValue"
"""The TLA+ text of ``None``: the model value declared by every generated module (``module.CONSTANT_NAMES``)."""


def tla_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def value_block(v: object) -> Block:
    """A value as a (possibly multi-line) block."""
    if v is None:
        return text(NONE_TEXT)
    if isinstance(v, bool):
        return text("TRUE" if v else "FALSE")
    if isinstance(v, int):
        return text(str(v))
    if isinstance(v, str):
        return text(tla_string(v))
    if isinstance(v, enum.Enum):
        return text(tla_string(v.name))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        fields = [
            concat(text(f"{f.name} |-> "), value_block(getattr(v, f.name))) for f in dataclasses.fields(v)
        ]
        return seq_items("[", fields, "]")
    if isinstance(v, frozenset | set):
        items = sorted((value_block(x) for x in v), key=_sort_key)
        return seq_items("{", items, "}")
    if isinstance(v, tuple | list):
        return seq_items("<<", [value_block(x) for x in v], ">>")
    if isinstance(v, Mapping):
        if not v:
            return text("<<>>")
        pairs = sorted(
            (concat(_paren_if_long(value_block(k)), text(" :> "), value_block(x)) for k, x in v.items()),
            key=_sort_key,
        )
        return seq_items("(", pairs, ")", sep=" @@ ")
    raise TypeError(f"no TLA+ form for {type(v).__name__}: {v!r}")


def _paren_if_long(b: Block) -> Block:
    return b if is_flat(b) else concat(text("("), b, text(")"))


def _sort_key(b: Block) -> str:
    return "\n".join(line.text for line in b) if not is_flat(b) else flat_text(b)


def value_text(v: object) -> str:
    return "\n".join(line.text for line in value_block(v))
