"""The adapter's pure parts: launch config, debugpy launch arguments, descriptions, side channel."""

from __future__ import annotations

import json
import socket
import sys
import threading
from pathlib import Path

import pytest

from npu_debug import config, debuggee, describe
from npu_debug.bootstrap import CONFIG_ENV
from npu_debug.channel import ChannelListener, LineSocket, connect


def test_parse_defaults_and_passthrough(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("")
    cfg = config.parse({"program": "s.py", "cwd": str(tmp_path), "stopOnEntry": True, "name": "x"})
    assert cfg.program == str(script)
    assert (cfg.profile, cfg.sanitizer, cfg.stop_on_acl_error, cfg.just_my_code) == (
        True,
        True,
        True,
        True,
    )
    assert cfg.python == (sys.executable,)
    assert cfg.passthrough == {"stopOnEntry": True, "name": "x"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"module": "m", "device": "Ascend999"},
            "launch attribute 'device': unknown device 'Ascend999'",
        ),
        (
            {"module": "m", "inject": "aclrtMalloc:x:1"},
            "launch attribute 'inject': bad injection spec",
        ),
        ({"module": "m", "devices": True}, "'devices' must be a positive integer, got True"),
        ({"module": "m", "profile": 3}, "'profile' must be true, false or a directory"),
        ({"module": "m", "python": ["py", 3]}, "'python' must be a string or a list of strings"),
    ],
)
def test_parse_rejects_with_the_attribute_named(args: dict, message: str) -> None:
    with pytest.raises(config.ConfigError, match=None) as info:
        config.parse(args)
    assert message in str(info.value)


def test_debugpy_launch_runs_the_bootstrap_with_the_runtime_settings(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("")
    cfg = config.parse(
        {
            "program": str(script),
            "args": ["a"],
            "device": "Ascend910B4",
            "devices": 2,
            "sanitizer": False,
            "inject": ["aclrtMalloc:2:207001", "op:Add:1:507015"],
            "profile": "prof",
            "cwd": str(tmp_path),
            "env": {"KEEP": "1", "DROP": None},
            "rules": [{"module": "x", "include": False}],
            "type": "ascend-npu",
        }
    )
    args = debuggee.debugpy_launch(cfg, "127.0.0.1:1:tok")
    assert args["module"] == "npu_debug.bootstrap"
    assert args["args"] == ["--program", str(script), "--", "a"]
    env = args["env"]
    assert (env["NPU_DEVICE"], env["NPU_DEVICES"], env["NPU_SANITIZE"]) == ("Ascend910B4", "2", "0")
    assert env["NPU_INJECT"] == "aclrtMalloc:2:207001,op:Add:1:507015"
    assert env["KEEP"] == "1" and "DROP" not in env
    settings = json.loads(env[CONFIG_ENV])
    assert settings["channel"] == "127.0.0.1:1:tok"
    assert settings["profileDir"] == str(tmp_path / "prof")
    assert settings["unset"] == ["DROP"]
    repo = Path(__file__).resolve().parents[2]
    assert env["PYTHONPATH"].split(":")[:2] == [str(repo / "npu_runtime" / "_shim"), str(repo)]
    assert "type" not in args
    # The user's rules first, then ours: our packages only, never the whole checkout (a user
    # program in examples/ is still the user's code).
    assert args["rules"] == [
        {"module": "x", "include": False},
        {"path": str(repo / "npu_runtime"), "include": False},
        {"path": str(repo / "server" / "npu_debug"), "include": False},
        {"path": str(repo / "kernel" / "npu_kernel"), "include": False},
    ]


SYNC_FAILURE = {
    "code": 507015,
    "name": "ACL_ERROR_RT_AICORE_EXCEPTION",
    "meaning": "An AI Core kernel raised an exception.",
    "fix": "Check the launch.",
    "api": "aclrtSynchronizeStream",
    "kind": "error",
    "detail": "",
    "site": {"file": "/w/t.py", "line": 21, "function": "<module>"},
    "launch_site": {"file": "/w/t.py", "line": 17, "function": "<module>"},
}


def test_stopped_description_for_an_async_failure() -> None:
    assert describe.stopped_description(SYNC_FAILURE) == (
        "ACL error ACL_ERROR_RT_AICORE_EXCEPTION (507015) in aclrtSynchronizeStream: "
        "An AI Core kernel raised an exception. "
        "(launched at t.py:17, surfaced at synchronisation on t.py:21)"
    )


def test_exception_info_lists_the_sites() -> None:
    finding = {
        **SYNC_FAILURE,
        "kind": "sanitizer",
        "check": "use-after-free",
        "launch_site": None,
        "alloc_site": {"file": "/w/t.py", "line": 3},
        "free_site": {"file": "/w/t.py", "line": 5},
    }
    body = describe.exception_info(finding)
    assert body["exceptionId"] == "ACL_ERROR_RT_AICORE_EXCEPTION"
    assert body["description"].startswith(
        "ACL sanitizer: use-after-free, ACL_ERROR_RT_AICORE_EXCEPTION (507015)"
    )
    assert body["details"]["stackTrace"].splitlines()[-2:] == [
        "Allocated at /w/t.py:3",
        "Freed at /w/t.py:5",
    ]
    assert "Surfaced at" not in body["details"]["stackTrace"]  # not a deferred failure


def test_side_channel_request_reply_and_token_check() -> None:
    seen: list[dict] = []

    def on_message(conn: LineSocket, message: dict) -> None:
        seen.append(message)
        if "request" in message:
            conn.reply(message["seq"], {"echo": message["body"]})

    listener = ChannelListener(on_message)
    try:
        # A stranger with the wrong token is dropped without a word.
        stranger = socket.create_connection(listener.address)
        stranger.sendall(b'{"hello": "wrong"}\n')
        assert stranger.recv(10) == b""
        stranger.close()
        conn = connect(listener.endpoint)
        threading.Thread(target=conn.read, daemon=True).start()
        assert listener.connected.wait(5)
        assert conn.request("ping", {"n": 1}) == {"echo": {"n": 1}}
        conn.send({"event": "profile", "body": {}})
        conn.close()
        assert listener.closed.wait(5)
        assert [m.get("request") or m.get("event") for m in seen] == ["ping", "profile"]
    finally:
        listener.close()


def test_precision_attributes_reach_the_bootstrap(tmp_path: Path) -> None:
    cfg = config.parse(
        {
            "module": "m",
            "cwd": str(tmp_path),
            "dump": "d",
            "dumpLevel": "tensor",
            "numerics": "float64",
            "profileAscendPt": True,
        }
    )
    assert "dumpLevel" not in cfg.passthrough and "numerics" not in cfg.passthrough
    env = debuggee.debugpy_launch(cfg, "127.0.0.1:1:tok")["env"]
    assert env["NPU_NUMERICS"] == "float64"
    settings = json.loads(env[CONFIG_ENV])
    assert (settings["dump"], settings["dumpLevel"]) == (str(tmp_path / "d"), "tensor")
    assert settings["profileAscendPt"] is True
    plain = debuggee.debugpy_launch(config.parse({"module": "m"}), "127.0.0.1:1:tok")["env"]
    assert "NPU_NUMERICS" not in json.loads(plain[CONFIG_ENV]) and "NPU_NUMERICS" not in plain
    assert json.loads(plain[CONFIG_ENV])["dump"] is None
