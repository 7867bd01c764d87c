//! The CONFIG_DB / STATE_DB table handlers (sonic-buffer.md §7.3, §7.7): what happens when an
//! item of a subscribed table is processed.
//!
//! Invariant: a handler either completes ([`Status::Success`]), asks to be retried without
//! having changed buffermgrd's records ([`Status::Retry`]), or rejects the item
//! ([`Status::Failed`], logged by the caller).
//!
//! The handlers live in one child module per group of tables (ports, pools and profiles,
//! per-port objects); this file keeps the entry parsing they share.
//!
//! [`Status::Success`]: super::Status::Success
//! [`Status::Retry`]: super::Status::Retry
//! [`Status::Failed`]: super::Status::Failed

use super::EntryError;
use crate::tables::config::ConfigDb;
use crate::tables::{parse_port_ids, reference_name, Fields, RawDb, TableError};

mod objects;
mod pools_and_profiles;
mod ports;

/// Checks that a CONFIG_DB entry parses (malformed entries are logged and dropped before
/// they reach a handler). `CABLE_LENGTH` fields are checked one by one by the handler.
pub(super) fn validate_config(table: &str, key: &str, fields: &Fields) -> Result<(), EntryError> {
    let one = |t: &str, fields: &Fields, extra: Option<(&str, Fields)>| {
        let mut raw = RawDb::new();
        raw.entry(t.to_string())
            .or_default()
            .insert(key.to_string(), fields.clone());
        if let Some((pool, pf)) = extra {
            raw.entry("BUFFER_POOL".to_string())
                .or_default()
                .insert(pool.to_string(), pf);
        }
        ConfigDb::from_raw(&raw)
            .map(|_| ())
            .map_err(|e| match e.0.into_iter().next() {
                Some(first) => EntryError::Malformed(first),
                None => EntryError::Malformed(TableError::BadKey {
                    table: t.to_string(),
                    key: key.to_string(),
                    reason: "unreadable",
                }),
            })
    };
    match table {
        "PORT"
        | "BUFFER_POOL"
        | "DEFAULT_LOSSLESS_BUFFER_PARAMETER"
        | "LOSSLESS_TRAFFIC_PATTERN"
        | "DEVICE_METADATA" => one(table, fields, None),
        "BUFFER_PROFILE" => {
            // The pool may not exist yet: check the fields against a stand-in pool whose mode
            // matches the threshold given (the real pool is checked when processed).
            let pool = fields
                .get("pool")
                .map(|p| reference_name(p).to_string())
                .unwrap_or_default();
            let mut pf = Fields::new();
            pf.insert("type".into(), "ingress".into());
            let mode = if fields.contains_key("static_th") {
                "static"
            } else {
                "dynamic"
            };
            pf.insert("mode".into(), mode.into());
            let extra = (!pool.is_empty()).then_some((pool.as_str(), pf));
            one(table, fields, extra)
        }
        "BUFFER_PG" | "BUFFER_QUEUE" => {
            parse_port_ids(table, key, '|')?;
            if table == "BUFFER_PG" {
                if let Some(f) = fields.keys().find(|f| *f != "profile") {
                    return Err(EntryError::UnexpectedField {
                        table: table.into(),
                        key: key.into(),
                        field: f.clone(),
                    });
                }
            } else if !fields.contains_key("profile") {
                return Err(TableError::MissingField {
                    table: table.into(),
                    key: key.into(),
                    field: "profile".into(),
                }
                .into());
            }
            Ok(())
        }
        "BUFFER_PORT_INGRESS_PROFILE_LIST" | "BUFFER_PORT_EGRESS_PROFILE_LIST" => {
            if key.split(',').any(|p| p.trim().is_empty()) {
                return Err(TableError::BadKey {
                    table: table.into(),
                    key: key.into(),
                    reason: "empty port name",
                }
                .into());
            }
            if !fields.contains_key("profile_list") {
                return Err(TableError::MissingField {
                    table: table.into(),
                    key: key.into(),
                    field: "profile_list".into(),
                }
                .into());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn parse_one<T>(
    table: &str,
    key: &str,
    fields: &Fields,
    extra: Option<(&str, Fields)>,
    take: impl FnOnce(ConfigDb) -> Option<T>,
) -> Result<T, EntryError> {
    let mut raw = RawDb::new();
    raw.entry(table.to_string())
        .or_default()
        .insert(key.to_string(), fields.clone());
    if let Some((pool, pf)) = extra {
        raw.entry("BUFFER_POOL".to_string())
            .or_default()
            .insert(pool.to_string(), pf);
    }
    let unreadable = || {
        EntryError::Malformed(TableError::BadKey {
            table: table.to_string(),
            key: key.to_string(),
            reason: "unreadable",
        })
    };
    match ConfigDb::from_raw(&raw) {
        Ok(db) => take(db).ok_or_else(unreadable),
        Err(e) => Err(e
            .0
            .into_iter()
            .next()
            .map(EntryError::Malformed)
            .unwrap_or_else(unreadable)),
    }
}

/// Whether a ratio / size string counts as "enabled" (a number ≠ 0).
pub(super) fn numeric_non_zero(v: Option<&str>) -> bool {
    v.and_then(crate::lua::tonumber).is_some_and(|x| x != 0.0)
}
