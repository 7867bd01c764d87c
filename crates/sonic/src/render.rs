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
//!   model; the name, `_8lane` included, depends on the platform (Mellanox ASIC key, platform
//!   model number) and never on the headroom model ([`crate::naming`]); it is skipped when the port is not READY (no effective speed or no cable length)
//!   or the cable is `0m`; static PGs, queues and profile lists are copied;
//! - the headroom check (§6) is evaluated per port for information; unlike buffermgrd, a
//!   failure does not stop the port's PGs from being written.
//!
//! Invariant: the result is a deterministic function of the inputs; the pool result is
//! computed on the rendered APPL_DB (so it is never the fallback).

use std::collections::BTreeMap;

use crate::check::{check_headroom, CheckError, CheckOutcome, CheckRequest};
use crate::model::{HeadroomArgs, HeadroomEnv, HeadroomError, HeadroomModel};
use crate::naming::{
    buffermgrd_model_number, dynamic_profile_name, is_mellanox_asic, ProfileNameParts,
};
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
    let mellanox_platform = is_mellanox_asic(&env.asic.name);
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
                mellanox: mellanox_platform,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::{mellanox_dynamic, DefaultOptions, DefaultPort};
    use crate::model::{Generic, Mellanox};
    use crate::tables::config::Port;
    use crate::tables::state::AsicModel;
    use crate::tables::CableLength;

    /// Ports (speed, lanes) on `platform`, all 5 m, rendered on `asic` with `model`; returns
    /// the profile name of each port's PG 3-4.
    fn names(
        platform: &str,
        asic: AsicModel,
        ports: &[(u64, u32)],
        model: &dyn HeadroomModel,
    ) -> Vec<String> {
        let ports: Vec<DefaultPort> = ports
            .iter()
            .enumerate()
            .map(|(i, (s, l))| DefaultPort {
                name: format!("Ethernet{}", 8 * i),
                port: Port::up(*s, *l),
                cable: CableLength::parse("5m").expect("cable"),
            })
            .collect();
        let config = mellanox_dynamic(&ports, &DefaultOptions::new(platform, 200_000_000));
        let mut state = StateDb::with_asic(asic.params());
        state.mmu_size = Some(200_000_000);
        let r = render(&config, &state, model).expect("renders");
        ports
            .iter()
            .map(|p| {
                r.appl
                    .pgs
                    .iter()
                    .find(|(k, _)| k.port == p.name && k.ids.lo() == 3)
                    .map(|(_, v)| v.clone())
                    .expect("PG 3-4 rendered")
            })
            .collect()
    }

    const PORTS: [(u64, u32); 4] = [(200_000, 8), (400_000, 8), (800_000, 8), (200_000, 4)];

    #[test]
    fn eight_lane_suffix_follows_platform_model_number() {
        // SN4700 (model 4xxx): 8-lane ports below 400G only.
        let sn4700 = names(
            "x86_64-mlnx_msn4700-r0",
            AsicModel::Spectrum3,
            &PORTS,
            &Mellanox,
        );
        assert_eq!(
            sn4700,
            [
                "pg_lossless_200000_5m_8lane_profile",
                "pg_lossless_400000_5m_profile",
                "pg_lossless_800000_5m_8lane_profile",
                "pg_lossless_200000_5m_profile",
            ]
        );
        // SN5600 (model 5xxx): 8-lane ports other than 800G.
        let sn5600 = names(
            "x86_64-nvidia_sn5600-r0",
            AsicModel::Spectrum4,
            &PORTS,
            &Mellanox,
        );
        assert_eq!(
            sn5600,
            [
                "pg_lossless_200000_5m_8lane_profile",
                "pg_lossless_400000_5m_8lane_profile",
                "pg_lossless_800000_5m_profile",
                "pg_lossless_200000_5m_profile",
            ]
        );
        // SN3800 (3xxx) and SN6600 (6xxx): never; 8- and 4-lane 200G ports share one name.
        for (platform, asic) in [
            ("x86_64-mlnx_msn3800-r0", AsicModel::Spectrum2),
            ("x86_64-nvidia_sn6600_ld-r0", AsicModel::Spectrum6),
        ] {
            let n = names(platform, asic, &PORTS, &Mellanox);
            assert!(n.iter().all(|n| !n.contains("_8lane")), "{platform}: {n:?}");
            assert_eq!(n[0], n[3]);
        }
    }

    #[test]
    fn eight_lane_suffix_does_not_depend_on_the_headroom_model() {
        let mellanox = names(
            "x86_64-mlnx_msn4700-r0",
            AsicModel::Spectrum3,
            &PORTS,
            &Mellanox,
        );
        let generic = names(
            "x86_64-mlnx_msn4700-r0",
            AsicModel::Spectrum3,
            &PORTS,
            &Generic,
        );
        assert_eq!(mellanox, generic);
    }

    #[test]
    fn eight_lane_suffix_needs_a_mellanox_platform() {
        // The VS runs the Mellanox plugins with ASIC_VENDOR=vs: no suffix even with an SN4700
        // platform string.
        let vs = names("x86_64-mlnx_msn4700-r0", AsicModel::Vs, &PORTS, &Mellanox);
        assert!(vs.iter().all(|n| !n.contains("_8lane")), "{vs:?}");
    }
}
