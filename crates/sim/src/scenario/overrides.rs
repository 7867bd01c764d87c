//! Scenario variants: a scenario's text with some keys set to other values, written so that
//! it can be run from any directory.
//!
//! A key is named by its dotted path, with the index of an entry of an array of tables in
//! brackets: `switch.scheme`, `host.cc.algorithm`, `workload[1].load`, `topology.link[0].rate`.
//! Tables on the way that the scenario does not have are created (`switch.pfc.mode` in a
//! scenario without `[switch.pfc]`); an entry of an array of tables must exist, except that
//! setting the entry one past the last to an inline table appends it (`workload[2] = {
//! kind = "incast", ... }` adds a third workload). A table, or an entry, set to an inline
//! table is replaced as a whole (`host.cc = { algorithm = "powertcp" }` drops the keys of
//! the algorithm it replaces).
//!
//! Invariants: [`with_overrides`] returns a text that [`super::parse`] accepts wherever it
//! is written (every relative file reference is made absolute against the base scenario's
//! directory), or an error naming the key or the scenario field at fault; the base text's
//! other keys, comments and layout are kept.

use super::{fields::Cx, parse_in, ScenarioError};
use std::fmt;
use std::path::Path;
use toml_edit::{DocumentMut, Item, Table, Value};

/// One key of a scenario set to a value.
#[derive(Clone, Debug)]
pub struct Override {
    /// Dotted path of the key (see the module documentation).
    pub key: String,
    /// The value it takes.
    pub value: Value,
}

/// Why a variant of a scenario could not be made.
#[derive(Debug, thiserror::Error)]
pub enum OverrideError {
    /// The path of an override does not lead to a key (a malformed path, an index out of
    /// range, or a path through a value that is not a table).
    #[error("{key}: {reason}")]
    Path {
        /// The override's key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The scenario with the overrides applied is not valid.
    #[error(transparent)]
    Scenario(Box<ScenarioError>),
}

impl From<ScenarioError> for OverrideError {
    fn from(e: ScenarioError) -> Self {
        OverrideError::Scenario(Box::new(e))
    }
}

/// One step of a key's path: a key, and the indices that follow it.
struct Step<'k> {
    key: &'k str,
    index: Option<usize>,
}

impl fmt::Display for Step<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}[{i}]", self.key),
            None => f.write_str(self.key),
        }
    }
}

/// Splits a dotted path into its steps.
fn steps(key: &str) -> Result<Vec<Step<'_>>, String> {
    let mut out = Vec::new();
    for part in key.split('.') {
        let (name, index) = match part.split_once('[') {
            None => (part, None),
            Some((name, rest)) => {
                let digits = rest
                    .strip_suffix(']')
                    .ok_or_else(|| format!("`{part}`: an index is written `name[N]`"))?;
                let i = digits
                    .parse::<usize>()
                    .map_err(|_| format!("`{part}`: `{digits}` is not an index"))?;
                (name, Some(i))
            }
        };
        let well_formed = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !well_formed {
            return Err(format!(
                "`{part}` is not a key (letters, digits, `_` and `-`, optionally with an \
                 index `[N]`)"
            ));
        }
        out.push(Step { key: name, index });
    }
    Ok(out)
}

/// Sets `value` at the end of `path` in `table`, creating missing tables on the way.
fn set(table: &mut Table, path: &[Step<'_>], value: Value) -> Result<(), String> {
    let Some((step, rest)) = path.split_first() else {
        return Err("an empty key".into());
    };
    if rest.is_empty() {
        if let Some(i) = step.index {
            return set_entry(table, step, i, value);
        }
        match (table.get_mut(step.key), value) {
            // A table replaced as a whole (its keys not given are gone), in its place.
            (Some(item @ Item::Table(_)), Value::InlineTable(new)) => {
                let position = item.as_table().and_then(Table::position);
                let mut new = new.into_table();
                if let Some(p) = position {
                    new.set_position(p);
                }
                *item = Item::Table(new);
                Ok(())
            }
            (Some(Item::Table(_) | Item::ArrayOfTables(_)), _) => Err(format!(
                "`{}` is a table: set one of its keys (`{}.key`), or the whole table to an \
                 inline table (`{{ key = value, ... }}`)",
                step.key, step.key
            )),
            // A value replaced in place: the key keeps its comments, the value its
            // leading space; a comment after the old value described that value.
            (Some(Item::Value(old)), mut value) => {
                let prefix = old.decor().prefix().cloned();
                value.decor_mut().clear();
                if let Some(p) = prefix {
                    value.decor_mut().set_prefix(p);
                }
                *old = value;
                Ok(())
            }
            (_, value) => {
                table.insert(step.key, Item::Value(value));
                Ok(())
            }
        }
    } else {
        let item = table
            .entry(step.key)
            .or_insert_with(|| Item::Table(Table::new()));
        let inner = match (item, step.index) {
            (Item::Table(t), None) => t,
            (Item::ArrayOfTables(a), Some(i)) => {
                let n = a.len();
                a.get_mut(i).ok_or_else(|| {
                    format!("`{}` has {n} entries: index {i} is out of range", step.key)
                })?
            }
            (Item::ArrayOfTables(a), None) => {
                return Err(format!(
                    "`{}` is a list of {} [[{}]] tables: name one by its index, e.g. `{}[0]`",
                    step.key,
                    a.len(),
                    step.key,
                    step.key
                ))
            }
            (Item::Value(Value::InlineTable(t)), None) => {
                return set_inline(t, rest, value).map_err(|e| format!("{}.{e}", step.key))
            }
            (Item::Value(Value::Array(a)), Some(i)) => {
                let n = a.len();
                match a.get_mut(i) {
                    Some(Value::InlineTable(t)) => {
                        return set_inline(t, rest, value).map_err(|e| format!("{step}.{e}"))
                    }
                    Some(_) => return Err(format!("`{step}` is not a table")),
                    None => {
                        return Err(format!(
                            "`{}` has {n} entries: index {i} is out of range",
                            step.key
                        ))
                    }
                }
            }
            (_, Some(_)) => return Err(format!("`{}` is not a list of tables", step.key)),
            (_, None) => return Err(format!("`{}` is a value, not a table", step.key)),
        };
        set(inner, rest, value)
    }
}

/// Sets entry `i` of the array of tables `step` names to `value`, an inline table: it
/// replaces an existing entry as a whole, or is appended when `i` is the entry count (a
/// sweep's step can add a workload).
fn set_entry(table: &mut Table, step: &Step<'_>, i: usize, value: Value) -> Result<(), String> {
    let Value::InlineTable(new) = value else {
        return Err(format!(
            "`{step}` is an entry of a list of tables: set it to an inline table \
             (`{{ key = value, ... }}`) or set its keys one by one (`{step}.key`)"
        ));
    };
    let new = new.into_table();
    let entries = table
        .entry(step.key)
        .or_insert_with(|| Item::ArrayOfTables(toml_edit::ArrayOfTables::new()));
    let Item::ArrayOfTables(a) = entries else {
        return Err(format!("`{}` is not a list of tables", step.key));
    };
    let n = a.len();
    match a.get_mut(i) {
        Some(entry) => {
            let position = entry.position();
            *entry = new;
            if let Some(p) = position {
                entry.set_position(p);
            }
        }
        None if i == n => a.push(new),
        None => {
            return Err(format!(
                "`{}` has {n} entries: index {i} is neither one of them nor the next",
                step.key
            ))
        }
    }
    Ok(())
}

/// [`set`] inside an inline table (`nic_buffer = { size = ..., xoff = ... }`).
fn set_inline(
    table: &mut toml_edit::InlineTable,
    path: &[Step<'_>],
    value: Value,
) -> Result<(), String> {
    let mut outer = std::mem::take(table).into_table();
    let result = set(&mut outer, path, value);
    *table = outer.into_inline_table();
    result
}

/// The scenario `text` (read from `path`) with `overrides` applied in order, as a text
/// that parses wherever it is written: every relative file reference of the result is
/// replaced by its absolute path (against `path`'s directory).
pub fn with_overrides(
    text: &str,
    path: &Path,
    overrides: &[Override],
) -> Result<String, OverrideError> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        OverrideError::from(Cx::new(text, path, false).err(
            "",
            e.span(),
            format!("invalid TOML: {}", e.message().trim_end()),
        ))
    })?;
    for o in overrides {
        let path_steps = steps(&o.key).map_err(|reason| OverrideError::Path {
            key: o.key.clone(),
            reason,
        })?;
        set(doc.as_table_mut(), &path_steps, o.value.clone()).map_err(|reason| {
            OverrideError::Path {
                key: o.key.clone(),
                reason,
            }
        })?;
    }
    let edited = doc.to_string();
    let cx = Cx::new(&edited, path, false).recording_files();
    parse_in(&cx)?;
    let mut refs = cx.files.map(|f| f.into_inner()).unwrap_or_default();
    // Later spans first, so that earlier ones stay where they are.
    refs.sort_by_key(|r| std::cmp::Reverse(r.span.start));
    let mut out = edited.clone();
    for r in refs {
        let absolute = std::path::absolute(&r.resolved).unwrap_or(r.resolved);
        let literal = Value::from(absolute.display().to_string()).to_string();
        out.replace_range(r.span, literal.trim());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(key: &str, value: impl Into<Value>) -> Override {
        Override {
            key: key.into(),
            value: value.into(),
        }
    }

    const BASE: &str = r#"# a comment that stays
name = "base"
[topology]
kind = "dumbbell"
left_hosts = 2
right_hosts = 1
host_rate = "100Gbps"
bottleneck_rate = "100Gbps"

[host]
nic_buffer = { size = "1MiB", xoff = "512KiB", xon = "256KiB", drain = "80Gbps" }

[[workload]]
kind = "incast"
senders = [0, 1]
receiver = 2
size = "100KB"

[[workload]]
kind = "incast"
senders = [0]
receiver = 2
size = "10KB"
"#;

    fn parsed(text: &str) -> super::super::Scenario {
        super::super::parse(text, Path::new("/tmp/variant.toml")).expect("variant parses")
    }

    #[test]
    fn sets_values_creates_tables_and_keeps_comments() {
        let text = with_overrides(
            BASE,
            Path::new("base.toml"),
            &[
                o("seed", 7),
                o("workload[1].size", "20KB"),
                o("switch.pfc.mode", "refresh"),
                o("host.nic_buffer.xon", "128KiB"),
                o("host.cc.algorithm", "dcqcn"),
                o("host.cc.preset", "hpcc"),
            ],
        )
        .expect("overrides apply");
        assert!(text.starts_with("# a comment that stays"), "{text}");
        let s = parsed(&text);
        assert_eq!(s.config.seed, 7);
        let sizes: Vec<u64> = s.config.flows.iter().map(|f| f.size).collect();
        assert_eq!(sizes, [100_000, 100_000, 20_000]);
        assert!(text.contains("mode = \"refresh\""), "{text}");
        assert!(text.contains("xon = \"128KiB\""), "{text}");
        // A table replaced whole loses the keys the new one does not give.
        let mut cc = toml_edit::InlineTable::new();
        cc.insert("algorithm", "dctcp".into());
        let text =
            with_overrides(&text, Path::new("base.toml"), &[o("host.cc", cc)]).expect("replaces");
        assert!(!text.contains("preset"), "{text}");
        assert!(matches!(
            parsed(&text).config.host.cc,
            crate::config::CcConfig::Dctcp(_)
        ));
    }

    #[test]
    fn an_entry_set_to_an_inline_table_is_replaced_or_appended() {
        let entry = |senders: &[i64], size: &str| {
            let mut t = toml_edit::InlineTable::new();
            t.insert("kind", "incast".into());
            t.insert(
                "senders",
                senders.iter().copied().collect::<toml_edit::Array>().into(),
            );
            t.insert("receiver", 2.into());
            t.insert("size", size.into());
            t
        };
        let text = with_overrides(
            BASE,
            Path::new("base.toml"),
            &[
                o("workload[0]", entry(&[1], "1KB")),
                o("workload[2]", entry(&[0], "3KB")),
                o("workload[2].size", "4KB"),
            ],
        )
        .expect("overrides apply");
        let sizes: Vec<u64> = parsed(&text).config.flows.iter().map(|f| f.size).collect();
        assert_eq!(sizes, [1_000, 10_000, 4_000], "{text}");
        // The replaced entry stays first in the text, the new one comes last.
        let first = text.find("1KB").expect("replaced entry");
        assert!(first < text.find("10KB").expect("kept entry"), "{text}");
        assert!(text.trim_end().ends_with("size = \"4KB\""), "{text}");
        let cases = [
            ("workload[4]", "neither one of them nor the next"),
            ("topology[0]", "is not a list of tables"),
        ];
        for (key, reason) in cases {
            let e = with_overrides(BASE, Path::new("base.toml"), &[o(key, entry(&[0], "1KB"))])
                .expect_err(key)
                .to_string();
            assert!(e.starts_with(key) && e.contains(reason), "{key}: {e}");
        }
        let e = with_overrides(BASE, Path::new("base.toml"), &[o("workload[0]", 1)])
            .expect_err("a value is no entry")
            .to_string();
        assert!(e.contains("set it to an inline table"), "{e}");
    }

    #[test]
    fn bad_paths_name_the_key_and_the_reason() {
        let cases = [
            ("workload[5].size", "has 2 entries: index 5 is out of range"),
            ("workload.size", "name one by its index"),
            ("topology.kind.x", "`kind` is a value, not a table"),
            ("topology", "is a table"),
            ("workload[x].size", "is not an index"),
            ("switch..pfc", "is not a key"),
        ];
        for (key, reason) in cases {
            let e = with_overrides(BASE, Path::new("base.toml"), &[o(key, 1)])
                .expect_err(key)
                .to_string();
            assert!(e.starts_with(key) && e.contains(reason), "{key}: {e}");
        }
    }

    #[test]
    fn an_invalid_value_is_the_scenario_parsers_error() {
        let e = with_overrides(BASE, Path::new("base.toml"), &[o("topology.kind", "ring")])
            .expect_err("ring is no topology");
        match e {
            OverrideError::Scenario(e) => assert_eq!(e.field(), Some("topology.kind")),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn relative_file_references_become_absolute() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("cdf.txt"), "100 0\n1000 100\n").expect("write cdf");
        let base = dir.path().join("base.toml");
        let text = format!(
            "{BASE}\n[[workload]]\nkind = \"poisson\"\nload = 0.2\ncdf_file = \"cdf.txt\"\nduration = \"10us\"\n"
        );
        let out = with_overrides(&text, &base, &[o("workload[2].load", 0.3)]).expect("applies");
        let abs = std::path::absolute(dir.path().join("cdf.txt")).expect("absolute");
        assert!(
            out.contains(&format!("cdf_file = \"{}\"", abs.display())),
            "{out}"
        );
        // Parsed from elsewhere, the reference still resolves.
        parsed(&out);
    }
}
