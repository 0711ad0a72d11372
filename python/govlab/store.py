"""The results database: every run, keyed by everything that determines it.

The execute stage (:mod:`govlab.sweep`) writes results here as they arrive;
the analyse and render stages read them back.

A SQLite file (``govlab-results.sqlite`` beside the experiment by default) with
three tables::

    meta(key TEXT PRIMARY KEY, value TEXT)           schema_version = 1
    runs(key TEXT PRIMARY KEY,      sha256 of the canonical JSON in `identity`
         identity TEXT,             what determines the run: platform, workload with
                                    its parameters, governors with tunables (as written
                                    and as resolved by the engine), seed, duration in ns,
                                    govlab version; files by their sha256
         result TEXT,               the engine's result dict, JSON
         govlab_version TEXT,
         wall_s REAL,               wall time the simulation took
         created_at TEXT)           UTC, ISO 8601
    experiments(name TEXT PRIMARY KEY,
         path TEXT,                 the experiment file, absolute
         definition TEXT,           JSON: Experiment.to_dict()
         runs TEXT,                 JSON: [{config, axis_value, repeat, seed, key}, ...]
         updated_at TEXT)
    timelines(key TEXT PRIMARY KEY, the run's key
         data TEXT,                 JSON: govlab.report.timeline.CpuTimeline.to_dict(), the
                                    per-CPU frequency and idle timeline of the HTML report
         created_at TEXT)

``timelines`` was added after the first release of schema version 1; it is
created when a database is opened, and older govlab versions ignore it.

The database is in WAL mode and each run is committed in its own transaction
the moment it is stored, so an interrupted sweep loses no finished run and a
reader never sees half a write. A run's key already names its govlab version,
so runs of different versions live side by side. Only the process that owns a
:class:`Store` writes to it (``sweep`` stores results in the parent process).
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import socket
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from govlab._core import __version__

from govlab import outfile
from govlab.exceptions import StoreError
from govlab.fmt import clip

__all__ = ["Store", "StoreError", "DEFAULT_DB_NAME", "SCHEMA_VERSION", "APPLICATION_ID"]

#: The database's file name when ``--db`` is not given (beside the experiment).
DEFAULT_DB_NAME = "govlab-results.sqlite"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    key            TEXT PRIMARY KEY,
    identity       TEXT NOT NULL,
    result         TEXT NOT NULL,
    govlab_version TEXT NOT NULL,
    wall_s         REAL NOT NULL,
    created_at     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS experiments (
    name       TEXT PRIMARY KEY,
    path       TEXT NOT NULL,
    definition TEXT NOT NULL,
    runs       TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS claims (
    key        TEXT PRIMARY KEY,
    pid        INTEGER NOT NULL,
    host       TEXT NOT NULL,
    started    TEXT NOT NULL,
    claimed_at TEXT NOT NULL,
    heartbeat  REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS timelines (
    key        TEXT PRIMARY KEY,
    data       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""

#: ``PRAGMA application_id`` of a govlab results database: "govl" in ASCII.
APPLICATION_ID = 0x676F766C

#: The tables of a govlab results database (older ones may lack the later ones).
_TABLES = frozenset({"meta", "runs", "experiments", "timelines", "claims"})

#: Keys per SELECT ... IN (...): below SQLite's default variable limit.
_CHUNK = 500


class Store:
    """A results database, opened (and created if need be) at ``path``.

    Before anything is written, the file is checked: it must be a regular
    file (or not exist yet, with ``create``) in a writable directory, an
    SQLite database that ``PRAGMA quick_check`` finds sound, and govlab's (its
    ``application_id`` is :data:`APPLICATION_ID`, or, for a database made
    before govlab set it, its tables are govlab's). Anything else raises
    :class:`StoreError` and leaves the file as it was.
    """

    def __init__(self, path: str | os.PathLike[str], create: bool = True) -> None:
        self.path = os.fspath(path)
        if not create and not os.path.isfile(self.path):
            if os.path.exists(self.path):
                raise StoreError(f"{self.path}: not a results database (it is not a regular file)")
            raise FileNotFoundError(errno.ENOENT, "no results database there", self.path)
        target = outfile.check(self.path, "results database") if create else os.path.realpath(self.path)
        uri_mode = "rwc" if create else "rw"
        from urllib.parse import quote

        try:
            self._db = sqlite3.connect(
                f"file:{quote(target)}?mode={uri_mode}",
                uri=True,
                isolation_level=None,  # autocommit; transactions are explicit below
                timeout=30.0,
            )
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot open the results database ({e})") from None
        try:
            # Read-only checks first: a database that is not govlab's is never written to.
            self._check_foreign(create)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._check_schema()
        except sqlite3.DatabaseError as e:
            self._db.close()
            raise StoreError(f"{self.path}: not a usable govlab results database ({e})") from None
        except StoreError:
            self._db.close()
            raise

    def _check_foreign(self, create: bool) -> None:
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables and not create:
            raise sqlite3.DatabaseError("it is empty")
        check = self._db.execute("PRAGMA quick_check").fetchall()
        if check != [("ok",)]:
            raise StoreError(f"{self.path}: the results database is corrupted ({check[0][0]}); "
                             "`sqlite3 FILE .recover` may save its runs")
        app = int(self._db.execute("PRAGMA application_id").fetchone()[0])
        if app not in (0, APPLICATION_ID):
            raise StoreError(f"{self.path}: another program's SQLite database (application_id {app:#x}), "
                             "not govlab's; govlab leaves it as it is: give --db a new file")
        foreign = sorted(tables - _TABLES)
        if tables and (foreign or not {"meta", "runs"} <= tables):
            listing = f" (its tables include {', '.join(foreign[:5])})" if foreign else ""
            raise StoreError(f"{self.path}: an SQLite database that is not govlab's{listing}; "
                             "govlab leaves it as it is: give --db a new file")

    def _check_schema(self) -> None:
        with self._transaction():
            for statement in filter(None, (s.strip() for s in _SCHEMA.split(";"))):
                self._db.execute(statement)
            self._db.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
            self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        version = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
        if int(version) > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"schema version {version} is newer than this govlab's {SCHEMA_VERSION}")

    # --- transactions ------------------------------------------------------------

    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> None:
            self.db.execute("BEGIN IMMEDIATE")

        def __exit__(self, kind: Any, *_: Any) -> None:
            self.db.execute("COMMIT" if kind is None else "ROLLBACK")

    def _transaction(self) -> Store._Tx:
        return Store._Tx(self._db)

    # --- runs ------------------------------------------------------------------------

    def put(self, key: str, identity: Mapping[str, Any], result: Mapping[str, Any] | str, wall_s: float) -> bool:
        """Store one run in its own transaction; False if the key was already there.

        ``result`` is the result dict, or its JSON text as it is to be stored (a worker's, unparsed)."""
        with self._transaction():
            cur = self._db.execute(
                "INSERT OR IGNORE INTO runs(key, identity, result, govlab_version, wall_s, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    json.dumps(identity, sort_keys=True, separators=(",", ":")),
                    result if isinstance(result, str) else json.dumps(result, separators=(",", ":")),
                    str(identity.get("govlab_version", __version__)),
                    float(wall_s),
                    _now(),
                ),
            )
            self._db.execute(
                "DELETE FROM claims WHERE key=? AND pid=? AND host=? AND started=?", (key, *_owner())
            )
            self._db.execute(
                "UPDATE claims SET heartbeat=? WHERE pid=? AND host=? AND started=?", (time.time(), *_owner())
            )
            return cur.rowcount == 1

    def present(self, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` are stored."""
        found: set[str] = set()
        for chunk in _chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in self._db.execute(f"SELECT key FROM runs WHERE key IN ({marks})", chunk))
        return found

    def results(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored result dicts of ``keys`` (missing keys are left out)."""
        out: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            for key, text in self._db.execute(f"SELECT key, result FROM runs WHERE key IN ({marks})", chunk):
                out[key] = self._json(text, "runs", "result", f"run {key[:16]}")
        return out

    def run_rows(self) -> list[dict[str, Any]]:
        """Every run's key, version, wall time and timestamp (not the results), oldest first."""
        rows = self._db.execute(
            "SELECT key, govlab_version, wall_s, created_at FROM runs ORDER BY rowid"
        ).fetchall()
        return [dict(zip(("key", "govlab_version", "wall_s", "created_at"), r, strict=True)) for r in rows]

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM runs").fetchone()[0])

    # --- claims ----------------------------------------------------------------------

    def claim(self, keys: Iterable[str]) -> tuple[list[str], dict[str, Claim]]:
        """Claim the runs ``keys`` not stored and not claimed by a live process: ``(claimed, held)``.

        ``claimed`` lists the keys this process now holds (in the order given),
        ``held`` maps each other key to the live claim that holds it. A claim
        expires when its process is gone (same host: no such pid, or a pid
        reused by a newer process) or, for a claim made on another host, when
        its process has stored nothing for :data:`CLAIM_STALE_S`.
        """
        keys = list(dict.fromkeys(keys))
        claimed: list[str] = []
        held: dict[str, Claim] = {}
        for chunk in _chunks(keys):
            marks = ",".join("?" * len(chunk))
            with self._transaction():
                stored = {r[0] for r in self._db.execute(f"SELECT key FROM runs WHERE key IN ({marks})", chunk)}
                claims = {
                    r[0]: Claim(int(r[1]), str(r[2]), str(r[3]), float(r[4]))
                    for r in self._db.execute(
                        f"SELECT key, pid, host, started, heartbeat FROM claims WHERE key IN ({marks})", chunk
                    )
                }
                now, stamp = time.time(), _now()
                for key in chunk:
                    if key in stored:
                        continue
                    other = claims.get(key)
                    if other is not None and not other.mine() and other.alive(now):
                        held[key] = other
                        continue
                    self._db.execute(
                        "INSERT OR REPLACE INTO claims(key, pid, host, started, claimed_at, heartbeat) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (key, *_owner(), stamp, now),
                    )
                    claimed.append(key)
        return claimed, held

    def release(self) -> None:
        """Drop every claim of this process (the runs it did not finish)."""
        with self._transaction():
            self._db.execute("DELETE FROM claims WHERE pid=? AND host=? AND started=?", _owner())

    # --- experiments -------------------------------------------------------------

    def save_experiment(self, definition: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> None:
        """Record (or replace) an experiment by name, with the keys of its runs."""
        with self._transaction():
            self._db.execute(
                "INSERT INTO experiments(name, path, definition, runs, updated_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET path=excluded.path, definition=excluded.definition, "
                "runs=excluded.runs, updated_at=excluded.updated_at",
                (
                    definition["name"],
                    os.path.abspath(definition.get("path") or ""),
                    json.dumps(definition),
                    json.dumps(list(runs)),
                    _now(),
                ),
            )

    def experiments(self) -> list[dict[str, Any]]:
        """``[{"definition": ..., "runs": [...]}, ...]`` in the order they were first stored."""
        rows = self._db.execute("SELECT name, definition, runs FROM experiments ORDER BY rowid").fetchall()
        return [
            {
                "definition": self._json(d, "experiments", "definition", f"experiment {name}"),
                "runs": self._json(r, "experiments", "runs", f"experiment {name}"),
            }
            for name, d, r in rows
        ]

    # --- timelines --------------------------------------------------------------

    def put_timeline(self, key: str, data: Mapping[str, Any]) -> None:
        """Store (or replace) the timeline of the run ``key``."""
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO timelines(key, data, created_at) VALUES (?, ?, ?)",
                (key, json.dumps(data, separators=(",", ":")), _now()),
            )

    def timeline(self, keys: Iterable[str]) -> tuple[str, dict[str, Any]] | None:
        """The most recently stored timeline among the runs ``keys``: ``(key, data)``, or None."""
        found = None
        for chunk in _chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            row = self._db.execute(
                f"SELECT key, data, created_at FROM timelines WHERE key IN ({marks}) "
                "ORDER BY created_at DESC, rowid DESC LIMIT 1",
                chunk,
            ).fetchone()
            if row is not None and (found is None or row[2] > found[2]):
                found = row
        return None if found is None else (found[0], self._json(found[1], "timelines", "data", f"run {found[0][:16]}"))

    def _json(self, text: Any, table: str, column: str, row: str) -> Any:
        """A stored JSON value, or a StoreError naming the database, the table and the row."""
        try:
            return json.loads(text)
        except (TypeError, ValueError, RecursionError) as e:
            raise StoreError(
                f"{self.path}: table {table}, {clip(row, 40)}: the stored {column} is not valid JSON "
                f"({clip(str(e), 80)}); another program changed it: delete the row or the database"
            ) from None

    # --- lifetime ------------------------------------------------------------------

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


CLAIM_STALE_S = 3600.0
"""How long a claim made on another host lasts after its process last stored a run."""


@dataclass(frozen=True)
class Claim:
    """A claim on a run: the process that will simulate it."""

    pid: int
    host: str
    started: str
    heartbeat: float

    def mine(self) -> bool:
        return (self.pid, self.host, self.started) == _owner()

    def alive(self, now: float) -> bool:
        """Whether the claiming process may still store the run."""
        if self.host != _owner()[1]:
            return now - self.heartbeat < CLAIM_STALE_S
        return _process_start(self.pid) == self.started

    def describe(self) -> str:
        return f"process {self.pid} on {self.host}"


def _process_start(pid: int) -> str | None:
    """An id of the process ``pid``'s start (its start time in clock ticks since boot), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()  # field 22, starttime, counting from after the command name
    except FileNotFoundError:
        return None
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return "alive" if pid != os.getpid() else _START_FALLBACK


_START_FALLBACK = "alive"
_OWNERS: dict[int, tuple[int, str, str]] = {}


def _owner() -> tuple[int, str, str]:
    """This process as a claim names it: (pid, host, start)."""
    pid = os.getpid()
    if pid not in _OWNERS:
        _OWNERS[pid] = (pid, socket.gethostname(), _process_start(pid) or _START_FALLBACK)
    return _OWNERS[pid]


def _chunks(items: list[str]) -> Iterable[list[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
