"""Before every collective the ranks compare what they are about to do, over the store.

Each rank writes a small signature (op, shapes, dtype, root, reduce op, the user line and
its simulated arrival time) under the communicator's call number and reads everyone
else's. Different signatures are a mismatch, reported with each rank's line before any
data moves, so gloo never sees two different collectives. A rank that never arrives is
reported too: at once when it has already exited (a process leaves an exit signature
where the others would wait for it), otherwise after HCCL_EXEC_TIMEOUT, naming what every
rank was doing instead of hanging.

The latest arrival is also when the collective starts on every rank's simulated clock,
so a slow rank makes the others wait, as HCCL's notify handshake does.
"""

from __future__ import annotations

import atexit
import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any, Protocol


class Store(Protocol):
    """The part of torch.distributed.Store used here."""

    def set(self, key: str, value: str | bytes) -> None: ...
    def get(self, key: str) -> bytes: ...
    def check(self, keys: list[str]) -> bool: ...
    def wait(self, keys: list[str], timeout: timedelta) -> None: ...
    def delete_key(self, key: str) -> bool: ...
    def multi_get(self, keys: list[str]) -> list[bytes]: ...


class CollectiveMismatchError(RuntimeError):
    """Ranks entered different collectives, or the same one with different tensors."""


class CollectiveTimeoutError(RuntimeError):
    """Some ranks never entered a collective the others are waiting in."""


@dataclass
class Signature:
    """What one rank is about to do, as the others need to see it."""

    op: str
    rank: int  # global rank
    shapes: list[list[int]] = field(default_factory=list)
    dtype: str = ""
    site: str = ""  # "file:line" of the user's call
    arrival_us: float = 0.0  # simulated time this rank is ready to start
    root: int | None = None
    reduce_op: str | None = None
    in_splits: list[int] | None = None  # all_to_all: elements sent to each rank
    out_splits: list[int] | None = None  # all_to_all: elements received from each rank

    def describe(self) -> str:
        shapes = ", ".join("[" + ", ".join(map(str, s)) + "]" for s in self.shapes)
        parts = [f"{self.op} at {self.site or '<unknown line>'}"]
        if self.dtype or shapes:
            parts.append(f"{self.dtype} {shapes}".strip())
        if self.root is not None:
            parts.append(f"root {self.root}")
        if self.reduce_op:
            parts.append(f"op {self.reduce_op}")
        return ", ".join(parts)

    def dumps(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @staticmethod
    def loads(raw: bytes | str) -> Signature:
        return Signature(**json.loads(raw))


# Collectives whose every rank must pass the same shapes (the others gather or scatter
# different amounts per rank, or only the dtype must agree).
_SAME_SHAPES = ("allreduce", "broadcast", "allgather", "reducescatter", "reduce", "barrier")


def differences(sigs: Sequence[Signature], group_ranks: Sequence[int]) -> list[str]:
    """Why `sigs` (one per group rank, in order) cannot be one collective; [] when they can."""
    first = sigs[0]
    if any(s.op != first.op for s in sigs):
        return ["ranks entered different collectives"]
    out = []
    if any(s.dtype != first.dtype for s in sigs):
        out.append("dtypes differ")
    if first.op in _SAME_SHAPES and any(s.shapes != first.shapes for s in sigs):
        out.append("shapes differ")
    if any(s.root != first.root for s in sigs):
        out.append("roots differ")
    if any(s.reduce_op != first.reduce_op for s in sigs):
        out.append("reduce ops differ")
    if first.op == "alltoall" and all(s.in_splits is not None for s in sigs):
        for i, s in enumerate(sigs):
            for j, t in enumerate(sigs):
                sent = s.in_splits[j] if s.in_splits and j < len(s.in_splits) else None
                got = t.out_splits[i] if t.out_splits and i < len(t.out_splits) else None
                if sent is not None and got is not None and sent != got:
                    out.append(
                        f"rank {group_ranks[i]} sends {sent} elements to rank {group_ranks[j]}, "
                        f"which expects {got}"
                    )
    return out


# How long rank 0, which hosts the store, waits at exit for the other ranks to leave.
STORE_LINGER_S = 3.0
EXITED = "<exited>"  # the op of the signature a rank leaves behind when its process ends


class Exchange:
    """Signature exchange for one communicator (its own key space in the store)."""

    def __init__(
        self,
        store: Store,
        group_rank: int,
        global_ranks: Sequence[int],
        label: str,
        timeout_s: Callable[[], float],
    ) -> None:
        self.store = store
        self.group_rank = group_rank
        self.global_ranks = list(global_ranks)
        self.label = label  # "group default_group (ranks 0-7)"
        self.timeout_s = timeout_s
        self.seq = 0
        self.p2p_sent: dict[int, int] = {}  # peer group rank -> transfers posted
        self.p2p_recv: dict[int, int] = {}
        progress.exchanges.append(self)

    @property
    def me(self) -> int:
        return self.global_ranks[self.group_rank]

    # -- collectives ---------------------------------------------------------------
    def collective(self, sig: Signature) -> list[Signature]:
        """Every rank's signature for this call (in group order), or an error naming the ranks."""
        self.seq += 1
        seq = self.seq
        progress.note(f"{sig.op} #{seq} on {self.label} at {sig.site or '<unknown line>'}")
        key = f"hccl/c/{seq}/"
        self.store.set(key + str(self.group_rank), sig.dumps())
        keys = [key + str(r) for r in range(len(self.global_ranks))]
        self._wait(keys, lambda missing: self._timeout_message(sig, seq, missing))
        sigs = [Signature.loads(raw) for raw in self.store.multi_get(keys)]
        # Everyone has read call seq-1 by the time they wrote call seq. Keep it (another
        # rank's report may quote it as this rank's last call) and drop the one before.
        if seq > 2:
            self.store.delete_key(f"hccl/c/{seq - 2}/{self.group_rank}")
        gone = [s for s in sigs if s.op == EXITED]
        if gone:
            raise CollectiveTimeoutError(self._exited_message(sig, seq, sigs))
        problems = differences(sigs, self.global_ranks)
        if problems:
            rows = "\n".join(f"  rank {s.rank}: {s.describe()}" for s in sigs)
            raise CollectiveMismatchError(
                f"HCCL collective mismatch in call #{seq} on {self.label}: "
                f"{'; '.join(problems)}\n{rows}"
            )
        return sigs

    # -- point to point --------------------------------------------------------------
    def post_p2p(self, sig: Signature, peer: int, role: str) -> int:
        """Publish this side of a send (to `peer`) or recv (from `peer`); returns its number."""
        counts = self.p2p_sent if role == "send" else self.p2p_recv
        n = counts[peer] = counts.get(peer, 0) + 1
        src, dst = (self.group_rank, peer) if role == "send" else (peer, self.group_rank)
        self.store.set(f"hccl/p/{src}-{dst}/{n}/{role}", sig.dumps())
        return n

    def await_p2p(self, sig: Signature, peer: int, role: str, n: int) -> Signature:
        """The peer's side of the n-th transfer between this rank and `peer`."""
        other = "recv" if role == "send" else "send"
        src, dst = (self.group_rank, peer) if role == "send" else (peer, self.group_rank)
        key = f"hccl/p/{src}-{dst}/{n}/{other}"
        verb = "receive" if role == "send" else "send"

        def message(_: list[int]) -> str:
            return (
                f"HCCL {role} #{n} on {self.label} timed out after {self.timeout_s():g} s "
                f"(HCCL_EXEC_TIMEOUT): rank {self.global_ranks[peer]} never posted the matching "
                f"{verb}\n  rank {sig.rank}: {sig.describe()}\n  rank {self.global_ranks[peer]}: "
                f"{self._last_call(peer)}"
            )

        self._wait([key], message)
        theirs = Signature.loads(self.store.get(key))
        if theirs.op == EXITED:
            raise CollectiveTimeoutError(
                f"HCCL {role} #{n} on {self.label}: rank {theirs.rank} exited without the matching "
                f"{verb} ({theirs.site})\n  rank {sig.rank}: {sig.describe()}"
            )
        if theirs.dtype != sig.dtype or _numel(theirs.shapes) != _numel(sig.shapes):
            raise CollectiveMismatchError(
                f"HCCL send/recv mismatch on {self.label}: the two sides disagree\n"
                f"  rank {sig.rank}: {sig.describe()}\n  rank {theirs.rank}: {theirs.describe()}"
            )
        return theirs

    # -- waiting and leaving --------------------------------------------------------
    def _wait(self, keys: list[str], message: Callable[[list[int]], str]) -> None:
        limit = self.timeout_s()
        try:
            # 0 = never, as HCCL_EXEC_TIMEOUT=0 means.
            self.store.wait(keys, timedelta(seconds=limit if limit > 0 else 10**8))
        except Exception:  # the store's timeout (DistStoreError)
            missing = [r for r, k in enumerate(keys) if not self.store.check([k])]
            if not missing:
                return
            raise CollectiveTimeoutError(message(missing)) from None

    def leave(self, note: str) -> None:
        """Leave an exit signature wherever another rank may wait for this one next."""
        sig = Signature(op=EXITED, rank=self.me, site=note)
        raw = sig.dumps()
        self.store.set(f"hccl/c/{self.seq + 1}/{self.group_rank}", raw)
        for peer in range(len(self.global_ranks)):
            if peer == self.group_rank:
                continue
            # The next transfer each peer may expect from (or to) this rank.
            n_send = self.p2p_sent.get(peer, 0) + 1
            n_recv = self.p2p_recv.get(peer, 0) + 1
            self.store.set(f"hccl/p/{self.group_rank}-{peer}/{n_send}/send", raw)
            self.store.set(f"hccl/p/{peer}-{self.group_rank}/{n_recv}/recv", raw)

    def _last_call(self, group_rank: int, seq: int | None = None) -> str:
        """A rank's last collective on this communicator, from its signature in the store."""
        n = self.seq if seq is None else seq
        key = f"hccl/c/{n}/{group_rank}"
        with contextlib.suppress(Exception):
            if n > 0 and self.store.check([key]):
                return f"its last call was #{n}: {Signature.loads(self.store.get(key)).describe()}"
        return "no collective yet"

    def _exited_message(self, sig: Signature, seq: int, sigs: list[Signature]) -> str:
        gone = [s for s in sigs if s.op == EXITED]
        head = (
            f"HCCL collective {sig.op} #{seq} on {self.label}: rank(s) "
            f"{', '.join(str(s.rank) for s in gone)} exited without entering it"
        )
        rows = [
            f"  rank {s.rank}: exited ({s.site})"
            if s.op == EXITED
            else f"  rank {s.rank}: waiting in {s.describe()}"
            for s in sigs
        ]
        return head + "\n" + "\n".join(rows)

    def _timeout_message(self, sig: Signature, seq: int, missing: list[int]) -> str:
        head = (
            f"HCCL collective {sig.op} #{seq} on {self.label} timed out after {self.timeout_s():g} s "
            f"(HCCL_EXEC_TIMEOUT): rank(s) {', '.join(str(self.global_ranks[r]) for r in missing)} "
            f"never entered it"
        )
        rows = []
        for r in range(len(self.global_ranks)):
            k = f"hccl/c/{seq}/{r}"
            if r not in missing and self.store.check([k]):
                rows.append(
                    f"  rank {self.global_ranks[r]}: waiting in {Signature.loads(self.store.get(k)).describe()}"
                )
            else:
                g = self.global_ranks[r]
                rows.append(f"  rank {g}: not entered; {self._last_call(r, seq - 1)}")
        return head + "\n" + "\n".join(rows)


def _numel(shapes: list[list[int]]) -> int:
    total = 0
    for s in shapes:
        n = 1
        for d in s:
            n *= d
        total += n
    return total


class _Progress:
    """This rank's last collective, published for other ranks' messages, and its exit."""

    def __init__(self) -> None:
        self.store: Store | None = None
        self.rank = -1
        self.world_size = 1
        self.last = ""
        self.exchanges: list[Exchange] = []
        self._registered = False

    def attach(self, world_store: Store, rank: int, world_size: int) -> None:
        if not self._registered:
            atexit.register(self.exited)
            self._registered = True
        self.store, self.rank, self.world_size = world_store, rank, world_size

    def note(self, what: str) -> None:
        """What this rank entered last (quoted in its exit signature)."""
        self.last = what

    def exited(self, how: str = "process finished") -> None:
        """Leave exit signatures in every communicator (atexit; idempotent).

        Rank 0 hosts the job's store: it stays until the other ranks have left too (or
        STORE_LINGER_S passed), so a rank still reading signatures is not cut off.
        """
        note = f"{how}; last call: {self.last}" if self.last else how
        exchanges, self.exchanges = self.exchanges, []
        for ex in exchanges:
            with contextlib.suppress(Exception):  # the store may be gone with the job
                ex.leave(note)
        store = self.store
        if store is None:
            return
        with contextlib.suppress(Exception):
            store.set(f"ascend-lens/exit/{self.rank}", note)
            if self.rank == 0 and self.world_size > 1:
                others = [f"ascend-lens/exit/{r}" for r in range(1, self.world_size)]
                store.wait(others, timedelta(seconds=STORE_LINGER_S))


progress = _Progress()


def root_store(store: Any) -> Any:
    """The store under any PrefixStores (keys every communicator of the job can see)."""
    while hasattr(store, "underlying_store"):
        store = store.underlying_store
    return store
