"""performance in Python: the built-in `performance`, line for line.

Models Linux v6.8 drivers/cpufreq/cpufreq_performance.c, as govlab's Rust
version does (crates/govlab-core/src/cpufreq/performance.rs): on start, ask
for policy->max with RELATION_H; never look at the load.
"""

from govlab.governors import CpufreqGovernor


class Performance(CpufreqGovernor):
    """always the highest allowed frequency (Python)"""

    models = "Linux v6.8 drivers/cpufreq/cpufreq_performance.c"

    def start(self, policy):
        policy.set_target(policy.max_khz, "H")
