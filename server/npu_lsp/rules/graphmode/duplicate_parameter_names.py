"""MS154: a jit function reaching two module-level networks whose parameters share names."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule

# mindspore.nn layers that own parameters, with the name their first parameter gets when the
# layer is not held by another Cell (Cell.__setattr__ prefixes names only for sub-cells).
_NN_LAYER_PARAM = {
    **dict.fromkeys(
        (
            "Dense",
            "BiDense",
            "Conv1d",
            "Conv2d",
            "Conv3d",
            "Conv1dTranspose",
            "Conv2dTranspose",
            "Conv3dTranspose",
            "Embedding",
        ),
        "weight",
    ),
    **dict.fromkeys(
        ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm"), "gamma"
    ),
    **dict.fromkeys(("LSTM", "GRU", "RNN"), "w_ih_list.0"),
    **dict.fromkeys(("LSTMCell", "GRUCell", "RNNCell"), "weight_ih"),
}
_NN_CONTAINERS = frozenset({"SequentialCell", "CellList"})
# Builders whose result is a function of the given function (its globals are reached).
_GRAD_BUILDERS = frozenset({"value_and_grad", "grad", "vjp", "jvp", "jacfwd", "jacrev"})


@rule(code="MS154", name="duplicate-parameter-names", severity="error", family="graphmode")
class DuplicateParameterNames(GraphRule):
    """## What it does
    Flags a `@jit` function or a `construct` that uses two networks built at module level
    (directly, through the functions it calls and the functions given to
    `value_and_grad`/`grad`, or through `ParameterTuple(net.trainable_params())` gathered in
    `__init__`) whose parameters carry the same names, such as two instances of one Cell
    class.

    ## Why is this bad?
    A parameter is named after the attribute path that holds it inside its top-level Cell
    (`fc1.weight`, `0.weight` in a `SequentialCell`, `weight` for a bare `nn.Dense`); two
    separately built networks of the same layout therefore have equal names. A compiled
    function takes every parameter it reaches as a graph input named after the parameter, and
    MindSpore stops with `RuntimeError: The parameter ... its name 'fc1.weight' already exists.
    Please set a unique name for the parameter.` at every syntax level. PyNative runs the code.

    ## Example
    ```python
    online = QNet()
    target = QNet()

    @ms.jit
    def td_error(obs, next_obs):
        return online(obs) - target(next_obs)
    ```

    ## Use instead
    Hold both networks in one Cell (their names become `online.fc1.weight` and
    `target.fc1.weight`), or give one of them unique names:
    ```python
    class Agent(nn.Cell):
        def __init__(self):
            super().__init__()
            self.online = QNet()
            self.target = QNet()
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: parameter names that clash (`its name 'weight' already exists`),
      there for sub-cells in a plain list; the same error for two module-level networks was
      measured on MindSpore 2.10 (written set `misc`: `dqn_td_target_jit`,
      `gan_generator_discriminator_step`).
    """

    # Once per module, not per function: whether a function clashes depends on module-level
    # networks and on classes elsewhere in the file, so the language server's incremental
    # analysis (which re-walks only the chunks an edit can change) reruns it on every edit.
    nodes = (ast.Module,)
    graph_only = False

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        if len(_module_networks(ctx)) < 2:
            return  # most files: nothing that could clash
        for fn in ast.walk(node):
            if isinstance(fn, ast.FunctionDef):
                yield from self._check_function(fn, ctx)

    def _check_function(self, node: ast.FunctionDef, ctx: Context) -> Iterable[Diagnostic]:
        scope = ctx.scopes.scope_for(node)
        if scope is None:
            return
        if scope.kind not in ("jit", "construct"):
            return
        table = _module_networks(ctx)
        if len(table) < 2:
            return  # most files: nothing that could clash
        passed = _passed_by_name(ctx)
        if scope.kind == "jit" and node in ctx.tree.body:
            reached = [n for n in _reached_globals(node, ctx) if n not in passed]
        elif scope.kind == "construct" and node.name == "construct":
            reached = _collected_by_constructor(node, ctx, passed)
            reached += [n for n in _reached_globals(node, ctx) if n not in passed]
        else:
            return
        seen: dict[str, set[str]] = {}
        for name in reached:
            names = table.get(name)
            if not names:
                continue
            for other, other_names in seen.items():
                common = sorted(names & other_names)
                if common:
                    shown = common[0] + "*" if common[0].endswith(".") else common[0]
                    yield ctx.diagnostic(
                        self,
                        ctx.head_span(node),
                        f"`{other}` and `{name}` are separate networks whose parameters share "
                        f"names (`{shown}`); compiling `{node.name}` fails with "
                        f"\"The parameter ... its name '{shown}' already exists\"",
                    )
                    return
            seen[name] = names


def _module_networks(ctx: Context) -> dict[str, set[str]]:
    """Module-level `name = CellClass(...)` (assigned once) -> the names its parameters
    start with."""
    cached = ctx.cache.get("MS154")
    if isinstance(cached, dict):
        return cached
    built: dict[str, list[ast.expr]] = {}
    for st in ctx.tree.body:
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        value = st.value if t is n and st.value is not None else None
                        built.setdefault(n.id, []).append(value or ast.Constant(None))
    table: dict[str, set[str]] = {}
    for name, values in built.items():
        if len(values) != 1 or not isinstance(values[0], ast.Call):
            continue
        names = _param_prefixes(values[0], ctx, 0)
        if names:
            table[name] = names
    ctx.cache["MS154"] = table
    return table


def _passed_by_name(ctx: Context) -> dict[str, list[ast.Call]]:
    """The calls each name is handed to by name (a Cell constructor that stores a network on
    `self` prefixes its parameter names)."""
    cached = ctx.cache.get("MS154-passed")
    if isinstance(cached, dict):
        return cached
    passed: dict[str, list[ast.Call]] = {}
    for call in ast.walk(ctx.tree):
        if isinstance(call, ast.Call):
            for a in [*call.args, *(k.value for k in call.keywords)]:
                if isinstance(a, ast.Name):
                    passed.setdefault(a.id, []).append(call)
    ctx.cache["MS154-passed"] = passed
    return passed


_PARAM_GETTERS = frozenset({"trainable_params", "get_parameters", "untrainable_params"})


def _collected_by_constructor(
    construct: ast.FunctionDef, ctx: Context, passed: dict[str, list[ast.Call]]
) -> list[str]:
    """Module-level networks whose parameters (only) a Cell gathers in `__init__`
    (`ParameterTuple(net.trainable_params())`) when it is built at module level from them:
    their names keep no prefix, as the networks themselves are not stored on `self`."""
    owner = ctx.parent(construct)
    if not isinstance(owner, ast.ClassDef):
        return []
    init = next(
        (s for s in owner.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is None:
        return []
    params = [a.arg for a in [*init.args.posonlyargs, *init.args.args][1:]]
    stored = {
        st.value.id
        for st in ast.walk(init)
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Name)
    }
    gathered = {
        n.func.value.id
        for n in ast.walk(init)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in _PARAM_GETTERS
        and isinstance(n.func.value, ast.Name)
    }
    out: list[str] = []
    for st in ctx.tree.body:
        if not (isinstance(st, ast.Assign) and isinstance(st.value, ast.Call)):
            continue
        call = st.value
        if not (isinstance(call.func, ast.Name) and call.func.id == owner.name):
            continue
        bound = dict(zip(params, call.args, strict=False))
        bound.update((k.arg, k.value) for k in call.keywords if k.arg)
        for p, arg in bound.items():
            if (
                p in gathered
                and p not in stored
                and isinstance(arg, ast.Name)
                and passed.get(arg.id) == [call]
                and arg.id not in out
            ):
                out.append(arg.id)
    return out


def _param_prefixes(call: ast.Call, ctx: Context, depth: int) -> set[str]:
    """Leading parts of the parameter names of the network `call` builds (empty: unknown or
    none, which never reports)."""
    qual = ctx.qualname(call.func)
    if qual is None or depth > 3:
        return set()
    last = qual.rpartition(".")[2]
    if qual.startswith("mindspore."):
        if last in _NN_LAYER_PARAM and ".nn" in qual:
            return {_NN_LAYER_PARAM[last]}
        if last in _NN_CONTAINERS and ".nn" in qual:
            return _container_prefixes(call, ctx, depth)
        return set()
    if not ctx.scopes.is_cell_class(qual):
        return set()
    found = ctx.scopes._class(qual)
    if found is None:
        return set()
    out: set[str] = set()
    for cls in _class_chain(found[1].node, ctx):
        init = next(
            (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"),
            None,
        )
        if init is None:
            continue
        for st in ast.walk(init):
            if not (isinstance(st, ast.Assign) and isinstance(st.value, ast.Call)):
                continue
            for t in st.targets:
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                    and _owns_parameters(st.value, ctx, depth + 1)
                ):
                    sub = ctx.qualname(st.value.func) or ""
                    out.add(t.attr if sub.endswith(".Parameter") else t.attr + ".")
    return out


def _class_chain(cls: ast.ClassDef, ctx: Context) -> Iterator[ast.ClassDef]:
    yield cls
    for base in cls.bases:
        qual = ctx.qualname(base)
        found = ctx.scopes._class(qual) if qual else None
        if found is not None and found[1].node is not cls:
            yield found[1].node


def _owns_parameters(call: ast.Call, ctx: Context, depth: int) -> bool:
    qual = ctx.qualname(call.func)
    if qual is None:
        return False
    if qual.rpartition(".")[2] == "Parameter" and qual.startswith("mindspore"):
        return True
    return bool(_param_prefixes(call, ctx, depth))


def _container_prefixes(call: ast.Call, ctx: Context, depth: int) -> set[str]:
    items: list[ast.expr] = list(call.args)
    if len(items) == 1 and isinstance(items[0], (ast.List, ast.Tuple)):
        items = list(items[0].elts)
    if any(isinstance(e, ast.Starred) for e in items):
        return set()
    return {
        f"{i}."
        for i, e in enumerate(items)
        if isinstance(e, ast.Call) and _owns_parameters(e, ctx, depth + 1)
    }


def _reached_globals(fn: ast.FunctionDef, ctx: Context) -> list[str]:
    """Module-level names `fn` reads, in order, following module-level functions it calls
    and the functions given to `value_and_grad`/`grad` at module level."""
    functions = {s.name: s for s in ctx.tree.body if isinstance(s, ast.FunctionDef)}
    builders: dict[str, list[str]] = {}
    for st in ctx.tree.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
            qual = ctx.qualname(st.value.func) or ""
            if qual.rpartition(".")[2] in _GRAD_BUILDERS and st.value.args:
                first = st.value.args[0]
                if isinstance(first, ast.Name):
                    for t in st.targets:
                        if isinstance(t, ast.Name):
                            builders[t.id] = [first.id]
    out: list[str] = []
    todo = [fn]
    done: set[str] = set()
    while todo:
        f = todo.pop(0)
        if f.name in done:
            continue
        done.add(f.name)
        local = {a.arg for a in ast.walk(f.args) if isinstance(a, ast.arg)}
        local |= {
            n.id for n in ast.walk(f) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        for n in ast.walk(f):
            if not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)) or n.id in local:
                continue
            for name in [n.id, *builders.get(n.id, [])]:
                if name in functions:
                    todo.append(functions[name])
                elif name not in out:
                    out.append(name)
    return out
