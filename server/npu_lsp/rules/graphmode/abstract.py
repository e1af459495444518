"""Abstract values of MindSpore's graph front end and the join it applies where values meet.

One lattice shared by the graph-mode rules. A value is what the compiler knows about a Python
expression while compiling: a constant (`Scalar`, `Str`, `NONE`), a container (`Sequence`,
`Dict`), a `Tensor` with its dtype and what is known of its shape, a `DType`, a cell, class or
function (`Opaque`), or nothing (`UNKNOWN`, the top). `join(a, b, site)` is what MindSpore does
where two values meet: it returns the joined value and, when MindSpore rejects the join, a
`JoinError` saying whether it fails at every syntax level or only at STRICT.

The table of which joins fail was measured on MindSpore 2.10 (lax and strict) and follows
`AbstractBase::Join` in mindspore/core/abstract/abstract_value.cc: tensors join when their
element types are equal (shapes join to a broader shape), sequences of the same kind join
element by element, anything else of a different abstract class fails with
"Abstract type A cannot join with B" — except `None`, which lax mode turns into a Python
object. Two compile-time constants bound to a name in the two paths of a branch do not meet at
all: the code after the branch is specialised per constant (see `Site.PHI`).

Dtype promotion of tensor arithmetic (`promote`, `promote_scalar`) follows ms_join.json.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Final

_DATA = json.loads((Path(__file__).with_name("ms_join.json")).read_text(encoding="utf-8"))
_ORDER: Final[list[str]] = _DATA["promotion"]["order"]
_PAIRS: Final[dict[str, str]] = _DATA["promotion"]["pairs"]
_MS_NAMES: Final[dict[str, str]] = _DATA["ms_dtype_names"]
_PY_DTYPES: Final[dict[str, str]] = _DATA["python_scalar_dtype"]
_UNSIGNED_WIDE: Final[frozenset[str]] = frozenset(_DATA["promotion"]["unsupported_unsigned"])
#: dtypes of tensor methods whose result type is fixed (measured on 2.10)
METHOD_DTYPES: Final[dict[str, str]] = _DATA["tensor_method_dtypes"]
# `ops.argmax(x)`, `ops.multinomial(p, n)`...: a fixed result dtype, not the input's
OPS_FUNCTION_DTYPES: Final[dict[str, str]] = _DATA["ops_function_dtypes"]
# `ops.topk(x, k)[1]`: a tuple item of fixed dtype, by function (and tensor method) name
INDEXED_RESULT_DTYPES: Final[dict[str, dict[str, str]]] = _DATA["indexed_result_dtypes"]
# `ops.randn_like(x)`...: results LAX joins with a Python number under a tensor `if`
RANDOM_SOURCES: Final[frozenset[str]] = frozenset(_DATA["random_sources"])


def ops_function_dtype(qualname: str) -> str | None:
    """The fixed result dtype of the `mindspore.ops` function `qualname`, if it has one."""
    module, _, name = qualname.rpartition(".")
    return OPS_FUNCTION_DTYPES.get(name) if module == "mindspore.ops" else None


#: the rows of `INDEXED_RESULT_DTYPES` that hold for the `mindspore.ops` function alone
INDEXED_FUNCTIONS_ONLY: Final[frozenset[str]] = frozenset(_DATA["indexed_result_functions_only"])
#: tensor methods that give the tuple only when given this keyword True (`x.max(axis=0,
#: return_indices=True)`); without it they give the first item alone
INDEXED_METHOD_KEYWORDS: Final[dict[str, str]] = _DATA["indexed_result_method_keywords"]
#: `mindspore.ops` reductions giving one tensor of their input's dtype (`ops.amax`)
INPUT_DTYPE_FUNCTIONS: Final[frozenset[str]] = frozenset(_DATA["input_dtype_functions"])
#: an item of `INDEXED_RESULT_DTYPES` of the input tensor's dtype
INPUT: Final = "input"


def indexed_result_dtype(name: str, index: object, method_call: ast.Call | None = None) -> str | None:
    """The dtype of item `index` of the tuple the `mindspore.ops` function (or, given
    `method_call`, the tensor method) `name` returns, if the table knows it: a dtype
    (`topk`, 1: `int32`) or `INPUT`, the dtype of the tensor it reduces (`max`, 0)."""
    items = INDEXED_RESULT_DTYPES.get(name)
    if items is None or type(index) is not int:
        return None
    if method_call is not None:
        if name in INDEXED_FUNCTIONS_ONLY:
            return None
        keyword = INDEXED_METHOD_KEYWORDS.get(name)
        if keyword is not None and not any(
            k.arg == keyword and type(k.value) is ast.Constant and k.value.value is True for k in method_call.keywords
        ):
            return INPUT  # the values alone: an item of them is a row of the input's dtype
    return items.get(str(index))


def reduced_input(call: ast.Call) -> ast.expr | None:
    """The tensor a `mindspore.ops` reduction is given: its first positional argument, or
    its `input` / `x` keyword."""
    if call.args:
        first = call.args[0]
        return None if type(first) is ast.Starred else first
    return next((k.value for k in call.keywords if k.arg in ("input", "x")), None)


def is_random_source(qualname: str) -> bool:
    """Is `qualname` a `mindspore.ops` function drawing random numbers (ms_join.json)?"""
    module, _, name = qualname.rpartition(".")
    return module == "mindspore.ops" and name in RANDOM_SOURCES


class Site(Enum):
    """Where two values meet; MindSpore treats a few of them differently."""

    RETURN = "return"  # the results of a tensor-dependent branch (return, early return)
    PHI = "phi"  # a name bound differently on the two paths and read after them
    IFEXP = "ifexp"  # `a if t else b`
    BOOLOP = "boolop"  # `a and b`, `a or b` (b if a else a)
    LOOP = "loop"  # a value carried around a `while`/`for` whose condition is a tensor


# ---------------------------------------------------------------------------- the values


@dataclass(frozen=True)
class Value:
    """Base of every abstract value. `abstract` is MindSpore's class name for it."""

    @property
    def abstract(self) -> str:
        return "AbstractAny"

    @property
    def known(self) -> bool:
        return True

    def describe(self) -> str:
        return "value"


@dataclass(frozen=True)
class Unknown(Value):
    """Nothing known (an argument of unknown kind, a helper's result, an opaque call)."""

    @property
    def known(self) -> bool:
        return False

    def describe(self) -> str:
        return "unknown"


@dataclass(frozen=True)
class NoneValue(Value):
    @property
    def abstract(self) -> str:
        return "AbstractNone"

    def describe(self) -> str:
        return "None"


_NOT_CONSTANT: Final = object()


@dataclass(frozen=True)
class Scalar(Value):
    """A Python int, float or bool; `value` when it is a compile-time constant."""

    py: str  # "int" | "float" | "bool", or "" for a number of unknown type
    value: object = _NOT_CONSTANT
    #: a numpy scalar of a constant (`np.float32(0.5)`, `np.float32(x.shape[0])`), known
    #: while compiling but not a Python number: see `_numpy_scalar_join`
    numpy: bool = False

    @property
    def abstract(self) -> str:
        return "AbstractScalar"

    @property
    def constant(self) -> bool:
        return self.value is not _NOT_CONSTANT

    @property
    def ms_dtype(self) -> str:
        return _PY_DTYPES.get(self.py, "Number")

    def describe(self) -> str:
        return "scalar"


@dataclass(frozen=True)
class Str(Value):
    value: str | None = None

    @property
    def abstract(self) -> str:
        return "AbstractScalar"

    def describe(self) -> str:
        return "str"


@dataclass(frozen=True)
class Tensor(Value):
    """A tensor; `dtype` as a canonical name ("float32"), `shape` dims with None for unknown
    sizes, `rank` when only the number of dims is known."""

    dtype: str | None = None
    rank: int | None = None
    shape: tuple[int | None, ...] | None = None
    #: computed from constants alone while compiling (`ops.zeros((2, 3))`, `Tensor([1, 2])`)
    folded: bool = False

    def __post_init__(self) -> None:
        if self.shape is not None and self.rank is None:
            object.__setattr__(self, "rank", len(self.shape))

    @property
    def abstract(self) -> str:
        return "AbstractTensor"

    def describe(self) -> str:
        return "Tensor"


@dataclass(frozen=True)
class Sequence(Value):
    """A tuple or list; `elements` when its length is known (shape tuples, literals);
    `item`, when it is not, the value every element has when that is known (the Parameters
    a Cell keeps are tensors, `tuple(zip(...))` of them pairs of tensors)."""

    kind: str  # "tuple" | "list"
    elements: tuple[Value, ...] | None = None
    item: Value | None = None

    @property
    def abstract(self) -> str:
        return "AbstractTuple" if self.kind == "tuple" else "AbstractList"

    def describe(self) -> str:
        return self.kind


@dataclass(frozen=True)
class Dict(Value):
    keys: tuple[str, ...] | None = None

    @property
    def abstract(self) -> str:
        return "AbstractDictionary"

    def describe(self) -> str:
        return "dict"


@dataclass(frozen=True)
class DType(Value):
    """A MindSpore dtype object (`x.dtype`, `ms.float16`); `name` when constant."""

    name: str | None = None

    @property
    def abstract(self) -> str:
        return "AbstractType"

    def describe(self) -> str:
        return "dtype"


@dataclass(frozen=True)
class Opaque(Value):
    """A cell instance, a class, a function or a primitive: joined only with the same one."""

    kind: str  # "cell" | "class" | "function" | "primitive"
    name: str | None = None

    @property
    def abstract(self) -> str:
        return {"cell": "AbstractCell", "class": "AbstractClass"}.get(self.kind, "AbstractFunction")

    def describe(self) -> str:
        return self.kind


UNKNOWN: Final = Unknown()
NONE: Final = NoneValue()


#: `t.item()` of a tensor of these dtypes: the Python number whose graph dtype it has (an
#: Int32 or Float16 item has no Python number of its dtype, so it stays unknown)
_ITEM_PY: Final[dict[str, str]] = {"int64": "int", "float32": "float", "bool": "bool"}


def item_scalar(dtype: str | None) -> Value:
    """`t.item()`: a run-time number of the tensor's dtype (TensorToScalar), e.g. Int64 for
    the sum of a bool or int64 tensor, Float32 for a float32 one. It meets a Python number
    of another type as any number does (measured, written/heldout21b probes `st23_mc_*`,
    `strict24_mc_*`: `acc = 0.0` / `acc = (p == y).sum().item()` then `return acc` fails,
    "Type Join Failed: dtype1 = Float32, dtype2 = Int64")."""
    py = _ITEM_PY.get(dtype or "")
    return Scalar(py) if py else UNKNOWN


def tensor(dtype: str | None = None, rank: int | None = None) -> Tensor:
    return Tensor(dtype, rank)


def shape_of(t: Tensor) -> Sequence:
    """`x.shape`, `ops.shape(x)`, `P.Shape()(x)`: a tuple of ints, of the tensor's rank."""
    if t.shape is not None:
        return Sequence("tuple", tuple(Scalar("int", d) if d is not None else Scalar("int") for d in t.shape))
    if t.rank is not None:
        return Sequence("tuple", (Scalar("int"),) * t.rank)
    return Sequence("tuple")


def constant(v: object) -> Value:
    """The abstract value of a Python constant."""
    if v is None:
        return NONE
    if isinstance(v, bool):
        return Scalar("bool", v)
    if isinstance(v, int):
        return Scalar("int", v)
    if isinstance(v, float):
        return Scalar("float", v)
    if isinstance(v, str):
        return Str(v)
    if isinstance(v, tuple):
        return Sequence("tuple", tuple(constant(x) for x in v))
    return UNKNOWN


# ---------------------------------------------------------------------------- promotion


def ms_dtype_name(dtype: str) -> str:
    """"float32" -> "Float32", as MindSpore prints it."""
    return _MS_NAMES.get(dtype, dtype.capitalize())


def _rank(dtype: str) -> int:
    return _ORDER.index(dtype) if dtype in _ORDER else -1


def promote(a: str | None, b: str | None) -> str | None:
    """Result dtype of tensor ⊕ tensor (None when either is unknown)."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    if a in _UNSIGNED_WIDE or b in _UNSIGNED_WIDE:
        return None  # measured: Int32 with UInt32 "Type implicit conversion ... is not supported"
    pair = "+".join(sorted((a, b)))
    if pair in _PAIRS:
        return _PAIRS[pair]
    ra, rb = _rank(a), _rank(b)
    if ra < 0 or rb < 0:
        return None
    return a if ra > rb else b


def is_floating(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat", "complex"))


def promote_scalar(t: str | None, py: str) -> str | None:
    """Result dtype of tensor ⊕ Python scalar: the tensor's dtype, except an integral or bool
    tensor with a float (float32) and a bool tensor with an int (int64)."""
    if t is None:
        return None
    if py == "float" and not is_floating(t):
        return str(_DATA["promotion"]["python_float_on_integral"])
    if py == "int" and t == "bool":
        return str(_DATA["promotion"]["python_int_on_bool"])
    return t


def true_division(t: str | None) -> str | None:
    """`a / b` of tensors: integral and bool results become float32."""
    if t is None:
        return None
    return t if is_floating(t) else str(_DATA["promotion"]["true_division_of_integral"])


# ---------------------------------------------------------------------------- the join


@dataclass(frozen=True)
class JoinError:
    """Why MindSpore cannot join two values.

    `reason` is ours ("Tensor vs tuple", "dtype int32 vs float32"); `mindspore` is the text
    after "Type Join Failed:" in MindSpore's own message; `strict_only` when the default
    (lax) level accepts the join."""

    reason: str
    mindspore: str
    strict_only: bool = False

    def applies(self, strict: bool) -> bool:
        return strict or not self.strict_only


@dataclass(frozen=True)
class Joined:
    value: Value
    error: JoinError | None = None


def _class_error(a: Value, b: Value, strict_only: bool = False) -> JoinError:
    return JoinError(
        f"{a.describe()} vs {b.describe()}",
        f"Abstract type {a.abstract} cannot join with {b.abstract}",
        strict_only,
    )


def _dtype_error(a: str, b: str, ms_a: str, ms_b: str) -> JoinError:
    return JoinError(f"dtype {a} vs {b}", f"dtype1 = {ms_a}, dtype2 = {ms_b}")


def is_constant(v: Value) -> bool:
    """A compile-time constant: None, a number or a string with a known value."""
    return isinstance(v, NoneValue) or (isinstance(v, Scalar) and v.constant) or (isinstance(v, Str) and v.value is not None)


def join(a: Value, b: Value, site: Site = Site.RETURN) -> Joined:
    """MindSpore's join of `a` and `b` where they meet at `site`.

    Symmetric up to the order of names in messages (except None second inside a sequence,
    see `_element_none_error`), idempotent (`join(a, a)` is `a`, no
    error) and `UNKNOWN` absorbs anything without error (we never report what we do not know)."""
    if a == b:
        return Joined(a)
    if not a.known or not b.known:
        return Joined(UNKNOWN)
    if site is Site.PHI and isinstance(a, Scalar) and isinstance(b, Scalar) and (a.numpy or b.numpy):
        numpy_joined = _numpy_scalar_join(a, b)
        if numpy_joined is not None:
            return numpy_joined
    # the code after a branch is specialised per constant bound in each path: no join
    if site in (Site.PHI, Site.LOOP) and is_constant(a) and is_constant(b):
        if isinstance(a, NoneValue) or isinstance(b, NoneValue):
            # STRICT keeps None out of a graph variable ("Invalid abstract ... AbstractNone")
            return Joined(UNKNOWN, _class_error(a, b, strict_only=True))
        return Joined(_widen(a, b))
    if isinstance(a, NoneValue) or isinstance(b, NoneValue):
        # lax turns None joined with anything into a Python object; STRICT cannot
        return Joined(UNKNOWN, _class_error(a, b, strict_only=True))
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return _join_tensors(a, b, site)
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        return _join_scalars(a, b, site)
    if isinstance(a, Sequence) and isinstance(b, Sequence) and a.kind == b.kind:
        return _join_sequences(a, b, site)
    if isinstance(a, Str) and isinstance(b, Str):
        return Joined(Str())
    if isinstance(a, Dict) and isinstance(b, Dict):
        return Joined(Dict(a.keys if a.keys == b.keys else None))
    if isinstance(a, DType) and isinstance(b, DType):
        return Joined(DType())  # joins, but a variable dtype cannot feed `cast` (DtypeToEnum)
    if isinstance(a, Opaque) and isinstance(b, Opaque) and a.kind == b.kind:
        return Joined(Opaque(a.kind))
    if {type(a), type(b)} == {Scalar, Str}:
        if site in (Site.PHI, Site.LOOP):
            return Joined(UNKNOWN)  # both constants were handled above; a variable str/number pair
        ms_a = a.ms_dtype if isinstance(a, Scalar) else "String"
        ms_b = b.ms_dtype if isinstance(b, Scalar) else "String"
        return Joined(UNKNOWN, JoinError(f"{a.describe()} vs {b.describe()}", f"dtype1 = {ms_a}, dtype2 = {ms_b}"))
    if isinstance(a, (Tensor, Sequence, Scalar, Str, Dict, DType)) and isinstance(
        b, (Tensor, Sequence, Scalar, Str, Dict, DType)
    ):
        return Joined(UNKNOWN, _class_error(a, b))
    return Joined(UNKNOWN)  # cells, functions and classes against data: not modelled


def _numpy_scalar_join(a: Scalar, b: Scalar) -> Joined | None:
    """A numpy scalar of a constant and a Python number bound to one name on the two paths of
    a tensor `if`: the code after it is not specialised on the numpy scalar as on two Python
    numbers. Of one kind they join; of two kinds (`np.float32(...)` / `0`, `np.int64(1)` /
    `2.5`) LAX holds the result as a Python object and compiles, and STRICT, which then needs
    a constant where it is used (`x * weight`: "the inputs should be constant"), refuses it
    (measured, written/heldout41d probes `fix41d_np_f32_shape_vs_int_zero`,
    `fix41d_np_int64_vs_pyfloat`, `fix41d_np_f32_vs_pyfloat`). None: not such a pair (two numpy
    scalars, a run-time number: the usual join)."""
    if a.numpy and b.numpy:
        return None
    other = b if a.numpy else a
    if not other.constant:
        return None
    if not a.py or not b.py or a.py == b.py:
        return Joined(Scalar(a.py if a.py == b.py else ""))
    error = JoinError(f"numpy {a.py if a.numpy else b.py} scalar vs Python {other.py}", f"dtype1 = {a.ms_dtype}, dtype2 = {b.ms_dtype}")
    return Joined(UNKNOWN, replace(error, strict_only=True))


def folded_output_error(a: Value, b: Value, error: JoinError) -> JoinError:
    """The join of two constant tensors of two dtypes handed out as the compiled graph's own
    output: refused at every level (measured, `mh_join_dtype_E`: "Type Join Failed")."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.folded and b.folded:
        return replace(error, strict_only=False)
    return error


def _widen(a: Value, b: Value) -> Value:
    """Two different constants of one kind become a variable of that kind."""
    if isinstance(a, Scalar) and isinstance(b, Scalar) and a.py == b.py:
        return Scalar(a.py)
    if isinstance(a, Str) and isinstance(b, Str):
        return Str()
    return UNKNOWN


def _join_tensors(a: Tensor, b: Tensor, site: Site = Site.RETURN) -> Joined:
    if a.dtype is not None and b.dtype is not None and a.dtype != b.dtype:
        error = _dtype_error(a.dtype, b.dtype, ms_dtype_name(a.dtype), ms_dtype_name(b.dtype))
        if a.folded and b.folded:
            # two constant tensors met under a tensor condition (bound to a name, returned
            # by a helper): LAX holds the result as a Python object, so arithmetic on it is
            # interpreted, which STRICT refuses for a variable input (measured, lax probes
            # `mh_join_dtype_*`; the graph's own output fails at both levels: see
            # `folded_output_error`)
            return Joined(UNKNOWN, replace(error, reason=f"constant tensors of dtype {a.dtype} vs {b.dtype}", strict_only=True))
        return Joined(UNKNOWN, error)
    dtype = a.dtype if a.dtype == b.dtype else None
    shape = a.shape if a.shape == b.shape else None
    return Joined(Tensor(dtype, a.rank if a.rank == b.rank else None, shape))


def _join_scalars(a: Scalar, b: Scalar, site: Site) -> Joined:
    if a.py == b.py:
        return Joined(Scalar(a.py))
    if not a.py or not b.py:
        return Joined(Scalar(""))
    if site is Site.LOOP or (site is Site.PHI and a.constant and b.constant):
        return Joined(UNKNOWN)  # (two constants were handled by `join`)
    # a name bound to numbers of two types, one of them known only at run time (`acc = 0.0`
    # / `acc = t.sum().item()`): nothing to specialise on, so they are joined and fail
    # (measured, written/heldout21b `st23_mc_var_float_zero_item`, `strict24_mc_var_*`)
    error = JoinError(f"{a.py} vs {b.py}", f"dtype1 = {a.ms_dtype}, dtype2 = {b.ms_dtype}")
    if site is Site.IFEXP:
        # lax runs the mixed result as a Python object; STRICT needs a constant there
        return Joined(UNKNOWN, replace(error, strict_only=True))
    return Joined(UNKNOWN, error)


def _join_sequences(a: Sequence, b: Sequence, site: Site) -> Joined:
    if a.elements is None or b.elements is None or len(a.elements) != len(b.elements):
        # sequences of different lengths join into one of unknown length (measured), whose
        # elements must then join into one element
        if site is not Site.LOOP and a.elements is not None and b.elements is not None:
            error = _dynamic_length_error(a.elements + b.elements, a.kind)
            if error is not None:
                return Joined(UNKNOWN, error)
        return Joined(Sequence(a.kind))
    out: list[Value] = []
    for x, y in zip(a.elements, b.elements, strict=True):
        if site is not Site.LOOP and isinstance(y, NoneValue) and isinstance(x, (Tensor, Scalar, Str)):
            return Joined(UNKNOWN, _element_none_error(x, a.kind))
        # elements meet as returned values do: no per-constant specialisation inside
        j = join(x, y, Site.RETURN if site in (Site.PHI, Site.LOOP) else site)
        if j.error is not None:
            return Joined(UNKNOWN, j.error)
        out.append(j.value)
    return Joined(Sequence(a.kind, tuple(out)))



def _dynamic_length_error(elements: tuple[Value, ...], kind: str) -> JoinError | None:
    """Tuples or lists of two lengths meet as one sequence of unknown length, so all their
    elements must be alike: measured on 2.10 (probes `tuplen_*` in written/inference), a
    tensor beside a Python number, tensors of two dtypes (`(t.argmax(), t.max())` against
    `(t.argmax(),)`) or of two ranks (`(t, t.sum())` against `(t,)`) fail at both levels;
    elements of one dtype and rank join."""
    tensors = [x for x in elements if isinstance(x, Tensor)]
    if not tensors:
        return None
    dtypes = {t.dtype for t in tensors if t.dtype is not None}
    ranks = {t.rank for t in tensors if t.rank is not None}
    mixed = any(isinstance(x, Scalar) for x in elements)
    if not mixed and len(dtypes) < 2 and len(ranks) < 2:
        return None
    why = "a tensor and a number" if mixed else ("dtypes " + ", ".join(sorted(dtypes)) if len(dtypes) > 1 else "tensors of different ranks")
    abstract = "AbstractTuple" if kind == "tuple" else "AbstractList"
    return JoinError(
        f"{kind}s of different lengths holding {why}",
        f"Abstract type {abstract} cannot join with {abstract}",
    )


def _element_none_error(x: Value, kind: str) -> JoinError:
    """An element of the first path's tuple or list against None in the second's.

    Not symmetric (measured on 2.10, probes `tup_*none*` in joins.py): lax turns a None that
    comes first into the other path's value, but inside a sequence a None that comes second
    meets the first path's element as it is (`Any`, a Float64 tensor against a tensor), and
    the join fails at every level. None first fails at STRICT only, as None does anywhere."""
    if isinstance(x, Tensor):
        first = ms_dtype_name(x.dtype) if x.dtype else "Float32"
        return JoinError(f"Tensor vs None in a {kind}", f"dtype1 = {first}, dtype2 = Float64")
    first = x.ms_dtype if isinstance(x, Scalar) else "String"
    return JoinError(f"{x.describe()} vs None in a {kind}", f"dtype1 = {first}, dtype2 = Any")
