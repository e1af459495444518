"""MS166: (STRICT) an attribute or method of a Python int or float in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.helpers import GraphRule, store_lines

#: the public attributes of int and float (`dir(int) | dir(float)` without dunders)
_SCALAR_ATTRIBUTES = frozenset(
    {"as_integer_ratio", "bit_count", "bit_length", "conjugate", "denominator", "from_bytes", "fromhex",
     "hex", "imag", "is_integer", "numerator", "real", "to_bytes"}
)
#: attributes of a function object STRICT refuses (measured, written/famc probes
#: `g17_fn_*`: a module function, a lambda, a decorator's closure variable, a parameter given
#: a function; `type(self).__name__` of a class compiles)
_FUNCTION_ATTRIBUTES = frozenset({"__name__", "__qualname__"})
#: MindSpore's name of the scalar's type in its message
_MS_TYPE = {"int": "Int64", "float": "Float32"}


@rule(code="MS166", name="scalar-attribute-under-strict", severity="error", family="graphmode")
class ScalarAttributeUnderStrict(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags an attribute or method of a Python int or float in
    compiled code (`n.bit_length()`, `r.is_integer()`, `n.real`, `(0.5).as_integer_ratio()`),
    the number being a literal, a constant kept on `self`, a shape entry, `len(...)`, an int
    argument of a jit function, the result of a `math` function of constants
    (`math.log2(n).is_integer()`, `math.floor(n / 4).bit_length()`) or of a numpy ufunc of
    constants (`np.log(L).is_integer()`, `np.sqrt(N)`, `np.ceil(np.log(L))`: a graph Float),
    or arithmetic of those; and `__name__` / `__qualname__` of
    a function (a module-level `def`, a lambda, a parameter every call gives a `def`),
    also in the wrapper a plain decorator returns (`def logged(fn): def wrapper(t):
    print(fn.__name__) ...`), reported at the compiled call of the decorated function: the
    wrapper runs in its place (a wrapper under `functools.wraps(fn)`, a read under an `if`
    MindSpore folds away, or one whose value is never used, compiles).

    ## Why is this bad?
    Under STRICT a number of the graph is a scalar with no Python attributes: MindSpore 2.10
    stops with `AttributeError: In JIT strict mode, cannot get attributes bit_length or the
    Int64 object has no attribute: 'bit_length'` (every public attribute of int and float was
    measured refused, on literals, names, `self` constants, shape entries and arguments). The
    default LAX level runs the attribute through JIT Fallback. Attributes of a tensor
    (`x.sum().real`) are Tensor methods and not this rule's. A function is a `Func` object
    without Python attributes there too ("cannot get attributes __name__ or the Func object
    has no attribute: '__name__'"); `type(self).__name__` of a class compiles.

    ## Example
    ```python
    @ms.jit(fullgraph=True)
    def f(x):
        n = x.shape[0]
        return x * n.bit_length()
    ```

    ## Use instead
    Compute it outside compiled code (in `__init__`, or before the call), or with
    arithmetic the graph has:
    ```python
    @ms.jit(fullgraph=True)
    def f(x, width):
        return x * width
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (rejected only under STRICT); written set `langref` (cases
      `int_method__*`, `float_method__is_integer`) and its probes `scalar_*`; `math`
      results: written/heldout19a case `alibi_slopes_math_log2` and probes `s20_math_*`; functions:
      the written famc probes `g17_fn_*`.
    """

    nodes = (ast.Attribute, ast.Call)
    strict_only = True
    words = tuple(f".{name}" for name in sorted(_SCALAR_ATTRIBUTES | _FUNCTION_ATTRIBUTES))

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if type(node) is ast.Call:
            yield from self._wrapped_call(node, ctx)
            return
        assert isinstance(node, ast.Attribute)
        if node.attr not in _SCALAR_ATTRIBUTES and node.attr not in _FUNCTION_ATTRIBUTES or not ctx.scope or not ctx.scope.strict:
            return
        if isinstance(node.ctx, ast.Store):
            return
        v = values(ctx).of(node.value, ctx.function)
        if node.attr in _FUNCTION_ATTRIBUTES:
            if isinstance(v, av.Opaque) and v.kind == "function" or _names_function(node.value, ctx):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`.{node.attr}` of the function `{ctx.segment(node.value)}` is not available under the STRICT syntax level (MindSpore: In JIT strict mode, cannot get attributes {node.attr} or the Func object has no attribute: '{node.attr}')",
                )
            return
        if not isinstance(v, av.Scalar) or v.py not in _MS_TYPE:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`.{node.attr}` of the {v.py} `{ctx.segment(node.value)}` is not available under the STRICT syntax level (MindSpore: In JIT strict mode, cannot get attributes {node.attr} or the {_MS_TYPE[v.py]} object has no attribute: '{node.attr}')",
        )


    def _wrapped_call(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """A call of a module-level function a user decorator wraps, when the wrapper the
        decorator returns reads `fn.__name__` (or `__qualname__`) of the function it wraps:
        compiled code runs the wrapper in place of the function, and under STRICT that read
        fails (measured, written/famc probe `g17_fn_name_decorator_wrapper`, written/gen18
        probes `dw_*`; fresh v5 seeds `decorator_counted` / `decorator_logged`). The scopes
        do not follow a decorator to its wrapper, so the wrapper's own line is never
        checked: the finding is made at the call."""
        f = node.func
        if type(f) is not ast.Name or not ctx.scope or not ctx.scope.strict or ctx.function is None:
            return
        hit = _wrapped_reads(ctx).get(f.id)
        if hit is None or f.id in store_lines(ctx.function, ctx):
            return
        deco, attr, line = hit
        yield ctx.diagnostic(
            self,
            node,
            f"`{f.id}` is wrapped by the decorator `{deco}`, whose wrapper reads `.{attr}` of the function (line {line}); compiled code runs the wrapper, and under the STRICT syntax level a function has no `{attr}` (MindSpore: In JIT strict mode, cannot get attributes {attr} or the Func object has no attribute: '{attr}')",
        )


_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _function_attribute_read(st: ast.stmt, param: str) -> ast.Attribute | None:
    """`param.__name__` / `param.__qualname__` read in `st`, a statement of the wrapper's
    own body (not under an `if`: `if DEBUG: print(fn.__name__)` with `DEBUG = False` is
    folded away and compiles, written/gen18 `dw_dead_jit`)."""
    if type(st) not in (ast.Expr, ast.Assign, ast.AugAssign, ast.Return):
        return None
    for n in ast.walk(st):
        if (
            type(n) is ast.Attribute
            and n.attr in _FUNCTION_ATTRIBUTES
            and type(n.value) is ast.Name
            and n.value.id == param
            and type(n.ctx) is ast.Load
        ):
            return n
    return None


def _has_effect(st: ast.stmt, rest: list[ast.stmt]) -> bool:
    """Is what `st` computes used: a call statement (`print(...)`), a store into a container
    or attribute, a return, or a name read by a later statement (`tag = fn.__qualname__`
    never read compiles, written/gen18 `dw_qual_jit`; read afterwards it fails, famc
    `g17_fn_qualname_wrapper`)?"""
    if type(st) in (ast.Expr, ast.Return):
        return True
    targets = st.targets if type(st) is ast.Assign else [st.target]  # type: ignore[attr-defined]
    if any(type(t) is not ast.Name for t in targets):
        return True
    names = {t.id for t in targets if isinstance(t, ast.Name)}
    return any(type(n) is ast.Name and n.id in names and type(n.ctx) is ast.Load for r in rest for n in ast.walk(r))


def _wrapped_reads(ctx: Context) -> dict[str, tuple[str, str, int]]:
    """Module-level functions decorated by a module-level decorator `def deco(fn)` whose
    returned inner function reads `fn.__name__` / `fn.__qualname__`: name -> (decorator,
    attribute, line of the read)."""
    key = "ms166.wrapped"
    hit: dict[str, tuple[str, str, int]] | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = {}
        defs = _module_defs(ctx)
        reads: dict[str, tuple[str, int]] = {}
        for d in ctx.tree.body:
            if type(d) is not ast.FunctionDef or d.name not in defs or len(d.args.args) != 1:
                continue
            param = d.args.args[0].arg
            returned = {r.value.id for r in d.body if type(r) is ast.Return and type(r.value) is ast.Name}
            for inner in d.body:
                # a wrapper under `functools.wraps(fn)` compiles (written/gen18 `dw_wraps_jit`)
                if type(inner) is not ast.FunctionDef or inner.name not in returned or inner.decorator_list:
                    continue
                for i, st in enumerate(inner.body):
                    read = _function_attribute_read(st, param)
                    if read is not None and _has_effect(st, inner.body[i + 1 :]):
                        reads.setdefault(d.name, (read.attr, read.lineno))
        if reads:
            for d in ctx.tree.body:
                if type(d) is ast.FunctionDef and d.name in defs:
                    for deco in d.decorator_list:
                        if type(deco) is ast.Name and deco.id in reads:
                            hit[d.name] = (deco.id, *reads[deco.id])
    return hit


def _names_function(e: ast.expr, ctx: Context) -> bool:
    """A name holding a function of the file: a module-level `def` not bound otherwise in
    the compiled function, the parameter of a decorator around it (`def counted(fn): def
    wrapper(t): ... fn.__name__`), or a parameter every call gives a module-level `def`."""
    func = ctx.function
    if type(e) is not ast.Name or func is None or e.id in store_lines(func, ctx):
        return False
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)] if type(func) in _FUNCS else []  # type: ignore[attr-defined]
    if e.id in params:
        return _every_call_passes_def(params.index(e.id), ctx)
    outer = ctx.parent(func)
    while outer is not None and type(outer) not in _FUNCS:
        outer = ctx.parent(outer)
    if outer is not None and e.id in [a.arg for a in outer.args.args]:  # type: ignore[attr-defined]
        return outer.name in _decorator_names(ctx)  # type: ignore[attr-defined]
    return outer is None and e.id in _module_defs(ctx)


def _module_defs(ctx: Context) -> frozenset[str]:
    """Names the module binds only by `def`."""
    key = "ms166.module-defs"
    hit: frozenset[str] | None = ctx.cache.get(key)
    if hit is None:
        defs = {n.name for n in ctx.tree.body if type(n) in _FUNCS}  # type: ignore[attr-defined]
        other = {t.id for n in ctx.tree.body if type(n) in (ast.Assign, ast.AugAssign, ast.AnnAssign)
                 for t in ast.walk(n) if type(t) is ast.Name and type(t.ctx) is ast.Store}
        hit = ctx.cache[key] = frozenset(defs - other)
    return hit


def _decorator_names(ctx: Context) -> frozenset[str]:
    key = "ms166.decorators"
    hit: frozenset[str] | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = frozenset(
            d.id for n in ast.walk(ctx.tree) if type(n) in _FUNCS for d in n.decorator_list if type(d) is ast.Name  # type: ignore[attr-defined]
        )
    return hit


def _every_call_passes_def(i: int, ctx: Context) -> bool:
    from npu_lsp.rules.graphmode.values import compiled_callers

    scope = ctx.scope
    if scope is None:
        return False
    sites = compiled_callers(ctx, scope)
    defs = _module_defs(ctx)
    return bool(sites) and all(
        i < len(call.args) and type(call.args[i]) is ast.Name and call.args[i].id in defs  # type: ignore[attr-defined]
        for call, _ in sites
    )
