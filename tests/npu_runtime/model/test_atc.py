"""`ascend-lens atc` as a subprocess: the .om it writes and its ATC-style failures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import resnet_onnx

from npu_runtime.model import om

REPO = Path(__file__).resolve().parents[3]


def atc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ascend_lens", "atc", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )


BASE = ("--framework=5", "--model=net.onnx", "--output=net", "--soc_version=Ascend910B2")


@pytest.fixture
def net(tmp_path: Path) -> Path:
    resnet_onnx.build(tmp_path / "net.onnx")
    resnet_onnx.build(tmp_path / "dyn.onnx", batch="N")
    return tmp_path


def test_compiles_with_atc_messages_and_header(net: Path) -> None:
    r = atc(*BASE, "--precision_mode=allow_mix_precision", cwd=net)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "ATC start working now, please wait for a moment.",
        "ATC run success, welcome to the next use.",
    ]
    f = om.loads((net / "net.om").read_bytes())
    h = f.header
    assert h["soc_version"] == "Ascend910B2" and h["profile"] == "910B2"
    assert h["precision_mode"] == "allow_mix_precision"
    assert [i["name"] for i in h["inputs"]] == ["input"]
    assert h["inputs"][0]["dims"] == [1, 3, 32, 32]
    assert h["outputs"][0]["dims"] == [1, 10]
    by_name = {n["name"]: n for n in h["nodes"]}
    # white list (Conv, Gemm) in fp16; black list (Softmax) keeps fp32
    assert by_name["stem"]["ascend"] == "Conv2D" and by_name["stem"]["dtype"] == "float16"
    assert by_name["fc"]["ascend"] == "MatMulV2" and by_name["fc"]["dtype"] == "float16"
    assert by_name["softmax"]["ascend"] == "SoftmaxV2"
    assert by_name["softmax"]["dtype"] == "float32"
    assert h["weight_bytes"] > 0 and h["work_bytes"] > 0


def test_precision_modes_choose_node_dtypes(net: Path) -> None:
    for flag, conv, add in (
        ("--precision_mode=force_fp16", "float16", "float16"),
        ("--precision_mode=must_keep_origin_dtype", "float32", "float32"),
        ("--precision_mode=allow_fp32_to_fp16", "float16", "float32"),
        ("--precision_mode_v2=origin", "float32", "float32"),
        ("--precision_mode_v2=fp16", "float16", "float16"),
    ):
        mode = flag
        r = atc(*BASE, flag, cwd=net)
        assert r.returncode == 0, r.stderr
        nodes = {n["name"]: n for n in om.loads((net / "net.om").read_bytes()).header["nodes"]}
        assert (nodes["stem"]["dtype"], nodes["block0_add"]["dtype"]) == (conv, add), mode


def test_dynamic_batch_gears_and_dynamic_input(net: Path) -> None:
    r = atc(
        "--framework=5",
        "--model=dyn.onnx",
        "--output=dyn",
        "--soc_version=Ascend910B2",
        "--input_shape=input:-1,3,32,32",
        "--dynamic_batch_size=1,4,8",
        "--output_type=FP16",
        cwd=net,
    )
    assert r.returncode == 0, r.stderr
    h = om.loads((net / "dyn.om").read_bytes()).header
    assert h["dynamic"] == {"kind": "batch", "gears": [[1], [4], [8]]}
    assert [i["name"] for i in h["inputs"]] == ["input", "ascend_mbatch_shape_data"]
    assert h["inputs"][0]["dims"] == [-1, 3, 32, 32]
    assert h["outputs"][0]["dims"] == [8, 10] and h["outputs"][0]["dtype"] == "float16"


def test_unsupported_operator_names_the_node(net: Path) -> None:
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu_1"),
            helper.make_node("NmsPlugin", ["r"], ["y"], name="head/nms", domain="com.example"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    m = helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
        ir_version=9,
    )
    (net / "bad.onnx").write_bytes(m.SerializeToString())
    r = atc(
        "--framework=5", "--model=bad.onnx", "--output=bad", "--soc_version=Ascend910B2", cwd=net
    )
    assert r.returncode == 1
    assert (
        "EZ3003: No supported Ops kernel and engine are found for [head/nms], optype [NmsPlugin]."
        in r.stderr
    )
    assert r.stdout.splitlines()[-1].startswith("ATC run failed")
    assert not (net / "bad.om").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ("--precision_mode=fp8_please",),
            "E10001: Value [fp8_please] for parameter [--precision_mode] is invalid.",
        ),
        (("--soc_version=Ascend999",), "E10001: Value [Ascend999] for parameter [--soc_version]"),
        (("--framework=3",), "E10001: Value [3] for parameter [--framework] is invalid."),
        (("--frobnicate=1",), "ERROR: unknown command line flag 'frobnicate'"),
        (("--input_shape=image:1,3,32,32",), "opname [image] is not found in model"),
        (("--dynamic_batch_size=1,4",), "a dynamic gear option needs -1 in --input_shape"),
        (("--output_type=FP64",), "E10001: Value [FP64] for parameter [--output_type]"),
        (("--insert_op_conf=aipp.cfg",), "AIPP (image pre-processing inside the model)"),
        (
            ("--precision_mode=force_fp16", "--precision_mode_v2=fp16"),
            "[--precision_mode] and [--precision_mode_v2] cannot be used together",
        ),
        (
            ("--precision_mode_v2=cube_hif8",),
            "Value [cube_hif8] for parameter [--precision_mode_v2]",
        ),
    ],
)
def test_bad_flags_fail_with_atc_messages(net: Path, extra: tuple[str, ...], message: str) -> None:
    args = [a for a in BASE if not any(a.split("=")[0] == e.split("=")[0] for e in extra)]
    r = atc(*args, *extra, cwd=net)
    assert r.returncode == 1, r.stdout
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_missing_model_and_required_flags(net: Path) -> None:
    r = atc(
        "--framework=5", "--model=nope.onnx", "--output=x", "--soc_version=Ascend910B2", cwd=net
    )
    assert r.returncode == 1
    assert "E10001: Value [nope.onnx] for parameter [--model] is invalid." in r.stderr
    r = atc("--framework=5", "--model=net.onnx", "--output=x", cwd=net)
    assert "E10004: Parameter [--soc_version] is required" in r.stderr


def test_input_shape_without_dynamic_option_needs_concrete_dims(net: Path) -> None:
    r = atc("--framework=5", "--model=dyn.onnx", "--output=d", "--soc_version=Ascend910B2", cwd=net)
    assert r.returncode == 1
    assert "input [input] has unknown dims [-1, 3, 32, 32]" in r.stderr


def test_graph_the_executor_cannot_build_fails_at_compile_time(net: Path) -> None:
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r", bogus=3)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    (net / "bogus.onnx").write_bytes(m.SerializeToString())
    r = atc(
        "--framework=5", "--model=bogus.onnx", "--output=b", "--soc_version=Ascend910B2", cwd=net
    )
    assert r.returncode == 1
    assert r.stderr.startswith("E19999: The compiled graph cannot be built:")
    assert "Unrecognized attribute: bogus for operator Relu" in r.stderr
    assert not (net / "b.om").exists()


def test_corrupt_onnx_file(net: Path) -> None:
    (net / "junk.onnx").write_bytes(b"not a protobuf at all\n")
    r = atc(
        "--framework=5", "--model=junk.onnx", "--output=j", "--soc_version=Ascend910B2", cwd=net
    )
    assert r.returncode == 1
    assert r.stderr.startswith("E19999: Failed to parse the ONNX model [junk.onnx]")
    assert "Traceback" not in r.stderr
