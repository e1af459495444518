"""NPU204: `"cuda"` device strings (`.to("cuda")`, `device="cuda:0"`, comparisons)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.groups import Finding, findings, message, rendered
from npu_lsp.rules.migration.helpers import span_of


@rule(
    code="NPU204",
    name="cuda-device-string",
    severity="warning",
    family="migration",
    fix="sometimes",
)
class CudaDeviceString(Rule):
    """## What it does
    Finds the strings `"cuda"` and `"cuda:N"` that are used as a device: passed to `.to(...)`,
    `device=`, `map_location=`, `torch.autocast(...)`, `torch.cuda.set_device(...)` and the
    like, directly or through a variable, a parameter's default, an argparse option's
    `default=`/`choices=` (`args.device`), a dict entry (`cfg["device"]`), a function's
    return value, an f-string or concatenation (`f"cuda:{rank}"`, `"cuda:" + str(rank)`),
    and the literals such values are compared with (`x.device.type == "cuda"`, any
    `<device>.type == "cuda"`, `args.device == "cuda"`, unittest's
    `assertEqual(out.device.type, "cuda")`) or that take a device string apart
    (`device.replace("cuda:", "")`). Loop names take the elements of what they iterate
    (lists concatenated with `+`, grown with `.append`, returned by a function or a method
    of the module), also per name over `itertools.product(...)` and `zip(...)`; a list
    holding a device object (`["cuda", 0, torch.device("cuda")]`) holds devices. The second
    argument of `getattr(torch, device_type)` is a device type (it names `torch.cuda`), a
    function's local name for a device-taking callee (`scope = torch.autocast if half else
    nullcontext`) takes a device, and f-strings compared with a device move like literals.
    Values are also followed across the modules of the
    project: a parameter another module passes a device to (nanoGPT's
    `configure_optimizers(..., device_type)` comparing `device_type == "cuda"`), an
    attribute another module reads as a device (`getattr(args, "device", "cuda")` for the
    training script's `--device` default). A `"cuda"` that never reaches a device (a folder
    name, a file name, a log message, a dict key, an argparse help text) is not reported.
    `torch.device("cuda")` is NPU203. A module that never imports torch (a yacs or dataclass
    config module) is checked only for the values another module reads as a device
    (`_C.MODEL.DEVICE = "cuda"` for `model.to(cfg.MODEL.DEVICE)`, a LazyConfig's
    `train = dict(device="cuda")` for `model.to(cfg.train.device)`). Code that already
    dispatches to the NPU is left alone: every branch of an `if`/`elif` chain or conditional
    expression one of whose tests names the NPU (`is_npu_available()`,
    `device.type == "npu"`), whose CUDA branch never runs on Ascend, and the body of a
    class's own `cuda()` method.

    ## Why is this bad?
    On Ascend the device type is `"npu"`; moving a tensor to `"cuda"` fails, and a comparison
    with `"cuda"` is silently false, so the NPU branch never runs.

    ## Example
    ```python
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = parser.parse_args()
    batch = batch.to(args.device)
    mask = torch.ones(8, device=f"cuda:{rank}")
    ```

    ## Use instead
    ```python
    parser.add_argument("--device", default="npu", choices=["npu", "cpu"])
    args = parser.parse_args()
    batch = batch.to(args.device)
    mask = torch.ones(8, device=f"npu:{rank}")
    ```

    ## Fix safety
    Safe: only the device type at the start of each literal changes (the index is kept) and
    `import torch_npu` is added when missing. Every device string of the file (NPU203 and
    NPU204) and every CUDA API rename (`.cuda()`, `torch.cuda.*`, `torch.cuda.amp`: NPU201,
    NPU202, NPU206) moves in one fix, so the file never holds `"npu"` and `"cuda:0"` for
    the same device, nor `.npu()` beside a `"cuda"` kept back; if one of them cannot be
    rewritten exactly (escapes, implicit concatenation, a literal split over lines), none
    is fixed. The fix is unsafe when a value is also used for something other than a device
    (a path built from it, an argument to a call whose parameter is not a device, in this
    module or another of the project); the message then says where.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)
    #: also modules that never import torch: a config module's device value another module
    #: of the project reads as one (`values.Flow.torch_module`)
    requires_imports = ()

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        for f in findings(ctx, "device"):
            if f.code != self.code:
                continue
            yield rendered(ctx, self.code, f.source, f.fix, f.why, self._made, ctx, f)

    def _made(self, ctx: Context, f: Finding) -> Diagnostic:
        return ctx.diagnostic(self, span_of(ctx, f.node), message(f), fix=f.fix)
