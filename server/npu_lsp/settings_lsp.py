"""Editor settings for the language server: initializationOptions and didChangeConfiguration.

Shape (every key optional; camelCase, snake_case and kebab-case are all accepted)::

    {
      "enable": true,             # false: publish no diagnostics
      "hover": true,              # false: no hover answers
      "debounceMs": 150,          # quiet time after a keystroke before analysing
      "select": ["MS", "NPU"], "ignore": ["NPU208"], "syntaxLevel": "strict",
      "perFileIgnores": {"tests/**": ["MS"]}, "preview": false
    }

The lint keys go to `Config.merged` on top of `[tool.ascend-lens]` (editor wins key by key).
The object may also arrive wrapped as `{"ascendLens": {...}}` / `{"ascend-lens": {...}}`, which
is what VS Code sends for a settings section. Bad values never fail `initialize`: they are
reported in `problems` and the defaults are used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_DEBOUNCE_MS = 150
_WRAPPERS = ("ascendLens", "ascend-lens", "ascend_lens")
_EDITOR_KEYS = {"enable", "hover", "debounce_ms"}


@dataclass(frozen=True)
class ServerSettings:
    """The server's own switches plus the lint settings to merge into the project Config."""

    enable: bool = True
    hover: bool = True
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    lint: dict[str, Any] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


def _snake(key: str) -> str:
    out = "".join("_" + c.lower() if c.isupper() else c for c in key)
    return out.replace("-", "_")


def parse_settings(raw: Any) -> ServerSettings:
    """Validate raw editor settings (any JSON value) into ServerSettings."""
    if raw is None:
        return ServerSettings()
    if not isinstance(raw, Mapping):
        return ServerSettings(
            problems=(f"editor settings must be an object, got {type(raw).__name__}; ignored",)
        )
    for wrapper in _WRAPPERS:
        if isinstance(raw.get(wrapper), Mapping):
            raw = raw[wrapper]
            break
    problems: list[str] = []
    values: dict[str, Any] = {}
    lint: dict[str, Any] = {}
    for key, value in raw.items():
        name = _snake(str(key))
        if name not in _EDITOR_KEYS:
            lint[str(key)] = value
        elif name == "debounce_ms":
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10_000:
                values[name] = value
            else:
                problems.append(
                    f"`{key}` must be an integer from 0 to 10000 (milliseconds), got {value!r}; ignored"
                )
        elif isinstance(value, bool):
            values[name] = value
        else:
            problems.append(f"`{key}` must be true or false, got {value!r}; ignored")
    return ServerSettings(**values, lint=lint, problems=tuple(problems))
