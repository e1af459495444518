"""MS238: (LAX) a dict a called graph returns, handed to Python by JIT Fallback."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import calls_table
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: views whose receiver Python evaluates inside an interpreted call (`sorted(d.keys())`)
_VIEWS = frozenset({"keys", "items", "values"})
#: attributes a dict has and a tuple has not: read on the tuple Python gets, they fail
_DICT_ONLY = frozenset(m for m in dir(dict) if not m.startswith("_")) - frozenset(dir(tuple))
#: interpreted builtins measured to fail given the returned dict itself (probes
#: `fix33b_sr_sorted_direct`, `fix33b_sr_dict_builtin`)
_MEASURED_ON_DICT = frozenset({"sorted", "dict"})


@rule(code="MS238", name="returned-dict-to-python", severity="error", family="graphmode")
class ReturnedDictToPython(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a dict that a graph of the file returned to
    compiled code (`fx = self.feats(x)`, a sub-cell whose `construct` returns a dict; also
    a method called on `self` or a module-level helper returning one), given a run-time
    value, when the code hands that dict to Python: a dict method the graph does not
    implement (`fx.pop("a")`, `fx.copy()`: all but `get`, `items`, `keys`, `values`,
    `update`, `clear`), or a builtin the graph interprets as a Python script that reads a
    dict method of it anywhere in its arguments (`sorted(fx.keys())`, `sorted(fx.items())`,
    `reversed(list(fx.keys()))`) or, for `sorted` and `dict`, takes the dict itself
    (`sorted(fx)`, `dict(fx)`).

    ## Why is this bad?
    A dict returned by a called graph comes back as the tuple of its values; the graph
    still knows its keys, so `fx[k]`, `for k in fx`, `fx.keys()`, `list(fx.keys())`, `len`,
    `in`, `get`, `update` and stores compile. JIT Fallback (PyExecute) receives the tuple
    itself, and the program stops with `AttributeError: 'tuple' object has no attribute
    'keys'` (`'pop'`, `'items'`, `'copy'`), or, sorting the values, `The tensor should have
    only one element`. The same calls on a dict built in the function itself compile.

    ## Example
    ```python
    class Loss(nn.Cell):
        def construct(self, x, y):
            fx = self.feats(x)
            loss = 0
            for k in sorted(fx.keys()):
                loss += ops.abs(fx[k] - y).mean()
            return loss
    ```

    ## Use instead
    Loop over the keys the graph knows (`for k in fx:`, `for k in fx.keys():`), or over
    constant names held on the Cell (`for k in self.names:`).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback at LAX).
    - Measured on MindSpore 2.10 with the written heldout32a probes `fix32c_dk_*` and
      `fix33b_sr_*`: `sorted(fx.keys())`, `sorted(fx)`, `sorted(fx.items())`, `dict(fx)`,
      `reversed(list(fx.keys()))`, `fx.pop("a")` and `fx.copy()` of a sub-cell's dict, and
      `sorted(d.keys())` of a helper's or a method's, fail under LAX; `for k in fx`,
      `list(fx.keys())`, `tuple(fx.keys())`, `len(fx)`, `"a" in fx`, `fx.get`, `fx.update`,
      `fx["c"] = ...` compile. STRICT refuses the interpreted calls anyway (MS131, MS144).
    """

    nodes = (ast.Call,)
    words = ("{", "dict(", "Dict(")  # the sub-cell builds a dict somewhere in the file

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        if callee is ast.Attribute:
            return receiver == "name" and called in _python_dict_methods()
        return callee is ast.Name and called in calls_table.interpreted_builtins()

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: every call of compiled code comes here
        scope = ctx.scope
        if scope is None or scope.level != "lax" or ctx.function is None:
            return ()
        assert isinstance(node, ast.Call)
        f = node.func
        if type(f) is ast.Attribute:
            if type(f.value) is not ast.Name or f.attr in _VIEWS or f.attr not in _python_dict_methods():
                return ()
            return self._report(node, f.value, f"`.{f.attr}()` is not compiled for dicts", ctx)
        if type(f) is not ast.Name or f.id not in calls_table.interpreted_builtins() or not node.args:
            return ()
        if ctx.qualname(f) != f"builtins.{f.id}":
            return ()
        # Python runs the whole call, its arguments included (`reversed(list(fx.keys()))`):
        # a dict method read there fails on the tuple Python gets; the dict itself given
        # as it is fails where measured (`sorted(fx)` sorts tensors, `dict(fx)`), while
        # `type(fx)` or `repr(fx)` of a tuple would not
        names = [
            n.value
            for a in node.args
            for n in ast.walk(a)
            if type(n) is ast.Attribute and type(n.value) is ast.Name and n.attr in _DICT_ONLY
        ]
        if f.id in _MEASURED_ON_DICT:
            names += [a for a in node.args if type(a) is ast.Name]
        return self._first_reported(node, names, f"`{f.id}(...)` is run by JIT Fallback", ctx)

    def _first_reported(self, call: ast.Call, names: list[ast.Name], why: str, ctx: Context) -> Iterable[Diagnostic]:
        for name in names:
            found = list(self._report(call, name, why, ctx))
            if found:
                yield found[0]
                return

    def _report(self, call: ast.Call, name: ast.Name, why: str, ctx: Context) -> Iterable[Diagnostic]:
        if not _called_dict(name, ctx):
            return
        bound = analyzer(ctx).single_assignment(name.id, ctx.function)
        made = ctx.segment(bound) if bound is not None else name.id
        yield ctx.diagnostic(
            self,
            call,
            f"`{name.id}` is the dict `{made}` returns: {why}, and under LAX Python receives a dict a called graph returned as the tuple of its values (MindSpore: 'tuple' object has no attribute ...); loop over `{name.id}` or `{name.id}.keys()` in the graph instead",
        )


@functools.cache
def _python_dict_methods() -> frozenset[str]:
    """Public dict methods the graph does not compile (measured in `ms_calls.json`: refused
    under STRICT), which LAX runs as Python."""
    compiled = set(calls_table.strict_methods("dict"))
    return frozenset(m for m in dir(dict) if not m.startswith("_") and m not in compiled)


def _called_dict(name: ast.Name, ctx: Context) -> bool:
    """Is `name` bound once, to the call of a graph of the file (a sub-cell's `construct`,
    a method on `self`, a module-level helper) given a run-time value, whose every `return`
    gives a dict? (Called on constants only, it may be folded while compiling.)"""
    a = analyzer(ctx)
    bound = a.single_assignment(name.id, ctx.function)
    return (
        isinstance(bound, ast.Call)
        and a.called_result_class(bound, ctx.function) == "dict"
        and any(a.kind(x).dynamic for x in [*bound.args, *(k.value for k in bound.keywords)])
    )
