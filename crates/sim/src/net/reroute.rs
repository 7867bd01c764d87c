//! Reroutes in the flow-channel fabric (`[fabric.flow_channels.reroute]`): a flow whose
//! path crosses an overloaded link is moved to another path once nothing of it is in
//! flight, so adaptive routing can correct a choice made when the loads looked even.
//!
//! - A data frame joining a switch output towards another switch whose class queue holds
//!   `queue` bytes or more asks for its channel's reroute (once per channel and hop). An
//!   output asks for one flow at a time: again once that flow's channel has left it, or
//!   `interval` later.
//! - The overloaded switch takes it if another of its next hops to the flow's destination
//!   carries at least two flows (channels) fewer. Otherwise a reroute ACK (acknowledging
//!   nothing, naming the overloaded output) goes back along the channel, and the nearest
//!   hop with another next hop from which a shortest path avoids that output takes it;
//!   an ingress edge without one drops it (counted as unresolved).
//! - The hop that takes it holds the flow at its output (its egress arbitration keeps the
//!   flow's queue out of the arbiter) until everything it forwarded is acknowledged: every
//!   channel downstream is then released, so nothing can be overtaken. It then moves the
//!   channel, with the frames it has queued there, to the least-loaded of those next hops
//!   (fewest channels, then fewest bytes queued; its own output stays when none is left,
//!   or when frames of its input port wait for a channel: they were admitted for it).
//!
//! Invariants: a channel is held for a reroute only while something it forwarded is in
//! flight (the ACK that drains it, or for one with nothing in flight a `ChannelRelease`
//! event at once, performs the move), which `check_channels` checks like any hold; moved
//! frames keep their ingress accounting and move their egress counts (MMU, the queue's
//! bytes, bytes by ingress) with them.

use super::ack_frames::AckEntry;
use super::features::General;
use super::flow_channel::ChannelKey;
use super::packet::{Kind, Packet};
use super::{Simulation, Slot};
use crate::engine::Event;
use crate::routing;
use crate::topology::NodeId;
use headroom_mech::flow_channel::{AckSignal, FlowChannelError};
use headroom_mech::PRIORITIES;
use rustc_hash::FxHashMap;

/// An overloaded switch output: what a reroute must avoid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Overload {
    /// The switch's node id.
    pub node: u32,
    /// The output's local port.
    pub port: u16,
}

impl Simulation {
    /// The data frame `size` bytes long of channel `(in_local, id)` at switch `s` joins
    /// output `out` (towards a switch) in class `class` for destination host `dst`: if that
    /// queue is overloaded, the channel's reroute is asked for (once per channel here).
    pub(super) fn reroute_check(
        &mut self,
        s: u32,
        (in_local, id): (u16, u16),
        (out, class): (u32, u8),
        (size, dst): (u32, u32),
    ) {
        let queued = u64::from(self.ports[out].queues[usize::from(class)].bytes);
        let Some(fc) = self.channels.as_deref_mut() else {
            return;
        };
        let Some(cfg) = fc.params.reroute else {
            return;
        };
        if queued + u64::from(size) < cfg.queue || self.now < fc.reroute_quiet[out as usize].0 {
            return;
        }
        match fc.tables[s as usize].ask_reroute((in_local, id)) {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => return fc.fault("ask reroute", e),
        }
        fc.reroutes.asks += 1;
        // One flow at a time: moving every flow of an overloaded output at once would
        // only overload another.
        fc.reroute_quiet[out as usize] = (self.now + cfg.interval, (s, in_local, id));
        fc.reroute_asked.insert((s, in_local, id), out);
        let overload = Overload {
            node: self.switches[s as usize].node,
            port: self.ports[out].local,
        };
        self.take_or_pass_reroute((s, in_local, id), dst, overload);
    }

    /// Channel `(s, in_local, id)` towards host `dst` is to be rerouted around `overload`:
    /// this hop holds it if it has somewhere to move it ([`Self::reroute_target`]), else
    /// the reroute goes upstream.
    pub(super) fn take_or_pass_reroute(
        &mut self,
        (s, in_local, id): ChannelKey,
        dst: u32,
        overload: Overload,
    ) {
        let Some(follow) = self
            .channels
            .as_deref()
            .and_then(|fc| fc.tables[s as usize].input(in_local, id))
            .map(|c| c.follow_port)
        else {
            return;
        };
        let gp_in = self.switches[s as usize].port(in_local);
        // Upstream hops take half of the reroutes they could, by a hash of the instant and
        // the channel: outputs overloaded by the same flows at once would otherwise move
        // them all, and overload each other's paths again.
        let own = self.switches[s as usize].node == overload.node;
        let coin = routing::mix64(
            self.now.as_ps() ^ (u64::from(s) << 32 | u64::from(in_local) << 16 | u64::from(id)),
        ) & 1
            == 0;
        if !(own || coin)
            || self
                .reroute_target(s, follow, (dst, overload), None)
                .is_none()
        {
            if self.ports[gp_in].peer_is_switch {
                let signal = AckSignal::Reroute {
                    dst,
                    node: overload.node,
                    port: overload.port,
                };
                self.queue_ack(gp_in, AckEntry::flow(id, signal, 0));
            } else if let Some(fc) = self.channels.as_deref_mut() {
                fc.reroutes.unresolved += 1;
            }
            return;
        }
        let Some(fc) = self.channels.as_deref_mut() else {
            return;
        };
        let table = &mut fc.tables[s as usize];
        match table.hold_for_reroute((in_local, id)) {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => return fc.fault("hold for reroute", e),
        }
        fc.reroute_holds.insert((s, in_local, id), (dst, overload));
        // With nothing in flight no ACK will come to move it: the event does, at once.
        if let Some(c) = table.input(in_local, id).filter(|c| c.flow_extent() == 0) {
            let out = self.switches[s as usize].port(c.follow_port);
            self.schedule(self.now, Event::ChannelRelease { port: out });
        }
    }

    /// Where switch `s` would move a flow to `dst` now leaving by local port `follow`
    /// around `overload`: among its other next hops with room for the channel, those that
    /// avoid it (at the overloaded switch itself, those carrying at least two channels
    /// fewer than `follow`; upstream, those from which a shortest path avoids the
    /// overloaded output), the least loaded (fewest channels, then bytes queued in the
    /// class the flow's frame `head`, arrived on global port `from`, would leave in; ties by
    /// its hash). Without a frame in hand: class 0, hash 0.
    fn reroute_target(
        &self,
        s: u32,
        follow: u16,
        (dst, overload): (u32, Overload),
        head: Option<(u32, Packet)>,
    ) -> Option<u16> {
        let fc = self.channels.as_deref()?;
        let table = &fc.tables[s as usize];
        let node = self.switches[s as usize].node;
        let own = node == overload.node;
        let hops = self.routes.next_hops(NodeId(node), NodeId(dst));
        let first = self.switches[s as usize].port(0);
        let here = table.outputs_in_use(follow);
        let mut avoids = FxHashMap::default();
        let mut fits = |out: u16| {
            let gp = first + u32::from(out);
            let to_switch = self.ports[gp].peer_is_switch;
            let class = head.map_or(self.vl_of(gp, 0), |(from, pk)| {
                self.egress_class::<General>((from, gp), &pk)
            });
            if out == follow || (to_switch && !table.output_has_room(out, class)) {
                return false;
            }
            if own {
                return table.outputs_in_use(out) + 1 < here;
            }
            let peer = self.ports.wire(self.ports.wire(gp).peer).node;
            self.path_avoids(peer, dst, overload, &mut avoids)
        };
        let load = |out: u16| {
            let gp = first + u32::from(out);
            let q = head.map_or(self.vl_of(gp, 0), |(from, pk)| {
                self.egress_class::<General>((from, gp), &pk)
            });
            (
                table.outputs_in_use(out),
                self.ports[gp].queues[usize::from(q)].bytes,
            )
        };
        let hash = head.map_or(0, |(_, pk)| pk.hash);
        let start = routing::ecmp_hash(hash, node, hops.len());
        (0..hops.len())
            .map(|k| hops[(start + k) % hops.len()])
            .filter(|&out| fits(out))
            .min_by_key(|&out| load(out))
    }

    /// Whether some shortest path from node `from` to host `dst` avoids output `overload`
    /// (`memo`: what earlier calls found, by node).
    fn path_avoids(
        &self,
        from: u32,
        dst: u32,
        overload: Overload,
        memo: &mut FxHashMap<u32, bool>,
    ) -> bool {
        if from == dst {
            return true;
        }
        let Slot::Switch(s) = self.slots[from as usize] else {
            return false;
        };
        if let Some(&known) = memo.get(&from) {
            return known;
        }
        let first = self.switches[s as usize].port(0);
        let found = self
            .routes
            .next_hops(NodeId(from), NodeId(dst))
            .iter()
            .filter(|&&out| !(from == overload.node && out == overload.port))
            .any(|&out| {
                let gp = first + u32::from(out);
                let peer = self.ports.wire(self.ports.wire(gp).peer).node;
                self.path_avoids(peer, dst, overload, memo)
            });
        memo.insert(from, found);
        found
    }

    /// An ACK of data reached channel `channel`: if it waits for its reroute and nothing of
    /// it is in flight any more, it moves now.
    pub(super) fn reroute_if_drained(&mut self, (s, in_local, id): ChannelKey) {
        let drained = self.channels.as_deref().is_some_and(|fc| {
            fc.params.reroute.is_some()
                && fc.tables[s as usize]
                    .input(in_local, id)
                    .is_some_and(|c| c.rerouting() && c.flow_extent() == 0)
        });
        if drained {
            self.reroute_channel((s, in_local, id));
        }
    }

    /// The channels of switch `s` leaving by global output `out` and held for a reroute
    /// with nothing in flight move now (whether their flows wait in the arbiter or are
    /// held back already).
    pub(super) fn reroute_drained_at(&mut self, s: u32, out: u32) {
        let Some(fc) = self.channels.as_deref() else {
            return;
        };
        if fc.params.reroute.is_none() {
            return;
        }
        let out_local = self.ports[out].local;
        let table = &fc.tables[s as usize];
        let mut due: Vec<ChannelKey> = fc
            .reroute_holds
            .keys()
            .copied()
            .filter(|&(hs, in_local, id)| {
                hs == s
                    && table
                        .input(in_local, id)
                        .is_some_and(|c| c.follow_port == out_local && c.flow_extent() == 0)
            })
            .collect();
        // In a fixed order, not the map's.
        due.sort_unstable();
        for key in due {
            self.reroute_if_drained(key);
        }
    }

    /// Moves channel `(s, in_local, id)`, held for its reroute with nothing in flight, to
    /// its [`Self::reroute_target`], with the frames it has queued; or, with none, ends its
    /// reroute on its own path.
    fn reroute_channel(&mut self, (s, in_local, id): ChannelKey) {
        let Some(fc) = self.channels.as_deref() else {
            return;
        };
        let Some(c) = fc.tables[s as usize].input(in_local, id).copied() else {
            return;
        };
        let Some(&(dst, overload)) = fc.reroute_holds.get(&(s, in_local, id)) else {
            return;
        };
        let old_local = c.follow_port;
        let old = self.switches[s as usize].port(old_local);
        // Frames waiting for a channel at its input were admitted for the old output and
        // would take it again: the flow stays.
        let gp_in = self.switches[s as usize].port(in_local);
        let waiting = fc.waits.waiting_on(gp_in).next().is_some();
        let mine =
            |pk: &Packet| pk.kind == Kind::Data && pk.in_port == in_local && pk.channel == id;
        // A frame of it staged to leave by the old output goes first; the ACK of it moves
        // the rest.
        let staged = (0..PRIORITIES).any(|q| {
            self.ports[old].queues[q]
                .fifo
                .front()
                .is_some_and(|pkt| mine(self.arena.get(pkt)))
        });
        if staged {
            return;
        }
        let head = (0..PRIORITIES).find_map(|q| {
            self.arbitration
                .waiting(&self.arena, old, q)
                .find(|&pkt| mine(self.arena.get(pkt)))
        });
        let first = old - u32::from(old_local);
        // The new output and the class the flow's frames would leave by it in.
        let target = head.filter(|_| !waiting).and_then(|pkt| {
            let pk = *self.arena.get(pkt);
            let out = self.reroute_target(s, old_local, (dst, overload), Some((gp_in, pk)))?;
            Some((
                out,
                self.egress_class::<General>((gp_in, first + u32::from(out)), &pk),
            ))
        });
        let Some(fc) = self.channels.as_deref_mut() else {
            return;
        };
        fc.reroute_holds.remove(&(s, in_local, id));
        let table = &mut fc.tables[s as usize];
        let moved_to = match target {
            Some((new_local, class)) => {
                let to_host = !self.ports[first + u32::from(new_local)].peer_is_switch;
                match table.reroute((in_local, id), (new_local, to_host, class)) {
                    Ok(_) => Some(new_local),
                    Err(FlowChannelError::TableFull { .. }) => None,
                    Err(e) => return fc.fault("reroute", e),
                }
            }
            None => None,
        };
        let Some(new_local) = moved_to else {
            // Back to its own output: no id is taken, whatever the class.
            if let Err(e) = table.reroute((in_local, id), (old_local, false, 0)) {
                fc.fault("reroute", e);
            }
            fc.reroutes.kept += 1;
            self.release_held_on(s, old);
            return;
        };
        fc.reroutes.moved += 1;
        let new = first + u32::from(new_local);
        for q in 0..PRIORITIES {
            let moved = self
                .arbitration
                .remove_where(&mut self.arena, (old, q), |pk| mine(pk));
            for pkt in moved {
                let pk = *self.arena.get(pkt);
                self.ports[old].queues[q].bytes -= pk.size;
                let gp_in = self.switches[s as usize].port(pk.in_port);
                let class = self.egress_class::<General>((gp_in, new), &pk);
                let sw = &mut self.switches[s as usize];
                sw.queued_by_ingress
                    .remove(old_local, pk.prio, pk.in_port, pk.size);
                sw.mmu.move_egress(
                    (usize::from(old_local), q as u8),
                    (usize::from(new_local), class),
                    pk.placement().cells,
                );
                self.enqueue_egress::<General>(s, (gp_in, new), (class, pkt));
            }
        }
        // Not `try_send`: this may run while a port hands a frame over.
        self.schedule_wake(new, self.now);
    }
}
