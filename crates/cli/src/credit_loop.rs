//! `headroom credit-loop`: the credit loop of one credit link, measured against its model.
//!
//! A VL whose receiver holds B bytes can have at most B in flight: one flow over the link
//! is limited to B per loop time, the time a block takes to come back as credit (round-trip
//! propagation + update period + one frame + one FCP, `headroom_mech::credit::CreditLoop`),
//! and reaches line rate once B holds a loop's worth of frames. For every cable length and
//! VL buffer this command runs one flow host 0 → switch → host 1 on credit links (data on
//! VL 0, ACKs on VL 1, no congestion control) and measures its steady throughput as
//! `S / (FCT(2S) − FCT(S))`: start-up, the last frame's latency and the partial last batch
//! cancel out. It prints the model's throughput, the measured one and their difference.
//!
//! Outputs: `credit-loop.csv`, `credit-loop.json` and the plot `credit_loop` in `--out`.

use clap::Args;
use headroom_mech::credit::{self, CreditLoop, FCP_BYTES};
use headroom_mech::units::{parse_bytes, parse_time, Rate, Time};
use headroom_sim::config::{
    CcConfig, CreditConfig, FlowControlKind, HostConfig, LinkConfig, SimConfig,
};
use headroom_sim::net::Simulation;
use headroom_sim::results::StopReason;
use headroom_sim::topology::{builders, NodeId};
use headroom_sim::workload::generators;
use miette::{miette, IntoDiagnostic, Result, WrapErr};
use rayon::prelude::*;
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `headroom credit-loop`.
#[derive(Args, Debug)]
pub struct CreditLoopArgs {
    /// Link rate.
    #[arg(long, default_value = "100Gbps", value_parser = crate::args::port_rate)]
    rate: Rate,
    /// VL buffers of the receiving switch to try, comma-separated (each at least one
    /// frame).
    #[arg(long, value_delimiter = ',', default_value = "8KiB,16KiB,32KiB,48KiB,64KiB,96KiB,128KiB", value_parser = buffer)]
    buffers: Vec<u64>,
    /// Cable lengths to try in metres, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,100,1000", value_parser = cable, allow_negative_numbers = true)]
    cables: Vec<f64>,
    /// Propagation delay per metre of cable.
    #[arg(long, default_value = "5ns", value_parser = parse_time)]
    per_metre: Time,
    /// Credit update period (default: 65,536 byte times at the link rate, IBA's longest).
    #[arg(long, value_parser = positive_time)]
    update_period: Option<Time>,
    /// Payload bytes per frame (the host's MTU payload).
    #[arg(long, default_value_t = 1000, value_parser = payload)]
    payload: u64,
    /// Bytes per credit block.
    #[arg(long, default_value = "64", value_parser = block)]
    block: u32,
    /// Bytes of the shorter of the two flows measured (the other is twice as long).
    #[arg(long, default_value = "16MiB", value_parser = flow_size)]
    flow_size: u64,
    /// Output directory.
    #[arg(long, short, default_value = "out/credit-loop")]
    out: PathBuf,
    /// No table on standard output.
    #[arg(long, short)]
    quiet: bool,
}

/// Largest VL buffer accepted: 2048 blocks of the largest block are far beyond it.
const MAX_BUFFER: u64 = 1 << 30;
/// Longest cable accepted (100 km: 0.5 ms each way).
const MAX_CABLE_M: f64 = 100_000.0;

fn buffer(s: &str) -> Result<u64, String> {
    let b = parse_bytes(s).map_err(|e| e.to_string())?.0;
    if b == 0 || b > MAX_BUFFER {
        return Err(format!("a VL buffer of 1 B to 1 GiB, not {s}"));
    }
    Ok(b)
}

fn cable(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a length in metres"))?;
    if v.is_finite() && (0.0..=MAX_CABLE_M).contains(&v) {
        Ok(v)
    } else {
        Err(format!("a cable of 0 to {MAX_CABLE_M} m, not {s}"))
    }
}

fn positive_time(s: &str) -> Result<Time, String> {
    let t = parse_time(s).map_err(|e| e.to_string())?;
    if t == Time::ZERO {
        return Err("a period of 0 would send an update per change; give a positive time".into());
    }
    Ok(t)
}

fn payload(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if (64..=65_536).contains(&n) => Ok(n),
        _ => Err(format!("a payload of 64 to 65,536 bytes, not {s}")),
    }
}

fn block(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n) if (1..=65_536).contains(&n) => Ok(n),
        _ => Err(format!("a block of 1 to 65,536 bytes, not {s}")),
    }
}

fn flow_size(s: &str) -> Result<u64, String> {
    let b = parse_bytes(s).map_err(|e| e.to_string())?.0;
    if !(1 << 20..=1 << 30).contains(&b) {
        return Err(format!(
            "1 MiB to 1 GiB (shorter flows measure start-up, not the loop), not {s}"
        ));
    }
    Ok(b)
}

/// One point of the sweep.
struct Point {
    cable_m: f64,
    propagation: Time,
    buffer: u64,
    model: CreditLoop,
}

/// What a point measured and predicted, payload bits per second.
struct Row {
    model_bps: f64,
    measured_bps: f64,
}

/// The configuration of one run: one flow of `size` over the point's link.
fn config(a: &CreditLoopArgs, p: &Point, size: u64) -> Result<SimConfig> {
    let topo = builders::star(2, a.rate, p.propagation).map_err(|e| miette!("{e}"))?;
    let flows = generators::incast(&[NodeId(0)], NodeId(1), size, Time::ZERO, None, 0)
        .map_err(|e| miette!("{e}"))?;
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.host.mtu_payload = a.payload;
    cfg.host.ack_prio = 1;
    cfg.host.ack_pause_class = 1;
    cfg.fabric.kind = FlowControlKind::Credit;
    cfg.fabric.credit.vls = 2;
    cfg.fabric.credit.block = a.block;
    cfg.fabric.credit.vl_buffer = p.buffer;
    cfg.fabric.credit.update_period = Some(p.model.update_period);
    cfg.fabric.credit.update_threshold = None;
    // Two ports of two VLs reserve their buffers; the rest is shared and unused.
    cfg.switch.buffer_bytes = cfg.switch.buffer_bytes.max(8 * p.buffer);
    cfg.validate().map_err(|e| miette!("{e}"))?;
    Ok(cfg)
}

/// The FCT of one flow of `size` over the point's link.
fn fct(a: &CreditLoopArgs, p: &Point, size: u64) -> Result<Time> {
    let r = Simulation::new(config(a, p, size)?)
        .map_err(|e| miette!("{e}"))?
        .run();
    if r.stop_reason != Some(StopReason::AllFlowsDone) || !r.lossless_drops.is_empty() {
        return Err(miette!(
            "the flow over {} m with a {} B VL buffer did not complete losslessly ({:?}, {} \
             lossless drops)",
            p.cable_m,
            p.buffer,
            r.stop_reason,
            r.lossless_drops.len()
        ));
    }
    let f = r
        .flows
        .first()
        .ok_or_else(|| miette!("the run lost its flow"))?;
    let finish = f.finish.ok_or_else(|| miette!("the flow did not finish"))?;
    Ok(finish - f.start)
}

/// `t` in microseconds, to 0.1 ns.
fn us(t: Time) -> String {
    format!("{:.4} us", t.as_ps() as f64 / 1e6)
}

/// Runs `headroom credit-loop`.
pub fn run(a: CreditLoopArgs) -> Result<ExitCode> {
    let overhead = LinkConfig::default().frame_overhead;
    let frame = HostConfig::default().data_frame_bytes(a.payload);
    let frame_blocks = credit::blocks(frame, a.block);
    let frame_time = a.rate.serialization(frame + overhead);
    let fcp_time = a.rate.serialization(FCP_BYTES + overhead);
    let period = a
        .update_period
        .unwrap_or_else(|| CreditConfig::default().policy(a.rate).period);
    if let Some(b) = a.buffers.iter().find(|&&b| b < frame) {
        return Err(miette!(
            "--buffers: {b} B holds no frame of {frame} B ({} B payload + {} B headers)",
            a.payload,
            frame - a.payload
        ));
    }
    let mut points = Vec::new();
    for &cable_m in &a.cables {
        let propagation = Time::from_ps((cable_m * a.per_metre.as_ps() as f64).round() as u64);
        for &buffer in &a.buffers {
            let model = CreditLoop {
                propagation,
                update_period: period,
                frame_time,
                fcp_time,
                // The data VL's FCTBS and the ACK VL's credit.
                fcps_per_period: 2,
            };
            points.push(Point {
                cable_m,
                propagation,
                buffer,
                model,
            });
        }
    }
    crate::outdir::prepare(&a.out)?;
    let runs: Vec<(usize, u64)> = (0..points.len())
        .flat_map(|i| [(i, a.flow_size), (i, 2 * a.flow_size)])
        .collect();
    let fcts: Vec<Time> = runs
        .par_iter()
        .map(|&(i, size)| fct(&a, &points[i], size))
        .collect::<Result<_>>()?;
    let line_payload_bps = a.rate.as_f64() * a.payload as f64 / (frame + overhead) as f64;
    let rows: Vec<Row> = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let blocks = u32::try_from(p.buffer / u64::from(a.block)).unwrap_or(u32::MAX);
            let span = (fcts[2 * i + 1].saturating_sub(fcts[2 * i])).as_secs_f64();
            Row {
                model_bps: p.model.utilisation(blocks, frame_blocks) * line_payload_bps,
                measured_bps: a.flow_size as f64 * 8.0 / span.max(1e-12),
            }
        })
        .collect();

    let frame_span = u64::from(frame_blocks) * u64::from(a.block);
    let mut csv = String::from(
        "cable_m,propagation_ns,vl_buffer_bytes,loop_ns,line_rate_buffer_bytes,model_gbps,\
         measured_gbps,error_percent,batch_exceeds_period\n",
    );
    let mut table = format!(
        "credit loop of one {} link: {} B frames ({frame_blocks} blocks of {} B), update \
         period {}\n{:>8} {:>10} {:>11} {:>10} {:>15} {:>12} {:>14} {:>8}\n",
        a.rate,
        frame,
        a.block,
        us(period),
        "cable",
        "delay",
        "VL buffer",
        "loop",
        "line-rate buf",
        "model Gb/s",
        "measured Gb/s",
        "error"
    );
    let mut json_rows = Vec::new();
    // Largest |error| where the model is exact, and where it is a lower bound.
    let (mut worst, mut worst_bound): (f64, f64) = (0.0, 0.0);
    for (p, r) in points.iter().zip(&rows) {
        let loop_time = p.model.time();
        // Whole frames that cover a loop, as blocks: the smallest buffer at line rate.
        let frames = loop_time.as_ps().div_ceil(frame_time.as_ps().max(1));
        let line_buffer = frames * u64::from(frame_blocks) * u64::from(a.block);
        let error = (r.measured_bps - r.model_bps) / r.model_bps.max(1.0) * 100.0;
        // A buffer's worth of frames outlasts the update period: frames freed while an
        // update is pending go back with it, sooner than the model's full period.
        let held = p.buffer / frame_span;
        let long_batch = frame_time.as_ps() * held > period.as_ps();
        if long_batch {
            worst_bound = worst_bound.max(error.abs());
        } else {
            worst = worst.max(error.abs());
        }
        let (model, measured) = (r.model_bps / 1e9, r.measured_bps / 1e9);
        let _ = writeln!(
            csv,
            "{},{:.3},{},{:.3},{line_buffer},{model:.4},{measured:.4},{error:.3},{long_batch}",
            p.cable_m,
            p.propagation.as_ps() as f64 / 1e3,
            p.buffer,
            loop_time.as_ps() as f64 / 1e3,
        );
        let _ = writeln!(
            table,
            "{:>6} m {:>10} {:>9} B {:>10} {:>13} B {model:>12.2} {measured:>14.2} {error:>7.2}%{}",
            p.cable_m,
            us(p.propagation),
            p.buffer,
            us(loop_time),
            line_buffer,
            if long_batch { " *" } else { "" },
        );
        json_rows.push(json!({
            "cable_m": p.cable_m, "propagation_ps": p.propagation.as_ps(),
            "vl_buffer_bytes": p.buffer, "loop_ps": loop_time.as_ps(),
            "line_rate_buffer_bytes": line_buffer, "model_gbps": model,
            "measured_gbps": measured, "error_percent": error, "batch_exceeds_period": long_batch,
        }));
    }
    let _ = writeln!(
        table,
        "\nloop = 2 x delay + update period ({}) + one frame ({}) + one FCP ({}); model = whole frames the buffer holds per loop, at most what two FCPs per period leave \
         of the line ({:.2} Gb/s of payload).\n* a buffer's worth of frames takes longer than the \
         update period to send: frames freed while an update is pending return with it, so the \
         model is a lower bound there.\nlargest difference between measured and model: {worst:.2} % \
         ({worst_bound:.2} % on rows marked *)",
        us(period),
        us(frame_time),
        us(fcp_time),
        line_payload_bps / 1e9 * points.first().map_or(1.0, |p| p.model.line_share())
    );
    let doc = json!({
        "rate_bps": a.rate.bps(), "update_period_ps": period.as_ps(), "payload_bytes": a.payload,
        "frame_bytes": frame, "frame_blocks": frame_blocks, "block_bytes": a.block,
        "frame_time_ps": frame_time.as_ps(), "fcp_time_ps": fcp_time.as_ps(),
        "flow_bytes": [a.flow_size, 2 * a.flow_size], "largest_error_percent": worst,
        "largest_error_percent_long_batches": worst_bound,
        "points": json_rows,
    });
    let mut written = vec![
        a.out.join("credit-loop.csv"),
        a.out.join("credit-loop.json"),
    ];
    std::fs::write(&written[0], csv)
        .into_diagnostic()
        .wrap_err("writing credit-loop.csv")?;
    std::fs::write(
        &written[1],
        serde_json::to_string_pretty(&doc).into_diagnostic()? + "\n",
    )
    .into_diagnostic()
    .wrap_err("writing credit-loop.json")?;
    // The model at every whole number of frames up to the largest buffer: its knee shows.
    let largest = a.buffers.iter().copied().max().unwrap_or(frame);
    let groups = a
        .cables
        .iter()
        .map(|&c| {
            let mine = || {
                points
                    .iter()
                    .zip(&rows)
                    .filter(move |(p, _)| p.cable_m == c)
            };
            let measured = mine()
                .map(|(p, r)| (p.buffer as f64 / 1024.0, r.measured_bps / 1e9))
                .collect();
            let model = mine()
                .next()
                .map(|(p, _)| {
                    (1..=largest / frame_span)
                        .map(|k| {
                            let blocks =
                                u32::try_from(k * u64::from(frame_blocks)).unwrap_or(u32::MAX);
                            let gbps =
                                p.model.utilisation(blocks, frame_blocks) * line_payload_bps / 1e9;
                            ((k * frame_span) as f64 / 1024.0, gbps)
                        })
                        .collect()
                })
                .unwrap_or_default();
            crate::plots::LineGroup {
                label: format!("{c} m"),
                measured,
                model,
            }
        })
        .collect();
    let lines = crate::plots::LineData {
        title: format!("Credit loop: one flow over one {} link", a.rate),
        x_desc: "VL buffer (KiB)".into(),
        y_desc: "throughput (Gb/s of payload)".into(),
        groups,
        joined: false,
    };
    written.extend(
        crate::plots::write_line_chart(&a.out, "credit_loop", &lines)
            .map_err(|e| miette!("{e}"))?,
    );
    crate::outdir::record(&a.out, &written)?;
    if !a.quiet {
        out!("{table}");
        outln!("outputs in {}", a.out.display());
    }
    Ok(ExitCode::SUCCESS)
}
