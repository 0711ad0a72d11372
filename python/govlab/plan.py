"""Run requests: an experiment expanded into the runs it needs (pipeline stage: plan).

:func:`runs` turns a loaded :class:`govlab.experiment.Experiment` into one
:class:`RunSpec` per configuration x parameter value x repeat. Each holds the
exact keyword arguments of :func:`govlab.run` and the run's key in the results
database; they are built here once, and the executor (:mod:`govlab.sweep`),
the analysis and the HTML report's timeline all use these same requests.

A run's *identity* is everything that determines its result (see
:func:`run_identity`); its key is the sha256 of the identity's canonical JSON,
so a stored result is found again only by a run that would give the same.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from govlab._core import __engine__, __version__

from govlab import api, governors, samples
from govlab import spec as specs
from govlab.experiment import Experiment

__all__ = ["RunSpec", "runs", "run_row", "find", "run_identity", "run_key", "canonical_json"]


@dataclass(frozen=True)
class RunSpec:
    """One simulation of the experiment: a configuration at a parameter value, one repeat."""

    config: str
    axis_value: Any
    repeat: int
    seed: int
    #: keyword arguments of :func:`govlab.run`
    kwargs: dict[str, Any]
    #: sha256 of :attr:`identity` (see :func:`run_key`)
    key: str
    #: everything that determines the run's result, canonical JSON-able
    identity: dict[str, Any]


def runs(experiment: Experiment, max_events: int | None = None) -> list[RunSpec]:
    """Every (configuration x parameter value x repeat) of ``experiment``, configurations outermost.

    ``max_events`` raises the ceiling on each run's estimated ops (:func:`govlab.api.check_cost`),
    as the experiment's own ``max_events`` does (the higher of the two holds);
    it is not part of a run's identity, since it does not change the result."""
    out = []
    for config, value, (repeat, seed) in itertools.product(
        experiment.configs, experiment.axis_values, enumerate(experiment.seeds)
    ):
        kwargs = {
            "platform": config.platform,
            "workload": experiment.workload_at(value),
            "cpufreq": config.cpufreq,
            "cpuidle": config.cpuidle,
            "duration": experiment.duration,
            "seed": seed,
        }
        if config.kernel is not None:
            kwargs["kernel"] = config.kernel
        identity = run_identity(**kwargs)
        if experiment.samples is not None:
            # the run keeps its within-run samples (govlab.samples): another result, another key
            sampling = {
                "sampler": experiment.samples,
                "interval_ns": samples.interval_ns(experiment.samples, identity["duration_ns"]),
                "keeps": "intervals",
            }
            if experiment.warmup_ns:
                # simulated first, its intervals dropped: the run lasts the warm-up plus the duration
                warm = samples.warmup_ns(experiment.samples, identity["duration_ns"], experiment.warmup_ns)
                sampling["warmup_ns"] = warm
                kwargs["duration"] = f"{identity['duration_ns'] + warm}ns"
                identity = run_identity(**kwargs)
            kwargs["samples"] = sampling
            identity["samples"] = sampling
        most = [m for m in (max_events, experiment.max_events) if m is not None]
        if most:
            kwargs["max_events"] = max(most)
        out.append(RunSpec(config.name, value, repeat, seed, kwargs, run_key(identity), identity))
    return out


def run_row(run: RunSpec) -> dict[str, Any]:
    """The run as the results database lists it under its experiment."""
    return {"config": run.config, "axis_value": run.axis_value, "repeat": run.repeat, "seed": run.seed, "key": run.key}


def find(planned: Sequence[RunSpec], config: str, axis_value: Any, seed: int) -> RunSpec | None:
    """The run of ``config`` at ``axis_value`` (compared as JSON) with ``seed``, or None."""
    value = json.dumps(axis_value)
    for r in planned:
        if r.config == config and json.dumps(r.axis_value) == value and r.seed == seed:
            return r
    return None


# --- run identity ----------------------------------------------------------------


def run_identity(
    platform: str, workload: str, cpufreq: str, cpuidle: str, duration: str, seed: int, kernel: str | None = None
) -> dict[str, Any]:
    """Everything that determines a run's result, as canonical JSON-able data.

    It holds each spec as written (name and settings, in sorted order), the
    engine's resolved configuration (so defaults are explicit), the sha256 of
    every platform, workload or Python governor *file* in place of its path (a
    moved file keeps its runs, an edited one does not), the duration in ns,
    the seed, the govlab version and the engine's digest (its sources and
    compiled-in data: an engine rebuilt from changed sources does not reuse
    the old one's runs, even at the same version). A run that names a kernel
    holds it too (one that names none keeps the identity it had before
    kernels existed).
    """
    resolved = api.show_config(platform, workload, cpufreq, cpuidle, duration, seed, kernel=kernel)
    identity: dict[str, Any] = {
        "govlab_version": __version__,
        "engine": __engine__,
        "platform": {"spec": specs.parts(platform), "resolved": resolved.get("platform")},
        "workload": {"spec": specs.parts(workload), "resolved": resolved.get("workload")},
        "cpufreq": {"spec": specs.parts(cpufreq), "resolved": resolved.get("cpufreq")},
        "cpuidle": {"spec": specs.parts(cpuidle), "resolved": resolved.get("cpuidle")},
        "duration_ns": resolved.get("duration_ns"),
        "seed": int(seed),
    }
    if kernel is not None:
        identity["kernel"] = {"spec": specs.parts(kernel), "resolved": resolved.get("kernel")}
    for what, spec in (("cpufreq", cpufreq), ("cpuidle", cpuidle)):
        if isinstance(spec, str) and governors.is_py_spec(spec):
            tunables = (resolved.get(what) or {}).get("tunables")
            identity[what] = {"spec": governors.identity(spec), "resolved": {"tunables": tunables}}
    for what in ("platform", "workload"):
        name = identity[what]["spec"]["name"]
        if specs.looks_like_file(name) and os.path.isfile(name):
            digest = "sha256:" + hashlib.sha256(Path(name).read_bytes()).hexdigest()
            identity[what] = _replace_string(identity[what], name, digest)
    return identity


def run_key(identity: Mapping[str, Any]) -> str:
    """The sha256 of an identity's canonical JSON: the key of a run in the store."""
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


def canonical_json(data: Any) -> str:
    """Sorted keys, no whitespace: equal data, equal text."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _replace_string(data: Any, old: str, new: str) -> Any:
    if isinstance(data, str):
        return new if data == old else data
    if isinstance(data, Mapping):
        return {k: _replace_string(v, old, new) for k, v in data.items()}
    if isinstance(data, list):
        return [_replace_string(v, old, new) for v in data]
    return data
