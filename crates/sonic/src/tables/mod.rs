//! Typed model of the SONiC tables the dynamic buffer manager reads and writes.
//!
//! - [`raw`]: untyped tables (`table → key → field → value`) and the JSON shapes they come in.
//! - [`config`]: CONFIG_DB inputs (`PORT`, `CABLE_LENGTH`, `BUFFER_*`,
//!   `DEFAULT_LOSSLESS_BUFFER_PARAMETER`, `LOSSLESS_TRAFFIC_PATTERN`, `DEVICE_METADATA`).
//! - [`state`]: STATE_DB inputs (`ASIC_TABLE`, `PERIPHERAL_TABLE`, `PORT_PERIPHERAL_TABLE`,
//!   `BUFFER_MAX_PARAM_TABLE`, `PORT_TABLE`) and the real ASIC parameters per generation.
//! - [`appl`]: APPL_DB (`BUFFER_*_TABLE`), the output of buffermgrd and an input of the pool
//!   and check algorithms, including not-yet-consumed producer state.
//!
//! Invariants of every typed view:
//! - Values are parsed from SONiC's own string encodings; a value that SONiC would
//!   misinterpret (`"40"` as a cable length, `"3-"` as a PG range, a profile naming no
//!   profile) is an error naming the database table, object key, field and reason.
//! - Unknown fields and unknown tables are ignored, as SONiC ignores them.
//! - All maps are `BTreeMap`s: iteration, and everything computed from it, is deterministic.
//!   Where SONiC takes "the first key returned by `KEYS`" (arbitrary order), the typed view
//!   takes the smallest key.

pub mod appl;
pub mod config;
pub mod raw;
pub mod state;

use std::fmt;

pub use raw::{Fields, RawDb, RawError, RawTable};

/// Why a table entry could not be read. Every variant names the table, the object key and,
/// where one is at fault, the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TableError {
    /// A field the entry cannot do without is absent.
    #[error("{table}|{key}: field `{field}` is missing")]
    MissingField {
        /// Table name, e.g. `BUFFER_POOL`.
        table: String,
        /// Object key, e.g. `ingress_lossless_pool`.
        key: String,
        /// The missing field.
        field: String,
    },
    /// A numeric field does not hold a number of the expected kind (e.g. a non-numeric
    /// `PORT.speed`).
    #[error("{table}|{key}: field `{field}` = {value:?} is not {expected}")]
    BadNumber {
        /// Table name.
        table: String,
        /// Object key.
        key: String,
        /// The field.
        field: String,
        /// The value found.
        value: String,
        /// What was expected, e.g. `a positive integer (Mb/s)`.
        expected: &'static str,
    },
    /// A field holds a word outside its set (e.g. `BUFFER_POOL.type = ingres`).
    #[error("{table}|{key}: field `{field}` = {value:?} is not one of {allowed}")]
    BadEnum {
        /// Table name.
        table: String,
        /// Object key.
        key: String,
        /// The field.
        field: String,
        /// The value found.
        value: String,
        /// The accepted words, e.g. `ingress, egress, both`.
        allowed: &'static str,
    },
    /// A priority-group or queue id range in a key is malformed (`3-`, `-3`, `4-3`, `x`).
    #[error("{table}|{key}: id range {range:?} is malformed: {reason}")]
    BadIdRange {
        /// Table name (`BUFFER_PG`, `BUFFER_QUEUE`, …).
        table: String,
        /// Object key, e.g. `Ethernet0|3-`.
        key: String,
        /// The range text.
        range: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An object key does not have the expected shape (e.g. a `BUFFER_PG` key without `|`).
    #[error("{table}|{key}: malformed key: {reason}")]
    BadKey {
        /// Table name.
        table: String,
        /// Object key.
        key: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A cable length without its unit (`"40"` instead of `"40m"`). SONiC drops the last
    /// character unconditionally, so `"40"` would silently mean 4 m.
    #[error("{table}|{key}: cable length of `{field}` = {value:?} has no unit (write e.g. \"{value}m\")")]
    CableWithoutUnit {
        /// Table name (`CABLE_LENGTH`).
        table: String,
        /// Object key (e.g. `AZURE`).
        key: String,
        /// The field (the port name).
        field: String,
        /// The value found.
        value: String,
    },
    /// A cable length whose number is malformed (`"m"`, `"x5m"`, `"-5m"`, `"5km"`).
    #[error("{table}|{key}: cable length of `{field}` = {value:?} is not <metres>m (e.g. \"40m\", \"2.5m\")")]
    BadCableLength {
        /// Table name (`CABLE_LENGTH`).
        table: String,
        /// Object key.
        key: String,
        /// The field (the port name).
        field: String,
        /// The value found.
        value: String,
    },
    /// A profile reference names no profile of the table it must come from.
    #[error("{table}|{key}: field `{field}` refers to unknown profile {profile:?}")]
    UnknownProfile {
        /// Table holding the reference (`BUFFER_PG`, `BUFFER_QUEUE`, profile lists).
        table: String,
        /// Object key.
        key: String,
        /// The field (`profile`, `profile_list`).
        field: String,
        /// The profile name that was not found.
        profile: String,
    },
    /// A pool reference names no pool.
    #[error("{table}|{key}: field `{field}` refers to unknown pool {pool:?}")]
    UnknownPool {
        /// Table holding the reference (`BUFFER_PROFILE`).
        table: String,
        /// Object key.
        key: String,
        /// The field (`pool`).
        field: String,
        /// The pool name that was not found.
        pool: String,
    },
    /// A profile is used in the wrong direction (an egress profile on a PG, an ingress one on
    /// a queue or in the egress profile list).
    #[error("{table}|{key}: profile {profile:?} is an {actual} profile, expected {expected}")]
    WrongDirection {
        /// Table holding the reference.
        table: String,
        /// Object key.
        key: String,
        /// The profile.
        profile: String,
        /// The profile's direction (`ingress`/`egress`).
        actual: &'static str,
        /// The direction the table needs.
        expected: &'static str,
    },
    /// A well-formed value outside what SONiC accepts (see [`crate::validate`]): a PG id
    /// beyond the port's priority groups, a cable longer than 100 km, an MTU above 9216.
    #[error("{table}|{key}: {what} is out of range: {allowed}")]
    OutOfRange {
        /// Table name.
        table: String,
        /// Object key.
        key: String,
        /// The value and where it sits, e.g. ``field `mtu` = "65535"`` or `PG 10-11`.
        what: String,
        /// The accepted range and where it comes from.
        allowed: String,
    },
    /// Two fields contradict each other (e.g. both `dynamic_th` and `static_th`, or a
    /// threshold kind that does not match the pool's mode).
    #[error("{table}|{key}: {reason}")]
    Inconsistent {
        /// Table name.
        table: String,
        /// Object key.
        key: String,
        /// The contradiction.
        reason: String,
    },
}

/// All the errors found while reading one database (in table/key order).
#[derive(Debug, Clone, PartialEq)]
pub struct TableErrors(pub Vec<TableError>);

impl TableErrors {
    /// The individual errors.
    pub fn errors(&self) -> &[TableError] {
        &self.0
    }
}

impl fmt::Display for TableErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                write!(f, "{} table errors:", many.len())?;
                for e in many {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for TableErrors {}

/// A missing or ambiguous entry that a computation needs (as opposed to a malformed one).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LookupError {
    /// STATE_DB has no `ASIC_TABLE` entry.
    #[error("STATE_DB ASIC_TABLE has no entry (buffermgrd's -a asic_table.json)")]
    NoAsic,
    /// STATE_DB has more than one `ASIC_TABLE` entry (SONiC would take an arbitrary one).
    #[error("STATE_DB ASIC_TABLE has {0} entries, exactly one is expected")]
    ManyAsics(usize),
    /// CONFIG_DB has no `LOSSLESS_TRAFFIC_PATTERN` entry.
    #[error("CONFIG_DB LOSSLESS_TRAFFIC_PATTERN has no entry")]
    NoTrafficPattern,
    /// A port is not in CONFIG_DB `PORT`.
    #[error("CONFIG_DB PORT|{0} does not exist")]
    NoPort(String),
    /// A port has no usable speed (no `speed`, or autoneg without advertised/supported speeds).
    #[error("PORT|{0} has no effective speed")]
    NoSpeed(String),
    /// A port has no cable length in CONFIG_DB `CABLE_LENGTH`.
    #[error("CABLE_LENGTH has no length for port {0}")]
    NoCableLength(String),
    /// Neither STATE_DB `BUFFER_MAX_PARAM_TABLE|global.mmu_size` nor CONFIG_DB
    /// `BUFFER_POOL|egress_lossless_pool.size` gives the buffer size.
    #[error("no MMU size: STATE_DB BUFFER_MAX_PARAM_TABLE|global.mmu_size and CONFIG_DB BUFFER_POOL|egress_lossless_pool.size are both absent")]
    NoMmuSize,
}

/// A range of priority-group or queue ids, as written in keys: `3` or `3-4`.
///
/// Invariant: `lo <= hi`. `single` records whether it was written as one number, so that
/// `Display` reproduces the original key text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IdRange {
    lo: u16,
    hi: u16,
    single: bool,
}

impl IdRange {
    /// The range `lo..=hi` (written `lo-hi`, or `lo` when equal and `single`).
    pub fn new(lo: u16, hi: u16) -> Option<IdRange> {
        (lo <= hi).then_some(IdRange {
            lo,
            hi,
            single: false,
        })
    }

    /// A single id, written as one number.
    pub fn single(id: u16) -> IdRange {
        IdRange {
            lo: id,
            hi: id,
            single: true,
        }
    }

    /// Parses `a` or `a-b` (decimal, `a <= b`); the error is the reason.
    pub fn parse(s: &str) -> Result<IdRange, &'static str> {
        fn num(t: &str) -> Result<u16, &'static str> {
            if t.is_empty() {
                return Err("a bound is missing (write `a` or `a-b`)");
            }
            if !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err("bounds must be decimal numbers");
            }
            t.parse::<u16>().map_err(|_| "bound is too large")
        }
        match s.split_once('-') {
            None => Ok(IdRange::single(num(s)?)),
            Some((a, b)) => {
                if b.contains('-') {
                    return Err("more than one `-`");
                }
                let (lo, hi) = (num(a)?, num(b)?);
                IdRange::new(lo, hi).ok_or("lower bound is above upper bound")
            }
        }
    }

    /// First id.
    pub fn lo(self) -> u16 {
        self.lo
    }

    /// Last id.
    pub fn hi(self) -> u16 {
        self.hi
    }

    /// Number of ids in the range (always ≥ 1; SONiC's check plugin miscounts two-digit
    /// ranges, this does not).
    pub fn count(self) -> u64 {
        u64::from(self.hi - self.lo) + 1
    }

    /// Whether `id` is in the range.
    pub fn contains(self, id: u16) -> bool {
        (self.lo..=self.hi).contains(&id)
    }

    /// Whether the two ranges share an id.
    pub fn overlaps(self, other: IdRange) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }
}

impl fmt::Display for IdRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.single && self.lo == self.hi {
            write!(f, "{}", self.lo)
        } else {
            write!(f, "{}-{}", self.lo, self.hi)
        }
    }
}

/// A (port, id range) object key of `BUFFER_PG` / `BUFFER_QUEUE`: `Ethernet0|3-4` in
/// CONFIG_DB, `Ethernet0:3-4` in APPL_DB. Multi-port CONFIG_DB keys (`Ethernet0,Ethernet4|3-4`)
/// are split into one `PortIds` per port, as buffermgrd does.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PortIds {
    /// Port name.
    pub port: String,
    /// Id range.
    pub ids: IdRange,
}

impl PortIds {
    /// `port` + `ids`.
    pub fn new(port: impl Into<String>, ids: IdRange) -> PortIds {
        PortIds {
            port: port.into(),
            ids,
        }
    }

    /// The key text with the given separator (`|` for CONFIG_DB, `:` for APPL_DB).
    pub fn key(&self, sep: char) -> String {
        format!("{}{sep}{}", self.port, self.ids)
    }
}

/// Parses `<port>[,<port>…]<sep><ids>` into one [`PortIds`] per port.
pub(crate) fn parse_port_ids(
    table: &str,
    key: &str,
    sep: char,
) -> Result<Vec<PortIds>, TableError> {
    let (ports, ids) = key.rsplit_once(sep).ok_or_else(|| TableError::BadKey {
        table: table.to_string(),
        key: key.to_string(),
        reason: "expected <port><separator><ids>",
    })?;
    let range = IdRange::parse(ids).map_err(|reason| TableError::BadIdRange {
        table: table.to_string(),
        key: key.to_string(),
        range: ids.to_string(),
        reason,
    })?;
    let mut out = Vec::new();
    for p in ports.split(',') {
        let p = p.trim();
        if p.is_empty() {
            return Err(TableError::BadKey {
                table: table.to_string(),
                key: key.to_string(),
                reason: "empty port name",
            });
        }
        out.push(PortIds::new(p, range));
    }
    Ok(out)
}

/// Direction of a buffer pool / profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// Ingress (priority groups).
    Ingress,
    /// Egress (queues).
    Egress,
}

impl Direction {
    /// `ingress` / `egress`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Ingress => "ingress",
            Direction::Egress => "egress",
        }
    }
}

/// `BUFFER_POOL.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PoolType {
    /// `ingress`.
    Ingress,
    /// `egress`.
    Egress,
    /// `both` (accepted by orchagent; ignored by the pool algorithm).
    Both,
}

impl PoolType {
    /// The SONiC word.
    pub fn as_str(self) -> &'static str {
        match self {
            PoolType::Ingress => "ingress",
            PoolType::Egress => "egress",
            PoolType::Both => "both",
        }
    }

    /// The profile direction a pool of this type gives (`both` counts as ingress, as
    /// buffermgrd only tests for `egress`).
    pub fn direction(self) -> Direction {
        match self {
            PoolType::Egress => Direction::Egress,
            PoolType::Ingress | PoolType::Both => Direction::Ingress,
        }
    }
}

/// `BUFFER_POOL.mode`: the threshold mode of profiles on the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PoolMode {
    /// `static`: profiles use `static_th` (bytes).
    Static,
    /// `dynamic`: profiles use `dynamic_th` (alpha = 2^dynamic_th).
    Dynamic,
}

impl PoolMode {
    /// The SONiC word.
    pub fn as_str(self) -> &'static str {
        match self {
            PoolMode::Static => "static",
            PoolMode::Dynamic => "dynamic",
        }
    }
}

/// A profile's shared-buffer threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Threshold {
    /// `dynamic_th`: alpha = 2^n (SONiC uses -8 for zero profiles and up to 7).
    Dynamic(i8),
    /// `static_th`: a byte limit.
    Static(u64),
}

impl Threshold {
    /// The field name (`dynamic_th` / `static_th`).
    pub fn field(self) -> &'static str {
        match self {
            Threshold::Dynamic(_) => "dynamic_th",
            Threshold::Static(_) => "static_th",
        }
    }

    /// The field value as SONiC writes it.
    pub fn value(self) -> String {
        match self {
            Threshold::Dynamic(n) => n.to_string(),
            Threshold::Static(n) => n.to_string(),
        }
    }

    /// The pool mode this threshold belongs to.
    pub fn mode(self) -> PoolMode {
        match self {
            Threshold::Dynamic(_) => PoolMode::Dynamic,
            Threshold::Static(_) => PoolMode::Static,
        }
    }

    /// Alpha of a `dynamic_th` within the range the simulator's [`headroom_mech::buffer::Alpha`]
    /// accepts (-7..=3); `None` for static thresholds and out-of-range exponents.
    pub fn alpha(self) -> Option<headroom_mech::buffer::Alpha> {
        match self {
            Threshold::Dynamic(n) => {
                headroom_mech::buffer::Alpha::from_dynamic_th(i32::from(n)).ok()
            }
            Threshold::Static(_) => None,
        }
    }
}

/// A cable length as configured (`"40m"`, `"2.5m"`).
///
/// Invariant: `text` ends in `m` and `metres` is the finite, non-negative number before it.
/// The text is kept verbatim because SONiC uses it in profile names.
#[derive(Clone, Debug, PartialEq)]
pub struct CableLength {
    text: String,
    metres: f64,
}

impl CableLength {
    /// Parses `<number>m`. Errors: `Err(true)` if the unit is missing, `Err(false)` if the
    /// number is malformed.
    pub fn parse(s: &str) -> Result<CableLength, bool> {
        let Some(num) = s.strip_suffix('m') else {
            // "40" (a plain number) lacks the unit; anything else is just malformed.
            return Err(!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
        };
        let ok = !num.is_empty()
            && num.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && num.bytes().filter(|b| *b == b'.').count() <= 1
            && num.bytes().any(|b| b.is_ascii_digit());
        let metres = if ok { num.parse::<f64>().ok() } else { None };
        match metres {
            Some(m) if m.is_finite() && m >= 0.0 => Ok(CableLength {
                text: s.to_string(),
                metres: m,
            }),
            _ => Err(false),
        }
    }

    /// A length of `metres` written as `"<metres>m"` (integral metres without a fraction).
    pub fn from_metres(metres: f64) -> Option<CableLength> {
        CableLength::parse(&format!("{}m", crate::lua::format_number(metres))).ok()
    }

    /// The configured text, e.g. `"40m"`.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Metres.
    pub fn metres(&self) -> f64 {
        self.metres
    }

    /// Whether this is SONiC's "no lossless traffic" length `0m`.
    pub fn is_zero(&self) -> bool {
        self.metres == 0.0
    }
}

impl fmt::Display for CableLength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Field access with errors that name table, key and field.
pub(crate) struct Entry<'a> {
    pub table: &'a str,
    pub key: &'a str,
    pub fields: &'a Fields,
}

impl<'a> Entry<'a> {
    pub fn new(table: &'a str, key: &'a str, fields: &'a Fields) -> Self {
        Entry { table, key, fields }
    }

    pub fn get(&self, field: &str) -> Option<&'a str> {
        self.fields.get(field).map(String::as_str)
    }

    pub fn missing(&self, field: &str) -> TableError {
        TableError::MissingField {
            table: self.table.to_string(),
            key: self.key.to_string(),
            field: field.to_string(),
        }
    }

    pub fn bad_number(&self, field: &str, value: &str, expected: &'static str) -> TableError {
        TableError::BadNumber {
            table: self.table.to_string(),
            key: self.key.to_string(),
            field: field.to_string(),
            value: value.to_string(),
            expected,
        }
    }

    pub fn inconsistent(&self, reason: impl Into<String>) -> TableError {
        TableError::Inconsistent {
            table: self.table.to_string(),
            key: self.key.to_string(),
            reason: reason.into(),
        }
    }

    pub fn req(&self, field: &str) -> Result<&'a str, TableError> {
        self.get(field).ok_or_else(|| self.missing(field))
    }

    /// A non-negative decimal integer (`"9100"`); surrounding spaces tolerated.
    pub fn opt_u64(&self, field: &str) -> Result<Option<u64>, TableError> {
        self.get(field)
            .map(|v| {
                parse_u64(v).ok_or_else(|| self.bad_number(field, v, "a non-negative integer"))
            })
            .transpose()
    }

    pub fn req_u64(&self, field: &str) -> Result<u64, TableError> {
        self.opt_u64(field)?.ok_or_else(|| self.missing(field))
    }

    /// Like [`Entry::opt_u64`] but the empty string counts as absent (buffermgrd writes
    /// empty `xon`/`xoff`/`size` after a plugin error).
    pub fn opt_u64_or_empty(&self, field: &str) -> Result<Option<u64>, TableError> {
        match self.get(field) {
            Some(v) if v.trim().is_empty() => Ok(None),
            _ => self.opt_u64(field),
        }
    }

    pub fn opt_i8(&self, field: &str) -> Result<Option<i8>, TableError> {
        self.get(field)
            .map(|v| {
                v.trim()
                    .parse::<i8>()
                    .map_err(|_| self.bad_number(field, v, "an integer in -128..=127"))
            })
            .transpose()
    }

    /// A number as Lua's `tonumber` reads it (decimal fraction, exponent, hex integer).
    pub fn opt_f64(&self, field: &str) -> Result<Option<f64>, TableError> {
        self.get(field)
            .map(|v| crate::lua::tonumber(v).ok_or_else(|| self.bad_number(field, v, "a number")))
            .transpose()
    }

    pub fn req_f64(&self, field: &str) -> Result<f64, TableError> {
        self.opt_f64(field)?.ok_or_else(|| self.missing(field))
    }

    pub fn opt_enum<T: Copy>(
        &self,
        field: &str,
        choices: &[(&str, T)],
        allowed: &'static str,
    ) -> Result<Option<T>, TableError> {
        let Some(v) = self.get(field) else {
            return Ok(None);
        };
        choices
            .iter()
            .find(|(w, _)| *w == v)
            .map(|(_, t)| Some(*t))
            .ok_or_else(|| TableError::BadEnum {
                table: self.table.to_string(),
                key: self.key.to_string(),
                field: field.to_string(),
                value: v.to_string(),
                allowed,
            })
    }

    /// A profile's threshold: `dynamic_th` or `static_th`, at most one of them.
    pub fn opt_threshold(&self) -> Result<Option<Threshold>, TableError> {
        match (self.opt_i8("dynamic_th")?, self.opt_u64("static_th")?) {
            (Some(_), Some(_)) => {
                Err(self.inconsistent("both `dynamic_th` and `static_th` are given"))
            }
            (Some(d), None) => Ok(Some(Threshold::Dynamic(d))),
            (None, Some(s)) => Ok(Some(Threshold::Static(s))),
            (None, None) => Ok(None),
        }
    }
}

/// Strict non-negative decimal integer, surrounding ASCII spaces allowed.
pub(crate) fn parse_u64(v: &str) -> Option<u64> {
    let t = v.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// A profile or pool reference: a plain name, or the pre-2021 `[TABLE|name]` form.
pub(crate) fn reference_name(v: &str) -> &str {
    let t = v.trim();
    match t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        Some(inner) => inner.rsplit_once(['|', ':']).map_or(inner, |(_, n)| n),
        None => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_ranges() {
        assert_eq!(
            IdRange::parse("3").map(|r| (r.lo(), r.hi(), r.count())),
            Ok((3, 3, 1))
        );
        assert_eq!(IdRange::parse("3-4").map(|r| r.count()), Ok(2));
        assert_eq!(IdRange::parse("8-15").map(|r| r.count()), Ok(8));
        assert_eq!(
            IdRange::parse("3-4").map(|r| r.to_string()),
            Ok("3-4".into())
        );
        assert_eq!(IdRange::parse("3").map(|r| r.to_string()), Ok("3".into()));
        for bad in ["3-", "-3", "4-3", "x", "", "3-4-5", "3,4", "99999999"] {
            assert!(IdRange::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn cable_lengths() {
        let c = CableLength::parse("2.5m").expect("ok");
        assert_eq!((c.metres(), c.text()), (2.5, "2.5m"));
        assert_eq!(CableLength::parse("40"), Err(true));
        for bad in ["m", "x5m", "-5m", "5km", "", "1.2.3m", ".m"] {
            assert_eq!(CableLength::parse(bad), Err(false), "{bad:?}");
        }
        assert_eq!(
            CableLength::from_metres(40.0).map(|c| c.text().to_string()),
            Some("40m".into())
        );
    }

    #[test]
    fn references() {
        assert_eq!(
            reference_name("ingress_lossless_pool"),
            "ingress_lossless_pool"
        );
        assert_eq!(
            reference_name("[BUFFER_POOL|ingress_lossless_pool]"),
            "ingress_lossless_pool"
        );
        assert_eq!(reference_name("[BUFFER_PROFILE_TABLE:p]"), "p");
    }
}
