"""The error table against the reference headers, the knowledge base, and AclError."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from npu_runtime.errors import AclError, all_codes, codes, constants, lookup, name_of
from npu_runtime.records import SourceSite

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "acl"


def _reference_codes() -> list[dict[str, object]]:
    return json.loads((REFERENCE / "error_codes.json").read_text())["codes"]


def test_every_reference_constant_has_its_exact_value() -> None:
    ref = _reference_codes()
    table = constants()
    assert len(table) == len(ref)
    for row in ref:
        assert table[row["name"]] == row["value"], row["name"]
        assert getattr(codes, row["name"]) == row["value"]


def test_every_code_has_meaning_cause_and_fix() -> None:
    for info in all_codes():
        assert info.meaning, info.name
        if info.code != 0:
            assert info.cause and info.fix, info.name


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (0, "ACL_SUCCESS"),
        (100000, "ACL_ERROR_INVALID_PARAM"),
        (100002, "ACL_ERROR_REPEAT_INITIALIZE"),
        (107002, "ACL_ERROR_RT_CONTEXT_NULL"),
        (207001, "ACL_ERROR_RT_MEMORY_ALLOCATION"),
        (507015, "ACL_ERROR_RT_AICORE_EXCEPTION"),
        (145000, "ACL_ERROR_GE_PARAM_INVALID"),
    ],
)
def test_name_of(code: int, name: str) -> None:
    assert name_of(code) == name


def test_shared_value_lists_every_alias() -> None:
    info = lookup(507053)
    assert set(info.aliases) == {"ACL_ERROR_RT_DEVICE_MEM_ERROR", "ACL_ERROR_RT_DEVICE_MTE_ERROR"}


def test_unknown_code_says_so() -> None:
    info = lookup(123456)
    assert info.name == "UNKNOWN_ERROR_123456"
    assert "not in the" in info.meaning


def test_acl_error_carries_code_name_fix_api_and_sites() -> None:
    site = SourceSite("/u/train.py", 12, "main")
    launch = SourceSite("/u/train.py", 9, "main")
    err = AclError(507015, "aclrtSynchronizeStream", site=site, launch_site=launch)
    assert (err.code, err.name, err.api, err.kind) == (
        507015,
        "ACL_ERROR_RT_AICORE_EXCEPTION",
        "aclrtSynchronizeStream",
        "error",
    )
    assert err.meaning == lookup(507015).meaning and err.fix == lookup(507015).fix
    assert "/u/train.py:12" in str(err) and "launched at /u/train.py:9" in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert (again.code, again.site, again.launch_site) == (507015, site, launch)


def test_errors_import_without_numpy() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, npu_runtime.errors as e; e.lookup(107000); print('numpy' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"
