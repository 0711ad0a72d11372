//! Integration tests of the engine as a whole: determinism, conservation
//! laws, frequency and voltage behaviour, and the kernel's idle counters.

mod cpufreq;
mod cpuidle;
mod cpuidle_eras;
mod defaults;
mod devices;
mod engine;
mod external;
mod fixtures;
mod rtapp;
mod workloads;
mod trace_roundtrip;
mod trace_memory;
mod trace_replay;
mod trace_header;
mod trace_prio;
mod traces;
mod capacity;
mod recorded_platforms;
mod kernel_eras;
mod kernel_hooks;
mod pelt_real;
mod process_lifecycle;
mod power;
mod intervals;
mod kernel_governors;
mod housekeeping;
mod rcu_tick;
mod idle_exit_tick;
mod eas_behaviour;
