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
import json
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from govlab import __version__

__all__ = ["Store", "DEFAULT_DB_NAME", "SCHEMA_VERSION"]

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
CREATE TABLE IF NOT EXISTS timelines (
    key        TEXT PRIMARY KEY,
    data       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""

#: Keys per SELECT ... IN (...): below SQLite's default variable limit.
_CHUNK = 500


class Store:
    """A results database, opened (and created if need be) at ``path``."""

    def __init__(self, path: str | os.PathLike[str], create: bool = True) -> None:
        self.path = os.fspath(path)
        if not create and not os.path.isfile(self.path):
            raise FileNotFoundError(f"no results database at {self.path}")
        uri_mode = "rwc" if create else "rw"
        from urllib.parse import quote

        self._db = sqlite3.connect(
            f"file:{quote(os.path.abspath(self.path))}?mode={uri_mode}",
            uri=True,
            isolation_level=None,  # autocommit; transactions are explicit below
            timeout=30.0,
        )
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._check_schema(create)
        except sqlite3.DatabaseError as e:
            self._db.close()
            raise ValueError(f"{self.path}: not a govlab results database ({e})") from None

    def _check_schema(self, create: bool) -> None:
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables and not create:
            raise sqlite3.DatabaseError("it is empty")
        if tables and "runs" not in tables:
            raise sqlite3.DatabaseError("it has no runs table")
        with self._transaction():
            for statement in filter(None, (s.strip() for s in _SCHEMA.split(";"))):
                self._db.execute(statement)
            self._db.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
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

    def put(self, key: str, identity: Mapping[str, Any], result: Mapping[str, Any], wall_s: float) -> bool:
        """Store one run in its own transaction; False if the key was already there."""
        with self._transaction():
            cur = self._db.execute(
                "INSERT OR IGNORE INTO runs(key, identity, result, govlab_version, wall_s, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    json.dumps(identity, sort_keys=True, separators=(",", ":")),
                    json.dumps(result, separators=(",", ":")),
                    str(identity.get("govlab_version", __version__)),
                    float(wall_s),
                    _now(),
                ),
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
                out[key] = json.loads(text)
        return out

    def run_rows(self) -> list[dict[str, Any]]:
        """Every run's key, version, wall time and timestamp (not the results), oldest first."""
        rows = self._db.execute(
            "SELECT key, govlab_version, wall_s, created_at FROM runs ORDER BY rowid"
        ).fetchall()
        return [dict(zip(("key", "govlab_version", "wall_s", "created_at"), r, strict=True)) for r in rows]

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM runs").fetchone()[0])

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
        rows = self._db.execute("SELECT definition, runs FROM experiments ORDER BY rowid").fetchall()
        return [{"definition": json.loads(d), "runs": json.loads(r)} for d, r in rows]

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
        return None if found is None else (found[0], json.loads(found[1]))

    # --- lifetime ------------------------------------------------------------------

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


def _chunks(items: list[str]) -> Iterable[list[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
