//! The class a frame travels in on each link: its service level mapped by the sending
//! port's SL → VL table on credit links, the service level itself on PFC links; with
//! `[fabric] class_per_hop`, plus the switch-to-switch hops the frame took before this one.
//!
//! Invariants: without `class_per_hop` a frame's class on a link depends on its service
//! level and the link alone. With it, a frame leaving a switch for another switch, having
//! come from a switch, leaves one class above the one it arrived in (above its service
//! level's class on that link); every other frame leaves in its service level's class. So
//! the buffers a frame waits for between switches are always of a higher class than the
//! one it holds, and no cycle of waits can form. `SimConfig::validate_class_per_hop` checks
//! that the classes exist on the longest route; beyond them (routes that grew after a link
//! failed) a frame stays in the highest class.

use super::features::Features;
use super::packet::Packet;
use super::Simulation;
use headroom_mech::PRIORITIES;

/// How a run maps frames to classes (one value, so that the hot path asks once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Classes {
    /// A frame's class is its service level: PFC links only, or credit links whose SL → VL
    /// tables are all the identity (the default), so that no frame reads a table.
    Service,
    /// Some credit links: SL → VL tables (the identity on PFC links).
    Tables,
    /// `class_per_hop`, over either.
    PerHop,
}

impl Classes {
    /// The mapping of a run with credit links or not, classes per hop or not, whose SL → VL
    /// tables are all the identity or not.
    pub(super) fn of(credit_links: bool, class_per_hop: bool, identity_tables: bool) -> Self {
        match (credit_links && !identity_tables, class_per_hop) {
            (_, true) => Classes::PerHop,
            (true, false) => Classes::Tables,
            (false, false) => Classes::Service,
        }
    }
}

impl Simulation {
    /// The class a frame of service level `sl` leaves `port` in: the VL of the port's
    /// SL → VL table on credit links, the service level itself on PFC links.
    #[inline(always)]
    pub(super) fn vl_of(&self, port: u32, sl: u8) -> u8 {
        if self.credit_links {
            self.sl_to_vl[port as usize][usize::from(sl)]
        } else {
            sl
        }
    }

    /// The class the frame `pk`, arrived on global port `from`, leaves global port `out`
    /// of the same switch in (its egress queue there).
    #[inline(always)]
    pub(super) fn egress_class<F: Features>(&self, (from, out): (u32, u32), pk: &Packet) -> u8 {
        if !F::OPTIONAL {
            return pk.sl;
        }
        match self.classes {
            Classes::Service => pk.sl,
            Classes::Tables => self.sl_to_vl[out as usize][usize::from(pk.sl)],
            // Scalars, not the packet: the caller's copy of it stays in registers.
            Classes::PerHop => self.class_after_hop((from, out), (pk.sl, pk.prio)),
        }
    }

    /// [`Simulation::egress_class`] with `class_per_hop`, for a frame of service level `sl`
    /// that arrived in class `arrived`.
    #[cold]
    #[inline(never)]
    fn class_after_hop(&self, (from, out): (u32, u32), (sl, arrived): (u8, u8)) -> u8 {
        let own = self.vl_of(out, sl);
        let (from_port, out_port) = (&self.ports[from], &self.ports[out]);
        if !(from_port.peer_is_switch && out_port.peer_is_switch) {
            return own;
        }
        // It arrived in its own class on that link plus the hops before that one.
        let before = arrived.saturating_sub(self.vl_of(from, sl));
        let top = if out_port.fc.credit().is_some() {
            self.cfg.fabric.credit.vls - 1
        } else {
            PRIORITIES as u8 - 1
        };
        own.saturating_add(before).saturating_add(1).min(top)
    }
}
