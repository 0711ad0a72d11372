//! `cargo run --release --example trace_convert IN OUT.dat`: any trace govlab
//! reads, written as trace.dat v6 (events govlab does not type are refused).
#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = &args[..] else {
        eprintln!("usage: trace_convert IN OUT.dat");
        std::process::exit(2);
    };
    let result = govlab_core::trace::read_path(std::path::Path::new(input))
        .and_then(|t| govlab_core::trace::dat_writer::write_dat(&t, std::path::Path::new(output)));
    if let Err(e) = result {
        eprintln!("{e}");
        std::process::exit(2);
    }
}
