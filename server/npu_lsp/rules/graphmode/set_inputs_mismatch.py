"""MS240: a call of a network whose tensor does not match what `set_inputs` declared."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.graphmode.helpers import module_value_once
from npu_lsp.rules.graphmode.ranks import ranks
from npu_lsp.rules.graphmode.tensor_names import TENSOR_CLASS

#: the dtype names numpy and MindSpore share, and how MindSpore prints them
_DTYPES = {
    "float16": "Float16", "float32": "Float32", "float64": "Float64", "bfloat16": "BFloat16",
    "int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64", "uint8": "UInt8",
    "bool_": "Bool", "bool": "Bool",
}  # fmt: skip
#: numpy makers whose second positional argument is the dtype (float64 when not given)
_DTYPE_SECOND = frozenset({"ones", "zeros", "empty"})
#: numpy's random makers, always float64
_FLOAT64_RANDOM = frozenset(
    f"numpy.random.{n}" for n in ("randn", "rand", "random", "standard_normal", "normal", "uniform")
)


@rule(code="MS240", name="set-inputs-mismatch", severity="error", family="graphmode")
class SetInputsMismatch(Rule):
    """## What it does
    Flags a module-level call `net(x)` after `net.set_inputs(Tensor(shape=[None, 4],
    dtype=ms.float32))` when the tensor the call passes is known to differ from the declared
    one: another rank (`(2, 3, 4)` for `[None, 4]`), another size on an axis the declaration
    fixes (`(2, 5)` for `[None, 4]`), or another dtype (`.astype(np.float16)`,
    `Tensor(..., dtype=ms.float16)`, numpy's default float64 of `np.random.randn(2, 4)`). Shapes are read as the shape model reads module-level
    tensors (`np.random.randn(2, 3, 4)`, `np.ones((2, 4))`, `ops.ones(...)`, a name bound once).

    ## Why is this bad?
    `set_inputs` fixes the graph's input signature; the call is checked against it before
    compiling and fails at every syntax level: `ValueError: For set_inputs and tuple(list) in
    set_inputs, the dims of 1th input must be the same as expected, but got expected: 2, and
    input: 3!`, `... the shape of 1th input must be the same as expected, but got expected:
    4, and input: 5!`, or `For set_inputs or tuple(list) in set_inputs, the 1th type should
    be Tensor[Float32], but got Tensor[Float16]!`. Only `None` axes may vary.

    ## Example
    ```python
    net.set_inputs(Tensor(shape=[None, 4], dtype=ms.float32))
    net(Tensor(np.random.randn(2, 3, 4).astype(np.float32)))
    ```

    ## Use instead
    ```python
    net.set_inputs(Tensor(shape=[None, None, 4], dtype=ms.float32))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (`set_inputs` checks the call before compiling, rejected at every level).
    - Measured on MindSpore 2.10 CPU: written/heldout31b cases
      `dyn_set_inputs_rank_mismatch_call`, `r2_set_inputs_fixed_dim_mismatch_call`,
      `r2_set_inputs_dtype_mismatch_call` (rejected at both levels) and probes
      `fix31e_si_*`.
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if not ctx.mentions("set_inputs"):
            return
        assert isinstance(node, ast.Module)
        top = list(_module_statements(node.body))
        for i, st in enumerate(top):
            found = _declaration(st, ctx)
            if found is None:
                continue
            name, specs = found
            if _bindings(top, name) != 1:
                continue
            for later in top[i + 1 :]:
                for call in _calls_of(later, name):
                    yield from self._mismatches(call, specs, ctx)

    def _mismatches(
        self, call: ast.Call, specs: list[ast.Call], ctx: Context
    ) -> Iterator[Diagnostic]:
        if any(isinstance(a, ast.Starred) for a in call.args):
            return
        for i, (arg, spec) in enumerate(zip(call.args, specs, strict=False)):
            problem = _problem(arg, spec, i + 1, ctx)
            if problem is not None:
                yield ctx.diagnostic(self, arg, problem)
                return  # MindSpore stops at the first input that differs


def _module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's statements in order, the bodies of `if __name__ == "__main__":` and of
    plain `if` / `with` blocks included, definitions left out."""
    for st in body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, ast.If):
            yield from _module_statements(st.body)
            yield from _module_statements(st.orelse)
        elif isinstance(st, ast.With):
            yield from _module_statements(st.body)
        else:
            yield st


def _declaration(st: ast.stmt, ctx: Context) -> tuple[str, list[ast.Call]] | None:
    """`name.set_inputs(Tensor(shape=..., dtype=...), ...)` as a statement: the name and the
    declared tensors (None when any argument is something else)."""
    if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)):
        return None
    f = st.value.func
    if not (
        isinstance(f, ast.Attribute) and f.attr == "set_inputs" and isinstance(f.value, ast.Name)
    ):
        return None
    specs = st.value.args
    if st.value.keywords or not specs:
        return None
    if not all(isinstance(s, ast.Call) and ctx.qualname(s.func) in TENSOR_CLASS for s in specs):
        return None
    return f.value.id, [s for s in specs if isinstance(s, ast.Call)]


def _bindings(top: list[ast.stmt], name: str) -> int:
    count = 0
    for st in top:
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
                count += 1
    return count


def _calls_of(st: ast.stmt, name: str) -> Iterator[ast.Call]:
    for n in ast.walk(st):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name:
            yield n


def _problem(arg: ast.expr, spec: ast.Call, nth: int, ctx: Context) -> str | None:
    declared = _declared_shape(spec)
    given = ranks(ctx).host.of(arg, ctx.tree, 0)
    if declared is not None and isinstance(given, tuple):
        if len(given) != len(declared):
            return (
                f"`set_inputs` declared a {len(declared)}-D tensor here, the call passes a {len(given)}-D one: "
                f"MindSpore: 'For set_inputs and tuple(list) in set_inputs, the dims of {nth}th input must be the "
                f"same as expected, but got expected: {len(declared)}, and input: {len(given)}!'"
            )
        for want, got in zip(declared, given, strict=True):
            if type(want) is int and type(got) is int and want != got:
                return (
                    f"`set_inputs` fixed this axis to {want}, the call passes {got}: MindSpore: 'For set_inputs and "
                    f"tuple(list) in set_inputs, the shape of {nth}th input must be the same as expected, but got "
                    f"expected: {want}, and input: {got}!' (only `None` axes may vary)"
                )
    want_type = _dtype_name(
        next(
            (k.value for k in spec.keywords if k.arg == "dtype"),
            spec.args[1] if len(spec.args) > 1 else None,
        )
    )
    got_type = _explicit_dtype(arg, ctx, 0)
    if want_type is not None and got_type is not None and want_type != got_type:
        return (
            f"`set_inputs` declared {want_type}, the call passes {got_type}: MindSpore: 'For set_inputs or "
            f"tuple(list) in set_inputs, the {nth}th type should be Tensor[{want_type}], but got Tensor[{got_type}]!'"
        )
    return None


def _declared_shape(spec: ast.Call) -> list[int | None] | None:
    """`Tensor(shape=[None, 4], ...)`: the axes, None for a dynamic one; None when the
    declaration is not a literal list of ints and `None`s (or gives data)."""
    shape = next((k.value for k in spec.keywords if k.arg == "shape"), None)
    if (
        shape is None
        or spec.args[:1]
        and not (isinstance(spec.args[0], ast.Constant) and spec.args[0].value is None)
    ):
        return None
    if not isinstance(shape, (ast.List, ast.Tuple)):
        return None
    out: list[int | None] = []
    for e in shape.elts:
        if not isinstance(e, ast.Constant) or not (e.value is None or type(e.value) is int):
            return None
        out.append(None if e.value is None or e.value < 0 else e.value)
    return out


def _dtype_name(e: ast.expr | None) -> str | None:
    """`ms.float32`, `np.float16`, `mstype.int32`, `"float16"`: MindSpore's name of it."""
    if isinstance(e, ast.Attribute):
        return _DTYPES.get(e.attr)
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return _DTYPES.get(e.value)
    return None


def _explicit_dtype(e: ast.expr, ctx: Context, depth: int) -> str | None:
    """The dtype a module-level tensor expression states: `Tensor(a, dtype=ms.float16)`,
    `a.astype(np.float16)`, `np.ones(shape, np.float16)`, through a name bound once at module
    level, or numpy's default float64 (`np.random.randn(2, 4)`, `np.ones((2, 4))`). None when
    unknown (a Python list: MindSpore's own default)."""
    if depth > 6:
        return None
    if isinstance(e, ast.Name):
        bound = module_value_once(e.id, ctx)
        return _explicit_dtype(bound, ctx, depth + 1) if bound is not None else None
    if not isinstance(e, ast.Call):
        return None
    f = e.func
    given = next((k.value for k in e.keywords if k.arg == "dtype"), None)
    q = ctx.qualname(f) or ""
    if q in TENSOR_CLASS:
        if given is None and len(e.args) > 1:
            given = e.args[1]
        if given is not None:
            return _dtype_name(given)
        return _explicit_dtype(e.args[0], ctx, depth + 1) if e.args else None
    if (
        isinstance(f, ast.Attribute)
        and f.attr == "astype"
        and len(e.args) == 1
        and not q.startswith("numpy.")
    ):
        return _dtype_name(e.args[0])
    last = q.rpartition(".")[2]
    if q.startswith("numpy.") and last in _DTYPE_SECOND and given is None and len(e.args) > 1:
        given = e.args[1]
    if given is None and (
        q in _FLOAT64_RANDOM
        or q.startswith("numpy.")
        and q.count(".") == 1
        and last in _DTYPE_SECOND
    ):
        return (
            "Float64"  # numpy's default (probe `fix31e_si_default_float64`: "got Tensor[Float64]")
        )
    return (
        _dtype_name(given) if given is not None and q.startswith(("numpy.", "mindspore.")) else None
    )
