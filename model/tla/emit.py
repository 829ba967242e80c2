"""``Expr`` → TLA+ text: the TLA+ backend of the expression language (``kcspec.spec.lang``).

Each node becomes the TLA+ construct with the meaning ``kcspec.model.evaluate`` gives it: sets, sequences
(``Sequences``), records, functions for maps (helpers such as ``MapPut`` come from ``prelude``), ``LET``,
``IF``, quantifiers, ``SelectSeq`` with ``LAMBDA`` for filters and "first such" on sequences, a
``LET RECURSIVE`` operator for each left fold. Types are inferred in the same pass (``types``), because
TLA+ spells set, sequence and map operations differently. Bound names are renamed to their readable
base (``w``, ``tp``) with a numeric suffix only where TLA+ would see a clash, which also makes the text
independent of the counters used while the spec was built. ``Rule`` nodes become comments citing their
section, and every line remembers the rule it came from.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kcspec.model.dispatch import MissingHandler, NodeTable
from kcspec.model.tla import types as ty
from kcspec.model.tla.kinds import KindChecker
from kcspec.model.tla.layout import (
    Block,
    concat,
    fits,
    flat_text,
    indent,
    is_flat,
    render,
    seq_items,
    tag,
    text,
    vstack,
)
from kcspec.model.tla.order import OrderError, Orders
from kcspec.model.tla.share import share
from kcspec.model.tla.types import T
from kcspec.model.tla.values import value_block
from kcspec.spec import lang as L
from kcspec.spec.spans import Span


class TlaBackendError(ValueError):
    """An expression the TLA+ backend cannot translate, named with the innermost rule."""


@dataclass(frozen=True)
class Out:
    """A translated expression: its text, its precedence (``ATOM`` for brackets, names and calls; 0 for
    ``IF``/``LET``/quantifiers, which extend as far as possible) and its inferred type."""

    block: Block
    prec: int
    type: T


ATOM = 100
LOWEST = 0
PREC = {"=>": 1, "/\\": 3, "\\/": 3, "~": 4, "=": 5, "#": 5, "<": 5, "=<": 5, ">": 5, ">=": 5, "\\in": 5}
PREC |= {
    "\\subseteq": 5,
    "\\cup": 8,
    "\\cap": 8,
    "\\": 8,
    "DOMAIN": 9,
    "UNION": 8,
    "+": 10,
    "-": 11,
    "\\o": 13,
}


_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_CMP_INT = {"==": "=", "!=": "#", "<": "<", "<=": "=<", ">": ">", ">=": ">="}


def _static_word(key: str, value: str) -> str:
    """A short name part for a static argument: ``True`` flags by name, ``False``/``None``/empty dropped,
    enum-like values by their member name without the class's own suffix words."""
    if value in ("False", "None", "frozenset()", "()", ""):
        return ""
    if value == "True":
        return key
    if re.fullmatch(r"-?\d+", value):
        return f"{key}_{value.replace('-', 'minus')}"
    quoted = re.findall(r"'([A-Za-z0-9_]+)'", value)
    flags = re.findall(r"([a-z_]+)=True", value)
    if quoted:
        return "_".join([*quoted, *flags])
    return value.rsplit(".", 1)[-1].replace("PartitionLeaderElectionStrategy", "")


STATE_VARIABLES = ("zk", "controller", "config")
"""The module's state variables: the fields of ``ClusterState``, which the module-level ``s`` gathers."""


class Procedures:
    """The spec's procedures (``lang.Def``), each emitted once as a top-level operator, in the order they
    were completed (so every operator is defined after the ones it calls)."""

    def __init__(self, base: set[str] | None = None) -> None:
        self.base = set(base or ())
        """Top-level names of the module that no operator or bound name may take."""
        self.op_names: set[str] = set()
        self.names: dict[int, tuple[str, T]] = {}
        self.definitions: list[tuple[str, Block]] = []
        self._in_progress: set[int] = set()
        self.rule_names: dict[tuple[object, ...], str] = {}
        """Rule operators by their text, so that equal rules (built once per action) share one operator."""
        self.kinds = KindChecker()
        """The module's static kind check (``kinds``): every emitter of the module reports to it."""
        self.rule_defs: dict[int, L.Def] = {}
        """The ``Def``s that stand for a group of alike rule copies (``generalise``), emitted as rule operators."""
        self._rule_calls: dict[tuple[object, ...], tuple[str, T]] = {}
        self.constants: dict[str, tuple[str, Block]] = {}
        """Literal sets by their text: the name and value of the constant-level definition that holds each."""
        self.spans: dict[str, Span] = {}
        """Where each origin (``"name (§)"`` of a rule, procedure, action or invariant) is written in ``spec/``:
        the first span seen for it (``kcspec.spec.spans``), for the module's source map."""

    def cite(self, origin: str, section: str, name: str, span: Span | None, extra: str = "") -> str:
        """The comment above an operator: its § and name, and where the spec writes it; records the span."""
        if span is not None:
            self.spans.setdefault(origin, span)
        where = f", {span}" if span is not None else ""
        return f"(* {section} {name}{extra}{where} *)"

    def constant(self, block: Block) -> str:
        """The name of a constant-level definition with the value ``block`` (a literal), defined once."""
        key = render(block)
        if key not in self.constants:
            n = len(self.constants) + 1
            while f"Literal{n}" in self.base or f"Literal{n}" in self.op_names:
                n += 1
            self.constants[key] = (f"Literal{n}", block)
            self.op_names.add(f"Literal{n}")
        return self.constants[key][0]

    def operator_name(self, d: L.Def, taken: set[str]) -> str:
        parts = [d.name] + [_static_word(k, v) for k, v in d.static if k != "p" and "kafka-" not in v]
        base = "".join(w[:1].upper() + w[1:] for p in parts for w in re.split(r"[^A-Za-z0-9]+", p) if w)
        base = base if base and not base[0].isdigit() else f"P{base}"
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}{n}"
        return name

    def rule_operator(self, e: L.Rule, caller: Emitter) -> Out:
        """A rule of the spec (a named step citing its section) as an operator of its own, called in place.

        Its parameters are the names the rule reads from the caller's scope (module-level names such as ``s``
        and the constants are visible anyway), in the order the rule first reads them. Each operator is
        short, starts at the left margin and cites its section; rules built by the same spec function for
        several actions have the same text and become one operator."""
        origin = f"{e.name} ({e.section})"
        em = Emitter({}, set(self.base), caller.orders, self)
        em.operator = e.name
        args: list[str] = []
        params: list[str] = []
        for v in _first_use(e.body):
            caller.rules.append(origin)
            try:
                tla, t = caller.lookup(v)
            finally:
                caller.rules.pop()
            if tla in self.base:
                em.free[v] = (tla, t)
                continue
            name = em.fresh(re.sub(r"_\d+$", "", v.rsplit(".", 1)[-1]))
            em.free[v] = (name, t)
            params.append(name)
            args.append(tla)
        em.rules.append(origin)
        body = em.emit(e.body)
        key = (e.name, e.section, tuple(params), tuple(line.text for line in body.block))
        known = self.rule_names.get(key)
        if known is not None:
            name = known
        else:
            name = self.operator_name(
                L.Def(e.name, e.section, (), e.body), self.base | self.op_names | caller.reserved
            )
            self.op_names.add(name)
            self.rule_names[key] = name
            head = f"{name}({', '.join(params)}) ==" if params else f"{name} =="
            comment = self.cite(origin, e.section, e.name, e.span)
            block = tag(vstack(text(comment), text(head), indent(body.block, 4)), origin)
            self.definitions.append((name, block))
        if not args:
            return Out(text(name), ATOM, body.type)
        return Out(seq_items(f"{name}(", [text(a) for a in args], ")"), ATOM, body.type)

    def define_rule(self, d: L.Def, args: list[Out], caller: Emitter) -> tuple[str, T]:
        """A generalised rule (``generalise``) as an operator: its parameters are the places where its copies
        differ, and the module-level names it reads stay free. It is emitted once per combination of argument
        types (the text depends on them: a sequence and a set are read differently); equal texts are one
        operator."""
        # module-level names the caller sees (the state ``s``) stay visible; every other name is a parameter
        outer = [(v, tla, t) for v, (tla, t) in sorted(caller.free.items()) if tla in self.base]
        key = (id(d), tuple(a.type for a in args), tuple(outer))
        known = self._rule_calls.get(key)
        if known is not None:
            return known
        origin = f"{d.name} ({d.section})"
        em = Emitter({}, set(self.base), caller.orders, self)
        em.operator = d.name
        for v, tla, t in outer:
            em.free[v] = (tla, t)
        params: list[str] = []
        for p, a in zip(d.params, args, strict=True):
            name = em.fresh(re.sub(r"_\d+$", "", p))
            em.free[p] = (name, a.type)
            params.append(name)
        em.rules.append(origin)
        body = em.emit(share(d.body))
        text_key = (d.name, d.section, tuple(params), tuple(line.text for line in body.block))
        name = self.rule_names.get(text_key, "")
        if not name:
            name = self.operator_name(d, self.base | self.op_names | caller.reserved)
            self.op_names.add(name)
            self.rule_names[text_key] = name
            head = f"{name}({', '.join(params)}) ==" if params else f"{name} =="
            comment = self.cite(origin, d.section, d.name, d.span)
            block = tag(vstack(text(comment), text(head), indent(body.block, 4)), origin)
            self.definitions.append((name, block))
        self._rule_calls[key] = (name, body.type)
        return name, body.type

    def define(self, d: L.Def, arg_types: list[T], caller: Emitter) -> tuple[str, T]:
        key = id(d)
        if key in self.names:
            return self.names[key]
        if key in self._in_progress:
            raise caller.fail(f"procedure {d.name} calls itself")
        self._in_progress.add(key)
        name = self.operator_name(d, self.base | self.op_names | caller.reserved)
        self.op_names.add(name)
        em = Emitter({}, set(self.base), caller.orders, self)
        em.operator = name
        params: list[str] = []
        for p, t in zip(d.params, arg_types, strict=True):
            tla = em.fresh(p.rsplit(".", 1)[-1])
            em.free[p] = (tla, t)
            params.append(tla)
        origin = f"{d.name} ({d.section})"
        em.rules.append(origin)
        body = em.emit(share(d.body))
        head = f"{name}({', '.join(params)}) ==" if params else f"{name} =="
        statics = ", ".join(f"{k}={v}" for k, v in d.static)
        comment = self.cite(origin, d.section, d.name, d.span, f" [{statics}]" if statics else "")
        block = tag(vstack(text(comment), text(head), indent(body.block, 4)), origin)
        self.definitions.append((name, block))
        self.names[key] = (name, body.type)
        self._in_progress.discard(key)
        return name, body.type


class Emitter:
    """Translates expressions with the given free variables (TLA+ name and type) into blocks."""

    def __init__(
        self,
        free: Mapping[str, tuple[str, T]],
        reserved: set[str],
        orders: Orders,
        procedures: Procedures | None = None,
    ) -> None:
        self.free = dict(free)
        self.reserved = reserved
        self.reserved.update(name for name, _ in free.values())
        self.orders = orders
        self.procedures = procedures if procedures is not None else Procedures()
        self.scope: list[tuple[str, str, T]] = []
        self.used: set[str] = set()
        self.rules: list[str] = []
        self.operator = "<module>"
        """The top-level definition being emitted, for the kind check's messages."""
        self.inline_rules: set[str] = set()
        """Rules written in place (an action's own top rule) rather than as operators of their own."""

    # ------------------------------------------------------------------ names and scope
    def where(self) -> str:
        return self.rules[-1] if self.rules else "<top>"

    def same_kind(self, site: str, a: Out, b: Out) -> None:
        """TLC compares the values of ``a`` and ``b`` here: they must be of one kind (``kinds``)."""
        self.same_kind_t(site, a.type, b.type, _excerpt(a), _excerpt(b))

    def same_kind_t(self, site: str, a: T, b: T, a_text: str, b_text: str) -> None:
        where = f"operator {self.operator} (rule {self.where()})"
        self.procedures.kinds.check(site, a, b, where, a_text, b_text)

    def fail(self, message: str) -> TlaBackendError:
        return TlaBackendError(f"{message} (rule {self.where()})")

    def fresh(self, hint: str) -> str:
        """A bound name not used before in this definition: nested binders can then never clash, whatever
        order the sub-expressions are emitted in (TLA+ forbids redefining a name in scope)."""
        base = re.sub(r"_\d+$", "", hint) or "x"
        name, n = base, 1
        while name in self.reserved or name in self.used or name in self.procedures.op_names:
            n += 1
            name = f"{base}{n}"
        self.used.add(name)
        return name

    def push(self, lang_name: str, t: T) -> str:
        name = self.fresh(lang_name)
        self.scope.append((lang_name, name, t))
        return name

    def pop(self, n: int = 1) -> None:
        del self.scope[len(self.scope) - n :]

    def lookup(self, lang_name: str) -> tuple[str, T]:
        for lang, tla, t in reversed(self.scope):
            if lang == lang_name:
                return tla, t
        if lang_name in self.free:
            return self.free[lang_name]
        raise self.fail(f"unbound variable {lang_name!r}")

    # ------------------------------------------------------------------ small builders
    @staticmethod
    def paren(o: Out, above: int = ATOM - 1) -> Block:
        """``o`` as an operand of an operator of precedence ``above``: parenthesised unless it binds tighter."""
        return o.block if o.prec > above else concat(text("("), o.block, text(")"))

    def call(self, name: str, *args: Out, t: T) -> Out:
        return Out(seq_items(f"{name}(", [a.block for a in args], ")"), ATOM, t)

    def infix(self, op: str, a: Out, b: Out, t: T) -> Out:
        p = PREC[op]
        pa, pb = self.paren(a, p), self.paren(b, p)
        if fits(pa, pb, extra=len(op) + 2):
            return Out(text(f"{flat_text(pa)} {op} {flat_text(pb)}"), p, t)
        return Out(vstack(pa, concat(text(f"{op} "), pb)), p, t)

    def junction(self, op: str, items: list[Out]) -> Out:
        blocks = [self.paren(i, 3) for i in items]
        if fits(*blocks, extra=(len(op) + 2) * len(blocks)):
            return Out(text(f" {op} ".join(flat_text(b) for b in blocks)), 3, ty.BOOL)
        # a bulleted list: each item extends to the next bullet, so items need no parentheses
        return Out(vstack(*(concat(text(f"{op} "), i.block) for i in items)), LOWEST, ty.BOOL)

    def as_set(self, o: Out) -> Out:
        """``o`` as a set: sequences through ``Range``, maps through ``DOMAIN``."""
        if o.type.kind == "seq":
            return self.call("Range", o, t=ty.set_of(ty.elem(o.type)))
        if o.type.kind == "map":
            return Out(concat(text("DOMAIN "), self.paren(o, 9)), 9, ty.set_of(ty.elem(o.type)))
        if o.type.kind == "set":
            return o
        raise self.fail(f"cannot tell whether {_excerpt(o)} is a set, a sequence or a map")

    def kind(self, o: Out, *allowed: str) -> str:
        if o.type.kind not in allowed:
            raise self.fail(f"{_excerpt(o)} has type {o.type}, expected one of {', '.join(allowed)}")
        return o.type.kind

    def with_seq_name(self, seq: Out, hint: str) -> tuple[str, Block | None]:
        """A name for ``seq``: itself when it is a plain name, else a fresh ``LET`` name."""
        if is_flat(seq.block) and _PATH.match(flat_text(seq.block)):
            return flat_text(seq.block), None
        return self.fresh(hint), seq.block

    # ------------------------------------------------------------------ the translation
    def emit(self, e: L.Expr) -> Out:
        try:
            handler: Handler = _HANDLERS.handler(e)
        except MissingHandler:
            raise self.fail(f"no TLA+ translation for {type(e).__name__}") from None
        return handler(self, e)

    def record(self, e: L.Rec) -> Out:
        given = dict(e.fields)
        items: list[Block] = []
        declared = ty.field_types(e.cls)
        for f in dataclasses.fields(e.cls):
            if f.name in given:
                out = self.emit(given[f.name])
                field_name = f"{e.cls.__name__}.{f.name}"
                self.same_kind_t("a record field", declared[f.name], out.type, field_name, _excerpt(out))
                value = out.block
            elif f.default is not dataclasses.MISSING:
                value = value_block(f.default)
            elif f.default_factory is not dataclasses.MISSING:
                value = value_block(f.default_factory())
            else:
                raise self.fail(f"record {e.cls.__name__} is built without its field {f.name!r}")
            items.append(concat(text(f"{f.name} |-> "), value))
        tag = ty.tag_of(e.cls)
        if tag is not None:
            items.insert(0, text(f'type |-> "{tag}"'))
        unknown = set(given) - {f.name for f in dataclasses.fields(e.cls)}
        if unknown:
            raise self.fail(f"record {e.cls.__name__} has no field(s) {', '.join(sorted(unknown))}")
        return Out(seq_items("[", items, "]"), ATOM, ty.T("rec", e.cls))

    def let(self, e: L.Let) -> Out:
        defs: list[Block] = []
        pushed = 0
        node: L.Expr = e
        while isinstance(node, L.Let):
            inner = node.value
            if (
                isinstance(inner, L.Let)
                and inner.name != node.name
                and inner.name not in L.free_vars(node.body)
            ):
                # LET a == (LET b == v IN x) IN body is LET b == v, a == x IN body: body does not read b (so
                # nothing is captured) and TLC evaluates b lazily either way; the definitions then stay in one
                # column instead of drifting right
                node = L.Let(inner.name, inner.value, L.Let(node.name, inner.body, node.body))
                continue
            if isinstance(node.value, L.Var):
                # LET a == b for a name b: a is read as b itself (every bound name of a definition is distinct,
                # so b means the same value throughout a's scope)
                tla, t = self.lookup(node.value.name)
                self.scope.append((node.name, tla, t))
                pushed += 1
                node = node.body
                continue
            value = self.emit(node.value)
            name = self.push(node.name, value.type)
            pushed += 1
            defs.append(concat(text(f"{name} == "), value.block))
            node = node.body
        try:
            body = self.emit(node)
        finally:
            self.pop(pushed)
        if not defs:
            return body
        if len(defs) == 1 and fits(defs[0], body.block, extra=8):
            return Out(text(f"LET {flat_text(defs[0])} IN {flat_text(body.block)}"), LOWEST, body.type)
        return Out(
            vstack(concat(text("LET "), vstack(*defs)), concat(text("IN  "), body.block)), LOWEST, body.type
        )

    def compare(self, e: L.Cmp) -> Out:
        a, b = self.emit(e.lhs), self.emit(e.rhs)
        self.same_kind("=" if e.op == "==" else "#" if e.op == "!=" else e.op, a, b)
        if e.op in ("==", "!="):
            return self.infix("=" if e.op == "==" else "#", a, b, ty.BOOL)
        t = ty.unify(a.type, b.type)
        if t.kind in ("int", "any"):
            return self.infix(_CMP_INT[e.op], a, b, ty.BOOL)
        try:
            less = self.orders.less(t)
        except OrderError as exc:
            raise self.fail(str(exc)) from None
        if e.op == "<":
            return self.call(less, a, b, t=ty.BOOL)
        if e.op == ">":
            return self.call(less, b, a, t=ty.BOOL)
        strict = self.call(less, *((a, b) if e.op == "<=" else (b, a)), t=ty.BOOL)
        return self.junction("\\/", [strict, self.infix("=", a, b, ty.BOOL)])

    def set_op(self, e: L.SetOp) -> Out:
        a, b = self.emit(e.lhs), self.emit(e.rhs)
        site = {"union": "\\cup", "inter": "\\cap"}.get(e.op, "\\ (set difference)")
        self.same_kind_t(site, ty.elem(a.type), ty.elem(b.type), _excerpt(a), _excerpt(b))
        if e.op == "union":
            sa, sb = self.as_set(a), self.as_set(b)
            return self.infix("\\cup", sa, sb, ty.set_of(ty.unify(ty.elem(sa.type), ty.elem(sb.type))))
        if a.type.kind == "seq":
            other = self.as_set(b)
            x = self.fresh("e")
            test = f"{x} \\in " if e.op == "inter" else f"{x} \\notin "
            lam = concat(text(f"LAMBDA {x} : {test}"), self.paren(other, 5))
            return Out(seq_items("SelectSeq(", [a.block, lam], ")"), ATOM, a.type)
        sa, sb = self.as_set(a), self.as_set(b)
        op = "\\cap" if e.op == "inter" else "\\"
        return self.infix(op, sa, sb, sa.type)

    def comprehension(self, e: L.Filter | L.Quant | L.Image | L.BigUnion | L.First) -> Out:
        coll_expr = e.seq if isinstance(e, L.First) else e.coll
        coll = self.emit(coll_expr)
        kind = self.kind(coll, "set", "seq", "map")
        et = ty.elem(coll.type)
        if isinstance(e, L.First) and kind != "seq":
            raise self.fail("'first such' needs a sequence (a set has no first element)")
        if isinstance(e, L.Image) and kind == "seq":
            return self.seq_image(e, coll)
        x = self.push(e.var, et)
        try:
            body = self.emit(e.body if isinstance(e, L.Image | L.BigUnion) else e.pred)
        finally:
            self.pop()
        source = self.as_set(coll) if kind != "seq" or not isinstance(e, L.Filter | L.First) else coll
        src = self.paren(source) if not isinstance(e, L.Filter | L.First) or kind != "seq" else coll.block
        if isinstance(e, L.Quant):
            q = "\\A" if e.kind == "all" else "\\E"
            head = concat(text(f"{q} {x} \\in "), self.paren(self.as_set(coll), LOWEST), text(" :"))
            return Out(self._bind_block(head, body), LOWEST, ty.BOOL)
        if isinstance(e, L.Filter) and kind != "seq":
            head = concat(text(f"{{{x} \\in "), src, text(" :"))
            return Out(self._bind_block(head, body, close="}"), ATOM, ty.set_of(et))
        if isinstance(e, L.Filter | L.First):
            lam = self._bind_block(text(f"LAMBDA {x} :"), body)
            sel = Out(seq_items("SelectSeq(", [coll.block, lam], ")"), ATOM, coll.type)
            if isinstance(e, L.Filter):
                return sel
            d = self.emit(e.default)
            self.same_kind_t(
                "FirstOr's default", et, d.type, "the elements of " + _excerpt(coll), _excerpt(d)
            )
            return self.call("FirstOr", sel, d, t=ty.unify(et, d.type))
        # Image over a set, BigUnion
        head = concat(text("{"), self.paren(body, LOWEST), text(f" : {x} \\in "), src, text("}"))
        if isinstance(e, L.Image):
            return Out(head, ATOM, ty.set_of(body.type))
        return Out(concat(text("UNION "), head), 8, ty.set_of(ty.elem(body.type)))

    def _bind_block(self, head: Block, body: Out, close: str = "") -> Block:
        if fits(head, body.block, extra=len(close) + 1):
            return text(f"{flat_text(head)} {flat_text(body.block)}{close}")
        return vstack(head, indent(concat(body.block, text(close)), 4))

    def seq_image(self, e: L.Image, coll: Out) -> Out:
        seq_name, seq_def = self.with_seq_name(coll, "q")
        if seq_def is not None:
            self.scope.append(("", seq_name, coll.type))
        i = self.fresh("i")
        self.scope.append(("", i, ty.INT))
        x = self.push(e.var, ty.elem(coll.type))
        try:
            body = self.emit(e.body)
        finally:
            self.pop(3 if seq_def is not None else 2)
        inner = concat(text(f"LET {x} == {seq_name}[{i}] IN "), body.block)
        fn = concat(text(f"[{i} \\in DOMAIN {seq_name} |-> "), inner, text("]"))
        t = ty.seq_of(body.type)
        if seq_def is None:
            return Out(fn, ATOM, t)
        return Out(vstack(concat(text(f"LET {seq_name} == "), seq_def), concat(text("IN  "), fn)), LOWEST, t)

    def fold(self, e: L.Fold) -> Out:
        seq, init = self.emit(e.seq), self.emit(e.init)
        self.kind(seq, "seq")
        op = self.fresh("fold")
        self.scope.append(("", op, ty.ANY))
        rest = self.fresh("rest")
        self.scope.append(("", rest, seq.type))
        acc = self.push(e.acc, init.type)
        x = self.push(e.var, ty.elem(seq.type))
        try:
            body = self.emit(e.body)
        finally:
            self.pop(3)
        step = concat(text(f"LET {x} == Head({rest}) IN "), body.block)
        recur = concat(text(f"{op}("), step, text(f", Tail({rest}))"))
        definition = vstack(
            text(f"{op}({acc}, {rest}) =="),
            indent(vstack(text(f"IF {rest} = <<>> THEN {acc}"), concat(text("ELSE "), recur)), 4),
        )
        self.pop()  # op
        call = seq_items(f"{op}(", [init.block, seq.block], ")")
        self.same_kind("a fold's accumulator", init, body)
        t = ty.unify(init.type, body.type)
        return Out(
            vstack(
                concat(text("LET "), vstack(text(f"RECURSIVE {op}(_, _)"), definition)),
                concat(text("IN  "), call),
            ),
            LOWEST,
            t,
        )


Handler = Callable[[Emitter, Any], Out]
_HANDLERS: NodeTable[Handler] = NodeTable("the TLA+ emitter (model/tla/emit.py)")

# One handler per node kind: each translates its node into TLA+ text with its type, checking on the way that TLC
# would only ever compare values of one kind.


@_HANDLERS.on(L.Const)
def _t_const(self: Emitter, e: L.Const) -> Out:
    block = value_block(e.value)
    if isinstance(e.value, (frozenset, set)) and len(e.value) > 1:
        # a constant set is a constant-level definition, which TLC evaluates (and normalises) once, not at
        # every evaluation of the expression (a step invariant's table of transitions, for example)
        return Out(text(self.procedures.constant(block)), ATOM, ty.of_value(e.value))
    return Out(block, ATOM, ty.of_value(e.value))


@_HANDLERS.on(L.Var)
def _t_var(self: Emitter, e: L.Var) -> Out:
    name, t = self.lookup(e.name)
    return Out(text(name), ATOM, t)


@_HANDLERS.on(L.Field)
def _t_field(self: Emitter, e: L.Field) -> Out:
    if (
        isinstance(e.obj, L.Var)
        and e.obj.name == "s"
        and e.name in STATE_VARIABLES
        and self.lookup("s")[0] == "s"
    ):
        # ``s.zk`` of the module's ``s`` is the variable ``zk``: TLC builds the record ``s`` at every reference
        # (a state-level definition is not cached), and looks a module-level name up past every binding in scope
        ft = ty.field_type(self.lookup("s")[1], e.name)
        if ft is not None:
            return Out(text(e.name), ATOM, ft)
    obj = self.emit(e.obj)
    ft = ty.field_type(obj.type, e.name)
    if ft is None:
        raise self.fail(f"{obj.type} has no field {e.name!r}")
    return Out(concat(self.paren(obj), text(f".{e.name}")), ATOM, ft)


@_HANDLERS.on(L.Rec)
def _t_rec(self: Emitter, e: L.Rec) -> Out:
    return self.record(e)


@_HANDLERS.on(L.With)
def _t_with(self: Emitter, e: L.With) -> Out:
    obj = self.emit(e.obj)
    ups = []
    for k, v in e.updates:
        value = self.emit(v)
        ft = ty.field_type(obj.type, k)
        if ft is not None:
            self.same_kind_t("an EXCEPT update", ft, value.type, f"field {k}", _excerpt(value))
        ups.append(concat(text(f"!.{k} = "), value.block))
    target = self.paren(obj, 0)
    if is_flat(target):
        return Out(seq_items(f"[{flat_text(target)} EXCEPT ", ups, "]"), ATOM, obj.type)
    return Out(concat(text("["), target, seq_items(" EXCEPT ", ups, "]")), ATOM, obj.type)


@_HANDLERS.on(L.Let)
def _t_let(self: Emitter, e: L.Let) -> Out:
    return self.let(e)


@_HANDLERS.on(L.If)
def _t_if(self: Emitter, e: L.If) -> Out:
    c, a, b = self.emit(e.cond), self.emit(e.then), self.emit(e.els)
    self.same_kind("the branches of IF", a, b)
    t = ty.unify(a.type, b.type)
    if fits(c.block, a.block, b.block, extra=16):
        return Out(
            text(f"IF {flat_text(c.block)} THEN {flat_text(a.block)} ELSE {flat_text(b.block)}"),
            LOWEST,
            t,
        )
    if (
        isinstance(e.els, L.If)
        and len(b.block) > 1
        and b.block[0].text.startswith("IF ")
        and b.block[1].text.startswith("THEN ")
        and "/\\" not in b.block[0].text
        and "\\/" not in b.block[0].text
    ):
        # an IF in the ELSE branch continues the chain at the same indentation (ELSE IF ... THEN ...) instead of
        # drifting right; only its first line moves, and it holds no bulleted list whose column could matter
        tail = vstack(text("ELSE " + b.block[0].text, b.block[0].origin), b.block[1:])
    else:
        tail = concat(text("ELSE "), b.block)
    return Out(
        vstack(concat(text("IF "), c.block), concat(text("THEN "), a.block), tail),
        LOWEST,
        t,
    )


@_HANDLERS.on(L.EnumName)
def _t_enum_name(self: Emitter, e: L.EnumName) -> Out:
    # an enum member is its name in the TLA+ module (``values.value_block``): the name of a value is the value
    arg = self.emit(e.arg)
    return Out(arg.block, arg.prec, ty.STR)


@_HANDLERS.on(L.Not)
def _t_not(self: Emitter, e: L.Not) -> Out:
    arg = self.emit(e.arg)
    return Out(concat(text("~"), self.paren(arg)), 4, ty.BOOL)


@_HANDLERS.on(L.And, L.Or)
def _t_and_or(self: Emitter, e: L.And | L.Or) -> Out:
    items = [self.emit(a) for a in e.args]
    if not items:
        return Out(text("TRUE" if isinstance(e, L.And) else "FALSE"), ATOM, ty.BOOL)
    if len(items) == 1:
        return items[0]
    return self.junction("/\\" if isinstance(e, L.And) else "\\/", items)


@_HANDLERS.on(L.Implies)
def _t_implies(self: Emitter, e: L.Implies) -> Out:
    return self.infix("=>", self.emit(e.lhs), self.emit(e.rhs), ty.BOOL)


@_HANDLERS.on(L.Cmp)
def _t_cmp(self: Emitter, e: L.Cmp) -> Out:
    return self.compare(e)


@_HANDLERS.on(L.Arith)
def _t_arith(self: Emitter, e: L.Arith) -> Out:
    a, b = self.emit(e.lhs), self.emit(e.rhs)
    if e.op in ("+", "-"):
        return self.infix(e.op, a, b, ty.INT)
    return self.call("Max" if e.op == "max" else "Min", a, b, t=ty.INT)


def _constant(e: L.Expr) -> bool:
    """``e`` is a literal: a constant, or a sequence or set literal of literals."""
    if isinstance(e, L.Const):
        return True
    return isinstance(e, (L.SetLit, L.SeqLit)) and all(_constant(x) for x in e.elems)


@_HANDLERS.on(L.SetLit, L.SeqLit)
def _t_set_lit_seq_lit(self: Emitter, e: L.SetLit | L.SeqLit) -> Out:
    items = [self.emit(x) for x in e.elems]
    t = ty.ANY
    site = "a set literal" if isinstance(e, L.SetLit) else "a sequence literal"
    for i in items:
        if items[0] is not i:
            self.same_kind(site, items[0], i)
        t = ty.unify(t, i.type)
    if isinstance(e, L.SetLit):
        block = seq_items("{", [i.block for i in items], "}")
        if len(items) > 1 and all(_constant(x) for x in e.elems):
            # a set of constants is a constant-level definition, which TLC evaluates (and normalises) once,
            # not at every evaluation of the expression (a step invariant's table of transitions, for example)
            return Out(text(self.procedures.constant(block)), ATOM, ty.set_of(t))
        return Out(block, ATOM, ty.set_of(t))
    return Out(seq_items("<<", [i.block for i in items], ">>"), ATOM, ty.seq_of(t))


@_HANDLERS.on(L.Member)
def _t_member(self: Emitter, e: L.Member) -> Out:
    x, coll = self.emit(e.elem), self.emit(e.coll)
    members = self.as_set(coll)
    self.same_kind_t("\\in", x.type, ty.elem(members.type), _excerpt(x), "the elements of " + _excerpt(coll))
    return self.infix("\\in", x, members, ty.BOOL)


@_HANDLERS.on(L.SetOp)
def _t_set_op(self: Emitter, e: L.SetOp) -> Out:
    return self.set_op(e)


@_HANDLERS.on(L.Subset)
def _t_subset(self: Emitter, e: L.Subset) -> Out:
    a, b = self.as_set(self.emit(e.lhs)), self.as_set(self.emit(e.rhs))
    self.same_kind("\\subseteq", a, b)
    return self.infix("\\subseteq", a, b, ty.BOOL)


@_HANDLERS.on(L.Size)
def _t_size(self: Emitter, e: L.Size) -> Out:
    coll = self.emit(e.coll)
    if self.kind(coll, "set", "seq", "map") == "seq":
        return self.call("Len", coll, t=ty.INT)
    return self.call("Cardinality", self.as_set(coll), t=ty.INT)


@_HANDLERS.on(L.ToSet)
def _t_to_set(self: Emitter, e: L.ToSet) -> Out:
    return self.as_set(self.emit(e.seq))


@_HANDLERS.on(L.Filter, L.Quant, L.Image, L.BigUnion, L.First)
def _t_filter_quant_image_big_union_first(
    self: Emitter, e: L.Filter | L.Quant | L.Image | L.BigUnion | L.First
) -> Out:
    return self.comprehension(e)


@_HANDLERS.on(L.Sorted)
def _t_sorted(self: Emitter, e: L.Sorted) -> Out:
    coll = self.as_set(self.emit(e.coll))
    try:
        name = self.orders.sort(ty.elem(coll.type))
    except OrderError as exc:
        raise self.fail(str(exc)) from None
    return self.call(name, coll, t=ty.seq_of(ty.elem(coll.type)))


@_HANDLERS.on(L.Fold)
def _t_fold(self: Emitter, e: L.Fold) -> Out:
    return self.fold(e)


@_HANDLERS.on(L.Head)
def _t_head(self: Emitter, e: L.Head) -> Out:
    seq, d = self.emit(e.seq), self.emit(e.default)
    self.kind(seq, "seq")
    self.same_kind_t(
        "FirstOr's default",
        ty.elem(seq.type),
        d.type,
        "the elements of " + _excerpt(seq),
        _excerpt(d),
    )
    return self.call("FirstOr", seq, d, t=ty.unify(ty.elem(seq.type), d.type))


@_HANDLERS.on(L.Append)
def _t_append(self: Emitter, e: L.Append) -> Out:
    seq, x = self.emit(e.seq), self.emit(e.elem)
    self.kind(seq, "seq")
    self.same_kind_t("Append", ty.elem(seq.type), x.type, "the elements of " + _excerpt(seq), _excerpt(x))
    return self.call("Append", seq, x, t=ty.seq_of(ty.unify(ty.elem(seq.type), x.type)))


@_HANDLERS.on(L.Concat)
def _t_concat(self: Emitter, e: L.Concat) -> Out:
    a, b = self.emit(e.lhs), self.emit(e.rhs)
    self.kind(a, "seq")
    self.kind(b, "seq")
    self.same_kind("\\o", a, b)
    return self.infix("\\o", a, b, ty.seq_of(ty.unify(ty.elem(a.type), ty.elem(b.type))))


@_HANDLERS.on(L.Distinct)
def _t_distinct(self: Emitter, e: L.Distinct) -> Out:
    seq = self.emit(e.seq)
    self.kind(seq, "seq")
    return self.call("Dedup", seq, t=seq.type)


@_HANDLERS.on(L.MapGet)
def _t_map_get(self: Emitter, e: L.MapGet) -> Out:
    m, k = self.emit(e.m), self.emit(e.key)
    self.kind(m, "map", "seq")
    key_t = m.type.args[0] if m.type.kind == "map" else ty.INT
    self.same_kind_t("a function application", key_t, k.type, "the domain of " + _excerpt(m), _excerpt(k))
    vt = m.type.args[1] if m.type.kind == "map" else ty.elem(m.type)
    return Out(concat(self.paren(m), text("["), k.block, text("]")), ATOM, vt)


@_HANDLERS.on(L.MapGetOr)
def _t_map_get_or(self: Emitter, e: L.MapGetOr) -> Out:
    m, k, d = self.emit(e.m), self.emit(e.key), self.emit(e.default)
    self.kind(m, "map")
    self.same_kind_t("GetOr's key", m.type.args[0], k.type, "the keys of " + _excerpt(m), _excerpt(k))
    self.same_kind_t("GetOr's default", m.type.args[1], d.type, "the range of " + _excerpt(m), _excerpt(d))
    return self.call("GetOr", m, k, d, t=ty.unify(m.type.args[1], d.type))


@_HANDLERS.on(L.MapHas)
def _t_map_has(self: Emitter, e: L.MapHas) -> Out:
    m, k = self.emit(e.m), self.emit(e.key)
    self.kind(m, "map")
    self.same_kind_t("\\in DOMAIN", m.type.args[0], k.type, "the keys of " + _excerpt(m), _excerpt(k))
    return self.infix("\\in", k, self.as_set(m), ty.BOOL)


@_HANDLERS.on(L.MapPut)
def _t_map_put(self: Emitter, e: L.MapPut) -> Out:
    m, k, v = self.emit(e.m), self.emit(e.key), self.emit(e.value)
    self.kind(m, "map")
    self.same_kind_t("MapPut's key", m.type.args[0], k.type, "the keys of " + _excerpt(m), _excerpt(k))
    self.same_kind_t("MapPut's value", m.type.args[1], v.type, "the range of " + _excerpt(m), _excerpt(v))
    t = ty.map_of(ty.unify(m.type.args[0], k.type), ty.unify(m.type.args[1], v.type))
    return self.call("MapPut", m, k, v, t=t)


@_HANDLERS.on(L.MapDel)
def _t_map_del(self: Emitter, e: L.MapDel) -> Out:
    m, k = self.emit(e.m), self.emit(e.key)
    self.kind(m, "map")
    return self.call("MapDel", m, k, t=m.type)


@_HANDLERS.on(L.MapDelAll)
def _t_map_del_all(self: Emitter, e: L.MapDelAll) -> Out:
    m, ks = self.emit(e.m), self.emit(e.key_set)
    self.kind(m, "map")
    return self.call("MapDelAll", m, self.as_set(ks), t=m.type)


@_HANDLERS.on(L.MapKeys)
def _t_map_keys(self: Emitter, e: L.MapKeys) -> Out:
    m = self.emit(e.m)
    self.kind(m, "map")
    return self.as_set(m)


@_HANDLERS.on(L.MapMerge)
def _t_map_merge(self: Emitter, e: L.MapMerge) -> Out:
    a, b = self.emit(e.lhs), self.emit(e.rhs)
    self.kind(a, "map")
    self.same_kind("MapMerge", a, b)
    return self.call("MapMerge", a, b, t=ty.unify(a.type, b.type))


@_HANDLERS.on(L.MapBuild)
def _t_map_build(self: Emitter, e: L.MapBuild) -> Out:
    keys = self.as_set(self.emit(e.key_set))
    x = self.push(e.var, ty.elem(keys.type))
    try:
        value = self.emit(e.value)
    finally:
        self.pop()
    head = concat(text(f"[{x} \\in "), self.paren(keys, LOWEST), text(" |->"))
    return Out(self._bind_block(head, value, close="]"), ATOM, ty.map_of(ty.elem(keys.type), value.type))


@_HANDLERS.on(L.Rule)
def _t_rule(self: Emitter, e: L.Rule) -> Out:
    if e.name not in self.inline_rules:
        return self.procedures.rule_operator(e, self)
    self.rules.append(f"{e.name} ({e.section})")
    try:
        body = self.emit(e.body)
    finally:
        self.rules.pop()
    origin = f"{e.name} ({e.section})"
    comment = text(self.procedures.cite(origin, e.section, e.name, e.span), origin)
    return Out(tag(vstack(comment, body.block), origin), LOWEST, body.type)


@_HANDLERS.on(L.Call)
def _t_call(self: Emitter, e: L.Call) -> Out:
    args = [self.emit(a) for a in e.args]
    if id(e.fn) in self.procedures.rule_defs:
        name, t = self.procedures.define_rule(e.fn, args, self)
    else:
        name, t = self.procedures.define(e.fn, [a.type for a in args], self)
    if not args:
        return Out(text(name), ATOM, t)
    return Out(seq_items(f"{name}(", [a.block for a in args], ")"), ATOM, t)


def _first_use(e: L.Expr) -> list[str]:
    """The free names of ``e`` in the order a left-to-right reading first meets them."""
    free = L.free_vars(e)
    seen: list[str] = []
    visited: set[int] = set()
    stack = [e]
    while stack and len(seen) < len(free):
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, L.Var):
            if node.name in free and node.name not in seen:
                seen.append(node.name)
            continue
        kids = list(node.args) if isinstance(node, L.Call) else list(L.children(node))
        stack.extend(reversed(kids))
    return seen


def _excerpt(o: Out) -> str:
    t = flat_text(o.block) if is_flat(o.block) else o.block[0].text + " …"
    return t if len(t) < 60 else t[:57] + "..."
