"""The rule registry tests itself: documentation, codes, names, modules and generated docs."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import npu_lsp.rules.graphmode as graphmode
from npu_lsp import docgen
from npu_lsp.registry import FAMILIES, RULES, RegistryError, Rule, load_all, rule

load_all()
DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules"
SUPPORT_MODULES = {
    "helpers", "inner_cells", "flow", "control", "fixes", "values", "calls_table", "shape_folded", "abstract",
    "abstract_eval", "held_callables", "xcalls", "entries", "parameter_receivers", "optimizer_facts", "optimizer_calls",
    "parameter_arguments", "dynamic_shape", "result_kinds", "none_join", "const_tensor",
    "returns", "host_values", "constructed", "mappers", "ranks", "interpreted", "loop_lambda",
    "lax_functions", "attribute_stores", "number_stores", "table_reads", "python_instances", "fallback_calls",
    "training_mode",
    "list_compare", "tensor_names", "typed_scalar_tensor", "overload_choice", "dict_keys", "loop_exit_joins", "runtime_scalars",
}


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_is_documented_with_ruff_headings(code: str) -> None:
    cls = RULES[code]
    assert not docgen.missing_headings(cls), f"{code} lacks {docgen.missing_headings(cls)}"
    assert cls.summary(), code
    assert re.fullmatch(FAMILIES[cls.family][1], code)


@pytest.mark.parametrize("code", sorted(c for c in RULES if c.startswith("MS")))
def test_graph_rules_cite_rules_md_and_visit_nodes(code: str) -> None:
    cls = RULES[code]
    assert "RULES.md" in (cls.__doc__ or "")
    assert cls.nodes, f"{code} visits no node type"


def test_every_graphmode_module_registers_exactly_one_rule() -> None:
    for info in pkgutil.iter_modules(graphmode.__path__):
        if info.name in SUPPORT_MODULES:
            continue
        module = importlib.import_module(f"npu_lsp.rules.graphmode.{info.name}")
        defined = [r for r in RULES.values() if r.__module__ == module.__name__]
        assert len(defined) == 1, f"{info.name} defines {len(defined)} registered rules"


def test_duplicate_codes_and_names_are_refused() -> None:
    with pytest.raises(RegistryError, match="duplicate rule code"):

        @rule(code="MS101", name="another-name", severity="error", family="graphmode")
        class Dup(Rule):
            pass

    with pytest.raises(RegistryError, match="duplicate rule name"):

        @rule(code="MS199", name="try-statement", severity="error", family="graphmode")
        class DupName(Rule):
            pass

    assert "MS199" not in RULES


@pytest.mark.parametrize(
    ("code", "name", "family", "match"),
    [
        ("MS301", "fine-name", "graphmode", "does not fit family"),
        ("MS198", "no-tries", "graphmode", "must be kebab-case"),
        ("MS198", "Bad_Name", "graphmode", "must be kebab-case"),
        ("XX001", "fine-name", "nope", "unknown family"),
    ],
)
def test_malformed_declarations_are_refused(code: str, name: str, family: str, match: str) -> None:
    with pytest.raises(RegistryError, match=match):
        rule(code=code, name=name, severity="error", family=family)(type("R", (Rule,), {}))


def test_committed_docs_match_regeneration() -> None:
    files = docgen.render_all()
    on_disk = {p.name for p in DOCS.glob("*.md")}
    assert on_disk == set(files), "run `python -m npu_lsp.docgen`"
    for name, content in files.items():
        assert (DOCS / name).read_text(encoding="utf-8") == content, (
            f"{name} is stale; run python -m npu_lsp.docgen"
        )


def test_docgen_check_mode(tmp_path: Path) -> None:
    assert docgen.main(["--out", str(tmp_path)]) == 0
    assert docgen.main(["--check", "--out", str(tmp_path)]) == 0
    (tmp_path / "MS101.md").write_text("stale\n")
    assert docgen.main(["--check", "--out", str(tmp_path)]) == 1


def test_strict_only_rules_are_graph_rules() -> None:
    for code, cls in RULES.items():
        if cls.strict_only:
            assert cls.graph_only and "STRICT" in (cls.__doc__ or ""), code


@pytest.mark.parametrize(
    "code", sorted(c for c, cls in RULES.items() if cls.calls is not None or cls.callee is not None)
)
def test_call_filters_are_only_declared_on_call_rules(code: str) -> None:
    cls = RULES[code]
    assert ast.Call in cls.nodes, f"{code}: `calls` and `callee` filter ast.Call nodes"
    assert cls.calls is None or (
        cls.calls and all(isinstance(n, str) and "." not in n for n in cls.calls)
    )
    assert cls.callee is None or (cls.callee and all(issubclass(t, ast.expr) for t in cls.callee))


@pytest.mark.parametrize("code", sorted(c for c, cls in RULES.items() if cls.words))
def test_word_gates_are_words(code: str) -> None:
    assert all(isinstance(w, str) and w for w in RULES[code].words)
