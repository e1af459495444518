"""MS210: a string (or bool) picked from a tuple with a number read from a run-time tensor (LAX),
or from a list and then concatenated or compared."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.dict_keys import folded_away, folded_membership
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes
from npu_lsp.rules.graphmode.host_values import host_scalar
from npu_lsp.rules.graphmode.runtime_index_into_constants import (
    bool_table,
    built_strings,
    constant_table_display,
)
from npu_lsp.rules.graphmode.runtime_scalars import runtime_scalar


@rule(code="MS210", name="string-tuple-runtime-pick", severity="error", family="graphmode")
class StringTupleRuntimePick(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags reading a **tuple** of strings (a module-level
    table, a local, or one kept on `self`, also a constructor default such as
    `labels=("positive", "negative")`) with a number read from a run-time tensor:
    `NAMES[int(t.argmax())]`, `self.labels[best]` with `best = int(row.argmax())`,
    `self.table[t.item()]`, also inside `print(...)`. A tuple of strings the program builds
    counts too (`self.itos = tuple(chr(ord("a") + i) for i in range(n))`), and so does a
    tuple of bools, or a local list of bools the function stores into (`flags = [False] *
    n`, `flags[0] = True`, then `flags[int(t)]`).

    Also, at both levels, a string picked the same way from a **list** of strings (a module
    list, one on `self`, a local list; under STRICT only a local list, MS150 flags the
    others) when the string is then concatenated or compared: `text += VOCAB[int(t)]`,
    `text = text + VOCAB[i]`, `" " + tok` or `tok == "[SEP]"` with `tok = VOCAB[int(ids[k])]`.

    ## Why is this bad?
    Under LAX `int(t)` is a graph scalar, and MindSpore 2.10 compiles the read as its
    `RealTupleGetItem` kernel, which has no string or bool version: compiling stops with
    `TypeError: Kernel select failed: Select CPU operator[RealTupleGetItem] fail!
    Unsupported data type!`, whether the string is returned, formatted (`"{}:
    {:.2f}".format(...)`) or appended to a list. A **list** of strings read the same way
    compiles (LAX hands the read to Python), and so does a tuple of numbers. STRICT refuses
    the string read outright (MS150).

    The string a list gives is a str whose value is known only at run time, and MindSpore
    concatenates and compares strs while compiling: `+` and `==` / `!=` stop with `Failed
    to infer for primitive:string_concat` (`string_eq`), in a loop or not (without a loop
    LAX may abort instead). Returning it, formatting it (f-string, `format`), `len`,
    `startswith`, `" ".join([...])`, `tok in ("a", "b")` and slicing it first (`tok[2:] +
    "x"`) compile under LAX.

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
    list (`labels=["positive", "negative"]`) and do not concatenate or compare the picked
    name inside the network (return the indices and build the text in Python).

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
    - Lists of strings concatenated or compared, and bools: written/heldout29b cases
      `gen_stop_strings_decoded_text`, `lbl_wordpiece_merge_strings` and probes
      `fix30b_pick_*` (`+`, `+=`, `==`, `!=` rejected or aborted, the other uses above
      compile), `fix30b_booltuple_read_noloop`, `fix30b_boollist_*`.
    """

    nodes = (ast.Subscript,)
    words = ("int", "item")  # the index is `int(t)` / `t.item()`, or a name bound to one

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Subscript)
        if type(node.slice) not in (ast.Name, ast.Call, ast.BinOp) or type(node.ctx) is not ast.Load:
            return ()
        if type(node.value) not in (ast.Name, ast.Attribute):
            return ()
        return self._check(node, ctx)

    def _check(self, node: ast.Subscript, ctx: Context) -> Iterable[Diagnostic]:
        if ctx.function is None or not ctx.scope:
            return
        strict = ctx.scope.level != "lax"
        if strict and (type(node.value) is not ast.Name or not _local_list(node.value.id, ctx)):
            return  # under STRICT MS150 refuses the pick itself, except from a local list
        held = _held(node.value, ctx)
        if held is None or not (host_scalar(node.slice, ctx) or runtime_scalar(node.slice, ctx) is not None):
            return
        kind, what = held
        if strict and (kind, what) != ("list", "strings"):
            return
        if kind == "tuple":
            if _only_folded_tests(node, ctx):
                return
            yield ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(node)}` picks a {what[:-1]} from the tuple `{ctx.segment(node.value)}` with `{ctx.segment(node.slice)}`, a number read from a run-time tensor: under LAX MindSpore compiles this as its RealTupleGetItem kernel, which has no {what[:-1]} version (Kernel select failed); return the index and look it up outside the network, or keep the {what} in a list",
            )
            return
        if what != "strings":
            return
        use = _value_needed(node, ctx)
        if use is None:
            return
        yield ctx.diagnostic(
            self,
            use,
            f"`{ctx.segment(node)}` picks a string from the list `{ctx.segment(node.value)}` with `{ctx.segment(node.slice)}`, a number read from a run-time tensor, so the graph holds a str whose value is known only at run time; MindSpore concatenates (`+`) and compares (`==`) strs while compiling, so `{ctx.segment(use)}` fails (Failed to infer for primitive:string_concat / string_eq); return the index and build the text outside the network",
        )


def _held(e: ast.expr, ctx: Context) -> tuple[str, str] | None:
    """("tuple" / "list", "strings" / "bools") for a table of str constants (also one the
    program builds, `built_strings`) or of bool constants that `e` stands for. A local list
    of bools stored into (`flags[0] = True`) counts as a tuple: once changed, LAX no longer
    hands its reads to Python (measured, written/heldout29b probes
    `fix30b_boollist_setitem_const_read_rt`, `fix30b_boollist_store_const_idx_read_rt_loop`:
    "Select CPU operator[RealTupleGetItem] fail"; the same list never stored into compiles,
    `fix30b_boollist_read_loop`)."""
    flags = bool_table(e, ctx)
    if flags is not None:
        kind, changed = flags
        return ("tuple" if changed else kind), "bools"
    table = constant_table_display(e, ctx)
    if table is None:
        built = built_strings(e, ctx)
        return (built, "strings") if built is not None else None
    kind = "tuple" if type(table) is ast.Tuple else "list"
    if all(type(x) is ast.Constant and type(x.value) is str for x in table.elts):
        return kind, "strings"
    if all(type(x) is ast.Constant and type(x.value) is bool for x in table.elts):
        return kind, "bools"
    return None


def _local_list(name: str, ctx: Context) -> bool:
    """A list display the compiled function binds `name` to once (MS150 leaves its reads
    alone under STRICT; measured, probe `fix30b_pick_local_list_plus_loop`: `text +=
    vocab[int(t)]` fails there too, "Failed to infer for primitive:string_concat")."""
    return type(analyzer(ctx).single_assignment(name, ctx.function)) is ast.List


def _value_needed(pick: ast.Subscript, ctx: Context) -> ast.AST | None:
    """The first place the picked str (or a name bound once to it) is concatenated with `+`
    / `+=` or compared with `==` / `!=`: the uses MindSpore evaluates while compiling."""
    use = _needing(pick, ctx)
    if use is not None:
        return use
    parent = ctx.parent(pick)
    if type(parent) is not ast.Assign or len(parent.targets) != 1 or type(parent.targets[0]) is not ast.Name:
        return None
    name = parent.targets[0].id
    if analyzer(ctx).single_assignment(name, ctx.function) is not pick:
        return None
    found: list[ast.AST] = []
    for n in own_nodes(ctx.function):  # type: ignore[arg-type]
        if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load:
            use = _needing(n, ctx)
            if use is not None:
                found.append(use)
    return min(found, key=lambda u: (getattr(u, "lineno", 0), getattr(u, "col_offset", 0))) if found else None


def _needing(e: ast.expr, ctx: Context) -> ast.AST | None:
    """The `+`, `+=` or `==` / `!=` that reads the str `e` directly."""
    p = ctx.parent(e)
    t = type(p)
    if t is ast.BinOp and type(p.op) is ast.Add:  # type: ignore[union-attr]
        return p
    if t is ast.AugAssign and type(p.op) is ast.Add:  # type: ignore[union-attr]
        return p
    if t is ast.Compare and all(type(op) in (ast.Eq, ast.NotEq) for op in p.ops):  # type: ignore[union-attr]
        return p
    return None


def _only_folded_tests(pick: ast.Subscript, ctx: Context) -> bool:
    """Is the picked value (or a name bound once to it) read only as the key of dict
    membership tests MindSpore folds while compiling (`k in self.by_name`, MS121's
    `folded_membership`), or in code such a test folds away? The pick is then dead and never
    compiled (measured, written/heldout38c probe `fix39a_in_dict_name_pick`: `k =
    self.names[int(x[0]) - 1]` then `if k in self.by_name:` compiles at LAX)."""
    def folded_key(e: ast.expr) -> bool:
        p = ctx.parent(e)
        return type(p) is ast.Compare and p.left is e and folded_membership(p, ctx) is not None

    if folded_key(pick):
        return True
    parent = ctx.parent(pick)
    if type(parent) is not ast.Assign or len(parent.targets) != 1 or type(parent.targets[0]) is not ast.Name:
        return False
    name = parent.targets[0].id
    if ctx.function is None or analyzer(ctx).single_assignment(name, ctx.function) is not pick:
        return False
    reads = [n for n in own_nodes(ctx.function) if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load]
    return bool(reads) and all(folded_key(n) or folded_away(n, ctx) for n in reads)

