"""The per-project cache of `ascend-lens check`: `.ascend-lens_cache/` beside the project.

Two files per (checker version, settings), so a run with other settings or another build
of the checker never reads what this one wrote:

- `results`: per file, the content digest, the key its diagnostics were computed under
  and the diagnostics; plus the digest of the whole run's state (settings and every file's
  content), so an unchanged tree is answered from this file alone; per notebook, the same
  with the names it imports (its key digests what those reach of the project);
- `summaries`: per file, the digest of its content and of its module's portable summary
  (so an edit re-parses only the edited file), and where the summary lies in `blobs`;
  a run reads from `blobs` only the summaries it unpickles, each checked against its
  digest (a mismatch is `CacheCorrupt`: the run starts again without the cache);
- `scopes`: the project-wide resolution, with the roots and edges it was made of
  (`project_scopes`), so an edit resolves again only what it changed.

Every file is signed with a key kept outside the project (in the user's cache folder): a
cache that fails its check, cannot be read, or holds something unexpected is ignored and
rebuilt, never trusted (the files are pickles, and a cloned repository could ship one).
Writes go to a temporary file renamed into place, so a killed run leaves the old cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from npu_lsp.diagnostics import Diagnostic

CACHE_DIR = ".ascend-lens_cache"
_FORMAT = 6
_MAC_SIZE = 32
#: A file whose last change (mtime or ctime) is this close to the moment its stamp was
#: taken may change again within the same timestamp tick (coarse on most file systems,
#: up to 2 s on some) without its stamp changing: its content is hashed, not trusted.
RACY_NS = 2_000_000_000

#: (size, mtime in ns, ctime in ns, inode) of a file when its content was read
Stamp = tuple[int, int, int, int]


def digest(*parts: bytes | str) -> str:
    """A short hex digest of `parts` (content keys, not secrets)."""
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        b = p.encode("utf-8", "surrogatepass") if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def stamp_of(st: os.stat_result) -> Stamp:
    """The stamp of a file from its `os.stat` (see `trusted`)."""
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def trusted(now: Stamp | None, recorded: Stamp | None, stamped_at: int) -> bool:
    """Whether a file whose stamp is `now` still has the content read when `recorded` was
    taken (at `stamped_at`, `time.time_ns()` before the run's first `stat`), so that it
    need not be read again.

    Ruff trusts a file's modification time (and permissions) alone. Here the stamp also
    holds the size, the inode and the status-change time: `os.utime` (`touch -r`, `cp -p`,
    an editor restoring the time) can put an old mtime back on changed content, but not
    the ctime, which the kernel sets on every write. A file changed within a timestamp
    tick of the moment its stamp was taken could keep its stamp (the "racy" case git
    knows), so such a file is hashed instead of trusted (`RACY_NS`)."""
    return now is not None and now == recorded and max(now[1], now[2]) < stamped_at - RACY_NS


_CHECKER: str | None = None


def checker_version() -> str:
    """The package version plus the size and time of every file of the checker, so a
    changed rule (even without a version bump, as in a development checkout) is a new
    checker for the cache. Once per process."""
    global _CHECKER
    if _CHECKER is not None:
        return _CHECKER
    import npu_lsp

    parts = [installed_version()]
    root = os.path.dirname(os.path.abspath(npu_lsp.__file__))
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".json", ".toml", ".md")):
                with contextlib.suppress(OSError):
                    st = os.stat(os.path.join(dirpath, name))
                    parts.append(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}")
    _CHECKER = digest(*parts)
    return _CHECKER


def installed_version() -> str:
    """The version of the installed `ascend-lens` distribution, from the name of its
    metadata folder on `sys.path` (where `importlib.metadata` finds it, without importing
    that package and the email parser it brings); "0" when it is not installed."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(("ascend_lens-", "ascend-lens-")) and name.endswith(
                (".dist-info", ".egg-info")
            ):
                return name[len("ascend_lens-") :].rsplit(".", 1)[0]
    return "0"


@dataclass
class FileResult:
    """A file's cached diagnostics and what they were computed from."""

    content: str
    key: str
    seeds: str
    diagnostics: list[Diagnostic]
    #: the file's stamp when the content was read: a stamp `trusted` says the content is
    #: unchanged, so an unchanged file is not even read
    stamp: Stamp | None = None
    #: digest of the summaries the file's module reaches (see `workspace._closures`)
    closure: str = ""


@dataclass
class NotebookResult:
    """A notebook's cached findings and what they were computed from (a notebook is not
    part of the index: nothing depends on it, it depends on what it imports)."""

    content: str
    #: digest of the settings, the content and what its check read of the project
    #: (`workspace._notebook_key`)
    key: str
    #: the names its module-level code imports (what its check can reach in the project)
    imports: tuple[str, ...]
    #: (where, relative to the notebook's name: "" or ":cell N"; diagnostic)
    found: list[tuple[str, Diagnostic]]
    stamp: Stamp | None = None


@dataclass
class FileSummary:
    """A file's cached portable summary (pickled) and its digests."""

    content: str
    module: str
    blob: bytes
    summary: str
    imports: tuple[str, ...]
    #: qualnames of the module's functions and methods, and the `<locals>.` prefixes of
    #: the closures its module-level `x = make()` bind: what its seeds read of the
    #: project-wide resolution (`workspace._seeds`), without unpickling the summary
    quals: tuple[str, ...] = ()
    made: tuple[str, ...] = ()
    #: (offset, length) in the `blobs` file when `blob` was left there (see `Cache.blob`)
    where: tuple[int, int] | None = None
    #: the module has device facts the migration rules join across the project
    #: (`rules/migration/project.py`): its result depends on every such module's summary
    migrates: bool = False
    #: the calls it makes into other modules' cells and functions, with argument facts
    #: (`rules/graphmode/xcalls.py`): part of the callees' cache keys
    xcalls: tuple[Any, ...] = ()
    #: first names of its absolute imports looked up in the workspace, with the module each
    #: found (`locate`): the summary holds while each finds the same one
    located: tuple[tuple[str, str], ...] = ()
    #: its module-level constants and re-exports (`xcalls.exports`): how references to
    #: constants in other modules' calls are followed (`xcalls.resolve`)
    exports: Any = ()
    #: how its mode follows its importers' (`ModuleInfo.mode_kind`, `modes.inherit`)
    mode_kind: str = ""


class CacheCorrupt(BaseException):
    """A summary read from the `blobs` file does not match its signed digest. Summaries are
    read when first used, which may be inside a rule; not an `Exception`, so that the
    checker's guard around each rule lets it through to `check_files`, which runs again
    without the cache."""


@dataclass
class CacheData:
    state: str = ""
    results: dict[str, FileResult] = field(default_factory=dict)
    summaries: dict[str, FileSummary] = field(default_factory=dict)


_BASE_ENTRY = "\0base"


def _summaries_ok(data: Any) -> bool:
    return isinstance(data, dict) and all(isinstance(v, FileSummary) for v in data.values())


#: The entry of a `summaries` file naming the checker that wrote it.
CHECKER_ENTRY = "\0checker"


def project_summaries(project_root: str | os.PathLike[str]) -> dict[str, FileSummary]:
    """The summaries `check` cached for this project by this very checker (the newest such
    file when several settings were used), for the language server to index from; {} when
    there are none. Summaries do not depend on the settings."""
    base = Path(project_root) / CACHE_DIR
    try:
        candidates = sorted(
            base.glob("*/summaries"), key=lambda p: p.stat().st_mtime_ns, reverse=True
        )
    except OSError:
        return {}
    version = checker_version()
    for path in candidates:
        cache = Cache(project_root, path.parent.name)
        found = cache.load_summaries()
        mark = found.get(CHECKER_ENTRY)
        if mark is not None and mark.content == version:
            try:
                for entry in found.values():
                    if entry.where is not None:
                        entry.blob, entry.where = cache.blob(entry)(), None
            except CacheCorrupt:
                continue
            return found
    return {}


@dataclass
class Results:
    """The `results` file: what the last run found and what it was computed from."""

    #: digest of the run's state: the settings and every file's content
    state: str = ""
    #: digest of every summary of the run
    whole: str = ""
    files: dict[str, FileResult] = field(default_factory=dict)
    notebooks: dict[str, NotebookResult] = field(default_factory=dict)
    #: digest of the summaries with migration facts
    moving: str = ""
    #: `time.time_ns()` before the run took the files' stamps (see `trusted`)
    stamped_at: int = 0


class Cache:
    """One project's cache for one settings key (see the module docstring)."""

    def __init__(
        self, project_root: str | os.PathLike[str], settings: str, *, read: bool = True
    ) -> None:
        self.read = read  # False: start afresh (what is there is written over)
        self.base = Path(project_root) / CACHE_DIR
        self.folder = self.base / settings
        self._key = _signing_key()
        #: the tag of the summaries file read, and the delta read with it
        self._base: FileSummary | None = None
        self._delta: dict[str, FileSummary] = {}
        self._blobs: bytes | None = None

    # ---- reading
    def load_results(self) -> Results:
        """What the last run recorded (`Results`; empty when nothing usable)."""
        data = self._read("results")
        if not (isinstance(data, tuple) and len(data) == 6 and isinstance(data[2], dict)):
            return Results()
        state, whole, results, notebooks, moving, stamped_at = data
        ok = (
            isinstance(state, str)
            and isinstance(whole, str)
            and isinstance(moving, str)
            and isinstance(stamped_at, int)
            and isinstance(notebooks, dict)
            and all(isinstance(v, FileResult) for v in results.values())
            and all(isinstance(v, NotebookResult) for v in notebooks.values())
        )
        return Results(state, whole, results, notebooks, moving, stamped_at) if ok else Results()

    def load_summaries(self) -> dict[str, FileSummary]:
        """Every cached summary: the `summaries` file with the newer entries of the small
        `summaries.delta` file written after edits (see `save`)."""
        data = self._read("summaries")
        if not _summaries_ok(data):
            return {}
        self._base = data.get(_BASE_ENTRY)
        delta = self._read("summaries.delta")
        if _summaries_ok(delta) and delta.get(_BASE_ENTRY) == self._base:
            self._delta = dict(delta)
            data.update(delta)
        return data

    def blob(self, entry: FileSummary) -> Callable[[], bytes]:
        """The pickled summary of `entry`, read when called (from the `blobs` file, checked
        against the signed digest: `CacheCorrupt` when it does not match)."""
        if entry.where is None:
            data = entry.blob
            return lambda: data
        offset, length = entry.where
        expected = entry.summary

        def read() -> bytes:
            if self._blobs is None:
                try:
                    self._blobs = (self.folder / "blobs").read_bytes()
                except OSError:
                    self._blobs = b""
            data = self._blobs[offset : offset + length]
            if len(data) != length or digest(data) != expected:
                raise CacheCorrupt(f"summary at {offset} in {self.folder / 'blobs'}")
            return data

        return read

    def load_scopes(self) -> Any:
        """What the last run stored with `save(..., scopes=...)` (None: nothing usable)."""
        return self._read("scopes")

    @property
    def has_summaries(self) -> bool:
        """Whether `load_summaries` read a summaries file (a delta can go beside it)."""
        return self._base is not None

    @property
    def delta_size(self) -> int:
        """How many summaries the delta file read with them holds."""
        return len(self._delta)

    def _read(self, name: str) -> Any:
        if self._key is None or not self.read:
            return None
        try:
            raw = (self.folder / name).read_bytes()
        except OSError:
            return None
        mac, body = raw[:_MAC_SIZE], raw[_MAC_SIZE:]
        if len(mac) != _MAC_SIZE or not hmac.compare_digest(mac, self._sign(body)):
            return None  # not ours, truncated or tampered with: rebuilt by this run
        try:
            fmt, data = pickle.loads(body)
        except Exception:  # a cache written by an incompatible build
            return None
        return data if fmt == _FORMAT else None

    # ---- writing
    def save(
        self,
        results: Results,
        summaries: dict[str, FileSummary] | None,
        changed: dict[str, FileSummary] | None = None,
        scopes: object = None,
    ) -> None:
        """Write the cache: `results`, all `summaries`, or (when None) only the `changed`
        ones, and `scopes` when given; failures (read-only project, full disk) are silent:
        the cache is an optimisation only."""
        if self._key is None:
            return
        try:
            self._prepare()
            r = results
            self._write("results", (r.state, r.whole, r.files, r.notebooks, r.moving, r.stamped_at))
            if scopes is not None:
                self._write("scopes", scopes)
            if summaries is not None:
                import secrets

                base = FileSummary(secrets.token_hex(8), "", b"", "", ())
                # the summaries themselves go to `blobs`, read only when used
                chunks: list[bytes] = []
                offset = 0
                index: dict[str, FileSummary] = {}
                for key, entry in summaries.items():
                    try:
                        blob = entry.blob if entry.where is None else self.blob(entry)()
                    except CacheCorrupt:
                        continue  # parsed again next time
                    if blob:
                        chunks.append(blob)
                        entry = replace(entry, blob=b"", where=(offset, len(blob)))
                        offset += len(blob)
                    index[key] = entry
                self._write_raw("blobs", b"".join(chunks))
                self._write("summaries", {**index, _BASE_ENTRY: base})
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.folder / "summaries.delta")
            elif changed and self._base is not None:  # `load_summaries` read a base
                # a few files re-summarised: a small file beside the big one; both are read
                # together until the next full write (tied to it by the base's random tag)
                merged = {**self._delta, **changed, _BASE_ENTRY: self._base}
                self._write("summaries.delta", merged)
        except OSError:
            pass

    def _prepare(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        ignore = self.base / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Created by ascend-lens check.\n*\n", encoding="utf-8")
        tag = self.base / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text(
                "Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by ascend-lens.\n",
                encoding="utf-8",
            )

    def _write(self, name: str, data: object) -> None:
        body = pickle.dumps((_FORMAT, data), protocol=pickle.HIGHEST_PROTOCOL)
        self._write_raw(name, self._sign(body), body)

    def _write_raw(self, name: str, *parts: bytes) -> None:
        import tempfile

        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=f".{name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                for part in parts:
                    f.write(part)
            os.replace(tmp, self.folder / name)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _sign(self, body: bytes) -> bytes:
        assert self._key is not None
        return hashlib.blake2b(body, key=self._key, digest_size=_MAC_SIZE).digest()


def _signing_key() -> bytes | None:
    """This user's key for signing cache files, created on first use (None: no place to
    keep one, so no cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(base) / "ascend-lens" / "cache-key"
    try:
        key = path.read_bytes()
        if len(key) == 32:
            return key
    except OSError:
        pass
    import secrets
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(32)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".cache-key.")
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        os.chmod(tmp, 0o600)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # first writer wins when two runs start at once
        os.unlink(tmp)
        key = path.read_bytes()
        return key if len(key) == 32 else None
    except OSError:
        return None
