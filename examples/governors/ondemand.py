"""ondemand in Python: the built-in `ondemand`, line for line.

Models Linux v6.8 drivers/cpufreq/cpufreq_ondemand.c on the sampling code of
cpufreq_governor.c, as govlab's Rust version does
(crates/govlab-core/src/cpufreq/ondemand.rs and dbs.rs, whose module docs
explain every step and every number). On the same platform, workload and
seed it asks for the same frequencies at the same instants as the built-in
governor, so the runs are identical (python/tests/test_pygov.py checks it).

The idea: ondemand does not predict, it looks back. Every sampling period
(a deferrable timer, so idle CPUs are not sampled) it measures the busiest
CPU's busy share of the window. Above up_threshold it jumps to the top and
stretches the next period by sampling_down_factor; otherwise it asks for a
frequency proportional to the load over the hardware range. After a long
idle the first sample reuses the previous load once (copy_prev_load, the
2014 patch for bursty latency-sensitive loads). powersave_bias lowers the
target by alternating two table frequencies within one period.

    govlab run --cpufreq py:examples/governors/ondemand.py:Ondemand:up_threshold=80
"""

from govlab.exceptions import InvalidValueError
from govlab.governors import CpufreqGovernor, Tunable

# cpufreq core (include/linux/cpufreq.h, v6.8)
LATENCY_MULTIPLIER = 1000  # transition delay, µs, per µs of transition latency
TRANSITION_DELAY_CAP_US = 10_000
INTEL_CPUFREQ_TRANSITION_DELAY_US = 500
INTEL_CPUFREQ_TRANSITION_DELAY_HWP_US = 5000
# cpufreq_governor.c: the shortest sampling period, in ticks
CPUFREQ_DBS_MIN_SAMPLING_TICKS = 2
# cpufreq_ondemand.c
MIN_FREQUENCY_UP_THRESHOLD = 11
MAX_FREQUENCY_UP_THRESHOLD = 100
MICRO_FREQUENCY_UP_THRESHOLD = 95
MAX_SAMPLING_DOWN_FACTOR = 100_000
MAX_POWERSAVE_BIAS = 1000
U32_MAX = 2**32 - 1


def policy_transition_delay_us(platform):
    """cpufreq_policy_transition_delay_us for the first policy (v6.8 rule)."""
    if platform.driver == "intel_pstate":
        return INTEL_CPUFREQ_TRANSITION_DELAY_HWP_US if platform.hwp else INTEL_CPUFREQ_TRANSITION_DELAY_US
    latency_us = platform.policies[0].transition_latency_ns // 1000
    if latency_us == 0:
        return LATENCY_MULTIPLIER
    return min(latency_us * LATENCY_MULTIPLIER, TRANSITION_DELAY_CAP_US)


def frequency_table_target(policy, khz, relation):
    """The table frequency a request ends at: clamp to the limits, then pick by relation."""
    target = min(max(khz, policy.min_khz), policy.max_khz)
    opps = policy.opps
    at_least = next((f for f in opps if f >= target), opps[-1])
    at_most = next((f for f in reversed(opps) if f <= target), opps[0])
    if relation == "L":
        return at_least
    if relation == "H":
        return at_most
    return at_most if target - at_most < at_least - target else at_least


class CpuDbs:
    """Per-CPU sampling state (struct cpu_dbs_info)."""

    __slots__ = ("cpu", "prev_cpu_idle_ns", "prev_update_time_ns", "prev_load")

    def __init__(self, cpu, idle_ns, now_ns):
        self.cpu = cpu
        self.prev_cpu_idle_ns = idle_ns
        self.prev_update_time_ns = now_ns
        self.prev_load = 0


class PolicyDbs:
    """Per-policy state (policy_dbs_info with od_policy_dbs_info)."""

    def __init__(self, cpus, sample_delay_ns):
        self.cpus = cpus
        self.rate_mult = 1
        self.sample_delay_ns = sample_delay_ns
        self.freq_lo_khz = 0
        self.freq_lo_delay_us = 0
        self.freq_hi_delay_us = 0
        self.sub_sample = False


class Ondemand(CpufreqGovernor):
    """load above up_threshold: top frequency; else proportional to the busiest CPU's load (Python)"""

    models = "Linux v6.8 drivers/cpufreq/cpufreq_ondemand.c + cpufreq_governor.c"

    sampling_rate = Tunable(
        None, "sampling period in µs; at least 2 ticks (smaller is rejected)",
        type=int, max=U32_MAX, default_text="max(2 ticks, transition delay) µs",
    )
    up_threshold = Tunable(
        MICRO_FREQUENCY_UP_THRESHOLD, "load (%) above which the top frequency is used; 11 to 100",
        min=MIN_FREQUENCY_UP_THRESHOLD, max=MAX_FREQUENCY_UP_THRESHOLD,
    )
    sampling_down_factor = Tunable(
        1, "sampling period multiplier while at the top frequency; 1 to 100000", min=1, max=MAX_SAMPLING_DOWN_FACTOR
    )
    powersave_bias = Tunable(
        0, "per-mille frequency reduction, by alternating two OPPs; values above 1000 are clamped",
        min=0, max=MAX_POWERSAVE_BIAS, clamp=True,
    )
    io_is_busy = Tunable(
        None, "count iowait time as busy; any non-zero value means 1",
        type=int, min=0, max=1, clamp=True, default_text="1 on the Intel drivers, else 0",
    )
    ignore_nice_load = Tunable(
        0, "leave nice time out of the load; clamped to 1 (no effect yet: no nice accounting)", min=0, max=1, clamp=True
    )
    copy_prev_load = Tunable(True, "reuse the previous load once after a long idle (2014 rule); off = before it")

    def __init__(self, **settings):
        super().__init__(**settings)
        self.policies = {}

    def init(self, platform):
        """od_init and cpufreq_dbs_governor_init: the machine-dependent defaults."""
        min_rate_us = CPUFREQ_DBS_MIN_SAMPLING_TICKS * platform.tick_ns // 1000
        if self.sampling_rate is None:
            self.sampling_rate = max(min_rate_us, policy_transition_delay_us(platform))
        elif self.sampling_rate < min_rate_us:
            raise InvalidValueError(
                f"invalid value '{self.sampling_rate}' for 'sampling_rate': at least 2 ticks, {min_rate_us} µs on this machine"
            )
        # From v4.6 the samples come from the scheduler's hook, not a timer.
        self.from_hook = platform.kernel.has("dbs_util_hook")
        if self.io_is_busy is None:
            # should_io_be_busy: Intel family 6; the Intel drivers stand for it.
            self.io_is_busy = int(platform.driver in ("intel_pstate", "acpi-cpufreq"))

    # -- the shared dbs cycle (cpufreq_governor.c) ------------------------------

    def start(self, policy):
        """cpufreq_dbs_governor_start the first time (at t = 0), the limits callback after."""
        dbs = self.policies.get(policy.id)
        if dbs is not None:
            if policy.max_khz < policy.cur_khz:
                policy.set_target(policy.max_khz, "H")
            elif policy.min_khz > policy.cur_khz:
                policy.set_target(policy.min_khz, "L")
            dbs.sample_delay_ns = 0
            if not self.from_hook:
                policy.arm_timer(0)
            return None
        cpus = [CpuDbs(cpu, self.cpu_idle_ns(policy, cpu, 0), 0) for cpu in policy.cpus]
        dbs = PolicyDbs(cpus, self.sampling_rate * 1000)
        self.policies[policy.id] = dbs
        dbs.last_sample_time_ns = 0
        if not self.from_hook:
            policy.arm_timer(dbs.sample_delay_ns)
        return None

    def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
        """dbs_update_util_handler (v4.6+): sample once sample_delay_ns has passed since the last sample."""
        if not self.from_hook:
            return None
        dbs = self.policies[policy.id]
        if time_ns - dbs.last_sample_time_ns < dbs.sample_delay_ns:
            return None
        dbs.last_sample_time_ns = time_ns
        delay_us = self.od_dbs_update(dbs, policy, time_ns)
        dbs.sample_delay_ns = delay_us * 1000
        return None

    def timer(self, policy, time_ns):
        """dbs_work_handler: one sample, then the timer for the next."""
        dbs = self.policies[policy.id]
        delay_us = self.od_dbs_update(dbs, policy, time_ns)
        dbs.sample_delay_ns = delay_us * 1000
        policy.arm_timer(dbs.sample_delay_ns)

    def cpu_idle_ns(self, policy, cpu, now_ns):
        """get_cpu_idle_time; iowait counts as busy with io_is_busy."""
        idle = policy.idle_ns(cpu, now_ns)
        if self.io_is_busy:
            idle = max(0, idle - policy.iowait_ns(cpu, now_ns))
        return idle

    def dbs_update(self, dbs, policy, now_ns):
        """The busiest CPU's load over the window, %, with the long-idle rule."""
        period_ns = max(1, self.sampling_rate * dbs.rate_mult * 1000)
        max_load = 0
        for j in dbs.cpus:
            cur_idle_ns = self.cpu_idle_ns(policy, j.cpu, now_ns)
            time_elapsed_ns = max(0, now_ns - j.prev_update_time_ns)
            j.prev_update_time_ns = now_ns
            idle_time_ns = max(0, cur_idle_ns - j.prev_cpu_idle_ns)
            j.prev_cpu_idle_ns = cur_idle_ns
            if time_elapsed_ns == 0:
                load = j.prev_load
            elif self.copy_prev_load and idle_time_ns > 2 * period_ns and j.prev_load:
                load, j.prev_load = j.prev_load, 0
            else:
                busy_ns = max(0, time_elapsed_ns - idle_time_ns)
                load = j.prev_load = 100 * busy_ns // time_elapsed_ns
            max_load = max(max_load, load)
        return max_load

    # -- ondemand's decision (cpufreq_ondemand.c) --------------------------------

    def od_dbs_update(self, dbs, policy, now_ns):
        """The second half of a powersave_bias split, or a full sample; the delay to the next, µs."""
        sub_sample, dbs.sub_sample = dbs.sub_sample, False
        if sub_sample and dbs.sample_delay_ns > 0:
            policy.set_target(dbs.freq_lo_khz, "H")
            return dbs.freq_lo_delay_us
        self.od_update(dbs, policy, now_ns)
        if dbs.freq_lo_khz:
            dbs.sub_sample = True
            return dbs.freq_hi_delay_us
        return self.sampling_rate * dbs.rate_mult

    def od_update(self, dbs, policy, now_ns):
        load = self.dbs_update(dbs, policy, now_ns)
        dbs.freq_lo_khz = 0
        if load > self.up_threshold:
            if policy.cur_khz < policy.max_khz:
                dbs.rate_mult = self.sampling_down_factor
            self.dbs_freq_increase(dbs, policy, policy.max_khz)
            return
        min_f, max_f = policy.cpuinfo_min_khz, policy.cpuinfo_max_khz
        freq_next = min_f + load * max(0, max_f - min_f) // 100
        dbs.rate_mult = 1
        if self.powersave_bias:
            freq_next = self.powersave_bias_target(dbs, policy, freq_next, "L")
        policy.set_target(min(max(freq_next, policy.min_khz), policy.max_khz), "C")

    def dbs_freq_increase(self, dbs, policy, freq):
        if self.powersave_bias:
            freq = self.powersave_bias_target(dbs, policy, freq, "H")
            policy.set_target(freq, "L")
        elif policy.cur_khz != policy.max_khz:
            policy.set_target(freq, "H")

    def powersave_bias_target(self, dbs, policy, freq_next, relation):
        """generic_powersave_bias_target: split one period between two OPPs around the biased target."""
        freq_req = frequency_table_target(policy, freq_next, relation)
        freq_avg = freq_req - freq_req * self.powersave_bias // 1000
        freq_lo = frequency_table_target(policy, freq_avg, "H")
        freq_hi = frequency_table_target(policy, freq_avg, "L")
        if freq_hi == freq_lo:
            dbs.freq_lo_khz = 0
            dbs.freq_lo_delay_us = 0
            return freq_lo
        rate_us = self.sampling_rate
        span = freq_hi - freq_lo
        delay_hi_us = (max(0, freq_avg - freq_lo) * rate_us + span // 2) // span
        dbs.freq_hi_delay_us = delay_hi_us
        dbs.freq_lo_khz = freq_lo
        dbs.freq_lo_delay_us = max(0, rate_us - delay_hi_us)
        return freq_hi
