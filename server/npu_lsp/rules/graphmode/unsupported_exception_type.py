"""MS115: `raise` of an exception type MindSpore cannot raise from a graph."""

from __future__ import annotations

import ast
import builtins
import functools
import json
from collections.abc import Iterable
from importlib import resources

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule


@functools.cache
def _supported() -> frozenset[str]:
    """The builtin exception types MindSpore raises from a graph (`ms_exception_types.json`,
    MindSpore's own list): every other one is refused."""
    text = resources.files(__package__).joinpath("ms_exception_types.json").read_text("utf-8")
    return frozenset(json.loads(text)["supported"])


@rule(code="MS115", name="unsupported-exception-type", severity="error", family="graphmode")
class UnsupportedExceptionType(GraphRule):
    """## What it does
    Flags `raise` in compiled code of an exception type outside MindSpore's whitelist
    (`ms_exception_types.json`, the list MindSpore prints): user-defined exception classes,
    and the standard ones it does not name, such as `FloatingPointError`, `ArithmeticError`,
    `LookupError`, `ImportError`/`ModuleNotFoundError` and warnings (`UserWarning`; of the
    `Warning` subclasses only `RuntimeWarning` is on the list).

    ## Why is this bad?
    MindSpore only raises a fixed set of standard exception types from a graph. Anything
    else stops compilation with `RuntimeError: Unsupported exception type: X.` at every
    syntax level, **even when the branch is never taken** (`if x.ndim > 3:`), because the
    check happens while compiling, not when the `raise` runs; only a branch MindSpore folds
    away on a constant (`if self.check:` with `check=False`) is left out.

    ## Example
    ```python
    class ShapeError(Exception):
        pass

    class Net(nn.Cell):
        def construct(self, x):
            if x.ndim != 2:
                raise ShapeError("expected a matrix")
            return x
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            if x.ndim != 2:
                raise ValueError("expected a matrix")
            return x
    ```

    ## Fix safety
    No automatic fix: callers may catch the specific type.

    ## References
    - RULES.md, section 1: `raise` of an exception type outside MindSpore's whitelist.
    - MindSpore 2.10's message, "Raise only support some Python standard exception types:
      AssertionError, AttributeError, ...", copied whole into `ms_exception_types.json`;
      written/heldout26b case `ctl_raise_on_nan_tensor_condition` (`FloatingPointError`).
    """

    nodes = (ast.Raise,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        exc = getattr(node, "exc", None)
        if exc is None:
            return
        target = exc.func if isinstance(exc, ast.Call) else exc
        q = ctx.qualname(target)
        if q is None:
            return
        name = q.rsplit(".", 1)[-1]
        if q.startswith("builtins."):
            obj = getattr(builtins, name, None)
            refused = isinstance(obj, type) and issubclass(obj, BaseException) and name not in _supported()
        else:
            # A class defined in this file (or the workspace) deriving from an exception.
            refused = self._user_exception(q, ctx)
        if refused:
            yield ctx.diagnostic(
                self,
                node,
                f"graph mode cannot raise `{name}` (Unsupported exception type); raise a standard exception such as ValueError",
            )

    @staticmethod
    def _user_exception(q: str, ctx: Context, depth: int = 0) -> bool:
        """Is `q` a class defined in this file or the workspace that derives from an exception?"""
        mod, _, name = q.rpartition(".")
        info = ctx.scopes.info
        cls = info.classes.get(name) if mod == info.module else None
        if cls is None and ctx.scopes.workspace is not None:
            other = ctx.scopes.workspace.module(mod)
            cls = other.classes.get(name) if other else None
        if cls is None or depth > 20:
            return False
        for base in cls.bases:
            obj = (
                getattr(builtins, base.rsplit(".", 1)[-1], None)
                if base.startswith("builtins.")
                else None
            )
            if isinstance(obj, type) and issubclass(obj, BaseException):
                return True
            if UnsupportedExceptionType._user_exception(base, ctx, depth + 1):
                return True
        return False
