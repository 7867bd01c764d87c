//! `headroom workload`: flow lists for replay, in the ns-3 HPCC simulator's format.

use clap::Args;
use headroom_mech::units::{parse_time, Rate, Time};
use headroom_sim::topology::hpcc as hpcc_topo;
use headroom_sim::workload::leaves::Leaves;
use headroom_sim::workload::{cdf, generators, hpcc as hpcc_flows};
use miette::{miette, IntoDiagnostic, Result, WrapErr};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `headroom workload`.
#[derive(Args, Debug)]
pub struct WorkloadArgs {
    /// Topology in the HPCC format (`<nodes> <switches> <links>` ...); every host sends.
    #[arg(long)]
    topology: PathBuf,
    /// Load per host link, in (0, 1].
    #[arg(long, default_value_t = 0.3, value_parser = load, allow_negative_numbers = true)]
    load: f64,
    /// Built-in size distribution (websearch, fbhdp, alistorage, googlerpc) or a CDF file.
    #[arg(long, default_value = "websearch")]
    cdf: String,
    /// Arrivals span this long, e.g. `5ms` (more than zero).
    #[arg(long, default_value = "5ms", value_parser = positive_duration, allow_hyphen_values = true)]
    duration: Time,
    /// First arrival not before this time (HPCC flow lists usually start at 2s).
    #[arg(long, default_value = "0s", value_parser = parse_time)]
    start: Time,
    /// Host link rate the load refers to; defaults to the rate of the first host's link.
    #[arg(long, value_parser = crate::args::port_rate, allow_hyphen_values = true)]
    host_rate: Option<Rate>,
    /// Priority of every flow, 0 to 7.
    #[arg(long, default_value_t = 3, value_parser = crate::args::priority, allow_negative_numbers = true)]
    prio: u8,
    /// Send every flow to a host on another leaf (switch) than its sender's.
    #[arg(long)]
    cross_leaf: bool,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file (flow list); `-` for standard output.
    #[arg(short, long, default_value = "-")]
    output: String,
}

/// Parses `--load`: a share of the host link's capacity, above 0 and at most 1.
fn load(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() && v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(format!(
            "a share of the host link above 0 and at most 1 (0.3 is 30 %), not {s}"
        ))
    }
}

/// Parses `--duration`: arrivals in an empty span would make an empty flow list.
fn positive_duration(s: &str) -> Result<Time, String> {
    let t = parse_time(s).map_err(|e| e.to_string())?;
    if t == Time::ZERO {
        return Err("arrivals need a span longer than zero, e.g. 5ms".to_string());
    }
    Ok(t)
}

/// Runs `headroom workload`.
pub fn run(a: WorkloadArgs) -> Result<ExitCode> {
    let topo = hpcc_topo::load(&a.topology).map_err(|e| miette!("{e}"))?;
    let hosts = topo.hosts();
    let host_rate = match a.host_rate {
        Some(r) => r,
        None => topo
            .links
            .iter()
            .find(|l| hosts.contains(&l.a) || hosts.contains(&l.b))
            .map(|l| l.rate)
            .ok_or_else(|| miette!("the topology has no host links"))?,
    };
    let dist = match cdf::builtin(&a.cdf) {
        Some(d) => d,
        None => cdf::SizeCdf::load(std::path::Path::new(&a.cdf)).map_err(|e| miette!("{e}"))?,
    };
    let leaves = a.cross_leaf.then(|| Leaves::of(&topo, &hosts));
    let mut rng = generators::rng_from_seed(a.seed);
    let flows = generators::poisson(
        &hosts,
        host_rate,
        a.load,
        &dist,
        a.start,
        a.duration,
        a.prio,
        leaves.as_ref(),
        &mut rng,
    )
    .map_err(|e| miette!("{e}"))?;
    let text = hpcc_flows::write(&flows);
    if a.output == "-" {
        out!("{text}");
    } else {
        std::fs::write(&a.output, text)
            .into_diagnostic()
            .wrap_err_with(|| format!("writing {}", a.output))?;
        errln!("wrote {} flows to {}", flows.len(), a.output);
    }
    Ok(ExitCode::SUCCESS)
}
