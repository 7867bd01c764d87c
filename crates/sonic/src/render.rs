//! Steady state: the APPL_DB buffermgrd converges to for a CONFIG_DB + STATE_DB snapshot,
//! with a chosen headroom model. No events, retries, timers or warm-reboot gating (that is
//! the buffermgrd state machine of sonic-buffer.md §7, built on top of this crate).
//!
//! Rules (§7.3–§7.7, §7.8 without a zero-profile file):
//! - static pools are copied with their size (and configured `xoff`); dynamic pools get their
//!   size from the pool algorithm ([`crate::pool`]), applied as buffermgrd applies it (§5.4);
//! - every CONFIG_DB profile except `headroom_type: dynamic` ones is copied;
//! - admin-down ports get nothing (reclaiming without zero profiles = removing the items; the
//!   Mellanox zero profiles reserve nothing either, so pool sizes are the same);
//! - on admin-up ports: a dynamic PG (profile `NULL`/absent or `headroom_type: dynamic`) gets
//!   the profile `pg_lossless_<speed>_<cable>…_profile` (§7.5), computed once per name with the
//!   model; it is skipped when the port is not READY (no effective speed or no cable length)
//!   or the cable is `0m`; static PGs, queues and profile lists are copied;
//! - the headroom check (§6) is evaluated per port for information; unlike buffermgrd, a
//!   failure does not stop the port's PGs from being written.
//!
//! Invariant: the result is a deterministic function of the inputs; the pool result is
//! computed on the rendered APPL_DB (so it is never the fallback).

use std::collections::BTreeMap;

use crate::check::{check_headroom, CheckError, CheckOutcome, CheckRequest};
use crate::model::{HeadroomArgs, HeadroomEnv, HeadroomError, HeadroomModel};
use crate::naming::{buffermgrd_model_number, dynamic_profile_name, ProfileNameParts};
use crate::pool::{compute, pool_updates, PoolError, PoolOutcome};
use crate::tables::appl::{ApplDb, ApplPool, ApplProfile};
use crate::tables::config::{ConfigDb, INGRESS_LOSSLESS_POOL};
use crate::tables::state::StateDb;
use crate::tables::{LookupError, Threshold};

/// The rendered steady state.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// APPL_DB buffer tables.
    pub appl: ApplDb,
    /// The pool algorithm's result on `appl` (already applied to `appl.pools`).
    pub pools: PoolOutcome,
    /// Headroom check per admin-up port.
    pub checks: BTreeMap<String, CheckOutcome>,
    /// Items not rendered and why (e.g. `Ethernet8|3-4: port not ready: no cable length`).
    pub notes: Vec<String>,
}

/// Why the steady state could not be rendered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// A needed entry is missing (ASIC, traffic pattern).
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// A headroom computation failed.
    #[error("headroom of {port}: {error}")]
    Headroom {
        /// The port.
        port: String,
        /// The error.
        error: HeadroomError,
    },
    /// The pool algorithm failed.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// The headroom check could not be evaluated.
    #[error(transparent)]
    Check(#[from] CheckError),
}

/// Renders the steady-state APPL_DB for `config` and `state` with `model`.
pub fn render(
    config: &ConfigDb,
    state: &StateDb,
    model: &dyn HeadroomModel,
) -> Result<Rendered, RenderError> {
    let env = HeadroomEnv::from_tables(config, state)?;
    let default_th = config
        .default_lossless()
        .and_then(|d| d.default_dynamic_th)
        .unwrap_or(0);
    let platform_model = config.platform().and_then(buffermgrd_model_number);
    let mut appl = ApplDb::default();
    let mut notes = Vec::new();

    for (name, p) in &config.pools {
        if p.size.is_some() {
            let xoff = if name == INGRESS_LOSSLESS_POOL {
                p.xoff
            } else {
                None
            };
            appl.pools.insert(
                name.clone(),
                ApplPool {
                    pool_type: Some(p.pool_type),
                    mode: Some(p.mode),
                    size: p.size,
                    xoff,
                },
            );
        }
    }
    for (name, p) in &config.profiles {
        if p.is_dynamic_headroom() {
            continue;
        }
        appl.profiles.insert(
            name.clone(),
            ApplProfile {
                pool: p.pool.clone(),
                xon: p.xon,
                xon_offset: p.xon_offset,
                xoff: p.xoff,
                size: p.size,
                threshold: p.threshold,
                packet_discard_action: p.packet_discard_action.clone(),
                empty_headroom: false,
            },
        );
    }

    for (port_name, port) in &config.ports {
        if !port.is_up() {
            continue;
        }
        let args = HeadroomArgs::for_port(config, state, port_name);
        let cable = config.cable_length(port_name);
        for (key, pg) in config.pgs_of(port_name) {
            if !config.pg_is_dynamic(pg) {
                if let Some(p) = &pg.profile {
                    appl.pgs.insert(key.clone(), p.clone());
                }
                continue;
            }
            let (args, cable) = match (&args, cable) {
                (Ok(a), Some(c)) => (a, c),
                (Err(e), _) => {
                    notes.push(format!("{}: port not ready: {e}", key.key('|')));
                    continue;
                }
                (Ok(_), None) => {
                    notes.push(format!("{}: port not ready: no cable length", key.key('|')));
                    continue;
                }
            };
            if cable.is_zero() {
                notes.push(format!(
                    "{}: cable length 0m, lossless PG not applied",
                    key.key('|')
                ));
                continue;
            }
            let th = match pg
                .profile
                .as_ref()
                .and_then(|p| config.profiles.get(p))
                .and_then(|p| p.threshold)
            {
                Some(Threshold::Dynamic(n)) => n,
                _ => default_th,
            };
            let (speed, mtu, th_s, def_s) = (
                args.speed_mbps.to_string(),
                args.port_mtu.to_string(),
                th.to_string(),
                default_th.to_string(),
            );
            let name = dynamic_profile_name(&ProfileNameParts {
                speed: &speed,
                cable: cable.text(),
                mtu: &mtu,
                threshold: &th_s,
                default_threshold: &def_s,
                gearbox_model: "",
                mellanox: model.name() == "mellanox",
                lane_count: args.lane_count,
                model: platform_model,
            });
            if !appl.profiles.contains_key(&name) {
                let h = model
                    .headroom(args, &env)
                    .map_err(|error| RenderError::Headroom {
                        port: port_name.clone(),
                        error,
                    })?;
                appl.profiles.insert(
                    name.clone(),
                    ApplProfile::lossless(
                        INGRESS_LOSSLESS_POOL,
                        h.xon,
                        h.xoff,
                        h.size,
                        Threshold::Dynamic(th),
                    ),
                );
            }
            appl.pgs.insert(key.clone(), name);
        }
        for (key, q) in config.queues.iter().filter(|(k, _)| &k.port == port_name) {
            appl.queues.insert(key.clone(), q.profile.clone());
        }
        if let Some(l) = config.ingress_profile_lists.get(port_name) {
            appl.ingress_profile_lists
                .insert(port_name.clone(), l.clone());
        }
        if let Some(l) = config.egress_profile_lists.get(port_name) {
            appl.egress_profile_lists
                .insert(port_name.clone(), l.clone());
        }
    }

    let pools = compute(config, state, &appl)?;
    for (name, rec) in pool_updates(&pools, config, &appl, state.mmu_size) {
        appl.pools.insert(name, rec);
    }

    let mut checks = BTreeMap::new();
    for (port_name, port) in &config.ports {
        if port.is_up() {
            let req = CheckRequest {
                port: port_name.clone(),
                profile: String::new(),
                size: 0,
                xon: None,
                xoff: None,
                new_pg: None,
            };
            checks.insert(
                port_name.clone(),
                check_headroom(&req, config, state, &appl)?,
            );
        }
    }
    Ok(Rendered {
        appl,
        pools,
        checks,
        notes,
    })
}
