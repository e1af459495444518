"""The abstract-value lattice and MindSpore's join (server/npu_lsp/rules/graphmode/abstract.py).

Two layers: the join itself over generated pairs of values (idempotence, symmetry, the
unknown value absorbing everything, and the lax/strict error table measured on MindSpore
2.10), and the checker over fixtures/joins/joins.py, one `@ms.jit` function per join kind,
each judged by MindSpore 2.10 at both levels (judge_joins.py wrote labels.json): the checker
must report an error inside exactly the functions MindSpore rejects.
"""

from __future__ import annotations

import ast
import itertools
import json
from dataclasses import replace

import pytest
from engine_support import FIXTURES

from npu_lsp.config import Config
from npu_lsp.engine import check_path
from npu_lsp.rules.graphmode import abstract as av

STORE = FIXTURES / "joins"
CASE = STORE / "joins.py"
LABELS: dict[str, dict[str, str]] = json.loads((STORE / "labels.json").read_text())
KNOWN: dict[str, dict[str, str]] = json.loads((STORE / "known_misses.json").read_text())
LEVELS = ("lax", "strict")

DTYPES = ("float32", "float16", "int32", "int64", "bool", None)
POOL: list[av.Value] = [
    av.UNKNOWN,
    av.NONE,
    av.constant(1),
    av.constant(2),
    av.constant(1.5),
    av.constant(True),
    av.constant("a"),
    av.constant("b"),
    av.Scalar("int"),
    av.Scalar("float"),
    av.Scalar(""),
    av.Str(),
    *(av.Tensor(d) for d in DTYPES),
    av.Tensor("float32", 2),
    av.Tensor("float32", 1),
    av.Tensor("float32", shape=(2, 3)),
    av.Sequence("tuple", (av.Tensor("float32"), av.Tensor("float32"))),
    av.Sequence("tuple", (av.Tensor("float32"),) * 3),
    av.Sequence("tuple", (av.Tensor("float32"), av.constant(1))),
    av.Sequence("tuple", (av.Tensor("float32"), av.constant(2.0))),
    av.Sequence("tuple", (av.Tensor("int32"), av.Tensor("float32"))),
    av.Sequence("tuple", (av.Tensor("float32"), av.NONE)),
    av.Sequence("tuple", (av.NONE, av.Tensor("float32"))),
    av.Sequence("tuple"),
    av.Sequence("list", (av.Tensor("float32"), av.Tensor("float32"))),
    av.Sequence("list"),
    av.shape_of(av.Tensor("float32", 2)),
    av.Dict(("a",)),
    av.Dict(),
    av.DType("float32"),
    av.DType("int32"),
    av.Opaque("cell", "Net"),
    av.Opaque("function", "f"),
]
SITES = tuple(av.Site)


@pytest.mark.parametrize("site", SITES, ids=lambda s: s.value)
def test_join_is_idempotent(site: av.Site) -> None:
    for v in POOL:
        j = av.join(v, v, site)
        assert j.value == v and j.error is None, v


def _none_second_in_sequence(a: av.Value, b: av.Value) -> bool:
    """The measured asymmetry: an element against None inside two tuples or lists."""
    if not (isinstance(a, av.Sequence) and isinstance(b, av.Sequence) and a.elements and b.elements):
        return False
    return any(
        (x == av.NONE) != (y == av.NONE) for x, y in zip(a.elements, b.elements, strict=False)
    )


@pytest.mark.parametrize("site", SITES, ids=lambda s: s.value)
def test_join_is_symmetric_in_value_and_verdict(site: av.Site) -> None:
    for a, b in itertools.combinations(POOL, 2):
        if _none_second_in_sequence(a, b):
            continue
        ab, ba = av.join(a, b, site), av.join(b, a, site)
        assert ab.value == ba.value, (a, b)
        assert (ab.error is None) == (ba.error is None), (a, b)
        if ab.error is not None and ba.error is not None:
            assert ab.error.strict_only == ba.error.strict_only, (a, b)


@pytest.mark.parametrize("site", SITES, ids=lambda s: s.value)
def test_unknown_joins_with_everything_silently(site: av.Site) -> None:
    for v in POOL:
        assert av.join(av.UNKNOWN, v, site) == av.Joined(av.UNKNOWN) or v == av.UNKNOWN


def test_join_never_makes_a_value_more_precise() -> None:
    """The joined value is an upper bound: joining it again with either side changes nothing."""
    for a, b in itertools.combinations(POOL, 2):
        j = av.join(a, b, av.Site.RETURN)
        if j.error is None:
            assert av.join(j.value, a, av.Site.RETURN).value == j.value, (a, b)
            assert av.join(j.value, b, av.Site.RETURN).value == j.value, (a, b)


F32, I32, F16 = av.Tensor("float32"), av.Tensor("int32"), av.Tensor("float16")
T2 = av.Sequence("tuple", (F32, F32))
T3 = av.Sequence("tuple", (F32, F32, F32))
L2 = av.Sequence("list", (F32, F32))

#: (left, right, site) -> None (joins), "both" (error at every level) or "strict";
#: the MindSpore text where the probe in joins.py showed it.
TABLE: list[tuple[av.Value, av.Value, av.Site, str | None, str]] = [
    (F32, av.Tensor("float32", 1), av.Site.RETURN, None, ""),
    (F32, I32, av.Site.RETURN, "both", "dtype1 = Float32, dtype2 = Int32"),
    (I32, F32, av.Site.PHI, "both", "dtype1 = Int32, dtype2 = Float32"),
    (F16, F32, av.Site.IFEXP, "both", "dtype1 = Float16, dtype2 = Float32"),
    (av.Tensor("bool"), F32, av.Site.BOOLOP, "both", "dtype1 = Bool, dtype2 = Float32"),
    (F32, av.constant(1), av.Site.RETURN, "both", "Abstract type AbstractTensor cannot join with AbstractScalar"),
    (F32, av.constant(1.0), av.Site.PHI, "both", "Abstract type AbstractTensor cannot join with AbstractScalar"),
    (F32, av.constant(1), av.Site.LOOP, "both", "Abstract type AbstractTensor cannot join with AbstractScalar"),
    (T2, F32, av.Site.PHI, "both", "Abstract type AbstractTuple cannot join with AbstractTensor"),
    (T2, L2, av.Site.RETURN, "both", "Abstract type AbstractTuple cannot join with AbstractList"),
    (T2, T3, av.Site.RETURN, None, ""),
    (L2, av.Sequence("list", (F32,) * 3), av.Site.PHI, None, ""),
    (
        av.Sequence("tuple", (F32, av.constant(1))),
        av.Sequence("tuple", (F32, av.constant(2.0))),
        av.Site.PHI,
        "both",
        "dtype1 = Int64, dtype2 = Float32",
    ),
    (av.Sequence("tuple", (F32, av.constant(1))), T2, av.Site.RETURN, "both", "Abstract type AbstractScalar cannot join with AbstractTensor"),
    (av.shape_of(av.Tensor("float32", 2)), av.constant((1, 2, 3)), av.Site.PHI, None, ""),
    (av.NONE, F32, av.Site.RETURN, "strict", "Abstract type AbstractNone cannot join with AbstractTensor"),
    (av.NONE, F32, av.Site.PHI, "strict", "Abstract type AbstractNone cannot join with AbstractTensor"),
    (av.NONE, av.constant(1), av.Site.RETURN, "strict", ""),
    (av.NONE, av.constant(1), av.Site.PHI, "strict", ""),
    (av.NONE, av.NONE, av.Site.RETURN, None, ""),
    # inside a tuple or list the order of the paths matters at lax (tup_*none* probes)
    (T2, av.Sequence("tuple", (F32, av.NONE)), av.Site.RETURN, "both", "dtype1 = Float32, dtype2 = Float64"),
    (av.Sequence("tuple", (F32, av.NONE)), T2, av.Site.RETURN, "strict", ""),
    (av.Sequence("tuple", (F32, av.constant(1))), av.Sequence("tuple", (F32, av.NONE)), av.Site.PHI, "both", "dtype1 = Int64, dtype2 = Any"),
    (av.Sequence("list", (F32, F32)), av.Sequence("list", (F32, av.NONE)), av.Site.IFEXP, "both", "dtype1 = Float32, dtype2 = Float64"),
    (av.Sequence("tuple", (F32, av.constant("a"))), av.Sequence("tuple", (F32, av.NONE)), av.Site.RETURN, "both", "dtype1 = String, dtype2 = Any"),
    (av.constant(1), av.constant(2), av.Site.RETURN, None, ""),
    (av.constant(1), av.constant(2.0), av.Site.RETURN, "both", "dtype1 = Int64, dtype2 = Float32"),
    (av.constant(1), av.constant(True), av.Site.RETURN, "both", "dtype1 = Int64, dtype2 = Bool"),
    (av.constant("a"), av.constant(1), av.Site.RETURN, "both", "dtype1 = String, dtype2 = Int64"),
    (av.constant(1), av.constant(2.0), av.Site.PHI, None, ""),
    (av.constant("a"), av.constant(1), av.Site.PHI, None, ""),
    (av.constant(0), av.constant(0.5), av.Site.LOOP, None, ""),
    (av.constant(1), av.constant(2.0), av.Site.IFEXP, "strict", "dtype1 = Int64, dtype2 = Float32"),
    (av.constant("a"), av.constant("b"), av.Site.RETURN, None, ""),
    (av.Dict(("a",)), av.Dict(("b",)), av.Site.PHI, None, ""),
    (av.DType("float32"), av.DType("int32"), av.Site.PHI, None, ""),
]


@pytest.mark.parametrize(("left", "right", "site", "fails", "mindspore"), TABLE)
def test_join_error_table(left: av.Value, right: av.Value, site: av.Site, fails: str | None, mindspore: str) -> None:
    error = av.join(left, right, site).error
    if fails is None:
        assert error is None
        return
    assert error is not None
    assert error.strict_only == (fails == "strict")
    assert error.applies(strict=True) and error.applies(strict=False) == (fails == "both")
    if mindspore:
        assert error.mindspore == mindspore


def test_constants_of_one_type_become_a_variable_of_that_type() -> None:
    assert av.join(av.constant(1), av.constant(2), av.Site.PHI).value == av.Scalar("int")
    assert av.join(av.constant("a"), av.constant("b"), av.Site.RETURN).value == av.Str()
    assert av.join(av.Tensor("float32", 2), av.Tensor("float32", 1)).value == av.Tensor("float32")
    assert av.join(T2, T3).value == av.Sequence("tuple")  # length no longer known


@pytest.mark.parametrize(
    ("a", "b", "result"),
    [
        ("int32", "float32", "float32"),  # measured: promo_i32_plus_f32
        ("float16", "float32", "float32"),  # promo_f16_plus_f32
        ("int32", "int64", "int64"),  # promo_i32_i64
        ("bool", "int32", "int32"),
        ("int8", "uint8", "int16"),
        ("float16", "bfloat16", "float32"),
        ("float32", None, None),
        ("uint8", "int32", "int32"),  # the rest measured one pair per process on 2.10
        ("uint8", "float16", "float16"),
        ("int64", "float16", "float16"),
        ("bool", "uint8", "uint8"),
        ("float64", "bfloat16", "float64"),
        ("int32", "bfloat16", "bfloat16"),
    ],
)
def test_tensor_tensor_promotion(a: str | None, b: str | None, result: str | None) -> None:
    assert av.promote(a, b) == result
    assert av.promote(b, a) == result


def test_unsupported_unsigned_mixes_have_no_dtype() -> None:
    # measured: "Type implicit conversion between Int32 and UInt32 is not supported"
    assert av.promote("uint32", "int32") is None
    assert av.promote("int16", "uint16") is None
    assert av.promote("uint32", "uint32") == "uint32"


def test_fixed_result_dtypes_of_index_methods() -> None:
    # measured on 2.10: Tensor.argmax -> Int64, argmin -> Int32, argsort -> Int32
    assert {k: av.METHOD_DTYPES[k] for k in ("argmax", "argmin", "argsort", "nonzero")} == {
        "argmax": "int64", "argmin": "int32", "argsort": "int32", "nonzero": "int64"
    }


def test_torch_style_cast_methods_have_their_fixed_dtype() -> None:
    # measured on 2.10 from a float32 and an int32 tensor alike: .int() -> Int32, .long() ->
    # Int64, .float() -> Float32, .half() -> Float16, .double() -> Float64, .bool() -> Bool,
    # .short() -> Int16, .byte() -> UInt8, .bfloat16() -> BFloat16
    casts = {"int": "int32", "long": "int64", "float": "float32", "half": "float16", "double": "float64",
             "bool": "bool", "short": "int16", "byte": "uint8", "bfloat16": "bfloat16"}
    assert {k: av.METHOD_DTYPES[k] for k in casts} == casts


def test_tensor_scalar_promotion_and_division() -> None:
    assert av.promote_scalar("int32", "int") == "int32"  # promo_i32_plus_int: still Int32
    assert av.promote_scalar("int32", "float") == "float32"  # promo_i32_plus_float
    assert av.promote_scalar("bool", "int") == "int64"  # promo_bool_plus_int
    assert av.promote_scalar("float16", "float") == "float16"  # f16 * 2.0 stays Float16
    assert av.promote_scalar("int32", "bool") == "int32"  # i32 + True
    assert av.promote_scalar("bool", "float") == "float32"
    assert av.true_division("int32") == "float32"  # promo_div_int
    assert av.true_division("float16") == "float16"


def test_shape_queries_are_tuples_of_ints() -> None:
    assert av.shape_of(av.Tensor("float32", shape=(2, 3))) == av.constant((2, 3))
    assert av.shape_of(av.Tensor("float32", 2)) == av.Sequence("tuple", (av.Scalar("int"),) * 2)
    assert av.shape_of(av.Tensor()) == av.Sequence("tuple")
    assert av.ms_dtype_name("bfloat16") == "BFloat16"


# ---------------------------------------------------------------------------- against MindSpore


def _functions() -> dict[str, tuple[int, int]]:
    tree = ast.parse(CASE.read_text(encoding="utf-8"))
    return {
        n.name: (n.lineno, n.end_lineno or n.lineno)
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and n.name in LABELS
    }


SPANS = _functions()


def _rejected(level: str) -> set[str]:
    config = Config() if level == "lax" else replace(Config(), syntax_level="strict")
    lines = {d.span.line for d in check_path(CASE, config) if d.severity == "error" and d.code.startswith("MS")}
    return {name for name, (lo, hi) in SPANS.items() if any(lo <= ln <= hi for ln in lines)}


@pytest.mark.parametrize("level", LEVELS)
def test_checker_rejects_exactly_the_joins_mindspore_rejects(level: str) -> None:
    rejected = _rejected(level)
    wrong = {
        name: f"MindSpore: {label[level]} ({label[level + '_message'][:80]})"
        for name, label in LABELS.items()
        if level not in KNOWN.get(name, {}) and (name in rejected) != (label[level] == "reject")
    }
    assert wrong == {}


@pytest.mark.parametrize("level", LEVELS)
def test_known_join_misses_still_disagree(level: str) -> None:
    rejected = _rejected(level)
    for name, levels in KNOWN.items():
        if level in levels:
            assert len(levels[level]) > 20
            assert (name in rejected) != (LABELS[name][level] == "reject"), f"{name} [{level}] agrees now"


def test_every_probe_was_judged() -> None:
    assert set(SPANS) == set(LABELS) and len(LABELS) >= 150
    kinds = {lab["lax"] for lab in LABELS.values()} | {lab["strict"] for lab in LABELS.values()}
    assert kinds == {"accept", "reject"}
