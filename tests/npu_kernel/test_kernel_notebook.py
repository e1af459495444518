"""A notebook run end to end with nbclient on the installed kernelspec."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

PROFILE_MIME = "application/vnd.ascend-lens.profile+json"


def test_notebook_runs_end_to_end(kernel_prefix: Path, tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "ascend-npu", "display_name": "x", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import acl\nimport npu_runtime\nacl.init()\nacl.rt.set_device(0)"
        ),
        nbformat.v4.new_code_cell(
            "%%npu_profile\n"
            "from npu_runtime.core.launch import submit\n"
            "submit(0, name='Add_1', op_type='Add', cost={'duration_us': 3.0, 'bound': 'memory'})"
        ),
        nbformat.v4.new_code_cell("p, ret = acl.rt.malloc(256, 0)\n%npu_mem"),
        nbformat.v4.new_code_cell(
            "from npu_runtime.core.runtime import get_runtime\nget_runtime().set_context(0)"
        ),
    ]
    client = NotebookClient(
        nb, timeout=60, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    nbformat.validate(nb)  # every output, including our MIME bundle, is valid nbformat

    assert [o["data"]["text/plain"] for o in nb.cells[0].outputs] == ["0"]  # set_device ret
    (profile,) = [o for o in nb.cells[1].outputs if PROFILE_MIME in o.get("data", {})]
    doc = profile["data"][PROFILE_MIME]
    assert doc["op_count"] == 1 and doc["lines"][0]["line"] == 3
    assert "text/html" in profile["data"]

    mem = nb.cells[2].outputs[0]["data"]["text/plain"]
    assert "Cell In[3], line 1" in mem and "p, ret = acl.rt.malloc(256, 0)" in mem

    (error,) = nb.cells[3].outputs
    assert error["output_type"] == "error" and error["ename"] == "AclError"
    assert any("ACL_ERROR_INVALID_PARAM" in line for line in error["traceback"])
    assert any("Cell In[4], line 2" in line for line in error["traceback"])
