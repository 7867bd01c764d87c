//! Run configurations of the ns-3 HPCC simulator (alibaba-edu/High-Precision-Congestion-Control,
//! `mix/config.txt`, documented in `mix/config_doc.txt`, read by `simulation/scratch/third.cc`),
//! so an HPCC experiment can be re-run here unchanged.
//!
//! Format: one `KEY value...` per line; blank lines are ignored, `#` starts a comment.
//! [`load`] translates the file into a [`SimConfig`] with the HPCC simulator's switch and NIC
//! model, as far as headroom models it:
//!
//! - **Congestion control**: `CC_MODE 1` (DCQCN, the Mellanox variant of `rdma-hw.cc`),
//!   `3` (HPCC with `MULTI_RATE 0`: switches append INT hop records, 42 bytes on every data
//!   packet and ACKs of at least 88 bytes), `7` (TIMELY) and `8` (DCTCP); `10` (HPCC-PINT)
//!   and other values are errors. Keys are in the simulator's units: intervals in
//!   microseconds (floats), rates with units (`50Mb/s`; a bare integer is bit/s, as ns-3's
//!   `DataRate` reads it). A missing key takes `third.cc`'s default, except the ones that
//!   have no usable default there and are required: `RP_TIMER`, `EWMA_GAIN`, `RATE_AI`,
//!   `RATE_HAI` for DCQCN, `RATE_AI` for HPCC, `RATE_AI`/`RATE_HAI` for TIMELY, `EWMA_GAIN`
//!   for DCTCP. TIMELY's own parameters are `rdma-hw.cc`'s attribute defaults, which
//!   `third.cc` does not set. A key the mode does not read gets a note.
//! - **Window**: `HAS_WIN` (default 1) bounds bytes in flight by the base bandwidth-delay
//!   product, `VAR_WIN` (default 0) scales it with the rate, `GLOBAL_T` (default 1) takes the
//!   largest base RTT and product for every flow. The simulator takes the largest over all
//!   host pairs; here it is the largest over the run's flows (the same on a fat tree as soon
//!   as one flow crosses the core).
//! - **Switch**: buffer `BUFFER_SIZE × 2^20` bytes (default 16), 4 KiB private
//!   (`SwitchMmu::reserve`, per port and queue; here per ingress PG), headroom
//!   [`HeadroomSizing::HpccCompat`] (`3 × rate × delay` per port) reserved
//!   [`Reservation::PerPort`], alpha [`AlphaPolicy::ScaledByRate`] with base 1/8 at the NIC
//!   rate (the rate of the first host's link, as `get_nic_rate`), XON offset 3 KiB
//!   (`resume_offset`), PFC pauses that last until an explicit RESUME, no peer response
//!   delay (a PAUSE takes effect on arrival) and no preamble or inter-frame gap on links
//!   (ns-3's point-to-point devices have neither). ECN marks on dequeue with the thresholds
//!   of `KMIN_MAP` / `KMAX_MAP` (KB = 1000 bytes) and `PMAX_MAP`, which must cover every
//!   switch port rate (the simulator asserts the same).
//! - **Priorities**: every flow keeps the `pg` of the flow file as its priority. In the
//!   simulator every switch queue but the control queue 0 is lossless; here priorities
//!   1..=7 are lossless. ACKs travel on priority 3 through the switches, as the simulator's
//!   flows' (its switches queue an ACK with its flow's `pg`; `ACK_HIGH_PRIO` does not reach
//!   them). `ACK_HIGH_PRIO 1` only frees the NIC's ACK queue from the data class's PAUSE
//!   (`RdmaEgressQueue::ack_q_idx`). Priority 0 is lossy here; flows on pg 0 get a note.
//! - **Host**: `PACKET_PAYLOAD_SIZE` payload bytes per packet; `L2_ACK_INTERVAL` is in bytes
//!   like `rdma-hw.cc` reads it (0 and 1: every packet); the simulator signals congestion in
//!   the ACK of every marked packet, so the CNP interval is 0 (a CNP per marked packet);
//!   `RATE_BOUND` turns pacing on or off. Go-back-N on NACK (`L2_BACK_TO_ZERO 0`).
//! - **Links**: `ERROR_RATE_PER_LINK` applies to every link whose topology line has error
//!   rate 0, as in `third.cc`.
//!
//! Keys that do not change the results (another mode's parameters, trace and queue
//! monitor files) are accepted and produce a note in [`HpccRun::notes`]; unknown keys are
//! errors. Unsupported settings (`MULTI_RATE 1` with HPCC, `L2_BACK_TO_ZERO 1`,
//! `ENABLE_TRACE 1`) are errors naming the key. `LINK_DOWN t a b` takes the link between
//! nodes a and b down t microseconds after t = 2 s, as the original does.
//!
//! Invariants: every error names the config file, the line (0 for a missing key) and the
//! key; errors inside the topology or flow file also name that file and its line. File
//! paths in the config are used as written, relative to the current working directory as
//! in the original; an input file (topology, flows) not found there but found relative to
//! the config file's directory is read from there, with a note, so a config runs from any
//! directory. Output files stay relative to the working directory. A returned
//! [`HpccRun`]'s config has passed [`SimConfig::validate`]. Parsing never panics.

use std::path::{Path, PathBuf};

use crate::ns3_files::{input_path, ns3_rate, seconds};

use crate::config::{
    Admission, AlphaPolicy, CcConfig, ConfigError, EcnPoint, HeadroomSizing, SimConfig,
    WindowConfig,
};
use crate::topology::{NodeKind, Topology};
use headroom_mech::buffer::mmu::Reservation;
use headroom_mech::buffer::Alpha;
use headroom_mech::cc::{
    DcqcnConfig, DcqcnVariant, DctcpConfig, HpccConfig, TimelyConfig, UeReaction,
};
use headroom_mech::ecn::RedConfig;
use headroom_mech::pfc::PfcConfig;
use headroom_mech::units::{Rate, Time};

/// An HPCC simulator run translated for headroom.
#[derive(Clone, Debug, PartialEq)]
pub struct HpccRun {
    /// The resolved input of the engine; it has passed [`SimConfig::validate`].
    pub config: SimConfig,
    /// `FCT_OUTPUT_FILE`: where the simulator writes per-flow completion times.
    pub fct_output: Option<PathBuf>,
    /// `PFC_OUTPUT_FILE`: where the simulator writes PFC events.
    pub pfc_output: Option<PathBuf>,
    /// One line per accepted key that has no effect here, and per approximation worth
    /// knowing about (e.g. flows on priority 0).
    pub notes: Vec<String>,
}

/// Why the HPCC simulator's config could not be used.
pub use crate::ns3_files::Ns3ConfigError as HpccConfigError;

/// The parsed config, making [`HpccConfigError`]s.
type Conf<'a> = crate::ns3_files::Conf<'a, HpccConfigError>;

/// The simulator's default for `BUFFER_SIZE` (MB, `third.cc`'s `buffer_size`).
const DEFAULT_BUFFER_MB: u64 = 16;
/// `SwitchMmu::reserve`.
const RESERVE_BYTES: u64 = 4 * 1024;
/// `SwitchMmu::resume_offset`.
const RESUME_OFFSET_BYTES: u64 = 3 * 1024;
/// `third.cc`'s `simulator_stop_time` when `SIMULATOR_STOP_TIME` is absent.
const DEFAULT_STOP_SECONDS: f64 = 3.01;
/// Priority of ACKs: the data class of the simulator's flows (its switches queue an ACK
/// with its flow's `pg`; `ACK_HIGH_PRIO` never reaches them).
const ACK_PRIO: u8 = 3;

/// Keys accepted without effect, with the reason given in the note.
const IGNORED: &[(&str, &str)] = &[
    (
        "QLEN_MON_FILE",
        "queue-length monitor output is not written",
    ),
    (
        "QLEN_MON_START",
        "queue-length monitor output is not written",
    ),
    ("QLEN_MON_END", "queue-length monitor output is not written"),
    ("TRACE_FILE", "packet traces are not written"),
    ("TRACE_OUTPUT_FILE", "packet traces are not written"),
    (
        "NIC_TOTAL_PAUSE_TIME",
        "not used by the simulator's DCQCN model",
    ),
    (
        "DATA_RATE",
        "unused by the simulator (link rates come from the topology file)",
    ),
    (
        "LINK_DELAY",
        "unused by the simulator (link delays come from the topology file)",
    ),
    (
        "PAUSE_TIME",
        "the simulator's PAUSE lasts until RESUME; here PAUSE is refreshed until RESUME",
    ),
];

/// Congestion-control keys, the `CC_MODE`s that read them, and what they are.
const CC_KEYS: &[(&str, &[u32], &str)] = &[
    ("ALPHA_RESUME_INTERVAL", &[1], "a DCQCN parameter"),
    ("RATE_DECREASE_INTERVAL", &[1], "a DCQCN parameter"),
    ("CLAMP_TARGET_RATE", &[1], "a DCQCN parameter"),
    ("RP_TIMER", &[1], "a DCQCN parameter"),
    ("FAST_RECOVERY_TIMES", &[1], "a DCQCN parameter"),
    ("EWMA_GAIN", &[1, 8], "a DCQCN/DCTCP parameter"),
    ("RATE_AI", &[1, 3, 7], "a DCQCN/HPCC/TIMELY parameter"),
    ("RATE_HAI", &[1, 7], "a DCQCN/TIMELY parameter"),
    ("DCTCP_RATE_AI", &[8], "a DCTCP parameter"),
    ("U_TARGET", &[3], "an HPCC parameter"),
    ("MI_THRESH", &[3], "an HPCC parameter"),
    ("INT_MULTI", &[3], "an HPCC parameter"),
    ("MULTI_RATE", &[3], "an HPCC parameter"),
    ("SAMPLE_FEEDBACK", &[3], "an HPCC parameter"),
    ("FAST_REACT", &[3], "an HPCC parameter"),
    ("PINT_LOG_BASE", &[10], "an HPCC-PINT parameter"),
    ("PINT_PROB", &[10], "an HPCC-PINT parameter"),
];

/// The name of a `CC_MODE` headroom runs.
fn mode_name(mode: u32) -> &'static str {
    match mode {
        1 => "DCQCN",
        3 => "HPCC",
        7 => "TIMELY",
        _ => "DCTCP",
    }
}

/// Keys that change the run.
const USED: &[&str] = &[
    "GLOBAL_T",
    "TOPOLOGY_FILE",
    "FLOW_FILE",
    "SIMULATOR_STOP_TIME",
    "PACKET_PAYLOAD_SIZE",
    "CC_MODE",
    "MIN_RATE",
    "L2_ACK_INTERVAL",
    "L2_BACK_TO_ZERO",
    "L2_CHUNK_SIZE",
    "HAS_WIN",
    "VAR_WIN",
    "RATE_BOUND",
    "ACK_HIGH_PRIO",
    "KMAX_MAP",
    "KMIN_MAP",
    "PMAX_MAP",
    "BUFFER_SIZE",
    "ENABLE_TRACE",
    "ERROR_RATE_PER_LINK",
    "LINK_DOWN",
    "FCT_OUTPUT_FILE",
    "PFC_OUTPUT_FILE",
    "ENABLE_QCN",
    "USE_DYNAMIC_PFC_THRESHOLD",
];

/// Reads an HPCC config file and translates it (see the module documentation).
pub fn load(path: &Path) -> Result<HpccRun, HpccConfigError> {
    let text = crate::input::read_text(path, crate::input::MAX_TEXT_BYTES).map_err(|source| {
        HpccConfigError::Io {
            path: path.to_path_buf(),
            source,
        }
    })?;
    parse(&text, path)
}

/// Translates the text of an HPCC config file; `path` names it in errors. The topology and
/// flow files it names are read (relative to the current directory).
pub fn parse(text: &str, path: &Path) -> Result<HpccRun, HpccConfigError> {
    let c = Conf::read(text, path, "the HPCC simulator", |key| {
        USED.contains(&key)
            || IGNORED.iter().any(|(k, _)| *k == key)
            || CC_KEYS.iter().any(|(k, _, _)| *k == key)
    })?;
    let mut notes = Vec::new();
    let mut link_failures = Vec::new();

    let cc_mode: u32 = c.num("CC_MODE", "an integer")?.unwrap_or(1);
    match cc_mode {
        1 | 3 | 7 | 8 => {}
        10 => {
            return Err(c.err(
                "CC_MODE",
                "CC_MODE 10 (HPCC-PINT) is not supported: 1 (DCQCN), 3 (HPCC), 7 (TIMELY) \
                 and 8 (DCTCP) are",
            ))
        }
        other => {
            return Err(c.err(
                "CC_MODE",
                format!(
                    "CC_MODE {other} is not a mode of the simulator: 1 (DCQCN), 3 (HPCC), \
                     7 (TIMELY) and 8 (DCTCP) are supported, 10 (HPCC-PINT) is not"
                ),
            ))
        }
    }

    // Accepted keys without effect, in file order.
    let mut ignored: Vec<(usize, &str, String)> = c
        .entries
        .iter()
        .filter_map(|(key, e)| {
            if let Some((_, why)) = IGNORED.iter().find(|(k, _)| k == key) {
                return Some((e.line, *key, why.to_string()));
            }
            let (_, modes, what) = CC_KEYS.iter().find(|(k, _, _)| k == key)?;
            (!modes.contains(&cc_mode)).then(|| {
                (
                    e.line,
                    *key,
                    format!("{what}; has no effect with {}", mode_name(cc_mode)),
                )
            })
        })
        .collect();
    ignored.sort_unstable();
    for (line, key, why) in ignored {
        notes.push(format!("{key} (line {line}): {why}; ignored"));
    }

    // Unsupported settings.
    for (key, what) in [
        ("L2_BACK_TO_ZERO", "going back to the chunk start on NACK"),
        ("ENABLE_TRACE", "packet traces"),
    ] {
        if c.flag(key)? == Some(true) {
            return Err(c.err(key, format!("{what} is not supported; set {key} 0")));
        }
    }
    if let Some((line, v)) = c.values("LINK_DOWN")? {
        let nums: Vec<u64> = v
            .iter()
            .map(|s| s.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| {
                c.err_at(
                    line,
                    "LINK_DOWN",
                    "expected `<time> <node> <node>` as integers",
                )
            })?;
        if nums.len() != 3 {
            return Err(c.err_at(
                line,
                "LINK_DOWN",
                format!(
                    "expected 3 values (`<time> <node> <node>`), found {}",
                    nums.len()
                ),
            ));
        }
        if nums[0] != 0 {
            // As in the HPCC simulator: the time is in microseconds after t = 2 s.
            let after = nums[0].checked_mul(1_000_000).ok_or_else(|| {
                c.err_at(
                    line,
                    "LINK_DOWN",
                    format!("{} microseconds is out of range", nums[0]),
                )
            })?;
            let node = |n: u64| crate::topology::NodeId(u32::try_from(n).unwrap_or(u32::MAX));
            link_failures.push(crate::config::LinkFailure {
                time: Time::from_ms(2_000) + Time::from_ps(after),
                a: node(nums[1]),
                b: node(nums[2]),
            });
        }
    }
    if let Some(chunk) = c.entries.get("L2_CHUNK_SIZE") {
        notes.push(format!(
            "L2_CHUNK_SIZE (line {}): only matters with L2_BACK_TO_ZERO 1 and for chunk-boundary ACKs, which are not modelled; ignored",
            chunk.line
        ));
    }
    if c.flag("USE_DYNAMIC_PFC_THRESHOLD")? == Some(false) {
        notes.push(
            "USE_DYNAMIC_PFC_THRESHOLD 0: the simulator's switch uses dynamic thresholds regardless; so does this run"
                .to_string(),
        );
    }

    // Files.
    let topo_path = input_path(
        path,
        "TOPOLOGY_FILE",
        c.req_one("TOPOLOGY_FILE")?,
        &mut notes,
    );
    let mut topology = crate::topology::hpcc::load(&topo_path)
        .map_err(|e| c.err("TOPOLOGY_FILE", e.to_string()))?;
    let flow_path = input_path(path, "FLOW_FILE", c.req_one("FLOW_FILE")?, &mut notes);
    let flow_text = crate::input::read_text(&flow_path, crate::input::MAX_FLOW_FILE_BYTES)
        .map_err(|e| {
            c.err(
                "FLOW_FILE",
                format!("{}: cannot read: {e}", flow_path.display()),
            )
        })?;
    let shown = flow_path.display().to_string();
    let flows = crate::workload::hpcc::parse(&flow_text, &shown)
        .map_err(|e| c.err("FLOW_FILE", e.to_string()))?;
    if let Some((line, reason)) = crate::scenario::flow_file_node_error(&flow_text, &topology) {
        return Err(c.err("FLOW_FILE", format!("{shown}:{line}: {reason}")));
    }

    c.error_rate_per_link(&mut topology)?;
    let nic_rate = first_host_rate(&topology).ok_or_else(|| {
        c.err(
            "TOPOLOGY_FILE",
            format!(
                "{}: the topology has no host with a link",
                topo_path.display()
            ),
        )
    })?;

    let mut config = SimConfig::new(topology, flows);
    config.link.frame_overhead = 0;
    let stop = c
        .num::<f64>("SIMULATOR_STOP_TIME", "a number of seconds")?
        .unwrap_or(DEFAULT_STOP_SECONDS);
    config.stop_time = Some(seconds(stop).ok_or_else(|| {
        c.err(
            "SIMULATOR_STOP_TIME",
            format!("{stop} is not a representable non-negative number of seconds"),
        )
    })?);

    // Switch.
    let sw = &mut config.switch;
    let mb: u64 = c
        .num("BUFFER_SIZE", "an integer (MB)")?
        .unwrap_or(DEFAULT_BUFFER_MB);
    sw.buffer_bytes = mb
        .checked_mul(1 << 20)
        .filter(|&b| b > 0 && b <= u64::from(u32::MAX))
        .ok_or_else(|| {
            c.err(
                "BUFFER_SIZE",
                format!("{mb} MB is out of range (1 to 4095)"),
            )
        })?;
    sw.private_bytes = RESERVE_BYTES;
    sw.headroom = HeadroomSizing::HpccCompat;
    sw.reservation = Reservation::PerPort;
    let eighth = Alpha::from_dynamic_th(-3)
        .unwrap_or_else(|_| unreachable!("-3 is within dynamic_th's range"));
    sw.alpha = AlphaPolicy::ScaledByRate {
        base: eighth,
        nic_rate,
    };
    sw.xon_offset = RESUME_OFFSET_BYTES;
    sw.pfc = PfcConfig::explicit_resume_mode();
    sw.response_bytes = 0;
    // ACK_HIGH_PRIO only decides which PAUSE holds the NIC's ACK queue: class 0 (which
    // nothing pauses) or the data class (`RdmaEgressQueue::ack_q_idx`).
    let ack_high = c.flag("ACK_HIGH_PRIO")?.unwrap_or(false);
    sw.lossless = 0xFE;
    sw.scheduler.strict = 0;
    sw.ecn.enabled = c.flag("ENABLE_QCN")?.unwrap_or(true);
    sw.ecn.point = EcnPoint::Dequeue;
    sw.ecn.red = None;
    sw.ecn.by_rate = ecn_maps(&c, &config.topology)?;
    // Its switch admits a packet once fully received.
    sw.admission = Admission::LastBit;

    // Hosts.
    let h = &mut config.host;
    let payload: u64 = c
        .num("PACKET_PAYLOAD_SIZE", "an integer (bytes)")?
        .unwrap_or(1000);
    if payload == 0 {
        return Err(c.err("PACKET_PAYLOAD_SIZE", "must be greater than zero"));
    }
    h.mtu_payload = payload;
    h.ack_interval = c
        .num::<u64>("L2_ACK_INTERVAL", "an integer (bytes)")?
        .unwrap_or(0)
        .max(1);
    h.ack_prio = ACK_PRIO;
    h.ack_pause_class = if ack_high { 0 } else { ACK_PRIO };
    h.cnp_interval = Time::ZERO;
    h.pacing = c.flag("RATE_BOUND")?.unwrap_or(true);
    // third.cc's defaults: a window of the largest bandwidth-delay product, not scaled.
    h.window = WindowConfig {
        enabled: c.flag("HAS_WIN")?.unwrap_or(true),
        variable: c.flag("VAR_WIN")?.unwrap_or(false),
        global: c.flag("GLOBAL_T")?.unwrap_or(true),
    };
    h.cc = match cc_mode {
        1 => CcConfig::Dcqcn(dcqcn(&c)?),
        3 => CcConfig::Hpcc(hpcc(&c)?),
        7 => CcConfig::Timely(timely(&c)?),
        _ => CcConfig::Dctcp(dctcp(&c, payload)?),
    };

    if config.flows.iter().any(|f| f.prio == 0) {
        notes.push(
            "flows on pg 0 share the control queue in the HPCC simulator; here priority 0 is lossy"
                .to_string(),
        );
    }
    if config.flows.iter().any(|f| f.prio != ACK_PRIO) {
        notes.push(format!(
            "ACKs travel on priority {ACK_PRIO} here; the HPCC simulator's switches queue them \
             with their flow's pg"
        ));
    }

    config.link_failures = link_failures;
    config.validate().map_err(|e| match e {
        ConfigError::Topology(t) => c.err("TOPOLOGY_FILE", t.to_string()),
        e @ ConfigError::Link { .. } => c.err("TOPOLOGY_FILE", e.to_string()),
        ConfigError::Flow { index, reason } => {
            c.err("FLOW_FILE", format!("flow {index}: {reason}"))
        }
        ConfigError::Parameter { field, reason } => match field {
            "host.mtu_payload" => c.err("PACKET_PAYLOAD_SIZE", reason),
            "stop_time" => c.err("SIMULATOR_STOP_TIME", reason),
            "link_failures" => c.err("LINK_DOWN", reason),
            "switch.buffer_bytes" => c.err("BUFFER_SIZE", reason),
            other => c.err(other, reason),
        },
    })?;

    Ok(HpccRun {
        config,
        fct_output: c.one("FCT_OUTPUT_FILE")?.map(PathBuf::from),
        pfc_output: c.one("PFC_OUTPUT_FILE")?.map(PathBuf::from),
        notes,
    })
}

/// A rate key (`50Mb/s`; a bare integer is bit/s), or `default` when absent (`None`: the
/// key is required).
fn rate_key(c: &Conf, key: &str, default: Option<Rate>) -> Result<Rate, HpccConfigError> {
    match c.one(key)? {
        Some(s) => ns3_rate(s)
            .ok_or_else(|| c.err(key, format!("`{s}` is not a rate (write e.g. `50Mb/s`)"))),
        None => default.ok_or_else(|| c.missing(key)),
    }
}

/// A rate key that must be above zero.
fn positive_rate(c: &Conf, key: &str, default: Option<Rate>) -> Result<Rate, HpccConfigError> {
    let r = rate_key(c, key, default)?;
    if r.bps() == 0 {
        return Err(c.err(key, "must be greater than zero"));
    }
    Ok(r)
}

/// HPCC (`CC_MODE 3`) with the config's values; `third.cc`'s defaults where absent, except
/// `RATE_AI` (required) and `MULTI_RATE` (only `0`, one rate per flow, is modelled).
fn hpcc(c: &Conf) -> Result<HpccConfig, HpccConfigError> {
    if c.flag("MULTI_RATE")?.unwrap_or(true) {
        return Err(c.err(
            "MULTI_RATE",
            "a rate per hop (MULTI_RATE 1, third.cc's default) is not supported; set MULTI_RATE 0",
        ));
    }
    let eta: f64 = c.num("U_TARGET", "a number")?.unwrap_or(0.95);
    if !(eta > 0.0 && eta <= 1.0) {
        return Err(c.err("U_TARGET", format!("must be in (0, 1], found {eta}")));
    }
    let int_multi: u32 = c.num("INT_MULTI", "an integer")?.unwrap_or(1);
    if int_multi == 0 {
        return Err(c.err("INT_MULTI", "must be at least 1"));
    }
    Ok(HpccConfig {
        target_utilization: eta,
        mi_thresh: c.num("MI_THRESH", "an integer")?.unwrap_or(5),
        fast_react: c.flag("FAST_REACT")?.unwrap_or(true),
        rate_ai: positive_rate(c, "RATE_AI", None)?,
        min_rate: positive_rate(c, "MIN_RATE", Some(Rate::from_mbps(100)))?,
        sample_feedback: c.flag("SAMPLE_FEEDBACK")?.unwrap_or(false),
        int_multi,
    })
}

/// TIMELY (`CC_MODE 7`): `RATE_AI` and `RATE_HAI` required, `MIN_RATE` as `third.cc`, the
/// rest `rdma-hw.cc`'s attribute defaults (which `third.cc` does not set).
fn timely(c: &Conf) -> Result<TimelyConfig, HpccConfigError> {
    Ok(TimelyConfig {
        rate_ai: positive_rate(c, "RATE_AI", None)?,
        rate_hai: positive_rate(c, "RATE_HAI", None)?,
        min_rate: positive_rate(c, "MIN_RATE", Some(Rate::from_mbps(100)))?,
        ..TimelyConfig::default()
    })
}

/// DCTCP (`CC_MODE 8`): `EWMA_GAIN` required, `DCTCP_RATE_AI` and `MIN_RATE` as `third.cc`.
fn dctcp(c: &Conf, payload: u64) -> Result<DctcpConfig, HpccConfigError> {
    let g: f64 = c
        .num("EWMA_GAIN", "a number")?
        .ok_or_else(|| c.missing("EWMA_GAIN"))?;
    if !(g > 0.0 && g <= 1.0) {
        return Err(c.err("EWMA_GAIN", format!("must be in (0, 1], found {g}")));
    }
    Ok(DctcpConfig {
        g,
        rate_ai: positive_rate(c, "DCTCP_RATE_AI", Some(Rate::from_mbps(1000)))?,
        min_rate: positive_rate(c, "MIN_RATE", Some(Rate::from_mbps(100)))?,
        packet_payload: payload,
    })
}

/// The DCQCN reaction point of `rdma-hw.cc`'s Mellanox variant with the config's values.
fn dcqcn(c: &Conf) -> Result<DcqcnConfig, HpccConfigError> {
    let us = |key: &str, default: Option<f64>| -> Result<Time, HpccConfigError> {
        let v = match c.num::<f64>(key, "a number of microseconds")? {
            Some(v) => v,
            None => match default {
                Some(d) => d,
                None => return Err(c.missing(key)),
            },
        };
        seconds(v * 1e-6).ok_or_else(|| {
            c.err(
                key,
                format!("{v} is not a representable non-negative number of microseconds"),
            )
        })
    };
    let rate = |key: &str, default: Option<Rate>| rate_key(c, key, default);
    let g: f64 = c
        .num("EWMA_GAIN", "a number")?
        .ok_or_else(|| c.missing("EWMA_GAIN"))?;
    if !(0.0..=1.0).contains(&g) {
        return Err(c.err("EWMA_GAIN", format!("must be in [0, 1], found {g}")));
    }
    Ok(DcqcnConfig {
        variant: DcqcnVariant::Mellanox,
        g,
        alpha_resume_interval: us("ALPHA_RESUME_INTERVAL", Some(55.0))?,
        rate_decrease_interval: us("RATE_DECREASE_INTERVAL", Some(4.0))?,
        rp_timer: us("RP_TIMER", None)?,
        byte_counter: 0,
        fast_recovery_times: c.num("FAST_RECOVERY_TIMES", "an integer")?.unwrap_or(5),
        rate_ai: rate("RATE_AI", None)?,
        rate_hai: rate("RATE_HAI", None)?,
        min_rate: rate("MIN_RATE", Some(Rate::from_mbps(100)))?,
        clamp_target_rate: c.flag("CLAMP_TARGET_RATE")?.unwrap_or(false),
        rate_on_first_cnp: 1.0,
        // Its switches never mark UE.
        on_ue: UeReaction::Hold,
    })
}

/// The ECN thresholds of `KMIN_MAP`, `KMAX_MAP` and `PMAX_MAP`, checked to cover every
/// switch port rate of `topo`.
fn ecn_maps(c: &Conf, topo: &Topology) -> Result<Vec<(Rate, RedConfig)>, HpccConfigError> {
    let kmin = c.rate_map("KMIN_MAP", "an integer (KB)", |s| s.parse::<u64>().ok())?;
    let kmax = c.rate_map("KMAX_MAP", "an integer (KB)", |s| s.parse::<u64>().ok())?;
    let pmax = c.rate_map("PMAX_MAP", "a probability", |s| {
        s.parse::<f64>().ok().filter(|p| (0.0..=1.0).contains(p))
    })?;
    let mut rates: Vec<Rate> = topo
        .links
        .iter()
        .filter(|l| {
            [l.a, l.b]
                .iter()
                .any(|n| topo.nodes.get(n.index()) == Some(&NodeKind::Switch))
        })
        .map(|l| l.rate)
        .collect();
    rates.sort();
    rates.dedup();
    for r in &rates {
        for (key, has) in [
            ("KMIN_MAP", kmin.contains_key(r)),
            ("KMAX_MAP", kmax.contains_key(r)),
            ("PMAX_MAP", pmax.contains_key(r)),
        ] {
            if !has {
                return Err(c.err(
                    key,
                    format!(
                        "no entry for {} bit/s, the rate of a switch port ({r})",
                        r.bps()
                    ),
                ));
            }
        }
    }
    let mut out = Vec::new();
    for (r, &kmin_kb) in &kmin {
        let (Some(&kmax_kb), Some(&p)) = (kmax.get(r), pmax.get(r)) else {
            continue;
        };
        let (Some(lo), Some(hi)) = (kmin_kb.checked_mul(1000), kmax_kb.checked_mul(1000)) else {
            return Err(c.err(
                "KMAX_MAP",
                format!("thresholds for {} bit/s are out of range", r.bps()),
            ));
        };
        if hi < lo {
            return Err(c.err(
                "KMAX_MAP",
                format!(
                    "kmax {kmax_kb} KB is below kmin {kmin_kb} KB for {} bit/s",
                    r.bps()
                ),
            ));
        }
        out.push((
            *r,
            RedConfig {
                kmin: lo,
                kmax: hi,
                pmax: p,
            },
        ));
    }
    Ok(out)
}

/// The rate of the first host's link (`third.cc`'s `get_nic_rate`).
fn first_host_rate(topo: &Topology) -> Option<Rate> {
    let h = topo.hosts().into_iter().next()?;
    topo.links
        .iter()
        .find(|l| l.a == h || l.b == h)
        .map(|l| l.rate)
}
