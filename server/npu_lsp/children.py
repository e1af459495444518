"""Per node type, a function that pushes the children the engine's walk visits.

The walk (`engine._Walker.walk`) used to read each child-holding field with
`getattr(node, name, None)` in a loop over the type's field names: about a third of its
opcodes, and `getattr` by a name held in a variable skips the interpreter's attribute caches.
Here the same loop is written out once per node type, as source text compiled on first use,
so a field is read as `node.func` (a cached attribute load) and a field that never holds a
node (an identifier, a string, a number, by the type's ASDL signature, e.g.
`FunctionDef(identifier name, arguments args, ...)`) is not read at all.

What a pusher does is exactly what the loop did: for each field of `astutil.fields(type)`,
last field first, each list field's items last first, push every child whose type is in
`walked`, or that is an `Attribute` whose value is not a `Name` (`a.b` is skipped only when
no rule asks for it), after recording the node as its parent. Whether a field holds a list
is read from the ASDL signature (`expr* args`); a type without a readable signature gets
the generic form (a list test per field, as before).

`scanner` is the same code in field order and without parents, for `astutil.find_branches`
and `astutil.branch_list`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

#: (node, push, parents, walked) -> None
Pusher = Callable[[Any, Callable[[Any], None], dict[int, Any], frozenset[type]], None]

#: ASDL field types that never hold an AST node
_SCALARS = frozenset({"identifier", "string", "constant", "int"})
_SIGNATURE = re.compile(r"^\w+\((.*)\)$")

class _Pushers(dict[type, Pusher]):
    """node type -> its pusher, compiled on first use (`PUSHERS[t]` in the walk: one
    subscript per node, no test for a missing one)."""

    def __missing__(self, node_type: type) -> Pusher:
        hit = self[node_type] = _compile(node_type)
        return hit


#: node type -> its pusher (read directly by the walk)
PUSHERS: dict[type, Pusher] = _Pushers()


def pusher(node_type: type) -> Pusher:
    """The pusher of `node_type` (compiled once per type)."""
    return PUSHERS[node_type]


def _shapes(node_type: type) -> dict[str, str] | None:
    """Field name -> "list", "one" or "scalar" from the type's ASDL signature, None when
    the signature cannot be read (then every field is tested at run time)."""
    doc = (node_type.__doc__ or "").strip().splitlines()
    m = _SIGNATURE.match(doc[0]) if doc else None
    if m is None:
        return None if getattr(node_type, "_fields", ()) else {}
    out: dict[str, str] = {}
    for part in m.group(1).split(","):
        words = part.split()
        if len(words) != 2:
            return None
        kind, name = words
        base = kind.rstrip("*?")
        out[name] = "scalar" if base in _SCALARS else "list" if kind.endswith("*") else "one"
    return out


def _arg_fields(node_type: type) -> frozenset[str]:
    """The fields of `node_type` whose ASDL type is `arg` (`arg* args`, `arg? vararg`)."""
    doc = (node_type.__doc__ or "").strip().splitlines()
    m = _SIGNATURE.match(doc[0]) if doc else None
    if m is None:
        return frozenset()
    words = [part.split() for part in m.group(1).split(",")]
    return frozenset(w[1] for w in words if len(w) == 2 and w[0].rstrip("*?") == "arg")


_PUSH_ONE = """\
    ct = type({v})
    if ct in walked or (ct is _Attribute and type({v}.value) is not _Name):
        parents[id({v})] = node
        push({v})"""


def scanner(node_type: type) -> Scanner:
    """The scanner of `node_type` (compiled once per type): `push(child)` for the children
    `astutil.find_branches` visits (type in `walked`, or an `Attribute` whose value is not
    a `Name`), in field order, no parents recorded."""
    hit = SCANNERS.get(node_type)
    if hit is None:
        hit = SCANNERS[node_type] = _compile(node_type, forward=True)
    return hit


#: (node, push, walked) -> None
Scanner = Callable[[Any, Callable[[Any], None], frozenset[type]], None]
#: node type -> its scanner (read directly by `astutil.find_branches`)
SCANNERS: dict[type, Scanner] = {}


def _ast_types() -> frozenset[type]:
    """Every node class of `ast` (what `type(node)` of a parsed node can be)."""
    found: set[type] = set()
    todo: list[type] = [ast.AST]
    while todo:
        t = todo.pop()
        found.add(t)
        todo.extend(t.__subclasses__())
    return frozenset(found)


#: every node class of `ast`
AST_TYPES: frozenset[type] = _ast_types()


#: the node types `find_branches` looks into: every node type but names, constants and
#: attributes (an attribute is looked into when its value is not a name)
SCANNED: frozenset[type] = AST_TYPES - {ast.Name, ast.Constant, ast.Attribute}


def _source(node_type: type, forward: bool = False) -> str:
    from npu_lsp.astutil import fields  # (astutil imports this module)

    shapes = _shapes(node_type)
    if forward:
        lines = ["def push_children(node, push, walked):"]
        names = fields(node_type)
        one = _SCAN_ONE
    else:
        lines = ["def push_children(node, push, parents, walked):"]
        names = tuple(reversed(fields(node_type)))
        one = _PUSH_ONE
    order = "" if forward else "reversed"
    params = _arg_fields(node_type)
    for name in names:
        shape = shapes.get(name) if shapes is not None else None
        if shapes is not None and shape is None:
            shape = "generic"  # a field the signature does not name: test at run time
        if shape == "scalar":
            continue
        field: list[str] = []
        field.append(f"    v = getattr(node, {name!r}, None)" if shape in (None, "generic") else f"    v = node.{name}")
        if shape == "list" and not forward:
            # most lists hold one node (`args`, `targets`, a block of one statement): read
            # it without a `reversed` iterator (an allocation per list)
            field += [
                "    if v:",
                "        if len(v) == 1:",
                "            c = v[0]",
                _indent(one.format(v="c"), 2),
                "        else:",
                "            for c in reversed(v):",
                _indent(one.format(v="c"), 3),
            ]
        elif shape == "list":
            field += ["    if v:", f"        for c in {order}(v):", _indent(one.format(v="c"), 2)]
        elif shape == "one":
            field.append(one.format(v="v"))
        else:
            field += [
                "    if type(v) is list:",
                f"        for c in {order}(v):",
                _indent(one.format(v="c"), 2),
                "    else:",
                _indent(one.format(v="v"), 1),
            ]
        if name in params and shape in ("list", "one"):
            # parameters (`arg* args`, `arg? vararg`) hold `arg` nodes only: one test of the
            # type for the field, not one per parameter (the same children are pushed)
            field = ["    if _arg in walked:", *("    " + line for line in "\n".join(field).splitlines())]
        lines += field
    if len(lines) == 1:
        lines.append("    return")
    return "\n".join(lines) + "\n"


_SCAN_ONE = """\
    ct = type({v})
    if ct in walked or (ct is _Attribute and type({v}.value) is not _Name):
        push({v})"""


def _indent(block: str, levels: int) -> str:
    pad = "    " * levels
    return "\n".join(pad + line for line in block.splitlines())


def _compile(node_type: type, forward: bool = False) -> Any:
    namespace: dict[str, Any] = {"_Attribute": ast.Attribute, "_Name": ast.Name, "_arg": ast.arg}
    where = f"<{'scan' if forward else 'children'} of {node_type.__name__}>"
    exec(compile(_source(node_type, forward), where, "exec"), namespace)
    return namespace["push_children"]
