"""MS183: a Cell or primitive created in compiled code from an argument that is not a constant."""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable
from importlib import resources

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.jit_class_variable_argument import jit_class_called
from npu_lsp.rules.graphmode.map_closure_free_variable import local_function
from npu_lsp.rules.graphmode.tensor_names import TENSOR_CLASS


@rule(code="MS183", name="cell-built-from-runtime-value", severity="error", family="graphmode")
class CellBuiltFromRuntimeValue(GraphRule):
    """## What it does
    Flags the creation of a built-in `mindspore.nn` Cell inside compiled code (`construct`, a
    method it calls, an `@ms.jit` function) when an argument is computed from a tensor:
    `nn.AvgPool1d(kernel_size=int(k))`, `nn.Dropout(p=rate.item())`,
    `nn.LeakyReLU(alpha=float(scale))`, or a tensor itself; also a list of cells given to
    a container Cell there (`nn.SequentialCell([self.a, self.b])`, `nn.CellList([nn.ReLU()])`,
    a local or `self` list of cells): measured, "input 0 is a variable, which is
    AbstractList{...}" at both levels (the cells given one by one compile).
    The same for the hand-written primitive classes of `mindspore.ops` (`ops.Stack(axis=int(k))`,
    `ops.Pad(((0, 0), (n, n)))` with `n = int(k)`, `ops.TopK(sorted=bool(k > 0))`). And, for any
    class MindSpore builds while compiling (`ops.Custom`, a primitive, an `nn` Cell, a Cell or
    `@ms.jit_class` class of the project): a function given by keyword
    (`ops.Custom(fn, out_shape=lambda s: s, ...)`, `Act(fn=double)`, `out_shape=self.infer`,
    `fn=ops.relu`), and a lambda or `def` made inside compiled code given by position to
    `ops.Custom` or to a class of the project (`Act(lambda t: t * 2)`).

    ## Why is this bad?
    MindSpore builds the Cell while compiling, so every constructor argument must be a
    constant. A Python number taken from a tensor (`int(t)`, `float(t)`, `t.item()`) is a
    run-time value in the graph, and compiling stops at every syntax level with `TypeError:
    When creating an instance of 'AvgPool1d', all arguments are required to be constants,
    but input 0 is a variable`. Constants, attributes set in `__init__` (`self.k`) and
    shapes (`x.shape[-1] // 2`) compile. A function given by keyword is a variable there too
    ("input 1 is a variable, which is AbstractKeywordArg(key: out_shape, value:
    FuncGraphAbstractClosure ...)"); given by position, a module-level function or lambda
    and a method reach the instance, but one made inside compiled code reaches it as None
    (`ops.Custom`: "'out_shape' must be one of [tuple, list, function], but got NoneType";
    a Cell calling it: "The object is not callable"). The generated primitive classes
    (`ops.Softmax`, `ops.ReduceSum`) become calls of their functional op and take run-time
    values.

    ## Example
    ```python
    class Decomp(nn.Cell):
        def construct(self, x, kernel):
            pool = nn.AvgPool1d(kernel_size=int(kernel), stride=1)
            return pool(x)
    ```

    ## Use instead
    Build the Cell in `__init__` from a Python number:
    ```python
    class Decomp(nn.Cell):
        def __init__(self, kernel):
            super().__init__()
            self.pool = nn.AvgPool1d(kernel_size=kernel, stride=1)

        def construct(self, x):
            return self.pool(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 with the written set `domains`
      (`ts_dlinear_conv_kernel_from_tensor`) and its probes: `nn.AvgPool1d` from `int(k)`,
      `nn.Dropout` from `k.item()`, `nn.LeakyReLU` from `float(t)` and `nn.MaxPool1d` built in
      a helper method from `int(k.item())` are rejected at LAX and STRICT; built from a
      constant, from `self.k` or from `x.shape[-1] // 2` they compile. Primitives are not
      flagged: `ops.TopK(sorted=bool(k > 0))` is rejected but `ops.Softmax(int(axis))` and
      `ops.ReduceSum(keep_dims=bool(flag))` compile.
    - Measured on MindSpore 2.10 with the `written/zoo` probes (`gumbel_*`, `normal_*`): a
      distribution Cell built in a helper of `construct` from `Tensor(0.0, dtype=x.dtype)` /
      `Tensor(1.0, ms.float32)` compiles at both levels (a tensor made from constants is a
      constant while compiling); from `x.mean()` or `Tensor(x.max(), ...)` it is rejected.
    - Measured on MindSpore 2.10 with the written set `heldout25a` (cases
      `custom_pyfunc_created_in_construct`, `r2_custom_made_by_helper_in_construct`) and its
      probes `fix25a_cu_*`, `fix25a_pi_*`: `ops.Custom` built in `construct`, in an `@ms.jit`
      function or in a helper they call, with `out_shape=` / `out_dtype=` / `func=` given a
      lambda (inline, module-level, made in the graph), a module-level `def`, a nested `def`
      or a method, is rejected at both levels, and so are a Cell and a jit_class of the file
      given `fn=double` or `fn=ops.relu`; `ops.Custom(np_fn, (2, 3), ms.float32, "pyfunc")`,
      `out_shape=x.shape` of a static shape, module-level functions given by position, and a
      Cell given a module-level function, lambda or a method by position compile. A lambda
      made in `construct` given by position: `ops.Custom` and a Cell or jit_class calling it
      are rejected, `ops.InsertGradientOf(lambda g: ...)` compiles when no gradient is taken.
      `ops.Stack(axis=int(k))` and `ops.Pad` from `int(k)` are rejected, from `x.ndim - 1` and
      `x.shape[1] // 3` they compile. The hand-written classes: `ms_instantiated_primitives.json`.
    - Measured on MindSpore 2.10 with the `written/zoo` probes `lead29_sampler_*` (from
      mindocr's `rpn_anchor_target`): `ops.RandomChoiceWithMask(count=k)` compiles when the
      `k = int(n * frac)` of its own `if` side reaches it, whatever the other side binds
      (`k = min(k, mask.sum())`), and when that side ends in `return`; it is rejected when the
      tensor binding reaches it.
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator: every call of compiled code comes here
        assert isinstance(node, ast.Call)
        if not node.args and not node.keywords:
            return ()
        q = ctx.qualname(node.func) or ""
        made = _instantiated(node, q, ctx)
        if made is None:
            return ()
        name = q.rsplit(".", 1)[-1] if q else ctx.segment(node.func)
        said = _function_argument(node, made, ctx)
        if said is not None:
            return [ctx.diagnostic(self, node, f"`{name}` is built while compiling and needs constant arguments, but {said}")]
        if made not in ("nn", "primitive"):
            return ()  # run-time values given to the file's own classes: MS162 (jit_class)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if made == "nn" and _list_of_cells(arg, ctx):
                # measured (written/apisurface probes `av_seq_*`, `av_celllist_*`):
                # `nn.SequentialCell([self.a, self.b])`, `nn.CellList([nn.ReLU()])`, a local
                # or `self` list of cells given as the argument fail at both levels ("input 0
                # is a variable, which is AbstractList{... FuncGraph}"); the cells given one
                # by one (`nn.SequentialCell(nn.ReLU(), nn.Tanh())`) compile
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        f"`{name}` is built while compiling and needs constant arguments, but the list of cells `{ctx.segment(arg)}` is a graph variable there; build it in `__init__`",
                    )
                ]
            if _runtime(arg, ctx) and not _constant_tensor(arg, ctx):
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        f"`{name}` is built while compiling and needs constant arguments, but `{ctx.segment(arg)}` is known only at run time; build it in `__init__`",
                    )
                ]
        return ()

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `check`'s name test: a class of `mindspore.nn` (its resolved name, whose last part
        # is the called name, starts with a capital)
        return (callee is ast.Name or callee is ast.Attribute) and called[:1].isupper()


@functools.cache
def _instantiated_primitives() -> frozenset[str]:
    """Hand-written primitive classes of `mindspore.ops` (`ms_instantiated_primitives.json`):
    compiled code calling one builds the instance while compiling."""
    text = resources.files(__package__).joinpath("ms_instantiated_primitives.json").read_text("utf-8")
    return frozenset(json.loads(text)["classes"])


def _instantiated(node: ast.Call, q: str, ctx: Context) -> str | None:
    """What MindSpore builds while compiling when compiled code makes `node`: "nn" (a class
    of `mindspore.nn`), "primitive" (a hand-written primitive class of `mindspore.ops`),
    "cell" (a Cell class of the project) or "jit_class" (a `@ms.jit_class` class of the
    file); None for any other call (the graph/_parse/parser.py `create_instance` types)."""
    last = q.rsplit(".", 1)[-1]
    if not last[:1].isupper():
        return None
    if q.startswith("mindspore.nn."):
        return "nn"
    if q.startswith("mindspore.ops."):
        return "primitive" if last in _instantiated_primitives() else None
    if q.startswith("mindspore."):
        return None
    if jit_class_called(node, ctx) is not None:
        return "jit_class"
    return "cell" if ctx.scopes.is_cell_class(q) else None


def _function_argument(node: ast.Call, made: str, ctx: Context) -> str | None:
    """Why a function given to the class MindSpore builds while compiling fails, or None.
    Measured on 2.10 (written/heldout25a cases `custom_pyfunc_created_in_construct`,
    `r2_custom_made_by_helper_in_construct` and probes `fix25a_cu_*`, `fix25a_pi_*`), at
    both levels: given by keyword, any function (a module-level `def` or lambda, one made in
    the graph, a method `self.f`, `ops.relu`) is a variable there ("all arguments are required
    to be constants, but input 1 is a variable, which is AbstractKeywordArg(key: out_shape,
    value: FuncGraphAbstractClosure ...)"), for `ops.Custom`, the project's Cells and
    jit_classes alike; given by position, a module-level function or lambda and a method
    reach the instance, but a lambda or `def` made inside compiled code reaches it as None
    (`ops.Custom`: "'out_shape' must be one of [tuple, list, function], but got NoneType";
    a Cell or jit_class calling it: "The object is not callable"). `ops.InsertGradientOf(lambda
    g: ...)` built in `construct` compiles when no gradient is taken, so positional functions
    are judged for `Custom` and the project's classes only."""
    for kw in node.keywords:
        if kw.arg is not None:
            what = _function_value(kw.value, ctx)
            if what is not None:
                return f"{what}, given as `{kw.arg}=`, is a graph variable there (a keyword argument holding a function is not a constant); build the instance in `__init__`, or pass a module-level function by position"
    if made in ("cell", "jit_class") or (made == "primitive" and ctx.qualname(node.func) in _CUSTOM):
        for arg in node.args:
            if local_function(arg, ctx) is not None:
                return f"`{ctx.segment(arg)}`, a function made inside compiled code, reaches it as None (MindSpore keeps no Python object for it); define the function at module level, or build the instance in `__init__`"
    return None


_CUSTOM = frozenset({"mindspore.ops.Custom"})


def _function_value(e: ast.expr, ctx: Context) -> str | None:
    """How to name `e` when it is a function object: a lambda, a `def` of the compiled
    function or of the module, a module-level name bound to a lambda, a method of the class
    (`self.f`), or a function of `mindspore.ops` (`ops.relu`); None otherwise."""
    if isinstance(e, ast.Lambda):
        return "the lambda"
    if local_function(e, ctx) is not None:
        return f"the function `{ctx.segment(e)}`"
    a = analyzer(ctx)
    if isinstance(e, ast.Name):
        func = ctx.function
        if func is not None and (a.rebinds(e.id, func) or e.id in _parameters(func)):
            return None  # a local of its own, or whatever the caller passes
        if e.id in ctx.scopes.info.functions:
            return f"the function `{e.id}`"
        if isinstance(a._module_assignments().get(e.id), ast.Lambda):
            return f"the lambda `{e.id}`"
    elif isinstance(e, ast.Attribute):
        if isinstance(e.value, ast.Name) and e.value.id == "self":
            cls = a.owner_class(ctx.function)
            info = ctx.scopes.info.classes.get(cls.name) if cls is not None else None
            return f"the method `self.{e.attr}`" if info is not None and e.attr in info.methods else None
        q = ctx.qualname(e) or ""
        if q.startswith("mindspore.ops.") and q.count(".") == 2 and e.attr[:1].islower():
            return f"the function `{ctx.segment(e)}`"
    return None


def _parameters(func: ast.AST) -> set[str]:
    args = getattr(func, "args", None)
    if not isinstance(args, ast.arguments):
        return set()
    return {p.arg for p in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if p is not None}


def _runtime(arg: ast.expr, ctx: Context) -> bool:
    """Is `arg` known only at run time where the instance is built? A name is judged by the
    assignment that reaches the call when one plainly does (`fg_num = int(n * frac)` in the
    `if` side that builds the sampler, whatever the other side binds: mindocr's
    `rpn_anchor_target`), else by all its bindings."""
    a = analyzer(ctx)
    if isinstance(arg, ast.Name):
        reaching = a.dominating_assignment(arg, ctx.function)
        if reaching is not None:
            return a.kind(reaching.value).dynamic
    return a.kind(arg).dynamic




def _constant_tensor(arg: ast.expr, ctx: Context) -> bool:
    """`Tensor(0.0, dtype=x.dtype)` (directly, or through a local bound once to it): a tensor
    made from constants, which MindSpore builds while compiling, so a Cell may take it."""
    a = analyzer(ctx)
    e: ast.expr | None = arg
    if isinstance(e, ast.Name):
        e = a.single_assignment(e.id, ctx.function)
    if not isinstance(e, ast.Call) or not e.args or ctx.qualname(e.func) not in TENSOR_CLASS:
        return False
    return all(a.kind(x) == Kind.CONST for x in [*e.args, *(k.value for k in e.keywords)])


def is_cell(e: ast.expr, ctx: Context) -> bool:
    """A new instance of a Cell class (`nn.ReLU()`) or a sub-cell (`self.act`)."""
    if isinstance(e, ast.Call):
        q = ctx.qualname(e.func)
        return q is not None and ctx.scopes.is_cell_class(q)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self" and ctx.function is not None:
        cls = analyzer(ctx).owner_class(ctx.function)
        if cls is None:
            return False
        made = ctx.scopes.attribute_class(f"{ctx.scopes.info.module}.{cls.name}", e.attr)
        return made is not None and ctx.scopes.is_cell_class(made)
    return False


def _list_of_cells(arg: ast.expr, ctx: Context) -> bool:
    """A list display of Cells, given directly, through a local bound once to one, or as a
    `self` attribute `__init__` binds to one."""
    e: ast.expr | None = arg
    if isinstance(e, ast.Name):
        e = analyzer(ctx).single_assignment(e.id, ctx.function)
    elif isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self" and ctx.function is not None:
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        values = a.self_values(cls).get(e.attr, []) if cls is not None else []
        if len(values) != 1 or not isinstance(values[0], ast.List):
            return False
        return any(isinstance(el, ast.Call) and is_cell(el, ctx) for el in values[0].elts)
    return isinstance(e, ast.List) and any(is_cell(el, ctx) for el in e.elts)
