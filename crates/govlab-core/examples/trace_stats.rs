//! `cargo run --release --example trace_stats FILE [PLATFORM]`: the JSON of
//! `govlab trace stats` without Python.
#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: trace_stats FILE [PLATFORM]");
        std::process::exit(2);
    };
    match govlab_core::api::trace_stats_json(std::path::Path::new(path), args.get(1).map(String::as_str)) {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
