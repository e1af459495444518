"""The worker sends the server only what changed of a result (`npu_lsp.transfer`): what the
server rebuilds equals the worker's full result, after edits, with two runs of a document
in flight, and after a worker restart (a fresh process knows nothing of the server's copy)."""

from __future__ import annotations

import pickle
from pathlib import Path

from npu_lsp import transfer, worker

BLOCK = (
    "def step_{i}(model, batch):\n"
    "    batch = batch.to('cuda')\n"
    "    if torch.cuda.is_available():\n"
    "        torch.cuda.synchronize()\n"
    "    return batch + {i}\n\n"
)


def source(n: int, extra: str = "") -> str:
    return "import torch\n\n" + extra + "".join(BLOCK.format(i=i) for i in range(n))


def job(tmp_path: Path, version: int, text: str) -> worker.Job:
    path = str(tmp_path / "train.py")
    return worker.Job(Path(path).as_uri(), version, path, text, root=str(tmp_path))


def send(j: worker.Job, have: tuple[str, int] | None) -> transfer.Payload:
    # across the process boundary, as the server receives it
    return pickle.loads(pickle.dumps(worker.analyse_for_server(j, have)))


def test_deltas_rebuild_the_full_result(tmp_path: Path) -> None:
    mirror = transfer.Mirror()
    texts = [source(30), source(30, "x = 1\n"), source(31, "x = 1\n"), source(31, "DEV = 'cuda'\n")]
    for version, text in enumerate(texts, 1):
        j = job(tmp_path, version, text)
        payload = send(j, mirror.have)
        got = mirror.apply(payload)
        assert got == worker.analyse(j)
        if version == 2:  # a line added above every finding: all move, the fix edits too
            assert payload.base >= 0 and payload.entries
        if version == 1:
            assert payload.base == -1 and len(payload.entries) > 60
    # nothing changed: nothing new is sent
    again = send(job(tmp_path, 9, texts[-1]), mirror.have)
    assert again.entries == [] and again.edits == []
    assert mirror.apply(again) == worker.analyse(job(tmp_path, 9, texts[-1]))


def test_runs_in_flight_and_restarts_fall_back_to_a_full_result(tmp_path: Path) -> None:
    mirror = transfer.Mirror()
    assert mirror.apply(send(job(tmp_path, 1, source(5)), mirror.have)) is not None
    have = mirror.have
    first = send(job(tmp_path, 2, source(6)), have)
    second = send(job(tmp_path, 3, source(7)), have)  # built before the first was applied
    assert first.base >= 0 and second.base == -1  # the worker knows the server lacks `first`
    assert mirror.apply(second) == worker.analyse(job(tmp_path, 3, source(7)))
    assert mirror.apply(first) is None  # builds on a result this side no longer holds
    worker._senders.clear()  # a restarted worker
    fresh = send(job(tmp_path, 4, source(8)), mirror.have)
    assert fresh.base == -1
    assert mirror.apply(fresh) == worker.analyse(job(tmp_path, 4, source(8)))


def test_unchanged_code_keeps_its_objects_and_is_not_sent_again(tmp_path: Path) -> None:
    """A keystroke in one function: the worker hands back the very objects of the last
    result for the other functions' diagnostics (incremental analysis, `locate_document`'s
    memo), the edited function's diagnostics equal the last ones, so the payload carries
    nothing new; the server rebuilds the full result all the same."""
    mirror = transfer.Mirror()
    text = source(40)
    first = job(tmp_path, 1, text)
    mirror.apply(send(first, mirror.have))
    before = worker.analyse(first)[first.key]
    edited = text.replace("    return batch + 7\n", "    return batch + 7  # tuned\n")
    assert edited != text
    second = job(tmp_path, 2, edited)
    after = worker.analyse(second)[second.key]
    assert after == before
    same = sum(a is b for a, b in zip(after, before, strict=True))
    assert same >= len(after) - 4, (same, len(after))  # all but the edited function's
    payload = send(job(tmp_path, 3, edited.replace("# tuned", "# tuned!")), mirror.have)
    assert payload.base >= 0 and payload.entries == [] and payload.edits == []
    got = mirror.apply(payload)
    assert got == worker.analyse(job(tmp_path, 3, edited.replace("# tuned", "# tuned!")))
    # a finding changed in one function (and the group's fix with it): sent, the rest not
    changed = edited.replace(
        "    batch = batch.to('cuda')\n    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n    return batch + 9\n",
        "    batch = batch.to('cuda:1')\n    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n    return batch + 9\n",
    )
    assert changed != edited
    payload = send(job(tmp_path, 4, changed), mirror.have)
    assert payload.base >= 0 and payload.entries
    assert mirror.apply(payload) == worker.analyse(job(tmp_path, 4, changed))
    again = send(job(tmp_path, 5, changed + "\n"), mirror.have)
    assert mirror.apply(again) == worker.analyse(job(tmp_path, 5, changed + "\n"))
