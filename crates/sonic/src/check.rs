//! The maximum-headroom check (SONiC's `buffer_check_headroom_mellanox.lua`),
//! sonic-buffer.md §6: would a port's PGs, with a new or changed profile, still fit the
//! port's maximum headroom (and, with the shared headroom pool, the port's SHP limit)?
//!
//! Inputs: the request (port, profile name, its size/xon/xoff, optionally the PG being
//! configured), CONFIG_DB (lane count), STATE_DB (`max_headroom_size`, ASIC) and APPL_DB (the
//! port's PGs and their profiles, overlaid with pending producer state exactly as the plugin
//! does: PGs in `BUFFER_PG_TABLE_DEL_SET` dropped, staged `_BUFFER_PG_TABLE` entries win,
//! profiles without `size` read from `_BUFFER_PROFILE_TABLE`).
//!
//! Invariants: the check passes when `max_headroom_size` is not published; otherwise
//! `passed == (max_headroom_size > accumulated) && shp_ok`. The arithmetic is the plugin's, in
//! doubles, including its 8-lane pipeline latency `2·PL − 1` (the headroom plugin uses `2·PL`;
//! quirk §11.4).
//!
//! Deliberate differences (quirks §11.4, §11.11):
//! - PG ranges are counted correctly (`8-15` is 8 PGs; the plugin's single-digit arithmetic
//!   makes it −2);
//! - when the ASIC has no `port_reserved_shp`/`port_max_shp` (VS) the SHP limit is not
//!   evaluated (`shp_limit: None`) and the maximum-headroom part still is; the plugin raises an
//!   error there, which buffermgrd takes as "passed";
//! - a PG whose profile is unknown (or has no size anywhere) is an error; the plugin fails on
//!   nil arithmetic, which buffermgrd takes as "passed".

use std::collections::BTreeMap;

use crate::tables::appl::{ApplDb, ApplTable};
use crate::tables::config::ConfigDb;
use crate::tables::state::StateDb;
use crate::tables::{IdRange, LookupError};

/// Extra mirror headroom per port, bytes (doubled on 8-lane ports).
pub const MIRROR_HEADROOM: f64 = 20480.0;
/// Fixed "other overhead" per port, bytes.
pub const OTHER_OVERHEAD: f64 = 4096.0;

/// The plugin call: `KEYS = [port]`, `ARGV = [profile, size, xon, xoff, new PG]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckRequest {
    /// Port name.
    pub port: String,
    /// Name of the profile being applied.
    pub profile: String,
    /// Its `size`.
    pub size: u64,
    /// Its `xon`.
    pub xon: Option<u64>,
    /// Its `xoff`.
    pub xoff: Option<u64>,
    /// The PG being configured with this profile (added to, or replacing, the port's PGs).
    pub new_pg: Option<IdRange>,
}

/// One PG as the check counted it.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedPg {
    /// Profile name.
    pub profile: String,
    /// Size used (the lossy reservation when the profile's size is 0).
    pub size: f64,
    /// Number of PGs in the range.
    pub count: u64,
    /// Shared-headroom bytes `(xon + xoff − size) × count` it adds (with SHP on).
    pub shp: f64,
}

/// The check's result and intermediates.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckOutcome {
    /// The verdict.
    pub passed: bool,
    /// STATE_DB `max_headroom_size` of the port (`None`: not published, check passes).
    pub max_headroom_size: Option<u64>,
    /// Accumulated headroom: overhead, lossy reservation, mirror, and every PG.
    pub accumulated: f64,
    /// SHP state as orchagent has it (APPL_DB pool xoff ≠ 0).
    pub shp_on: bool,
    /// Σ shared-headroom bytes of the port's PGs.
    pub port_shp: f64,
    /// `(port_max_shp + reserved) × cell_size`, when SHP is on and the ASIC defines both.
    pub shp_limit: Option<f64>,
    /// PGs counted, by id range.
    pub pgs: BTreeMap<IdRange, CheckedPg>,
}

/// Why the check could not be evaluated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckError {
    /// The ASIC entry is missing.
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// A PG of the port refers to a profile APPL_DB (applied or staged) has no size for.
    #[error("headroom check of {port}: PG {pg} uses profile {profile:?}, which has no size in APPL_DB BUFFER_PROFILE_TABLE (applied or pending)")]
    NoProfileSize {
        /// Port.
        port: String,
        /// PG range.
        pg: String,
        /// Profile.
        profile: String,
    },
}

/// Runs the check (sonic-buffer.md §6).
pub fn check_headroom(
    req: &CheckRequest,
    config: &ConfigDb,
    state: &StateDb,
    appl: &ApplDb,
) -> Result<CheckOutcome, CheckError> {
    let Some(max) = state.max_headroom_size(&req.port) else {
        return Ok(CheckOutcome {
            passed: true,
            max_headroom_size: None,
            accumulated: 0.0,
            shp_on: false,
            port_shp: 0.0,
            shp_limit: None,
            pgs: BTreeMap::new(),
        });
    };
    let asic = state.asic()?;
    let eight = config
        .ports
        .get(&req.port)
        .is_some_and(|p| p.lane_count() == 8);
    let mut pl = asic.pipeline_latency;
    let mut mirror = MIRROR_HEADROOM;
    let mut rsv = asic.port_reserved_shp;
    if eight {
        pl = 2.0 * pl - 1.0;
        mirror *= 2.0;
        rsv = rsv.map(|r| r * 2.0);
    }
    let lossy = pl * 1024.0;
    let mut acc = OTHER_OVERHEAD + lossy + mirror;
    let shp_on = appl.shp_size().is_some();

    // The port's PGs: applied minus pending deletes, overridden by staged sets, plus the new PG.
    let empty = Default::default();
    let pending = appl.pending.get(&ApplTable::Pg).unwrap_or(&empty);
    let mut pgs: BTreeMap<IdRange, String> = appl
        .pgs
        .iter()
        .filter(|(k, _)| k.port == req.port && !pending.del_set.contains(&k.key(':')))
        .map(|(k, p)| (k.ids, p.clone()))
        .collect();
    for (key, fields) in &pending.staged {
        let Some((port, ids)) = key.rsplit_once(':') else {
            continue;
        };
        if port != req.port {
            continue;
        }
        if let (Ok(ids), Some(p)) = (IdRange::parse(ids), fields.get("profile")) {
            pgs.insert(ids, crate::tables::reference_name(p).to_string());
        }
    }
    if let Some(ids) = req.new_pg {
        pgs.insert(ids, req.profile.clone());
    }

    let staged_profiles = appl.pending.get(&ApplTable::Profile);
    let mut port_shp = 0.0;
    let mut counted = BTreeMap::new();
    for (ids, profile) in pgs {
        let (size, xon, xoff) = if profile == req.profile {
            (
                Some(req.size as f64),
                req.xon.map(|v| v as f64),
                req.xoff.map(|v| v as f64),
            )
        } else {
            let applied = appl.profiles.get(&profile);
            let from_applied = applied.and_then(|p| p.size).map(|s| {
                (
                    Some(s as f64),
                    p_num(applied.and_then(|p| p.xon)),
                    p_num(applied.and_then(|p| p.xoff)),
                )
            });
            from_applied.unwrap_or_else(|| {
                let staged = staged_profiles.and_then(|s| s.staged.get(&profile));
                let num = |f: &str| {
                    staged
                        .and_then(|s| s.get(f))
                        .and_then(|v| crate::lua::tonumber(v))
                };
                (num("size"), num("xon"), num("xoff"))
            })
        };
        let Some(mut size) = size else {
            return Err(CheckError::NoProfileSize {
                port: req.port.clone(),
                pg: ids.to_string(),
                profile,
            });
        };
        if size == 0.0 {
            size = lossy;
        }
        let n = ids.count();
        acc += size * n as f64;
        let mut shp = 0.0;
        if shp_on {
            if let (Some(xon), Some(xoff)) = (xon, xoff) {
                if size < xon + xoff {
                    shp = (xon + xoff - size) * n as f64;
                    port_shp += shp;
                }
            }
        }
        counted.insert(
            ids,
            CheckedPg {
                profile,
                size,
                count: n,
                shp,
            },
        );
    }
    let shp_limit = match (shp_on, asic.port_max_shp, rsv) {
        (true, Some(m), Some(r)) => Some((m + r) * f64::from(asic.cell_size)),
        _ => None,
    };
    let shp_ok = shp_limit.is_none_or(|l| port_shp <= l);
    Ok(CheckOutcome {
        passed: (max as f64) > acc && shp_ok,
        max_headroom_size: Some(max),
        accumulated: acc,
        shp_on,
        port_shp,
        shp_limit,
        pgs: counted,
    })
}

fn p_num(v: Option<u64>) -> Option<f64> {
    v.map(|v| v as f64)
}
