"""MS189: an in-place container method called as a statement on the result of a call."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.self_attribute_assignment import EXPANDED_METHODS

#: the statement forms MindSpore also turns into an assignment of the receiver: `lst.pop()`
#: as a statement binds the remaining list (measured: `d.setdefault(k, [x]).pop()` fails as
#: `.append` does)
_REBINDING_METHODS = EXPANDED_METHODS | {"pop"}


@rule(code="MS189", name="method-statement-on-call-result", severity="error", family="graphmode")
class MethodStatementOnCallResult(GraphRule):
    """## What it does
    Flags a statement in compiled code that calls an in-place container method (`append`,
    `extend`, `insert`, `update`, `clear`, `reverse`, `pop`) on the result of a call:
    `groups.setdefault(k, []).append(v)`, `d.get("a").append(x)`,
    `self.buffers().append(x)`, `list(xs).append(y)`.

    ## Why is this bad?
    MindSpore's graph parser rewrites such a statement into an assignment of the receiver
    (`T.append(v)` becomes `T = T.append(v)`, its `parse_expr_statement_white_list`), and a
    call cannot be assigned to: `RuntimeError: Only supported augassign to attribute of self,
    variable and index value, but got <class 'ast.Call'>.`, at every syntax level, whatever
    the container holds. PyNative runs the code. On a name, an attribute or an item
    (`groups[k].append(v)`, `self.items.append(v)`) the statement compiles.

    ## Example
    ```python
    def construct(self, x, labels):
        groups = {}
        for i, label in enumerate(labels.tolist()):
            groups.setdefault(label, []).append(x[i])
        ...
    ```

    ## Use instead
    Bind the container first, then mutate the name:
    ```python
    def construct(self, x, labels):
        groups = {}
        for i, label in enumerate(labels.tolist()):
            members = groups.get(label, [])
            members.append(x[i])
            groups[label] = members
        ...
    ```
    or keep the grouping on the device (`ops.unsorted_segment_sum(x, labels, n)`).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level; statements the graph front end rewrites).
    - MindSpore 2.10 `mindspore/graph/_parse/parser.py`: `expand_expr_statement` and
      `parse_expr_statement_white_list`; measured with written/famc probes `sd_*` (setdefault,
      get, a method of `self`, `list(...)` as receivers of append/extend/insert/update/pop
      rejected at LAX and STRICT; `d["a"].append(x)` and `lst[0].append(x)` compile).
    """

    nodes = (ast.Expr,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Expr)
        call = node.value
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in _REBINDING_METHODS
            and isinstance(call.func.value, ast.Call)
        ):
            return
        receiver = ctx.segment(call.func.value)
        yield ctx.diagnostic(
            self,
            call,
            f"`.{call.func.attr}(...)` as a statement on the call `{receiver}`: MindSpore rewrites it as an "
            f"assignment to the call and refuses it; bind the container to a name first",
        )
