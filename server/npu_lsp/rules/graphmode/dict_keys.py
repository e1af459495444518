"""What MindSpore's graph decides about a dict and its keys while compiling.

A dict in compiled code is resolved while compiling: which receivers are dicts MindSpore keeps
as dicts (a display or `dict(...)` on `self`, at module level), which keys are known only at
run time (a tensor, a number read from one, its text), and the membership tests `k in d` that
therefore fold to a constant, so code under them is never compiled. MS121 (run-time dict
keys), MS254 (membership tests folded with a run-time key) and MS210 (strings picked at run
time) share these answers.
"""

from __future__ import annotations

import ast

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.constructed import construction_args, init_of
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.opaque_value_query import opaque_at_lax


def folded_away(node: ast.AST, ctx: Context) -> bool:
    """Is `node` in code MindSpore never compiles because a membership test of a run-time
    key in a dict folds to a constant: in the body of `if k in d:` (False), in the `else` of
    `if k not in d:` (True), or after `if k not in d: continue` (also `break`, `return`,
    `raise`) in the same block? With `k` a tensor or a number read from one (`int(idx[t])`,
    `.item()`), `in_dict` answers False while compiling (measured, written/heldout38c case
    `decode_dict_lookup_in_construct_idx_to_char` and probes `fix38c_dictin_*`: the guarded
    `d[k]` compiles at LAX and STRICT, and the graph returns what the branch never taken
    gives; the same read after the `if`, or under `k > 0 and k in d`, fails with
    "dict_getitem evaluator key only supports ... but got ValueAny")."""
    func = ctx.function
    child: ast.AST = node
    for p in ctx.ancestors(node, func):
        if type(p) is ast.If:
            folded = folded_membership(p.test, ctx)
            if folded is False and any(s is child for s in p.body):
                return True
            if folded is True and any(s is child for s in p.orelse):
                return True
        for field in ("body", "orelse", "finalbody"):
            block = getattr(p, field, None)
            if type(block) is list and any(s is child for s in block):
                for s in block:
                    if s is child:
                        break
                    if type(s) is ast.If and not s.orelse and _exits(s.body) and folded_membership(s.test, ctx) is True:
                        return True
        child = p
    return False


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and type(body[-1]) in (ast.Continue, ast.Break, ast.Return, ast.Raise)


def folded_membership(test: ast.expr, ctx: Context) -> bool | None:
    """The constant `k in d` / `k not in d` folds to while compiling (False / True), for a
    dict `d` and a run-time key `k` (a tensor, or a number read from one, not a JIT Fallback
    value LAX hands to Python); None for any other test."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) not in (ast.In, ast.NotIn):
        return None
    a = analyzer(ctx)
    d = test.comparators[0]
    if not (isinstance(d, ast.Dict) or a.type_class(d) == "dict" or self_dict(d, ctx) or module_dict(d, ctx)):
        return None
    if a.kind(test.left) not in (Kind.TENSOR, Kind.VAR) or fallback_key(test.left, ctx):
        return None
    return type(test.ops[0]) is ast.NotIn


def fallback_key(key: ast.expr, ctx: Context) -> bool:
    """Under LAX, a key computed from a JIT Fallback value (`int(x.asnumpy().sum())`,
    `int(p.value.sum())` of a namedtuple built from a tensor, also one a helper returns or is
    given) is a Python object: Python reads the dict (measured, written/famc probes
    `fb_dk_fb*`; difftest seed 9600025)."""
    scope = ctx.scope
    return scope is not None and scope.level == "lax" and opaque_at_lax(key, ctx.function, ctx)


#: calls that build a dict MindSpore's graph keeps as a dict (measured, written/heldout16b
#: probes `ls17_od_*`, `ls17_dictcall_*`, `ls17_cod_*`: `self.cache = OrderedDict()` or
#: `dict()`, then `self.cache[int(t)] = v` or `.get(int(t), v)` fails at LAX and STRICT,
#: "dict_setitem / dict_getitem evaluator key only supports ..."; `int(t) in self.cache`
#: compiles)
#: `nn.CellDict` too: MindSpore compiles its lookups as dict lookups (written/heldout25a
#: `cells_celldict_runtime_key` and probes `fix26a_celldict_*`: `self.experts[TASKS[int(t)]]`
#: fails with "dict_getitem evaluator key only supports ... but got ValueAny")
_DICT_CALLS = frozenset(
    {"builtins.dict", "collections.OrderedDict", "mindspore.nn.CellDict"}
)


def self_dict(receiver: ast.expr, ctx: Context) -> bool:
    """`self.table` bound only to a dict in the class: a display, a dict comprehension,
    `dict(...)`, `OrderedDict(...)` or `nn.CellDict(...)` (`self.w = {0: 1.0}`, `self.cache = OrderedDict()`,
    `self.index_of = {h: i for i, h in enumerate(horizons)}`), or a parameter of `__init__`
    every construction in the file gives such a dict (`self.encoding = encoding` with
    `Net(ENC)`, `ENC = {0: 0.2}`; `self.s = s if s is not None else {...}`)."""
    if not (isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self"):
        return False
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    values = a.self_values(cls).get(receiver.attr, []) if cls is not None else []
    init = init_of(cls) if cls is not None else None
    return bool(values) and all(
        v is not None and _dict_made(v, ctx, cls, init, False) for v in values  # type: ignore[arg-type]
    )


def _dict_made(v: ast.expr, ctx: Context, cls: ast.ClassDef, init: ast.FunctionDef | None, guarded: bool) -> bool:
    """Is `v` (in `cls`'s `__init__`) a dict for every instance the file builds? A parameter
    read under a `p if p is not None else {...}` guard (`guarded`) may also be given None."""
    if isinstance(v, (ast.Dict, ast.DictComp)) or (isinstance(v, ast.Call) and ctx.qualname(v.func) in _DICT_CALLS):
        return True
    if isinstance(v, ast.IfExp):
        return _dict_made(v.body, ctx, cls, init, True) and _dict_made(v.orelse, ctx, cls, init, True)
    if not (isinstance(v, ast.Name) and init is not None):
        return False
    given = construction_args(v.id, cls, init, ctx)
    return bool(given) and all(
        (guarded and isinstance(g, ast.Constant) and g.value is None) or _module_dict_value(g, ctx) for g in given
    )


def _module_dict_value(e: ast.expr, ctx: Context) -> bool:
    """A dict display or comprehension, or a module-level name bound once to one."""
    if isinstance(e, (ast.Dict, ast.DictComp)):
        return True
    if not isinstance(e, ast.Name):
        return False
    bound = module_bindings(e.id, ctx)
    return len(bound) == 1 and isinstance(bound[0], (ast.Dict, ast.DictComp))


def module_dict(receiver: ast.expr, ctx: Context) -> bool:
    """A module-level name bound to a dict display (`PALETTE = {0: "road"}`) that the
    function does not bind (measured, written/heldout14b probe `hv_dict_getitem_host_key`:
    `PALETTE[int(t.argmax())]` fails with `dict_getitem evaluator key only supports ...`)."""
    if not isinstance(receiver, ast.Name) or ctx.function is None:
        return False
    if analyzer(ctx).first_binding_line(receiver.id, ctx.function) is not None:
        return False
    bound = module_bindings(receiver.id, ctx)
    return len(bound) == 1 and isinstance(bound[0], ast.Dict)


def module_bindings(name: str, ctx: Context) -> list[ast.expr | None]:
    """The values module-level statements bind to `name` (None for a bare annotation)."""
    return [
        st.value
        for st in ctx.tree.body
        if isinstance(st, (ast.Assign, ast.AnnAssign))
        and any(isinstance(t, ast.Name) and t.id == name for t in (st.targets if isinstance(st, ast.Assign) else [st.target]))
    ]


def runtime_text(key: ast.expr, ctx: Context) -> bool:
    """`str(v)` / `f"{v}"` of a value known only at run time (a graph scalar or host data)."""
    if isinstance(key, ast.Call) and isinstance(key.func, ast.Name) and key.func.id == "str" and len(key.args) == 1:
        if ctx.qualname(key.func) != "builtins.str":
            return False
        parts = [key.args[0]]
    elif isinstance(key, ast.JoinedStr):
        parts = [v.value for v in key.values if isinstance(v, ast.FormattedValue)]
    else:
        return False
    a = analyzer(ctx)
    return bool(parts) and any(a.kind(p) == Kind.VAR for p in parts)
