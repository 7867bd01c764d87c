//! `headroom`: the command-line front end.
//!
//! Subcommands:
//! - `run`: simulate a scenario file (or an ns-3 HPCC `config.txt`) and write its outputs;
//! - `workload`: generate flow lists in the ns-3 HPCC simulator's format;
//! - `bench`: the reference benchmark (320-host fat tree, web search, DCQCN).
//!
//! Errors are rendered with miette (file, line, field and reason) and exit with code 2;
//! a run that ends with lossless drops when told to fail on them exits with code 3.

mod bench;
mod plots;
mod run;
mod workload_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// headroom: a toolkit for lossless datacenter and HPC fabrics.
#[derive(Parser, Debug)]
#[command(name = "headroom", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate a scenario and write flows.csv, summary.json, pfc.csv, samples and plots.
    Run(run::RunArgs),
    /// Generate a flow list (ns-3 HPCC simulator format) from a size distribution.
    Workload(workload_cmd::WorkloadArgs),
    /// Run the reference benchmark and report wall time, events/s and peak RSS.
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => run::run(a),
        Command::Workload(a) => workload_cmd::run(a),
        Command::Bench(a) => bench::run(a),
    };
    match result {
        Ok(code) => code,
        Err(report) => {
            eprintln!("{report:?}");
            ExitCode::from(2)
        }
    }
}
