//! The driver of the ingress edges' injection limits ([`headroom_mech::injection`]): each
//! switch port from a host may have at most `[fabric.flow_channels.injection] port` bytes
//! forwarded into the fabric and not yet acknowledged, and each injection limit id (ILID,
//! the applications mapped to it) within such a port at most its absolute limit and its
//! share of the node limit (`[[fabric.flow_channels.injection.ilid]]`, `node`).
//!
//! - A data frame leaving a switch that it entered from a host adds its units to that
//!   port's count and to its flow's ILID's count there; the channel it left on remembers
//!   that ILID until it is released. An ACK coming home to the port takes the units off
//!   both counts.
//! - The egress arbitration holds a frame from a host whose port or ILID is at its limit
//!   (`channel_gate`); an ACK coming home looks again at the flows held at every output of
//!   the switch (they may wait at any of them, and a drained ILID grows the others'
//!   shares).
//!
//! Invariants (checked through `check_channels`): each host port's count is the sum of the
//! `flow_extent` of the channels that entered there, and the sum of its ILIDs' counts, so
//! a drained run ends with every count at 0; a flow held by a limit has data of its port
//! in flight (an ACK will come).

use headroom_mech::injection::{IlidInjection, IlidLimits, InjectionError, PortInjection, ILIDS};
use rustc_hash::FxHashMap;

/// The injection counters of a run's ingress edges.
#[derive(Debug)]
pub(super) struct EdgeInjection {
    /// The port limit, in units of the channels' counters (`None`: none).
    limit: Option<u64>,
    /// Per global port: whether it is a switch port from a host, and its count.
    ports: Vec<(bool, PortInjection)>,
    /// Per switch: the global index of its local port 0.
    first_port: Vec<u32>,
    /// The ILID limits, if any.
    ilids: Option<EdgeIlids>,
}

/// The ILID counters of the ingress edges.
#[derive(Debug)]
struct EdgeIlids {
    /// The limits, in units.
    limits: IlidLimits,
    /// Per flow: its ILID.
    ilid_of_flow: Vec<u8>,
    /// Per global port: its ILIDs' counts (used for ports from hosts only).
    ports: Vec<IlidInjection>,
    /// (global port from a host, channel id there) → the ILID of the channel's flow, while
    /// the channel has data in flight.
    channels: FxHashMap<(u32, u16), u8>,
}

impl EdgeInjection {
    /// Counters for the ports whose entries in `from_host` are set, for switches whose
    /// ports start at `first_port`, under a port limit of `limit` units and, with `ilids`,
    /// the ILID limits (units) with each flow's ILID.
    pub(super) fn new(
        limit: Option<u64>,
        ilids: Option<(IlidLimits, Vec<u8>)>,
        from_host: &[bool],
        first_port: Vec<u32>,
    ) -> Self {
        EdgeInjection {
            limit,
            ports: from_host
                .iter()
                .map(|&h| (h, PortInjection::default()))
                .collect(),
            first_port,
            ilids: ilids.map(|(limits, ilid_of_flow)| EdgeIlids {
                limits,
                ilid_of_flow,
                ports: vec![IlidInjection::default(); from_host.len()],
                channels: FxHashMap::default(),
            }),
        }
    }

    /// Whether switch `s` may forward a frame of `flow` and `units` that came in on its
    /// local port `in_port` (always, unless that port is from a host at its limit, or the
    /// flow's ILID there is at its).
    pub(super) fn may_inject(&self, s: u32, in_port: u16, flow: u32, units: u64) -> bool {
        let gp = self.first_port[s as usize] + u32::from(in_port);
        let Some((true, p)) = self.ports.get(gp as usize) else {
            return true;
        };
        let port_ok = self.limit.is_none_or(|l| p.may_inject(units, l));
        port_ok
            && self.ilids.as_ref().is_none_or(|e| {
                let ilid = usize::from(e.ilid(flow));
                e.ports[gp as usize].may_inject(ilid, units, &e.limits)
            })
    }

    /// A frame of `flow` and `units` from global port `gp` left its switch on the channel
    /// `channel` (its id at `gp`): counted if `gp` is from a host.
    pub(super) fn injected(&mut self, gp: u32, channel: u16, flow: u32, units: u64) {
        let Some((true, p)) = self.ports.get_mut(gp as usize) else {
            return;
        };
        p.injected(units);
        if let Some(e) = self.ilids.as_mut() {
            let ilid = e.ilid(flow);
            e.channels.insert((gp, channel), ilid);
            e.ports[gp as usize].injected(usize::from(ilid), units);
        }
    }

    /// An ACK for `units` of channel `channel` came home to global port `gp` (from a
    /// host); `released` if it released the channel.
    pub(super) fn acked(
        &mut self,
        gp: u32,
        channel: u16,
        units: u64,
        released: bool,
    ) -> Result<(), InjectionError> {
        let Some((true, p)) = self.ports.get_mut(gp as usize) else {
            return Ok(());
        };
        p.acked(units)?;
        if let Some(e) = self.ilids.as_mut() {
            let ilid = if released {
                e.channels.remove(&(gp, channel))
            } else {
                e.channels.get(&(gp, channel)).copied()
            };
            // A channel that never injected (its ACK brings 0 units) has no ILID yet.
            if let Some(ilid) = ilid {
                e.ports[gp as usize].acked(usize::from(ilid), units)?;
            } else if units > 0 {
                return Err(InjectionError::Overacknowledged {
                    acked: units,
                    in_flight: 0,
                });
            }
        }
        Ok(())
    }

    /// Units in flight from global port `gp` (0 for a port not from a host).
    pub(super) fn in_flight(&self, gp: u32) -> u64 {
        match self.ports.get(gp as usize) {
            Some((true, p)) => p.in_flight(),
            _ => 0,
        }
    }

    /// Units in flight from global port `gp` per ILID, if ILIDs are limited.
    pub(super) fn ilid_in_flight(&self, gp: u32) -> Option<[u64; ILIDS]> {
        let e = self.ilids.as_ref()?;
        e.ports.get(gp as usize).map(IlidInjection::in_flight)
    }

    /// The most units one port had in flight at once.
    pub(super) fn peak(&self) -> u64 {
        self.ports.iter().map(|(_, p)| p.peak()).max().unwrap_or(0)
    }

    /// Per ILID: the most units one port had of it in flight at once (`None` without
    /// ILID limits).
    pub(super) fn ilid_peaks(&self) -> Option<[u64; ILIDS]> {
        let e = self.ilids.as_ref()?;
        let mut peaks = [0; ILIDS];
        for p in &e.ports {
            for (m, q) in peaks.iter_mut().zip(p.peak()) {
                *m = (*m).max(q);
            }
        }
        Some(peaks)
    }

    /// The port limit, in units.
    pub(super) fn limit(&self) -> Option<u64> {
        self.limit
    }
}

impl EdgeIlids {
    /// The ILID of `flow` (0 for a flow the map does not know).
    fn ilid(&self, flow: u32) -> u8 {
        self.ilid_of_flow.get(flow as usize).copied().unwrap_or(0)
    }
}
