"""Configuration: pyproject `[tool.ascend-lens]`, editor settings, and bad values."""

from __future__ import annotations

from pathlib import Path

from npu_lsp.config import Config, load_config
from npu_lsp.noqa import parse_noqa


def test_load_from_nearest_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ascend-lens]\nselect = ["MS1", "npu2"]\nignore = ["MS130"]\nsyntax-level = "strict"\n'
        'exclude = ["build/**"]\n[tool.ascend-lens.per-file-ignores]\n"tests/**" = ["MS"]\n'
    )
    (tmp_path / "src" / "deep").mkdir(parents=True)
    cfg = load_config(tmp_path / "src" / "deep")
    assert cfg.select == ("MS1", "NPU2")
    assert cfg.ignore == ("MS130",)
    assert cfg.syntax_level == "strict"
    assert cfg.exclude == ("build/**",)
    assert cfg.root == str(tmp_path)
    assert cfg.problems == ()
    assert cfg.ignored_for(str(tmp_path / "tests" / "a" / "t.py")) == ("MS",)
    assert cfg.ignored_for(str(tmp_path / "src" / "m.py")) == ()
    assert cfg.enabled("MS101") and not cfg.enabled("MS130") and not cfg.enabled("HCCL301")


def test_pyproject_without_our_table_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ascend-lens]\nignore = ["MS101"]\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert load_config(tmp_path / "sub" / "file.py").ignore == ("MS101",)
    assert load_config(Path("/")) == Config()


def test_bad_values_are_reported_and_defaulted(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ascend-lens]\nselect = 5\nsyntax-level = "medium"\nper-file-ignores = "x"\nwat = 1\n'
    )
    cfg = load_config(tmp_path)
    assert cfg.select is None and cfg.syntax_level is None and cfg.per_file_ignores == {}
    assert len(cfg.problems) == 4
    assert any("syntax-level" in p and "medium" in p for p in cfg.problems)
    assert any("unknown setting `wat`" in p for p in cfg.problems)


def test_broken_toml_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ascend-lens\nselect = [")
    cfg = load_config(tmp_path)
    assert cfg.problems and "cannot read configuration" in cfg.problems[0]


def test_editor_settings_merge_over_pyproject() -> None:
    base = Config(ignore=("MS130",), syntax_level="strict")
    merged = base.merged({"syntaxLevel": "lax", "select": "MS101, MS102", "enable": True})
    assert merged.syntax_level == "lax"
    assert merged.select == ("MS101", "MS102")
    assert merged.ignore == ("MS130",)
    assert merged.problems == ()
    bad = base.merged({"syntaxLevel": 3, "ignore": [1]})
    assert bad.syntax_level == "strict" and bad.ignore == ("MS130",) and len(bad.problems) == 2
    assert base.merged(None) is base


def test_preview_rules_need_opt_in() -> None:
    assert not Config().enabled("MS199", "preview")
    assert Config(preview=True).enabled("MS199", "preview")
    assert Config(select=("MS199",)).enabled("MS199", "preview")
    assert not Config().enabled("MS199", "removed")


def test_parse_noqa() -> None:
    text = "a = 1  # noqa\nb = 2  # noqa: MS101, npu2\nc = 3\nd = '# not a noqa'\n"
    assert parse_noqa(text) == {1: frozenset({"*"}), 2: frozenset({"MS101", "NPU2"})}
