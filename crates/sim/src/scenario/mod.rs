//! Scenario files: the TOML input of `headroom run`.
//!
//! [`load`] and [`parse`] turn a scenario file into a [`Scenario`]: a name, the resolved
//! [`SimConfig`] the engine runs, [`OutputOptions`], and warnings. The user's reference,
//! with every key's type, unit and default, is `docs/scenario.md` (kept equal to the
//! parser by `tests/scenario_reference.rs`). The schema in short (every section but
//! `[topology]` is optional):
//!
//! ```toml
//! name = "incast-2to1"          # default: the file stem
//! seed = 1                      # default 1
//! stop_time = "10ms"            # default: run until every flow finished
//!
//! [topology]                    # required
//! kind = "dumbbell"             # dumbbell | star | chain | leaf-spine | fat-tree | dragonfly
//!                               #   | links | hpcc-file
//! left_hosts = 2                # dumbbell: left_hosts, right_hosts, host_rate, bottleneck_rate
//! right_hosts = 1               # star: hosts, rate; chain: switches, hosts_per_switch, rate
//! host_rate = "100Gbps"         # leaf-spine: leaves, spines, hosts_per_leaf, host_rate,
//! bottleneck_rate = "100Gbps"   #   uplink_rate | oversubscription; fat-tree: k, rate;
//!                               # dragonfly: groups, routers, hosts_per_router,
//!                               #   global_links, rate, global_rate, global_delay
//! delay = "1us"                 # every builder: one-way link delay, default "1us"
//! # links: hosts = N, switches = M (hosts are ids 0..N, switches N..N+M), and
//! #   [[topology.link]] a, b, rate, delay (default "1us"), error_rate (default 0)
//! # hpcc-file: file = "topology.txt" (the ns-3 HPCC simulator's topology format)
//!
//! [fabric]                      # kind = "pfc" (default) | "credit" | "flow-channels"
//! [fabric.credit]               # vls (1, 2, 4, 8; default 8), block ("64B"), vl_buffer
//!                               # ("128KiB" per ingress port and VL), update_period
//!                               # (default 65,536 byte times), update_threshold
//! [fabric.flow_channels]        # link ("pfc" | "credit"), table_size (2048), unit
//!                               # ("256B"), match, routing, ugal_threshold, ack_batch, ack_bits,
//!                               # ack_frame_overhead, ack_{idle,busy,max}_delay
//! [fabric.flow_channels.endpoint] # endpoint congestion: bytes, packets, growth, window,
//!                               # limits (per severity)
//! [fabric.flow_channels.fgfc]   # FGFC to hosts: target, drop, pause, credit
//! [fabric.flow_channels.hop_credits] # HeadroomACK: high, target, drop, margin, credit
//! [fabric.flow_channels.injection] # port (bytes a host port may have in the fabric)
//!
//! [switch]
//! buffer = "32MiB"              # shared buffer per switch
//! cell = "80B"                  # MMU cell
//! private = "0B"                # private bytes per ingress PG
//! headroom = "pfc-guide"        # pfc-guide | dsh | sonic | hpcc | a fixed size ("50KB")
//! ports = 32                    # ports of the chip (reserved for even if unconnected)
//! reservation = "per-pg"        # per-pg | per-port (SIH)
//! scheme = "sih"                # sih | shp (needs [switch.shp] pool or over_subscribe_ratio)
//!                               # | dsh ([switch.dsh] delta_q, delta_p; default 1500B each)
//! dynamic_th = -3               # or alpha = 0.125, alpha_percent = 6,
//!                               # alpha_scaling = { base = 0.125, nic_rate = "100Gbps" }
//! egress_alpha = 1.0
//! xon_offset = "3KiB"
//! lossless = [3]
//! admission = "first-bit"       # first-bit | last-bit (ns-3 HPCC's switch): when a frame's
//!                               # cells are charged
//! [switch.headroom_params]      # pfc-guide: mtu_r, mtu_s, response; dsh: mtu; sonic:
//!                               # port_mtu, lossless_mtu, small_packet_percent, mac_phy,
//!                               # gearbox_delay, response
//! [switch.pfc]                  # mode = "explicit-resume" | "refresh", quanta, response
//! [switch.scheduler]            # strict = [7], quantum = "1600B", weights = [1, ...] (8)
//! [switch.ecn]                  # enabled, point = "dequeue" | "enqueue", and kmin, kmax,
//!                               # pmax (all three or none: none scales with port rate)
//! [switch.ecn.queue.3]          # per egress queue 0-7: kmin, kmax, pmax, or enabled = false
//! [host]                        # mtu, header, ack, cnp, ack_interval, ack_prio,
//!                               # cnp_interval, rto, pacing, nic_buffer = { size, xoff, xon, drain }
//! [host.cc]                     # algorithm = "dcqcn" | "dctcp" | "timely" | "hpcc" |
//!                               # "powertcp" | "none"; dcqcn: preset = "hpcc" | "paper",
//!                               # then any DcqcnConfig field (variant, g, rp_timer, ...);
//!                               # the others their config's fields
//! [[workload]]                  # zero or more, see below
//! [[link_failure]]              # time, a, b: the link between nodes a and b fails
//! [output]                      # sample_interval, fail_on_lossless_drop, plots, compat
//! ```
//!
//! Workload kinds (`start` defaults to `"0us"`, `prio` to 3, `hosts` to `"all"`; `prio` may
//! be a list of lossless classes, each flow's drawn from it):
//! - `poisson`: `load` in (0, 1], `cdf` (a built-in: websearch, fbhdp, alistorage,
//!   googlerpc) or `cdf_file`, `start`, `duration`, `prio`, `hosts`, `cross_leaf`,
//!   `seed_offset`;
//! - `incast-poisson`: `load` in (0, 1], `fan_in`, `size`, `start`, `duration`, `prio`,
//!   `hosts`, `seed_offset` (fan-ins to random receivers from senders on other leaves);
//! - `incast`: `senders` (a list of ids, or a stride or `"all"` less the receiver) or
//!   `sender_count = N` (the first N hosts other than the receiver, in id order),
//!   `receiver`, `size`, `start`, `repeat = { interval, count }`, `prio`;
//! - `permutation`: `size`, `start`, `prio`, `hosts`, `seed_offset`;
//! - `all-to-all`: `size`, `start`, `prio`, `hosts`;
//! - `flow-file`: `file` (the ns-3 HPCC flow list format);
//! - `flows`: `[[workload.flow]]` with `src`, `dst`, `size`, `start`, `prio`, `dport`.
//!
//! Flows of all workloads are concatenated in workload order, then sorted by start time
//! (stable), so they are numbered in that order.
//!
//! Invariants:
//! - Every table rejects keys it does not know ("unknown key `x`", with the key's span).
//! - Quantities with units are strings (`"100Gbps"`, `"2us"`, `"16MiB"`); a bare number
//!   where a unit is needed is an error naming the field and showing the value with a unit
//!   (`write "100Gbps"`). Sizes written without a unit inside the string (`"9216"`) are
//!   bytes.
//! - Every error is a [`ScenarioError`]: the scenario file, its text, the dotted field path
//!   (`switch.pfc.quanta`, `workload[1].receiver`, `topology.link[3].b`), the reason, and
//!   the byte span of the offending key or value when there is one. Errors inside a
//!   referenced file (topology, flow and CDF files) also name that file and line.
//! - A returned [`Scenario`]'s config has passed [`SimConfig::validate`].
//! - Deterministic: the same text and referenced files always give the same [`Scenario`].
//!   Random workloads draw from a `rand_pcg::Pcg64` seeded by [`workload_seed`].
//! - Parsing never panics; inputs that would need more than [`MAX_FLOWS`] flows are errors
//!   rather than memory exhaustion.
//! - Relative file references resolve against the directory of the scenario file.
//!
//! Layout: this module holds the entry points, the error types and the top level;
//! `fields` the spanned TOML tree and typed field access; `topology`, `switch`, `host`,
//! `workload`, `output` and `fabric` one section each.

mod fabric;
mod fields;
mod host;
mod output;
mod overrides;
mod switch;
mod topology;
mod workload;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::config::{ConfigError, LinkFailure, SimConfig};
use crate::routing::RoutingKind;
use crate::topology::NodeId;
use crate::workload::WorkloadGroups;
use fields::{table_entries, Cx, Fld, Res, Tbl, V};
use headroom_mech::units::Time;
use host::parse_host;
use output::parse_output;
use switch::parse_switch;
use topology::parse_topology;
use workload::{parse_workload, Flows};

pub use overrides::{with_overrides, Override, OverrideError};
pub(crate) use workload::flow_file_node_error;

/// Largest number of flows a scenario may generate (all workloads together). Larger
/// workloads are rejected with an error naming the workload instead of exhausting memory.
pub const MAX_FLOWS: usize = 20_000_000;

/// One-way link delay of the topology builders when `delay` is not given.
pub const DEFAULT_DELAY: Time = Time::from_us(1);

/// Priority of workload flows when `prio` is not given.
pub const DEFAULT_PRIO: u8 = 3;

/// A parsed scenario: what to run and what to write.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Name of the run (the `name` key, or the file stem).
    pub name: String,
    /// The resolved input of the engine; it has passed [`SimConfig::validate`].
    pub config: SimConfig,
    /// Output options that are not part of the simulation itself.
    pub output: OutputOptions,
    /// The `[[workload]]` entry of each flow of `config.flows` (to report background and
    /// incast flows apart).
    pub workloads: WorkloadGroups,
    /// Things that are allowed but probably not meant (e.g. a scenario without traffic),
    /// one sentence each, for the caller to show before running.
    pub warnings: Vec<String>,
}

/// Output options of a scenario (the `[output]` section; `sample_interval` and
/// `fail_on_lossless_drop` go into [`SimConfig::record`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputOptions {
    /// Draw plots next to the machine-readable outputs (`plots`, default true).
    pub plots: bool,
    /// Also write outputs in the ns-3 HPCC simulator's formats (`compat = "hpcc"`,
    /// default false).
    pub compat_hpcc: bool,
}

impl Default for OutputOptions {
    fn default() -> Self {
        OutputOptions {
            plots: true,
            compat_hpcc: false,
        }
    }
}

/// A line of a file referenced by a scenario (topology, flow or CDF file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileLocation {
    /// The referenced file, as resolved against the scenario's directory.
    pub path: PathBuf,
    /// 1-based line, or 0 when the problem concerns the whole file (e.g. it is unreadable).
    pub line: usize,
}

/// Why a scenario is invalid: everything a diagnostic renderer (e.g. miette's
/// `NamedSource` plus a label at [`InvalidScenario::span`]) needs.
#[derive(Clone, Debug, PartialEq)]
pub struct InvalidScenario {
    /// The scenario file.
    pub path: PathBuf,
    /// The scenario file's text.
    pub text: String,
    /// Byte range of the offending key or value in [`InvalidScenario::text`], if known.
    pub span: Option<Range<usize>>,
    /// Dotted path of the offending field, e.g. `switch.pfc.quanta` or
    /// `workload[1].receiver`; empty for TOML syntax errors.
    pub field: String,
    /// What is wrong.
    pub reason: String,
    /// The line of a referenced file the problem is in, for errors inside such files.
    pub file: Option<FileLocation>,
}

impl InvalidScenario {
    /// 1-based line and column (in characters) of the start of the span, if there is one.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        let start = self.span.as_ref()?.start;
        let before = self.text.get(..start)?;
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Some((line, col))
    }
}

impl fmt::Display for InvalidScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some((line, col)) = self.line_col() {
            write!(f, ":{line}:{col}")?;
        }
        write!(f, ": ")?;
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        if let Some(loc) = &self.file {
            write!(f, "{}", loc.path.display())?;
            if loc.line > 0 {
                write!(f, ":{}", loc.line)?;
            }
            write!(f, ": ")?;
        }
        write!(f, "{}", self.reason)
    }
}

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The scenario file itself could not be read.
    #[error("{}: cannot read the scenario file: {source}", path.display())]
    Io {
        /// The scenario file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The scenario (or a file it references) is invalid.
    #[error("{0}")]
    Invalid(Box<InvalidScenario>),
}

impl ScenarioError {
    /// The scenario file.
    pub fn path(&self) -> &Path {
        match self {
            ScenarioError::Io { path, .. } => path,
            ScenarioError::Invalid(e) => &e.path,
        }
    }

    /// The scenario file's text (absent when it could not be read).
    pub fn source_text(&self) -> Option<&str> {
        match self {
            ScenarioError::Io { .. } => None,
            ScenarioError::Invalid(e) => Some(&e.text),
        }
    }

    /// Byte range of the offending key or value in [`ScenarioError::source_text`].
    pub fn span(&self) -> Option<Range<usize>> {
        match self {
            ScenarioError::Io { .. } => None,
            ScenarioError::Invalid(e) => e.span.clone(),
        }
    }

    /// Dotted path of the offending field (`None` for I/O errors; empty for TOML syntax
    /// errors).
    pub fn field(&self) -> Option<&str> {
        match self {
            ScenarioError::Io { .. } => None,
            ScenarioError::Invalid(e) => Some(&e.field),
        }
    }

    /// What is wrong, without the file and field prefix.
    pub fn reason(&self) -> String {
        match self {
            ScenarioError::Io { source, .. } => source.to_string(),
            ScenarioError::Invalid(e) => e.reason.clone(),
        }
    }

    /// The referenced file and line the problem is in, for errors inside such files.
    pub fn referenced_file(&self) -> Option<&FileLocation> {
        match self {
            ScenarioError::Io { .. } => None,
            ScenarioError::Invalid(e) => e.file.as_ref(),
        }
    }
}

/// Reads and parses a scenario file. Relative file references in it resolve against the
/// file's directory.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = crate::input::read_text(path, crate::input::MAX_TEXT_BYTES).map_err(|source| {
        ScenarioError::Io {
            path: path.to_path_buf(),
            source,
        }
    })?;
    parse(&text, path)
}

/// Parses scenario text (see the module documentation for the schema). `path` names the
/// file in errors, gives the default name (its stem), and is the base of relative file
/// references (its directory; the current directory when it has none).
pub fn parse(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    parse_in(&Cx::new(text, path, false))
}

/// The keys one table of the scenario format accepts, and those a parsed text wrote in it.
#[doc(hidden)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableKeys {
    /// Every key the table accepts.
    pub accepted: BTreeSet<String>,
    /// The keys the text gave it.
    pub written: BTreeSet<String>,
}

/// For the reference's test (`tests/scenario_reference.rs`): parses `text` as [`parse`]
/// does and returns the keys of every table it read, by table and variant. A table is its
/// dotted path without array indices and with queue numbers as `N` (`""` for the top
/// level, `workload.flow`, `switch.ecn.queue.N`); a variant is the key that selects the
/// table's keys, as written in errors (`kind = "star"`, `headroom = "sonic"`), or `""`.
#[doc(hidden)]
pub fn accepted_keys(
    text: &str,
    path: &Path,
) -> Result<BTreeMap<(String, String), TableKeys>, ScenarioError> {
    let cx = Cx::new(text, path, true);
    parse_in(&cx)?;
    Ok(cx.keys.map(RefCell::into_inner).unwrap_or_default())
}

/// A key whose value selects which keys a table accepts (`[topology] kind`), from the list
/// the parser takes its values from.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// The table, as in [`accepted_keys`].
    pub table: &'static str,
    /// The selecting key.
    pub key: &'static str,
    /// Each value with the keys the table then accepts.
    pub values: &'static [(&'static str, &'static [&'static str])],
}

/// For the reference's test: every [`Variant`] of the scenario format.
#[doc(hidden)]
pub fn variants() -> [Variant; 4] {
    [
        Variant {
            table: "topology",
            key: "kind",
            values: &topology::TOPOLOGY_KINDS,
        },
        Variant {
            table: "workload",
            key: "kind",
            values: &workload::WORKLOAD_KINDS,
        },
        Variant {
            table: "switch.headroom_params",
            key: "headroom",
            values: &switch::HEADROOM_FORMULAS,
        },
        Variant {
            table: "host.cc",
            key: "algorithm",
            values: &host::CC_ALGORITHMS,
        },
    ]
}

fn parse_in(cx: &Cx) -> Result<Scenario, ScenarioError> {
    let (text, path) = (cx.text, cx.path);
    let doc = toml_edit::ImDocument::parse(text).map_err(|e| {
        cx.err(
            "",
            e.span(),
            format!("invalid TOML: {}", e.message().trim_end()),
        )
    })?;
    let entries = table_entries(doc.as_table());
    let mut top = Tbl {
        name: String::new(),
        span: None,
        entries: &entries,
    };
    top.check_keys(
        cx,
        &[
            "name",
            "seed",
            "stop_time",
            "routing",
            "deadlock_detection",
            "topology",
            "fabric",
            "switch",
            "host",
            "workload",
            "link_failure",
            "output",
        ],
    )?;

    let name = match top.get(cx, "name") {
        Some(f) => {
            let s = f.str(cx)?;
            if s.trim().is_empty() {
                return Err(f.err(cx, "must not be empty"));
            }
            unsafe_dir_name(s).map_or(Ok(()), |why| Err(f.err(cx, why)))?;
            s.to_string()
        }
        None => path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "scenario".to_string()),
    };
    let seed = match top.get(cx, "seed") {
        Some(f) => f.uint(cx, 0, i64::MAX as u64)?,
        None => 1,
    };
    let stop_time = match top.get(cx, "stop_time") {
        Some(f) => Some(f.positive_time(cx)?),
        None => None,
    };

    let topo_field = top.req(cx, "topology")?;
    let topo_span = topo_field.span();
    let network = parse_topology(cx, &topo_field)?;

    let mut config = SimConfig::new(network.topology, Vec::new());
    config.fabric.links = network.links;
    if let Some(bytes) = network.frame_overhead {
        config.link.frame_overhead = bytes;
    }
    config.seed = seed;
    config.stop_time = stop_time;
    if let Some(f) = top.get(cx, "routing") {
        config.routing = f.choice(
            cx,
            "routing",
            &[
                ("shortest-path", RoutingKind::ShortestPath),
                ("spanning-tree", RoutingKind::SpanningTree),
            ],
        )?;
    }
    if let Some(f) = top.get(cx, "deadlock_detection") {
        config.deadlock_detection = match &f.node.v {
            V::Bool(false) => None,
            V::Str(s) if s == "off" => None,
            _ => Some(f.positive_time(cx)?),
        };
    }
    if let Some(f) = top.get(cx, "fabric") {
        fabric::parse_fabric(cx, &f, &mut config.fabric)?;
    }
    if let Some(f) = top.get(cx, "switch") {
        parse_switch(cx, &f, &mut config.switch)?;
    }
    if let Some(f) = top.get(cx, "host") {
        parse_host(cx, &f, &mut config)?;
    }
    let mut output = OutputOptions::default();
    if let Some(f) = top.get(cx, "output") {
        parse_output(cx, &f, &mut config, &mut output)?;
    }

    let mut flows = Flows::default();
    if let Some(f) = top.get(cx, "workload") {
        let list = match &f.node.v {
            V::Array(items) => items,
            V::Table(_) => {
                return Err(f.err(
                    cx,
                    "`workload` must be an array of tables: write [[workload]], not [workload]",
                ))
            }
            other => {
                return Err(f.err(
                    cx,
                    format!("expected [[workload]] tables, found {}", other.describe()),
                ))
            }
        };
        for (i, node) in list.iter().enumerate() {
            let w = Fld {
                name: format!("workload[{i}]"),
                node,
            };
            parse_workload(
                cx,
                &w,
                i,
                seed,
                &config.topology,
                config.switch.lossless,
                &mut flows,
            )?;
        }
    }
    let kinds = flows.kinds.clone();
    let notes = std::mem::take(&mut flows.notes);
    let (list, apps, origins) = flows.finish();
    config.flows = list;
    config.flow_apps = apps;
    if let Some(f) = top.get(cx, "link_failure") {
        let V::Array(items) = &f.node.v else {
            return Err(f.err(cx, "write [[link_failure]] tables (time, a, b)"));
        };
        for (i, node) in items.iter().enumerate() {
            let lf = Fld {
                name: format!("link_failure[{i}]"),
                node,
            };
            let mut t = lf.table(cx)?;
            t.check_keys(cx, &["time", "a", "b"])?;
            let time = t.req(cx, "time")?.time(cx)?;
            let mut end = |key: &str| -> Res<NodeId> {
                let f = t.req(cx, key)?;
                let n = f.uint(cx, 0, u64::from(u32::MAX))?;
                if n as usize >= config.topology.len() {
                    return Err(f.err(cx, format!("unknown node {n}")));
                }
                Ok(NodeId(n as u32))
            };
            let (a, b) = (end("a")?, end("b")?);
            let joins = config
                .topology
                .links
                .iter()
                .any(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a));
            if !joins {
                return Err(lf.err(cx, format!("no link joins nodes {} and {}", a.0, b.0)));
            }
            config.link_failures.push(LinkFailure { time, a, b });
        }
    }

    config.validate().map_err(|e| match e {
        ConfigError::Topology(t) => cx.err("topology", topo_span.clone(), t.to_string()),
        ConfigError::Flow { index, reason } => {
            let (field, span) = origins
                .get(index)
                .cloned()
                .unwrap_or_else(|| ("workload".to_string(), None));
            cx.err(&field, span, format!("flow {index}: {reason}"))
        }
        ConfigError::Link {
            index,
            field,
            reason,
        } => {
            let name = format!("topology.link[{index}].{field}");
            let span = cx.spans.borrow().get(&name).cloned();
            cx.err(&name, span.or_else(|| topo_span.clone()), reason)
        }
        ConfigError::Parameter { field, reason } => {
            let name = match field {
                "host.mtu_payload" => "host.mtu",
                "host.ack_bytes" => "host.ack",
                "host.cnp_bytes" => "host.cnp",
                "switch.cell_bytes" => "switch.cell",
                "switch.buffer_bytes" => "switch.buffer",
                "switch.chip_ports" => "switch.ports",
                other => other,
            };
            // A default value has no key: point at its table, else at the topology whose
            // size made the default insufficient.
            let spans = cx.spans.borrow();
            let span = [name, name.split('.').next().unwrap_or(name), "topology"]
                .iter()
                .find_map(|k| spans.get(*k).cloned());
            cx.err(name, span, reason)
        }
    })?;
    // Entries in file order (`workload[2]` before `workload[10]`), those without flows left out.
    let label = |field: &str| field.split('.').next().unwrap_or(field).to_string();
    let entry_index = |name: &str| {
        name.trim_start_matches("workload[")
            .trim_end_matches(']')
            .parse::<usize>()
            .unwrap_or(usize::MAX)
    };
    let mut names: Vec<String> = origins.iter().map(|(f, _)| label(f)).collect();
    names.sort_by_key(|n| entry_index(n));
    names.dedup();
    let of_flow = origins
        .iter()
        .map(|(field, _)| {
            let l = label(field);
            // Every label is in `names`, which holds at most one per workload entry.
            names.iter().position(|w| *w == l).unwrap_or(0) as u32
        })
        .collect();
    let workloads = WorkloadGroups {
        kinds: names
            .iter()
            .map(|w| kinds.get(w).cloned().unwrap_or_default())
            .collect(),
        names,
        of_flow,
    };
    let mut warnings = Vec::new();
    if config.flows.is_empty() {
        warnings.push(if !top.has("workload") {
            "no [[workload]]: the run carries no traffic until stop_time".to_string()
        } else {
            "the workloads make no flows: the run carries no traffic until stop_time".to_string()
        });
    }
    if let Some(w) = headroom_frame_warning(&config) {
        warnings.push(w);
    }
    warnings.extend(notes);
    Ok(Scenario {
        name,
        config,
        output,
        workloads,
        warnings,
    })
}

/// A warning when the headroom formula assumes a smaller lossless frame than the hosts
/// send: eta then misses part of the frame in flight at each end, and a PG filled to its
/// headroom can drop lossless packets.
fn headroom_frame_warning(config: &SimConfig) -> Option<String> {
    let (key, assumed) = config.switch.headroom.lossless_frame()?;
    let host = &config.host;
    let largest = host.largest_data_frame();
    if config.switch.lossless == 0 || largest <= assumed {
        return None;
    }
    let int = match host.int_bytes() {
        0 => String::new(),
        b => format!(" + {b} B of INT ({})", host.cc.name()),
    };
    Some(format!(
        "switch.headroom_params.{key} = {assumed} B, but hosts send data frames of up to \
         {largest} B (host.mtu {} B + {} B of headers{int}): the headroom does not cover a \
         full frame at each end and lossless drops may follow; set {key} to {largest} B or \
         lower host.mtu",
        host.mtu_payload, host.header_bytes
    ))
}

/// Why `name` cannot be the output directory `out/<name>/`, if it cannot: it must be one
/// plain directory name (no separators, not `.`-led such as `..` or a hidden directory)
/// made of characters every file system and shell takes as they are.
fn unsafe_dir_name(name: &str) -> Option<String> {
    const MAX: usize = 255;
    let why = if name.starts_with('.') || name.contains("..") {
        "must not start with `.` or contain `..`".to_string()
    } else if name.len() > MAX {
        format!(
            "is {} bytes long; a directory name may have at most {MAX}",
            name.len()
        )
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+')))
    {
        let c = match c {
            '/' | '\\' => format!("the path separator `{c}`"),
            c if c.is_whitespace() || c.is_control() => format!("{c:?}"),
            c => format!("`{c}`"),
        };
        format!("contains {c}; use letters, digits, `-`, `_`, `.` and `+`")
    } else {
        return None;
    };
    Some(format!(
        "`{name}` cannot name the output directory out/<name>/: it {why}"
    ))
}

/// The seed of the RNG of a random workload: `splitmix64(splitmix64(seed) ^ stream)`,
/// where `seed` is the scenario's `seed` and `stream` the workload's `seed_offset` if it
/// has one, else its index in the `[[workload]]` list. Setting `seed_offset` keeps a
/// workload's flows unchanged when other workloads are added or reordered. The RNG is
/// [`crate::workload::generators::rng_from_seed`] of this value.
pub fn workload_seed(seed: u64, stream: u64) -> u64 {
    splitmix64(splitmix64(seed) ^ stream)
}

/// SplitMix64's output function applied to `x + golden gamma` (one step of the generator
/// started at `x`).
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
