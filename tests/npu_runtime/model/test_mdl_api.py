"""acl.mdl through the shim: pyACL's return shapes and GE's codes for misuse."""

from __future__ import annotations

import struct
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import resnet_onnx

from npu_runtime.core import hooks
from npu_runtime.model import compiler, om
from npu_runtime.records import WorkRecord


def _compile(tmp: Path, name: str, **kw: Any) -> Path:
    opts = compiler.Options(
        model=str(tmp / f"{name}.onnx"),
        output=str(tmp / name),
        soc_version="Ascend910B2",
        **kw,
    )
    return Path(compiler.write(opts))


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("om")
    resnet_onnx.build(d / "net.onnx")
    resnet_onnx.build(d / "dyn.onnx", batch="N")
    return {
        "static": _compile(d, "net"),
        "dynamic": _compile(d, "dyn", input_shape="input:-1,3,32,32", dynamic_batch_size="1,4,8"),
    }


@pytest.fixture
def dev(acl: ModuleType) -> ModuleType:
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    return acl


def _dataset(acl: ModuleType, sizes: list[int]) -> tuple[int, list[int]]:
    ds = acl.mdl.create_dataset()
    ptrs = []
    for size in sizes:
        ptr, ret = acl.rt.malloc(size, 0)
        assert ret == 0
        ptrs.append(ptr)
        _, ret = acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(ptr, size))
        assert ret == 0
    return ds, ptrs


def test_descriptions(dev: ModuleType, models: dict[str, Path]) -> None:
    acl = dev
    model_id, ret = acl.mdl.load_from_file(str(models["static"]))
    assert ret == 0 and model_id >= 1
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, model_id) == 0
    assert acl.mdl.get_num_inputs(desc) == 1 and acl.mdl.get_num_outputs(desc) == 1
    assert acl.mdl.get_input_size_by_index(desc, 0) == 3 * 32 * 32 * 4
    assert acl.mdl.get_output_size_by_index(desc, 0) == 10 * 4
    assert acl.mdl.get_input_dims(desc, 0) == (
        {"name": "input", "dimCount": 4, "dims": [1, 3, 32, 32]},
        0,
    )
    assert acl.mdl.get_output_dims(desc, 0) == ({"name": "prob", "dimCount": 2, "dims": [1, 10]}, 0)
    assert acl.mdl.get_input_data_type(desc, 0) == 0  # ACL_FLOAT
    assert acl.mdl.get_input_format(desc, 0) == 0  # ACL_FORMAT_NCHW
    assert acl.mdl.get_output_format(desc, 0) == 2  # ACL_FORMAT_ND
    assert acl.mdl.get_input_name_by_index(desc, 0) == "input"
    assert acl.mdl.get_output_name_by_index(desc, 0) == "prob"
    assert acl.mdl.get_input_index_by_name(desc, "input") == (0, 0)
    assert acl.mdl.get_input_index_by_name(desc, "ascend_mbatch_shape_data")[1] == 100000
    assert acl.mdl.get_input_dims(desc, 5) == ({}, 100000)
    assert acl.mdl.get_dynamic_batch(desc) == ({"batchCount": 0, "batch": []}, 0)
    work, weight, ret = acl.mdl.query_size(str(models["static"]))
    header = om.loads(models["static"].read_bytes()).header
    assert (work, weight, ret) == (header["work_bytes"], header["weight_bytes"], 0)
    assert acl.mdl.unload(model_id) == 0
    assert acl.mdl.destroy_desc(desc) == 0


def test_weights_and_work_memory_are_charged_to_hbm(
    dev: ModuleType, models: dict[str, Path]
) -> None:
    acl = dev
    free0, _total, ret = acl.rt.get_mem_info(1)
    assert ret == 0
    model_id, ret = acl.mdl.load_from_file(str(models["static"]))
    assert ret == 0
    free1, _, _ = acl.rt.get_mem_info(1)
    work, weight, _ = acl.mdl.query_size(str(models["static"]))
    assert free0 - free1 >= work + weight
    assert acl.mdl.unload(model_id) == 0
    assert acl.rt.get_mem_info(1)[0] == free0


def test_load_out_of_memory(dev: ModuleType, models: dict[str, Path]) -> None:
    acl = dev
    free, _total, _ = acl.rt.get_mem_info(1)
    hog, ret = acl.rt.malloc(free - 4096, 2)
    assert ret == 0
    assert acl.mdl.load_from_file(str(models["static"])) == (0, 245000)
    assert acl.rt.free(hog) == 0


def test_load_with_caller_memory(dev: ModuleType, models: dict[str, Path]) -> None:
    acl = dev
    path = str(models["static"])
    work, weight, _ = acl.mdl.query_size(path)
    wptr, _ = acl.rt.malloc(work, 0)
    bptr, _ = acl.rt.malloc(weight, 0)
    assert acl.mdl.load_from_file_with_mem(path, wptr, work - 64, bptr, weight) == (0, 145006)
    assert acl.mdl.load_from_file_with_mem(path, 0, work, bptr, weight) == (0, 145007)
    model_id, ret = acl.mdl.load_from_file_with_mem(path, wptr, work, bptr, weight)
    assert ret == 0
    assert acl.mdl.unload(model_id) == 0
    acl.rt.free(wptr)
    acl.rt.free(bptr)


def test_execute_misuse_codes(dev: ModuleType, models: dict[str, Path]) -> None:
    acl = dev
    model_id, _ = acl.mdl.load_from_file(str(models["static"]))
    ins, _ = _dataset(acl, [3 * 32 * 32 * 4])
    outs, _ = _dataset(acl, [40])
    assert acl.mdl.execute(model_id, ins, outs) == 0
    two, _ = _dataset(acl, [3 * 32 * 32 * 4, 16])
    assert acl.mdl.execute(model_id, two, outs) == 145000  # wrong buffer count
    assert "model requires 1, but user actually feeds 2" in acl.get_recent_err_msg()
    small, _ = _dataset(acl, [3 * 32 * 32 * 4 - 4])
    assert acl.mdl.execute(model_id, small, outs) == 145000  # buffer too small
    tiny_out, _ = _dataset(acl, [20])
    assert acl.mdl.execute(model_id, ins, tiny_out) == 145000
    assert acl.mdl.execute(model_id + 100, ins, outs) == 145003
    assert acl.mdl.unload(model_id) == 0
    assert acl.mdl.get_desc(acl.mdl.create_desc(), model_id) == 545008
    assert acl.mdl.execute(model_id, ins, outs) == 145003  # unloaded
    assert acl.mdl.unload(model_id) == 145003
    stream, _ = acl.rt.create_stream()
    assert acl.mdl.execute_async(model_id, ins, outs, stream) == 145003


def test_dynamic_batch_setters(dev: ModuleType, models: dict[str, Path]) -> None:
    acl = dev
    model_id, _ = acl.mdl.load_from_file(str(models["dynamic"]))
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    assert acl.mdl.get_num_inputs(desc) == 2
    assert acl.mdl.get_dynamic_batch(desc) == ({"batchCount": 3, "batch": [1, 4, 8]}, 0)
    assert acl.mdl.get_input_dims(desc, 0)[0]["dims"] == [-1, 3, 32, 32]
    assert acl.mdl.get_input_size_by_index(desc, 0) == 8 * 3 * 32 * 32 * 4  # largest gear
    index, ret = acl.mdl.get_input_index_by_name(desc, "ascend_mbatch_shape_data")
    assert (index, ret) == (1, 0)
    dyn_size = acl.mdl.get_input_size_by_index(desc, index)
    ins, (x_ptr, _) = _dataset(acl, [8 * 3 * 32 * 32 * 4, dyn_size])
    outs, (y_ptr,) = _dataset(acl, [acl.mdl.get_output_size_by_index(desc, 0)])
    assert acl.mdl.set_dynamic_batch_size(model_id, ins, index, 3) == 145013
    assert acl.mdl.set_dynamic_batch_size(model_id, ins, 7, 4) == 100000
    assert acl.mdl.set_dynamic_batch_size(model_id, ins, index, 4) == 0
    assert acl.mdl.execute(model_id, ins, outs) == 0
    assert acl.mdl.get_cur_output_dims(desc, 0) == (
        {"name": "prob", "dimCount": 2, "dims": [4, 10]},
        0,
    )
    assert acl.mdl.get_output_dims(desc, 0)[0]["dims"] == [8, 10]
    static_id, _ = acl.mdl.load_from_file(str(models["static"]))
    assert acl.mdl.set_dynamic_batch_size(static_id, ins, index, 1) == 145013
    assert acl.mdl.set_dynamic_hw_size(model_id, ins, index, 32, 32) == 145013


def test_records_per_node_at_the_execute_line(
    dev: ModuleType, models: dict[str, Path], user_code: Any
) -> None:
    acl = dev
    got: list[WorkRecord] = []
    hooks.add_work_listener(got.append)
    try:
        user_code(
            "model_id, _ = acl.mdl.load_from_file(path)\n"
            "ins = acl.mdl.create_dataset(); outs = acl.mdl.create_dataset()\n"
            "x, _ = acl.rt.malloc(12288, 0); y, _ = acl.rt.malloc(40, 0)\n"
            "acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(x, 12288))\n"
            "acl.mdl.add_dataset_buffer(outs, acl.create_data_buffer(y, 40))\n"
            "ret = acl.mdl.execute(model_id, ins, outs)\n",
            acl=acl,
            path=str(models["static"]),
        )
    finally:
        hooks.remove_work_listener(got.append)
    ops = [r for r in got if r.kind == "op"]
    assert len(ops) == 16
    assert {r.site.line for r in ops if r.site} == {6}
    stem = ops[0]
    assert (stem.name, stem.op_type, stem.unit) == ("stem", "Conv2D", "AI_CORE")
    assert stem.inputs[0].dtype == "FLOAT16" and stem.flops == 2 * 1 * 32 * 32 * 16 * 27
    assert ops[-1].op_type == "SoftmaxV2"


def test_genuine_and_newer_models_are_refused_clearly(
    dev: ModuleType, models: dict[str, Path], tmp_path: Path
) -> None:
    acl = dev
    huawei = tmp_path / "resnet50.om"
    huawei.write_bytes(b"IMOD" + b"\0" * 252)
    assert acl.mdl.load_from_file(str(huawei)) == (0, 200006)
    msg = acl.get_recent_err_msg()
    assert "a Huawei offline model" in msg and "ascend-lens atc --framework=5" in msg
    data = bytearray(models["static"].read_bytes())
    struct.pack_into("<I", data, 8, om.VERSION + 1)
    newer = tmp_path / "newer.om"
    newer.write_bytes(bytes(data))
    assert acl.mdl.load_from_file(str(newer)) == (0, 100012)
    assert "format version 2" in acl.get_recent_err_msg()
    assert acl.mdl.query_size(str(newer)) == (0, 0, 100012)
    assert acl.mdl.load_from_file(str(tmp_path / "missing.om")) == (0, 145002)


def test_load_from_mem(dev: ModuleType, models: dict[str, Path]) -> None:
    acl = dev
    blob = models["static"].read_bytes()
    ptr = acl.util.bytes_to_ptr(blob)
    model_id, ret = acl.mdl.load_from_mem(ptr, len(blob))
    assert ret == 0
    assert acl.mdl.unload(model_id) == 0
    assert acl.mdl.load_from_mem(0, 10) == (0, 100000)


def _run_gear(
    acl: ModuleType, model_id: int, desc: int, x: np.ndarray, set_gear: Any
) -> np.ndarray:
    """Execute on `x` after `set_gear(dataset, index)`; the output as the gear shapes it."""
    index, ret = acl.mdl.get_input_index_by_name(desc, "ascend_mbatch_shape_data")
    assert ret == 0
    sizes = [acl.mdl.get_input_size_by_index(desc, i) for i in range(2)]
    ins, (x_ptr, _) = _dataset(acl, sizes)
    data = x.tobytes()
    assert acl.rt.memcpy(x_ptr, sizes[0], acl.util.bytes_to_ptr(data), len(data), 1) == 0
    outs, (y_ptr,) = _dataset(acl, [acl.mdl.get_output_size_by_index(desc, 0)])
    assert set_gear(ins, index) == 0
    assert acl.mdl.execute(model_id, ins, outs) == 0
    dims = acl.mdl.get_cur_output_dims(desc, 0)[0]["dims"]
    out = bytes(int(np.prod(dims)) * 4)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), len(out), y_ptr, len(out), 2) == 0
    return np.frombuffer(out, np.float32).reshape(dims)


def _ort(onnx_path: Path, x: np.ndarray) -> np.ndarray:
    ort = pytest.importorskip("onnxruntime")

    return ort.InferenceSession(str(onnx_path)).run(None, {"input": x})[0]


def test_dynamic_image_size_and_dynamic_dims(dev: ModuleType, tmp_path: Path) -> None:
    acl = dev
    resnet_onnx.build(tmp_path / "hw.onnx", batch=2, size="S")
    resnet_onnx.build(tmp_path / "dims.onnx", batch="N", size="S")
    hw = _compile(tmp_path, "hw", input_shape="input:2,3,-1,-1", dynamic_image_size="32,32;48,64")
    dims = _compile(
        tmp_path, "dims", input_shape="input:-1,3,-1,-1", dynamic_dims="1,32,32;4,48,48"
    )
    rng = np.random.default_rng(3)

    model_id, _ = acl.mdl.load_from_file(str(hw))
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    assert acl.mdl.get_dynamic_hw(desc, 0) == ({"hwCount": 2, "hw": [[32, 32], [48, 64]]}, 0)
    x = rng.standard_normal((2, 3, 48, 64)).astype(np.float32)
    got = _run_gear(
        acl, model_id, desc, x, lambda ds, i: acl.mdl.set_dynamic_hw_size(model_id, ds, i, 48, 64)
    )
    np.testing.assert_allclose(got, _ort(tmp_path / "hw.onnx", x), atol=3e-3)
    ins, _ = _dataset(acl, [2 * 3 * 48 * 64 * 4, 16])
    assert acl.mdl.set_dynamic_hw_size(model_id, ins, 1, 40, 40) == 145013
    assert acl.mdl.set_dynamic_batch_size(model_id, ins, 1, 2) == 145013  # not a batch model

    model_id, _ = acl.mdl.load_from_file(str(dims))
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    assert acl.mdl.get_input_dynamic_gear_count(desc, 0) == (2, 0)
    gears, ret = acl.mdl.get_input_dynamic_dims(desc, 0, 2)
    assert ret == 0 and [g["dims"] for g in gears] == [[1, 3, 32, 32], [4, 3, 48, 48]]
    x = rng.standard_normal((4, 3, 48, 48)).astype(np.float32)

    def set_dims(ds: int, i: int) -> int:
        return acl.mdl.set_input_dynamic_dims(
            model_id, ds, i, {"name": "", "dimCount": 4, "dims": [4, 3, 48, 48]}
        )

    got = _run_gear(acl, model_id, desc, x, set_dims)
    assert got.shape == (4, 10)
    np.testing.assert_allclose(got, _ort(tmp_path / "dims.onnx", x), atol=3e-3)
    ins, _ = _dataset(acl, [4 * 3 * 48 * 48 * 4, 32])
    wrong = {"name": "", "dimCount": 4, "dims": [4, 3, 40, 40]}
    assert acl.mdl.set_input_dynamic_dims(model_id, ins, 1, wrong) == 145013
    short = {"name": "", "dimCount": 3, "dims": [4, 3, 48]}
    assert acl.mdl.set_input_dynamic_dims(model_id, ins, 1, short) == 145012


def test_reference_evaluator_runs_the_model_without_onnxruntime(
    models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime")
    from npu_runtime.model.executor import Executor

    f = om.loads(models["static"].read_bytes())
    x = np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype(np.float32)
    feeds = {f.header["feeds"][0]: x}
    with_ort = Executor(f.graph, ["prob"])
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    fallback = Executor(f.graph, ["prob"])
    assert (with_ort.backend, fallback.backend) == ("onnxruntime", "onnx.reference")
    np.testing.assert_allclose(fallback.run(feeds)[0], with_ort.run(feeds)[0], rtol=1e-5, atol=1e-7)


def test_output_dataset_tensor_descs_after_execute(
    dev: ModuleType, models: dict[str, Path]
) -> None:
    acl = dev
    model_id, _ = acl.mdl.load_from_file(str(models["dynamic"]))
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    ins, _ = _dataset(acl, [8 * 3 * 32 * 32 * 4, 8])
    outs, _ = _dataset(acl, [acl.mdl.get_output_size_by_index(desc, 0)])
    assert acl.mdl.get_dataset_tensor_desc(outs, 0) == 0
    assert acl.mdl.set_dynamic_batch_size(model_id, ins, 1, 4) == 0
    assert acl.mdl.execute(model_id, ins, outs) == 0
    td = acl.mdl.get_dataset_tensor_desc(outs, 0)
    assert td != 0
    assert [acl.get_tensor_desc_dim(td, i) for i in range(acl.get_tensor_desc_num_dims(td))] == [
        4,
        10,
    ]
    assert acl.get_tensor_desc_type(td) == 0
    assert acl.mdl.set_dataset_tensor_desc(outs, td, 5) == 100000


def test_execute_async_runs_on_the_stream(dev: ModuleType, models: dict[str, Path]) -> None:
    acl = dev
    got: list[WorkRecord] = []
    model_id, _ = acl.mdl.load_from_file(str(models["static"]))
    stream, _ = acl.rt.create_stream()
    x = np.random.default_rng(9).standard_normal((1, 3, 32, 32)).astype(np.float32)
    ins, (x_ptr,) = _dataset(acl, [x.nbytes])
    data = x.tobytes()
    assert acl.rt.memcpy(x_ptr, x.nbytes, acl.util.bytes_to_ptr(data), x.nbytes, 1) == 0
    outs, (y_ptr,) = _dataset(acl, [40])
    hooks.add_work_listener(got.append)
    try:
        assert acl.mdl.execute_async(model_id, ins, outs, stream) == 0
    finally:
        hooks.remove_work_listener(got.append)
    assert acl.rt.synchronize_stream(stream) == 0
    stream_id, _ = acl.rt.stream_get_id(stream)
    assert len(got) == 16 and {r.stream for r in got} == {stream_id}
    assert all(a.end_us <= b.start_us for a, b in zip(got, got[1:], strict=False))  # in order
    out = bytes(40)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), 40, y_ptr, 40, 2) == 0
    want = _ort(models["static"].with_suffix(".onnx"), x)
    np.testing.assert_allclose(np.frombuffer(out, np.float32).reshape(1, 10), want, atol=3e-3)


def test_execute_from_another_devices_context(dev: ModuleType, models: dict[str, Path]) -> None:
    acl = dev
    model_id, _ = acl.mdl.load_from_file(str(models["static"]))
    ins, _ = _dataset(acl, [3 * 32 * 32 * 4])
    outs, _ = _dataset(acl, [40])
    assert acl.rt.set_device(1) == 0
    assert acl.mdl.execute(model_id, ins, outs) == 107004
    assert acl.rt.set_device(0) == 0
    assert acl.mdl.execute(model_id, ins, outs) == 0


def test_two_inputs_two_outputs_and_int64(dev: ModuleType, tmp_path: Path) -> None:
    from onnx import TensorProto, helper, numpy_helper

    acl = dev
    table = numpy_helper.from_array(np.arange(40, dtype=np.float32).reshape(10, 4) / 10, "table")
    g = helper.make_graph(
        [
            helper.make_node("Gather", ["table", "ids"], ["emb"], name="embed"),
            helper.make_node("MatMul", ["emb", "w"], ["proj"], name="proj"),
            helper.make_node("ReduceSum", ["proj"], ["total"], name="sum", keepdims=0),
        ],
        "two",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["b", 3]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 5]),
        ],
        [
            helper.make_tensor_value_info("proj", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("total", TensorProto.FLOAT, None),
        ],
        [table],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    (tmp_path / "two.onnx").write_bytes(m.SerializeToString())
    path = _compile(
        tmp_path, "two", input_shape="ids:2,3;w:4,5", precision_mode="must_keep_origin_dtype"
    )
    model_id, ret = acl.mdl.load_from_file(str(path))
    assert ret == 0
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    assert [acl.mdl.get_input_name_by_index(desc, i) for i in range(2)] == ["ids", "w"]
    assert [acl.mdl.get_input_data_type(desc, i) for i in range(2)] == [9, 0]  # INT64, FLOAT
    assert acl.mdl.get_output_index_by_name(desc, "total") == (1, 0)
    assert acl.mdl.get_output_dims(desc, 0)[0]["dims"] == [2, 3, 5]
    assert acl.mdl.get_output_dims(desc, 1)[0]["dims"] == []
    ids = np.array([[1, 2, 3], [9, 0, 4]], np.int64)
    w = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    ins, ptrs = _dataset(acl, [ids.nbytes, w.nbytes])
    for a, p in zip((ids, w), ptrs, strict=True):
        data = a.tobytes()
        assert acl.rt.memcpy(p, a.nbytes, acl.util.bytes_to_ptr(data), a.nbytes, 1) == 0
    outs, (p_ptr, t_ptr) = _dataset(acl, [2 * 3 * 5 * 4, 4])
    assert acl.mdl.execute(model_id, ins, outs) == 0
    proj = bytes(120)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(proj), 120, p_ptr, 120, 2) == 0
    want = (np.arange(40, dtype=np.float32).reshape(10, 4) / 10)[ids] @ w
    np.testing.assert_allclose(np.frombuffer(proj, np.float32).reshape(2, 3, 5), want, rtol=1e-6)
    total = bytes(4)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(total), 4, t_ptr, 4, 2) == 0
    assert np.frombuffer(total, np.float32)[0] == pytest.approx(float(want.sum()), rel=1e-5)
