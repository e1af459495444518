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
sets PYNATIVE_MODE. The language server's workspace picture (which script imports a
library module and sets its mode) is not consulted yet: a script's own file is decided by
what MindSpore does when that file is run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from npu_lsp.scope import ModuleInfo


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
