"""Dtypes torch_npu refuses on the NPU fail with torch_npu's own error, at the user's line.

The facts (which op, which dtypes on which SoC family, the message) are
npu_runtime/data/npu_dtypes.json; the messages below are the shapes torch_npu printed in
the public reports that file cites, with this run's process id and a date pattern."""

from __future__ import annotations

import re

from torch_support import REPO, SCRIPTS, run

_DATE = r"\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d"
_A2_MM = "DT_BFLOAT16,DT_FLOAT16,DT_FLOAT,"
_ADD = (
    "DT_FLOAT,DT_INT32,DT_INT64,DT_FLOAT16,DT_INT16,DT_INT8,DT_UINT8,DT_DOUBLE,DT_BOOL,"
    "DT_BFLOAT16,DT_COMPLEX64,DT_COMPLEX128,"
)


def _aclnn(where: str, api: str, tensor: str, dtype: str, supported: str) -> str:
    return (
        f"RuntimeError: {where} NPU function error: call {api} failed, error code is 161002\n"
        "[ERROR] <date> (PID:<pid>, Device:0, RankID:0) ERR00100 PTA call acl api failed.\n"
        f"[PID: <pid>] <date_ms> AclNN_Parameter_Error(EZ1001): Tensor {tensor} not "
        f"implemented for {dtype}, should be in dtype support list [{supported}]."
    )


def _fails_at(case: str, line_text: str, message: str, *opts: str) -> None:
    r = run("--no-summary", *opts, SCRIPTS / "unsupported_dtypes.py", case)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "not reached" not in r.stdout
    pid = r.stdout.split()[1]
    tb = r.stderr.splitlines()
    # the traceback ends at the user's line: no frame from inside the emulator
    assert not any(str(REPO / "npu_runtime") + "/" in ln for ln in tb), r.stderr
    start = next(i for i, ln in enumerate(tb) if ln.startswith("RuntimeError: "))
    frame = max(i for i in range(start) if tb[i].lstrip().startswith('File "'))
    assert "unsupported_dtypes.py" in tb[frame] and tb[frame + 1].strip() == line_text, r.stderr
    # the message's lines (estimate mode prints its report after them)
    got = "\n".join(tb[start : start + len(message.splitlines())])
    got = re.sub(_DATE + r"\.\d{3}\.\d{3}", "<date_ms>", got)
    got = re.sub(_DATE, "<date>", got).replace(f"PID:{pid},", "PID:<pid>,")
    assert got.replace(f"[PID: {pid}]", "[PID: <pid>]") == message


def test_int64_matmul_is_refused_by_aclnn_mm() -> None:
    _fails_at(
        "mm_int64",
        'y = a @ torch.ones(3, 2, dtype=torch.int64, device="npu")',
        _aclnn("mm:", "aclnnMm", "self", "DT_INT64", _A2_MM),
    )


def test_float64_batch_matmul_is_refused() -> None:
    _fails_at(
        "bmm_double",
        "y = torch.bmm(d, d.transpose(1, 2))",
        _aclnn("bmm:", "aclnnBatchMatMul", "self", "DT_DOUBLE", _A2_MM),
    )


def test_complex_linear_is_refused() -> None:
    _fails_at(
        "linear_complex",
        'y = lin(torch.ones(3, 4, device="npu").to(torch.complex64))',
        _aclnn("mm:", "aclnnMm", "self", "DT_COMPLEX64", _A2_MM),
    )


def test_float64_linear_with_bias_is_refused_by_aclnn_addmm() -> None:
    _fails_at(
        "linear_double",
        'y = lin(torch.ones(3, 4, dtype=torch.float64, device="npu"))',
        _aclnn("addmm:", "aclnnAddmm", "self", "DT_DOUBLE", "DT_FLOAT16,DT_FLOAT,DT_BFLOAT16,"),
    )


def test_bf16_matmul_depends_on_the_soc_family() -> None:
    # Atlas training series (910A) Cube ops take fp16/fp32 only
    _fails_at(
        "mm_bf16",
        "y = torch.mm(h, h)",
        _aclnn("mm:", "aclnnMm", "self", "DT_BFLOAT16", "DT_FLOAT16,DT_FLOAT,"),
        "--device",
        "910A",
    )
    r = run("--no-summary", SCRIPTS / "unsupported_dtypes.py", "mm_bf16")
    assert r.returncode == 0 and "not reached" in r.stdout, r.stderr


def test_unsigned_add_names_adds_or_add() -> None:
    where = "add_out_npu_nocheck:third_party/op-plugin/op_plugin/ops/opapi/AddKernelNpuOpApi.cpp:52"
    _fails_at("adds_uint64", "u = u + 1", _aclnn(where, "aclnnAdds", "self", "DT_UINT64", _ADD))
    _fails_at("add_uint32", "u.add_(u)", _aclnn(where, "aclnnAdd", "self", "DT_UINT32", _ADD))


def test_uint64_randint_is_refused_by_op_plugin() -> None:
    _fails_at(
        "randint_uint64",
        'r = torch.randint(0, 100, (1,), dtype=torch.uint64, device="npu")',
        "RuntimeError: self scalar_type:UInt64is not surpported.\n"
        "[ERROR] <date> (PID:<pid>, Device:0, RankID:0) ERR01002 OPS invalid type",
    )


def test_complex_randn_is_refused_by_aclnn_normal() -> None:
    _fails_at(
        "randn_complex",
        'z = torch.randn(4, dtype=torch.complex64, device="npu")',
        _aclnn(
            "normal_:",
            "aclnnInplaceNormal",
            "self",
            "DT_COMPLEX64",
            "DT_FLOAT16,DT_FLOAT,DT_DOUBLE,DT_INT16,DT_INT32,DT_INT64,DT_INT8,DT_UINT8,DT_BOOL,"
            "DT_BFLOAT16,",
        ),
    )


def test_estimate_mode_refuses_the_same_dtypes() -> None:
    _fails_at(
        "mm_int64",
        'y = a @ torch.ones(3, 2, dtype=torch.int64, device="npu")',
        _aclnn("mm:", "aclnnMm", "self", "DT_INT64", _A2_MM),
        "--estimate",
    )


def test_dtypes_the_apis_list_still_work() -> None:
    r = run("--no-summary", SCRIPTS / "unsupported_dtypes.py", "supported")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == (
        "ok [1.0, 2.0, 3.0, 4.0] [0, 2, 4, 6] torch.complex64 torch.float64"
    )


def test_every_rule_is_sourced_and_reaches_the_fallback() -> None:
    import json

    from npu_runtime.torch_npu.dtype_rules import family, rule_for

    data = json.loads((REPO / "npu_runtime" / "data" / "npu_dtypes.json").read_text())
    aten = json.loads((REPO / "npu_runtime" / "data" / "aten_ops.json").read_text())["ops"]
    devices = json.loads((REPO / "npu_runtime" / "data" / "devices.json").read_text())
    socs = [p["soc_name"] for p in devices["profiles"].values()]
    assert {family(s) for s in socs} == {"A2", "A3", "training", "inference"}
    for name, entry in data["ops"].items():
        assert entry["source"], name
        assert name in aten, f"{name} never reaches the aten fallback"
        for soc in socs:
            rule = rule_for(name, soc)
            assert rule is not None or family(soc) not in entry.get("supported", {}), name
