//! Reconciliation of what is in Redis with what the buffer manager wants there.
//!
//! After a connection loss, a Redis restart, or at start-up, the daemon does not replay the
//! writes it may have lost; it reads what Redis holds and writes only the differences
//! ([`appl_diff`], [`state_diff`]). The manager's mirror ([`BufferManager::appl_db`],
//! [`BufferManager::state_db`]) is the desired state.
//!
//! APPL_DB is read as orchagent will see it once it has consumed everything: the consumed
//! hashes `T:key` with the pending ProducerStateTable operations applied on top (a key in
//! `T_DEL_SET` starts from nothing, the staging hash `_T:key` is merged in; a pending key
//! with neither is a DEL for the consumer). The read is one Lua script, hence atomic with
//! respect to orchagent's pops (1 round trip, 2 if the script had to be loaded).
//!
//! Invariants:
//! - Applying the operations of [`appl_diff`] with ProducerStateTable semantics (a set merges
//!   fields, a del removes the hash) to the effective APPL_DB yields exactly the desired
//!   tables; when they already agree the diff is empty, so nothing is written twice.
//! - [`state_diff`] replaces whole hashes, and deletes only keys of the tables the manager
//!   owns entirely ([`OWNED_STATE_TABLES`]).
//!
//! [`BufferManager::appl_db`]: crate::bufmgr::BufferManager::appl_db
//! [`BufferManager::state_db`]: crate::bufmgr::BufferManager::state_db

use std::collections::{BTreeMap, BTreeSet};

use crate::bufmgr::Output;
use crate::swss::{DbConnection, LuaPlugin, SwssError};
use crate::tables::{Fields, RawDb};

/// The APPL_DB tables buffermgrd writes (and the daemon reconciles).
pub const APPL_TABLES: [&str; 6] = [
    "BUFFER_POOL_TABLE",
    "BUFFER_PROFILE_TABLE",
    "BUFFER_PG_TABLE",
    "BUFFER_QUEUE_TABLE",
    "BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE",
    "BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE",
];

/// STATE_DB tables whose every key is the manager's (mirrors of pools and profiles): keys
/// the manager does not want are deleted.
pub const OWNED_STATE_TABLES: [&str; 2] = ["BUFFER_POOL_TABLE", "BUFFER_PROFILE_TABLE"];

/// The APPL_DB writes ([`Output::ApplSet`] merges, [`Output::ApplDel`]) that turn the
/// effective APPL_DB `actual` into `desired`, for `tables` plus every table of `desired`
/// (see the module invariants). Per key: nothing if equal; a
/// set of the changed fields if `actual` has no field `desired` lacks; else a del then a set.
pub fn appl_diff(desired: &RawDb, actual: &RawDb, tables: &[&str]) -> Vec<Output> {
    let names: BTreeSet<&str> = tables
        .iter()
        .copied()
        .chain(desired.keys().map(String::as_str))
        .collect();
    let empty = BTreeMap::new();
    let mut ops = Vec::new();
    for table in names {
        let want = desired.get(table).unwrap_or(&empty);
        let have = actual.get(table).unwrap_or(&empty);
        for (key, fields) in want {
            match have.get(key) {
                Some(h) if h == fields => {}
                Some(h) if h.keys().all(|f| fields.contains_key(f)) => {
                    let changed: Fields = fields
                        .iter()
                        .filter(|(f, v)| h.get(*f) != Some(*v))
                        .map(|(f, v)| (f.clone(), v.clone()))
                        .collect();
                    ops.push(Output::ApplSet {
                        table: table.to_owned(),
                        key: key.clone(),
                        fields: changed,
                    });
                }
                Some(_) => {
                    ops.push(Output::ApplDel {
                        table: table.to_owned(),
                        key: key.clone(),
                    });
                    ops.push(Output::ApplSet {
                        table: table.to_owned(),
                        key: key.clone(),
                        fields: fields.clone(),
                    });
                }
                None => ops.push(Output::ApplSet {
                    table: table.to_owned(),
                    key: key.clone(),
                    fields: fields.clone(),
                }),
            }
        }
        for key in have.keys().filter(|k| !want.contains_key(*k)) {
            ops.push(Output::ApplDel {
                table: table.to_owned(),
                key: key.clone(),
            });
        }
    }
    ops
}

/// The STATE_DB writes ([`Output::StateSet`] replaces the hash, [`Output::StateDel`]) that
/// turn `actual` into `desired` (see the module invariants).
pub fn state_diff(desired: &RawDb, actual: &RawDb) -> Vec<Output> {
    let empty = BTreeMap::new();
    let names: BTreeSet<&str> = desired
        .keys()
        .map(String::as_str)
        .chain(OWNED_STATE_TABLES)
        .collect();
    let mut ops = Vec::new();
    for table in names {
        let want = desired.get(table).unwrap_or(&empty);
        let have = actual.get(table).unwrap_or(&empty);
        for (key, fields) in want {
            if have.get(key) != Some(fields) {
                ops.push(Output::StateSet {
                    table: table.to_owned(),
                    key: key.clone(),
                    fields: fields.clone(),
                });
            }
        }
        if OWNED_STATE_TABLES.contains(&table) {
            for key in have.keys().filter(|k| !want.contains_key(*k)) {
                ops.push(Output::StateDel {
                    table: table.to_owned(),
                    key: key.clone(),
                });
            }
        }
    }
    ops
}

/// The read script: for every table in `ARGV`, the consumed hashes (`C`, table, key, n,
/// fields…) and the pending operations (`P`, table, key, in-del-set 0/1, n, staged fields…),
/// as one flat array of strings.
const READ_LUA: &str = r#"-- headroom daemon: effective APPL_DB
local out = {}
local function push_hash(h)
    out[#out + 1] = tostring(#h / 2)
    for i = 1, #h do out[#out + 1] = h[i] end
end
for _, t in ipairs(ARGV) do
    local prefix = t .. ':'
    for _, rk in ipairs(redis.call('KEYS', prefix .. '*')) do
        if redis.call('TYPE', rk)['ok'] == 'hash' then
            out[#out + 1] = 'C'
            out[#out + 1] = t
            out[#out + 1] = string.sub(rk, #prefix + 1)
            push_hash(redis.call('HGETALL', rk))
        end
    end
    for _, k in ipairs(redis.call('SMEMBERS', t .. '_KEY_SET')) do
        out[#out + 1] = 'P'
        out[#out + 1] = t
        out[#out + 1] = k
        out[#out + 1] = tostring(redis.call('SISMEMBER', t .. '_DEL_SET', k))
        push_hash(redis.call('HGETALL', '_' .. prefix .. k))
    end
end
return out
"#;

/// Reads the effective APPL_DB of `tables` (see the module docs).
#[derive(Debug, Clone)]
pub struct ApplReader {
    script: LuaPlugin,
}

impl Default for ApplReader {
    fn default() -> Self {
        ApplReader {
            script: LuaPlugin::new("headroom_effective_appl_db", READ_LUA),
        }
    }
}

impl ApplReader {
    /// Reads `tables` through `conn` (an APPL_DB connection).
    pub fn read(&mut self, conn: &mut DbConnection, tables: &[&str]) -> Result<RawDb, SwssError> {
        let keys: [&str; 0] = [];
        let lines = self.script.call_lines(conn, &keys, tables)?;
        parse_effective(&lines).ok_or_else(|| SwssError::UnexpectedReply {
            op: "EVALSHA effective APPL_DB read",
            detail: format!("malformed reply of {} lines", lines.len()),
        })
    }
}

/// Parses the read script's output into the effective tables (`None` if malformed).
fn parse_effective(lines: &[String]) -> Option<RawDb> {
    let mut consumed = RawDb::new();
    let mut pending: Vec<(String, String, bool, Fields)> = Vec::new();
    let mut i = 0;
    let take_fields = |i: &mut usize| -> Option<Fields> {
        let n: usize = lines.get(*i)?.parse().ok()?;
        *i += 1;
        let mut f = Fields::new();
        for _ in 0..n {
            let name = lines.get(*i)?.clone();
            let value = lines.get(*i + 1)?.clone();
            f.insert(name, value);
            *i += 2;
        }
        Some(f)
    };
    while i < lines.len() {
        let kind = lines[i].as_str();
        let table = lines.get(i + 1)?.clone();
        let key = lines.get(i + 2)?.clone();
        i += 3;
        match kind {
            "C" => {
                let f = take_fields(&mut i)?;
                consumed.entry(table).or_default().insert(key, f);
            }
            "P" => {
                let del = lines.get(i)? == "1";
                i += 1;
                let f = take_fields(&mut i)?;
                pending.push((table, key, del, f));
            }
            _ => return None,
        }
    }
    for (table, key, del, staged) in pending {
        let t = consumed.entry(table.clone()).or_default();
        let mut merged = if del {
            Fields::new()
        } else {
            t.remove(&key).unwrap_or_default()
        };
        t.remove(&key);
        if staged.is_empty() {
            // A pending key with nothing staged is a DEL for the consumer.
            continue;
        }
        merged.extend(staged);
        t.insert(key, merged);
    }
    consumed.retain(|_, t| !t.is_empty());
    Some(consumed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(pairs: &[(&str, &str)]) -> Fields {
        crate::bufmgr::to_fields(pairs)
    }

    fn db(entries: &[(&str, &str, Fields)]) -> RawDb {
        let mut d = RawDb::new();
        for (t, k, fields) in entries {
            d.entry(t.to_string())
                .or_default()
                .insert(k.to_string(), fields.clone());
        }
        d
    }

    #[test]
    fn equal_tables_need_nothing() {
        let d = db(&[("BUFFER_PG_TABLE", "Ethernet0:3-4", f(&[("profile", "p")]))]);
        assert!(appl_diff(&d, &d, &APPL_TABLES).is_empty());
        assert!(state_diff(&d, &d).is_empty());
    }

    #[test]
    fn changed_fields_only_and_del_then_set_when_a_field_must_go() {
        let want = db(&[
            (
                "BUFFER_PROFILE_TABLE",
                "a",
                f(&[("xon", "1"), ("size", "2")]),
            ),
            ("BUFFER_PROFILE_TABLE", "b", f(&[("xon", "1")])),
            ("BUFFER_PROFILE_TABLE", "new", f(&[("xon", "9")])),
        ]);
        let have = db(&[
            (
                "BUFFER_PROFILE_TABLE",
                "a",
                f(&[("xon", "1"), ("size", "3")]),
            ),
            (
                "BUFFER_PROFILE_TABLE",
                "b",
                f(&[("xon", "1"), ("xoff", "5")]),
            ),
            ("BUFFER_PG_TABLE", "stale:3", f(&[("profile", "x")])),
        ]);
        let ops = appl_diff(&want, &have, &APPL_TABLES);
        let t = |s: &str| s.to_string();
        assert_eq!(
            ops,
            vec![
                Output::ApplDel {
                    table: t("BUFFER_PG_TABLE"),
                    key: t("stale:3")
                },
                Output::ApplSet {
                    table: t("BUFFER_PROFILE_TABLE"),
                    key: t("a"),
                    fields: f(&[("size", "2")])
                },
                Output::ApplDel {
                    table: t("BUFFER_PROFILE_TABLE"),
                    key: t("b")
                },
                Output::ApplSet {
                    table: t("BUFFER_PROFILE_TABLE"),
                    key: t("b"),
                    fields: f(&[("xon", "1")])
                },
                Output::ApplSet {
                    table: t("BUFFER_PROFILE_TABLE"),
                    key: t("new"),
                    fields: f(&[("xon", "9")])
                },
            ]
        );
    }

    #[test]
    fn state_extras_are_deleted_only_in_owned_tables() {
        let want = db(&[("BUFFER_POOL_TABLE", "p", f(&[("size", "1")]))]);
        let have = db(&[
            ("BUFFER_POOL_TABLE", "old", f(&[("size", "1")])),
            ("ASIC_TABLE", "OTHER", f(&[("cell_size", "1")])),
        ]);
        let ops = state_diff(&want, &have);
        assert_eq!(ops.len(), 2);
        assert!(ops.contains(&Output::StateDel {
            table: "BUFFER_POOL_TABLE".into(),
            key: "old".into()
        }));
    }

    #[test]
    fn effective_view_applies_pending_operations() {
        let lines: Vec<String> = [
            "C", "T", "a", "1", "x", "1", //
            "C", "T", "b", "2", "x", "1", "y", "2", //
            "C", "T", "c", "1", "x", "1", //
            "P", "T", "a", "0", "1", "y", "5", // merge
            "P", "T", "b", "1", "1", "z", "3", // del then set
            "P", "T", "c", "1", "0", // del
            "P", "T", "d", "0", "1", "x", "7", // new
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let e = parse_effective(&lines).expect("parse");
        let t = &e["T"];
        assert_eq!(t["a"], f(&[("x", "1"), ("y", "5")]));
        assert_eq!(t["b"], f(&[("z", "3")]));
        assert!(!t.contains_key("c"));
        assert_eq!(t["d"], f(&[("x", "7")]));
        assert!(parse_effective(&["C".to_string()]).is_none());
    }
}
