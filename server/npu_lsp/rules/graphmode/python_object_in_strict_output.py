"""MS174: (STRICT) a compiled entry returns a Python object the graph has no type for."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, strict_output_items


@rule(code="MS174", name="python-object-in-strict-output", severity="error", family="graphmode")
class PythonObjectInStrictOutput(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags `return` statements of `construct` or a `@jit`
    function whose value (or an element of a returned tuple or list) is a Python object
    MindSpore has no graph type for: a `set(...)` or `frozenset(...)`, an instance of a class
    of the project that is not a Cell (plain, `@dataclass` or `@ms.jit_class`, made in the
    function or held on `self`), a member of an `enum.Enum`, a class itself, an imported
    module, or a numpy type such as `np.float32`.

    ## Why is this bad?
    STRICT graphs output tensors, numbers, strings, `None`, dtypes and tuples/lists of them.
    MindSpore 2.10 stops with `RuntimeError: Illegal type in the graph:
    AbstractScalar(Type: External, Value: PythonObject(type: <class 'set'> ...` (and
    `AbstractClass(MsClassObject: ...)` for a jit_class instance). Under LAX, where JIT
    Fallback hands such objects back to Python, the same code compiles.

    ## Example
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.cfg = Config()

        @ms.jit(fullgraph=True)
        def construct(self, x):
            return x, self.cfg
    ```

    ## Use instead
    Return the values the caller needs (`return x, self.cfg.scale`), or keep the object out
    of the graph's outputs.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only): returning a numpy array or other third-party object;
      measured on MindSpore 2.10 with the written probes `lax` (`ret_*`, `so_*`): a set, a
      frozenset, plain / dataclass / jit_class instances, an enum member, a class, the `numpy`
      module and `np.float32` returned are rejected under STRICT and compile under LAX;
      numpy scalars (`np.float32(1.5)`), dtypes (`x.dtype`) and namedtuples are not refused
      this way.
    """

    nodes = (ast.Return,)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        items = strict_output_items(node, ctx)
        for item in items or ():
            what = _python_object(item, ctx, 0)
            if what is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT, a graph cannot return {what} `{ctx.segment(item)}` (MindSpore: Illegal type in the graph); return its values instead",
                )
                return


#: builtins whose result is a container type the graph does not have
_SET_BUILTINS = {"builtins.set": "a set", "builtins.frozenset": "a frozenset"}
#: numpy scalar types: named without a call they are classes (a call gives a number)
_NUMPY_TYPES = frozenset(
    {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool_", "ndarray", "dtype"}
)
#: bases whose subclasses' instances the graph converts (or that are not plain objects)
_CONVERTED_BASES = ("tuple", "list", "dict", "str", "int", "float", "NamedTuple", "Exception", "IntEnum")


def _python_object(e: ast.expr, ctx: Context, depth: int) -> str | None:
    """What `e` is when it is a Python object STRICT cannot output, else None."""
    if isinstance(e, (ast.Tuple, ast.List)) and depth < 2:
        for elt in e.elts:
            found = _python_object(elt, ctx, depth + 1)
            if found is not None:
                return found
        return None
    if isinstance(e, ast.Call):
        q = ctx.qualname(e.func) or ""
        if q in _SET_BUILTINS:
            return _SET_BUILTINS[q]
        return "an instance of the class" if _plain_class(q, ctx) else None
    if isinstance(e, ast.Name):
        func = ctx.function
        a = analyzer(ctx)
        if func is not None and (a.rebinds(e.id, func) or _is_parameter(e.id, func)):
            bound = a.single_assignment(e.id, func)
            return _python_object(bound, ctx, depth) if isinstance(bound, ast.Call) else None
        q = ctx.qualname(e) or ""
        if _plain_class(q, ctx) or _local_class(q, ctx):
            return "the class"
        if e.id in _imported_modules(ctx):
            return "the module"
        instance = ctx.scopes.info.instances.get(e.id)
        if instance is not None and _bound_once_at_module_level(e.id, ctx) and _plain_class(instance, ctx):
            return "an instance of the class"
        return None
    if isinstance(e, ast.Attribute):
        if isinstance(e.value, ast.Name) and e.value.id == "self":
            cls = analyzer(ctx).owner_class(ctx.function)
            if cls is None:
                return None
            owner = _class_qual(cls, ctx)
            held = ctx.scopes.attribute_class(owner, e.attr) if owner else None
            return "an instance of the class" if held and _plain_class(held, ctx) else None
        q = ctx.qualname(e) or ""
        if q.startswith("numpy.") and q[6:] in _NUMPY_TYPES:
            return "the numpy type"
        if isinstance(e.value, ast.Name) and _enum_class(ctx.qualname(e.value) or "", ctx):
            return "the enum member"
    return None


def _is_parameter(name: str, func: ast.AST) -> bool:
    args = getattr(func, "args", None)
    if args is None:
        return False
    every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
    return any(a is not None and a.arg == name for a in every)


def _class_info(q: str, ctx: Context) -> object | None:
    if not q:
        return None
    found = ctx.scopes.class_info(q)
    return found[1] if found is not None else None


def _local_class(q: str, ctx: Context) -> bool:
    return _class_info(q, ctx) is not None


def _plain_class(q: str, ctx: Context) -> bool:
    """A class of the project that is not a Cell and whose instances the graph does not
    convert (no tuple/dict/... base, not a NamedTuple, not an exception or int enum)."""
    info = _class_info(q, ctx)
    if info is None or ctx.scopes.is_cell_class(q):
        return False
    bases: list[str] = getattr(info, "bases", [])
    if any(b.rsplit(".", 1)[-1] in _CONVERTED_BASES for b in bases):
        return False
    if any(b.startswith("enum.") for b in bases):
        return False  # the class is returned only through its members (`_enum_class`)
    # an unresolved base (a third-party class) may be anything: stay silent
    return all(b in ("builtins.object", "object") or _plain_class(b, ctx) for b in bases)


def _enum_class(q: str, ctx: Context) -> bool:
    info = _class_info(q, ctx)
    return info is not None and any(b in ("enum.Enum", "enum.Flag") for b in getattr(info, "bases", []))


def _class_qual(cls: ast.ClassDef, ctx: Context) -> str | None:
    return f"{ctx.scopes.info.module}.{cls.name}" if cls.name in ctx.scopes.info.classes else None


def _imported_modules(ctx: Context) -> frozenset[str]:
    """Names bound by `import x` / `import x as y` at module level (modules, not members)."""
    key = "ms174-modules"
    hit: frozenset[str] | None = ctx.cache.get(key)
    if hit is None:
        names: set[str] = set()
        for st in getattr(ctx.tree, "body", []):
            if isinstance(st, ast.Import):
                names.update((a.asname or a.name.split(".")[0]) for a in st.names)
        hit = ctx.cache[key] = frozenset(names)
    return hit


def _bound_once_at_module_level(name: str, ctx: Context) -> bool:
    count = 0
    for st in getattr(ctx.tree, "body", []):
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            count += sum(1 for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and n.id == name)
    return count == 1
