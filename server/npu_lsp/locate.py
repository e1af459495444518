"""Where an absolute import of a workspace file goes: Python's own resolution, not the
folder `check` (or the editor) was started from.

Module names are dotted paths relative to the workspace root (`scope.module_name_for`),
so they are unique in a monorepo (mindspore-ai/models has one `src/` package per model:
`official.cv.ResNet.src.dataset`, `official.cv.VIT.src.dataset`). A script's imports do
not see those names: Python puts the script's own folder first on `sys.path`, so
`from src.dataset import create_dataset` in `official/cv/ResNet/train.py` finds
`official/cv/ResNet/src/dataset.py`. Hence: the first name of an absolute import is
looked for in the importer's folder, then in each folder above it (scripts add those to
`sys.path` too: `sys.path.append("..")`), up to the workspace root, and the first that
holds it names the module (`official.cv.ResNet.src.dataset`). The script's folder wins
over the root, as in Python: mindspore-ai/models has a `utils` package at its root and
models with their own `utils`. A name found nowhere stays as written (a library: `numpy`).

The answer depends on which modules the workspace has, so a summary records the first
names it looked up with what they gave (`ModuleInfo.located`): a cached summary is reused
only while each of them still gives the same module (`still_located`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

#: Is this dotted name a module or package of the workspace?
Known = Callable[[str], bool]

#: First names never looked for in the workspace: the standard library and the frameworks
#: the checker has tables for. A folder of a project named like them (a vendored copy) is
#: not what the code means by `import mindspore`, and the rules read these names as written.
_LIBRARIES = frozenset(sys.stdlib_module_names) | {"mindspore", "torch", "numpy", "torch_npu"}


def folder_of(module: str, package: bool) -> str:
    """The package (dotted folder) a module's imports start from: its own for a package's
    `__init__`, else the one holding it ("" at the root)."""
    if package:
        return "" if module == "__main__" else module
    return module.rpartition(".")[0]


def folder_of_file(module: str, path: str) -> str:
    """`folder_of` for the file at `path` with module name `module`."""
    return folder_of(module, path.endswith("__init__.py"))


def locate(name: str, folder: str, known: Known) -> str:
    """The workspace module an absolute `import name` in a file of `folder` finds (see the
    module's docstring); `name` itself when it is at the root or nowhere."""
    top, dot, rest = name.partition(".")
    found = locate_top(top, folder, known)
    return found + dot + rest if found != top else name


def locate_top(top: str, folder: str, known: Known) -> str:
    """`locate` of a first name alone (what `ModuleInfo.located` records)."""
    if top in _LIBRARIES:
        return top
    while folder:
        candidate = f"{folder}.{top}"
        if known(candidate):
            return candidate
        folder = folder.rpartition(".")[0]
    return top  # at the root, or nowhere


def still_located(located: Iterable[tuple[str, str]], folder: str, known: Known) -> bool:
    """Does each first name a summary looked up still give the module it gave?"""
    return all(locate_top(top, folder, known) == was for top, was in located)


def known_of(modules: Iterable[str]) -> Known:
    """`Known` for a set of module names: each of them and every package above it."""
    names: set[str] = set()
    for m in modules:
        while m and m not in names:
            names.add(m)
            m = m.rpartition(".")[0]
    return names.__contains__
