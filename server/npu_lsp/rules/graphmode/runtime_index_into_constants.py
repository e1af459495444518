"""MS150: (STRICT) a run-time index into a tuple or list of constants."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from npu_lsp.astutil import node_key
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.constructed import construction_args, init_of
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, builtin_sequence_call
from npu_lsp.rules.graphmode.result_kinds import NUMBER_LIST_FUNCTIONS
from npu_lsp.rules.graphmode.tensor_names import TENSOR_MAKERS
from npu_lsp.rules.graphmode.values import instances


@rule(code="MS150", name="runtime-index-into-constants", severity="error", family="graphmode")
class RuntimeIndexIntoConstants(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags reading a tuple or list of Python constants (a
    module-level table such as `CLASS_NAMES`, a literal, or one stored on `self` in
    `__init__`) with an index known only at run time:
    - a Tensor index (`SCALES[x.argmax()]`), whatever the constants are;
    - a Tensor index into a tuple or list display of tensors built in the function
      (`feats = (x, x * 2)`, then `feats[i]` with a Tensor `i`): measured, only a tuple of
      functions can be indexed by a Tensor under STRICT (written set `langref`, probes
      `tupidx_*`);
    - a Tensor index into a list or tuple `__init__` stores on `self` of rows of constants
      (`[(0, 1), (1, 0)]`), of tensors (`[Tensor(1.0), Tensor(2.0)]`), or made by
      `list(itertools.permutations(...))` and its kin (PIT's `self.perms[best]` with `best =
      losses.argmin()`; written/heldout42c probes `fix42c_li_*`; `self.perms[int(best)]`
      compiles);
    - a run-time integer (`int(t)`, `t.item()`) into strings (`CLASS_NAMES[int(idx)]`),
      also a list or tuple of strings the program builds, on `self` in `__init__` or at
      module level (`self.itos = [chr(ord("a") + i) for i in range(n)]`, `[str(i) for
      ...]`, f-strings, `list("abc")`, `"a b".split()`, `list(chars)` of a string every
      construction gives `__init__`, and concatenations of such lists, `["sos"] +
      list(chars) + ["eos"]`): MindSpore reads it as the same
      constant list (`Kernel select failed: Select CPU operator[RealTupleGetItem] fail!
      Unsupported data type!`, written/heldout26a probes `fix28a_itos_*`), and a Tensor
      index fails on it as on a display (written/heldout38c probes `fix38c_pick_*`); a
      string only appended to a list measured by `len` compiles (`fix38c_brk_int_len`);
    - a run-time integer into bools: a module-level list or tuple of bools, one on `self`,
      or a local bound to a display or to one repeated (`flags = [False] * n`), also when
      the function stores into it (the same `RealTupleGetItem` failure: its kernel has no
      Bool version; written/heldout29b probes `fix30b_*boollist_read*`,
      `fix30b_booltuple_read_noloop`; a list of ints read the same way compiles).
    A string picked that way and only tested with `in` / `not in` (`if tok in ("a",
    "b"):`) compiles, and is not flagged. A run-time integer into numbers (`SCALES[int(t)]`) compiles. A list or tuple of numbers or
    strings that `__init__` builds and stores on `self` (`self.lrs = lrs` after `lrs = []` and
    `lrs.append(0.1 * i)` in a loop, `[0.5 * k for k in range(5)]`, `list(range(6))`,
    `tuple(vals)`, a comprehension converting whatever it runs over, `[float(v) for v in
    sched]`) read with a Tensor index counts too. A table stored on `self`
    from an `__init__` argument counts when every instance in the file passes the same
    literal (`Predictor(["cat", "dog"])`) or keeps a literal default, or passes one
    module-level comprehension of numbers (`lrs = [0.1 * 0.9 ** i for i in range(10)]`,
    then `ListLR(lrs)`; written/heldout15b probes `ls_lr_*`). Also flags a Python
    list local to the compiled function (a display or a comprehension, whatever it holds,
    even when grown by `append`) or a local tuple of constants read with a Tensor index, and
    a numpy array (made in `__init__` or at module level, `np.linspace(...)`) read with a
    Tensor index or a run-time integer (`self.table[int(t)]`), and a local list or tuple of
    rows of floats (`m = [[0.0] * 2 for _ in range(2)]`, `((1.0, 2.0), (3.0, 4.0))`) read
    with a run-time integer (`m[int(t[0])][1]`, also as the target of a store; rows of ints
    compile).

    ## Why is this bad?
    A STRICT graph has no run-time string, and reads a tuple with a Tensor index only when
    every element is a function (a layer switch): `TypeError: When JIT_SYNTAX_LEVEL is STRICT,
    using Tensor index to get value from tuple requires that all elements in tuple should be
    function` (a list of tensors fails as a Python script on a variable), or a bare
    `TypeError` for the strings. The default LAX level falls back to Python for both.

    ## Example
    ```python
    CLASS_NAMES = ("cat", "dog")

    class Predictor(nn.Cell):
        def construct(self, logits):
            return CLASS_NAMES[int(logits.argmax())]
    ```

    ## Use instead
    Return the index and look the name up in Python:
    ```python
    class Predictor(nn.Cell):
        def construct(self, logits):
            return logits.argmax()

    name = CLASS_NAMES[int(Predictor()(logits))]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only: what LAX hands to JIT Fallback).
    - Lists and numpy arrays: measured on MindSpore 2.10 with the written set `runtime`
      (`jit_tensor_index_python_list`, `np_array_indexed_by_tensor`) and its probes `tix_*`
      (`When handling script '__py_exec_index0_getitem__(...)' in graph mode, the inputs
      should be constant`; a local list of floats read with `int(t)` and a numpy array read
      with a constant compile).
    """

    nodes = (ast.Subscript,)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Subscript)
        if not ctx.scope or not ctx.scope.strict or not isinstance(node.ctx, ast.Load):
            return
        if isinstance(node.slice, (ast.Constant, ast.Slice)):
            return  # the common case, answered without any lookup
        if bool_table(node.value, ctx) is not None and analyzer(ctx).kind(node.slice) == Kind.VAR:
            # measured (written/heldout29b probes `fix30b_*boollist_read*`,
            # `fix30b_booltuple_read_noloop`): "Select CPU operator[RealTupleGetItem] fail!
            # Unsupported data type!", the read's kernel has no Bool version, as for strings
            yield ctx.diagnostic(
                self,
                node,
                f"under STRICT bools cannot be picked with the run-time index `{ctx.segment(node.slice)}` (`{ctx.segment(node.value)}` holds bools): MindSpore's RealTupleGetItem kernel has no Bool version; keep the flags in a tensor (`ops.zeros(n, ms.bool_)`) and index that",
            )
            return
        if _local_rows(node.value, ctx) and analyzer(ctx).kind(node.slice) == Kind.VAR:
            yield ctx.diagnostic(
                self,
                node,
                f"under STRICT `{ctx.segment(node.value)}` (a Python list or tuple of rows) cannot be read with the run-time index `{ctx.segment(node.slice)}`: MindSpore hands the read to the Python interpreter, which STRICT refuses; use a tensor (`ms.Tensor(...)`)",
            )
            return
        held = _python_container(node.value, ctx)
        if held is not None:
            kind = analyzer(ctx).kind(node.slice)
            if kind == Kind.TENSOR or kind == Kind.VAR and held == "numpy array":
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT a {held} (`{ctx.segment(node.value)}`) cannot be read with the run-time index `{ctx.segment(node.slice)}`: MindSpore hands the read to the Python interpreter, which STRICT refuses; use a tensor (`ms.Tensor(...)`) or a tuple of tensors",
                )
            return
        table = _constant_table(node.value, ctx)
        if table is None and _init_built_numbers(node.value, ctx) and analyzer(ctx).kind(node.slice) == Kind.TENSOR:
            yield ctx.diagnostic(
                self,
                node,
                f"under STRICT a Tensor index (`{ctx.segment(node.slice)}`) cannot read `{ctx.segment(node.value)}`, a Python list of constants `__init__` built: MindSpore hands the read to the Python interpreter, which STRICT refuses; keep the table as a tensor (`ms.Tensor(...)`) and index that",
            )
            return
        if table is None:
            built = built_strings(node.value, ctx)
            by = analyzer(ctx).kind(node.slice) if built is not None else None
            if by == Kind.TENSOR:
                # measured, written/heldout38c probes `fix38c_pick_tensor_*`: "When handling
                # script '__py_exec_index0_getitem__(...)' in graph mode, the inputs should be
                # constant", also when the picked str is only tested with `in`
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT a Tensor index (`{ctx.segment(node.slice)}`) cannot read `{ctx.segment(node.value)}`, a {built} of strings `__init__` built: MindSpore hands the read to the Python interpreter, which STRICT refuses; return the index and look it up in Python",
                )
                return
            if by == Kind.VAR:
                if not _only_membership_tested(node, ctx):
                    yield _strings_picked(self, node, ctx)
                return
            if _tensor_display(node.value, ctx) and analyzer(ctx).kind(node.slice) == Kind.TENSOR:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT a Tensor index (`{ctx.segment(node.slice)}`) can read a tuple or list only when every element is a function; `{ctx.segment(node.value)}` holds tensors (MindSpore: using Tensor index to get value from tuple requires that all elements in tuple should be function)",
                )
                return
            held_values = _self_value_table(node.value, ctx)
            if held_values is not None and analyzer(ctx).kind(node.slice) == Kind.TENSOR:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT a Tensor index (`{ctx.segment(node.slice)}`) cannot read `{ctx.segment(node.value)}`, a Python {held_values} `__init__` built: MindSpore hands the read to the Python interpreter, or reads a tuple with a Tensor index only when every element is a function, and STRICT refuses both; index with `int({ctx.segment(node.slice)})` or keep the table as a tensor (`ms.Tensor(...)`)",
                )
            return
        kind = analyzer(ctx).kind(node.slice)
        index = ctx.segment(node.slice)
        if kind == Kind.TENSOR:
            yield ctx.diagnostic(
                self,
                node,
                f"under STRICT a Tensor index (`{index}`) can read a tuple only when every element is a function; `{ctx.segment(node.value)}` holds constants",
            )
        elif (
            kind == Kind.VAR
            and any(isinstance(e.value, str) for e in table)
            and not _from_local(node.value, ctx)
            and not _only_membership_tested(node, ctx)
        ):
            yield _strings_picked(self, node, ctx)


def _only_membership_tested(pick: ast.Subscript, ctx: Context) -> bool:
    """Is the picked str only tested with `in` / `not in` (`VOCAB[i] in ("a", "b")`, or
    `tok = VOCAB[i]` with every read of `tok` such a test)? STRICT compiles that (measured,
    written/heldout29b probes `fix30b_pick_in_*`, `fix30b_pick_not_in_tuple`: a tuple or a
    list on the right, in an `if` or bound to a name; the same str also returned fails)."""

    def membership(e: ast.expr) -> bool:
        p = ctx.parent(e)
        return isinstance(p, ast.Compare) and p.left is e and all(isinstance(op, (ast.In, ast.NotIn)) for op in p.ops)

    if membership(pick) or _only_counted(pick, ctx):
        return True
    parent = ctx.parent(pick)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    if ctx.function is None or analyzer(ctx).single_assignment(name, ctx.function) is not pick:
        return False
    reads = [n for n in ast.walk(ctx.function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return bool(reads) and all(membership(n) for n in reads)


def _only_counted(pick: ast.Subscript, ctx: Context) -> bool:
    """Is the picked str appended to a local list (`word.append(CHARS[c])`) that is only
    appended to and measured with `len` afterwards? The graph drops the strs themselves,
    so STRICT compiles it (measured, written/heldout38c probe `fix38c_brk_int_len`; the
    same list returned fails, `fix38c_brk_int_return_word`)."""
    call = ctx.parent(pick)
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, ast.Name)
        and ctx.function is not None
    ):
        return False
    name = call.func.value.id
    reads = [n for n in ast.walk(ctx.function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]

    def counted(n: ast.Name) -> bool:
        p = ctx.parent(n)
        if isinstance(p, ast.Attribute) and p.attr == "append":
            return True
        return isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "len" and p.args == [n]

    return all(counted(n) for n in reads)


def _strings_picked(rule: GraphRule, node: ast.Subscript, ctx: Context) -> Diagnostic:
    return ctx.diagnostic(
        rule,
        node,
        f"under STRICT strings cannot be picked with the run-time index `{ctx.segment(node.slice)}` (`{ctx.segment(node.value)}` holds strings); return the index and look it up in Python",
    )


def built_strings(e: ast.expr, ctx: Context) -> str | None:
    """"list" or "tuple" when `e` is a list or tuple of strings the program builds rather than spells out:
    `self.<attr>` stored once in the file, in `__init__`, or a module-level name bound once
    (not bound in the function), to `[chr(ord("a") + i) for i in range(n)]`, `[str(i) for
    ...]`, `[f"t{i}" ...]`, `list("abc")`, `tuple(<generator of strings>)` or `"a b".split()`?
    MindSpore reads such an attribute or global as the constant list it holds when compiling,
    as it does a display of string constants, so a run-time integer picks a string the same
    way (measured, written/heldout26a case `r2_gen_streamer_itos_list_python_int`, probes
    `fix28a_itos_*`: under STRICT "Kernel select failed: Select CPU operator[RealTupleGetItem]
    fail! Unsupported data type!"; a list of floats built the same way and a constant index
    compile)."""
    value: ast.expr | None = None
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        if cls is None or len(instances(ctx).attr_stores(e.attr) or ()) != 1:
            return None
        values = a.self_values(cls).get(e.attr, [])
        value = values[0] if len(values) == 1 else None
    elif isinstance(e, ast.Name) and not bound_locally(e.id, ctx):
        value = module_literal(e.id, ctx)
    return None if value is None else _string_list(value, ctx, 0)


def _string_list(v: ast.expr, ctx: Context, depth: int) -> str | None:
    """"list" or "tuple" when `v` builds a non-empty one of strings (see `built_strings`)."""
    if depth > 2:
        return None
    if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
        # `["sos"] + list(chars) + ["eos"]` (measured, written/heldout38c probes
        # `fix38c_pick_*_concat*`: under STRICT a Tensor index fails as for a display, an
        # `int(t)` one with "Select CPU operator[RealTupleGetItem] fail!")
        sides = [_string_list(x, ctx, depth + 1) for x in (v.left, v.right)]
        if "list" in sides and all(k == "list" or _list_call(x, ctx) for k, x in zip(sides, (v.left, v.right), strict=True)):
            return "list"
        return None
    if isinstance(v, (ast.ListComp, ast.GeneratorExp)):
        ok = all(isinstance(g.target, ast.Name) for g in v.generators) and _string_expr(v.elt, ctx, 0)
        return "list" if ok else None
    if isinstance(v, (ast.List, ast.Tuple)):
        ok = bool(v.elts) and all(_string_expr(x, ctx, 0) for x in v.elts)
        return ("list" if isinstance(v, ast.List) else "tuple") if ok else None
    if not isinstance(v, ast.Call) or v.keywords:
        return None
    if isinstance(v.func, ast.Attribute) and v.func.attr == "split" and not v.args:
        words = v.func.value
        return "list" if isinstance(words, ast.Constant) and isinstance(words.value, str) and words.value.split() else None
    made = ctx.qualname(v.func)
    if made in ("builtins.list", "builtins.tuple") and len(v.args) == 1:
        arg = v.args[0]
        if isinstance(arg, ast.Constant):
            ok = isinstance(arg.value, str) and bool(arg.value)
        elif isinstance(arg, ast.Name):
            ok = _init_parameter_text(arg.id, ctx)  # `list(chars)`, `chars="abcd"`
        else:
            ok = _string_list(arg, ctx, depth + 1) is not None
        return made.rpartition(".")[2] if ok else None
    return None


def _list_call(v: ast.expr, ctx: Context) -> bool:
    """`list(...)`: a list, whatever it holds."""
    return isinstance(v, ast.Call) and ctx.qualname(v.func) == "builtins.list"


def _init_parameter_text(name: str, ctx: Context) -> bool:
    """Is `name` a parameter of the compiled method's class `__init__` that every
    construction in the file gives a non-empty string (`chars="abcd"`, left to its
    default or passed)?"""
    cls = analyzer(ctx).owner_class(ctx.function)
    init = init_of(cls) if cls is not None else None
    if cls is None or init is None:
        return False
    given = construction_args(name, cls, init, ctx)
    return bool(given) and all(isinstance(g, ast.Constant) and isinstance(g.value, str) and g.value for g in given)


#: string methods whose result is a string
_STR_METHODS = frozenset({"upper", "lower", "strip", "title", "capitalize", "replace", "format"})


def _string_expr(e: ast.expr, ctx: Context, depth: int) -> bool:
    """Is `e` a string whatever its names hold: a string literal, an f-string, `chr(...)`,
    `str(...)`, a string method of one, or `+` with one on a side?"""
    if depth > 4:
        return False
    if isinstance(e, ast.Constant):
        return isinstance(e.value, str)
    if isinstance(e, ast.JoinedStr):
        return True
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        return _string_expr(e.left, ctx, depth + 1) or _string_expr(e.right, ctx, depth + 1)
    if isinstance(e, ast.Call):
        if ctx.qualname(e.func) in ("builtins.chr", "builtins.str"):
            return True
        return isinstance(e.func, ast.Attribute) and e.func.attr in _STR_METHODS and _string_expr(e.func.value, ctx, depth + 1)
    return False


def _constant_table(e: ast.expr, ctx: Context) -> list[ast.Constant] | None:
    """The constant elements of the tuple / list `e` stands for, or None."""
    value = constant_table_display(e, ctx)
    return None if value is None else [x for x in value.elts if isinstance(x, ast.Constant)]


def constant_table_display(e: ast.expr, ctx: Context) -> ast.Tuple | ast.List | None:
    """The tuple / list display of constants `e` stands for (a module-level table, a local
    bound once, `self.x` set from one in `__init__` or from a constructor argument every
    instance gives the same literal), or None."""
    value: ast.expr | None = e
    if isinstance(e, ast.Name):
        value = module_literal(e.id, ctx)
        if isinstance(value, (ast.Tuple, ast.List)) and bound_locally(e.id, ctx):
            value = None  # a local of that name shadows the module's table
        if value is None:
            value = _local_literal(e.id, ctx)
    elif isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        values = a.self_values(cls).get(e.attr, []) if cls is not None else []
        value = values[0] if len(values) == 1 else None
        converted = builtin_sequence_call(value, ctx)
        if converted is not None:
            value = converted.args[0]  # `self.names = tuple(names)`: the table it copies
        if isinstance(value, ast.Name) and cls is not None:
            value = _constructor_table(cls, value.id, ctx)
        if converted is not None and isinstance(value, (ast.Tuple, ast.List)):
            made = ast.Tuple if isinstance(converted.func, ast.Name) and converted.func.id == "tuple" else ast.List
            value = ast.copy_location(made(elts=value.elts, ctx=ast.Load()), value)
    if not isinstance(value, (ast.Tuple, ast.List)) or not value.elts:
        return None
    if not all(isinstance(x, ast.Constant) for x in value.elts):
        return None
    return value


#: `itertools` functions whose items are tuples (never functions)
_TUPLE_ITERATORS = frozenset(
    f"itertools.{n}" for n in ("permutations", "combinations", "combinations_with_replacement", "product")
)


def _self_value_table(e: ast.expr, ctx: Context) -> str | None:
    """What `self.<attr>` holds when `__init__` stores, once, a list or tuple of values that
    are not functions: a display of rows of constants (`[(0, 1), (1, 0)]`) or of tensors
    (`[Tensor(1.0), Tensor(2.0)]`), or `list(...)` / `tuple(...)` of `itertools.permutations`
    and its kin (PIT's `self.perms`). Measured on 2.10 under STRICT (written/heldout42c
    `r2_pit_best_perm_python_list_index_tensor`, probes `fix42c_li_*`): read with a Tensor
    index, a list fails with "When handling script '__py_exec_index0_getitem__(...)' ... the
    inputs should be constant", a tuple with "using Tensor index to get value from tuple
    requires that all elements in tuple should be function"; `self.perms[int(best)]` compiles."""
    if not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"):
        return None
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    values = a.self_values(cls).get(e.attr, []) if cls is not None else []
    if len(values) != 1 or values[0] is None:
        return None
    value = values[0]
    converted = builtin_sequence_call(value, ctx)
    if converted is not None:
        inner = converted.args[0]
        if isinstance(inner, ast.Call) and (ctx.qualname(inner.func) or "") in _TUPLE_ITERATORS:
            return f"{converted.func.id} of tuples"  # type: ignore[attr-defined]
        return None
    if not isinstance(value, (ast.List, ast.Tuple)) or not value.elts:
        return None
    kind = "list" if isinstance(value, ast.List) else "tuple"
    if all(isinstance(x, (ast.List, ast.Tuple)) and x.elts and all(isinstance(y, ast.Constant) for y in x.elts) for x in value.elts):
        return f"{kind} of rows of constants"
    if all(isinstance(x, ast.Call) and (ctx.qualname(x.func) or "") in TENSOR_MAKERS for x in value.elts):
        return f"{kind} of tensors"
    return None


def _tensor_display(e: ast.expr, ctx: Context) -> bool:
    """Is `e` a tuple / list display of tensors and constants, with one tensor at least, or
    a local of the compiled function bound only to one (`feats = (x, x * 2)`)?"""
    if isinstance(e, ast.Name):
        a = analyzer(ctx)
        bound = a.single_assignment(e.id, ctx.function) if ctx.function is not None else None
        if bound is None:
            return False
        e = bound
    if not isinstance(e, (ast.Tuple, ast.List)) or not e.elts:
        return False
    a = analyzer(ctx)
    tensors = [x for x in e.elts if not isinstance(x, ast.Constant)]
    return bool(tensors) and all(a.kind(x) == Kind.TENSOR for x in tensors)


def _constructor_table(cls: ast.ClassDef, param: str, ctx: Context, comprehensions: bool = False) -> ast.expr | None:
    """The literal table an `__init__` parameter holds (`self.labels = labels`) when every
    instance built in this file passes the same literal (or module-level literal), or leaves
    a literal default: `Predictor(["cat", "dog"])`; with `comprehensions`, also a list
    comprehension bound at module level."""
    init = next(
        (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None
    )
    if init is None:
        return None
    args = init.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)][1:]
    if param not in names and param not in [a.arg for a in args.kwonlyargs]:
        return None
    defaults: dict[str, ast.expr] = dict(
        zip(names[len(names) - len(args.defaults) :], args.defaults, strict=True)
    )
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if d is not None:
            defaults[a.arg] = d
    sites = instances(ctx).instantiations(cls.name)
    if not sites:
        return None
    found: object = None
    table: ast.expr | None = None
    for site in sites:
        if any(isinstance(x, ast.Starred) for x in site.args) or any(k.arg is None for k in site.keywords):
            return None
        given: ast.expr | None = defaults.get(param)
        if param in names and names.index(param) < len(site.args):
            given = site.args[names.index(param)]
        for kw in site.keywords:
            if kw.arg == param:
                given = kw.value
        if isinstance(given, ast.Name):
            given = module_literal(given.id, ctx)
        if given is None or (
            not isinstance(given, (ast.Tuple, ast.List))
            and not (comprehensions and (isinstance(given, ast.ListComp) or _concatenation(given)))
        ):
            return None
        key = node_key(given)
        if found is not None and key != found:
            return None
        found, table = key, given
    return table


def module_literal(name: str, ctx: Context) -> ast.expr | None:
    """The literal a module-level statement binds `name` to, when only one statement does."""
    key = "ms150-module-literals"
    table: dict[str, ast.expr | None] | None = ctx.cache.get(key)
    if table is None:
        table = {}
        for st in ctx.tree.body:
            if isinstance(st, ast.Assign):
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        table[t.id] = st.value if t.id not in table else None
        ctx.cache[key] = table
    return table.get(name)


def _python_container(e: ast.expr, ctx: Context) -> str | None:
    """"Python list" for a local of the compiled function bound once to a list display or
    comprehension (whatever it holds, however it grows), "numpy array" for a numpy value."""
    if isinstance(e, ast.Name) and ctx.function is not None:
        value = analyzer(ctx).single_assignment(e.id, ctx.function)
        if isinstance(value, (ast.List, ast.ListComp)):
            return "Python list"
    a = analyzer(ctx)
    made: ast.expr | None = None
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        cls = a.owner_class(ctx.function)
        values = a.self_values(cls).get(e.attr, []) if cls is not None else []
        made = values[0] if len(values) == 1 else None
    elif isinstance(e, ast.Name) and not bound_locally(e.id, ctx):
        made = module_literal(e.id, ctx)
    if made is None:
        return None
    if _numpy_made(made, ctx, 0):
        return "numpy array"
    # `self.table = table`, every construction passing a numpy array (written/heldout29a
    # probes `fix29c_tab_*`)
    cls = a.owner_class(ctx.function) if isinstance(made, ast.Name) else None
    if cls is not None and isinstance(made, ast.Name) and _every_site_passes(cls, made.id, ctx, lambda g: _numpy_made(g, ctx, 0)):
        return "numpy array"
    return None


def _numpy_made(e: ast.expr, ctx: Context, depth: int) -> bool:
    """`np.linspace(...)`, `np.array(...).astype(np.float32)`, arithmetic on one, or a call
    of a module-level function whose every `return` gives one (`one_cycle(total, max_lr)`
    returning `np.concatenate([a, b]).astype(np.float32)`, written/heldout29a case
    `sched_onecycle_numpy_table_indexed_by_step`): a numpy array."""
    if depth > 3:
        return False
    while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("astype", "reshape", "copy"):
        if (ctx.qualname(e.func) or "").startswith("numpy."):
            break
        e = e.func.value
    if isinstance(e, ast.BinOp):
        return _numpy_made(e.left, ctx, depth + 1) or _numpy_made(e.right, ctx, depth + 1)
    if not isinstance(e, ast.Call):
        return False
    q = ctx.qualname(e.func) or ""
    if q.startswith("numpy."):
        return q.rpartition(".")[2] in _NUMPY_MAKERS
    if not isinstance(e.func, ast.Name):
        return False
    fn = next((st for st in ctx.tree.body if isinstance(st, ast.FunctionDef) and st.name == e.func.id), None)
    if fn is None:
        return False
    returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return)]
    return bool(returns) and all(r is not None and _numpy_made(r, ctx, depth + 1) for r in returns)


def _number_list_call(e: ast.expr, ctx: Context) -> bool:
    """A call of a function giving a Python list of floats (`nn.cosine_decay_lr(...)`)."""
    return isinstance(e, ast.Call) and ctx.qualname(e.func) in NUMBER_LIST_FUNCTIONS


def _every_site_passes(cls: ast.ClassDef, param: str, ctx: Context, test: Callable[[ast.expr], bool]) -> bool:
    """Does every instantiation of `cls` in the file pass, for the `__init__` parameter
    `param`, a value (or a module-level name bound once to one) that `test` accepts?"""
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return False
    names = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    sites = instances(ctx).instantiations(cls.name)
    if param not in names or not sites:
        return False
    at = names.index(param)
    for site in sites:
        if any(isinstance(x, ast.Starred) for x in site.args) or any(k.arg is None for k in site.keywords):
            return False
        given = site.args[at] if at < len(site.args) else next((k.value for k in site.keywords if k.arg == param), None)
        if isinstance(given, ast.Name):
            given = module_literal(given.id, ctx)
        if given is None or not test(given):
            return False
    return True


#: numpy functions that make an array
_NUMPY_MAKERS = frozenset(
    {
        "array", "asarray", "linspace", "arange", "zeros", "ones", "full", "empty", "eye", "logspace", "cumsum",
        "load", "concatenate", "stack", "hstack", "vstack", "geomspace", "cos", "sin", "exp", "tile", "repeat",
        "cumprod", "sqrt",
    }
)


#: list methods that change a list in place
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"})


def bool_table(e: ast.expr, ctx: Context) -> tuple[str, bool] | None:
    """("list" / "tuple", changed in place) when `e` stands for a table of bool constants:
    a module-level display, one `__init__` stores on `self`, or a local of the compiled
    function bound once to a display or to one repeated (`flags = [False] * n`), the local
    perhaps stored into afterwards (`flags[j] = True`)."""
    if isinstance(e, ast.Name) and ctx.function is not None and bound_locally(e.id, ctx):
        value = analyzer(ctx).single_assignment(e.id, ctx.function)
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
            value = value.left if isinstance(value.left, ast.List) else value.right
        changed = any(
            isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name) and n.value.id == e.id
            for n in ast.walk(ctx.function)
        )
    else:
        value = constant_table_display(e, ctx)
        changed = False
    if not isinstance(value, (ast.Tuple, ast.List)) or not value.elts:
        return None
    if not all(isinstance(x, ast.Constant) and type(x.value) is bool for x in value.elts):
        return None
    return ("tuple" if isinstance(value, ast.Tuple) else "list"), changed


def _from_local(e: ast.expr, ctx: Context) -> bool:
    """The table is a local tuple (measured with a Tensor index only)."""
    if not isinstance(e, ast.Name):
        return False
    module = module_literal(e.id, ctx)
    return not isinstance(module, (ast.Tuple, ast.List)) or bound_locally(e.id, ctx)


def _local_literal(name: str, ctx: Context) -> ast.expr | None:
    """The literal tuple / list a local of the compiled function is bound to once
    (`scales = (0.5, 1.0, 2.0)`) and never changed in place."""
    func = ctx.function
    if func is None:
        return None
    value = analyzer(ctx).single_assignment(name, func)
    if not isinstance(value, (ast.Tuple, ast.List)):
        return None
    for n in ast.walk(func):
        if isinstance(n, ast.Attribute) and n.attr in _MUTATORS and isinstance(n.value, ast.Name) and n.value.id == name:
            return None
        if isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name) and n.value.id == name:
            return None
    return value


def bound_locally(name: str, ctx: Context) -> bool:
    func = ctx.function
    if func is None:
        return False
    args = getattr(func, "args", None)
    if isinstance(args, ast.arguments) and any(
        a.arg == name for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
    ):
        return True
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        for n in ast.walk(func)
    )


#: builtins and `math` functions whose result is a number when their arguments are
_NUMBER_CALLS = frozenset(
    {"builtins.float", "builtins.int", "builtins.round", "builtins.abs", "builtins.min", "builtins.max", "builtins.sum", "builtins.pow", "builtins.str"}
)
#: how deep `_numeric` follows names bound to other numeric expressions
_NUMERIC_DEPTH = 10


def _init_built_numbers(e: ast.expr, ctx: Context) -> bool:
    """Is `e` `self.<attr>`, stored once in the file, in `__init__`, as a list or tuple of
    numbers or strings that `__init__` builds: a comprehension (`[0.5 * k for k in range(5)]`),
    `list(range(n))`, `tuple(vals)`, or a local list grown by `append` in a loop
    (`lrs = []`, `lrs.append(0.1 * i)`, `lrs.append(values[k])` with `values` a literal
    table every construction passes)? Its elements are then constants, never functions, so
    a Tensor index is a Python script under STRICT (measured: written set `famc`, probes
    `sl_*`, also a one-item list and `x.argmax()` as the index; a constant index, `int(t)`
    and `len(self.<attr>)` compile)."""
    if not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"):
        return False
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    if cls is None or len(instances(ctx).attr_stores(e.attr) or ()) != 1:
        return False
    values = a.self_values(cls).get(e.attr, [])
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if len(values) != 1 or values[0] is None or init is None:
        return False
    return _number_list(values[0], cls, init, ctx, 0)


def _number_list(v: ast.expr, cls: ast.ClassDef, init: ast.FunctionDef, ctx: Context, depth: int) -> bool:
    """Does `v`, in `init`, build a list or tuple holding numbers only?"""
    if depth > _NUMERIC_DEPTH:
        return False
    if isinstance(v, (ast.List, ast.Tuple)):
        return all(_numeric(x, frozenset(), cls, init, ctx, depth + 1) for x in v.elts)
    if isinstance(v, (ast.ListComp, ast.GeneratorExp)):
        if _converted(v.elt, ctx):
            # `[float(t) for t in sched]`: a number (a string) whatever it converts, so what
            # the loop runs over does not matter (written/heldout34b case
            # `dino_teacher_temp_schedule_list_tensor_epoch`, probes `fix34d_conv_*`)
            return True
        names: set[str] = set()
        for g in v.generators:
            if not _number_source(g.iter, cls, init, ctx, depth + 1) or not isinstance(g.target, ast.Name):
                return False
            names.add(g.target.id)
        return _numeric(v.elt, frozenset(names), cls, init, ctx, depth + 1)
    if isinstance(v, ast.Call):
        return _number_source(v, cls, init, ctx, depth + 1)
    if isinstance(v, ast.Name):
        if _grown_numbers(v.id, cls, init, ctx, depth + 1):
            return True
        # `self.lrs = lrs`, every construction passing one module-level list of numbers
        # (`lrs = [0.1 * 0.9 ** i for i in range(10)]`; written/heldout15a case
        # `r2_lr_list_indexed_by_step`)
        if _every_site_passes(cls, v.id, ctx, lambda g: _number_list_call(g, ctx)):
            return True  # `ListLR(nn.cosine_decay_lr(...))` (written/heldout29a probes `fix29c_tab_*`)
        given = _constructor_table(cls, v.id, ctx, comprehensions=True)
        if given is None and not _bound_in_init(v.id, init):
            given = module_literal(v.id, ctx)  # a module-level list (`warmup` of `warmup + decay`)
        return isinstance(given, (ast.ListComp, ast.BinOp, ast.List, ast.Tuple)) and _number_list(
            given, cls, init, ctx, depth + 1
        )
    if _concatenation(v):
        # `warmup + decay` of two module-level lists of numbers (written/heldout21b case
        # `r2_lr_python_table_tensor_index`: `self.lr_table[self.step]` is refused under STRICT)
        assert isinstance(v, ast.BinOp)
        return _number_list(v.left, cls, init, ctx, depth + 1) and _number_list(v.right, cls, init, ctx, depth + 1)
    return False


#: Python conversions whose result is a number or a string whatever they are given
_CONVERSIONS = frozenset({"builtins.float", "builtins.int", "builtins.str"})


def _converted(e: ast.expr, ctx: Context) -> bool:
    """`float(x)` / `int(x)` / `str(x)` of one argument."""
    return type(e) is ast.Call and len(e.args) == 1 and not e.keywords and ctx.qualname(e.func) in _CONVERSIONS


def _concatenation(e: ast.expr | None) -> bool:
    """`a + b` of names, list displays or comprehensions (a list concatenation)."""
    if not (isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add)):
        return False
    return all(
        isinstance(side, (ast.Name, ast.List, ast.ListComp)) or _concatenation(side) for side in (e.left, e.right)
    )


def _bound_in_init(name: str, init: ast.FunctionDef) -> bool:
    args = init.args
    if any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
        return True
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(init))


def _number_source(v: ast.expr, cls: ast.ClassDef, init: ast.FunctionDef, ctx: Context, depth: int) -> bool:
    """`range(...)`, `list(<numbers>)`, `tuple(<numbers>)`, or a list of numbers."""
    if isinstance(v, ast.Call) and not v.keywords:
        q = ctx.qualname(v.func)
        if q == "builtins.range" or q in NUMBER_LIST_FUNCTIONS:
            return True  # `nn.cosine_decay_lr(...)`: a Python list of floats
        if q in ("builtins.list", "builtins.tuple") and len(v.args) == 1:
            return _number_source(v.args[0], cls, init, ctx, depth + 1)
        return False
    return _number_list(v, cls, init, ctx, depth + 1)


def _grown_numbers(name: str, cls: ast.ClassDef, init: ast.FunctionDef, ctx: Context, depth: int) -> bool:
    """A local of `init` bound once to a list display of numbers (often `[]`) and changed
    only by `name.append(<number>)` (the loops' `range` variables count as numbers)."""
    bound = analyzer(ctx).single_assignment(name, init)
    if not isinstance(bound, ast.List) or not _number_list(bound, cls, init, ctx, depth + 1):
        return False
    for n in ast.walk(init):
        if isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name) and n.value.id == name:
            return False
        if not (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name):
            continue
        call = ctx.parent(n)
        if n.attr not in _MUTATORS:
            continue
        if n.attr != "append" or not isinstance(call, ast.Call) or len(call.args) != 1:
            return False
        if not _numeric(call.args[0], _range_loop_names(call, init, ctx), cls, init, ctx, depth + 1):
            return False
    return True


def _range_loop_names(node: ast.AST, init: ast.FunctionDef, ctx: Context) -> frozenset[str]:
    """The variables of the `for ... in range(...)` loops around `node` in `init`."""
    names: set[str] = set()
    cur = ctx.parent(node)
    while cur is not None and cur is not init:
        if isinstance(cur, ast.For) and isinstance(cur.target, ast.Name) and isinstance(cur.iter, ast.Call) and ctx.qualname(cur.iter.func) == "builtins.range":
            names.add(cur.target.id)
        cur = ctx.parent(cur)
    return frozenset(names)


def _numeric(e: ast.expr, names: frozenset[str], cls: ast.ClassDef, init: ast.FunctionDef, ctx: Context, depth: int) -> bool:
    """Is `e` a number or a string in `init`: a literal, one of `names`, arithmetic of those,
    `float`/`int`/`round`/`str`/`math.*` of those, or an item of a literal table of numbers
    that every construction passes for an `__init__` parameter (`values[k]`)?"""
    if depth > _NUMERIC_DEPTH:
        return False
    if isinstance(e, ast.Constant):
        return isinstance(e.value, (int, float, str)) and not isinstance(e.value, bool)
    if isinstance(e, ast.Name):
        if e.id in names:
            return True
        bound = analyzer(ctx).single_assignment(e.id, init)
        return bound is not None and _numeric(bound, names, cls, init, ctx, depth + 1)
    if isinstance(e, ast.BinOp):
        return _numeric(e.left, names, cls, init, ctx, depth + 1) and _numeric(e.right, names, cls, init, ctx, depth + 1)
    if isinstance(e, ast.UnaryOp):
        return _numeric(e.operand, names, cls, init, ctx, depth + 1)
    if isinstance(e, ast.Call):
        q = ctx.qualname(e.func) or ""
        if q not in _NUMBER_CALLS and not q.startswith("math."):
            return False
        if q == "builtins.sum":
            return True  # sum of anything that is not a number fails in Python already
        return not e.keywords and all(_numeric(x, names, cls, init, ctx, depth + 1) for x in e.args)
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name):
        table = _constructor_table(cls, e.value.id, ctx)
        return isinstance(table, (ast.List, ast.Tuple)) and bool(table.elts) and all(
            isinstance(x, ast.Constant) and isinstance(x.value, (int, float)) and not isinstance(x.value, bool)
            for x in table.elts
        )
    return False


def _local_rows(e: ast.expr, ctx: Context) -> bool:
    """Is `e` a local of the compiled function bound once to a list or tuple of rows (a
    display of list / tuple displays, or a comprehension making one list per item:
    `[[0.0] * 2 for _ in range(2)]`)? Measured (written set `famc`, probes `nl_*`): read
    with a run-time integer (`int(t[0])`, `t[0].item()`), also as the target of a store,
    such a table is a Python script under STRICT ("When handling script
    '__py_exec_index0_getitem__(...)' ... the inputs should be constant"); a list of floats
    read with `int(t)`, and a constant index, compile."""
    if not isinstance(e, ast.Name) or ctx.function is None:
        return False
    bound = analyzer(ctx).single_assignment(e.id, ctx.function)
    if isinstance(bound, (ast.List, ast.Tuple)):
        return bool(bound.elts) and all(_float_row(x) for x in bound.elts)
    if isinstance(bound, ast.ListComp):
        row = bound.elt
        if isinstance(row, ast.BinOp) and isinstance(row.op, ast.Mult):
            row = row.left if isinstance(row.left, ast.List) else row.right
        return _float_row(row)
    return False


def _float_row(e: ast.expr) -> bool:
    """A list / tuple display of float constants (`[0.0, 1.5]`). Rows of ints are left out:
    measured (written/trainsteps probe `setitem_nested_loop_item_case_like`), `m[int(t)][j]
    += 1` on `[[0] * 3 for _ in range(3)]` compiles under STRICT."""
    return (
        isinstance(e, (ast.List, ast.Tuple))
        and bool(e.elts)
        and all(isinstance(x, ast.Constant) and type(x.value) is float for x in e.elts)
    )


def tensor_read_of_numbers(node: ast.Subscript, ctx: Context, floats: bool = False) -> bool:
    """Is `node` (in `ctx.function`) a tuple or list of Python numbers (a module-level table,
    a literal, one `__init__` stores on `self` or builds) read with a Tensor index? LAX hands
    the read to the Python interpreter (`__py_exec_index0_getitem__`), and the number it gives
    back is a run-time float64 value of unknown shape (measured, written/heldout21b probes
    `lax24a_lr_*`, heldout23a `lax24a_f64_g*_tensor_index_*`: `TABLE[self.step] * x` given to
    `nn.GRUCell` fails, "got 'Tensor(shape=[-2], dtype=Float64)'"; `ops.assign_sub(p, lr *
    g)` fails, "Data type conversion is not supported for a Parameter ... Float64"; a
    constant index compiles). With `floats`, a literal table holds a float at least."""
    if not isinstance(node.ctx, ast.Load) or isinstance(node.slice, (ast.Constant, ast.Slice)):
        return False
    table = _constant_table(node.value, ctx)
    if table is not None:
        numbers = bool(table) and all(type(c.value) in (int, float) for c in table)
        numbers = numbers and (not floats or any(type(c.value) is float for c in table))
    else:
        numbers = _init_built_numbers(node.value, ctx)
    return numbers and analyzer(ctx).kind(node.slice) == Kind.TENSOR
