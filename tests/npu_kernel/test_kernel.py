"""The installed kernelspec started with jupyter_client's KernelManager, as Jupyter does."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from tests.npu_kernel.conftest import execute, of_type, shell_reply, stdout

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def plain(lines: list[str]) -> str:
    return ANSI.sub("", "\n".join(lines))


def test_kernel_info_identifies_the_npu_kernel(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    reply = kc.kernel_info(reply=True, timeout=30)["content"]
    assert reply["implementation"] == "ascend-npu"
    assert reply["language_info"]["name"] == "python"
    assert "Ascend NPU" in reply["banner"]


def test_stdout_and_execute_result(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    reply, msgs = execute(kc, "print('hello npu')\n6 * 7")
    assert reply["status"] == "ok"
    assert stdout(msgs) == "hello npu\n"
    assert of_type(msgs, "execute_result")[0]["data"]["text/plain"] == "42"


def test_acl_and_npu_runtime_import_at_once(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    reply, msgs = execute(kc, "import npu_runtime, sys\nprint('npu_runtime' in sys.modules)")
    assert reply["status"] == "ok", msgs
    assert stdout(msgs) == "True\n"


def test_completion_and_inspection_are_ipythons(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    execute(kc, "npu_value_for_completion = 1")
    content = kc.complete("npu_value_for_c", reply=True, timeout=30)["content"]
    assert "npu_value_for_completion" in content["matches"]
    content = kc.inspect("len", reply=True, timeout=30)["content"]
    assert content["found"] is True


def test_acl_error_shows_code_meaning_fix_and_cell_line(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    code = (
        "from npu_runtime.core.runtime import get_runtime\n"
        "get_runtime().reset()\n"
        "get_runtime().set_device(0)  # acl.init() was never called\n"
    )
    reply, msgs = execute(kc, code)
    assert reply["status"] == "error"
    assert reply["ename"] == "AclError"
    error = of_type(msgs, "error")[0]
    text = plain(error["traceback"])
    assert "ACL error 100001 ACL_ERROR_UNINITIALIZE in aclrtSetDevice" in text
    assert "meaning:" in text and "fix:" in text
    count = reply["execution_count"]
    assert f"at: Cell In[{count}], line 3" in text
    assert "get_runtime().set_device(0)" in text
    # Frames inside our packages are hidden, with the way to see them.
    assert "runtime.py" not in text
    assert "%tb shows them" in text


def test_full_traceback_is_one_magic_away(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    execute(kc, "from npu_runtime.core.runtime import get_runtime\nget_runtime().set_device(0)")
    _, msgs = execute(kc, "%tb")
    text = ANSI.sub(
        "", stdout(msgs) + "".join("".join(e["traceback"]) for e in of_type(msgs, "error"))
    )
    assert "npu_runtime/core/runtime.py" in text


def test_other_exceptions_keep_ipythons_traceback(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    reply, msgs = execute(kc, "1 / 0")
    assert reply["ename"] == "ZeroDivisionError"
    assert "ZeroDivisionError" in plain(of_type(msgs, "error")[0]["traceback"])


def _open_state_comm(kc: Any) -> str:
    comm_id = uuid.uuid4().hex
    msg = kc.session.msg(
        "comm_open", {"comm_id": comm_id, "target_name": "ascend-lens.state", "data": {}}
    )
    kc.shell_channel.send(msg)
    return comm_id


def _comm_messages(kc: Any, comm_id: str, count: int, timeout: float = 30) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while len(found) < count and time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.1))
        if msg["header"]["msg_type"] == "comm_msg" and msg["content"]["comm_id"] == comm_id:
            found.append(msg["content"]["data"])
    return found


def test_state_comm_pushes_after_each_execution(fresh_kernel: tuple[Any, Any]) -> None:
    _, kc = fresh_kernel
    # Nothing heavy at start: the runtime (and numpy) load on first use; only the shim's
    # locator (npu_runtime/_shim, under the package's empty __init__) is loaded.
    _, msgs = execute(
        kc,
        "import sys\nprint('numpy' in sys.modules, "
        "sorted(m for m in sys.modules if m.startswith('npu_runtime')))",
    )
    assert stdout(msgs) == "False ['npu_runtime', 'npu_runtime._shim']\n"
    reply, msgs = execute(kc, "%npu")  # before any runtime call: says so, starts nothing
    assert "has not started yet" in of_type(msgs, "display_data")[0]["data"]["text/plain"]
    comm_id = _open_state_comm(kc)
    (first,) = _comm_messages(kc, comm_id, 1)
    assert first["type"] == "state" and first["reason"] == "open"
    assert first["state"]["schema"] == "ascend-lens.state/1"
    assert first["state"]["started"] is False

    kc.execute(
        "from npu_runtime.core.runtime import get_runtime\n"
        "rt = get_runtime(); rt.init(); rt.set_device(1)\n"
    )
    (pushed,) = _comm_messages(kc, comm_id, 1)
    assert pushed["reason"] == "execute"
    state = pushed["state"]
    assert state["started"] is True and state["initialized"] is True
    assert [d["id"] for d in state["devices"]] == [1]
    assert state["devices"][0]["streams"][0]["default"] is True

    kc.shell_channel.send(
        kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"request": "state"}})
    )
    (asked,) = _comm_messages(kc, comm_id, 1)
    assert asked["reason"] == "request"


def test_restart_gives_a_clean_runtime_and_shutdown_ends_it(fresh_kernel: tuple[Any, Any]) -> None:
    km, kc = fresh_kernel
    execute(
        kc,
        "from npu_runtime.core.runtime import get_runtime\n"
        "rt = get_runtime(); rt.init(); rt.set_device(0)\nmarker = 1",
    )
    km.restart_kernel(now=False)
    kc.wait_for_ready(timeout=60)
    reply, msgs = execute(
        kc,
        "from npu_runtime.core.runtime import get_runtime\n"
        "print('marker' in dir(), get_runtime().initialized, get_runtime().devices)",
    )
    assert stdout(msgs) == "False False {}\n"
    km.shutdown_kernel(now=False)
    assert not km.is_alive()


def test_interrupt_inside_a_long_op_leaves_no_stale_state(fresh_kernel: tuple[Any, Any]) -> None:
    km, kc = fresh_kernel
    execute(
        kc,
        "import acl, time\n"
        "from npu_runtime.core import hooks\n"
        "from npu_runtime.core.launch import submit\n"
        "from npu_runtime.core.runtime import get_runtime\n"
        "acl.init(); acl.rt.set_device(0)\n"
        "p, _ = acl.rt.malloc(4096, 0)\n"
        "def slow():\n"
        "    print('in op', flush=True)\n"
        "    while True:\n"
        "        time.sleep(0.01)\n",
    )
    listeners_before = execute(kc, "print(len(hooks.work_listeners))")[1]
    msg_id = kc.execute(
        "%%npu_profile\n"
        "submit(0, name='Fast_1', op_type='Add', cost={'duration_us': 1.0})\n"
        "submit(0, name='Slow_1', op_type='Slow', cost={'duration_us': 1.0}, compute=slow)\n"
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=30)
        if msg["header"]["msg_type"] == "stream" and "in op" in msg["content"]["text"]:
            break
    km.interrupt_kernel()
    profile = None
    while True:
        msg = kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["header"]["msg_type"] == "display_data":
            profile = msg["content"]["data"].get("application/vnd.ascend-lens.profile+json")
        if msg["header"]["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    reply = shell_reply(kc, msg_id)["content"]
    assert reply["ename"] == "KeyboardInterrupt"
    # The partial profile still shows the work that ran before the interrupt.
    assert profile is not None and profile["op_count"] == 1

    _, msgs = execute(
        kc,
        "dev = get_runtime().devices[0]\n"
        "print(len(hooks.work_listeners))\n"
        "print([len(s.pending) for s in dev.streams.values()], len(dev.memory.live))\n"
        "rec = submit(0, name='Add_2', op_type='Add', cost={'duration_us': 1.0})\n"
        "print(rec.task_id, acl.rt.synchronize_stream(0))\n",
    )
    # No profiler listener left behind, nothing half-enqueued, memory intact, and the
    # interrupted op never took a task id.
    assert stdout(msgs) == stdout(listeners_before) + "[0] 1\n2 0\n"


def test_debug_requests_reach_ipykernels_debugger(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    request = {
        "type": "request",
        "seq": 1,
        "command": "initialize",
        "arguments": {"clientID": "test", "adapterID": "python", "pathFormat": "path"},
    }
    msg = kc.session.msg("debug_request", request)
    kc.control_channel.send(msg)
    while True:
        reply = kc.control_channel.get_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            break
    assert reply["header"]["msg_type"] == "debug_reply"
    assert reply["content"]["success"] is True
    assert reply["content"]["command"] == "initialize"


def test_config_flag_makes_full_tracebacks_the_default(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    execute(kc, "%config NpuKernel.full_traceback = True")
    try:
        reply, msgs = execute(
            kc,
            "from npu_runtime.core.runtime import get_runtime\n"
            "get_runtime().reset()\n"
            "get_runtime().set_device(0)",
        )
    finally:
        execute(kc, "%config NpuKernel.full_traceback = False")
    text = plain(of_type(msgs, "error")[0]["traceback"])
    assert "ACL error 100001 ACL_ERROR_UNINITIALIZE" in text
    assert "npu_runtime/core/runtime.py" in text
    assert "%tb shows them" not in text
