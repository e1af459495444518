"""Which files run in GRAPH_MODE: the one answer every rule asks.

MindSpore 2.10's default mode is PYNATIVE_MODE (`ms.get_context("mode") == 1`): a Cell
called in PyNative runs its `construct` as Python, and only `@ms.jit` / `ms.jit(fn)` /
jit-decorated `construct` code (and what it reaches) is compiled. `scope._Modes` reads a
file's `set_context(mode=...)` calls once, while summarising it, and stores the decision in
`ModuleInfo.graph_mode` / `ModuleInfo.default_mode`; rules never read `set_context`
themselves, they ask the functions below.

The decision (measured: written/everyday probes `fix36a_*`, judged by MindSpore 2.10):

- GRAPH_MODE (`graph_mode is True`): a literal `mode=GRAPH_MODE` / `mode=0` /
  `context.GRAPH_MODE` in effect at the first or the last module-level network call
  (`ms.`, `mindspore.`, `context.set_context`, at module level, under `if __name__ ==
  "__main__":` or inside a function such as `main()`). A setting after the last call
  applies to no call (`ms.set_context(mode=ms.GRAPH_MODE)` after the only `net(x)`
  compiles nothing; before a second call, that call compiles).
- PyNative (`graph_mode is False`): a literal `mode=PYNATIVE_MODE` / `mode=1` in effect, or,
  with no literal mode at all, a *script*: a file that runs itself (an `if __name__ ==
  "__main__":` block, or a module-level call of its own functions, classes or instances).
  That is MindSpore's default (`default_mode` is then True); a Cell called there, at module
  level, under `__main__` or in `main()`, directly, through `nn.TrainOneStepCell`,
  `ms.value_and_grad` or `Model.train`, runs eagerly; `set_context(jit_level=...)` /
  `jit_config` choose no mode. Only jit roots compile, with the Cells they reach.
- Unknown (`graph_mode is None`): a mode read from a variable, an argument or the
  environment (`mode=args.mode`, `mode=MODE`), or a module that runs nothing itself (a
  model library: the training script that imports it chooses the mode). Checked as graph
  mode, the way most such code is run: Cells' `construct` are compiled roots. A rule whose
  error exists only when GRAPH_MODE is really set (`sets_graph_mode`) stays silent here.

A graph-only mistake in a PyNative file is not an error (MindSpore runs it); the
checker reports nothing for a `construct` no jit root reaches there, as for a file that
sets PYNATIVE_MODE.

The mode is global at run time: the script that runs chooses it for every module it
imports. So a module that sets no literal mode itself (a library that runs nothing, or a
script that runs in MindSpore's default mode only when run itself, e.g. a `__main__`
smoke test under a model file) takes the mode of the project's scripts that import it
(`inherit`, over the project's import graph: the CLI's files, the language server's
workspace), directly or through other such modules:

- a script with a literal GRAPH_MODE reaches it: graph, as if set (`sets_graph_mode`):
  the Cells that script builds and calls compile their `construct` and what it calls
  (judged: official/cv/PointNet's train.py sets `context.GRAPH_MODE` and trains
  `src.network`'s Cells; MindSpore 2.10 rejects their `x.asnumpy()` there);
- otherwise, only scripts in PyNative (literal or by default) reach it: PyNative;
- otherwise (no importing script, or one whose mode comes from a variable) as before:
  unknown for a library, PyNative for a default-mode script.

A module with a literal mode of its own, or a script reading its mode from a variable,
keeps its own decision and does not pass its importers' mode on (it sets one itself). A
module that sets its mode from a variable but runs nothing passes it on and stays
unknown. `ModuleInfo.mode_kind` records which of these a file is (`kind`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from npu_lsp.scope import ModuleInfo

#: `ModuleInfo.mode_kind` values (`kind`): a literal GRAPH_MODE; a literal PYNATIVE_MODE;
#: a script whose mode comes from a variable; a script in MindSpore's default mode (takes
#: GRAPH_MODE from an importer); a library (takes its importers' mode); a library setting
#: its mode from a variable (passes its importers' mode on, stays unknown)
GRAPH, PYNATIVE, VARIABLE, DEFAULT, LIBRARY, LIBRARY_VARIABLE = "g", "p", "v", "d", "l", "lv"
#: kinds whose own decision an importer's mode changes (`apply`)
INHERITING = frozenset({DEFAULT, LIBRARY})
#: kinds whose modules an importer's mode reaches through
_PASSING = frozenset({DEFAULT, LIBRARY, LIBRARY_VARIABLE})


def compiles_cells(info: ModuleInfo) -> bool:
    """Is a Cell's `construct` compiled when the file calls the Cell (GRAPH_MODE, or a mode
    not known: checked as graph)? False in PyNative, where only jit roots compile."""
    return info.graph_mode is not False


def sets_graph_mode(info: ModuleInfo) -> bool:
    """Does the file really run in GRAPH_MODE (a literal setting in effect)? For errors
    MindSpore raises in GRAPH_MODE only, never in an `@ms.jit` function under PyNative."""
    return info.graph_mode is True


def runs_eagerly(info: ModuleInfo) -> bool:
    """Does the file run in PyNative (set, or MindSpore's default in a script)?"""
    return info.graph_mode is False


def default_mode(info: ModuleInfo) -> bool:
    """Is the file a script that sets no mode (PyNative by MindSpore's default)? Some
    checks differ from an explicit PYNATIVE_MODE (`@lazy_inline` is refused, MS239)."""
    return info.default_mode


def kind(graph_mode: bool | None, default: bool, runs: bool, variable: bool) -> str:
    """The `mode_kind` of a file from its own decision (`scope._Modes`): its mode, whether
    that is MindSpore's default, whether it runs itself, whether a mode comes from a
    variable."""
    if graph_mode is True:
        return GRAPH
    if graph_mode is False:
        return DEFAULT if default else PYNATIVE
    if runs:
        return VARIABLE
    return LIBRARY_VARIABLE if variable else LIBRARY


def inherit(facts: Iterable[tuple[str, str, Iterable[str]]]) -> dict[str, bool | None]:
    """The mode of each module that takes it from its importers, from the project's
    `(module, mode_kind, imported names)`: only modules whose decision changes are in the
    answer (see the module doc). Three breadth-first walks over the import graph, one from
    the scripts of each mode, through modules of a passing kind only: linear in the
    number of imports."""
    kinds: dict[str, str] = {}
    imported: dict[str, list[str]] = {}
    for module, k, names in facts:
        kinds[module] = k
        imported[module] = list(names)
    found: dict[str, list[str]] = {}  # an imported name -> the project modules it runs

    def targets(module: str) -> list[str]:
        out: list[str] = []
        for name in imported[module]:
            hit = found.get(name)
            if hit is None:
                # `from src.network import Net` runs `src/__init__` and `src/network`
                parts = name.split(".")
                hit = found[name] = [
                    m for n in range(1, len(parts) + 1) if (m := ".".join(parts[:n])) in kinds
                ]
            out.extend(hit)
        return out

    def reached(sources: frozenset[str]) -> set[str]:
        seen: set[str] = set()
        todo = deque(t for m, k in kinds.items() if k in sources for t in targets(m))
        while todo:
            m = todo.popleft()
            if m in seen or kinds[m] not in _PASSING:
                continue
            seen.add(m)
            todo.extend(targets(m))
        return seen

    graph = reached(frozenset({GRAPH}))
    variable = reached(frozenset({VARIABLE}))
    eager = reached(frozenset({PYNATIVE, DEFAULT}))
    out: dict[str, bool | None] = {}
    for m, k in kinds.items():
        if k == DEFAULT and m in graph or k == LIBRARY and m in graph:
            out[m] = True
        elif k == LIBRARY and m in eager and m not in variable:
            out[m] = False
    return out


def apply(info: ModuleInfo, mode: bool | None) -> None:
    """Give `info` (a module of a kind that inherits) the mode `inherit` found for it, or
    (None) its own decision back."""
    k = info.mode_kind
    if k == DEFAULT:
        info.graph_mode = bool(mode)
        info.default_mode = not mode
    elif k == LIBRARY:
        info.graph_mode = mode
