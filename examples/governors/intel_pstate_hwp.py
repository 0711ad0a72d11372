"""intel_pstate's active mode with HWP, in Python: the built-in `intel_pstate`, line for line.

Models Linux v6.8 drivers/cpufreq/intel_pstate.c with HWP on, as govlab's
Rust version does (crates/govlab-core/src/cpufreq/intel_pstate.rs, whose
module doc explains each step): intel_pstate_hwp_set and the HWP dynamic
boost (intel_pstate_update_util_hwp, intel_pstate_hwp_boost_up/down, from
the 2018 series, v4.18), plus govlab's `hwp_boost_migration` switch (the
migration boost of that series' first RFC). On the same platform, workload
and seed it writes the same HWP requests at the same instants as the
built-in governor, so the runs are identical (python/tests/test_pygov.py
checks it). Without HWP intel_pstate picks P-states itself; that half is
left out here.

The idea: with HWP the OS does not pick frequencies. It writes each CPU a
request, MSR_HWP_REQUEST, and the hardware chooses inside it:

1. ``policy=powersave``: min = the policy's lowest level, max = its highest,
   desired 0 (the hardware chooses), EPP from ``epp`` (the firmware's 128
   unless set); ``policy=performance``: min = max = the highest, EPP 0.
2. Dynamic boost (``hwp_dynamic_boost``, on by default on server PM
   profiles): an IO wakeup that comes within two ticks of the previous one
   raises the request's minimum one step, to half way to the guaranteed
   level (P1), then to P1, then to the maximum; a hook call more than 3 ms
   after the previous one restores the request.
3. CPUs sharing a clock: the hardware honours the highest minimum (and
   maximum) and the lowest EPP of their requests.

Levels are HWP performance levels (P-state ratios: 100 MHz each here).

    govlab run --cpufreq py:examples/governors/intel_pstate_hwp.py:IntelPstateHwp:epp=255
"""

from govlab.exceptions import InvalidValueError, UnsupportedError
from govlab.governors import SCHED_CPUFREQ_IOWAIT, SCHED_CPUFREQ_MIGRATION, CpufreqGovernor, HwpRequest, Tunable

# intel_pstate.c (v6.8): how long a raised minimum outlives the last hook call
# ("3ms is based on experiments on some workloads").
HWP_BOOST_HOLD_TIME_NS = 3_000_000
# The EPP firmware leaves on most platforms (balance_performance).
HWP_EPP_FIRMWARE_DEFAULT = 0x80


def acpi_pm_profile_server(profile):
    """intel_pstate_acpi_pm_profile_server()."""
    return profile in ("enterprise-server", "performance-server")


class CpuData:
    """Per-CPU state (struct cpudata, the HWP parts)."""

    __slots__ = ("cpu", "min_perf_ratio", "max_perf_ratio", "req_min_perf", "req_max_perf", "req_epp",
                 "hwp_boost_min", "last_update_ns", "last_io_update_ns")

    def __init__(self, cpu, caps):
        self.cpu = cpu
        self.min_perf_ratio = caps.lowest_perf
        self.max_perf_ratio = caps.highest_perf
        # hwp_req_cached: the request the OS set, without boost.
        self.req_min_perf = caps.lowest_perf
        self.req_max_perf = caps.highest_perf
        self.req_epp = HWP_EPP_FIRMWARE_DEFAULT
        self.hwp_boost_min = 0
        self.last_update_ns = 0
        self.last_io_update_ns = 0

    def update_perf_limits(self, policy, khz_per_perf):
        """intel_pstate_update_perf_limits: the policy's kHz limits as levels."""
        max_policy_perf = policy.max_khz // khz_per_perf
        if policy.max_khz == policy.min_khz:
            min_policy_perf = max_policy_perf
        else:
            min_policy_perf = min(policy.min_khz // khz_per_perf, max_policy_perf)
        self.min_perf_ratio = min_policy_perf
        self.max_perf_ratio = max(max_policy_perf, min_policy_perf)

    def hwp_boost_up(self, p1, time_ns):
        """intel_pstate_hwp_boost_up: one step up; True if the request changed."""
        max_limit, min_limit = self.req_max_perf, self.req_min_perf
        if max_limit == min_limit or self.hwp_boost_min >= max_limit:
            return False
        if self.hwp_boost_min == 0:
            self.hwp_boost_min = min_limit
        boost_level1 = (p1 + min_limit) >> 1
        if self.hwp_boost_min < boost_level1:
            self.hwp_boost_min = boost_level1
        elif self.hwp_boost_min < p1:
            self.hwp_boost_min = p1
        elif self.hwp_boost_min == p1 and max_limit != p1:
            self.hwp_boost_min = max_limit
        else:
            return False
        self.last_update_ns = time_ns
        return True

    def hwp_boost_down(self, time_ns):
        """intel_pstate_hwp_boost_down: drop the boost after the hold time; True if the request changed."""
        expired = self.hwp_boost_min != 0 and time_ns > self.last_update_ns + HWP_BOOST_HOLD_TIME_NS
        if expired:
            self.hwp_boost_min = 0
        self.last_update_ns = time_ns
        return expired


class PolicyData:
    """Per-policy state: its CPUs, and the request last written."""

    def __init__(self, policy):
        caps = policy.hwp
        self.khz_per_perf = caps.khz_per_perf
        self.p1 = caps.guaranteed_perf
        self.cpus = [CpuData(c, caps) for c in policy.cpus]
        self.index = {c: j for j, c in enumerate(policy.cpus)}
        self.written = None

    def write_hwp(self):
        """MSR_HWP_REQUEST: the highest minimum and maximum, the lowest EPP; None if unchanged."""
        min_perf = max(max(c.req_min_perf, c.hwp_boost_min) for c in self.cpus)
        max_perf = max(c.req_max_perf for c in self.cpus)
        epp = min(c.req_epp for c in self.cpus)
        req = HwpRequest(min_perf, max_perf, 0, epp)
        if req == self.written:
            return None
        self.written = req
        return req


class IntelPstateHwp(CpufreqGovernor):
    """intel_pstate's active mode with HWP: requests within the limits, EPP, dynamic boost (Python)"""

    models = "Linux v6.8 drivers/cpufreq/intel_pstate.c (active mode, HWP); 2018 HWP boost"
    driver = "intel_pstate"

    policy = Tunable("powersave", "powersave (HWP within the limits) or performance (HWP min = max)",
                     choices=("powersave", "performance"))
    epp = Tunable(HWP_EPP_FIRMWARE_DEFAULT, "energy_performance_preference: 0 (performance) to 255 (power)", min=0, max=255,
                  default_text="128 (firmware's balance_performance)")
    hwp_dynamic_boost = Tunable(None, "raise the HWP minimum on IO wakeups", type=bool,
                                default_text="on on server PM profiles, else off")
    hwp_boost_migration = Tunable(False, "govlab switch: also boost when a task migrates to the CPU (RFC v1)")

    def __init__(self, **settings):
        super().__init__(**settings)
        self.policies = {}

    def init(self, platform):
        if not platform.hwp:
            raise UnsupportedError(f"platform {platform.name} has no HWP on; this port covers intel_pstate with HWP only")
        if self.hwp_dynamic_boost is None:
            self.hwp_dynamic_boost = acpi_pm_profile_server(platform.acpi_pm_profile)
        if self.policy == "performance":
            if self.epp not in (0, HWP_EPP_FIRMWARE_DEFAULT):
                raise InvalidValueError(f"invalid value '{self.epp}' for 'epp': 0 under policy=performance (the kernel refuses other values there)")
            self.epp = 0

    @property
    def uses_util_hook(self):
        return self.policy == "powersave" and self.hwp_dynamic_boost

    def start(self, policy):
        """intel_pstate_cpu_init, then intel_pstate_hwp_set with the policy's limits."""
        pd = self.policies.get(policy.id)
        if pd is None:
            pd = self.policies[policy.id] = PolicyData(policy)
        for c in pd.cpus:
            c.update_perf_limits(policy, pd.khz_per_perf)
            if self.policy == "performance":
                c.req_min_perf, c.req_epp = c.max_perf_ratio, 0
            else:
                c.req_min_perf, c.req_epp = c.min_perf_ratio, self.epp
            c.req_max_perf = c.max_perf_ratio
        return pd.write_hwp()

    def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
        """intel_pstate_update_util_hwp: the dynamic boost."""
        pd = self.policies[policy.id]
        c = pd.cpus[pd.index[cpu]]
        if flags & SCHED_CPUFREQ_IOWAIT:
            do_io = time_ns < c.last_io_update_ns + 2 * policy.tick_ns
            c.last_io_update_ns = time_ns
            changed = do_io and c.hwp_boost_up(pd.p1, time_ns)
        elif self.hwp_boost_migration and flags & SCHED_CPUFREQ_MIGRATION:
            changed = c.hwp_boost_up(pd.p1, time_ns)
        else:
            changed = c.hwp_boost_down(time_ns)
        return pd.write_hwp() if changed else None
