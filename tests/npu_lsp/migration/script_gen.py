"""A seeded generator of CUDA-era PyTorch training scripts, for property tests of the
migration rules and their fixes.

The scripts are composed from the shapes real training code takes (written for these tests,
in the style of public examples, not copied): an ImageNet-style `main.py` with argparse
options (`--gpu`, `--dist-backend`, `--resume`) and `main_worker(gpu, ngpus_per_node, args)`;
a torchrun DDP trainer (`LOCAL_RANK`, `init_process_group`, snapshots loaded with
`map_location`); a Hugging Face-style trainer with a dataclass of arguments, autocast and a
grad scaler; a dict-of-config script; a `get_device()` helper. Each script also holds
"cuda" and "nccl" strings that are not devices or backends (folders, file names, log
messages, dict keys), which no fix may touch.

Every line is tagged in a trailing comment with what a correct fix-all must do to it:

- `# dev`: holds a device string that must move to "npu";
- `# backend`: holds a backend name that must move to "hccl";
- `# api`: holds a CUDA API (`.cuda()`, `torch.cuda.*`, `torch.cuda.amp`) that must move;
- `# keep`: holds a "cuda"/"nccl" string that is not a device or backend, and must not change;
- untagged lines must not change either.

`Script.expect_fixed` is False when the script contains something that keeps its device
group from being fixed (an implicitly concatenated literal: then no device may move at all),
and `Script.unsafe_only` is True when the device group is fixed only with --unsafe-fixes
(the device variable also names a file).
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass
class Script:
    seed: int
    text: str
    expect_fixed: bool
    unsafe_only: bool


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.q = self.r.choice(['"', "'"])
        self.lines: list[str] = []
        self.expect_fixed = True
        self.unsafe_only = False
        self.backend_used = False

    def s(self, text: str) -> str:
        """A string literal in this script's quote style."""
        return f"{self.q}{text}{self.q}"

    def emit(self, line: str, tag: str = "") -> None:
        self.lines.append(f"{line}  # {tag}" if tag else line)

    def pick(self, *options: str) -> str:
        return self.r.choice(options)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    # ------------------------------------------------------------------ pieces
    def imports(self, style: str) -> None:
        self.emit("import argparse")
        self.emit("import logging")
        self.emit("import os")
        if self.chance(0.3):
            self.emit("import shutil")
        order = self.r.randrange(3)
        if order == 0:
            self.emit("import torch")
            self.emit("import torch.nn as nn")
        elif order == 1:
            self.emit("import torch.nn as nn")
            self.emit("import torch")
        else:  # torch is optional for the tooling that imports this module
            self.emit("try:")
            self.emit("    import torch")
            self.emit("    import torch.nn as nn")
            self.emit("except ImportError:")
            self.emit("    torch = nn = None")
        if style in ("imagenet", "ddp"):
            self.emit("import torch.distributed as dist")
        if style == "imagenet":
            self.emit("import torch.backends.cudnn as cudnn")
            self.emit("import torch.multiprocessing as mp")
        if style == "hf":
            self.emit("from dataclasses import dataclass, field")
        self.emit("from torch.utils.data import DataLoader")
        self.emit("")
        self.emit("logger = logging.getLogger(__name__)")
        self.emit(f"DATA_ROOT = os.path.join({self.s('datasets')}, {self.s('cuda')})", "keep")
        if self.chance(0.5):
            self.emit(f"KERNEL_DIR = {self.s('csrc/cuda')}", "keep")
        if self.chance(0.5):
            self.emit(f"STATS = {{{self.s('cuda')}: 0, {self.s('cpu')}: 0}}", "keep")
        self.emit("")

    def argparse_block(self) -> list[str]:
        """Options; returns the names of options that carry a device or a backend."""
        self.emit("parser = argparse.ArgumentParser(description=" + self.s("training") + ")")
        self.emit(f"parser.add_argument({self.s('--data')}, default=DATA_ROOT)")
        self.emit(f"parser.add_argument({self.s('--lr')}, default=0.1, type=float)")
        self.emit(f"parser.add_argument({self.s('--gpu')}, default=None, type=int)")
        self.emit(f"parser.add_argument({self.s('--resume')}, default={self.s('')}, type=str)")
        carried = []
        if self.chance(0.8):
            # tagged once something uses it as the backend (`setup_distributed`)
            self.emit(
                f"parser.add_argument({self.s('--dist-backend')}, default={self.s('nccl')}, type=str)"
            )
            carried.append("dist_backend")
        if self.chance(0.6):
            choices = self.chance(0.5)
            extra = f", choices=[{self.s('cuda')}, {self.s('cpu')}]" if choices else ""
            self.emit(
                f"parser.add_argument({self.s('--device')}, default={self.s('cuda')}{extra})", "dev"
            )
            carried.append("device")
        if self.chance(0.5):
            self.emit(
                f"parser.add_argument({self.s('--kernel-cache')}, default={self.s('cuda')}, "
                f"help={self.s('folder for compiled cuda kernels')})",
                "keep",
            )
        self.emit("")
        return carried

    def setup_distributed(self, carried: list[str]) -> None:
        self.emit("def setup_distributed(args):")
        self.emit('    local_rank = int(os.environ.get("LOCAL_RANK", 0))')
        form = self.r.randrange(3)
        if "dist_backend" in carried and form == 0:
            self.emit(
                "    dist.init_process_group(backend=args.dist_backend, init_method="
                + self.s("env://")
                + ")"
            )
            self.backend_used = True
        elif form == 1:
            self.emit(
                f"    backend = os.environ.get({self.s('DIST_BACKEND')}, {self.s('nccl')})",
                "backend",
            )
            self.emit("    dist.init_process_group(backend)")
        else:
            self.emit(
                f"    dist.init_process_group({self.s('nccl')}, rank=args.rank, world_size=args.world_size)",
                "backend",
            )
        self.emit("    torch.cuda.set_device(local_rank)", "api")
        if self.chance(0.5):
            self.emit(f"    if dist.get_backend() == {self.s('nccl')}:", "backend")
            self.emit(f"        logger.info({self.s('nccl initialised')})", "keep")
        self.emit("    return local_rank")
        self.emit("")

    def device_expr(self, index: str) -> tuple[str, str]:
        """A device string for `index`, in one of the ways people write it."""
        form = self.r.randrange(4)
        if form == 0:
            return f"f{self.q}cuda:{{{index}}}{self.q}", "dev"
        if form == 1:
            return f"{self.s('cuda:{}')}.format({index})", "dev"
        if form == 2:
            return f"{self.s('cuda:')} + str({index})", "dev"
        return f"{self.s('cuda:%d')} % {index}", "dev"

    def get_device_helper(self) -> None:
        self.emit("def get_device():")
        if self.chance(0.5):
            self.emit("    if torch.cuda.is_available():", "api")
            self.emit(f"        return {self.s('cuda')}", "dev")
            self.emit(f"    return {self.s('cpu')}")
        else:
            self.emit(
                f"    return {self.s('cuda')} if torch.cuda.is_available() else {self.s('cpu')}",
                "dev",
            )
        self.emit("")

    def imagenet_worker(self, carried: list[str]) -> None:
        self.emit("def main_worker(gpu, ngpus_per_node, args):")
        self.emit("    args.gpu = gpu")
        self.emit("    model = nn.Linear(16, 4)")
        self.emit("    if args.gpu is not None:")
        self.emit(f"        print({self.s('Use GPU: {} for training')}.format(args.gpu))")
        self.emit("        torch.cuda.set_device(args.gpu)", "api")
        self.emit("        model.cuda(args.gpu)", "api")
        self.emit("    else:")
        self.emit("        model = model.cuda()", "api")
        self.emit("    criterion = nn.CrossEntropyLoss().cuda(args.gpu)", "api")
        self.emit("    if args.resume:")
        self.emit("        if args.gpu is None:")
        self.emit("            checkpoint = torch.load(args.resume)")
        self.emit("        else:")
        expr, tag = self.device_expr("args.gpu")
        self.emit(f"            loc = {expr}", tag)
        self.emit("            checkpoint = torch.load(args.resume, map_location=loc)")
        self.emit(f"        model.load_state_dict(checkpoint[{self.s('state_dict')}])")
        self.emit("    cudnn.benchmark = True")
        self.emit("    for images, target in DataLoader([]):")
        self.emit("        images = images.cuda(args.gpu, non_blocking=True)", "api")
        if "device" in carried:
            self.emit("        target = target.to(args.device, non_blocking=True)")
        else:
            self.emit("        target = target.cuda(args.gpu, non_blocking=True)", "api")
        self.emit("        loss = criterion(model(images), target)")
        self.emit(f"        logger.info({self.s('loss on cuda: %f')}, loss.item())", "keep")
        self.emit(
            f"    torch.save(model.state_dict(), os.path.join(args.data, {self.s('cuda_ckpt.pth')}))",
            "keep",
        )
        self.emit("")

    def ddp_trainer(self) -> None:
        self.emit("class Trainer:")
        self.emit("    def __init__(self, model, snapshot_path):")
        self.emit('        self.local_rank = int(os.environ["LOCAL_RANK"])')
        self.emit("        self.model = model.to(self.local_rank)")
        self.emit("        self.snapshot_path = snapshot_path")
        self.emit("")
        self.emit("    def load_snapshot(self):")
        expr, tag = self.device_expr("self.local_rank")
        if self.chance(0.5):
            self.emit(f"        loc = {expr}", tag)
            self.emit("        snapshot = torch.load(self.snapshot_path, map_location=loc)")
        else:
            self.emit(
                f"        snapshot = torch.load(self.snapshot_path, map_location={expr})", tag
            )
        self.emit(f"        self.model.load_state_dict(snapshot[{self.s('MODEL_STATE')}])")
        self.emit("")
        self.emit("    def run_batch(self, source, targets):")
        self.emit("        source = source.to(self.local_rank)")
        self.emit(
            f"        with torch.autocast(device_type={self.s('cuda')}, dtype=torch.bfloat16):",
            "dev",
        )
        self.emit("            out = self.model(source)")
        self.emit("        return out")
        self.emit("")

    def hf_trainer(self) -> None:
        self.emit("@dataclass")
        self.emit("class TrainingArguments:")
        self.emit(f"    output_dir: str = field(default={self.s('out/cuda-run')})", "keep")
        self.emit(f"    device: str = field(default={self.s('cuda')})", "dev")
        self.emit("    fp16: bool = True")
        self.emit("")
        self.emit("class HFTrainer:")
        self.emit("    def __init__(self, model, args):")
        self.emit("        self.args = args")
        self.emit("        self.model = model.to(self.args.device)")
        self.emit("        self.scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "api")
        self.emit("")
        self.emit("    def training_step(self, batch):")
        self.emit("        batch = {k: v.to(self.args.device) for k, v in batch.items()}")
        self.emit("        with torch.cuda.amp.autocast(enabled=self.args.fp16):", "api")
        self.emit(f"            loss = self.model(**batch)[{self.s('loss')}]")
        self.emit("        self.scaler.scale(loss).backward()")
        if self.chance(0.5):
            self.emit(f"        if self.args.device == {self.s('cuda')}:", "dev")
            self.emit("            torch.cuda.synchronize()", "api")
        self.emit("        return loss")
        self.emit("")

    def config_script(self) -> None:
        index = self.r.randrange(4)
        self.emit("CONFIG = {")
        self.emit(f"    {self.s('device')}: {self.s(f'cuda:{index}')},", "dev")
        self.emit(f"    {self.s('log_dir')}: {self.s('runs/cuda')},", "keep")
        self.emit(f"    {self.s('cache')}: {self.s('cuda')},", "keep")
        self.emit("}")
        self.emit("")
        self.emit("def evaluate(model, loader):")
        self.emit(f"    model.to(CONFIG[{self.s('device')}])")
        self.emit("    model.eval()")
        self.emit("    with torch.no_grad():")
        self.emit("        for x in loader:")
        self.emit(f"            x = x.to(CONFIG[{self.s('device')}])")
        self.emit(f"            if x.device.type == {self.s('cuda')}:", "dev")
        self.emit("                torch.cuda.empty_cache()", "api")
        self.emit(f"    os.makedirs(CONFIG[{self.s('log_dir')}], exist_ok=True)")
        self.emit("")

    def device_var_script(self) -> None:
        self.emit("def train_simple(model, loader, epochs=1):")
        self.emit("    device = torch.device(get_device())")
        self.emit("    model.to(device)")
        self.emit("    for _ in range(epochs):")
        self.emit("        for x, y in loader:")
        self.emit("            x, y = x.to(device), y.to(device)")
        if self.chance(0.5):
            self.emit(f"            if device.type == {self.s('cuda')}:", "dev")
            self.emit("                torch.cuda.synchronize()", "api")
        self.emit(f"    print({self.s('finished training on cuda')})", "keep")
        self.emit("")

    def unsafe_variant(self) -> None:
        """The device name also names a folder: fixable only with --unsafe-fixes."""
        self.emit("def export(model):")
        self.emit(f"    target = {self.s('cuda')}", "dev")
        self.emit("    model.to(target)")
        self.emit(f"    return os.path.join({self.s('exports')}, target)")
        self.emit("")
        self.unsafe_only = True

    def unfixable_variant(self) -> None:
        """An implicitly concatenated device literal: no device string may move."""
        self.emit("def warmup(model):")
        self.emit(f"    model.to({self.s('cu')} {self.s('da')})", "dev")
        self.emit("")
        self.expect_fixed = False

    def main(self, style: str, carried: list[str]) -> None:
        self.emit("def main():")
        self.emit("    args = parser.parse_args()")
        if style == "imagenet":
            self.emit("    ngpus_per_node = torch.cuda.device_count()", "api")
            self.emit("    main_worker(args.gpu, ngpus_per_node, args)")
        elif style == "ddp":
            self.emit("    local_rank = setup_distributed(args)")
            self.emit("    trainer = Trainer(nn.Linear(4, 4), " + self.s("snapshot.pt") + ")")
            self.emit("    trainer.load_snapshot()")
        elif style == "hf":
            self.emit("    trainer = HFTrainer(nn.Linear(4, 4), TrainingArguments())")
        else:
            self.emit("    evaluate(nn.Linear(4, 4), [])")
        if "device" in carried and style != "imagenet":
            self.emit("    model = nn.Linear(2, 2).to(args.device)")
        self.emit(f"    logger.info({self.s('done: cuda=%s')}, torch.cuda.is_available())", "api")
        self.emit("")
        self.emit("")
        self.emit(f"if __name__ == {self.s('__main__')}:")
        self.emit("    main()")


def generate(seed: int) -> Script:
    g = _Gen(seed)
    style = g.r.choice(["imagenet", "ddp", "hf", "config"])
    g.imports(style)
    carried = g.argparse_block()
    if style in ("imagenet", "ddp") or g.chance(0.3):
        if "import torch.distributed as dist" not in g.lines:
            g.lines.insert(
                g.lines.index("from torch.utils.data import DataLoader"),
                "import torch.distributed as dist",
            )
        g.setup_distributed(carried)
    helper = g.chance(0.6)
    if helper:
        g.get_device_helper()
    if style == "imagenet":
        g.imagenet_worker(carried)
    elif style == "ddp":
        g.ddp_trainer()
    elif style == "hf":
        g.hf_trainer()
    else:
        g.config_script()
    if helper:
        g.device_var_script()
    if g.chance(0.15):
        g.unsafe_variant()
    if g.chance(0.1):
        g.unfixable_variant()
    g.main(style, carried)
    if g.backend_used:
        g.lines = [line + "  # backend" if "--dist-backend" in line else line for line in g.lines]
    return Script(seed, "\n".join(g.lines) + "\n", g.expect_fixed, g.unsafe_only)
