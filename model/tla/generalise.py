"""One operator per spec rule: the copies of a rule the builders made, anti-unified into one parametrised body.

The spec is built by Python functions: a rule such as ``§5.2b doElectLeaderForPartitions`` is built again at
every place that uses it, with the caller's expressions inside (``w.state`` in one action, ``r.work.state`` in
another), and a procedure's body once per combination of its static arguments. Emitted as they are, the copies
are separate operators that differ in a few sub-expressions (the kafka-2.8 module had ten
``DoElectLeaderForPartitions…``). This pass groups the ``Rule`` nodes by rule (name and section), computes for
each group the *anti-unifier* of their bodies — the common structure, with a parameter (a "hole") at every
place where the copies differ — and replaces every copy by a ``Call`` of one ``Def`` whose body is that
structure, passing the copy's own sub-expressions for the holes.

Why the meaning is unchanged: a hole is only ever a sub-expression that reads nothing bound inside the rule
(no quantified or ``LET`` name of the rule's own body), so evaluating it in the caller's scope and passing it
as an argument gives the value the copy computed in place (TLA+ operator application substitutes its
arguments; everything here is side-effect free). Bound names are compared up to renaming (each copy was built
with fresh names). Where the copies have no useful common structure (the template would be mostly holes), a
group is split into clusters of copies that do, and a copy alike to no other keeps its own operator: those are
the specialisations, kept because their bodies really differ (a static argument chose different code), not
only their inputs.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from kcspec.model.tla.share import _parts as _compute_parts
from kcspec.model.tla.share import _rebuild
from kcspec.spec import lang as L
from kcspec.spec.spans import Span

_BINDER_FIELDS = L.BINDER_FIELDS
"""The fields holding the names a binding construct binds."""

_SCOPE_FIELD: dict[type, str] = {
    L.Let: "body",
    L.Filter: "pred",
    L.Quant: "pred",
    L.First: "pred",
    L.Image: "body",
    L.BigUnion: "body",
    L.MapBuild: "value",
    L.Fold: "body",
}
"""The field of a binding construct in which its names are bound."""

MIN_SHARED = 0.5
"""A template must keep at least this share of the smallest copy's nodes (the rest are holes) to be used."""

_hole_numbers = itertools.count(2_000_000_000)

_PartsOf = tuple[tuple[object, ...], list[L.Expr], list[str]]
_PARTS: dict[int, tuple[L.Expr, _PartsOf, tuple[object, ...] | None]] = {}
"""``_parts`` and ``_shape`` of the nodes seen, by id: the anti-unification asks for them of the same nodes hundreds
of thousands of times. Each entry holds its node, so that no id is reused while the entry lives; the table is
emptied when a new ``Generaliser`` starts and when a module is finished (``Generaliser.release``)."""


def _parts(e: L.Expr) -> _PartsOf:
    """``share._parts(e)``, computed once per node (callers do not change the lists)."""
    hit = _PARTS.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    parts = _compute_parts(e)
    _PARTS[id(e)] = (e, parts, None)
    return parts


@dataclass
class _Template:
    body: L.Expr
    holes: list[str] = field(default_factory=list)
    values: dict[str, list[L.Expr]] = field(default_factory=dict)
    """Each hole's sub-expression in each copy of the cluster (in the order of ``members``)."""
    members: list[int] = field(default_factory=list)
    """The ids of the ``Rule`` nodes of the cluster."""


class _Fail(Exception):
    """The copies differ at a place that reads a name bound inside the rule: no hole can go there."""


class _AntiUnifier:
    """The anti-unifier of one cluster's bodies (``bodies[k]`` is copy ``k``)."""

    def __init__(self, owner: Generaliser, bodies: list[L.Expr]) -> None:
        self.owner = owner
        self.bodies = bodies
        self.holes: list[str] = []
        self.values: dict[str, list[L.Expr]] = {}
        self.by_values: dict[tuple[object, ...], str] = {}
        self.memo: dict[tuple[object, ...], L.Expr] = {}
        self.const_hint = ""
        """The name for a parameter that is a constant, when the context does not give one (a procedure's
        one differing static argument)."""
        self._field = ""

    def run(self, envs: list[dict[str, str]] | None = None) -> L.Expr:
        """The template; ``envs[k]`` maps names bound around copy ``k`` (a procedure's parameters) to copy 0's."""
        return self.au(self.bodies, envs if envs is not None else [{} for _ in self.bodies])

    def au(self, xs: list[L.Expr], envs: list[dict[str, str]]) -> L.Expr:
        key = (
            tuple(id(x) for x in xs),
            tuple(
                tuple(sorted((v, env.get(v)) for v in self.owner.free(x) if v in env))
                for x, env in zip(xs, envs, strict=True)
            ),
        )
        hit = self.memo.get(key)
        if hit is None:
            hit = self._au(xs, envs)
            self.memo[key] = hit
        return hit

    def _au(self, xs: list[L.Expr], envs: list[dict[str, str]]) -> L.Expr:
        x0 = xs[0]
        var_xs = [x for x in xs if isinstance(x, L.Var)]
        if isinstance(x0, L.Var) and len(var_xs) == len(xs):
            names = [env.get(x.name) for x, env in zip(var_xs, envs, strict=True)]
            if all(nm is not None for nm in names):
                if len(set(names)) == 1:
                    return x0  # the same bound name (instance 0's spelling)
                raise _Fail
            if all(nm is None for nm in names) and all(
                x.name == x0.name and x0.name in self.owner.keep_free for x in var_xs
            ):
                return x0
            return self.hole(xs, envs)
        if all(x is x0 for x in xs) and not (self.owner.free(x0) - self.owner.keep_free - set(envs[0])):
            consistent = all(
                env.get(v) == envs[0].get(v) and (v in env) == (v in envs[0])
                for env in envs[1:]
                for v in self.owner.free(x0)
            )
            if consistent:
                return x0
        call_xs = [x for x in xs if isinstance(x, L.Call)]
        if (
            isinstance(x0, L.Call)
            and len(call_xs) == len(xs)
            and all(x.fn.name == x0.fn.name and len(x.args) == len(x0.args) for x in call_xs)
        ):
            fns = list({id(x.fn): x.fn for x in call_xs}.values())
            if len(fns) > 1:
                try:
                    return self.dispatch(call_xs, envs, fns)
                except _Fail:
                    pass
        shape0 = _shape(x0)
        if all(type(x) is type(x0) and _shape(x) == shape0 for x in xs[1:]):
            try:
                return self.descend(xs, envs)
            except _Fail:
                pass
        return self.hole(xs, envs)

    def descend(self, xs: list[L.Expr], envs: list[dict[str, str]]) -> L.Expr:
        x0 = xs[0]
        self._field = ""
        parts = [_parts(x) for x in xs]
        kids0, where = parts[0][1], parts[0][2]
        if any(len(p[1]) != len(kids0) for p in parts):
            raise _Fail
        scope = _SCOPE_FIELD.get(type(x0))
        inner_envs = envs
        if scope is not None:
            fields = _BINDER_FIELDS[type(x0)]
            inner_envs = []
            for x, env in zip(xs, envs, strict=True):
                extended = dict(env)
                for f in fields:
                    extended[getattr(x, f)] = getattr(x0, f)
                inner_envs.append(extended)
        labels = [k for k, _ in x0.fields] if isinstance(x0, L.Rec) else []
        labels = [k for k, _ in x0.updates] if isinstance(x0, L.With) else labels
        new_kids: list[L.Expr] = []
        for i, w in enumerate(where):
            column = [p[1][i] for p in parts]
            if labels and w in ("fields", "updates"):
                self._field = labels[i - where.index(w)]  # a record field's value: named after the field
            new_kids.append(self.au(column, inner_envs if w == scope else envs))
        if all(a is b for a, b in zip(kids0, new_kids, strict=True)):
            return x0
        return _rebuild(x0, new_kids)

    def dispatch(self, xs: list[L.Call], envs: list[dict[str, str]], fns: list[L.Def]) -> L.Expr:
        """Calls of different specialisations of one procedure (``ElectOffline``, ``ElectReassign``): one
        ``IF`` on a parameter naming the specialisation, each branch the call of one, with the arguments
        anti-unified. Each copy passes the constant naming its own (the branch it took, by construction)."""
        args = [self.au([x.args[i] for x in xs], envs) for i in range(len(xs[0].args))]
        labels = _labels(fns)
        by_fn = {id(fn): label for fn, label in zip(fns, labels, strict=True)}
        chooser = self.hole_for([L.Const(by_fn[id(x.fn)]) for x in xs], f"{xs[0].fn.name}_case")
        out: L.Expr = L.Call(fns[-1], tuple(args))
        for fn, label in zip(fns[-2::-1], labels[-2::-1], strict=True):
            out = L.If(L.Cmp("==", chooser, L.Const(label)), L.Call(fn, tuple(args)), out)
        return out

    def hole(self, xs: list[L.Expr], envs: list[dict[str, str]]) -> L.Expr:
        for x, env in zip(xs, envs, strict=True):
            if self.owner.free(x) & set(env):
                raise _Fail  # reads a name bound inside the rule: it cannot be evaluated by the caller
        hint = _hint(xs[0])
        if isinstance(xs[0], L.Const):
            hint = self._field or self.const_hint or hint
        return self.hole_for(xs, hint)

    def hole_for(self, xs: list[L.Expr], hint: str) -> L.Var:
        """The parameter whose value in copy ``k`` is ``xs[k]`` (one per distinct column of values)."""
        key = tuple(
            ("var", x.name)
            if isinstance(x, L.Var)
            else ("const", x.value)
            if isinstance(x, L.Const)
            else id(x)
            for x in xs
        )
        name = self.by_values.get(key)
        if name is None:
            name = f"{hint}_{next(_hole_numbers)}"
            self.by_values[key] = name
            self.holes.append(name)
            self.values[name] = list(xs)
        return L.Var(name)


class Generaliser:
    """Rewrites expressions so that each group of alike rule copies is one ``Def`` called with the differences.

    ``keep_free``: module-level names (the state ``s``) that a rule may read without a parameter; ``inline``:
    rules written in place (an action's own top rule), left as they are. ``rule_defs`` holds the ids of the
    ``Def``s this pass made (the TLA+ backend emits them as rule operators)."""

    def __init__(self, keep_free: frozenset[str], inline: frozenset[str]) -> None:
        self.keep_free = keep_free
        self.inline = inline
        self.groups: dict[tuple[str, str], list[L.Rule]] = {}
        self.rule_defs: dict[int, L.Def] = {}
        self.def_groups: dict[tuple[str, str], list[L.Def]] = {}
        """A procedure's specialisations (one ``Def`` per combination of static arguments), by procedure."""
        self._seen_defs: set[int] = set()
        self._merged: dict[int, tuple[L.Def, tuple[L.Expr, ...]]] = {}
        self._seen: set[int] = set()
        self._fv: dict[int, frozenset[str]] = {}
        self._size: dict[int, int] = {}
        self._done: dict[int, L.Expr] = {}
        self._defs: dict[int, L.Def] = {}
        self._clusters: dict[tuple[str, str], list[_Template]] = {}
        self._member_of: dict[int, tuple[_Template, int, L.Def]] = {}
        self._in_progress: set[tuple[str, str]] = set()
        self._keep: list[object] = []  # keeps rebuilt nodes alive, so that ids stay unique
        _PARTS.clear()

    def release(self) -> None:
        """Let go of the nodes the parts table keeps alive, once the module is written (the tables keyed by the ids
        of nodes in ``_keep`` stay: ``verify`` can still be asked)."""
        _PARTS.clear()

    # ---------------------------------------------------------------- collection
    def collect(self, roots: list[L.Expr]) -> None:
        """Find every rule copy reachable from ``roots`` (procedure bodies included)."""
        stack = list(roots)
        while stack:
            e = stack.pop()
            if id(e) in self._seen:
                continue
            self._seen.add(id(e))
            self._keep.append(e)
            if isinstance(e, L.Rule) and e.name not in self.inline:
                self.groups.setdefault((e.name, e.section), []).append(e)
            if isinstance(e, L.Call) and id(e.fn) not in self._seen_defs:
                self._seen_defs.add(id(e.fn))
                self.def_groups.setdefault((e.fn.name, e.fn.section), []).append(e.fn)
            stack.extend(L.children(e))  # a Call's procedure body first, then its arguments

    # ---------------------------------------------------------------- rewriting
    def rewrite(self, e: L.Expr) -> L.Expr:
        """``e`` with every generalised rule copy replaced by a call of its group's operator."""
        hit = self._done.get(id(e))
        if hit is not None:
            return hit
        if isinstance(e, L.Rule) and (e.name, e.section) in self.groups and e.name not in self.inline:
            out = self._rule_call(e)
        elif isinstance(e, L.Call):
            fn, extra = self._merged_def(e.fn)
            args = tuple(self.rewrite(a) for a in e.args) + extra
            same = fn is e.fn and all(a is b for a, b in zip(args, e.args, strict=True))
            out = e if same else L.Call(fn, args)
        else:
            kids = _parts(e)[1]
            new_kids = [self.rewrite(k) for k in kids]
            same = all(a is b for a, b in zip(kids, new_kids, strict=True))
            out = e if same else _rebuild(e, new_kids)
        self._keep += [e, out]
        self._done[id(e)] = out
        return out

    def _rewrite_def(self, d: L.Def) -> L.Def:
        hit = self._defs.get(id(d))
        if hit is None:
            body = self.rewrite(d.body)
            hit = d if body is d.body else L.Def(d.name, d.section, d.params, body, d.static, d.span)
            self._defs[id(d)] = hit
            self._keep += [d, hit]
        return hit

    def _merged_def(self, d: L.Def) -> tuple[L.Def, tuple[L.Expr, ...]]:
        """The procedure that stands for specialisation ``d`` and the extra arguments that select ``d``'s
        behaviour: specialisations whose bodies differ only in constants (or not at all: a static argument
        that the body does not use) are one procedure with those constants as parameters."""
        hit = self._merged.get(id(d))
        if hit is not None:
            return hit
        group = self.def_groups.get((d.name, d.section), [d])
        if d not in group:
            group = [d]
        bodies = [self._rewrite_def(x).body for x in group]
        arity = len(d.params)
        members = [i for i, x in enumerate(group) if len(x.params) == arity]
        merged: _Template | None = None
        first_static = set(group[members[0]].static) if members else set()
        if len(members) > 1:
            envs = [dict(zip(group[i].params, group[members[0]].params, strict=True)) for i in members]
            au = _AntiUnifier(self, [bodies[i] for i in members])
            differing = {k for i in members for k, v in group[i].static if (k, v) not in first_static}
            au.const_hint = next(iter(differing)) if len(differing) == 1 else ""
            try:
                body = au.run(envs)
                merged = _Template(body, au.holes, au.values)
            except _Fail:
                merged = None
        if merged is None:
            for x in group:
                self._merged[id(x)] = (self._rewrite_def(x), ())
            return self._merged[id(d)]
        first = group[members[0]]
        common = tuple(kv for kv in first.static if all(kv in group[i].static for i in members))
        new = L.Def(
            first.name, first.section, first.params + tuple(merged.holes), merged.body, common, first.span
        )
        self._keep.append(new)
        for k, i in enumerate(members):
            self._merged[id(group[i])] = (new, tuple(merged.values[h][k] for h in merged.holes))
        for i, x in enumerate(group):
            if i not in members:
                self._merged[id(x)] = (self._rewrite_def(x), ())
        return self._merged[id(d)]

    def _rule_call(self, r: L.Rule) -> L.Expr:
        key = (r.name, r.section)
        if key not in self._clusters:
            if key in self._in_progress:  # a rule inside a copy of itself: left as it is
                return L.Rule(r.name, r.section, self.rewrite(r.body), r.span)
            self._in_progress.add(key)
            try:
                self._clusters[key] = self._cluster(key)
            finally:
                self._in_progress.discard(key)
        member = self._member_of.get(id(r))
        if member is None:
            return L.Rule(r.name, r.section, self.rewrite(r.body), r.span)
        template, k, d = member
        return L.Call(d, tuple(template.values[h][k] for h in template.holes))

    def _cluster(self, key: tuple[str, str]) -> list[_Template]:
        """The group's copies in clusters whose template keeps most of each copy; a copy alone stays a ``Rule``."""
        copies = self.groups[key]
        bodies = [self.rewrite(r.body) for r in copies]
        clusters: list[list[int]] = []  # a copy joins the first cluster whose first copy it is alike to
        for i, body in enumerate(bodies):
            for members in clusters:
                if self._template([bodies[members[0]], body]) is not None:
                    members.append(i)
                    break
            else:
                clusters.append([i])
        out: list[_Template] = []
        for members in clusters:
            if len(members) < 2:
                continue
            template = self._template([bodies[j] for j in members])
            if template is None:  # alike pairwise, not all together: left as they are
                continue
            template.members = [id(copies[j]) for j in members]
            # alike copies written in several places: the operator cites the first of their spans
            d = L.Def(
                key[0],
                key[1],
                tuple(template.holes),
                template.body,
                span=_first_span([copies[j] for j in members]),
            )
            self.rule_defs[id(d)] = d
            self._keep.append(d)
            for k, j in enumerate(members):
                self._member_of[id(copies[j])] = (template, k, d)
            out.append(template)
        return out

    def _template(self, bodies: list[L.Expr]) -> _Template | None:
        au = _AntiUnifier(self, bodies)
        try:
            body = au.run()
        except _Fail:
            return None
        if isinstance(body, L.Var) and body.name in au.values:
            return None
        kept = self.size(body, frozenset(au.holes))
        if kept < MIN_SHARED * min(self.size(b, frozenset()) for b in bodies):
            return None
        return _Template(body, au.holes, au.values)

    # ---------------------------------------------------------------- the proof obligation
    def verify(self) -> list[str]:
        """Each copy, rebuilt from its operator's body with the copy's own arguments substituted for the
        parameters, is its (rewritten) body up to the renaming of bound names: the rewriting changed only how
        the text is factored, not what any copy computes. Returns the copies for which that fails."""
        problems: list[str] = []
        for (name, section), templates in self._clusters.items():
            copies = {id(r): r for r in self.groups[(name, section)]}
            for t in templates:
                for k, member in enumerate(t.members):
                    mapping = {h: t.values[h][k] for h in t.holes}
                    rebuilt = _substitute(t.body, mapping, {})
                    if not _alpha_equal(rebuilt, self.rewrite(copies[member].body), {}, {}):
                        problems.append(
                            f"rule {name} ({section}): copy {k + 1} is not its template's instance"
                        )
        for group in self.def_groups.values():
            for d in group:
                new, extra = self._merged.get(id(d), (d, ()))
                if new is d or (not extra and new.params == d.params and new.body is d.body):
                    continue
                mapping = dict(zip(new.params[len(d.params) :], extra, strict=True))
                mapping.update({p: L.Var(q) for p, q in zip(new.params, d.params, strict=False)})
                rebuilt = _substitute(new.body, mapping, {})
                if not _alpha_equal(rebuilt, self._rewrite_def(d).body, {}, {}):
                    problems.append(
                        f"procedure {d.name} ({d.section}) {d.static}: not its merged body's instance"
                    )
        return problems

    # ---------------------------------------------------------------- measures
    def free(self, e: L.Expr) -> frozenset[str]:
        hit = self._fv.get(id(e))
        if hit is None:
            # One memo for every node seen: a sub-expression's entry is valid while the node that contains it is
            # kept (``_keep``), so no id is reused while the memo lives.
            hit = L.free_vars(e, self._fv)
            self._keep.append(e)
        return hit

    def size(self, e: L.Expr, holes: frozenset[str], memo: dict[int, int] | None = None) -> int:
        """The number of nodes of ``e`` written out as a tree, holes not counted (a call's arguments count, the
        procedure's body not)."""
        if isinstance(e, L.Var):
            return 0 if e.name in holes else 1
        table = self._size if not holes else memo if memo is not None else {}
        hit = table.get(id(e))
        if hit is None:
            hit = 1 + sum(self.size(k, holes, table) for k in _parts(e)[1])
            table[id(e)] = hit
            self._keep.append(e)
        return hit


def _substitute(e: L.Expr, mapping: dict[str, L.Expr], memo: dict[int, L.Expr]) -> L.Expr:
    """``e`` with the free names of ``mapping`` replaced (they are never bound inside ``e``: no capture)."""
    hit = memo.get(id(e))
    if hit is not None:
        return hit
    if isinstance(e, L.Var):
        out = mapping.get(e.name, e)
    else:
        kids = _parts(e)[1]
        new = [_substitute(k, mapping, memo) for k in kids]
        out = e if all(a is b for a, b in zip(kids, new, strict=True)) else _rebuild(e, new)
    if isinstance(out, L.If) and isinstance(out.cond, L.Cmp) and out.cond.op == "==":
        lhs, rhs = out.cond.lhs, out.cond.rhs
        if isinstance(lhs, L.Const) and isinstance(rhs, L.Const):  # a dispatch on its now known case
            out = out.then if lhs.value == rhs.value else out.els
    memo[id(e)] = out
    return out


def _alpha_equal(a: L.Expr, b: L.Expr, env: dict[str, str], memo: dict[tuple[object, ...], bool]) -> bool:
    """Whether ``a`` and ``b`` are the same expression up to the names they bind (``env``: ``b``'s bound names
    to ``a``'s)."""
    if a is b and not env:
        return True
    key = (id(a), id(b), tuple(sorted(env.items())))
    hit = memo.get(key)
    if hit is not None:
        return hit
    if isinstance(a, L.Var) and isinstance(b, L.Var):
        out = env[b.name] == a.name if b.name in env else a.name == b.name and a.name not in env.values()
    elif type(a) is not type(b) or _shape(a) != _shape(b):
        out = False
    else:
        pa, pb = _parts(a), _parts(b)
        if len(pa[1]) != len(pb[1]):
            out = False
        else:
            scope = _SCOPE_FIELD.get(type(a))
            inner = env
            if scope is not None:
                inner = dict(env)
                for f in _BINDER_FIELDS[type(a)]:
                    inner[getattr(b, f)] = getattr(a, f)
            out = all(
                _alpha_equal(x, y, inner if w == scope else env, memo)
                for x, y, w in zip(pa[1], pb[1], pa[2], strict=True)
            )
    memo[key] = out
    return out


def _labels(fns: list[L.Def]) -> list[str]:
    """Readable names for the specialisations of one procedure: the words of the static arguments in which
    they differ (``"offline"``, ``"reassign"``), or their positions when those do not tell them apart."""
    differing = [i for i in range(min(len(fn.static) for fn in fns)) if len({fn.static[i] for fn in fns}) > 1]
    labels = []
    for fn in fns:
        words: list[str] = []
        for i in differing:
            value = fn.static[i][1]
            quoted = re.findall(r"'([A-Za-z0-9_]+)'", value)
            words += quoted or [re.sub(r"\W+", "_", value.rsplit(".", 1)[-1]).strip("_")]
        labels.append("_".join(words))
    prefix = _common_start(labels)
    suffix = _common_start([x[::-1] for x in labels])[::-1]
    trimmed = [x[len(prefix) : len(x) - len(suffix)] for x in labels]
    if all(trimmed) and len(set(trimmed)) == len(trimmed):
        labels = trimmed
    if len(set(labels)) < len(labels) or not all(labels):
        labels = [f"case{i + 1}" for i in range(len(fns))]
    return labels


def _common_start(words: list[str]) -> str:
    """The longest string every one of ``words`` starts with."""
    out = min(words, key=len) if words else ""
    while out and not all(w.startswith(out) for w in words):
        out = out[:-1]
    return out


def _shape(e: L.Expr) -> tuple[object, ...]:
    """``e``'s own content apart from its sub-expressions and the names it binds."""
    hit = _PARTS.get(id(e))
    if hit is not None and hit[0] is e and hit[2] is not None:
        return hit[2]
    parts = _parts(e)
    binders = _BINDER_FIELDS.get(type(e), ())
    shape = tuple(s for s in parts[0] if not (isinstance(s, tuple) and len(s) == 2 and s[0] in binders))
    _PARTS[id(e)] = (e, parts, shape)
    return shape


def _hint(e: L.Expr) -> str:
    """A readable base for a hole's parameter name."""
    if isinstance(e, L.Var):
        return re.sub(r"_\d+$", "", e.name.rsplit(".", 1)[-1]) or "x"
    if isinstance(e, L.Field):
        return e.name
    if isinstance(e, L.Call):
        return e.fn.name[:1].lower() + e.fn.name[1:]
    if isinstance(e, L.Rule):
        return e.name[:1].lower() + e.name[1:]
    if isinstance(e, L.Const):
        return "c"
    return "x"


def _first_span(rules: list[L.Rule]) -> Span | None:
    """The first (by file and line) of the places where ``rules`` are written."""
    return min((r.span for r in rules if r.span is not None), default=None)


__all__ = ["Generaliser"]
