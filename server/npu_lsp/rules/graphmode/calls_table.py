"""MindSpore 2.10's call tables for compiled code (`ms_calls.json`), as questions rules ask.

`ms_calls.json` is written by tests/npu_lsp/difftest/probe_calls.py from MindSpore itself:
its parser's resource tables (which builtins the graph compiler implements, which builtin
types it refuses to build) and one compiled probe per method of list, tuple, dict and str,
per operation on them and per keyword argument of the builtins it implements, at LAX and
STRICT. Nothing here is written by hand from cases.
"""

from __future__ import annotations

import ast
import builtins
import functools
import json
import os
import sys
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npu_lsp.engine import Context

CONTAINER_TYPES = ("list", "tuple", "dict", "str")


@dataclass(frozen=True)
class Verdict:
    """What MindSpore did with one call at one syntax level."""

    accepted: bool
    message: str


@functools.cache
def _data() -> Any:
    """The parsed table (plain JSON: nested dicts of str, lists and verdicts)."""
    text = resources.files(__package__).joinpath("ms_calls.json").read_text("utf-8")
    return json.loads(text)


def method(type_name: str, name: str, holds_tensors: bool, level: str) -> Verdict | None:
    """MindSpore's verdict on `<type_name>.<name>(...)` (or an operation such as "len()")
    at `level`, for a receiver holding tensors or only constants; None when not measured."""
    methods: dict[str, dict[str, dict[str, dict[str, Any]]]] = _data()["methods"]
    kinds = methods.get(type_name, {}).get(name)
    if not kinds:
        return None
    entry = kinds.get("tensor" if holds_tensors else "const")
    if entry is None:
        # STRICT refuses the attribute on the type itself, whatever the receiver holds
        const = kinds.get("const")
        msg = str((const or {}).get("message", {}).get("strict", ""))
        if level == "strict" and const and const["strict"] == "reject" and "cannot get attributes" in msg:
            entry = const
        else:
            return None
    said = entry.get("message", {})
    return Verdict(entry[level] == "accept", str(said.get(level, "")) if isinstance(said, dict) else "")


@functools.cache
def method_measured(name: str) -> bool:
    """Was `name` (a method, "method(kw)" or an operation) measured on any type?"""
    methods: dict[str, dict[str, object]] = _data()["methods"]
    return any(name in by_name for by_name in methods.values())


@functools.cache
def rejectable(name: str) -> bool:
    """Is there any type, receiver and level at which MindSpore refused `name` (a method,
    "method(kw)" or an operation)? Most calls in compiled code (tensor methods, sub-cells)
    are not, and need no type question at all."""
    return name in rejectable_names()


@functools.cache
def rejectable_names() -> frozenset[str]:
    """Every name `rejectable` says yes to (one set: it is asked for every method call)."""
    methods: dict[str, dict[str, dict[str, dict[str, object]]]] = _data()["methods"]
    return frozenset(
        name
        for by_name in methods.values()
        for name, by_receiver in by_name.items()
        if any(entry.get(level) == "reject" for entry in by_receiver.values() for level in ("lax", "strict"))
    )


#: Higher-order functions of the standard library (called with a function object).
HIGHER_ORDER = frozenset({"reduce", "accumulate", "starmap", "partial", "cmp_to_key"})
#: standard-library functions that take a `key=` function and that LAX runs as a Python
#: script from compiled code (JIT Fallback): a lambda given to them runs in the script's scope
KEYED_SCRIPTS = frozenset({"nlargest", "nsmallest", "merge", "groupby"})


@functools.cache
def trigger_names() -> frozenset[str]:
    """Every called name a rule driven by these tables can act on (the engine skips the
    rule for other calls): measured methods and operations, builtins with measured calls,
    higher-order stdlib functions, and "" (operators such as `d1 | d2`, computed callees)."""
    names: set[str] = {"", *HIGHER_ORDER, *KEYED_SCRIPTS}
    for by_name in _data()["methods"].values():
        for name in by_name:
            names.add(name.removesuffix("(kw)"))
    names.update(_data()["builtin_calls"])
    names.update(("len", "list", "tuple", "str", "bool", "round", "abs", "filter"))
    names.update(interpreted_builtins())
    return frozenset(names)


@functools.cache
def interpreted_builtins() -> frozenset[str]:
    """Builtin functions and types the graph does not implement (`all`, `any`, `sorted`,
    `reversed`, `dict`...): MindSpore interprets the whole call as a Python script."""
    graph = graph_builtins()
    return frozenset(n for n in dir(builtins) if not n.startswith("_") and n not in graph and callable(getattr(builtins, n)))


@functools.cache
def str_only_methods() -> frozenset[str]:
    """str methods that neither a MindSpore Tensor nor list, tuple or dict has
    (`ms_str_only_methods.json`): called in compiled code, the receiver is a str."""
    text = resources.files(__package__).joinpath("ms_str_only_methods.json").read_text("utf-8")
    return frozenset(json.loads(text)["methods"])


@functools.cache
def strict_methods(type_name: str) -> tuple[str, ...]:
    """The public methods of `type_name` STRICT graph code may call on constants."""
    methods: dict[str, dict[str, dict[str, dict[str, object]]]] = _data()["methods"]
    return tuple(
        sorted(
            name
            for name, kinds in methods.get(type_name, {}).items()
            if name.isidentifier() and not name.startswith("_") and kinds.get("const", {}).get("strict") == "accept"
        )
    )


@functools.cache
def rejected_keywords() -> dict[str, dict[str, str]]:
    """builtin -> {keyword argument MindSpore refuses at every level -> its message}."""
    calls: dict[str, dict[str, dict[str, object]]] = _data()["builtin_calls"]
    out: dict[str, dict[str, str]] = {}
    for fn, probes in calls.items():
        for src, verdict in probes.items():
            if verdict["lax"] != "reject" or verdict["strict"] != "reject":
                continue
            for node in ast.walk(ast.parse(src, mode="eval")):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == fn:
                    said = verdict.get("message", {})
                    for kw in node.keywords:
                        if kw.arg is not None:
                            out.setdefault(fn, {})[kw.arg] = str(said.get("lax", "")) if isinstance(said, dict) else ""
    return out


@functools.cache
def _rejected_positional() -> dict[tuple[str, tuple[bool, ...]], str]:
    """(builtin, which positional arguments are `None`) -> MindSpore's message, for probes
    without keyword arguments that failed at both levels with a `None` argument
    (`filter(None, seq)`: "The object is not callable")."""
    calls: dict[str, dict[str, dict[str, object]]] = _data()["builtin_calls"]
    out: dict[tuple[str, tuple[bool, ...]], str] = {}
    for fn, probes in calls.items():
        for src, verdict in probes.items():
            if verdict["lax"] != "reject" or verdict["strict"] != "reject":
                continue
            for node in ast.walk(ast.parse(src, mode="eval")):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == fn:
                    nones = tuple(isinstance(a, ast.Constant) and a.value is None for a in node.args)
                    if not node.keywords and any(nones):
                        said = verdict.get("message", {})
                        out[(fn, nones)] = str(said.get("lax", "")) if isinstance(said, dict) else ""
    return out


@functools.cache
def positional_names() -> frozenset[str]:
    """Builtins with a measured failing call shape (`filter`)."""
    return frozenset(fn for fn, _ in _rejected_positional())


def rejected_positional(fn: str, nones: tuple[bool, ...]) -> str | None:
    """MindSpore's message when `fn` called with `None` at these positions failed to compile."""
    return _rejected_positional().get((fn, nones))


def refused_attributes() -> dict[str, dict[str, str]]:
    """"cell_attributes" / "parameter_attributes": attribute -> MindSpore's message, for the
    attributes of Cell and Parameter that compiled code may not read."""
    out: dict[str, dict[str, str]] = _data()["refused_attributes"]
    return out


@functools.cache
def graph_functions() -> frozenset[str]:
    """Functions of the standard library the graph compiler converts to its own
    (`convert_object_map`: `functools.partial`, `operator.add`...): compiled with graph
    variables at every level, never interpreted."""
    return frozenset(_data()["graph_functions"])


@functools.cache
def graph_builtins() -> frozenset[str]:
    """Builtins the graph compiler implements itself (no JIT Fallback needed): its convert
    table, the classes it converts to functions, and builtin classes it builds or resolves
    (everything but the builtin types its parser refuses)."""
    d = _data()
    refused = set(d["unsupported_builtin_types"])
    classes = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type) and n not in refused}
    return frozenset({*d["graph_builtins"], *d["class_functions"], *classes})


@functools.cache
def refused_builtin_types() -> frozenset[str]:
    """Builtin types MindSpore's parser refuses to build in the graph (`set`, `dict`,
    `slice`, `complex`, `reversed`, `type`): it interprets the whole call instead, so under
    STRICT every graph variable the call mentions must be a constant."""
    return frozenset(_data()["unsupported_builtin_types"])


#: Installed packages model code commonly calls (MindSpore treats everything under
#: site-packages as third-party; these are the ones a linter can name without importing).
_THIRD_PARTY = frozenset(
    {"numpy", "scipy", "pandas", "cv2", "PIL", "sklearn", "skimage", "matplotlib", "torch",
     "tensorflow", "jax", "yaml", "tqdm", "einops", "timm", "transformers", "h5py", "numba"}
)


def outside_project(qualname: str, ctx: Context | None = None) -> bool:
    """Is `qualname` code MindSpore runs as a Python call rather than compiling: the standard
    library or an installed third-party package? Functions of the user's own project are
    compiled (MindSpore's ThirdPartyLibraryChecker, which looks at where the module's file
    is, not at its name), so they never count here: with `ctx`, a package of the project
    named like a standard module (`code/densenet.py`, `test/`, `types/`) is the project's."""
    top = qualname.split(".", 1)[0]
    if top not in sys.stdlib_module_names and top not in _THIRD_PARTY:
        return False
    return ctx is None or not _in_project(top, ctx)


def _in_project(top: str, ctx: Context) -> bool:
    """Is `top` the top package of the checked file's own module, a package or module of the
    workspace, or a folder or module beside the file or at the workspace root (where Python
    finds it first when the file is run or imported from there)?"""
    scopes = ctx.scopes
    if scopes.info.module.split(".", 1)[0] == top:
        return True
    workspace = scopes.workspace
    if workspace is not None and workspace.has_package(top):
        return True
    roots = {os.path.dirname(os.path.abspath(scopes.path))}
    if workspace is not None and workspace.root:
        roots.add(workspace.root)
    return any(_found_in(root, top) for root in roots)


@functools.lru_cache(maxsize=256)
def _found_in(root: str, top: str) -> bool:
    return os.path.isdir(os.path.join(root, top)) or os.path.isfile(os.path.join(root, f"{top}.py"))


@functools.cache
def side_effect_calls() -> dict[str, frozenset[str]]:
    """module -> attributes MindSpore's parser treats as side effects of a third-party module
    (`json.loads`, `os.listdir`, `np.load`, `pickle.dump`...): it never folds
    `module.attr(...)` at compile time, so STRICT refuses the call whatever its inputs and
    LAX runs it at run time."""
    table: dict[str, list[str]] = _data()["side_effect_calls"]
    return {module: frozenset(attrs) for module, attrs in table.items()}


def side_effect_call(func: ast.expr, imports: dict[str, str]) -> str | None:
    """`module.attr` when `func` is `<name>.<attr>` with `<name>` a module imported under that
    name (`import json as js`: `js.loads`) and the pair in `side_effect_calls()`; MindSpore
    matches the module's own name, and only a direct attribute of a module-level name."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    module = imports.get(func.value.id)
    if module is None or func.attr not in side_effect_calls().get(module, frozenset()):
        return None
    return f"{module}.{func.attr}"
