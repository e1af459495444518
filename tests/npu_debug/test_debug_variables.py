"""Device tensors in the variables view: summarised and paged, read without running ops."""

from __future__ import annotations

from dap_client import DapClient, line_of


def children(dap: DapClient, ref: int) -> list[dict]:
    return dap.ok("variables", {"variablesReference": ref})["variables"]


def test_large_device_tensor_is_summarised_and_paged(dap: DapClient, program) -> None:
    path = program("tensors.py")
    dap.start({"program": str(path)}, breakpoints={str(path): [line_of(path, "inspect")]})
    stopped = dap.stopped()
    frame = dap.top_frame(stopped["threadId"])
    variables = dap.locals(frame["id"])
    assert variables["big"]["value"] == (
        "Tensor(shape=[1000, 1000], dtype=float32, device=npu:0) [0, 1, 2, 3, ...]"
    )
    assert variables["small"]["value"] == (
        "Tensor(shape=[2, 3], dtype=float16, device=npu:0) [0, 1, 2, 3, ...]"
    )
    # The result of an op is read from device memory as computed.
    assert variables["total"]["value"].endswith("[0, 2, 4, 6, ...]")

    fields = {v["name"]: v for v in children(dap, variables["big"]["variablesReference"])}
    assert [v for v in fields] == ["shape", "dtype", "device", "nbytes", "address", "values"]
    assert fields["shape"]["value"] == "(1000, 1000)"
    assert fields["nbytes"]["value"] == "4000000"
    # A million values: 100 ranges of 10,000, then 100 of 100, then the values themselves.
    level1 = children(dap, fields["values"]["variablesReference"])
    assert len(level1) == 100
    assert [v["name"] for v in level1[:2]] == ["[0:10000]", "[10000:20000]"]
    level2 = children(dap, level1[1]["variablesReference"])
    assert len(level2) == 100
    assert level2[0]["name"] == "[10000:10100]"
    leaf = children(dap, level2[0]["variablesReference"])
    assert [(v["name"], v["value"]) for v in leaf[:2]] == [
        ("[10, 0]", "10000.0"),
        ("[10, 1]", "10001.0"),
    ]
    assert len(leaf) == 100

    # Inspecting ran nothing on the device: the profile at exit equals the one at the stop.
    at_stop = dap.find(lambda m: m.get("event") == "ascendProfile")
    assert at_stop is not None
    dap.ok("continue", {"threadId": stopped["threadId"]})
    final = dap.event("ascendProfile")
    assert final["op_count"] == at_stop["body"]["op_count"]
    assert final["top_ops"] == at_stop["body"]["top_ops"]
    assert {op["op_type"]: op["count"] for op in final["top_ops"]}["Add"] == 1
    assert dap.event("exited")["exitCode"] == 0
