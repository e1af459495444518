"""MS222: a list or dict filled in place by a sub-cell's `construct`, then read by the caller."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.container_mutated_in_helper import fills_in_place
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, body_statements
from npu_lsp.rules.graphmode.self_list_empty_in_graph import sub_cell_class


@rule(code="MS222", name="container-filled-by-sub-cell", severity="error", family="graphmode")
class ContainerFilledBySubCell(GraphRule):
    """## What it does
    Flags a call in compiled code of a sub-cell of a class of the file (`self.layer(x,
    cache, "a")`, or `layer(x, cache, name)` in a `for` over a CellList of one class) whose
    `construct` fills a list or dict argument in place (`cache[name] = (k, v)`,
    `outs.append(k)`), when the caller bound that container to a display and then reads
    what only the sub-cell put there: a constant key the display lacks (`cache["layer_1"]`
    after `cache = {"layer_0": past}`, or any key of `{}`), an index past the list's
    length, or `ops.stack` / `ops.concat` of a list given empty.

    ## Why is this bad?
    A sub-cell's `construct` is compiled as a graph of its own, and lists and dicts are
    values in a graph: the sub-cell fills its own copy and the caller's container stays as
    it was. MindSpore 2.10 fails at LAX and STRICT: `ValueError: The key layer_1 does not
    exist in the dict:ValueAny` (`dict:{}` for an empty one), `list_getitem evaluator index
    should be in range[-1, 1), but got 1` for a list given with one item. A key the
    display already holds, or no read at all, compiles (HF-style KV-cache dicts passed
    down a decoder's layers).

    ## Example
    ```python
    class Layer(nn.Cell):
        def construct(self, x, cache, name):
            cache[name] = self.kv(x)
            return x


    class Decoder(nn.Cell):
        def construct(self, x):
            cache = {}
            x = self.layer(x, cache, "a")
            return x, cache["a"]
    ```

    ## Use instead
    Return what the sub-cell makes and store it in the caller:
    ```python
    class Layer(nn.Cell):
        def construct(self, x):
            return x, self.kv(x)


    class Decoder(nn.Cell):
        def construct(self, x):
            cache = {}
            x, cache["a"] = self.layer(x)
            return x, cache["a"]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 4 (containers mutated in compiled code: the change is not seen
      outside; MS151 for helper functions and methods).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written/heldout26a case
      `r2_kv_cache_dict_inner_layers_tuple_out` and probes `fix27a_celldict_*` (a key
      the display lacks, an empty dict, a single sub-cell, a list appended to: rejected;
      keys the display holds, no read: compile).
    """

    nodes = (ast.Expr, ast.Assign)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        return value is ast.Call

    def applies(self, ctx: Context) -> bool:
        return _construct_fills(ctx)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, (ast.Expr, ast.Assign))
        call = node.value
        if type(call) is not ast.Call or not call.args or ctx.function is None:
            return ()
        a = analyzer(ctx)
        fn = ctx.function
        if not any(type(x) is ast.Name and type(a.single_assignment(x.id, fn)) in (ast.List, ast.Dict) for x in call.args):
            return ()
        cls = sub_cell_class(call.func, ctx)
        if cls is None or not ctx.scopes.is_cell_class(f"{ctx.scopes.info.module}.{cls.name}"):
            return ()
        construct = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "construct"), None)
        if construct is None:
            return ()
        return fills_in_place(self, node, call, construct, 1, ctx, warn=False)


#: `ctx.cache` key of `_construct_fills`' answer for the file
_FILLS = "MS222-construct-fills"
#: methods that put items into a list or dict
_FILLERS = frozenset({"append", "extend", "insert", "update", "setdefault"})


def _construct_fills(ctx: Context) -> bool:
    """Does a statement of some `construct` of the file's classes fill one of its
    parameters in place (`cache[name] = ...`, `outs.append(...)`, `d.update(...)`), one
    of two or more it takes without a default (the data and the container)?
    Without one no sub-cell fills a container it is given. Once per file, over the
    statements of each `construct` (`body_statements`, shared with the rules that read
    them), not over the text: every absent substring would cost a scan of its own."""
    hit: bool | None = ctx.cache.get(_FILLS)
    if hit is None:
        hit = ctx.cache[_FILLS] = any(_fills_parameter(cls.methods.get("construct"), ctx) for cls in ctx.scopes.info.classes.values())
    return hit


def _fills_parameter(construct: ast.FunctionDef | ast.AsyncFunctionDef | None, ctx: Context) -> bool:
    if construct is None:
        return False
    args = construct.args
    required = args.args[1 : len(args.args) - len(args.defaults)]
    if len(required) < 2:
        # a sub-cell given a container takes the data too (`construct(self, x, cache)`);
        # the statements of the many `construct(self, x, mask=None)` are never looked at
        return False
    params = {x.arg for x in required}
    for st in body_statements(construct.body, ctx):
        t = type(st)
        if t is ast.Expr:
            v = st.value  # type: ignore[attr-defined]
            if (
                type(v) is ast.Call
                and type(v.func) is ast.Attribute
                and v.func.attr in _FILLERS
                and type(v.func.value) is ast.Name
                and v.func.value.id in params
            ):
                return True
        elif t is ast.Assign or t is ast.AugAssign:
            for target in st.targets if t is ast.Assign else (st.target,):  # type: ignore[attr-defined]
                if type(target) is ast.Subscript and type(target.value) is ast.Name and target.value.id in params:
                    return True
    return False
