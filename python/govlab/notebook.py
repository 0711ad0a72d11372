"""govlab in a notebook: comparisons, stored results and reproductions as objects.

The same pipeline as the ``govlab`` command (load → plan → execute →
analyse → render), called from Python and answered as objects instead of
text::

    import govlab

    c = govlab.compare("experiments/quick.toml")      # runs what the database lacks
    c.table()                                          # the MMTests table, a DataFrame
    c.runs                                             # one row per run
    print(c.to_text())                                 # what `govlab compare` prints
    c.figures()                                        # the HTML report's plots

    govlab.open_results("govlab-results.sqlite")       # the same, simulating nothing
    govlab.reproduce("ondemand-copy-prev-load", quick=True).verdicts

This module sits beside :mod:`govlab.cli` (a front end over the pipeline);
nothing below imports it. Every error is a :class:`govlab.GovlabError`
whose message is the command's (without ``govlab: error:``), naming the
arguments by their Python names.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from govlab import argcheck
from govlab.fmt import clip
from govlab.exceptions import FileAccessError, GovlabError, InvalidValueError, ResultsError, checked

__all__ = ["compare", "open_results", "reproduce", "Comparison", "Reproduction", "Figures"]

_T = TypeVar("_T")


# --- loading ------------------------------------------------------------------------------


def _experiments(experiment: Any) -> tuple[list[Any], str | None]:
    """The experiments ``experiment`` names (a path, TOML text, a dict, or a list of those),
    and the directory of the first file (where the command keeps its database)."""
    from govlab import experiment as exp

    items = list(experiment) if isinstance(experiment, (list, tuple)) else [experiment]
    if not items:
        raise InvalidValueError("experiment: invalid value []: a path, TOML text or a dict")
    loaded: list[Any] = []
    first_dir: str | None = None
    for item in items:
        if isinstance(item, Mapping):
            from govlab.experiment import _KeyLines, _Loader

            loaded += _Loader(json.loads(json.dumps(dict(item))), _KeyLines(""), "<dict>").experiments(False)
        elif isinstance(item, str) and ("\n" in item or item.lstrip().startswith("[")):
            loaded += exp.loads_all(item, "<toml>")
        elif isinstance(item, (str, os.PathLike)):
            path = os.fspath(item)
            loaded += exp.load_all(path)
            if first_dir is None:
                first_dir = os.path.dirname(os.path.abspath(path))
        else:
            raise InvalidValueError(f"experiment: invalid value {clip(repr(item))}: a path, TOML text or a dict")
    return loaded, first_dir


def _files(experiment: Any) -> list[str]:
    """The experiment files among what ``experiment`` names (not TOML text, not dicts)."""
    items = list(experiment) if isinstance(experiment, (list, tuple)) else [experiment]
    return [
        os.fspath(i)
        for i in items
        if isinstance(i, os.PathLike) or (isinstance(i, str) and "\n" not in i and not i.lstrip().startswith("["))
    ]


def _check_jobs(jobs: Any) -> None:
    from govlab.sweep import MAX_JOBS

    argcheck.integer("jobs", jobs, -(2**63), 2**63, none=True)
    if jobs is not None and not 1 <= jobs <= MAX_JOBS:
        raise InvalidValueError(f"jobs must be from 1 to {MAX_JOBS}, got {clip(str(jobs))}")


def compare(
    experiment: Any,
    db: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    executor: str | None = None,
    progress: bool = True,
    max_events: int | None = None,
) -> Comparison:
    """Run ``govlab compare`` on ``experiment`` and answer a :class:`Comparison`.

    ``experiment``: an experiment file's path, its TOML text, a dict of the
    same tables, or a list of these. ``db``: the results database (default:
    ``govlab-results.sqlite`` beside the first experiment file, as the
    command; for text or a dict a new file in a temporary directory): runs
    already there are not simulated again. ``jobs``: processes (default:
    one per core); ``executor``: ``"local"`` or ``"dask://HOST:PORT"``.
    ``progress``: a progress bar (tqdm's notebook widget in Jupyter).
    ``max_events`` raises the ceiling on each run's estimated ops (as for :func:`govlab.run`).
    No ``if __name__ == "__main__":`` guard is needed around it: the
    workers are govlab's own processes and never import the calling script.
    """
    argcheck.path("db", db, none=True)
    _check_jobs(jobs)
    argcheck.text("executor", executor, none=True)
    argcheck.flag("progress", progress)
    argcheck.integer("max_events", max_events, 1, 2**64 - 1, none=True)

    def work() -> Comparison:
        from govlab import outfile, pipeline, sweep
        from govlab.store import DEFAULT_DB_NAME, Store

        experiments, first_dir = _experiments(experiment)
        _check_jobs(jobs)
        chosen = sweep.parse_executor(executor or sweep.LOCAL)
        if jobs is not None and chosen != sweep.LOCAL:
            raise InvalidValueError(
                "jobs applies to executor='local'; a Dask cluster runs as many runs as its workers have threads"
            )
        if db is not None:
            path = os.fspath(db)
        elif first_dir is not None:
            path = os.path.join(first_dir, DEFAULT_DB_NAME)
        else:
            path = os.path.join(tempfile.mkdtemp(prefix="govlab-"), DEFAULT_DB_NAME)
        outfile.refuse_inputs([("db", path)], [("experiment", f) for f in _files(experiment)])
        outfile.check(path, "results database")
        with Store(path) as store:
            done = pipeline.run_experiments(
                experiments, store, jobs=jobs, progress=bool(progress), executor=chosen, max_events=max_events
            )
            return Comparison._from_store(store, done.analyses, path)

    return checked(work)


def open_results(path: str | os.PathLike[str], experiment: str | Sequence[str] | None = None) -> Comparison:
    """The comparison stored in the results database ``path`` (``govlab report``), simulating
    nothing; ``experiment`` picks experiments by name (default: all)."""
    argcheck.path("path", path)
    argcheck.texts("experiment", experiment, none=True)

    def work() -> Comparison:
        from govlab import analysis
        from govlab.store import Store

        names = [experiment] if isinstance(experiment, str) else experiment
        with Store(os.fspath(path), create=False) as store:
            return Comparison._from_store(store, analysis.from_store(store, names), os.fspath(path))

    return checked(work)


def reproduce(
    name: str | None = None,
    quick: bool = False,
    db: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    progress: bool = True,
    max_events: int | None = None,
) -> Reproduction:
    """Run ``govlab reproduce`` (one published evaluation by ``name``, else all
    five) and answer a :class:`Reproduction`: the comparison and the
    published-against-govlab verdict table. ``quick``: the short form (fewer
    runs). ``db`` and ``max_events`` as for :func:`compare` (default: the command's)."""
    argcheck.text("name", name, none=True)
    argcheck.flag("quick", quick)
    argcheck.path("db", db, none=True)
    _check_jobs(jobs)
    argcheck.flag("progress", progress)
    argcheck.integer("max_events", max_events, 1, 2**64 - 1, none=True)

    def work() -> Reproduction:
        from govlab import outfile, pipeline
        from govlab import reproduction as repro
        from govlab.store import Store

        names = [name] if name else list(repro.EVALUATIONS)
        evaluations = [repro.evaluation(n) for n in names]
        loaded = [(ev, repro.experiments_of(ev, quick=quick)) for ev in evaluations]
        _check_jobs(jobs)
        path = os.fspath(db) if db is not None else repro.default_db()
        outfile.check(path, "results database")
        parts: list[tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]] = []
        with Store(path) as store:
            for ev, experiments in loaded:
                done = pipeline.run_experiments(
                    experiments, store, jobs=jobs, progress=bool(progress), max_events=max_events
                )
                table = repro.rows(ev, done.experiments, done.planned, done.results(store))
                parts.append((ev, done.analyses, table))
            analyses = [a for _, these, _ in parts for a in these]
            base = Comparison._from_store(store, analyses, path)
        return Reproduction(base, parts, quick)

    return checked(work)


# --- the answers -------------------------------------------------------------------------


def _df(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> Any:
    import pandas as pd

    return pd.DataFrame(list(rows), columns=list(columns) if columns is not None else None)


class Comparison:
    """An MMTests-style comparison of one or more benchmarks (see :mod:`govlab.analysis`).

    ``analyses``: the analysis dicts (``govlab compare --format json``'s
    ``benchmarks``); ``db``: the results database they came from.
    """

    def __init__(self, analyses: Sequence[Mapping[str, Any]], runs: Sequence[Mapping[str, Any]], cells: Any, db: str) -> None:
        self.analyses = [dict(a) for a in analyses]
        self.db = db
        self._runs = list(runs)
        self._cells = cells

    @classmethod
    def _from_store(cls, store: Any, analyses: Sequence[Mapping[str, Any]], db: str) -> Comparison:
        from govlab.report import cells

        return cls(analyses, _run_rows(store, analyses), cells(store, analyses), db)

    # --- tables -------------------------------------------------------------------------

    @property
    def runs(self) -> Any:
        """One row per run: benchmark, config, the axis and its value, repeat, seed,
        finished, energy_j, avg_power_w, the primary metric and every workload metric."""
        return _df(self._runs)

    def table(self, stat: str = "Amean") -> Any:
        """The rows of statistic ``stat`` of every benchmark's tables as a DataFrame:
        one row per (benchmark, stat, value label), per configuration its
        figure, its difference to the baseline in percent (positive: better)
        and whether that difference is significant. ``stat``: ``Amean``,
        ``Hmean``, ``Stddev``, ``CoeffVar``, ``Min``, ``Max``, ``Gmean`` (the
        overall score), ``Energy``, ``Power``, ``Perf/W``, or ``all``."""
        import pandas as pd

        from govlab import tables

        rows: list[dict[str, Any]] = []
        known: list[str] = []
        for a in self.analyses:
            for part, source in (("performance", tables.performance_rows(a)), ("energy", a["energy"])):
                for r in source:
                    if r["stat"] not in known:
                        known.append(r["stat"])
                    if stat not in ("all", r["stat"]):
                        continue
                    row: dict[str, Any] = {
                        "benchmark": a["name"],
                        "part": part,
                        "stat": r["stat"],
                        "label": r["label"],
                        "unit": r.get("unit", a["metric"].get("unit", "")),
                    }
                    for c in r["cells"]:
                        row[(c["config"], "value")] = c["value"]
                        row[(c["config"], "pct")] = c["pct"]
                        row[(c["config"], "significant")] = c.get("significant")
                    rows.append(row)
        if stat != "all" and stat not in known:
            raise InvalidValueError(f"stat: invalid value {stat!r}: one of {', '.join(known + ['all'])}")
        df = pd.DataFrame(rows).set_index(["benchmark", "part", "stat", "label", "unit"])
        df.columns = pd.MultiIndex.from_tuples(df.columns, names=["config", "figure"])
        # True, False, or <NA> where there is no test (the baseline, too few runs): one dtype, pandas' nullable boolean.
        for column in df.columns:
            if column[1] == "significant":
                df[column] = df[column].astype("boolean")
        return df

    @property
    def scores(self) -> Any:
        """Per benchmark and configuration the overall score (geometric mean over the
        axis of the per-value mean), its difference to the baseline in percent, its
        significance, and the performance and performance-per-watt ratios."""
        rows = [
            {
                "benchmark": a["name"],
                "metric": a["metric"]["name"],
                "baseline": a["baseline"],
                "config": s["config"],
                "score": s["score"],
                "pct": s["pct"],
                "significant": s["significant"],
                "perf_ratio": s["perf_ratio"],
                "ppw_ratio": s["ppw_ratio"],
            }
            for a in self.analyses
            for s in a["scores"]
        ]
        df = _df(rows)
        if "significant" in df:
            df["significant"] = df["significant"].astype("boolean")
        return df

    @property
    def summary(self) -> Any:
        """The summary over benchmarks: per configuration other than the baseline
        and benchmark, the difference in percent, its significance and its
        category (large wins ... large losses), as ``govlab compare`` sums up."""
        from govlab import analysis

        s = analysis.summarise(self.analyses)
        rows = [
            {"config": g["config"], "category": cat, **e}
            for g in s["groups"]
            for cat, entries in g["categories"].items()
            for e in entries
        ]
        df = _df(rows, ["config", "category", "benchmark", "metric", "baseline", "pct", "significant"])
        df["significant"] = df["significant"].astype("boolean")
        return df

    # --- text --------------------------------------------------------------------------

    def to_text(self) -> str:
        """What ``govlab compare`` / ``govlab report`` print."""
        from govlab import tables

        return tables.render(self.analyses, "text")

    def to_markdown(self) -> str:
        from govlab import tables

        return tables.render(self.analyses, "markdown")

    def to_csv(self) -> str:
        from govlab import tables

        return tables.render(self.analyses, "csv")

    def to_json(self) -> str:
        from govlab import tables

        return tables.render(self.analyses, "json")

    # --- plots -------------------------------------------------------------------------

    def figures(self) -> Figures:
        """The HTML report's plotly figures, per benchmark: the metric per
        parameter value, performance against energy, frequency and idle-state
        residency, wakeup latency and the workload's own latency; shown inline
        in Jupyter."""
        from govlab.report import figures as f

        out = Figures()
        for a in self.analyses:
            cells = self._cells.get(a["name"], {})
            name = a["name"]
            metric = a["metric"]["name"]
            titled = [
                (f.metric_per_value(a), f"{name}: {metric}" + (f" per {a['axis']['name']}" if a.get("axis") else "")),
                (f.performance_energy(a), f"{name}: {metric} against energy per run"),
                (f.frequency_residency(a, cells), f"{name}: time at each frequency"),
                (f.state_residency(a, cells), f"{name}: time running and in each idle state"),
            ]
            wakeup = f.wakeup_latency(a, cells)
            if wakeup is not None:
                titled.append((wakeup, f"{name}: wakeup latency"))
            titled += [(fig, f"{name}: the workload's {label} latency") for label, fig in f.workload_latency(a, cells)]
            for fig, title in titled:
                fig.update_layout(title={"text": title, "x": 0, "xanchor": "left", "y": 0.99, "yanchor": "top"})
                fig.update_layout(margin={"t": max(90, (fig.layout.margin.t or 0) + 40)})
                out.append(fig)
        return out

    # --- display -----------------------------------------------------------------------

    def __repr__(self) -> str:
        names = ", ".join(a["name"] for a in self.analyses)
        return f"<govlab.Comparison {names}: {len(self._runs)} runs in {self.db}>"

    def _repr_html_(self) -> str:
        import html

        parts = [f"<p><b>govlab.Comparison</b> {html.escape(self.db)}: {len(self._runs)} runs</p>"]
        scores = self.scores
        for name, part in scores.groupby("benchmark", sort=False):
            parts.append(f"<h4>{html.escape(str(name))}</h4>")
            parts.append(part.drop(columns=["benchmark"]).to_html(index=False, float_format=lambda v: f"{v:.4g}"))
        return "".join(parts)


class Figures(list):  # type: ignore[type-arg]
    """A list of plotly figures that Jupyter shows one after the other."""

    def _ipython_display_(self) -> None:
        from IPython.display import display

        for fig in self:
            display(fig)


class Reproduction(Comparison):
    """:class:`Comparison` of a reproduced evaluation, with :attr:`verdicts`:
    govlab's differences to the baseline beside the published ones."""

    def __init__(self, base: Comparison, parts: Sequence[tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]], quick: bool) -> None:
        super().__init__(base.analyses, base._runs, base._cells, base.db)
        self._parts = list(parts)
        self.quick = quick

    @property
    def verdicts(self) -> Any:
        """One row per (evaluation, benchmark, parameter value, configuration, metric):
        govlab's mean and its baseline's, the difference in percent, and where a
        published figure exists, its difference and the verdict (direction, magnitude)."""
        rows = []
        for ev, _, table in self._parts:
            for r in table:
                pub = r.get("published") or {}
                verdict = r.get("verdict") or {}
                row = {"evaluation": ev.name, **{k: v for k, v in r.items() if k not in ("published", "verdict")}}
                row["published_pct"] = pub.get("pct", math.nan)
                row["published_where"] = pub.get("where")
                row["same_direction"] = verdict.get("same_direction")
                row["within_2x"] = verdict.get("within_2x")
                row["verdict"] = verdict.get("text")
                rows.append(row)
        return _df(rows)

    def to_text(self) -> str:
        """What ``govlab reproduce`` prints."""
        from govlab import reproduction as repro

        return "\n".join(repro.section_text(ev, analyses, table, self.quick) for ev, analyses, table in self._parts)

    def _repr_html_(self) -> str:
        return super()._repr_html_() + "<h4>Verdicts</h4>" + self.verdicts.to_html(index=False)


def _run_rows(store: Any, analyses: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per run of ``analyses``' experiments, from the stored results."""
    wanted = {a["name"] for a in analyses}
    recorded = [x for x in store.experiments() if x["definition"]["name"] in wanted]
    results = store.results({r["key"] for x in recorded for r in x["runs"]})
    rows = []
    for x in recorded:
        d = x["definition"]
        axis = (d.get("axis") or {}).get("name")
        for r in sorted(x["runs"], key=lambda r: (r["config"], json.dumps(r["axis_value"]), r["repeat"])):
            res = results.get(r["key"])
            row: dict[str, Any] = {
                "benchmark": d["name"],
                "config": r["config"],
                "axis": axis,
                "axis_value": r["axis_value"],
                "repeat": r["repeat"],
                "seed": r["seed"],
                "stored": res is not None,
            }
            if res is not None:
                pm = res["primary_metric"]
                row["finished"] = pm.get("missing") != "unfinished"
                row["metric"] = pm["name"]
                row["value"] = pm.get("value")
                row["energy_j"] = res.get("energy_j")
                row["avg_power_w"] = res.get("avg_power_w")
                for dom, figs in (res.get("energy_domains") or {}).items():
                    if isinstance(figs, Mapping):
                        for k, v in figs.items():
                            row[f"{dom}_{k}"] = v
                for k, v in (res.get("metrics") or {}).items():
                    if isinstance(v, (int, float)) or v is None:
                        row.setdefault(k, v)
            rows.append(row)
    return rows

