"""Experiments: the TOML files that ``govlab compare`` runs (pipeline stage: load).

This module reads and checks an experiment file into an :class:`Experiment`;
:mod:`govlab.plan` then expands it into run requests.

An experiment asks one question: how do some configurations compare on one
workload, over a range of one of its parameters? ::

    [experiment]
    name = "quick"                    # default: the file name without .toml
    description = "..."               # optional
    platform = "skylake-e3-1240v5"    # a spec: "NAME[:k=v,...]", a file path, or { name = ..., k = v }
    workload = "periodic:run_us=1500,period_us=7000"   # a spec, as platform
    duration = "2s"                   # simulated time of each run ("250ms", or seconds)
    repeats = 3                       # runs per configuration and parameter value
    seed = 1                          # the repeats use seeds seed, seed+1, ...
    # seeds = [1, 7, 42]              # or name them (then repeats may be left out)
    baseline = "ondemand"             # default: the first [[config]]
    cpufreq = "..."                   # optional defaults for the configs below
    cpuidle = "menu"

    [axis]                            # optional: the workload parameter it varies
    tasks = [1, 4]

    [[config]]
    name = "ondemand"
    cpufreq = "ondemand"              # a spec; or { name = "ondemand", up_threshold = 80 }
    # cpuidle = "menu"                # default: [experiment] cpuidle, else govlab's default
    # platform_options = { hwp = "off" }   # merged into the platform spec

    [[config]]
    name = "schedutil"
    cpufreq = "schedutil"

Paths of platform and workload files are relative to the experiment file,
and so are those of governors written in Python
(``cpufreq = "py:governors/mine.py:Mine:k=v"``, see ``govlab.governors``).

**Several benchmarks in one file.** An evaluation such as the 2018 HWP
boost post runs the same configurations over several workloads. Instead of
``experiment.workload`` and ``[axis]``, such a file lists ``[[benchmark]]``
tables; each becomes an experiment of its own named ``NAME/BENCHMARK``
(what ``compare`` prints and stores), sharing the configurations::

    [[benchmark]]
    name = "dbench"                   # required, unique in the file
    workload = "dbench"               # a spec, as experiment.workload
    axis = { clients = [1, 2, 4, 8, 64] }   # optional, one parameter
    duration = "4s"                   # optional, overrides experiment.duration
    repeats = 1                       # optional, overrides experiment.repeats (and [quick]'s)
    samples = "dbench4"               # optional: judge each run by its within-run samples
    warmup = "3s"                     # optional, with samples: simulated before the duration, not measured
    quick = [1, 8]                    # optional: the axis values of a --quick run
    quick_duration = "1s"             # optional: its duration in a --quick run (default: duration)
    max_events = 2_000_000_000        # optional: the ceiling on each run's estimated ops (as --max-events)
    power_warmup = { benchmark = "warm", length = "1800s", step = "300s" }  # optional: see below

``samples`` names a sampler of :mod:`govlab.samples`: each run then also keeps
the samples MMTests' Extract module would have read from it (the engine's
counters per interval), and a compare's significance uses them where a run
has no repeats (the timed benchmarks MMTests ran once per client count).
``warmup`` (with ``samples``) runs each run that much longer first and
measures only what follows: its samples, score and package power are those
of the ``duration`` after the warm-up (:func:`govlab.samples.window`).

``power_warmup`` says that the real benchmark's power window also held an
untimed warm-up, ``length`` of it against ``step`` of each of its steps, run as
the file's benchmark named ``benchmark`` (one without an axis): MMTests'
pgbench, whose ``DATABASE_INIT_ONCE`` warm-up runs the largest client count
with as many pgbench threads for 30 minutes inside the monitors that time the
300-s steps. A whole-benchmark power (:mod:`govlab.reproduction`) then counts
that benchmark's runs as ``length / step`` steps; its score is unchanged.
``quick = false`` leaves a benchmark out of a ``--quick`` run (and with it the
warm-up it stands for).

**Quick runs.** ``load_all(path, quick=True)`` gives a reduced version of
the same experiment: the ``quick`` axis values of each benchmark (default:
the first and the last value), and the duration and repeats of an optional
``[quick]`` table (``duration``, ``repeats``); a benchmark that sets its own
``duration`` keeps it, unless it also sets ``quick_duration``. Runs of a quick version are
different runs (shorter), stored under their own keys.

Every mistake raises :class:`ExperimentError` (a :class:`govlab.GovlabError`
and a ``ValueError``), whose message names the file, the line and the key::

    experiments/quick.toml:14: config[2].cpufreq: unknown cpufreq governor 'schedutl' ...

``config[N]`` counts the ``[[config]]`` tables from 1. Governor, tunable,
platform and workload names and values are checked by the engine when the
file is loaded (without simulating), so a typo fails before any run starts.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import stat
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from govlab import api, argcheck, governors, spec as specs
from govlab.exceptions import ExperimentError, GovlabError

__all__ = [
    "ExperimentError",
    "Experiment",
    "Config",
    "load",
    "load_all",
    "loads",
    "loads_all",
]

#: The largest experiment a file may define, checked when it is loaded (before
#: anything is allocated or simulated); docs/compare.md lists them.
MAX_REPEATS = 1000
#: Values of an axis.
MAX_AXIS_VALUES = 1000
#: [[config]] tables of an experiment.
MAX_CONFIGS = 100
#: [[benchmark]] tables of a file.
MAX_BENCHMARKS = 100
#: Runs of one experiment: configurations x axis values x repeats.
MAX_RUNS = 100_000
#: The largest seed (the engine's seeds are 64-bit; TOML integers are signed).
MAX_SEED = 2**63 - 1
#: The largest ceiling a benchmark's ``max_events`` may set (the engine's counts are 64-bit).
MAX_EVENTS = 2**63 - 1

_EXPERIMENT_KEYS = {
    "name", "description", "platform", "workload", "duration", "repeats", "seed", "seeds",
    "baseline", "cpufreq", "cpuidle", "kernel",
}
_CONFIG_KEYS = {"name", "description", "cpufreq", "cpuidle", "platform_options", "kernel"}
_TOP_KEYS = {"experiment", "axis", "config", "benchmark", "quick"}
_BENCHMARK_KEYS = {
    "name", "description", "workload", "axis", "duration", "quick_duration", "repeats", "samples", "warmup", "quick",
    "max_events", "power_warmup",
}
_QUICK_KEYS = {"duration", "repeats"}


@dataclass(frozen=True)
class Config:
    """One column of the comparison: a named pair of governors on the platform."""

    name: str
    cpufreq: str
    cpuidle: str
    platform: str
    description: str = ""
    platform_options: dict[str, Any] = field(default_factory=dict)
    #: ``VERSION[:k=v,...]`` (the config's, else the experiment's); None: the engine's default
    kernel: str | None = None


@dataclass
class Experiment:
    """A loaded experiment; :func:`govlab.plan.runs` lists its simulations in a fixed order."""

    name: str
    path: str
    platform: str
    workload: str
    duration: str
    seeds: list[int]
    baseline: str
    configs: list[Config]
    axis_name: str | None = None
    axis_values: list[Any] = field(default_factory=lambda: [None])
    description: str = ""
    #: the experiment-level ``kernel``; each config may override it
    kernel: str | None = None
    #: the sampler of each run's within-run samples (:mod:`govlab.samples`); None: none kept
    samples: str | None = None
    #: simulated before ``duration`` and not measured (with ``samples``); 0: none
    warmup_ns: int = 0
    #: the ceiling on each run's estimated ops (a benchmark's ``max_events``); None: the caller's.
    #: Not part of a run's identity: it decides only whether a run is refused
    max_events: int | None = None
    #: an untimed warm-up inside the benchmark's power window, in its steps' lengths (a benchmark's
    #: ``power_warmup``); 0: none. Not part of a run's identity: only the power is weighed
    power_warmup_steps: float = 0.0
    #: the experiment (``FILE/BENCHMARK``) whose runs are that warm-up; None: none
    power_warmup_of: str | None = None

    @property
    def repeats(self) -> int:
        return len(self.seeds)

    def config(self, name: str) -> Config:
        for c in self.configs:
            if c.name == name:
                return c
        raise KeyError(name)

    def workload_at(self, value: Any) -> str:
        """The workload spec at one value of the axis."""
        if self.axis_name is None:
            return self.workload
        return api.spec_text((self.workload, {self.axis_name: value}), "workload")

    def to_dict(self) -> dict[str, Any]:
        """The definition as stored in the results database (without the run list)."""
        return {
            "name": self.name,
            "path": self.path,
            "description": self.description,
            "platform": self.platform,
            "workload": self.workload,
            "duration": self.duration,
            "seeds": list(self.seeds),
            "baseline": self.baseline,
            "axis": None if self.axis_name is None else {"name": self.axis_name, "values": list(self.axis_values)},
            "configs": [
                {
                    "name": c.name,
                    "description": c.description,
                    "cpufreq": c.cpufreq,
                    "cpuidle": c.cpuidle,
                    "platform": c.platform,
                    "platform_options": dict(c.platform_options),
                    **({"kernel": c.kernel} if c.kernel is not None else {}),
                }
                for c in self.configs
            ],
            **({"kernel": self.kernel} if self.kernel is not None else {}),
            **({"samples": self.samples} if self.samples is not None else {}),
            **({"warmup_ns": self.warmup_ns} if self.warmup_ns else {}),
        }


# --- loading ---------------------------------------------------------------------


def load(path: str | os.PathLike[str]) -> Experiment:
    """Read and check the experiment file ``path`` (one benchmark: no ``[[benchmark]]``)."""
    path = argcheck.path("path", path) or ""
    return loads(_read(path), path)


def load_all(path: str | os.PathLike[str], quick: bool = False) -> list[Experiment]:
    """Read and check ``path``: one experiment per ``[[benchmark]]``, or the one it defines."""
    path = argcheck.path("path", path) or ""
    return loads_all(_read(path), path, quick)


#: The largest experiment file read, bytes (assumed: a thousand times the
#: largest of experiments/; MAX_CONFIGS and MAX_BENCHMARKS bound what it may hold).
MAX_FILE_BYTES = 16 << 20


def _read(path: str) -> str:
    """The text of ``path``: a regular file (a FIFO would block the open) of at most MAX_FILE_BYTES."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ExperimentError(path, None, None, "not a regular file (a directory, FIFO or device); an experiment is a TOML file")
    if st.st_size > MAX_FILE_BYTES:
        raise ExperimentError(path, None, None, f"{st.st_size} bytes, more than the {MAX_FILE_BYTES} an experiment file may have")
    with open(path, "rb") as f:
        raw = f.read(MAX_FILE_BYTES + 1)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ExperimentError(path, None, None, f"not UTF-8 text ({e})") from None


def loads(text: str, path: str = "<experiment>") -> Experiment:
    """Parse experiment TOML ``text``; ``path`` names it in errors and anchors relative paths."""
    doc, lines = _parse(text, path)
    if "benchmark" in doc:
        raise ExperimentError(
            path, lines.line_of(("benchmark",)), "benchmark",
            "this file defines several benchmarks; load it with load_all()",
        )
    return _Loader(doc, lines, path).experiment()


def loads_all(text: str, path: str = "<experiment>", quick: bool = False) -> list[Experiment]:
    """:func:`loads` for files with ``[[benchmark]]`` tables (or without: a list of one)."""
    doc, lines = _parse(text, path)
    return _Loader(doc, lines, path).experiments(quick)


def _parse(text: str, path: str) -> tuple[dict[str, Any], _KeyLines]:
    lines = _KeyLines(text)
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        raise ExperimentError(path, None, None, "invalid TOML: arrays or tables nested too deeply to read") from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        line = int(m.group(1)) if m else None
        key = lines.key_on(line) if line else None
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e)) or "invalid TOML"
        raise ExperimentError(path, line, key, f"invalid TOML: {message}") from None
    return doc, lines


class _Loader:
    """Checks a parsed document key by key; each error names the key and its line."""

    def __init__(self, doc: dict[str, Any], lines: _KeyLines, path: str) -> None:
        self.doc, self.lines, self.path = doc, lines, path
        self.base_dir = os.path.dirname(os.path.abspath(path)) if path != "<experiment>" else os.getcwd()
        self._checked: dict[str, None] = {}

    def fail(self, key: Sequence[Any], message: str) -> ExperimentError:
        name = self.lines.name_of(key) if isinstance(self.lines, _MovedKeys) else _key_text(key)
        return ExperimentError(self.path, self.lines.line_of(key), name, message)

    # -- the document ------------------------------------------------------------

    def experiments(self, quick: bool) -> list[Experiment]:
        """Every benchmark of the file as an experiment (the file's one without [[benchmark]])."""
        doc = self.doc
        self.top_keys()
        quick_table = self.table(("quick",), required=False)
        for k in quick_table:
            if k not in _QUICK_KEYS:
                raise self.fail(("quick", k), f"unknown key; expected {_choices(_QUICK_KEYS)}")
        if "duration" in quick_table:
            self.duration(("quick", "duration"), quick_table["duration"])
        if "repeats" in quick_table and (
            not _is_int(quick_table["repeats"]) or not 1 <= quick_table["repeats"] <= MAX_REPEATS
        ):
            raise self.fail(
                ("quick", "repeats"), f"expected an integer from 1 to {MAX_REPEATS}, got {_show(quick_table['repeats'])}"
            )
        if "benchmark" not in doc:
            return [self.experiment(quick_table if quick else None)]
        benches = doc["benchmark"]
        if not isinstance(benches, list) or not benches or not all(isinstance(b, dict) for b in benches):
            raise self.fail(("benchmark",), "expected [[benchmark]] tables")
        if len(benches) > MAX_BENCHMARKS:
            raise self.fail(("benchmark",), f"{len(benches)} [[benchmark]] tables; at most {MAX_BENCHMARKS} per file")
        exp = self.table(("experiment",), required=True)
        for k in ("workload",):
            if k in exp:
                raise self.fail(("experiment", k), "give the workload in each [[benchmark]], not in [experiment]")
        if "axis" in doc:
            raise self.fail(("axis",), "give the axis in each [[benchmark]] (axis = { name = [values] }), not in [axis]")
        name = exp.get("name", Path(self.path).stem if self.path != "<experiment>" else "experiment")
        out: list[Experiment] = []
        seen: set[str] = set()
        for i, bench in enumerate(benches):
            at = ("benchmark", i)
            for k in bench:
                if k not in _BENCHMARK_KEYS:
                    raise self.fail((*at, k), f"unknown key; expected {_choices(_BENCHMARK_KEYS)}")
            bname = self.string((*at, "name"), self.require(bench, at, "name"))
            if bname in seen:
                raise self.fail((*at, "name"), f"two benchmarks are named {bname!r}")
            seen.add(bname)
            axis = bench.get("axis", {})
            if not isinstance(axis, dict):
                raise self.fail((*at, "axis"), f"expected a table {{ parameter = [values] }}, got {_show(axis)}")
            # a --quick run takes the benchmark's quick_duration, where it gives one, for its duration
            length = "quick_duration" if quick and "quick_duration" in bench else "duration"
            if "quick_duration" in bench:
                self.duration_ns((*at, "quick_duration"), bench["quick_duration"])
            sub = {
                "experiment": {
                    **exp,
                    "name": f"{self.string(('experiment', 'name'), name)}/{bname}",
                    "workload": self.require(bench, at, "workload"),
                    **({"duration": bench[length]} if length in bench else {}),
                    **({"repeats": bench["repeats"]} if "repeats" in bench else {}),
                    **({"description": bench["description"]} if "description" in bench else {}),
                },
                "config": doc.get("config"),
            }
            if axis:
                sub["axis"] = axis
            moved = {
                ("experiment", "workload"): (*at, "workload"),
                ("experiment", "duration"): (*at, length) if length in bench else ("experiment", "duration"),
                ("experiment", "description"): (*at, "description") if "description" in bench else ("experiment", "description"),
                ("experiment", "repeats"): (*at, "repeats") if "repeats" in bench else ("experiment", "repeats"),
                ("axis",): (*at, "axis"),
            }
            if "repeats" in bench and "seeds" in exp:
                raise self.fail((*at, "repeats"), "the experiment names its seeds: give repeats with seed, not seeds")
            loader = _Loader(sub, _MovedKeys(self.lines, moved), self.path)
            loader._checked = self._checked
            if bench.get("quick") is False:
                if quick:
                    continue
            elif "quick" in bench:
                self.quick_values((*at, "quick"), bench["quick"], axis)
            quick_values = bench.get("quick") if quick and "quick" in bench else None
            # a benchmark's own repeats hold in the quick version too, as its duration does
            quick_here = quick_table if quick else None
            if quick_here is not None and "repeats" in bench:
                quick_here = {k: v for k, v in quick_here.items() if k != "repeats"}
            e = loader.experiment(quick_here, quick_values, keep_duration=length in bench)
            if "samples" in bench:
                e.samples = self.sampler((*at, "samples"), bench["samples"], e.workload)
            if "warmup" in bench:
                if e.samples is None:
                    raise self.fail((*at, "warmup"), "a warm-up is dropped from a run's samples: give it with samples")
                e.warmup_ns = self.duration_ns((*at, "warmup"), bench["warmup"])
            if "max_events" in bench:
                most = bench["max_events"]
                if not _is_int(most) or not 1 <= most <= MAX_EVENTS:
                    raise self.fail((*at, "max_events"), f"expected an integer from 1 to {MAX_EVENTS}, got {_show(most)}")
                e.max_events = int(most)
            if "power_warmup" in bench:
                warm, e.power_warmup_steps = self.power_warmup((*at, "power_warmup"), bench["power_warmup"], bname, benches)
                e.power_warmup_of = f"{self.string(('experiment', 'name'), name)}/{warm}"
            out.append(e)
        # a --quick run leaves out a warm-up benchmark with quick = false, and so the warm-up it stands for
        kept = {x.name for x in out}
        for x in out:
            if x.power_warmup_of is not None and x.power_warmup_of not in kept:
                x.power_warmup_of, x.power_warmup_steps = None, 0.0
        return out

    def power_warmup(self, key: tuple[Any, ...], value: Any, me: str, benches: list[Any]) -> tuple[str, float]:
        """A benchmark's ``power_warmup = { benchmark = NAME, length = TIME, step = TIME }``: the
        warm-up's benchmark and its length in steps."""
        if not isinstance(value, dict) or set(value) != {"benchmark", "length", "step"}:
            raise self.fail(key, f"expected a table {{ benchmark = NAME, length = TIME, step = TIME }}, got {_show(value)}")
        warm = value["benchmark"]
        others = [b.get("name") for b in benches if isinstance(b, dict) and b.get("name") != me]
        if warm not in others:
            raise self.fail((*key, "benchmark"), f"expected the name of another benchmark of this file ({_choices(others)}), got {_show(warm)}")
        if next(b for b in benches if isinstance(b, dict) and b.get("name") == warm).get("axis"):
            raise self.fail((*key, "benchmark"), f"the warm-up {warm!r} has an axis: give it one run per configuration, without one")
        length = self.duration_ns((*key, "length"), value["length"])
        step = self.duration_ns((*key, "step"), value["step"])
        return warm, length / step

    def sampler(self, key: tuple[Any, ...], name: Any, workload: str) -> str:
        from govlab import samples

        if not isinstance(name, str) or name not in samples.SAMPLERS:
            raise self.fail(key, f"expected one of {_choices(list(samples.SAMPLERS))}, got {_show(name)}")
        reads = samples.SAMPLERS[name].workloads
        if specs.parts(workload)["name"] not in reads:
            raise self.fail(key, f"the {name} sampler reads the {', '.join(reads)} workload, not {_show(workload)}")
        return name

    def quick_values(self, key: tuple[Any, ...], values: Any, axis: Mapping[str, Any]) -> None:
        if not axis:
            raise self.fail(key, "quick lists axis values (or is false), but this benchmark has no axis")
        full = next(iter(axis.values())) if len(axis) == 1 else []
        if not isinstance(values, list) or not values or any(v not in full for v in values):
            raise self.fail(key, f"expected false or a non-empty list of values from the axis {_show(full)}, got {_show(values)}")

    def top_keys(self) -> None:
        for k in self.doc:
            if k not in _TOP_KEYS:
                raise self.fail((k,), f"unknown key; expected {_choices(_TOP_KEYS)}")

    def experiment(
        self, quick: Mapping[str, Any] | None = None, quick_values: list[Any] | None = None, keep_duration: bool = False
    ) -> Experiment:
        """The experiment; with ``quick`` (the [quick] table), its reduced version
        (``keep_duration``: a benchmark's own duration holds in it too)."""
        doc = self.doc
        self.top_keys()
        if "benchmark" in doc:
            raise self.fail(("benchmark",), "this file defines several benchmarks; load it with load_all()")
        exp = self.table(("experiment",), required=True)
        for k in exp:
            if k not in _EXPERIMENT_KEYS:
                raise self.fail(("experiment", k), f"unknown key; expected {_choices(_EXPERIMENT_KEYS)}")

        default_name = Path(self.path).stem if self.path != "<experiment>" else "experiment"
        name = self.string(("experiment", "name"), exp.get("name", default_name))
        description = self.string(("experiment", "description"), exp.get("description", ""), empty=True)
        platform = self.spec(("experiment", "platform"), exp.get("platform", api.DEFAULT_PLATFORM), "platform")
        workload = self.spec(("experiment", "workload"), self.require(exp, "experiment", "workload"), "workload")
        duration = self.duration(("experiment", "duration"), exp["duration"] if "duration" in exp else _default_duration(workload))
        seeds = self.seeds(exp)
        if quick is not None:
            # a benchmark's own duration holds (it is what that benchmark needs to finish)
            if "duration" in quick and not keep_duration:
                duration = self.duration(("quick", "duration"), quick["duration"])
            if "repeats" in quick:
                repeats = quick["repeats"]
                seeds = seeds[:repeats] if repeats <= len(seeds) else [seeds[0] + i for i in range(repeats)]
        default_cpufreq = exp.get("cpufreq")
        default_cpuidle = exp.get("cpuidle", api.DEFAULT_CPUIDLE)
        if "cpufreq" in exp:
            default_cpufreq = self.spec(("experiment", "cpufreq"), default_cpufreq, "cpufreq")
        if "cpuidle" in exp:
            default_cpuidle = self.spec(("experiment", "cpuidle"), default_cpuidle, "cpuidle")

        self.check(("experiment", "platform"), platform=platform)
        kernel = None
        if "kernel" in exp:
            kernel = self.spec(("experiment", "kernel"), exp["kernel"], "kernel")
            self.check(("experiment", "kernel"), platform=platform, kernel=kernel)
        if default_cpufreq is None:  # no cpufreq anywhere: the platform's kernel's (docs/compare.md)
            default_cpufreq = api.defaults(platform, kernel)["cpufreq"]
        self.check(("experiment", "workload"), platform=platform, workload=workload)
        self.check(("experiment", "duration"), platform=platform, workload=workload, duration=duration)
        axis_name, axis_values = self.axis(platform, workload)
        if quick is not None and axis_name is not None:
            if quick_values is None:
                quick_values = axis_values if len(axis_values) <= 2 else [axis_values[0], axis_values[-1]]
            axis_values = [v for v in axis_values if v in quick_values]
        configs = self.configs(platform, workload, axis_name, axis_values, default_cpufreq, default_cpuidle, kernel)
        runs = len(configs) * len(axis_values) * len(seeds)
        if runs > MAX_RUNS:
            raise ExperimentError(
                self.path, None, "experiment",
                f"{len(configs)} configs x {len(axis_values)} axis values x {len(seeds)} repeats = {runs} runs; "
                f"at most {MAX_RUNS} per experiment",
            )

        names = [c.name for c in configs]
        if "baseline" in exp:
            baseline = self.string(("experiment", "baseline"), exp["baseline"])
            if baseline not in names:
                raise self.fail(("experiment", "baseline"), f"no [[config]] is named {baseline!r}; the configs are {_choices(names)}")
        else:
            baseline = names[0]
        return Experiment(
            name=name,
            path=self.path,
            description=description,
            platform=platform,
            workload=workload,
            duration=duration,
            seeds=seeds,
            baseline=baseline,
            configs=configs,
            axis_name=axis_name,
            axis_values=axis_values,
            kernel=kernel,
        )

    def seeds(self, exp: Mapping[str, Any]) -> list[int]:
        if "seeds" in exp:
            key = ("experiment", "seeds")
            seeds = exp["seeds"]
            if not isinstance(seeds, list) or not seeds or not all(_is_int(s) for s in seeds):
                raise self.fail(key, f"expected a non-empty list of integers, got {_show(seeds)}")
            if len(seeds) > MAX_REPEATS:
                raise self.fail(key, f"{len(seeds)} seeds; at most {MAX_REPEATS}")
            if any(not 0 <= s <= MAX_SEED for s in seeds):
                raise self.fail(key, f"seeds must be from 0 to {MAX_SEED}, got {_show(seeds)}")
            if len(set(seeds)) != len(seeds):
                raise self.fail(key, f"seeds repeat: {_show(seeds)}")
            if "seed" in exp:
                raise self.fail(("experiment", "seed"), "give either seed (with repeats) or seeds, not both")
            if "repeats" in exp and exp["repeats"] != len(seeds):
                raise self.fail(("experiment", "repeats"), f"is {_show(exp['repeats'])} but seeds lists {len(seeds)}")
            return [int(s) for s in seeds]
        repeats = exp.get("repeats", 1)
        if not _is_int(repeats) or not 1 <= repeats <= MAX_REPEATS:
            raise self.fail(("experiment", "repeats"), f"expected an integer from 1 to {MAX_REPEATS}, got {_show(repeats)}")
        seed = exp.get("seed", api.DEFAULT_SEED)
        if not _is_int(seed) or not 0 <= seed <= MAX_SEED - repeats + 1:
            raise self.fail(
                ("experiment", "seed"),
                f"expected an integer from 0 to {MAX_SEED - repeats + 1} (seed + repeats - 1 at most {MAX_SEED}), got {_show(seed)}",
            )
        return [seed + i for i in range(repeats)]

    def axis(self, platform: str, workload: str) -> tuple[str | None, list[Any]]:
        axis = self.table(("axis",), required=False)
        if not axis:
            return None, [None]
        if len(axis) > 1:
            second = list(axis)[1]
            raise self.fail(("axis", second), f"an experiment varies one parameter; [axis] has {_choices(list(axis))}")
        (name, values), = axis.items()
        key = ("axis", name)
        if not isinstance(values, list) or not values:
            raise self.fail(key, f"expected a non-empty list of values, got {_show(values)}")
        if len(values) > MAX_AXIS_VALUES:
            raise self.fail(key, f"{len(values)} values; at most {MAX_AXIS_VALUES}")
        for v in values:
            if isinstance(v, (dict, list)) or (isinstance(v, float) and not math.isfinite(v)):
                raise self.fail(key, f"values must be numbers, strings or booleans, got {_show(v)}")
        if name in specs.parts(workload)["params"]:
            raise self.fail(key, f"{name} is also set in experiment.workload ({workload}); set it in one place")
        if len({json.dumps(v) for v in values}) != len(values):
            raise self.fail(key, f"values repeat: {_show(values)}")
        for v in values:
            self.check(key, platform=platform, workload=api.spec_text((workload, {name: v}), "workload"))
        return name, values

    def configs(self, platform, workload, axis_name, axis_values, default_cpufreq, default_cpuidle, default_kernel=None) -> list[Config]:
        raw = self.doc.get("config")
        if raw is None:
            raise ExperimentError(self.path, None, "config", "no [[config]] tables: an experiment compares at least one configuration")
        if not isinstance(raw, list) or not all(isinstance(c, dict) for c in raw):
            raise self.fail(("config",), "expected [[config]] tables")
        if len(raw) > MAX_CONFIGS:
            raise self.fail(("config",), f"{len(raw)} [[config]] tables; at most {MAX_CONFIGS}")
        workload0 = workload if axis_name is None else api.spec_text((workload, {axis_name: axis_values[0]}), "workload")
        configs: list[Config] = []
        for i, table in enumerate(raw):
            at = ("config", i)
            for k in table:
                if k not in _CONFIG_KEYS:
                    raise self.fail((*at, k), f"unknown key; expected {_choices(_CONFIG_KEYS)}")
            name = self.string((*at, "name"), self.require(table, at, "name"))
            if any(c.name == name for c in configs):
                raise self.fail((*at, "name"), f"two configs are named {name!r}")
            description = self.string((*at, "description"), table.get("description", ""), empty=True)
            options = table.get("platform_options", {})
            if not isinstance(options, dict) or any(isinstance(v, (dict, list)) for v in options.values()):
                raise self.fail((*at, "platform_options"), f"expected a table of settings, got {_show(options)}")
            config_platform = api.spec_text((platform, options), "platform") if options else platform
            cpufreq_key = (*at, "cpufreq") if "cpufreq" in table else ("experiment", "cpufreq")
            cpuidle_key = (*at, "cpuidle") if "cpuidle" in table else ("experiment", "cpuidle")
            cpufreq = self.spec(cpufreq_key, table.get("cpufreq", default_cpufreq), "cpufreq")
            cpuidle = self.spec(cpuidle_key, table.get("cpuidle", default_cpuidle), "cpuidle")
            kernel = default_kernel
            if "kernel" in table:  # a config's kernel overrides the experiment's
                kernel = self.spec((*at, "kernel"), table["kernel"], "kernel")
                self.check((*at, "kernel"), platform=config_platform, kernel=kernel)
            if options:
                self.check((*at, "platform_options"), platform=config_platform)
                self.check((*at, "platform_options"), platform=config_platform, workload=workload0)
            self.check(cpufreq_key, platform=config_platform, workload=workload0, cpufreq=cpufreq)
            self.check(cpuidle_key, platform=config_platform, workload=workload0, cpuidle=cpuidle)
            configs.append(Config(name, cpufreq, cpuidle, config_platform, description, dict(options), kernel))
        if not configs:
            raise self.fail(("config",), "no [[config]] tables")
        return configs

    # -- values ------------------------------------------------------------------

    def table(self, key: tuple[str, ...], required: bool) -> dict[str, Any]:
        value = self.doc.get(key[0])
        if value is None:
            if required:
                raise ExperimentError(self.path, None, key[0], f"missing [{key[0]}] table")
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a [{key[0]}] table, got {_show(value)}")
        return value

    def require(self, table: Mapping[str, Any], at: Any, key: str) -> Any:
        at = (at,) if isinstance(at, str) else tuple(at)
        if key not in table:
            raise self.fail((*at, key), "missing (required)")
        return table[key]

    def string(self, key: Sequence[Any], value: Any, empty: bool = False) -> str:
        if not isinstance(value, str) or (not empty and not value.strip()):
            raise self.fail(key, f"expected a {'' if empty else 'non-empty '}string, got {_show(value)}")
        return value.strip()

    def spec(self, key: Sequence[Any], value: Any, what: str) -> str:
        """A spec string from a string or an inline table with a name; file paths made absolute."""
        if isinstance(value, dict):
            if "name" not in value:
                raise self.fail(key, f"a table {what} needs a name key, got {_show(value)}")
            if any(isinstance(v, (dict, list)) for v in value.values()):
                raise self.fail(key, f"settings must be numbers, strings or booleans, got {_show(value)}")
        elif not isinstance(value, str):
            raise self.fail(key, f"expected a {what} spec ('NAME[:k=v,...]' or {{ name = ..., k = v }}), got {_show(value)}")
        try:
            text = api.spec_text(value, what)
        except (TypeError, ValueError) as e:
            raise self.fail(key, str(e)) from None
        if what in ("platform", "workload"):
            name, colon, rest = specs.split(text)
            if specs.looks_like_file(name) and not os.path.isabs(name):
                candidate = os.path.normpath(os.path.join(self.base_dir, name))
                if os.path.exists(candidate):
                    text = candidate + colon + rest
        elif governors.is_py_spec(text):
            try:
                text = governors.absolute_spec(text, self.base_dir)
            except (GovlabError, ValueError) as e:
                raise self.fail(key, str(e)) from None
        return text

    def duration(self, key: Sequence[Any], value: Any) -> str:
        try:
            text = api.duration_text(value)
        except (TypeError, ValueError) as e:
            raise self.fail(key, str(e)) from None
        return text

    def duration_ns(self, key: Sequence[Any], value: Any) -> int:
        """A duration the engine takes (positive, within its range), in ns; blame ``key``."""
        text = self.duration(key, value)
        try:
            return int(api.show_config(duration=text)["duration_ns"])
        except (GovlabError, ValueError) as err:
            raise self.fail(key, str(err)) from None

    def check(self, key: Sequence[Any], **spec: Any) -> None:
        """Ask the engine to resolve a run built from ``spec`` (defaults elsewhere); blame ``key``."""
        kwargs = {
            "platform": api.DEFAULT_PLATFORM,
            "workload": api.DEFAULT_WORKLOAD,
            "cpufreq": "performance",
            "cpuidle": api.DEFAULT_CPUIDLE,
            "duration": "1s",
            "seed": 1,
            **spec,
        }
        memo = json.dumps(kwargs, sort_keys=True)
        if memo in self._checked:
            return
        try:
            api.show_config(**kwargs)
        except (GovlabError, OSError, ValueError, TypeError) as e:
            raise self.fail(key, str(e) or type(e).__name__) from None
        self._checked[memo] = None


# --- where keys are ------------------------------------------------------------------


class _MovedKeys:
    """A benchmark's keys, looked up where they stand in the file.

    A ``[[benchmark]]`` is checked as a one-benchmark experiment whose
    ``experiment.workload`` and ``[axis]`` are really ``benchmark[N].workload``
    and ``benchmark[N].axis``; errors must name the latter, with their lines.
    """

    def __init__(self, lines: _KeyLines, moved: Mapping[tuple[Any, ...], tuple[Any, ...]]) -> None:
        self.lines, self.moved = lines, moved

    def _map(self, key: Sequence[Any]) -> tuple[Any, ...]:
        key = tuple(key)
        for old, new in self.moved.items():
            if key[: len(old)] == old:
                return (*new, *key[len(old):])
        return key

    def line_of(self, key: Sequence[Any]) -> int | None:
        return self.lines.line_of(self._map(key))

    def key_on(self, line: int) -> str | None:
        return self.lines.key_on(line)

    def name_of(self, key: Sequence[Any]) -> str:
        return _key_text(self._map(key))


class _KeyLines:
    """The line of each key of a TOML text, found by scanning it.

    Tables and arrays of tables are tracked so that ``("config", 1, "cpufreq")``
    (the second ``[[config]]``) finds the right line. The scan is deliberately
    simple (it does not parse values), which is enough for error messages: a
    key that cannot be found falls back to its table's header line.
    """

    _ARRAY = re.compile(r"^\s*\[\[\s*([^\]]+?)\s*\]\]")
    _TABLE = re.compile(r"^\s*\[\s*([^\]\[]+?)\s*\]")
    _KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")

    def __init__(self, text: str) -> None:
        self.where: dict[tuple[Any, ...], int] = {}
        self.keys_by_line: dict[int, tuple[Any, ...]] = {}
        counts: dict[tuple[str, ...], int] = {}
        current: tuple[Any, ...] = ()
        for number, line in enumerate(text.splitlines(), start=1):
            if m := self._ARRAY.match(line):
                names = tuple(_split_key(m.group(1)))
                counts[names] = counts.get(names, -1) + 1
                current = (*self._resolve(names[:-1], counts), names[-1], counts[names])
            elif m := self._TABLE.match(line):
                names = tuple(_split_key(m.group(1)))
                current = self._resolve(names, counts)
            elif m := self._KEY.match(line):
                path = (*current, *_split_key(m.group(1)))
                self.where.setdefault(path, number)
                self.keys_by_line[number] = path
                continue
            else:
                continue
            self.where.setdefault(current, number)
            self.keys_by_line[number] = current

    @staticmethod
    def _resolve(names: tuple[str, ...], counts: Mapping[tuple[str, ...], int]) -> tuple[Any, ...]:
        """``config.cpufreq`` under the latest ``[[config]]`` is ``("config", i, "cpufreq")``."""
        out: list[Any] = []
        for i, name in enumerate(names):
            out.append(name)
            if names[: i + 1] in counts:
                out.append(counts[names[: i + 1]])
        return tuple(out)

    def line_of(self, key: Sequence[Any]) -> int | None:
        key = tuple(key)
        while key:
            if key in self.where:
                return self.where[key]
            key = key[:-1]
        return None

    def key_on(self, line: int) -> str | None:
        path = self.keys_by_line.get(line)
        return _key_text(path) if path else None


def _split_key(text: str) -> list[str]:
    parts = re.findall(r"""\s*("[^"]*"|'[^']*'|[^.]+)\s*(?:\.|$)""", text)
    return [p.strip().strip("\"'") for p in parts if p.strip()]


def _key_text(key: Sequence[Any]) -> str:
    """``("config", 1, "cpufreq")`` as ``config[2].cpufreq`` (tables counted from 1)."""
    out = ""
    for part in key:
        if isinstance(part, int):
            out += f"[{part + 1}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _show(value: Any) -> str:
    return json.dumps(value, default=str) if not isinstance(value, str) else repr(value)


def _choices(names: Any) -> str:
    return ", ".join(sorted(map(str, names))) if isinstance(names, set) else ", ".join(map(str, names))


def _default_duration(workload: str) -> str:
    """The engine's default duration for ``workload``; for a workload it cannot build, 10 s (the check that follows says what is wrong)."""
    try:
        return api.default_duration(workload)
    except GovlabError:
        return "10s"
