"""Diagnostics about Ascend Lens itself (AL0xx): they are always reported, never selected away."""

from __future__ import annotations

from npu_lsp.registry import Rule, rule


@rule(code="AL001", name="syntax-error", severity="error", family="internal")
class SyntaxError_(Rule):
    """## What it does
    Reports a file that Python cannot parse.

    ## Why is this bad?
    Nothing else can be checked in a file that does not parse, and Python will refuse to run
    it. The diagnostic points at the place where the parser gave up.

    ## Example
    ```python
    def construct(self, x)
        return x
    ```

    ## Use instead
    ```python
    def construct(self, x):
        return x
    ```

    ## Fix safety
    No automatic fix: only you know what was meant.
    """


@rule(code="AL002", name="unreadable-file", severity="error", family="internal")
class UnreadableFile(Rule):
    """## What it does
    Reports a file that cannot be checked: it is binary, is not valid UTF-8, or cannot be read.

    ## Why is this bad?
    Python source is UTF-8 by default (PEP 3120). A file that is not UTF-8 text is either not
    source code or is saved in a legacy encoding that other tools will misread.

    ## Example
    A source file saved as GBK or Latin-1, or a `.py` path that points at a binary file.

    ## Use instead
    Save the file as UTF-8, or exclude it from checking with `exclude` in `[tool.ascend-lens]`.

    ## Fix safety
    No automatic fix.
    """


@rule(code="AL003", name="internal-error", severity="warning", family="internal")
class InternalError(Rule):
    """## What it does
    Reports that one rule failed while analysing this file; all other rules still ran.

    ## Why is this bad?
    It is a bug in Ascend Lens, not in your code. The message names the rule that failed, so
    the other diagnostics for the file can still be trusted.

    ## Example
    Any file that triggers a bug in a rule.

    ## Use instead
    Please report the message together with the smallest file that reproduces it.

    ## Fix safety
    No automatic fix.
    """
