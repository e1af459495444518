#!/usr/bin/env python3
"""Derive, from MindSpore 2.10's own Python sources, which public `mindspore.nn` cells and
`mindspore.ops` functions read the shape or dtype of their tensor input while compiling
(`self.shape_op(x)`, `P.Shape()(x)`, `ops.shape(x)`, `F.dtype(x)`, `x.dtype`), and which
public functions log through `mindspore.log` on every call, and write them to server/npu_lsp/rules/graphmode/ms_input_queries.json. MindSpore cannot answer those
queries for an object made by JIT Fallback at LAX (measured: `nn.Dense`, `nn.BatchNorm1d`,
`nn.LayerNorm`, `ops.clip_by_value` fed such a value fail; `nn.ReLU`, `nn.Conv1d`,
`nn.Dropout`, `nn.Flatten` (reads only the rank) do not; `ops.split` and `ops.chunk`, which
pass the input's `ndim` to a compile-time `@_primexpr` function, fail too). Run with the MindSpore interpreter: `~/.cache/ms210/bin/python
tests/npu_lsp/difftest/derive_input_queries.py` (never in CI).
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import sys
import textwrap
from pathlib import Path

import mindspore
from mindspore import nn, ops

OUT = Path(__file__).resolve().parents[3] / "server/npu_lsp/rules/graphmode/ms_input_queries.json"
# callables (last name part) that query a tensor's shape or dtype
QUERIES = frozenset(
    {"shape", "shape_op", "get_shape", "dtype", "dtype_op", "get_dtype", "Shape", "DType"}
)


_CONST_DECORATORS = frozenset({"_primexpr", "primexpr", "constexpr"})
#: functions that fail on such a value only while one argument is left None, measured (not
#: derived): `ops.norm(v)` and `ops.norm(v, 2)` of a JIT Fallback value fail under LAX
#: ("Graph cycle exists ... _norm_immediate", "When creating an instance of 'LpNorm', all
#: arguments are required to be constants"), `ops.norm(v, dim=0)` and `v.norm()` compile
#: (written/heldout25b probes `fix25b_m_*`). `position` counts the positional arguments.
MEASURED_UNLESS_GIVEN = {"mindspore.ops.norm": {"argument": "dim", "position": 2}}
#: functions that fail on such a value given as one argument only, measured (not derived):
#: the functional convolutions read `weight.shape` to build their primitive
#: (`_get_cache_prim(P.Conv2D)(out_channel, kernel_size, ...)`: "When creating an instance of
#: 'Conv2D', all arguments are required to be constants, but input 0 is a variable, which is
#: AbstractAny") and `ops.mv` reads `vec.shape` ("Graph cycle exists ... mv"); the input of a
#: convolution, the matrix of `ops.mv` and both sides of `ops.matmul` compile (written/heldout32a
#: probes `fix32d_ta_*`, cases `specnorm_u_attr_reassigned_in_construct`,
#: `r2_specnorm_u_attr_reassign_*`). `position` counts the positional arguments.
MEASURED_ARGUMENT_QUERIES = {
    "mindspore.ops.conv1d": {"argument": "weight", "position": 1},
    "mindspore.ops.conv2d": {"argument": "weight", "position": 1},
    "mindspore.ops.conv3d": {"argument": "weight", "position": 1},
    "mindspore.ops.mv": {"argument": "vec", "position": 1},
}
#: functions the reading above flags that compile on such a value, measured (not derived):
#: `ops.argmax(v)`, `ops.argmax(v, dim=1)`, `ops.argmax(v, 1, keepdim=True)` of a JIT
#: Fallback value compile under LAX (written/gen18 probes `fix29b_am_*`, `fix29b_ti_argmax_fb`:
#: its `input.shape` / `input.dtype` reads only decide `if`s, run as Python)
MEASURED_COMPILE = frozenset({"mindspore.ops.argmax"})
#: functions the reading above misses that fail on such a value, measured (not derived):
#: `ops.arange` casts every bound to the widest dtype of the three (`_get_max_type`), so a
#: JIT Fallback bound (`max(t.tolist())`, `len(t.tolist())`) fails under LAX, "For 'Cast',
#: the input 'dtype' expect a type, but got AbstractNegligible" (written/heldout31a case
#: `mask_make_non_pad_mask_tolist_lengths`, probes `fix31d_ar_*`; `int(t.max())` compiles)
MEASURED_QUERIES = frozenset({"mindspore.ops.arange"}) | frozenset(
    # their only reads sit in `if` tests (`_in_tests`), yet a JIT Fallback input fails (written/
    # heldout39d probes `fix39c_fb_np_*`): `ops.copysign` ("Exceed function call depth
    # limit"), `ops.float_power_ext` ("Failed calling PowScalarTensor"), `ops.diff_ext`
    # ("Unsupported op [Narrow] on CPU")
    {"mindspore.ops.copysign", "mindspore.ops.float_power_ext", "mindspore.ops.diff_ext"}
)
#: cells of the same kind: `nn.DiceLoss` of such a value fails ("For primitive[Add], the input
#: arguments must have same data type, but got Tensor[Float32] and Tensor[Float64]", probe
#: `fix39c_fb_np_dice_loss`)
MEASURED_CELL_QUERIES = frozenset({"mindspore.nn.DiceLoss"})
#: primitives whose instance, bound at module level (`dtype_ = P.DType()` in
#: ops/function/nn_func.py), a function calls on its input: `dtype_(input)` of `ops.gelu`
#: reads the dtype as `P.DType()(input)` does (measured, fresh v5 seed 11100046; written/gen18
#: probes `v23_fm_*`: `ops.gelu` of a JIT Fallback object fails, "Unsupported op [DType]")
ALIASED_QUERIES = frozenset({"DType"})


@functools.cache
def _query_aliases(module_file: str) -> frozenset[str]:
    """Module-level names of a MindSpore source file bound to an instance of a query
    primitive (`dtype_ = P.DType()`)."""
    if not module_file:
        return frozenset()
    tree = ast.parse(Path(module_file).read_text())
    out = set()
    for st in tree.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and not st.value.args:
            f = st.value.func
            last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if last in ALIASED_QUERIES:
                out.update(t.id for t in st.targets if isinstance(t, ast.Name))
    return frozenset(out)


@functools.cache
def _const_functions(module_file: str) -> frozenset[str]:
    """Module-level functions of a MindSpore source file evaluated while compiling
    (`@_primexpr` / `@constexpr`)."""
    tree = ast.parse(Path(module_file).read_text())
    out = set()
    for st in tree.body:
        if isinstance(st, ast.FunctionDef):
            for d in st.decorator_list:
                d = d.func if isinstance(d, ast.Call) else d
                last = (
                    d.attr
                    if isinstance(d, ast.Attribute)
                    else d.id
                    if isinstance(d, ast.Name)
                    else ""
                )
                if last in _CONST_DECORATORS:
                    out.add(st.name)
    return frozenset(out)


def _feeds_const_function(fn: ast.FunctionDef, name: str, consts: frozenset[str]) -> bool:
    """Does `fn` pass `<name>.ndim` / `<name>.shape` to a compile-time (`@_primexpr`)
    function? Measured: `ops.split`, `ops.chunk` fed a fallback value fail with "name 'axis'
    is not defined"."""
    sizes = _size_names(fn, name)
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in consts
        ):
            for arg in node.args:
                if (
                    isinstance(arg, ast.Attribute)
                    and arg.attr in ("ndim", "shape")
                    and isinstance(arg.value, ast.Name)
                    and arg.value.id == name
                ) or (isinstance(arg, ast.Name) and arg.id in sizes):
                    return True
    return False


def _size_names(fn: ast.FunctionDef, name: str) -> frozenset[str]:
    """Names `fn` binds to `<name>.shape` (`shape_x = input.shape` in `ops.unique`, then
    `get_x_shape(shape_x)`: measured, written/heldout25b probe `fix25b_m_sqrt_unique`, "The
    input of IsShapeUnKnown should be tuple or list but got AbstractAny"). Not `.ndim`:
    `ops.matrix_norm` passes `ndim = A.ndim` to `_check_matrix_norm_axis` and compiles for
    such a value (probe `fix25b_m_sqrt_matrix_norm`)."""
    out = set()
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == name
        ):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(out)


@functools.cache
def _query_helpers(module_file: str) -> frozenset[str]:
    """Module-level functions of a MindSpore source file that read the shape or dtype of
    their first parameter (`_get_axis(x)` of `ops.mse_loss`: `ops.shape(x)` then
    `ops.tuple_len`)."""
    if not module_file:
        return frozenset()
    tree = ast.parse(Path(module_file).read_text())
    out = set()
    for st in tree.body:
        if isinstance(st, ast.FunctionDef) and st.name.startswith("_"):
            inp = _first_input(st, False)
            if inp and _queries_input(st, inp):
                out.add(st.name)
    return frozenset(out)


def _derived_names(fn: ast.FunctionDef, name: str) -> frozenset[str]:
    """`name` and the names assigned, in source order, from an expression reading one of them
    (`x = F.square(input - target)`): a tensor computed from a JIT Fallback object has an
    unknown rank too (measured, written/heldout17a probes `lz_*`: `ops.mse_loss(x, self.t)`
    with `self.t` set under `if self.t is None` fails in `_get_axis` of the squared
    difference, "The pointer[seq_abs] is null")."""
    names = {name}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and any(
            isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.value)
        ):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


def _helper_query(fn: ast.FunctionDef, name: str, helpers: frozenset[str]) -> bool:
    """Does `fn` give a tensor computed from its input `name` to a module helper that reads its
    shape or dtype (`_get_loss(x, reduction, ...)` -> `_get_axis(x)`)? Not the input itself:
    `ops.max(v)`, `ops.amax(v)`, `ops.min(v)` of such an object compile (measured, written/
    heldout17a probes `lz_max`, `lz_amax`, `lz_min`), their helpers run only for some axes."""
    names = _derived_names(fn, name) - {name}
    if any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in helpers
        and bool(node.args)
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in names
        for node in ast.walk(fn)
    ):
        return True
    # the input itself given to a checking helper as a statement of the body (not a branch):
    # run on every call (`_check_cross_entropy_inputs(input, ...)` reads `input.dtype`;
    # measured, written/heldout27a probes `fix27c_ctr_*`, `fix27c_q_*`: `ops.cross_entropy`
    # of a JIT Fallback value fails, "Failed to infer for primitive:DtypeToEnum")
    return any(
        isinstance(st, ast.Expr)
        and isinstance(st.value, ast.Call)
        and isinstance(st.value.func, ast.Name)
        and st.value.func.id in helpers
        and bool(st.value.args)
        and isinstance(st.value.args[0], ast.Name)
        and st.value.args[0].id == name
        for st in fn.body
    )


def _held_queries(cls: type) -> frozenset[str]:
    """The attributes a cell's `__init__` sets to a shape or dtype primitive (`self.get_shp =
    ops.Shape()` in `nn.Embedding`): `self.get_shp(ids)` in `construct` queries `ids` as
    `P.Shape()(ids)` does. Measured (written/heldout21a probes `hc22_dyn_*`, heldout15a
    `lb23_emb_*`): `nn.Embedding` of a tensor built by JIT Fallback (`ms.Tensor(host list)`)
    fails under LAX, "Kernel select failed: Unsupported op [IsDimUnKnown] on CPU" (it adds the
    shape of a tensor of unknown rank to a tuple); `ops.gather` of it compiles."""
    init = _function_ast(cls.__dict__.get("__init__")) if "__init__" in cls.__dict__ else None
    if init is None:
        return frozenset()
    out = set()
    for node in ast.walk(init):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id == "self"
            and isinstance(node.value, ast.Call)
            and not node.value.args
        ):
            f = node.value.func
            last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if last in ("Shape", "DType"):
                out.add(node.targets[0].attr)
    return frozenset(out)


def _queries_input(
    fn: ast.FunctionDef,
    name: str,
    consts: frozenset[str] = frozenset(),
    helpers: frozenset[str] = frozenset(),
    aliases: frozenset[str] = frozenset(),
    held: frozenset[str] = frozenset(),
) -> bool:
    """Does `fn` (or a function nested in it taking a parameter of the same name) read the
    shape or dtype of its parameter `name`?"""
    if consts and _feeds_const_function(fn, name, consts):
        return True
    if helpers and _helper_query(fn, name, helpers):
        return True
    tested = _in_tests(fn)
    for node in ast.walk(fn):
        if id(node) in tested:
            continue
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "dtype"
            and isinstance(node.value, ast.Name)
            and node.value.id == name
        ):
            return True
        if (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == name
        ):
            f = node.func
            if isinstance(f, ast.Call):  # P.Shape()(x)
                f = f.func
            last = (
                f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            )
            if last in QUERIES or (isinstance(f, ast.Name) and f.id in aliases):
                return True
            if last in held and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
                return True
    return False


def _in_tests(fn: ast.FunctionDef) -> frozenset[int]:
    """The nodes inside the test of an `if` or a conditional expression of `fn`: a shape or
    dtype read there only decides a branch, which MindSpore runs as Python for a JIT Fallback
    value, and the function compiles (measured: `ops.argmax`, written/gen18 probes
    `fix29b_am_*`; `ops.cumsum` and `ops.cumprod`, whose only `input.dtype` reads are
    `if dtype is not None and x.dtype != dtype` / `elif isinstance(input, Tensor) and
    input.dtype in ...`, of `Tensor(np.log(z))`, `Tensor(z.asnumpy())` and `z + Tensor(...)`,
    with and without `dtype=`, and `ops.tanhshrink`, `ops.isreal`, `ops.exp2`, `ops.vecdot`,
    `ops.xlogy`, `ops.cov`: written/heldout39d probes `fix39c_fb_*`; the few that fail on such a
    value all the same are listed as measured, `MEASURED_QUERIES`, `MEASURED_CELL_QUERIES`)."""
    out: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.If, ast.IfExp)):
            out.update(id(n) for n in ast.walk(node.test))
    return frozenset(out)


def _function_ast(obj: object) -> ast.FunctionDef | None:
    try:
        src = textwrap.dedent(inspect.getsource(obj))  # type: ignore[arg-type]
    except (OSError, TypeError):
        return None
    tree = ast.parse(src)
    first = tree.body[0] if tree.body else None
    return first if isinstance(first, ast.FunctionDef) else None


def _first_input(fn: ast.FunctionDef, skip_self: bool) -> str | None:
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if skip_self:
        params = params[1:]
    return params[0] if params else None


def _logs_unconditionally(fn: ast.FunctionDef) -> bool:
    """Does the body (not a branch of it) call `logger.<level>(...)`?"""
    for st in fn.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            f = st.value.func
            if (
                isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                and f.value.id == "logger"
            ):
                return True
    return False


def _logging_functions() -> list[str]:
    """Public MindSpore functions that call `mindspore.log` every time (deprecation notices):
    compiled code that calls them compiles that call too, and MindSpore refuses it ("the
    method or function 'mindspore.log.warning' is not supported in 'construct'")."""
    import mindspore.log as mslog

    out: set[str] = set()
    for prefix, module in (("mindspore", mindspore), ("mindspore.ops", ops), ("mindspore.nn", nn)):
        for name in dir(module):
            obj = getattr(module, name)
            if name.startswith("_") or not inspect.isfunction(obj):
                continue
            if getattr(inspect.getmodule(obj), "logger", None) is not mslog:
                continue
            fn = _function_ast(obj)
            if fn is not None and _logs_unconditionally(fn):
                out.update(_spellings(prefix, name, obj))
    return sorted(out)


def _spellings(prefix: str, name: str, obj: object) -> set[str]:
    """The public name and the defining module's name of a MindSpore function: code reaches
    `mindspore.dtype_to_nptype` as `mstype.dtype_to_nptype` too (`from mindspore.common import
    dtype as mstype`: mindrlhf's `get_exp_cap`, written/zoo probe
    `zoo32_exp_cap_finfo_value_dtype`, "'mindspore.log.warning' is not supported" at LAX)."""
    out = {f"{prefix}.{name}"}
    module = getattr(obj, "__module__", "") or ""
    if module.startswith("mindspore.") and getattr(obj, "__name__", "") == name:
        out.add(f"{module}.{name}")
        # and through a public alias of that module on `mindspore` (`from mindspore import
        # dtype as mstype`: `mindspore.dtype` is `mindspore.common.dtype`)
        defining = sys.modules.get(module)
        for alias in dir(mindspore):
            if not alias.startswith("_") and getattr(mindspore, alias, None) is defining:
                out.add(f"mindspore.{alias}.{name}")
    return out


def _unsupported_statement_functions() -> dict[str, list[str]]:
    """Public MindSpore functions whose own body holds a statement graph mode does not
    support (`import`, `del`): compiled code that calls them compiles them too, and
    MindSpore stops ("Unsupported statement 'Import'"; measured with `ms.set_seed` and
    `ms.save_checkpoint`, written/apisurface probes). Nested functions and classes are not
    part of the body."""
    out: dict[str, list[str]] = {}
    for prefix, module in (("mindspore", mindspore), ("mindspore.ops", ops), ("mindspore.nn", nn)):
        for name in dir(module):
            obj = getattr(module, name)
            if name.startswith("_") or not inspect.isfunction(obj):
                continue
            fn = _function_ast(obj)
            if fn is None:
                continue
            found: set[str] = set()
            stack: list[ast.stmt] = list(fn.body)
            while stack:
                st = stack.pop()
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                if isinstance(st, (ast.Import, ast.ImportFrom)):
                    found.add("Import")
                elif isinstance(st, ast.Delete):
                    found.add("Delete")
                stack.extend(c for c in ast.iter_child_nodes(st) if isinstance(c, ast.stmt))
            if found:
                for spelling in _spellings(prefix, name, obj):
                    out[spelling] = sorted(found)
    return dict(sorted(out.items()))


def main() -> None:
    cells: list[str] = []
    for name in sorted(dir(nn)):
        cls = getattr(nn, name)
        if not (inspect.isclass(cls) and issubclass(cls, nn.Cell)) or cls is nn.Cell:
            continue
        construct = getattr(cls, "construct", None)
        fn = _function_ast(construct) if construct is not None else None
        inp = _first_input(fn, True) if fn is not None else None
        if fn is not None and inp and _queries_input(fn, inp, held=_held_queries(cls)):
            cells.append(f"mindspore.nn.{name}")
    functions: list[str] = []
    for name in sorted(dir(ops)):
        obj = getattr(ops, name)
        if name.startswith("_") or not inspect.isfunction(obj):
            continue
        fn = _function_ast(obj)
        inp = _first_input(fn, False) if fn is not None else None
        source = inspect.getsourcefile(obj) or ""
        consts = _const_functions(source)
        if f"mindspore.ops.{name}" in MEASURED_COMPILE:
            continue
        if fn is not None and inp and _queries_input(fn, inp, consts, _query_helpers(source), _query_aliases(source)):
            functions.append(f"mindspore.ops.{name}")
    data = {
        "logging_functions": _logging_functions(),
        "unsupported_statement_functions": _unsupported_statement_functions(),
        "_source": f"derived by tests/npu_lsp/difftest/derive_input_queries.py from MindSpore {mindspore.__version__}",
        "cells": sorted(set(cells) | MEASURED_CELL_QUERIES),
        "functions": sorted(set(functions) | MEASURED_QUERIES),
        "functions_unless_given": MEASURED_UNLESS_GIVEN,
        "functions_argument": MEASURED_ARGUMENT_QUERIES,
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(len(cells), "cells,", len(functions), "functions ->", OUT)


if __name__ == "__main__":
    main()
