"""MS252: an operation that compares its inputs' dtypes given a Parameter and a plain tensor."""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable
from importlib import resources
from typing import Any

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.parameter_arguments import arguments_at_calls as calls_arguments
from npu_lsp.rules.graphmode.parameter_arguments import only_module_binding as module_binding
from npu_lsp.rules.graphmode.parameter_receivers import module_held_parameter, parameter_element
from npu_lsp.rules.graphmode.ranks import ranks


@functools.cache
def _rows() -> dict[str, dict[str, Any]]:
    text = resources.files(__package__).joinpath("ms_ref_dtype_checks.json").read_text("utf-8")
    rows: dict[str, dict[str, Any]] = json.loads(text)["rows"]
    return rows


@rule(code="MS252", name="parameter-beside-tensor-dtype-check", severity="error", family="graphmode")
class ParameterBesideTensorDtypeCheck(GraphRule):
    """## What it does
    Flags a 4-D `ops.grid_sample(input, grid)` in compiled code when one of `input` and
    `grid` is a Parameter (`self.plane`, an item of a `ParameterTuple`, a module-level
    Parameter, a local bound to one) and the other a tensor computed in the graph. A
    parameter of a module-level helper counts as what every compiled call gives it
    (`sample_plane(self.plane, uv)`), and an argument of a network's `construct` as a plain
    tensor when only module-level code builds and calls the network, with `ms.Tensor(...)`.

    ## Why is this bad?
    MindSpore 2.10's 2-D grid sampler compares the two dtypes with the Parameter's `Ref`
    wrapper kept, so float32 beside float32 differs: compiling stops at every syntax level
    with `Input grid must have the same data type with input x! input[x] data type =
    Ref[Tensor[Float32]] but input[grid] data type = Tensor[Float32]`. PyNative runs it.
    The 5-D sampler, two Parameters, a Parameter slice (`self.plane[0:1]`) and
    `self.plane * 1.0` compile; so do `ops.lerp`, `ops.cdist`, `ops.bmm`, `ops.addcmul`
    and `ops.affine_grid` with a Parameter beside a tensor (measured: only the rows of
    `ms_ref_dtype_checks.json` are reported).

    ## Example
    ```python
    class Plane(nn.Cell):
        def construct(self, uv):
            return ops.grid_sample(self.plane, uv.reshape(1, -1, 1, 2), align_corners=True)
    ```

    ## Use instead
    ```python
    class Plane(nn.Cell):
        def construct(self, uv):
            return ops.grid_sample(self.plane * 1.0, uv.reshape(1, -1, 1, 2), align_corners=True)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written set `heldout35b`
      (`hashgrid_tensorf_vm_planes`, `r2_hashgrid_grid_sample_2d_*`, the 5-D and slice
      neighbours that compile) and its probes `fix35e_gs_*` / `fix35e_ro_*` (a helper's
      parameter given `self.plane`, and a `construct` argument beside a Parameter grid:
      `fix35e_gs_parameter_in_helper`, `fix35e_gs_grid_parameter`).
    """

    nodes = (ast.Call,)
    calls = frozenset({q.rpartition(".")[2] for q in _rows()})

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        row = _rows().get(ctx.qualname(node.func) or "")
        func = ctx.function
        if row is None or func is None:
            return
        operands = [_operand(node, index, keyword) for index, keyword in row["operands"]]
        if any(e is None for e in operands):
            return
        refs = [_is_parameter(e, func, ctx) for e in operands if e is not None]
        if sorted(refs, key=str) != [False, True]:
            return  # a Parameter on one side only, the other surely not one
        if _rank(operands, func, ctx) not in row["ranks"]:
            return
        held = operands[refs.index(True)]
        assert held is not None
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(held)}` is a Parameter (`Ref[Tensor]` to the compiler) and the other input a plain tensor: the graph's dtype check tells them apart and the compile fails at every level; pass `{ctx.segment(held)} * 1.0`",
        )


def _operand(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _is_parameter(e: ast.expr, func: ast.AST, ctx: Context, depth: int = 0) -> bool | None:
    """True: `e` is a Parameter object in the graph; False: surely a tensor computed there
    (a call, arithmetic, a slice, or a local bound once to one); None: cannot tell (an
    argument of the function, anything else)."""
    if depth > 3:
        return None
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        a = analyzer(ctx)
        info = a.self_info(a.owner_class(func))
        if e.attr in info.parameters:
            return True
        return False if e.attr in info.tensors else None
    if parameter_element(e, ctx, func) or module_held_parameter(e, ctx, func):
        return True
    if isinstance(e, (ast.Call, ast.BinOp, ast.UnaryOp)):
        return False
    if isinstance(e, ast.Subscript):
        inner = _is_parameter(e.value, func, ctx, depth + 1)
        return False if inner is not None else None  # an item or slice of one: a new tensor
    if isinstance(e, ast.Name):
        value = analyzer(ctx).single_assignment(e.id, func)
        if value is not None:
            return _is_parameter(value, func, ctx, depth + 1)
        return _argument_is_parameter(e.id, func, ctx, depth)
    return None


def _argument_is_parameter(name: str, func: ast.AST, ctx: Context, depth: int) -> bool | None:
    """`_is_parameter` of what parameter `name` of `func` is given at every call in the file:
    a module-level helper's compiled callers (`sample_plane(self.plane, uv)`), or the Python
    calls of a module-level network whose `construct` `func` is (`S()(ms.Tensor(...))`),
    when nothing but module-level code builds that network (a parent Cell holding it could
    pass a Parameter). Measured (written/heldout35b probes `fix35e_gs_grid_parameter`,
    `fix35e_gs_parameter_in_helper`): both fail as the inline spelling does."""
    if func is None or not name.isidentifier():
        return None
    given = calls_arguments(func, name, ctx)
    if not given:
        return None
    owner = ctx.parent(func)
    if owner is ctx.tree:
        seen = set()
        for v in given:
            caller = _enclosing_function(v, ctx)
            if caller is None:
                return None  # called from Python: whatever it is given
            seen.add(_is_parameter(v, caller, ctx, depth + 1))
    elif isinstance(owner, ast.ClassDef) and _built_only_at_module_level(owner, ctx):
        seen = {False if _python_tensor(v, ctx) else None for v in given}
    else:
        return None
    return seen.pop() if len(seen) == 1 else None


def _enclosing_function(node: ast.AST, ctx: Context) -> ast.AST | None:
    p = ctx.parent(node)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
        p = ctx.parent(p)
    return p


def _built_only_at_module_level(cls: ast.ClassDef, ctx: Context) -> bool:
    """Is every mention of the class's name in a module-level statement (no function or
    class around it), so no other Cell holds an instance of it?"""
    for n in ast.walk(ctx.tree):
        if type(n) is ast.Name and n.id == cls.name and _enclosing_definition(n, ctx) is not None:
            return False
    return True


def _enclosing_definition(node: ast.AST, ctx: Context) -> ast.AST | None:
    p = ctx.parent(node)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        p = ctx.parent(p)
    return p


_TENSOR_MAKERS = frozenset({"mindspore.Tensor", "mindspore.tensor"})


def _python_tensor(e: ast.expr, ctx: Context) -> bool:
    """Is `e` (at module level) `ms.Tensor(...)`, or a name bound once there to one?"""
    if isinstance(e, ast.Name):
        bound = module_binding(e.id, ctx)
        if bound is None:
            return False
        e = bound
    return isinstance(e, ast.Call) and ctx.qualname(e.func) in _TENSOR_MAKERS


def _rank(operands: list[ast.expr | None], func: ast.AST, ctx: Context) -> int | None:
    """The rank of the operands when the shape model knows it (the same for both, or one
    known), or when a grid is reshaped with a literal last size (2: 4-D, 3: 5-D)."""
    known: set[int] = set()
    for e in operands:
        if e is None:
            continue
        seen = ranks(ctx).value_at(e, func)
        got = {len(v) for v in seen if isinstance(v, tuple)}
        if len(got) == 1 and all(isinstance(v, tuple) for v in seen):
            known |= got
        reshaped = _reshape_rank(e, func, ctx)
        if reshaped is not None:
            known.add(reshaped)
    return known.pop() if len(known) == 1 else None


def _reshape_rank(e: ast.expr, func: ast.AST, ctx: Context) -> int | None:
    """`x.reshape(1, -1, 1, 2)` (or a local bound once to it): the number of sizes."""
    if isinstance(e, ast.Name):
        value = analyzer(ctx).single_assignment(e.id, func)
        e = value if value is not None else e
    if (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr in ("reshape", "view")
        and e.args
        and not e.keywords
        and not any(isinstance(a, ast.Starred) for a in e.args)
    ):
        if len(e.args) == 1 and isinstance(e.args[0], ast.Tuple):
            return len(e.args[0].elts)
        return len(e.args) if len(e.args) > 1 else None
    return None
