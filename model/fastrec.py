"""Fast construction and functional update of the data model's frozen dataclasses, for generated spec code.

For a *plain* dataclass — its ``__init__`` is the one ``dataclasses`` generated, every field is an ``init``
field, no ``__post_init__``, instances have a ``__dict__`` — calling the class with every field, or
``dataclasses.replace``, only stores the field values in the instance's ``__dict__`` (a frozen class through
``object.__setattr__``). The functions made here store them directly, which is several times cheaper and gives
an equal object (same class, same fields; equality, hashing and ``repr`` read the fields). Any other class gets
no fast function (``None``) and the caller keeps the ordinary call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cache
from typing import Any


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The fields of a plain dataclass, in declaration order; ``None`` for any other class."""
    if not dataclasses.is_dataclass(cls) or "__post_init__" in dir(cls) or cls.__dictoffset__ == 0:
        return None
    params = getattr(cls, "__dataclass_params__", None)
    init = cls.__dict__.get("__init__")
    code = getattr(init, "__code__", None)
    if params is None or not params.init or code is None or code.co_filename != "<string>":
        return None  # a hand-written __init__, or one dataclasses did not generate
    declared = getattr(cls, "__dataclass_fields__", {})
    fields = dataclasses.fields(cls)
    if len(declared) != len(fields) or not all(f.init for f in fields):
        return None  # InitVar or ClassVar pseudo-fields, or fields outside __init__
    return tuple(f.name for f in fields)


def _build(name: str, src: str, cls: type, extra: dict[str, Any] | None = None) -> Callable[..., Any]:
    ns: dict[str, Any] = {"new": object.__new__, "C": cls, **(extra or {})}
    exec(compile(src, f"<kcspec {name} {cls.__name__}>", "exec"), ns)
    fn: Callable[..., Any] = ns[name]
    return fn


@cache
def maker(cls: type, names: tuple[str, ...]) -> Callable[..., Any] | None:
    """``lambda *values: cls(**dict(zip(names, values)))`` when ``names`` are all the fields of a plain class, or
    of a dataclass offering ``_fields_maker`` (a function of every field in declaration order that builds what
    the constructor builds — e.g. with a cached hash, which a plain store of the fields would miss)."""
    custom = getattr(cls, "_fields_maker", None)
    if custom is not None and dataclasses.is_dataclass(cls):
        declared = tuple(f.name for f in dataclasses.fields(cls))
        if sorted(names) != sorted(declared) or len(set(names)) != len(names):
            return None
        if names == declared:
            return custom  # type: ignore[no-any-return]
        order = ", ".join(f"v{names.index(n)}" for n in declared)
        src = f"def make({', '.join(f'v{i}' for i in range(len(names)))}):\n    return custom({order})\n"
        return _build("make", src, cls, {"custom": custom})
    fields = _field_names(cls)
    if fields is None or sorted(names) != sorted(fields) or len(set(names)) != len(names):
        return None
    params = {n: f"v{i}" for i, n in enumerate(names)}
    stores = "".join(f"    d[{f!r}] = {params[f]}\n" for f in fields)
    src = f"def make({', '.join(params[n] for n in names)}):\n    n = new(C)\n    d = n.__dict__\n{stores}    return n\n"
    return _build("make", src, cls)


@cache
def updater(cls: type, names: tuple[str, ...], otherwise: Callable[..., Any]) -> Callable[..., Any] | None:
    """``lambda o, *values: dataclasses.replace(o, **dict(zip(names, values)))`` for ``o`` of class ``cls``
    (a plain class with those fields, or a dataclass offering ``_fields_maker``, which is given every field:
    the updated ones' new values, the others read from ``o``); ``otherwise(o, *values)`` for an ``o`` of another
    class."""
    custom = getattr(cls, "_fields_maker", None)
    if custom is not None and dataclasses.is_dataclass(cls):
        declared = dataclasses.fields(cls)
        if not set(names) <= {f.name for f in declared} or len(set(names)) != len(names):
            return None
        if not all(f.init for f in declared):
            return None
        params = [f"v{i}" for i in range(len(names))]
        every = ", ".join(params[names.index(f.name)] if f.name in names else f"o.{f.name}" for f in declared)
        src = (
            f"def update(o, {', '.join(params)}):\n"
            "    if o.__class__ is C:\n"
            f"        return custom({every})\n"
            f"    return otherwise(o, {', '.join(params)})\n"
        )
        return _build("update", src, cls, {"custom": custom, "otherwise": otherwise})
    fields = _field_names(cls)
    if fields is None or not set(names) <= set(fields) or len(set(names)) != len(names):
        return None
    params = [f"v{i}" for i in range(len(names))]
    stores = "".join(f"        d[{n!r}] = {p}\n" for n, p in zip(names, params, strict=True))
    args = ", ".join(params)
    src = (
        f"def update(o, {args}):\n"
        "    if o.__class__ is C:\n"
        "        n = new(C)\n"
        "        d = n.__dict__\n"
        "        d.update(o.__dict__)\n"
        f"{stores}"
        "        return n\n"
        f"    return otherwise(o, {args})\n"
    )
    return _build("update", src, cls, {"otherwise": otherwise})
