"""MS210: (LAX) a string picked from a tuple of strings with a number read from a run-time tensor."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.host_values import host_scalar
from npu_lsp.rules.graphmode.runtime_index_into_constants import (
    built_strings,
    constant_table_display,
)


@rule(code="MS210", name="string-tuple-runtime-pick", severity="error", family="graphmode")
class StringTupleRuntimePick(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags reading a **tuple** of strings (a module-level
    table, a local, or one kept on `self`, also a constructor default such as
    `labels=("positive", "negative")`) with a number read from a run-time tensor:
    `NAMES[int(t.argmax())]`, `self.labels[best]` with `best = int(row.argmax())`,
    `self.table[t.item()]`, also inside `print(...)`. A tuple of strings the program builds
    counts too (`self.itos = tuple(chr(ord("a") + i) for i in range(n))`).

    ## Why is this bad?
    Under LAX `int(t)` is a graph scalar, and MindSpore 2.10 compiles the read as its
    `RealTupleGetItem` kernel, which has no string version: compiling stops with
    `TypeError: Kernel select failed: Select CPU operator[RealTupleGetItem] fail!
    Unsupported data type!`, whether the string is returned, formatted (`"{}:
    {:.2f}".format(...)`) or appended to a list. A **list** of strings read the same way
    compiles (LAX hands the read to Python), and so does a tuple of numbers. STRICT refuses
    the string read outright (MS150).

    ## Example
    ```python
    class PredictLabel(nn.Cell):
        def __init__(self, labels=("positive", "negative")):
            super().__init__()
            self.labels = labels
            self.head = nn.Dense(8, len(labels))

        def construct(self, x):
            return self.labels[int(self.head(x).argmax())]
    ```

    ## Use instead
    Return the index and look the string up outside the network, or keep the names in a
    list (`labels=["positive", "negative"]`).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback: an index from `int(t)` / `.item()` is a run-time
      scalar, so the tuple read is compiled as a graph op).
    - Measured on MindSpore 2.10 CPU: written/heldout21a probes `hc22_fmt_*` (a tuple on
      `self` read with `int(row.argmax())`, returned, formatted or appended: rejected at LAX;
      numbers formatted alone compile), case heldout19a `r2_decode_batch_format_strings`;
      written probes ported `ci_ctor_default_strs` (a tuple default rejected, a list passed
      by keyword compiles), heldout19b `dk19_listpick_returned`, `cv20_list_str_int_item`
      (a module list compiles), generative `seq_item_str_tuple_item`; heldout26a probes
      `fix28a_itos_tuple_*` (a literal or built tuple on `self`, read inside `print(...)`
      or returned: rejected at LAX).
    """

    nodes = (ast.Subscript,)
    words = ("int", "item")  # the index is `int(t)` / `t.item()`, or a name bound to one

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Subscript)
        if type(node.slice) not in (ast.Name, ast.Call) or type(node.ctx) is not ast.Load:
            return ()
        if type(node.value) not in (ast.Name, ast.Attribute):
            return ()
        return self._check(node, ctx)

    def _check(self, node: ast.Subscript, ctx: Context) -> Iterable[Diagnostic]:
        if ctx.function is None or not ctx.scope or ctx.scope.level != "lax" or not host_scalar(node.slice, ctx):
            return
        table = constant_table_display(node.value, ctx)
        if table is None:
            if built_strings(node.value, ctx) != "tuple":
                return
        elif type(table) is not ast.Tuple or not all(type(e) is ast.Constant and type(e.value) is str for e in table.elts):
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(node)}` picks a string from the tuple `{ctx.segment(node.value)}` with `{ctx.segment(node.slice)}`, a number read from a run-time tensor: under LAX MindSpore compiles this as its RealTupleGetItem kernel, which has no string version (Kernel select failed); return the index and look the name up outside the network, or keep the names in a list",
        )
