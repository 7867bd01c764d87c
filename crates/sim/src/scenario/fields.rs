//! The spanned TOML tree of a scenario and typed access to it with dotted field paths.
//!
//! [`table_entries`] turns a `toml_edit` document into [`Node`]s that keep their byte
//! spans; [`Tbl`] and [`Fld`] read them as tables and values, each knowing its dotted path
//! (`switch.pfc.quanta`, `workload[1].receiver`).
//!
//! Invariants:
//! - Every error built here is a [`ScenarioError::Invalid`] carrying the scenario's path and
//!   text, the field's dotted path, and the span of the offending key or value cut to its
//!   first line (a table's span covers its whole body).
//! - [`Tbl::get`] records the span of every field read in [`Cx::spans`], so that errors found
//!   later (by `SimConfig::validate`) can point at the key that caused them.
//! - Quantities with units are strings; a bare number where a unit is needed is an error
//!   that shows the value with a unit to write instead.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::{FileLocation, InvalidScenario, ScenarioError, TableKeys};
use crate::topology::{NodeId, NodeKind, Topology};
use headroom_mech::units::{parse_bytes, parse_rate, parse_time, Rate, Time, UnitError};

/// A TOML value with its byte span (implicit tables have none; they take their key's).
#[derive(Debug)]
pub(super) struct Node {
    pub(super) span: Option<Range<usize>>,
    pub(super) v: V,
}

/// A TOML value, as far as scenarios distinguish them.
#[derive(Debug)]
pub(super) enum V {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime,
    Array(Vec<Node>),
    Table(Vec<Entry>),
}

impl V {
    pub(super) fn describe(&self) -> &'static str {
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

/// A key of a table with its span and value.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) key: String,
    pub(super) key_span: Option<Range<usize>>,
    pub(super) node: Node,
}

/// The entries of a `toml_edit` table, in document order.
pub(super) fn table_entries(t: &toml_edit::Table) -> Vec<Entry> {
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

/// What every reader returns.
pub(super) type Res<T> = Result<T, ScenarioError>;

/// The scenario being parsed: where errors point and relative files resolve.
pub(super) struct Cx<'t> {
    pub(super) path: &'t Path,
    pub(super) text: &'t str,
    pub(super) dir: PathBuf,
    /// Spans of every field read, by dotted path (to place errors of `SimConfig::validate`).
    pub(super) spans: RefCell<BTreeMap<String, Range<usize>>>,
    /// When asked for (by `accepted_keys`): the keys each table accepted and was given, by
    /// [`schema_path`] and variant.
    pub(super) keys: Option<RefCell<BTreeMap<(String, String), TableKeys>>>,
    /// When asked for (by [`Cx::recording_files`]): every file reference read, in order.
    pub(super) files: Option<RefCell<Vec<FileReference>>>,
}

/// A field that names a file, as read.
pub(super) struct FileReference {
    /// The span of the field's value (the string literal, quotes included).
    pub(super) span: Range<usize>,
    /// The path it resolved to.
    pub(super) resolved: PathBuf,
}

impl<'t> Cx<'t> {
    /// The context of parsing `text`, read from `path`; `record_keys` turns on
    /// [`Cx::keys`].
    pub(super) fn new(text: &'t str, path: &'t Path, record_keys: bool) -> Self {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Cx {
            path,
            text,
            dir,
            spans: RefCell::new(BTreeMap::new()),
            keys: record_keys.then(|| RefCell::new(BTreeMap::new())),
            files: None,
        }
    }

    /// This context, recording every file reference read into [`Cx::files`].
    pub(super) fn recording_files(self) -> Self {
        Cx {
            files: Some(RefCell::new(Vec::new())),
            ..self
        }
    }

    pub(super) fn err(
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

    pub(super) fn file_err(
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

    pub(super) fn resolve(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.dir.join(p)
        }
    }
}

pub(super) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// `span` cut at the end of its first line: a table's span covers its whole body, and an
/// error about a table (or any multi-line value) points at its first line.
pub(super) fn first_line(text: &str, span: Range<usize>) -> Range<usize> {
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
pub(super) struct Tbl<'a> {
    pub(super) name: String,
    pub(super) span: Option<Range<usize>>,
    pub(super) entries: &'a [Entry],
}

impl<'a> Tbl<'a> {
    pub(super) fn get(&mut self, cx: &Cx, key: &str) -> Option<Fld<'a>> {
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

    pub(super) fn req(&mut self, cx: &Cx, key: &str) -> Res<Fld<'a>> {
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

    pub(super) fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|e| e.key == key)
    }

    /// Rejects keys not in `known`, naming the first one in document order.
    pub(super) fn check_keys(&self, cx: &Cx, known: &[&str]) -> Res<()> {
        self.check_keys_with(cx, known, "")
    }

    /// [`Tbl::check_keys`] for a table whose keys depend on a `variant` (`kind = "star"`),
    /// which the error names. Every call that passes is recorded when `cx` records keys.
    pub(super) fn check_keys_with(&self, cx: &Cx, known: &[&str], variant: &str) -> Res<()> {
        let context = if variant.is_empty() {
            String::new()
        } else {
            format!(" for {variant}")
        };
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
        if let Some(keys) = &cx.keys {
            let mut keys = keys.borrow_mut();
            let rec = keys
                .entry((schema_path(&self.name), variant.to_string()))
                .or_default();
            rec.accepted.extend(known.iter().map(|k| k.to_string()));
            rec.written
                .extend(self.entries.iter().map(|e| e.key.clone()));
        }
        Ok(())
    }
}

/// A table's dotted path as the reference documents it: without array indices
/// (`workload[2].flow[0]` → `workload.flow`) and with queue numbers as `N`
/// (`switch.ecn.queue.3` → `switch.ecn.queue.N`).
fn schema_path(name: &str) -> String {
    name.split('.')
        .map(|seg| {
            let seg = seg.split('[').next().unwrap_or(seg);
            if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
                "N"
            } else {
                seg
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// One value being read, with its dotted path.
pub(super) struct Fld<'a> {
    pub(super) name: String,
    pub(super) node: &'a Node,
}

/// Which unit quantity a string holds.
#[derive(Clone, Copy)]
pub(super) enum Quantity {
    Rate,
    Time,
    Bytes,
}

impl Quantity {
    pub(super) fn unit(self) -> &'static str {
        match self {
            Quantity::Rate => "Gbps",
            Quantity::Time => "us",
            Quantity::Bytes => "B",
        }
    }
    pub(super) fn what(self) -> &'static str {
        match self {
            Quantity::Rate => "rate",
            Quantity::Time => "duration",
            Quantity::Bytes => "size",
        }
    }
}

pub(super) fn unit_reason(e: UnitError, q: Quantity) -> String {
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
    pub(super) fn span(&self) -> Option<Range<usize>> {
        self.node.span.clone()
    }

    pub(super) fn err(&self, cx: &Cx, reason: impl Into<String>) -> ScenarioError {
        cx.err(&self.name, self.span(), reason)
    }

    pub(super) fn elem(&self, i: usize, node: &'a Node) -> Fld<'a> {
        Fld {
            name: format!("{}[{i}]", self.name),
            node,
        }
    }

    pub(super) fn wrong(&self, cx: &Cx, expected: &str) -> ScenarioError {
        self.err(
            cx,
            format!("expected {expected}, found {}", self.node.v.describe()),
        )
    }

    pub(super) fn str(&self, cx: &Cx) -> Res<&'a str> {
        match &self.node.v {
            V::Str(s) => Ok(s),
            _ => Err(self.wrong(cx, "a string")),
        }
    }

    /// A string naming one of `options`: the value it names, or an error that lists the
    /// names ("unknown `what` `x` (expected a, b or c)").
    pub(super) fn choice<T: Clone>(&self, cx: &Cx, what: &str, options: &[(&str, T)]) -> Res<T> {
        let s = self.str(cx)?;
        if let Some((_, v)) = options.iter().find(|(name, _)| *name == s) {
            return Ok(v.clone());
        }
        let names: Vec<&str> = options.iter().map(|(name, _)| *name).collect();
        let expected = match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        Err(self.err(cx, format!("unknown {what} `{s}` (expected {expected})")))
    }

    pub(super) fn int(&self, cx: &Cx) -> Res<i64> {
        match &self.node.v {
            V::Int(i) => Ok(*i),
            _ => Err(self.wrong(cx, "an integer")),
        }
    }

    /// An integer in `lo..=hi`.
    pub(super) fn uint(&self, cx: &Cx, lo: u64, hi: u64) -> Res<u64> {
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

    pub(super) fn float(&self, cx: &Cx) -> Res<f64> {
        match &self.node.v {
            V::Float(x) if x.is_finite() => Ok(*x),
            V::Float(x) => Err(self.err(cx, format!("must be a finite number, found {x}"))),
            V::Int(i) => Ok(*i as f64),
            _ => Err(self.wrong(cx, "a number")),
        }
    }

    pub(super) fn boolean(&self, cx: &Cx) -> Res<bool> {
        match &self.node.v {
            V::Bool(b) => Ok(*b),
            _ => Err(self.wrong(cx, "true or false")),
        }
    }

    pub(super) fn quantity_str(&self, cx: &Cx, q: Quantity) -> Res<&'a str> {
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

    pub(super) fn rate(&self, cx: &Cx) -> Res<Rate> {
        let s = self.quantity_str(cx, Quantity::Rate)?;
        parse_rate(s).map_err(|e| self.err(cx, unit_reason(e, Quantity::Rate)))
    }

    pub(super) fn positive_rate(&self, cx: &Cx) -> Res<Rate> {
        let r = self.rate(cx)?;
        if r.bps() == 0 {
            return Err(self.err(cx, "must be greater than zero"));
        }
        Ok(r)
    }

    pub(super) fn time(&self, cx: &Cx) -> Res<Time> {
        let s = self.quantity_str(cx, Quantity::Time)?;
        parse_time(s).map_err(|e| self.err(cx, unit_reason(e, Quantity::Time)))
    }

    pub(super) fn positive_time(&self, cx: &Cx) -> Res<Time> {
        let t = self.time(cx)?;
        if t == Time::ZERO {
            return Err(self.err(cx, "must be greater than zero"));
        }
        Ok(t)
    }

    pub(super) fn bytes(&self, cx: &Cx) -> Res<u64> {
        let s = self.quantity_str(cx, Quantity::Bytes)?;
        parse_bytes(s)
            .map(|b| b.0)
            .map_err(|e| self.err(cx, unit_reason(e, Quantity::Bytes)))
    }

    pub(super) fn positive_bytes(&self, cx: &Cx) -> Res<u64> {
        let b = self.bytes(cx)?;
        if b == 0 {
            return Err(self.err(cx, "must be greater than zero"));
        }
        Ok(b)
    }

    pub(super) fn table(&self, cx: &Cx) -> Res<Tbl<'a>> {
        match &self.node.v {
            V::Table(entries) => Ok(Tbl {
                name: self.name.clone(),
                span: self.span(),
                entries,
            }),
            _ => Err(self.wrong(cx, "a table")),
        }
    }

    pub(super) fn array(&self, cx: &Cx) -> Res<&'a [Node]> {
        match &self.node.v {
            V::Array(items) => Ok(items),
            _ => Err(self.wrong(cx, "an array")),
        }
    }

    /// A priority 0..8.
    pub(super) fn prio(&self, cx: &Cx) -> Res<u8> {
        Ok(self.uint(cx, 0, 7)? as u8)
    }

    /// A list of distinct priorities, as a bit mask.
    pub(super) fn prio_mask(&self, cx: &Cx) -> Res<u8> {
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
    pub(super) fn host(&self, cx: &Cx, topo: &Topology) -> Res<NodeId> {
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

pub(super) fn opt_time(cx: &Cx, t: &mut Tbl, key: &str, default: Time) -> Res<Time> {
    t.get(cx, key).map_or(Ok(default), |f| f.time(cx))
}

/// Reads the file a field names (relative to the scenario's directory), at most `limit`
/// bytes (`crate::input`'s bound for its kind): its resolved path, the path as shown in
/// messages, and its text; an unreadable file is an error at the field.
pub(super) fn read_referenced(cx: &Cx, f: &Fld, limit: u64) -> Res<(PathBuf, String, String)> {
    let path = cx.resolve(f.str(cx)?);
    if let (Some(files), Some(span)) = (&cx.files, f.span()) {
        files.borrow_mut().push(FileReference {
            span,
            resolved: path.clone(),
        });
    }
    let shown = path.display().to_string();
    let text = crate::input::read_text(&path, limit).map_err(|e| {
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
