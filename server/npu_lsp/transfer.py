"""Results crossing from the worker process to the server, sent as what changed.

A dense file's result is thousands of diagnostics whose fixes share edit lists (every
device string of a file moves together): pickling those object graphs at every keystroke,
and unpickling them in the server, cost more than the analysis. Most of them do not change
from one edit to the next. So each side keeps, per analysed document (a file, or a
notebook with its cells), a table of the entries of the last result it sent or received:

- the worker (`Sender`) encodes each diagnostic as a plain tuple (hashable, no object
  graph), gives equal tuples one id, and sends only the entries and edit lists the server
  has not got, plus the list of ids per document;
- the server (`Mirror`) decodes each new entry once and hands back the same `Located`
  object for an id while it stays in the results, so what it caches per diagnostic (its LSP
  form, its JSON) is reused.

Both sides then keep exactly the entries the latest result uses. A payload names the
result it builds on (`base`); a server holding another one (two runs of one document in
flight, a restarted worker) asks for a full result instead (`Mirror.apply` returns None).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Any

from npu_lsp.diagnostics import Diagnostic, Edit, Fix, Related, Span
from npu_lsp.notebook import Located

#: (line, column, end line, end column)
SpanT = tuple[int, int, int, int]
#: an edit list: (uri of the edit, or "" for a fix's own untagged edits, span, new text)
EditsT = tuple[tuple[str, SpanT, str], ...]
#: a diagnostic placed in a document: (uri, code, message, severity, span, fix, related,
#: source, id of its located edits or -1, and "" or the one document they are all in when
#: they are the fix's own edits, so the id is the fix's); fix: (title, safe, id of its
#: edits) or None
EntryT = tuple[
    str,
    str,
    str,
    str,
    SpanT,
    "tuple[str, bool, int] | None",
    tuple[tuple[str, SpanT, str], ...],
    str,
    int,
    str,
]
#: Who made a payload: a worker process (a restarted one starts afresh), and a document's
#: sender in it (a dropped sender's successor starts afresh too).
_PROCESS = f"{os.getpid()}-{id(object())}"
_SENDERS = itertools.count(1)


@dataclass
class Payload:
    """One result, as the entries the other side lacks and the ids per document."""

    origin: str  # the worker process and document state that made it
    seq: int
    base: int  # the seq this builds on; -1: a full result
    edits: list[tuple[int, EditsT]]
    entries: list[tuple[int, EntryT]]
    docs: list[tuple[str, list[int]]]


def _span(s: Span) -> SpanT:
    return (s.line, s.column, s.end_line, s.end_column)


class Sender:
    """The worker's side for one document: what the server holds of its last result."""

    def __init__(self) -> None:
        self.origin = f"{_PROCESS}-{next(_SENDERS)}"
        self.seq = 0
        self._ids = itertools.count(1)
        self._entries: dict[EntryT, int] = {}
        self._edits: dict[EditsT, int] = {}
        #: of the last result: id of a `Located` -> (it, its entry), and id of an edit tuple
        #: -> (it, its encoding): the same objects again (the worker reuses those of code an
        #: edit left alone) are not encoded again
        self._known: dict[int, tuple[Located, EntryT]] = {}
        self._encoded: dict[int, tuple[tuple[Any, ...], EditsT]] = {}

    def encode(self, result: dict[str, list[Located]], base: tuple[str, int] | None) -> Payload:
        """`result` as a payload for a server holding `base` (None: nothing)."""
        full = base != (self.origin, self.seq)
        last_items = {} if full else self._known
        encoded = self._encoded
        now: dict[int, tuple[Located, EntryT]] = {}
        old_entries = {} if full else self._entries
        old_edits = {} if full else self._edits
        entries: dict[EntryT, int] = {}
        edits: dict[EditsT, int] = {}
        new_entries: list[tuple[int, EntryT]] = []
        new_edits: list[tuple[int, EditsT]] = []
        by_tuple: dict[int, tuple[tuple[Any, ...], int]] = {}  # id of an edit tuple -> its id
        ids = self._ids
        fresh_encoded: dict[int, tuple[tuple[Any, ...], EditsT]] = {}

        def edits_id(seq: tuple[Any, ...], tagged: bool) -> int:
            hit = by_tuple.get(id(seq))
            if hit is not None:
                return hit[1]
            enc: EditsT
            before = encoded.get(id(seq))
            if before is not None and before[0] is seq:
                enc = before[1]
            elif tagged:
                enc = tuple((u, _span(e.span), e.new_text) for u, e in seq)
            else:
                enc = tuple(("", _span(e.span), e.new_text) for e in seq)
            fresh_encoded[id(seq)] = (seq, enc)
            found = edits.get(enc)
            if found is None:
                found = old_edits.get(enc)
                if found is None:
                    found = next(ids)
                    new_edits.append((found, enc))
                edits[enc] = found
            by_tuple[id(seq)] = (seq, found)  # the tuple kept alive: its id stays unique
            return found

        same: dict[tuple[int, int], tuple[Any, Any, tuple[int, str]]] = {}

        def located_id(
            tagged: tuple[Any, ...], fix: Any, fix_t: tuple[str, bool, int] | None
        ) -> tuple[int, str]:
            """A located edit list that is its fix's edits, each tagged with one document
            (a plain file's), is sent as that: (the fix's edit list, the document)."""
            key = (id(tagged), id(fix.edits) if fix is not None else 0)
            hit = same.get(key)
            if hit is None:
                uri = tagged[0][0]
                plain = fix.edits if fix is not None else ()
                if (
                    fix_t is not None
                    and len(tagged) == len(plain)
                    and all(p[0] == uri and p[1] is e for p, e in zip(tagged, plain, strict=True))
                ):
                    found = (fix_t[2], uri)
                else:
                    found = (edits_id(tagged, True), "")
                hit = same[key] = (tagged, plain, found)  # both kept alive: ids stay unique
            return hit[2]

        docs: list[tuple[str, list[int]]] = []
        # (the loop below runs once per diagnostic of a dense file: the lookups that
        # `edits_id` and `located_id` start with are made inline)
        for uri, located in result.items():
            out: list[int] = []
            for item in located:
                d = item.diagnostic
                fix = d.fix
                seen = last_items.get(id(item))
                if seen is not None and seen[0] is item:
                    prior = seen[1]  # as last time; its edit lists are held again below
                    if fix is not None and id(fix.edits) not in by_tuple:
                        edits_id(fix.edits, False)
                    if item.edits and not prior[9] and id(item.edits) not in by_tuple:
                        edits_id(item.edits, True)
                    found = entries.get(prior)
                    if found is None:
                        found = old_entries.get(prior)
                        if found is None:
                            found = next(ids)
                            new_entries.append((found, prior))
                        entries[prior] = found
                    now[id(item)] = seen
                    out.append(found)
                    continue
                fix_t = None
                if fix is not None:
                    known = by_tuple.get(id(fix.edits))
                    fix_id = known[1] if known is not None else edits_id(fix.edits, False)
                    fix_t = (fix.title, fix.safe, fix_id)
                related: tuple[tuple[str, SpanT, str], ...] = ()
                if d.related:
                    related = tuple((r.path, _span(r.span), r.message) for r in d.related)
                loc, loc_uri = -1, ""
                if item.edits:
                    hit = same.get((id(item.edits), id(fix.edits) if fix is not None else 0))
                    loc, loc_uri = hit[2] if hit is not None else located_id(item.edits, fix, fix_t)
                sp = d.span
                entry: EntryT = (
                    item.uri,
                    d.code,
                    d.message,
                    d.severity,
                    (sp.line, sp.column, sp.end_line, sp.end_column),
                    fix_t,
                    related,
                    d.source,
                    loc,
                    loc_uri,
                )
                found = entries.get(entry)
                if found is None:
                    found = old_entries.get(entry)
                    if found is None:
                        found = next(ids)
                        new_entries.append((found, entry))
                    entries[entry] = found
                now[id(item)] = (item, entry)  # the item kept alive: its id stays unique
                out.append(found)
            docs.append((uri, out))
        self._entries, self._edits = entries, edits
        self._known, self._encoded = now, fresh_encoded
        self.seq += 1
        based = -1 if base is None or full else base[1]
        return Payload(self.origin, self.seq, based, new_edits, new_entries, docs)


class Mirror:
    """The server's side for one document: the entries of the last result received."""

    def __init__(self) -> None:
        self.origin = ""
        self.seq = 0
        #: id -> (the decoded diagnostic, the ids of the edit lists it uses)
        self._entries: dict[int, tuple[Located, tuple[int, int]]] = {}
        #: id -> (the edits untagged, as a fix holds them; tagged with their documents)
        self._edits: dict[int, tuple[tuple[Edit, ...], tuple[tuple[str, Edit], ...]]] = {}

    @property
    def have(self) -> tuple[str, int] | None:
        """What to tell the worker this side holds."""
        return (self.origin, self.seq) if self.origin else None

    def apply(self, payload: Payload) -> dict[str, list[Located]] | None:
        """The result `payload` carries; None when it builds on a result this side does not
        hold (then ask for a full one)."""
        full = payload.base < 0
        if not full and (payload.origin, payload.base) != (self.origin, self.seq):
            return None
        old_entries = {} if full else self._entries
        edits = {} if full else dict(self._edits)
        for eid, enc in payload.edits:
            plain = tuple(Edit(Span(*s), text) for _u, s, text in enc)
            tagged = tuple((u, e) for (u, _s, _t), e in zip(enc, plain, strict=True))
            edits[eid] = (plain, tagged)
        fresh = dict(payload.entries)
        retagged: dict[tuple[int, str], tuple[tuple[str, Edit], ...]] = {}
        entries: dict[int, tuple[Located, tuple[int, int]]] = {}
        out: dict[str, list[Located]] = {}
        for uri, ids in payload.docs:
            located: list[Located] = []
            for eid in ids:
                hit = entries.get(eid)
                if hit is None:
                    hit = old_entries.get(eid)
                    if hit is None:
                        hit = _decode(fresh[eid], edits, retagged)
                    entries[eid] = hit
                located.append(hit[0])
            out[uri] = located
        used = {e for _item, pair in entries.values() for e in pair}
        self._edits = {k: v for k, v in edits.items() if k in used}
        self._entries = entries
        self.origin, self.seq = payload.origin, payload.seq
        return out


def _decode(
    entry: EntryT,
    edits: dict[int, tuple[tuple[Edit, ...], tuple[tuple[str, Edit], ...]]],
    retagged: dict[tuple[int, str], tuple[tuple[str, Edit], ...]],
) -> tuple[Located, tuple[int, int]]:
    uri, code, message, severity, span, fix_t, related, source, loc, loc_uri = entry
    fix = None
    if fix_t is not None:
        fix = Fix(fix_t[0], edits[fix_t[2]][0], fix_t[1])
    diag = Diagnostic(
        code,
        message,
        severity,  # type: ignore[arg-type]
        Span(*span),
        fix,
        tuple(Related(p, Span(*s), m) for p, s, m in related),
        source,
    )
    located: tuple[tuple[str, Edit], ...] = ()
    if loc >= 0 and loc_uri:  # the fix's own edits, in one document (shared, as sent)
        located = retagged.get((loc, loc_uri), ())
        if not located:
            located = retagged[loc, loc_uri] = tuple((loc_uri, e) for e in edits[loc][0])
    elif loc >= 0:
        located = edits[loc][1]
    item = Located(uri, diag, located)
    return item, (loc, fix_t[2] if fix_t is not None else -1)


__all__ = ["Mirror", "Payload", "Sender"]
