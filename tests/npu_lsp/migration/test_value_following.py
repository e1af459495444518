"""Which "cuda" and "nccl" strings are devices and backends: values followed from the positions
that use them, and everything else left alone (NPU203, NPU204, NPU205 through the engine)."""

from __future__ import annotations

import ast

import pytest

from npu_lsp.config import Config
from npu_lsp.engine import check_source
from npu_lsp.fixing import fix_source

HEAD = (
    "import os\nimport argparse\nimport logging\nimport torch\nimport torch.distributed as dist\n"
)
CONFIG = Config(select=("NPU203", "NPU204", "NPU205"))


def findings(body: str) -> list[tuple[int, str]]:
    text = HEAD + body
    offset = HEAD.count("\n")
    return [(d.span.line - offset, d.code) for d in check_source(text, "t.py", CONFIG)]


DEVICES = {
    "name": 'dev = "cuda"\nx.to(dev)\n',
    "default": 'def f(x, device="cuda"):\n    return x.to(device)\n',
    "argument": 'def f(x, device):\n    return x.to(device)\nf(t, "cuda")\n',
    "keyword argument": 'def f(x, device=None):\n    return x.to(device)\nf(t, device="cuda")\n',
    "class argument": (
        "class T:\n    def __init__(self, m, device):\n        self.m = m.to(device)\n"
        'T(net, "cuda")\n'
    ),
    "argparse": 'p = argparse.ArgumentParser()\np.add_argument("--device", default="cuda")\n'
    "a = p.parse_args()\nx.to(a.device)\n",
    "argparse dest": 'p = argparse.ArgumentParser()\np.add_argument("-d", dest="dev", default="cuda")\n'
    "a = p.parse_args()\ntorch.device(a.dev)\n",
    "set_defaults": 'p = argparse.ArgumentParser()\np.set_defaults(device="cuda")\n'
    "a = p.parse_args()\ntorch.ones(1, device=a.device)\n",
    "dict": 'cfg = {"device": "cuda"}\ntorch.zeros(1, device=cfg["device"])\n',
    "dict call": 'cfg = dict(device="cuda")\nmodel.to(cfg.get("device"))\n',
    "dict get default": 'cfg = {}\nmodel.to(cfg.get("device", "cuda"))\n',
    "f-string": 'rank = 0\nx = torch.load("w.pt", map_location=f"cuda:{rank}")\n',
    "concatenation": 'rank = 0\nx.to("cuda:" + str(rank))\n',
    "format": 'rank = 0\nx.to("cuda:{}".format(rank))\n',
    "percent": 'rank = 0\nx.to("cuda:%d" % rank)\n',
    "environment default": 'x.to(os.environ.get("DEVICE", "cuda"))\n',
    "return value": 'def pick():\n    return "cuda"\ntorch.set_default_device(pick())\n',
    "conditional": 'x.to("cuda" if ok else "cpu")\n',
    "or": 'x.to(user_device or "cuda")\n',
    "attribute": 'class M:\n    def __init__(self):\n        self.device = "cuda"\n'
    "    def go(self, x):\n        return x.to(self.device)\n",
    "dataclass field": "from dataclasses import dataclass, field\n@dataclass\nclass A:\n"
    '    device: str = field(default="cuda")\ndef go(a, x):\n    return x.to(a.device)\n',
    "autocast": 'with torch.autocast("cuda"):\n    pass\n',
    "grad scaler": 'scaler = torch.amp.GradScaler("cuda")\n',
    "set_device": 'torch.cuda.set_device("cuda:1")\n',
    "device type compare": 'if x.device.type == "cuda":\n    pass\n',
    "in str(device)": 'if "cuda" in str(x.device):\n    pass\n',
    "startswith": 'd = "cuda:0"\nx.to(d)\nif d.startswith("cuda"):\n    pass\n',
    "torch.device": 'd = torch.device("cuda", 0)\n',
    # peft's memory tracker: the device type names the device's module
    "getattr(torch, device type)": 'kind = "cuda" if ok else "cpu"\ngetattr(torch, kind).synchronize()\n',
    # stable-diffusion's scripts: a local name for autocast or nullcontext
    "conditional callee": "def run(half):\n    scope = torch.autocast if half else nullcontext\n"
    '    with scope("cuda"):\n        pass\n',
    # litgpt's tests: the device's text compared with an f-string
    "f-string compare": 'n = 2\nif str(x.device) == f"cuda:{n - 1}":\n    pass\n',
}

NOT_DEVICES = {
    "non-sink callee alias": 'def run():\n    scope = nullcontext\n    with scope("cuda"):\n        pass\n',
    "getattr of another object": 'kind = "cuda"\nf = getattr(backends, kind)\n',
    "folder": 'root = os.path.join("build", "cuda")\n',
    "file name": 'log = open("cuda.log", "w")\n',
    "message": 'print("cuda")\nlogging.info("running on cuda")\n',
    "dict key": 'stats = {"cuda": 0}\nstats["cuda"] += 1\n',
    "unused option": 'p = argparse.ArgumentParser()\np.add_argument("--kernels", default="cuda")\n',
    "folder variable": 'name = "cuda"\nos.makedirs(name, exist_ok=True)\n',
    "compared, never a device": 'kind = "cuda"\nif kind == "cuda":\n    pass\n',
    "extension name": (
        'from torch.utils.cpp_extension import load\next = load(name="cuda", sources=["a.cpp"])\n'
    ),
    "dict that is never read": 'meta = {"device": "cuda"}\nprint(meta)\n',
    "nccl message": 'print("nccl")\nos.environ["NCCL_DEBUG"] = "INFO"\n',
    "nccl option unused": 'p = argparse.ArgumentParser()\np.add_argument("--comm", default="nccl")\n',
    "cudatoolkit": 'pkg = "cudatoolkit"\nx.to(pkg)\n',
    "to a dtype": "x = x.to(torch.float16)\n",
}


@pytest.mark.parametrize("body", DEVICES.values(), ids=DEVICES.keys())
def test_device_strings_are_found_through_their_values(body: str) -> None:
    found = findings(body)
    lines = body.splitlines()
    expected = {n for n, line in enumerate(lines, 1) if '"cuda' in line and "print" not in line}
    assert {line for line, _ in found} == expected, found
    fixed = fix_source(HEAD + body, "t.py", CONFIG).text
    ast.parse(fixed)
    assert '"cuda' not in fixed and check_source(fixed, "t.py", CONFIG) == []


@pytest.mark.parametrize("body", NOT_DEVICES.values(), ids=NOT_DEVICES.keys())
def test_strings_that_never_reach_a_device_are_left_alone(body: str) -> None:
    assert findings(body) == []
    assert fix_source(HEAD + body, "t.py", CONFIG).text == HEAD + body


BACKENDS = {
    "argparse": 'p = argparse.ArgumentParser()\np.add_argument("--dist-backend", default="nccl")\n'
    "args = p.parse_args()\ndist.init_process_group(backend=args.dist_backend)\n",
    "environment": 'dist.init_process_group(os.environ.get("BACKEND", "nccl"))\n',
    "conditional": 'b = "nccl" if torch.cuda.is_available() else "gloo"\ndist.new_group(backend=b)\n',
    "compare": 'if dist.get_backend() == "nccl":\n    pass\n',
    "enum": "dist.init_process_group(dist.Backend.NCCL)\n",
}


@pytest.mark.parametrize("body", BACKENDS.values(), ids=BACKENDS.keys())
def test_backend_names_are_found_through_their_values(body: str) -> None:
    found = findings(body)
    assert found and {code for _, code in found} == {"NPU205"}
    fixed = fix_source(HEAD + body, "t.py", CONFIG).text
    assert "nccl" not in fixed.lower() and "hccl" in fixed.lower()


def test_a_literal_that_cannot_be_rewritten_keeps_the_whole_group_unfixed() -> None:
    body = 'x.to("cuda")\ny.to("cu" "da")\n'
    diags = check_source(HEAD + body, "t.py", CONFIG)
    assert [d.code for d in diags] == ["NPU204", "NPU204"]
    assert all(d.fix is None for d in diags)


def test_each_fix_of_a_group_moves_the_whole_group() -> None:
    body = 'd = "cuda:0"\nx.to(d)\nif x.device.type == "cuda":\n    pass\n'
    diags = check_source(HEAD + body, "t.py", CONFIG)
    assert len(diags) == 2
    for d in diags:
        assert d.fix is not None and d.fix.safe
        assert "(and 1 other device string of this file)" in d.fix.title
        assert {e.new_text for e in d.fix.edits} == {'"npu:0"', '"npu"', "\nimport torch_npu"}


def test_a_device_value_also_used_as_a_path_makes_the_group_unsafe() -> None:
    body = 'd = "cuda"\nx.to(d)\nckpt = os.path.join("out", d)\n'
    (diag,) = check_source(HEAD + body, "t.py", CONFIG)
    assert diag.fix is not None and not diag.fix.safe
    assert diag.fix.title.endswith("(unsafe: the value is also used for something else at line 8)")


@pytest.mark.parametrize(
    "read, safe",
    [
        ('if str(d) == "cpu":\n    pass\n', True),  # openai/CLIP clip.py `load`
        ('ok = str(d).startswith("cpu")\n', True),
        ('print(f"on {str(d)}")\n', True),
        ('ckpt = os.path.join("out", str(d))\n', False),  # the text builds a path
        ('name = str(d)\nckpt = os.path.join("out", name)\n', False),  # through a copy
    ],
)
def test_the_text_of_a_device_is_read_as_the_device_is(read: str, safe: bool) -> None:
    body = 'd = "cuda"\nx.to(d)\n' + read
    (diag,) = check_source(HEAD + body, "t.py", CONFIG)
    assert diag.fix is not None and diag.fix.safe is safe


def test_noqa_keeps_a_literal_out_of_its_group() -> None:
    body = 'x.to("cuda")\ny.to("cuda:1")  # noqa: NPU204\n'
    (diag,) = check_source(HEAD + body, "t.py", CONFIG)
    fixed = fix_source(HEAD + body, "t.py", CONFIG).text
    assert 'x.to("npu")' in fixed and 'y.to("cuda:1")  # noqa: NPU204' in fixed
    assert diag.fix is not None


def test_map_location_dict_keys_name_the_saved_device_and_stay() -> None:
    body = 'state = torch.load("w.pt", map_location={"cuda:0": "cuda:1"})\n'
    fixed = fix_source(HEAD + body, "t.py", CONFIG).text
    assert 'map_location={"cuda:0": "npu:1"}' in fixed


@pytest.mark.parametrize(
    "call",
    [
        'DataLoader(ds, pin_memory=True, pin_memory_device="cuda")',
        'AutoModel.from_pretrained("gpt2", device_map="cuda:0")',
        'DDP(model, device_ids=[0], output_device="cuda:0")',
    ],
)
def test_other_device_keywords(call: str) -> None:
    assert [code for _, code in findings(call + "\n")] == ["NPU204"]


def test_an_f_string_in_torch_device_is_shown_as_written() -> None:
    (diag,) = check_source(HEAD + 'd = torch.device(f"cuda:{rank}")\n', "t.py", CONFIG)
    assert diag.code == "NPU203"
    assert diag.message == '`torch.device(f"cuda:{...}")` names a CUDA device; use f"npu:{...}"'


def test_loop_names_take_the_elements_they_iterate() -> None:
    body = 'devices = ["cuda:0", "cuda:1"]\nfor dev in devices:\n    x.to(dev)\n'
    body += 'ys = [y.to(d) for d in ("cuda:2", "cuda:3")]\n'
    assert [line for line, _ in findings(body)] == [1, 1, 4, 4]
    assert "cuda" not in fix_source(HEAD + body, "t.py", CONFIG).text


def test_imports_inside_functions_resolve() -> None:
    text = (
        "def main(rank):\n"
        "    import torch\n"
        "    import torch.distributed as dist\n"
        "    from torch.cuda import amp\n"
        "    torch.cuda.set_device(rank)\n"
        '    dist.init_process_group(backend="nccl")\n'
        '    x = torch.ones(1, device=torch.device("cuda", rank))\n'
    )
    diags = check_source(text, "m.py", Config(select=("NPU",)))
    assert [(d.span.line, d.code) for d in diags] == [
        (4, "NPU206"),
        (5, "NPU202"),
        (6, "NPU205"),
        (7, "NPU203"),
    ]
    fixed = fix_source(text, "m.py", Config(select=("NPU",))).text
    assert fixed.splitlines()[1:3] == ["    import torch", "    import torch_npu"]
    assert "torch.npu.set_device(rank)" in fixed and '"hccl"' in fixed and '"npu"' in fixed


@pytest.mark.parametrize(
    "call",
    [
        'deepspeed.init_distributed(dist_backend="nccl")',
        'TrainingArguments(output_dir="out", ddp_backend="nccl")',
    ],
)
def test_other_backend_keywords(call: str) -> None:
    assert [code for _, code in findings(call + "\n")] == ["NPU205"]


def test_attribute_style_config_dicts() -> None:
    body = 'cfg = EasyDict({"device": "cuda:0", "out": "runs/cuda"})\nmodel.to(cfg.device)\n'
    assert findings(body) == [(1, "NPU204")]
    fixed = fix_source(HEAD + body, "t.py", CONFIG).text
    assert '{"device": "npu:0", "out": "runs/cuda"}' in fixed


def test_the_type_of_a_value_used_as_a_device_is_a_device_type() -> None:
    body = (
        "def profile(ops, device=None):\n"
        "    for m in ops:\n"
        "        m = m.to(device)\n"
        '        m = m.half() if device.type == "cuda" else m\n'
    )
    assert findings(body) == [(4, "NPU204")]
