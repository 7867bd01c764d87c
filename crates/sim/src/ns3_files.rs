//! Pieces shared by the readers of ns-3 simulator configs ([`crate::hpcc_config`] for the
//! HPCC simulator, [`crate::ns3_rdma_config`] for the DCQCN simulator and the TCD authors'
//! fork of it): the `KEY value...` line reader, where input files are looked for, and the
//! number formats of ns-3 (`DataRate` strings, seconds as floats).
//!
//! Invariants: [`Conf::read`] rejects unknown and repeated keys with the file, line and key;
//! every error it or its accessors make is a [`ConfError`] converted into the reader's own
//! error type, so messages are the same whichever reader uses them. Nothing here panics on
//! any input.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use headroom_mech::units::{parse_rate, Rate, Time};

/// Why an ns-3 simulator config (the HPCC simulator's or the DCQCN/TCD one's) could not be
/// used: both readers return it (as `HpccConfigError` and `Ns3RdmaConfigError`).
#[derive(Debug, thiserror::Error)]
pub enum Ns3ConfigError {
    /// The config file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The config file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A key is missing, unknown, malformed or unsupported, or a file it names is invalid.
    #[error("{}: {key}: {reason}", location(.path, *.line))]
    Invalid {
        /// The config file.
        path: PathBuf,
        /// 1-based line of the key (0 when the key is missing).
        line: usize,
        /// The key, e.g. `CC_MODE`.
        key: String,
        /// What is wrong (for errors in a referenced file, starting with `file:line:`).
        reason: String,
    },
}

impl From<ConfError> for Ns3ConfigError {
    fn from(e: ConfError) -> Self {
        Ns3ConfigError::Invalid {
            path: e.path,
            line: e.line,
            key: e.key,
            reason: e.reason,
        }
    }
}

/// A key of a config file that is missing, malformed or unsupported; it becomes
/// [`Ns3ConfigError::Invalid`] (same fields, same message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfError {
    /// The config file.
    pub path: PathBuf,
    /// 1-based line of the key (0 when the key is missing).
    pub line: usize,
    /// The key.
    pub key: String,
    /// What is wrong.
    pub reason: String,
}

/// `path:line`, or `path` alone for line 0 (a missing key, a whole-file problem).
pub fn location(path: &Path, line: usize) -> String {
    if line == 0 {
        path.display().to_string()
    } else {
        format!("{}:{line}", path.display())
    }
}

/// Where the input file `written` (the value of `key` in the config at `config`) is: as
/// written if it exists relative to the working directory (or is absolute), else relative
/// to the config's directory if it exists there (noted), else as written (for the error).
pub fn input_path(config: &Path, key: &str, written: &str, notes: &mut Vec<String>) -> PathBuf {
    let as_written = PathBuf::from(written);
    if as_written.is_absolute() || as_written.exists() {
        return as_written;
    }
    let beside = config.parent().map(|d| d.join(written));
    match beside {
        Some(p) if p.exists() => {
            notes.push(format!(
                "{key}: {written} is not in the working directory; read {} (relative to the \
                 config file)",
                p.display()
            ));
            p
        }
        _ => as_written,
    }
}

/// Seconds as a `Time`, rounded to the picosecond; `None` if negative, not finite or too
/// large.
pub fn seconds(s: f64) -> Option<Time> {
    let ps = (s * 1e12).round();
    (s.is_finite() && s >= 0.0 && ps < u64::MAX as f64).then_some(Time(ps as u64))
}

/// A rate as ns-3's `DataRate` reads it: with a unit (`50Mb/s`, `100Gbps`), or a bare
/// integer of bit/s.
pub fn ns3_rate(s: &str) -> Option<Rate> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<u64>().ok().map(Rate);
    }
    parse_rate(s).ok()
}

/// One line of the config.
pub struct Line<'a> {
    /// 1-based line number.
    pub line: usize,
    /// The values after the key.
    pub values: Vec<&'a str>,
}

/// The parsed key/value lines of a config file; errors are made as `E`.
pub struct Conf<'a, E> {
    /// The config file.
    pub path: &'a Path,
    /// Every key with its line.
    pub entries: BTreeMap<&'a str, Line<'a>>,
    /// Who reads the file, for "has no usable default" (e.g. `the HPCC simulator`).
    simulator: &'static str,
    error: PhantomData<fn() -> E>,
}

impl<'a, E: From<ConfError>> Conf<'a, E> {
    /// Reads `KEY value...` lines (blank lines ignored, `#` starts a comment); a key for
    /// which `known` is false, or a key given twice, is an error.
    pub fn read(
        text: &'a str,
        path: &'a Path,
        simulator: &'static str,
        known: impl Fn(&str) -> bool,
    ) -> Result<Self, E> {
        let mut entries: BTreeMap<&str, Line> = BTreeMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let content = raw.split('#').next().unwrap_or("");
            let mut tokens = content.split_whitespace();
            let Some(key) = tokens.next() else { continue };
            let err = |reason: String| {
                E::from(ConfError {
                    path: path.to_path_buf(),
                    line,
                    key: key.to_string(),
                    reason,
                })
            };
            if !known(key) {
                return Err(err(format!("unknown key `{key}`")));
            }
            if let Some(prev) = entries.get(key) {
                return Err(err(format!("given twice (first on line {})", prev.line)));
            }
            entries.insert(
                key,
                Line {
                    line,
                    values: tokens.collect(),
                },
            );
        }
        Ok(Conf {
            path,
            entries,
            simulator,
            error: PhantomData,
        })
    }

    /// The line of `key`, or 0 when absent.
    pub fn line_of(&self, key: &str) -> usize {
        self.entries.get(key).map_or(0, |e| e.line)
    }

    /// An error about `key` at its line.
    pub fn err(&self, key: &str, reason: impl Into<String>) -> E {
        self.err_at(self.line_of(key), key, reason)
    }

    /// An error about `key` at `line`.
    pub fn err_at(&self, line: usize, key: &str, reason: impl Into<String>) -> E {
        E::from(ConfError {
            path: self.path.to_path_buf(),
            line,
            key: key.to_string(),
            reason: reason.into(),
        })
    }

    /// `key` is required and absent.
    pub fn missing(&self, key: &str) -> E {
        self.err_at(
            0,
            key,
            format!(
                "missing: add a `{key}` line ({} has no usable default)",
                self.simulator
            ),
        )
    }

    /// The line and values of `key`, if present.
    pub fn values(&self, key: &str) -> Result<Option<(usize, &[&'a str])>, E> {
        Ok(self.entries.get(key).map(|e| (e.line, e.values.as_slice())))
    }

    /// The single value of `key`, if present.
    pub fn one(&self, key: &str) -> Result<Option<&'a str>, E> {
        match self.entries.get(key) {
            None => Ok(None),
            Some(e) => match e.values.as_slice() {
                [v] => Ok(Some(v)),
                [] => Err(self.err(key, "missing value")),
                more => Err(self.err(key, format!("expected one value, found {}", more.len()))),
            },
        }
    }

    /// The single value of a required `key`.
    pub fn req_one(&self, key: &str) -> Result<&'a str, E> {
        self.one(key)?.ok_or_else(|| self.missing(key))
    }

    /// `ERROR_RATE_PER_LINK`, in [0, 1]: every link whose topology line has error rate 0
    /// gets it, as both simulators' `third.cc` does.
    pub fn error_rate_per_link(&self, topology: &mut crate::topology::Topology) -> Result<(), E> {
        let key = "ERROR_RATE_PER_LINK";
        let Some(e) = self.num::<f64>(key, "a number")? else {
            return Ok(());
        };
        if !(0.0..=1.0).contains(&e) {
            return Err(self.err(key, format!("must be in [0, 1], found {e}")));
        }
        for l in topology.links.iter_mut().filter(|l| l.error_rate == 0.0) {
            l.error_rate = e;
        }
        Ok(())
    }

    /// The single value of `key` parsed as `T` (`what` names the expected form).
    pub fn num<T: std::str::FromStr>(&self, key: &str, what: &str) -> Result<Option<T>, E> {
        match self.one(key)? {
            None => Ok(None),
            Some(s) => s
                .parse::<T>()
                .map(Some)
                .map_err(|_| self.err(key, format!("`{s}` is not {what}"))),
        }
    }

    /// A 0/1 switch.
    pub fn flag(&self, key: &str) -> Result<Option<bool>, E> {
        match self.one(key)? {
            None => Ok(None),
            Some("0") => Ok(Some(false)),
            Some("1") => Ok(Some(true)),
            Some(s) => Err(self.err(key, format!("expected 0 or 1, found `{s}`"))),
        }
    }

    /// A map `<n> <rate bit/s> <value> ...` (required).
    pub fn rate_map<T>(
        &self,
        key: &str,
        what: &str,
        value: impl Fn(&str) -> Option<T>,
    ) -> Result<BTreeMap<Rate, T>, E> {
        let e = self.entries.get(key).ok_or_else(|| self.missing(key))?;
        let v = &e.values;
        let n: usize = v
            .first()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| self.err(key, "expected `<n> <rate bit/s> <value> ...`"))?;
        if v.len() != 1 + 2 * n.min(v.len()) {
            return Err(self.err(
                key,
                format!(
                    "declares {n} entries, so expected {} values after the count, found {}",
                    n.saturating_mul(2),
                    v.len() - 1
                ),
            ));
        }
        let mut out = BTreeMap::new();
        for pair in v[1..].chunks(2) {
            let rate = pair[0]
                .parse::<u64>()
                .map_err(|_| self.err(key, format!("`{}` is not a rate in bit/s", pair[0])))?;
            let val = value(pair[1])
                .ok_or_else(|| self.err(key, format!("`{}` is not {what}", pair[1])))?;
            out.insert(Rate(rate), val);
        }
        Ok(out)
    }
}
