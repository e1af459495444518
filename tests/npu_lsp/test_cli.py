"""`ascend-lens check` as users run it: a subprocess, every format and exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXE = [sys.executable, "-m", "ascend_lens", "check"]

BAD = """import mindspore as ms
from mindspore import nn


class Net(nn.Cell):
    def construct(self, x):
        try:
            y = x * 2
        except ValueError:
            y = x
        s = {1, 2}
        return y
"""
CLEAN = """import mindspore as ms
from mindspore import nn


class Net(nn.Cell):
    def construct(self, x):
        return x * 2
"""


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def test_json_shape_and_exit_1(project: Path) -> None:
    proc = run("--format", "json", str(project / "bad.py"))
    assert proc.returncode == 1, proc.stderr
    items = json.loads(proc.stdout)
    assert [list(i) for i in items] == [
        ["path", "line", "column", "end_line", "end_column", "code", "severity", "message"]
    ] * 2
    assert [(i["code"], i["line"], i["column"], i["severity"]) for i in items] == [
        ("MS101", 7, 9, "error"),
        ("MS109", 11, 13, "error"),
    ]
    assert items[1]["end_line"] == 11 and items[1]["end_column"] == 19  # `{1, 2}` end exclusive
    assert items[0]["path"] == str(project / "bad.py")


def test_clean_file_exits_0_with_empty_array(project: Path) -> None:
    proc = run("--format", "json", str(project / "clean.py"))
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == []


def test_text_format(project: Path) -> None:
    proc = run(str(project / "bad.py"))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"{project / 'bad.py'}:7:9: MS101 ")
    assert lines[1].startswith(f"{project / 'bad.py'}:11:13: MS109 [*] ")
    assert lines[-1].startswith("Found 2 problems.")
    assert run(str(project / "clean.py")).stdout == "All checks passed!\n"


def test_sarif_2_1_0(project: Path) -> None:
    proc = run("--format", "sarif", str(project / "bad.py"))
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["version"] == "2.1.0"
    run0 = doc["runs"][0]
    assert run0["tool"]["driver"]["name"] == "ascend-lens"
    rule_ids = [r["id"] for r in run0["tool"]["driver"]["rules"]]
    assert rule_ids == ["MS101", "MS109"]
    res = run0["results"][0]
    assert res["ruleId"] == "MS101" and res["level"] == "error"
    assert rule_ids[res["ruleIndex"]] == "MS101"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (7, 9)


def test_folder_select_and_ignore(project: Path) -> None:
    items = json.loads(run("--format", "json", str(project)).stdout)
    assert {Path(i["path"]).name for i in items} == {"bad.py"}
    only = json.loads(run("--format", "json", "--select", "MS109", str(project)).stdout)
    assert [i["code"] for i in only] == ["MS109"]
    proc = run("--format", "json", "--ignore", "MS101,MS109", str(project))
    assert proc.returncode == 0 and json.loads(proc.stdout) == []


def test_syntax_level_flag_turns_strict_rules_on(tmp_path: Path) -> None:
    src = "from mindspore import nn\n\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        return x.asnumpy()\n"
    (tmp_path / "a.py").write_text(src)
    assert run("--format", "json", str(tmp_path / "a.py")).returncode == 0
    proc = run("--format", "json", "--syntax-level", "strict", str(tmp_path / "a.py"))
    assert proc.returncode == 1
    assert [i["code"] for i in json.loads(proc.stdout)] == ["MS130"]


@pytest.mark.parametrize(
    "args",
    [
        ["--format", "xml", "x.py"],
        ["--select", "XYZ999", "x.py"],
        ["--syntax-level", "medium", "x.py"],
        ["--no-such-flag"],
        ["does-not-exist.py"],
    ],
)
def test_usage_errors_exit_2(args: list[str], project: Path) -> None:
    (project / "x.py").write_text("x = 1\n")
    proc = run(*args, cwd=project)
    assert proc.returncode == 2
    assert proc.stderr.startswith("ascend-lens check: error:")
    assert "Traceback" not in proc.stderr


def test_pyproject_configuration(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.ascend-lens]\nignore = ["MS109"]\n[tool.ascend-lens.per-file-ignores]\n"legacy/*.py" = ["MS1"]\n'
    )
    (project / "legacy").mkdir()
    (project / "legacy" / "old.py").write_text(BAD)
    items = json.loads(run("--format", "json", ".", cwd=project).stdout)
    assert [(Path(i["path"]).name, i["code"]) for i in items] == [("bad.py", "MS101")]


def test_bad_configuration_warns_and_uses_defaults(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.ascend-lens]\nsyntax-level = "fast"\nselect = 3\n'
    )
    proc = run("--format", "json", "bad.py", cwd=project)
    assert proc.returncode == 1
    assert "syntax-level" in proc.stderr and "select" in proc.stderr
    assert len(json.loads(proc.stdout)) == 2


def test_noqa_comments(project: Path) -> None:
    src = BAD.replace("        try:", "        try:  # noqa: MS101").replace(
        "{1, 2}", "{1, 2}  # noqa"
    )
    (project / "bad.py").write_text(src)
    proc = run("--format", "json", "bad.py", cwd=project)
    assert proc.returncode == 0 and json.loads(proc.stdout) == []


def test_unreadable_files_are_refused_cleanly(tmp_path: Path) -> None:
    (tmp_path / "gbk.py").write_bytes("x = '中文'\n".encode("gbk"))
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    proc = run("--format", "json", str(tmp_path))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    got = {(Path(i["path"]).name, i["code"]) for i in json.loads(proc.stdout)}
    assert got == {("gbk.py", "AL002"), ("blob.py", "AL002"), ("broken.py", "AL001")}


def test_options_may_follow_paths(project: Path) -> None:
    proc = run(
        str(project / "clean.py"), "--format", "json", str(project / "bad.py"), "--select", "MS109"
    )
    assert proc.returncode == 1
    assert [(Path(i["path"]).name, i["code"]) for i in json.loads(proc.stdout)] == [
        ("bad.py", "MS109")
    ]


def test_helper_errors_are_reported_at_the_helper_and_at_the_call(tmp_path: Path) -> None:
    (tmp_path / "g.py").write_text(
        "from mindspore import nn\n\n\ndef gen(n):\n    yield n\n\n\n"
        "class Net(nn.Cell):\n    def construct(self, x):\n        return gen(x)\n"
    )
    items = json.loads(run("--format", "json", str(tmp_path / "g.py")).stdout)
    assert [(i["line"], i["code"], i["severity"]) for i in items] == [
        (5, "MS108", "error"),
        (10, "MS108", "error"),
    ]
    sarif = json.loads(run("--format", "sarif", str(tmp_path / "g.py")).stdout)
    related = sarif["runs"][0]["results"][0]["relatedLocations"][0]
    assert related["physicalLocation"]["region"]["startLine"] == 10


def test_folders_include_files_other_checkers_claim(tmp_path: Path) -> None:
    # rank tables are routed by the engine's file-type table to the HCCL checker
    (tmp_path / "rank_table.json").write_text('{"version": "1.0", "server_count": "1", ')
    (tmp_path / "notes.json").write_text("{not json at all")
    items = json.loads(run("--format", "json", str(tmp_path)).stdout)
    assert {Path(i["path"]).name for i in items} == {"rank_table.json"}
    assert all(i["code"].startswith("HCCL") for i in items)


def test_no_config_ignores_pyproject(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.ascend-lens]\nignore = ["MS"]\n')
    assert run("--format", "json", "bad.py", cwd=project).returncode == 0
    proc = run("--format", "json", "--no-config", "bad.py", cwd=project)
    assert proc.returncode == 1 and len(json.loads(proc.stdout)) == 2


# Non-ASCII text before a node: `ast` offsets are UTF-8 bytes, our columns are code points.
NON_ASCII = """import torch
from mindspore import nn


class Net(nn.Cell):
    def construct(self, x):
        t = "张量"; s = {1, 2}  # 集合
        e = "🚀"; u = {3}
        return x


m = "模型"; model = Net().cuda()
"""


def test_json_columns_count_code_points_on_non_ascii_lines(tmp_path: Path) -> None:
    (tmp_path / "u.py").write_text(NON_ASCII, encoding="utf-8")
    proc = run("--format", "json", "--select", "MS109,NPU201", str(tmp_path / "u.py"))
    items = json.loads(proc.stdout)
    got = [(i["code"], i["line"], i["column"], i["end_column"]) for i in items]
    lines = NON_ASCII.splitlines()
    assert got == [
        ("MS109", 7, lines[6].index("{") + 1, lines[6].index("}") + 2),
        ("MS109", 8, lines[7].index("{") + 1, lines[7].index("}") + 2),
        ("NPU201", 12, lines[11].index("cuda") + 1, lines[11].index("cuda") + 5),
    ]
    assert lines[6][got[0][2] - 1 : got[0][3] - 1] == "{1, 2}"
    assert lines[7][got[1][2] - 1 : got[1][3] - 1] == "{3}"


NOT_TORCH = '''"""A device registry that happens to mention CUDA."""

BACKENDS = {"cuda": "NVIDIA", "npu": "Ascend"}
DEFAULT = "cuda"


class Tensor:
    def to(self, device: str) -> "Tensor":
        return self

    def npu(self) -> "Tensor":
        return self


t = Tensor().to("cuda").npu()
DOC = """
import torch
x = y.cuda()
"""
'''
TORCH = """import torch

x = torch.ones(2).to("cuda")
backend_name = "npu"
"""


def test_migration_rules_ignore_code_that_never_imports_torch(tmp_path: Path) -> None:
    (tmp_path / "registry.py").write_text(NOT_TORCH)
    proc = run("--format", "json", "--select", "NPU", str(tmp_path / "registry.py"))
    assert proc.returncode == 0, proc.stdout
    assert json.loads(proc.stdout) == []


def test_migration_rules_fire_on_torch_code_and_npu209_needs_a_real_npu_use(
    tmp_path: Path,
) -> None:
    (tmp_path / "train.py").write_text(TORCH)
    items = json.loads(
        run("--format", "json", "--select", "NPU", str(tmp_path / "train.py")).stdout
    )
    # "npu" as a plain string is not an NPU device use: no NPU209 for it
    assert [(i["code"], i["line"]) for i in items] == [("NPU204", 3)]
    (tmp_path / "train.py").write_text(TORCH + 'y = x.to("npu:0")\n')
    items = json.loads(
        run("--format", "json", "--select", "NPU", str(tmp_path / "train.py")).stdout
    )
    assert [(i["code"], i["line"]) for i in items] == [("NPU204", 3), ("NPU209", 5)]


HELPER_PROJECT = """from mindspore import nn


def helper(x):
    try:
        return x
    except ValueError:
        return x


class Net(nn.Cell):
    def construct(self, x):
        return helper(x)
"""


def test_related_call_site_is_listed_once_for_a_relative_path(tmp_path: Path) -> None:
    (tmp_path / "net.py").write_text(HELPER_PROJECT)
    proc = run("net.py", cwd=tmp_path)
    notes = [ln for ln in proc.stdout.splitlines() if "note: compiled because" in ln]
    assert notes == [
        "    net.py:13:16: note: compiled because `net.Net.construct` calls it here"
    ], proc.stdout


def test_the_examples_show_what_the_checker_is_for() -> None:
    # README and scripts/demo promise that `check examples/` finds graph-mode mistakes and a
    # CUDA script's migration points; the pyACL examples are clean.
    repo = Path(__file__).resolve().parents[2]
    proc = run("--format", "json", "examples", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    found = [(d["path"], d["line"], d["code"]) for d in json.loads(proc.stdout)]
    graph = "examples/graph_mode_mistakes.py"
    cuda = "examples/cuda_training.py"
    assert found == [
        (cuda, 27, "NPU210"),
        (cuda, 33, "NPU205"),
        (cuda, 34, "NPU202"),
        (cuda, 35, "NPU208"),
        (cuda, 36, "NPU203"),
        (cuda, 38, "NPU201"),
        (cuda, 39, "NPU211"),
        (cuda, 41, "NPU206"),
        (cuda, 44, "NPU204"),
        (cuda, 46, "NPU206"),
        (cuda, 53, "NPU202"),
        (cuda, 54, "NPU202"),
        (graph, 20, "MS126"),
        (graph, 25, "MS126"),
        (graph, 28, "MS101"),
        (graph, 33, "MS120"),
        (graph, 38, "MS118"),
        (graph, 40, "MS142"),
        # `Trainer(Encoder(16, 3))`: `self.net(x, steps)` compiles Encoder's construct, and
        # MindSpore names this call for its errors
        (graph, 52, "MS101"),
        (graph, 52, "MS118"),
        (graph, 52, "MS120"),
        (graph, 54, "MS111"),
        (graph, 56, "MS116"),
    ]


SUB_CELL_PROJECT = """from mindspore import nn


class Inner(nn.Cell):
    def construct(self, x):
        del x
        return 1


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def construct(self, x):
        y = self.inner(x)
        return y
"""


def test_an_error_in_a_sub_cell_construct_is_repeated_at_the_call_that_compiles_it(
    tmp_path: Path,
) -> None:
    # MindSpore names the outer `self.inner(x)` line too: the sub-cell is compiled from there
    (tmp_path / "net.py").write_text(SUB_CELL_PROJECT)
    proc = run("--format", "json", "net.py", cwd=tmp_path)
    found = [(d["line"], d["column"], d["code"]) for d in json.loads(proc.stdout)]
    assert found == [(6, 9, "MS102"), (16, 13, "MS102")], proc.stdout


FALLBACK_THROUGH_SUB_CELL = """import functools
from mindspore import nn


def shift(t, s):
    return t + s


class Stage(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fn = functools.partial(shift, s=1.0)

    def construct(self, x):
        return self.fn(x)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.stage = Stage()

    def construct(self, x):
        x = self.stage(x)
        i = 0
        while x.sum() < 30 and i < 5:
            x = x + 1
            i += 1
        return x
"""


def test_a_value_from_a_lax_python_call_inside_a_sub_cell_joins_without_error(
    tmp_path: Path,
) -> None:
    # at LAX the held `functools.partial` runs as Python: its result is an opaque object, which
    # MindSpore joins with a Python bool; STRICT rejects the call itself (inputs not constant)
    (tmp_path / "net.py").write_text(FALLBACK_THROUGH_SUB_CELL)
    lax = run("--format", "json", "net.py", cwd=tmp_path)
    assert lax.returncode == 0 and json.loads(lax.stdout) == [], lax.stdout
    strict = run("--format", "json", "--syntax-level", "strict", "net.py", cwd=tmp_path)
    found = [(d["line"], d["code"]) for d in json.loads(strict.stdout) if d["code"] != "MS119"]
    assert found == [(15, "MS131"), (24, "MS131")], strict.stdout


FALLBACK_INTO_DENSE = """import mindspore as ms
from mindspore import nn, ops


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 3)
        self.act = nn.ReLU()

    def construct(self, x):
        return self.act(self.fc(x)) + x


class Cfg:
    def __init__(self, use_clip):
        self.use_clip = use_clip


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([Block() for _ in range(2)])
        self.relu = nn.ReLU()
        self.cfg = Cfg(False)

    def construct(self, x):
        n = len(x.asnumpy().tolist())
        x = x + n * 0.0
        y = self.relu(x)
        if self.cfg.use_clip:
            y = ops.clip_by_value(y, -1.0, 1.0)
        for blk in self.blocks:
            x = blk(x)
        return x + y


net = Net()
"""


def test_a_lax_fallback_value_reaching_a_cell_that_reads_its_shape_is_an_error(
    tmp_path: Path,
) -> None:
    # nn.Dense reads its input's shape (MindSpore: "'int' object has no attribute '__len__'");
    # nn.ReLU does not, and the clip_by_value branch is folded away by the constant config
    (tmp_path / "net.py").write_text(FALLBACK_INTO_DENSE)
    proc = run("--format", "json", "net.py", cwd=tmp_path)
    found = [(d["line"], d["code"], d["message"]) for d in json.loads(proc.stdout)]
    assert found == [
        (
            34,
            "MS145",
            "this call passes a JIT Fallback value on to line 12: `nn.Dense` reads the shape or "
            "dtype of its input, which here comes from a JIT Fallback call",
        )
    ], proc.stdout
    clean = FALLBACK_INTO_DENSE.replace("len(x.asnumpy().tolist())", "x.shape[0]")
    (tmp_path / "net.py").write_text(clean)
    proc = run("--format", "json", "net.py", cwd=tmp_path)
    assert json.loads(proc.stdout) == [], proc.stdout


def test_a_mindspore_function_that_logs_on_every_call_is_refused_in_compiled_code(
    tmp_path: Path,
) -> None:
    # measured: ops.soft_shrink and ms.dtype_to_pytype log a deprecation notice, and MindSpore
    # says "the method or function 'mindspore.log.warning' is not supported in 'construct'"
    (tmp_path / "net.py").write_text(
        "import mindspore as ms\nfrom mindspore import nn, ops\n\n\n"
        "class Net(nn.Cell):\n    def construct(self, x):\n"
        "        t = ms.dtype_to_pytype(ms.float32)\n        return ops.soft_shrink(x) + ops.relu(x)\n"
    )
    proc = run("--format", "json", "net.py", cwd=tmp_path)
    found = [(d["line"], d["column"], d["code"]) for d in json.loads(proc.stdout)]
    assert found == [(7, 13, "MS116"), (8, 16, "MS116")], proc.stdout


def test_ops_split_of_a_lax_fallback_value_is_an_error(tmp_path: Path) -> None:
    # ops.split hands the input's ndim to a compile-time function; MindSpore: "name 'axis' is
    # not defined". The fallback here is `id(x)` (a builtin MindSpore does not compile).
    (tmp_path / "net.py").write_text(
        "from mindspore import nn, ops\n\n\ndef halves(x):\n    return ops.split(x, 1, axis=0)[0]\n\n\n"
        "class Net(nn.Cell):\n    def construct(self, x):\n        c = int(id(x) > 0)\n"
        "        x = x + c * 0.0\n        return halves(x)\n"
    )
    proc = run("--format", "json", "net.py", cwd=tmp_path)
    found = [(d["line"], d["code"]) for d in json.loads(proc.stdout)]
    assert found == [(12, "MS145")], proc.stdout


def test_graph_mode_next_and_bytes_differ_from_python(tmp_path: Path) -> None:
    # measured with MindSpore 2.10: `x + next(iter(...))` (Stack error), `next(it, 0)`
    # ("the number of input should be 1"), `max(bytes(...))` (Add with a string) fail;
    # unpacking the pair and `sum(bytearray(...))` compile
    (tmp_path / "net.py").write_text(
        "from mindspore import nn\n\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
        "        first = next(iter([2, 5]))\n        y = x + first\n"
        "        z = next(iter([2, 5]), 0)\n        v, rest = next(iter([2, 5]))\n"
        "        return y + z + v + max(bytes([1, 3])) + sum(bytearray([1, 3]))\n"
    )
    proc = run("--format", "json", "net.py", cwd=tmp_path)
    found = [(d["line"], d["column"], d["code"]) for d in json.loads(proc.stdout)]
    assert found == [(6, 17, "MS146"), (8, 13, "MS146"), (10, 28, "MS146")], proc.stdout
