//! `headroom plan-buffer`: the static side of the headroom comparison — for one switch, how
//! much buffer each scheme reserves for headroom and how much it leaves shared.
//!
//! The numbers come from the same MMU the simulator runs (`headroom_mech::buffer::Mmu`), so
//! the plan and the simulation cannot disagree: eta from the chosen formula per port, SIH
//! reserving eta per lossless PG, SHP a pool of `Σ eta / ratio`, DSH eta per port.
//!
//! A scheme whose reservations (private plus headroom) leave no shared buffer is reported as
//! "does not fit" (`"fits": false` in `--json`, with the headroom it would reserve and why)
//! while the others are still planned (a buffer too small for every scheme is a result too,
//! not an input error). Flags are checked when parsed, so every number reaching the formulas
//! is in range.

use clap::Args;
use headroom_mech::buffer::formula::{self, SonicInputs};
use headroom_mech::buffer::mmu::MmuError;
use headroom_mech::buffer::mmu::Reservation;
use headroom_mech::buffer::{Alpha, HeadroomScheme, Mmu, MmuConfig, PrivateReservation};
use headroom_mech::units::{parse_bytes, Bytes, Rate, Time};
use miette::{miette, Result};
use serde_json::json;
use std::process::ExitCode;

/// The longest one-way delay `--delay-ns` and `--cable-m` accept: 200 km of fibre, far
/// beyond any lossless fabric, and short enough that rate × delay cannot overflow.
const MAX_ONE_WAY_NS: u64 = 1_000_000;

/// Arguments of `headroom plan-buffer`.
#[derive(Args, Debug)]
pub struct PlanBufferArgs {
    /// Number of ports (1 to 65535, a switch's port numbers being 16-bit).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..))]
    ports: u16,
    /// Port speed (positive, at most 10 Tbps).
    #[arg(long, default_value = "100Gbps", value_parser = crate::args::port_rate, allow_hyphen_values = true)]
    speed: Rate,
    /// Cable length in metres (5 ns/m, at most 200 km), or use --delay-ns.
    #[arg(long, default_value_t = 400.0, conflicts_with = "delay_ns", value_parser = cable_metres, allow_negative_numbers = true)]
    cable_m: f64,
    /// One-way link delay in ns (at most 1 ms) instead of a cable length.
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=MAX_ONE_WAY_NS))]
    delay_ns: Option<u64>,
    /// Lossless priorities per port (Nq), 1 to 8.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=8))]
    lossless: u32,
    /// Total switch buffer.
    #[arg(long, default_value = "16MB", value_parser = positive_bytes)]
    buffer: Bytes,
    /// Private (guaranteed) bytes per ingress queue; 8 queues per port.
    #[arg(long, default_value = "3KB", value_parser = parse_bytes)]
    private: Bytes,
    /// MMU cell size (at least 1 byte, at most the buffer).
    #[arg(long, default_value = "80B", value_parser = cell_size)]
    cell: Bytes,
    /// Dynamic-threshold alpha (a positive number).
    #[arg(long, default_value_t = 0.0625, value_parser = crate::args::positive_number, allow_negative_numbers = true)]
    alpha: f64,
    /// Headroom formula: dsh (2(CD+MTU)+3840), pfc-guide, sonic.
    #[arg(long, default_value = "dsh", value_parser = ["dsh", "pfc-guide", "sonic"])]
    formula: String,
    /// MTU used by the formula, in bytes (64 to 65535).
    #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u64).range(64..=65535))]
    mtu: u64,
    /// SHP over-subscription ratio (a positive number).
    #[arg(long, default_value_t = 2.0, value_parser = crate::args::positive_number, allow_negative_numbers = true)]
    shp_ratio: f64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Parses `--cable-m`: a length is finite and not negative, and at most [`MAX_ONE_WAY_NS`]
/// of propagation.
fn cable_metres(s: &str) -> Result<f64, String> {
    let m: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of metres"))?;
    let max = MAX_ONE_WAY_NS as f64 * 1e-9 * formula::DEFAULT_PROPAGATION_MPS;
    if !(m.is_finite() && (0.0..=max).contains(&m)) {
        return Err(format!("a cable is 0 to {max} m long, not {s}"));
    }
    Ok(m)
}

/// Parses `--buffer`: a switch with no buffer has nothing to plan.
fn positive_bytes(s: &str) -> Result<Bytes, String> {
    let b = parse_bytes(s).map_err(|e| e.to_string())?;
    if b.0 == 0 {
        return Err("a switch needs a buffer of at least 1 byte".to_string());
    }
    Ok(b)
}

/// Parses `--cell`: the MMU counts whole cells of at least one byte, and counts them in 32
/// bits.
fn cell_size(s: &str) -> Result<Bytes, String> {
    let b = parse_bytes(s).map_err(|e| e.to_string())?;
    if b.0 == 0 || b.0 > u64::from(u32::MAX) {
        return Err(format!("a cell is 1 B to {} B, not {s}", u32::MAX));
    }
    Ok(b)
}

/// One scheme's plan: what it reserves and leaves shared, or why it does not fit.
struct Plan {
    scheme: &'static str,
    /// Headroom the scheme reserves (or would reserve, when it does not fit), bytes.
    headroom: u64,
    /// `None` when the reservations leave no shared buffer.
    fit: Option<Fit>,
    /// Why it does not fit (empty when it does).
    reason: String,
}

/// The shared side of a scheme that fits.
struct Fit {
    shared: u64,
    xoff: u64,
    one_queue: u64,
}

/// Runs `headroom plan-buffer`.
pub fn run(a: PlanBufferArgs) -> Result<ExitCode> {
    let ports = usize::from(a.ports);
    if a.cell > a.buffer {
        return Err(miette!(
            "--cell {}: a cell larger than --buffer {} leaves no buffer to plan",
            a.cell,
            a.buffer
        ));
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
    // `cell_size` bounds the cell to u32.
    let cell = u32::try_from(a.cell.0).map_err(|_| miette!("--cell is too large"))?;
    let shp_pool = (eta as f64 * ports as f64 * f64::from(a.lossless) / a.shp_ratio).ceil() as u64;
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
    let mut plans = Vec::new();
    for (name, scheme) in schemes {
        let cfg = MmuConfig {
            cell_bytes: cell,
            buffer_bytes: a.buffer.0,
            private: vec![
                PrivateReservation {
                    bytes: a.private.0,
                    pgs: 0xff,
                };
                ports
            ],
            headroom_bytes: vec![eta; ports],
            alpha: vec![alpha; ports],
            egress_alpha: alpha,
            xon_offset_bytes: 0,
            lossless: lossless_mask,
            scheme,
            static_thresholds: None,
        };
        let m = match Mmu::new(&cfg) {
            Ok(m) => m,
            // A scheme whose reservations overrun the buffer is a result of the plan (static
            // headroom grows with ports and cable, the others less), not an input error.
            Err(MmuError::OverCommitted {
                private, headroom, ..
            }) => {
                plans.push(Plan {
                    scheme: name,
                    headroom,
                    fit: None,
                    reason: format!(
                        "private {} + headroom {} leave no shared buffer out of {}",
                        mb(private),
                        mb(headroom),
                        mb(a.buffer.0)
                    ),
                });
                continue;
            }
            Err(e) => return Err(miette!("{name}: {e}")),
        };
        let c = u64::from(cell);
        let shared = m.shared_pool_cells() * c;
        // One congested queue settles at alpha / (1 + alpha) of the free shared buffer.
        let one_queue = (shared as f64 * alpha.share_of_free()) as u64;
        // The threshold at which a queue pauses with an otherwise empty buffer.
        let xoff = match scheme {
            HeadroomScheme::Dsh { .. } => alpha.threshold(shared).saturating_sub(eta),
            _ => alpha.threshold(shared),
        };
        plans.push(Plan {
            scheme: name,
            headroom: m.headroom_reserved_cells() * c,
            fit: Some(Fit {
                shared,
                xoff,
                one_queue,
            }),
            reason: String::new(),
        });
    }
    if a.json {
        let rows: Vec<_> = plans
            .iter()
            .map(|p| match &p.fit {
                Some(f) => json!({
                    "scheme": p.scheme,
                    "fits": true,
                    "headroom_reserved_bytes": p.headroom,
                    "shared_bytes": f.shared,
                    "shared_percent": f.shared as f64 * 100.0 / a.buffer.0 as f64,
                    "xoff_empty_buffer_bytes": f.xoff,
                    "one_congested_queue_bytes": f.one_queue,
                }),
                None => json!({
                    "scheme": p.scheme,
                    "fits": false,
                    "headroom_reserved_bytes": p.headroom,
                    "shared_bytes": null,
                    "shared_percent": null,
                    "xoff_empty_buffer_bytes": null,
                    "one_congested_queue_bytes": null,
                    "reason": p.reason,
                }),
            })
            .collect();
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
        "headroom per lossless queue (eta, {} formula) = {eta} B; SHP shared headroom pool \
         (over-subscription ratio {}) = {shp_pool} B\n",
        a.formula,
        a.shp_ratio
    );
    outln!(
        "{:<6} {:>17} {:>14} {:>10} {:>18} {:>20}",
        "scheme",
        "headroom reserved",
        "shared buffer",
        "shared %",
        "PAUSE threshold",
        "one congested queue"
    );
    for p in &plans {
        match &p.fit {
            Some(f) => outln!(
                "{:<6} {:>14.3} MB {:>11.3} MB {:>9.1}% {:>15.3} MB {:>17.3} MB",
                p.scheme,
                p.headroom as f64 / 1e6,
                f.shared as f64 / 1e6,
                f.shared as f64 * 100.0 / a.buffer.0 as f64,
                f.xoff as f64 / 1e6,
                f.one_queue as f64 / 1e6,
            ),
            None => outln!(
                "{:<6} {:>14.3} MB   does not fit: {}",
                p.scheme,
                p.headroom as f64 / 1e6,
                p.reason
            ),
        }
    }
    if plans.iter().all(|p| p.fit.is_none()) {
        outln!("\nno scheme fits: this buffer is too small for these ports, cables and queues");
    }
    outln!(
        "\nshared %: the shared buffer as a share of the whole buffer.\n\
         PAUSE threshold: what one queue holds before it sends PAUSE, the rest of the buffer \
         empty.\n\
         one congested queue: where a single congested queue settles (alpha / (1 + alpha) of \
         the shared buffer)."
    );
    Ok(ExitCode::SUCCESS)
}

/// Bytes as decimal megabytes, for messages.
fn mb(b: u64) -> String {
    format!("{:.3} MB", b as f64 / 1e6)
}
