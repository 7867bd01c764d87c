//! Untyped table contents, in the two JSON shapes SONiC uses on disk.
//!
//! - **Nested** (`config_db.json`, `sonic-cfggen` output): `{"TABLE": {"key": {"field": "value"}}}`.
//! - **Flat** (buffermgrd's `-a asic_table.json` / `-p peripheral_table.json` files, and
//!   `redis-dump`-like dumps): `{"TABLE:key": {"field": "value"}}` (or `TABLE|key` for the
//!   `|`-separated databases); the table is the part before the first separator.
//!
//! Both are converted to one [`RawDb`]: table name → object key → field → value, all in
//! `BTreeMap`s so iteration order (and everything computed from it) is deterministic.
//! Nothing here interprets values; the typed views in [`super::config`], [`super::state`]
//! and [`super::appl`] do.

use std::collections::BTreeMap;

/// Field → value of one object (one Redis hash).
pub type Fields = BTreeMap<String, String>;

/// Object key → fields, for one table.
pub type RawTable = BTreeMap<String, Fields>;

/// Table name → table, for one database.
pub type RawDb = BTreeMap<String, RawTable>;

/// Why a JSON document could not be read as tables.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RawError {
    /// The text is not valid JSON.
    #[error("invalid JSON: {0}")]
    Json(String),
    /// An element that must be a JSON object (the document, a table, an entry) is not one.
    #[error("`{path}` must be a JSON object")]
    NotAnObject {
        /// Where in the document, e.g. `PORT/Ethernet0`.
        path: String,
    },
    /// A field value is a JSON object (only strings, numbers, booleans and lists of those are
    /// field values in SONiC's formats).
    #[error("field `{path}` holds a JSON object; expected a string, number, boolean or list")]
    NestedField {
        /// Where in the document, e.g. `PORT/Ethernet0/speed`.
        path: String,
    },
    /// A flat-format key has no table separator (`ASIC_TABLE` instead of `ASIC_TABLE:NAME`).
    #[error("key `{key}` has no table separator `{sep}`")]
    FlatKeyWithoutTable {
        /// The offending key.
        key: String,
        /// The separator that was expected.
        sep: char,
    },
}

/// Reads the nested format `{"TABLE": {"key": {"field": "value"}}}` (e.g. `config_db.json`).
///
/// Numbers and booleans become their JSON text (`9100`, `true`); lists of scalars become
/// comma-joined strings (SONiC's `lanes`-like list encoding).
pub fn from_nested_json(text: &str) -> Result<RawDb, RawError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| RawError::Json(e.to_string()))?;
    let top = v.as_object().ok_or(RawError::NotAnObject {
        path: String::new(),
    })?;
    let mut db = RawDb::new();
    for (table, tv) in top {
        let tobj = tv.as_object().ok_or_else(|| RawError::NotAnObject {
            path: table.clone(),
        })?;
        let t = db.entry(table.clone()).or_default();
        for (key, ev) in tobj {
            let path = format!("{table}/{key}");
            t.insert(key.clone(), fields_from_json(ev, &path)?);
        }
    }
    Ok(db)
}

/// Reads the flat format `{"TABLE<sep>key": {"field": "value"}}` (buffermgrd's `-a` / `-p`
/// files use `:`), splitting each key at the first `sep`.
pub fn from_flat_json(text: &str, sep: char) -> Result<RawDb, RawError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| RawError::Json(e.to_string()))?;
    let top = v.as_object().ok_or(RawError::NotAnObject {
        path: String::new(),
    })?;
    let mut flat = BTreeMap::new();
    for (key, ev) in top {
        flat.insert(key.clone(), fields_from_json(ev, key)?);
    }
    from_flat(&flat, sep)
}

/// Splits flat keys `TABLE<sep>key` into a [`RawDb`].
pub fn from_flat(flat: &BTreeMap<String, Fields>, sep: char) -> Result<RawDb, RawError> {
    let mut db = RawDb::new();
    for (k, fields) in flat {
        let (table, key) = k
            .split_once(sep)
            .ok_or_else(|| RawError::FlatKeyWithoutTable {
                key: k.clone(),
                sep,
            })?;
        db.entry(table.to_string())
            .or_default()
            .insert(key.to_string(), fields.clone());
    }
    Ok(db)
}

/// Joins a [`RawDb`] back into flat keys `TABLE<sep>key` (the Redis key names).
pub fn to_flat(db: &RawDb, sep: char) -> BTreeMap<String, Fields> {
    db.iter()
        .flat_map(|(t, tab)| {
            tab.iter()
                .map(move |(k, f)| (format!("{t}{sep}{k}"), f.clone()))
        })
        .collect()
}

/// Renders a [`RawDb`] as the nested JSON format (pretty-printed, keys sorted).
pub fn to_nested_json(db: &RawDb) -> String {
    serde_json::to_string_pretty(db).unwrap_or_default()
}

/// Merges `other` into `db`; fields of `other` win.
pub fn merge(db: &mut RawDb, other: &RawDb) {
    for (t, tab) in other {
        let dt = db.entry(t.clone()).or_default();
        for (k, f) in tab {
            dt.entry(k.clone())
                .or_default()
                .extend(f.iter().map(|(a, b)| (a.clone(), b.clone())));
        }
    }
}

fn fields_from_json(v: &serde_json::Value, path: &str) -> Result<Fields, RawError> {
    let obj = v.as_object().ok_or_else(|| RawError::NotAnObject {
        path: path.to_string(),
    })?;
    let mut out = Fields::new();
    for (f, fv) in obj {
        let fpath = format!("{path}/{f}");
        out.insert(f.clone(), scalar_text(fv, &fpath)?);
    }
    Ok(out)
}

fn scalar_text(v: &serde_json::Value, path: &str) -> Result<String, RawError> {
    use serde_json::Value;
    Ok(match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => String::new(),
        Value::Array(items) => {
            let parts: Result<Vec<String>, RawError> =
                items.iter().map(|i| scalar_text(i, path)).collect();
            parts?.join(",")
        }
        Value::Object(_) => {
            return Err(RawError::NestedField {
                path: path.to_string(),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_and_flat_agree() {
        let nested = r#"{"ASIC_TABLE": {"MELLANOX-SPECTRUM": {"cell_size": "96", "x": 1}}}"#;
        let flat = r#"{"ASIC_TABLE:MELLANOX-SPECTRUM": {"cell_size": "96", "x": 1}}"#;
        let a = from_nested_json(nested).expect("nested");
        let b = from_flat_json(flat, ':').expect("flat");
        assert_eq!(a, b);
        assert_eq!(a["ASIC_TABLE"]["MELLANOX-SPECTRUM"]["x"], "1");
        let back = to_flat(&a, ':');
        assert!(back.contains_key("ASIC_TABLE:MELLANOX-SPECTRUM"));
    }

    #[test]
    fn flat_key_needs_a_table() {
        let err = from_flat_json(r#"{"ASIC_TABLE": {}}"#, ':').expect_err("no separator");
        assert_eq!(
            err,
            RawError::FlatKeyWithoutTable {
                key: "ASIC_TABLE".into(),
                sep: ':'
            }
        );
    }

    #[test]
    fn lists_are_comma_joined_and_objects_rejected() {
        let db = from_nested_json(r#"{"T": {"k": {"l": [1, "2"]}}}"#).expect("ok");
        assert_eq!(db["T"]["k"]["l"], "1,2");
        let err = from_nested_json(r#"{"T": {"k": {"l": {}}}}"#).expect_err("nested");
        assert_eq!(
            err,
            RawError::NestedField {
                path: "T/k/l".into()
            }
        );
        assert!(matches!(from_nested_json("{"), Err(RawError::Json(_))));
    }
}
