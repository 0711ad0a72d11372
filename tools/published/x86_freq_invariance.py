"""Writes data/published/x86-freq-invariance.toml from the source's tables (copied verbatim in the seed text).

    python3 tools/published/x86_freq_invariance.py ../shared/seeds/x86-frequency-invariance-2020.txt \
        data/published/x86-freq-invariance.toml
"""
import re
import sys

seed = open(sys.argv[1]).read()
out_path = sys.argv[2]
MACH = {"80x-BROADWELL-NUMA": "broadwell", "8x-SKYLAKE-UMA": "skylake", "48x-HASWELL-NUMA": "haswell"}
BENCH = {"pgbench-ro": "pgbench-ro", "pgbench-rw": "pgbench-rw", "netperf-udp": "netperf-udp", "netperf-tcp": "netperf-tcp",
         "tbench4": "tbench4", "dbench4": "dbench4", "kernbench": "kernbench", "gitsource": "gitsource"}
def cfg(col, machine):
    col = col.replace("I_PSTATE/HWP", "intel_pstate").replace("I_PSTATE", "intel_pstate")
    if machine == "haswell" and col == "8C":
        return "12C"
    return col
HEAD_SCORE = {("gitsource", "4C"), ("kernbench", "4C"), ("tbench4", "4C"), ("dbench4", "intel_pstate")}
figs = []
def headline_score(m, b, c):
    if (b, c) == ("kernbench", "4C") and m == "skylake":
        return False
    if (b, c) == ("dbench4", "intel_pstate") and m != "broadwell":
        return False
    return (b, c) in HEAD_SCORE
# summary ratio tables
for block in re.finditer(r"^(\S+)\s+\((comparison ratio; (higher|lower) is better|power consumption, watts|performance-per-watt ratios; higher is better)\)\n(.*?)\n\s+\+-+\+\n(?=\S|\n|\()", seed, re.S | re.M):
    machine = MACH[block.group(1)]
    kind = block.group(2)
    lines = [l for l in block.group(4).split("\n") if l.strip() and not set(l.strip()) <= set("+-")]
    header = lines[0].replace("|", " ").split()
    table_no = {"comparison": "5.3.2", "power": "5.3.4", "performance-per-watt": "5.3.4"}[kind.split()[0].split("-per")[0] if not kind.startswith("performance") else "performance-per-watt"]
    for line in lines[1:]:
        cells = line.replace("|", " ").split()
        bench, values = cells[0], cells[1:]
        assert len(values) == len(header), (line, header)
        if kind.startswith("power"):
            base = float(values[0])
            for col, v in zip(header[1:], values[1:]):
                c = cfg(col, machine)
                figs.append(dict(benchmark=f"{machine}/{BENCH[bench]}", config=c, metric="pkg_power_w", better="lower",
                    baseline_value=base, value=float(v),
                    where=f"5.3.4 {block.group(1)} (power consumption, watts), {bench}, BASELINE vs {col}",
                    headline=(bench == "gitsource" and c == "4C")))
            continue
        better = "higher" if ("higher" in kind) else "lower"
        metric = "score" if kind.startswith("comparison") else "perf_per_watt"
        for col, v in zip(header, values):
            c = cfg(col, machine)
            val = 1.0 if v == "~" else float(v)
            what = "comparison ratio" if metric == "score" else "performance-per-watt ratios"
            figs.append(dict(benchmark=f"{machine}/{BENCH[bench]}", config=c, metric=metric, better=better,
                baseline_value=1.0, value=val,
                where=f"{'5.3.2' if metric == 'score' else '5.3.4'} {block.group(1)} ({what}; {'higher' if better == 'higher' else 'lower'} is better), {bench}, {col}" + (" (~)" if v == "~" else ""),
                headline=metric == "score" and headline_score(machine, bench, c)))
# detailed tables
def detail(machine_label, bench, metric, better, pname, stat):
    m = MACH[machine_label]
    start = seed.index(f"Machine            : {machine_label}\nBenchmark          : {bench}")
    end = seed.index("Machine            :", start + 10) if "Machine            :" in seed[start + 10:] else seed.index("=====", start)
    text = seed[start:end]
    parts = re.split(r"\n\s*\n", text)
    for part in parts:
        lines = part.strip("\n").split("\n")
        heads = [l for l in lines if "5.2.0" in l]
        if not heads:
            continue
        cols = [c.strip() for c in re.split(r"\s{2,}", heads[0].strip()) if c.strip()]
        for l in lines:
            if not l.startswith(stat):
                continue
            p = l.split()[1]
            nums = re.findall(r"(\d+\.\d+)\s+(?:\+-\s+\d+\.\d+%\s+)?\(", l)
            assert len(nums) == len(cols), (l, cols)
            yield m, cols, (None if p.replace('.', '').isdigit() is False else int(p)), nums, l
rows = []
for label, bench, bname, metric, better, stat in [("48x-HASWELL-NUMA", "tbench4", "tbench4", "throughput_mbs", "higher", "Hmean"),
                                                   ("80x-BROADWELL-NUMA", "kernbench", "kernbench", "elapsed_s", "lower", "Amean")]:
    base = {}
    for m, cols, p, nums, l in detail(label, bench, metric, better, None, stat):
        for col, v in zip(cols, nums):
            if "vanilla" in col:
                base[p] = float(v)
    for m, cols, p, nums, l in detail(label, bench, metric, better, None, stat):
        for col, v in zip(cols, nums):
            if "vanilla" in col:
                continue
            c = col.replace("5.2.0 ", "").replace("-turbo", "C").replace("CC", "C")
            c = {"intel_pstate": "intel_pstate", "1CC": "1C"}.get(c, c)
            c = c.replace("1C", "1C")
            figs.append(dict(benchmark=f"{m}/{bname}", param=p, config=c, metric=metric, better=better,
                baseline_value=base[p], value=float(v), where=f"5.3.3 {label} {bench}, {stat} {p}, 5.2.0 vanilla vs {col}"))
# gitsource on the Skylake
g = seed[seed.index("Benchmark          : gitsource"):]
vals = re.findall(r"Amean\s+(\d+\.\d+)", g)
vals = [float(x) for x in re.findall(r"(\d+\.\d+)\s+(?:\+-\s+\d+\.\d+%\s+)?\(", "\n".join(l for l in g.split("\n")[:20] if l.startswith("Amean")))]
assert len(vals) == 5, vals
for c, v, col in zip(["intel_pstate", "1C", "3C", "4C"], vals[1:], ["intel_pstate/hwp", "1C-turbo", "3C-turbo", "4C-turbo"]):
    figs.append(dict(benchmark="skylake/gitsource", config=c, metric="elapsed_s", better="lower", baseline_value=vals[0], value=v,
        where=f"5.3.3 8x-SKYLAKE-UMA gitsource, Amean, 5.2.0 vanilla vs 5.2.0 {col}"))
def tv(v):
    return repr(v) if isinstance(v, float) else (str(v).lower() if isinstance(v, bool) else (f'"{v}"' if isinstance(v, str) else str(v)))
hdr = '''# Published figures of the x86 frequency-invariance evaluation: the commit message of 1567c3e3467c
# ("x86, sched: Add support for frequency invariance", Giovanni Gherdovich, v5.7-rc1; posted
# 2020-01-22 as v5 1/6, https://lore.kernel.org/lkml/20200122151617.531-2-ggherdovich@suse.cz/),
# copied verbatim in ../shared/seeds/x86-frequency-invariance-2020.txt and turned into figures by
# a script reading those tables (nothing typed by hand).
#
# Machines: skylake = 8x-SKYLAKE-UMA, broadwell = 80x-BROADWELL-NUMA, haswell = 48x-HASWELL-NUMA.
# Configs: intel_pstate = the I_PSTATE (I_PSTATE/HWP) column; 1C, 3C, 4C, 8C, 12C = invariant
# schedutil with that freq_max. The Haswell "lower is better" table heads its last column "8C",
# which the text says is the same as 12C on that machine: it is the 12C configuration here.
#
# Metrics: score = the summary tables' ratio result_new / result_baseline of geometric means over
# the parameter (5.3.2; baseline_value 1.0; a tilde is 1.0); pkg_power_w = turbostat's package
# power averaged over the benchmark (5.3.4, the BASELINE column as baseline_value); perf_per_watt =
# the performance-per-watt ratio (5.3.4; a tilde is 1.0); throughput_mbs and elapsed_s = the
# detailed tables per parameter (5.3.3). headline = true marks the rows the issue names.

'''
with open(out_path, "w") as f:
    f.write(hdr)
    for fg in figs:
        f.write("[[figure]]\n")
        for k in ("benchmark", "param", "config", "metric", "better", "baseline_value", "value", "where", "headline"):
            if k in fg and fg[k] is not None and not (k == "headline" and not fg[k]):
                f.write(f"{k} = {tv(fg[k])}\n")
        f.write("\n")
print(len(figs), sum(1 for x in figs if x.get("headline")))
