"""Error injection: make the Nth call of an API, or the Nth launch of an op type, fail.

Spec grammar (one per `--inject`, or comma-separated in NPU_INJECT):
    API:N:CODE        e.g. acl.rt.malloc:3:207001  (also aclrtMalloc:3:207001)
    op:OPTYPE:N:CODE  e.g. op:MatMul:2:507015      (device-side: surfaces at the next sync)
N counts from 1. Each rule fires once. API names match across spellings: pyACL
(`acl.rt.memcpy_async`) and C (`aclrtMemcpyAsync`) name the same call.
"""

from __future__ import annotations

import difflib
import os
import sys
import threading
from dataclasses import dataclass

ENV_VAR = "NPU_INJECT"


def api_key(name: str) -> str:
    """Normalise an API name: 'acl.rt.memcpy_async' and 'aclrtMemcpyAsync' -> 'memcpyasync'."""
    n = name.strip()
    for prefix in ("acl.rt.", "acl.util.", "acl.mdl.", "acl.op.", "acl.media.", "acl."):
        if n.startswith(prefix):
            n = n[len(prefix) :]
            break
    else:
        for prefix in ("aclrt", "aclmdl", "aclop", "acl"):
            if n.startswith(prefix):
                n = n[len(prefix) :]
                break
    return n.replace("_", "").lower()


@dataclass(slots=True)
class Injection:
    """One rule: fail the `nth` matching call with `code`."""

    target: str  # normalised api key, or the op type for op rules
    nth: int
    code: int
    is_op: bool = False
    seen: int = 0
    fired: bool = False

    def __str__(self) -> str:
        return f"{'op:' if self.is_op else ''}{self.target}:{self.nth}:{self.code}"


def parse(spec: str) -> Injection:
    """Parse one spec; ValueError with the expected grammar on bad input."""
    parts = spec.strip().split(":")
    is_op = parts[0] == "op"
    if is_op:
        parts = parts[1:]
    if len(parts) != 3 or not parts[0]:
        raise ValueError(
            f"bad injection spec {spec!r}: expected API:N:CODE or op:OPTYPE:N:CODE "
            "(e.g. acl.rt.malloc:3:207001, op:MatMul:2:507015)"
        )
    target, n, code = parts
    try:
        nth, value = int(n), int(code)
    except ValueError:
        raise ValueError(f"bad injection spec {spec!r}: N and CODE must be integers") from None
    if nth < 1 or value <= 0:
        raise ValueError(f"bad injection spec {spec!r}: N must be >= 1 and CODE > 0")
    return Injection(target if is_op else api_key(target), nth, value, is_op)


def parse_known(spec: str) -> Injection:
    """`parse`, and refuse an API or op type the runtime does not have (a rule naming one
    would never fire): ValueError naming the closest match and every valid name."""
    rule = parse(spec)
    names = known_op_types() if rule.is_op else known_apis()
    if rule.target in names:
        return rule
    what = "op type" if rule.is_op else "API"
    given = spec.strip().split(":")[1 if rule.is_op else 0]
    listed = sorted(set(names.values()))
    close = difflib.get_close_matches(given, listed, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise ValueError(f"unknown {what} {given!r}{hint}; known {what}s: {', '.join(listed)}")


def parse_env(value: str) -> list[Injection]:
    """Every rule of an NPU_INJECT value, validated like `--inject`; ValueError names the
    first bad spec (so a caller can refuse the whole variable, never apply half of it)."""
    return [parse_known(spec) for spec in filter(None, (s.strip() for s in value.split(",")))]


def known_apis() -> dict[str, str]:
    """Normalised key -> pyACL name, for every function of the emulated `acl` package."""
    import importlib
    import inspect

    out: dict[str, str] = {}
    for module_name in ("", ".rt", ".util", ".mdl", ".op", ".media", ".prof"):
        try:
            module = importlib.import_module("npu_runtime.acl" + module_name)
        except ImportError:
            continue
        for name, fn in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(fn):
                continue
            if not fn.__module__.startswith("npu_runtime.acl"):
                continue
            out.setdefault(api_key(name), f"acl{module_name}.{name}")
    return out


def known_op_types() -> dict[str, str]:
    """Op type -> itself, for every op type (and alias) in the registry."""
    from npu_runtime.ops import REGISTRY

    return {name: name for name in REGISTRY}


class Injector:
    """Counts matching calls and says when one must fail. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._api: dict[str, list[Injection]] = {}
        self._op: dict[str, list[Injection]] = {}
        self.active = False  # fast path: nothing to count
        # NPU_INJECT as read, checked at first use: the names can only be checked against
        # the `acl` modules, which import the runtime that reads the variable.
        self._env_value: str | None = None
        self._env_lock = threading.RLock()
        self._env_reading = False

    def add(self, spec: str | Injection) -> Injection:
        rule = parse(spec) if isinstance(spec, str) else spec
        with self._lock:
            (self._op if rule.is_op else self._api).setdefault(rule.target, []).append(rule)
            self.active = True
        return rule

    def clear(self) -> None:
        with self._lock:
            self._api.clear()
            self._op.clear()
            self._env_value = None
            self.active = False

    def rules(self) -> list[Injection]:
        self._apply_env()
        with self._lock:
            return [r for rs in (*self._api.values(), *self._op.values()) for r in rs]

    def load_env(self, environ: dict[str, str] | None = None) -> None:
        """Read NPU_INJECT; its rules apply from the first counted call. A bad spec or an
        unknown API or op name refuses the whole variable with one line on stderr."""
        value = (os.environ if environ is None else environ).get(ENV_VAR, "")
        if value.strip():
            with self._lock:
                self._env_value = value
                self.active = True

    def _apply_env(self) -> None:
        # Other threads wait until the rules are in; the reading thread itself may come
        # back here while importing the `acl` modules and must not read the value again.
        with self._env_lock:
            value = self._env_value
            if value is None or self._env_reading:
                return
            self._env_reading = True
            try:
                rules = parse_env(value)
            except ValueError as exc:
                sys.stderr.write(f"ascend-lens: ignoring {ENV_VAR}: {exc}\n")
                rules = []
            finally:
                self._env_reading = False
            for rule in rules:
                self.add(rule)
            with self._lock:
                self._env_value = None
                self.active = bool(self._api or self._op)

    def _hit(self, table: dict[str, list[Injection]], key: str) -> int | None:
        with self._lock:
            rules = table.get(key)
            if not rules:
                return None
            code = None
            for r in rules:
                r.seen += 1
                if r.seen == r.nth and not r.fired:
                    r.fired = True
                    code = r.code
            return code

    def api_fails(self, api: str) -> int | None:
        """The code the current call of `api` must fail with, or None."""
        if not self.active:
            return None
        if self._env_value is not None:
            self._apply_env()
        return self._hit(self._api, api_key(api))

    def op_fails(self, op_type: str) -> int | None:
        """The device-side code the current launch of `op_type` must fail with, or None."""
        if not self.active:
            return None
        if self._env_value is not None:
            self._apply_env()
        return self._hit(self._op, op_type)


injector = Injector()


def inject(spec: str) -> Injection:
    """Add an injection rule (same grammar as --inject / NPU_INJECT)."""
    return injector.add(spec)


def clear() -> None:
    injector.clear()
