"""Governors written in Python (govlab.governors): the Python ports in
examples/governors give the built-in governors' runs exactly; errors in a
governor's code stop the run with a message naming the governor, the call
and the simulated time, with the governor's own traceback; tunables, specs,
classes and instances work wherever a governor goes."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

import govlab
from govlab import experiment, governors, plan
from govlab.exceptions import GovernorError, InvalidValueError, UnknownKeyError, UnknownNameError
from govlab.governors import CpufreqGovernor, CpuidleGovernor, Tunable

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "governors"
MIX = str(ROOT / "bench" / "mix.toml")
SKYLAKE = "skylake-e3-1240v5"  # 8 policies of 1 CPU (intel_pstate), on one shared clock
BROADWELL = "broadwell-2s-e5-2698v4"  # 80 policies of 1 CPU, two per core clock
BROADWELL_NO_SMT = "broadwell-2s-e5-2698v4:smt=off"  # 40 policies of 1 CPU
#: One task that sleeps 37 ms of every 40: long idles, where copy_prev_load matters.
BURSTY = "periodic:tasks=1,run_us=3000,period_us=40000"


def example(file: str, cls: str, settings: str = "") -> str:
    spec = f"py:{EXAMPLES / file}:{cls}"
    return f"{spec}:{settings}" if settings else spec


def same_run(a: govlab.Result, b: govlab.Result, kind: str) -> None:
    """Everything equal but the governor's name."""
    da, db = a.to_dict(), b.to_dict()
    assert da["events"] > 0
    diffs = [k for k in da if da[k] != db[k] and k != kind]
    assert diffs == [], f"runs differ in {diffs}"


def frequency_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if "cpu_frequency:" in line]


# --- the Python ports give the built-in governors' runs ------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(
    "platform, workload",
    [(SKYLAKE, "periodic:tasks=4,run_us=2000,period_us=10000"), (SKYLAKE, "dbench"), (BROADWELL_NO_SMT, "hackbench")],
)
def test_performance_matches_builtin(platform, workload, seed):
    # The port is the generic governor: on intel_pstate that is passive mode
    # (in active mode `performance` is intel_pstate's own policy).
    platform += ("," if ":" in platform else ":") + "intel_pstate=passive"
    kw = dict(platform=platform, workload=workload, duration="300ms", seed=seed, cpuidle="menu")
    same_run(govlab.run(cpufreq="performance", **kw), govlab.run(cpufreq=example("performance.py", "Performance"), **kw), "cpufreq")


#: The Skylake with HWP off: from v5.11 schedutil on an HWP policy passes
#: levels through the driver's adjust_perf (sugov_update_single_perf), which
#: governors written in Python cannot call; without HWP it asks for
#: frequencies on every version, as the port does.
SKYLAKE_NO_HWP = "skylake-e3-1240v5:hwp=off"


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize(
    "platform, workload, duration",
    [
        (SKYLAKE_NO_HWP, "periodic:tasks=4,run_us=2000,period_us=10000", "1s"),
        (SKYLAKE_NO_HWP, "dbench", "500ms"),
        (BROADWELL, MIX, "150ms"),
        (BROADWELL_NO_SMT, MIX, "150ms"),
    ],
)
@pytest.mark.parametrize("settings", ["", "iowait_boost=max,rate_limit_us=0", "rate_limit_us=4000"])
def test_schedutil_matches_builtin(platform, workload, duration, seed, settings):
    builtin = "schedutil" + (f":{settings}" if settings else "")
    kw = dict(platform=platform, workload=workload, duration=duration, seed=seed)
    a = govlab.run(cpufreq=builtin, **kw)
    b = govlab.run(cpufreq=example("schedutil.py", "Schedutil", settings), **kw)
    same_run(a, b, "cpufreq")
    assert sum(c["transitions"] for c in a.to_dict()["cpus"]) > 0, "the frequency moved"


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(
    "platform, workload, duration",
    [(SKYLAKE, "periodic:tasks=4,run_us=2000,period_us=10000", "1s"), (SKYLAKE, "schbench", "500ms"), (BROADWELL, MIX, "300ms")],
)
def test_ladder_matches_builtin(platform, workload, duration, seed):
    kw = dict(platform=platform, workload=workload, duration=duration, seed=seed, cpufreq="schedutil")
    a = govlab.run(cpuidle="ladder", **kw)
    same_run(a, govlab.run(cpuidle=example("ladder.py", "Ladder"), **kw), "cpuidle")
    used = {s["name"] for c in a.to_dict()["cpus"] for s in c["idle_states"] if s["usage"]}
    assert len(used) > 1, f"the ladder moved between states: {used}"


@pytest.mark.parametrize(
    "settings",
    ["", "copy_prev_load=off", "up_threshold=80,sampling_down_factor=4", "powersave_bias=100", "io_is_busy=0,sampling_rate=20000"],
)
@pytest.mark.parametrize("workload", [BURSTY, "dbench"])
def test_ondemand_example_gives_the_same_frequencies(tmp_path, workload, settings):
    builtin = "ondemand" + (f":{settings}" if settings else "")
    kw = dict(workload=workload, duration="1s", seed=5)
    a = govlab.run(cpufreq=builtin, trace=tmp_path / "rust.trace", **kw)
    b = govlab.run(cpufreq=example("ondemand.py", "Ondemand", settings), trace=tmp_path / "py.trace", **kw)
    rust_lines, py_lines = frequency_lines(tmp_path / "rust.trace"), frequency_lines(tmp_path / "py.trace")
    assert len(rust_lines) > 2, "the frequency moved"
    assert py_lines == rust_lines
    same_run(a, b, "cpufreq")


def test_copy_prev_load_is_exercised():
    """The bursty workload is one where copy_prev_load changes ondemand's choices."""
    kw = dict(workload=BURSTY, duration="1s", seed=5, cpufreq=example("ondemand.py", "Ondemand"))
    on = govlab.run(**kw).to_dict()["cpus"][0]["time_in_state"]
    off = govlab.run(**{**kw, "cpufreq": kw["cpufreq"] + ":copy_prev_load=off"}).to_dict()["cpus"][0]["time_in_state"]
    assert on != off


def test_ondemand_example_resolves_the_builtins_tunables():
    for platform in (SKYLAKE, BROADWELL, f"{SKYLAKE}:hwp=off"):
        rust = govlab.api.show_config(platform=platform, cpufreq="ondemand")["cpufreq"]["tunables"]
        py = govlab.api.show_config(platform=platform, cpufreq=example("ondemand.py", "Ondemand"))["cpufreq"]["tunables"]
        assert py == rust


def test_ondemand_example_lists_the_builtins_tunables():
    rust = next(g for g in govlab.list_governors() if g["name"] == "ondemand")
    (py,) = [g for g in govlab.list_governors(py=f"{EXAMPLES / 'ondemand.py'}:Ondemand") if g["name"].startswith("py:")]
    assert py["kind"] == "cpufreq" and py["name"].endswith("ondemand.py:Ondemand")
    assert [(p["name"], p["default"]) for p in py["params"]] == [(p["name"], p["default"]) for p in rust["params"]]


@pytest.mark.parametrize(
    "settings", ["", "epp=255", "epp=0,hwp_dynamic_boost=0", "policy=performance", "hwp_boost_migration=on"]
)
@pytest.mark.parametrize("workload", ["dbench", "periodic:tasks=4,run_us=2000,period_us=10000"])
def test_intel_pstate_hwp_example_gives_the_builtins_runs(tmp_path, workload, settings):
    """HWP requests from Python: the port of intel_pstate's active mode with HWP writes what the built-in writes."""
    builtin = "intel_pstate" + (f":{settings}" if settings else "")
    kw = dict(platform=SKYLAKE, workload=workload, duration="1s", seed=7)
    a = govlab.run(cpufreq=builtin, trace=tmp_path / "rust.trace", **kw)
    b = govlab.run(cpufreq=example("intel_pstate_hwp.py", "IntelPstateHwp", settings), trace=tmp_path / "py.trace", **kw)
    rust_lines, py_lines = frequency_lines(tmp_path / "rust.trace"), frequency_lines(tmp_path / "py.trace")
    assert len(rust_lines) > 2, "the hardware moved the frequency"
    assert py_lines == rust_lines
    same_run(a, b, "cpufreq")


def mean_khz(result: dict) -> float:
    tis = result["cpus"][0]["time_in_state"]
    return sum(float(khz) * s for khz, s in tis.items()) / sum(tis.values())


def test_hwp_dynamic_boost_is_exercised():
    """dbench's IO wakeups raise the HWP minimum: without the boost the CPUs run slower."""
    kw = dict(platform=SKYLAKE, workload="dbench", duration="1s", seed=7)
    on = govlab.run(cpufreq=example("intel_pstate_hwp.py", "IntelPstateHwp"), **kw).to_dict()
    off = govlab.run(cpufreq=example("intel_pstate_hwp.py", "IntelPstateHwp", "hwp_dynamic_boost=0"), **kw).to_dict()
    assert mean_khz(off) < mean_khz(on)


def test_epp_towards_power_runs_slower_for_less_energy():
    """EPP 255 (power) lets the hardware settle lower than EPP 0 (performance): less energy, lower mean frequency."""
    kw = dict(platform=SKYLAKE, workload="periodic:tasks=4,run_us=2000,period_us=10000", duration="1s", seed=7)
    runs = {epp: govlab.run(cpufreq=example("intel_pstate_hwp.py", "IntelPstateHwp", f"epp={epp}"), **kw).to_dict() for epp in (0, 255)}
    assert runs[255]["energy_j"] < runs[0]["energy_j"]
    assert mean_khz(runs[255]) < mean_khz(runs[0])


def test_policy_shows_hwp_capabilities_only_where_it_takes_requests():
    seen = {}

    class Probe(CpufreqGovernor):
        def start(self, policy):
            seen[type(self).__name__] = policy.hwp

    class ActiveProbe(Probe):
        driver = "intel_pstate"

    govlab.run(cpufreq=Probe, platform=SKYLAKE, duration="10ms")
    govlab.run(cpufreq=ActiveProbe, platform=SKYLAKE, duration="10ms")
    caps = seen["ActiveProbe"]
    # skylake-e3-1240v5: 0.8 GHz lowest, 3.5 GHz base (P1), 3.9 GHz turbo
    assert (caps.lowest_perf, caps.guaranteed_perf, caps.highest_perf, caps.khz_per_perf) == (8, 35, 39, 100_000)
    assert seen["Probe"] is None, "a generic governor runs on intel_cpufreq, which writes its own HWP requests"
    govlab.run(cpufreq=ActiveProbe, platform=f"{SKYLAKE}:hwp=off", duration="10ms")
    assert seen["ActiveProbe"] is None, "intel_pstate without HWP takes P-states"


def test_hwp_request_type():
    r = governors.HwpRequest(8, 39)
    assert (r.min_perf, r.max_perf, r.desired_perf, r.epp) == (8, 39, 0, 128)
    assert r == governors.HwpRequest(8, 39, 0, governors.EPP_NAMES["balance_performance"]) and r != governors.HwpRequest(8, 39, epp=0)
    assert repr(r) == "HwpRequest(min_perf=8, max_perf=39, desired_perf=0, epp=128)"
    assert governors.EPP_NAMES == {"performance": 0, "balance_performance": 128, "balance_power": 192, "power": 255}
    with pytest.raises(TypeError, match=r"HwpRequest: epp is 'power' \(str\); expected an int"):
        governors.HwpRequest(8, 39, epp="power")


# --- classes, instances, specs ----------------------------------------------------------


class Performance(CpufreqGovernor):
    """policy->max, from a class defined in the test."""

    def start(self, policy):
        return policy.max_khz


class FixedShare(CpufreqGovernor):
    """A share of the hardware range, on every hook call."""

    share = Tunable(50, "percent of the range", min=0, max=100)
    relation = Tunable("L", "L, H or C", choices=("L", "H", "C"))

    def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
        lo, hi = policy.cpuinfo_min_khz, policy.cpuinfo_max_khz
        policy.set_target(lo + (hi - lo) * self.share // 100, self.relation)


def test_class_and_instance_forms():
    kw = dict(workload="periodic:tasks=2", duration="200ms", seed=4)
    a = govlab.run(cpufreq=Performance, **kw)
    b = govlab.run(cpufreq=Performance(), **kw)
    c = govlab.run(cpufreq=example("performance.py", "Performance"), **kw)
    same_run(a, b, "cpufreq")
    same_run(a, c, "cpufreq")
    assert a.to_dict()["cpufreq"] == f"py:{__name__}.Performance"

    d = govlab.run(cpufreq=FixedShare(share=30), **kw)
    e = govlab.run(cpufreq=(FixedShare, {"share": 30}), **kw)
    same_run(d, e, "cpufreq")
    assert d.to_dict()["cpufreq"] == f"py:{__name__}.FixedShare:share=30"
    cfg = govlab.api.show_config(cpufreq=FixedShare(share=30))
    assert cfg["cpufreq"]["tunables"] == {"share": "30", "relation": "L"}


def test_relations_pick_table_frequencies():
    """30 % of the range is between two OPPs: L, H and C pick around it."""
    # Without HWP: intel_cpufreq then writes the P-state asked for (with HWP
    # the request is only a floor and the hardware may run faster).
    kw = dict(platform="skylake-e3-1240v5:hwp=off", workload="cpu-bound", duration="100ms", seed=1)
    opps = {}
    for rel in "LHC":
        r = govlab.run(cpufreq=FixedShare(share=30, relation=rel), **kw).to_dict()
        tis = r["cpus"][0]["time_in_state"]
        opps[rel] = max(tis, key=lambda k: tis[k])
    assert int(opps["L"]) > int(opps["H"])
    assert opps["C"] in (opps["L"], opps["H"])


def test_settings_are_checked():
    with pytest.raises(InvalidValueError, match=r"invalid value '101' for 'share': an integer from 0 to 100 \(default 50\)"):
        FixedShare(share=101)
    with pytest.raises(UnknownKeyError, match="unknown key 'shar'; valid keys: share, relation"):
        govlab.run(cpufreq=(FixedShare, {"shar": 1}), duration="10ms")
    spec = example("ondemand.py", "Ondemand", "up_threshold=5")
    with pytest.raises(InvalidValueError, match=r"'up_threshold': an integer from 11 to 100 \(default 95\)"):
        govlab.run(cpufreq=spec, duration="10ms")
    clamped = govlab.api.show_config(cpufreq=example("ondemand.py", "Ondemand", "powersave_bias=5000"))
    assert clamped["cpufreq"]["tunables"]["powersave_bias"] == "1000", "clamped like store_powersave_bias"


def test_wrong_kind_and_unknown_class():
    with pytest.raises(InvalidValueError, match="is a cpuidle governor, not a cpufreq governor"):
        govlab.run(cpufreq=example("ladder.py", "Ladder"), duration="10ms")
    with pytest.raises(UnknownNameError, match="unknown cpufreq governor 'Ondmand' in .*ondemand.py; the governor classes there: Ondemand"):
        govlab.run(cpufreq=example("ondemand.py", "Ondmand"), duration="10ms")
    with pytest.raises(FileNotFoundError):
        govlab.run(cpufreq="py:/nonexistent/gov.py:G", duration="10ms")


def test_init_sees_the_runs_kernel():
    """A Python governor is built with the run's kernel, read-only: its version and eras."""
    seen = {}

    class Probe(CpufreqGovernor):
        def init(self, platform):
            k = platform.kernel
            seen[k.requested] = (k.version, k.version_tuple, k.has("util_est"), k.has("schedutil"), platform.hz)
            with pytest.raises(ValueError, match="no kernel era named 'util_ets'"):
                k.has("util_ets")

        def start(self, policy):
            pass

        def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
            pass

    for kernel in ("4.8", "5.4", "6.8:hz=1000"):
        govlab.run(platform="juno-r0", kernel=kernel, cpufreq=Probe, duration="10ms")
    assert seen["4.8"] == ("4.8", (4, 8), False, True, 250)
    assert seen["5.4"] == ("5.2", (5, 2), True, True, 250)
    assert seen["6.8"] == ("6.8", (6, 8), True, True, 1000)


def test_views_hold_the_engines_data():
    seen = {}

    class Probe(CpufreqGovernor):
        def init(self, platform):
            seen["platform"] = (platform.name, platform.nr_cpus, len(platform.policies))

        def start(self, policy):
            seen.setdefault("policy", (policy.cpus, policy.opps[0], policy.opps[-1], policy.cpuinfo_max_khz))
            self.kept = policy

        def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
            assert util == policy.util(cpu) and max == policy.capacity(cpu) == 1024
            assert cpu in policy.cpus and policy.min_khz <= policy.cur_khz <= policy.max_khz
            seen["busy"] = seen.get("busy", 0) + (policy.idle_ns(cpu, time_ns) < time_ns)

    class Probe2(CpuidleGovernor):
        def enable(self, dev):
            seen.setdefault("states", [s.name for s in dev.states])

        def select(self, dev, next_timer_ns, latency_req_ns, tick_stopped):
            assert latency_req_ns == governors.NO_LIMIT, "no PM QoS limit on this run"
            assert next_timer_ns > 0 and dev.tick_ns == 4_000_000 and len(dev.disabled) == len(dev.states)
            seen["selects"] = seen.get("selects", 0) + 1
            return (1, False)

    gov = Probe()
    govlab.run(cpufreq=gov, cpuidle=Probe2, workload="periodic:tasks=2", duration="50ms")
    assert seen["platform"] == (SKYLAKE, 8, 8)
    assert seen["policy"][0] == (0,) and seen["policy"][1] < seen["policy"][2] <= seen["policy"][3]
    assert seen["busy"] > 0
    assert seen["states"][0] == "POLL" and seen["selects"] > 0
    with pytest.raises(RuntimeError, match="only during the governor call"):
        gov.kept.util(0)


def test_a_policy_is_made_once_and_shows_what_changed():
    """One view per policy for the run: its fixed data are the same objects at
    every call, cur_khz follows the frequency set, and nothing can be set."""
    seen = {}

    class Lowest(CpufreqGovernor):
        def start(self, policy):
            seen.setdefault(policy.id, (policy, policy.opps))
            return policy.opps[0]

        def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
            first, opps = seen[policy.id]
            assert policy is first and policy.opps is opps and policy.id in seen
            seen["cur"] = policy.cur_khz
            with pytest.raises(AttributeError):
                policy.id = 3
            with pytest.raises(AttributeError):
                policy.cur_khz = 0
            return None

    govlab.run(cpufreq=Lowest, workload="periodic:tasks=2", duration="50ms")
    first, opps = seen[0]
    assert seen["cur"] == opps[0] < opps[-1] and first.tick_ns == 4_000_000


class Ramped(CpufreqGovernor):
    """Sets a tunable before calling the base class's __init__."""

    share = Tunable(50, "percent", min=0, max=100)
    step = Tunable(5, "percent per call", min=1, max=10)

    def __init__(self, **settings):
        self.share = 20
        self.doubled = self.step * 2
        super().__init__(**settings)


def test_tunables_set_by_a_subclass_before_the_base_init_are_kept():
    assert (Ramped().share, Ramped().doubled, Ramped(step=3).doubled, Ramped(share=70).share) == (20, 10, 10, 70)
    assert Ramped(step=3).step == 3 and Ramped().tunable_values() == [("share", "20"), ("step", "5")]


def test_a_policy_is_lent_only_for_its_call_even_one_that_raises():
    """The scheduler's figures are read live during a call; a call that raises ends the
    loan as one that returns does, and a CPU that does not exist is an IndexError."""

    class Raiser(CpufreqGovernor):
        def start(self, policy):
            pass

        def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
            with pytest.raises(IndexError, match="CPU 8 does not exist; the machine has CPUs 0 to 7"):
                policy.util(8)
            assert policy.util(cpu) == util and policy.nr_running(cpu) >= 0
            self.kept = policy
            raise KeyError("stop")

    gov = Raiser()
    with pytest.raises(GovernorError, match="KeyError"):
        govlab.run(cpufreq=gov, workload="periodic:tasks=2", duration="50ms")
    with pytest.raises(RuntimeError, match="only during the governor call"):
        gov.kept.util(0)


def test_the_per_cpu_readers_check_their_arguments():
    """util, util_boost, capacity and idle_calls (plain C methods of the class) read
    the figures the hook was given, refuse what is not a CPU number, and apply only
    to a Policy."""
    seen = {}

    class Reader(CpufreqGovernor):
        def start(self, policy):
            pass

        def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
            assert policy.util(cpu) == util and policy.capacity(cpu) == max
            assert policy.util_boost(cpu) >= util
            calls = policy.idle_calls(cpu)
            assert calls is None or calls >= 0
            with pytest.raises(TypeError):
                policy.util("0")
            with pytest.raises(OverflowError):
                policy.capacity(-1)
            with pytest.raises(TypeError):
                type(policy).util_boost(object(), cpu)
            with pytest.raises(TypeError):
                policy.idle_calls()
            with pytest.raises(TypeError):
                policy.util(cpu, cpu)
            with pytest.raises(TypeError):
                policy.util(core=cpu)
            assert policy.util(cpu=cpu) == util
            seen["calls"] = seen.get("calls", 0) + 1
            return None

    govlab.run(cpufreq=Reader, workload="periodic:tasks=2", duration="20ms")
    assert seen["calls"] > 0


# --- errors ---------------------------------------------------------------------------


def line_of(path: Path, text: str) -> str:
    """The number of the line of ``path`` holding ``text``, as a traceback shows it."""
    return str(next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line))


def write_governor(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "mygov.py"
    path.write_text("from govlab.governors import CpufreqGovernor, CpuidleGovernor\n\n" + textwrap.dedent(body))
    return path


RAISES_IN_TIMER = """
class Raiser(CpufreqGovernor):
    def start(self, policy):
        policy.arm_timer(3_000_000, deferrable=False)

    def timer(self, policy, time_ns):
        return self.decide(policy)

    def decide(self, policy):
        table = {}
        return table["missing"]
"""


def test_exception_names_governor_call_time_and_traceback(tmp_path):
    path = write_governor(tmp_path, RAISES_IN_TIMER)
    spec = f"py:{path}:Raiser"
    with pytest.raises(GovernorError) as info:
        govlab.run(cpufreq=spec, workload="periodic:tasks=2", duration="100ms")
    text = str(info.value)
    first, *rest = text.splitlines()
    assert first == f"cpufreq governor {spec}: timer() at 0.003000000 s (3000000 ns): KeyError: 'missing'"
    assert rest[0] == "Traceback (most recent call last):"
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\w+)', text)
    assert frames == [(str(path), line_of(path, "return self.decide"), "timer"), (str(path), line_of(path, 'table["missing"]'), "decide")], (
        "only the governor's own frames"
    )
    assert 'return table["missing"]' in text
    assert rest[-1] == "KeyError: 'missing'"


@pytest.mark.parametrize(
    "returned, message",
    [
        ('"fast"', "update() at {t}: returned 'fast' (str); expected a frequency in kHz (int), an HwpRequest or None"),
        ("2.5e6", "update() at {t}: returned 2500000.0 (float); expected a frequency in kHz (int), an HwpRequest or None"),
        ("True", "update() at {t}: returned True (bool); expected a frequency in kHz (int), an HwpRequest or None"),
        ("policy.max_khz + 1", "update() at {t}: returned {over} (int): outside the limits of policy 0, {lo} to {hi} kHz"),
        ("-1", "update() at {t}: returned -1 (int): outside the limits of policy 0, {lo} to {hi} kHz"),
    ],
)
def test_bad_frequency_answers(tmp_path, returned, message):
    path = write_governor(tmp_path, f"""
    class Bad(CpufreqGovernor):
        def update(self, policy, cpu, time_ns, util, max, flags):
            return {returned}
    """)
    with pytest.raises(GovernorError) as info:
        govlab.run(cpufreq=f"py:{path}:Bad", workload="periodic:tasks=2", duration="100ms")
    text = str(info.value)
    m = re.search(r"update\(\) at (\d+\.\d{9} s \((\d+) ns\))", text)
    assert m and int(m.group(2)) > 0, text
    opps = govlab.api.show_config()  # the default platform
    assert opps["platform"]["name"] == SKYLAKE
    lo, hi = 800000, 3900000  # skylake-e3-1240v5's table ends (data/platforms)
    expected = message.format(t=m.group(1), over=hi + 1, lo=lo, hi=hi)
    assert text == f"cpufreq governor py:{path}:Bad: {expected}"


HWP_GOVERNOR = """
class Hwp(CpufreqGovernor):
    driver = "intel_pstate"

    def start(self, policy):
        caps = policy.hwp
        return {returned}
"""
NO_HWP = "policy 0 takes no HWP requests: only intel_pstate's active mode (a governor with driver \"intel_pstate\") writes them, on a platform with HWP on; the other drivers take frequencies"


@pytest.mark.parametrize(
    "returned, platform, message",
    [
        ("HwpRequest(20, 12)", SKYLAKE, "returned HwpRequest(min_perf=20, max_perf=12, desired_perf=0, epp=128): min_perf 20 is above max_perf 12"),
        ("HwpRequest(8, 39, epp=256)", SKYLAKE, "returned HwpRequest(min_perf=8, max_perf=39, desired_perf=0, epp=256): epp 256 is outside 0 to 255 (an 8-bit field of MSR_HWP_REQUEST)"),
        ("HwpRequest(-1, 39)", SKYLAKE, "returned HwpRequest(min_perf=-1, max_perf=39, desired_perf=0, epp=128): min_perf -1 is outside 0 to 255 (an 8-bit field of MSR_HWP_REQUEST)"),
        ("HwpRequest(8, caps.highest_perf + 1)", SKYLAKE, "returned HwpRequest(min_perf=8, max_perf=40, desired_perf=0, epp=128): min_perf..max_perf 8..40 is outside the limits of policy 0, levels 8 to 39 (800000 to 3900000 kHz)"),
        ("HwpRequest(8, 20, desired_perf=30)", SKYLAKE, "returned HwpRequest(min_perf=8, max_perf=20, desired_perf=30, epp=128): desired_perf 30 is neither 0 (the hardware chooses) nor within min_perf..max_perf 8..20"),
        ("HwpRequest(8, 39)", f"{SKYLAKE}:hwp=off", "returned HwpRequest(min_perf=8, max_perf=39, desired_perf=0, epp=128): " + NO_HWP),
        ("policy.max_khz", SKYLAKE, "returned 3900000 (int); with HWP on, intel_pstate's active mode writes HWP requests, and the hardware ignores P-state requests (IA32_PERF_CTL): return an HwpRequest"),
        ("(8, 39)", SKYLAKE, "returned (8, 39) (tuple); expected an HwpRequest or None (HWP is on)"),
    ],
)
def test_bad_hwp_answers(tmp_path, returned, platform, message):
    path = write_governor(tmp_path, "from govlab.governors import HwpRequest\n" + HWP_GOVERNOR.format(returned=returned))
    with pytest.raises(GovernorError) as info:
        govlab.run(cpufreq=f"py:{path}:Hwp", platform=platform, duration="10ms")
    assert str(info.value) == f"cpufreq governor py:{path}:Hwp: start() at 0.000000000 s (0 ns): {message}"


def test_hwp_request_from_a_generic_governor_is_refused(tmp_path):
    """On intel_pstate's passive mode the driver (intel_cpufreq) writes the HWP requests, from frequencies."""
    path = write_governor(tmp_path, """
    from govlab.governors import HwpRequest

    class Generic(CpufreqGovernor):
        def update(self, policy, cpu, time_ns, util, max, flags):
            return HwpRequest(8, 39)
    """)
    with pytest.raises(GovernorError) as info:
        govlab.run(cpufreq=f"py:{path}:Generic", platform=SKYLAKE, workload="periodic:tasks=2", duration="100ms")
    text = str(info.value)
    assert re.fullmatch(rf"cpufreq governor py:{re.escape(str(path))}:Generic: update\(\) at \d\.\d{{9}} s \(\d+ ns\): returned HwpRequest\(.*\): {re.escape(NO_HWP)}", text), text


def test_hwp_mistakes_in_the_governors_code_show_its_traceback(tmp_path):
    path = write_governor(tmp_path, """
    from govlab.governors import HwpRequest

    class FloatLevels(CpufreqGovernor):
        driver = "intel_pstate"

        def start(self, policy):
            return HwpRequest(policy.min_khz / policy.hwp.khz_per_perf, 39)

    class Target(CpufreqGovernor):
        driver = "intel_pstate"

        def start(self, policy):
            policy.set_target(policy.max_khz)
    """)
    with pytest.raises(GovernorError) as info:
        govlab.run(cpufreq=f"py:{path}:FloatLevels", duration="10ms")
    text = str(info.value)
    assert text.startswith(f"cpufreq governor py:{path}:FloatLevels: start() at 0.000000000 s (0 ns): TypeError: HwpRequest: min_perf is 8.0 (float); expected an int")
    assert f'File "{path}", line {line_of(path, "return HwpRequest(policy.min_khz")}, in start' in text
    with pytest.raises(GovernorError) as info:
        govlab.run(cpufreq=f"py:{path}:Target", duration="10ms")
    text = str(info.value)
    assert text.startswith(f"cpufreq governor py:{path}:Target: start() at 0.000000000 s (0 ns): ValueError: with HWP on, intel_pstate's active mode writes HWP requests")
    assert f'File "{path}", line {line_of(path, "policy.set_target")}, in start' in text


def test_intel_pstate_governor_needs_its_driver():
    class Active(CpufreqGovernor):
        driver = "intel_pstate"

    with pytest.raises(govlab.exceptions.UnsupportedError, match="is part of the intel_pstate driver, but platform power8 uses the powernv driver"):
        govlab.run(cpufreq=Active, platform="power8", duration="10ms")
    with pytest.raises(govlab.exceptions.UnsupportedError, match="intel_pstate=passive"):
        govlab.run(cpufreq=Active, platform=f"{SKYLAKE}:intel_pstate=passive", duration="10ms")


def test_set_target_out_of_range_raises_in_the_governors_code(tmp_path):
    path = write_governor(tmp_path, """
    class Over(CpufreqGovernor):
        def start(self, policy):
            policy.set_target(policy.max_khz * 2)
    """)
    with pytest.raises(GovernorError) as info:
        govlab.run(cpufreq=f"py:{path}:Over", duration="10ms")
    text = str(info.value)
    assert text.startswith(f"cpufreq governor py:{path}:Over: start() at 0.000000000 s (0 ns): ValueError: 7800000 kHz is outside the policy limits")
    assert f'File "{path}", line {line_of(path, "policy.set_target")}, in start' in text


@pytest.mark.parametrize(
    "select, message",
    [
        ("return 99", "select() at {t}: returned state 99 on CPU {cpu}, which has states 0 to {last}"),
        ("return -1", "select() at {t}: returned state -1 on CPU {cpu}, which has states 0 to {last}"),
        ("return 1.0", "select() at {t}: returned 1.0 (float); expected a state index (int) or a pair (state, stop_tick)"),
        ("return (1, 0)", "select() at {t}: returned stop_tick 0 (int); expected True or False"),
        ("return (1, True, 2)", "select() at {t}: returned (1, True, 2) (tuple); expected a state index (int) or a pair (state, stop_tick)"),
        ("return None", "select() at {t}: returned None (NoneType); expected a state index (int) or a pair (state, stop_tick)"),
    ],
)
def test_bad_state_answers(tmp_path, select, message):
    path = write_governor(tmp_path, f"""
    class Bad(CpuidleGovernor):
        def select(self, dev, next_timer_ns, latency_req_ns, tick_stopped):
            {select}
    """)
    with pytest.raises(GovernorError) as info:
        govlab.run(cpuidle=f"py:{path}:Bad", workload="periodic:tasks=2", duration="100ms")
    text = str(info.value)
    m = re.search(r"select\(\) at (\d+\.\d{9} s \(\d+ ns\)): returned .*?(?:on CPU (\d+))?", text)
    assert m, text
    cpu = re.search(r"on CPU (\d+)", text)
    last = len(govlab.run(duration="1ms").to_dict()["cpus"][0]["idle_states"]) - 1
    expected = message.format(t=m.group(1), cpu=cpu.group(1) if cpu else "?", last=last)
    assert text == f"cpuidle governor py:{path}:Bad: {expected}"


def test_exception_in_reflect_and_enable(tmp_path):
    path = write_governor(tmp_path, """
    class LateFail(CpuidleGovernor):
        def select(self, dev, next_timer_ns, latency_req_ns, tick_stopped):
            self.entered = dev.now_ns
            return 1

        def reflect(self, dev, state, measured_ns):
            raise RuntimeError(f"cpu {dev.cpu} slept {measured_ns} ns")

    class EarlyFail(CpuidleGovernor):
        def enable(self, dev):
            raise OSError("no device")
    """)
    with pytest.raises(GovernorError) as info:
        govlab.run(cpuidle=f"py:{path}:LateFail", workload="periodic:tasks=2", duration="100ms")
    first = str(info.value).splitlines()[0]
    m = re.fullmatch(rf"cpuidle governor py:{re.escape(str(path))}:LateFail: reflect\(\) at \d\.(\d{{9}}) s \((\d+) ns\): RuntimeError: cpu \d slept (\d+) ns", first)
    assert m, first
    assert int(m.group(1)) == int(m.group(2)) >= int(m.group(3)) > 0, "reflect's time is the wakeup: entry + measured"
    with pytest.raises(GovernorError, match=r"EarlyFail: enable\(\) at 0.000000000 s \(0 ns\): OSError: no device"):
        govlab.run(cpuidle=f"py:{path}:EarlyFail", duration="10ms")


def test_ctrl_c_in_governor_code_interrupts_the_run():
    class Interrupted(CpufreqGovernor):
        def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
            if time_ns > 20_000_000:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        govlab.run(cpufreq=Interrupted, workload="periodic:tasks=2", duration="100ms")


def test_cli_shows_the_error_and_the_traceback(cli, tmp_path):
    path = write_governor(tmp_path, RAISES_IN_TIMER)
    proc = cli("run", "--cpufreq", f"py:{path}:Raiser", "--workload", "periodic:tasks=2", "--duration", "100ms")
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0] == f"govlab: error: cpufreq governor py:{path}:Raiser: timer() at 0.003000000 s (3000000 ns): KeyError: 'missing'"
    assert lines[1] == "Traceback (most recent call last):"
    assert sum(f'File "{path}"' in line for line in lines) == 2
    assert not any("govlab" + os.sep in line for line in lines[1:]), "no frame of govlab's own code"


def test_cli_run_and_list(cli):
    spec = example("ondemand.py", "Ondemand", "up_threshold=80")
    proc = cli("run", "--cpufreq", spec, "--workload", BURSTY, "--duration", "300ms", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"cpufreq": "' + spec + '"' in proc.stdout
    proc = cli("list", "governors", "--py", str(EXAMPLES / "ladder.py"))
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^  py:\S+ladder\.py:Ladder\s+step deeper", proc.stdout, re.M)
    proc = cli("list", "platforms", "--py", str(EXAMPLES / "ladder.py"))
    assert proc.returncode == 2 and "--py lists governors" in proc.stderr


# --- experiments -------------------------------------------------------------------------


def test_experiment_identity_follows_the_governor_file(tmp_path):
    gov = tmp_path / "gov" / "od.py"
    gov.parent.mkdir()
    gov.write_text((EXAMPLES / "ondemand.py").read_text())
    exp = tmp_path / "e.toml"
    exp.write_text(textwrap.dedent("""
        [experiment]
        workload = "periodic:tasks=1"
        duration = "100ms"

        [[config]]
        name = "py"
        cpufreq = { name = "py:gov/od.py:Ondemand", up_threshold = 80 }
    """))
    (run,) = plan.runs(experiment.load(exp))
    assert run.kwargs["cpufreq"] == f"py:{gov}:Ondemand:up_threshold=80"
    ident = run.identity["cpufreq"]
    assert ident["spec"]["file"].startswith("sha256:") and str(gov) not in str(run.identity)
    assert ident["spec"]["params"] == {"up_threshold": "80"}
    assert ident["resolved"]["tunables"]["up_threshold"] == "80"

    moved = tmp_path / "moved"
    gov.parent.rename(moved)
    exp.write_text(exp.read_text().replace("gov/od.py", "moved/od.py"))
    (same,) = plan.runs(experiment.load(exp))
    assert same.key == run.key, "a moved file keeps its runs"
    with (moved / "od.py").open("a") as f:
        f.write("\n# edited\n")
    (edited,) = plan.runs(experiment.load(exp))
    assert edited.key != run.key, "an edited file gives new runs"


def test_experiment_reports_a_bad_governor_where_it_is(tmp_path):
    exp = tmp_path / "e.toml"
    exp.write_text(textwrap.dedent(f"""
        [experiment]
        workload = "periodic:tasks=1"

        [[config]]
        name = "py"
        cpufreq = "py:{EXAMPLES / 'ondemand.py'}:Ondemand:up_threshold=1"
    """))
    with pytest.raises(experiment.ExperimentError, match=r"e.toml:7: config\[1\].cpufreq: .*invalid value '1' for 'up_threshold'"):
        experiment.load(exp)


def test_ramp_prototype_jumps_to_the_top_below_100():
    """docs/write-a-governor.md's prototype: a lower threshold spends more time at the top, for more energy."""
    kw = dict(platform="skylake-e3-1240v5:hwp=off", workload="periodic:tasks=4,run_us=4000,period_us=10000", duration="2s", seed=1)
    runs = {t: govlab.run(cpufreq=example("ramp.py", "Ramp", f"ramp_threshold={t}"), **kw).to_dict() for t in (100, 40)}
    top = {t: max(float(k) for k, v in r["cpus"][0]["time_in_state"].items() if v > 0.5) for t, r in runs.items()}
    assert top[40] > top[100]
    assert runs[40]["energy_j"] > runs[100]["energy_j"]



REJECTED_GOVERNOR = """
class Remote(CpufreqGovernor):
    def update(self, policy, cpu, time_ns, util, max, flags):
        return None

    def update_rejected(self, policy, cpu, time_ns, flags):
        return {returned}
"""


@pytest.mark.parametrize("returned", ["None", "2000000"])
def test_update_rejected_sees_remote_calls_and_returns_nothing(tmp_path, returned):
    """On the Broadwell-EP the SATA completions land on CPU 0 and wake readers elsewhere: their hook calls are
    remote, and intel_cpufreq's one-CPU policies turn them away after the governor's bookkeeping
    (update_rejected), which may keep state but changes no frequency."""
    path = write_governor(tmp_path, REJECTED_GOVERNOR.format(returned=returned))
    run = lambda: govlab.run(cpufreq=f"py:{path}:Remote", platform=BROADWELL, workload=MIX, duration="30ms")  # noqa: E731
    if returned == "None":
        assert run().to_dict()["events"] > 0
        return
    with pytest.raises(GovernorError) as info:
        run()
    text = str(info.value)
    assert re.fullmatch(rf"cpufreq governor py:{re.escape(str(path))}:Remote: update_rejected\(\) at \d\.\d{{9}} s \(\d+ ns\): "
                        r"returned 2000000 \(int\); expected None \(a rejected call changes no frequency\)", text), text
