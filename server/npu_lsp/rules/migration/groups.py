"""The device strings and backend names of a module, each with its diagnostic text and the
fix it shares with the rest of its group (see `values.Flow` and `helpers.group_fixes`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from npu_lsp.diagnostics import Fix
from npu_lsp.engine import Context
from npu_lsp.rules.migration.helpers import group_fixes
from npu_lsp.rules.migration.values import Flow, Kind, Source, resolve

_NEW = {"device": ("cuda", "npu"), "backend": ("nccl", "hccl")}


@dataclass(frozen=True)
class Finding:
    source: Source
    code: str
    old: str
    new: str
    fix: Fix | None

    @property
    def node(self) -> ast.expr:
        return self.source.node


def _code(source: Source, ctx: Context) -> str:
    if source.kind == "backend":
        return "NPU205"
    sink = source.sink
    if source.direct and isinstance(sink, ast.Call) and resolve(ctx, sink.func) == "torch.device":
        return "NPU203"
    return "NPU204"


def _renamed(text: str, kind: Kind) -> str:
    old, new = _NEW[kind]
    head = text[: len(old)]
    if head.isupper():
        new = new.upper()
    return new + text[len(old) :]


def findings(ctx: Context, kind: Kind) -> list[Finding]:
    """Every literal of `kind` in the module, in source order, computed once per run."""
    key = ("migration", "findings", kind)
    cached: list[Finding] | None = ctx.cache.get(key)
    if cached is not None:
        return cached
    sources = sorted(
        Flow.of(ctx).sources[kind].values(), key=lambda s: (s.node.lineno, s.node.col_offset)
    )
    members = [(s.node, s.text, _renamed(s.text, kind), _code(s, ctx)) for s in sources]
    noun = "device string" if kind == "device" else "backend name"
    escaping = [s.escapes for s in sources if s.escapes is not None]
    because = None
    if escaping:
        first = min(escaping, key=lambda n: (n.lineno, n.col_offset))
        because = f"the value is also used for something else at line {first.lineno}"
    fixes = group_fixes(ctx, members, noun, because)
    out = [
        Finding(s, code, old, new, fixes.get(id(s.node)))
        for s, (_n, old, new, code) in zip(sources, members, strict=True)
    ]
    ctx.cache[key] = out
    return out


def message(finding: Finding) -> str:
    """The diagnostic text: what the literal is, how it is used, what to write instead."""
    source = finding.source
    old, new = shown(finding.node, finding.old), shown(finding.node, finding.new)
    sink = source.sink
    line = getattr(sink, "lineno", finding.node.lineno)
    at = f" (line {line})" if line != finding.node.lineno else ""
    compared = source.role == "compare"
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
