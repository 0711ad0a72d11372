"""``govlab reproduce``: the published governor evaluations, re-run and checked (stages: load, analyse, render).

The notebook's ``govlab.reproduce(name=None, quick=False, ...)`` is
:func:`govlab.notebook.reproduce`, built on this module.

:func:`experiments_of` loads an evaluation's experiment file, :func:`rows`
analyses its runs against the published figures, :func:`render_text` writes
the rows; running them is :mod:`govlab.pipeline`'s, as for ``compare``.

Six public evaluations are govlab's reason to exist (docs/validation.md). Each
is an experiment file in ``experiments/`` (one per machine when it ran on
several: ``NAME-MACHINE.toml``) with one ``[[benchmark]]`` per benchmark of
the original evaluation. ``reproduce`` runs them through
``compare`` (same results database, same tables) and then puts govlab's
figures beside the published ones where the original post's figures are
kept in ``data/published/`` (the HWP boost, weighted teo and ondemand
posts; the other two evaluations are described without figures on purpose:
govlab must predict them).

One row per (benchmark, parameter value, configuration, metric): the mean
over the repeats of the metric (the harmonic mean for a rate, where higher
is better, as MMTests does; the arithmetic mean otherwise), the baseline
configuration's mean, and energy and power of both. Where a published
figure exists the row also carries it and a verdict:

- *direction*: both differences to the baseline have the same sign (an
  improvement in both, or a loss in both);
- *magnitude*: govlab's difference is within a factor of two of the
  published one (only asked when the direction agrees).

Where the evaluation asks for it (``Evaluation.significance``: the x86
frequency-invariance one, whose tildes are judged results), govlab's
difference counts only when it is significant by compare-mmtests' t-test
(:func:`significance`) over the values MMTests had: the repeats of an
iterated benchmark, the within-run samples of a timed one run once
(:mod:`govlab.samples`); otherwise it is none.

Differences are in percent, positive = better (:func:`govlab.stats.pct_diff`).
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from govlab import analysis as compare, samples as sampling, stats
from govlab.experiment import Experiment, load_all
from govlab.paths import ROOT
from govlab.plan import RunSpec

_NAN = float("nan")

__all__ = ["EVALUATIONS", "Evaluation", "benchmark_of", "experiments_of", "published", "rows", "summary_rows", "significance", "verdict", "render_text", "section_text", "verdict_table", "EXTRA_METRICS"]

EXPERIMENTS_DIR = ROOT / "experiments"
PUBLISHED_DIR = ROOT / "data" / "published"


@dataclass(frozen=True)
class Evaluation:
    name: str
    title: str
    #: metrics reported beside each benchmark's primary metric
    extra_metrics: tuple[str, ...] = ()
    #: an evaluation on several machines: one experiment file each, ``NAME-MACHINE.toml``,
    #: whose benchmarks are named ``MACHINE/BENCHMARK`` in the rows
    machines: tuple[str, ...] = ()
    #: also score each benchmark as a whole (:func:`summary_rows`)
    summary: bool = False
    #: a govlab difference counts only when significant over the repeats (:func:`significance`)
    significance: bool = False

    @property
    def experiment_file(self) -> Path:
        return self.experiment_files[0]

    @property
    def experiment_files(self) -> list[Path]:
        if not self.machines:
            return [EXPERIMENTS_DIR / f"{self.name}.toml"]
        return [EXPERIMENTS_DIR / f"{self.name}-{m}.toml" for m in self.machines]

    @property
    def published_file(self) -> Path:
        return PUBLISHED_DIR / f"{self.name}.toml"


#: In the order `reproduce` runs them.
EVALUATIONS: dict[str, Evaluation] = {
    e.name: e
    for e in (
        Evaluation("ondemand-copy-prev-load", "ondemand: copy the previous load once after idle (2014)"),
        Evaluation("hwp-dynamic-boost", "intel_pstate: HWP dynamic boost (2018)"),
        Evaluation(
            "teo-weighted-history",
            "teo: weighted idle-duration history (RFC, 2020)",
            extra_metrics=("idle_correct_pct", "avg_power_w"),
        ),
        Evaluation("datacenter-powersave", "frequency scaling in the datacenter (OSPM 2020)", extra_metrics=("avg_power_w",)),
        Evaluation(
            "powernv-global-pstates",
            "powernv: global and local pstates (2016)",
            extra_metrics=("read_max_us", "update_max_us"),
        ),
        Evaluation(
            "x86-freq-invariance",
            "x86 frequency invariance for schedutil (v5.7, 2020)",
            machines=("skylake", "broadwell", "haswell"),
            summary=True,
            significance=True,
        ),
    )
}


def _idle_correct_pct(result: Mapping[str, Any]) -> float:
    samples = sum(c["idle_accuracy"]["samples"] for c in result["cpus"])
    correct = sum(c["idle_accuracy"]["correct"] for c in result["cpus"])
    return 100.0 * correct / samples if samples else math.nan


def _idle_samples(result: Mapping[str, Any]) -> float:
    return float(sum(c["idle_accuracy"]["samples"] for c in result["cpus"]))


#: name -> (unit, better, function of a run's result)
EXTRA_METRICS: dict[str, tuple[str, str, Callable[[Mapping[str, Any]], float]]] = {
    "idle_correct_pct": ("% of idle entries", "higher", _idle_correct_pct),
    "avg_power_w": ("W", "lower", lambda r: float(r["avg_power_w"])),
    # YCSB's maximum latency per operation type (the 2016 powernv post's figure)
    "read_max_us": ("µs", "lower", lambda r: float(r["metrics"].get("read_max_us", math.nan))),
    "update_max_us": ("µs", "lower", lambda r: float(r["metrics"].get("update_max_us", math.nan))),
}


def evaluation(name: str) -> Evaluation:
    try:
        return EVALUATIONS[name]
    except KeyError:
        raise ValueError(f"no evaluation named {name!r}; the evaluations are {', '.join(EVALUATIONS)}") from None


def experiments_of(ev: Evaluation, quick: bool = False) -> list[Experiment]:
    return [e for path in ev.experiment_files for e in load_all(path, quick=quick)]


def benchmark_of(ev: Evaluation, e: Experiment) -> str:
    """The name rows and published figures give ``e``: its [[benchmark]] name, ``MACHINE/BENCHMARK``
    for an evaluation on several machines (experiment ``NAME-MACHINE/BENCHMARK``)."""
    if ev.machines and e.name.startswith(ev.name + "-"):
        return e.name[len(ev.name) + 1 :]
    return e.name.split("/", 1)[1] if "/" in e.name else e.name


def published(ev: Evaluation) -> list[dict[str, Any]]:
    """The published figures of an evaluation (empty when there are none here)."""
    path = ev.published_file
    if not path.exists():
        return []
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    out = []
    for i, fig in enumerate(doc.get("figure", [])):
        missing = {"benchmark", "config", "metric", "better", "value", "baseline_value", "where"} - set(fig)
        if missing:
            raise ValueError(f"{path}: figure[{i + 1}]: missing {', '.join(sorted(missing))}")
        out.append({"param": None, "headline": False, **fig})
    return out


# --- rows ----------------------------------------------------------------------------


def _mean(values: Sequence[float], better: str) -> float:
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return math.nan
    return stats.hmean(values) if better == "higher" and all(v > 0 for v in values) else stats.amean(values)


def rows(
    ev: Evaluation,
    experiments: Sequence[Experiment],
    planned: Sequence[Sequence[RunSpec]],
    results: Mapping[str, Mapping[str, Any]],
    figures: Sequence[Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One row per (benchmark, parameter value, configuration, metric), published figures attached.

    ``figures`` defaults to the evaluation's published file.
    """
    figures = published(ev) if figures is None else [{"param": None, "headline": False, **f} for f in figures]
    out: list[dict[str, Any]] = []
    every = {e.name: _cells(runs, results) for e, runs in zip(experiments, planned, strict=True)}
    for e in experiments:
        benchmark = benchmark_of(ev, e)
        cells = every[e.name]
        order = [e.baseline] + [c.name for c in e.configs if c.name != e.baseline]
        for value in e.axis_values:
            base = cells.get((e.baseline, json.dumps(value)), [])
            for config in order:
                mine = cells.get((config, json.dumps(value)), [])
                if not mine or not base:
                    continue
                unfinished = [r for r in mine + base if r["primary_metric"].get("missing") == "unfinished"]
                if unfinished:  # compare's analysis refuses these first; kept for callers of rows() alone
                    items = [(config, value, r) for r in unfinished]
                    raise compare.UnfinishedRuns(compare.unfinished_message(e.name, e.axis_name, items))
                pm = mine[0]["primary_metric"]
                metrics = [(pm["name"], pm.get("unit", ""), pm["better"], _primary_value)]
                metrics += [(m, *EXTRA_METRICS[m]) for m in ev.extra_metrics]
                for name, unit, better, get in metrics:
                    if all(math.isnan(get(r)) for r in mine):
                        continue  # a metric this benchmark does not report
                    row = {
                        "benchmark": benchmark,
                        "param": value,
                        "param_name": e.axis_name,
                        "config": config,
                        "baseline": e.baseline,
                        "metric": name,
                        "unit": unit,
                        "better": better,
                        "value": _mean([get(r) for r in mine], better),
                        "baseline_value": _mean([get(r) for r in base], better),
                        "energy_j": stats.amean([float(r["energy_j"]) for r in mine]),
                        "baseline_energy_j": stats.amean([float(r["energy_j"]) for r in base]),
                        "avg_power_w": stats.amean([float(r["avg_power_w"]) for r in mine]),
                        "baseline_avg_power_w": stats.amean([float(r["avg_power_w"]) for r in base]),
                        "repeats": len(mine),
                    }
                    if name == "idle_correct_pct":
                        row["idle_samples"] = int(stats.amean([_idle_samples(r) for r in mine]))
                    row["pct"] = _pct(row["value"], row["baseline_value"], better)
                    if ev.significance:
                        primary = name == pm["name"]
                        row["significance"] = significance(
                            _tested(mine, get, primary), _tested(base, get, primary), within_run=primary and _sampled(mine + base)
                        )
                    fig = _figure_for(figures, row)
                    if fig is not None:
                        row["published"] = {
                            "value": fig["value"],
                            "baseline_value": fig["baseline_value"],
                            "pct": _compare_pct(fig["value"], fig["baseline_value"], fig["better"]),
                            "where": fig["where"],
                            "headline": bool(fig["headline"]),
                        }
                        row["verdict"] = verdict(row["published"]["pct"], _direction_pct(row), _significant(row))
                    out.append(row)
        if ev.summary:
            warm = every.get(e.power_warmup_of or "", {})
            out += summary_rows(benchmark, e, cells, order, figures, ev.significance, {c: r for (c, _), r in warm.items()})
    return out


def _cells(runs: Sequence[RunSpec], results: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Each (configuration, parameter as JSON) cell's stored runs, in the order of their repeats (their seeds)."""
    found: dict[tuple[str, str], list[tuple[int, Mapping[str, Any]]]] = {}
    for run in runs:
        result = results.get(run.key)
        if result is not None:
            found.setdefault((run.config, json.dumps(run.axis_value)), []).append((run.repeat, result))
    return {k: [r for _, r in sorted(v, key=lambda x: x[0])] for k, v in found.items()}


# --- whole-benchmark scores ------------------------------------------------------------
#
# The 2020 x86 frequency-invariance evaluation (commit 1567c3e3467c) scores a
# benchmark as a whole: "the ratio result_new / result_baseline", where "the
# results in the score ratio are the geometric means of results running the
# benchmark with different parameters"; its power is turbostat's package
# average over "the entire duration of each benchmark" (all its runs: the
# package energy over the time; a run simulated in shorter parts, netperf's
# tests scored as 10-s ones, counts as the invocation it stands for:
# :func:`govlab.analysis.package_energy`; an untimed warm-up that window held, as
# MMTests' pgbench's, counts as that many steps, run as a benchmark of its
# own: the experiment's ``power_warmup``), and performance per watt is the
# score over the power ratio. Its tables print two decimals and a tilde for
# 1.00, "a neutral result, i.e. no difference from baseline". govlab's difference is
# one only when it shows at two decimals and is significant over the repeats
# (:func:`significance`): each repeat scores the benchmark on its own (the
# logarithm of its geometric mean over the parameter, of its package power,
# and of their quotient for performance per watt), and the configuration's
# repeats are tested against the baseline's. A benchmark run once per
# parameter with within-run samples (MMTests' timed ones) is tested on
# those instead: the same three logarithms estimated from the samples'
# means, with their standard errors (:func:`_estimate_significance`).
# Rows carry param None and metric "score", "pkg_power_w" or "perf_per_watt".


def summary_rows(
    benchmark: str,
    e: Experiment,
    cells: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]],
    order: Sequence[str],
    figures: Sequence[Mapping[str, Any]],
    tested: bool = False,
    warm: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """The evaluation-wide score, package power and performance per watt of one benchmark per configuration.

    ``cells`` holds each (configuration, parameter) cell's runs in the order of their repeats;
    ``tested``: judge each difference by its significance over the repeats; ``warm``: each
    configuration's runs of the untimed warm-up its power window also held (the experiment's
    ``power_warmup``), counted as ``e.power_warmup_steps`` steps.
    """
    warm = warm if warm is not None and e.power_warmup_steps else {}
    keys = [json.dumps(v) for v in e.axis_values]
    every = [r for k in keys for r in cells.get((e.baseline, k), [])]
    if not every:
        return []
    better = every[0]["primary_metric"]["better"]
    sign = 1.0 if better == "higher" else -1.0

    def means(config: str) -> list[float] | None:
        out = []
        for k in keys:
            runs = cells.get((config, k), [])
            if not runs:
                return None
            out.append(_mean([_primary_value(r) for r in runs], better))
        return out

    # An untimed warm-up inside the power window (the experiment's power_warmup) counts as that
    # many steps: its runs weighed by the steps' mean time over their own.
    def warm_runs(config: str, runs: Sequence[Mapping[str, Any]]) -> list[tuple[float, Mapping[str, Any]]]:
        mine = warm.get(config, [])
        if not mine or not runs:
            return []
        step_s = stats.amean([compare.package_energy(r)[1] for r in runs])
        own_s = stats.amean([compare.package_energy(r)[1] for r in mine])
        # repeats of the steps (runs per parameter) x the warm-up's steps, spread over its own runs
        c = e.power_warmup_steps * step_s / own_s * len(runs) / len(keys) / len(mine) if own_s > 0 else 0.0
        return [(c, r) for r in mine] if c > 0 else []

    def pkg_w(runs: Sequence[tuple[float, Mapping[str, Any]]]) -> float:
        secs = math.fsum(w * compare.package_energy(r)[1] for w, r in runs)
        return math.fsum(w * compare.package_energy(r)[0] for w, r in runs) / secs if secs > 0 else math.nan

    def runs_of(config: str) -> list[tuple[float, Mapping[str, Any]]]:
        runs = [r for k in keys for r in cells.get((config, k), [])]
        return [(1.0, r) for r in runs] + warm_runs(config, runs)

    def per_repeat(config: str) -> dict[str, list[float]]:
        """Each repeat's log score, log package power and log performance per watt (those it has)."""
        n = min(len(cells.get((config, k), [])) for k in keys)
        out: dict[str, list[float]] = {"score": [], "pkg_power_w": [], "perf_per_watt": []}
        for i in range(n):
            runs = [(1.0, cells[(config, k)][i]) for k in keys]
            values = [_primary_value(r) for _, r in runs]
            watts = pkg_w(runs + warm_runs(config, [r for _, r in runs]))
            if all(v > 0 for v in values):  # also false for nan
                out["score"].append(math.fsum(math.log(v) for v in values) / len(values))
            if watts > 0:
                out["pkg_power_w"].append(math.log(watts))
            if all(v > 0 for v in values) and watts > 0:
                out["perf_per_watt"].append(sign * out["score"][-1] - math.log(watts))
        return out

    def within_run(config: str) -> dict[str, tuple[float, float, int, int]] | None:
        """From the within-run samples (a benchmark run once per parameter, as MMTests ran its
        timed ones): each metric's log estimate, its variance, its samples and its parameters."""
        per = []
        for k in keys:
            runs = cells.get((config, k), [])
            if not _sampled(runs):
                return None
            got = [sampling.of(r) for r in runs]
            per.append(([v for g in got for v in g["values"]], [w for g in got for w in g["pkg_power_w"]], 1.0))
        # the warm-up's intervals are a stratum of the power alone, weighed as its length in steps
        strata = list(per)
        mine = warm.get(config, [])
        if mine and _sampled(mine):
            ws = [w for r in mine for w in sampling.of(r)["pkg_power_w"]]
            if ws:
                strata.append(([], ws, e.power_warmup_steps * stats.amean([len(p[1]) for p in per]) / len(ws)))
        logs, var, n = [], 0.0, 0
        for values, _, _ in per:
            m = stats.amean(values) if values else math.nan
            if not m > 0:
                return None
            logs.append(math.log(m))
            var += (stats.stddev(values) ** 2 / len(values) if len(values) > 1 else 0.0) / m**2
            n += len(values)
        watts = [w for _, ws, _ in strata for w in ws]
        mass = math.fsum(c * len(ws) for _, ws, c in strata)
        w = math.fsum(c * x for _, ws, c in strata for x in ws) / mass if watts else math.nan
        if not w > 0:
            return None
        # The mean over every parameter's intervals (and the warm-up's, weighed c) is a stratified
        # mean: each parameter is run once, in both configurations alike, so only the spread within a
        # parameter's run is sampling noise, not the spread between parameters (1 client's watts
        # against 128 clients'): Var = sum c_k^2 n_k s_k^2 / (sum c_k n_k)^2.
        var_w = math.fsum(c * c * len(ws) * stats.stddev(ws) ** 2 for _, ws, c in strata if len(ws) > 1) / mass**2 / w**2
        score = (math.fsum(logs) / len(logs), var / len(logs) ** 2, n, len(logs))
        return {
            "score": score,
            "pkg_power_w": (math.log(w), var_w, len(watts), 1),
            "perf_per_watt": (sign * score[0] - math.log(w), score[1] + var_w, min(n, len(watts)), len(logs)),
        }

    base = means(e.baseline)
    base_w = pkg_w(runs_of(e.baseline))
    base_sampled = within_run(e.baseline) if tested else None
    base_repeats = per_repeat(e.baseline) if tested and base_sampled is None else {}
    out: list[dict[str, Any]] = []
    for config in order:
        if config == e.baseline:
            continue
        mine = means(config)
        if mine is None or base is None:
            continue
        score = stats.gmean(mine) / stats.gmean(base) if stats.gmean(base) > 0 else math.nan
        watts = pkg_w(runs_of(config))
        speed = score if better == "higher" else (1.0 / score if score > 0 else math.nan)
        ppw = speed / (watts / base_w) if watts > 0 and base_w > 0 else math.nan
        sampled = within_run(config) if base_sampled is not None else None
        repeats = per_repeat(config) if tested and sampled is None else {}
        for metric, unit, how, value, baseline_value in (
            ("score", "ratio", better, score, 1.0),
            ("pkg_power_w", "W", "lower", watts, base_w),
            ("perf_per_watt", "ratio", "higher", ppw, 1.0),
        ):
            row: dict[str, Any] = {
                "benchmark": benchmark,
                "param": None,
                "param_name": None,
                "config": config,
                "baseline": e.baseline,
                "metric": metric,
                "unit": unit,
                "better": how,
                "value": value,
                "baseline_value": baseline_value,
                "repeats": len(cells.get((config, keys[0]), [])),
                "pct": _printed_pct(value, baseline_value, how),
            }
            if tested and sampled is not None:
                row["significance"] = _estimate_significance(sampled[metric], base_sampled[metric])
            elif tested:
                row["significance"] = significance(repeats[metric], base_repeats[metric])
            fig = _figure_for(figures, row)
            if fig is not None:
                published_pct = _printed_pct(fig["value"], fig["baseline_value"], fig["better"])
                row["published"] = {
                    "value": fig["value"],
                    "baseline_value": fig["baseline_value"],
                    "pct": published_pct,
                    "where": fig["where"],
                    "headline": bool(fig["headline"]),
                }
                row["verdict"] = verdict(published_pct, row["pct"], _significant(row))
            out.append(row)
    return out


def significance(new: Sequence[float], base: Sequence[float], within_run: bool = False) -> dict[str, Any]:
    """Whether a configuration's values differ from the baseline's, by compare-mmtests' test
    (:func:`govlab.stats.mmtests_ttest`, two-sided, p < 0.10); from one value a side, any
    difference is significant, as in MMTests. The values are the repeats, or
    (``within_run``) the within-run samples of a benchmark run once (:mod:`govlab.samples`)."""
    new = [v for v in new if not math.isnan(v)]
    base = [v for v in base if not math.isnan(v)]
    test = stats.mmtests_ttest(new, base)
    return {
        "p": test.p,
        "significant": test.significant,
        "repeats": len(new),
        "baseline_repeats": len(base),
        **({"within_run": True} if within_run else {}),
    }


def _estimate_significance(new: tuple[float, float, int, int], base: tuple[float, float, int, int]) -> dict[str, Any]:
    """A whole-benchmark difference from within-run samples: compare-mmtests' t on two log
    estimates (each parameter's log mean, its variance s²/(n·m²) by the delta method), with
    MMTests' degrees of freedom summed over the parameters (n₁ + n₂ − 2 each). govlab's
    construction: compare-mmtests tested each parameter alone (:func:`significance`)."""
    (x, vx, nx, px), (y, vy, ny, _) = new, base
    test = stats.mmtests_ttest_of(x - y, math.sqrt(vx + vy), float(nx + ny - 2 * px))
    return {"p": test.p, "significant": test.significant, "repeats": nx, "baseline_repeats": ny, "within_run": True}


def _sampled(runs: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every one of ``runs`` carries within-run samples (and there is one)."""
    return bool(runs) and all("samples" in r for r in runs)


def _tested(runs: Sequence[Mapping[str, Any]], get: Callable[[Mapping[str, Any]], float], primary: bool) -> list[float]:
    """What a cell's difference is tested on: the within-run samples of its primary metric
    where its runs carry them, else one value per run (its repeats)."""
    if primary and _sampled(runs):
        return [v for r in runs for v in sampling.of(r)["values"]]
    return [get(r) for r in runs]


def _significant(row: Mapping[str, Any]) -> bool | None:
    """The row's significance, None when its evaluation does not test it."""
    return row["significance"]["significant"] if "significance" in row else None


def _printed_pct(value: float, base: float, better: str) -> float:
    """The difference as the source's tables print it: both figures to two decimals."""
    if math.isnan(value) or math.isnan(base):
        return math.nan
    return _pct(round(value, 2), round(base, 2), better)


def _compare_pct(value: float, base: float, better: str) -> float:
    """A published per-parameter difference as its table prints it beside the two figures, in
    percent to two decimals (compare-mmtests' ``( 0.00%)``): a cell printed as 0.00 % is none."""
    pct = _pct(value, base, better)
    return round(pct, 2) if math.isfinite(pct) else pct


def _figure_for(figures: Sequence[Mapping[str, Any]], row: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if row["config"] == row["baseline"]:
        return None
    for fig in figures:
        if (
            fig["benchmark"] == row["benchmark"]
            and fig["config"] == row["config"]
            and fig["metric"] == row["metric"]
            and fig["param"] == row["param"]
        ):
            return fig
    return None


def _direction_pct(row: Mapping[str, Any]) -> float:
    """The row's difference in percent; from a zero baseline, only its sign (±inf)."""
    if row["baseline_value"] == 0 and not math.isnan(row["value"]) and row["value"] != 0:
        up = row["value"] > 0
        return math.inf if up == (row["better"] == "higher") else -math.inf
    return row["pct"]


def _pct(value: float, base: float, better: str) -> float:
    if math.isnan(value) or math.isnan(base) or base == 0:
        return math.nan
    return stats.pct_diff(value, base, better)


def verdict(published_pct: float, govlab_pct: float, significant: bool | None = None) -> dict[str, Any]:
    """Same direction (sign of the improvement) and, if so, magnitude within a factor of two.

    ``significant`` False: govlab's difference is not significant over its repeats, so it is
    none (the source's tilde), whatever its size; True or None: it counts as it is.
    """
    if math.isnan(published_pct) or math.isnan(govlab_pct):
        return {"same_direction": None, "within_2x": None, "text": "no figure"}
    if significant is False and govlab_pct != 0:
        if published_pct == 0:
            return {"same_direction": True, "within_2x": True, "text": "no significant difference, as published"}
        return {"same_direction": False, "within_2x": False, "text": "no significant difference in govlab"}
    same = (published_pct > 0) == (govlab_pct > 0) and published_pct != 0 and govlab_pct != 0
    if published_pct == 0 or govlab_pct == 0:
        same = published_pct == govlab_pct
    within = same and published_pct != 0 and math.isfinite(govlab_pct) and 0.5 <= govlab_pct / published_pct <= 2.0
    if published_pct == 0 and govlab_pct == 0:
        return {"same_direction": True, "within_2x": True, "text": "no difference, as published"}
    if not same and govlab_pct == 0:
        text = "no difference in govlab"
    elif published_pct == 0:
        text = "a difference in govlab, none published"
    elif not same:
        text = "opposite direction"
    elif not math.isfinite(govlab_pct):
        text = "same direction (govlab's baseline is 0)"
    elif within:
        text = "same direction, within 2x"
    else:
        text = "same direction, magnitude off by more than 2x"
    return {"same_direction": same, "within_2x": within, "text": text}


# --- text ----------------------------------------------------------------------------


def verdict_table(ev: Evaluation, table: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The published figures and govlab's side by side, with the verdicts, as data:
    ``{"title", "head", "rows", "notes"}`` (each row a tuple of cells as text), the one
    source of :func:`render_text` and of ``govlab reproduce --html``'s table."""
    checked = [r for r in table if "published" in r]
    title = f"Published vs govlab: {ev.title}"
    if not checked:
        head = ("benchmark", "param", "config", "metric", "govlab vs baseline", "energy J", "power W")
        body = [
            (
                r["benchmark"],
                _param(r),
                r["config"],
                r["metric"],
                f"{_g(r['value'])} vs {_g(r['baseline_value'])} ({_signed(r['pct'])})",
                f"{_g(r.get('energy_j', _NAN))} vs {_g(r.get('baseline_energy_j', _NAN))}",
                f"{_g(r.get('avg_power_w', _NAN))} vs {_g(r.get('baseline_avg_power_w', _NAN))}",
            )
            for r in table
            if r["config"] != r["baseline"]
        ]
        notes = ["(no published figures are kept for this evaluation: govlab's figures are its prediction)"]
        return {"title": title, "head": head, "rows": body, "notes": notes, "published": False}
    head = ("benchmark", "param", "config", "metric", "published", "govlab", "verdict")
    body = []
    for r in checked:
        p = r["published"]
        body.append(
            (
                r["benchmark"] + (" *" if p["headline"] else ""),
                _param(r),
                r["config"],
                r["metric"],
                f"{_g(p['value'])} vs {_g(p['baseline_value'])} ({_signed(p['pct'])})",
                f"{_g(r['value'])} vs {_g(r['baseline_value'])} ({_difference(r)})",
                r["verdict"]["text"] + (f" [{r['idle_samples']} idle entries]" if "idle_samples" in r else ""),
            )
        )
    heads = [r for r in checked if r["published"]["headline"]]
    agree = sum(1 for r in heads if r["verdict"]["same_direction"])
    notes = [
        f"* headline row. Direction right on {agree} of {len(heads)} headline rows, "
        f"{sum(1 for r in checked if r['verdict']['same_direction'])} of {len(checked)} rows in all; "
        "a difference is positive when it is an improvement."
    ]
    if ev.significance:
        notes.append(
            "~: govlab's difference is not significant over its repeats, or over its within-run samples "
            "for a benchmark MMTests ran once per parameter (compare-mmtests' t-test, two-sided, "
            "p < 0.10), so it is none, as the source's tilde; p: that test's p-value."
        )
    return {"title": title, "head": head, "rows": body, "notes": notes, "published": True}


def render_text(ev: Evaluation, table: Sequence[Mapping[str, Any]]) -> str:
    """The published figures and govlab's side by side, with the verdicts (:func:`verdict_table`)."""
    t = verdict_table(ev, table)
    lines = [t["title"], "-" * 60]
    if not t["published"]:
        lines += t["notes"]
        lines += _columns(t["head"], t["rows"])
        return "\n".join(lines) + "\n"
    lines += _columns(t["head"], t["rows"])
    lines.append("")
    lines += t["notes"]
    return "\n".join(lines) + "\n"


def section_text(ev: Evaluation, analyses: Sequence[Mapping[str, Any]], table: Sequence[Mapping[str, Any]], quick: bool) -> str:
    """One evaluation's part of ``govlab reproduce``'s text: its title, the comparison tables, the rows."""
    from govlab import tables

    title = f"{ev.name}: {ev.title}" + (" (quick)" if quick else "")
    return "\n".join(["#" * len(title), title, "#" * len(title), ""]) + tables.render(analyses, "text") + "\n" + render_text(ev, table)


def _columns(head: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=True)]
    fmt = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()  # noqa: E731
    return [fmt(head), fmt(["-" * w for w in widths]), *map(fmt, body)]


def _param(r: Mapping[str, Any]) -> str:
    return "-" if r["param"] is None else f"{r['param_name']}={r['param']}"


def _g(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.0f}"


def _difference(r: Mapping[str, Any]) -> str:
    """A row's difference as the verdict table prints it: "~" when it is not significant, and
    the test's p-value when both sides were repeated."""
    sig = r.get("significance")
    if sig is None:
        return _signed(r["pct"])
    shown = _signed(r["pct"]) if sig["significant"] else "~"
    if sig["repeats"] > 1 and sig["baseline_repeats"] > 1 and not math.isnan(sig["p"]):
        shown += f", p {sig['p']:.2g}"
    return shown


def _signed(p: float) -> str:
    return "n/a" if p is None or math.isnan(p) else f"{p:+.2f}%"


def default_db() -> str:
    return os.path.join(os.getcwd(), "govlab-reproduce.sqlite")


def _primary_value(result: Mapping[str, Any]) -> float:
    """A run's primary metric (after its warm-up, if it has one); nan when it has none (no samples)."""
    measured = sampling.window(result)
    if measured is not None:
        return measured["value"]
    value = result["primary_metric"].get("value")
    return _NAN if value is None else float(value)
