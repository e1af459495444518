"""Device and backend values across the modules of a project, for the migration rules.

A device value often crosses a module boundary: nanoGPT's `train.py` computes
`device_type = "cuda" if "cuda" in device else "cpu"` and passes it to
`model.configure_optimizers(..., device_type)`, whose body in `model.py` tests
`device_type == "cuda"`. Read one file at a time, `train.py` sees its value escape into a
call it cannot see into (so its fix is unsafe) and `model.py` sees a parameter compared
with a string (so it reports nothing): a fix-all would move one file and not the other.

Each module's summary (`ModuleInfo.migration`, made with the project index, see
`scope.summarize`) records two facts from the module's own value following (`values.Flow`):

- `params`: parameters of its functions and methods that hold a device or backend value
  there (they reach a device position, or are compared with a device or backend name);
- `passes`: calls it makes that pass a device or backend value, by callee (the resolved
  dotted name, or `*.<method>` for a method of an object whose class is not known) and
  argument position or keyword.

While checking a module, `Links` joins the facts of every module of the index: a
parameter another module passes a device to is a device here (its comparisons and
defaults move with it), and a value passed to a parameter that is a device in its own
module is a device use there, not an escape. One step across modules, no further: the
facts are what each module knows alone.
"""

from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from npu_lsp.engine import Context, WorkspaceIndex
    from npu_lsp.rules.migration.values import Flow
    from npu_lsp.scope import ModuleInfo

#: Text a module must hold for its facts to be worth computing: `"cuda"` or `"nccl"`
#: literals are what moves, and a module without them still reads values other modules
#: set (`model.to(cfg.MODEL.DEVICE)`, `def train(model, device)`, `backend=cfg.BACKEND`),
#: which its facts tell them; a module naming neither has nothing another could join.
_WORDS = re.compile(r"cuda|nccl|device|backend", re.IGNORECASE)
_WORD_LIST = ("cuda", "nccl", "device", "backend")
_SKIP_CALLEES = ("torch.", "builtins.", "os.", "logging.", "argparse.", "numpy.")


@dataclass(frozen=True)
class Facts:
    #: (function qualname, parameter, position in the def, kind, is a method); kind is
    #: "device"/"backend", or for the other parameters "inert" (every read harmless: a
    #: message, a comparison) or "escape"
    params: tuple[tuple[str, str, int, str, bool], ...] = ()
    #: (callee key, argument position or -1, keyword or "", kind)
    passes: tuple[tuple[str, int, str, str], ...] = ()
    #: (attribute name, kind): attributes read as a device or backend here (`args.device`
    #: reaching `torch.device(...)`, `getattr(args, "device", ...)`); a module setting an
    #: attribute of that name (`--device`'s default) sets a device
    attrs: tuple[tuple[str, str], ...] = ()


class _LocalScopes:
    """What `Context.qualname` reads of a resolver: the module's own summary."""

    def __init__(self, info: ModuleInfo) -> None:
        self.info = info
        self.workspace = None


def _names_words(text: str) -> bool:
    """Does `text` hold one of `_WORDS`? For ASCII text, a search of its lower case (the
    regular expression, case-insensitive, costs about ten times as much)."""
    if text.isascii():
        lower = text.lower()
        return any(w in lower for w in _WORD_LIST)
    return _WORDS.search(text) is not None


def module_facts(tree: ast.Module, info: ModuleInfo, text: str) -> Facts | None:
    """The facts of one module (None when it holds no CUDA device or NCCL name)."""
    if not _names_words(text):
        return None
    from npu_lsp.config import Config
    from npu_lsp.engine import Context
    from npu_lsp.rules.migration.values import Flow
    from npu_lsp.scope import ScopeResolver

    ctx = Context(info.path, text, tree, Config(), cast(ScopeResolver, _LocalScopes(info)))
    try:
        flow = Flow.of(ctx)
        return _facts(flow, info.module)
    except Exception:  # the project index must never fail on one module's facts
        return None
    finally:
        ctx.cache.clear()


class PendingFacts:
    """`module_facts` made when first read. The language server summarises the open file
    again at every edit, and no module reads the facts of a file that none imports; made
    from the summary's own tree, which the document renumbers when a later edit moves its
    lines, so the document `detach`es it first and the facts are then made from a parse of
    the summary's text."""

    __slots__ = ("_tree", "_info", "_text", "_facts", "_done")

    def __init__(self, tree: ast.Module, info: ModuleInfo, text: str) -> None:
        self._tree: ast.Module | None = tree
        self._info: ModuleInfo | None = info
        self._text = text
        self._facts: Facts | None = None
        self._done = False

    def get(self) -> Facts | None:
        if not self._done:
            assert self._info is not None
            tree = self._tree
            if tree is None:
                try:
                    tree = ast.parse(self._text)
                except (SyntaxError, ValueError, RecursionError):
                    tree = None
            self._facts = module_facts(tree, self._info, self._text) if tree else None
            self._done, self._tree, self._info, self._text = True, None, None, ""
        return self._facts

    def detach(self) -> None:
        """Stop using the tree (about to be renumbered); `get` parses the text instead."""
        self._tree = None

    def __reduce__(self) -> tuple[Any, tuple[Facts | None]]:
        return _same, (self.get(),)  # a pickled summary holds the facts themselves


def _same(facts: Facts | None) -> Facts | None:
    return facts


def pending_facts(tree: ast.Module, info: ModuleInfo, text: str) -> PendingFacts | None:
    """`module_facts`, made when first read (None when there can be none)."""
    if not _names_words(text):
        return None
    return PendingFacts(tree, info, text)


def facts_of(info: ModuleInfo) -> Facts | None:
    """The migration facts of a summary (made now if they were left pending)."""
    facts = getattr(info, "migration", None)
    return facts.get() if isinstance(facts, PendingFacts) else facts


def functions_of(tree: ast.Module, module: str) -> dict[int, tuple[str, bool]]:
    """id of each top-level function and method -> (qualname, is a method taking `self`)."""
    out: dict[int, tuple[str, bool]] = {}
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[id(st)] = (f"{module}.{st.name}", False)
        elif isinstance(st, ast.ClassDef):
            for m in st.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    static = any(
                        isinstance(d, ast.Name) and d.id == "staticmethod" for d in m.decorator_list
                    )
                    out[id(m)] = (f"{module}.{st.name}.{m.name}", not static)
    return out


def _facts(flow: Flow, module: str) -> Facts:
    ctx = flow.ctx
    fns = functions_of(ctx.tree, module)
    params: set[tuple[str, str, int, str, bool]] = set()
    for kind, carriers in flow.carriers.items():
        for carrier in carriers:
            if carrier[0] != "name":
                continue
            where = flow.b.params.get(int(carrier[1]), {}).get(carrier[2])
            if where is not None and id(where[0]) in fns:
                qual, method = fns[id(where[0])]
                params.add((qual, carrier[2], where[1], kind, method))
    for (fn_id, name), kind in flow.param_compares.items():
        where = flow.b.params.get(fn_id, {}).get(name)
        if where is not None and id(where[0]) in fns:
            qual, method = fns[id(where[0])]
            params.add((qual, name, where[1], kind, method))
    known = {(q, n) for q, n, *_ in params}
    for (fn_id, name), inert in _inert_params(flow, fns).items():
        qual, method = fns[fn_id]
        if (qual, name) not in known:
            position = flow.b.params[fn_id][name][1]
            params.add((qual, name, position, "inert" if inert else "escape", method))
    passes: set[tuple[str, int, str, str]] = set()
    for call in flow.b.nodes.get(ast.Call, []):
        assert isinstance(call, ast.Call)
        key = callee_key(ctx, call)
        if key is None:
            continue
        args: list[tuple[int, str, ast.expr]] = [(i, "", a) for i, a in enumerate(call.args)]
        args += [(-1, k.arg, k.value) for k in call.keywords if k.arg]
        for position, keyword, arg in args:
            if isinstance(arg, ast.Starred):
                break
            passed = flow.kind_of_value(arg)
            if passed is not None:
                passes.add((key, position, keyword, passed))
    attrs = {
        (carrier[1], kind)
        for kind, carriers in flow.carriers.items()
        for carrier in carriers
        if carrier[0] == "attr"
    }
    return Facts(tuple(sorted(params)), tuple(sorted(passes)), tuple(sorted(attrs)))


def _inert_params(flow: Flow, fns: dict[int, tuple[str, bool]]) -> dict[tuple[int, str], bool]:
    """For each parameter of the module's functions: is every read of it harmless (shown
    in a message, compared, never read)? A device passed to such a parameter changes
    nothing but text when it moves."""
    out: dict[tuple[int, str], bool] = {}
    names: set[str] = set()
    for fn_id in fns:
        for name, (_fn, position) in flow.b.params.get(fn_id, {}).items():
            if position >= 0 or name:
                out[(fn_id, name)] = True
                names.add(name)
    for node in flow.b.nodes.get(ast.Name, []):
        assert isinstance(node, ast.Name)
        if node.id not in names or not isinstance(node.ctx, ast.Load):
            continue
        scope, _ = flow._lookup(node)
        key = (id(scope), node.id)
        if out.get(key):
            parent = flow.b.parents.get(id(node))
            # a copy into another name is harmless for the escapes only because that
            # name's reads are checked there; here nothing checks them
            out[key] = not isinstance(parent, ast.Assign) and flow._harmless(node)
    return out


def callee_key(ctx: Context, call: ast.Call) -> str | None:
    """How the facts name the callee of `call`: its dotted name within the project, or
    `*.<method>` for a method of an object of unknown class; None for library calls."""
    from npu_lsp.rules.migration.values import resolve

    qual = resolve(ctx, call.func)
    if qual is not None:
        return None if qual.startswith(_SKIP_CALLEES) else qual
    if isinstance(call.func, ast.Attribute):
        return f"*.{call.func.attr}"
    return None


# ------------------------------------------------------------------ joined over the index
@dataclass
class Links:
    """The facts of every module of an index, joined."""

    #: callee key -> [(position, keyword, kind, module passing it)] of the device values
    #: passed to it
    incoming: dict[str, list[tuple[int, str, str, str]]] = field(default_factory=dict)
    #: attribute name -> [(kind, a module reading it as one)]
    attrs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: callee key -> {(position, keyword) -> kind} of its parameters that are devices;
    #: functions by qualname, methods also by `*.<name>` (positions without `self`)
    params: dict[str, dict[tuple[int, str], str]] = field(default_factory=dict)

    def device_parameter(self, key: str, position: int, keyword: str) -> str | None:
        """What the parameter a call to `key` passes this argument to does with it there:
        "device"/"backend" (uses it as one), "inert" (only shows or compares it), None
        (unknown, or something else: an escape)."""
        table = self.params.get(key)
        if not table:
            return None
        kind = table.get((position, "")) if position >= 0 else table.get((-1, keyword))
        return None if kind == "escape" else kind


_LINKS: weakref.WeakKeyDictionary[Any, tuple[int, Links | None]] = weakref.WeakKeyDictionary()


def links(index: WorkspaceIndex | None) -> Links | None:
    """The joined facts of `index` (None without facts), cached until it changes."""
    if index is None or len(index) < 2:
        return None
    hit = _LINKS.get(index)
    if hit is not None and hit[0] == index.version:
        return hit[1]
    out = Links()
    found = False
    for info in index.modules():
        facts = facts_of(info)
        if facts is None:
            continue
        found = True
        for key, position, keyword, kind in facts.passes:
            out.incoming.setdefault(key, []).append((position, keyword, kind, info.module))
        for name, kind in getattr(facts, "attrs", ()):
            out.attrs.setdefault(name, []).append((kind, info.module))
        for qual, name, index_in_def, kind, method in facts.params:
            shift = 1 if method else 0
            for key in (qual, f"*.{qual.rsplit('.', 1)[-1]}") if method else (qual,):
                table = out.params.setdefault(key, {})
                slots = [(-1, name)]
                if index_in_def - shift >= 0:
                    slots.append((index_in_def - shift, ""))
                for slot in slots:  # several definitions (`*.<method>`): an escape wins
                    old = table.get(slot)
                    if old is None or kind == "escape" or (old == "inert" and kind != "inert"):
                        table[slot] = kind
    result = out if found else None
    _LINKS[index] = (index.version, result)
    return result


def digest_for(index: WorkspaceIndex, info: ModuleInfo) -> str:
    """What the joined facts say about `info`'s module (for the result cache's seeds): the
    values passed into its functions and the parameters of what it calls."""
    joined = links(index)
    facts = facts_of(info)
    if joined is None or facts is None:
        return ""
    parts: list[str] = []
    for qual, _name, _i, _kind, method in facts.params:
        keys = (qual, f"*.{qual.rsplit('.', 1)[-1]}") if method else (qual,)
        for key in keys:
            parts.append(f"{key}<-{sorted(joined.incoming.get(key, []))}")
    for key, _p, _k, _kind in facts.passes:
        parts.append(f"{key}->{sorted(joined.params.get(key, {}).items())}")
    parts.append(f"attrs {sorted(joined.attrs.items())}")
    return "\n".join(sorted(set(parts)))


def incoming_for(joined: Links, qual: str, method: bool) -> list[tuple[int, str, str, str]]:
    """The device values modules of the project pass to the function `qual`:
    (position in the def or -1, keyword or "", kind, the module passing it)."""
    shift = 1 if method else 0
    out = []
    keys = (qual, f"*.{qual.rsplit('.', 1)[-1]}") if method else (qual,)
    for key in keys:
        for position, keyword, kind, module in joined.incoming.get(key, []):
            out.append((position + shift if position >= 0 else -1, keyword, kind, module))
    return out


def outgoing_kind(joined: Links, ctx: Context, call: ast.Call, arg: ast.AST) -> str | None:
    """The kind of the parameter (in another module of the project) `arg` is passed to."""
    key = callee_key(ctx, call)
    if key is None:
        return None
    for i, a in enumerate(call.args):
        if a is arg:
            return joined.device_parameter(key, i, "")
        if isinstance(a, ast.Starred):
            return None
    for k in call.keywords:
        if k.value is arg and k.arg:
            return joined.device_parameter(key, -1, k.arg)
    return None
