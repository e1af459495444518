"""The device strings and backend names of a module, each with its diagnostic text and the
fix it shares with the rest of its group (see `values.Flow` and `fix_group`).

Two groups per module: the *device group* (every device string, NPU203/NPU204, and every
CUDA API rename, NPU201/NPU202/NPU206: `.cuda()`, `torch.cuda.*`, `torch.cuda.amp`) and the
*backend group* (every `"nccl"` reaching a backend, NPU205). Each fix of a group applies the
whole group, and the group is fixed together or not at all, so after a fix-all a file never
holds `"npu"` beside a `"cuda:0"` kept back for the same device, nor `.npu()` beside it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from npu_lsp.diagnostics import Diagnostic, Edit, Fix
from npu_lsp.engine import Context
from npu_lsp.rules.migration.apis import renames
from npu_lsp.rules.migration.helpers import head_edit, rewrite_fix, torch_npu_import_edit
from npu_lsp.rules.migration.values import Flow, Kind, Source, is_torch_device

_NEW = {"device": ("cuda", "npu"), "backend": ("nccl", "hccl")}


@dataclass(frozen=True)
class Finding:
    source: Source
    code: str
    old: str
    new: str
    fix: Fix | None
    #: appended to the message when there is no safe fix: why (see `no_safe_fix`)
    why: str = ""

    @property
    def node(self) -> ast.expr:
        return self.source.node


def _code(source: Source, ctx: Context) -> str:
    if source.kind == "backend":
        return "NPU205"
    sink = source.sink
    if source.direct and isinstance(sink, ast.Call) and is_torch_device(ctx, sink.func):
        return "NPU203"
    return "NPU204"


def _renamed(text: str, kind: Kind) -> str:
    old, new = _NEW[kind]
    head = text[: len(old)]
    if head.isupper():
        new = new.upper()
    return new + text[len(old) :]


@dataclass(frozen=True)
class Member:
    """One edit-to-be of a group: a literal or an API use, with its own fix title."""

    node: ast.AST
    edit: Edit | None  # None: cannot be rewritten exactly (keeps the whole group unfixed)
    title: str
    code: str
    noun: str  # "device string", "backend name", "CUDA API use"


@dataclass(frozen=True)
class Group:
    #: by `id` of a member's node: its fix (None when the group cannot be fixed)
    fixes: dict[int, Fix | None]
    #: why the group has no safe fix (None when it has one)
    why: str | None = None


def _sources(ctx: Context, kind: Kind) -> list[Source]:
    return sorted(
        Flow.of(ctx).sources[kind].values(), key=lambda s: (s.node.lineno, s.node.col_offset)
    )


def findings(ctx: Context, kind: Kind) -> list[Finding]:
    """Every literal of `kind` in the module, in source order, computed once per run."""
    key = ("migration", "findings", kind)
    cached: list[Finding] | None = ctx.cache.get(key)
    if cached is not None:
        return cached
    sources = _sources(ctx, kind)
    group = device_group(ctx) if kind == "device" else _literal_group(ctx, kind, sources)
    out = []
    for s in sources:
        fix = group.fixes.get(id(s.node))
        old, new = s.text, _renamed(s.text, kind)
        out.append(Finding(s, _code(s, ctx), old, new, fix, no_safe_fix(group, fix)))
    ctx.cache[key] = out
    return out


def _literal_members(ctx: Context, kind: Kind, sources: list[Source]) -> list[Member]:
    noun = "device string" if kind == "device" else "backend name"
    last, kept = _carried(ctx, ("members", kind))
    out = []
    for s in sources:
        line = s.node.lineno
        hit = last.get(id(s))
        if hit is not None and hit[0] is s and hit[1] == line:
            member: Member = hit[2]  # a literal of a chunk the edit left alone (`_carried`)
        else:
            old, new = s.text, _renamed(s.text, kind)
            edit = head_edit(ctx, s.node, old, new)
            member = Member(s.node, edit, f'Replace "{old}" with "{new}"', _code(s, ctx), noun)
        kept[id(s)] = (s, line, member)
        out.append(member)
    return out


def _carried(ctx: Context, what: tuple[str, ...]) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """(what the last run made, what this run makes) of `what`, for the language server's
    incremental analysis: a chunk the edit left alone keeps its `Source` objects (and its
    CUDA API uses their `Rename` objects, `values.Flow`, `apis.renames`), so what was made
    from one of them, at the same line, is made again the same; kept by the document
    (`Bindings.document`) from one run to the next. Both empty outside the server."""
    key = ("migration", "carried", *what)
    pair: tuple[dict[Any, Any], dict[Any, Any]] | None = ctx.cache.get(key)
    if pair is None:
        document = Flow.of(ctx).b.document
        if document is None:
            pair = ({}, {})
            ctx.cache[_NO_DOCUMENT] = True
        else:
            pair = (document.get(key, {}), {})
            document[key] = pair[1]
        ctx.cache[key] = pair
    return pair


_NO_DOCUMENT = ("migration", "carried", "none")


def rendered(
    ctx: Context,
    code: str,
    item: object,
    fix: Fix | None,
    why: str,
    make: Callable[..., Diagnostic],
    *args: Any,
) -> Diagnostic:
    """`make(*args)`, or the diagnostic made last run for `item` (a `Source` or `Rename`
    kept by an unchanged chunk, see `_carried`) at the same line with the same fix and
    reason."""
    if ctx.cache.get(_NO_DOCUMENT):
        return make(*args)  # a full run: nothing is carried over
    last, kept = _carried(ctx, ("diagnostics", code))
    line = getattr(getattr(item, "node", None), "lineno", 0)
    hit = last.get(id(item))
    if hit is not None and hit[0] is item and hit[1] == line and hit[2] is fix and hit[3] == why:
        made: Diagnostic = hit[4]
    else:
        made = make(*args)
    kept[id(item)] = (item, line, fix, why, made)
    return made


def _because(sources: list[Source]) -> str | None:
    escaping = [s.escapes for s in sources if s.escapes is not None]
    if not escaping:
        return None
    first = min(escaping, key=lambda n: (n.lineno, n.col_offset))
    return f"the value is also used for something else at line {first.lineno}"


def _literal_group(ctx: Context, kind: Kind, sources: list[Source]) -> Group:
    return fix_group(ctx, _literal_members(ctx, kind, sources), _because(sources))


def device_group(ctx: Context) -> Group:
    """The device strings and CUDA API renames of the module, fixed as one group."""
    key = ("migration", "device group")
    cached: Group | None = ctx.cache.get(key)
    if cached is not None:
        return cached
    sources = _sources(ctx, "device")
    members = _literal_members(ctx, "device", sources)
    members += [
        Member(r.node, r.edit, r.title, r.code, "CUDA API use")
        for r in renames(ctx)
        if r.edit is not None
    ]
    group = fix_group(ctx, members, _because(sources))
    ctx.cache[key] = group
    return group


def fix_group(ctx: Context, members: list[Member], unsafe_because: str | None = None) -> Group:
    """One fix for every member of a group (by `id` of its node), each applying them all.

    Moving some members and leaving others would leave the file half migrated (`"npu"`
    here, `"cuda:0"` there for the same device, `.npu()` beside it), so each fix carries
    every edit of the group, and none is offered unless every member can be rewritten.
    Members on a line whose `# noqa` names their code are left out, as the author asked
    (members of rules switched off are not: their rewrites keep the file consistent). With `unsafe_because`, every fix of the group is
    unsafe and its title says why.
    """
    from npu_lsp.noqa import ALL, parse_noqa

    noqa = parse_noqa(ctx.text) if "noqa" in ctx.text else {}
    taken: list[Member] = []
    for m in members:
        if noqa:
            codes = noqa.get(m.node.lineno, frozenset())  # type: ignore[attr-defined]
            if ALL in codes or any(m.code.startswith(c) for c in codes):
                continue
        if m.edit is None:
            line = m.node.lineno  # type: ignore[attr-defined]
            why = f"the {m.noun} at line {line} cannot be rewritten exactly"
            return Group({id(n.node): None for n in members}, why)
        taken.append(m)
    out: dict[int, Fix | None] = {}
    if not taken:
        return Group(out, unsafe_because)
    # Every fix of the group carries the same edits (one shared tuple: a group of n
    # members costs n fixes, not n * n edits), and members with the same title share one
    # fix. When the language server's last run made them from the same edits (most
    # members keep their edit objects, `_carried`), they are the last run's.
    edits = tuple(m.edit for m in taken if m.edit is not None)
    safe = not unsafe_because
    last, kept = _carried(ctx, ("group", taken[0].noun))
    import_edit = torch_npu_import_edit(ctx)
    before = last.get("edits")
    if (
        before is not None
        and before[1] == safe
        and before[2] == import_edit
        and len(before[0]) == len(edits)
        and all(a is b or a == b for a, b in zip(before[0], edits, strict=True))
    ):
        shared_edits, fixes = before[3], before[4]
    else:
        shared = rewrite_fix(ctx, "", edits[0], extra=edits[1:], safe=safe)
        assert shared is not None
        shared_edits, fixes = shared.edits, {}
    kept["edits"] = (edits, safe, import_edit, shared_edits, fixes)
    counts: dict[str, int] = {}
    for m in taken:
        counts[m.noun] = counts.get(m.noun, 0) + 1
    tails: dict[str, str] = {}  # per noun: what every title of its members ends with
    for m in taken:
        tail = tails.get(m.noun)
        if tail is None:
            tail = tails[m.noun] = _others(m.noun, counts) + (
                f" (unsafe: {unsafe_because})" if unsafe_because else ""
            )
        title = m.title + tail
        fix = fixes.get(title)
        if fix is None:
            fix = fixes[title] = Fix(title, shared_edits, safe)
        out[id(m.node)] = fix
    return Group(out, unsafe_because)


def _others(noun: str, counts: dict[str, int]) -> str:
    """ "(and 2 other device strings and 1 other CUDA API use of this file)" or ""."""
    parts = []
    for other, n in counts.items():
        n -= other == noun  # the member itself
        if n > 0:
            parts.append(f"{n} other {other}{'s' if n > 1 else ''}")
    return f" (and {' and '.join(parts)} of this file)" if parts else ""


def api_fix(ctx: Context, node: ast.AST, has_edit: bool) -> tuple[Fix | None, str]:
    """The device group's fix for a CUDA API use, and why there is no safe one ("" when
    there is, or when the use has no rewrite of its own)."""
    if not has_edit:
        return None, ""
    group = device_group(ctx)
    fix = group.fixes.get(id(node))
    return fix, no_safe_fix(group, fix)


def no_safe_fix(group: Group, fix: Fix | None) -> str:
    """What a diagnostic without a safe fix adds to its message: why (or "")."""
    if fix is not None and fix.safe:
        return ""
    if group.why is None:
        return ""
    if fix is None:
        return f" (no fix: {group.why}, and it moves with the rest of this file)"
    return f" (fix unsafe: {group.why})"


def message(finding: Finding) -> str:
    """The diagnostic text: what the literal is, how it is used, what to write instead, and
    why there is no safe fix when there is none."""
    return _message(finding) + finding.why


def _message(finding: Finding) -> str:
    source = finding.source
    old, new = shown(finding.node, finding.old), shown(finding.node, finding.new)
    sink = source.sink
    line = getattr(sink, "lineno", finding.node.lineno)
    at = f" (line {line})" if line != finding.node.lineno else ""
    compared = source.role == "compare"
    if source.role == "elsewhere":
        what = "a CUDA device" if source.kind == "device" else "the distributed backend"
        return f"{old} is used as {what} by module `{source.elsewhere}`; use {new} on Ascend"
    if source.role == "choice":
        what = "a device" if source.kind == "device" else "the distributed backend"
        return f"{old} is a choice of an option used as {what}; use {new} on Ascend"
    if source.kind == "device":
        if compared:
            return f"{old} is compared with a device{at}; use {new} on Ascend"
        if source.direct:
            return f"{old} names a CUDA device; use {new} on Ascend"
        return f"{old} is used as a CUDA device at line {line}; use {new} on Ascend"
    if compared:
        return f"{old} is compared with the distributed backend{at}; use {new} on Ascend"
    if source.direct:
        return f"the {old} backend is CUDA-only; use {new} on Ascend"
    return f"{old} is used as the distributed backend at line {line} (CUDA-only); use {new}"


def shown(node: ast.expr, text: str) -> str:
    """A literal's text as written: `"cuda:0"`, or `f"cuda:{...}"` for an f-string's head."""
    return f'f"{text}{{...}}"' if isinstance(node, ast.JoinedStr) else f'"{text}"'
