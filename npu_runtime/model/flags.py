"""ATC's flags as the compiler takes them: the allowed values, the parsed options, the
dynamic gears, and ATC-style errors (`AtcError`, an error code first)."""

from __future__ import annotations

from dataclasses import dataclass, field

PRECISION_MODES = (
    "force_fp16",
    "allow_fp32_to_fp16",
    "must_keep_origin_dtype",
    "allow_mix_precision",
)
# --precision_mode_v2 (newer CANN) -> the --precision_mode it behaves as here
PRECISION_MODES_V2 = {
    "fp16": "force_fp16",
    "origin": "must_keep_origin_dtype",
    "mixed_float16": "allow_mix_precision",
    "cube_fp16in_fp32out": "allow_fp32_to_fp16",
}
OUTPUT_TYPES = {"FP32": "float32", "FP16": "float16", "UINT8": "uint8", "INT8": "int8"}
INPUT_FORMATS = {"NCHW": 0, "NHWC": 1, "ND": 2, "NCDHW": 30, "NDHWC": 27}
LOG_LEVELS = ("debug", "info", "warning", "error", "null")
DYNAMIC_TENSOR_NAME = "ascend_mbatch_shape_data"  # ACL_DYNAMIC_TENSOR_NAME
MAX_GEARS = 100


class AtcError(Exception):
    """A compile failure; `lines` are ATC-style error lines (code first)."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)


def bad_value(param: str, value: str, reason: str) -> AtcError:
    return AtcError(
        f"E10001: Value [{value}] for parameter [--{param}] is invalid. Reason: {reason}"
    )


@dataclass
class Options:
    """ATC's flags, as parsed by `atc.main`."""

    model: str
    output: str
    soc_version: str
    framework: int = 5
    input_shape: str = ""
    dynamic_batch_size: str = ""
    dynamic_image_size: str = ""
    dynamic_dims: str = ""
    input_format: str = "NCHW"
    output_type: str = ""
    precision_mode: str = "force_fp16"
    log: str = "null"
    extra: dict[str, str] = field(default_factory=dict)


def _ints(text: str, param: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip() != ""]
    except ValueError:
        raise bad_value(param, text, "it must be comma-separated integers") from None


def parse_input_shape(text: str) -> dict[str, list[int]]:
    """`name:1,3,224,224;name2:...` -> {name: dims}; -1 marks a dynamic dim."""
    shapes: dict[str, list[int]] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, dims = part.rpartition(":")
        if not sep or not name:
            raise bad_value("input_shape", text, f'"{part}" must be name:dim1,dim2,...')
        values = _ints(dims, "input_shape")
        if any(d < -1 or d == 0 for d in values):
            raise bad_value("input_shape", text, f"dims of {name} must be positive or -1")
        shapes[name] = values
    return shapes


def parse_gears(opts: Options) -> tuple[str, list[list[int]]]:
    """(kind, gears) from the one dynamic option given: ("", []) for a static model."""
    given = [
        (k, v)
        for k, v in (
            ("batch", opts.dynamic_batch_size),
            ("hw", opts.dynamic_image_size),
            ("dims", opts.dynamic_dims),
        )
        if v
    ]
    if len(given) > 1:
        raise AtcError(
            "E10009: Parameters [--dynamic_batch_size], [--dynamic_image_size] and "
            "[--dynamic_dims] cannot be used together."
        )
    if not given:
        return "", []
    kind, text = given[0]
    param = {"batch": "dynamic_batch_size", "hw": "dynamic_image_size", "dims": "dynamic_dims"}[
        kind
    ]
    if kind == "batch":
        gears = [[b] for b in _ints(text, param)]
    else:
        gears = [_ints(g, param) for g in text.split(";") if g.strip()]
    if not 2 <= len(gears) <= MAX_GEARS:
        raise bad_value(param, text, f"give between 2 and {MAX_GEARS} gears")
    if any(v < 1 for g in gears for v in g):
        raise bad_value(param, text, "every value must be a positive integer")
    if kind == "hw" and any(len(g) != 2 for g in gears):
        raise bad_value(param, text, 'each gear must be "height,width"')
    if len({len(g) for g in gears}) != 1:
        raise bad_value(param, text, "every gear must have the same number of values")
    if len({tuple(g) for g in gears}) != len(gears):
        raise bad_value(param, text, "gears must not repeat")
    return kind, gears
