//! Read a trace in any supported format and print its event counts:
//! `cargo run --release --example trace_counts FILE...`
#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() {
    for arg in std::env::args().skip(1) {
        let t0 = std::time::Instant::now();
        match govlab_core::trace::read_path(std::path::Path::new(&arg)) {
            Ok(t) => {
                let (a, b) = t.span_ns();
                println!("{arg}: {} events, {} CPUs, {:.3} s span, read in {:.3} s", t.events.len(), t.nr_cpus, (b - a) as f64 / 1e9, t0.elapsed().as_secs_f64());
                for (name, n) in t.counts() {
                    println!("  {name} {n}");
                }
            }
            Err(e) => eprintln!("{e}"),
        }
    }
}
