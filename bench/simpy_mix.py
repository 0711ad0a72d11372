"""The speed benchmark's scenario (bench/mix.toml) written with SimPy 4.

This is the yardstick `make bench` measures govlab against (bench/run.py,
bench/README.md). It models the same machine and workload at the same
granularity as far as is reasonable in plain SimPy:

* 80 CPUs, each a SimPy process with its own run queue. A CPU with nothing
  to run enters idle and waits to be woken; waking costs a fixed exit
  latency (2 us, the platform's C1) before it runs anything.
* 160 tasks, each a SimPy process looping forever over
      3 x (compute exp(mean 200 us at the reference frequency),
           sleep exp(mean 300 us)),
      compute exp(mean 200 us),
      a 4 KiB read from the SSD.
* Wakeup placement as govlab's select_task_rq, without topology: the task's
  previous CPU if it is idle (nothing running or queued), else the first
  idle CPU found, else it queues on its previous CPU.
* Round robin within a run queue: the running task keeps the CPU until its
  burst ends, or until a tick finds it has used its slice while others wait
  (CFS's period, 24 ms or nr_running x 3 ms, shared equally: govlab's scaled
  defaults for 80 CPUs); then it goes to the back of the queue.
* A per-CPU 250 Hz tick process, acting on 4 ms boundaries while the CPU is
  busy: a tick that finds the CPU idle stops, and restarts when the CPU is
  back in C0 (as govlab stops the tick on idle entry and re-arms it on idle
  exit). Besides preemption it hands a queued task to an idle CPU (govlab's
  nohz kick); and a CPU about to go idle pulls a queued task from a CPU
  that has more than one (newidle balance).
* Frequency fixed, as the `performance` governor holds it on this load in
  govlab: the 2.7 GHz all-core turbo, so a burst of x us at the 2.2 GHz
  reference frequency takes x * 2.2 / 2.7 us.
* The SSD as a simpy.Resource of capacity 32 (queue depth; FIFO beyond),
  service time lognormal with mean 100 us and coefficient of variation 0.3.

Left out, compared with govlab: PELT load tracking and the utilisation
signals; the cpufreq and cpuidle governors (no frequency changes, one idle
state with a fixed 2 us exit, where govlab's ladder also picks C1E and C6,
whose exits take 10 and 133 us; no residency or tick-stop decision); SMT (the
80 CPUs here are independent and never slow each other down; in govlab the
two threads of a core share it, which makes each burst longer); the turbo
limit and package power control; energy and power accounting; CFS's
vruntime ordering, sleeper placement and wakeup preemption (FIFO round
robin only); topology (LLCs, idle-core preference); per-CPU timer wheels
and the interrupts they raise; iowait accounting and tracing. Because of
SMT in particular, this machine finishes bursts sooner than govlab's and is
less loaded, so it does somewhat more work per simulated second; run()
reports the busy share and the work rate so the two can be compared.

Events counted are SimPy events processed, i.e. calls of Environment.step():
timeouts, process starts, succeeded events, interrupts, resource requests and
releases. They are not the same kind of thing as govlab's events; see
bench/README.md.
"""

from __future__ import annotations

import math
import random
import time
from collections import deque

import simpy

# --- the scenario (bench/mix.toml on broadwell-2s-e5-2698v4); times in us ---
NR_CPUS = 80
NR_TASKS = 160
RUN_MEAN_US = 200.0  # a compute burst, at the reference frequency (exp)
SLEEP_MEAN_US = 300.0  # exp
BURSTS_PER_IO = 4  # 3 x (run, sleep), then run, then the read
IO_MEAN_US = 100.0  # SSD 4 KiB read, lognormal
IO_CV = 0.3
SSD_QUEUE_DEPTH = 32

F_REF_KHZ = 2_200_000  # base frequency: `run` durations are given at this
F_RUN_KHZ = 2_700_000  # all-core turbo, where `performance` sits in govlab
SPEED = F_RUN_KHZ / F_REF_KHZ

EXIT_LATENCY_US = 2.0  # C1
TICK_US = 4000.0  # CONFIG_HZ=250
# CFS tunables scaled by 1 + log2(min(CPUs, 8)) = 4, as in govlab.
SCHED_LATENCY_US = 24000.0
MIN_GRANULARITY_US = 3000.0
NR_LATENCY = 8

# CPU states.
IDLE, EXITING, BUSY = "idle", "exiting", "busy"


def sched_slice(nr_running: int) -> float:
    """Each of nr_running equal tasks' share of the CFS period."""
    period = SCHED_LATENCY_US if nr_running <= NR_LATENCY else nr_running * MIN_GRANULARITY_US
    return period / nr_running


class CountingEnvironment(simpy.Environment):
    """A simpy.Environment that counts the events it processes."""

    def __init__(self) -> None:
        super().__init__()
        self.events = 0

    def step(self) -> None:
        self.events += 1
        simpy.Environment.step(self)


class Cpu:
    """One CPU: a run queue, the running task, and its idle and tick state."""

    def __init__(self, sim: Machine, idx: int) -> None:
        self.sim = sim
        self.idx = idx
        self.queue: deque[Task] = deque()  # runnable, not running
        self.curr: Task | None = None
        self.state = BUSY  # becomes IDLE when the process first runs
        self.wake_event: simpy.Event | None = None
        self.tick_resume: simpy.Event | None = None  # set while the tick is stopped
        self.busy_us = 0.0
        self.proc = sim.env.process(self.loop())
        sim.env.process(self.tick())

    def nr_running(self) -> int:
        return len(self.queue) + (self.curr is not None)

    def loop(self):
        """Run queued tasks; idle when there are none."""
        env = self.sim.env
        while True:
            if not self.queue:
                self.sim.newidle_balance(self)
            if not self.queue:
                yield from self.idle()
                continue
            task = self.queue.popleft()
            self.curr = task
            task.picked_at = start = env.now
            try:
                yield env.timeout(task.remaining)
                task.remaining = 0.0
            except simpy.Interrupt:  # the tick preempted it
                task.remaining -= env.now - start
            self.busy_us += env.now - start
            self.curr = None
            if task.remaining > 1e-9:
                self.queue.append(task)
            else:
                task.done.succeed()
            self.sim.update_masks(self)

    def idle(self):
        """Wait for a wakeup, pay the exit latency, restart the tick."""
        env = self.sim.env
        self.state = IDLE
        self.wake_event = env.event()
        yield self.wake_event
        self.state = EXITING
        yield env.timeout(EXIT_LATENCY_US)
        self.state = BUSY
        if self.tick_resume is not None:
            self.tick_resume.succeed()
            self.tick_resume = None

    def wake(self) -> None:
        """An IPI: wake the CPU if it sits in idle."""
        if self.state == IDLE and not self.wake_event.triggered:
            self.wake_event.succeed()

    def enqueue(self, task: Task) -> None:
        task.cpu = self
        self.queue.append(task)
        self.sim.update_masks(self)
        self.wake()

    def tick(self):
        """The scheduler tick: every 4 ms boundary while the CPU is busy.

        A tick that finds the CPU idle (or still leaving idle) stops: the
        process waits until the CPU is back in C0, then resumes at the next
        boundary, which is when govlab re-arms it too."""
        env = self.sim.env
        k = int(env.now // TICK_US) + 1  # the next boundary, counted in ticks
        while True:
            yield env.timeout(k * TICK_US - env.now)
            if self.state != BUSY:
                self.tick_resume = env.event()
                yield self.tick_resume
                k = int(env.now // TICK_US) + 1
                continue
            k += 1
            task = self.curr
            if task is not None and self.queue:
                if env.now - task.picked_at >= sched_slice(len(self.queue) + 1):
                    self.proc.interrupt()  # slice used up: round robin
                elif self.sim.idle:
                    # nohz kick: give the last queued task to an idle CPU.
                    dst = self.sim.cpus[next(iter(self.sim.idle))]
                    moved = self.queue.pop()
                    self.sim.update_masks(self)
                    dst.enqueue(moved)


class Task:
    """One task of the mix, looping forever."""

    def __init__(self, sim: Machine, idx: int) -> None:
        self.sim = sim
        self.cpu: Cpu = sim.cpus[idx % NR_CPUS]  # where it starts
        self.remaining = 0.0  # us of its current burst left to run
        self.picked_at = 0.0
        self.done: simpy.Event | None = None
        sim.env.process(self.body())

    def body(self):
        sim = self.sim
        env = sim.env
        rng = sim.rng
        while True:
            for i in range(BURSTS_PER_IO):
                # compute: become runnable, wait until the burst is done
                self.remaining = rng.expovariate(1.0 / RUN_MEAN_US) / SPEED
                self.done = env.event()
                sim.wakeup(self)
                yield self.done
                if i < BURSTS_PER_IO - 1:
                    yield env.timeout(rng.expovariate(1.0 / SLEEP_MEAN_US))
            # read 4 KiB from the SSD
            with sim.ssd.request() as req:
                yield req
                yield env.timeout(rng.lognormvariate(sim.io_mu, sim.io_sigma))
            sim.ios += 1


class Machine:
    """The whole model: CPUs, the SSD, the tasks and the placement rules."""

    def __init__(self, seed: int) -> None:
        self.env = CountingEnvironment()
        self.rng = random.Random(seed)
        self.idle: set[int] = set(range(NR_CPUS))  # CPUs with nothing runnable
        self.overloaded: set[int] = set()  # CPUs with more than one runnable
        self.cpus = [Cpu(self, i) for i in range(NR_CPUS)]
        self.ssd = simpy.Resource(self.env, capacity=SSD_QUEUE_DEPTH)
        sigma2 = math.log(1.0 + IO_CV * IO_CV)
        self.io_sigma = math.sqrt(sigma2)
        self.io_mu = math.log(IO_MEAN_US) - sigma2 / 2.0
        self.ios = 0
        self.tasks = [Task(self, i) for i in range(NR_TASKS)]

    def update_masks(self, cpu: Cpu) -> None:
        nr = cpu.nr_running()
        if nr == 0:
            self.idle.add(cpu.idx)
        else:
            self.idle.discard(cpu.idx)
        if nr >= 2:
            self.overloaded.add(cpu.idx)
        else:
            self.overloaded.discard(cpu.idx)

    def wakeup(self, task: Task) -> None:
        """select_task_rq: previous CPU if idle, else an idle CPU, else previous."""
        prev = task.cpu
        if prev.idx in self.idle or not self.idle:
            prev.enqueue(task)
        else:
            self.cpus[next(iter(self.idle))].enqueue(task)

    def newidle_balance(self, cpu: Cpu) -> None:
        """cpu is about to idle: pull the last queued task of an overloaded CPU."""
        if self.overloaded:
            src = self.cpus[next(iter(self.overloaded))]
            moved = src.queue.pop()
            self.update_masks(src)
            cpu.enqueue(moved)


def run(sim_seconds: float, seed: int = 1) -> dict:
    """Simulate sim_seconds of the mix; events processed and wall time taken."""
    t0 = time.perf_counter()
    m = Machine(seed)
    m.env.run(until=sim_seconds * 1e6)
    wall = time.perf_counter() - t0
    busy_us = sum(c.busy_us for c in m.cpus)
    sim_us = m.env.now
    return {
        "events": m.env.events,
        "sim_s": sim_us / 1e6,
        "wall_s": wall,
        # for comparing the two models, not their speed:
        "busy_pct": 100.0 * busy_us / (NR_CPUS * sim_us),
        # reference-frequency cycles retired per second, as govlab's work_rate_gcps
        "work_gcps": busy_us * SPEED * F_REF_KHZ * 1e3 / 1e6 / 1e9 / (sim_us / 1e6),
        "ios_per_s": m.ios / (sim_us / 1e6),
    }


if __name__ == "__main__":
    import sys

    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 0.1
    r = run(secs, 1)
    print({k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()})
