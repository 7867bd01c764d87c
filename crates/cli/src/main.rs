//! `headroom`: the command-line front end.
//!
//! Subcommands:
//! - `run`: simulate a scenario file (or an ns-3 HPCC `config.txt`) and write its outputs;
//! - `workload`: generate flow lists in the ns-3 HPCC simulator's format;
//! - `credit-loop`: one credit link's throughput against its VL buffer, measured and
//!   modelled;
//! - `bench`: the reference benchmark (320-host fat tree, web search, DCQCN);
//! - `sonic`: SONiC's dynamic buffer calculation on files (plan, diff, show, config);
//! - `sweep`: a grid of scenario variants, run locally in parallel or as a Slurm job array,
//!   gathered into one table and plots.
//!
//! Errors are rendered with miette (file, line, field and reason) and exit with code 2;
//! a run that ends with lossless drops when told to fail on them exits with code 3.

#[macro_use]
mod console;

mod args;
mod bench;
mod burst;
mod compare;
mod credit_loop;
mod huge_pages;
mod memory;
mod outdir;
mod plan_buffer;
mod plots;
mod run;
mod sonic;
mod sweep;
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
    /// Run one scenario under several headroom schemes (SIH, SHP, DSH) and compare them.
    Compare(compare::CompareArgs),
    /// Find the largest incast burst each headroom scheme absorbs without a PFC PAUSE.
    Burst(burst::BurstArgs),
    /// The credit loop of one credit link: throughput against VL buffer and cable length,
    /// measured and modelled.
    CreditLoop(credit_loop::CreditLoopArgs),
    /// Headroom reserved and shared buffer left under SIH, SHP and DSH for one switch.
    PlanBuffer(plan_buffer::PlanBufferArgs),
    /// Generate a flow list (ns-3 HPCC simulator format) from a size distribution.
    Workload(workload_cmd::WorkloadArgs),
    /// Run the reference benchmark and report wall time, events/s and peak RSS (and, on
    /// flow channels, the flow tables at their peak).
    Bench(bench::BenchArgs),
    /// SONiC dynamic buffer planner: plan, diff, show and config on config_db.json files.
    Sonic(sonic::SonicArgs),
    /// Run a grid of scenario variants (locally in parallel, or as a Slurm job array) and
    /// gather their results into one table and plots.
    Sweep(sweep::SweepArgs),
}

fn main() -> ExitCode {
    // First, while the process is one thread and has read nothing.
    huge_pages::reexec_with_huge_pages();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => run::run(a),
        Command::Workload(a) => workload_cmd::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Burst(a) => burst::run(a),
        Command::CreditLoop(a) => credit_loop::run(a),
        Command::PlanBuffer(a) => plan_buffer::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Sonic(a) => sonic::run(a),
        Command::Sweep(a) => sweep::run(a),
    };
    match result {
        Ok(code) => {
            console::flush_stdout();
            code
        }
        Err(report) => {
            errln!("{report:?}");
            ExitCode::from(2)
        }
    }
}
