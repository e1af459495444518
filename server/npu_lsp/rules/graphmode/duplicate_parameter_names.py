"""MS154: a jit function reaching two module-level networks whose parameters share names."""

from __future__ import annotations

import ast
import bisect
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from npu_lsp.astutil import is_name_char
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.modes import sets_graph_mode
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, called_only_at_top
from npu_lsp.rules.graphmode.optimizer_facts import OptimizerFacts, optimizer_facts
from npu_lsp.rules.graphmode.parameter_list_entry_argument import module_calls
from npu_lsp.rules.graphmode.parameter_receivers import builds_optimizer
from npu_lsp.scope import GraphScope

# mindspore.nn layers that own parameters, with the names (first dotted part) their parameters
# get when the layer is not held by another Cell (Cell.__setattr__ prefixes names only for
# sub-cells); derived from MindSpore 2.10 by tests/npu_lsp/difftest/derive_layer_parameters.py.
_NN_LAYER_PARAM: dict[str, tuple[str, ...]] = {
    layer: tuple(names)
    for layer, names in json.loads(
        (Path(__file__).with_name("ms_layer_parameters.json")).read_text(encoding="utf-8")
    )["layers"].items()
}
_NN_CONTAINERS = frozenset({"SequentialCell", "CellList"})
# Builders whose result is a function of the given function (its globals are reached).
_GRAD_BUILDERS = frozenset({"value_and_grad", "grad", "vjp", "jvp", "jacfwd", "jacrev"})


#: a call of a capitalised name (cheap to scan); kept when the name is a layer of the table
_LAYER_CALL = re.compile(r"([A-Z][A-Za-z0-9]*)\(")
#: `_LAYER_CALL` in the reversed text: the same names, each reversed (the greedy run backs
#: off to the last capital it passed, which is the name's first one). Led by the literal
#: `(`, which `sre` skips to, where `_LAYER_CALL` tries its class at every position of a
#: range: 5.6 M instructions on bench_lsp_engine's 5,000-line file.
_LAYER_CALL_REVERSED = re.compile(r"\(([A-Za-z0-9]*[A-Z])")


def _layer_calls(ctx: Context) -> tuple[list[str] | None, list[int]]:
    """What `_two_layer_calls` reads: with no `\r` in the text, its lines (`ctx.lines` are
    then its `\n` lines) and no hits, the ranges asked about being searched then; else no
    lines and the (`\n`-numbered) lines of every layer call of the whole text.

    A match of `_LAYER_CALL` never spans lines, so the lines of a range hold the same
    matches as the whole text there, and most of a file is never searched. (The whole text
    was searched first: 13 M instructions, a fifth of a parse, on a 5,000-line file.)"""
    text = ctx.text
    if "\r" not in text:
        return ctx.lines, []
    hits: list[int] = []
    line, pos = 1, 0
    for m in _LAYER_CALL.finditer(text):
        if m.group(1) not in _NN_LAYER_PARAM:
            continue
        line += text.count("\n", pos, m.start())
        pos = m.start()
        hits.append(line)
    return None, hits


def _two_layer_calls(found: tuple[list[str] | None, list[int]], first: int, last: int) -> bool:
    """Does the text call a layer of `_NN_LAYER_PARAM` (`_LAYER_CALL`, strings and comments
    included) at least twice on lines first..last (`_layer_calls`)?"""
    lines, hits = found
    if lines is None:
        return bisect.bisect_right(hits, last) - bisect.bisect_left(hits, first) >= 2
    count = 0
    for m in _LAYER_CALL_REVERSED.finditer("\n".join(lines[first - 1 : last])[::-1]):
        if m.group(1)[::-1] in _NN_LAYER_PARAM:
            count += 1
            if count == 2:
                return True
    return False


def _own_calls(fn: ast.FunctionDef) -> Iterator[ast.Call]:
    """Calls in `fn`'s body, not in functions, lambdas or classes nested in it."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Call):
            yield n
        stack.extend(ast.iter_child_nodes(n))


def _branch_path(node: ast.AST, fn: ast.AST, ctx: Context) -> dict[int, int]:
    """For each `if`/conditional expression around `node` inside `fn`: which arm holds it."""
    path: dict[int, int] = {}
    child, parent = node, ctx.parent(node)
    while parent is not None and parent is not fn:
        if isinstance(parent, (ast.If, ast.IfExp)):
            body = parent.body if isinstance(parent, ast.If) else [parent.body]
            orelse = parent.orelse if isinstance(parent, ast.If) else [parent.orelse]
            if child in body:
                path[id(parent)] = 1
            elif child in orelse:
                path[id(parent)] = 2
        child, parent = parent, ctx.parent(parent)
    return path


def _exclusive(a: ast.AST, b: ast.AST, fn: ast.AST, ctx: Context) -> bool:
    """Do `a` and `b` sit in different arms of one `if` (at most one of them runs)?"""
    pa, pb = _branch_path(a, fn, ctx), _branch_path(b, fn, ctx)
    return any(k in pb and pb[k] != v for k, v in pa.items())


@rule(code="MS154", name="duplicate-parameter-names", severity="error", family="graphmode")
class DuplicateParameterNames(GraphRule):
    """## What it does
    Flags a `@jit` function or a `construct` that uses two networks built at module level
    (directly, through the functions it calls, the functions given to
    `value_and_grad`/`grad` and the `construct` of module-level instances of its Cells, or
    through `ParameterTuple(net.trainable_params())` gathered in `__init__`, or through
    module-level lists of their parameters it reads (`ema_params = net_ema.trainable_params()`,
    also in `ParameterTuple(...)` / `list(...)`; written/heldout43a probes `h43a_pn_*`), not when
    `.clone(prefix=...)` renames the copies, unless two such copies read by `construct`
    take one prefix: `ParameterTuple(g.trainable_params()).clone(prefix="ema")` beside the
    same of `g_ema`, both named `ema.0.weight`...) whose parameters
    carry the same names, such as two instances of one Cell class or two networks from one
    factory function (`teacher = mlp(64)`, `student = mlp(8)`). Also a jit function
    defined and returned by a module-level factory (`def make_step(student, teacher):`
    building the optimizer, `forward` and an `@ms.jit` step) that reads two of the
    factory's parameters, when module-level code calls the factory with two such networks
    and calls what it returns (in a loop of born-again generations too). Also flags a Parameter of the user's named like the state a built-in optimizer
    creates for itself (`name="global_step"`, `"momentum"`, `"beta1_power"`, or
    `params.clone(prefix="accum")` beside `nn.SGD`, whose own state is `accum.*`; the names
    per optimizer are measured from MindSpore 2.10 in `ms_optimizer_state.json`), compiled
    into one graph with a call of that optimizer: a jit function reading both at module
    level, or a `construct` of a Cell that keeps its names unprefixed
    (`auto_prefix=False`, `TrainOneStepCell` subclasses), also one a jit function reaches in
    PYNATIVE_MODE; not when module-level code alone calls that Cell (the top cell of its own
    graph compiles). And two module-level optimizers
    called in one jit function (`nn.Momentum` on the weights and `nn.Adam` on architecture
    parameters in a DARTS step): each owns an unprefixed `global_step`. And copies made in compiled code of
    parameters the graph already holds: `copy.deepcopy(self.student)` beside a call of
    `self.student`, or a new instance of the class made in its own `construct`
    (`self.__class__(...)`, `type(self)(...)`) when it owns parameters. And two
    `mindspore.nn` layers built inside one compiled function whose parameters share a bare
    name (`nn.Dense(...)` twice in a `construct`: both own a `weight`). And Parameters given
    the same literal `name=` that meet in one graph: both read by a jit function, both passed
    to a jit function or a Cell instance, or one passed to a Cell whose `__init__` makes a
    Parameter of that name (`net(Parameter(t, name="bias"))` with `self.bias =
    Parameter(..., name="bias")`). And Parameters of two module-level networks given to a
    jit function as separate arguments under one name (`ema(online.weight,
    target.weight)` of two `nn.Dense`, `model.scale` beside `target.scale`; written/heldout34b
    probes `fix34d_pt_jit_single_params`, `fix35a_pt_two_single_same_name_*`, rejected read
    or assigned; `net.weight` beside `net.bias` compiles).

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
    - Two built-in optimizers stepped in one jit function clash on their own `global_step`,
      also when each is stepped by a module-level `nn.TrainOneStepCell(net, opt)` (written
      set `heldout35a`, case `r2_disc_gan_trainonestep_cells_clean`, probes `fix35f_tos_*`:
      refused at both levels; one such cell, or each in its own jit function, compiles).
    - A Cell's own state named like its optimizer's (`clone(prefix="stat")` beside `nn.SGD`)
      clashes whenever its `construct` is compiled: in GRAPH_MODE, and in a PyNative script
      (no mode set) when an `@ms.jit` function calls the Cell (written/train probes
      `clone_prefix_*`, `trainonestep_subclass_global_step_param`).
    - A jit step returned by a factory given a student and a teacher: written set
      `heldout38d`, case `ban_born_again_generations_jit_clean` and probes `fix38d_fac_*`
      (refused at both levels, also inline `make_step(Student(), Teacher())` and a
      forward-only step; the same network twice, or a step reading one, compiles).
    """

    # Once per module, not per function: whether a function clashes depends on module-level
    # networks and on classes elsewhere in the file, so the language server's incremental
    # analysis (which re-walks only the chunks an edit can change) reruns it on every edit.
    nodes = (ast.Module,)
    graph_only = False

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        if (ctx.mentions("clone(") or ctx.mentions("Parameter(") or ctx.mentions("jit")) and builds_optimizer(
            ctx, set(optimizer_facts())
        ):
            for fn in ast.walk(node):
                if isinstance(fn, ast.FunctionDef):
                    yield from self._optimizer_state_clash(fn, ctx)
        if ctx.mentions("deepcopy(") or ctx.mentions("__class__(") or ctx.mentions("type(self)("):
            yield from self._copies_in_graph(ctx)
        yield from self._layers_built_in_graph(ctx)
        if ctx.mentions("name=") and _may_bind_named_parameters(ctx.text):
            yield from self._named_parameters_clash(ctx)
        if ctx.mentions("jit"):
            yield from self._factory_steps(ctx)
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
            yield from self._arguments_clash(node, table, ctx)
            reached = [n for n in _reached_globals(node, ctx) if n not in passed]
        elif scope.kind == "construct" and node.name == "construct":
            reached = _collected_by_constructor(node, ctx, passed)
            reached += [n for n in _reached_globals(node, ctx) if n not in passed]
        else:
            return
        groups = [(f"`{name}`", table[name]) for name in reached if table.get(name)]
        if scope.kind == "construct" and ctx.mentions("clone("):
            groups += _cloned_by_constructor(node, ctx, table)
        seen: dict[str, set[str]] = {}
        for name, names in groups:
            for other, other_names in seen.items():
                common = sorted(names & other_names)
                if common:
                    shown = common[0] + "*" if common[0].endswith(".") else common[0]
                    yield ctx.diagnostic(
                        self,
                        ctx.head_span(node),
                        f"{other} and {name} are separate networks whose parameters share "
                        f"names (`{shown}`); compiling `{node.name}` fails with "
                        f"\"The parameter ... its name '{shown}' already exists\"",
                    )
                    return
            seen[name] = names


    def _factory_steps(self, ctx: Context) -> Iterable[Diagnostic]:
        """A jit function defined in a module-level factory (`def make_step(student,
        teacher): ... @ms.jit def step(...)`, returned) that reads two of the factory's
        parameters, directly or through the factory's own functions and the ones it gives
        `value_and_grad`: a module-level call of the factory handing it two networks whose
        parameters share names, whose result is then called, fails to compile like two
        module-level networks read by a jit function (measured, written/heldout38d case
        `ban_born_again_generations_jit_clean` and probes `fix38d_fac_*`: `Student()` and
        `Teacher()` both storing `fc1` clash, in a loop of generations too; the same network
        twice, names that differ, or only one of them read compile)."""
        for factory in ctx.tree.body:
            if not isinstance(factory, ast.FunctionDef):
                continue
            for inner in factory.body:
                if isinstance(inner, ast.FunctionDef) and inner.decorator_list:
                    scope = ctx.scopes.scope_for(inner)
                    if scope is not None and scope.kind == "jit":
                        yield from self._factory_step(factory, inner, ctx)

    def _factory_step(self, factory: ast.FunctionDef, step: ast.FunctionDef, ctx: Context) -> Iterable[Diagnostic]:
        a = factory.args
        params = [p.arg for p in (*a.posonlyargs, *a.args)]
        reached = [n for n in _closure_reads(step, factory, ctx) if n in params]
        returned = any(isinstance(r, ast.Return) and isinstance(r.value, ast.Name) and r.value.id == step.name for r in _own_nodes(factory))
        if len(reached) < 2 or not returned or a.vararg or a.kwarg:
            return
        for call in module_calls(ctx):
            if not (isinstance(call.func, ast.Name) and call.func.id == factory.name and _result_called(call, ctx)):
                continue
            if call.keywords or any(isinstance(x, ast.Starred) for x in call.args):
                continue
            given = dict(zip(params, call.args, strict=False))
            seen: list[tuple[str, ast.AST, set[str]]] = []
            for name in reached:
                arg = given.get(name)
                found = _network_at(arg, call.lineno, ctx, 0) if arg is not None else None
                if found is None:
                    continue
                built, names = found
                for other, other_built, other_names in seen:
                    common = sorted(names & other_names)
                    if common and built is not other_built:
                        shown = common[0] + "*" if common[0].endswith(".") else common[0]
                        yield ctx.diagnostic(
                            self,
                            call,
                            f"`{other}` and `{name}` of `{factory.name}` are given separate networks whose "
                            f"parameters share names (`{shown}`); compiling its `{step.name}` fails with "
                            f"\"The parameter ... its name '{shown}' already exists\"",
                        )
                        return
                seen.append((name, built, names))

    def _arguments_clash(self, node: ast.FunctionDef, table: dict[str, set[str]], ctx: Context) -> Iterable[Diagnostic]:
        """A module-level call of the jit function `node` giving it, as separate arguments,
        Parameters of two module-level networks with one name (`f(net.weight,
        ema_net.weight)` of two `nn.Dense`, `ema(model.scale, target.scale)`): each becomes
        a graph parameter under its own name, and the second is refused, read or assigned
        (measured, written/heldout34b probes `fix34d_pt_jit_single_params`,
        `fix35a_pt_two_single_same_name_*`; `net.weight` beside `net.bias`, or one of them
        alone, compile)."""
        for call in module_calls(ctx):
            if not (isinstance(call.func, ast.Name) and call.func.id == node.name):
                continue
            seen: dict[str, ast.expr] = {}
            for arg in (*call.args, *(k.value for k in call.keywords)):
                if not (isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.attr in table.get(arg.value.id, ())):
                    continue
                first = seen.setdefault(arg.attr, arg)
                if first is not arg and isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name) and first.value.id != arg.value.id:
                    yield ctx.diagnostic(
                        self,
                        arg,
                        f"`{ctx.segment(first)}` and `{ctx.segment(arg)}` are two Parameters named '{arg.attr}' given to the compiled `{node.name}`; compiling fails with \"The parameter ... its name '{arg.attr}' already exists\": read them as globals, or rename one network's Parameters",
                    )
                    break

    def _named_parameters_clash(self, ctx: Context) -> Iterable[Diagnostic]:
        """Parameters given the same `name=` reaching one graph: read as free variables by a
        jit function, passed together to a jit function or a Cell instance, or passed to a
        Cell whose own Parameter carries that name. Measured (MindSpore's tests
        test_parameter_ms_function_1, test_parameter_out_of_cell_2,
        test_parameter_in_and_out_cell_with_same_name; written/mstests probes `p154_*`):
        "The parameter ... its name 'name_a' already exists" at LAX and STRICT."""
        index = _ScopeIndex(ctx)
        for sc in index.scopes:
            own = index.own(sc)
            for fn in own:
                if not isinstance(fn, ast.FunctionDef):
                    continue
                scope = ctx.scopes.scope_for(fn)
                if scope is None or scope.kind != "jit" or fn.name == "construct":
                    continue
                clash = _clash(_free_parameters(fn, sc, index))
                if clash:
                    yield ctx.diagnostic(
                        self,
                        fn,
                        f"`{fn.name}` reads {clash[1]} and {clash[2]}, Parameters both named '{clash[0]}': a graph takes each Parameter as an input named after it (MindSpore: its name '{clash[0]}' already exists); give them unique names",
                    )
            for call in own:
                if (
                    not isinstance(call, ast.Call)
                    or not isinstance(call.func, ast.Name)
                    or not call.args
                    or not index.graph_callee(call.func.id, sc)
                ):
                    continue
                given: list[tuple[str, str]] = []
                for arg in call.args:
                    pname = _named_value(arg, sc, index)
                    if pname is not None:
                        given.append((pname, f"`{ctx.segment(arg)}`"))
                if not given:
                    continue
                held = _cell_instance_parameters(call.func.id, sc, index)
                clash = _clash(given + [(n, f"`{call.func.id}`'s own Parameter") for n in held])
                if clash:
                    yield ctx.diagnostic(
                        self,
                        call,
                        f"{clash[1]} and {clash[2]} are Parameters both named '{clash[0]}' in one graph (MindSpore: its name '{clash[0]}' already exists); give them unique names",
                    )

    def _layers_built_in_graph(self, ctx: Context) -> Iterable[Diagnostic]:
        """Two `mindspore.nn` layers built inside one compiled function: a layer built there
        belongs to no Cell, so its parameters keep their bare names. Measured on MindSpore
        2.10: two `nn.Dense` built in a `@jit` function or a `construct` fail at both levels
        ("its name 'weight' already exists"); one `nn.Dense`, or `nn.LayerNorm` (`gamma`)
        beside `nn.Dense` (`weight`), or `nn.Dense` beside `self.fc` (`fc.weight`) compile."""
        found = _layer_calls(ctx)
        if found[0] is None and len(found[1]) < 2:
            return  # fewer than two in the whole text
        for scope in list(ctx.scopes.scopes.values()):
            fn = scope.function
            if scope.kind not in ("jit", "construct") or type(fn) is not ast.FunctionDef:
                continue
            end = fn.end_lineno or fn.lineno
            if not _two_layer_calls(found, fn.lineno, end):
                continue  # cheap: fewer than two layer calls in its lines
            seen: dict[str, ast.Call] = {}
            for call in _own_calls(fn):
                q = ctx.qualname(call.func) or ""
                if not q.startswith("mindspore.nn."):
                    continue
                names = _NN_LAYER_PARAM.get(q.rsplit(".", 1)[-1], ())
                name = next((n for n in names if n in seen), None)
                if name is None:
                    seen.update(dict.fromkeys(names, call))
                    continue
                first = seen[name]
                if not _exclusive(first, call, fn, ctx):
                    yield ctx.diagnostic(
                        self,
                        call,
                        f"`{ctx.segment(call)}` and `{ctx.segment(first)}` are both built inside compiled `{fn.name}`, outside any Cell, so both name a parameter `{name}`: compiling fails with \"its name '{name}' already exists\"; build them in `__init__`",
                    )
                    break

    def _copies_in_graph(self, ctx: Context) -> Iterable[Diagnostic]:
        """A copy of parameters the graph already holds, made in compiled code: measured,
        `copy.deepcopy(self.student)` called beside `self.student` ("its name
        'student.weight' already exists") and `self.__class__(...)` in the class's own
        `construct` ("its name 'fc.weight' already exists") fail at both levels (the copy
        keeps the names; a new instance names its sub-cells' parameters as the outer one
        does). A deepcopy used alone, and new cells of other classes, compile."""
        a = analyzer(ctx)
        for cls in ctx.scopes.info.classes.values():
            values = a.self_values(cls.node)
            owners = {
                attr
                for attr, vs in values.items()
                if any(isinstance(v, ast.Call) and _owns_parameters(v, ctx, 0) for v in vs)
            }
            if not owners:
                continue
            compiled = [m for m in cls.methods.values() if ctx.scopes.scope_for(m) is not None]
            called = {
                n.func.attr
                for m in compiled
                for n in ast.walk(m)
                if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == "self"
            }
            for m in compiled:
                for n in ast.walk(m):
                    if not isinstance(n, ast.Call):
                        continue
                    copied = _deepcopied_attr(n, ctx)
                    if copied is not None and copied in owners and copied in called:
                        yield ctx.diagnostic(
                            self,
                            n,
                            f"`{ctx.segment(n)}` copies `self.{copied}` with its parameter names, and compiled code uses both: compiling fails with \"The parameter ... its name '{copied}.*' already exists\"; build the copy in `__init__`",
                        )
                    elif _own_class_call(n, cls.name, ctx):
                        yield ctx.diagnostic(
                            self,
                            n,
                            f"a new `{cls.name}` made in its own compiled code names its parameters as this one does (`{sorted(owners)[0]}.*`): compiling fails with \"The parameter ... already exists\"; build the sub-cells in `__init__`",
                        )

    def _optimizer_state_clash(self, fn: ast.FunctionDef, ctx: Context) -> Iterable[Diagnostic]:
        """A Parameter of the user's named like the state a built-in optimizer creates for
        itself (`global_step`, `momentum`, `beta1_power`; `clone(prefix="accum")` beside
        `nn.SGD`'s `accum.*`), compiled into one graph with a call of that optimizer."""
        scope = ctx.scopes.scope_for(fn)
        kind = _compiled_kind(scope, fn)
        if kind not in ("jit", "construct"):
            return
        called = {
            _callee_key(n.func) for n in ast.walk(fn) if isinstance(n, ast.Call)
        } - {None}
        states: list[tuple[str, str]] = []  # (what, shown)
        optimizers: list[str] = []
        instances: dict[str, str] = {}  # module-level optimizer called here -> its class
        if kind == "jit" and fn in ctx.tree.body:
            module = _module_values(ctx)
            for name in _reached_globals(fn, ctx):
                value = module.get(name)
                opt = _optimizer_class(value, ctx) or _stepped_optimizer(value, module, ctx)
                if opt is not None and name in called:
                    optimizers.append(opt)
                    instances[name] = opt
                state = _state_name(value, ctx)
                if state is not None:
                    states.append(state)
        elif kind == "construct":
            a = analyzer(ctx)
            cls = a.owner_class(fn)
            if cls is None or not _without_prefix(cls, ctx) or called_only_at_top(cls, ctx):
                return
            values = a.self_values(cls)
            read = {
                n.attr
                for n in ast.walk(fn)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
            }
            for attr in sorted(read):
                for value in values.get(attr, []):
                    if value is None:
                        continue
                    opt = _optimizer_class(value, ctx) or _given_optimizer(cls, value, ctx)
                    if opt is not None and f"self.{attr}" in called:
                        optimizers.append(opt)
                    state = _state_name(value, ctx)
                    if state is not None:
                        states.append(state)
            if "optimizer" in read and not values.get("optimizer") and "self.optimizer" in called:
                # `self.optimizer` set by the TrainOneStepCell base from the second argument
                opt = _given_optimizer(cls, ast.Name(id="optimizer"), ctx, default_index=1)
                if opt is not None:
                    optimizers.append(opt)
        table = optimizer_facts()
        shared = _shared_state(instances, table)
        if shared is not None:
            first, second, owned = shared
            yield ctx.diagnostic(
                self,
                ctx.head_span(fn),
                f"`{first}` (`nn.{instances[first]}`) and `{second}` (`nn.{instances[second]}`) each own a "
                f"Parameter named '{owned}'; called in one graph, `{fn.name}` fails with \"The parameter ... its "
                f"name '{owned}' already exists\": step them in separate jit functions or hold both in one Cell",
            )
            return
        for opt in optimizers:
            own = table[opt]
            for what, shown in states:
                clash = shown in own.names if what == "name" else shown in own.clone_prefixes
                if clash:
                    named = f"'{shown}'" if what == "name" else f"'{shown}.*' (`clone(prefix=\"{shown}\")`)"
                    yield ctx.diagnostic(
                        self,
                        ctx.head_span(fn),
                        f"`nn.{opt}` names its own state {named} too; compiled into one graph "
                        f"with a call of the optimizer, `{fn.name}` fails with \"The parameter "
                        f"... its name '{shown if what == 'name' else shown + '.<parameter>'}' already exists\"; "
                        "choose another name",
                    )
                    return


def _shared_state(instances: dict[str, str], table: dict[str, OptimizerFacts]) -> tuple[str, str, str] | None:
    """Two optimizer instances called in one jit function whose own state Parameters share a
    name (every built-in optimizer owns an unprefixed `global_step`). Measured (heldout16a
    `darts_bilevel_arch_step_train`, probes `fb16_gs_*`): `nn.SGD` + `nn.Adam` and two
    `nn.SGD` in one `@ms.jit` step fail at LAX and STRICT ("its name 'global_step' already
    exists"); the same two in separate jit functions, or one alone, compile."""
    names = sorted(instances)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            common = sorted(set(table[instances[first]].names) & set(table[instances[second]].names))
            if common:
                return first, second, common[0]
    return None


def _callee_key(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return f"self.{func.attr}"
    return None


def _module_values(ctx: Context) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for st in ctx.tree.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            out[st.targets[0].id] = st.value
    return out


def _optimizer_class(value: ast.expr | None, ctx: Context) -> str | None:
    if not isinstance(value, ast.Call):
        return None
    q = ctx.qualname(value.func) or ""
    last = q.rsplit(".", 1)[-1]
    return last if q.startswith("mindspore.nn.") and last in optimizer_facts() else None


#: wrappers that step the optimizer they are given (second argument, `optimizer=`)
_STEP_CELLS = frozenset({"TrainOneStepCell", "TrainOneStepWithLossScaleCell"})


def _stepped_optimizer(value: ast.expr | None, module: dict[str, ast.expr], ctx: Context) -> str | None:
    """The built-in optimizer class a module-level `nn.TrainOneStepCell(net, opt)` steps
    (`opt` built in the call or a module-level name bound to one): calling the wrapper calls
    the optimizer, its `global_step` included. Measured (written/heldout35a case
    `r2_disc_gan_trainonestep_cells_clean`, probes `fix35f_tos_*`): two such cells with
    `nn.AdamWeightDecay` (or `nn.SGD` and `nn.Adam`) called in one `@ms.jit` function fail
    at both levels ("its name 'global_step' already exists"); in separate jit functions
    they compile."""
    if not isinstance(value, ast.Call):
        return None
    q = ctx.qualname(value.func) or ""
    if not (q.startswith("mindspore.") and q.rsplit(".", 1)[-1] in _STEP_CELLS):
        return None
    arg: ast.expr | None = value.args[1] if len(value.args) > 1 else None
    for kw in value.keywords:
        if kw.arg == "optimizer":
            arg = kw.value
    if isinstance(arg, ast.Name):
        arg = module.get(arg.id)
    return _optimizer_class(arg, ctx)


def _state_name(value: ast.expr | None, ctx: Context) -> tuple[str, str] | None:
    """("prefix", P) for `<params>.clone(prefix=P)`, ("name", N) for `Parameter(v, name=N)`."""
    if not isinstance(value, ast.Call):
        return None
    f = value.func
    if isinstance(f, ast.Attribute) and f.attr == "clone":
        arg = value.args[0] if value.args else None
        for kw in value.keywords:
            if kw.arg == "prefix":
                arg = kw.value
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return ("prefix", arg.value)
        return None
    if (ctx.qualname(f) or "").rsplit(".", 1)[-1] != "Parameter":
        return None
    arg = value.args[1] if len(value.args) > 1 else None
    for kw in value.keywords:
        if kw.arg == "name":
            arg = kw.value
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return ("name", arg.value)
    return None


#: cells built with auto_prefix=False: the names of what they hold are not prefixed
_UNPREFIXED_BASES = frozenset({"TrainOneStepCell", "TrainOneStepWithLossScaleCell"})


def _without_prefix(cls: ast.ClassDef, ctx: Context) -> bool:
    """Does the class keep the names of the Parameters it holds (`auto_prefix=False`)? Only
    then do its own Parameters meet the optimizer's under the same names."""
    for base in cls.bases:
        q = ctx.qualname(base) or ""
        if q.startswith("mindspore.") and q.rsplit(".", 1)[-1] in _UNPREFIXED_BASES:
            return True
    for n in ast.walk(cls):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__":
            for kw in n.keywords:
                if kw.arg == "auto_prefix" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                    return True
    return False


def _given_optimizer(
    cls: ast.ClassDef, value: ast.expr, ctx: Context, default_index: int | None = None
) -> str | None:
    """`self.opt = optimizer` (an `__init__` parameter): the built-in optimizer every
    module-level construction of the class passes for it, or None. Without an `__init__` of
    its own the class takes its base's arguments: `default_index` is the position there."""
    if not isinstance(value, ast.Name):
        return None
    init = next((b for b in cls.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
    if init is None:
        if default_index is None:
            return None
        index = default_index
    else:
        names = [a.arg for a in init.args.args[1:]]
        if value.id not in names:
            return None
        index = names.index(value.id)
    module = _module_values(ctx)
    found: set[str | None] = set()
    for st in ctx.tree.body:
        call = st.value if isinstance(st, ast.Assign) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == cls.name):
            continue
        arg: ast.expr | None = call.args[index] if len(call.args) > index else None
        for kw in call.keywords:
            if kw.arg == value.id:
                arg = kw.value
        if isinstance(arg, ast.Name):
            arg = module.get(arg.id)
        found.add(_optimizer_class(arg, ctx))
    return found.pop() if len(found) == 1 else None


def _module_networks(ctx: Context) -> dict[str, set[str]]:
    """Module-level `name = CellClass(...)` (assigned once) -> the names its parameters
    start with."""
    cached = ctx.cache.get("MS154")
    if isinstance(cached, dict):
        return cached
    built: dict[str, list[ast.expr]] = {}
    for st in ctx.tree.body:
        if (type(st) is ast.Assign or type(st) is ast.AnnAssign or type(st) is ast.AugAssign):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            for t in targets:
                # `actor, critic = nn.Dense(4, 2), nn.Dense(4, 1)`: each name gets its element
                pairs = _unpacked(t, st.value)
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        value = st.value if t is n and st.value is not None else pairs.get(id(n))
                        built.setdefault(n.id, []).append(value or ast.Constant(None))
    table: dict[str, set[str]] = {}
    for name, values in built.items():
        if len(values) != 1 or not isinstance(values[0], ast.Call):
            continue
        value = values[0]
        # `target = copy.deepcopy(online)`: new Parameters with the original's names
        # (written/heldout22a probe `dc22_module_deepcopy_same_jit`)
        for _ in range(4):
            copied = _deepcopied_name(value, ctx)
            if copied is None or len(built.get(copied, ())) != 1:
                break
            value = built[copied][0]
        if not isinstance(value, ast.Call) or _deepcopied_name(value, ctx) is not None:
            continue
        names = _param_prefixes(value, ctx, 0)
        if names:
            table[name] = names
    _apply_renames(table, ctx)
    _drop_renamed_parameters(table, ctx)
    ctx.cache["MS154"] = table
    return table


def _apply_renames(table: dict[str, set[str]], ctx: Context) -> None:
    """`net.update_parameters_name(P)` sets every parameter's name to P + its name in `net`
    (MindSpore's `Cell.update_parameters_name`): a constant P in a module-level statement
    prefixes the known names; any other call on the network (in a function, a run-time P,
    on a sub-cell) leaves its names unknown."""
    if not ctx.mentions("update_parameters_name"):
        return
    top = {id(st.value) for st in ctx.tree.body if isinstance(st, ast.Expr)}
    for call in ast.walk(ctx.tree):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "update_parameters_name"
        ):
            continue
        root = call.func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id not in table:
            continue
        prefix = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "prefix"), None)
        if (
            id(call) in top
            and root is call.func.value
            and isinstance(prefix, ast.Constant)
            and isinstance(prefix.value, str)
        ):
            table[root.id] = {prefix.value + n for n in table[root.id]}
        else:
            del table[root.id]


def _drop_renamed_parameters(table: dict[str, set[str]], ctx: Context) -> None:
    """`p.name = "target." + p.name` in a loop over `net.get_parameters()` (or
    `net.weight.name = ...`) gives the network's Parameters other names: its names are then
    unknown (written/heldout19b case `rl_soft_update_parametertuple_assign_clean` compiles)."""
    if not table or not ctx.mentions(".name"):
        return
    loops: dict[str, str] = {}  # loop name -> the network whose parameters it runs over
    stores: list[ast.Attribute] = []
    for n in ast.walk(ctx.tree):
        if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and isinstance(n.iter, ast.Call):
            f = n.iter.func
            if isinstance(f, ast.Attribute) and f.attr in _PARAM_GETTERS and isinstance(f.value, ast.Name):
                loops[n.target.id] = f.value.id
        elif isinstance(n, ast.Assign):
            stores.extend(t for t in n.targets if isinstance(t, ast.Attribute) and t.attr == "name")
    for t in stores:
        root = t.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name):
            table.pop(loops.get(root.id, root.id), None)


def _unpacked(target: ast.expr, value: ast.expr | None) -> dict[int, ast.expr]:
    """For `a, b = x, y` (same length, no starred element): id of each target name -> its value."""
    if not (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (ast.Tuple, ast.List))
        and len(target.elts) == len(value.elts)
        and not any(isinstance(e, ast.Starred) for e in value.elts)
    ):
        return {}
    return {id(t): v for t, v in zip(target.elts, value.elts, strict=True) if isinstance(t, ast.Name)}


def _passed_by_name(ctx: Context) -> dict[str, list[ast.Call]]:
    """The calls each name is handed to by name (a Cell constructor that stores a network on
    `self` prefixes its parameter names)."""
    cached = ctx.cache.get("MS154-passed")
    if isinstance(cached, dict):
        return cached
    passed: dict[str, list[ast.Call]] = {}
    for call in ast.walk(ctx.tree):
        if isinstance(call, ast.Call) and _deepcopied_name(call, ctx) is None:
            # a deep copy takes nothing of its original's: `target = copy.deepcopy(online)`
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
    gathered = set(_gathered_at_call(init))
    out: list[str] = []
    held: set[str] | None = None
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
                continue
            # `Holder(a.trainable_params(), b.trainable_params())`, also inside a list of
            # group dicts: the Parameters themselves, names unprefixed, reach `self`
            # (written/heldout29a cases `r2_ema_teacher_student_standalone_nets`,
            # `group_param_groups_nested_loop_index`, probes `fix29c_dup_*`: a construct
            # reading both fails, one reading only one of them compiles)
            nets = _gathered_at_call(arg)
            if not nets:
                continue
            if held is None:
                held = _held_from_parameters(init, construct)
            if p in held:
                out.extend(n for n in nets if n not in out)
    return out


def _cloned_by_constructor(
    construct: ast.FunctionDef, ctx: Context, table: dict[str, set[str]]
) -> list[tuple[str, set[str]]]:
    """The copies a Cell's `__init__` makes of a module-level network's Parameters,
    `self.a = ParameterTuple(net.trainable_params()).clone(prefix="ema")` with `net` a
    parameter of `__init__` given that network where the Cell is built at module level,
    when `construct` reads `self.a`: new Parameters named `ema.` + each name of `net`.
    Two such copies with one prefix of networks of one layout (or of one network) clash
    (measured, written/heldout32a probes `fix32c_ema_*`, `fix33b_ema_*`: "its name
    'ema.0.weight' already exists" at LAX and STRICT; distinct prefixes compile)."""
    owner = ctx.parent(construct)
    if not isinstance(owner, ast.ClassDef):
        return []
    init = next((s for s in owner.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return []
    read = {
        n.attr
        for n in ast.walk(construct)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
    }
    clones: list[tuple[str, str]] = []  # (parameter of `__init__`, prefix)
    for st in ast.walk(init):
        if not (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Attribute)
            and isinstance(st.targets[0].value, ast.Name)
            and st.targets[0].value.id == "self"
            and st.targets[0].attr in read
        ):
            continue
        cloned = _cloned_getter(st.value, ctx)
        if cloned is not None:
            clones.append(cloned)
    if not clones:
        return []
    params = [a.arg for a in [*init.args.posonlyargs, *init.args.args][1:]]
    out: list[tuple[str, set[str]]] = []
    for st in ctx.tree.body:
        value = st.value if isinstance(st, (ast.Assign, ast.Expr)) else None
        calls = [value] if isinstance(value, ast.Call) else []
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Call):
            calls.append(value.func)  # `print(Updater(g, g_ema)())` / `Updater(g, g_ema)()`
        for call in calls:
            for sub in ast.walk(call):
                if not (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == owner.name):
                    continue
                bound = dict(zip(params, sub.args, strict=False))
                bound.update((k.arg, k.value) for k in sub.keywords if k.arg)
                for p, prefix in clones:
                    arg = bound.get(p)
                    if isinstance(arg, ast.Name) and table.get(arg.id):
                        label = f"the copy of `{arg.id}`'s parameters cloned with prefix '{prefix}'"
                        out.append((label, {f"{prefix}.{n}" for n in table[arg.id]}))
                return out
    return out


def _cloned_getter(value: ast.expr, ctx: Context) -> tuple[str, str] | None:
    """(p, P) for `ParameterTuple(p.trainable_params()).clone(prefix=P)` (or another getter
    of `_PARAM_GETTERS`, P given by keyword or first), with `p` a plain name and P a str."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "clone"):
        return None
    state = _state_name(value, ctx)
    inner = value.func.value
    if state is None or not (isinstance(inner, ast.Call) and len(inner.args) == 1):
        return None
    if (ctx.qualname(inner.func) or "").rsplit(".", 1)[-1] != "ParameterTuple":
        return None
    getter = inner.args[0]
    if not (
        isinstance(getter, ast.Call)
        and isinstance(getter.func, ast.Attribute)
        and getter.func.attr in _PARAM_GETTERS
        and isinstance(getter.func.value, ast.Name)
    ):
        return None
    return getter.func.value.id, state[1]


def _gathered_at_call(arg: ast.AST) -> list[str]:
    """`net.trainable_params()` (or another getter of `_PARAM_GETTERS`) of a plain name,
    anywhere inside `arg` (an argument of a constructor call, an `__init__`): the names.
    Not the getters whose Parameters are cloned (`ParameterTuple(net.trainable_params())
    .clone(prefix="ema")`): the clones are new Parameters named `ema.` + each name, and
    the network's own never reach the graph (measured, written/heldout32a case
    `ema_generator_assign_in_construct_clean` and probes `fix32c_ema_*`)."""
    cloned = {
        id(g)
        for n in ast.walk(arg)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "clone"
        for g in ast.walk(n.func.value)
    }
    return [
        n.func.value.id
        for n in ast.walk(arg)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in _PARAM_GETTERS
        and isinstance(n.func.value, ast.Name)
        and id(n) not in cloned
    ]


def _held_from_parameters(init: ast.FunctionDef, construct: ast.FunctionDef) -> set[str]:
    """The parameters of `init` whose value reaches (through locals, loops over it and
    `append` / `update` of containers) an attribute of `self` that `construct` reads."""
    read = {
        n.attr
        for n in ast.walk(construct)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
    }
    out: set[str] = set()
    for p in [a.arg for a in [*init.args.posonlyargs, *init.args.args][1:]]:
        tainted = {p}
        for _ in range(3):  # loops and containers filled before they are read: a few passes
            for n in ast.walk(init):
                sources: ast.AST | None = None
                targets: list[ast.expr] = []
                if isinstance(n, ast.Assign):
                    sources, targets = n.value, n.targets
                elif isinstance(n, ast.For):
                    sources, targets = n.iter, [n.target]
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "update", "extend"):
                    sources, targets = n, [n.func.value]
                if sources is None or not any(isinstance(m, ast.Name) and m.id in tainted for m in ast.walk(sources)):
                    continue
                for t in targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        if t.attr in read:
                            out.add(p)
                    else:
                        tainted.update(m.id for m in ast.walk(t) if isinstance(m, ast.Name) and m.id != "self")
    return out


def _param_prefixes(call: ast.Call, ctx: Context, depth: int) -> set[str]:
    """Leading parts of the parameter names of the network `call` builds (empty: unknown or
    none, which never reports)."""
    qual = ctx.qualname(call.func)
    if qual is None or depth > 3:
        return set()
    last = qual.rpartition(".")[2]
    factory = _module_factory(call, ctx)
    if factory is not None:
        return _factory_prefixes(factory, ctx, depth)
    if qual.startswith("mindspore."):
        if last in _NN_LAYER_PARAM and ".nn" in qual:
            return set(_NN_LAYER_PARAM[last])
        if last in _NN_CONTAINERS and ".nn" in qual:
            return _container_prefixes(call, ctx, depth)
        return set()
    if not ctx.scopes.is_cell_class(qual):
        return set()
    found = ctx.scopes.class_info(qual)
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


def _module_factory(call: ast.Call, ctx: Context) -> ast.FunctionDef | None:
    """The module-level `def` (written once in this file) that `call` calls by name."""
    if not isinstance(call.func, ast.Name):
        return None
    factories = ctx.cache.get("MS154-factories")
    if not isinstance(factories, dict):
        defs: dict[str, list[ast.stmt]] = {}
        for st in ctx.tree.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs.setdefault(st.name, []).append(st)
        factories = {k: v[0] for k, v in defs.items() if len(v) == 1 and isinstance(v[0], ast.FunctionDef)}
        ctx.cache["MS154-factories"] = factories
    return factories.get(call.func.id)


def _factory_prefixes(fn: ast.FunctionDef, ctx: Context, depth: int) -> set[str]:
    """The names every network a factory function (`def mlp(h): return
    nn.SequentialCell(...)`) returns surely starts its parameters with: what all its
    `return` values, each a network built there (directly or through a local name bound once
    to it), have in common. A network built outside any Cell keeps unprefixed names, so two
    networks from one factory clash (measured, heldout14b `kd_soft_target_kl_train` and probe
    `hb_dup_factory_seq_jit`: "its name '0.weight' already exists")."""
    returns = [n for n in _own_nodes(fn) if isinstance(n, ast.Return)]
    if not returns:
        return set()
    common: set[str] | None = None
    for r in returns:
        value = r.value
        if isinstance(value, ast.Name):
            binds = [
                n
                for n in _own_nodes(fn)
                if isinstance(n, ast.Name) and n.id == value.id and not isinstance(n.ctx, ast.Load)
            ]
            bound = ctx.parent(binds[0]) if len(binds) == 1 else None
            value = bound.value if isinstance(bound, ast.Assign) and len(bound.targets) == 1 else None
        if not isinstance(value, ast.Call):
            return set()
        names = _param_prefixes(value, ctx, depth + 1)
        common = names if common is None else common & names
        if not common:
            return set()
    return common or set()


def _own_nodes(fn: ast.FunctionDef) -> Iterator[ast.AST]:
    """Nodes of `fn`'s body, not of functions, lambdas or classes nested in it."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


def _class_chain(cls: ast.ClassDef, ctx: Context) -> Iterator[ast.ClassDef]:
    yield cls
    for base in cls.bases:
        qual = ctx.qualname(base)
        found = ctx.scopes.class_info(qual) if qual else None
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
            else:
                source = _listed_parameters_of(st.value)
                if source is not None and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                    builders[st.targets[0].id] = [source]
    constructs = _module_instance_constructs(ctx)
    out: list[str] = []
    todo = [fn]
    done: set[int] = set()
    while todo:
        f = todo.pop(0)
        if id(f) in done:
            continue
        done.add(id(f))
        local = {a.arg for a in ast.walk(f.args) if isinstance(a, ast.arg)}
        local |= {
            n.id for n in ast.walk(f) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        eager = _run_eagerly_in_dict_calls(f, ctx)
        for n in ast.walk(f):
            if not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)) or n.id in local or id(n) in eager:
                continue
            for name in [n.id, *builders.get(n.id, [])]:
                if name in functions:
                    todo.append(functions[name])
                elif name not in out:
                    out.append(name)
                    if name in constructs:
                        todo.append(constructs[name])
    return out


def _listed_parameters_of(value: ast.Call) -> str | None:
    """`net` for a module-level `params = net.trainable_params()` (another getter of
    `_PARAM_GETTERS`, or the same in `ParameterTuple(...)` / `list(...)` / `tuple(...)`):
    compiled code reading `params` takes `net`'s Parameters into its graph, under their
    names (measured, written/heldout43a case `train_ema_zip_assign_jit_clean` and probes
    `h43a_pn_*`: two such lists of same-named networks zipped in an `@ms.jit` EMA update,
    one list beside a call of the other network, a helper reading both: "its name 'weight'
    already exists" at LAX and STRICT; one list alone, or networks whose names differ,
    compile). Not `.clone(prefix=...)` of them, nor an optimizer built from them."""
    if (
        isinstance(value.func, ast.Name)
        and value.func.id in ("ParameterTuple", "list", "tuple")
        or isinstance(value.func, ast.Attribute)
        and value.func.attr == "ParameterTuple"
    ):
        if len(value.args) != 1 or value.keywords or not isinstance(value.args[0], ast.Call):
            return None
        value = value.args[0]
    f = value.func
    if isinstance(f, ast.Attribute) and f.attr in _PARAM_GETTERS and isinstance(f.value, ast.Name):
        return f.value.id
    return None


def _closure_reads(fn: ast.FunctionDef, factory: ast.FunctionDef, ctx: Context) -> list[str]:
    """Names of `factory`'s scope that `fn` (defined in it) reads, in order, following the
    functions `factory` defines and those it gives `value_and_grad`/`grad` there."""
    local_defs = {s.name: s for s in factory.body if isinstance(s, ast.FunctionDef)}
    for st in factory.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and st.value.args:
            qual = ctx.qualname(st.value.func) or ""
            first = st.value.args[0]
            if qual.rpartition(".")[2] in _GRAD_BUILDERS and isinstance(first, ast.Name) and first.id in local_defs:
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        local_defs.setdefault(t.id, local_defs[first.id])
    out: list[str] = []
    todo, done = [fn], set()
    while todo:
        f = todo.pop(0)
        if id(f) in done:
            continue
        done.add(id(f))
        local = {x.arg for x in ast.walk(f.args) if isinstance(x, ast.arg)}
        local |= {n.id for n in ast.walk(f) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for n in ast.walk(f):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local:
                if n.id in local_defs:
                    todo.append(local_defs[n.id])
                elif n.id not in out:
                    out.append(n.id)
    return out


def _result_called(call: ast.Call, ctx: Context) -> bool:
    """Is the result of the module-level `call` called (`call(...)(x)`, or `step =
    call(...)` then `step(x)` at module level)?"""
    up = ctx.parent(call)
    if isinstance(up, ast.Call) and up.func is call:
        return True
    if not (isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Name)):
        return False
    name = up.targets[0].id
    return any(isinstance(c.func, ast.Name) and c.func.id == name and c.lineno > up.lineno for c in module_calls(ctx))


def _network_at(arg: ast.expr, line: int, ctx: Context, depth: int) -> tuple[ast.AST, set[str]] | None:
    """The network construction `arg` (written at `line`, module level) holds when that line
    first runs, with its parameter names' leading parts: a constructor call, or a name whose
    last binding before `line` assigns one (or another such name), in blocks that also
    hold `line` (a binding inside an `if`, or a loop not around `line`, may not have run)."""
    if depth > 4:
        return None
    if isinstance(arg, ast.Call):
        names = _param_prefixes(arg, ctx, 0)
        return (arg, names) if names else None
    if not isinstance(arg, ast.Name):
        return None
    before = [b for b in ctx.module_bindings().get(arg.id, []) if getattr(b, "lineno", line) < line]
    if not before or not isinstance(before[-1], ast.Assign):
        return None
    st = before[-1]
    if len(st.targets) != 1 or not isinstance(st.targets[0], ast.Name) or not _encloses_line(st, line, ctx):
        return None
    return _network_at(st.value, st.lineno, ctx, depth + 1)


def _encloses_line(st: ast.stmt, line: int, ctx: Context) -> bool:
    """Does every block around the module-level statement `st` also hold `line`?"""
    up = ctx.parent(st)
    while up is not None and not isinstance(up, ast.Module):
        if isinstance(up, (ast.If, ast.While, ast.Try, ast.With, ast.Match)):
            return False
        end = getattr(up, "end_lineno", None) or 0
        if not (getattr(up, "lineno", 0) <= line <= end):
            return False
        up = ctx.parent(up)
    return True


def _run_eagerly_in_dict_calls(f: ast.FunctionDef, ctx: Context) -> set[int]:
    """The ids of the names read among the keyword arguments of a `dict(...)` call in `f`
    when the file does not set GRAPH_MODE: LAX runs that whole call as Python (JIT
    Fallback), and in PYNATIVE_MODE a Cell called there runs eagerly, so its parameters
    never join the graph's (measured, heldout34a probes `fix35d_nx_*_jit_module_cell`:
    `dict(logits=head(h))` beside `emb(x)`, both with a `weight`, compiles; in GRAPH_MODE
    the call fails anyway, MS145)."""
    if sets_graph_mode(ctx.scopes.info) or not ctx.mentions("dict("):
        return set()
    return {
        id(n)
        for c in ast.walk(f)
        if type(c) is ast.Call and type(c.func) is ast.Name and c.func.id == "dict" and c.keywords and not c.args
        for k in c.keywords
        for n in ast.walk(k.value)
    }


def _module_instance_constructs(ctx: Context) -> dict[str, ast.FunctionDef]:
    """Module-level `name = CellClass(...)` (bound once, the class written in this file) ->
    the class's `construct`: the globals it reads join the graph of whoever calls `name`
    (measured, heldout14b probe `hb_dup_two_seq_cell_graph`: a Cell whose `construct` reads
    two module-level SequentialCells, called from a jit function, fails with "its name
    '0.weight' already exists")."""
    cached = ctx.cache.get("MS154-constructs")
    if isinstance(cached, dict):
        return cached
    bound: dict[str, list[ast.expr | None]] = {}
    for st in ctx.tree.body:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        bound.setdefault(n.id, []).append(st.value if t is n else None)
    classes = {s.name: s for s in ctx.tree.body if isinstance(s, ast.ClassDef)}
    out: dict[str, ast.FunctionDef] = {}
    for name, values in bound.items():
        v = values[0]
        if len(values) != 1 or not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name)):
            continue
        cls = classes.get(v.func.id)
        construct = next(
            (m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "construct"), None
        ) if cls is not None else None
        if construct is not None:
            out[name] = construct
    ctx.cache["MS154-constructs"] = out
    return out


def _deepcopied_name(value: ast.expr, ctx: Context) -> str | None:
    """`name` of `copy.deepcopy(name)`."""
    if (
        isinstance(value, ast.Call)
        and len(value.args) == 1
        and isinstance(value.args[0], ast.Name)
        and ctx.qualname(value.func) == "copy.deepcopy"
    ):
        return value.args[0].id
    return None


def _deepcopied_attr(call: ast.Call, ctx: Context) -> str | None:
    """`attr` of `copy.deepcopy(self.attr)`."""
    if ctx.qualname(call.func) != "copy.deepcopy" or len(call.args) != 1:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "self":
        return arg.attr
    return None


def _own_class_call(call: ast.Call, cls_name: str, ctx: Context) -> bool:
    """`self.__class__(...)`, `type(self)(...)` or `Name(...)` of the class itself."""
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr == "__class__":
        return isinstance(f.value, ast.Name) and f.value.id == "self"
    if isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "type":
        return len(f.args) == 1 and isinstance(f.args[0], ast.Name) and f.args[0].id == "self"
    return isinstance(f, ast.Name) and f.id == cls_name and ctx.qualname(f) in (
        None,
        f"{ctx.scopes.info.module}.{cls_name}",
    )


def _parameter_name(value: ast.expr | None, ctx: Context) -> str | None:
    """The literal `name` of a `Parameter(data, name="...")` call."""
    if not (isinstance(value, ast.Call) and (ctx.qualname(value.func) or "").rpartition(".")[2] == "Parameter"):
        return None
    given = next((k.value for k in value.keywords if k.arg == "name"), value.args[1] if len(value.args) > 1 else None)
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, str) else None


def _may_bind_named_parameters(text: str) -> bool:
    """Can `_named_parameters_clash` find anything: is a `Parameter(...)` (or an alias imported
    for it) bound to a plain name or written as an argument? A clash needs one of those (a
    Parameter stored on `self.` alone is never one), and most files with Parameters only
    store them on `self.`, so this text test spares them the scope index. Each occurrence is
    looked at backwards (a regex tried at every `(` and `,` cost a sixth of a parse)."""
    names = {"Parameter"}
    if "Parameter as" in text:
        names.update(re.findall(r"\bParameter\s+as\s+([A-Za-z_]\w*)", text))
    for name in names:
        needle = name + "("
        at = text.find(needle)
        while at >= 0:
            i, at = at, text.find(needle, at + 1)
            if i > 0 and is_name_char(text[i - 1]):
                continue  # `MyParameter(`
            while True:  # skip qualifiers: `ms.`, `mindspore.common.parameter.`
                j = i
                while j > 0 and text[j - 1] in " \t":
                    j -= 1
                if j > 0 and text[j - 1] == ".":
                    k = j - 1
                    while k > 0 and is_name_char(text[k - 1]):
                        k -= 1
                    if k == j - 1:
                        break
                    i = k
                    continue
                break
            j = i
            while j > 0 and text[j - 1] in " \t\r\n":
                j -= 1
            before = text[j - 1] if j > 0 else ""
            if before and before in "(,":
                return True
            if before == "=":
                line = text[text.rfind("\n", 0, j - 1) + 1 : j - 1]
                if line.strip().isidentifier():
                    return True
    return False


def _own_statements(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes of `scope`'s own body (not inside nested functions, lambdas or classes)."""
    stack: list[ast.AST] = list(getattr(scope, "body", []))
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(n))


class _ScopeIndex:
    """The file's module and function scopes, each scope's own nodes, the variables it binds
    to a named `Parameter(...)`, and the first binding of each name, built once per check so
    that every call and every free variable is looked up, not searched for (the search per
    call made this rule quadratic in the size of a scope)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        tree = ctx.tree
        self.scopes: list[ast.AST] = [
            tree,
            *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
        ]
        # each function's enclosing functions, innermost first, then the module
        self._chains: dict[int, tuple[ast.AST, ...]] = {id(tree): ()}
        stack: list[tuple[ast.AST, tuple[ast.AST, ...]]] = [(tree, (tree,))]
        while stack:
            node, chain = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._chains[id(child)] = chain
                    stack.append((child, (child, *chain)))
                else:
                    stack.append((child, chain))
        self._own: dict[int, list[ast.AST]] = {}
        self.named: dict[int, dict[str, str | None]] = {}
        self._first: dict[int, dict[str, ast.AST]] = {}
        for sc in self.scopes:
            own = self._own[id(sc)] = list(_own_statements(sc))
            self.named[id(sc)] = _named_parameters(own, ctx)
            first: dict[str, ast.AST] = {}
            for n in own:
                if isinstance(n, ast.FunctionDef):
                    first.setdefault(n.name, n)
                elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    first.setdefault(n.targets[0].id, n)
            self._first[id(sc)] = first
        self._classes: dict[str, ast.ClassDef] | None = None
        self._callee: dict[tuple[int, str], bool] = {}

    def own(self, scope: ast.AST) -> list[ast.AST]:
        return self._own[id(scope)]

    def chain(self, scope: ast.AST) -> tuple[ast.AST, ...]:
        """`scope`, then the scopes a name read in it is looked up in, outwards."""
        return (scope, *self._chains.get(id(scope), ()))

    def first_binding(self, scope: ast.AST, name: str) -> ast.AST | None:
        return self._first.get(id(scope), {}).get(name)

    def class_named(self, name: str) -> ast.ClassDef | None:
        if self._classes is None:
            self._classes = {}
            for c in ast.walk(self.ctx.tree):
                if isinstance(c, ast.ClassDef):
                    self._classes.setdefault(c.name, c)
        return self._classes.get(name)

    def graph_callee(self, name: str, scope: ast.AST) -> bool:
        """Does `name(...)` in `scope` call a jit function or an instance of one of the file's
        Cell classes (so that its arguments become inputs of one graph)?"""
        key = (id(scope), name)
        hit = self._callee.get(key)
        if hit is None:
            hit = self._callee[key] = self._graph_callee(name, scope)
        return hit

    def _graph_callee(self, name: str, scope: ast.AST) -> bool:
        ctx = self.ctx
        for sc in self.chain(scope):
            n = self.first_binding(sc, name)
            if n is None:
                continue
            if isinstance(n, ast.FunctionDef):
                found = ctx.scopes.scope_for(n)
                return found is not None and found.kind == "jit"
            assert isinstance(n, ast.Assign)
            value = n.value
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                return False
            q = ctx.qualname(value.func)
            cls = self.class_named(value.func.id)
            return cls is not None and any("Cell" in ast.unparse(b) for b in cls.bases) or bool(q and ctx.scopes.is_cell_class(q))
        return False


def _named_parameters(own: list[ast.AST], ctx: Context) -> dict[str, str | None]:
    """Names a scope binds (`own`: its own nodes) -> the literal Parameter name when its only
    binding is a named `Parameter(...)`, else None."""
    sole: dict[int, ast.expr] = {}
    for n in own:
        if isinstance(n, ast.Assign) and len(n.targets) == 1:
            sole[id(n.targets[0])] = n.value
    out: dict[str, str | None] = {}
    for n in own:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out[n.id] = _parameter_name(sole.get(id(n)), ctx) if n.id not in out else None
    return out


def _lookup(name: str, scope: ast.AST, index: _ScopeIndex) -> str | None:
    """The Parameter name a variable read in `scope` holds (looked up outwards)."""
    for sc in index.chain(scope):
        table = index.named.get(id(sc), {})
        if name in table:
            return table[name]
    return None


def _named_value(e: ast.expr, scope: ast.AST, index: _ScopeIndex) -> str | None:
    if isinstance(e, ast.Name):
        return _lookup(e.id, scope, index)
    return _parameter_name(e, index.ctx)


def _free_parameters(fn: ast.FunctionDef, scope: ast.AST, index: _ScopeIndex) -> list[tuple[str, str]]:
    local = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    local |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    out: list[tuple[str, str]] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local:
            pname = _lookup(n.id, scope, index)
            if pname is not None and (pname, f"`{n.id}`") not in out:
                out.append((pname, f"`{n.id}`"))
    return out


def _clash(items: list[tuple[str, str]]) -> tuple[str, str, str] | None:
    """The first Parameter name two different holders share: (name, first, second)."""
    seen: dict[str, str] = {}
    for pname, shown in items:
        if pname in seen and seen[pname] != shown:
            return pname, seen[pname], shown
        seen.setdefault(pname, shown)
    return None


def _cell_instance_parameters(name: str, scope: ast.AST, index: _ScopeIndex) -> list[str]:
    """Literal names of the Parameters `__init__` puts on the Cell `name` is bound to
    (`net = ParamNet()` in the same scope): a top-level instance keeps them unprefixed."""
    value = next(
        (
            n.value
            for n in index.own(scope)
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name
        ),
        None,
    )
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return []
    cls = index.class_named(value.func.id)
    if cls is None:
        return []
    ctx = index.ctx
    out: list[str] = []
    for item in cls.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            for n in ast.walk(item):
                if (
                    isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" for t in n.targets)
                ):
                    pname = _parameter_name(n.value, ctx)
                    if pname is not None:
                        out.append(pname)
    return out


def _compiled_kind(scope: GraphScope | None, fn: ast.FunctionDef) -> str | None:
    """How `fn` is compiled: a Cell's `construct` is compiled as one also when a jit root
    reaches it in PyNative (a "helper" scope there: `@ms.jit def run(x): return step(x)`;
    written/train probes `clone_prefix_*`, `trainonestep_subclass_global_step_param`, with no
    mode set, fail as in GRAPH_MODE)."""
    if scope is None:
        return None
    if scope.kind == "helper" and fn.name == "construct":
        return "construct"
    return scope.kind
