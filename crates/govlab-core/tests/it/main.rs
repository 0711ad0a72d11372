//! Integration tests of the engine as a whole: determinism, conservation
//! laws, frequency and voltage behaviour, and the kernel's idle counters.

mod defaults;
mod engine;
mod fixtures;
mod trace_roundtrip;
mod trace_replay;
mod traces;
