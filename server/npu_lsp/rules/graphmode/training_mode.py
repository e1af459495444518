"""`self.training` while compiling: the mode `set_train()` left the instance in.

A Cell starts with `training = False` (`Cell.__init__`); `cell.set_train(mode=True)` sets
it on the cell and on every sub-cell it holds (`add_flags_recursive`). MindSpore reads the
flag while compiling, so `if self.training:` folds to one branch, the one of the mode the
network is in when it is called (measured, written/heldout34c probes `fix35c_tr_*`).

The checker answers only when the file shows every instance that can run the method being
built at module level (`net = Net()`, or held by a class of this file built so), and every
`set_train` that reaches it is a module-level statement on that instance or on a wrapper
known not to change the mode itself (`nn.WithLossCell`, `nn.TrainOneStepCell`, measured)
made before the first statement that can compile it. Anything else (a mode set in a
function, on a sub-cell, after a call, a `Model` or `nn.WithGradCell` wrapper, an instance
made in a function or a list, a store into `training`) answers UNKNOWN.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npu_lsp.rules.graphmode.values import Instances

#: wrappers that hold the cell given them as a sub-cell and leave its mode alone (measured,
#: written/heldout34c probes `fix35c_tr_withloss_*`, `fix35c_tr_trainstep_*`): a
#: `set_train` on them reaches the cell
_CELL_WRAPPERS = frozenset({"mindspore.nn.WithLossCell", "mindspore.nn.TrainOneStepCell"})
#: functions that wrap a cell or a function of it without setting a mode (probes
#: `fix35c_tr_valgrad_*`); what they return is called later
_FUNCTION_WRAPPERS = frozenset({"mindspore.value_and_grad", "mindspore.grad", "mindspore.jit", "mindspore.ops.value_and_grad", "mindspore.ops.grad"})
#: Cell methods that neither compile the cell nor change its mode
_QUIET_METHODS = frozenset({
    "set_grad", "trainable_params", "untrainable_params", "get_parameters", "parameters_and_names",
    "cells_and_names", "parameters_dict", "to_float", "cells", "name_cells",
})


class _Unknown(Exception):
    """The file does not show the mode exactly."""


class TrainingModes:
    """Per file: the value of `self.training` in the methods of each class (see module doc)."""

    def __init__(self, inst: Instances) -> None:
        self.inst = inst
        self.ctx = inst.ctx
        self._memo: dict[str, Any] = {}
        self._builds: dict[str, set[str]] | None = None

    def value(self, cls: ast.ClassDef) -> Any:
        """`self.training` in a method of `cls`: True / False, or UNKNOWN."""
        from npu_lsp.rules.graphmode.values import UNKNOWN

        if cls.name not in self._memo:
            try:
                self._memo[cls.name] = self._value(cls)
            except _Unknown:
                self._memo[cls.name] = UNKNOWN
        return self._memo[cls.name]

    def _value(self, cls: ast.ClassDef) -> bool:
        stores = self.inst.attr_stores("training")
        if stores is None or stores or "add_flags" in "\n".join(self.ctx.lines):
            raise _Unknown  # the flag is set some other way
        holders = self._holders(cls)
        roots = self._roots(holders)
        if not roots:
            raise _Unknown  # not built here: its mode is set elsewhere
        targets = {cls.name, *(c.name for c in self.inst.subclasses(cls))}
        single = sum(len(self.inst.instantiations(n)) for n in targets) == 1
        modes = {self._root_mode(name, at, holders, targets if single else set()) for name, at in roots}
        if len(modes) != 1:
            raise _Unknown
        return modes.pop()

    # ---------------------------------------------------------------- who holds the cell
    def _class_builds(self) -> dict[str, set[str]]:
        """class name -> the classes of this file its body calls by name (builds)."""
        if self._builds is None:
            classes = self.inst._classes
            self._builds = {
                name: {
                    n.func.id
                    for n in ast.walk(c)
                    if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id in classes
                }
                for name, c in classes.items()
            }
        return self._builds

    def _holders(self, cls: ast.ClassDef) -> set[str]:
        """`cls`, its subclasses, and the classes building any of them (with theirs), to a
        fixed point: every class of this file whose instance may hold a `cls`."""
        out = {cls.name}
        builds = self._class_builds()
        changed = True
        while changed:
            changed = False
            for name, c in self.inst._classes.items():
                if name in out:
                    continue
                if builds[name] & out or any(type(b) is ast.Name and b.id in out for b in c.bases):
                    out.add(name)
                    changed = True
        return out

    def _roots(self, holders: set[str]) -> list[tuple[str, int]]:
        """(name, statement index) of each module-level `name = Holder(...)`; raises when a
        holder class is named anywhere else than in such a statement, a holder's own body or
        a class's bases (a factory, a list, a registry: instances the file does not show)."""
        body = self.ctx.tree.body
        roots: list[tuple[str, int]] = []
        allowed: set[int] = set()
        for i, st in enumerate(body):
            if type(st) is ast.ClassDef:
                if st.name in holders:
                    allowed.update(id(n) for n in ast.walk(st) if type(n) is ast.Name)
                allowed.update(id(b) for b in st.bases)
                continue
            if (
                type(st) is ast.Assign
                and len(st.targets) == 1
                and type(target := st.targets[0]) is ast.Name
                and type(st.value) is ast.Call
                and type(f := st.value.func) is ast.Name
                and f.id in holders
            ):
                allowed.add(id(f))
                roots.append((target.id, i))
        for n in ast.walk(self.ctx.tree):
            if type(n) is ast.Name and n.id in holders and id(n) not in allowed:
                raise _Unknown
        return roots

    # ---------------------------------------------------------------- one instance's mode
    def _root_mode(self, root: str, at: int, holders: set[str], only: set[str]) -> bool:
        """The mode of the instance bound to `root` by statement `at` in every graph the
        module's statements compile. A cell keeps the graph it compiled per phase, and
        `set_train(True)` / `set_train(False)` set the phase to "train" / "predict", a new
        Cell's phase being "train" (`Cell.__init__`): calling the cell itself again in a
        phase it already compiled reuses that graph, whatever the mode (measured, probes
        `fix35c_tr_set_after_call`: `net(x)`, `net.set_train()`, `net(x)` compiles only
        the eval branch; `fix35c_tr_evalmark_false_after_call`: `net.set_train()`, `net(x)`,
        `net.set_train(False)`, `net(x)` compiles the eval branch too). Any other name
        (a wrapper, a function calling the cell) is taken to compile at every call.
        `root.sub.set_train(m)` on a sub-cell no holder of the class is leaves it alone; on
        the one instance of the class in the file (`only`, the class and its subclasses
        when built once) it sets that instance's mode, not the phase (probe
        `fix35c_tr_parent_true_sub_false`: `net.set_train()`, `net.block.set_train(False)`
        compiles the block's eval branch)."""
        if len(self.ctx.module_bindings().get(root, ())) != 1:
            raise _Unknown
        reach, cells = self._reach(root)
        body = self.ctx.tree.body
        mode, phase = False, True  # Cell.__init__: training False, phase "train"
        compiled: dict[tuple[str, bool], bool] = {}  # (cell called, phase) -> mode
        modes: set[bool] = set()
        for st in body[at + 1 :]:
            if type(st) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                continue
            event = _set_train(st)
            if event is not None and type(event.func.value) is ast.Name and event.func.value.id in cells:  # type: ignore[attr-defined]
                mode = self._mode(event)
                if event.func.value.id == root:  # type: ignore[attr-defined]
                    phase = mode
                continue
            if event is not None and _chain_base(event.func.value) == root:  # type: ignore[attr-defined]
                held = self._held_class(body[at], event.func.value)  # type: ignore[attr-defined]
                if held in only:
                    mode = self._mode(event)
                elif held is None or held in holders:
                    raise _Unknown
                continue
            for name in self._compiles(st, reach) or ():
                if name == root:
                    modes.add(compiled.setdefault((name, phase), mode))
                else:
                    modes.add(mode)
        if len(modes) > 1:
            raise _Unknown  # graphs compiled in both modes: both branches are compiled
        return modes.pop() if modes else mode

    def _reach(self, root: str) -> tuple[set[str], set[str]]:
        """(names of the module through which `root`'s instance can be called: itself, the
        wrappers and functions holding it, to a fixed point; the cells among them, on which
        a `set_train` reaches it). Raises on a use it cannot follow."""
        reach, cells = {root}, {root}
        body = self.ctx.tree.body
        bindings = self.ctx.module_bindings()
        changed = True
        while changed:
            changed = False
            for st in body:
                name, value = _bound(st)
                if name is None or name in reach or not _loads(st, reach):
                    continue
                reach.add(name)
                changed = True
                wraps = value is not None and self._wraps_cell(value, cells)
                if (wraps or value is None) and len(bindings.get(name, ())) != 1:
                    raise _Unknown  # a wrapper or function rebound: which one is called
                if wraps:
                    cells.add(name)
        for n in ast.walk(self.ctx.tree):
            if type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr == "set_train":
                holder = self._module_statement(n)
                recv = n.func.value
                if holder is None or _set_train(holder) is not n:
                    raise _Unknown  # a mode set in a function, chained
                base = _chain_base(recv)
                if base is None or base in reach and base not in cells or type(recv) is not ast.Name and base != root:
                    raise _Unknown  # on what a name not a cell holds, on a wrapper's sub-cell
        return reach, cells

    def _held_class(self, built: ast.stmt, chain: ast.expr) -> str | None:
        """The class of this file `root.a.b` holds, `root` built by `built` (`root =
        Net()`), following `self.a = A(...)` in each class's `__init__`; None when unknown."""
        attrs: list[str] = []
        while type(chain) is ast.Attribute:
            attrs.append(chain.attr)
            chain = chain.value
        cls: str = built.value.func.id  # type: ignore[attr-defined]
        scopes = self.ctx.scopes
        module = scopes.info.module
        for attr in reversed(attrs):
            held = scopes.attribute_class(f"{module}.{cls}", attr)
            if held is None or held.rpartition(".")[0] != module:
                return None
            cls = held.rpartition(".")[2]
        return cls

    def _wraps_cell(self, value: ast.expr, cells: set[str]) -> bool:
        """Is `value` (a module-level binding that reads a name of `cells`) a cell holding
        one of them? Raises when it passes one whole to a call that may set its mode."""
        if type(value) is not ast.Call:
            return False
        passed = [a for a in (*value.args, *(k.value for k in value.keywords)) if type(a) is ast.Name and a.id in cells]
        if not passed:
            return False
        f = value.func
        if type(f) is ast.Name and f.id in self.inst._classes:
            return True
        q = self.ctx.qualname(f) or ""
        if q in _CELL_WRAPPERS:
            return True
        if q in _FUNCTION_WRAPPERS:
            return False
        raise _Unknown  # `Model(net, ...)`, `nn.WithGradCell(net)`: may set the mode

    def _module_statement(self, node: ast.AST) -> ast.stmt | None:
        """The module-level statement holding `node`, None inside a function or class."""
        cur: ast.AST | None = node
        while cur is not None:
            parent = self.ctx.parent(cur)
            if type(parent) is ast.Module:
                return cur  # type: ignore[return-value]
            if type(parent) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
                return None
            cur = parent
        return None

    def _compiles(self, st: ast.stmt, reach: set[str]) -> set[str] | None:
        """The names of `reach` module statement `st` calls or calls a method of that is not
        a quiet Cell method (what can compile the instance); None when it calls none."""
        out: set[str] = set()
        for n in ast.walk(st):
            if type(n) is not ast.Call:
                continue
            f = n.func
            if type(f) is ast.Name and f.id in reach:
                out.add(f.id)
            elif type(f) is ast.Attribute and f.attr not in _QUIET_METHODS:
                out.update(m.id for m in ast.walk(f.value) if type(m) is ast.Name and m.id in reach)
        return out or None

    def _mode(self, call: ast.Call) -> bool:
        """The mode `x.set_train(...)` sets (True without an argument)."""
        from npu_lsp.rules.graphmode.values import UNKNOWN

        given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)
        if given is None:
            if call.keywords:
                raise _Unknown
            return True
        v = self.inst.evaluate(given, None)
        if v is UNKNOWN:
            raise _Unknown
        return bool(v)


def _set_train(st: ast.stmt) -> ast.Call | None:
    """The call of a statement `x.set_train(...)`."""
    if type(st) is ast.Expr and type(c := st.value) is ast.Call and type(c.func) is ast.Attribute and c.func.attr == "set_train":
        return c
    return None


def _chain_base(e: ast.expr) -> str | None:
    """`net` of `net` / `net.block.fc`; None for anything else."""
    while type(e) is ast.Attribute:
        e = e.value
    return e.id if type(e) is ast.Name else None


def _bound(st: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """(name, value) of a module statement `name = value` / `def name`; (None, None) else."""
    if type(st) is ast.Assign and len(st.targets) == 1 and type(t := st.targets[0]) is ast.Name:
        return t.id, st.value
    if type(st) in (ast.FunctionDef, ast.AsyncFunctionDef):
        return st.name, None  # type: ignore[attr-defined]
    if type(st) is ast.ClassDef:
        return st.name, None
    return None, None


def _loads(node: ast.AST, names: set[str]) -> bool:
    return any(type(n) is ast.Name and n.id in names for n in ast.walk(node))
