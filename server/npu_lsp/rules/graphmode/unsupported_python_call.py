"""MS144: a call MindSpore's graph compiler does not implement, by its own tables."""

from __future__ import annotations

import ast
import builtins
import functools
import json
from collections.abc import Iterable
from importlib import resources

from npu_lsp.astutil import COMPREHENSIONS, is_none_literal
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode import calls_table, constructed
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.const_tensor import constant_tensor
from npu_lsp.rules.graphmode.flow import GROWERS, Kind, analyzer, list_call
from npu_lsp.rules.graphmode.helpers import GraphRule, bound_names, own_nodes, returns_in
from npu_lsp.rules.graphmode.host_values import scalar_list_item
from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax
from npu_lsp.rules.graphmode.ranks import multi_element, ranks
from npu_lsp.rules.graphmode.values import UNKNOWN, instances

# builtins whose result is a str (so `len(hex(n))` is `len` of a string)
_STR_BUILTINS = frozenset({"str", "repr", "hex", "oct", "bin", "chr", "format", "ascii"})
# str methods whose result is a str
_STR_RESULT = frozenset(
    {"upper", "lower", "format", "join", "replace", "strip", "lstrip", "rstrip", "title",
     "capitalize", "casefold", "center", "ljust", "rjust", "zfill", "swapcase", "expandtabs",
     "removeprefix", "removesuffix", "format_map", "translate"}
)
# builtins that become tensor operators on a run-time scalar (`float(t)`, `t.item()`): name ->
# how many positional arguments the measured failure covers
_TENSOR_ONLY_ON_VARS = {"round": 2, "abs": 1}
# dict methods MindSpore's parser does not treat as in-place statements (they are not in
# `expression_statement_methods` of ms_calls.json); measured under LAX as statements on a dict
# of tensors the function builds: `out.setdefault("c", x * 2)` ("For 'TupleGetItem', input[0]
# should be Sequence, but got Dictionary"), `out.setdefault("b", ...)` then `out["b"]` ("The
# key b does not exist"), `out.pop("a")` ("Unsupported Python object type", "Cannot iterate
# over a scalar tensor")
_DICT_STATEMENT_FAILS = frozenset({"setdefault", "pop"})
# builtins applied to a receiver that MindSpore measures as operations on it


@functools.cache
def _primitive_functions() -> dict[str, str]:
    """MindSpore function name -> MindSpore's message when compiled code gives it a keyword
    argument (`ms_primitive_functions.json`: functions the parser turns into a primitive,
    which takes positional inputs only)."""
    text = resources.files(__package__).joinpath("ms_primitive_functions.json").read_text("utf-8")
    out: dict[str, str] = json.loads(text)["functions"]
    return out


_OPERATIONS = {"len": "len()", "list": "list()", "tuple": "tuple()", "str": "str()", "bool": "bool()"}


@rule(code="MS144", name="unsupported-python-call", severity="error", family="graphmode")
class UnsupportedPythonCall(GraphRule):
    """## What it does
    Flags calls in compiled code that MindSpore 2.10's graph compiler does not implement,
    judged from MindSpore's own tables (`ms_calls.json`, derived from its parser's resource
    tables and from compiling each call at both syntax levels):
    - keyword arguments the graph versions of builtins do not take (`max(..., key=f)`,
      `min(..., default=0)`, `sum(..., start=1)`, `print(..., sep="-")`,
      `print(..., file=sys.stderr)`, `int(s, base=2)`, `zip(..., strict=True)`,
      `round(x, ndigits=1)`), rejected at every level;
    - keyword arguments of a MindSpore function the graph turns into a primitive
      (`ms.mutable(seq, dynamic_len=True)` in compiled code: "For 'mutable', the second
      input should be bool, but got: AbstractKeywordArg(...)", at both levels;
      `ms_primitive_functions.json`, measured with written/heldout25a case
      `mut_called_inside_jit` and probes `fix25a_mu_*`; `ms.mutable(seq, True)` compiles);
    - methods of list, tuple, dict and str that STRICT graph code cannot call
      (`lst.sort()`, `lst.remove(v)`, `lst.copy()`, `d.setdefault(k, v)`, `d.pop(k)`,
      `d.copy()`, also on a dict `__init__` keeps on `self` (`self.vocab.setdefault(c, n)`),
      `s.startswith(p)`, `s.split(sep)` (`len(s)` of a string is MS164's), also on a str held
      on `self` (a str literal for every instance built, the same or not:
      `self.model_name.startswith("eff")`, written/heldout32b probes `fix32c_str_*`), returned by a str method, looked up by a constant key in a dict display
      whose entry (or `.get` default) is a str (a dict `__init__` keeps on `self`, one every
      construction passes, a module-level dict, never stored into:
      `self.config.get("hidden_act", "SiLU").strip()`; written/heldout19a probes `s20_*`), the `__name__` of a class or function, a
      name from `dir(...)`, the variable of a `for` over a module-level list or tuple of str
      constants (`name.split("_")` in `for name in AGENTS:`) or over such a tuple held on `self`,
      also a constructor default (`t.format(c).split()` for `t` in `self.templates`), a key of a dict display whose keys are str constants
      (`len(name)` in `for name, w in self.weights.items()`, `for k in d`), or the `.name`
      of an `enum.Enum` member (its `.value` too when that is a str): `self.mode.strip()`, `type(self).__name__.endswith("Block")`,
      `n.startswith("_")` in `for n in dir(cfg)`...), and the ones
      that fail even under LAX (`d.pop(k)` on a dict of constants whose result or dict is
      read afterwards: `v = d.pop(k)` with neither read again is dead code MindSpore never
      compiles, and so is the statement `d.pop(k)` under LAX; `lst.index(t)` on a list or
      tuple the function builds, an item of which is a computed tensor of more than one
      element (items of shape `()` or `(1,)` compile: `scores.index(min(scores))` of
      `.sum()` results; so do a sequence the caller passes and constant tensors), and
      `lst.remove(t)` with tensor elements, `d.setdefault(k, v)` / `d.pop(k)` as a statement
      on a dict of tensors the function builds; `kwargs.pop(k, d)` on the `**kwargs` of a
      compiled function whose result is read, whatever the caller passes, where
      `kwargs.get(k, d)` and `kwargs[k]` compile), keyword arguments of those methods
      (`d.update(c=1.0)`);
    - under LAX, `lst.sort(key=lambda h: h["score"])` / `sorted(lst, key=...)` of a local
      list grown only with dict displays holding graph variables (`hyps.append({"tokens":
      seq, "score": float(s)})`), the key reading its argument by a str index or a dict
      method: LAX runs the sort as Python and each dict reaches it as the tuple of its
      values ("tuple indices must be integers or slices, not str"; tuples sorted by `h[0]`
      compile);
    - `round()` and `abs()` of a run-time scalar (`round(float(t))`, `abs(int(t))`), which
      the graph hands to the tensor operator (under LAX, not of a scalar computed from a JIT
      Fallback value, `float(p.value.mean())` of a namedtuple or dataclass instance built
      from a tensor, also one a sub-cell or helper returns or is given: Python rounds it);
      `round()` also of an item of a local list holding only such scalars (`[round(l, 3) for
      l in losses]`, `round(losses[0])` after `losses.append(float(loss))`, or a list
      comprehension of them such as `[x[0, j].item() for j in range(3)]`, or of a number
      computed from such items by arithmetic, `auc += (fprs[i] - fprs[i + 1]) * ...` then
      `round(auc, 4)`, written/heldout27b probes `fix27b_rd_*`; measured,
      written/heldout15b probes `ls_rd_*`, written/gen18 probes `cg_item_*`: "For
      Operator[Round], input's type 'Float32' does not match expected type 'Tensor'");
    - a builtin MindSpore runs as a Python script (`all`, `any`, `sorted`...) given a
      comprehension that reads a local of the compiled function (`all([f.shape[1] ==
      fs[0].shape[1] for f in fs])`): the script's comprehension cannot see it; under LAX,
      over a graph variable the function computes (the gradients a grad function returns),
      it cannot see module-level names either (`any(ops.isnan(g).any() for g in grads)`);
      likewise a `lambda` given to such a builtin that reads a local of the compiled function,
      `self` included (`sorted(range(n), key=lambda i: scores[i])`);
    - the same builtins given `d.keys()`, `d.items()`, `d.values()` (or `sorted(d)`) of a
      dict built by a comprehension holding graph variables (`outs = {n: head(x) for n, head
      in self.heads.items()}`, then `sorted(outs.keys())`) or of `d = {}` filled with graph
      variables (`losses[name] = ...` in a loop, then `sorted(losses.items(), key=lambda kv:
      kv[1].item())`): the dict reaches the script as a tuple of its values;
    - a standard-library higher-order function given a builtin / `operator` function and
      graph variables (`functools.reduce(operator.add, [x, y])`): under LAX only when read as
      an attribute of its module, or folding a shape with an initial value
      (`reduce(operator.mul, x.shape[1:], 1)`): `reduce(operator.add, outs)` after `from
      functools import reduce` compiles on tensors under LAX; `functools.partial` is
      MindSpore's own Partial there, flagged under LAX only when given a function the graph
      cannot compile (`functools.partial(np.multiply, x)`: "input[0] should be Function, but
      got External"; `functools.partial(ops.mul, x)` compiles at both levels).

    ## Why is this bad?
    MindSpore stops compiling: `RuntimeError: Got an unexpected keyword argument 'key'`,
    `AttributeError: In JIT strict mode, cannot get attributes sort or the List[Float32*3]
    object has no attribute: 'sort'`, an internal type error for `dict.pop`, `For
    Operator[Abs], input's type 'Int64' does not match expected type 'Tensor'`, or
    `NameError: name 'fs' is not defined`, or `'tuple' object has no attribute 'keys'`.

    ## Example
    ```python
    def construct(self, x):
        sizes = [3, 1, 2]
        sizes.sort()
        return x * max(sizes, key=abs)
    ```

    ## Use instead
    ```python
    def construct(self, x):
        sizes = sorted([3, 1, 2])
        return x * max(sizes)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 0 (what compiled code reaches) and section 2 (JIT Fallback at LAX).
    - MindSpore 2.10 `mindspore/graph/_parse/resources.py` (`convert_object_map`) and
      `parser.py` (`_unsupported_python_builtin_type`); measured tables in `ms_calls.json`.
    - Written set `algorithms` (`topk_python_sorted`) and its probes `sortkey_lambda_*`: a
      `sorted` key lambda reading a parameter, a tensor local, a local list or `self` fails
      at both levels; one reading only its arguments or module-level names compiles.
    - The written fallbackflows probes `la23_rd_*`: under LAX `round()` inside a call of a
      builtin the graph interprets whole (`set(round(v) for v in vals)`, `sorted(...)`,
      `dict(...)`) runs as Python and compiles; `list(...)` of the same generator fails.
    """

    nodes = (ast.Call,)
    calls = calls_table.trigger_names() | frozenset(_primitive_functions())

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if ctx.scope is None:
            return
        level = ctx.scope.level
        assert type(node) is ast.Call
        f = node.func
        if type(f) is ast.Attribute:
            # most calls in compiled code are tensor methods and sub-cells: decide from the
            # attribute name and the receiver's shape before resolving anything
            recv = f.value
            if type(recv) is ast.Name and recv.id in ctx.scopes.info.imports:
                q = ctx.qualname(f)
                if node.keywords and f.attr in _primitive_functions():
                    yield from self._primitive_keywords(node, q, f.attr, ctx)
                elif q and f.attr in calls_table.HIGHER_ORDER and calls_table.outside_project(q, ctx):
                    yield from self._function_argument(node, q, ctx, via_module=True)
                elif q and f.attr in calls_table.KEYED_SCRIPTS and calls_table.outside_project(q, ctx):
                    yield from self._script_lambda(node, q, ctx)
                return
            if f.attr == "sort" and node.keywords and level == "lax":
                said = _dicts_sorted_by_key(node, recv, ctx)
                if said is not None:
                    yield ctx.diagnostic(self, node, said)
                    return
            if f.attr in _DICT_STATEMENT_FAILS and level == "lax" and _statement_on_dict_of_tensors(node, recv, ctx):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`dict.{f.attr}()` as a statement on a dict of tensors built in compiled code fails to compile in graph mode (MindSpore does not update the dict in place for it); build the dict with the keys it needs instead",
                )
                return
            if node.keywords and calls_table.method_measured(f"{f.attr}(kw)"):
                yield from self._on_receiver(node, recv, f"{f.attr}(kw)", f"{f.attr}(key=...)", level, ctx)
            elif calls_table.rejectable(f.attr):
                if f.attr == "pop" and _keywords_param(recv, ctx) and type(ctx.parent(node)) is not ast.Expr:
                    yield ctx.diagnostic(
                        self,
                        node,
                        f"`{recv.id}.pop(...)` on the `**{recv.id}` of compiled code fails to compile in graph mode, whatever the caller passes (a tensor, a number, a tuple, or nothing): MindSpore reads the result of `dict.pop` as a (dict, value) pair (For 'TupleGetItem', input[0] should be Sequence); read it with `{recv.id}.get(...)` instead",  # type: ignore[attr-defined]
                    )
                    return
                if f.attr == "pop" and _dead_dict_pop(node, recv, level, ctx):
                    return
                yield from self._on_receiver(node, recv, f.attr, f"{f.attr}()", level, ctx)
            return
        q = ctx.qualname(f)
        if q and not q.startswith("builtins.") and calls_table.outside_project(q, ctx):
            last = q.rsplit(".", 1)[-1]
            if node.keywords and last in _primitive_functions():
                yield from self._primitive_keywords(node, q, last, ctx)
            elif last in calls_table.HIGHER_ORDER:
                yield from self._function_argument(node, q, ctx, via_module=False)
            elif last in calls_table.KEYED_SCRIPTS:
                yield from self._script_lambda(node, q, ctx)
            return
        if type(f) is ast.Name:
            if q is None or not q.startswith("builtins."):
                return
            name = q[9:]
            said = (
                calls_table.rejected_positional(name, tuple(is_none_literal(a) for a in node.args))
                if name in calls_table.positional_names() and not node.keywords
                else None
            )
            if said is not None:
                yield ctx.diagnostic(self, node, f"this `{name}()` call fails to compile in graph mode (MindSpore: {said})")
                return
            if (
                name in _TENSOR_ONLY_ON_VARS
                and 1 <= len(node.args) <= _TENSOR_ONLY_ON_VARS[name]
                and analyzer(ctx).kind(node.args[0]) == Kind.VAR
                and not _host_value(node.args[0], ctx)
                and not (level == "lax" and opaque_at_lax(node.args[0], ctx.function, ctx))
                and not (level == "lax" and _in_interpreted_call(node, ctx))
            ):
                # measured: `round(float(x.sum()), 2)` fails at both levels ("type NoneType
                # doesn't define __round__ method"), and so do `round(float(t))` and
                # `abs(int(t))` ("For Operator[Abs], input's type 'Int64' does not match
                # expected type 'Tensor'"): on a run-time scalar the graph uses the tensor
                # operator; on a tensor or a constant they compile. At LAX a scalar computed
                # from a JIT Fallback value (a namedtuple, dataclass or `asnumpy()` result, also
                # one a sub-cell or helper returns or is given) is a Python object, which
                # Python rounds (written/famc probes `fb_*_round_*`, `fb_*_absint_*`)
                tensor_op = "ops.round" if name == "round" else "ops.abs"
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{name}()` of the run-time scalar `{ctx.segment(node.args[0])}` fails to compile in graph mode; apply `{tensor_op}` to the tensor before converting it",
                )
                return
            listed = (
                scalar_list_item(node.args[0], ctx) or _computed_from_listed(node.args[0], ctx)
                if name == "round" and 1 <= len(node.args) <= 2 and not (level == "lax" and _in_interpreted_call(node, ctx))
                else None
            )
            if listed is not None:
                # measured (written/heldout15b probes `ls_rd_*`): `round(l, 3)` over a list
                # grown with `float(t)` / `t.item()` (a comprehension, a `for`, `losses[0]`)
                # fails at LAX and STRICT as on the scalar itself ("type NoneType doesn't
                # define __round__ method"); over constants, or `print(losses)`, it compiles
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`round()` of `{ctx.segment(node.args[0])}`, {'an item' if type(node.args[0]) is ast.Subscript else 'computed from items'} of `{ctx.segment(listed)}` that holds numbers read from run-time tensors, fails to compile in graph mode (type NoneType doesn't define __round__ method); round the tensors with `ops.round` before converting them, or round outside the graph",
                )
                return
            if (
                name == "round"
                and len(node.args) == 1
                and not node.keywords
                and _float_constant(node.args[0], ctx)
                and not _inside_int(node, ctx)
                and _used_as_index(node, ctx)
            ):
                # measured on 2.10: `round(2.75)`, `round(x.shape[0] / 2)` fail at both levels
                # ("Cast failed, original value: 3, type: Int64Imm"; as a slice bound "The type
                # of input of the MakeSlice operator must be int64 bot got ... Float32"): the
                # folded round keeps a float; `round(3)`, `round(2.75, 1)`, round of a run-time
                # scalar, and a round whose float goes on into `int(...)` compile
                # (mindspore-ai/models AdderQuant: `int((round(len(t) * r) - 1) * r)`); it
                # fails where an int64 is required, as a slice bound or an index, and added to
                # or subtracted from a tensor: returned, put in an output tuple, added to an
                # int or multiplying a tensor it compiles
                # (MindSpore's test_round `..._x_float_n_default`; written/mstests `p144_round_*`)
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`round()` of the compile-time float `{ctx.segment(node.args[0])}` stays a float in graph mode and fails as a slice bound or index, or added to a tensor (MindSpore: the MakeSlice operator must be int64 / Cast failed ... Int64Imm); round it outside the compiled code or use `int()`",
                )
                return
            refused = calls_table.rejected_keywords().get(name)
            if refused:
                for where, arg in _keywords_given(node, ctx):
                    if arg in refused:
                        yield ctx.diagnostic(
                            self,
                            where,
                            f"`{name}()` in graph mode does not take the keyword argument `{arg}`"
                            f" (MindSpore: {refused[arg] or 'unexpected keyword argument'})",
                        )
                        return
            if name == "sorted" and node.args and node.keywords and level == "lax":
                said = _dicts_sorted_by_key(node, node.args[0], ctx)
                if said is not None:
                    yield ctx.diagnostic(self, node, said)
                    return
            if name in calls_table.interpreted_builtins():
                said_dict = _comprehension_dict_given(node, name, ctx)
                if said_dict is not None:
                    yield ctx.diagnostic(self, node, said_dict)
                    return
                yield from self._interpreted_comprehension(node, name, ctx)
                return
            op = _OPERATIONS.get(name)
            if op == "len()" and level == "strict" and len(node.args) == 1 and container_type(node.args[0], ctx) == "str":
                # MS164 (str-iterated-under-strict) reports `len` of a str, with MindSpore's
                # own words: one diagnostic for the one failure
                return
            if op and len(node.args) == 1 and not node.keywords:
                yield from self._on_receiver(node, node.args[0], op, f"{name}(...)", level, ctx)
            return

    def _interpreted_comprehension(self, node: ast.Call, name: str, ctx: Context) -> Iterable[Diagnostic]:
        """A builtin MindSpore interprets (`all`, `any`, `sorted`...) given a comprehension
        whose body reads a local of the compiled function: the script runs the comprehension
        in its own scope, which sees the module's globals but not the function's locals
        (measured at both levels: `all([f.shape[1] == fs[0].shape[1] for f in fs])` gives
        "NameError: name 'fs' is not defined"; `all([f.shape[1] == 3 for f in fs])`, whose
        only local is the iterable of the first `for`, compiles)."""
        comps = [a for a in node.args if isinstance(a, COMPREHENSIONS)]
        lambdas = [a for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Lambda)]
        if not (comps or lambdas) or ctx.function is None or _under_unknown_constant_branch(node, ctx):
            return
        local = bound_names(ctx.function, ctx)
        # measured (written set `algorithms`, probes `sortkey_lambda_*`): a lambda given to
        # the script (`sorted(range(n), key=lambda i: scores[i])`) runs in the script's
        # scope too, at both levels: "name 'scores' is not defined" for a parameter, a
        # tensor local, a local list of constants and `self`; a lambda reading only its own
        # arguments or module-level names compiles
        free = _lambda_local(lambdas, local)
        if free is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"`{name}()` is run as a Python script in graph mode, and the lambda given to it cannot see `{free}`, a local of the compiled function (MindSpore: name '{free}' is not defined); sort indices with `ops.sort` / `ops.argsort`, or read only the lambda's arguments",
            )
            return
        for comp in comps:
            own = {n.id for g in comp.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            inner: list[ast.AST] = [comp.key, comp.value] if isinstance(comp, ast.DictComp) else [comp.elt]
            for i, g in enumerate(comp.generators):
                inner.extend(g.ifs)
                if i:
                    inner.append(g.iter)
            for part in inner:
                for sub in ast.walk(part):
                    if isinstance(sub, ast.Name) and sub.id in local and sub.id not in own:
                        yield ctx.diagnostic(
                            self,
                            node,
                            f"`{name}()` is run as a Python script in graph mode, and the comprehension inside it cannot see `{sub.id}`, a local of the compiled function (MindSpore: name '{sub.id}' is not defined); compute it with a loop or a list built first",
                        )
                        return
            said = _global_in_variable_comprehension(comp, inner, own | local, ctx)
            if said is not None and ctx.scope is not None and not ctx.scope.strict:
                # measured (written set `train`, probes `genexpr_*`): over a graph variable
                # such as the gradients a grad function returns, `any(ops.isnan(g).any()
                # for g in grads)` fails under LAX with "name 'ops' is not defined", and so
                # does a module constant; over the tuple a Cell or jit function is given it
                # compiles (STRICT refuses the graph variable itself: MS131)
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{name}()` over the graph variable `{ctx.segment(comp.generators[0].iter)}` is run as a Python script, and the comprehension inside it cannot see the module-level name `{said}` (MindSpore: name '{said}' is not defined); use a loop, or `ops` reductions over a stacked tensor",
                )
                return

    def _script_lambda(self, node: ast.Call, q: str, ctx: Context) -> Iterable[Diagnostic]:
        """`heapq.nlargest(k, range(len(row)), key=lambda j: row[j])`: the call runs as a
        Python script, and a lambda given to it sees only its own arguments and Python's
        builtins: a local of the compiled function, a parameter and even a module-level name
        are not defined there, at both levels (measured, written/heldout21a case
        `r2_ctr_din_top_behaviours_heapq` and probes `hc22_heapq_*`: "name 'row' / 'x' /
        'WEIGHTS' is not defined"; `key=lambda v: -v` compiles under LAX). Unlike `sorted`,
        whose key lambda may read module-level names."""
        lambdas = [a for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Lambda)]
        for fn in lambdas:
            own = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
            own.update(n.id for n in ast.walk(fn.body) if isinstance(n, ast.Name) and type(n.ctx) is ast.Store)
            own.update(a.arg for n in ast.walk(fn.body) if isinstance(n, ast.Lambda) for a in ast.walk(n.args) if isinstance(a, ast.arg))
            for sub in ast.walk(fn.body):
                if isinstance(sub, ast.Name) and type(sub.ctx) is ast.Load and sub.id not in own and not hasattr(builtins, sub.id):
                    yield ctx.diagnostic(
                        self,
                        node,
                        f"`{q}()` is run as a Python script in graph mode, and the lambda given to it sees only its own arguments and builtins, not `{sub.id}` (MindSpore: name '{sub.id}' is not defined); pick with `ops.topk` / `ops.argsort`, or read only the lambda's arguments",
                    )
                    return

    def _primitive_keywords(self, node: ast.Call, q: str | None, name: str, ctx: Context) -> Iterable[Diagnostic]:
        """`ms.mutable(seq, dynamic_len=True)` in compiled code: the parser makes the call a
        primitive's, which takes no keyword arguments (`ms_primitive_functions.json`)."""
        if not q or not q.startswith("mindspore.") or q.rsplit(".", 1)[-1] != name:
            return
        kw = next((k for k in node.keywords if k.arg is not None), None)
        if kw is None:
            return
        yield ctx.diagnostic(
            self,
            kw,
            f"`{name}()` in compiled code is a graph primitive that takes its arguments by position only, not the keyword argument `{kw.arg}` (MindSpore: {_primitive_functions()[name]}); pass it positionally or call `{name}` outside the graph",
        )

    def _function_argument(self, node: ast.Call, q: str, ctx: Context, via_module: bool) -> Iterable[Diagnostic]:
        """A standard-library or third-party call (run as Python from graph mode) given a
        function object and a graph variable: measured, `functools.reduce(operator.mul,
        x.shape, 1)` fails at both levels with "name '__input_0__' is not defined" (the
        interpreted call cannot rebuild its inputs); `np.prod(x.shape)` compiles.
        Under LAX only when the callee is read as an attribute of its module (`via_module`):
        `functools.reduce(operator.add, outs)` on a list of tensors fails ("'int' object is
        not callable"), while `reduce(operator.add, outs)` after `from functools import
        reduce` compiles, with any function and initial value (written/heldout26b case
        `ft_reduce_residual_sum`, probes `fix26b_rd_*`); the imported name fails under LAX
        only folding a shape with an initial value (`reduce(operator.mul, x.shape[1:], 1)`:
        "'int' object has no attribute '__len__'", heldout26b `ft_reduce_mul_shape_numel`).
        `functools.partial` is not run as Python: MindSpore converts it to its own Partial
        (`graph_functions` in `ms_calls.json`), which compiles with graph variables under LAX
        but takes only functions the graph compiles."""
        if q in calls_table.graph_functions():
            fn = node.args[0] if node.args else None
            fq = ctx.qualname(fn) if isinstance(fn, (ast.Name, ast.Attribute)) else None
            if (
                fn is not None
                and fq is not None
                and calls_table.outside_project(fq)
                and not fq.startswith(("builtins.", "operator."))
                and fq not in calls_table.graph_functions()
            ):
                # measured (written/apisurface probes `av_partial_*`): `functools.partial(np.multiply,
                # x)` fails at both levels; a MindSpore op, the user's function or a builtin compiles
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{q}` in compiled code is MindSpore's own Partial, which takes only functions the graph compiles, not the Python function `{ctx.segment(fn)}` (MindSpore: For 'partial', input[0] should be Function, but got External)",
                )
                return
            if ctx.scope is None or ctx.scope.level != "strict":
                return
        if (
            not via_module
            and q == "functools.reduce"
            and ctx.scope is not None
            and ctx.scope.level != "strict"
            and not _folds_shape(node, q, ctx)
        ):
            # (not `starmap(operator.add, pairs)` by name: "'int' object is not callable"
            # under LAX, heldout26b probe `fix26b_sm_operator_add`)
            return
        args = [*node.args, *(k.value for k in node.keywords)]
        func_arg = next((a for a in args if _is_function_object(a, ctx)), None)
        if func_arg is None:
            return
        a = analyzer(ctx)
        for arg in args:
            for sub in ast.walk(arg):
                if isinstance(sub, ast.Name) and a.kind(sub).dynamic:
                    yield ctx.diagnostic(
                        self,
                        node,
                        f"`{q}` runs as Python from graph mode and cannot be given the function `{ctx.segment(func_arg)}` together with the graph variable `{sub.id}` (MindSpore: name '__input_0__' is not defined)",
                    )
                    return

    def _on_receiver(
        self, node: ast.expr, recv: ast.expr, name: str, shown: str, level: str, ctx: Context
    ) -> Iterable[Diagnostic]:
        if not calls_table.rejectable(name):
            return  # no type question for calls MindSpore accepts on every container
        type_name = container_type(recv, ctx)
        if (
            type_name is None
            and level == "strict"
            and name in calls_table.str_only_methods()
            and analyzer(ctx).kind(recv) != Kind.TENSOR
            and not _own_object(recv, ctx)
            and not _module_attribute(recv, ctx)
        ):
            # `name.endswith("_j")` over names from `inspect.signature(...)`, or the names of
            # `parameters_and_names()`: only a str has the method, so it is a str method call
            # (measured, written/heldout23a `mp_propagate_kwargs_inspect`: "cannot get
            # attributes endswith or the String object"), unless the receiver is a tensor or
            # an object of the file's own classes, which may define it
            type_name = "str"
        if type_name is None:
            return
        if isinstance(recv, ast.Name) and type_name != "str":
            # the binding that reaches this read decides, not every binding of the function: a
            # call's result known not to be this container (a MindSpore operator's result):
            # `j = []`, appends, `j = self.stack(j)`, then `j.copy()` is `Tensor.copy` and
            # compiles under STRICT (measured, written/zoo probe `list_rebound_to_stack_then_copy`;
            # `j.copy()` before the rebinding is refused; cmr / DecoMR's SMPL)
            a = analyzer(ctx)
            last = a.dominating_assignment(recv, ctx.function)
            if last is not None and isinstance(last.value, ast.Call):
                t = a.type_class(last.value)
                if (t is not None and t != type_name) or (t is None and _operator_result(last.value, ctx)):
                    return
        kind = Kind.CONST if type_name == "str" else analyzer(ctx).kind(recv)
        holds_tensors = kind.dynamic
        if holds_tensors and name == "index" and not _index_compares_wide_items(recv, ctx):
            return
        verdict = calls_table.method(type_name, name, holds_tensors, level)
        if verdict is None or verdict.accepted:
            return
        if holds_tensors and level == "lax" and opaque_at_lax(recv, ctx.function, ctx):
            # a container JIT Fallback built (`vals = list(x.asnumpy().max(axis=0))`): it holds
            # host values, and LAX runs its methods in Python (measured, fresh difftest seed
            # 10400130: `vals.index(vals[1])` compiles)
            return
        if kind == Kind.UNKNOWN:  # what it holds is not known: only what fails either way
            other = calls_table.method(type_name, name, True, level)
            if other is None or other.accepted:
                return
        if level == "strict" and "cannot get attributes" in verdict.message:
            allowed = ", ".join(calls_table.strict_methods(type_name)) or "none"
            if type_name == "slice":  # measured: `s.start`, `s.stop`, `s.step` compile at STRICT
                allowed += "; its attributes start, stop and step are readable"
            what = f"`{shown}` on a {type_name}" if shown.endswith("(...)") or shown == "|" else f"`{type_name}.{shown}`"
            msg = f"{what} is not available under the STRICT syntax level (MindSpore compiles only these {type_name} methods there: {allowed})"
        else:
            content = "tensors" if holds_tensors else "constants"
            what = f"`{shown}` on a {type_name}" if shown.endswith("(...)") or shown == "|" else f"`{type_name}.{shown}`"
            msg = f"{what} of {content} fails to compile in graph mode (MindSpore: {verdict.message})"
        yield ctx.diagnostic(self, node, msg)


def _keywords_param(recv: ast.expr, ctx: Context) -> bool:
    """Is `recv` the `**kwargs` parameter of the compiled function being checked, never
    rebound there? Measured (written/heldout19a probes `lx20_kw_*`): `kwargs.pop(k, d)` on
    it fails at both levels whether the call passes a tensor (of 1 or 2 rows), a float, a
    tuple or nothing ("For 'TupleGetItem', input[0] should be Sequence, but got Float32",
    "index 1 is out of bounds", "Kernel select failed"), in a sub-cell's `construct` or the
    network's own; `kwargs.get(k, d)` and `kwargs[k]` compile."""
    func = ctx.function
    if type(recv) is not ast.Name or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    kw = func.args.kwarg
    return kw is not None and kw.arg == recv.id and not analyzer(ctx).rebinds(recv.id, func)


def _dead_dict_pop(call: ast.Call, recv: ast.expr, level: str, ctx: Context) -> bool:
    """Is this `d.pop(...)` on a dict dead code MindSpore never evaluates: neither its result
    nor the dict is read afterwards (the dict rebound first, or never read again)? Measured
    (written/lax probes `gf_ph_*`): `v = d.pop('z', 0.0)` with `v` unused and `d` rebound or
    unread compiles at both levels; as a bare statement it compiles under LAX but STRICT still
    refuses the attribute; reading `v` or `d` afterwards fails ("For 'TupleGetItem', input[0]
    should be Sequence")."""
    func = ctx.function
    st = ctx.parent(call)
    if func is None or not isinstance(recv, ast.Name) or container_type(recv, ctx) != "dict":
        return False
    if isinstance(st, ast.Expr):
        if level != "lax":
            return False
        targets: list[str] = []
    elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
        targets = [st.targets[0].id]
    else:
        return False
    p = ctx.parent(st)
    while p is not None and p is not func:
        if isinstance(p, (ast.For, ast.AsyncFor, ast.While)):
            return False  # a later iteration may read what this one left
        p = ctx.parent(p)
    end = (st.end_lineno or st.lineno, st.end_col_offset or 0)
    return not any(_read_after(n, end, func) for n in [*targets, recv.id])


def _read_after(name: str, end: tuple[int, int], func: ast.AST) -> bool:
    """Is `name` read after `end` in `func` before a statement rebinds it?"""
    rebound: tuple[int, int] | None = None
    reads: list[tuple[int, int]] = []
    for n in ast.walk(func):
        if isinstance(n, ast.Name) and n.id == name and (n.lineno, n.col_offset) > end:
            if isinstance(n.ctx, ast.Load):
                reads.append((n.lineno, n.col_offset))
            elif rebound is None or (n.lineno, n.col_offset) < rebound:
                rebound = (n.lineno, n.col_offset)
    # `d = f(d)` reads before it rebinds: the value is read on the rebinding line too
    return any(rebound is None or r[0] <= rebound[0] for r in reads)


def _comprehension_dict_given(node: ast.Call, name: str, ctx: Context) -> str | None:
    """A builtin MindSpore interprets given `d.keys()` (or `sorted(d)`) of a dict built by a
    comprehension with graph variables among its values: the dict reaches the script as the
    tuple of its values (measured at both levels: `sorted(outs.keys())` after
    `outs = {k: x * s for k, s in self.scales.items()}` gives "'tuple' object has no
    attribute 'keys'", `sorted(outs)` sorts the tensors, "more than one element is
    ambiguous"; with constant values, with a dict display, and with `list(outs.keys())`,
    which the graph compiles itself, they compile)."""
    if ctx.function is None:
        return None
    a = analyzer(ctx)
    for arg in node.args:
        if (
            isinstance(arg, ast.Call)
            and isinstance(arg.func, ast.Attribute)
            and arg.func.attr in _DICT_VIEWS
            and not arg.args
            and isinstance(arg.func.value, ast.Name)
        ):
            d, how = arg.func.value.id, f"'tuple' object has no attribute '{arg.func.attr}'"
        elif isinstance(arg, ast.Name) and name == "sorted":
            d, how = arg.id, "the tensors are sorted: more than one element is ambiguous"
        else:
            continue
        bound = a.single_assignment(d, ctx.function)
        if (isinstance(bound, ast.DictComp) and a.kind(bound.value).dynamic) or _filled_with_variables(d, bound, ctx):
            return (
                f"`{name}()` is run as a Python script in graph mode, and the dict `{d}`, holding "
                f"graph variables, reaches it as a tuple of its values (MindSpore: {how}); "
                f"iterate `list({d}.keys())` in the graph, or rank the values with `ops.stack` and `ops.argsort`"
            )
    return None


#: dict methods a sort key may read its argument with
_DICT_READS = frozenset({"get", "keys", "items", "values"})

#: dict views a builtin MindSpore interprets may be given
_DICT_VIEWS = frozenset({"keys", "items", "values"})


def _dicts_sorted_by_key(node: ast.Call, lst: ast.expr, ctx: Context) -> str | None:
    """`hyps.sort(key=lambda h: h["score"])` / `sorted(hyps, key=...)` under LAX, `hyps` a
    local list bound once to `[]` that compiled code grows only with dict displays holding
    a graph variable (`hyps.append({"tokens": seq, "score": float(s)})`), the key lambda
    indexing its argument with a str: LAX runs the sort as Python, each dict reaches it as
    the tuple of its values, and the str index (or `h.get(...)`) fails (measured,
    written/heldout19a probes `lx20_dsort_*`: "tuple indices must be integers or slices,
    not str", "'tuple' object has no attribute 'get'"; a list of tuples sorted by `h[0]`
    compiles)."""
    func = ctx.function
    key = next((k.value for k in node.keywords if k.arg == "key"), None)
    if func is None or not isinstance(key, ast.Lambda) or type(lst) is not ast.Name:
        return None
    params = {a.arg for a in key.args.args}
    index = next(
        (
            n
            for n in ast.walk(key.body)
            if (
                type(n) is ast.Subscript
                and type(n.value) is ast.Name
                and n.value.id in params
                and type(n.slice) is ast.Constant
                and isinstance(n.slice.value, str)
            )
            or (
                type(n) is ast.Call
                and type(n.func) is ast.Attribute
                and n.func.attr in _DICT_READS
                and type(n.func.value) is ast.Name
                and n.func.value.id in params
            )
        ),
        None,
    )
    if index is None:
        return None
    a = analyzer(ctx)
    bound = a.single_assignment(lst.id, func)
    if not (type(bound) is ast.List and not bound.elts):
        return None
    grown = [
        c.args[0]
        for c in a.changes(lst.id, func)
        if not c.nested and c.how in GROWERS and c.args
    ]
    if not grown or not all(
        type(g) is ast.Dict and None not in g.keys and any(a.kind(v).dynamic for v in g.values) for g in grown
    ):
        return None
    return (
        f"under LAX the sort of `{lst.id}` runs as Python, and each dict in it, holding graph "
        f"variables, reaches it as the tuple of its values: the key `{ctx.segment(index)}` fails "
        f"(MindSpore: tuple indices must be integers or slices, not str / 'tuple' object has no attribute 'get'); keep the scores in a "
        f"tensor and rank them with `ops.sort` / `ops.argsort`, or store tuples and sort by `h[0]`"
    )


def _filled_with_variables(d: str, bound: ast.expr | None, ctx: Context) -> bool:
    """`d = {}` then `d[k] = v` with `v` a graph variable (`losses[name] = head(h).mean()` in
    a loop): such a dict reaches an interpreted builtin as a tuple of its values too
    (measured, written/heldout16b probes `ls17_so_*`: `sorted(losses.items(), key=...)`,
    `sorted(losses.keys())`, `sorted(losses.values(), key=...)` fail at LAX and STRICT,
    "'tuple' object has no attribute 'items'"; a dict of constants compiles)."""
    if not (isinstance(bound, ast.Dict) and not bound.keys) or ctx.function is None:
        return False
    a = analyzer(ctx)
    return any(
        isinstance(st, ast.Assign)
        and any(
            isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == d for t in st.targets
        )
        and a.kind(st.value).dynamic
        for st in own_nodes(ctx.function)
    )


def _statement_on_dict_of_tensors(node: ast.Call, recv: ast.expr, ctx: Context) -> bool:
    """`d.setdefault(...)` / `d.pop(...)` as a whole statement, `d` bound once in the
    compiled function to a dict display holding a graph variable."""
    if not isinstance(ctx.parent(node), ast.Expr) or not isinstance(recv, ast.Name):
        return False
    a = analyzer(ctx)
    bound = a.single_assignment(recv.id, ctx.function)
    if not (isinstance(bound, ast.Dict) and any(a.kind(v).dynamic for v in bound.values)):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr == "pop":
        # measured (written/heldout43c case `loss_weighted_dict_losses_filter_keys`, probes
        # `h43c_pop_*`): `d.pop(k)` fails whether or not `d` is read afterwards, with a
        # literal key or a loop's ("For 'TupleGetItem', input[0] should be Sequence, but got
        # Dictionary", "'tuple' object has no attribute 'pop'")
        return True
    # a dict never read afterwards is dead code MindSpore does not compile (measured: famc
    # probes sp_*: `d.setdefault("c", x)` alone compiles under LAX, then `d["c"]` fails)
    func, end = ctx.function, (node.end_lineno or node.lineno, node.end_col_offset or 0)
    return func is not None and _read_after(recv.id, end, func)


def _folds_shape(node: ast.Call, q: str, ctx: Context) -> bool:
    """`functools.reduce(fn, <a shape>, initial)`: the function surely runs on the shape's
    ints (with an initial value it is called even for one dimension), which fails under LAX
    where the same fold over tensors compiles."""
    if len(node.args) != 3:
        return False
    seq = node.args[1]
    if isinstance(seq, ast.Name) and ctx.function is not None:
        bound = analyzer(ctx).single_assignment(seq.id, ctx.function)
        seq = bound if isinstance(bound, ast.expr) else seq
    return any(isinstance(n, ast.Attribute) and n.attr == "shape" for n in ast.walk(seq))


def _is_function_object(e: ast.expr, ctx: Context) -> bool:
    """A function of the standard library / a builtin named without a call. Not a lambda:
    measured, `functools.reduce(lambda a, b: a + b, [x * 2, x])` compiles under LAX (the
    lambda is compiled), and under STRICT MS131 names the graph variables the call gets."""
    if isinstance(e, (ast.Name, ast.Attribute)):
        q = ctx.qualname(e) or ""
        return q.startswith(("operator.", "math.", "builtins."))
    return False




def _under_unknown_constant_branch(node: ast.AST, ctx: Context) -> bool:
    """Is `node` inside an `if` whose condition MindSpore folds while compiling but whose value
    is not known here (`if device not in SUPPORTED:` on an imported constant)? Then the side
    holding `node` may never be compiled, and an error found only while running it at compile
    time would be a guess."""
    a = analyzer(ctx)
    func = ctx.function
    child: ast.AST = node
    parent = ctx.parent(node)
    while parent is not None and parent is not func:
        if (
            isinstance(parent, ast.If)
            and child is not parent.test
            and a.kind(parent.test) == Kind.CONST
            and instances(ctx).evaluate(parent.test, func) is UNKNOWN
        ):
            return True
        child, parent = parent, ctx.parent(parent)
    return False


def _global_in_variable_comprehension(
    comp: ast.expr, inner: list[ast.AST], hidden: set[str] | frozenset[str], ctx: Context
) -> str | None:
    """A module-level name (an import or a module assignment, not a builtin) read inside a
    comprehension whose first iterable is a graph variable, or None."""
    first = comp.generators[0].iter  # type: ignore[attr-defined]
    a = analyzer(ctx)
    args = getattr(ctx.function, "args", None)
    params = {x.arg for x in (*args.posonlyargs, *args.args, *args.kwonlyargs)} if isinstance(args, ast.arguments) else set()
    # a value computed in the function (the tuple a grad function returns), not an input:
    # over the inputs of a Cell or jit function the comprehension compiles
    if not any(
        isinstance(n, ast.Name) and n.id not in params and a.kind(n).dynamic for n in ast.walk(first)
    ):
        return None
    for part in inner:
        for sub in ast.walk(part):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in hidden:
                q = ctx.qualname(sub)
                if (q is not None and not q.startswith("builtins.")) or sub.id in ctx.module_bindings():
                    return sub.id
    return None


def _operator_result(e: ast.expr, ctx: Context) -> bool:
    """Is `e` what a MindSpore operator returns (a tensor, or a tuple of them; never a Python
    list or dict): a call of a `mindspore.` function or class (`ops.stack(j)`), or of a `self`
    attribute `__init__` builds only from them (`self.stack = ops.Stack()`, `nn.Dense(...)`)?"""
    if not isinstance(e, ast.Call):
        return False
    f = e.func
    if (ctx.qualname(f) or "").startswith("mindspore."):
        return True
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"):
        return False
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    built = a.self_values(cls).get(f.attr, []) if cls is not None else []
    return bool(built) and all(
        isinstance(v, ast.Call) and (ctx.qualname(v.func) or "").startswith("mindspore.") for v in built
    )


def container_type(e: ast.expr, ctx: Context) -> str | None:
    """list / tuple / dict / str / slice when the receiver's type is known exactly, else None."""
    if isinstance(e, ast.Constant):
        # a bytes literal is a String of the graph too (`len(b"abc")` under STRICT: "cannot
        # get attributes __len__ or the String object")
        return "str" if isinstance(e.value, (str, bytes)) else None
    if isinstance(e, ast.JoinedStr):
        return "str"
    if isinstance(e, ast.Name):
        if _iterates_dir(e.id, ctx) or _iterates_strs(e.id, ctx, e):
            return "str"  # `for n in dir(obj):`, `for n in ("a", "b"):`: strs
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        if isinstance(bound, ast.Call) and (ctx.qualname(bound.func) or "") == "builtins.slice":
            return "slice"  # `s = slice(1, 3)`
        if (
            isinstance(bound, ast.Call)
            and isinstance(bound.func, ast.Attribute)
            and bound.func.attr in _STR_RESULT
            and container_type(bound, ctx) == "str"
        ):
            return "str"  # `m = self.mode.lower()`: a str method's result
    if isinstance(e, ast.Subscript) and (
        isinstance(e.slice, ast.Slice) or (isinstance(e.slice, ast.Constant) and type(e.slice.value) is int)
    ) and container_type(e.value, ctx) == "str":
        # `name[-1:]`, `name[0]`: a str's slice or character is a str (both compile under
        # STRICT; measured, probe `st22_sa_enumerate_isdigit`: `name[-1:].isdigit()` is refused
        # as `name.isdigit()` is)
        return "str"
    if isinstance(e, ast.Attribute) and _enum_str_attribute(e, ctx):
        return "str"  # `self.mode.name` of an `enum.Enum` member
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult) and any(
        isinstance(v, ast.Constant) and isinstance(v.value, str) for v in (e.left, e.right)
    ):
        return "str"  # `"ab" * n`: a str whatever `n` is
    if isinstance(e, ast.Call) and (copied := _copied_container(e, ctx)) is not None:
        return copied
    if isinstance(e, ast.Call):
        f = e.func
        if isinstance(f, ast.Name):
            q = ctx.qualname(f) or ""
            if q.startswith("builtins.") and q[9:] in _STR_BUILTINS:
                return "str"
            if q == "builtins.slice":
                return "slice"
        elif isinstance(f, ast.Attribute) and f.attr in _STR_RESULT and (
            container_type(f.value, ctx) == "str"
            or (isinstance(f.value, ast.Name) and ctx.qualname(f.value) == "builtins.str")
        ):
            return "str"  # `s.upper()`, and `str.upper(s)` (the method taken from the class)
    if isinstance(e, (ast.Name, ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp, ast.Call)):
        t = analyzer(ctx).type_class(e)
        if t in calls_table.CONTAINER_TYPES:
            return t
        if t in (None, "tensor") and isinstance(e, ast.Name) and ctx.function is not None and e.id in _params_of(ctx.function):
            # a helper's parameter every call gives a dict (`compute_loss(batch)` through
            # `grad_fn(batch)`, `batch = {...}` in the jit step): measured, written/heldout21b
            # case `r2_step_kwargs_forward_dict_unpack` and probes `st22_kw_*`, `batch.pop(...)`
            # there is refused under STRICT as on a local dict
            t = analyzer(ctx).passed_container(e.id, ctx.function)
            if t is not None:
                return t
    if isinstance(e, ast.Name):
        # the bindings of the name disagree: the one that reaches this read decides
        # (`rows = [a, b]`, `rows = rows[::-1]`, then `rows.copy()` is `list.copy`, refused
        # under STRICT: written/zoo probe `z22_list_rebound_slice_copy`)
        last = analyzer(ctx).dominating_assignment(e, ctx.function)
        if last is not None:
            v = last.value
            if isinstance(v, ast.Subscript) and isinstance(v.slice, ast.Slice):
                v = v.value  # a slice of a list is a list, of a tuple a tuple
            got = container_type(v, ctx)
            if got in ("list", "tuple", "dict"):
                return got
    if _self_dict_display(e, ctx) or (isinstance(e, ast.Attribute) and _self_dict_given(e, ctx)):
        # `self.vocab.setdefault(c, n)` with `self.vocab = {}` in `__init__`: a graph dict
        # (measured, written/heldout16b case `r2_feat_vocab_setdefault_strings`: "cannot get
        # attributes setdefault or the Dictionary[[],[]] object" under STRICT); also a dict
        # display every place building the Cell passes (written/heldout30a probes
        # `fix30e_cp_self_cfg_copy_*`: `self.cfg.copy()` is refused under STRICT)
        return "dict"
    if isinstance(e, (ast.Name, ast.BinOp, ast.Attribute, ast.Call, ast.Subscript)) and isinstance(values(ctx).of(e), av.Str):
        return "str"  # `s = "ab" + "c"`, `"%d-%s" % (3, "b")`: a str value
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self" and _self_str_given(e, ctx):
        return "str"  # `self.model_name` of a Cell built with different str constants
    return None


def _self_str_given(e: ast.Attribute, ctx: Context) -> bool:
    """Is `self.<attr>` a str constant for every instance the file builds: stored in
    `__init__` from str literals, or from the parameter every place building the Cell gives
    a str literal (or leaves to a str default)? The values may differ between instances
    (`Wrapper()`, `Wrapper("resnet18")`): each instance's graph holds a str (measured,
    written/heldout32b case `factory_model_name_branch_in_construct`: `startswith` on it is
    refused under STRICT, "cannot get attributes startswith or the String object")."""
    from npu_lsp.rules.graphmode import constructed

    cls = analyzer(ctx).owner_class(ctx.function) if ctx.function is not None else None
    found = constructed.sources(cls, e.attr, ctx, defaults=True) if cls is not None else None
    if not found:
        return False
    for src, where in found:
        value = constructed.built(src, where, ctx) if isinstance(src, ast.Name) else src
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            return False
    return True


def _copied_container(e: ast.Call, ctx: Context) -> str | None:
    """`d.copy()` of a dict is a new dict built from it, as `dict(d)` is: "dict" when the
    receiver is known to be one, also for `self.cfg` holding a dict display the
    constructor was given (measured, written/heldout30a case `r2_cfg_dict_copy_method_pop`:
    `cfg = self.cfg.copy(); cfg.pop("act")` fails at both levels as `dict(self.cfg)` does,
    "For 'TupleGetItem', input[0] should be Sequence, but got String")."""
    f = e.func
    if not (isinstance(f, ast.Attribute) and f.attr == "copy" and not e.args and not e.keywords):
        return None
    recv = f.value
    if isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self":
        return "dict" if _self_dict_given(recv, ctx) else None
    # (a dict only: `list.copy()` is None in the graph, written/MISSES.md family D)
    return "dict" if isinstance(recv, ast.Name) and container_type(recv, ctx) == "dict" else None


def _self_dict_given(e: ast.Attribute, ctx: Context) -> bool:
    """Is `self.<attr>` built only from dict displays: in `__init__`, or the argument every
    place building the Cell passes for the parameter it is bound to?"""
    from npu_lsp.rules.graphmode import constructed

    a = analyzer(ctx)
    cls = a.owner_class(ctx.function) if ctx.function is not None else None
    found = constructed.sources(cls, e.attr, ctx) if cls is not None else None
    if not found:
        return False
    for src, where in found:
        value = constructed.built(src, where, ctx) if isinstance(src, ast.Name) else src
        if not isinstance(value, ast.Dict):
            return False
    return True


def _module_attribute(e: ast.expr, ctx: Context) -> bool:
    """Is `e` an attribute of an imported name (`os.path`)? Its methods are the module's
    functions (`os.path.join("a", "b")` compiles under STRICT, measured on MindSpore 2.10),
    not str methods."""
    while isinstance(e, ast.Attribute):
        e = e.value
    return isinstance(e, ast.Name) and e.id in ctx.scopes.info.imports


def _own_object(e: ast.expr, ctx: Context) -> bool:
    """May `e` be an instance of a class the file defines (which may have any method)?"""
    if isinstance(e, ast.Name) and e.id in ("self", "cls"):
        return True  # `self.partition(...)`, `self.encode(...)`: the cell's own methods
    if not ctx.scopes.info.classes:
        return False
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        return True  # an attribute of the cell: anything `__init__` stored
    return isinstance(e, ast.Name) and instances(ctx).plain_object_class(e, ctx.function) is not None


def _self_dict_display(e: ast.expr, ctx: Context) -> bool:
    """`self.<attr>` bound only to dict displays in its class's `__init__`."""
    if not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"):
        return False
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function) if ctx.function is not None else None
    held = a.self_values(cls).get(e.attr, []) if cls is not None else []
    return bool(held) and all(isinstance(v, ast.Dict) for v in held)


def _iterates_strs(name: str, ctx: Context, at: ast.expr | None = None) -> bool:
    """Is every binding of `name` in the compiled function the target of a `for` over a
    tuple or list display of str constants (`for n in ("a", "b"):`, unrolled: `n` is a str;
    measured, `len(n)` there is refused under STRICT)?"""
    func = ctx.function
    if func is None:
        return False
    params = _params_of(func)
    if name in params:
        return False
    stores = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
    if stores and at is not None and not _in_comprehension_binding(at, name, func, ctx):
        # a comprehension's target is its own variable (Python 3): a read outside every
        # comprehension binding `name` sees only the function's own bindings (written/heldout43c
        # case `aux_loss_sum_over_dict_items`: `{k + f"_{i}": v for k, v in d.items()}` next to
        # `for k, v in losses.items(): k.split("_")`)
        stores = [n for n in stores if not _comprehension_target(n, ctx)]
    if not stores:
        return False
    targets = set()
    for n in ast.walk(func):
        if type(n) is not ast.For and type(n) is not ast.comprehension:
            continue
        it, target = n.iter, n.target
        if (
            isinstance(it, ast.Call)
            and len(it.args) == 1
            and ctx.qualname(it.func) == "builtins.enumerate"
            and isinstance(target, ast.Tuple)
            and len(target.elts) == 2
        ):
            it, target = it.args[0], target.elts[1]  # `for i, t in enumerate(texts)`
        keys = _str_keyed_dict_iteration(it, target, ctx)
        if keys is not None:
            targets.add(id(keys))
            continue
        if not isinstance(target, ast.Name):
            continue
        if (
            isinstance(it, (ast.Tuple, ast.List))
            and it.elts
            and all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in it.elts)
        ) or (
            # `for t in texts` over an input every call gives a list of str constants
            # (written/heldout18b cases `ocr_label_*`: `len(t)` and `for ch in t.lower()`
            # are refused under STRICT, "the String object has no attribute: '__len__'")
            isinstance(it, ast.Name)
            and it.id in params
            and analyzer(ctx).str_sequence_param(it.id, func)
        ) or _held_strs(it, ctx) or _module_strs(it, params, func, ctx):
            targets.add(id(target))
    return all(id(n) in targets for n in stores)


def _comprehension_target(n: ast.Name, ctx: Context) -> bool:
    """Is the stored name `n` (part of) the target of a comprehension's `for`?"""
    child: ast.AST = n
    parent = ctx.parent(n)
    while isinstance(parent, (ast.Tuple, ast.List, ast.Starred)):
        child, parent = parent, ctx.parent(parent)
    return isinstance(parent, ast.comprehension) and parent.target is child


def _in_comprehension_binding(at: ast.AST, name: str, func: ast.AST, ctx: Context) -> bool:
    """Is `at` inside a comprehension (of `func`) one of whose targets binds `name`?"""
    node: ast.AST | None = ctx.parent(at)
    while node is not None and node is not func:
        if isinstance(node, COMPREHENSIONS) and any(
            isinstance(n, ast.Name) and n.id == name for g in node.generators for n in ast.walk(g.target)
        ):
            return True
        node = ctx.parent(node)
    return False


def _module_strs(it: ast.expr, params: set[str] | frozenset[str], func: ast.AST, ctx: Context) -> bool:
    """A module-level name bound once, to a tuple or list display of str constants, that the
    compiled function neither binds nor takes: `for name in AGENTS:` with `AGENTS =
    ["agent_0", "agent_1"]`. The graph holds the global as a constant of Strings, so the loop
    binds a str (measured, written/heldout22a `marl_obs_dict_agent_names`, probes
    `strict24_ms_*`: `name.split("_")` is refused under STRICT, "cannot get attributes split
    or the String object")."""
    if not isinstance(it, ast.Name) or it.id in params:
        return False
    binds = ctx.module_bindings().get(it.id, ())
    if len(binds) != 1 or not isinstance(binds[0], ast.Assign):
        return False
    v = binds[0].value
    if not (
        isinstance(v, (ast.Tuple, ast.List))
        and v.elts
        and all(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in v.elts)
    ):
        return False
    # a local of the same name, or the global changed in place, is not that constant
    return not any(
        isinstance(n, ast.Name) and n.id == it.id and not isinstance(n.ctx, ast.Load) for n in ast.walk(func)
    ) and not _changed_in_place(it.id, ctx)


def _changed_in_place(name: str, ctx: Context) -> bool:
    """`name.append(...)`, `name[i] = ...`, `name += ...` anywhere in the file (the names
    so changed are found once per file)."""
    key = "ms144.changed-in-place"
    changed: set[str] | None = ctx.cache.get(key)
    if changed is None:
        changed = set()
        for n in ast.walk(ctx.tree):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.attr in _IN_PLACE or isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name):
                changed.add(n.value.id)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                changed.add(n.target.id)
        ctx.cache[key] = changed
    return name in changed


_IN_PLACE = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse"})


def _held_strs(it: ast.expr, ctx: Context) -> bool:
    """`self.<attr>` (set by one statement of `__init__`) holding only str constants, followed
    to where the Cell is built: `self.names = [s[0] for s in specs]` with `Heads(SPECS)`,
    `self.names = names` with `Heads(("ctr", "log_price"))`. The graph holds the sequence as
    a constant of Strings, so a loop over it binds a str (measured, written/heldout21a case
    `mtl_task_names_string_branch` and probes `st22_sa_*`: `name.startswith("log_")` is
    refused under STRICT, "cannot get attributes startswith or the String object";
    `name.lower()` and `name == "ctr"` compile). Also a constructor parameter's default
    every place building the Cell leaves (written/heldout37b case
    `zeroshot_templates_format_loop_in_construct`, probes `fix37d_zs_*`: `t.split()` and
    `t.format(c).split()` for `t` in `self.templates` of `templates=("a photo of a {}", ...)`
    are refused under STRICT as of a tuple passed in)."""
    if not (isinstance(it, ast.Attribute) and isinstance(it.value, ast.Name) and it.value.id == "self"):
        return False
    func = ctx.function
    cls = analyzer(ctx).owner_class(func)
    if cls is None or values(ctx)._set_elsewhere(cls, it.attr):
        return False
    return constructed.str_elements(it, func, ctx, defaults=True)


def _str_keyed_dict_iteration(it: ast.expr, target: ast.expr, ctx: Context) -> ast.expr | None:
    """The target bound to the keys in `for k, v in d.items()`, `for k in d.keys()` or
    `for k in d`, `d` a dict display whose keys are all str constants (a local bound once to
    it, or `self.<attr>` bound only to such displays in `__init__`); else None. Measured
    (difftest store seeds 10000134, 10100195, 10700010 and 9 more: `len(name)` in `for name,
    w in self.weights.items()` over `{'a': 0.5, 'b': 2.0}` is refused under STRICT, "cannot
    get attributes __len__ or the String object"; LAX compiles it)."""
    if not (isinstance(target, (ast.Name, ast.Tuple))):
        return None
    d = it
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args and not it.keywords:
        if it.func.attr == "items":
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name)):
                return None
            d, target = it.func.value, target.elts[0]
        elif it.func.attr == "keys":
            d = it.func.value
        else:
            return None
    if not isinstance(target, ast.Name):
        return None
    if isinstance(d, ast.Name):
        if d.id in _params_of(ctx.function) if ctx.function is not None else True:
            return None
        bound = analyzer(ctx).single_assignment(d.id, ctx.function)
        held: list[ast.expr | None] = _returned_values(bound, ctx) if isinstance(bound, ast.Call) else [bound]
    elif isinstance(d, ast.Attribute) and isinstance(d.value, ast.Name) and d.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function) if ctx.function is not None else None
        held = list(a.self_values(cls).get(d.attr, [])) if cls is not None else []
    else:
        return None
    ok = bool(held) and all(
        isinstance(v, ast.Dict)
        and v.keys
        and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in v.keys)
        for v in held
    )
    return target if ok else None


def _returned_values(call: ast.Call, ctx: Context) -> list[ast.expr | None]:
    """What the user function a call compiles returns, one entry per `return` of its own
    (`[None]` when the callee is not known or a `return` gives nothing): `d =
    self.get_losses(x)` with `return {"loss_ce": ..., "loss_mask": ...}` holds that display's
    keys (measured, written/heldout43c case `aux_loss_sum_over_dict_items`, probe
    `h43c_strk_helper_dict_items_split`: `k.split("_")` over its `.items()` is refused under
    STRICT, "cannot get attributes split or the String object")."""
    callee = values(ctx).callee(call, ctx.function)
    if callee is None:
        return [None]
    out: list[ast.expr | None] = [r.value for r in returns_in(callee.body)]  # (not a nested function's)
    return out or [None]


def _enum_str_attribute(e: ast.expr, ctx: Context) -> bool:
    """`.name` of a member of a plain (not int) enum class of the module, or its `.value`
    when the member is assigned a str constant, spelled `Cls.MEMBER` or through `self.<attr>`
    bound to one: a String in the graph (measured, difftest store seeds 10000006, 10700144
    and 4 more: `len(self.mode.name)` with `self.mode = Mode.TRAIN` is refused under STRICT,
    "cannot get attributes __len__ or the String object"; LAX compiles it)."""
    if not (isinstance(e, ast.Attribute) and e.attr in ("name", "value") and ctx.mentions("Enum")):
        return False
    from npu_lsp.rules.graphmode.enum_member_in_graph import (
        class_named,
        enum_classes,
        enum_member_of,
    )

    classes = enum_classes(ctx)
    member = enum_member_of(e.value, classes, ctx) if classes else None
    if member is None or classes[member[0]] != "object":
        return False
    if e.attr == "name":
        return True
    cls = class_named(member[0], ctx)
    for st in cls.body if cls is not None else []:
        if (
            isinstance(st, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == member[1] for t in st.targets)
        ):
            return isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)
    return False


def _iterates_dir(name: str, ctx: Context) -> bool:
    """Is every binding of `name` in the compiled function the target of a `for` (or a
    comprehension) over `dir(...)`? Its values are then str (measured under STRICT:
    `n.endswith("rate")` in `for n in dir(self.cfg)` and `n.startswith("_")` in
    `[n for n in dir(Cfg) if ...]` are refused, "cannot get attributes endswith or the
    String object"; `n.lower()` compiles)."""
    func = ctx.function
    if func is None or "dir(" not in ctx.segment(func) or name in _params_of(func):
        return False
    targets = {
        id(n.target)
        for n in ast.walk(func)
        if isinstance(n, (ast.For, ast.comprehension))
        and isinstance(n.target, ast.Name)
        and isinstance(n.iter, ast.Call)
        and ctx.qualname(n.iter.func) == "builtins.dir"
    }
    stores = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
    return bool(stores) and all(id(n) in targets for n in stores)


def _params_of(func: ast.AST) -> set[str]:
    args = getattr(func, "args", None)
    if not isinstance(args, ast.arguments):
        return set()
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in every if a is not None}


def _inside_int(node: ast.expr, ctx: Context) -> bool:
    """Is `node` part of the argument of an `int(...)` call in the same expression?"""
    child: ast.AST = node
    parent = ctx.parent(node)
    while isinstance(parent, ast.expr):
        if (
            isinstance(parent, ast.Call)
            and child in parent.args
            and ctx.qualname(parent.func) == "builtins.int"
        ):
            return True
        child, parent = parent, ctx.parent(parent)
    return False


def _float_constant(arg: ast.expr, ctx: Context) -> bool:
    """A float known while compiling (a literal, `n / 2` of constant ints, `float(3)`)."""
    if analyzer(ctx).kind(arg) != Kind.CONST:
        return False
    v = values(ctx).of(arg)
    return isinstance(v, av.Scalar) and v.py == "float"


#: tensor methods whose result is a host (numpy / Python) object computed by JIT Fallback
_HOST_METHODS = frozenset({"asnumpy", "tolist", "numpy"})


def _host_value(e: ast.expr, ctx: Context) -> bool:
    """Is `e` computed from a host object (`t.asnumpy()`, `t.tolist()`, a numpy call)? Then
    LAX runs the whole expression in Python (measured on 2.10: `round(float(x.mean().asnumpy()),
    2)` compiles at LAX, where `round(float(x.mean()), 2)` fails); STRICT refuses the host call
    itself (MS130)."""
    for n in ast.walk(e):
        if not isinstance(n, ast.Call):
            continue
        if isinstance(n.func, ast.Attribute) and n.func.attr in _HOST_METHODS:
            return True
        if (ctx.qualname(n.func) or "").startswith("numpy."):
            return True
    return False


#: how a list or tuple the function builds may be bound: a display, a comprehension, or
#: `list(...)` / `tuple(...)` of one (its items are then `Analyzer.list_items`'s, all seen)
_BUILT = (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)


def _index_compares_wide_items(recv: ast.expr, ctx: Context) -> bool:
    """Does `recv.index(t)` compare tensors of more than one element? MindSpore expands
    `index` on a list or tuple the graph builds into `item == t` tests it turns into scalars
    (`TensorToScalar`), which only a tensor of shape `()` or `(1,)` allows. Measured
    (written/heldout40b probes `fix40d_ix_*`, mstests probes `p144_*`): items of shape `()` or
    `(1,)` compile at both levels, whatever `t` is (`scores.index(min(scores))` of
    `((u - c) ** 2).sum()` items); computed items of shape `(3,)` fail ("the input tensor's
    shape must be empty or {1}"); a sequence the caller passes (`updates.index(updates[1])`
    of a tuple input of `(3,)` tensors) and a display of constant tensors compile. So only a
    name every binding of which builds the sequence here, one item of which `ranks` knows to
    be wider than one element, is reported."""
    func = ctx.function
    if type(recv) is not ast.Name or func is None:
        return False
    a = analyzer(ctx)
    values = a.assigned_values(recv.id, func)
    if not values or len(values) != len(a.bindings_of(recv.id, func)) or not all(map(_built, values)):
        return False  # a parameter, a loop variable, a call's result: not built here
    shapes = ranks(ctx)
    for item in a.list_items(recv, func):
        if constant_tensor(item, ctx) is not None:
            continue  # compared while compiling
        if any(multi_element(v) for v in shapes.value_at(item, func, comprehension=True)):
            return True
    return False


def _built(e: ast.expr) -> bool:
    return isinstance(e, _BUILT) or (list_call(e) and isinstance(e.args[0], _BUILT))  # type: ignore[attr-defined]


def _used_as_index(node: ast.expr, ctx: Context, follow: bool = True) -> bool:
    """Does the value of `node` (through arithmetic, or a name bound once to it) reach a
    slice bound, a subscript index or `range(...)`, or get added to or subtracted from a
    tensor? (A name is followed one step, from the `round` call itself.)"""
    child: ast.AST = node
    parent = ctx.parent(node)
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Sub)):
        # added to / subtracted from a tensor (measured: `x + round(2.75)`, `c = round(1.6)`
        # then `x - c` fail with "Cast failed ... Int64Imm"; `x * round(2.75)` compiles)
        other = parent.right if parent.left is node else parent.left
        if analyzer(ctx).kind(other) == Kind.TENSOR:
            return True
    while isinstance(parent, (ast.BinOp, ast.UnaryOp)):
        child, parent = parent, ctx.parent(parent)
    if isinstance(parent, ast.Slice) or (isinstance(parent, ast.Subscript) and parent.slice is child):
        return True
    if isinstance(parent, ast.Call) and child in parent.args and ctx.qualname(parent.func) == "builtins.range":
        return True
    if (
        follow
        and isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
        and ctx.function is not None
    ):
        name = parent.targets[0].id
        return any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and _used_as_index(n, ctx, False)
            for n in ast.walk(ctx.function)
        )
    return False


def _lambda_local(lambdas: list[ast.Lambda], local: frozenset[str] | set[str]) -> str | None:
    """The first local of the compiled function (`local`) one of `lambdas` reads without
    binding it as its own argument, or None."""
    for fn in lambdas:
        own_args = fn.args
        own = {a.arg for a in [*own_args.posonlyargs, *own_args.args, *own_args.kwonlyargs, own_args.vararg, own_args.kwarg] if a is not None}
        for sub in ast.walk(fn.body):
            if isinstance(sub, ast.Name) and sub.id in local and sub.id not in own:
                return sub.id
    return None


def _computed_from_listed(e: ast.expr, ctx: Context) -> ast.expr | None:
    """The list of run-time scalars (see `scalar_list_item`) whose items the number `e` is
    computed from by arithmetic, through local names too (`auc += (fprs[i] - fprs[i + 1]) *
    (tprs[i] + tprs[i + 1]) / 2`, then `round(auc, 4)`). Measured (written/heldout27b
    `metric_result_float_round`, probe `fix27b_rd_float_list_sum_pairs`): "type NoneType
    doesn't define __round__ method" at LAX and STRICT, as `round(vals[0], 2)` itself."""
    if ctx.function is None or type(e) not in (ast.Name, ast.BinOp):
        return None
    a = analyzer(ctx)
    todo: list[ast.expr] = [e]
    seen: set[str] = set()
    while todo and len(seen) < 8:
        cur = todo.pop()
        t = type(cur)
        if t is ast.BinOp:
            todo += [cur.left, cur.right]  # type: ignore[attr-defined]
        elif t is ast.UnaryOp:
            todo.append(cur.operand)  # type: ignore[attr-defined]
        elif t is ast.Subscript:
            listed = scalar_list_item(cur, ctx)
            if listed is not None:
                return listed
        elif t is ast.Name and cur.id not in seen:  # type: ignore[attr-defined]
            seen.add(cur.id)  # type: ignore[attr-defined]
            todo += a.assigned_values(cur.id, ctx.function)  # type: ignore[attr-defined]
    return None


def _in_interpreted_call(node: ast.AST, ctx: Context) -> bool:
    """Is `node` inside the arguments of a call of a builtin the graph does not implement
    (`set(...)`, `sorted(...)`, `dict(...)`: `calls_table.interpreted_builtins`)? LAX runs
    that whole call, comprehensions given to it included, as one Python script, so what
    Python does with the values decides (MindSpore's `parser.py` marks `set`, `dict`,
    `reversed`... SYNTAX_UNSUPPORTED_EXTERNAL_TYPE). Measured (written/fallbackflows probes
    `la23_rd_*`): `set(round(v) for v in vals)`, `set([round(v) ...])`, `sorted(...)`,
    `dict((round(v), 1) for v in vals)` over `.item()` values compile under LAX; `list(...)`
    of the same generator, and `round` outside the call, fail ("For Operator[Round], input's
    type 'Float32' does not match expected type 'Tensor'")."""
    child: ast.AST = node
    p = ctx.parent(node)
    while p is not None and not isinstance(p, (ast.stmt, ast.Lambda)):
        if (
            type(p) is ast.Call
            and child is not p.func
            and type(p.func) is ast.Name
            and p.func.id in calls_table.interpreted_builtins()
            and ctx.qualname(p.func) == f"builtins.{p.func.id}"
        ):
            return True
        child, p = p, ctx.parent(p)
    return False


def _keywords_given(call: ast.Call, ctx: Context) -> list[tuple[ast.AST, str]]:
    """The keyword arguments of `call` by name, with the node to flag: `sep='-'`, and the
    string keys of a dict display unpacked into it, inline or by a local name bound once to
    one (`print(**{'sep': '-'})`, `kw = {'sep': '-'}; print('a', **kw)`), which MindSpore
    refuses as it does the keyword itself (measured, written/lax probes `fix32b_pk_*`: `sep`,
    `end`, `flush`; `**{}` compiles; fresh v4 seeds 9900196, 9930051, 9940104)."""
    out: list[tuple[ast.AST, str]] = []
    for kw in call.keywords:
        if kw.arg is not None:
            out.append((kw, kw.arg))
            continue
        given = kw.value
        if type(given) is ast.Name:
            given = analyzer(ctx).single_assignment(given.id, ctx.function) or given
        if type(given) is ast.Dict:
            out.extend((kw, k.value) for k in given.keys if type(k) is ast.Constant and type(k.value) is str)
    return out
