"""MS148: (STRICT) a dict returned by the top graph is read as a dict by the Python caller."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.graphmode.flow import Analyzer, analyzer, list_call
from npu_lsp.rules.graphmode.helpers import module_function, returns_in
from npu_lsp.rules.graphmode.ranks import Val, ranks
from npu_lsp.scope import FuncDef

#: what only a dict answers: every method of `dict` (a tuple has only `count` and `index`;
#: measured, written/heldout35a probes `fix37b_dd_*`: `.copy()`, `.pop(k)`, `.update(d)`,
#: `.setdefault(k, v)` of a STRICT dict output fail with "'tuple' object has no attribute ...")
_DICT_METHODS = frozenset(
    {"keys", "values", "items", "get", "copy", "pop", "popitem", "update", "setdefault", "clear", "fromkeys"}
)

#: builtins that compare the items of what they are given: over the tuple a STRICT dict output
#: is, they compare its tensors, and a comparison of a tensor of more than one element has no
#: truth value (measured, written/heldout35a case `disc_fmap_dict_by_name`, probes
#: `fix37b_dd_*`: `sorted(feats)`, `max(feats)`, `min(d)` fail with "The tensor should have
#: only one element, but got 48, more than one element is ambiguous"; over one value, or over
#: 0-d losses, they compile)
_COMPARING = frozenset({"sorted", "max", "min"})


@rule(code="MS148", name="dict-output-under-strict", severity="error", family="graphmode")
class DictOutputUnderStrict(Rule):
    """## What it does
    Under the STRICT syntax level, flags Python code that reads the result of a network
    (a Cell's `construct`), an `@ms.jit` function or an `@ms.jit` method called on an
    instance (keras' `logs = model.train_step(data)`) as a dict (`out["logits"]`,
    `out.items()`, `out.get("loss")`) when the compiled function returns a dict, also a dict
    inside a returned tuple or list (`total, losses = net(x)` then `losses["cls"]`, also a
    sub-cell's dict the network returns, `return self.head(x)`, or the dict a helper
    method or module-level function gives back, `x, extra = self.extract_features(x)`
    then `return x, extra`; `out[1]["feat"]`), and the dicts of a returned list however it was built: grown by
    appends (per-image results, `results.append({"boxes": b, ...})`, read as
    `res[0]["boxes"]`), `extend`, `insert` or `+=`, a list comprehension of dicts (DETR's
    `PostProcess`: `[{"scores": s, ...} for s, l, b in zip(...)]`, returned or bound to a
    name first), `list(<generator of dicts>)` or `[d] + [...]`, and a dict on either side
    of a returned conditional expression (`return {"loss": loss} if output_dict else loss`,
    the caller passing `output_dict=True`). Also such an output given
    back to a STRICT graph that reads it by key (a KV cache or a state dict passed to the next
    call: `y, past = dec(x)` then `dec(x, past)` with `past["k0"]` in `construct`). The returned
    dict may also be the auxiliary output of a gradient function built with `has_aux=True`
    (`(loss, metrics), grads = grad_fn(x, y)` then `return loss, metrics`), of a module-level
    function or of a module-level Cell instance (`ms.value_and_grad(net, None, params,
    has_aux=True)`, `net`'s `construct` returning `loss, {"loss": loss}`). The key
    may be a literal, an f-string or a `%`-formatted string, or a module-level name that
    only ever holds strings (`for name in TASKS: preds[name]` with `TASKS` a list of
    literals), the variable of a comprehension or the target of a `for` (also its place in
    `zip(...)` / `enumerate(...)`) that walks string literals or the string list a module-level
    instance of the file's class keeps (`[codes[k] for k in ["top", "bottom"]]`, `for name in
    model.sources:`; written/heldout42c probes `fix42c_dk_*`), or the loop variable of `for k in out:` over that same output (it walks
    the tuple's tensors, and `out[k]` fails with "Only integer tensors of a single element
    can be converted to an index."; measured, written/heldout35b `render_outputs_dict_return`,
    probes `fix35e_dk_*`: a loop that only prints `k` compiles); any other dict method
    (`.copy()`, `.pop(k)`, `.update(d)`, `.setdefault(k, v)`), `{**out}` and `f(**out)`; and
    `sorted(out)` / `max(out)` / `min(out)` of a dict of two or more entries one of which the
    shape model knows holds more than one element (they compare the tensors of the tuple). A
    read under `if isinstance(out, dict):` is left alone.

    ## Why is this bad?
    Under STRICT, MindSpore hands a dict output of the top graph back to Python as a tuple
    of its values, so the caller fails outside the graph: `TypeError: tuple indices must be
    integers or slices, not str`. A dict nested in a returned tuple or list is turned into a
    tuple the same way. The default LAX level returns a real dict.

    ## Example
    ```python
    class Head(nn.Cell):
        def construct(self, x):
            return {"start": x[:, 0], "end": x[:, 1]}

    out = Head()(x)
    print(out["start"])
    ```

    ## Use instead
    Return a tuple and unpack it (`start, end = Head()(x)`), or keep the LAX level.

    ## Fix safety
    No automatic fix.

    ## References
    - MindSpore 2.10, measured: a dict output at STRICT reaches Python as `tuple`, at LAX
      as `dict` (Cell `construct` and `@ms.jit` function alike).
    - MindSpore 2.10, measured: `return y, {"feat": y}` read as `out[1]["feat"]`, unpacked
      and read as `d["logits"]` or `.items()`, and `return [x, {"k": x}]` are rejected under
      STRICT; reading only `out[0]`, and a nested dict used inside the graph, compile.
      So is a list of dicts appended in a loop and read as `res[1]["feat"]` (a Cell and a jit
      function alike); `len(res)` and `res[0]` compile. So are a returned list
      comprehension of dicts or of dict comprehensions, `list(...)` of a generator of
      dicts, `[d] + [...]`, and a list grown by `extend`, `insert` or `+=` of dicts
      (written/heldout37d `postprocess_results_list_of_dicts`,
      `r2_post_jit_returns_list_of_dicts_pynative`, probes `fix37f_lc_*`); a comprehension
      of tuples read by position compiles.
    - MindSpore 2.10, measured: a dict output passed back as an argument (positional or by
      keyword, to the same or another network or jit function) and read there with a string
      key (`"k%d" % i`, an f-string) or `.values()` is rejected under STRICT; passing it on
      without reading it by key, or passing a fresh dict literal, compiles.
    - MindSpore 2.10, measured (written/heldout25a `grad_aux_dict_metrics`, probes
      `fix25c_aux_*`): the dict a `has_aux` function returns beside its loss, returned by a
      STRICT top graph through `ms.value_and_grad` or `ms.grad` (unpacked, whole, or
      `aux[0]`) and read by key or `.items()` in Python, is rejected; printing it compiles.
    - MindSpore 2.10, measured (written/heldout27b `step_train_step_method_returns_logs`,
      probes `fix27b_jd_*`): an `@ms.jit` method's dict read by `.items()` or a key after
      the call fails under STRICT; `len(...)` of it, and a tuple return, compile.
    - MindSpore 2.10, measured (written/heldout29a `tos_construct_returns_dict_metrics`): a
      jit function returning what a module-level Cell instance's `construct` returns (a
      dict), read by key in Python, fails under STRICT.
    - MindSpore 2.10, measured (written/heldout35a case `disc_fmap_dict_by_name`, probes
      `fix37b_dd_*`): `sorted(feats)`, `max(feats)`, `min(d)` of a returned dict of feature
      maps fail under STRICT ("The tensor should have only one element, but got 48, more than
      one element is ambiguous"); over one entry or 0-d losses they compile; `.copy()`,
      `.pop`, `.update`, `.setdefault`, `{**feats}`, `dict(**feats)` fail ("'tuple' object
      has no attribute ...", "is not a mapping"); `"c1" in feats` and `len(list(feats))`
      compile.
    - MindSpore 2.10, measured (written/heldout38b case `fairseq_decoder_extra_dict_attn_list`,
      probes `fix38b_fd_*`): a dict built by a helper method (or a module-level function) and
      returned by `construct` whole, unpacked from the helper's tuple or bound to a name
      first, read by key at module level, fails under STRICT; `len(extra)` compiles.
    - RULES.md has no row for it (found by the independently written sets `nlp` and `zoo`).
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        if not any(s.strict and s.kind in ("construct", "jit") for s in ctx.scopes.scopes.values()):
            return  # only such a scope's dict output is reported: none in reach of this file
        memo: dict[str, _Output | None] = {}
        held: dict[str, _Output] = {}  # module-level name -> the compiled output it holds
        #: loop variable -> the dict output `for <it> in <output>:` walks (its keys in Python)
        keys_of: dict[str, str] = {}
        for st in _module_statements(node):
            if isinstance(st, ast.For):
                _bind_loop_key(st, keys_of, lambda e: self._dict_source(e, held, memo, ctx))
            for sub in ast.walk(st):
                if isinstance(sub, ast.Subscript) and (
                    _str_valued(sub.slice) or _module_str_name(sub.slice, ctx) or _iterated_key(sub, keys_of)
                ):
                    fn = self._dict_source(sub.value, held, memo, ctx)
                    if fn is not None and not _dict_guarded(sub, sub.value, ctx):
                        yield self._report(sub, fn, ctx)
                elif isinstance(sub, ast.Dict):
                    yield from self._unpacked(sub, [v for k, v in zip(sub.keys, sub.values, strict=True) if k is None], held, memo, ctx)
                elif isinstance(sub, ast.Call):
                    yield from self._unpacked(sub, [k.value for k in sub.keywords if k.arg is None], held, memo, ctx)
                    if _compares_items(sub):
                        fn = self._dict_source(sub.args[0], held, memo, ctx)
                        if fn is not None and _compared_values_multi_element(sub.args[0], fn, ctx):
                            yield self._report(sub, fn, ctx)
                    if isinstance(sub.func, ast.Attribute) and sub.func.attr in _DICT_METHODS:
                        fn = self._dict_source(sub.func.value, held, memo, ctx)
                        if fn is not None and not _dict_guarded(sub, sub.func.value, ctx):
                            yield self._report(sub, fn, ctx)
                    if held and (sub.args or sub.keywords):
                        yield from self._passed_back(sub, held, memo, ctx)
            if isinstance(st, ast.Assign):
                out = self._output(st.value, held, memo, ctx)
                for t in st.targets:
                    _bind(t, out, held)
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            keys_of.pop(n.id, None)

    def _unpacked(
        self, node: ast.expr, mappings: list[ast.expr], held: dict[str, _Output], memo: dict[str, _Output | None], ctx: Context
    ) -> Iterable[Diagnostic]:
        """`{**out, ...}` / `f(**out)` of a STRICT dict output: `**` needs a mapping (measured,
        written/heldout35a probes `fix37b_dd_star_merge`, `_dict_kwargs_unpack`: "'tuple'
        object is not a mapping", "argument after ** must be a mapping, not tuple")."""
        for m in mappings:
            fn = self._dict_source(m, held, memo, ctx)
            if fn is not None and not _dict_guarded(node, m, ctx):
                yield self._report(node, fn, ctx)
                return

    def _passed_back(
        self, call: ast.Call, held: dict[str, _Output], memo: dict[str, _Output | None], ctx: Context
    ) -> Iterable[Diagnostic]:
        """A dict output given back to a STRICT graph as an argument (a KV cache, a state
        dict) and read there by key: it arrives as the tuple Python holds (measured:
        `y, past = dec(x)` then `dec(x, past)` with `past["k%d" % i]` in `construct` fails
        under STRICT, "tuple indices must be integers or slices, not str"; LAX compiles)."""
        key, callee = self._callee(call.func, ctx)
        scope = ctx.scopes.scope_for(callee) if callee is not None else None
        if callee is None or scope is None or not scope.strict or scope.kind not in ("construct", "jit"):
            return
        params = [a.arg for a in callee.args.posonlyargs + callee.args.args]
        if params and (scope.kind == "construct" or params[0] == "self"):
            params = params[1:]  # `self` (of `construct`, or of an `@ms.jit` method)
        given: list[tuple[str, ast.expr]] = []
        for i, arg in enumerate(call.args):
            if i >= len(params) or isinstance(arg, ast.Starred):
                break
            given.append((params[i], arg))
        given.extend((kw.arg, kw.value) for kw in call.keywords if kw.arg in params)
        for param, arg in given:
            source = self._dict_source(arg, held, memo, ctx)
            read = _read_by_key(param, callee) if source is not None else None
            if source is not None and read is not None:
                yield ctx.diagnostic(
                    self,
                    arg,
                    f"`{source.name}` returns a dict, which STRICT graph mode hands back as a tuple of its values; given back to `{callee.name}` as `{param}`, `{ctx.segment(read)}` fails on it there",
                )

    def _report(self, node: ast.expr, fn: FuncDef, ctx: Context) -> Diagnostic:
        listed = any(_ANY in p for p in _dict_paths(fn, ctx))
        what = "a list of dicts, each of which" if listed else "a dict, which"
        return ctx.diagnostic(
            self,
            node,
            f"`{fn.name}` returns {what} STRICT graph mode hands back as a tuple of its values; `{ctx.segment(node)}` fails on it",
        )

    def _dict_source(
        self, e: ast.expr, held: dict[str, _Output], memo: dict[str, _Output | None], ctx: Context
    ) -> FuncDef | None:
        out = self._output(e, held, memo, ctx)
        return out[0] if out is not None and () in out[1] else None

    def _output(
        self, e: ast.expr, held: dict[str, _Output], memo: dict[str, _Output | None], ctx: Context
    ) -> _Output | None:
        """The compiled function whose output `e` is (or is part of), with where in `e` its
        dicts sit; None when `e` holds no dict of a STRICT graph output."""
        if isinstance(e, ast.Name):
            return held.get(e.id)
        if isinstance(e, ast.Subscript):  # `out[1]` of a returned tuple
            inner = self._output(e.value, held, memo, ctx)
            i = _int_key(e.slice)
            return _element(inner, i) if inner is not None and i is not None else None
        return self._compiled_dict_call(e, memo, ctx)

    def _compiled_dict_call(
        self, e: ast.expr, memo: dict[str, _Output | None], ctx: Context
    ) -> _Output | None:
        """The compiled STRICT function a module-level call runs, when its output holds a dict."""
        if not isinstance(e, ast.Call):
            return None
        key, fn = self._callee(e.func, ctx)
        if fn is None:
            return None
        if key not in memo:
            scope = ctx.scopes.scope_for(fn)
            paths = _dict_paths(fn, ctx) if scope is not None and scope.strict and scope.kind in ("construct", "jit") else frozenset()
            memo[key] = (fn, paths) if paths else None
        return memo[key]

    def _callee(self, f: ast.expr, ctx: Context, depth: int = 0) -> tuple[str, FuncDef | None]:
        info = ctx.scopes.info
        if isinstance(f, ast.Name):
            made = info.instances.get(f.id)
            if made is not None and made.startswith("mindspore.") and made.rsplit(".", 1)[-1] == "jit":
                # `run = ms.jit(Net())` / `ms.jit(net)` / `ms.jit(net.construct)`: calling
                # `run` runs the Cell's `construct` as the top graph (measured,
                # written/heldout39c case `r2_tos_grads_dict_keyed_by_names_cached_in_init`,
                # probes `fix39d_dj_*`: its dict comes back as a tuple under STRICT, "'tuple'
                # object has no attribute 'keys'"; `len(res)` compiles)
                jitted = _jit_wrapped(f.id, ctx) if depth == 0 else None
                return f.id, self._callee(jitted, ctx, depth + 1)[1] if jitted is not None else None
            if made is not None:
                return f.id, _construct(made, ctx)
            return f.id, info.functions.get(f.id)
        if isinstance(f, ast.Attribute) and f.attr == "construct" and depth > 0:
            return self._callee(f.value, ctx, depth)  # `ms.jit(net.construct)`
        if isinstance(f, ast.Call):  # `Net()(x)`
            q = ctx.qualname(f.func)
            if q is not None and ctx.scopes.is_cell_class(q):
                return q, _construct(q, ctx)
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in info.instances:
            # `model.train_step(data)`, an `@ms.jit` method: a top graph of its own (measured,
            # written/heldout27b `step_train_step_method_returns_logs`, probes `fix27b_jd_*`:
            # its dict comes back as a tuple under STRICT, "'tuple' object has no attribute
            # 'items'"; `len(logs)` and a tuple return compile)
            found = ctx.scopes._method(info.instances[f.value.id], f.attr)
            method = found[2] if found is not None else None
            scope = ctx.scopes.scope_for(method) if method is not None else None
            if scope is not None and scope.kind == "jit":
                return f"{f.value.id}.{f.attr}", method
        return "", None


def _jit_wrapped(name: str, ctx: Context) -> ast.expr | None:
    """What the module-level name `name`, bound once to `ms.jit(<x>)`, wraps: `<x>`."""
    bound = [
        st.value
        for st in ctx.tree.body
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets)
    ]
    if len(bound) != 1 or not isinstance(call := bound[0], ast.Call) or len(call.args) != 1:
        return None
    q = ctx.qualname(call.func) or ""
    return call.args[0] if q.startswith("mindspore.") and q.rsplit(".", 1)[-1] == "jit" else None


#: a compiled function and the positions of the dicts in its output: `()` for the output
#: itself, `(1,)` for the second item of a returned tuple, `(1, 0)` one level deeper
_Output = tuple[FuncDef, frozenset[tuple[int, ...]]]


def _element(out: _Output, i: int) -> _Output | None:
    """The part of a compiled output that item `i` of it holds (STRICT turns nested dicts into
    tuples too, so `out[1]["k"]` fails as `out["k"]` does)."""
    fn, paths = out
    inner = frozenset(p[1:] for p in paths if p and p[0] in (i, _ANY))
    return (fn, inner) if inner else None


def _bind(target: ast.expr, out: _Output | None, held: dict[str, _Output]) -> None:
    if isinstance(target, ast.Name):
        if out is not None:
            held[target.id] = out
        else:
            held.pop(target.id, None)
    elif isinstance(target, (ast.Tuple, ast.List)):
        starred = any(isinstance(t, ast.Starred) for t in target.elts)
        for i, t in enumerate(target.elts):
            _bind(t, None if out is None or starred else _element(out, i), held)


def _int_key(e: ast.expr) -> int | None:
    if isinstance(e, ast.Constant) and type(e.value) is int and e.value >= 0:
        return e.value
    return None


def _construct(cls_qual: str, ctx: Context) -> FuncDef | None:
    found = ctx.scopes._method(cls_qual, "construct")
    return found[2] if found is not None else None


def _dict_paths(fn: FuncDef, ctx: Context, depth: int = 0) -> frozenset[tuple[int, ...]]:
    """Where `fn`'s returned values hold dicts: the output itself, or items of a returned
    tuple or list literal (`return total, losses`), also the output of a sub-cell `fn`
    returns (`return self.head(x)`, the head's `construct` returning a dict: measured,
    written/heldout17a probes `fe17a_dc_sub_*`, case `r2_seg_class_names_dict_comprehension`)."""
    a = analyzer(ctx)
    found: set[tuple[int, ...]] = set()

    def walk(v: ast.expr, path: tuple[int, ...]) -> None:
        if isinstance(v, (ast.Dict, ast.DictComp)) or a.type_class(v, fn) == "dict":
            found.add(path)
        elif isinstance(v, _BUILT_LISTS) or list_call(v):
            # a comprehension, `list(<generator>)` or `a + b` of lists: any item may be a dict
            if _holds_dicts(v, fn, a):
                found.add((*path, _ANY))
        elif isinstance(v, ast.Call) and depth < 3:
            sub = _sub_cell_construct(v, fn, a, ctx) or _module_cell_construct(v, ctx) or _helper_def(v, fn, a, ctx)
            if sub is not None and sub is not fn:
                found.update((*path, *p) for p in _dict_paths(sub, ctx, depth + 1))
            else:
                found.update((*path, *p) for p in _grad_output_paths(v, fn, a, ctx, depth))
        elif isinstance(v, ast.Name) and depth < 3 and (held := _helper_output_part(v, fn, a, ctx, depth)):
            # a name bound to (or unpacked from) what a helper returns: fairseq's
            # `x, extra = self.extract_features(...)` then `return x, extra`
            found.update((*path, *p) for p in held)
        elif isinstance(v, (ast.Name, ast.Subscript)) and depth < 3 and (held := grad_output_part(v, fn, a, ctx, depth)):
            # the auxiliary outputs of a gradient function with `has_aux=True`
            found.update((*path, *p) for p in held)
        elif isinstance(v, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in v.elts):
            for i, e in enumerate(v.elts):
                walk(e, (*path, i))
        elif isinstance(v, ast.IfExp):
            # `return {"loss": loss} if output_dict else loss`: the flag folds per call, and
            # a caller reading the output by a str key runs the dict side (measured,
            # written/heldout37b case `loss_cliploss_output_dict_flag`: `out["contrastive_loss"]`
            # fails under STRICT, "tuple indices must be integers or slices, not str")
            walk(v.body, path)
            walk(v.orelse, path)
        elif isinstance(v, ast.Name) and depth == 0 and _dict_argument(v.id, fn, a, ctx):
            # the dict the caller passed in, handed back (`batch["h"] = ...; return batch`)
            found.add(path)
        elif isinstance(v, ast.Name) and _holds_dicts(v, fn, a):
            # a list of dicts however it was built: grown by appends (`results.append({"boxes":
            # b, ...})` per image), `extend`, `insert`, `+=`, bound to a comprehension
            found.add((*path, _ANY))

    for ret in returns_in(fn.body):
        if ret.value is not None:
            walk(ret.value, ())
    return frozenset(found)


#: an item of a list grown by appends: any index of it
_ANY = -1


def _dict_argument(name: str, fn: FuncDef, a: Analyzer, ctx: Context) -> bool:
    """Is `name` a parameter of `fn` the function never rebinds, given a dict literal by every
    module-level call (inline, or a module name bound once to one)? Returned, it is a dict
    output like any other (measured, written/heldout33a case `r2_dict_input_add_key_return`
    and probes `fix33e_di_*`: `batch["h"] = self.lin(batch["x"]); return batch` read as
    `out["h"]` fails under STRICT, "tuple indices must be integers or slices, not str"; LAX
    returns the dict)."""
    if a.rebinds(name, fn):
        return False
    passed = a.passed_arguments_in(name, fn)
    if not passed:
        return False
    for arg, caller in passed:
        if caller is not None:
            return False
        if isinstance(arg, ast.Name):
            bound = [
                st.value
                for st in ctx.tree.body
                if isinstance(st, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == arg.id for t in st.targets)
            ]
            if len(bound) != 1:
                return False
            arg = bound[0]
        if not isinstance(arg, (ast.Dict, ast.DictComp)):
            return False
    return True


def _grad_output_paths(call: ast.Call, fn: FuncDef, a: Analyzer, ctx: Context, depth: int) -> frozenset[tuple[int, ...]]:
    """Where the output of a gradient function built with `has_aux=True` holds dicts, from
    the `return` of the module function it differentiates (`return loss, metrics`):
    `ms.value_and_grad` gives `((loss, metrics), grads)`, `ms.grad` gives `(grads,
    (metrics,))` (measured, written/heldout25a case `grad_aux_dict_metrics` and probes
    `fix25c_aux_*`: the aux dict returned by the top graph and read by key in Python fails
    under STRICT, "tuple indices must be integers or slices, not str"; printing it compiles)."""
    builder = a.grad_builder(call, fn)
    if builder is None or not any(
        k.arg == "has_aux" and isinstance(k.value, ast.Constant) and k.value.value is True for k in builder.keywords
    ):
        return frozenset()
    differentiated = _differentiated(builder.args[0], ctx)
    if differentiated is None:
        return frozenset()
    paths = _dict_paths(differentiated, ctx, depth + 1)
    if (ctx.qualname(builder.func) or "").endswith("value_and_grad"):
        return frozenset((0, *p) for p in paths)
    return frozenset((1, p[0] - 1, *p[1:]) for p in paths if p and p[0] >= 1)


def _differentiated(target: ast.expr, ctx: Context) -> FuncDef | None:
    """The function a gradient function differentiates: a module-level function, or the
    `construct` of a module-level Cell instance (`ms.value_and_grad(net, None, params,
    has_aux=True)`: measured, written/heldout36b case `loss_train_step_loss_dict_aux`, the
    aux dict of `net`'s `return mse, {"loss": mse}` returned by an `@ms.jit` step and read as
    `logs["loss"]` fails under STRICT, "tuple indices must be integers or slices, not str")."""
    if not isinstance(target, ast.Name):
        return None
    function = ctx.scopes.info.functions.get(target.id)
    if isinstance(function, ast.FunctionDef):
        return function
    held = ctx.scopes.info.instances.get(target.id)
    return _construct(held, ctx) if held is not None else None


def grad_output_part(v: ast.expr, fn: FuncDef, a: Analyzer, ctx: Context, depth: int) -> frozenset[tuple[int, ...]]:
    """The dict positions inside `v`, a name unpacked from (or bound to) the output of a
    `has_aux` gradient function, or an item of one (`aux[0]`)."""
    if isinstance(v, ast.Subscript):
        i = _int_key(v.slice)
        if i is None or not isinstance(v.value, ast.Name):
            return frozenset()
        inner = grad_output_part(v.value, fn, a, ctx, depth)
        return frozenset(p[1:] for p in inner if p and p[0] == i)
    if not isinstance(v, ast.Name):
        return frozenset()
    bound = a.single_assignment(v.id, fn)
    if isinstance(bound, ast.Call):
        return _grad_output_paths(bound, fn, a, ctx, depth)
    unpacked = a.single_unpacking(v.id, fn)
    if unpacked is None:
        return frozenset()
    call, at = unpacked
    n = len(at)
    return frozenset(p[n:] for p in _grad_output_paths(call, fn, a, ctx, depth) if p[:n] == at)


def _helper_def(call: ast.Call, fn: FuncDef, a: Analyzer, ctx: Context) -> FuncDef | None:
    """The graph helper `call` runs: a method of the owning class called on `self`
    (`self.extract_features(x)`) or a module-level function of the file. Its returned dicts
    reach the output as they are (measured, written/heldout38b case
    `fairseq_decoder_extra_dict_attn_list` and probes `fix38b_fd_*`: a dict returned by the
    helper, inside its returned tuple, returned whole, bound first or unpacked, read by key
    at module level fails under STRICT: "tuple indices must be integers or slices, not str")."""
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        cls = a.owner_class(fn)
        if cls is None:
            return None
        return next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == f.attr), None)
    if isinstance(f, ast.Name):
        return module_function(f.id, ctx)
    return None


def _helper_output_part(v: ast.Name, fn: FuncDef, a: Analyzer, ctx: Context, depth: int) -> frozenset[tuple[int, ...]]:
    """The dict positions inside `v`, a name bound to the result of a graph helper
    (`_helper_def`) or unpacked from it (`x, extra = self.features(x)`)."""
    bound = a.single_assignment(v.id, fn)
    if isinstance(bound, ast.Call):
        helper = _helper_def(bound, fn, a, ctx)
        return _dict_paths(helper, ctx, depth + 1) if helper is not None and helper is not fn else frozenset()
    unpacked = a.single_unpacking(v.id, fn)
    if unpacked is None:
        return frozenset()
    call, at = unpacked
    helper = _helper_def(call, fn, a, ctx)
    if helper is None or helper is fn:
        return frozenset()
    n = len(at)
    return frozenset(p[n:] for p in _dict_paths(helper, ctx, depth + 1) if p[:n] == at)


def _sub_cell_construct(call: ast.Call, fn: FuncDef, a: Analyzer, ctx: Context) -> FuncDef | None:
    """The `construct` of the file's Cell class `self.<sub>(...)` calls, `self.<sub>` bound
    once in `__init__` to an instance of it."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"):
        return None
    cls = a.owner_class(fn)
    values = a.self_values(cls).get(f.attr, []) if cls is not None else []
    if len(values) != 1 or not isinstance(values[0], ast.Call) or not isinstance(values[0].func, ast.Name):
        return None
    name = values[0].func.id
    sub = next((st for st in ctx.tree.body if isinstance(st, ast.ClassDef) and st.name == name), None)
    if sub is None or sub is cls:
        return None
    return next((m for m in sub.body if isinstance(m, ast.FunctionDef) and m.name == "construct"), None)


def _module_cell_construct(call: ast.Call, ctx: Context) -> FuncDef | None:
    """The `construct` of a module-level Cell instance a compiled function calls by name
    (`train(x, y)` in an `@ms.jit` step, `train = TrainStep(...)` at module level): MindSpore
    inlines it, so its dict output is the top graph's (measured, written/heldout29a case
    `tos_construct_returns_dict_metrics`: read by key in Python, "tuple indices must be
    integers or slices, not str" under STRICT)."""
    f = call.func
    if not isinstance(f, ast.Name):
        return None
    held = ctx.scopes.info.instances.get(f.id)
    return _construct(held, ctx) if held is not None else None


#: list-building expressions whose items `Analyzer.list_items` follows (with `list_call`)
_BUILT_LISTS = (ast.ListComp, ast.GeneratorExp, ast.BinOp)


def _holds_dicts(v: ast.expr, fn: FuncDef, a: Analyzer) -> bool:
    """Does the list `v` (a local name, a comprehension, `list(<generator>)`, `a + b`) hold a
    dict as an item, whichever way it was built (`Analyzer.list_items`)? Measured: a
    `construct` returning a list of per-image dicts appended in a loop, read as
    `res[0]["boxes"]`, fails under STRICT with "tuple indices must be integers or slices, not
    str" (`res[0][0]` and LAX compile); so do a list comprehension of dicts (DETR's
    `PostProcess`, returned or bound to a name first, from a Cell or an `@ms.jit` function),
    `list(<generator of dicts>)`, a comprehension of dict comprehensions, `[d] + [...]`,
    `extend`, `insert` and `+=` of dicts (written/heldout37d `postprocess_results_list_of_dicts`,
    `r2_post_jit_returns_list_of_dicts_pynative`, probes `fix37f_lc_*`); a comprehension of
    tuples read by position compiles (`fix37f_lc_listcomp_tuples_clean`)."""
    return any(
        isinstance(x, (ast.Dict, ast.DictComp)) or a.type_class(x, fn) == "dict" for x in a.list_items(v, fn)
    )


def _str_key(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and isinstance(e.value, str)


def _str_valued(e: ast.expr) -> bool:
    """A key that is a string in the graph: a literal, an f-string, `"k%d" % i`, `"k{}".format(i)`."""
    if _str_key(e) or isinstance(e, ast.JoinedStr):
        return True
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Mod, ast.Add)):
        return _str_key(e.left)
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == "format"
        and _str_key(e.func.value)
    )


def _dict_guarded(node: ast.AST, value: ast.expr, ctx: Context) -> bool:
    """Is `node` on the true side of an `if` or conditional expression testing
    `isinstance(<value>, dict)`? Code written for both levels reads the output by key only
    when it is a dict (measured, written/heldout21a probe `mo20_loop_over_output_ok`)."""
    if not isinstance(value, ast.Name):
        return False
    child: ast.AST = node
    parent = ctx.parent(node)
    while parent is not None and not isinstance(parent, ast.Module):
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
            t = parent.test
            on_body = child is parent.body or (isinstance(parent, ast.If) and child in parent.body)
            if (
                on_body
                and isinstance(t, ast.Call)
                and isinstance(t.func, ast.Name)
                and t.func.id == "isinstance"
                and len(t.args) == 2
                and isinstance(t.args[0], ast.Name)
                and t.args[0].id == value.id
                and isinstance(t.args[1], ast.Name)
                and t.args[1].id == "dict"
            ):
                return True
        child, parent = parent, ctx.parent(parent)
    return False


def _module_str_name(e: ast.expr, ctx: Context) -> bool:
    """A module-level name every binding of which gives it a string: `name = "click"`, or the
    target of a `for` over a list or tuple of string literals, spelled out or bound once to
    a module-level name (`for name in TASKS:` with `TASKS = ["click", "like"]`), also its
    place in `for name, w in zip(TASKS, ws)` / `enumerate(TASKS)`; or the variable of a
    comprehension around `e` over such strings (`[out[k] for k in ["top", "mid"]]`;
    measured, written/heldout42c `vq_jukebox_levels_dict_codes`, probes `fix42c_dk_*`)."""
    if not isinstance(e, ast.Name):
        return False
    if _comprehension_str_name(e, ctx):
        return True
    binds = ctx.module_bindings().get(e.id, ())
    return bool(binds) and all(
        (isinstance(b, ast.Assign) and _str_key(b.value))
        or (isinstance(b, ast.For) and _iterates_strings(b.target, b.iter, e.id, ctx))
        for b in binds
    )


def _strings(v: ast.expr | None, ctx: Context, depth: int = 0) -> bool:
    """A list or tuple of string literals, spelled out or bound once to a module-level name,
    or the attribute of a module-level instance of the file's class whose `__init__` sets it
    to one (Demucs' `for name in model.sources:`; measured, written/heldout42c probe
    `fix42c_dk_loop_over_net_attr_key`)."""
    if isinstance(v, ast.Name) and depth == 0:
        src = ctx.module_bindings().get(v.id, ())
        return len(src) == 1 and isinstance(src[0], ast.Assign) and _strings(src[0].value, ctx, 1)
    if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and depth == 0:
        return _instance_strings(v.value.id, v.attr, ctx)
    return isinstance(v, (ast.List, ast.Tuple)) and bool(v.elts) and all(_str_key(x) for x in v.elts)


def _instance_strings(name: str, attr: str, ctx: Context) -> bool:
    """Is module-level `name` bound once to `Cls(...)` of a class of this file whose every
    `__init__` value of `self.<attr>` is a list or tuple of string literals?"""
    src = ctx.module_bindings().get(name, ())
    if len(src) != 1 or not isinstance(src[0], ast.Assign):
        return False
    call = src[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return False
    local = ctx.scopes.info.classes.get(call.func.id)
    if local is None:
        return False
    values = analyzer(ctx).self_values(local.node).get(attr, [])
    return bool(values) and all(_strings(x, ctx, 1) for x in values)


def _iterates_strings(target: ast.expr, it: ast.expr, name: str, ctx: Context) -> bool:
    """Does `for <target> in <it>` bind `name` to the strings of a literal list: the target
    itself, or its place in a tuple target over `zip(...)` / `enumerate(...)`?"""
    if isinstance(target, ast.Name):
        return target.id == name and _strings(it, ctx)
    if not (isinstance(target, ast.Tuple) and isinstance(it, ast.Call) and isinstance(it.func, ast.Name)):
        return False
    at = next((i for i, t in enumerate(target.elts) if isinstance(t, ast.Name) and t.id == name), None)
    if at is None or it.keywords:
        return False
    if it.func.id == "zip" and at < len(it.args):
        return _strings(it.args[at], ctx)
    return it.func.id == "enumerate" and at == 1 and len(it.args) == 1 and _strings(it.args[0], ctx)


def _comprehension_str_name(e: ast.Name, ctx: Context) -> bool:
    """Is `e` the variable of a comprehension around it that walks string literals?"""
    node: ast.AST | None = ctx.parent(e)
    while node is not None and not isinstance(node, ast.stmt):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for gen in node.generators:
                if any(isinstance(t, ast.Name) and t.id == e.id for t in ast.walk(gen.target)):
                    return _iterates_strings(gen.target, gen.iter, e.id, ctx)
        node = ctx.parent(node)
    return False


def _read_by_key(param: str, fn: FuncDef) -> ast.expr | None:
    """The first read of parameter `param` of `fn` by a string key or a dict method, unless
    `fn` binds the name again."""
    found: ast.expr | None = None
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Store):
            return None
        if found is not None:
            continue
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name)
            and n.value.id == param
            and isinstance(n.ctx, ast.Load)
            and _str_valued(n.slice)
        ) or (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in _DICT_METHODS
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == param
        ):
            found = n
    return found


def _module_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Module-level statements in order, looking into if/for/while/with/try blocks (not
    into function or class bodies)."""
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        st = stack.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner: list[ast.stmt] = []
        for name in ("body", "orelse", "finalbody"):
            inner.extend(getattr(st, name, None) or [])
        for h in getattr(st, "handlers", None) or []:
            inner.extend(h.body)
        if inner:
            # the header (test / iterable) is walked with the statement; bodies follow
            yield _header(st)
            stack.extend(reversed(inner))
        else:
            yield st


def _bind_loop_key(loop: ast.For, keys_of: dict[str, str], dict_source: Callable[[ast.expr], object]) -> None:
    """`for k in out:` over a STRICT dict output: `k` walks what Python holds, the tuple of
    the dict's values, so `out[k]` indexes that tuple with a tensor (measured, written/heldout35b
    cases `render_outputs_dict_return`, `r2_render_dict_return_from_jit_iterate_keys`: "Only
    integer tensors of a single element can be converted to an index." under STRICT; LAX,
    and a loop that only prints `k`, compile)."""
    if not isinstance(loop.target, ast.Name):
        return
    if isinstance(loop.iter, ast.Name) and dict_source(loop.iter) is not None:
        keys_of[loop.target.id] = loop.iter.id
    else:
        keys_of.pop(loop.target.id, None)


def _iterated_key(sub: ast.Subscript, keys_of: dict[str, str]) -> bool:
    """`out[k]` with `k` the loop variable of `for k in out:` (the same output)."""
    return (
        isinstance(sub.slice, ast.Name)
        and isinstance(sub.value, ast.Name)
        and keys_of.get(sub.slice.id) == sub.value.id
    )


def _header(st: ast.stmt) -> ast.stmt:
    """A compound statement stripped of its bodies (so walking it sees only its header); a
    `for` stays a `for` (its loop variable is followed)."""
    if isinstance(st, ast.For):
        return ast.For(target=st.target, iter=st.iter, body=[], orelse=[], lineno=st.lineno, col_offset=st.col_offset)
    parts = [getattr(st, n) for n in ("test", "iter", "target") if isinstance(getattr(st, n, None), ast.AST)]
    for item in getattr(st, "items", None) or []:
        parts.append(item.context_expr)
    return ast.Expr(value=ast.Tuple(elts=parts, ctx=ast.Load())) if parts else ast.Pass()


def _compares_items(call: ast.Call) -> bool:
    """`sorted(out)`, `max(out)`, `min(out)`: one iterable, its items compared with each other
    (no `key=`: the key's results are compared instead)."""
    return (
        isinstance(call.func, ast.Name)
        and call.func.id in _COMPARING
        and len(call.args) == 1
        and not isinstance(call.args[0], ast.Starred)
        and not any(k.arg in ("key", None) for k in call.keywords)
    )


def _compared_values_multi_element(e: ast.expr, fn: FuncDef, ctx: Context) -> bool:
    """Does every dict `fn` returns (the one `e` holds among them) have two or more entries, one
    of them a tensor of more than one element in every call of `fn` the shape model knows?
    Then sorting or taking the max of the tuple STRICT hands back compares such a tensor (every
    item is compared at least once) and asks for its truth value. A dict whose entries the
    model cannot list, or whose values it cannot size, is left alone (a dict of 0-d losses
    sorts; measured, probe `fix37b_dd_sorted_scalars_clean`)."""
    dicts: list[list[ast.expr]] = []
    for ret in returns_in(fn.body):
        if ret.value is not None and not _returned_dicts(ret.value, fn, ctx, dicts):
            return False
    if not dicts:
        return False
    r = ranks(ctx)
    for values in dicts:
        if len(values) < 2:
            return False
        if not any((got := r.value_at(v, fn)) and all(_many_elements(g) for g in got) for v in values):
            return False
    return True


def _returned_dicts(v: ast.expr, fn: FuncDef, ctx: Context, out: list[list[ast.expr]]) -> bool:
    """Collect the entry values of the dicts the returned `v` holds into `out`: a dict display
    with string keys, or a name bound once to one (also `{}`) and filled by `name["k"] = value`
    in the function's own straight-line body. False when a dict in `v` is built otherwise."""
    if isinstance(v, (ast.Tuple, ast.List)):
        return all(_returned_dicts(x, fn, ctx, out) for x in v.elts)
    a = analyzer(ctx)
    if isinstance(v, ast.Dict):
        if not all(k is not None and _str_key(k) for k in v.keys):
            return False
        if len({k.value for k in v.keys if isinstance(k, ast.Constant)}) != len(v.keys):
            return False
        out.append(list(v.values))
        return True
    if isinstance(v, ast.Name):
        bound = a.single_assignment(v.id, fn)
        is_dict = a.type_class(v, fn) == "dict"
        if not is_dict and not isinstance(bound, (ast.Dict, ast.DictComp)):
            return True  # not a dict: nothing to sort by key here
        if not isinstance(bound, ast.Dict):
            return False
        entries: dict[str, ast.expr] = {}
        for k, x in zip(bound.keys, bound.values, strict=True):
            if not (k is not None and isinstance(k, ast.Constant) and isinstance(k.value, str)):
                return False
            entries[k.value] = x
        for st in fn.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                t = st.targets[0]
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == v.id:
                    if not (isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str)):
                        return False
                    entries[t.slice.value] = st.value
        out.append(list(entries.values()))
        return True
    return a.type_class(v, fn) != "dict" and not isinstance(v, (ast.DictComp, ast.Call))


def _many_elements(v: Val) -> bool:
    """A tensor shape with a known dimension above 1: more than one element, whatever the
    unknown dimensions are (a comparison's truth value needs exactly one element, so a
    `(1, 1, 1)` tensor would still sort)."""
    return isinstance(v, tuple) and any(isinstance(d, int) and d > 1 for d in v)
