"""ladder in Python: the built-in `ladder` cpuidle governor, line for line.

Models Linux v6.8 drivers/cpuidle/governors/ladder.c, as govlab's Rust
version does (crates/govlab-core/src/cpuidle/ladder.rs). On the same seed it
picks the same states as the built-in governor (python/tests/test_pygov.py),
and `make bench` times it against the Rust one.

The idea: remember the state used last; after PROMOTION_COUNT idles in a row
that outlasted its exit latency, step one state deeper; after
DEMOTION_COUNT shorter ones, one shallower. A state that became unusable
(disabled, or over the latency limit) is left at once. Moving resets the
counters of the state left. The polling state is never the ladder's floor.
"""

from govlab.governors import CpuidleGovernor

PROMOTION_COUNT = 4  # ladder.c
DEMOTION_COUNT = 1  # ladder.c


class Device:
    """Per-CPU state (struct ladder_device with its per-state counters)."""

    __slots__ = ("first", "exit_ns", "promotion_count", "demotion_count", "promotion_time_ns",
                 "demotion_time_ns", "last_state_idx", "last_residency_ns")

    def __init__(self, dev):
        n = len(dev.states)
        self.first = 1 if dev.states and dev.states[0].polling else 0
        self.exit_ns = [s.exit_latency_ns for s in dev.states]
        self.promotion_count = [0] * n
        self.demotion_count = [0] * n
        self.promotion_time_ns = [0] * n
        self.demotion_time_ns = [0] * n
        for i in range(self.first, n):
            if i < n - 1:
                self.promotion_time_ns[i] = self.exit_ns[i]
            if i > self.first:
                self.demotion_time_ns[i] = self.exit_ns[i]
        self.last_state_idx = self.first
        self.last_residency_ns = 0

    def do_selection(self, old, new):
        self.promotion_count[old] = 0
        self.demotion_count[old] = 0
        self.last_state_idx = new
        return new


class Ladder(CpuidleGovernor):
    """step deeper after repeated long idles, shallower after a short one (Python)"""

    models = "Linux v6.8 drivers/cpuidle/governors/ladder.c"

    def __init__(self, **settings):
        super().__init__(**settings)
        self.devices = {}

    def enable(self, dev):
        self.devices[dev.cpu] = Device(dev)

    def select(self, dev, next_timer_ns, latency_req_ns, tick_stopped):
        ld = self.devices[dev.cpu]
        last = ld.last_state_idx
        if latency_req_ns == 0:
            return ld.do_selection(last, 0)
        exit_ns = ld.exit_ns
        disabled = dev.disabled
        r = ld.last_residency_ns - exit_ns[last]

        # Promotion.
        if (last + 1 < len(exit_ns) and not disabled[last + 1]
                and r > ld.promotion_time_ns[last] and exit_ns[last + 1] <= latency_req_ns):
            ld.promotion_count[last] += 1
            ld.demotion_count[last] = 0
            if ld.promotion_count[last] >= PROMOTION_COUNT:
                return ld.do_selection(last, last + 1)

        # The last state became unusable.
        if last > ld.first and (disabled[last] or exit_ns[last] > latency_req_ns):
            i = last - 1
            while i > ld.first and exit_ns[i] > latency_req_ns:
                i -= 1
            return ld.do_selection(last, i)

        # Demotion.
        if last > ld.first and r < ld.demotion_time_ns[last]:
            ld.demotion_count[last] += 1
            ld.promotion_count[last] = 0
            if ld.demotion_count[last] >= DEMOTION_COUNT:
                return ld.do_selection(last, last - 1)

        return last

    def reflect(self, dev, state, measured_ns):
        ld = self.devices[dev.cpu]
        if state > 0:
            ld.last_state_idx = state
        ld.last_residency_ns = measured_ns
