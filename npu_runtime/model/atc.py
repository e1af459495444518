"""`ascend-lens atc`: ATC's command line for ONNX models, writing the emulator's `.om`.

    ascend-lens atc --framework=5 --model=net.onnx --output=net --soc_version=Ascend910B2
                    [--input_shape="x:-1,3,224,224" --dynamic_batch_size="1,4,8"]
                    [--input_format=NCHW] [--output_type=FP16]
                    [--precision_mode=force_fp16] [--log=error]

Flags are ATC's (`--flag=value` or `--flag value`); messages follow ATC's: an error code, the
parameter or node at fault, then "ATC run failed". Exit status 0 on success, 1 on failure.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from npu_runtime.model.compiler import write
from npu_runtime.model.flags import (
    LOG_LEVELS,
    PRECISION_MODES_V2,
    AtcError,
    Options,
    bad_value,
)

REQUIRED = ("model", "framework", "output", "soc_version")
VALUED = (
    *REQUIRED,
    "input_shape",
    "dynamic_batch_size",
    "dynamic_image_size",
    "dynamic_dims",
    "input_format",
    "output_type",
    "precision_mode",
    "precision_mode_v2",
    "log",
)
# Tuning flags real scripts pass that change nothing the emulator models.
IGNORED = (
    "op_select_implmode",
    "optypelist_for_implmode",
    "enable_small_channel",
    "fusion_switch_file",
    "buffer_optimize",
    "host_env_os",
    "host_env_cpu",
    "out_nodes",
    "keep_dtype",
    "modify_mixlist",
    "op_precision_mode",
    "input_fp16_nodes",
    "enable_compress_weight",
    "compress_weight_conf",
    "sparsity",
    "customize_dtypes",
    "op_debug_level",
    "debug_dir",
    "job_type",
)
UNSUPPORTED = {
    "insert_op_conf": "AIPP (image pre-processing inside the model) is not emulated; "
    "pre-process on the host and feed the model's own input",
    "singleop": "single-op models are not needed: acl.op runs every registered op directly",
    "weight": "only ONNX models (--framework=5) are compiled; they carry their weights",
    "mode": "only mode 0 (model conversion) is supported",
}
HELP = __doc__ or ""
_START = "ATC start working now, please wait for a moment."
_OK = "ATC run success, welcome to the next use."
_FAILED = "ATC run failed, Please check the detail log, Try 'atc --help' for more information"


def _parse(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """{flag: value} and warnings; AtcError for unknown or malformed flags."""
    values: dict[str, str] = {}
    warnings: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("--"):
            raise AtcError(f"E10001: Value [{arg}] is not a parameter: ATC takes --name=value.")
        name, eq, value = arg[2:].partition("=")
        if not eq:
            if i >= len(args) or args[i].startswith("--"):
                raise AtcError(f"E10004: Parameter [--{name}] needs a value.")
            value = args[i]
            i += 1
        if name in UNSUPPORTED:
            if name == "mode" and value == "0":
                continue
            raise AtcError(
                f"E10001: Value [{value}] for parameter [--{name}] is invalid. "
                f"Reason: {UNSUPPORTED[name]}."
            )
        if name in IGNORED:
            warnings.append(f"W11001: parameter [--{name}] has no effect on the emulator; ignored.")
            continue
        if name not in VALUED:
            raise AtcError(f"ERROR: unknown command line flag '{name}'")
        values[name] = value
    for name in REQUIRED:
        if not values.get(name):
            raise AtcError(f"E10004: Parameter [--{name}] is required and cannot be empty.")
    return values, warnings


def _precision(values: dict[str, str]) -> str:
    v2 = values.get("precision_mode_v2")
    if v2 is None:
        return values.get("precision_mode", "force_fp16")
    if "precision_mode" in values:
        raise AtcError(
            "E10001: Parameters [--precision_mode] and [--precision_mode_v2] cannot be used "
            "together."
        )
    if v2 not in PRECISION_MODES_V2:
        raise bad_value(
            "precision_mode_v2", v2, f"it must be one of {', '.join(PRECISION_MODES_V2)}"
        )
    return PRECISION_MODES_V2[v2]


def _options(values: dict[str, str]) -> Options:
    try:
        framework = int(values["framework"])
    except ValueError:
        raise bad_value("framework", values["framework"], "it must be 5 (ONNX)") from None
    log = values.get("log", "null").lower()
    if log not in LOG_LEVELS:
        raise bad_value("log", values["log"], f"it must be one of {', '.join(LOG_LEVELS)}")
    return Options(
        model=values["model"],
        output=values["output"],
        soc_version=values["soc_version"],
        framework=framework,
        input_shape=values.get("input_shape", ""),
        dynamic_batch_size=values.get("dynamic_batch_size", ""),
        dynamic_image_size=values.get("dynamic_image_size", ""),
        dynamic_dims=values.get("dynamic_dims", ""),
        input_format=values.get("input_format", "NCHW"),
        output_type=values.get("output_type", ""),
        precision_mode=_precision(values),
        log=log,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "--h"):
        sys.stdout.write(HELP)
        return 0 if args else 1
    out = sys.stdout
    out.write(_START + "\n")
    try:
        values, warnings = _parse(args)
        opts = _options(values)
        if opts.log in ("warning", "info", "debug"):
            for w in warnings:
                out.write(w + "\n")
        path = write(opts)
    except AtcError as exc:
        out.flush()
        sys.stderr.write("\n".join(exc.lines) + "\n")
        out.write(_FAILED + "\n")
        return 1
    if opts.log in ("info", "debug"):
        out.write(f"[INFO] wrote {path} for {opts.soc_version} ({opts.precision_mode})\n")
    out.write(_OK + "\n")
    return 0
