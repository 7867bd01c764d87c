//! SONiC's configuration validation: what its YANG models and `config` CLI refuse in a
//! CONFIG_DB that [`ConfigDb::from_raw`] can already type.
//!
//! [`ConfigDb::from_raw`] checks SONiC's *encodings* (a number is a number, a reference names
//! something); buffermgrd itself accepts anything that parses, and [`crate::bufmgr`] mirrors
//! it, so these rules are not part of the table model. They are the one validation that
//! `headroom sonic plan`, `diff`, `show` and `config` apply to every CONFIG_DB they read or
//! write, so that no command accepts what another refuses.
//!
//! Rules, with their bounds and where the bounds come from:
//! - `BUFFER_PG` / `BUFFER_QUEUE`: the port exists in `PORT` (YANG leafref); the ids are below
//!   the port's STATE_DB `BUFFER_MAX_PARAM_TABLE` `max_priority_groups` / `max_queues`, or,
//!   where STATE_DB does not say, [`DEFAULT_PRIORITY_GROUPS`] (YANG `pg_num` `[0-7]`) /
//!   [`DEFAULT_QUEUES`] (YANG `qindex` `0`–`15`); the id ranges of one port are disjoint (the
//!   CLI's rule; overlapping PGs would be configured twice in the ASIC).
//! - `CABLE_LENGTH`: the port exists; the length is at most [`MAX_CABLE_METRES`] (100 km).
//!   SONiC's YANG accepts any `[0-9]+m`; the bound is ours: lossless (PFC) links are
//!   datacenter links, and 100 km of cable already needs more headroom than any switch buffer
//!   holds, so a longer value is a typo (and `99999999999999999999m` is not a length).
//! - `PORT.mtu` and `LOSSLESS_TRAFFIC_PATTERN.mtu`: at most [`MAX_MTU`] (YANG `1..9216`).
//! - `PORT.speed`: at most [`MAX_PORT_SPEED`] (1.6 Tb/s, the fastest Ethernet rate, IEEE
//!   802.3dj).
//! - `dynamic_th` (profiles) and `default_dynamic_th`: in [`DYNAMIC_TH`] (−8..=8, the CLI's
//!   range).
//! - byte sizes (`BUFFER_POOL` `size`/`xoff`, `BUFFER_PROFILE` `xon`/`xon_offset`/`xoff`/
//!   `size`/`static_th`): at most [`MAX_BUFFER_BYTES`] (4 GiB, twenty times the largest switch
//!   buffer of 2024; also keeps every sum of them far from overflow).
//! - the shared headroom pool size (`BUFFER_POOL|ingress_lossless_pool.xoff`) is below the
//!   buffer size (STATE_DB `mmu_size`, else `egress_lossless_pool.size`), and
//!   `over_subscribe_ratio` is in `[0, number of ports]` (the CLI's rules).
//!
//! Invariant: [`validate`] reports every violation (in table/key order), each naming table,
//! key, field or id range, the value and the accepted range; it never changes anything.

use std::ops::RangeInclusive;

use crate::tables::config::{names, ConfigDb, EGRESS_LOSSLESS_POOL, INGRESS_LOSSLESS_POOL};
use crate::tables::state::StateDb;
use crate::tables::{PortIds, TableError, TableErrors, Threshold};

/// Priority groups of a port when STATE_DB does not publish `max_priority_groups`.
pub const DEFAULT_PRIORITY_GROUPS: u64 = 8;
/// Queues of a port when STATE_DB does not publish `max_queues`.
pub const DEFAULT_QUEUES: u64 = 16;
/// The longest cable length accepted, metres (100 km).
pub const MAX_CABLE_METRES: f64 = 100_000.0;
/// The largest MTU accepted, bytes.
pub const MAX_MTU: u32 = 9216;
/// The fastest port speed accepted, Mb/s.
pub const MAX_PORT_SPEED: u64 = 1_600_000;
/// The accepted `dynamic_th` exponents.
pub const DYNAMIC_TH: RangeInclusive<i8> = -8..=8;
/// The largest byte size accepted in a pool or profile.
pub const MAX_BUFFER_BYTES: u64 = 1 << 32;

/// How many priority groups or queues a port has, and where that number comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdLimit {
    /// The port.
    pub port: String,
    /// `priority groups` or `queues`.
    pub what: &'static str,
    /// Number of ids (ids are `0..count`); at least 1.
    pub count: u64,
    /// Where `count` comes from, e.g. `STATE_DB BUFFER_MAX_PARAM_TABLE|Ethernet0.max_queues`.
    pub source: String,
}

impl std::fmt::Display for IdLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} has {} {} (0-{}, {})",
            self.port,
            self.count,
            self.what,
            self.count - 1,
            self.source
        )
    }
}

fn id_limit(
    port: &str,
    published: Option<u64>,
    field: &str,
    what: &'static str,
    default: u64,
    yang: &str,
) -> IdLimit {
    // 0 is how orchagent says "not known yet" (sonic-buffer.md §7.3).
    match published.filter(|n| *n > 0) {
        Some(count) => IdLimit {
            port: port.to_string(),
            what,
            count,
            source: format!("STATE_DB BUFFER_MAX_PARAM_TABLE|{port}.{field}"),
        },
        None => IdLimit {
            port: port.to_string(),
            what,
            count: default,
            source: format!("SONiC's YANG {yang}; STATE_DB does not publish {field}"),
        },
    }
}

/// The priority groups of `port`: STATE_DB `max_priority_groups`, else 8.
pub fn priority_groups(state: Option<&StateDb>, port: &str) -> IdLimit {
    let published = state
        .and_then(|s| s.port_max.get(port))
        .and_then(|m| m.max_priority_groups);
    id_limit(
        port,
        published,
        "max_priority_groups",
        "priority groups",
        DEFAULT_PRIORITY_GROUPS,
        "pg_num [0-7]",
    )
}

/// The queues of `port`: STATE_DB `max_queues`, else 16.
pub fn queues(state: Option<&StateDb>, port: &str) -> IdLimit {
    let published = state
        .and_then(|s| s.port_max.get(port))
        .and_then(|m| m.max_queues);
    id_limit(
        port,
        published,
        "max_queues",
        "queues",
        DEFAULT_QUEUES,
        "qindex 0-15",
    )
}

/// Why a cable length of `metres` is refused, if it is (the reason names the bound).
pub fn cable_length_error(metres: f64) -> Option<String> {
    (metres > MAX_CABLE_METRES).then(|| {
        format!(
            "at most {}m (100 km) is accepted",
            crate::lua::format_number(MAX_CABLE_METRES)
        )
    })
}

/// The buffer size the shared headroom pool must stay below, and where it comes from.
pub fn buffer_size(config: &ConfigDb, state: Option<&StateDb>) -> Option<(u64, &'static str)> {
    state
        .and_then(|s| s.mmu_size)
        .map(|m| (m, "STATE_DB BUFFER_MAX_PARAM_TABLE|global.mmu_size"))
        .or_else(|| {
            config
                .pools
                .get(EGRESS_LOSSLESS_POOL)
                .and_then(|p| p.size)
                .map(|m| (m, "BUFFER_POOL|egress_lossless_pool.size"))
        })
}

/// Checks `config` (with STATE_DB's per-port limits and MMU size, when known) against the
/// rules of the module documentation. Returns every violation.
pub fn validate(config: &ConfigDb, state: Option<&StateDb>) -> Result<(), TableErrors> {
    let mut errs = Vec::new();
    ports(config, &mut errs);
    for (k, m) in &config.cable_lengths {
        for (port, c) in m {
            if let Some(allowed) = cable_length_error(c.metres()) {
                errs.push(out_of_range(
                    names::CABLE_LENGTH,
                    k,
                    format!("cable length of `{port}` = {:?}", c.text()),
                    allowed,
                ));
            }
            if !config.ports.contains_key(port) {
                errs.push(no_port(names::CABLE_LENGTH, k, port));
            }
        }
    }
    pools_and_profiles(config, state, &mut errs);
    let by_table = [
        (
            names::BUFFER_PG,
            &config.pgs.keys().collect::<Vec<_>>(),
            "PG",
        ),
        (
            names::BUFFER_QUEUE,
            &config.queues.keys().collect::<Vec<_>>(),
            "queue",
        ),
    ];
    for (table, keys, noun) in by_table {
        id_ranges(config, state, table, keys, noun, &mut errs);
    }
    for (table, lists) in [
        (
            names::BUFFER_PORT_INGRESS_PROFILE_LIST,
            &config.ingress_profile_lists,
        ),
        (
            names::BUFFER_PORT_EGRESS_PROFILE_LIST,
            &config.egress_profile_lists,
        ),
    ] {
        for port in lists.keys().filter(|p| !config.ports.contains_key(*p)) {
            errs.push(no_port(table, port, port));
        }
    }
    if let Some(d) = config.default_lossless.iter().next() {
        let (k, p) = d;
        let table = names::DEFAULT_LOSSLESS_BUFFER_PARAMETER;
        if let Some(th) = p.default_dynamic_th.filter(|t| !DYNAMIC_TH.contains(t)) {
            errs.push(out_of_range(
                table,
                k,
                format!("field `default_dynamic_th` = \"{th}\""),
                dynamic_th_range(),
            ));
        }
        let n = config.ports.len();
        if let Some(r) = p
            .over_subscribe_ratio
            .filter(|r| !(0.0..=n as f64).contains(r))
        {
            errs.push(out_of_range(
                table,
                k,
                format!(
                    "field `over_subscribe_ratio` = \"{}\"",
                    crate::lua::format_number(r)
                ),
                format!("0 to the number of ports ({n})"),
            ));
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(TableErrors(errs))
    }
}

fn out_of_range(table: &str, key: &str, what: String, allowed: String) -> TableError {
    TableError::OutOfRange {
        table: table.to_string(),
        key: key.to_string(),
        what,
        allowed,
    }
}

fn no_port(table: &str, key: &str, port: &str) -> TableError {
    TableError::Inconsistent {
        table: table.to_string(),
        key: key.to_string(),
        reason: format!("port {port} does not exist in PORT"),
    }
}

fn dynamic_th_range() -> String {
    format!("{}..={}", DYNAMIC_TH.start(), DYNAMIC_TH.end())
}

fn ports(config: &ConfigDb, errs: &mut Vec<TableError>) {
    for (name, p) in &config.ports {
        if let Some(s) = p.speed.filter(|s| *s > MAX_PORT_SPEED) {
            errs.push(out_of_range(
                names::PORT,
                name,
                format!("field `speed` = \"{s}\""),
                format!("at most {MAX_PORT_SPEED} Mb/s (1.6T) is accepted"),
            ));
        }
        if let Some(m) = p.mtu.filter(|m| *m > MAX_MTU) {
            errs.push(out_of_range(
                names::PORT,
                name,
                format!("field `mtu` = \"{m}\""),
                format!("1..={MAX_MTU} bytes"),
            ));
        }
    }
    for (k, p) in &config.traffic_patterns {
        if p.mtu > MAX_MTU {
            errs.push(out_of_range(
                names::LOSSLESS_TRAFFIC_PATTERN,
                k,
                format!("field `mtu` = \"{}\"", p.mtu),
                format!("1..={MAX_MTU} bytes"),
            ));
        }
    }
}

fn pools_and_profiles(config: &ConfigDb, state: Option<&StateDb>, errs: &mut Vec<TableError>) {
    let bytes = |errs: &mut Vec<TableError>, table: &str, key: &str, field: &str, v: u64| {
        if v > MAX_BUFFER_BYTES {
            errs.push(out_of_range(
                table,
                key,
                format!("field `{field}` = \"{v}\""),
                format!("at most {MAX_BUFFER_BYTES} bytes (4 GiB) is accepted"),
            ));
        }
    };
    for (k, p) in &config.pools {
        for (field, v) in [("size", p.size), ("xoff", p.xoff)] {
            if let Some(v) = v {
                bytes(errs, names::BUFFER_POOL, k, field, v);
            }
        }
    }
    if let (Some(shp), Some((mmu, from))) =
        (config.configured_shp_size(), buffer_size(config, state))
    {
        if shp >= mmu && shp <= MAX_BUFFER_BYTES {
            errs.push(out_of_range(
                names::BUFFER_POOL,
                INGRESS_LOSSLESS_POOL,
                format!("field `xoff` (shared headroom pool size) = \"{shp}\""),
                format!("less than the buffer size {mmu} ({from})"),
            ));
        }
    }
    for (k, p) in &config.profiles {
        for (field, v) in [
            ("xon", p.xon),
            ("xon_offset", p.xon_offset),
            ("xoff", p.xoff),
            ("size", p.size),
        ] {
            if let Some(v) = v {
                bytes(errs, names::BUFFER_PROFILE, k, field, v);
            }
        }
        match p.threshold {
            Some(Threshold::Static(v)) => bytes(errs, names::BUFFER_PROFILE, k, "static_th", v),
            Some(Threshold::Dynamic(th)) if !DYNAMIC_TH.contains(&th) => {
                errs.push(out_of_range(
                    names::BUFFER_PROFILE,
                    k,
                    format!("field `dynamic_th` = \"{th}\""),
                    dynamic_th_range(),
                ));
            }
            _ => {}
        }
    }
}

/// Port existence, id bounds and disjointness of the `BUFFER_PG` or `BUFFER_QUEUE` keys
/// (`keys` sorted by port, then range).
fn id_ranges(
    config: &ConfigDb,
    state: Option<&StateDb>,
    table: &str,
    keys: &[&PortIds],
    noun: &str,
    errs: &mut Vec<TableError>,
) {
    for (i, k) in keys.iter().enumerate() {
        let key = k.key('|');
        if !config.ports.contains_key(&k.port) {
            errs.push(no_port(table, &key, &k.port));
            continue;
        }
        let limit = if table == names::BUFFER_PG {
            priority_groups(state, &k.port)
        } else {
            queues(state, &k.port)
        };
        if u64::from(k.ids.hi()) >= limit.count {
            errs.push(out_of_range(
                table,
                &key,
                format!("{noun} {}", k.ids),
                limit.to_string(),
            ));
        }
        // Sorted by (port, lo, hi): an overlap is always with an earlier key of the port.
        if let Some(prev) = keys[..i]
            .iter()
            .rev()
            .take_while(|p| p.port == k.port)
            .find(|p| p.ids.overlaps(k.ids))
        {
            errs.push(TableError::Inconsistent {
                table: table.to_string(),
                key,
                reason: format!(
                    "{noun} {} overlaps {table}|{} ({noun} ranges of a port must be disjoint)",
                    k.ids,
                    prev.key('|')
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::raw::from_nested_json;

    fn errors(text: &str) -> Vec<String> {
        let raw = from_nested_json(text).expect("json");
        let config = ConfigDb::from_raw(&raw).expect("typed");
        match validate(&config, None) {
            Ok(()) => Vec::new(),
            Err(e) => e.errors().iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn pg_and_queue_ids() {
        let errs = errors(
            r#"{"PORT": {"Ethernet0": {"speed": "100000"}},
                "BUFFER_PG": {"Ethernet0|3-4": {}, "Ethernet0|4": {}, "Ethernet0|10-11": {},
                              "Ethernet0|7-8": {}, "Ethernet9|3": {}},
                "BUFFER_POOL": {"e": {"type": "egress"}},
                "BUFFER_PROFILE": {"q": {"pool": "e"}},
                "BUFFER_QUEUE": {"Ethernet0|15": {"profile": "q"}, "Ethernet0|16": {"profile": "q"}}}"#,
        );
        assert_eq!(
            errs,
            [
                "BUFFER_PG|Ethernet0|4: PG 4 overlaps BUFFER_PG|Ethernet0|3-4 (PG ranges of a \
                 port must be disjoint)",
                "BUFFER_PG|Ethernet0|7-8: PG 7-8 is out of range: Ethernet0 has 8 priority \
                 groups (0-7, SONiC's YANG pg_num [0-7]; STATE_DB does not publish \
                 max_priority_groups)",
                "BUFFER_PG|Ethernet0|10-11: PG 10-11 is out of range: Ethernet0 has 8 \
                 priority groups (0-7, SONiC's YANG pg_num [0-7]; STATE_DB does not publish \
                 max_priority_groups)",
                "BUFFER_PG|Ethernet9|3: port Ethernet9 does not exist in PORT",
                "BUFFER_QUEUE|Ethernet0|16: queue 16 is out of range: Ethernet0 has 16 \
                 queues (0-15, SONiC's YANG qindex 0-15; STATE_DB does not publish max_queues)",
            ]
        );
    }

    #[test]
    fn numbers_out_of_range() {
        let errs = errors(
            r#"{"PORT": {"Ethernet0": {"speed": "3200000", "mtu": "65535"}},
                "CABLE_LENGTH": {"AZURE": {"Ethernet0": "99999999999999999999m", "Ethernet4": "5m"}},
                "BUFFER_POOL": {"egress_lossless_pool": {"type": "egress", "size": "1000"},
                                "ingress_lossless_pool": {"type": "ingress", "xoff": "1000"}},
                "BUFFER_PROFILE": {"p": {"pool": "ingress_lossless_pool", "dynamic_th": "9",
                                         "size": "18446744073709551615"}},
                "DEFAULT_LOSSLESS_BUFFER_PARAMETER": {"AZURE": {"over_subscribe_ratio": "2"}}}"#,
        );
        let want = [
            "PORT|Ethernet0: field `speed` = \"3200000\" is out of range",
            "PORT|Ethernet0: field `mtu` = \"65535\" is out of range: 1..=9216 bytes",
            "CABLE_LENGTH|AZURE: cable length of `Ethernet0` = \"99999999999999999999m\" is out \
             of range: at most 100000m (100 km) is accepted",
            "CABLE_LENGTH|AZURE: port Ethernet4 does not exist in PORT",
            "BUFFER_POOL|ingress_lossless_pool: field `xoff` (shared headroom pool size) = \
             \"1000\" is out of range: less than the buffer size 1000 \
             (BUFFER_POOL|egress_lossless_pool.size)",
            "BUFFER_PROFILE|p: field `size` = \"18446744073709551615\" is out of range",
            "BUFFER_PROFILE|p: field `dynamic_th` = \"9\" is out of range: -8..=8",
            "DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE: field `over_subscribe_ratio` = \"2\" is out \
             of range: 0 to the number of ports (1)",
        ];
        assert_eq!(errs.len(), want.len(), "{errs:#?}");
        for (e, w) in errs.iter().zip(want) {
            assert!(e.starts_with(w), "{e:?} does not start with {w:?}");
        }
    }

    #[test]
    fn state_db_limits_win() {
        let raw = from_nested_json(
            r#"{"PORT": {"Ethernet0": {"speed": "100000"}}, "BUFFER_PG": {"Ethernet0|8-9": {}}}"#,
        )
        .expect("json");
        let config = ConfigDb::from_raw(&raw).expect("typed");
        let state = StateDb::from_raw(
            &from_nested_json(
                r#"{"BUFFER_MAX_PARAM_TABLE": {"Ethernet0": {"max_priority_groups": "16"}}}"#,
            )
            .expect("json"),
        )
        .expect("typed");
        assert_eq!(validate(&config, Some(&state)), Ok(()));
        assert!(validate(&config, None).is_err());
        assert_eq!(
            priority_groups(Some(&state), "Ethernet0").source,
            "STATE_DB BUFFER_MAX_PARAM_TABLE|Ethernet0.max_priority_groups"
        );
    }
}
