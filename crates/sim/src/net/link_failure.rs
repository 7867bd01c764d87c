//! Link failures (`[[link_failure]]`): at its time a link goes down for good; frames on
//! it, queued for it, or partly received from it are dropped and counted under
//! `link_down`, and routes are recomputed without it.
//!
//! Invariants: every dropped frame releases its cells and is counted once (the byte
//! ledger stays balanced); a switch's partial receptions from the dead link are dropped
//! before they could complete.

use super::features::General;
use super::packet::{Kind, Packet};
use super::{flow_channel, port, Simulation, Slot};
use crate::routing::Routes;
use headroom_mech::PRIORITIES;

impl Simulation {
    /// A link fails: its ports stop, what they queue is dropped, routes avoid it.
    pub(super) fn link_down(&mut self, failure: u32) {
        let f = &self.cfg.link_failures[failure as usize];
        let (a, b) = (f.a, f.b);
        let Some(link) = self
            .cfg
            .topology
            .links
            .iter()
            .enumerate()
            .position(|(i, l)| {
                self.link_up[i] && ((l.a == a && l.b == b) || (l.a == b && l.b == a))
            })
        else {
            return; // already down
        };
        self.link_up[link] = false;
        let (pa, pb) = self.link_ports[link];
        for port in [pa, pb] {
            if !self.mine(self.ports.wire(port).node) {
                continue;
            }
            // What the failure sets off at a port is that port's doing.
            self.creator = port;
            self.ports[port].up = false;
            while let Some(pkt) = self.ports[port].ctrl.pop_front(&self.arena) {
                let pk = self.arena.get(pkt);
                if pk.kind == Kind::Pfc {
                    let class = port::pfc_class(pk);
                    self.ports[port].pfc_dequeued(class);
                    self.arena.free(pkt);
                } else if pk.kind == Kind::Fcp {
                    self.fcp_lost(port, pkt);
                } else {
                    self.drop_packet(pkt, "link_down");
                }
            }
            let node = self.ports[port].node;
            if let Slot::Switch(s) = self.slots[node as usize] {
                let local = self.ports[port].local;
                for q in 0..PRIORITIES {
                    self.flush_egress_queue(s, port, q, "link_down");
                }
                self.drop_partial_receptions(s, local);
            }
        }
        // Without the connectivity requirement only allocation can fail, and tables of the
        // same size were allocated when the run was built.
        self.routes =
            Routes::compute_with(&self.cfg.topology, self.cfg.routing, &self.link_up, false)
                .unwrap_or_else(|e| panic!("recomputing routes after a link failure: {e}"));
    }

    /// Drops the frames switch `s` is still receiving on its failed local port `in_local`:
    /// admitted at their first bit, they will never be complete.
    fn drop_partial_receptions(&mut self, s: u32, in_local: u16) {
        let now = self.now;
        for gp in self.switches[s as usize].ports() {
            let out_local = self.ports[gp].local;
            for q in 0..8usize {
                let partial = |pk: &Packet| pk.in_port == in_local && pk.ready_at > now;
                let mut removed = self.ports[gp].queues[q]
                    .fifo
                    .remove_where(&mut self.arena, partial);
                removed.extend(
                    self.arbitration
                        .remove_where(&mut self.arena, (gp, q), partial),
                );
                if !removed.is_empty() {
                    // The head may have been one of them; the port must say so before the
                    // releases below can set off a transmission.
                    let p = &mut self.ports[gp];
                    p.head_removed(q, &self.arena);
                    let gate = flow_channel::channel_gate(self.channels.as_deref(), s, self.now);
                    self.arbitration.refill(&mut self.arena, (gp, p), q, gate);
                }
                for pkt in removed {
                    let pk = *self.arena.get(pkt);
                    self.ports[gp].queues[q].bytes -= pk.size;
                    self.switch_release::<General>(
                        s,
                        (pk.in_port, pk.prio),
                        (out_local, q as u8),
                        pk.size,
                        pk.placement(),
                    );
                    self.drop_packet(pkt, "link_down");
                }
            }
        }
    }
}
