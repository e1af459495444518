#!/usr/bin/env python3
"""Which Tensor methods MindSpore 2.10 refuses in compiled code under STRICT (run by hand with
MindSpore's own Python; never in CI, never imported by tests).

For every public callable attribute of `mindspore.Tensor`, compiles

    @ms.jit
    def f(x):
        return x.<name>()

once under STRICT (`MS_DEV_JIT_SYNTAX_LEVEL=0`) and once under LAX, in one process per level,
and writes to server/npu_lsp/rules/graphmode/ms_tensor_strict.json the names whose STRICT
compile fails with MindSpore's "In JIT strict mode, cannot get attributes <name>" (a wrong
argument count is a compile of the method, not a refusal), with the LAX outcome beside each.

Usage: ~/.cache/ms210/bin/python tests/npu_lsp/difftest/probe_tensor_methods.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[3] / "server/npu_lsp/rules/graphmode/ms_tensor_strict.json"

RUNNER = r"""
import json, runpy, sys, tempfile
from pathlib import Path
out = {}
work = Path(tempfile.mkdtemp())
for name in sys.argv[1:]:
    case = work / f"probe_{name}.py"  # the graph parser reads the function's source file
    case.write_text(
        "import numpy as np\nimport mindspore as ms\nfrom mindspore import Tensor\n\n"
        f"@ms.jit\ndef f(x):\n    return x.{name}()\n\nf(Tensor(np.ones((2, 3), np.float32)))\n"
    )
    try:
        runpy.run_path(str(case), run_name="__main__")
        out[name] = "accept"
    except BaseException as e:
        msg = str(e)
        out[name] = "refused" if "cannot get attributes" in msg else type(e).__name__ + ": " + (msg.splitlines() or [""])[0][:100]
print("@@" + json.dumps(out))
"""


def run(names: list[str], strict: bool) -> dict[str, str]:
    env = {**os.environ, "GLOG_v": "3"}
    if strict:
        env["MS_DEV_JIT_SYNTAX_LEVEL"] = "0"
    p = subprocess.run([sys.executable, "-c", RUNNER, *names], env=env, capture_output=True, text=True)
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("@@"))
    out: dict[str, str] = json.loads(line[2:])
    return out


def main() -> None:
    import mindspore as ms

    names = sorted(n for n in dir(ms.Tensor) if not n.startswith("_") and callable(getattr(ms.Tensor, n, None)))
    strict = run(names, strict=True)
    refused = sorted(n for n, v in strict.items() if v == "refused")
    lax = run(refused, strict=False)
    table = {
        "_about": "MindSpore 2.10 Tensor methods refused under STRICT (\"In JIT strict mode, cannot get "
        "attributes <name>\"), written by tests/npu_lsp/difftest/probe_tensor_methods.py from compiling "
        "`return x.<name>()` of a float32 tensor for every public method of mindspore.Tensor; `lax` is "
        "what the same call did under LAX (accept: run through JIT Fallback; otherwise the first line "
        "of the error, e.g. a missing argument of the probe, or no CPU kernel).",
        "probed": len(names),
        "refused_under_strict": {n: lax[n] for n in refused},
    }
    OUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"{len(refused)} of {len(names)} methods refused under STRICT -> {OUT}")


if __name__ == "__main__":
    main()
