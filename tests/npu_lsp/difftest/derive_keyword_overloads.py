#!/usr/bin/env python3
"""Derive MS145's table of `mint` keyword overloads (server/npu_lsp/rules/graphmode/
ms_keyword_overloads.json) from judged probes, one per overload.

MindSpore 2.10 imports some `mint` functions from `mindspore.ops.functional_overload` (C++-
dispatched overloads). Called with keyword arguments on a JIT Fallback value under LAX, some
fail ("Illegal type in the graph: AbstractKeywordArg(key: min, ...)") and some compile
(`mint.where(cond, input=, other=)`, `mint.lerp(x, end=, weight=)`): which ones cannot be read
from the sources, so every row of the table is a judged probe (`written/lax/probes/
<prefix>_<name>.py`: `x` made a JIT Fallback value by `x.asnumpy()`, then the overload called on
it with a keyword).

Three steps, never in CI:
1. `~/.cache/ms210/bin/python derive_keyword_overloads.py --list` prints the public `mint`
   names (also `mint.nn.functional`, `mint.linalg`, `mint.special`) that are
   `functional_overload` functions, and which of them have no probe in CALLS below.
2. `.venv/bin/python derive_keyword_overloads.py --write-probes` writes a probe per CALLS row
   that has none (existing probes are kept); judge them with judge_files.py
   (`--root written/lax --merge written/lax/probe_labels.json probes/fix33c_fkw_*.py`).
3. `.venv/bin/python derive_keyword_overloads.py [--write]` reads the verdicts of every probe
   in PROBES and prints (writes) the table: the names whose probe LAX rejects with
   AbstractKeywordArg. A name whose probe PyNative rejects, or that was not judged, is left out
   and reported (not measured).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "server/npu_lsp/rules/graphmode/ms_keyword_overloads.json"
SET = ROOT / "tests/npu_lsp/fixtures/written/lax"
LABELS = SET / "probe_labels.json"

#: public name -> its probes besides the CALLS one (relative to SET): earlier sessions' and the
#: boundary probes (`fix33c_fkwb_*`: a name whose CALLS probe gives a tensor by keyword also
#: has one giving only constants by keyword).
PROBES: dict[str, tuple[str, ...]] = {
    "mindspore.mint.add": ("probes/fix32e_fkw_mint_add_alpha.py", "probes/fix33c_fkwb_add_tensor_other.py", "probes/fix33c_fkwb_add_mixed.py"),
    "mindspore.mint.clamp": ("probes/fix32e_fkw_mint_clamp_kw.py", "probes/fix33c_fkwb_clamp_tensor.py", "probes/fix33c_fkwb_clamp_kw_int.py"),
    "mindspore.mint.clip": ("probes/fix32e_fkw_mint_clip_kw.py",),
    "mindspore.mint.max": ("probes/fix32e_fkw_mint_max_kw.py", "probes/fix33c_fkwb_max_tensor_other.py"),
    "mindspore.mint.eq": ("probes/lead32_fkw_eq.py", "probes/fix33c_fkwb_eq_tensor_other.py"),
    "mindspore.mint.lerp": ("probes/lead32_fkw_lerp.py", "probes/fix33c_fkwb_lerp_pos_scalar_weight.py", "probes/fix33c_fkwb_lerp_tensor_weight.py"),
    "mindspore.mint.min": ("probes/lead32_fkw_min.py",),
    "mindspore.mint.mul": ("probes/lead32_fkw_mul.py", "probes/fix33c_fkwb_mul_tensor_other.py", "probes/fix33c_fkwb_mul_input_kw.py"),
    "mindspore.mint.remainder": ("probes/lead32_fkw_remainder.py",),
    "mindspore.mint.sub": ("probes/lead32_fkw_sub.py",),
    "mindspore.mint.where": ("probes/lead32_fkw_where.py", "probes/fix33c_fkwb_where_pos_scalar_other.py", "probes/fix33c_fkwb_where_scalar_other.py"),
    "mindspore.mint.div": ("probes/fix33c_fkwb_div_tensor_other.py", "probes/fix33c_fkwb_div_mixed.py"),
    "mindspore.mint.floor_divide": ("probes/fix33c_fkwb_floor_divide_scalar.py",),
}

#: public name -> the call written in the probe (`x`: a float32 (2, 3) JIT Fallback value),
#: keyword arguments as a user writes them; the first argument the fallback value.
CALLS: dict[str, str] = {
    "mindspore.mint.addcdiv": "mint.addcdiv(x, x, x * 0 + 2.0, value=0.5)",
    "mindspore.mint.any": "mint.any(x > 0, dim=1)",
    "mindspore.mint.bitwise_not": "mint.bitwise_not(input=x.astype(ms.int32))",
    "mindspore.mint.div": "mint.div(x, 2.0, rounding_mode='floor')",
    "mindspore.mint.empty": "mint.empty(x.shape, dtype=ms.float32).shape",
    "mindspore.mint.empty_like": "mint.empty_like(x, dtype=ms.float32).shape",
    "mindspore.mint.floor_divide": "mint.floor_divide(x, other=x * 0 + 2.0)",
    "mindspore.mint.fmod": "mint.fmod(x, other=2.0)",
    "mindspore.mint.ge": "mint.ge(x, other=0.5)",
    "mindspore.mint.greater_equal": "mint.greater_equal(x, other=0.5)",
    "mindspore.mint.imag": "mint.imag(input=ops.Complex()(x, x))",
    "mindspore.mint.index_add": "mint.index_add(x, 0, Tensor([0, 1], ms.int32), x, alpha=2.0)",
    "mindspore.mint.kthvalue": "mint.kthvalue(x, 2, dim=1)",
    "mindspore.mint.less": "mint.less(x, other=0.5)",
    "mindspore.mint.lt": "mint.lt(x, other=0.5)",
    "mindspore.mint.nansum": "mint.nansum(x, dtype=ms.float32)",
    "mindspore.mint.real": "mint.real(input=ops.Complex()(x, x))",
    "mindspore.mint.repeat_interleave": "mint.repeat_interleave(x, 2, dim=0)",
    "mindspore.mint.xlogy": "mint.xlogy(x, other=2.0)",
    "mindspore.mint.nn.functional.conv1d": "F.conv1d(x.reshape(1, 2, 3), ops.ones((1, 2, 2), ms.float32), padding=1)",
    "mindspore.mint.nn.functional.conv3d": "F.conv3d(x.reshape(1, 1, 1, 2, 3), ops.ones((1, 1, 1, 1, 2), ms.float32), padding=1)",
    "mindspore.mint.nn.functional.gelu": "F.gelu(x, approximate='tanh')",
    "mindspore.mint.nn.functional.pixel_shuffle": "F.pixel_shuffle(mint.tile(x, (2, 2)).reshape(1, 4, 3, 2), upscale_factor=2)",
}
PREFIX = "fix33c_fkw_"

TEMPLATE = '''# category: lax
# {name} called with a keyword on a JIT Fallback value (derive_keyword_overloads.py)
import numpy as np
import mindspore as ms
from mindspore import nn, ops, mint, Tensor
from mindspore.mint.nn import functional as F

ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device("CPU")


class Net(nn.Cell):
    def construct(self, x):
        x = x + (0.5, 1.0, 1.5)[int(np.abs(x.asnumpy()).max()) % 3]
        y = {call}
        return y


net = Net()
x = Tensor(np.arange(6).reshape(2, 3).astype(np.float32) - 2.5)
print(net(x))
'''


def probe_case(name: str) -> str:
    """The CALLS probe of `name` (relative to SET)."""
    return f"probes/{PREFIX}{name.rsplit('.', 1)[-1]}.py"


def probes_of(name: str) -> list[str]:
    """Every probe of `name` (relative to SET)."""
    return [*PROBES.get(name, ()), *([probe_case(name)] if name in CALLS else [])]


def overload_names() -> list[str]:
    """Public mint names bound to functional_overload functions (MindSpore's interpreter)."""
    import importlib

    fo = importlib.import_module("mindspore.ops.functional_overload")
    ids = {id(v) for k, v in vars(fo).items() if callable(v) and not k.startswith("_")}
    names = []
    for mod_name in ("mindspore.mint", "mindspore.mint.nn.functional", "mindspore.mint.linalg", "mindspore.mint.special"):
        mod = importlib.import_module(mod_name)
        names += [f"{mod_name}.{n}" for n in dir(mod) if not n.startswith("_") and id(getattr(mod, n)) in ids]
    return sorted(names)


def write_probes() -> None:
    for name, call in CALLS.items():
        path = SET / probe_case(name)
        if not path.exists():
            path.write_text(TEMPLATE.format(name=name.removeprefix("mindspore."), call=call))
            print("wrote", path.relative_to(ROOT))


def _rejects(lab: dict[str, object]) -> bool:
    """LAX fails on the keyword (the frontend's error, raised before kernel selection: it is
    measured even where PyNative on CPU lacks the kernel, conv1d / gelu / addcdiv...)."""
    return lab.get("lax") == "reject" and "AbstractKeywordArg" in str(lab.get("message_head", ""))


def measured() -> tuple[list[str], list[str], list[str]]:
    """(names a probe shows failing with AbstractKeywordArg at LAX, names whose every probe
    compiles at LAX, names not measured)."""
    labels = json.loads(LABELS.read_text())
    fails, compiles, unknown = [], [], []
    for name in sorted({*PROBES, *CALLS}):
        labs = [labels.get(Path(p).name) or {} for p in probes_of(name)]
        if any(_rejects(lab) for lab in labs):
            fails.append(name)
        elif labs and all(lab.get("lax") == "accept" and lab.get("pynative") == "accept" for lab in labs):
            compiles.append(name)
        else:
            unknown.append(name)
    return fails, compiles, unknown


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="store_true", help="(MindSpore's python) list the overloads")
    ap.add_argument("--write-probes", action="store_true")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    if args.list:
        for name in overload_names():
            print(name, "" if name in PROBES or name in CALLS else "(no probe)")
        return
    if args.write_probes:
        write_probes()
        return
    fails, compiles, unknown = measured()
    print("reject (AbstractKeywordArg):", *fails, sep="\n  ")
    print("compile at LAX:", *compiles, sep="\n  ")
    print("not measured:", *unknown, sep="\n  ")
    table = json.loads(OUT.read_text())
    if table["functions"] != fails:
        print("table differs:", sorted(set(table["functions"]) ^ set(fails)))
    if args.write:
        table["functions"] = fails
        table["compile"] = compiles
        OUT.write_text(json.dumps(table, indent=1) + "\n")
        print("wrote", OUT.relative_to(ROOT))
    sys.exit(0)


if __name__ == "__main__":
    main()
