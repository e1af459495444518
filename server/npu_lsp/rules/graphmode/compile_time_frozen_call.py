"""MS141: calls evaluated once while compiling and frozen into the graph."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import TYPE_CHECKING

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import DIAGNOSTIC_FILTERS, Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

if TYPE_CHECKING:
    from npu_lsp.scope import GraphScope

_FROZEN_PREFIXES = ("random.", "numpy.random.", "uuid.", "secrets.")
_FROZEN_CALLS = frozenset(
    {
        "time.time",
        "time.time_ns",
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "time.process_time",
        "time.sleep",
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.date.today",
        "os.urandom",
        "os.getpid",
    }
)


@rule(code="MS141", name="compile-time-frozen-call", severity="warning", family="graphmode")
class CompileTimeFrozenCall(GraphRule):
    """## What it does
    Warns about calls in compiled code that read the clock, random numbers or process state
    without tensor inputs: `time.time()`, `random.random()`, `np.random.randint(...)`,
    `datetime.now()`, `time.sleep(...)`. Also inside a `@constexpr` function compiled code
    calls: MindSpore runs it as Python while compiling, so the same holds there.

    ## Why is this bad?
    A call with no tensor inputs runs once, while compiling, and its result is frozen into
    the graph: `time.time()` returns the same value on every later call and
    `random.random()` the same number; `time.sleep` sleeps only while compiling.

    ## Example
    ```python
    @ms.jit
    def f(x):
        return x + random.random()
    ```

    ## Use instead
    Use MindSpore's random ops, which draw new values on every run, or pass the value in:
    ```python
    @ms.jit
    def f(x):
        return x + ops.rand(1)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 4: calls with no tensor inputs run once, while compiling.
    """

    nodes = (ast.Call,)
    # every module above is imported by name in this file ("datetime" contains "time")
    triggers = ("time", "random", "uuid", "secrets", "os")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        q = ctx.qualname(node.func)
        if q is None or not (q in _FROZEN_CALLS or q.startswith(_FROZEN_PREFIXES)):
            return
        a = analyzer(ctx)
        # keywords too: `np.random.choice(3, p=probs)` of a run-time `probs` runs at run time
        # (written/heldout40c probes `fix40e_rnd_np_*`)
        if any(a.kind(arg).dynamic for arg in node.args) or any(a.kind(k.value).dynamic for k in node.keywords):
            return
        yield ctx.diagnostic(
            self, node, f"`{q}` runs once while compiling; its result is frozen into the graph"
        )


def _python_while_compiling(ctx: Context, scope: GraphScope, d: Diagnostic) -> bool:
    """Engine filter: a `@constexpr` body is plain Python run while compiling, never compiled;
    of the graph-mode rules only this one (what it computes is frozen) speaks about it."""
    return scope.kind == "constexpr" and d.code != CompileTimeFrozenCall.code


DIAGNOSTIC_FILTERS.append(_python_while_compiling)
