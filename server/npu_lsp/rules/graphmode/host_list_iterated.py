"""MS193: (LAX) a list comprehension, `filter` or appending `for` over a run-time tensor's values
turned into a Python list of 3 or more items."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace
from math import prod

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.entries import entry_callers
from npu_lsp.rules.graphmode.flow import Kind, analyzer, python_number
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes
from npu_lsp.rules.graphmode.host_values import host_iterable as _host_iterable
from npu_lsp.rules.graphmode.host_values import host_names, runs_only_if_reached
from npu_lsp.rules.graphmode.interpreted import interpreted, joined_in_tensor_while
from npu_lsp.rules.graphmode.tensor_filtered_comprehension import runtime_scalar_list
from npu_lsp.rules.graphmode.tensor_names import TENSOR_CLASS

Shape = tuple[int | None, ...]

#: fewest items of a host list MindSpore 2.10 cannot iterate this way (2 compile, 3 fail)
_LEAST = 3
#: tensor methods whose result is host data JIT Fallback computes at run time
_HOST = frozenset({"tolist", "asnumpy", "numpy"})
#: tensor / numpy methods that keep the shape
_SAME = frozenset(
    {"astype", "float", "int", "half", "double", "long", "bool", "to", "copy", "clone", "abs", "exp", "sigmoid", "round"}
)
#: reductions over one axis (`axis=` / `dim=` or the first positional argument)
_REDUCE = frozenset({"argmax", "argmin", "max", "min", "sum", "mean", "prod", "any", "all", "amax", "amin"})
#: builtins that keep a host list's length
_KEEP_LEN = frozenset({"list", "tuple", "sorted", "reversed", "enumerate"})
#: `ops` functions whose result has their first argument's shape
_SAME_OPS = frozenset(
    {"softmax", "log_softmax", "relu", "sigmoid", "tanh", "exp", "abs", "cast", "gelu", "silu", "sqrt", "square", "neg", "log", "argsort"}
)
#: tensor methods that keep the shape besides `_SAME` (elementwise, or along one axis)
_SAME_METHODS = frozenset({"sqrt", "square", "neg", "log", "relu", "sigmoid", "tanh", "softmax", "log_softmax", "argsort"})
#: binary operators numpy / MindSpore broadcast elementwise
_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
#: nn cells that keep their input's shape
_SAME_CELLS = frozenset({"ReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax", "Dropout", "Identity", "SiLU"})
#: list methods that grow a list in place
_GROW = frozenset({"append", "extend", "insert"})
#: functions LAX runs by JIT Fallback on a list of run-time values, giving a sorted list
#: (the position of the list among their arguments)
_SORTING = {"builtins.sorted": 0, "heapq.nlargest": 1, "heapq.nsmallest": 1}
#: what a file must say for host data to be made in it
_HOST_WORDS = (*(f".{m}(" for m in sorted(_HOST)), "sorted(", "nlargest(", "nsmallest(")
#: scope kinds checked: entries, and (over an item of host data only) what they call
_KINDS = frozenset({"construct", "jit", "helper", "jit_class"})


@rule(code="MS193", name="host-list-iterated", severity="error", family="graphmode")
class HostListIterated(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a list comprehension, a `filter(...)`, or a
    `for` loop that appends to a list, over the values of a tensor computed at run time turned
    into Python data (`x.tolist()`, `x.asnumpy()`, `list(...)`, `zip(...)`, `enumerate(...)`
    of them, or a name bound to one), in a network's `construct` or an `@ms.jit` function,
    when that list has 3 or more items: its length is read from the tensor every module-level
    call passes (`net(Tensor(np.random.randn(4, 10)))`) through indexing, one-axis reductions
    (`argmax(axis=-1)`), `flatten`, `reshape`, `squeeze`, elementwise arithmetic of two
    tensors (broadcast), `nn.Dense` (its output size a literal, a module constant,
    `len(MODULE_LIST)` or an `__init__` argument),
    `nn.Embedding`, an `nn.SequentialCell` of those and shape-keeping cells, `[:k]` slices
    (also of a JIT Fallback `sorted(...)`) and `ops.topk` / `Tensor.topk` (`k` a literal, a
    constant on `self`, an `__init__` argument or a parameter every call gives one literal;
    of a flattened tensor, `topk(m.reshape(-1), k)`, k items whatever `m`'s shape). A
    comprehension's element that is its own variable over such data (`[i for i, _ in
    ranked]`) is Python data. A `for` appending tuples or lists of its own
    variables (`out.append((i, v))`) is flagged from 2 items, one appending a dict display
    (`segs.append({"id": i})`) from 1 ("DynamicSequence does not support dictionary type
    as element type now"). Adding to the list with `+=` (or `out = out + [...]`) fails
    sooner: a dict or a tuple display of the loop's variables from 1 item, the variables
    themselves (`out += [v]`) from 2; `extend` with a dict display from 1 (written/heldout37d
    probes `fix38a_ds_*`; tensors and a constant `range` compile). An appending `for` over
    such data inside another `for` of the function (`for i in range(2): for v in
    x[i].tolist(): out.append(v)`, even a `range(1)` and 1 value) is flagged whatever the
    lengths: the list it grows stops being a list ("'float' object has no attribute
    'append'", "object of type 'float' has no len()"; probes `fix38a_nest_*`). Whatever the length, it also
    flags them over an item of such host data (`for row in idx.asnumpy().tolist():` then
    `[int(r) for r in row]`, also `for j, c in enumerate(seq)` in `for seq, ps in zip(...)`),
    and over `sorted(lst, ...)`, `heapq.nlargest(k, lst, ...)` or `heapq.nsmallest` (maybe
    sliced, or a name bound to it, also later in a loop holding both) of a local list
    holding Python values computed from tensors (`cands.append((i, float(x[i])))`), or
    tensors (`cands.append((seq + [idx[k]], score + vals[k]))`, `[x[i].sum() for i in
    ...]`), where the appending `for` may append in a nested loop (beam search),
    when what it builds is read afterwards other than by returning it as it is. An appended item the flow analysis cannot
    type counts as Python data when it is a list display or comprehension, or reads the
    loop's own variables (`rows.append([counts.get(i, 0) for i in range(v)])` in a `for seq
    in ids.asnumpy().tolist()`). A list comprehension whose `len` compiled code reads is
    flagged whatever its length, and so is one over 1-D host data (numbers, or `zip` /
    `enumerate` / `sorted` of such lists) that compiled code sums (`sum(vals)`, `sum(vals,
    0.0)`), takes the `max` / `min` of, indexes or slices; one never read, or written inside a builtin LAX runs as
    Python (`sorted([...])`), is not. Also, whatever the length, a comprehension over an
    item of an outer comprehension's host data (`[[v * 2 for v in row] for row in
    x.tolist()]`, in helpers too), and one over values of a tensor LAX holds as a Python
    object after JIT Fallback (`x = x + len(str(s)) * 0`, `x + math.tanh(s)`, `x +
    ms.Tensor(host_list)`, a namedtuple's field, a helper or `@ms.jit` function returning
    one, `functools.reduce(...)` of tensors, `x * max(s, 0.1)` of a run-time scalar `s`:
    `[float(d) for d in (x.shape[0], x.shape[1],
    x.ndim)]`, `[float(d) for d in x.shape]`, `[float(v) for v in x[0]]`), and a `for` appending to a list over such values
    (`for v in x[0]: lst.append(v)`: "'Tensor' object has no attribute 'append'").

    ## Why is this bad?
    Under LAX, `tolist()` / `asnumpy()` of a run-time tensor is run by JIT Fallback, and
    MindSpore 2.10 cannot build a comprehension (or a `filter`, or a loop appending to a list)
    over the Python list it gives when the list has 3 or more items: compiling stops with
    `TypeError: unsupported operand type(s) for +: 'float' and 'list'`, `For Tensor, the
    input_data is ('c',) that contain unsupported element`, `'float' object has no attribute
    'append'` or `The pointer[seq_abs] is null`, whatever the loop does with the items. The
    same code over 1 or 2 items compiles, and so do `map(...)`, `sum(...)` and indexing the
    list; appending tuples of the items fails over 2 already ("The prim 'ListAppend', the
    input_data must be list and target must be scalar or tensor"). A list built over a
    JIT Fallback `sorted` / `heapq.nlargest` result can be returned as it is, but `len`,
    an index or a later sort of it fail ("'int' object has no attribute '__len__'",
    "cannot get item by index from an empty sequence"). An appending `for` that leaves early
    (`break` or `return`) under a test known only at run time (`if t == eos_id: break`) builds
    a list LAX can return (`return lst`, `return [lst]`), whatever the length; reading that
    list afterwards (`len`, `sum`, `Tensor(...)`, or returning it in a tuple) fails as
    without the `break`, and so does a `break` under a test known while compiling or nested
    in a second `if`. A comprehension over 1 or 2 host numbers is not safe either once it
    is summed, `max`-ed, indexed or sliced ("Failed to infer for primitive:typeof",
    "'float' object is not subscriptable", "The object is not iterable"; written/heldout19b
    probes `lx20_*`). STRICT refuses `tolist` / `asnumpy` themselves (MS130).

    ## Example
    ```python
    NAMES = ["cat", "dog", "bird", "fish"]

    class Predict(nn.Cell):
        def construct(self, x):
            idx = self.fc(x).argmax(axis=-1)
            return idx, [NAMES[i] for i in idx.tolist()]

    net = Predict()
    net(Tensor(np.random.randn(8, 16).astype(np.float32)))
    ```

    ## Use instead
    Return the tensor and turn it into Python data outside the network:
    ```python
    idx = net(x)
    names = [NAMES[i] for i in idx.asnumpy().tolist()]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback makes LAX run `tolist` / `asnumpy` as Python).
    - The length of a row picked with a loop counter (`boxes[i].tolist()` in `for i, _ in
      enumerate(ids)` or `for i in range(n)`) is the row's: written/heldout37d
      `detections_per_image_loop_tolist`, `r2_post_coco_results_tuples_append` and probes
      `fix37f_ds_counter_*` / `fix37f_ds_enum_*` (in such an outer loop even 1 tuple or 1-2
      Python values per row fail; not flagged below the thresholds above: a miss).
    - Measured on MindSpore 2.10 with the written set `lax` probes `tl_*`, `io_m`, `io_s`,
      `lp_c`, `lp_l`, `ob_k` (3 items: rejected; 2 items: `tl_j`, `tl_l`, `tl_p_*axis1`,
      `tl_p_comp_over_column_getitem`, `lp_k` compile) and `tn_*` (lengths 1 and 2 compile,
      3, 4, 5 and 8 are rejected, in `construct` and in `@ms.jit` functions, for
      comprehensions, `filter`, `enumerate`, rows of a 2-D `tolist()` and appending loops),
      and the cases `heads/tolist_labels_to_names`, `inference/vocab_decode_asnumpy_join`,
      `algorithms/sort_by_key_tuple_list`; rows and `sorted`: the written set `heldout14`
      (`rec_topk_recall_item_list`, `s2s_detokenize_strip_special`,
      `s2s_beam_search_python_lists`) and its probes `lx_tr_*` (rows of 2 and 5 items
      rejected; `sum(row)`, `row[0]` and tensor items compile) and `lx_sb_*` (`len`, an index
      and a `for` that accumulates a number over the sorted list compile); appended lists and
      host values: `stdlib_collections_counter_vocab` and the probes `lx_ct_*`; the written
      heldout14b probes `hv_topk_*` (k = 2 compiles, 3 and 4 are rejected, k from a literal,
      `self`, `__init__` or a call argument), `hv_tolist_append_{tuple,list}_k*` (1 item
      compiles, 2 are rejected), `hv_sorted_for_append_*` / `hv_nlargest_for_append_*` /
      `hv_heap_*` (the list returned as it is compiles; `len`, `[0]`, a beam loop fail);
      lists of tensors sorted: the written heldout22b probes `lax24b_sorted_tensor_*` and
      heldout21a `ctc_beam_sorted_lambda_tuples`, `tc22_sorted_lambda_tensor_tuples_loop`;
      early exits: the written heldout16b probes `fe_br_*` (a `break` or `return` under a
      run-time test, the list returned as it is: compiles over 10 items; the list read by
      `len`, `sum` or `Tensor`, or a `break` under a constant test: rejected);
      the written heldout15b probes `ls_tk_*` (flattened topk: k = 1 compiles, 2 and 3 fail
      appending tuples), `ls_sq_*` (SequentialCell rows: 2 compile, 3 fail), `ls_so_*`
      (`sorted(...)[:2]` compiles, `[:3]` fails; `nn.Dense(4, 2)` rows compile, `(4, 5)`
      fail) and cases `r2_anom_topk_regions_list`, `r2_rl_categorical_sample_python_random`,
      heldout15a `r2_gen_sorted_lambda_topk_python`.
    - The written famc probes `lc_*`: comprehensions over 1, 2 and 3 host items whose `len`
      is read fail; unread, or inside `sorted(...)`, they compile.
    - The written famc probes `g17_ct_*` (nested comprehensions over rows of 2 and 3 items
      fail, `sum(row)` compiles; a parameter read before its first rebinding keeps the
      call's shape) and `g17_an_*` (comprehensions over 1, 2 or 3 shape values or a row of
      a tensor made by `str`, an f-string, `math.tanh`, `ms.Tensor(host list)`, a
      NamedTuple, a conditional expression on host data or an `@ms.jit` function doing so
      fail; after `float(t)`, `t.item()` or a rebinding to a graph op they compile).
    - The written lax probes `genfresh31_fl_*`, `genfresh31_lm_*`, `genfresh31_nt_*`: such
      a value also comes from `self.<n>` the function stores a Python number on (`self.calls
      += 1; x = x + self.calls * 0`), from a local arithmetic lambda given one (`f = lambda
      t: t * 2; x = f(x) / 2`), and from an item unpacked from a `collections.namedtuple`
      (`v, s = Out(x, 2.0)`); fresh v5 seeds 11800077, 11800121, 11800183.
    - A list comprehension given to the tensor constructor (`ms.Tensor([[v * 2 for v in row]
      for row in x.tolist()])`) or to a function neither MindSpore nor a builtin, under an
      `if` / `while` whose test is a run-time tensor value, is a warning: it fails only when
      that body runs ("unsupported operand type(s) for +: 'float' and 'list'"; written/lax
      probes `genfresh38_wt_tolist_comp_*`, `genfresh38_rt_*tolist_comp*`; fresh v6 seed
      12001319).
    - A comprehension converting the items of a list of tensor operations on such a tensor
      (`bp.append(ops.argmax(x[s]))` or a display, then `[int(b) for b in bp]`) fails under
      LAX, "Failed to infer for primitive:typeof" (written/lax probes `fix42b_tf_fb_*`; v6
      seed 12001454); over a graph tensor's, `sum(bp)`, `int(bp[0])` and the conversion
      inline compile.
    """

    nodes = (ast.ListComp, ast.Call, ast.For)
    # the calls making host data, or a value JIT Fallback makes (`interpreted`; numpy calls
    # left out: `np.` is in most files, and numpy on run-time values mostly starts from host
    # data; ` = None`: a name joined with None under a tensor condition, `interpreted._none_joined`)
    words = (*_HOST_WORDS, "str(", ".format(", "math.", "functools.", "reduce(", "max(", "min(", "NamedTuple", "namedtuple(", "f'", 'f"', " = None")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        scope = ctx.scope
        if scope is None or scope.level != "lax" or scope.kind not in _KINDS:
            return ()
        t = type(node)
        if t is ast.For and _appends(node.body) and _interpreted_items(node.iter, ctx):  # type: ignore[attr-defined]
            return self._interpreted_loop(node, ctx)  # type: ignore[arg-type]
        if not _host_file(ctx):
            # no host data in the file: only comprehensions over interpreted values
            return self._interpreted(node, ctx) if t is ast.ListComp else ()  # type: ignore[arg-type]
        if t is ast.Call:
            f = node.func  # type: ignore[attr-defined]
            if type(f) is not ast.Name or f.id != "filter" or len(node.args) != 2:  # type: ignore[attr-defined]
                return ()
            it, what = node.args[1], "`filter`"  # type: ignore[attr-defined]
        elif t is ast.For:
            targets = {n.id for n in ast.walk(node.target) if type(n) is ast.Name}  # type: ignore[attr-defined]
            if not _grows_list(node.body, ctx, targets=targets):  # type: ignore[attr-defined]
                if _appends(node.body) and _sorted_at_run_time(node.iter, node, ctx) is not None:  # type: ignore[attr-defined]
                    return self._check(node, node.iter, "a `for` appending to a list", ctx)  # type: ignore[attr-defined]
                return ()
            it, what = node.iter, "a `for` appending to a list"  # type: ignore[attr-defined]
            least = _appends_host_tuple(node.body, targets)  # type: ignore[attr-defined]
            if least:
                return self._check(node, it, what, ctx, least=least)
        else:
            if tensor_items(node.elt, ctx) and not _own_host_item(node, ctx):  # type: ignore[attr-defined,arg-type]
                return ()  # a list of tensors (`[x[i] for i in idx.tolist()]`) compiles
            it = node.generators[0].iter  # type: ignore[attr-defined]
            what = "a list comprehension"  # generators: MS173
            if runs_only_if_reached(node, ctx):  # type: ignore[arg-type]
                return self._when_reached(self._check(node, it, what, ctx))
        return self._check(node, it, what, ctx)

    @staticmethod
    def _when_reached(found: Iterable[Diagnostic]) -> Iterable[Diagnostic]:
        """A comprehension run as Python under a test decided at run time fails only when it
        runs (measured, written/lax probes `genfresh38_wt_tolist_comp_*` and
        `genfresh38_rt_*_tolist_comp*`; fresh v6 seed 12001319): a warning."""
        for d in found:
            yield replace(d, severity="warning", message=d.message.replace(": under LAX", ": under LAX, when it runs (here under a test decided at run time),", 1))

    def _interpreted(self, node: ast.ListComp, ctx: Context) -> Iterable[Diagnostic]:
        it = node.generators[0].iter
        if (type(it) in (ast.Tuple, ast.List, ast.Subscript, ast.Attribute) and _interpreted_items(it, ctx)) or (
            type(it) is ast.Name and _ops_on_interpreted(it, ctx)
        ):
            yield ctx.diagnostic(
                self,
                node,
                f"a list comprehension over `{ctx.segment(it)}`, values of a tensor LAX holds as a Python object (it went through JIT Fallback: `str`, `math`, numpy, an f-string, `asnumpy()` of run-time values, here or in the function that made it): MindSpore cannot build it over such values; keep that arithmetic in tensor ops, or read shapes before the fallback",
            )

    def _interpreted_loop(self, node: ast.For, ctx: Context) -> Iterable[Diagnostic]:
        """A `for` appending to a list over items of a tensor LAX holds as a Python object
        (`_interpreted_items`). Measured (written/lax probes `fix30a_fb_*_row_append_len`):
        `for v in x[0]: lst.append(v)` fails under LAX after `x = x + Tensor(x.asnumpy() *
        0)` or `x = functools.reduce(...)` ("'Tensor' object has no attribute 'append'"),
        and compiles for a graph `x`; a `for` only summing such items compiles (famc
        `g17_an_*`)."""
        yield ctx.diagnostic(
            self,
            node,
            f"a `for` appending to a list over `{ctx.segment(node.iter)}`, values of a tensor LAX holds as a Python object (it went through JIT Fallback: `str`, `math`, numpy, `functools`, an f-string, `asnumpy()` of run-time values, here or in the function that made it): MindSpore runs the loop as Python and cannot grow the graph's list there; keep that arithmetic in tensor ops, or read values before the fallback",
        )

    def _check(self, node: ast.AST, it: ast.expr, what: str, ctx: Context, least: int = _LEAST) -> Iterable[Diagnostic]:
        entry = ctx.scope is not None and ctx.scope.kind in ("construct", "jit")
        shown = it
        if type(it) is ast.Name:
            # `w = x.tolist()` then `w = [v / total for v in w]`: the binding in effect
            it = _straight_line_binding(it, ctx) or it
        if not _host_iterable(it, ctx, 0):
            # in any compiled function: the beams of fresh v6 seeds 12000011 (a closure in
            # `construct`) and 12000121 (a method, under a `while`) fail as in an entry
            made = _sorted_at_run_time(it, node, ctx)
            if made is not None and _result_read(node, ctx):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"{what} over `{ctx.segment(shown)}`, which is `{ctx.segment(made)}` of a list holding values known only at run time: LAX runs that `sorted` by JIT Fallback, and MindSpore cannot build this over its result, whatever its length; keep scores in a tensor (`ops.topk`, `ops.sort`) or sort outside the graph",
                )
                return
            if isinstance(node, ast.ListComp):
                found = list(self._interpreted(node, ctx))
                if found:
                    yield from found
                    return
            loop = _host_item_loop(node, it, ctx)
            if loop is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"{what} over `{ctx.segment(shown)}`, an item of `{ctx.segment(loop.iter)}` (line {loop.iter.lineno}), which JIT Fallback makes from a tensor at run time: under LAX MindSpore cannot build it over such an item, whatever its length; return the tensor and convert it outside the graph, or stay in tensor ops",
                )
            return
        if not entry:
            return  # lengths are known only from the calls of an entry
        n = host_len(it, ctx, 0)
        if isinstance(node, ast.ListComp):
            use = _comprehension_use(node, ctx)
            if use == "len":
                # its length read by compiled code, it fails whatever its length
                size = f"a Python list of {n} items" if n is not None else "a Python list"
                yield ctx.diagnostic(
                    self,
                    node,
                    f"{what} over `{ctx.segment(shown)}`, {size} JIT Fallback makes from a tensor at run time, whose `len` compiled code reads: under LAX MindSpore cannot build it, whatever its length; return the tensor and convert it outside the graph, or stay in tensor ops",
                )
                return
            if use == "reduced" and _scalar_items(it, ctx):
                # summed, `max`/`min`-ed or indexed, it fails whatever its length
                size = f"a Python list of {n} items" if n is not None else "a Python list"
                yield ctx.diagnostic(
                    self,
                    node,
                    f"{what} over `{ctx.segment(shown)}`, {size} JIT Fallback makes from a tensor at run time, which compiled code then sums, takes the `max`/`min` of, indexes or slices: under LAX MindSpore cannot build it, whatever its length; return the tensor and convert it outside the graph, or stay in tensor ops (`x.sum()`, `x.max()`)",
                )
                return
            if use not in ("read", "returned"):
                return  # dropped unread, or run as Python inside a fallback call
        if isinstance(node, ast.For) and (n is None or n < least) and _outer_loop(node, ctx) is not None:
            outer = _outer_loop(node, ctx)
            assert outer is not None
            if not (_leaves_at_run_time(node, ctx) and _only_returned(node, ctx)):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"{what} over `{ctx.segment(shown)}`, a Python list JIT Fallback makes from a tensor at run time, inside the `for` on line {outer.lineno}: under LAX MindSpore cannot build it there, whatever the lengths (the list it grows stops being a list: \"'float' object has no attribute 'append'\", \"object of type 'float' has no len()\"); return the tensor and convert it outside the graph, or stay in tensor ops",
                )
            return
        if n is None or n < least:
            return
        if isinstance(node, ast.For) and _leaves_at_run_time(node, ctx) and _only_returned(node, ctx):
            return
        many = (
            "3 or more such items"
            if least == _LEAST
            else "2 or more such items when it appends tuples or lists of them (or adds the items with `+=`)"
            if least == 2
            else "any such items when it appends dicts (a dynamic-length list holds no dicts) or adds displays of them with `+=`"
        )
        yield ctx.diagnostic(
            self,
            node,
            f"{what} over `{ctx.segment(shown)}`, a Python list of {n} items JIT Fallback makes from a tensor at run time: under LAX MindSpore cannot build it over {many}; return the tensor and convert it outside the graph, or stay in tensor ops",
        )


def _outer_loop(loop: ast.For, ctx: Context) -> ast.For | None:
    """The `for` of the same function `loop` is nested in, if any. Measured (written/
    heldout37d probes `fix38a_nest_*`, `fix37f_ds_counter*_*`, `fix37f_ds_enum_*`): a `for`
    appending the values of `x[i].tolist()` to a list fails under LAX inside any outer `for`
    (a constant `range(1)`, `range(2)`, a tuple, `enumerate`), even over 1 value, where the
    same loop alone compiles up to 2; appending tensors, or only counting, compiles."""
    p = ctx.parent(loop)
    while p is not None and p is not ctx.function:
        if isinstance(p, ast.For):
            return p
        if type(p) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
            return None
        p = ctx.parent(p)
    return None


def _host_file(ctx: Context) -> bool:
    hit = ctx.cache.get("ms193.host-file")
    if hit is None:
        hit = ctx.cache["ms193.host-file"] = any(ctx.mentions(w) for w in _HOST_WORDS)
    return bool(hit)


def _leaves_at_run_time(loop: ast.For, ctx: Context) -> bool:
    """Does the loop body hold an `if` whose test is known only at run time and that
    `break`s or `return`s directly (`if t == self.eos_id: break` over `ids.tolist()`)?
    Measured (written/heldout16b probes `fe_br_*`): over 10 host items such a loop compiles
    under LAX when the list it builds is only returned, and fails when the list is read
    afterwards (`len`, `sum`, `Tensor(...)`: "'int' object has no attribute 'append'"), as
    without the `break`; so does a `break` under a test known while compiling, or in an `if`
    nested in another `if`."""
    a = analyzer(ctx)
    return any(
        type(st) is ast.If
        and a.kind(st.test) != Kind.CONST
        and any(type(s) in (ast.Break, ast.Return) for s in (*st.body, *st.orelse))
        for st in loop.body
    )


def _only_returned(loop: ast.For, ctx: Context) -> bool:
    """Is every list the loop grows read after it only by `return lst` (or `return [lst]`)?
    Measured (written/heldout16b probes `fe_br_*`): returned so, a list built by a loop that
    leaves at run time compiles under LAX; returned in a tuple (`return x, lst`), measured by
    `len`, summed or given to `Tensor` it fails."""
    if ctx.function is None:
        return False
    grown = {
        n.func.value.id
        for n in ast.walk(loop)
        if type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in _GROW and type(n.func.value) is ast.Name
    }
    inside = {id(n) for n in ast.walk(loop)}
    for n in ast.walk(ctx.function):
        if type(n) is ast.Name and n.id in grown and type(n.ctx) is ast.Load and id(n) not in inside:
            p = ctx.parent(n)
            if type(p) is ast.List:
                p = ctx.parent(p)
            if type(p) is not ast.Return:
                return False
    return True


def _own_host_item(comp: ast.ListComp, ctx: Context) -> bool:
    """The comprehension's element is one of its own variables over host data (`[i for i, _
    in ranked]` with `ranked = sorted(enumerate(x.tolist()), ...)[:3]`): a Python value."""
    return type(comp.elt) is ast.Name and comp.elt.id in host_names(comp, ctx)


def _host_item_loop(node: ast.AST, it: ast.expr, ctx: Context) -> ast.For | ast.comprehension | None:
    """The enclosing `for` whose variable `it` is, when that `for` runs over host data of a
    run-time tensor (`for row in idx.asnumpy().tolist()`) and `it` is not bound elsewhere.
    Measured (written/heldout14 probes `lx_tr_*`): a comprehension or an appending `for` over
    such a row fails under LAX for rows of 2 and of 5 items ("unsupported operand type(s)
    for +: 'int' and 'list'", "'int' object has no attribute 'append'"), while `sum(row)`
    compiles."""
    if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id in ("enumerate", "zip") and len(it.args) == 1:
        it = it.args[0]  # `for j, c in enumerate(seq)` over a row `seq`
    if type(it) is not ast.Name or ctx.function is None:
        return None
    p = ctx.parent(node)
    while p is not None and p is not ctx.function:
        if type(p) is ast.For and any(type(t) is ast.Name and t.id == it.id for t in _target_names(p.target)):
            if _host_iterable(p.iter, ctx, 0) and analyzer(ctx).single_assignment(it.id, ctx.function) is None:
                return p
            return None
        if type(p) in _COMPS:
            # `[[v * 2 for v in row] for row in x.tolist()]`: the outer comprehension's
            # variable is such a row too (written/famc probes `g17_ct_*`)
            gen = next((g for g in p.generators if any(type(t) is ast.Name and t.id == it.id for t in _target_names(g.target))), None)  # type: ignore[attr-defined]
            if gen is not None:
                return gen if _host_iterable(gen.iter, ctx, 0) else None
        p = ctx.parent(p)
    return None


_COMPS = (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)


def _interpreted_items(it: ast.expr, ctx: Context) -> bool:
    """`(x.shape[0], x.shape[1], x.ndim)` or `x[0]` of a tensor `x` LAX holds as a Python
    object after JIT Fallback (`interpreted`). Measured (written/famc probes `g17_an_*`): a
    comprehension over 1, 2 or 3 such values fails ("unsupported operand type(s) for +: 'float'
    and 'list'", "'float' object is not subscriptable"); a `for` summing them compiles."""
    func = ctx.function
    if func is None:
        return False
    t = type(it)
    if t in (ast.Tuple, ast.List):
        elts = it.elts  # type: ignore[attr-defined]
        return bool(elts) and all(interpreted(x, ctx, func) for x in elts)
    if t is ast.Subscript and type(it.slice) is not ast.Slice:  # type: ignore[attr-defined]
        # in a `while` on a tensor that rebinds the name, the read is the loop's joined
        # graph tensor (`joined_in_tensor_while`)
        return (
            analyzer(ctx).kind(it.value) == Kind.TENSOR  # type: ignore[attr-defined]
            and interpreted(it.value, ctx, func)  # type: ignore[attr-defined]
            and not joined_in_tensor_while(it, it, ctx, func)
        )
    if t is ast.Attribute and it.attr == "shape":  # type: ignore[attr-defined]
        # `[float(d) for d in x.shape]` (measured, written/lax probe
        # `fix40b_fs_inline_comp_shape_tuple`: "Failed to infer for primitive:typeof" at LAX
        # after `x = x + math.log1p(x.abs().sum())`)
        return analyzer(ctx).kind(it.value) == Kind.TENSOR and interpreted(it.value, ctx, func)  # type: ignore[attr-defined]
    return False


def _ops_on_interpreted(it: ast.Name, ctx: Context) -> bool:
    """Is `it` a list (a display, or `[]` grown by `append`) of results of tensor operations
    on a tensor LAX holds as a Python object (`bp.append(ops.argmax(x[s]))`, `x[s].sum()`)?
    Measured (written/lax probes `fix42b_tf_fb_*`, fresh v6 seeds 12001454, 12001797): a
    comprehension converting its items (`[int(b) for b in bp]`, `float`) fails under LAX,
    "Failed to infer for primitive:typeof"; the same over a graph tensor's, over
    `ops.ones(...)` results, `sum(bp)`, `int(bp[0])`, a `for` adding `int(b)` and the
    conversion inline (`[int(ops.argmax(x[s])) for s in range(2)]`) compile."""
    func = ctx.function
    if func is None:
        return False
    a = analyzer(ctx)
    bound = a.single_assignment(it.id, func)
    if type(bound) is not ast.List:
        return False
    items = list(bound.elts)
    if not items:
        for n in own_nodes(func):
            if type(n) is ast.Call and type(n.func) is ast.Attribute and type(n.func.value) is ast.Name and n.func.value.id == it.id:
                if n.func.attr != "append" or len(n.args) != 1:
                    return False
                items.append(n.args[0])
    return bool(items) and all(_op_on_interpreted(e, ctx, func) for e in items)


def _op_on_interpreted(e: ast.expr, ctx: Context, func: ast.AST) -> bool:
    """`ops.argmax(x[s])`, `x[s].sum()`, `ops.relu(x[s]).sum()`: at least one call, down to
    (an item of) a tensor LAX holds as a Python object."""
    calls = 0
    while True:
        t = type(e)
        if t is ast.Call:
            f = e.func  # type: ignore[attr-defined]
            if type(f) is ast.Attribute and not (ctx.qualname(f) or "").startswith("mindspore."):
                e = f.value  # a tensor method
            elif (ctx.qualname(f) or "").startswith("mindspore.") and e.args:  # type: ignore[attr-defined]
                e = e.args[0]  # type: ignore[attr-defined]
            else:
                return False
            calls += 1
        elif t is ast.Subscript:
            e = e.value  # type: ignore[attr-defined]
        else:
            break
    return (
        calls > 0
        and type(e) is ast.Name
        and analyzer(ctx).kind(e, func) == Kind.TENSOR
        and interpreted(e, ctx, func)
    )


def _target_names(target: ast.expr) -> list[ast.expr]:
    """`seq` of `for seq in ...` and of `for seq, ps in zip(...)`."""
    return list(target.elts) if type(target) is ast.Tuple else [target]


def tensor_items(e: ast.expr, ctx: Context) -> bool:
    """Items that may be tensors: only Python values (numbers, strings, host items) fail."""
    return analyzer(ctx).kind(e) in (Kind.TENSOR, Kind.UNKNOWN)


def _grows_list(body: list[ast.stmt], ctx: Context, nested: bool = False, targets: frozenset[str] | set[str] = frozenset()) -> bool:
    """A statement of the loop body (not nested functions', nor nested loops' unless `nested`)
    calls `name.append(<a Python value>)`; with `targets`, the loop's variables over host
    data, also an item the flow analysis cannot type that is a list built there or reads them
    (`rows.append([c.get(i, 0) for i in range(v)])`)."""
    for st in body:
        if type(st) is ast.Expr and type(st.value) is ast.Call:
            call = st.value
            f = call.func
            if type(f) is ast.Attribute and f.attr in _GROW and type(f.value) is ast.Name and call.args:
                item = call.args[-1]
                if type(item) is ast.Dict:
                    # a dict display fails whatever it holds, tensors too (`_appends_host_tuple`;
                    # written/heldout37d probe `fix37f_ds_dict_tensor_vals_tolist`)
                    return True
                return not tensor_items(item, ctx) or (bool(targets) and _host_item(item, targets, ctx))
        elif _concatenated_display(st) is not None:
            shown = _concatenated_display(st)
            assert shown is not None
            if any(type(e) is ast.Dict or not tensor_items(e, ctx) for e in shown.elts):
                return True
        elif type(st) is ast.If:
            if _grows_list(st.body, ctx, nested, targets) or _grows_list(st.orelse, ctx, nested, targets):
                return True
        elif nested and type(st) is ast.For and _grows_list(st.body, ctx, nested):
            return True
    return False


def _appends(body: list[ast.stmt]) -> bool:
    """A statement of the loop body, also in nested `if`s and loops, appends to a list: over
    a JIT Fallback `sorted` result whatever it appends, tensors too (written/heldout22b probe
    `lax24b_sorted_tensor_tuples_for_append_index`)."""
    for st in body:
        if type(st) is ast.Expr and type(st.value) is ast.Call:
            f = st.value.func
            if type(f) is ast.Attribute and f.attr in _GROW and type(f.value) is ast.Name and st.value.args:
                return True
        elif type(st) in (ast.If, ast.For) and (_appends(st.body) or _appends(st.orelse)):  # type: ignore[attr-defined]
            return True
    return False


def _appends_host_tuple(body: list[ast.stmt], targets: set[str]) -> int:
    """The loop body appends a tuple or list display holding the loop's own variables
    (`out.append((i, v))` in `for v, i in zip(vals.tolist(), idx.tolist())`). Measured
    (written/heldout14b probes `hv_tolist_append_tuple_k*`, `hv_tolist_append_list_k*`,
    `hv_topk_selfk_zip_k*`): over 2 host items LAX fails already ("The prim 'ListAppend',
    the input_data must be list and target must be scalar or tensor"), over 1 it compiles,
    and appending the scalars themselves over 2 compiles (`hv_zip_tolist_append_scalar_k2`).
    A dict display, whatever it holds, fails from 1 item: the list grown over host data is
    a dynamic-length sequence, which holds no dicts ("DynamicSequence does not support
    dictionary type as element type now"; written/heldout22b case
    `panoptic_merge_python_dict_segments`, written/fallbackflows probes `la23_dl_*`; a
    `dict(...)` call, which LAX interprets whole, compiles). The fewest host items that
    fail: 1 for a dict, 2 for a tuple or list; 0 when the body appends neither."""
    least = 0
    for st in body:
        for n in ast.walk(st):
            shown = _concatenated_display(n) if type(n) in (ast.AugAssign, ast.Assign) else None
            if shown is None and isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "extend":
                given = n.args[0] if len(n.args) == 1 else None
                if isinstance(given, (ast.List, ast.Tuple)) and any(type(e) is ast.Dict for e in given.elts):
                    return 1
                continue
            if shown is not None:
                for e in shown.elts:
                    if type(e) is ast.Dict:
                        return 1
                    if any(type(x) is ast.Name and x.id in targets for x in ast.walk(e)):
                        # `+=` fails sooner than `append`: a display of the loop's
                        # variables from 1 item, the variables themselves from 2
                        least = min(least or 2, 1 if type(e) in (ast.Tuple, ast.List) else 2)
                continue
            if (
                type(n) is ast.Call
                and type(n.func) is ast.Attribute
                and n.func.attr == "append"
                and len(n.args) == 1
            ):
                item = n.args[0]
                if type(item) is ast.Dict:
                    return 1
                if type(item) in (ast.Tuple, ast.List) and any(type(x) is ast.Name and x.id in targets for x in ast.walk(item)):
                    least = min(least or 2, 2)
    return least


def _concatenated_display(st: ast.AST) -> ast.List | None:
    """The list display `st` adds to a list name in place (`out += [...]`, `out = out +
    [...]`). Measured (written/heldout37d probes `fix38a_ds_*`): over `x.tolist()` LAX fails
    sooner than with `append` ("DynamicSequence does not support dictionary type", "Expected
    SequenceShape for SetShape", "object of type 'float' has no len()"): a dict or a tuple of
    the loop's values from 1 item, the values themselves from 2; tensors, and the same over a
    constant `range`, compile."""
    if isinstance(st, ast.AugAssign):
        if isinstance(st.op, ast.Add) and isinstance(st.target, ast.Name) and isinstance(st.value, ast.List):
            return st.value
        return None
    if isinstance(st, ast.Assign) and len(st.targets) == 1:
        t, v = st.targets[0], st.value
        if (
            isinstance(t, ast.Name)
            and isinstance(v, ast.BinOp)
            and isinstance(v.op, ast.Add)
            and isinstance(v.left, ast.Name)
            and v.left.id == t.id
            and isinstance(v.right, ast.List)
        ):
            return v.right
    return None


def _host_item(e: ast.expr, targets: frozenset[str] | set[str], ctx: Context) -> bool:
    """Not a tensor: a list display or comprehension, or a value reading the host loop's
    variables `targets` (items of host data are Python values), unless the flow analysis
    says tensor (`x[r]`). Measured (written/heldout14 probes `lx_ct_*`): appending such
    items over 3 host rows fails under LAX ("The prim 'ListAppend' ... target must be scalar
    or tensor", "'int' object has no attribute 'append'")."""
    if analyzer(ctx).kind(e) == Kind.TENSOR:
        return False
    if type(e) in (ast.List, ast.ListComp):
        return True
    return any(type(n) is ast.Name and n.id in targets for n in ast.walk(e))


def _sorted_at_run_time(it: ast.expr, node: ast.AST, ctx: Context) -> ast.Call | None:
    """The `sorted(lst, ...)` call `it` is (maybe sliced, `sorted(...)[:k]`), or a name is
    bound to reaching `node` (before it, or later in a loop holding both), when `lst` holds
    values known only at run time (`_runtime_items`). Measured (written/heldout14 probes
    `lx_sb_*`): LAX runs such a `sorted` by JIT Fallback; a comprehension or an appending
    `for` over its result fails whatever its length ("The pointer[seq_abs] is null",
    "cannot get item by index from an empty sequence"), while indexing it, `len` of it and a
    `for` that only accumulates a number compile."""
    fn = ctx.function
    if fn is None:
        return None
    if type(it) is not ast.Name:
        return _runtime_sorted(it, ctx)
    loops = _enclosing_loops(node, ctx)
    for st in ast.walk(fn):
        if type(st) is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name and st.targets[0].id == it.id:
            made = _runtime_sorted(st.value, ctx)
            if made is not None and (st.lineno < node.lineno or any(loop in loops for loop in _enclosing_loops(st, ctx))):  # type: ignore[attr-defined]
                return made
    return None


def _enclosing_loops(node: ast.AST, ctx: Context) -> list[ast.AST]:
    out: list[ast.AST] = []
    p = ctx.parent(node)
    while p is not None and p is not ctx.function:
        if type(p) in (ast.For, ast.While):
            out.append(p)
        p = ctx.parent(p)
    return out


def _runtime_sorted(e: ast.expr, ctx: Context) -> ast.Call | None:
    if type(e) is ast.Subscript and type(e.slice) is ast.Slice:
        e = e.value
    if type(e) is not ast.Call or not e.args:
        return None
    at = _SORTING.get(ctx.qualname(e.func) or "")
    if at is None or len(e.args) <= at:
        return None
    lst = e.args[at]
    return e if _runtime_items(lst, ctx) or _runtime_tensors(lst, ctx) else None


def _runtime_tensors(e: ast.expr, ctx: Context) -> bool:
    """A local list holding tensors computed at run time (or tuples holding some), bound
    once: `[]` grown with `append((seq + [idx[k]], score + vals[k]))`, or a comprehension
    `[(x[i], x[i].sum()) for i in ...]`, `[x[i].sum() for i in ...]`. LAX runs a `sorted`
    of it by JIT Fallback as of Python numbers (measured, written/heldout22b probes
    `lax24b_sorted_tensor_*`, heldout21a case `ctc_beam_sorted_lambda_tuples` and probe
    `tc22_sorted_lambda_tensor_tuples_loop`: a `for` appending over the result, then an
    index of what it built, "cannot get item by index from an empty sequence", with a `key`
    or without; indexing the sorted list itself, or a `for` adding up tensors, compiles)."""
    if type(e) is not ast.Name or ctx.function is None:
        return False
    a = analyzer(ctx)
    bound = a.single_assignment(e.id, ctx.function)
    if type(bound) is ast.ListComp:
        items = [bound.elt]
    elif type(bound) is ast.List and not bound.elts:
        items = _appended_items(e.id, ctx)
    else:
        return False
    return bool(items) and all(
        any(a.kind(v).dynamic for v in i.elts) if type(i) is ast.Tuple else a.kind(i) == Kind.TENSOR for i in items
    )


def _result_read(node: ast.AST, ctx: Context) -> bool:
    """What a comprehension or an appending `for` over a JIT Fallback `sorted` builds is read
    by more than a `return` of it as it is. Measured (written/heldout14b probes
    `hv_sorted_for_append_*`, `hv_nlargest_for_append_*`, `hv_heap_nlargest_comp`): the list
    returned as it is compiles under LAX, while `len(out)`, `out[0]`, or a later `sorted` /
    `heapq.nlargest` of it (beam search) fail."""
    if isinstance(node, ast.ListComp):
        return not _returned_as_is(node, ctx)
    if not isinstance(node, ast.For) or ctx.function is None:
        return True
    grown = {
        n.func.value.id
        for n in ast.walk(node)
        if type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in _GROW and type(n.func.value) is ast.Name
    }
    inside = {id(n) for n in ast.walk(node)}
    for n in ast.walk(ctx.function):
        if type(n) is ast.Name and n.id in grown and type(n.ctx) is ast.Load and id(n) not in inside and not _returned_as_is(n, ctx):
            return True
    return False


def _comprehension_use(comp: ast.ListComp, ctx: Context) -> str:
    """How compiled code uses a list comprehension's result: "python" (it sits in a call LAX
    runs as Python as a whole, `sorted([...])`), "unread" (dropped), "returned" (only returned
    as it is), or "read" (`len`, an index, `ms.Tensor(...)`, arithmetic, a loop, `print`, a
    helper's argument...), or "len" (read, and once by `len`). Measured (written/famc probes
    `lc_*`): with its `len` read it fails under LAX over 1, 2 or 3 items ("The
    pointer[seq_abs] is null"); read otherwise it fails over 3 ("unsupported operand
    type(s) for +: 'float' and 'list'") while 2 ints given to `Tensor(...)` compile
    (written/lax `th_c_*`); unread or inside `sorted(...)` it compiles; returned as it is,
    2 items compile and 3 fail (written/lax probes `tn_*`)."""
    from npu_lsp.rules.graphmode.values import lax_fallback_call

    func = ctx.function
    node: ast.AST = comp
    parent = ctx.parent(comp)
    while isinstance(parent, ast.expr):
        if (
            isinstance(parent, ast.Call)
            and func is not None
            and (ctx.qualname(parent.func) or "").startswith("builtins.")
            and lax_fallback_call(parent, ctx, func)
        ):
            return "python"  # a builtin LAX runs as Python (`sorted`), not a method (`"".join`)
        node, parent = parent, ctx.parent(parent)
    if _returned_as_is(comp, ctx):
        return "returned"
    if isinstance(parent, ast.Expr) and node is comp:
        return "unread"
    if not (
        isinstance(parent, ast.Assign)
        and node is comp
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
        and func is not None
    ):
        return "len" if _len_of(comp, ctx) else "reduced" if _reduced_by(comp, ctx) else "read"
    name, end = parent.targets[0].id, (parent.end_lineno or parent.lineno, parent.end_col_offset or 0)
    loads = [
        n
        for n in own_nodes(func)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and (n.lineno, n.col_offset) > end
    ]
    if not loads:
        return "unread"
    if any(_len_of(n, ctx) for n in loads):
        return "len"
    if _reduced_by(loads[0], ctx):
        return "reduced"
    return "returned" if all(_returned_as_is(n, ctx) for n in loads) else "read"


#: builtins that fold a list into one value
_FOLDS = frozenset({"builtins.sum", "builtins.max", "builtins.min"})


def _scalar_items(it: ast.expr, ctx: Context) -> bool:
    """Iterating the host value `it` gives Python numbers (or tuples of them, from `zip` /
    `enumerate`): its shape is known and has one axis. Over rows (`x.tolist()` of a 2-D
    tensor) a comprehension indexed afterwards compiles (written/famc probe
    `g17_ct_rows_sum_ok`)."""
    if type(it) is ast.Name:
        bound = analyzer(ctx).single_assignment(it.id, ctx.function)
        it = bound if bound is not None else it
    if type(it) is ast.Call and type(it.func) is ast.Name and ctx.qualname(it.func) in ("builtins.zip", "builtins.enumerate", "builtins.sorted", "builtins.list"):
        parts = it.args if ctx.qualname(it.func) == "builtins.zip" else it.args[:1]
        return bool(parts) and all(_scalar_items(a, ctx) for a in parts)
    if type(it) is ast.Subscript and type(it.slice) is ast.Slice:
        return _scalar_items(it.value, ctx)
    s = _host_shape(it, ctx, 0)
    return s is not None and len(s) == 1


def _reduced_by(e: ast.AST, ctx: Context) -> bool:
    """Is `e` summed (`sum(e)`, `sum(e, start)`), `max`-ed or `min`-ed (its only argument),
    indexed or sliced (`e[0]`, `e[:1]`)? Measured (written/heldout19b probes `lx20_sum_*`,
    `lx20_max_*`, `lx20_min_*`, `lx20_index_*`, `lx20_slice_*`): a comprehension over host
    data read this way fails under LAX over 1 or 2 items too ("Failed to infer for
    primitive:typeof", "'float' object is not subscriptable", "The object is not
    iterable"), while one returned as it is, or 2 ints given to `Tensor(...)`, compile."""
    p = ctx.parent(e)
    if type(p) is ast.Subscript:
        return p.value is e and type(p.ctx) is ast.Load
    if type(p) is not ast.Call or not p.args or p.args[0] is not e or ctx.qualname(p.func) not in _FOLDS:
        return False
    # `sum(vals)`, `sum(vals, 0.0)`, `max(vals)`; not `max(vals, key=...)` or `max(a, b)`
    return not p.keywords and (len(p.args) == 1 or (len(p.args) == 2 and ctx.qualname(p.func) == "builtins.sum"))


def _len_of(e: ast.AST, ctx: Context) -> bool:
    """Is `e` the argument of a `len(...)` call?"""
    p = ctx.parent(e)
    return isinstance(p, ast.Call) and p.args == [e] and ctx.qualname(p.func) == "builtins.len"


def _returned_as_is(e: ast.AST, ctx: Context) -> bool:
    p = ctx.parent(e)
    if type(p) is ast.Tuple:
        p = ctx.parent(p)
    return type(p) is ast.Return


def _runtime_items(e: ast.expr, ctx: Context) -> bool:
    """A local list holding Python values known only at run time and no tensor: bound once,
    to `[]` grown with `append((i, float(x[i])))`, or to a list of run-time scalars
    (`runtime_scalar_list`)."""
    if type(e) is not ast.Name or ctx.function is None:
        return False
    if runtime_scalar_list(e, ctx):
        return True
    a = analyzer(ctx)
    bound = a.single_assignment(e.id, ctx.function)
    if not (type(bound) is ast.List and not bound.elts):
        return False
    kinds = [a.kind(v) for v in _appended_items(e.id, ctx)]
    return bool(kinds) and Kind.VAR in kinds and Kind.TENSOR not in kinds


def _appended_items(name: str, ctx: Context) -> list[ast.expr]:
    """What `name.append(item)` adds anywhere in the compiled function (other changes aside)."""
    return [
        c.args[0]
        for c in analyzer(ctx).changes(name, ctx.function)
        if c.how == "append" and len(c.args) == 1
    ]


def host_len(e: ast.expr, ctx: Context, depth: int) -> int | None:
    """How many items iterating the host value `e` gives, when known."""
    s = _host_shape(e, ctx, depth)
    return s[0] if s else None


def _host_shape(e: ast.expr, ctx: Context, depth: int) -> Shape | None:
    if depth > 8:
        return None
    if isinstance(e, ast.Name):
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        return _host_shape(bound, ctx, depth + 1) if bound is not None else None
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice):
        return _sliced(_host_shape(e.value, ctx, depth + 1), e.slice, ctx)
    if not isinstance(e, ast.Call):
        return None
    f = e.func
    if isinstance(f, ast.Attribute):
        if f.attr in _HOST and not e.args and analyzer(ctx).kind(f.value) == Kind.TENSOR:
            return _shape(f.value, ctx, 0)
        if f.attr in _HOST or f.attr in ("astype", "copy"):
            return _host_shape(f.value, ctx, depth + 1)
        if f.attr in ("flatten", "ravel") and not e.args:
            return _flat(_host_shape(f.value, ctx, depth + 1))
        if f.attr == "reshape":
            return _reshaped(_host_shape(f.value, ctx, depth + 1), e.args)
        return None
    if not isinstance(f, ast.Name) or not e.args:
        return None
    q = ctx.qualname(f) or ""
    if not q.startswith("builtins."):
        return None
    name = q[9:]
    if name in _KEEP_LEN and len(e.args) == 1:
        s = _host_shape(e.args[0], ctx, depth + 1)
        return s[:1] if s else None
    if name == "zip":
        lens = [host_len(a, ctx, depth + 1) for a in e.args]
        return (min(lens),) if all(n is not None for n in lens) else None  # type: ignore[type-var]
    if name == "range" and len(e.args) <= 3:
        # `range(len(a) - 1)`, `range(1, len(a) + 1)` over host data `a` (`host_len_bound`)
        bounds = [_bound_value(a, ctx, depth + 1) for a in e.args]
        if None in bounds or (len(bounds) == 3 and bounds[2] == 0):
            return None
        return (len(range(*bounds)),)  # type: ignore[arg-type]
    return None


def _bound_value(e: ast.expr, ctx: Context, depth: int) -> int | None:
    """A literal int, or `len(a)` of host data `a` of known length give or take a literal."""
    v = _int(e)
    if v is not None:
        return v
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
        x, y = _bound_value(e.left, ctx, depth + 1), _bound_value(e.right, ctx, depth + 1)
        if x is None or y is None:
            return None
        return x + y if isinstance(e.op, ast.Add) else x - y
    if isinstance(e, ast.Call) and len(e.args) == 1 and ctx.qualname(e.func) == "builtins.len":
        return host_len(e.args[0], ctx, depth + 1) if _host_iterable(e.args[0], ctx, 1) else None
    return None


def _shape(e: ast.expr, ctx: Context, depth: int) -> Shape | None:
    """The shape of the tensor `e` in the compiled function being checked, when known."""
    if depth > 10:
        return None
    if isinstance(e, ast.Name):
        s = param_shape(e.id, ctx)
        if s is not None:
            # read before the body first rebinds it (`x = Tensor([... x.tolist()])`, also in a
            # loop: the first pass fails), it is still the argument
            first = analyzer(ctx).first_binding_line(e.id, ctx.function)
            return s if first is None or e.lineno <= first else None
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        if bound is not None:
            return _shape(bound, ctx, depth + 1)
        unpacked = analyzer(ctx).single_unpacking(e.id, ctx.function)
        if unpacked is not None and len(unpacked[1]) == 1 and unpacked[1][0] in (0, 1):
            return _topk_shape(unpacked[0], ctx, depth)  # `vals, idx = ops.topk(x, k)`
        return None
    if isinstance(e, ast.Subscript):
        index = e.slice
        if type(index) is ast.Name and analyzer(ctx).loop_counter(index.id, ctx.function):
            # `boxes[i]` in `for i, image_id in enumerate(ids)`: a Python int drops the axis
            # whatever its value (written/heldout37d `detections_per_image_loop_tolist`)
            index = ast.Constant(0)
        return _indexed(_shape(e.value, ctx, depth + 1), index)
    if isinstance(e, ast.BinOp):
        left, right = e.left, e.right
        if python_number(right):
            return _shape(left, ctx, depth + 1)
        if python_number(left):
            return _shape(right, ctx, depth + 1)
        if isinstance(e.op, _ELEMENTWISE):
            return _broadcast(_shape(left, ctx, depth + 1), _shape(right, ctx, depth + 1))
        return None
    if not isinstance(e, ast.Call):
        return None
    f = e.func
    q = ctx.qualname(f) or ""
    if q == "mindspore.ops.squeeze" and e.args:
        axis = e.args[1] if len(e.args) > 1 else _keyword(e, ("axis", "dim"))
        return _squeezed(_shape(e.args[0], ctx, depth + 1), axis)
    if q in TENSOR_CLASS and e.args and isinstance(e.args[0], (ast.List, ast.Tuple)):
        return _literal_shape(e.args[0])  # `ms.Tensor([tokens[-1]], ms.int32)`
    if q.startswith("mindspore.ops.") and e.args:
        last = q.rpartition(".")[2]
        if last in ("argmax", "argmin"):
            axis = e.args[1] if len(e.args) > 1 else _keyword(e, ("dim", "axis"))
            return _reduced(_shape(e.args[0], ctx, depth + 1), axis, e)
        return _shape(e.args[0], ctx, depth + 1) if last in _SAME_OPS else None
    if not isinstance(f, ast.Attribute):
        return None
    recv = f.value
    if isinstance(recv, ast.Name) and recv.id == "self":
        return _cell_output(f.attr, e, ctx, depth)
    if f.attr in _SAME or f.attr in _SAME_METHODS:
        return _shape(recv, ctx, depth + 1)
    if f.attr == "squeeze" and len(e.args) <= 1:
        return _squeezed(_shape(recv, ctx, depth + 1), e.args[0] if e.args else _keyword(e, ("axis", "dim")))
    if f.attr in _REDUCE:
        axis = e.args[0] if e.args else _keyword(e, ("axis", "dim"))
        return _reduced(_shape(recv, ctx, depth + 1), axis, e)
    if f.attr == "flatten" and not e.args and not e.keywords:
        return _flat(_shape(recv, ctx, depth + 1))
    if f.attr in ("reshape", "view"):
        return _reshaped(_shape(recv, ctx, depth + 1), e.args)
    return None


def _cell_output(attr: str, call: ast.Call, ctx: Context, depth: int) -> Shape | None:
    """`self.fc(x)` with `self.fc = nn.Dense(...)` (the last axis changes), a shape-keeping
    activation cell, or an `nn.SequentialCell` of those, assigned once in `__init__`."""
    if len(call.args) != 1 or call.keywords:
        return None
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    held = a.self_values(cls).get(attr, []) if cls is not None else []
    if len(held) != 1 or not isinstance(held[0], ast.Call):
        return None
    s = _shape(call.args[0], ctx, depth + 1)
    layer = held[0]
    q = ctx.qualname(layer.func) or ""
    if q.rpartition(".")[2] == "SequentialCell":
        # `nn.SequentialCell(nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 3))` or of a list
        layers = layer.args[0].elts if len(layer.args) == 1 and isinstance(layer.args[0], ast.List) else layer.args
        for sub in layers:
            s = _layer_shape(sub, s, ctx) if isinstance(sub, ast.Call) else None
        return s
    return _layer_shape(layer, s, ctx)


def _sliced(s: Shape | None, sl: ast.Slice, ctx: Context) -> Shape | None:
    """`s` sliced by `[:k]` (`k` known while compiling, not negative) on its first axis."""
    if not s or s[0] is None or sl.lower is not None or sl.step is not None or sl.upper is None:
        return None
    k = _const_int(sl.upper, ctx)
    return None if k is None or k < 0 else (min(k, s[0]), *s[1:])


def _layer_shape(layer: ast.Call, s: Shape | None, ctx: Context) -> Shape | None:
    """The output shape of the `mindspore.nn` cell `layer` builds on an input of shape `s`."""
    q = ctx.qualname(layer.func) or ""
    if s is None or not q.startswith("mindspore.nn."):
        return None
    last = q.rpartition(".")[2]
    if last == "Dense":
        out = layer.args[1] if len(layer.args) > 1 else _keyword(layer, ("out_channels",))
        return s[:-1] + (_layer_int(out, layer, ctx) if out is not None else None,) if s else None
    if last == "Embedding":
        return (*s, None)
    return s if last in _SAME_CELLS else None


def _topk_shape(call: ast.Call, ctx: Context, depth: int) -> Shape | None:
    """Each result of `ops.topk(x, k)` / `x.topk(k)` along the last axis: `x`'s shape with
    its last axis `k` (`k` a literal, a constant on `self`, or a parameter every call gives
    one literal)."""
    f = call.func
    q = ctx.qualname(f) or ""
    if q.startswith("mindspore.ops.") and q.endswith(".topk") and call.args:
        x, rest = call.args[0], call.args[1:]
    elif isinstance(f, ast.Attribute) and f.attr == "topk" and not q:
        x, rest = f.value, call.args
    else:
        return None
    if any(k.arg not in ("k", "sorted", "largest") for k in call.keywords) or len(rest) > 1:
        return None
    k = rest[0] if rest else _keyword(call, ("k",))
    n = _const_int(k, ctx) if k is not None else None
    if n is not None and _flattened(x):
        return (n,)  # `ops.topk(amap.reshape(-1), k)`: whatever `amap`'s shape, k items
    s = _shape(x, ctx, depth + 1)
    if n is None or not s:
        return None
    return (*s[:-1], n)


def _flattened(e: ast.expr) -> bool:
    """`t.reshape(-1)`, `t.view(-1)`, `t.flatten()`, `t.ravel()`: a 1-D tensor."""
    if not isinstance(e, ast.Call) or not isinstance(e.func, ast.Attribute) or e.keywords:
        return False
    if e.func.attr in ("flatten", "ravel"):
        return not e.args
    if e.func.attr not in ("reshape", "view") or len(e.args) != 1:
        return False
    arg = e.args[0]
    if isinstance(arg, ast.Tuple) and len(arg.elts) == 1:
        arg = arg.elts[0]
    return isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.USub) and isinstance(arg.operand, ast.Constant) and arg.operand.value == 1


def _const_int(e: ast.expr, ctx: Context) -> int | None:
    """An int known while compiling: a literal, `self.k` assigned one literal in `__init__`,
    or a parameter of the entry whose default and every module-level call give one literal."""
    v = _int(e)
    if v is not None:
        return v
    a = analyzer(ctx)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        cls = a.owner_class(ctx.function)
        held = a.self_values(cls).get(e.attr, []) if cls is not None else []
        if len(held) != 1 or held[0] is None:
            return None
        v = _int(held[0])
        if v is None and cls is not None and isinstance(held[0], ast.Name):
            v = _init_int(cls, held[0].id, ctx)  # `self.beam = beam`, `beam=3` in `__init__`
        return v
    if isinstance(e, ast.Name) and not a.rebinds(e.id, ctx.function):
        return param_int(e.id, ctx)
    return None


def _init_int(cls: ast.ClassDef, name: str, ctx: Context) -> int | None:
    """The one literal int the parameter `name` of `cls.__init__` gets from every call
    `Cls(...)` in the file (its default when a call leaves it out)."""
    init = next((st for st in cls.body if isinstance(st, ast.FunctionDef) and st.name == "__init__"), None)
    if init is None:
        return None
    params = [p.arg for p in (*init.args.posonlyargs, *init.args.args)][1:]
    if name not in params:
        return None
    i = params.index(name)
    defaults = init.args.defaults
    first = len(params) - len(defaults)
    default = _int(defaults[i - first]) if i >= first else None
    found: set[int | None] = set()
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == cls.name:
            if any(isinstance(x, ast.Starred) for x in node.args) or any(k.arg is None for k in node.keywords):
                return None
            kw = next((k.value for k in node.keywords if k.arg == name), None)
            arg = node.args[i] if i < len(node.args) else kw
            found.add(_int(arg) if arg is not None else default)
    return found.pop() if len(found) == 1 else None


def _keyword(e: ast.Call, names: tuple[str, ...]) -> ast.expr | None:
    return next((k.value for k in e.keywords if k.arg in names), None)


def _int(e: ast.expr | None) -> int | None:
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        v = _int(e.operand)
        return -v if v is not None else None
    return e.value if isinstance(e, ast.Constant) and type(e.value) is int else None


def _folded(e: ast.expr) -> int | None:
    """An int literal, or `+ - *` of int literals (`np.arange(1, 5 + 1)`)."""
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult)):
        x, y = _folded(e.left), _folded(e.right)
        if x is None or y is None:
            return None
        return x + y if isinstance(e.op, ast.Add) else x - y if isinstance(e.op, ast.Sub) else x * y
    return _int(e)


def _reduced(s: Shape | None, axis: ast.expr | None, call: ast.Call) -> Shape | None:
    """A one-axis reduction without `keepdims`: that axis goes."""
    k = _int(axis)
    if s is None or k is None or not s or any(w.arg in ("keepdims", "keepdim") for w in call.keywords):
        return None
    if not -len(s) <= k < len(s):
        return None
    k %= len(s)
    return s[:k] + s[k + 1 :]


def _indexed(s: Shape | None, index: ast.expr) -> Shape | None:
    """`t[0]`, `t[:, 0]`, `t[0, :]`: integers drop an axis, a bare `:` keeps it."""
    if s is None:
        return None
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    if len(items) > len(s):
        return None
    out: list[int | None] = []
    for i, item in enumerate(items):
        if isinstance(item, ast.Slice):
            if item.lower or item.upper or item.step:
                return None
            out.append(s[i])
        elif _int(item) is None:
            return None
    return (*out, *s[len(items) :])


def _flat(s: Shape | None) -> Shape | None:
    if s is None or any(d is None for d in s):
        return None
    return (prod(d for d in s if d is not None),)


def _reshaped(s: Shape | None, args: list[ast.expr]) -> Shape | None:
    """`reshape(6)`, `reshape(2, -1)`, `reshape((2, 3))` of a fully known shape."""
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = list(args[0].elts)
    dims = [_int(a) for a in args]
    if s is None or any(d is None for d in s) or not dims or any(d is None for d in dims):
        return None
    total = prod(d for d in s if d is not None)
    known = prod(d for d in dims if d is not None and d != -1)
    if dims.count(-1) > 1 or known == 0:
        return None
    out = tuple(total // known if d == -1 else d for d in dims)
    return out if prod(d for d in out if d is not None) == total else None


def _broadcast(a: Shape | None, b: Shape | None) -> Shape | None:
    """Two fully known shapes broadcast elementwise (numpy's rule); None when one is unknown
    or they do not broadcast."""
    if a is None or b is None or None in a or None in b:
        return None
    out: list[int | None] = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def _squeezed(s: Shape | None, axis: ast.expr | None) -> Shape | None:
    """`t.squeeze()` / `t.squeeze(k)` of a fully known shape (axis `k` of size 1)."""
    if s is None or None in s:
        return None
    if axis is None:
        return tuple(d for d in s if d != 1)
    k = _int(axis)
    if k is None or not -len(s) <= k < len(s) or s[k] != 1:
        return None
    k %= len(s)
    return s[:k] + s[k + 1 :]


def _layer_int(e: ast.expr, layer: ast.Call, ctx: Context, depth: int = 0) -> int | None:
    """A size given to a cell built in `__init__`: a literal, a module-level int constant,
    `len(...)` of a module-level list or tuple literal, a parameter of that `__init__`
    every construction gives one literal, and `+ - * //` of these."""
    if depth > 6:
        return None
    v = _int(e)
    if v is not None:
        return v
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        x, y = _layer_int(e.left, layer, ctx, depth + 1), _layer_int(e.right, layer, ctx, depth + 1)
        if x is None or y is None or (isinstance(e.op, ast.FloorDiv) and y == 0):
            return None
        op = e.op
        return x + y if isinstance(op, ast.Add) else x - y if isinstance(op, ast.Sub) else x * y if isinstance(op, ast.Mult) else x // y
    init = ctx.parent(layer)
    while init is not None and not isinstance(init, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)):
        init = ctx.parent(init)
    if isinstance(e, ast.Name):
        if isinstance(init, ast.FunctionDef) and any(p.arg == e.id for p in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)):
            cls = ctx.parent(init)
            return _init_int(cls, e.id, ctx) if init.name == "__init__" and isinstance(cls, ast.ClassDef) else None
        if isinstance(init, ast.FunctionDef) and any(
            isinstance(n, ast.Name) and n.id == e.id and not isinstance(n.ctx, ast.Load) for n in own_nodes(init)
        ):
            return None  # a local of `__init__`
        bound = module_constant(e.id, ctx)
        return _layer_int(bound, layer, ctx, depth + 1) if bound is not None else None
    if (
        isinstance(e, ast.Call)
        and len(e.args) == 1
        and not e.keywords
        and isinstance(e.args[0], ast.Name)
        and ctx.qualname(e.func) == "builtins.len"
    ):
        seq = module_constant(e.args[0].id, ctx)
        if isinstance(seq, (ast.List, ast.Tuple)) and not any(isinstance(x, ast.Starred) for x in seq.elts):
            return len(seq.elts)
    return None


def module_constant(name: str, ctx: Context) -> ast.expr | None:
    """The value of `name` bound exactly once in the file, by a module-level `name = value`,
    and never changed in place (`name.append(...)`, `name[i] = ...`, `name += ...`)."""
    key = "ms193.module-constants"
    table: dict[str, ast.expr | None] | None = ctx.cache.get(key)
    if table is None:
        table = {}
        stores: dict[str, int] = {}
        for n in ast.walk(ctx.tree):
            t = type(n)
            if t is ast.Name and type(n.ctx) is not ast.Load:  # type: ignore[attr-defined]
                stores[n.id] = stores.get(n.id, 0) + 1  # type: ignore[attr-defined]
            elif t is ast.Attribute and type(n.value) is ast.Name:  # type: ignore[attr-defined]
                stores[n.value.id] = stores.get(n.value.id, 0) + 2  # type: ignore[attr-defined]  # `NAMES.append(...)`: not a constant
            elif t is ast.Subscript and type(n.ctx) is not ast.Load and type(n.value) is ast.Name:  # type: ignore[attr-defined]
                stores[n.value.id] = stores.get(n.value.id, 0) + 2  # type: ignore[attr-defined]
            elif t in (ast.Global, ast.Nonlocal):
                for g in n.names:  # type: ignore[attr-defined]
                    stores[g] = stores.get(g, 0) + 2
        for st in ctx.tree.body:
            if type(st) is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name:
                table[st.targets[0].id] = st.value if stores.get(st.targets[0].id) == 1 else None
        ctx.cache[key] = table
    return table.get(name)


def _straight_line_binding(use: ast.Name, ctx: Context) -> ast.expr | None:
    """The value bound to the local `use` names where it is read, when the name is bound
    only by plain `name = value` statements at the top of the function body (no branch or
    loop around them) and the read sits in a later top-level statement, or in the value of
    the statement rebinding it (`w = [v / t for v in w]` reads the earlier `w`)."""
    func = ctx.function
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or type(use.ctx) is not ast.Load:
        return None
    a = func.args
    if any(p.arg == use.id for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)) or use.id in (
        getattr(a.vararg, "arg", None),
        getattr(a.kwarg, "arg", None),
    ):
        return None
    top: ast.AST = use
    parent = ctx.parent(top)
    while parent is not None and parent is not func:
        top, parent = parent, ctx.parent(parent)
    if parent is not func or top not in func.body:
        return None
    binds = [
        n
        for n in own_nodes(func)
        if type(n) is ast.Name and n.id == use.id and type(n.ctx) is not ast.Load
    ]
    at = func.body.index(top)
    best = -1
    for n in binds:
        st = ctx.parent(n)
        if not (type(st) is ast.Assign and st.targets == [n] and st in func.body):
            return None
        i = func.body.index(st)
        if best < i < at:
            best = i  # the last binding before the read
    return func.body[best].value if best >= 0 else None  # type: ignore[attr-defined]


# ---------------------------------------------------------------- entry inputs


def param_shape(name: str, ctx: Context) -> Shape | None:
    """The shape of a parameter of the compiled entry being checked when every module-level
    call passes a tensor of that one shape built there."""
    func = ctx.function
    scope = ctx.scope
    if scope is None or func is None or scope.function is not func or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    key = ("ms193-param-shapes", id(func))
    shapes: dict[str, Shape] | None = ctx.cache.get(key)
    if shapes is None:
        shapes = _entry_shapes(func, scope.kind, ctx)
        ctx.cache[key] = shapes
    return shapes.get(name)


def param_int(name: str, ctx: Context) -> int | None:
    """The one literal int every module-level call of the entry gives its parameter `name`
    (a positional argument, or the default when the call leaves it out)."""
    func = ctx.function
    scope = ctx.scope
    if scope is None or func is None or scope.function is not func or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    params = [*func.args.posonlyargs, *func.args.args]
    names = [p.arg for p in params]
    if scope.kind == "construct":
        names = names[1:]
    if name not in names:
        return None
    i = names.index(name)
    defaults = func.args.defaults
    first_default = len(params) - len(defaults)
    pos = i + (1 if scope.kind == "construct" else 0)
    default = _int(defaults[pos - first_default]) if pos >= first_default else None
    callers = entry_callers(func, scope.kind, ctx)
    if callers is None:
        return None
    found: set[int | None] = set()
    for node in ast.walk(ctx.tree):
        if not isinstance(node, ast.Call) or not callers.calls(node):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or node.keywords:
            return None
        found.add(_int(node.args[i]) if i < len(node.args) else default)
    return found.pop() if len(found) == 1 else None


def _entry_shapes(func: ast.FunctionDef | ast.AsyncFunctionDef, kind: str, ctx: Context) -> dict[str, Shape]:
    names = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if kind == "construct":
        names = names[1:]
    callers = entry_callers(func, kind, ctx)
    if callers is None or not names:
        return {}
    found: dict[str, set[Shape | None]] = {}
    for node in ast.walk(ctx.tree):
        if not isinstance(node, ast.Call) or not callers.calls(node):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or node.keywords:
            return {}
        for i, name in enumerate(names):
            arg = node.args[i] if i < len(node.args) else None
            ok = arg is not None and _module_tensor(arg, ctx, 0)
            found.setdefault(name, set()).add(_module_shape(arg, ctx, 0) if ok else None)  # type: ignore[arg-type]
    out: dict[str, Shape] = {}
    for name, shapes in found.items():
        if len(shapes) == 1:
            s = next(iter(shapes))
            if s is not None:
                out[name] = s
    return out




def _module_tensor(e: ast.expr, ctx: Context, depth: int) -> bool:
    """A MindSpore tensor built by module-level code (`Tensor(...)`, `ops.ones(...)`, a
    method of one, a name bound once to one), not a numpy array or a Python number."""
    if depth > 8:
        return False
    if isinstance(e, ast.Name):
        bound = analyzer(ctx)._module_assignments().get(e.id)
        return bound is not None and _module_tensor(bound, ctx, depth + 1)
    if not isinstance(e, ast.Call):
        return False
    q = ctx.qualname(e.func) or ""
    if q in TENSOR_CLASS or q.startswith(("mindspore.ops.", "mindspore.numpy.")):
        return True
    f = e.func
    return isinstance(f, ast.Attribute) and f.attr in ("astype", "reshape", "to", "float") and not q and _module_tensor(f.value, ctx, depth + 1)
_MAKERS = frozenset({"zeros", "ones", "empty", "full", "rand", "randn"})


def _module_shape(e: ast.expr, ctx: Context, depth: int) -> Shape | None:
    """The shape of a tensor (or numpy array) built by module-level code: `Tensor(a, dtype)`,
    `np.arange(6).reshape(2, 3)`, `np.random.randn(4, 8)`, `np.zeros((2, 3))`, `np.array([...])`,
    `ops.ones((2, 3))`, `.astype(...)`, a name bound once at module level."""
    if depth > 8:
        return None
    if isinstance(e, ast.Name):
        bound = analyzer(ctx)._module_assignments().get(e.id)
        return _module_shape(bound, ctx, depth + 1) if bound is not None else None
    if isinstance(e, ast.BinOp):
        return _scalar_broadcast(e, ctx, depth)
    if not isinstance(e, ast.Call):
        return None
    f = e.func
    if isinstance(f, ast.Attribute) and not (ctx.qualname(f) or "").startswith(("numpy.", "mindspore.")):
        if f.attr in ("astype", "copy", "float", "to"):
            return _module_shape(f.value, ctx, depth + 1)
        if f.attr == "reshape":
            return _reshaped(_module_shape(f.value, ctx, depth + 1), e.args)
        return None
    q = ctx.qualname(f) or ""
    last = q.rpartition(".")[2]
    if q in TENSOR_CLASS:
        data = e.args[0] if e.args else _keyword(e, ("input_data",))
        if isinstance(data, (ast.List, ast.Tuple)):
            return _literal_shape(data)
        if isinstance(data, ast.Constant) and type(data.value) in (int, float, bool):
            return ()
        return _module_shape(data, ctx, depth + 1) if data is not None else None
    if not q.startswith(("numpy.", "mindspore.ops.", "mindspore.numpy.")):
        return None
    if last in ("array", "asarray") and e.args and isinstance(e.args[0], (ast.List, ast.Tuple)):
        return _literal_shape(e.args[0])
    if last == "arange" and e.args and all(k.arg == "dtype" for k in e.keywords):
        bounds = [_folded(a) for a in e.args]
        if not bounds or any(b is None for b in bounds) or len(bounds) > 3:
            return None
        start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else 1)
        if step == 0:
            return None
        return (len(range(start, stop, step)),)  # type: ignore[arg-type]
    if q.startswith("numpy.random.") and last in ("randn", "rand"):
        dims = [_int(a) for a in e.args]
        return tuple(dims) if dims and all(d is not None and d >= 0 for d in dims) else None
    if q.startswith("numpy.random.") and last in ("randint", "normal", "uniform", "random"):
        size = _keyword(e, ("size",))
        if size is None and last != "random" and len(e.args) == 3:
            size = e.args[2]  # `randint(0, 10, (3, 7))`: (low, high, size), (loc, scale, size)
        return _dims(size) if size is not None else None
    if last in _MAKERS and e.args:
        return _dims(e.args[0])
    return None


def _scalar_broadcast(e: ast.BinOp, ctx: Context, depth: int) -> Shape | None:
    """`np.arange(6).reshape(2, 3) - 2.5`, `2 * np.ones(4)`: an array and a number keep the
    array's shape (numpy broadcasts the number); two arrays of one known shape keep it."""
    if isinstance(e.op, ast.MatMult):
        return None
    sides = [e.left, e.right]
    numbers = [s for s in sides if python_number(s)]
    arrays = [s for s in sides if not python_number(s)]
    shapes = {_module_shape(a, ctx, depth + 1) for a in arrays}
    if not arrays or len(shapes) != 1 or len(numbers) + len(arrays) != 2:
        return None
    return next(iter(shapes))


def _dims(e: ast.expr) -> Shape | None:
    if isinstance(e, (ast.Tuple, ast.List)):
        dims = [_int(x) for x in e.elts]
        return tuple(dims) if all(d is not None and d >= 0 for d in dims) else None
    d = _int(e)
    return (d,) if d is not None and d >= 0 else None


def _literal_shape(e: ast.expr) -> Shape | None:
    """`[[1, 2], [3, 4]]` -> (2, 2); ragged or starred lists -> None."""
    if not isinstance(e, (ast.List, ast.Tuple)):
        return ()
    if any(isinstance(x, ast.Starred) for x in e.elts):
        return None
    inner = {_literal_shape(x) for x in e.elts}
    if len(inner) > 1 or None in inner:
        return None
    rest = next(iter(inner)) if inner else ()
    return (len(e.elts), *rest) if rest is not None else None
