"""Configuration: `[tool.ascend-lens]` in the nearest pyproject.toml, merged with editor settings.

Keys (pyproject uses kebab-case; editor settings may use camelCase or snake_case too)::

    [tool.ascend-lens]
    select = ["MS", "NPU"]          # code prefixes or full codes; default: all stable rules
    ignore = ["MS130"]
    syntax-level = "strict"         # "strict" | "lax"; stands where MS_DEV_JIT_SYNTAX_LEVEL stands
    exclude = ["build/**"]          # globs skipped when `check` walks folders
    max-file-size = 2000000         # bytes; larger files are skipped (0: no limit)
    [tool.ascend-lens.per-file-ignores]
    "tests/**" = ["MS"]

Bad values never raise: they are reported in `Config.problems` and replaced by defaults.
"""

from __future__ import annotations

import contextlib
import fnmatch
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any, Literal

from npu_lsp.files import DEFAULT_MAX_FILE_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

SyntaxLevel = Literal["strict", "lax"]
_LEVELS = {
    "strict": "strict",
    "lax": "lax",
    "0": "strict",
    "2": "lax",
    "compatible": "lax",
    "1": "lax",
}


@dataclass(frozen=True)
class Config:
    """Effective settings for one check run. `None` for select means "every stable rule"."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    syntax_level: SyntaxLevel | None = None
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    preview: bool = False
    #: Files larger than this many bytes are skipped by `check`, the index and the server.
    max_file_size: int = DEFAULT_MAX_FILE_BYTES
    #: Directory the per-file-ignore globs are relative to (the pyproject's folder).
    root: str | None = None
    #: Human-readable problems found while loading (shown by the CLI / server log).
    problems: tuple[str, ...] = ()

    def enabled(self, code: str, group: str = "stable") -> bool:
        """Is `code` switched on (before per-file ignores)?"""
        from npu_lsp.registry import matches

        if code.startswith("AL"):  # internal diagnostics are always reported
            return True
        if group in ("deprecated", "removed"):
            return False
        if self.select is None:
            if group == "preview" and not self.preview:
                return False
            selected = True
        else:
            selected = matches(code, self.select)
        return selected and not matches(code, self.ignore)

    def ignored_for(self, path: str) -> tuple[str, ...]:
        """Codes ignored for `path` by `per_file_ignores` (globs match relative or absolute paths)."""
        if not self.per_file_ignores:
            return ()
        candidates = {PurePath(path).as_posix()}
        if self.root:
            with contextlib.suppress(ValueError, OSError):
                candidates.add(
                    Path(path).resolve().relative_to(Path(self.root).resolve()).as_posix()
                )
        out: list[str] = []
        for pattern, codes in self.per_file_ignores.items():
            if any(_glob_match(c, pattern) for c in candidates):
                out.extend(codes)
        return tuple(out)

    def merged(self, settings: Mapping[str, Any] | None) -> Config:
        """A copy with editor settings applied on top (editor wins key by key)."""
        if not settings:
            return self
        parsed, problems = _parse(settings, source="editor settings")
        return replace(self, **parsed, problems=self.problems + tuple(problems))


def _glob_match(path: str, pattern: str) -> bool:
    if fnmatch.fnmatch(path, pattern):
        return True
    # "tests/**" should also match "tests/a.py"; "*.py" should match in any folder.
    if pattern.endswith("/**") and (path + "/").startswith(pattern[:-2]):
        return True
    return "/" not in pattern and fnmatch.fnmatch(PurePath(path).name, pattern)


def _norm_key(key: str) -> str:
    out = "".join("_" + c.lower() if c.isupper() else c for c in key)
    return out.replace("-", "_")


def _codes(value: Any, key: str, problems: list[str], source: str) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [v for v in value.replace(" ", ",").split(",") if v]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        problems.append(f"{source}: `{key}` must be a list of rule codes, got {value!r}; ignored")
        return None
    return tuple(v.strip().upper() for v in value)


def _parse(raw: Mapping[str, Any], source: str) -> tuple[dict[str, Any], list[str]]:
    """Validate raw settings into Config fields; unknown keys and bad values become problems."""
    out: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        k = _norm_key(str(key))
        if k in ("select", "ignore"):
            codes = _codes(value, key, problems, source)
            if codes is not None:
                out[k] = codes
        elif k == "syntax_level":
            if value is None or value == "":
                out["syntax_level"] = None
            elif str(value).lower() in _LEVELS:
                out["syntax_level"] = _LEVELS[str(value).lower()]
            else:
                problems.append(
                    f'{source}: `{key}` must be "strict" or "lax", got {value!r}; ignored'
                )
        elif k == "per_file_ignores":
            if not isinstance(value, Mapping):
                problems.append(f"{source}: `{key}` must be a table of glob = [codes]; ignored")
                continue
            table: dict[str, tuple[str, ...]] = {}
            for pattern, codes_raw in value.items():
                codes = _codes(codes_raw, f"{key}.{pattern}", problems, source)
                if codes is not None:
                    table[str(pattern)] = codes
            out["per_file_ignores"] = table
        elif k == "exclude":
            globs = value if isinstance(value, (list, tuple)) else None
            if globs is None or not all(isinstance(g, str) for g in globs):
                problems.append(f"{source}: `{key}` must be a list of globs; ignored")
            else:
                out["exclude"] = tuple(globs)
        elif k == "max_file_size":
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                out["max_file_size"] = value
            else:
                problems.append(
                    f"{source}: `{key}` must be a number of bytes (0 for no limit); ignored"
                )
        elif k == "preview":
            if isinstance(value, bool):
                out["preview"] = value
            else:
                problems.append(f"{source}: `{key}` must be true or false; ignored")
        elif k in ("enable", "enabled", "path", "interpreter", "trace", "log_level", "hover"):
            continue  # editor-only switches handled by the server
        else:
            problems.append(f"{source}: unknown setting `{key}`; ignored")
    return out, problems


def find_pyproject(start: str | Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.ascend-lens] table."""
    here = Path(start).resolve()
    try:
        if here.is_file() or not here.exists():
            here = here.parent
    except OSError:
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        try:
            found = candidate.is_file()
        except OSError:  # a folder we may not look into (permissions): no config there
            found = False
        if found:
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                return candidate  # reported by load_config
            if "ascend-lens" in data.get("tool", {}):
                return candidate
    return None


def load_config(start_path: str | Path) -> Config:
    """Config from `[tool.ascend-lens]` of the nearest pyproject.toml above `start_path`."""
    path = find_pyproject(start_path)
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return Config(
            root=str(path.parent), problems=(f"{path}: cannot read configuration: {exc}",)
        )
    table = data.get("tool", {}).get("ascend-lens", {})
    if not isinstance(table, Mapping):
        return Config(
            root=str(path.parent), problems=(f"{path}: [tool.ascend-lens] must be a table",)
        )
    parsed, problems = _parse(table, source=str(path))
    return Config(**parsed, root=str(path.parent), problems=tuple(problems))
