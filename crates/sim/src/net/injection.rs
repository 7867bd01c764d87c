//! The driver of the ingress edges' injection limits ([`headroom_mech::injection`]): each
//! switch port from a host may have at most `[fabric.flow_channels.injection] port` bytes
//! forwarded into the fabric and not yet acknowledged.
//!
//! - A data frame leaving a switch that it entered from a host adds its units to that
//!   port's count; an ACK coming home to the port takes them off.
//! - The egress arbitration holds a frame from a host whose port is at its limit
//!   (`channel_gate`); an ACK coming home looks again at the flows held at every output of
//!   the switch (they may wait at any of them).
//!
//! Invariants (checked through `check_channels`): each host port's count is the sum of the
//! `flow_extent` of the channels that entered there, so a drained run ends with every
//! count at 0; a flow held by the limit has data of its port in flight (an ACK will come).

use headroom_mech::injection::{InjectionError, PortInjection};

/// The injection counters of a run's ingress edges.
#[derive(Debug)]
pub(super) struct EdgeInjection {
    /// The limit, in units of the channels' counters.
    limit: u64,
    /// Per global port: whether it is a switch port from a host, and its count.
    ports: Vec<(bool, PortInjection)>,
    /// Per switch: the global index of its local port 0.
    first_port: Vec<u32>,
}

impl EdgeInjection {
    /// Counters for the ports whose entries in `from_host` are set, for switches whose
    /// ports start at `first_port`, under a limit of `limit` units.
    pub(super) fn new(limit: u64, from_host: &[bool], first_port: Vec<u32>) -> Self {
        EdgeInjection {
            limit,
            ports: from_host
                .iter()
                .map(|&h| (h, PortInjection::default()))
                .collect(),
            first_port,
        }
    }

    /// Whether switch `s` may forward a frame of `units` that came in on its local port
    /// `in_port` (always, unless that port is from a host at its limit).
    pub(super) fn may_inject(&self, s: u32, in_port: u16, units: u64) -> bool {
        let gp = self.first_port[s as usize] + u32::from(in_port);
        match self.ports.get(gp as usize) {
            Some((true, p)) => p.may_inject(units, self.limit),
            _ => true,
        }
    }

    /// A frame of `units` from global port `gp` left its switch: counted if `gp` is from
    /// a host.
    pub(super) fn injected(&mut self, gp: u32, units: u64) {
        if let Some((true, p)) = self.ports.get_mut(gp as usize) {
            p.injected(units);
        }
    }

    /// An ACK for `units` came home to global port `gp` (from a host).
    pub(super) fn acked(&mut self, gp: u32, units: u64) -> Result<(), InjectionError> {
        match self.ports.get_mut(gp as usize) {
            Some((true, p)) => p.acked(units),
            _ => Ok(()),
        }
    }

    /// Units in flight from global port `gp` (0 for a port not from a host).
    pub(super) fn in_flight(&self, gp: u32) -> u64 {
        match self.ports.get(gp as usize) {
            Some((true, p)) => p.in_flight(),
            _ => 0,
        }
    }

    /// The most units one port had in flight at once.
    pub(super) fn peak(&self) -> u64 {
        self.ports.iter().map(|(_, p)| p.peak()).max().unwrap_or(0)
    }

    /// The limit, in units.
    pub(super) fn limit(&self) -> u64 {
        self.limit
    }
}
