"""The Python number a compiled entry's parameter holds when every call in the file gives it
one: `def f(loss, best=1e9)` called as `f(t)` (the default), or `f(t, 1.0)`.

MindSpore 2.10 keeps a Python int/float argument of a jit function or of `construct` as a
constant scalar of the graph, so `if loss < best: best = loss` joins a tensor with a scalar
and fails (`Cannot join the return values of different branches`), as it does for a local
`best = 1e9`; a tensor passed for the same parameter compiles (measured:
fixtures/written/functional/probes, `join_*`).
"""

from __future__ import annotations

import ast

from npu_lsp.engine import Context


def python_number_argument(fn: ast.AST, name: str, ctx: Context) -> ast.expr | None:
    """The number (an expression) parameter `name` of `fn` gets at every call of `fn` found in
    the file, or None when a call gives something else, is not understood, or none is found."""
    if not isinstance(fn, ast.FunctionDef):
        return None
    calls, skip = _calls_of(fn, ctx)
    if not calls:
        return None
    args = [*fn.args.posonlyargs, *fn.args.args]
    names = [a.arg for a in args][skip:]
    if name not in names:
        return None  # keyword-only or *args: left alone
    index = names.index(name)
    defaults = dict(zip([a.arg for a in args[len(args) - len(fn.args.defaults) :]], fn.args.defaults, strict=True))
    found: ast.expr | None = None
    for call in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        if index < len(call.args):
            value: ast.expr | None = call.args[index]
        else:
            value = next((k.value for k in call.keywords if k.arg == name), defaults.get(name))
        if value is None or not _number(value):
            return None
        found = found or value
    return found


def _number(e: ast.expr) -> bool:
    """An int/float literal (not a bool), `-1.0`, or `float("inf")` / `float(2)`."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        e = e.operand
    if isinstance(e, ast.Constant):
        return type(e.value) in (int, float)
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id in ("float", "int")
        and len(e.args) == 1
        and not e.keywords
        and isinstance(e.args[0], ast.Constant)
    )


def _calls_of(fn: ast.FunctionDef, ctx: Context) -> tuple[list[ast.Call], int]:
    """Calls of a module-level function `fn` by its name, or of instances of the module-level
    class whose `construct` `fn` is (`Net()(x)`, `net = Net()` then `net(x)`); and how many
    leading parameters the calls do not pass (`self`)."""
    tree = ctx.tree
    if fn in tree.body:
        return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == fn.name], 0
    cls = next((c for c in tree.body if isinstance(c, ast.ClassDef) and fn in c.body), None)
    if cls is None or fn.name != "construct":
        return [], 1
    instances = {
        st.targets[0].id
        for st in tree.body
        if isinstance(st, ast.Assign)
        and len(st.targets) == 1
        and isinstance(st.targets[0], ast.Name)
        and _builds(st.value, cls.name)
    }
    calls = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        if _builds(f, cls.name) or (isinstance(f, ast.Name) and f.id in instances):
            calls.append(n)
    # an instance that escapes (passed on, stored elsewhere) may be called where we do not see
    for n in ast.walk(tree):
        if (
            isinstance(n, ast.Name)
            and n.id in instances
            and isinstance(n.ctx, ast.Load)
            and not any(c.func is n for c in calls)
        ):
            return [], 1
    return calls, 1


def _builds(e: ast.expr, cls_name: str) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == cls_name
