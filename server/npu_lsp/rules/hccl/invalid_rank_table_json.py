"""HCCL301: the rank table is not valid JSON."""

from __future__ import annotations

from npu_lsp.registry import rule
from npu_lsp.rules.hccl.table import RankTableRule


@rule(code="HCCL301", name="invalid-rank-table-json", severity="error", family="hccl")
class InvalidRankTableJson(RankTableRule):
    """## What it does
    Reports a rank-table file (`rank_table*.json`, `hccl*.json`) that is not valid JSON, at the
    line and column where parsing stopped.

    ## Why is this bad?
    HCCL reads the file named by `RANK_TABLE_FILE` when the communicator is created; a file it
    cannot parse makes every rank fail at start-up, usually with a generic initialisation error
    that does not name the file or the position.

    ## Example
    ```json
    {"version": "1.0", "server_count": "1",}
    ```

    ## Use instead
    ```json
    {"version": "1.0", "server_count": "1"}
    ```

    ## Fix safety
    No fix is offered: the intended content cannot be guessed.

    ## References
    - RFC 8259, The JavaScript Object Notation (JSON) Data Interchange Format
    - `../shared/reference/migration.md`, "MindSpore on Ascend: set-up facts"
    """

    # The checker reports this rule itself when parsing fails; there is no table to visit.
