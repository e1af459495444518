"""Renderers for `ascend-lens check`: text, JSON (a stable shape other tools rely on), SARIF 2.1.0."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from npu_lsp.diagnostics import Diagnostic

if TYPE_CHECKING:
    from npu_lsp.registry import Rule

#: Keys of each object in `--format json`, in order. Other tools parse this: do not change.
JSON_KEYS = ("path", "line", "column", "end_line", "end_column", "code", "severity", "message")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}
DOCS_URL = "https://github.com/ascend-lens/ascend-lens/blob/main/docs/rules/{code}.md"

Results = Sequence[tuple[str, Diagnostic]]


def render_text(results: Results) -> str:
    lines = []
    for path, d in results:
        s = d.span
        fix = " [*]" if d.fix is not None else ""
        lines.append(f"{path}:{s.line}:{s.column}: {d.code}{fix} {d.message} ({d.severity})")
        for rel in d.related:
            lines.append(f"    {rel.path}:{rel.span.line}:{rel.span.column}: note: {rel.message}")
    n = len(results)
    if n:
        safe = sum(1 for _, d in results if d.fix is not None and d.fix.safe)
        unsafe = sum(1 for _, d in results if d.fix is not None and not d.fix.safe)
        parts = [f"{safe} fixable with `--fix`"] if safe else []
        if unsafe:
            more = "more" if safe else "fixable"
            parts.append(f"{unsafe} {more} with `--fix --unsafe-fixes`")
        tail = f" ({', '.join(parts)})" if parts else ""
        lines.append(f"Found {n} problem{'s' if n != 1 else ''}.{tail}")
    else:
        lines.append("All checks passed!")
    return "\n".join(lines) + "\n"


def render_statistics(results: Results) -> str:
    """`--statistics`: one line per code, most frequent first (as `ruff --statistics`):
    count, code, rule name."""
    counts: dict[str, int] = {}
    for _path, d in results:
        counts[d.code] = counts.get(d.code, 0) + 1
    if not counts:
        return ""
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    rules = _rules()
    width = max(len(str(n)) for _, n in rows)
    code_width = max(len(c) for c, _ in rows)
    lines = []
    for code, n in rows:
        cls = rules.get(code)
        name = cls.name if cls is not None else _INTERNAL_NAMES.get(code, "")
        lines.append(f"{n:>{width}}\t{code:<{code_width}}\t{name}".rstrip())
    return "\n".join(lines) + "\n"


def _rules() -> dict[str, type[Rule]]:
    """Every rule (their names and docs), imported only by the formats that show them: a
    run answered from the cache imports no rule for text or JSON output."""
    from npu_lsp.registry import load_all

    return load_all()


_INTERNAL_NAMES = {"AL001": "syntax-error", "AL002": "unreadable-file", "AL003": "internal-error"}


def to_json_objects(results: Results) -> list[dict[str, object]]:
    return [
        {
            "path": path,
            "line": d.span.line,
            "column": d.span.column,
            "end_line": d.span.end_line,
            "end_column": d.span.end_column,
            "code": d.code,
            "severity": d.severity,
            "message": d.message,
        }
        for path, d in results
    ]


def render_json(results: Results) -> str:
    import json

    return json.dumps(to_json_objects(results), indent=2, ensure_ascii=False) + "\n"


def _uri(path: str) -> str:
    p = Path(path)
    return p.as_posix() if not p.is_absolute() else p.as_uri()


def render_sarif(results: Results, tool_version: str = "0.1.0") -> str:
    used = sorted({d.code for _, d in results})
    rule_index = {code: i for i, code in enumerate(used)}
    rules_meta = []
    rules = _rules()
    for code in used:
        cls = rules.get(code)
        rules_meta.append(
            {
                "id": code,
                "name": cls.name if cls else code,
                "shortDescription": {"text": cls.summary() if cls else code},
                "helpUri": DOCS_URL.format(code=code),
                "defaultConfiguration": {"level": _SARIF_LEVEL[cls.severity] if cls else "warning"},
            }
        )
    sarif_results = []
    for path, d in results:
        s = d.span
        result: dict[str, object] = {
            "ruleId": d.code,
            "ruleIndex": rule_index[d.code],
            "level": _SARIF_LEVEL.get(d.severity, "warning"),
            "message": {"text": d.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(path)},
                        "region": {
                            "startLine": s.line,
                            "startColumn": s.column,
                            "endLine": s.end_line,
                            "endColumn": s.end_column,
                        },
                    }
                }
            ],
        }
        if d.related:
            result["relatedLocations"] = [
                {
                    "id": i,
                    "message": {"text": r.message},
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(r.path)},
                        "region": {"startLine": r.span.line, "startColumn": r.span.column},
                    },
                }
                for i, r in enumerate(d.related)
            ]
        sarif_results.append(result)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ascend-lens",
                        "version": tool_version,
                        "informationUri": "https://github.com/ascend-lens/ascend-lens",
                        "rules": rules_meta,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": sarif_results,
            }
        ],
    }
    import json

    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "json": render_json, "sarif": render_sarif}
