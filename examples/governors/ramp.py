"""ramp: schedutil's frequency formula, plus "ramp up faster".

Not a kernel governor: the prototype of docs/write-a-governor.md, which
walks from this file to the same governor in Rust. The idea comes from the
out-of-tree "ramp up faster" patch discussed at OSPM 2020
(OSPM 2020, "Frequency scaling in the datacenter"): when a CPU's utilisation crosses a threshold,
jump to the top frequency instead of following the utilisation gradually.

On every scheduler hook call, for the busiest CPU of the policy:

1. util at or above ramp_threshold % of capacity: policy->max;
2. otherwise schedutil's formula, f = cpuinfo.max × min(1.25 × util,
   capacity) / capacity, resolved to the lowest table frequency at or above
   it (RELATION_L);
3. at most one change per rate_limit_us.
"""

from govlab.governors import CpufreqGovernor, Tunable


class Ramp(CpufreqGovernor):
    """schedutil's formula, but the top frequency once util crosses ramp_threshold"""

    ramp_threshold = Tunable(60, "utilisation (% of capacity) from which the top frequency is used; 100 = never", min=1, max=100)
    rate_limit_us = Tunable(1000, "minimum time between frequency changes, µs", min=0, max=2**32 - 1)

    def __init__(self, **settings):
        super().__init__(**settings)
        self.last_change_ns = {}

    def start(self, policy):
        self.last_change_ns[policy.id] = None

    def update(self, policy, cpu, time_ns, util, cap, flags):
        last = self.last_change_ns[policy.id]
        if last is not None and time_ns - last < self.rate_limit_us * 1000:
            return None
        util = max(policy.util(j) for j in policy.cpus)
        if util * 100 >= self.ramp_threshold * cap:
            target = policy.max_khz
        else:
            perf = min(util + (util >> 2), cap)
            target = policy.cpuinfo_max_khz * perf // cap
            target = next((f for f in policy.opps if f >= target), policy.opps[-1])
            target = min(max(target, policy.min_khz), policy.max_khz)
        if target == policy.cur_khz:
            return None
        self.last_change_ns[policy.id] = time_ns
        return target
