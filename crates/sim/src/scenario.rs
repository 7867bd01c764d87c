//! Scenario files: the TOML input of `headroom run`.
//!
//! [`load`] and [`parse`] turn a scenario file into a [`Scenario`]: a name, the resolved
//! [`SimConfig`] the engine runs, and [`OutputOptions`]. The schema (every section but
//! `[topology]` is optional):
//!
//! ```toml
//! name = "incast-2to1"          # default: the file stem
//! seed = 1                      # default 1
//! stop_time = "10ms"            # default: run until every flow finished
//!
//! [topology]                    # required
//! kind = "dumbbell"             # dumbbell | star | chain | leaf-spine | fat-tree | links | hpcc-file
//! left_hosts = 2                # dumbbell: left_hosts, right_hosts, host_rate, bottleneck_rate
//! right_hosts = 1               # star: hosts, rate; chain: switches, hosts_per_switch, rate
//! host_rate = "100Gbps"         # leaf-spine: leaves, spines, hosts_per_leaf, host_rate,
//! bottleneck_rate = "100Gbps"   #   uplink_rate | oversubscription; fat-tree: k, rate
//! delay = "1us"                 # every builder: one-way link delay, default "1us"
//! # links: hosts = N, switches = M (hosts are ids 0..N, switches N..N+M), and
//! #   [[topology.link]] a, b, rate, delay (default "1us"), error_rate (default 0)
//! # hpcc-file: file = "topology.txt" (the ns-3 HPCC simulator's topology format)
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
//! [host.cc]                     # algorithm = "dcqcn" | "none", preset = "hpcc" | "paper",
//!                               # then any DcqcnConfig field (variant, g, rp_timer, ...)
//! [[workload]]                  # zero or more, see below
//! [[link_failure]]              # time, a, b: the link between nodes a and b fails
//! [output]                      # sample_interval, fail_on_lossless_drop, plots, compat
//! ```
//!
//! Workload kinds (`start` defaults to `"0us"`, `prio` to 3, `hosts` to `"all"`):
//! - `poisson`: `load` in (0, 1], `cdf` (a built-in: websearch, fbhdp, alistorage,
//!   googlerpc) or `cdf_file`, `start`, `duration`, `prio`, `hosts`, `seed_offset`;
//! - `incast`: `senders = [ids]` or `sender_count = N` (the first N hosts other than the
//!   receiver, in id order), `receiver`, `size`, `start`, `repeat = { interval, count }`,
//!   `prio`;
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

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::config::{
    Admission, AlphaPolicy, CcConfig, ConfigError, EcnPoint, HeadroomSizing, LinkFailure,
    NicBufferConfig, QueueEcn, SchemeConfig, ShpPool, SimConfig, SwitchConfig,
};
use crate::topology::{builders, LinkSpec, NodeId, NodeKind, Topology, TopologyError};
use crate::workload::cdf::{self, SizeCdf};
use crate::workload::{generators, FlowSpec, WorkloadError};
use headroom_mech::buffer::formula;
use headroom_mech::buffer::mmu::Reservation;
use headroom_mech::buffer::Alpha;
use headroom_mech::cc::{DcqcnConfig, DcqcnVariant};
use headroom_mech::ecn::RedConfig;
use headroom_mech::pfc::{PfcConfig, MAX_QUANTA};
use headroom_mech::units::{parse_bytes, parse_rate, parse_time, Rate, Time, UnitError};

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
    /// Labels of the `[[workload]]` entries that produced flows (`workload[0]`, ...).
    pub workloads: Vec<String>,
    /// The kind of each entry of `workloads` (`poisson`, `incast`, ...).
    pub workload_kinds: Vec<String>,
    /// For each flow of `config.flows`, the index in `workloads` of the entry that made it
    /// (to report background and incast flows apart).
    pub flow_workload: Vec<u32>,
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
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

/// Parses scenario text (see the module documentation for the schema). `path` names the
/// file in errors, gives the default name (its stem), and is the base of relative file
/// references (its directory; the current directory when it has none).
pub fn parse(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let cx = Cx {
        path,
        text,
        dir,
        spans: RefCell::new(BTreeMap::new()),
    };
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
        &cx,
        &[
            "name",
            "seed",
            "stop_time",
            "topology",
            "switch",
            "host",
            "workload",
            "link_failure",
            "output",
        ],
    )?;

    let name = match top.get(&cx, "name") {
        Some(f) => {
            let s = f.str(&cx)?;
            if s.trim().is_empty() {
                return Err(f.err(&cx, "must not be empty"));
            }
            s.to_string()
        }
        None => path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "scenario".to_string()),
    };
    let seed = match top.get(&cx, "seed") {
        Some(f) => f.uint(&cx, 0, i64::MAX as u64)?,
        None => 1,
    };
    let stop_time = match top.get(&cx, "stop_time") {
        Some(f) => Some(f.positive_time(&cx)?),
        None => None,
    };

    let topo_field = top.req(&cx, "topology")?;
    let topo_span = topo_field.span();
    let topology = parse_topology(&cx, &topo_field)?;

    let mut config = SimConfig::new(topology, Vec::new());
    config.seed = seed;
    config.stop_time = stop_time;
    if let Some(f) = top.get(&cx, "switch") {
        parse_switch(&cx, &f, &mut config.switch)?;
    }
    if let Some(f) = top.get(&cx, "host") {
        parse_host(&cx, &f, &mut config)?;
    }
    let mut output = OutputOptions::default();
    if let Some(f) = top.get(&cx, "output") {
        parse_output(&cx, &f, &mut config, &mut output)?;
    }

    let mut flows = Flows::default();
    if let Some(f) = top.get(&cx, "workload") {
        let list = match &f.node.v {
            V::Array(items) => items,
            V::Table(_) => {
                return Err(f.err(
                    &cx,
                    "`workload` must be an array of tables: write [[workload]], not [workload]",
                ))
            }
            other => {
                return Err(f.err(
                    &cx,
                    format!("expected [[workload]] tables, found {}", other.describe()),
                ))
            }
        };
        for (i, node) in list.iter().enumerate() {
            let w = Fld {
                name: format!("workload[{i}]"),
                node,
            };
            parse_workload(&cx, &w, i, seed, &config.topology, &mut flows)?;
        }
    }
    let kinds = flows.kinds.clone();
    let (list, origins) = flows.finish();
    config.flows = list;
    if let Some(f) = top.get(&cx, "link_failure") {
        let V::Array(items) = &f.node.v else {
            return Err(f.err(&cx, "write [[link_failure]] tables (time, a, b)"));
        };
        for (i, node) in items.iter().enumerate() {
            let lf = Fld {
                name: format!("link_failure[{i}]"),
                node,
            };
            let mut t = lf.table(&cx)?;
            t.check_keys(&cx, &["time", "a", "b"])?;
            let time = t.req(&cx, "time")?.time(&cx)?;
            let mut end = |key: &str| -> Res<NodeId> {
                let f = t.req(&cx, key)?;
                let n = f.uint(&cx, 0, u64::from(u32::MAX))?;
                if n as usize >= config.topology.len() {
                    return Err(f.err(&cx, format!("unknown node {n}")));
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
                return Err(lf.err(&cx, format!("no link joins nodes {} and {}", a.0, b.0)));
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
        ConfigError::Parameter { field, reason } => {
            let name = match field {
                "host.mtu_payload" => "host.mtu",
                "switch.cell_bytes" => "switch.cell",
                other => other,
            };
            let span = cx.spans.borrow().get(name).cloned();
            cx.err(name, span, reason)
        }
    })?;
    let mut workloads: Vec<String> = Vec::new();
    let flow_workload = origins
        .iter()
        .map(|(field, _)| {
            let label = field.split('.').next().unwrap_or(field).to_string();
            let i = workloads
                .iter()
                .position(|w| *w == label)
                .unwrap_or_else(|| {
                    workloads.push(label);
                    workloads.len() - 1
                });
            i as u32
        })
        .collect();
    let workload_kinds = workloads
        .iter()
        .map(|w| kinds.get(w).cloned().unwrap_or_default())
        .collect();
    Ok(Scenario {
        name,
        config,
        output,
        workloads,
        workload_kinds,
        flow_workload,
    })
}

/// The seed of the RNG of a random workload: `splitmix64(splitmix64(seed) ^ stream)`,
/// where `seed` is the scenario's `seed` and `stream` the workload's `seed_offset` if it
/// has one, else its index in the `[[workload]]` list. Setting `seed_offset` keeps a
/// workload's flows unchanged when other workloads are added or reordered. The RNG is
/// [`generators::rng_from_seed`] of this value.
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

// ---------------------------------------------------------------------------------------
// The spanned TOML tree.

/// A TOML value with its byte span (implicit tables have none; they take their key's).
#[derive(Debug)]
struct Node {
    span: Option<Range<usize>>,
    v: V,
}

#[derive(Debug)]
enum V {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime,
    Array(Vec<Node>),
    Table(Vec<Entry>),
}

impl V {
    fn describe(&self) -> &'static str {
        match self {
            V::Str(_) => "a string",
            V::Int(_) => "an integer",
            V::Float(_) => "a float",
            V::Bool(_) => "a boolean",
            V::Datetime => "a date-time",
            V::Array(_) => "an array",
            V::Table(_) => "a table",
        }
    }
}

#[derive(Debug)]
struct Entry {
    key: String,
    key_span: Option<Range<usize>>,
    node: Node,
}

fn table_entries(t: &toml_edit::Table) -> Vec<Entry> {
    t.iter()
        .filter_map(|(k, item)| {
            let key_span = t.key(k).and_then(toml_edit::Key::span);
            let node = item_node(item, key_span.clone())?;
            Some(Entry {
                key: k.to_string(),
                key_span,
                node,
            })
        })
        .collect()
}

fn item_node(item: &toml_edit::Item, fallback: Option<Range<usize>>) -> Option<Node> {
    match item {
        toml_edit::Item::None => None,
        toml_edit::Item::Value(v) => Some(value_node(v)),
        toml_edit::Item::Table(t) => Some(Node {
            span: t.span().or(fallback),
            v: V::Table(table_entries(t)),
        }),
        toml_edit::Item::ArrayOfTables(a) => Some(Node {
            span: a.span().or(fallback),
            v: V::Array(
                a.iter()
                    .map(|t| Node {
                        span: t.span(),
                        v: V::Table(table_entries(t)),
                    })
                    .collect(),
            ),
        }),
    }
}

fn value_node(v: &toml_edit::Value) -> Node {
    use toml_edit::Value as T;
    let val = match v {
        T::String(s) => V::Str(s.value().clone()),
        T::Integer(i) => V::Int(*i.value()),
        T::Float(x) => V::Float(*x.value()),
        T::Boolean(b) => V::Bool(*b.value()),
        T::Datetime(_) => V::Datetime,
        T::Array(a) => V::Array(a.iter().map(value_node).collect()),
        T::InlineTable(t) => V::Table(
            t.iter()
                .map(|(k, x)| Entry {
                    key: k.to_string(),
                    key_span: t.key(k).and_then(toml_edit::Key::span),
                    node: value_node(x),
                })
                .collect(),
        ),
    };
    Node {
        span: v.span(),
        v: val,
    }
}

// ---------------------------------------------------------------------------------------
// Typed access with field paths.

type Res<T> = Result<T, ScenarioError>;

struct Cx<'t> {
    path: &'t Path,
    text: &'t str,
    dir: PathBuf,
    /// Spans of every field read, by dotted path (to place errors of `SimConfig::validate`).
    spans: RefCell<BTreeMap<String, Range<usize>>>,
}

impl Cx<'_> {
    fn err(
        &self,
        field: &str,
        span: Option<Range<usize>>,
        reason: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::Invalid(Box::new(InvalidScenario {
            path: self.path.to_path_buf(),
            text: self.text.to_string(),
            span: span.map(|s| first_line(self.text, s)),
            field: field.to_string(),
            reason: reason.into(),
            file: None,
        }))
    }

    fn file_err(
        &self,
        field: &str,
        span: Option<Range<usize>>,
        file: PathBuf,
        line: usize,
        reason: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::Invalid(Box::new(InvalidScenario {
            path: self.path.to_path_buf(),
            text: self.text.to_string(),
            span: span.map(|s| first_line(self.text, s)),
            field: field.to_string(),
            reason: reason.into(),
            file: Some(FileLocation { path: file, line }),
        }))
    }

    fn resolve(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.dir.join(p)
        }
    }
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// `span` cut at the end of its first line: a table's span covers its whole body, and an
/// error about a table (or any multi-line value) points at its first line.
fn first_line(text: &str, span: Range<usize>) -> Range<usize> {
    let end = text
        .get(span.clone())
        .and_then(|s| s.find('\n'))
        .map_or(span.end, |i| span.start + i);
    let end = text
        .get(span.start..end)
        .map_or(end, |s| span.start + s.trim_end().len());
    span.start..end
}

/// A table being read.
struct Tbl<'a> {
    name: String,
    span: Option<Range<usize>>,
    entries: &'a [Entry],
}

impl<'a> Tbl<'a> {
    fn get(&mut self, cx: &Cx, key: &str) -> Option<Fld<'a>> {
        let e = self.entries.iter().find(|e| e.key == key)?;
        let name = join(&self.name, key);
        if let Some(s) = &e.node.span {
            cx.spans.borrow_mut().insert(name.clone(), s.clone());
        }
        Some(Fld {
            name,
            node: &e.node,
        })
    }

    fn req(&mut self, cx: &Cx, key: &str) -> Res<Fld<'a>> {
        self.get(cx, key).ok_or_else(|| {
            let what = if self.name.is_empty() {
                "the scenario".to_string()
            } else {
                format!("[{}]", self.name)
            };
            cx.err(
                &join(&self.name, key),
                self.span.clone(),
                format!("missing key `{key}` in {what}"),
            )
        })
    }

    fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|e| e.key == key)
    }

    /// Rejects keys not in `known`, naming the first one in document order.
    fn check_keys(&self, cx: &Cx, known: &[&str]) -> Res<()> {
        self.check_keys_with(cx, known, "")
    }

    fn check_keys_with(&self, cx: &Cx, known: &[&str], context: &str) -> Res<()> {
        if let Some(e) = self
            .entries
            .iter()
            .find(|e| !known.contains(&e.key.as_str()))
        {
            let expected = if known.is_empty() {
                "no keys are allowed here".to_string()
            } else {
                format!("expected one of: {}", known.join(", "))
            };
            return Err(cx.err(
                &join(&self.name, &e.key),
                e.key_span.clone().or_else(|| e.node.span.clone()),
                format!("unknown key `{}`{context} ({expected})", e.key),
            ));
        }
        Ok(())
    }
}

/// One value being read, with its dotted path.
struct Fld<'a> {
    name: String,
    node: &'a Node,
}

/// Which unit quantity a string holds.
#[derive(Clone, Copy)]
enum Quantity {
    Rate,
    Time,
    Bytes,
}

impl Quantity {
    fn unit(self) -> &'static str {
        match self {
            Quantity::Rate => "Gbps",
            Quantity::Time => "us",
            Quantity::Bytes => "B",
        }
    }
    fn what(self) -> &'static str {
        match self {
            Quantity::Rate => "rate",
            Quantity::Time => "duration",
            Quantity::Bytes => "size",
        }
    }
}

fn unit_reason(e: UnitError, q: Quantity) -> String {
    match e {
        UnitError::MissingUnit { input, .. } => {
            format!(
                "`{input}` has no unit: write \"{}{}\"",
                input.trim(),
                q.unit()
            )
        }
        UnitError::OutOfRange(s) if s.trim_start().starts_with('-') => {
            format!("`{s}` is negative: a {} must not be negative", q.what())
        }
        UnitError::NoNumber(s) => format!(
            "`{s}` is not a {} (write e.g. \"100{}\")",
            q.what(),
            q.unit()
        ),
        other => other.to_string(),
    }
}

impl<'a> Fld<'a> {
    fn span(&self) -> Option<Range<usize>> {
        self.node.span.clone()
    }

    fn err(&self, cx: &Cx, reason: impl Into<String>) -> ScenarioError {
        cx.err(&self.name, self.span(), reason)
    }

    fn elem(&self, i: usize, node: &'a Node) -> Fld<'a> {
        Fld {
            name: format!("{}[{i}]", self.name),
            node,
        }
    }

    fn wrong(&self, cx: &Cx, expected: &str) -> ScenarioError {
        self.err(
            cx,
            format!("expected {expected}, found {}", self.node.v.describe()),
        )
    }

    fn str(&self, cx: &Cx) -> Res<&'a str> {
        match &self.node.v {
            V::Str(s) => Ok(s),
            _ => Err(self.wrong(cx, "a string")),
        }
    }

    fn int(&self, cx: &Cx) -> Res<i64> {
        match &self.node.v {
            V::Int(i) => Ok(*i),
            _ => Err(self.wrong(cx, "an integer")),
        }
    }

    /// An integer in `lo..=hi`.
    fn uint(&self, cx: &Cx, lo: u64, hi: u64) -> Res<u64> {
        let v = self.int(cx)?;
        if v < 0 {
            return Err(self.err(cx, format!("must not be negative, found {v}")));
        }
        let u = v.unsigned_abs();
        if u < lo || u > hi {
            return Err(self.err(cx, format!("must be between {lo} and {hi}, found {v}")));
        }
        Ok(u)
    }

    fn float(&self, cx: &Cx) -> Res<f64> {
        match &self.node.v {
            V::Float(x) if x.is_finite() => Ok(*x),
            V::Float(x) => Err(self.err(cx, format!("must be a finite number, found {x}"))),
            V::Int(i) => Ok(*i as f64),
            _ => Err(self.wrong(cx, "a number")),
        }
    }

    fn boolean(&self, cx: &Cx) -> Res<bool> {
        match &self.node.v {
            V::Bool(b) => Ok(*b),
            _ => Err(self.wrong(cx, "true or false")),
        }
    }

    fn quantity_str(&self, cx: &Cx, q: Quantity) -> Res<&'a str> {
        match &self.node.v {
            V::Str(s) => Ok(s),
            V::Int(_) | V::Float(_) => {
                let shown = self
                    .span()
                    .and_then(|s| cx.text.get(s))
                    .map(str::trim)
                    .unwrap_or("100")
                    .to_string();
                Err(self.err(
                    cx,
                    format!("a bare number needs a unit: write \"{shown}{}\"", q.unit()),
                ))
            }
            _ => Err(self.wrong(
                cx,
                &format!("a {} string like \"100{}\"", q.what(), q.unit()),
            )),
        }
    }

    fn rate(&self, cx: &Cx) -> Res<Rate> {
        let s = self.quantity_str(cx, Quantity::Rate)?;
        parse_rate(s).map_err(|e| self.err(cx, unit_reason(e, Quantity::Rate)))
    }

    fn positive_rate(&self, cx: &Cx) -> Res<Rate> {
        let r = self.rate(cx)?;
        if r.bps() == 0 {
            return Err(self.err(cx, "must be greater than zero"));
        }
        Ok(r)
    }

    fn time(&self, cx: &Cx) -> Res<Time> {
        let s = self.quantity_str(cx, Quantity::Time)?;
        parse_time(s).map_err(|e| self.err(cx, unit_reason(e, Quantity::Time)))
    }

    fn positive_time(&self, cx: &Cx) -> Res<Time> {
        let t = self.time(cx)?;
        if t == Time::ZERO {
            return Err(self.err(cx, "must be greater than zero"));
        }
        Ok(t)
    }

    fn bytes(&self, cx: &Cx) -> Res<u64> {
        let s = self.quantity_str(cx, Quantity::Bytes)?;
        parse_bytes(s)
            .map(|b| b.0)
            .map_err(|e| self.err(cx, unit_reason(e, Quantity::Bytes)))
    }

    fn positive_bytes(&self, cx: &Cx) -> Res<u64> {
        let b = self.bytes(cx)?;
        if b == 0 {
            return Err(self.err(cx, "must be greater than zero"));
        }
        Ok(b)
    }

    fn table(&self, cx: &Cx) -> Res<Tbl<'a>> {
        match &self.node.v {
            V::Table(entries) => Ok(Tbl {
                name: self.name.clone(),
                span: self.span(),
                entries,
            }),
            _ => Err(self.wrong(cx, "a table")),
        }
    }

    fn array(&self, cx: &Cx) -> Res<&'a [Node]> {
        match &self.node.v {
            V::Array(items) => Ok(items),
            _ => Err(self.wrong(cx, "an array")),
        }
    }

    /// A priority 0..8.
    fn prio(&self, cx: &Cx) -> Res<u8> {
        Ok(self.uint(cx, 0, 7)? as u8)
    }

    /// A list of distinct priorities, as a bit mask.
    fn prio_mask(&self, cx: &Cx) -> Res<u8> {
        let mut mask = 0u8;
        for (i, node) in self.array(cx)?.iter().enumerate() {
            let e = self.elem(i, node);
            let p = e.prio(cx)?;
            if mask & (1 << p) != 0 {
                return Err(e.err(cx, format!("priority {p} is listed twice")));
            }
            mask |= 1 << p;
        }
        Ok(mask)
    }

    /// A node id that must name a host of `topo`.
    fn host(&self, cx: &Cx, topo: &Topology) -> Res<NodeId> {
        let n = self.uint(cx, 0, u64::from(u32::MAX))?;
        let len = topo.len();
        // `n <= u32::MAX`, so the casts are exact.
        if n as usize >= len {
            return Err(self.err(
                cx,
                format!(
                    "unknown node {n}: the topology has {len} nodes (ids 0..{})",
                    len.saturating_sub(1)
                ),
            ));
        }
        if topo.nodes[n as usize] != NodeKind::Host {
            return Err(self.err(cx, format!("node {n} is a switch, not a host")));
        }
        Ok(NodeId(n as u32))
    }
}

fn opt_time(cx: &Cx, t: &mut Tbl, key: &str, default: Time) -> Res<Time> {
    t.get(cx, key).map_or(Ok(default), |f| f.time(cx))
}

fn opt_prio(cx: &Cx, t: &mut Tbl, key: &str) -> Res<u8> {
    t.get(cx, key).map_or(Ok(DEFAULT_PRIO), |f| f.prio(cx))
}

// ---------------------------------------------------------------------------------------
// [topology]

const TOPOLOGY_KINDS: &str = "dumbbell, star, chain, leaf-spine, fat-tree, links, hpcc-file";

fn count(cx: &Cx, t: &mut Tbl, key: &str, lo: u64) -> Res<usize> {
    // MAX_NODES fits in usize and u64; the builders re-check totals.
    Ok(t.req(cx, key)?.uint(cx, lo, builders::MAX_NODES as u64)? as usize)
}

fn parse_topology(cx: &Cx, f: &Fld) -> Res<Topology> {
    let mut t = f.table(cx)?;
    let kind_f = t.req(cx, "kind")?;
    let kind = kind_f.str(cx)?;
    let known: &[&str] = match kind {
        "dumbbell" => &[
            "kind",
            "left_hosts",
            "right_hosts",
            "host_rate",
            "bottleneck_rate",
            "delay",
        ],
        "star" => &["kind", "hosts", "rate", "delay"],
        "chain" => &["kind", "switches", "hosts_per_switch", "rate", "delay"],
        "leaf-spine" => &[
            "kind",
            "leaves",
            "spines",
            "hosts_per_leaf",
            "host_rate",
            "uplink_rate",
            "oversubscription",
            "delay",
        ],
        "fat-tree" => &["kind", "k", "rate", "delay"],
        "links" => &["kind", "hosts", "switches", "link"],
        "hpcc-file" => &["kind", "file"],
        other => {
            return Err(kind_f.err(
                cx,
                format!("unknown topology kind `{other}` (expected one of: {TOPOLOGY_KINDS})"),
            ))
        }
    };
    t.check_keys_with(cx, known, &format!(" for kind = \"{kind}\""))?;
    let bad = |e: TopologyError| kind_f.err(cx, e.to_string());
    match kind {
        "dumbbell" => {
            let left = count(cx, &mut t, "left_hosts", 1)?;
            let right = count(cx, &mut t, "right_hosts", 1)?;
            let host_rate = t.req(cx, "host_rate")?.positive_rate(cx)?;
            let bottleneck = t.req(cx, "bottleneck_rate")?.positive_rate(cx)?;
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            builders::dumbbell(left, right, host_rate, bottleneck, delay).map_err(bad)
        }
        "star" => {
            let hosts = count(cx, &mut t, "hosts", 2)?;
            let rate = t.req(cx, "rate")?.positive_rate(cx)?;
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            builders::star(hosts, rate, delay).map_err(bad)
        }
        "chain" => {
            let switches = count(cx, &mut t, "switches", 1)?;
            let per = count(cx, &mut t, "hosts_per_switch", 1)?;
            let rate = t.req(cx, "rate")?.positive_rate(cx)?;
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            builders::chain(switches, per, rate, delay).map_err(bad)
        }
        "leaf-spine" => {
            let leaves = count(cx, &mut t, "leaves", 1)?;
            let spines = count(cx, &mut t, "spines", 1)?;
            let per = count(cx, &mut t, "hosts_per_leaf", 1)?;
            let host_rate = t.req(cx, "host_rate")?.positive_rate(cx)?;
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            let mut p = builders::LeafSpine::new(leaves, spines, per, host_rate, delay);
            let up = t.get(cx, "uplink_rate");
            let over = t.get(cx, "oversubscription");
            match (up, over) {
                (Some(_), Some(o)) => {
                    return Err(o.err(cx, "give `uplink_rate` or `oversubscription`, not both"))
                }
                (Some(u), None) => p.uplink_rate = u.positive_rate(cx)?,
                (None, Some(o)) => {
                    let ratio = o.float(cx)?;
                    p = p
                        .with_oversubscription(ratio)
                        .map_err(|e| o.err(cx, e.to_string()))?;
                }
                (None, None) => {}
            }
            builders::leaf_spine(&p).map_err(bad)
        }
        "fat-tree" => {
            let kf = t.req(cx, "k")?;
            let k = kf.uint(cx, 2, 512)? as usize;
            if k & 1 == 1 {
                return Err(kf.err(cx, format!("the fat-tree arity must be even, found {k}")));
            }
            let rate = t.req(cx, "rate")?.positive_rate(cx)?;
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            builders::fat_tree(k, rate, delay).map_err(bad)
        }
        "links" => parse_links(cx, &mut t),
        _ => {
            // "hpcc-file": the only kind left after the match on `known` above.
            let ff = t.req(cx, "file")?;
            let (path, shown, text) = read_referenced(cx, &ff)?;
            crate::topology::hpcc::parse(&text, &shown).map_err(|e| match e {
                TopologyError::File { line, reason, .. } => {
                    cx.file_err(&ff.name, ff.span(), path.clone(), line, reason)
                }
                other => cx.file_err(&ff.name, ff.span(), path.clone(), 0, other.to_string()),
            })
        }
    }
}

fn parse_links(cx: &Cx, t: &mut Tbl) -> Res<Topology> {
    let hosts_f = t.req(cx, "hosts")?;
    let hosts = hosts_f.uint(cx, 0, builders::MAX_NODES as u64)? as usize;
    let switches = t
        .req(cx, "switches")?
        .uint(cx, 0, builders::MAX_NODES as u64)? as usize;
    let total = hosts + switches;
    if total > builders::MAX_NODES {
        return Err(hosts_f.err(
            cx,
            format!("too many nodes (at most {})", builders::MAX_NODES),
        ));
    }
    let mut nodes = vec![NodeKind::Host; hosts];
    nodes.resize(total, NodeKind::Switch);
    let lf = t.req(cx, "link")?;
    let mut links = Vec::new();
    let mut link_fields = Vec::new();
    for (i, node) in lf.array(cx)?.iter().enumerate() {
        let ef = lf.elem(i, node);
        let mut lt = ef.table(cx)?;
        lt.check_keys(cx, &["a", "b", "rate", "delay", "error_rate"])?;
        let mut end = |key: &str| -> Res<NodeId> {
            let f = lt.req(cx, key)?;
            let n = f.uint(cx, 0, u64::from(u32::MAX))?;
            if n as usize >= total {
                return Err(f.err(
                    cx,
                    format!(
                        "unknown node {n}: there are {total} nodes (hosts 0..{hosts}, switches {hosts}..{total})"
                    ),
                ));
            }
            Ok(NodeId(n as u32))
        };
        let a = end("a")?;
        let b = end("b")?;
        if a == b {
            return Err(ef.err(cx, format!("link joins node {} to itself", a.0)));
        }
        let rate = lt.req(cx, "rate")?.positive_rate(cx)?;
        let delay = opt_time(cx, &mut lt, "delay", DEFAULT_DELAY)?;
        let error_rate = match lt.get(cx, "error_rate") {
            Some(f) => {
                let e = f.float(cx)?;
                if !(0.0..=1.0).contains(&e) {
                    return Err(f.err(cx, format!("must be in [0, 1], found {e}")));
                }
                e
            }
            None => 0.0,
        };
        links.push(LinkSpec {
            a,
            b,
            rate,
            delay,
            error_rate,
        });
        link_fields.push(ef);
    }
    let topo = Topology { nodes, links };
    topo.validate().map_err(|e| match &e {
        TopologyError::HostLinks { node, links: 0 } => hosts_f.err(
            cx,
            format!("host {node} has no link; every host needs exactly one"),
        ),
        TopologyError::HostLinks { node, .. } => {
            // Report at the host's second link.
            let second = topo
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| l.a.0 == *node || l.b.0 == *node)
                .nth(1)
                .and_then(|(i, _)| link_fields.get(i));
            match second {
                Some(f) => f.err(cx, e.to_string()),
                None => lf.err(cx, e.to_string()),
            }
        }
        _ => lf.err(cx, e.to_string()),
    })?;
    Ok(topo)
}

// ---------------------------------------------------------------------------------------
// [switch]

fn parse_switch(cx: &Cx, f: &Fld, sw: &mut SwitchConfig) -> Res<()> {
    let mut t = f.table(cx)?;
    t.check_keys(
        cx,
        &[
            "buffer",
            "cell",
            "private",
            "headroom",
            "headroom_params",
            "reservation",
            "scheme",
            "shp",
            "dsh",
            "ports",
            "alpha",
            "dynamic_th",
            "alpha_percent",
            "alpha_scaling",
            "egress_alpha",
            "xon_offset",
            "lossless",
            "pfc",
            "scheduler",
            "ecn",
            "admission",
        ],
    )?;
    if let Some(f) = t.get(cx, "admission") {
        sw.admission = match f.str(cx)? {
            "first-bit" => Admission::FirstBit,
            "last-bit" => Admission::LastBit,
            other => {
                return Err(f.err(
                    cx,
                    format!("unknown admission point `{other}` (expected first-bit or last-bit)"),
                ))
            }
        };
    }
    if let Some(f) = t.get(cx, "buffer") {
        sw.buffer_bytes = f.positive_bytes(cx)?;
        if sw.buffer_bytes > u64::from(u32::MAX) {
            return Err(f.err(cx, "must be below 4 GiB"));
        }
    }
    if let Some(f) = t.get(cx, "cell") {
        let c = f.positive_bytes(cx)?;
        sw.cell_bytes =
            u32::try_from(c).map_err(|_| f.err(cx, format!("cell size {c} B is too large")))?;
    }
    if let Some(f) = t.get(cx, "private") {
        sw.private_bytes = f.bytes(cx)?;
    }
    sw.headroom = parse_headroom(cx, &mut t)?;
    if let Some(f) = t.get(cx, "reservation") {
        sw.reservation = match f.str(cx)? {
            "per-pg" => Reservation::PerPg,
            "per-port" => Reservation::PerPort,
            other => {
                return Err(f.err(
                    cx,
                    format!("unknown reservation `{other}` (expected per-pg or per-port)"),
                ))
            }
        };
    }
    parse_scheme(cx, &mut t, sw)?;
    if let Some(f) = t.get(cx, "ports") {
        sw.chip_ports = Some(f.uint(cx, 1, 4096)? as usize);
    }
    let alpha_keys = ["alpha", "dynamic_th", "alpha_percent", "alpha_scaling"];
    let given: Vec<&str> = alpha_keys.iter().copied().filter(|k| t.has(k)).collect();
    if given.len() > 1 {
        let second = t.get(cx, given[1]).map(|f| f.span()).unwrap_or(None);
        return Err(cx.err(
            &join(&t.name, given[1]),
            second,
            format!(
                "give at most one of `alpha`, `dynamic_th`, `alpha_percent`, `alpha_scaling` (found `{}` and `{}`)",
                given[0], given[1]
            ),
        ));
    }
    if let Some(f) = t.get(cx, "alpha") {
        sw.alpha = AlphaPolicy::Fixed(alpha_value(cx, &f)?);
    }
    if let Some(f) = t.get(cx, "dynamic_th") {
        let th = f.int(cx)?;
        let a = i32::try_from(th)
            .ok()
            .and_then(|th| Alpha::from_dynamic_th(th).ok())
            .ok_or_else(|| f.err(cx, format!("dynamic_th {th} is out of range (-7..=3)")))?;
        sw.alpha = AlphaPolicy::Fixed(a);
    }
    if let Some(f) = t.get(cx, "alpha_percent") {
        let p = f.uint(cx, 0, 100)? as u32;
        let a = Alpha::from_percent(p).map_err(|e| f.err(cx, e.to_string()))?;
        sw.alpha = AlphaPolicy::Fixed(a);
    }
    if let Some(f) = t.get(cx, "alpha_scaling") {
        let mut s = f.table(cx)?;
        s.check_keys(cx, &["base", "nic_rate"])?;
        let base = alpha_value(cx, &s.req(cx, "base")?)?;
        let nic_rate = s.req(cx, "nic_rate")?.positive_rate(cx)?;
        sw.alpha = AlphaPolicy::ScaledByRate { base, nic_rate };
    }
    if let Some(f) = t.get(cx, "egress_alpha") {
        sw.egress_alpha = alpha_value(cx, &f)?;
    }
    if let Some(f) = t.get(cx, "xon_offset") {
        sw.xon_offset = f.bytes(cx)?;
    }
    if let Some(f) = t.get(cx, "lossless") {
        sw.lossless = f.prio_mask(cx)?;
    }
    if let Some(f) = t.get(cx, "pfc") {
        let mut p = f.table(cx)?;
        p.check_keys(cx, &["mode", "quanta", "response"])?;
        if let Some(m) = p.get(cx, "mode") {
            sw.pfc = match m.str(cx)? {
                "explicit-resume" => PfcConfig::explicit_resume_mode(),
                "refresh" => PfcConfig::refresh_mode(MAX_QUANTA),
                other => {
                    return Err(m.err(
                        cx,
                        format!("unknown PFC mode `{other}` (expected explicit-resume or refresh)"),
                    ))
                }
            };
        }
        if let Some(q) = p.get(cx, "quanta") {
            // 1..=65535 fits in u16.
            sw.pfc.quanta = q.uint(cx, 1, u64::from(MAX_QUANTA))? as u16;
        }
        if let Some(r) = p.get(cx, "response") {
            sw.response_bytes = r.bytes(cx)?;
        }
    }
    if let Some(f) = t.get(cx, "scheduler") {
        let mut s = f.table(cx)?;
        s.check_keys(cx, &["strict", "quantum", "weights"])?;
        if let Some(x) = s.get(cx, "strict") {
            sw.scheduler.strict = x.prio_mask(cx)?;
        }
        if let Some(x) = s.get(cx, "quantum") {
            sw.scheduler.quantum = x.positive_bytes(cx)?;
        }
        if let Some(x) = s.get(cx, "weights") {
            let items = x.array(cx)?;
            if items.len() != 8 {
                return Err(x.err(
                    cx,
                    format!("expected 8 weights (one per queue), found {}", items.len()),
                ));
            }
            for (i, node) in items.iter().enumerate() {
                // 1..=u32::MAX fits in u32.
                sw.scheduler.weights[i] = x.elem(i, node).uint(cx, 1, u64::from(u32::MAX))? as u32;
            }
        }
    }
    if let Some(f) = t.get(cx, "ecn") {
        let mut e = f.table(cx)?;
        e.check_keys(cx, &["enabled", "point", "kmin", "kmax", "pmax", "queue"])?;
        if let Some(x) = e.get(cx, "enabled") {
            sw.ecn.enabled = x.boolean(cx)?;
        }
        if let Some(x) = e.get(cx, "point") {
            sw.ecn.point = match x.str(cx)? {
                "dequeue" => EcnPoint::Dequeue,
                "enqueue" => EcnPoint::Enqueue,
                other => {
                    return Err(x.err(
                        cx,
                        format!("unknown marking point `{other}` (expected dequeue or enqueue)"),
                    ))
                }
            };
        }
        if let Some(r) = parse_red(cx, &mut e)? {
            sw.ecn.red = Some(r);
        }
        if let Some(qs) = e.get(cx, "queue") {
            let qt = qs.table(cx)?;
            for entry in qt.entries {
                let fld = Fld {
                    name: join(&qt.name, &entry.key),
                    node: &entry.node,
                };
                let q = entry
                    .key
                    .parse::<usize>()
                    .ok()
                    .filter(|&q| q < headroom_mech::PRIORITIES)
                    .ok_or_else(|| {
                        cx.err(
                            &fld.name,
                            entry.key_span.clone().or_else(|| fld.span()),
                            format!("`{}` is not a queue (expected 0 to 7)", entry.key),
                        )
                    })?;
                let mut t = fld.table(cx)?;
                t.check_keys(cx, &["enabled", "kmin", "kmax", "pmax"])?;
                let on = match t.get(cx, "enabled") {
                    Some(x) => x.boolean(cx)?,
                    None => true,
                };
                let red = parse_red(cx, &mut t)?;
                sw.ecn.queues[q] = match (on, red) {
                    (false, None) => QueueEcn::Off,
                    (false, Some(_)) => {
                        return Err(cx.err(
                            &fld.name,
                            fld.span(),
                            "a queue with `enabled = false` takes no thresholds",
                        ))
                    }
                    (true, None) => QueueEcn::Inherit,
                    (true, Some(r)) => QueueEcn::Red(r),
                };
            }
        }
    }
    Ok(())
}

/// RED thresholds `kmin`, `kmax`, `pmax` of table `e`: all three, or none (`None`).
fn parse_red(cx: &Cx, e: &mut Tbl) -> Res<Option<RedConfig>> {
    let red_keys = ["kmin", "kmax", "pmax"];
    if !red_keys.iter().any(|k| e.has(k)) {
        return Ok(None);
    }
    let missing: Vec<&str> = red_keys.iter().copied().filter(|k| !e.has(k)).collect();
    if !missing.is_empty() {
        return Err(cx.err(
            &join(&e.name, missing[0]),
            e.span.clone(),
            format!(
                "give all of kmin, kmax and pmax, or none (to scale them with the port rate); `{}` is missing",
                missing[0]
            ),
        ));
    }
    let kmin = e.req(cx, "kmin")?.bytes(cx)?;
    let kmax_f = e.req(cx, "kmax")?;
    let kmax = kmax_f.bytes(cx)?;
    if kmax < kmin {
        return Err(kmax_f.err(cx, format!("kmax ({kmax} B) is below kmin ({kmin} B)")));
    }
    let pf = e.req(cx, "pmax")?;
    let pmax = pf.float(cx)?;
    if !(0.0..=1.0).contains(&pmax) {
        return Err(pf.err(cx, format!("must be in [0, 1], found {pmax}")));
    }
    Ok(Some(RedConfig { kmin, kmax, pmax }))
}

fn alpha_value(cx: &Cx, f: &Fld) -> Res<Alpha> {
    let v = f.float(cx)?;
    Alpha::from_value(v).map_err(|e| f.err(cx, e.to_string()))
}

fn parse_headroom(cx: &Cx, t: &mut Tbl) -> Res<HeadroomSizing> {
    #[derive(PartialEq)]
    enum Kind {
        PfcGuide,
        Dsh,
        Sonic,
        Hpcc,
        Fixed(u64),
    }
    let (kind, label) = match t.get(cx, "headroom") {
        None => (Kind::PfcGuide, "pfc-guide".to_string()),
        Some(f) => {
            let s = f.str(cx)?;
            let k = match s {
                "pfc-guide" => Kind::PfcGuide,
                "dsh" => Kind::Dsh,
                "sonic" => Kind::Sonic,
                "hpcc" => Kind::Hpcc,
                other => match parse_bytes(other) {
                    Ok(b) => Kind::Fixed(b.0),
                    Err(e) => {
                        return Err(f.err(
                            cx,
                            format!(
                                "`{other}` is neither a formula (pfc-guide, dsh, sonic, hpcc) nor a size: {}",
                                unit_reason(e, Quantity::Bytes)
                            ),
                        ))
                    }
                },
            };
            (k, s.to_string())
        }
    };
    let known: &[&str] = match kind {
        Kind::PfcGuide => &["mtu_r", "mtu_s", "response"],
        Kind::Dsh => &["mtu"],
        Kind::Sonic => &[
            "port_mtu",
            "lossless_mtu",
            "small_packet_percent",
            "mac_phy",
            "gearbox_delay",
            "response",
        ],
        Kind::Hpcc | Kind::Fixed(_) => &[],
    };
    let params = t.get(cx, "headroom_params");
    let mut p = match &params {
        Some(f) => {
            let p = f.table(cx)?;
            p.check_keys_with(cx, known, &format!(" for headroom = \"{label}\""))?;
            Some(p)
        }
        None => None,
    };
    let mut size = |key: &str, default: u64| -> Res<u64> {
        match p.as_mut().and_then(|p| p.get(cx, key)) {
            Some(f) => f.bytes(cx),
            None => Ok(default),
        }
    };
    Ok(match kind {
        Kind::PfcGuide => HeadroomSizing::PfcGuide {
            mtu_r: size("mtu_r", formula::MAX_FRAME_BYTES)?,
            mtu_s: size("mtu_s", formula::MAX_FRAME_BYTES)?,
            response: size("response", formula::PEER_RESPONSE_BYTES)?,
        },
        Kind::Dsh => HeadroomSizing::Dsh {
            mtu: size("mtu", DSH_MTU)?,
        },
        Kind::Sonic => {
            let port_mtu = size("port_mtu", SONIC_PORT_MTU)?;
            let lossless_mtu = size("lossless_mtu", SONIC_LOSSLESS_MTU)?;
            let mac_phy_bytes = size("mac_phy", SONIC_MAC_PHY_BYTES)?;
            let default_peer_response = size("response", formula::PEER_RESPONSE_BYTES)?;
            let small_packet_percent =
                match p.as_mut().and_then(|p| p.get(cx, "small_packet_percent")) {
                    Some(f) => f.uint(cx, 0, 100)?,
                    None => SONIC_SMALL_PACKET_PERCENT,
                };
            let gearbox_delay = match p.as_mut().and_then(|p| p.get(cx, "gearbox_delay")) {
                Some(f) => f.time(cx)?,
                None => Time::ZERO,
            };
            HeadroomSizing::SonicGeneric {
                port_mtu,
                lossless_mtu,
                small_packet_percent,
                mac_phy_bytes,
                gearbox_delay,
                default_peer_response,
            }
        }
        Kind::Hpcc => HeadroomSizing::HpccCompat,
        Kind::Fixed(b) => HeadroomSizing::Fixed(b),
    })
}

/// Default MTU of the DSH formula: the DSH paper's 1500 B.
const DSH_MTU: u64 = 1500;
/// SONiC's default port MTU.
const SONIC_PORT_MTU: u64 = 9100;
/// SONiC's lossless MTU (`LOSSLESS_TRAFFIC_PATTERN|AZURE`).
const SONIC_LOSSLESS_MTU: u64 = 1024;
/// SONiC's small-packet percentage (`LOSSLESS_TRAFFIC_PATTERN|AZURE`).
const SONIC_SMALL_PACKET_PERCENT: u64 = 50;
/// SONiC's MAC/PHY delay on Mellanox Spectrum (0.8 kB, rounded down).
const SONIC_MAC_PHY_BYTES: u64 = 819;

/// `scheme = "sih" | "shp" | "dsh"` with its `[switch.shp]` / `[switch.dsh]` parameters.
fn parse_scheme(cx: &Cx, t: &mut Tbl, sw: &mut SwitchConfig) -> Res<()> {
    let name = match t.get(cx, "scheme") {
        Some(f) => {
            let n = f.str(cx)?.to_string();
            if !["sih", "shp", "dsh"].contains(&n.as_str()) {
                return Err(f.err(
                    cx,
                    format!("unknown scheme `{n}` (expected sih, shp or dsh)"),
                ));
            }
            n
        }
        None => "sih".to_string(),
    };
    let shp = t.get(cx, "shp");
    let dsh = t.get(cx, "dsh");
    if let (Some(f), false) = (&shp, name == "shp") {
        return Err(f.err(cx, "[switch.shp] is only used with scheme = \"shp\""));
    }
    if let (Some(f), false) = (&dsh, name == "dsh") {
        return Err(f.err(cx, "[switch.dsh] is only used with scheme = \"dsh\""));
    }
    sw.scheme = match name.as_str() {
        "shp" => {
            let Some(f) = shp else {
                return Err(cx.err(
                    &join(&t.name, "shp"),
                    t.span.clone(),
                    "scheme = \"shp\" needs [switch.shp] with `pool` or `over_subscribe_ratio`",
                ));
            };
            let mut s = f.table(cx)?;
            s.check_keys(cx, &["pool", "over_subscribe_ratio"])?;
            match (s.get(cx, "pool"), s.get(cx, "over_subscribe_ratio")) {
                (Some(p), None) => SchemeConfig::Shp(ShpPool::Bytes(p.positive_bytes(cx)?)),
                (None, Some(r)) => {
                    let v = r.float(cx)?;
                    if !(v.is_finite() && v > 0.0) {
                        return Err(r.err(cx, format!("must be a positive number, found {v}")));
                    }
                    SchemeConfig::Shp(ShpPool::Ratio(v))
                }
                (Some(p), Some(_)) => {
                    return Err(p.err(cx, "give `pool` or `over_subscribe_ratio`, not both"))
                }
                (None, None) => {
                    return Err(f.err(cx, "give `pool` (a size) or `over_subscribe_ratio`"))
                }
            }
        }
        "dsh" => {
            let (mut dq, mut dp) = (DSH_DEFAULT_DELTA, DSH_DEFAULT_DELTA);
            if let Some(f) = dsh {
                let mut d = f.table(cx)?;
                d.check_keys(cx, &["delta_q", "delta_p"])?;
                if let Some(x) = d.get(cx, "delta_q") {
                    dq = x.bytes(cx)?;
                }
                if let Some(x) = d.get(cx, "delta_p") {
                    dp = x.bytes(cx)?;
                }
            }
            SchemeConfig::Dsh {
                delta_q: dq,
                delta_p: dp,
            }
        }
        _ => SchemeConfig::Sih,
    };
    Ok(())
}

/// Reads the file a field names (relative to the scenario's directory): its resolved path,
/// the path as shown in messages, and its text; an unreadable file is an error at the field.
fn read_referenced(cx: &Cx, f: &Fld) -> Res<(PathBuf, String, String)> {
    let path = cx.resolve(f.str(cx)?);
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        cx.file_err(
            &f.name,
            f.span(),
            path.clone(),
            0,
            format!("cannot read: {e}"),
        )
    })?;
    Ok((path, shown, text))
}

/// DSH's default hysteresis: one MTU-sized (1500 B) packet.
const DSH_DEFAULT_DELTA: u64 = 1500;

// ---------------------------------------------------------------------------------------
// [host]

fn parse_host(cx: &Cx, f: &Fld, config: &mut SimConfig) -> Res<()> {
    let h = &mut config.host;
    let mut t = f.table(cx)?;
    t.check_keys(
        cx,
        &[
            "mtu",
            "header",
            "ack",
            "cnp",
            "ack_interval",
            "ack_prio",
            "cnp_interval",
            "rto",
            "pacing",
            "cc",
            "nic_buffer",
        ],
    )?;
    if let Some(x) = t.get(cx, "mtu") {
        h.mtu_payload = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "header") {
        h.header_bytes = x.bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "ack") {
        h.ack_bytes = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "cnp") {
        h.cnp_bytes = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "ack_interval") {
        h.ack_interval = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "ack_prio") {
        h.ack_prio = x.prio(cx)?;
    }
    if let Some(x) = t.get(cx, "cnp_interval") {
        h.cnp_interval = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "rto") {
        h.rto = x.positive_time(cx)?;
    }
    if let Some(x) = t.get(cx, "pacing") {
        h.pacing = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "cc") {
        h.cc = parse_cc(cx, &x)?;
    }
    if let Some(x) = t.get(cx, "nic_buffer") {
        let mut b = x.table(cx)?;
        b.check_keys(cx, &["size", "xoff", "xon", "drain"])?;
        let size = b.req(cx, "size")?.positive_bytes(cx)?;
        let xoff_f = b.req(cx, "xoff")?;
        let xoff = xoff_f.positive_bytes(cx)?;
        let xon_f = b.req(cx, "xon")?;
        let xon = xon_f.bytes(cx)?;
        if xoff > size {
            return Err(xoff_f.err(cx, format!("xoff ({xoff} B) is above size ({size} B)")));
        }
        if xon >= xoff {
            return Err(xon_f.err(cx, format!("xon ({xon} B) must be below xoff ({xoff} B)")));
        }
        let drain = b.req(cx, "drain")?.rate(cx)?;
        h.nic_buffer = Some(NicBufferConfig {
            size,
            xoff,
            xon,
            drain,
        });
    }
    Ok(())
}

const DCQCN_KEYS: [&str; 12] = [
    "variant",
    "g",
    "alpha_resume_interval",
    "rate_decrease_interval",
    "rp_timer",
    "byte_counter",
    "fast_recovery_times",
    "rate_ai",
    "rate_hai",
    "min_rate",
    "clamp_target_rate",
    "rate_on_first_cnp",
];

fn parse_cc(cx: &Cx, f: &Fld) -> Res<CcConfig> {
    let mut t = f.table(cx)?;
    let mut known = vec!["algorithm", "preset"];
    known.extend(DCQCN_KEYS);
    t.check_keys(cx, &known)?;
    let algorithm = match t.get(cx, "algorithm") {
        Some(a) => match a.str(cx)? {
            "dcqcn" => true,
            "none" => false,
            other => {
                return Err(a.err(
                    cx,
                    format!("unknown algorithm `{other}` (expected dcqcn or none)"),
                ))
            }
        },
        None => true,
    };
    if !algorithm {
        if let Some(e) = t.entries.iter().find(|e| e.key != "algorithm") {
            return Err(cx.err(
                &join(&t.name, &e.key),
                e.key_span.clone(),
                format!("`{}` only applies with algorithm = \"dcqcn\"", e.key),
            ));
        }
        return Ok(CcConfig::None);
    }
    let mut d = match t.get(cx, "preset") {
        Some(p) => match p.str(cx)? {
            "hpcc" => DcqcnConfig::default(),
            "paper" => DcqcnConfig::paper(),
            other => {
                return Err(p.err(
                    cx,
                    format!("unknown preset `{other}` (expected hpcc or paper)"),
                ))
            }
        },
        None => DcqcnConfig::default(),
    };
    if let Some(x) = t.get(cx, "variant") {
        d.variant = match x.str(cx)? {
            "mellanox" => DcqcnVariant::Mellanox,
            "paper" => DcqcnVariant::Paper,
            other => {
                return Err(x.err(
                    cx,
                    format!("unknown variant `{other}` (expected mellanox or paper)"),
                ))
            }
        };
    }
    if let Some(x) = t.get(cx, "g") {
        let g = x.float(cx)?;
        if !(0.0..=1.0).contains(&g) {
            return Err(x.err(cx, format!("must be in [0, 1], found {g}")));
        }
        d.g = g;
    }
    if let Some(x) = t.get(cx, "alpha_resume_interval") {
        d.alpha_resume_interval = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "rate_decrease_interval") {
        d.rate_decrease_interval = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "rp_timer") {
        d.rp_timer = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "byte_counter") {
        d.byte_counter = x.bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "fast_recovery_times") {
        // At most u32::MAX.
        d.fast_recovery_times = x.uint(cx, 0, u64::from(u32::MAX))? as u32;
    }
    if let Some(x) = t.get(cx, "rate_ai") {
        d.rate_ai = x.rate(cx)?;
    }
    if let Some(x) = t.get(cx, "rate_hai") {
        d.rate_hai = x.rate(cx)?;
    }
    if let Some(x) = t.get(cx, "min_rate") {
        d.min_rate = x.rate(cx)?;
    }
    if let Some(x) = t.get(cx, "clamp_target_rate") {
        d.clamp_target_rate = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "rate_on_first_cnp") {
        let r = x.float(cx)?;
        if !(r > 0.0 && r <= 1.0) {
            return Err(x.err(cx, format!("must be in (0, 1], found {r}")));
        }
        d.rate_on_first_cnp = r;
    }
    Ok(CcConfig::Dcqcn(d))
}

// ---------------------------------------------------------------------------------------
// [output]

fn parse_output(cx: &Cx, f: &Fld, config: &mut SimConfig, out: &mut OutputOptions) -> Res<()> {
    let mut t = f.table(cx)?;
    t.check_keys(
        cx,
        &[
            "sample_interval",
            "fail_on_lossless_drop",
            "plots",
            "compat",
        ],
    )?;
    if let Some(x) = t.get(cx, "sample_interval") {
        config.record.sample_interval = Some(x.positive_time(cx)?);
    }
    if let Some(x) = t.get(cx, "fail_on_lossless_drop") {
        config.record.fail_on_lossless_drop = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "plots") {
        out.plots = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "compat") {
        out.compat_hpcc = match x.str(cx)? {
            "hpcc" => true,
            "none" => false,
            other => {
                return Err(x.err(
                    cx,
                    format!("unknown compat format `{other}` (expected hpcc or none)"),
                ))
            }
        };
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// [[workload]]

/// Flows gathered from all workloads, each with the field it came from.
#[derive(Default)]
struct Flows {
    flows: Vec<FlowSpec>,
    /// Per flow, an index into `sources`.
    origin: Vec<usize>,
    /// Field path and span of each flow source.
    sources: Vec<Source>,
    /// Kind of each `[[workload]]` entry, by its field path (`workload[3]` → `incast`).
    kinds: std::collections::BTreeMap<String, String>,
}

/// Field path and span a flow came from.
type Source = (String, Option<Range<usize>>);

impl Flows {
    fn add(&mut self, field: &str, span: Option<Range<usize>>, flows: Vec<FlowSpec>) {
        let src = self.sources.len();
        self.sources.push((field.to_string(), span));
        self.origin.extend((0..flows.len()).map(|_| src));
        self.flows.extend(flows);
    }

    /// The flows sorted by start (stable), and the origin of each.
    fn finish(self) -> (Vec<FlowSpec>, Vec<Source>) {
        let mut order: Vec<usize> = (0..self.flows.len()).collect();
        order.sort_by_key(|&i| self.flows[i].start);
        let origins = order
            .iter()
            .map(|&i| self.sources[self.origin[i]].clone())
            .collect();
        let mut slots: Vec<Option<FlowSpec>> = self.flows.into_iter().map(Some).collect();
        let flows = order.iter().filter_map(|&i| slots[i].take()).collect();
        (flows, origins)
    }

    fn room(&self) -> usize {
        MAX_FLOWS.saturating_sub(self.flows.len())
    }
}

fn too_many(n: impl fmt::Display) -> String {
    format!("this workload would create {n} flows; a scenario may have at most {MAX_FLOWS}")
}

fn parse_workload(
    cx: &Cx,
    w: &Fld,
    index: usize,
    seed: u64,
    topo: &Topology,
    out: &mut Flows,
) -> Res<()> {
    let mut t = w.table(cx)?;
    let kind_f = t.req(cx, "kind")?;
    let kind = kind_f.str(cx)?;
    out.kinds.insert(w.name.clone(), kind.to_string());
    let known: &[&str] = match kind {
        "poisson" => &[
            "kind",
            "load",
            "cdf",
            "cdf_file",
            "start",
            "duration",
            "prio",
            "hosts",
            "seed_offset",
        ],
        "incast" => &[
            "kind",
            "senders",
            "sender_count",
            "receiver",
            "size",
            "start",
            "repeat",
            "prio",
        ],
        "permutation" => &["kind", "size", "start", "prio", "hosts", "seed_offset"],
        "all-to-all" => &["kind", "size", "start", "prio", "hosts"],
        "flow-file" => &["kind", "file"],
        "flows" => &["kind", "flow"],
        other => {
            return Err(kind_f.err(
                cx,
                format!(
                    "unknown workload kind `{other}` (expected one of: poisson, incast, permutation, all-to-all, flow-file, flows)"
                ),
            ))
        }
    };
    t.check_keys_with(cx, known, &format!(" for kind = \"{kind}\""))?;
    let gen_err = |e: WorkloadError| w.err(cx, e.to_string());
    let rng = |t: &mut Tbl| -> Res<rand_pcg::Pcg64> {
        let stream = match t.get(cx, "seed_offset") {
            Some(f) => f.uint(cx, 0, i64::MAX as u64)?,
            None => index as u64,
        };
        Ok(generators::rng_from_seed(workload_seed(seed, stream)))
    };
    let span = t.span.clone().or_else(|| kind_f.span());
    match kind {
        "poisson" => {
            let lf = t.req(cx, "load")?;
            let load = lf.float(cx)?;
            if !(load > 0.0 && load <= 1.0) {
                return Err(lf.err(cx, format!("must be in (0, 1], found {load}")));
            }
            let dist = parse_cdf(cx, &mut t)?;
            let start = opt_time(cx, &mut t, "start", Time::ZERO)?;
            let df = t.req(cx, "duration")?;
            let duration = df.positive_time(cx)?;
            let prio = opt_prio(cx, &mut t, "prio")?;
            let hf = t.get(cx, "hosts");
            let hosts = host_list(cx, hf.as_ref(), topo, &w.name)?;
            let rate = common_rate(cx, hf.as_ref(), w, &hosts, topo)?;
            // Expected flow count: hosts × duration / mean gap.
            let mean = dist.mean().max(1.0);
            let expected =
                hosts.len() as f64 * duration.as_secs_f64() * load * rate.as_f64() / (8.0 * mean);
            if expected > out.room() as f64 {
                return Err(df.err(cx, too_many(format!("about {expected:.0}"))));
            }
            let mut r = rng(&mut t)?;
            let flows =
                generators::poisson(&hosts, rate, load, &dist, start, duration, prio, &mut r)
                    .map_err(gen_err)?;
            out.add(&w.name, span, flows);
        }
        "incast" => {
            let rf = t.req(cx, "receiver")?;
            let receiver = rf.host(cx, topo)?;
            let senders = match (t.get(cx, "senders"), t.get(cx, "sender_count")) {
                (Some(_), Some(c)) => {
                    return Err(c.err(cx, "give `senders` or `sender_count`, not both"))
                }
                (None, None) => {
                    return Err(cx.err(
                        &join(&w.name, "senders"),
                        span.clone(),
                        "an incast needs `senders = [ids]` or `sender_count = N`",
                    ))
                }
                (Some(s), None) => {
                    let list = host_ids(cx, &s, topo)?;
                    for (i, h) in list.iter().enumerate() {
                        if *h == receiver {
                            return Err(cx.err(
                                &format!("{}[{i}]", s.name),
                                s.array(cx)?.get(i).and_then(|n| n.span.clone()),
                                format!("host {} is also the receiver", h.0),
                            ));
                        }
                    }
                    list
                }
                (None, Some(c)) => {
                    let others: Vec<NodeId> = topo
                        .hosts()
                        .into_iter()
                        .filter(|h| *h != receiver)
                        .collect();
                    let n = c.uint(cx, 1, u64::MAX)?;
                    if n > others.len() as u64 {
                        return Err(c.err(
                            cx,
                            format!(
                                "{n} senders requested but only {} hosts besides the receiver exist",
                                others.len()
                            ),
                        ));
                    }
                    others[..n as usize].to_vec()
                }
            };
            let size = t.req(cx, "size")?.positive_bytes(cx)?;
            let start = opt_time(cx, &mut t, "start", Time::ZERO)?;
            let prio = opt_prio(cx, &mut t, "prio")?;
            let repeat = match t.get(cx, "repeat") {
                Some(f) => {
                    let mut r = f.table(cx)?;
                    r.check_keys(cx, &["interval", "count"])?;
                    let cf = r.req(cx, "count")?;
                    let count = cf.uint(cx, 1, u64::from(u32::MAX))?;
                    let interval = match r.get(cx, "interval") {
                        Some(i) if count > 1 => i.positive_time(cx)?,
                        Some(i) => i.time(cx)?,
                        None if count > 1 => {
                            return Err(cx.err(
                                &join(&f.name, "interval"),
                                f.span(),
                                "a repeated incast needs an `interval`",
                            ))
                        }
                        None => Time::ZERO,
                    };
                    if count.saturating_mul(senders.len() as u64) > out.room() as u64 {
                        return Err(
                            cf.err(cx, too_many(count.saturating_mul(senders.len() as u64)))
                        );
                    }
                    // count <= u32::MAX.
                    Some((interval, count as u32))
                }
                None => None,
            };
            let flows = generators::incast(&senders, receiver, size, start, repeat, prio)
                .map_err(gen_err)?;
            out.add(&w.name, span, flows);
        }
        "permutation" | "all-to-all" => {
            let size = t.req(cx, "size")?.positive_bytes(cx)?;
            let start = opt_time(cx, &mut t, "start", Time::ZERO)?;
            let prio = opt_prio(cx, &mut t, "prio")?;
            let hf = t.get(cx, "hosts");
            let hosts = host_list(cx, hf.as_ref(), topo, &w.name)?;
            let flows = if kind == "permutation" {
                let mut r = rng(&mut t)?;
                generators::permutation(&hosts, size, start, prio, &mut r).map_err(gen_err)?
            } else {
                let n = hosts.len() as u64;
                let total = n.saturating_mul(n.saturating_sub(1));
                if total > out.room() as u64 {
                    return Err(w.err(cx, too_many(total)));
                }
                generators::all_to_all(&hosts, size, start, prio).map_err(gen_err)?
            };
            out.add(&w.name, span, flows);
        }
        "flow-file" => {
            let ff = t.req(cx, "file")?;
            let (path, shown, text) = read_referenced(cx, &ff)?;
            let flows = crate::workload::hpcc::parse(&text, &shown).map_err(|e| match e {
                WorkloadError::File { line, reason, .. } => {
                    cx.file_err(&ff.name, ff.span(), path.clone(), line, reason)
                }
                other => cx.file_err(&ff.name, ff.span(), path.clone(), 0, other.to_string()),
            })?;
            if let Some((line, reason)) = flow_file_node_error(&text, topo) {
                return Err(cx.file_err(&ff.name, ff.span(), path, line, reason));
            }
            if flows.len() > out.room() {
                return Err(ff.err(cx, too_many(flows.len())));
            }
            out.add(&ff.name, ff.span(), flows);
        }
        _ => {
            // "flows": the only kind left after the match on `known` above.
            let lf = t.req(cx, "flow")?;
            let items = lf.array(cx)?;
            if items.len() > out.room() {
                return Err(lf.err(cx, too_many(items.len())));
            }
            for (k, node) in items.iter().enumerate() {
                let ef = lf.elem(k, node);
                let mut ft = ef.table(cx)?;
                ft.check_keys(cx, &["src", "dst", "size", "start", "prio", "dport"])?;
                let src = ft.req(cx, "src")?.host(cx, topo)?;
                let df = ft.req(cx, "dst")?;
                let dst = df.host(cx, topo)?;
                if src == dst {
                    return Err(df.err(cx, format!("src and dst are the same host {}", src.0)));
                }
                let size = ft.req(cx, "size")?.positive_bytes(cx)?;
                let start = opt_time(cx, &mut ft, "start", Time::ZERO)?;
                let prio = opt_prio(cx, &mut ft, "prio")?;
                let dport = match ft.get(cx, "dport") {
                    // 0..=65535 fits in u16.
                    Some(p) => p.uint(cx, 0, u64::from(u16::MAX))? as u16,
                    None => default_dport(k),
                };
                let span = ef.span();
                out.add(
                    &ef.name,
                    span,
                    vec![FlowSpec {
                        src,
                        dst,
                        prio,
                        size,
                        start,
                        dport,
                    }],
                );
            }
        }
    }
    Ok(())
}

/// The destination port of the `k`-th flow of a `flows` workload without a `dport`:
/// the generators' convention (`FIRST_DPORT + k`, cycling).
fn default_dport(k: usize) -> u16 {
    let off = (k % generators::DPORT_COUNT as usize) as u32;
    // FIRST_DPORT + off <= u16::MAX by the definition of DPORT_COUNT.
    u16::try_from(u32::from(generators::FIRST_DPORT) + off).unwrap_or(u16::MAX)
}

fn parse_cdf(cx: &Cx, t: &mut Tbl) -> Res<SizeCdf> {
    match (t.get(cx, "cdf"), t.get(cx, "cdf_file")) {
        (Some(_), Some(f)) => Err(f.err(cx, "give `cdf` or `cdf_file`, not both")),
        (None, None) => Err(cx.err(
            &join(&t.name, "cdf"),
            t.span.clone(),
            format!(
                "a poisson workload needs `cdf` (one of: {}) or `cdf_file`",
                cdf::BUILTIN_NAMES.join(", ")
            ),
        )),
        (Some(f), None) => {
            let name = f.str(cx)?;
            cdf::builtin(name).ok_or_else(|| {
                f.err(
                    cx,
                    format!(
                        "unknown built-in distribution `{name}` (expected one of: {}; or use cdf_file)",
                        cdf::BUILTIN_NAMES.join(", ")
                    ),
                )
            })
        }
        (None, Some(f)) => {
            let (path, shown, text) = read_referenced(cx, &f)?;
            SizeCdf::parse(&text, &shown).map_err(|e| match e {
                WorkloadError::File { line, reason, .. } => {
                    cx.file_err(&f.name, f.span(), path.clone(), line, reason)
                }
                other => cx.file_err(&f.name, f.span(), path.clone(), 0, other.to_string()),
            })
        }
    }
}

/// A list of distinct host ids.
fn host_ids(cx: &Cx, f: &Fld, topo: &Topology) -> Res<Vec<NodeId>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, node) in f.array(cx)?.iter().enumerate() {
        let e = f.elem(i, node);
        let h = e.host(cx, topo)?;
        if !seen.insert(h) {
            return Err(e.err(cx, format!("host {} is listed twice", h.0)));
        }
        out.push(h);
    }
    Ok(out)
}

/// `hosts = "all"` (the default) or a list of host ids.
fn host_list(cx: &Cx, f: Option<&Fld>, topo: &Topology, owner: &str) -> Res<Vec<NodeId>> {
    let hosts = match f {
        None => topo.hosts(),
        Some(f) => match &f.node.v {
            V::Str(s) if s == "all" => topo.hosts(),
            V::Array(_) => host_ids(cx, f, topo)?,
            _ => return Err(f.wrong(cx, "\"all\" or a list of host ids")),
        },
    };
    if hosts.len() < 2 {
        let (name, span) = match f {
            Some(f) => (f.name.clone(), f.span()),
            None => (owner.to_string(), None),
        };
        return Err(cx.err(
            &name,
            span,
            format!("needs at least 2 hosts, found {}", hosts.len()),
        ));
    }
    Ok(hosts)
}

/// The NIC rate shared by all `hosts` (a Poisson workload offers load relative to it).
fn common_rate(cx: &Cx, f: Option<&Fld>, w: &Fld, hosts: &[NodeId], topo: &Topology) -> Res<Rate> {
    let rate_of = |h: NodeId| {
        topo.links
            .iter()
            .find(|l| l.a == h || l.b == h)
            .map(|l| l.rate)
    };
    let mut first: Option<(NodeId, Rate)> = None;
    for &h in hosts {
        let Some(r) = rate_of(h) else { continue };
        match first {
            None => first = Some((h, r)),
            Some((h0, r0)) if r0 != r => {
                let msg = format!(
                    "a poisson workload needs hosts with equal link rates: host {} has {r0}, host {} has {r}",
                    h0.0, h.0
                );
                return Err(match f {
                    Some(f) => f.err(cx, msg),
                    None => w.err(cx, msg),
                });
            }
            Some(_) => {}
        }
    }
    first
        .map(|(_, r)| r)
        .ok_or_else(|| w.err(cx, "the hosts have no links"))
}

/// The first line of an HPCC flow file (already parsed without errors) whose source or
/// destination is not a host of `topo`, with the reason.
pub(crate) fn flow_file_node_error(text: &str, topo: &Topology) -> Option<(usize, String)> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    lines.next(); // the count
    for (i, l) in lines {
        let mut fields = l.split_whitespace();
        for what in ["src", "dst"] {
            let Some(n) = fields.next().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            match topo.nodes.get(n as usize) {
                None => {
                    return Some((
                        i + 1,
                        format!(
                            "{what} is unknown node {n}: the topology has {} nodes",
                            topo.len()
                        ),
                    ))
                }
                Some(NodeKind::Switch) => {
                    return Some((i + 1, format!("{what} {n} is a switch, not a host")))
                }
                Some(NodeKind::Host) => {}
            }
        }
    }
    None
}
