"""`make bench`: govlab's speed on a fixed scenario, and as a ratio to SimPy.

Runs bench/mix.toml on the 80-CPU Broadwell platform under `performance` and
`ladder` with govlab, then the same scenario written with SimPy
(bench/simpy_mix.py), in this one process, one after the other. Then times
reading a trace of about two million events (see trace_bench()). Each engine
is first run once briefly to size its simulated duration (govlab: at least
2 s of wall time; SimPy: at least 1 s), then three times at that duration;
the best of the three counts. Then the cost of governors written in Python:
the same scenario at govlab's duration with the Python ladder of
examples/governors (against the Rust ladder run above), and with schedutil
in Python and in Rust (the hook is called far more often than ladder).
Prints tables, the ratios and the verdicts against the targets; with
--write, also rewrites bench/RESULTS.md.
See bench/README.md for how to read the figures.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import govlab  # noqa: E402
import simpy  # noqa: E402

import simpy_mix  # noqa: E402

PLATFORM = "broadwell-2s-e5-2698v4"
WORKLOAD = os.path.join(HERE, "mix.toml")
CPUFREQ = "performance"
CPUIDLE = "ladder"
SEED = 1

GOVLAB_PROBE_S = 2.0  # simulated seconds of the sizing run
GOVLAB_MIN_WALL_S = 2.0
SIMPY_PROBE_S = 0.05
SIMPY_MIN_WALL_S = 1.0
REPEATS = 3
MARGIN = 1.25  # aim this much above the minimum wall time

TARGET_EVENTS_PER_S = 5e6
TARGET_RATIO = 20.0

COMMAND = "make bench"

EXAMPLES = os.path.join(os.path.dirname(HERE), "examples", "governors")
#: (what, built-in (cpufreq, cpuidle), the same in Python (cpufreq, cpuidle))
PY_PAIRS = [
    ("ladder", (CPUFREQ, CPUIDLE), (CPUFREQ, f"py:{EXAMPLES}/ladder.py:Ladder")),
    ("schedutil", ("schedutil", CPUIDLE), (f"py:{EXAMPLES}/schedutil.py:Schedutil", CPUIDLE)),
]
#: The issue's target: a Python governor within 10x of the same governor in Rust.
TARGET_PY_SLOWDOWN = 10.0

TRACE_EVENTS = 2_000_000
TARGET_TRACE_READ_S = 5.0
#: The notebook issue's target: that trace.dat into a DataFrame of its sched_switch events
#: (pandas, and polars) in under this many seconds on one core, reading included.
TARGET_DF_EVENT_S = 2.0



#: The housekeeping issue's target: with the kernel's housekeeping on (the default), at least this
#: share of the events/s with it off, on the same scenario.
TARGET_HOUSEKEEPING_SHARE = 0.85
HOUSEKEEPING_OFF = "6.8:housekeeping=off"
#: The kernel versions timed beside the default (6.8): the 6.12 LTS, with EEVDF's delayed dequeue
#: and custom slices (docs/kernels.md). `--kernel` replaces the list.
KERNELS_BESIDE = ["6.12"]


def run_govlab(sim_s: float, cpufreq: str = CPUFREQ, cpuidle: str = CPUIDLE, kernel: str | None = None) -> dict:
    t0 = time.perf_counter()
    c0 = time.process_time()
    r = govlab.run(
        platform=PLATFORM,
        workload=WORKLOAD,
        cpufreq=cpufreq,
        cpuidle=cpuidle,
        duration=sim_s,
        seed=SEED,
        **({"kernel": kernel} if kernel else {}),
    )
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    cpus = r.to_dict()["cpus"]
    busy = sum(c["busy_s"] for c in cpus)
    return {
        "events": r.events,
        "sim_s": r.sim_time_s,
        "wall_s": wall,
        "cpu_s": cpu,
        "busy_pct": 100.0 * busy / (len(cpus) * r.sim_time_s),
        "work_gcps": r.primary_metric["value"],
    }


def run_simpy(sim_s: float) -> dict:
    c0 = time.process_time()
    r = simpy_mix.run(sim_s, SEED)
    r["cpu_s"] = time.process_time() - c0
    return r


def trace_bench() -> dict:
    """Time reading a trace of about TRACE_EVENTS events: the Rust example
    trace_read_bench runs bench/mix.toml with --trace (schedutil, menu),
    converts the text to trace.dat and times reading each, best of three on
    one thread; then `govlab trace stats` on the trace.dat is timed end to
    end as a user runs it."""
    repo = os.path.dirname(HERE)
    with tempfile.TemporaryDirectory(prefix="govlab-trace-bench-") as tmp:
        cmd = ["cargo", "run", "--release", "-q", "-p", "govlab-core", "--example", "trace_read_bench", "--",
               WORKLOAD, str(TRACE_EVENTS), tmp]
        r = json.loads(subprocess.run(cmd, cwd=repo, check=True, capture_output=True, text=True).stdout)
        govlab_cli = os.path.join(os.path.dirname(sys.executable), "govlab")
        t0 = time.perf_counter()
        subprocess.run([govlab_cli, "trace", "stats", r["dat_path"], "--platform", PLATFORM, "--format", "json"],
                       check=True, capture_output=True)
        r["cli_s"] = time.perf_counter() - t0
        df = subprocess.run([sys.executable, os.path.join(HERE, "df_event.py"), r["dat_path"]],
                            check=True, capture_output=True, text=True)
        r["df_event"] = json.loads(df.stdout)
    r["command"] = " ".join(cmd[:-1] + ["DIR"]).replace(WORKLOAD, os.path.relpath(WORKLOAD, repo))
    return r


def trace_lines(t: dict) -> list[str]:
    ok = "PASS" if t["dat_read_s"] < TARGET_TRACE_READ_S else "FAIL"
    return [
        f"trace: {t['events']:,} events on {t['cpus']} CPUs ({t['simulated_s']:.2f} simulated s of bench/mix.toml "
        f"on {PLATFORM}, schedutil + menu)",
        f"trace.dat ({t['dat_bytes'] / 1e6:.0f} MB): read in {t['dat_read_s']:.3f} s "
        f"({t['events'] / t['dat_read_s'] / 1e6:.2f} M events/s)",
        f"trace-cmd report text ({t['text_bytes'] / 1e6:.0f} MB): read in {t['text_read_s']:.3f} s "
        f"({t['events'] / t['text_read_s'] / 1e6:.2f} M events/s)",
        f"trace stats on the decoded events: {t['stats_s']:.3f} s; "
        f"`govlab trace stats FILE.dat --format json` end to end: {t['cli_s']:.3f} s",
        f"a trace.dat of about 2 M events read in under {TARGET_TRACE_READ_S:g} s on one core: {ok}",
    ] + df_event_lines(t["df_event"])


def df_event_lines(d: dict) -> list[str]:
    """`bench/df_event.py`'s figures: the trace.dat into a sched_switch DataFrame, one core."""
    lines = [
        f"`govlab.Trace(trace.dat).df_event(\"sched_switch\")` ({d['rows']:,} rows of {d['events']:,} events, "
        f"one core, best of 3): read {d['read_s']:.3f} s + pandas {d['pandas_s']:.3f} s = {d['pandas_total_s']:.3f} s; "
        f"read + polars {d['polars_s']:.3f} s = {d['polars_total_s']:.3f} s",
    ]
    for name in ("pandas", "polars"):
        ok = "PASS" if d[f"{name}_total_s"] < TARGET_DF_EVENT_S else "FAIL"
        lines.append(f"that trace.dat into a {name} DataFrame of sched_switch in under {TARGET_DF_EVENT_S:g} s on one core: {ok}")
    return lines


def sized_duration(probe: dict, min_wall_s: float, step: float) -> float:
    """A simulated duration, a multiple of `step`, expected to take
    MARGIN x min_wall_s of wall time at the probe's speed."""
    per_wall = probe["sim_s"] / probe["wall_s"]
    want = MARGIN * min_wall_s * per_wall
    return max(step, math.ceil(want / step) * step)


def best_of(fn, sim_s: float, min_wall_s: float, label: str) -> dict:
    """REPEATS runs at sim_s; the fastest one, with all wall times attached.
    If the runs turn out shorter than min_wall_s, the duration is doubled
    and the measurement redone."""
    while True:
        runs = []
        for i in range(REPEATS):
            r = fn(sim_s)
            print(f"  {label} run {i + 1}/{REPEATS}: {r['sim_s']:g} simulated s in {r['wall_s']:.3f} s",
                  file=sys.stderr, flush=True)
            runs.append(r)
        best = min(runs, key=lambda r: r["wall_s"])
        if best["wall_s"] >= min_wall_s:
            best["walls"] = [r["wall_s"] for r in runs]
            return best
        sim_s *= 2


def machine() -> dict:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    cpu = f"{name} ({cpu})" if cpu and cpu not in name else name
                    break
    except OSError:
        pass
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count()
    try:
        rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rustc = ""
    commit = ""
    try:
        repo = os.path.dirname(HERE)
        git = lambda *a: subprocess.run(["git", "-C", repo, *a], capture_output=True, text=True, timeout=10)  # noqa: E731
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode == 0:
            commit = f"commit {head.stdout.strip()}"
            if git("status", "--porcelain", "--", "crates", "python").stdout.strip():
                commit += ", with uncommitted changes in crates/ or python/"
    except (OSError, subprocess.SubprocessError):
        pass
    return {
        "commit": commit,
        "cpu": cpu or platform.machine(),
        "nproc": nproc,
        "os": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
        "rustc": rustc or "(rustc not found)",
        "govlab": govlab.__version__ if hasattr(govlab, "__version__") else "",
        "simpy": simpy.__version__,
    }


def fmt_int(n: float) -> str:
    return f"{n:,.0f}"


def table_rows(g: dict, s: dict) -> list[list[str]]:
    rows = []
    for name, r in (("govlab", g), ("SimPy", s)):
        rows.append([
            name,
            f"{r['sim_s']:g}",
            fmt_int(r["events"]),
            f"{r['wall_s']:.3f}",
            fmt_int(r["events"] / r["wall_s"]),
            f"{r['sim_s'] / r['wall_s']:.3f}",
        ])
    return rows


HEADER = ["engine", "simulated s", "events", "wall s", "events/s", "sim s / wall s"]


def text_table(rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADER)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))  # noqa: E731
    return "\n".join([line(HEADER), line(["-" * w for w in widths])] + [line(r) for r in rows])


def md_table(rows: list[list[str]]) -> str:
    return md_table_with(HEADER, rows)


def md_table_with(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def summarize(g: dict, s: dict) -> dict:
    g_eps = g["events"] / g["wall_s"]
    s_eps = s["events"] / s["wall_s"]
    g_speed = g["sim_s"] / g["wall_s"]
    s_speed = s["sim_s"] / s["wall_s"]
    return {
        "g_eps": g_eps,
        "s_eps": s_eps,
        "eps_ratio": g_eps / s_eps,
        "speed_ratio": g_speed / s_speed,
        "pass_eps": g_eps >= TARGET_EVENTS_PER_S,
        # The same simulated workload for the same simulated time: the
        # like-for-like speed (README.md, "Reading the figures").
        "pass_ratio": g_speed / s_speed >= TARGET_RATIO,
    }


def verdict_lines(g: dict, s: dict, v: dict) -> list[str]:
    ok = lambda b: "PASS" if b else "FAIL"  # noqa: E731
    return [
        f"govlab >= {TARGET_EVENTS_PER_S / 1e6:g} M events/s on one core: "
        f"{ok(v['pass_eps'])} ({v['g_eps'] / 1e6:.2f} M events/s; "
        f"process CPU time / wall time = {g['cpu_s'] / g['wall_s']:.2f})",
        f"govlab >= {TARGET_RATIO:g}x SimPy in simulated seconds per wall second (the same scenario): "
        f"{ok(v['pass_ratio'])} ({v['speed_ratio']:.1f}x; in events/s {v['eps_ratio']:.1f}x, "
        "an unlike unit: a SimPy event does far less, see README.md)",
    ]


def context_lines(g: dict, s: dict) -> list[str]:
    return [
        f"govlab: {g['events'] / g['sim_s']:,.0f} events per simulated s, CPUs {g['busy_pct']:.1f}% busy, "
        f"work rate {g['work_gcps']:.1f} Gcycles/s",
        f"SimPy:  {s['events'] / s['sim_s']:,.0f} events per simulated s, CPUs {s['busy_pct']:.1f}% busy, "
        f"work rate {s['work_gcps']:.1f} Gcycles/s",
        "wall times of the three runs: govlab "
        + ", ".join(f"{w:.3f}" for w in g["walls"])
        + " s; SimPy "
        + ", ".join(f"{w:.3f}" for w in s["walls"])
        + " s",
    ]


def measure_python_governors(g: dict, sim_s: float) -> list[dict]:
    """Each pair of PY_PAIRS, best of REPEATS at sim_s; the Rust ladder is g."""
    out = []
    for what, builtin, python in PY_PAIRS:
        if builtin == (CPUFREQ, CPUIDLE):
            rust = g
        else:
            rust = best_of(lambda d, b=builtin: run_govlab(d, *b), sim_s, 0.0, f"{what} in Rust")
        py = best_of(lambda d, p=python: run_govlab(d, *p), rust["sim_s"], 0.0, f"{what} in Python")
        out.append({"what": what, "builtin": builtin, "python": python, "rust": rust, "py": py,
                    "slowdown": (rust["events"] / rust["wall_s"]) / (py["events"] / py["wall_s"])})
    return out


PY_HEADER = ["governor", "cpufreq + cpuidle", "simulated s", "events", "wall s", "events/s"]


def short(spec: str) -> str:
    """A spec with the directory of its file left out: py:ladder.py:Ladder."""
    return re.sub(r"^py:.*/", "py:", spec)


def py_rows(pairs: list[dict]) -> list[list[str]]:
    rows = []
    for p in pairs:
        for lang, r in (("Rust", p["rust"]), ("Python", p["py"])):
            govs = " + ".join(short(x) for x in (p["builtin"] if lang == "Rust" else p["python"]))
            rows.append([f"{p['what']} in {lang}", govs, f"{r['sim_s']:g}", fmt_int(r["events"]),
                         f"{r['wall_s']:.3f}", fmt_int(r["events"] / r["wall_s"])])
    return rows


def py_verdict_lines(pairs: list[dict]) -> list[str]:
    out = []
    for p in pairs:
        ok = "PASS" if p["slowdown"] <= TARGET_PY_SLOWDOWN else "FAIL"
        same = "the same run" if p["py"]["events"] == p["rust"]["events"] else "DIFFERENT runs (events differ)"
        cpu = (p["py"]["cpu_s"] / p["py"]["events"]) / (p["rust"]["cpu_s"] / p["rust"]["events"])
        out.append(f"{p['what']} in Python within {TARGET_PY_SLOWDOWN:g}x of Rust in events/s: {ok} "
                   f"(Rust / Python = {p['slowdown']:.2f}x in wall time, {cpu:.2f}x in process CPU time; {same})")
    return out


def housekeeping_lines(on: dict, off: dict) -> list[str]:
    """The scenario with the kernel's housekeeping on (the default, `on`) and off, in events/s."""
    eps_on, eps_off = on["events"] / on["wall_s"], off["events"] / off["wall_s"]
    share = eps_on / eps_off
    return [
        f"Housekeeping (kernel option `housekeeping`, machine/housekeeping.rs): on (the default) "
        f"{eps_on / 1e6:.2f} M events/s ({fmt_int(on['events'])} events), off ({HOUSEKEEPING_OFF}) "
        f"{eps_off / 1e6:.2f} M events/s ({fmt_int(off['events'])} events), best of {REPEATS} each: on is "
        f"{100 * share:.0f} % of off; target at least {100 * TARGET_HOUSEKEEPING_SHARE:.0f} %: "
        f"{'PASS' if share >= TARGET_HOUSEKEEPING_SHARE else 'FAIL'}",
    ]


def kernel_lines(default: dict, beside: dict[str, dict]) -> list[str]:
    """The scenario on the default kernel (6.8) and on each of `beside`, in events/s."""
    eps = default["events"] / default["wall_s"]
    out = [f"6.8 (the default): {eps / 1e6:.2f} M events/s ({fmt_int(default['events'])} events)"]
    for k, r in beside.items():
        e = r["events"] / r["wall_s"]
        out.append(f"{k}: {e / 1e6:.2f} M events/s ({fmt_int(r['events'])} events), {100 * e / eps:.0f} % of 6.8's")
    return out


def write_results(path: str, m: dict, g: dict, s: dict, v: dict, pairs: list[dict], t: dict, hk: list[str],
                  kv: list[str] = ()) -> None:
    now = datetime.datetime.now().astimezone()
    lines = [
        "# Speed benchmark: results",
        "",
        "Written by `bench/run.py --write`, which `make bench` runs; do not edit by hand.",
        "What is measured and how to read it: [README.md](README.md).",
        "",
        f"- Command: `{COMMAND}`",
        f"- Date: {now:%Y-%m-%d %H:%M %Z}",
        f"- Machine: {m['cpu']}, {m['nproc']} CPUs available (nproc), {m['os']}",
        f"- Software: Python {m['python']}, {m['rustc']}, govlab {m['govlab']}"
        + (f" ({m['commit']})" if m["commit"] else "")
        + f", SimPy {m['simpy']}",
        f"- Scenario: `bench/mix.toml` on `{PLATFORM}`, cpufreq `{CPUFREQ}`, cpuidle `{CPUIDLE}`, seed {SEED}; "
        "the same scenario in SimPy: `bench/simpy_mix.py`",
        f"- Each engine: best of {REPEATS} runs (govlab sized to at least {GOVLAB_MIN_WALL_S:g} s of wall time, "
        f"SimPy to at least {SIMPY_MIN_WALL_S:g} s)",
        "",
        md_table(table_rows(g, s)),
        "",
        "Ratios, govlab / SimPy, measured in the same run:",
        "",
        f"- events per wall second: **{v['eps_ratio']:.1f}x**",
        f"- simulated seconds per wall second: **{v['speed_ratio']:.1f}x**",
        "",
        "Verdicts against the targets (the issue's: at least 5 M events/s on one core, at least 20x SimPy):",
        "",
    ]
    lines += [f"- {l}" for l in verdict_lines(g, s, v)]
    lines += ["", "Context (not speed; see README.md):", ""]
    lines += [f"- {l}" for l in context_lines(g, s)]
    lines += [
        "",
        "## Governors written in Python",
        "",
        "The same scenario at govlab's duration, with the governor under test written in Python "
        "(`examples/governors/`, called through `govlab.governors`) and in Rust; best of "
        f"{REPEATS} runs each. The Python versions give the Rust versions' runs exactly (same events).",
        "",
        md_table_with(PY_HEADER, py_rows(pairs)),
        "",
        "Verdicts against the target (the issue's: within 10x of the same governor in Rust):",
        "",
    ]
    lines += [f"- {l}" for l in py_verdict_lines(pairs)]
    lines += [
        "",
        "## Reading traces",
        "",
        f"- Command: `{COMMAND}`, which runs `{t['command']}` (best of 3 per reader, one thread), "
        "then times the CLI once",
        "",
    ]
    lines += [f"- {l}" for l in trace_lines(t)]
    lines += ["", "## Housekeeping on and off", ""]
    lines += [f"- {l}" for l in hk]
    if kv:
        lines += ["", "## Kernel versions", "",
                  f"The same scenario at govlab's duration with `--kernel`, best of {REPEATS} each:", ""]
        lines += [f"- {l}" for l in kv]
    lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite bench/RESULTS.md with the figures")
    ap.add_argument("--kernel", action="append", metavar="VERSION",
                    help=f"a kernel version to time beside 6.8 (repeatable; default {', '.join(KERNELS_BESIDE)})")
    args = ap.parse_args()

    print(f"govlab: sizing with {GOVLAB_PROBE_S:g} simulated s", file=sys.stderr, flush=True)
    probe = run_govlab(GOVLAB_PROBE_S)
    g_dur = sized_duration(probe, GOVLAB_MIN_WALL_S, 1.0)
    print(f"govlab: {g_dur:g} simulated s per run", file=sys.stderr, flush=True)
    g = best_of(run_govlab, g_dur, GOVLAB_MIN_WALL_S, "govlab")

    print(f"SimPy: sizing with {SIMPY_PROBE_S:g} simulated s", file=sys.stderr, flush=True)
    probe = run_simpy(SIMPY_PROBE_S)
    s_dur = sized_duration(probe, SIMPY_MIN_WALL_S, 0.05)
    print(f"SimPy: {s_dur:g} simulated s per run", file=sys.stderr, flush=True)
    s = best_of(run_simpy, s_dur, SIMPY_MIN_WALL_S, "SimPy")

    print(f"govlab with {HOUSEKEEPING_OFF}", file=sys.stderr, flush=True)
    hk_off = best_of(lambda d: run_govlab(d, kernel=HOUSEKEEPING_OFF), g_dur, GOVLAB_MIN_WALL_S, "govlab, housekeeping off")
    hk = housekeeping_lines(g, hk_off)
    beside = {}
    for k in args.kernel or KERNELS_BESIDE:
        print(f"govlab with --kernel {k}", file=sys.stderr, flush=True)
        beside[k] = best_of(lambda d, k=k: run_govlab(d, kernel=k), g_dur, GOVLAB_MIN_WALL_S, f"govlab, kernel {k}")
    kv = kernel_lines(g, beside)

    pairs = measure_python_governors(g, g_dur)
    print(f"trace reading: about {TRACE_EVENTS:,} events", file=sys.stderr, flush=True)
    t = trace_bench()

    v = summarize(g, s)
    print()
    print(f"bench/mix.toml on {PLATFORM}, {CPUFREQ} + {CPUIDLE}, best of {REPEATS}:")
    print()
    print(text_table(table_rows(g, s)))
    print()
    print("govlab / SimPy:")
    print(f"  events per wall second:             {v['eps_ratio']:.1f}x")
    print(f"  simulated seconds per wall second:  {v['speed_ratio']:.1f}x")
    print()
    for l in verdict_lines(g, s, v):
        print(l)
    print()
    for l in context_lines(g, s):
        print(l)
    print()
    print("Governors written in Python against the same governors in Rust:")
    print()
    print(md_table_with(PY_HEADER, py_rows(pairs)))
    print()
    for l in py_verdict_lines(pairs):
        print(l)
    for l in trace_lines(t):
        print(l)
    print()
    for l in hk:
        print(l)
    print()
    for l in kv:
        print(l)
    if args.write:
        path = os.path.join(HERE, "RESULTS.md")
        write_results(path, machine(), g, s, v, pairs, t, hk, kv)
        print(f"\nwrote {os.path.relpath(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
