"""Writes experiments/x86-freq-invariance-{skylake,broadwell,haswell}.toml (one template, three machines).

    python3 tools/published/x86_freq_invariance_experiments.py .
"""
import sys

root = sys.argv[1]
M = {
 "skylake": dict(platform="skylake-e3-1240v5", ncpus=8, label="8x-SKYLAKE-UMA",
    desc="Xeon E3-1240 v5 (Skylake, 4 cores / 8 threads, HWP)", hwp=True, extra=[]),
 "broadwell": dict(platform="broadwell-2s-e5-2698v4", ncpus=80, label="80x-BROADWELL-NUMA",
    desc="2 x Xeon E5-2698 v4 (Broadwell-EP, 2 x 20 cores / 40 threads)", hwp=False, extra=[("8C", "8c", "8C turbo, 2900 MHz")]),
 "haswell": dict(platform="haswell-2s-e5-2670v3", ncpus=48, label="48x-HASWELL-NUMA",
    desc="2 x Xeon E5-2670 v3 (Haswell-EP, 2 x 12 cores / 24 threads)", hwp=False, extra=[("12C", "12c", "12C (all-core) turbo, 2600 MHz; the source also calls it 8C")]),
}
#: runs of each configuration and parameter of the iterated benchmarks (seeds 1..REPEATS): NETPERF_ITERATIONS,
#: KERNBENCH_ITERATIONS and GITSOURCE_ITERATIONS of MMTests' configs when the source ran (gormanm/mmtests
#: ffca095a, Jan 2020); the timed ones (pgbench, dbench4, tbench4) ran once per client count, judged by
#: the samples MMTests' Extract modules read from that run (python/govlab/samples.py)
REPEATS = 5
#: netperf as MMTests' netperf-bench ran it (netperf 2.4.5, `-i 3,3 -I 95,5` without `-l`): one invocation
#: is three tests of netperf's default 10 s by the same netperf process and netserver child, scored as
#: the mean of the three; UDP_STREAM's netserver answers each test only when its timer, the test's
#: length plus PAD_TIME (4 s), expires, so both sleep 4 s after each test. Simulated: three 1-s tests,
#: the pad scaled by the same tenth (400 ms: the same idle share of the invocation, and PELT's
#: utilisation as fully decayed at the next test's start as after 4 s), each test's score extended to
#: 10 s at its second half's rate (docs/validation.md, section 6, "Session 19 (branch `netperf`)":
#: the measured cost of the approximation)
NETPERF_TESTS = "tests=3,test_len=1s,scored_len=10s"
NETPERF_PAD = "400ms"
NETPERF_UDP_DURATION = "4200ms"
NETPERF_TCP_DURATION = "3s"
TURBO = {"skylake": {"1C": 3900, "3C": 3800, "4C": 3700}, "broadwell": {"1C": 3600, "3C": 3400, "4C": 3300}, "haswell": {"1C": 3100, "3C": 2900, "4C": 2800}}

def steps(lo, hi):
    # MMTests' thread steps (shellpacks' NUMCPUS-based ranges): powers of two from lo, then the maximum
    out, v = [], lo
    while v < hi:
        out.append(v); v *= 2
    out.append(hi)
    return out

def dbench_steps(ncpus):
    # dbench-bench as MMTests had it when the source ran (gormanm/mmtests ffca095a, January 2020;
    # config-io-dbench4-async: DBENCH_MIN_CLIENTS=1, DBENCH_MAX_CLIENTS=NUMCPUS*8): the client count
    # doubles while below NUMCPUS, then grows eightfold, and stops past the maximum (no maximum step)
    out, v = [], 1
    while v <= 8 * ncpus:
        out.append(v); v = v * 2 if v < ncpus else v * 8
    return out

def pgbench_steps(max_threads, numnodes):
    # pgbench-bench as MMTests had it when the source ran (gormanm/mmtests ffca095a, January 2020):
    # threads_huge_stride_begin 1 MAX (shellpack_src/bin/rewrite-shellpack) steps 1, 5 (by 4 to 8),
    # 12, 21, 30 (by 9 to 32) and 48, 79, ... (by 31) when MAX >= 32; 1, 4, 7 (by 3 to 8) and 12, 18, ...
    # (by 6) when MAX >= 8; then the maximum. pgbench-bench rounds a count of at least NUMNODES up to a
    # multiple of NUMNODES (pgbench -j NUMNODES) and skips a count equal to the previous one.
    if max_threads >= 32:
        t = list(range(1, 9, 4)) + list(range(12, 33, 9)) + list(range(48, max_threads + 1, 31))
    elif max_threads >= 8:
        t = list(range(1, 9, 3)) + list(range(12, max_threads + 1, 6))
    else:
        t = list(range(1, max_threads + 1, 2))
    if t[-1] != max_threads:
        t.append(max_threads)
    out = []
    for v in t:
        if v >= numnodes:
            v = (v + numnodes - 1) // numnodes * numnodes
        if not out or v != out[-1]:
            out.append(v)
    return out

def arr(xs): return "[" + ", ".join(str(x) for x in xs) + "]"

for m, d in M.items():
    n = d["ncpus"]
    nodes = 1 if m == "skylake" else 2
    pg_ro = pgbench_steps(2 * n, nodes)   # db-pgbench-timed-ro-small: PGBENCH_MAX_THREADS=NUMCPUS*2
    pg_rw = pgbench_steps(n, nodes)       # db-pgbench-timed-rw-small: PGBENCH_MAX_THREADS=NUMCPUS
    # --quick: one client and the largest step up to 8
    q_pg_ro, q_pg_rw = [1, max(v for v in pg_ro if v <= 8)], [1, max(v for v in pg_rw if v <= 8)]
    db = dbench_steps(n)
    tb = steps(1, 4 * n)          # TBENCH_MAX_CLIENTS = NUMCPUS*4
    kb = steps(2, 2 * n)          # KERNBENCH_MIN_THREADS=2, MAX=NUMCPUS*2
    q_db, q_kb = [1, 8], [2, 8]
    hwp_note = ("# intel_pstate=passive implied intel_pstate=no_hwp before v5.9 (Documentation/admin-guide/pm/\n"
                "# intel_pstate.rst, \"Passive Mode\", removed by f6ebbcf08f37): the schedutil configurations run without HWP.\n") if d["hwp"] else ""
    ps_spec = "intel_pstate:hwp=on,policy=powersave" if d["hwp"] else "intel_pstate:hwp=off,policy=powersave"
    passive = "{ intel_pstate = \"passive\" }"
    t = f'''# The x86 frequency-invariance evaluation (commit 1567c3e3467c, v5.7, 2020; docs/validation.md;
# published figures in data/published/x86-freq-invariance.toml) on its {d["label"]}:
# {d["desc"]}.
#
#     govlab reproduce x86-freq-invariance [--quick]
#
# Section 5.2 of the source: "The baseline is Linux v5.2 with schedutil (non-invariant) and the
# intel_pstate driver in passive mode"; the invariant configurations are v5.2 with the patch and
# freq_max set to a turbo level (kernel option freq_invariance, docs/kernels.md); "In addition we've
# run all tests with intel_pstate/powersave" (active mode{", with HWP on this machine" if d["hwp"] else ""}).
{hwp_note}# The filesystem is XFS (fs=xfs where govlab's workload models one).
#
# Sizes are MMTests' (configs in github.com/gormanm/mmtests, configs/): clients and jobs from NUMCPUS
# = {n} (tbench4 1..NUMCPUS*4, kernbench 2..NUMCPUS*2, in MMTests'
# power-of-two steps plus the maximum; pgbench as MMTests' pgbench-bench stepped its clients in
# January 2020, to NUMCPUS*2 select-only and NUMCPUS read/write ({", ".join(str(x) for x in pg_ro)} and
# {", ".join(str(x) for x in pg_rw)}; pgbench -j NUMNODES = {nodes}: {"one pgbench thread drives every connection" if nodes == 1 else "two pgbench threads share the connections, one below 2 clients"}); netperf's NETPERF_BUFFER_SIZES; dbench4 as MMTests' dbench-bench
# stepped in January 2020, doubling below NUMCPUS, then eightfold up to NUMCPUS*8:
# {", ".join(str(x) for x in db)}; scored as MMTests' ExtractDbench4 scores it, by each client's time per
# pass of the load file, dbench's --show-execute-time; the load file MMTests' client-tiny.txt, load=tiny). Each run lasts 1 simulated
# second, not MMTests' 180-300 s (with 80 CPUs and up to 320 clients a 3-s run with two repeats took the
# full size past an hour on two cores, issue 35). Each benchmark is sampled as MMTests sampled it when
# the source ran (configs and shellpacks at ffca095a, January 2020): netperf, kernbench and gitsource
# run {REPEATS} times, seeds 1..{REPEATS} (NETPERF_ITERATIONS, KERNBENCH_ITERATIONS, GITSOURCE_ITERATIONS);
# the timed pgbench, dbench4 and tbench4 run once per client count (repeats = 1), and their samples are
# what MMTests' Extract module read from that run, on intervals scaled to the 1-s run (samples = ...,
# python/govlab/samples.py). A difference from the baseline counts only when it is significant over
# those values, as compare-mmtests judged it (docs/validation.md, section 6).
# pgbench runs 5 simulated seconds before its 1-s run, unmeasured (warmup = "5s"): the start-up state
# MMTests' skip of 9 real seconds (after pgbench-bench's 5-min warm-up) left out lasts up to 5-6 s here
# (PELT, new tasks' utilisation, schedutil's busy-CPU hold: real-time constants), far past 9/300 of 1 s;
# its samples, score and package power are those of the second after (docs/validation.md, section 6,
# "Session 20 (branch `warmup`)"; tools/warmup/).
# --quick keeps two parameter values of each benchmark (1 and 8 clients, pgbench 1 and its largest
# step up to 8, 2 and 8 jobs, the smallest and largest buffer).
# kernbench builds what MMTests' kernbench builds, the whole defconfig vmlinux (the workload's default
# files, 2,700 compile jobs): its serial preparation and link are the whole tree's at any size, so a
# reduced tree would multiply their share of the build, and with it whatever a configuration gains or
# loses in them (docs/validation.md, section 6, "Session 18"). gitsource runs 60 of git's test
# scripts, as the datacenter-powersave evaluation does: the ratio is what the source reports, not the time.
# netperf-udp is MMTests' UDP_STREAM (netperf -t UDP_STREAM -m SIZE -M SIZE on loopback, the
# receiver's buffer the kernel default), scored, as MMTests extracts it, by the rate sent. A netperf
# run is one invocation of MMTests' netperf -i 3,3: three tests by the same two tasks, UDP_STREAM's
# followed each by netserver's PAD_TIME; simulated as three 1-s tests (UDP: 400-ms pads), each scored
# as a 10-s test at its second half's rate (docs/validation.md, section 6, "Session 19"), its package
# power likewise over the invocation those stand for (the result's scored_power, "Session 20").

[experiment]
name = "x86-freq-invariance-{m}"
description = "schedutil non-invariant (v5.2) vs invariant (1C..{d["extra"][0][0] if d["extra"] else "4C"}) vs intel_pstate powersave on {d["platform"]}"
platform = "{d["platform"]}"
kernel = "5.2"
duration = "1s"
repeats = {REPEATS}
seed = 1
baseline = "v5.2"
cpuidle = "menu"

[quick]
duration = "1s"
repeats = {REPEATS}

[[benchmark]]
name = "pgbench-ro"
workload = "pgbench:mode=ro,fs=xfs,threads={nodes}"
repeats = 1
samples = "pgbench"
warmup = "5s"
axis = {{ clients = {arr(pg_ro)} }}
quick = {arr(q_pg_ro)}

[[benchmark]]
name = "pgbench-rw"
workload = "pgbench:mode=rw,fs=xfs,threads={nodes}"
repeats = 1
samples = "pgbench"
warmup = "5s"
axis = {{ clients = {arr(pg_rw)} }}
quick = {arr(q_pg_rw)}

[[benchmark]]
name = "dbench4"
workload = "dbench:fs=xfs,score=loadfile,load=tiny"
repeats = 1
samples = "dbench4"
axis = {{ clients = {arr(db)} }}
quick = {arr(q_db)}

[[benchmark]]
name = "netperf-udp"
workload = "netperf:test=udp_stream,{NETPERF_TESTS},pad={NETPERF_PAD}"
duration = "{NETPERF_UDP_DURATION}"
axis = {{ size = [64, 128, 256, 1024, 2048, 3312, 4096, 8192, 16384] }}
quick = [64, 16384]

[[benchmark]]
name = "netperf-tcp"
workload = "netperf:test=tcp_stream,{NETPERF_TESTS}"
duration = "{NETPERF_TCP_DURATION}"
axis = {{ size = [64, 128, 256, 1024, 2048, 3312, 4096, 8192, 16384] }}
quick = [64, 16384]

[[benchmark]]
name = "tbench4"
workload = "tbench"
repeats = 1
samples = "tbench4"
axis = {{ clients = {arr(tb)} }}
quick = {arr(q_db)}

[[benchmark]]
name = "kernbench"
workload = "kernbench"
duration = "1800s"
axis = {{ jobs = {arr(kb)} }}
quick = {arr(q_kb)}

[[benchmark]]
name = "gitsource"
workload = "gitsource:scripts=60"
duration = "600s"

[[config]]
name = "v5.2"
description = "baseline: v5.2, non-invariant schedutil, intel_pstate passive"
cpufreq = "schedutil"
platform_options = {passive}

[[config]]
name = "intel_pstate"
description = "v5.2, intel_pstate active, powersave{" with HWP" if d["hwp"] else ""}"
cpufreq = "{ps_spec}"
platform_options = {{ intel_pstate = "active" }}
'''
    for name, opt, what in [("1C", "1c", f"1C turbo, {TURBO[m]['1C']} MHz"), ("3C", "3c", f"3C turbo, {TURBO[m]['3C']} MHz"), ("4C", "4c", f"4C turbo, {TURBO[m]['4C']} MHz (the value merged)")] + d["extra"]:
        t += f'''
[[config]]
name = "{name}"
description = "v5.2 with invariant schedutil, freq_max = {what}"
kernel = "5.2:freq_invariance={opt}"
cpufreq = "schedutil"
platform_options = {passive}
'''
    open(f"{root}/experiments/x86-freq-invariance-{m}.toml", "w").write(t)
