//! Run configurations of the DCQCN reference ns-3 simulator (bobzhuyb/ns3-rdma,
//! `mix/config.txt`, read by `scratch/third.cc`) and of the TCD authors' release of it
//! (Yi-ran/DCQCN-TCD, an ns-3.17 fork where TCD is called "root ECN"), so their
//! experiments re-run here unchanged.
//!
//! Format: one `KEY value` per line; blank lines are ignored, `#` starts a comment. Files
//! named by the config: the topology (the HPCC simulator's format, [`crate::topology::hpcc`];
//! ports numbered in link order on each node, as ns-3 does) and the flows
//! ([`crate::workload::ns3_rdma`]: `src dst pg size start stop`, only `<count>` lines read).
//! [`load`] translates the config into a [`SimConfig`]:
//!
//! - **Congestion control**: `ENABLE_QCN 1` runs DCQCN ([`DcqcnVariant::Paper`], the
//!   algorithm of this code) with `DCTCP_GAIN` as its `g`, `ALPHA_RESUME_INTERVAL`,
//!   `RP_TIMER` (µs), `BYTE_COUNTER` (bytes), `FAST_RECOVERY_TIMES`, `RATE_AI`, `RATE_HAI`
//!   (`40Mb/s`; a bare integer is bit/s) and a 100 Mb/s floor (its `MinRate` default);
//!   `RP_TIMER`, `BYTE_COUNTER`, `DCTCP_GAIN`, `RATE_AI` and `RATE_HAI` are required (their
//!   defaults in `third.cc` are 0 or empty). `ENABLE_QCN 0`: no congestion control and no
//!   ECN marking. The receiver polls every `CNP_INTERVAL` µs and sends a CNP if anything was
//!   marked ([`CnpMode::Poll`]). `CLAMP_TARGET_RATE 0` (the code then keeps the target rate
//!   on a cut unless a byte-counter increase happened) is approximated by always clamping,
//!   as the paper's algorithm does; noted. `CLAMP_TARGET_RATE_AFTER_TIMER` only matters then.
//! - **TCD** (root ECN): `ENABLE_ROOTECN 1` uses [`DetectorConfig::TcdReleased`] with
//!   `ROOTECN_INTERVAL` µs (an integer above 0; the code's growth and empty constants);
//!   `0` is RED. `ENABLE_ROOTECNCC 1`: senders hold on UE and restart the alpha timer
//!   ([`UeReaction::HoldRestartAlpha`]); `0`: UE is ignored ([`UeReaction::Ignore`]).
//!   `ENABLE_NPECN 1` (marking at the receiver) is not modelled: an error.
//! - **Switch**: the Broadcom-like model of `broadcom-node.cc` as far as headroom models it:
//!   18 MB buffer in 1030-byte cells; RED on the egress queue with `KMIN`/`KMAX` in cells
//!   (×1030 bytes, defaults 60) and `PMAX` (default 1), at dequeue.
//!   `USE_DYNAMIC_PFC_THRESHOLD 0` (static thresholds: XOFF at 320 cells of an ingress PG,
//!   XON 2 cells below, a port-level PAUSE above 9600 cells of a port) is approximated by a
//!   dynamic alpha of 2^-6 (about 280 KB while the buffer is empty) and a 2060-byte XON
//!   offset; noted. `USE_DYNAMIC_PFC_THRESHOLD 1` (the default: XOFF when a PG holds more
//!   than 4 cells plus 10 × the free part of a 16,000-cell pool) is alpha 10 with 4 cells
//!   private per PG and a 160-byte XON offset (its 16-byte offset × 10); noted, because its
//!   pool is not headroom's shared buffer. Headroom is reserved by the PFC guide's formula.
//!   PFC pauses last `PAUSE_TIME` µs (an integer), refreshed at half while XOFF lasts, and
//!   end with an explicit RESUME; the quanta are computed at the fastest switch port rate
//!   (one value per switch config here; noted when rates differ). Lossless priorities: the
//!   flows' pgs. A PAUSE takes effect on arrival (no response bytes), frames are admitted
//!   once fully received, and links have no preamble or gap (ns-3's point-to-point model).
//! - **Host**: `PACKET_PAYLOAD_SIZE` P (default 1000) bytes per packet include 24 bytes of
//!   the simulator's own headers, so a packet carries P − 24 data bytes and P + 30 on the
//!   wire (54 header bytes here). A flow of S bytes is ceil(S/1000) packets (the code
//!   divides by 1000 whatever P is) of P − 24 data bytes, or one packet of S − 24 when
//!   S < 1000; its size here is that many data bytes, the payload the simulator reports.
//!   `L2_ACK_INTERVAL` counts packets there and bytes here (× (P − 24)); 0 (no ACKs there)
//!   acknowledges only the last packet here. Go-back-N on NACK (`L2_BACK_TO_ZERO 0`).
//! - **Routing**: `FLOW_LEVEL_ECMP 1` is ECMP by flow hash (the hash differs);
//!   `PACKET_LEVEL_ECMP 1` is not modelled (error); with both 0 the simulator keeps one
//!   route per destination and here ECMP still spreads flows (noted).
//! - **Times** are absolute seconds as in the simulator (flows usually start at 2 s;
//!   nothing runs before the first flow, so the wait costs nothing). `SIMULATOR_STOP_TIME`
//!   (default 2.01) stops the run. Flow stop times, `APP_START_TIME` and `APP_STOP_TIME`
//!   only matter when a flow starts before the receivers listen or is still sending when
//!   its application or receiver stops; here flows always run to completion (noted).
//! - **Other keys**: `SEED_NUMBER` seeds the run (the random streams differ);
//!   `ERROR_RATE_PER_LINK` applies to links whose topology error rate is 0.
//!   `L2_WAIT_FOR_ACK 1`, `L2_TEST_READ 1` and `SEND_IN_CHUNKS 1` (the code's default; its
//!   echo applications are deprecated) are errors. `TCP_FLOW_FILE` must hold no flows (a
//!   missing placeholder is noted); `TRACE_FILE`, `TRACE_OUTPUT_FILE`, `L2_CHUNK_SIZE`,
//!   `NP_SAMPLING_INTERVAL` (stored but never used by the code), `DATA_RATE` and
//!   `LINK_DELAY` are accepted with a note. `FCT_OUTPUT_FILE` (default `fct.txt`) is where
//!   [`write_fct`]'s output goes.
//!
//! Invariants: every error names the config file, the line (0 for a missing key) and the
//! key; errors inside the topology, flow or TCP flow file also name that file and its line.
//! Input paths are used as written (relative to the working directory), falling back to the
//! config's directory with a note; output paths stay relative to the working directory. A
//! returned [`Ns3RdmaRun`]'s config has passed [`SimConfig::validate`]. Parsing never panics
//! and reads at most [`crate::input::MAX_TEXT_BYTES`] of config, topology or TCP flow file
//! and [`crate::input::MAX_FLOW_FILE_BYTES`] of flows.

use std::io;
use std::path::{Path, PathBuf};

use crate::config::{
    Admission, AlphaPolicy, CcConfig, CnpMode, ConfigError, DetectorConfig, EcnPoint, SimConfig,
};
use crate::ns3_files::{input_path, ns3_rate, seconds};
use crate::topology::{NodeId, NodeKind, Topology};
use crate::workload::FlowSpec;
use headroom_mech::buffer::Alpha;
use headroom_mech::cc::{DcqcnConfig, DcqcnVariant, UeReaction};
use headroom_mech::ecn::RedConfig;
use headroom_mech::pfc::PfcConfig;
use headroom_mech::tcd::ReleasedConfig;
use headroom_mech::units::{Rate, Time};

mod paths;
pub use paths::write_fct;

/// A DCQCN/TCD simulator run translated for headroom.
#[derive(Clone, Debug, PartialEq)]
pub struct Ns3RdmaRun {
    /// The resolved input of the engine; it has passed [`SimConfig::validate`].
    pub config: SimConfig,
    /// `FCT_OUTPUT_FILE` (default `fct.txt`): where the simulator writes completion times.
    pub fct_output: Option<PathBuf>,
    /// One line per accepted key that has no effect here and per approximation made.
    pub notes: Vec<String>,
}

/// Why the DCQCN/TCD simulator's config could not be used.
pub use crate::ns3_files::Ns3ConfigError as Ns3RdmaConfigError;

type Conf<'a> = crate::ns3_files::Conf<'a, Ns3RdmaConfigError>;

/// Bytes of a switch cell (`broadcom-node.cc` counts everything in 1030-byte cells).
pub const CELL_BYTES: u64 = 1030;
/// `m_maxBufferBytes`.
const BUFFER_BYTES: u64 = 18_000_000;
/// Bytes of `PACKET_PAYLOAD_SIZE` that are the simulator's own headers, not data.
pub const PAYLOAD_HEADER_BYTES: u64 = 24;
/// Header bytes of a data packet here: the 24 above plus UDP, IP and PPP (30).
const HEADER_BYTES: u64 = 54;
/// Flow sizes are cut into packets of this many bytes (`third.cc` divides by 1000).
const SIZE_UNIT: u64 = 1000;
/// `SIMULATOR_STOP_TIME` when absent.
const DEFAULT_STOP_SECONDS: f64 = 2.01;

/// Keys accepted without effect, with the reason given in the note.
const IGNORED: &[(&str, &str)] = &[
    ("TRACE_FILE", "packet traces are not written"),
    ("TRACE_OUTPUT_FILE", "packet traces are not written"),
    (
        "NP_SAMPLING_INTERVAL",
        "the simulator stores it but its receivers never use it",
    ),
    (
        "L2_CHUNK_SIZE",
        "only matters for going back to a chunk start and for the extra ACK at each chunk \
         boundary, which are not modelled",
    ),
    (
        "DATA_RATE",
        "unused by the simulator (rates come from the topology file)",
    ),
    (
        "LINK_DELAY",
        "unused by the simulator (delays come from the topology file)",
    ),
];

/// DCQCN keys (no effect with `ENABLE_QCN 0`).
const DCQCN_KEYS: &[&str] = &[
    "CNP_INTERVAL",
    "ALPHA_RESUME_INTERVAL",
    "RP_TIMER",
    "BYTE_COUNTER",
    "CLAMP_TARGET_RATE",
    "CLAMP_TARGET_RATE_AFTER_TIMER",
    "FAST_RECOVERY_TIMES",
    "RATE_AI",
    "RATE_HAI",
    "DCTCP_GAIN",
    "KMIN",
    "KMAX",
    "PMAX",
    "ENABLE_ROOTECNCC",
];

/// Other keys that change the run.
const USED: &[&str] = &[
    "ENABLE_QCN",
    "USE_DYNAMIC_PFC_THRESHOLD",
    "PAUSE_TIME",
    "L2_ACK_INTERVAL",
    "L2_WAIT_FOR_ACK",
    "L2_BACK_TO_ZERO",
    "L2_TEST_READ",
    "PACKET_LEVEL_ECMP",
    "FLOW_LEVEL_ECMP",
    "SEED_NUMBER",
    "ENABLE_ROOTECN",
    "ROOTECN_INTERVAL",
    "ENABLE_NPECN",
    "APP_START_TIME",
    "APP_STOP_TIME",
    "SIMULATOR_STOP_TIME",
    "PACKET_PAYLOAD_SIZE",
    "ERROR_RATE_PER_LINK",
    "SEND_IN_CHUNKS",
    "TOPOLOGY_FILE",
    "FLOW_FILE",
    "TCP_FLOW_FILE",
    "FCT_OUTPUT_FILE",
];

/// Reads a DCQCN/TCD simulator config file and translates it (see the module docs).
pub fn load(path: &Path) -> Result<Ns3RdmaRun, Ns3RdmaConfigError> {
    let text = crate::input::read_text(path, crate::input::MAX_TEXT_BYTES).map_err(|source| {
        Ns3RdmaConfigError::Io {
            path: path.to_path_buf(),
            source,
        }
    })?;
    parse(&text, path)
}

/// Translates the text of a config file; `path` names it in errors. The files it names are
/// read relative to the current directory (or, failing that, the config's directory).
pub fn parse(text: &str, path: &Path) -> Result<Ns3RdmaRun, Ns3RdmaConfigError> {
    let c = Conf::read(text, path, "the DCQCN simulator", |key| {
        USED.contains(&key) || DCQCN_KEYS.contains(&key) || IGNORED.iter().any(|(k, _)| *k == key)
    })?;
    let mut notes = Vec::new();
    let qcn = c.flag("ENABLE_QCN")?.unwrap_or(true);

    let mut ignored: Vec<(usize, &str, String)> = c
        .entries
        .iter()
        .filter_map(|(key, e)| {
            if let Some((_, why)) = IGNORED.iter().find(|(k, _)| k == key) {
                return Some((e.line, *key, why.to_string()));
            }
            (!qcn && DCQCN_KEYS.contains(key)).then(|| {
                (
                    e.line,
                    *key,
                    "a DCQCN parameter; has no effect with ENABLE_QCN 0".into(),
                )
            })
        })
        .collect();
    ignored.sort_unstable();
    for (line, key, why) in ignored {
        notes.push(format!("{key} (line {line}): {why}; ignored"));
    }

    unsupported(&c)?;

    // Files.
    let topo_path = input_path(
        path,
        "TOPOLOGY_FILE",
        c.req_one("TOPOLOGY_FILE")?,
        &mut notes,
    );
    let mut topology = crate::topology::hpcc::load(&topo_path)
        .map_err(|e| c.err("TOPOLOGY_FILE", e.to_string()))?;
    tcp_flows(&c, path, &mut notes)?;
    let payload: u64 = c
        .num("PACKET_PAYLOAD_SIZE", "an integer (bytes)")?
        .unwrap_or(1000);
    if payload <= PAYLOAD_HEADER_BYTES {
        return Err(c.err(
            "PACKET_PAYLOAD_SIZE",
            format!("must be above the {PAYLOAD_HEADER_BYTES} bytes of the simulator's headers"),
        ));
    }
    let flows = flows(&c, path, &topology, payload, &mut notes)?;

    c.error_rate_per_link(&mut topology)?;
    let pause_quanta = pause_quanta(&c, &topology, &mut notes)?;

    let mut config = SimConfig::new(topology, flows);
    config.link.frame_overhead = 0;
    config.seed = c.num("SEED_NUMBER", "an integer")?.unwrap_or(6);
    let stop = c
        .num::<f64>("SIMULATOR_STOP_TIME", "a number of seconds")?
        .unwrap_or(DEFAULT_STOP_SECONDS);
    let stop_time = seconds(stop).ok_or_else(|| {
        c.err(
            "SIMULATOR_STOP_TIME",
            format!("{stop} is not a representable non-negative number of seconds"),
        )
    })?;
    config.stop_time = Some(stop_time);
    app_times(&c, &config, stop_time, &mut notes)?;
    routing(&c, &mut notes)?;

    // Switch.
    let sw = &mut config.switch;
    sw.buffer_bytes = BUFFER_BYTES;
    sw.cell_bytes = CELL_BYTES as u32;
    if c.flag("USE_DYNAMIC_PFC_THRESHOLD")?.unwrap_or(true) {
        sw.alpha = AlphaPolicy::Fixed(
            Alpha::from_value(10.0).unwrap_or_else(|_| unreachable!("10 is a positive alpha")),
        );
        sw.private_bytes = 4 * CELL_BYTES;
        sw.xon_offset = 160;
        notes.push(
            "USE_DYNAMIC_PFC_THRESHOLD 1: XOFF above 4 cells + 10 × the free part of the \
             simulator's 16,000-cell ingress pool is modelled as 4 cells private and alpha 10 \
             of headroom's shared buffer (18 MB less reserved headroom), XON 160 bytes below"
                .to_string(),
        );
    } else {
        sw.alpha = AlphaPolicy::Fixed(
            Alpha::from_dynamic_th(-6).unwrap_or_else(|_| unreachable!("-6 is in range")),
        );
        sw.xon_offset = 2 * CELL_BYTES;
        notes.push(
            "USE_DYNAMIC_PFC_THRESHOLD 0: the simulator's static thresholds (XOFF above 320 \
             cells of an ingress PG, XON 2 cells below, a port-level PAUSE above 9600 cells) \
             are approximated by dynamic_th -6 (about 280 KB while the buffer is empty) and \
             XON 2060 bytes below XOFF"
                .to_string(),
        );
    }
    let pgs = config.flows.iter().fold(0u8, |m, f| m | (1 << f.prio));
    sw.lossless = if pgs == 0 { 1 << 3 } else { pgs };
    sw.pfc = PfcConfig {
        quanta: pause_quanta,
        refresh: true,
        send_resume: true,
    };
    sw.response_bytes = 0;
    sw.admission = Admission::LastBit;
    sw.ecn.enabled = qcn;
    sw.ecn.point = EcnPoint::Dequeue;
    sw.ecn.red = Some(red(&c)?);
    sw.ecn.detector = detector(&c, qcn)?;

    // Hosts.
    let h = &mut config.host;
    h.mtu_payload = payload - PAYLOAD_HEADER_BYTES;
    h.header_bytes = HEADER_BYTES;
    let acks: u64 = c
        .num("L2_ACK_INTERVAL", "an integer (packets)")?
        .unwrap_or(0);
    h.ack_interval = if acks == 0 {
        notes.push(
            "L2_ACK_INTERVAL 0: the simulator sends no ACKs; here the last packet of each \
             flow is acknowledged"
                .to_string(),
        );
        u64::MAX
    } else {
        acks.saturating_mul(h.mtu_payload)
    };
    h.cnp_mode = CnpMode::Poll;
    h.cnp_interval = us(&c, "CNP_INTERVAL", Some(50.0))?;
    h.cc = if qcn {
        CcConfig::Dcqcn(dcqcn(&c, h.cnp_interval, &mut notes)?)
    } else {
        CcConfig::None
    };

    config.validate().map_err(|e| match e {
        ConfigError::Topology(t) => c.err("TOPOLOGY_FILE", t.to_string()),
        e @ ConfigError::Link { .. } => c.err("TOPOLOGY_FILE", e.to_string()),
        ConfigError::Flow { index, reason } => {
            c.err("FLOW_FILE", format!("flow {index}: {reason}"))
        }
        ConfigError::Parameter { field, reason } => match field {
            "host.mtu_payload" => c.err("PACKET_PAYLOAD_SIZE", reason),
            "stop_time" => c.err("SIMULATOR_STOP_TIME", reason),
            other => c.err(other, reason),
        },
    })?;
    let fct_output = Some(PathBuf::from(
        c.one("FCT_OUTPUT_FILE")?.unwrap_or("fct.txt"),
    ));
    Ok(Ns3RdmaRun {
        config,
        fct_output,
        notes,
    })
}

/// Errors for settings headroom does not model.
fn unsupported(c: &Conf) -> Result<(), Ns3RdmaConfigError> {
    for (key, what, default) in [
        ("ENABLE_NPECN", "marking at the receiver (NP-ECN)", false),
        ("PACKET_LEVEL_ECMP", "per-packet ECMP", false),
        (
            "L2_WAIT_FOR_ACK",
            "waiting for an ACK after each chunk",
            false,
        ),
        (
            "L2_BACK_TO_ZERO",
            "going back to the chunk start on NACK",
            false,
        ),
        ("L2_TEST_READ", "the read test of going back to zero", false),
        (
            "SEND_IN_CHUNKS",
            "sending through the simulator's deprecated echo applications",
            true,
        ),
    ] {
        if c.flag(key)?.unwrap_or(default) {
            let why = if c.line_of(key) == 0 {
                format!(
                    "missing, and the simulator's default (1) means {what}, which is not \
                     modelled; add `{key} 0`"
                )
            } else {
                format!("{what} is not modelled; set {key} 0")
            };
            return Err(c.err(key, why));
        }
    }
    Ok(())
}

/// A key in microseconds (a float), `default` when absent (`None`: required).
fn us(c: &Conf, key: &str, default: Option<f64>) -> Result<Time, Ns3RdmaConfigError> {
    let v = match c.num::<f64>(key, "a number of microseconds")? {
        Some(v) => v,
        None => default.ok_or_else(|| c.missing(key))?,
    };
    seconds(v * 1e-6).ok_or_else(|| {
        c.err(
            key,
            format!("{v} is not a representable non-negative number of microseconds"),
        )
    })
}

/// A rate key (`40Mb/s`; a bare integer is bit/s), required.
fn rate(c: &Conf, key: &str) -> Result<Rate, Ns3RdmaConfigError> {
    let s = c.req_one(key)?;
    ns3_rate(s).ok_or_else(|| c.err(key, format!("`{s}` is not a rate (write e.g. `40Mb/s`)")))
}

/// The reaction point of the simulator's DCQCN with the config's values.
fn dcqcn(c: &Conf, cnp: Time, notes: &mut Vec<String>) -> Result<DcqcnConfig, Ns3RdmaConfigError> {
    let g: f64 = c
        .num("DCTCP_GAIN", "a number")?
        .ok_or_else(|| c.missing("DCTCP_GAIN"))?;
    if !(0.0..=1.0).contains(&g) {
        return Err(c.err("DCTCP_GAIN", format!("must be in [0, 1], found {g}")));
    }
    let clamp = c.flag("CLAMP_TARGET_RATE")?.unwrap_or(false);
    let after_timer = c.flag("CLAMP_TARGET_RATE_AFTER_TIMER")?.unwrap_or(false);
    if !clamp {
        notes.push(format!(
            "CLAMP_TARGET_RATE 0{}: the simulator keeps the target rate on a cut unless an \
             increase happened since the last one; here the target is always clamped to the \
             current rate, as the DCQCN paper's algorithm does",
            if after_timer {
                " with CLAMP_TARGET_RATE_AFTER_TIMER 1"
            } else {
                ""
            }
        ));
    } else if after_timer {
        notes.push(
            "CLAMP_TARGET_RATE_AFTER_TIMER 1: has no effect with CLAMP_TARGET_RATE 1".to_string(),
        );
    }
    let ue = c.flag("ENABLE_ROOTECNCC")?.unwrap_or(false);
    Ok(DcqcnConfig {
        variant: DcqcnVariant::Paper,
        g,
        alpha_resume_interval: us(c, "ALPHA_RESUME_INTERVAL", Some(55.0))?,
        rate_decrease_interval: cnp,
        rp_timer: us(c, "RP_TIMER", None)?,
        byte_counter: c
            .num("BYTE_COUNTER", "an integer (bytes)")?
            .ok_or_else(|| c.missing("BYTE_COUNTER"))?,
        fast_recovery_times: c.num("FAST_RECOVERY_TIMES", "an integer")?.unwrap_or(5),
        rate_ai: rate(c, "RATE_AI")?,
        rate_hai: rate(c, "RATE_HAI")?,
        min_rate: Rate::from_mbps(100),
        clamp_target_rate: true,
        rate_on_first_cnp: 1.0,
        on_ue: if ue {
            UeReaction::HoldRestartAlpha
        } else {
            UeReaction::Ignore
        },
    })
}

/// RED of `KMIN`/`KMAX` (cells) and `PMAX`.
fn red(c: &Conf) -> Result<RedConfig, Ns3RdmaConfigError> {
    let kmin: u64 = c.num("KMIN", "an integer (cells)")?.unwrap_or(60);
    let kmax: u64 = c.num("KMAX", "an integer (cells)")?.unwrap_or(60);
    let pmax: f64 = c.num("PMAX", "a probability")?.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&pmax) {
        return Err(c.err("PMAX", format!("must be in [0, 1], found {pmax}")));
    }
    if kmax < kmin {
        return Err(c.err("KMAX", format!("{kmax} cells is below KMIN {kmin} cells")));
    }
    let bytes = |key: &str, k: u64| {
        k.checked_mul(CELL_BYTES)
            .filter(|&b| b <= BUFFER_BYTES)
            .ok_or_else(|| c.err(key, format!("{k} cells is more than the 18 MB buffer")))
    };
    Ok(RedConfig {
        kmin: bytes("KMIN", kmin)?,
        kmax: bytes("KMAX", kmax)?,
        pmax,
    })
}

/// RED, or TCD as released with `ROOTECN_INTERVAL`.
fn detector(c: &Conf, qcn: bool) -> Result<DetectorConfig, Ns3RdmaConfigError> {
    let interval: u32 = c
        .num("ROOTECN_INTERVAL", "an integer (microseconds)")?
        .unwrap_or(40);
    if interval == 0 {
        return Err(c.err(
            "ROOTECN_INTERVAL",
            "must be at least 1 microsecond (the detector checks every interval)",
        ));
    }
    if !c.flag("ENABLE_ROOTECN")?.unwrap_or(false) {
        return Ok(DetectorConfig::Red);
    }
    if !qcn {
        return Err(c.err(
            "ENABLE_ROOTECN",
            "root ECN marks through ECN, which ENABLE_QCN 0 turns off; set ENABLE_QCN 1",
        ));
    }
    Ok(DetectorConfig::TcdReleased(ReleasedConfig {
        interval: Time::from_us(u64::from(interval)),
        ..ReleasedConfig::default()
    }))
}

/// `PAUSE_TIME` (integer µs) as quanta at the fastest switch port rate.
fn pause_quanta(
    c: &Conf,
    topo: &Topology,
    notes: &mut Vec<String>,
) -> Result<u16, Ns3RdmaConfigError> {
    let us: u64 = c
        .num("PAUSE_TIME", "an integer number of microseconds")?
        .unwrap_or(5);
    if us == 0 {
        return Err(c.err(
            "PAUSE_TIME",
            "must be at least 1 microsecond (0 is a RESUME)",
        ));
    }
    let switch = |n: NodeId| topo.nodes.get(n.index()) == Some(&NodeKind::Switch);
    let mut rates: Vec<Rate> = topo
        .links
        .iter()
        .filter(|l| switch(l.a) || switch(l.b))
        .map(|l| l.rate)
        .collect();
    rates.sort();
    rates.dedup();
    let Some(&fastest) = rates.last() else {
        return Ok(PfcConfig::default().quanta);
    };
    // One quantum is 512 bit times.
    let q = (us as f64 * 1e-6 * fastest.bps() as f64 / 512.0).round();
    if !(1.0..=f64::from(u16::MAX)).contains(&q) {
        return Err(c.err(
            "PAUSE_TIME",
            format!("{us} us at {fastest} is {q} quanta, outside 1..=65535"),
        ));
    }
    if rates.len() > 1 {
        notes.push(format!(
            "PAUSE_TIME {us} us is {q} quanta at {fastest}, the fastest switch port; one \
             quanta value applies to every port here, so slower ports pause longer than {us} us"
        ));
    }
    Ok(q as u16)
}

/// `APP_START_TIME`/`APP_STOP_TIME` and the flows' stop times: notes where they would
/// change what the simulator reports.
fn app_times(
    c: &Conf,
    config: &SimConfig,
    stop: Time,
    notes: &mut Vec<String>,
) -> Result<(), Ns3RdmaConfigError> {
    let time = |key: &str, default: f64| -> Result<Time, Ns3RdmaConfigError> {
        let v = c.num::<f64>(key, "a number of seconds")?.unwrap_or(default);
        seconds(v).ok_or_else(|| c.err(key, format!("{v} is not a non-negative number of seconds")))
    };
    let app_start = time("APP_START_TIME", 0.0)?;
    let app_stop = time("APP_STOP_TIME", 3.0)?;
    let early = config.flows.iter().filter(|f| f.start < app_start).count();
    if early > 0 {
        notes.push(format!(
            "APP_START_TIME: {early} flows start before the receivers listen; the simulator \
             never completes them, here they run"
        ));
    }
    if app_stop < stop {
        notes.push(format!(
            "APP_STOP_TIME is before SIMULATOR_STOP_TIME: the simulator's receivers stop at \
             {app_stop} and report nothing later; here flows finishing after it are reported"
        ));
    }
    Ok(())
}

/// ECMP settings.
fn routing(c: &Conf, notes: &mut Vec<String>) -> Result<(), Ns3RdmaConfigError> {
    if c.flag("FLOW_LEVEL_ECMP")?.unwrap_or(false) {
        notes.push(
            "FLOW_LEVEL_ECMP 1: flows are spread over equal-cost paths by a hash of their \
             5-tuple, not ns-3's hash, so flows may take other paths"
                .to_string(),
        );
    } else {
        notes.push(
            "FLOW_LEVEL_ECMP 0: the simulator routes every flow to a destination on one \
             path; here ECMP still spreads flows over equal-cost paths"
                .to_string(),
        );
    }
    Ok(())
}

/// The TCP flow file: a placeholder that must hold no flows.
fn tcp_flows(c: &Conf, config: &Path, notes: &mut Vec<String>) -> Result<(), Ns3RdmaConfigError> {
    let Some(written) = c.one("TCP_FLOW_FILE")? else {
        return Ok(());
    };
    let p = input_path(config, "TCP_FLOW_FILE", written, notes);
    let text = match crate::input::read_text(&p, crate::input::MAX_TEXT_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            notes.push(format!(
                "TCP_FLOW_FILE: {written} does not exist; no TCP flows (the simulator reads \
                 none from a missing file)"
            ));
            return Ok(());
        }
        Err(e) => {
            return Err(c.err(
                "TCP_FLOW_FILE",
                format!("{}: cannot read: {e}", p.display()),
            ))
        }
    };
    let first = text.lines().enumerate().find(|(_, l)| !l.trim().is_empty());
    match first {
        None => {}
        Some((_, l)) if l.split_whitespace().next() == Some("0") => {}
        Some((i, l)) => {
            return Err(c.err(
                "TCP_FLOW_FILE",
                format!(
                    "{}:{}: TCP flows are not modelled; the file must declare 0 flows, found `{}`",
                    p.display(),
                    i + 1,
                    l.trim()
                ),
            ))
        }
    }
    notes.push(format!(
        "TCP_FLOW_FILE (line {}): holds no flows; ignored",
        c.line_of("TCP_FLOW_FILE")
    ));
    Ok(())
}

/// The flow file's flows as headroom flows: data bytes as the simulator's packets carry
/// them, nodes checked against the topology.
fn flows(
    c: &Conf,
    config: &Path,
    topo: &Topology,
    payload: u64,
    notes: &mut Vec<String>,
) -> Result<Vec<FlowSpec>, Ns3RdmaConfigError> {
    let flow_path = input_path(config, "FLOW_FILE", c.req_one("FLOW_FILE")?, notes);
    let text =
        crate::input::read_text(&flow_path, crate::input::MAX_FLOW_FILE_BYTES).map_err(|e| {
            c.err(
                "FLOW_FILE",
                format!("{}: cannot read: {e}", flow_path.display()),
            )
        })?;
    let shown = flow_path.display().to_string();
    let file = crate::workload::ns3_rdma::parse(&text, &shown)
        .map_err(|e| c.err("FLOW_FILE", e.to_string()))?;
    if file.unread_lines > 0 {
        notes.push(format!(
            "FLOW_FILE: {shown} has {} lines after its {} flows; not read, as in the simulator",
            file.unread_lines,
            file.flows.len()
        ));
    }
    let data = payload - PAYLOAD_HEADER_BYTES;
    let mut flows = Vec::with_capacity(file.flows.len());
    for (i, f) in file.flows.iter().enumerate() {
        let bad = |reason: String| c.err("FLOW_FILE", format!("{shown}:{}: {reason}", f.line));
        for (what, n) in [("src", f.src), ("dst", f.dst)] {
            match topo.nodes.get(n as usize) {
                None => {
                    return Err(bad(format!(
                        "{what} {n} does not exist (the topology has {} nodes)",
                        topo.nodes.len()
                    )))
                }
                Some(NodeKind::Switch) => {
                    return Err(bad(format!("{what} {n} is a switch, not a host")))
                }
                Some(_) => {}
            }
        }
        let size = if f.size < SIZE_UNIT {
            if f.size <= PAYLOAD_HEADER_BYTES {
                return Err(bad(format!(
                    "a {}-byte flow carries no data (packets hold {PAYLOAD_HEADER_BYTES} bytes \
                     of headers)",
                    f.size
                )));
            }
            f.size - PAYLOAD_HEADER_BYTES
        } else {
            f.size.div_ceil(SIZE_UNIT).saturating_mul(data)
        };
        flows.push(FlowSpec {
            src: NodeId(f.src),
            dst: NodeId(f.dst),
            prio: f.pg,
            size,
            start: f.start,
            // Distinct per flow, as the simulator's random ports are.
            dport: (i % 40_000) as u16,
        });
    }
    let stop = seconds(
        c.num::<f64>("SIMULATOR_STOP_TIME", "a number of seconds")?
            .unwrap_or(DEFAULT_STOP_SECONDS),
    );
    let cut = file
        .flows
        .iter()
        .filter(|f| stop.is_some_and(|s| f.stop < s))
        .count();
    if cut > 0 {
        notes.push(format!(
            "FLOW_FILE: {cut} flows stop sending before SIMULATOR_STOP_TIME; the simulator \
             stops them there (they never complete), here they run to completion"
        ));
    }
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}
