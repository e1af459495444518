"""MS163: a zero-argument `super()` that compiled code resolves from the instance's class."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule


@rule(code="MS163", name="super-from-instance-class", severity="error", family="graphmode")
class SuperFromInstanceClass(Rule):
    """## What it does
    Flags a zero-argument `super().<method>(...)` call inside `<method>` of a Cell class
    when the file builds a Cell of a subclass whose compiled code reaches it: MindSpore's
    graph compiler resolves a bare `super()` from the class of the instance being compiled,
    not from the class the method is written in. For an instance of `Leaf(Mid)`, `super()`
    in `Mid.construct` means `super(Leaf, self)`, which is `Mid.construct` again.

    ## Why is this bad?
    The call reaches the method it is written in, and the compiler expands it until
    MindSpore 2.10 stops with `RuntimeError: Exceed function call depth limit 1000`, at every
    syntax level (called by class name, `Mid.construct(self, x)`, it fails instead with
    `AttributeError: 'super' object has no attribute '__module__'`). The same code runs in
    PyNative, where Python resolves `super()` from the defining class. Two-level hierarchies (a subclass calling its direct base) are not
    affected; a middle class of three is.

    ## Example
    ```python
    class Encoder(nn.Cell):
        def construct(self, x):
            return self.fc(x)

    class NormedEncoder(Encoder):
        def construct(self, x):
            return self.norm(super().construct(x))

    class ProjectedEncoder(NormedEncoder):
        def construct(self, x):
            return self.proj(super().construct(x))

    ProjectedEncoder()(x)
    ```

    ## Use instead
    Name the class in the middle of the hierarchy (`super(NormedEncoder, self).construct(x)`),
    or call the base class directly (`Encoder.construct(self, x)`).

    ## Fix safety
    No automatic fix.

    ## References
    - MindSpore 2.10, measured: for an instance of the third class, a middle class's
      `super().construct(x)` is rejected whether the leaf overrides `construct` (with bare or
      explicit `super`) or not, and so is a helper method chained the same way; an instance of
      the middle class itself, a two-level hierarchy, and a middle class naming itself in
      `super(Mid, self)` compile. A diamond `D(B, C)` over bare `super()` calls, and the leaf
      built as a sub-cell of another cell, are rejected too.
    - RULES.md has no row for it (found by the independently written set `zoo`).
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        lines = _bare_super_lines(ctx.text)
        if not lines:
            return  # no `super().<method>(` other than `__init__` in the file: nothing to do
        classes = {c.name: c for c in node.body if isinstance(c, ast.ClassDef)}
        calls = {name: list(_bare_super_calls(c, lines)) for name, c in classes.items()}
        if not any(calls.values()):
            return
        built = _instantiated(node, classes)
        seen: set[int] = set()
        for name in sorted(built):
            if not ctx.scopes.is_cell_class(f"{ctx.scopes.info.module}.{name}"):
                continue
            mro = _mro(name, classes)
            construct = next((f for c in mro for f in classes[c].body if isinstance(f, ast.FunctionDef) and f.name == "construct"), None)
            if construct is None or ctx.scopes.scope_for(construct) is None:
                continue  # the instance runs eagerly (PyNative): Python resolves super()
            reached = _reached(mro, classes)
            for owner in mro[1:]:
                for method, call in calls.get(owner, ()):
                    # the instance's super(): the first class after the instance's own that
                    # defines the method; recursion when that is this very method
                    target = next((c for c in mro[1:] if _defines(classes[c], method.name)), None)
                    if target != owner or id(call) in seen or (owner, method.name) not in reached:
                        continue
                    seen.add(id(call))
                    yield ctx.diagnostic(
                        self,
                        call,
                        f"in compiled code a bare `super()` resolves from the instance's class `{name}`, "
                        f"so `super().{method.name}` calls `{owner}.{method.name}` itself and recurses; "
                        f"write `super({owner}, self).{method.name}(...)`",
                    )


def _bare_super_lines(text: str) -> set[int]:
    """Lines with `super().<name>` for a name other than `__init__`: the text test before any
    tree walk (`str.find`, so files with only `super().__init__` cost next to nothing)."""
    out: set[int] = set()
    i = text.find("super().")
    while i >= 0:
        if not text.startswith("__init__", i + 8):
            out.add(text.count("\n", 0, i) + 1)
        i = text.find("super().", i + 8)
    return out


def _bare_super_calls(cls: ast.ClassDef, lines: set[int]) -> Iterator[tuple[ast.FunctionDef, ast.Call]]:
    """(method, call) for each `super().<same method>(...)` with no arguments to `super`, in
    the methods spanning one of `lines` (where the text has such a call)."""
    for item in cls.body:
        if not isinstance(item, ast.FunctionDef) or item.name == "__init__":
            continue
        end = item.end_lineno or item.lineno
        if not any(item.lineno <= n <= end for n in lines):
            continue
        for sub in ast.walk(item):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr == item.name
                and isinstance(sub.func.value, ast.Call)
                and isinstance(sub.func.value.func, ast.Name)
                and sub.func.value.func.id == "super"
                and not sub.func.value.args
            ):
                yield item, sub


def _reached(mro: list[str], classes: dict[str, ast.ClassDef]) -> set[tuple[str, str]]:
    """(class, method) pairs compiled for an instance whose class has this MRO: its
    `construct`, then what compiled methods call through `self.<name>(...)` (looked up from
    the instance's class), a bare `super().<name>(...)` (from the class after it, as the graph
    resolves it), `super(K, self).<name>(...)` (from the class after K) and `K.<name>(self)`."""

    def lookup(name: str, start: int) -> tuple[str, str] | None:
        owner = next((c for c in mro[start:] if _defines(classes[c], name)), None)
        return None if owner is None else (owner, name)

    first = lookup("construct", 0)
    reached: set[tuple[str, str]] = {first} if first else set()
    todo = list(reached)
    while todo:
        owner, name = todo.pop()
        fn = next(f for f in classes[owner].body if isinstance(f, ast.FunctionDef) and f.name == name)
        for sub in ast.walk(fn):
            if not (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)):
                continue
            recv, attr = sub.func.value, sub.func.attr
            hit: tuple[str, str] | None = None
            if isinstance(recv, ast.Name) and recv.id == "self":
                hit = lookup(attr, 0)
            elif isinstance(recv, ast.Name) and recv.id in classes and recv.id in mro:
                hit = lookup(attr, mro.index(recv.id))
            elif isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super":
                named = recv.args[0] if recv.args else None
                if named is None:
                    hit = lookup(attr, 1)
                elif isinstance(named, ast.Name) and named.id in mro:
                    hit = lookup(attr, mro.index(named.id) + 1)
            if hit is not None and hit not in reached:
                reached.add(hit)
                todo.append(hit)
    return reached


def _instantiated(tree: ast.Module, classes: dict[str, ast.ClassDef]) -> set[str]:
    return {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in classes
    }


def _defines(cls: ast.ClassDef, method: str) -> bool:
    return any(isinstance(i, (ast.FunctionDef, ast.AsyncFunctionDef)) and i.name == method for i in cls.body)


def _mro(name: str, classes: dict[str, ast.ClassDef], depth: int = 0) -> list[str]:
    """C3 linearisation over the classes of this file (other bases end the chain)."""
    bases = [b.id for b in classes[name].bases if isinstance(b, ast.Name) and b.id in classes and b.id != name]
    if depth > 50:
        return [name]
    seqs = [_mro(b, classes, depth + 1) for b in bases] + [bases]
    out = [name]
    seqs = [list(s) for s in seqs if s]
    while seqs:
        head = next((s[0] for s in seqs if not any(s[0] in t[1:] for t in seqs)), None)
        if head is None:
            return out  # inconsistent hierarchy: Python refuses it anyway
        out.append(head)
        seqs = [[c for c in s if c != head] for s in seqs]
        seqs = [s for s in seqs if s]
    return out
