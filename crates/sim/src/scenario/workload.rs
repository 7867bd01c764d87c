//! `[[workload]]` entries: the flows of a scenario, from generators (Poisson, incast,
//! permutation, all-to-all), explicit `[[workload.flow]]` lists and HPCC flow files.
//!
//! Invariants:
//! - Every flow remembers the field it came from (a workload, a flow file, or one
//!   `[[workload.flow]]`), so that errors found later point at it.
//! - Flows of all workloads are concatenated in workload order, then sorted by start time
//!   (stable).
//! - No workload is generated when the total would exceed [`MAX_FLOWS`]: the expected count
//!   is checked first.
//! - Random workloads draw from the RNG seeded by [`workload_seed`] with the workload's
//!   `seed_offset`, or its index.

use std::fmt;
use std::ops::Range;

use super::fields::{join, opt_time, read_referenced, Cx, Fld, Res, Tbl, V};
use super::{workload_seed, DEFAULT_PRIO, MAX_FLOWS};
use crate::topology::{NodeId, NodeKind, Topology};
use crate::workload::cdf::{self, SizeCdf};
use crate::workload::fan_in::{self, FanIns};
use crate::workload::leaves::Leaves;
use crate::workload::{generators, FlowSpec, WorkloadError};
use headroom_mech::inq_arbiter::{flow_appg, NO_FLOW_APPG};
use headroom_mech::units::{Rate, Time};

/// Every workload kind with the keys its `[[workload]]` table accepts: the one list the
/// parser takes kinds from (the reference's test checks each is documented).
pub(super) const WORKLOAD_KINDS: [(&str, &[&str]); 9] = [
    (
        "poisson",
        &[
            "kind",
            "load",
            "cdf",
            "cdf_file",
            "start",
            "duration",
            "prio",
            "hosts",
            "cross_leaf",
            "seed_offset",
            "app",
        ],
    ),
    (
        "incast-poisson",
        &[
            "kind",
            "load",
            "fan_in",
            "size",
            "start",
            "duration",
            "prio",
            "hosts",
            "seed_offset",
            "app",
        ],
    ),
    (
        "incast",
        &[
            "kind",
            "senders",
            "sender_count",
            "receiver",
            "size",
            "start",
            "repeat",
            "prio",
            "app",
        ],
    ),
    (
        "permutation",
        &[
            "kind",
            "size",
            "start",
            "prio",
            "hosts",
            "seed_offset",
            "app",
        ],
    ),
    (
        "ring",
        &[
            "kind",
            "size",
            "start",
            "repeat",
            "prio",
            "hosts",
            "seed_offset",
            "app",
        ],
    ),
    (
        "all-to-all",
        &["kind", "size", "start", "prio", "hosts", "app"],
    ),
    ("flow-file", &["kind", "file", "app"]),
    ("htsim-cm", &["kind", "file", "prio", "app"]),
    ("flows", &["kind", "flow", "app"]),
];

/// Flows gathered from all workloads, each with the field it came from.
#[derive(Default)]
pub(super) struct Flows {
    pub(super) flows: Vec<FlowSpec>,
    /// Per flow, its application (the `app` of its workload).
    apps: Vec<u8>,
    /// Notes for the user about values read differently from how they were written.
    pub(super) notes: Vec<String>,
    /// Per flow, an index into `sources`.
    pub(super) origin: Vec<usize>,
    /// Field path and span of each flow source.
    pub(super) sources: Vec<Source>,
    /// Kind of each `[[workload]]` entry, by its field path (`workload[3]` → `incast`).
    pub(super) kinds: std::collections::BTreeMap<String, String>,
}

/// Field path and span a flow came from.
pub(super) type Source = (String, Option<Range<usize>>);

impl Flows {
    /// Adds `flows`, of application `app`, read from `field`.
    pub(super) fn add(
        &mut self,
        (field, span): (&str, Option<Range<usize>>),
        flows: Vec<FlowSpec>,
        app: u8,
    ) {
        let src = self.sources.len();
        self.sources.push((field.to_string(), span));
        self.origin.extend((0..flows.len()).map(|_| src));
        self.apps.extend((0..flows.len()).map(|_| app));
        self.flows.extend(flows);
    }

    /// The flows sorted by start (stable), the application of each (empty if all are
    /// application 0), and the origin of each.
    pub(super) fn finish(self) -> (Vec<FlowSpec>, Vec<u8>, Vec<Source>) {
        let mut order: Vec<usize> = (0..self.flows.len()).collect();
        order.sort_by_key(|&i| self.flows[i].start);
        let origins = order
            .iter()
            .map(|&i| self.sources[self.origin[i]].clone())
            .collect();
        let apps = if self.apps.iter().all(|&a| a == 0) {
            Vec::new()
        } else {
            order.iter().map(|&i| self.apps[i]).collect()
        };
        let mut slots: Vec<Option<FlowSpec>> = self.flows.into_iter().map(Some).collect();
        let flows = order.iter().filter_map(|&i| slots[i].take()).collect();
        (flows, apps, origins)
    }

    pub(super) fn room(&self) -> usize {
        MAX_FLOWS.saturating_sub(self.flows.len())
    }
}

fn too_many(n: impl fmt::Display) -> String {
    format!("this workload would create {n} flows; a scenario may have at most {MAX_FLOWS}")
}

/// Parses `[[workload]]` entry `index` into `out`; `lossless` is the switches' mask of
/// lossless classes (every class of a `prio` list must be one).
pub(super) fn parse_workload(
    cx: &Cx,
    w: &Fld,
    index: usize,
    seed: u64,
    topo: &Topology,
    lossless: u8,
    out: &mut Flows,
) -> Res<()> {
    let mut t = w.table(cx)?;
    let kind_f = t.req(cx, "kind")?;
    let kind = kind_f.str(cx)?;
    out.kinds.insert(w.name.clone(), kind.to_string());
    let Some(&(_, known)) = WORKLOAD_KINDS.iter().find(|(k, _)| *k == kind) else {
        let kinds: Vec<&str> = WORKLOAD_KINDS.iter().map(|(k, _)| *k).collect();
        return Err(kind_f.err(
            cx,
            format!(
                "unknown workload kind `{kind}` (expected one of: {})",
                kinds.join(", ")
            ),
        ));
    };
    t.check_keys_with(cx, known, &format!("kind = \"{kind}\""))?;
    let app = match t.get(cx, "app") {
        Some(f) => {
            // 0..=127 fits in u8.
            let computed = f.uint(cx, 0, u64::from(NO_FLOW_APPG))? as u8;
            let app = flow_appg(computed);
            if app != computed {
                out.notes.push(format!(
                    "{}: application {computed} is reserved for frames of no flow; its flows \
                     are application {app}",
                    f.name
                ));
            }
            app
        }
        None => 0,
    };
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
            let load = load(cx, &mut t)?;
            let dist = parse_cdf(cx, &mut t)?;
            let start = opt_time(cx, &mut t, "start", Time::ZERO)?;
            let df = t.req(cx, "duration")?;
            let duration = df.positive_time(cx)?;
            let prios = prio_classes(cx, &mut t, lossless)?;
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
            let leaves = match t.get(cx, "cross_leaf") {
                Some(f) if f.boolean(cx)? => {
                    let leaves = Leaves::of(topo, &hosts);
                    if leaves.count() < 2 {
                        return Err(f.err(
                            cx,
                            "every host of this workload is on one leaf (switch): no flow can \
                             cross leaves",
                        ));
                    }
                    Some(leaves)
                }
                _ => None,
            };
            let mut r = rng(&mut t)?;
            let mut flows = generators::poisson(
                &hosts,
                rate,
                load,
                &dist,
                start,
                duration,
                prios[0],
                leaves.as_ref(),
                &mut r,
            )
            .map_err(gen_err)?;
            generators::draw_prios(&mut flows, &prios, &mut r);
            out.add((&w.name, span), flows, app);
        }
        "incast-poisson" => {
            let load = load(cx, &mut t)?;
            let size = t.req(cx, "size")?.positive_bytes(cx)?;
            let start = opt_time(cx, &mut t, "start", Time::ZERO)?;
            let df = t.req(cx, "duration")?;
            let duration = df.positive_time(cx)?;
            let prios = prio_classes(cx, &mut t, lossless)?;
            let hf = t.get(cx, "hosts");
            let hosts = host_list(cx, hf.as_ref(), topo, &w.name)?;
            let rate = common_rate(cx, hf.as_ref(), w, &hosts, topo)?;
            let leaves = Leaves::of(topo, &hosts);
            let eligible = if leaves.count() == 1 {
                hosts.len() - 1
            } else {
                (0..hosts.len())
                    .map(|i| leaves.elsewhere(i))
                    .min()
                    .unwrap_or(0)
            };
            let ff = t.req(cx, "fan_in")?;
            let fan_in = ff.uint(cx, 0, u64::MAX)?;
            if fan_in == 0 {
                return Err(ff.err(cx, "a fan-in needs at least 1 sender"));
            }
            if fan_in > eligible as u64 {
                let whence = if leaves.count() == 1 {
                    "other hosts".to_string()
                } else {
                    "hosts on other leaves than some receiver's".to_string()
                };
                return Err(ff.err(
                    cx,
                    format!("{fan_in} senders per fan-in, but there are only {eligible} {whence}"),
                ));
            }
            let expected = duration.as_secs_f64() * load * hosts.len() as f64 * rate.as_f64()
                / (8.0 * size as f64);
            if expected > out.room() as f64 {
                return Err(df.err(cx, too_many(format!("about {expected:.0}"))));
            }
            let params = FanIns {
                load,
                // At most the host count, checked above.
                fan_in: fan_in as usize,
                size,
                start,
                duration,
                prio: prios[0],
            };
            let mut r = rng(&mut t)?;
            let mut flows =
                fan_in::incast_poisson(&hosts, &leaves, rate, &params, &mut r).map_err(gen_err)?;
            generators::draw_prios(&mut flows, &prios, &mut r);
            out.add((&w.name, span), flows, app);
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
                (Some(s), None) if !matches!(s.node.v, V::Array(_)) => {
                    let senders: Vec<NodeId> = host_stride(cx, &s, topo)?
                        .into_iter()
                        .filter(|h| *h != receiver)
                        .collect();
                    if senders.is_empty() {
                        return Err(s.err(cx, "the stride takes no host besides the receiver"));
                    }
                    senders
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
            let prios = prio_classes(cx, &mut t, lossless)?;
            let repeat = match t.get(cx, "repeat") {
                Some(f) => Some(repeat(cx, &f, "incast", senders.len() as u64, out.room())?),
                None => None,
            };
            let mut flows = generators::incast(&senders, receiver, size, start, repeat, prios[0])
                .map_err(gen_err)?;
            generators::draw_prios(&mut flows, &prios, &mut rng(&mut t)?);
            out.add((&w.name, span), flows, app);
        }
        "ring" => {
            let size = t.req(cx, "size")?.positive_bytes(cx)?;
            let start = opt_time(cx, &mut t, "start", Time::ZERO)?;
            let prios = prio_classes(cx, &mut t, lossless)?;
            let hf = t.get(cx, "hosts");
            let hosts = host_list(cx, hf.as_ref(), topo, &w.name)?;
            let per_round = if hosts.len() == 2 {
                2
            } else {
                2 * hosts.len() as u64
            };
            let rounds = match t.get(cx, "repeat") {
                Some(f) => repeat(cx, &f, "ring", per_round, out.room())?,
                None if per_round > out.room() as u64 => return Err(w.err(cx, too_many(per_round))),
                None => (Time::ZERO, 1),
            };
            let mut r = rng(&mut t)?;
            let mut flows =
                generators::ring(&hosts, size, start, rounds, prios[0], &mut r).map_err(gen_err)?;
            generators::draw_prios(&mut flows, &prios, &mut r);
            out.add((&w.name, span), flows, app);
        }
        "permutation" | "all-to-all" => {
            let size = t.req(cx, "size")?.positive_bytes(cx)?;
            let start = opt_time(cx, &mut t, "start", Time::ZERO)?;
            let prios = prio_classes(cx, &mut t, lossless)?;
            let hf = t.get(cx, "hosts");
            let hosts = host_list(cx, hf.as_ref(), topo, &w.name)?;
            let mut r = rng(&mut t)?;
            let mut flows = if kind == "permutation" {
                generators::permutation(&hosts, size, start, prios[0], &mut r).map_err(gen_err)?
            } else {
                let n = hosts.len() as u64;
                let total = n.saturating_mul(n.saturating_sub(1));
                if total > out.room() as u64 {
                    return Err(w.err(cx, too_many(total)));
                }
                generators::all_to_all(&hosts, size, start, prios[0]).map_err(gen_err)?
            };
            generators::draw_prios(&mut flows, &prios, &mut r);
            out.add((&w.name, span), flows, app);
        }
        "flow-file" => {
            let ff = t.req(cx, "file")?;
            let (path, shown, text) = read_referenced(cx, &ff, crate::input::MAX_FLOW_FILE_BYTES)?;
            let flows = crate::workload::hpcc::parse(&text, &shown)
                .map_err(|e| located(cx, &ff, &path, e))?;
            if let Some((line, reason)) = flow_file_node_error(&text, topo) {
                return Err(cx.file_err(&ff.name, ff.span(), path, line, reason));
            }
            if flows.len() > out.room() {
                return Err(ff.err(cx, too_many(flows.len())));
            }
            out.add((&ff.name, ff.span()), flows, app);
        }
        "htsim-cm" => {
            let ff = t.req(cx, "file")?;
            let (path, shown, text) = read_referenced(cx, &ff, crate::input::MAX_FLOW_FILE_BYTES)?;
            let matrix = crate::workload::htsim_cm::parse(&text, &shown)
                .map_err(|e| located(cx, &ff, &path, e))?;
            let hosts = topo.hosts();
            if matrix.nodes as usize > hosts.len() {
                return Err(cx.file_err(
                    &ff.name,
                    ff.span(),
                    path,
                    0,
                    format!(
                        "the matrix has {} nodes, the topology {} hosts (htsim's node i is \
                         the topology's i-th host)",
                        matrix.nodes,
                        hosts.len()
                    ),
                ));
            }
            if matrix.connections.len() > out.room() {
                return Err(ff.err(cx, too_many(matrix.connections.len())));
            }
            let prios = prio_classes(cx, &mut t, lossless)?;
            let mut flows: Vec<FlowSpec> = matrix
                .connections
                .iter()
                .enumerate()
                .map(|(k, c)| FlowSpec {
                    // Checked by the parser: below `nodes`, which is at most the hosts.
                    src: hosts[c.src as usize],
                    dst: hosts[c.dst as usize],
                    prio: prios[0],
                    size: c.size,
                    start: c.start,
                    dport: default_dport(k),
                })
                .collect();
            generators::draw_prios(&mut flows, &prios, &mut rng(&mut t)?);
            out.add((&ff.name, ff.span()), flows, app);
        }
        _ => {
            // "flows": the only kind of WORKLOAD_KINDS left.
            let lf = t.req(cx, "flow")?;
            let items = lf.array(cx)?;
            if items.len() > out.room() {
                return Err(lf.err(cx, too_many(items.len())));
            }
            let mut r = rng(&mut t)?;
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
                let prios = prio_classes(cx, &mut ft, lossless)?;
                let dport = match ft.get(cx, "dport") {
                    // 0..=65535 fits in u16.
                    Some(p) => p.uint(cx, 0, u64::from(u16::MAX))? as u16,
                    None => default_dport(k),
                };
                let span = ef.span();
                let mut flow = [FlowSpec {
                    src,
                    dst,
                    prio: prios[0],
                    size,
                    start,
                    dport,
                }];
                generators::draw_prios(&mut flow, &prios, &mut r);
                out.add((&ef.name, span), flow.to_vec(), app);
            }
        }
    }
    Ok(())
}

/// Error `e` of the file at `path` that field `f` names, at the file's line (0: the whole
/// file).
fn located(cx: &Cx, f: &Fld, path: &std::path::Path, e: WorkloadError) -> super::ScenarioError {
    match e {
        WorkloadError::File { line, reason, .. } => {
            cx.file_err(&f.name, f.span(), path.to_path_buf(), line, reason)
        }
        other => cx.file_err(&f.name, f.span(), path.to_path_buf(), 0, other.to_string()),
    }
}

/// The destination port of the `k`-th flow of a `flows` workload without a `dport`:
/// the generators' convention (`FIRST_DPORT + k`, cycling).
fn default_dport(k: usize) -> u16 {
    let off = (k % generators::DPORT_COUNT as usize) as u32;
    // FIRST_DPORT + off <= u16::MAX by the definition of DPORT_COUNT.
    u16::try_from(u32::from(generators::FIRST_DPORT) + off).unwrap_or(u16::MAX)
}

/// The `load` key: a share of capacity in `(0, 1]`.
fn load(cx: &Cx, t: &mut Tbl) -> Res<f64> {
    let f = t.req(cx, "load")?;
    let load = f.float(cx)?;
    if !(load > 0.0 && load <= 1.0) {
        return Err(f.err(cx, format!("must be in (0, 1], found {load}")));
    }
    Ok(load)
}

/// The `prio` key: one class (default [`DEFAULT_PRIO`]) or a list of distinct lossless
/// classes, each flow's drawn uniformly from it; never empty.
fn prio_classes(cx: &Cx, t: &mut Tbl, lossless: u8) -> Res<Vec<u8>> {
    let Some(f) = t.get(cx, "prio") else {
        return Ok(vec![DEFAULT_PRIO]);
    };
    if !matches!(f.node.v, V::Array(_)) {
        return Ok(vec![f.prio(cx)?]);
    }
    let items = f.array(cx)?;
    if items.is_empty() {
        return Err(f.err(cx, "an empty list has no class to draw flows' classes from"));
    }
    let mut prios = Vec::with_capacity(items.len());
    for (i, node) in items.iter().enumerate() {
        let e = f.elem(i, node);
        let p = e.prio(cx)?;
        if prios.contains(&p) {
            return Err(e.err(cx, format!("priority {p} is listed twice")));
        }
        if lossless & (1 << p) == 0 {
            let classes: Vec<String> = (0..8u8)
                .filter(|c| lossless & (1 << c) != 0)
                .map(|c| c.to_string())
                .collect();
            return Err(e.err(
                cx,
                format!(
                    "class {p} is not lossless (`[switch] lossless` is [{}]); a list spreads \
                     flows over lossless classes",
                    classes.join(", ")
                ),
            ));
        }
        prios.push(p);
    }
    Ok(prios)
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
            let (path, shown, text) = read_referenced(cx, &f, crate::input::MAX_TEXT_BYTES)?;
            SizeCdf::parse(&text, &shown).map_err(|e| located(cx, &f, &path, e))
        }
    }
}

/// A `repeat = { count, interval }` table of a workload of `kind` that makes `per_count`
/// flows each time, where `room` more flows fit: (interval, count).
fn repeat(cx: &Cx, f: &Fld, kind: &str, per_count: u64, room: usize) -> Res<(Time, u32)> {
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
                format!("a repeated {kind} needs an `interval`"),
            ))
        }
        None => Time::ZERO,
    };
    let total = count.saturating_mul(per_count);
    if total > room as u64 {
        return Err(cf.err(cx, too_many(total)));
    }
    // count <= u32::MAX.
    Ok((interval, count as u32))
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

/// `hosts = "all"` (the default), a list of host ids, or every `every`-th host from
/// `offset` on (`{ every, offset, invert }`, counting the topology's hosts in id order;
/// `invert` takes the others instead).
fn host_list(cx: &Cx, f: Option<&Fld>, topo: &Topology, owner: &str) -> Res<Vec<NodeId>> {
    let hosts = match f {
        None => topo.hosts(),
        Some(f) => match &f.node.v {
            V::Array(_) => host_ids(cx, f, topo)?,
            _ => host_stride(cx, f, topo)?,
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

/// Every `every`-th host from `offset` on (`{ every, offset, invert }`, counting the
/// topology's hosts in id order; `invert` takes the others instead), or `"all"`.
fn host_stride(cx: &Cx, f: &Fld, topo: &Topology) -> Res<Vec<NodeId>> {
    match &f.node.v {
        V::Str(s) if s == "all" => Ok(topo.hosts()),
        V::Table(_) => {
            let mut t = f.table(cx)?;
            t.check_keys(cx, &["every", "offset", "invert"])?;
            let every = t.req(cx, "every")?.uint(cx, 1, u64::from(u32::MAX))?;
            let offset = match t.get(cx, "offset") {
                Some(o) => o.uint(cx, 0, every - 1)?,
                None => 0,
            };
            let invert = match t.get(cx, "invert") {
                Some(i) => i.boolean(cx)?,
                None => false,
            };
            Ok(topo
                .hosts()
                .into_iter()
                .enumerate()
                .filter(|(i, _)| (*i as u64 % every == offset) != invert)
                .map(|(_, h)| h)
                .collect())
        }
        _ => Err(f.wrong(
            cx,
            "\"all\", a list of host ids or { every = N, offset = K, invert = bool }",
        )),
    }
}

/// The NIC rate shared by all `hosts` (a Poisson workload offers load relative to it).
fn common_rate(cx: &Cx, f: Option<&Fld>, w: &Fld, hosts: &[NodeId], topo: &Topology) -> Res<Rate> {
    // Each host's first link in link order, from one pass over the links (a search of the
    // links per host was hosts x links: 2^26 steps for k = 32's 8,192 hosts).
    let adjacency = crate::routing::adjacency(topo);
    let rate_of = |h: NodeId| {
        adjacency
            .get(h.index())
            .and_then(|links| links.first())
            .map(|&(_, link)| topo.links[link].rate)
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
