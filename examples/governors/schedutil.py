"""schedutil in Python: the built-in `schedutil`, line for line.

Models Linux v6.8 kernel/sched/cpufreq_schedutil.c, as govlab's Rust version
does (crates/govlab-core/src/cpufreq/schedutil.rs, whose module doc explains
each step). The frequency formula is

    next_f = cpuinfo.max_freq × min(1.25 × util, capacity) / capacity

resolved to the lowest table frequency at or above it (RELATION_L), at most
once per rate_limit_us. To give the built-in's runs exactly, the rest of its
logic is here too: the IO-wait boost (gradual, or the v4.9 "max"), the
busy-CPU hold that ignores decreases until the CPU idles, "unchanged: skip"
without restarting the rate-limit clock, and shared policies taking the
largest request of their CPUs.
"""

from bisect import bisect_left

from govlab.governors import SCHED_CAPACITY_SCALE, SCHED_CPUFREQ_IOWAIT, CpufreqGovernor, Tunable

SCHED_CAPACITY_SHIFT = 10
IOWAIT_BOOST_MIN = SCHED_CAPACITY_SCALE // 8  # since v5.2
INTEL_CPUFREQ_TRANSITION_DELAY_US = 500
INTEL_CPUFREQ_TRANSITION_DELAY_HWP_US = 5000
LATENCY_MULTIPLIER = 1000
TRANSITION_DELAY_CAP_US = 10_000


def policy_transition_delay_us(platform):
    """cpufreq_policy_transition_delay_us for the first policy (v6.8 rule)."""
    if platform.driver == "intel_pstate":
        return INTEL_CPUFREQ_TRANSITION_DELAY_HWP_US if platform.hwp else INTEL_CPUFREQ_TRANSITION_DELAY_US
    latency_us = platform.policies[0].transition_latency_ns // 1000
    if latency_us == 0:
        return LATENCY_MULTIPLIER
    return min(latency_us * LATENCY_MULTIPLIER, TRANSITION_DELAY_CAP_US)


def resolve_l(policy, khz):
    """cpufreq_driver_resolve_freq: the lowest table frequency at or above, within the limits."""
    lo, hi = policy.min_khz, policy.max_khz
    target = khz if khz > lo else lo
    if target > hi:
        target = hi
    opps = policy.opps  # ascending
    i = bisect_left(opps, target)
    return opps[i] if i < len(opps) else opps[-1]


class SugovCpu:
    """Per-CPU state (struct sugov_cpu)."""

    __slots__ = ("cpu", "gradual", "last_update_ns", "util", "iowait_boost", "iowait_boost_pending", "saved_idle_calls", "saved_idle_ns")

    def __init__(self, cpu, gradual):
        self.cpu = cpu
        # The IO-wait boost: gradual (v5.2+) or max (v4.9).
        self.gradual = gradual
        self.last_update_ns = 0
        self.util = 0
        self.iowait_boost = 0
        self.iowait_boost_pending = False
        self.saved_idle_calls = 0
        self.saved_idle_ns = 0

    # sugov_iowait_reset is written out in both below (a Python call costs
    # more than its lines): a boost held across more than a tick of idle
    # restarts, at IOWAIT_BOOST_MIN if this call asks for a boost, else at 0.

    def boost(self, time_ns, tick_ns, flags):
        """sugov_iowait_boost: bookkeeping on every hook call."""
        set_iowait_boost = (flags & SCHED_CPUFREQ_IOWAIT) != 0
        if self.gradual:
            if self.iowait_boost and time_ns - self.last_update_ns > tick_ns:
                self.iowait_boost = IOWAIT_BOOST_MIN if set_iowait_boost else 0
                self.iowait_boost_pending = set_iowait_boost
                return
            if not set_iowait_boost or self.iowait_boost_pending:
                return
            self.iowait_boost_pending = True
            self.iowait_boost = min(self.iowait_boost << 1, SCHED_CAPACITY_SCALE) if self.iowait_boost else IOWAIT_BOOST_MIN
        elif set_iowait_boost:
            self.iowait_boost = SCHED_CAPACITY_SCALE
        elif self.iowait_boost and time_ns - self.last_update_ns > tick_ns:
            self.iowait_boost = 0

    def iowait_apply(self, time_ns, tick_ns, max_cap):
        """sugov_iowait_apply: the boost this evaluation uses; decays it."""
        if not self.iowait_boost:
            return 0
        if time_ns - self.last_update_ns > tick_ns:
            self.iowait_boost = 0
            self.iowait_boost_pending = False
            return 0
        if self.gradual:
            if not self.iowait_boost_pending:
                self.iowait_boost >>= 1
                if self.iowait_boost < IOWAIT_BOOST_MIN:
                    self.iowait_boost = 0
                    return 0
            self.iowait_boost_pending = False
            boost = self.iowait_boost
        else:
            boost = self.iowait_boost
            self.iowait_boost >>= 1
        return (boost * max_cap) >> SCHED_CAPACITY_SHIFT

    def get_util(self, policy, cap, boost, runnable_boost):
        """sugov_get_util with sugov_effective_cpu_perf: util plus 25 %, capped at
        capacity `cap` (this CPU's).

        From v6.5 the CFS utilisation is cpu_util_cfs_boost (runnable boosting,
        7d0583cf9ec7): the runqueue's runnable_avg raises it.
        """
        cfs = policy.util_boost(self.cpu) if runnable_boost else policy.util(self.cpu)
        # min() and max() written out: this runs on most hook calls.
        util = cfs if cfs < cap else cap
        if boost > util:
            util = boost
        util += util >> 2
        self.util = util if util < cap else cap


class SugovPolicy:
    """Per-policy state (struct sugov_policy)."""

    def __init__(self, policy, rate_limit_us, gradual):
        self.freq_update_delay_ns = rate_limit_us * 1000
        # What the policy view says and never changes, read once.
        self.tick_ns = policy.tick_ns
        self.cpuinfo_max_khz = policy.cpuinfo_max_khz
        self.last_freq_update_time_ns = 0
        self.next_freq_khz = 0
        self.cached_raw_freq_khz = 0
        self.limits_changed = False
        self.need_freq_update = False
        self.cpus = [SugovCpu(c, gradual) for c in policy.cpus]
        self.index = {c: i for i, c in enumerate(policy.cpus)}
        self.shared = len(self.cpus) > 1

    # The three steps below serve the shared path; the single-CPU path in
    # Schedutil.update has them written out.

    def should_update_freq(self, time_ns):
        if self.limits_changed:
            self.limits_changed = False
            self.need_freq_update = True
            return True
        return time_ns - self.last_freq_update_time_ns >= self.freq_update_delay_ns

    def get_next_freq(self, policy, util, max_cap):
        """The formula: cpuinfo.max_freq × perf / capacity, resolved with RELATION_L."""
        freq = self.cpuinfo_max_khz * util // (max_cap if max_cap > 1 else 1)
        if freq == self.cached_raw_freq_khz and not self.need_freq_update:
            return self.next_freq_khz
        self.cached_raw_freq_khz = freq
        return resolve_l(policy, freq)

    def update_next_freq(self, time_ns, next_freq_khz):
        if self.need_freq_update:
            self.need_freq_update = False
        elif self.next_freq_khz == next_freq_khz:
            return False
        self.next_freq_khz = next_freq_khz
        self.last_freq_update_time_ns = time_ns
        return True


class Schedutil(CpufreqGovernor):
    """frequency = 1.25 × max × util / capacity, rate limited, with IO-wait boost (Python)"""

    models = "Linux v6.8 kernel/sched/cpufreq_schedutil.c"

    rate_limit_us = Tunable(
        None, "minimum time between frequency changes, µs; 0 to 4294967295",
        type=int, min=0, max=2**32 - 1, default_text="the policy's transition delay (µs)",
    )
    iowait_boost = Tunable("gradual", "gradual (v5.2+: 128, doubling, halving) or max (v4.9)", choices=("gradual", "max"))

    def __init__(self, **settings):
        super().__init__(**settings)
        self.policies = {}
        self.runnable_boost = True

    def init(self, platform):
        self.runnable_boost = platform.kernel.has("schedutil_runnable_boost")
        if self.rate_limit_us is None:
            self.rate_limit_us = policy_transition_delay_us(platform)

    def start(self, policy):
        sg = self.policies.get(policy.id)
        if sg is None:
            self.policies[policy.id] = SugovPolicy(policy, self.rate_limit_us, self.iowait_boost == "gradual")
        else:
            sg.limits_changed = True

    def update(self, policy, cpu, time_ns, util, max, flags):  # noqa: A002
        """The hook: sugov_update_single_freq here, sugov_update_shared for a shared policy.

        The single-CPU path runs on most scheduler events, and a Python call
        costs about as much as ten of its lines, so its steps are written out
        here, each under the name of the kernel function it is, rather than
        called.
        """
        sg = self.policies[policy.id]
        if sg.shared:
            return self.update_shared(sg, policy, sg.cpus[sg.index[cpu]], time_ns, flags)
        c = sg.cpus[0]
        # sugov_iowait_boost; without an IO wait now and no boost held it
        # changes nothing.
        if c.iowait_boost or flags & SCHED_CPUFREQ_IOWAIT:
            c.boost(time_ns, sg.tick_ns, flags)
        c.last_update_ns = time_ns
        # sugov_should_update_freq
        if sg.limits_changed:
            sg.limits_changed = False
            sg.need_freq_update = True
        elif time_ns - sg.last_freq_update_time_ns < sg.freq_update_delay_ns:
            return None
        need_freq_update = sg.need_freq_update
        # sugov_iowait_apply, then sugov_get_util with
        # sugov_effective_cpu_perf: util plus 25 %, capped at this CPU's
        # capacity. From v6.5 the CFS utilisation is cpu_util_cfs_boost
        # (runnable boosting, 7d0583cf9ec7).
        boost = c.iowait_apply(time_ns, sg.tick_ns, max) if c.iowait_boost else 0
        util = policy.util_boost(cpu) if self.runnable_boost else policy.util(cpu)
        if util > max:
            util = max
        if boost > util:
            util = boost
        util += util >> 2
        if util > max:
            util = max
        # get_next_freq: cpuinfo.max_freq × util / capacity, resolved with
        # RELATION_L unless it is the raw frequency of last time.
        cached_freq = sg.cached_raw_freq_khz
        freq = sg.cpuinfo_max_khz * util // (max if max > 1 else 1)
        if freq == cached_freq and not need_freq_update:
            next_f = sg.next_freq_khz
        else:
            sg.cached_raw_freq_khz = freq
            next_f = resolve_l(policy, freq)
        # sugov_cpu_is_busy: no idle entry since the previous evaluation;
        # then no decrease while the CPU has not idled.
        idle_calls = policy.idle_calls(cpu)
        if idle_calls is not None:
            busy = idle_calls == c.saved_idle_calls
            c.saved_idle_calls = idle_calls
        else:
            idle_ns = policy.idle_ns(cpu, time_ns)
            busy = idle_ns == c.saved_idle_ns
            c.saved_idle_ns = idle_ns
        if busy and next_f < sg.next_freq_khz and not need_freq_update:
            next_f = sg.next_freq_khz
            sg.cached_raw_freq_khz = cached_freq
        # sugov_update_next_freq: "unchanged: skip", without restarting the
        # rate-limit clock.
        if need_freq_update:
            sg.need_freq_update = False
        elif next_f == sg.next_freq_khz:
            return None
        sg.next_freq_khz = next_f
        sg.last_freq_update_time_ns = time_ns
        return next_f

    def update_rejected(self, policy, cpu, time_ns, flags):
        """A remote call turned away (cpufreq_this_cpu_can_update()) after
        sugov_update_single_common's or sugov_update_shared's bookkeeping:
        the IO-wait boost and last_update are kept."""
        sg = self.policies[policy.id]
        c = sg.cpus[sg.index[cpu]] if sg.shared else sg.cpus[0]
        if sg.shared or c.iowait_boost or flags & SCHED_CPUFREQ_IOWAIT:
            c.boost(time_ns, sg.tick_ns, flags)
        c.last_update_ns = time_ns

    def update_shared(self, sg, policy, c, time_ns, flags):
        tick_ns = sg.tick_ns
        c.boost(time_ns, tick_ns, flags)
        c.last_update_ns = time_ns
        if not sg.should_update_freq(time_ns):
            return None
        max_cap = policy.capacity(c.cpu)
        util = 0
        for j in sg.cpus:
            j.get_util(policy, policy.capacity(j.cpu), j.iowait_apply(time_ns, tick_ns, max_cap), self.runnable_boost)
            util = max(util, j.util)
        next_f = sg.get_next_freq(policy, util, max_cap)
        return next_f if sg.update_next_freq(time_ns, next_f) else None
