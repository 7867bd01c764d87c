//! `headroom plan-buffer`: the static side of the headroom comparison — for one switch, how
//! much buffer each scheme reserves for headroom and how much it leaves shared.
//!
//! The numbers come from the same MMU the simulator runs (`headroom_mech::buffer::Mmu`), so
//! the plan and the simulation cannot disagree: eta from the chosen formula per port, SIH
//! reserving eta per lossless PG, SHP a pool of `Σ eta / ratio`, DSH eta per port.

use clap::Args;
use headroom_mech::buffer::formula::{self, SonicInputs};
use headroom_mech::buffer::mmu::Reservation;
use headroom_mech::buffer::{Alpha, HeadroomScheme, Mmu, MmuConfig};
use headroom_mech::units::{parse_bytes, parse_rate, Bytes, Rate, Time};
use miette::{miette, Result};
use serde_json::json;
use std::process::ExitCode;

/// Arguments of `headroom plan-buffer`.
#[derive(Args, Debug)]
pub struct PlanBufferArgs {
    /// Number of ports.
    #[arg(long, default_value_t = 32)]
    ports: usize,
    /// Port speed.
    #[arg(long, default_value = "100Gbps", value_parser = parse_rate)]
    speed: Rate,
    /// Cable length in metres (5 ns/m), or use --delay.
    #[arg(long, default_value_t = 400.0, conflicts_with = "delay_ns")]
    cable_m: f64,
    /// One-way link delay in ns instead of a cable length.
    #[arg(long)]
    delay_ns: Option<u64>,
    /// Lossless priorities per port (Nq).
    #[arg(long, default_value_t = 7)]
    lossless: u32,
    /// Total switch buffer.
    #[arg(long, default_value = "16MB", value_parser = parse_bytes)]
    buffer: Bytes,
    /// Private (guaranteed) bytes per ingress queue; 8 queues per port.
    #[arg(long, default_value = "3KB", value_parser = parse_bytes)]
    private: Bytes,
    /// MMU cell size.
    #[arg(long, default_value = "80B", value_parser = parse_bytes)]
    cell: Bytes,
    /// Dynamic-threshold alpha.
    #[arg(long, default_value_t = 0.0625)]
    alpha: f64,
    /// Headroom formula: dsh (2(CD+MTU)+3840), pfc-guide, sonic.
    #[arg(long, default_value = "dsh", value_parser = ["dsh", "pfc-guide", "sonic"])]
    formula: String,
    /// MTU used by the formula.
    #[arg(long, default_value_t = 1500)]
    mtu: u64,
    /// SHP over-subscription ratio.
    #[arg(long, default_value_t = 2.0)]
    shp_ratio: f64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `headroom plan-buffer`.
pub fn run(a: PlanBufferArgs) -> Result<ExitCode> {
    if a.ports == 0 || a.lossless == 0 || a.lossless > 8 {
        return Err(miette!("--ports must be > 0 and --lossless in 1..=8"));
    }
    if !(a.shp_ratio.is_finite() && a.shp_ratio > 0.0) {
        return Err(miette!("--shp-ratio must be a positive number"));
    }
    let delay = match a.delay_ns {
        Some(ns) => Time::from_ns(ns),
        None => formula::cable_delay(a.cable_m, formula::DEFAULT_PROPAGATION_MPS),
    };
    let eta = match a.formula.as_str() {
        "pfc-guide" => formula::pfc_guide(
            a.speed,
            delay,
            formula::MAX_FRAME_BYTES,
            a.mtu,
            formula::PEER_RESPONSE_BYTES,
        ),
        "sonic" => formula::sonic_generic(&SonicInputs {
            rate: a.speed,
            one_way: delay,
            port_mtu: a.mtu,
            lossless_mtu: a.mtu,
            cell_bytes: a.cell.0,
            small_packet_percent: 50,
            mac_phy_bytes: 819,
            gearbox_delay: Time::ZERO,
            default_peer_response: formula::PEER_RESPONSE_BYTES,
        }),
        _ => formula::dsh_eta(a.speed, delay, a.mtu),
    };
    let alpha = Alpha::from_value(a.alpha).map_err(|e| miette!("--alpha: {e}"))?;
    let lossless_mask = ((1u16 << a.lossless) - 1) as u8;
    let cell = u32::try_from(a.cell.0).map_err(|_| miette!("--cell is too large"))?;
    let shp_pool =
        (eta as f64 * (a.ports as f64) * f64::from(a.lossless) / a.shp_ratio).ceil() as u64;
    let schemes = [
        (
            "SIH",
            HeadroomScheme::Sih {
                reservation: Reservation::PerPg,
            },
        ),
        (
            "SHP",
            HeadroomScheme::Shp {
                pool_bytes: shp_pool,
            },
        ),
        (
            "DSH",
            HeadroomScheme::Dsh {
                delta_q_bytes: 0,
                delta_p_bytes: 0,
            },
        ),
    ];
    let mut rows = Vec::new();
    for (name, scheme) in schemes {
        let cfg = MmuConfig {
            cell_bytes: cell,
            buffer_bytes: a.buffer.0,
            private_bytes: a.private.0,
            headroom_bytes: vec![eta; a.ports],
            alpha: vec![alpha; a.ports],
            egress_alpha: alpha,
            xon_offset_bytes: 0,
            lossless: lossless_mask,
            scheme,
        };
        let m = Mmu::new(&cfg).map_err(|e| miette!("{name}: {e}"))?;
        let c = u64::from(cell);
        let shared = m.shared_pool_cells() * c;
        let headroom = m.headroom_reserved_cells() * c;
        // One congested queue settles at alpha / (1 + alpha) of the free shared buffer.
        let one_queue = (shared as f64 * alpha.share_of_free()) as u64;
        // The threshold at which a queue pauses with an otherwise empty buffer.
        let xoff = match scheme {
            HeadroomScheme::Dsh { .. } => alpha.threshold(shared).saturating_sub(eta),
            _ => alpha.threshold(shared),
        };
        rows.push(json!({
            "scheme": name,
            "headroom_reserved_bytes": headroom,
            "shared_bytes": shared,
            "shared_percent": shared as f64 * 100.0 / a.buffer.0 as f64,
            "xoff_empty_buffer_bytes": xoff,
            "one_congested_queue_bytes": one_queue,
        }));
    }
    if a.json {
        let doc = json!({
            "eta_bytes": eta,
            "formula": a.formula,
            "one_way_delay_ns": delay.as_ns(),
            "shp_pool_bytes": shp_pool,
            "schemes": rows,
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&doc).map_err(|e| miette!("{e}"))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{} ports x {} lossless queues at {}, one-way delay {}, buffer {:.2} MB, alpha {}",
        a.ports,
        a.lossless,
        a.speed,
        delay,
        a.buffer.0 as f64 / 1e6,
        a.alpha
    );
    outln!(
        "eta ({} formula) = {eta} B; SHP pool (ratio {}) = {shp_pool} B\n",
        a.formula,
        a.shp_ratio
    );
    outln!(
        "{:<6} {:>16} {:>14} {:>9} {:>18} {:>20}",
        "scheme",
        "headroom reserved",
        "shared",
        "% buffer",
        "XOFF (empty buf)",
        "1 congested queue"
    );
    for r in &rows {
        let mb = |k: &str| r[k].as_u64().unwrap_or(0) as f64 / 1e6;
        outln!(
            "{:<6} {:>13.3} MB {:>11.3} MB {:>8.1}% {:>15.3} MB {:>17.3} MB",
            r["scheme"].as_str().unwrap_or(""),
            mb("headroom_reserved_bytes"),
            mb("shared_bytes"),
            r["shared_percent"].as_f64().unwrap_or(0.0),
            mb("xoff_empty_buffer_bytes"),
            mb("one_congested_queue_bytes"),
        );
    }
    Ok(ExitCode::SUCCESS)
}
