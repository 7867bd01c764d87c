//! The daemon benchmark (`cargo bench -p headroom-sonic --bench bufmgrd`; the same as
//! `headroom sonic bufmgrd --bench`): startup of a 64-port Spectrum-4 switch with 3 lossless
//! PGs per port from a populated CONFIG_DB to a complete APPL_DB, then 1,000 cable-length
//! changes, on a throw-away `redis-server`. See `headroom_sonic::daemon::bench`.
//!
//! `HEADROOM_BENCH_CHANGES` and `HEADROOM_BENCH_PORTS` override the sizes.

use headroom_sonic::daemon::bench::{run, BenchOptions};

fn main() {
    let mut opts = BenchOptions::default();
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
    };
    if let Some(n) = env("HEADROOM_BENCH_CHANGES") {
        opts.changes = n.max(1);
    }
    if let Some(n) = env("HEADROOM_BENCH_PORTS") {
        opts.ports = n.max(1);
    }
    match run(opts) {
        Ok(report) => println!("{report}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
