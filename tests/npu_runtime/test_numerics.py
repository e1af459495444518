"""The numerics table: dtype codes as the CANN headers define them, rounding rules, check mode."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from npu_runtime import numerics
from npu_runtime.acl._objects import DTYPE_SIZES

API_MD = Path(__file__).resolve().parents[3] / "shared" / "reference" / "acl" / "api.md"
ACL_NAMES = {
    "float32": "ACL_FLOAT", "float16": "ACL_FLOAT16", "int8": "ACL_INT8", "int32": "ACL_INT32",
    "uint8": "ACL_UINT8", "int16": "ACL_INT16", "uint16": "ACL_UINT16", "uint32": "ACL_UINT32",
    "int64": "ACL_INT64", "uint64": "ACL_UINT64", "float64": "ACL_DOUBLE", "bool": "ACL_BOOL",
    "bfloat16": "ACL_BF16",
}  # fmt: skip


def test_acl_codes_match_the_headers() -> None:
    text = API_MD.read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("**aclDataType**"))
    header = {m[1]: int(m[2]) for m in re.finditer(r"(ACL_[A-Z0-9_]+)=(-?\d+)", line)}
    for d in numerics.DTYPES:
        assert header[ACL_NAMES[d.name]] == d.acl, d.name
        assert DTYPE_SIZES[d.acl] == d.itemsize, d.name
        assert numerics.by_acl(d.acl) is d and numerics.by_numpy(d.np) is d


def test_lookups() -> None:
    assert numerics.msprof_name(np.dtype(np.float16)) == "FLOAT16"
    assert numerics.msprof_name(numerics.BFLOAT16) == "BF16"
    assert numerics.by_acl(29) is None  # int4: not emulated
    with pytest.raises(KeyError, match="bfloat16"):
        numerics.by_name("half")
    assert numerics.accumulator(np.dtype(np.float16)) == np.float32
    assert numerics.accumulator(numerics.BFLOAT16) == np.float32
    assert numerics.accumulator(np.dtype(np.int8)) == np.int32


def test_round_to_device_rules() -> None:
    f16 = numerics.round_to(
        np.array([65504.0, 65520.0, 1e-8, -1e-8], np.float32), np.dtype(np.float16)
    )
    assert f16[0] == 65504 and np.isposinf(f16[1]) and f16[2] == 0 and np.signbit(f16[3])
    ints = numerics.round_to(np.array([2.7, -2.7, 300, np.nan, -np.inf]), np.dtype(np.uint8))
    assert ints.tolist() == [2, 0, 255, 0, 0]
    bf = numerics.round_to(np.array([1.0, 2.0], numerics.BFLOAT16), np.dtype(np.int32))
    assert bf.tolist() == [1, 2]


def test_first_nonfinite() -> None:
    ok = np.ones(3, np.float16)
    assert numerics.first_nonfinite([ok, np.arange(3)]) is None
    assert numerics.first_nonfinite([ok, np.array([1, np.inf], np.float32)]) == (1, "Inf")
    assert numerics.first_nonfinite([np.array([np.nan, np.inf], numerics.BFLOAT16)]) == (0, "NaN")


def test_quiet_silences_float_warnings_and_restores_the_state() -> None:
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with numerics.quiet():
            with numerics.quiet():
                big = np.array([60000], np.float16) * np.float16(2)
            z = np.array([1.0]) / 0.0
    assert np.isposinf(big[0]) and np.isposinf(z[0])
    assert np.geterr() == before


@pytest.mark.parametrize("value,expected", [("1", True), ("0", False), ("", False)])
def test_check_mode_from_the_environment(value: str, expected: bool) -> None:
    env = {**os.environ, "NPU_CHECK_NUMERICS": value}
    code = "from npu_runtime import numerics; print(numerics.check_numerics_enabled())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == str(expected)


def test_set_check_numerics_returns_the_previous_setting() -> None:
    first = numerics.set_check_numerics(True)
    try:
        assert numerics.check_numerics_enabled() is True
        assert numerics.set_check_numerics(False) is True
        assert numerics.check_numerics_enabled() is False
    finally:
        numerics.set_check_numerics(first)
