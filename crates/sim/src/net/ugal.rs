//! Non-minimal adaptive routing of flow channels (`routing = "ugal"`): UGAL with the
//! ingress edge's own queues (UGAL-L), as dragonfly fabrics route.
//!
//! On a dragonfly the minimal path between two groups is one global link: traffic from the
//! hosts of one group to another's shares it whatever the next hops' loads, and minimal
//! adaptive routing has nothing to choose. A Valiant path goes through an intermediate
//! switch first and spreads such traffic over every group, at up to twice the hops.
//!
//! - Where a frame's channel is new at its ingress edge switch (nothing of it in flight,
//!   so no path change can reorder it), the edge draws an intermediate among the switches
//!   hosts hang off (not its own, nor the destination's) from the flow's hash and the
//!   frame's offset, and compares the least-loaded minimal next hop with the least-loaded
//!   next hop towards the intermediate: the frame goes the long way when its output
//!   lacks room for a channel while the other has it, or when queue bytes × hops of the
//!   minimal path exceed those of the Valiant path by more than the threshold.
//! - The channel the frame makes there keeps the choice: every later frame joining it
//!   (a frame that waited for a channel, another flow's frame with `match = "destination"`)
//!   carries the channel's intermediate, whatever it was stamped with before.
//! - The frame carries the intermediate (`Packet::via`); every hop where its channel is
//!   new routes it adaptively towards the intermediate (as towards the hosts hanging off
//!   it), and the intermediate itself clears it: from there it heads for its destination.
//!
//! Invariants: every frame of an ingress edge channel carries the intermediate chosen when
//! the channel was made, so a frame pinned to a path heads where the path heads; `via` of a
//! frame names a switch it has not reached yet, never its own edge's or its destination's;
//! a path has at most twice the switch-to-switch hops of the longest minimal one
//! (`SimConfig::validate_class_per_hop` is given that bound). The draw reads no random
//! stream and each edge channel's choice lives in the part owning the edge switch, so runs
//! in parts choose as one does.

use super::packet::{Kind, Packet, NO_VIA};
use super::{Simulation, Slot};
use crate::routing;
use crate::topology::{NodeId, NodeKind, Topology};
use headroom_mech::PRIORITIES;
use rustc_hash::FxHashMap;

/// The candidates for intermediates and each flow's current one.
#[derive(Debug)]
pub(super) struct Ugal {
    /// Switches hosts hang off, each with one of its hosts (a route towards a switch is the
    /// route towards the hosts hanging off it).
    intermediates: Vec<(u32, u32)>,
    /// Per node: its index in `intermediates` (`NO_VIA`: not one).
    index_of: Vec<u16>,
    /// Per ingress edge channel (global input port from a host, channel id): the
    /// intermediate chosen when it was made (`NO_VIA`: the minimal path). An entry outlives
    /// its channel until the id is reused, and is only read while the channel exists.
    edge_via: FxHashMap<(u32, u16), u16>,
    /// Queue bytes × hops by which the minimal path must be worse.
    threshold: u64,
    /// Edge channels made: on a minimal path, through an intermediate.
    minimal: u64,
    nonminimal: u64,
}

/// Why UGAL cannot route a network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TooManySwitches(pub usize);

impl Ugal {
    /// The intermediates of `topo` (in node order).
    pub(super) fn new(topo: &Topology, threshold: u64) -> Result<Ugal, TooManySwitches> {
        let mut host_of = vec![u32::MAX; topo.nodes.len()];
        for l in &topo.links {
            for (end, other) in [(l.a, l.b), (l.b, l.a)] {
                if topo.nodes[end.index()] == NodeKind::Host
                    && topo.nodes[other.index()] == NodeKind::Switch
                {
                    let h = &mut host_of[other.index()];
                    *h = (*h).min(end.index() as u32);
                }
            }
        }
        let intermediates: Vec<(u32, u32)> = host_of
            .iter()
            .enumerate()
            .filter(|&(_, &h)| h != u32::MAX)
            .map(|(s, &h)| (s as u32, h))
            .collect();
        if intermediates.len() >= usize::from(NO_VIA) {
            return Err(TooManySwitches(intermediates.len()));
        }
        let mut index_of = vec![NO_VIA; topo.nodes.len()];
        for (i, &(s, _)) in intermediates.iter().enumerate() {
            // Fewer than NO_VIA of them (checked above).
            index_of[s as usize] = i as u16;
        }
        Ok(Ugal {
            intermediates,
            index_of,
            edge_via: FxHashMap::default(),
            threshold,
            minimal: 0,
            nonminimal: 0,
        })
    }

    /// Edge channels made: (on a minimal path, through an intermediate).
    pub(super) fn choices(&self) -> (u64, u64) {
        (self.minimal, self.nonminimal)
    }

    /// The intermediate drawn for a frame at switch `node` towards the switch `dst_edge`:
    /// from the flow's hash and the frame's offset, skipping both ends (`None`: no third
    /// switch).
    fn draw(&self, pk: &Packet, node: u32, dst_edge: u32) -> Option<u16> {
        let mut ends = [
            self.index_of[node as usize],
            self.index_of[dst_edge as usize],
        ];
        ends.sort_unstable();
        let mut excluded: Vec<u16> = ends.into_iter().filter(|&e| e != NO_VIA).collect();
        excluded.dedup();
        let others = self.intermediates.len() - excluded.len();
        if others == 0 {
            return None;
        }
        let mut k = routing::mix64(pk.hash ^ pk.seq.rotate_left(29)) % others as u64;
        // The k-th switch that is neither end: step over the ends below it, in order.
        for e in excluded {
            if k >= u64::from(e) {
                k += 1;
            }
        }
        // Below the count of intermediates, which is below NO_VIA.
        Some(k as u16)
    }
}

impl Simulation {
    /// The host a frame heads for from here: its destination, or a host hanging off the
    /// intermediate it has still to reach.
    #[inline]
    pub(super) fn route_target(&self, pk: &Packet) -> u32 {
        match self.channels.as_deref().and_then(|fc| fc.ugal.as_ref()) {
            Some(u) if pk.via != NO_VIA => u.intermediates[usize::from(pk.via)].1,
            _ => pk.dst,
        }
    }

    /// UGAL at switch `s` for the data frame `pkt` (`pk`, which is updated too) arrived on
    /// global `port`, before it is routed: the intermediate clears `via`; the ingress edge
    /// chooses where the frame's channel is new (a frame joining an existing channel follows
    /// its path and takes its intermediate when it joins: [`Simulation::ugal_joined`]).
    pub(super) fn ugal_stamp(&mut self, s: u32, port: u32, pk: &mut Packet, pkt: u32) {
        let Some(fc) = self.channels.as_deref() else {
            return;
        };
        let Some(u) = fc.ugal.as_ref() else {
            return;
        };
        let node = self.ports[port].node;
        let via = if self.ports[port].peer_is_switch {
            if pk.via != NO_VIA && u.intermediates[usize::from(pk.via)].0 == node {
                NO_VIA
            } else {
                return;
            }
        } else {
            let in_local = self.ports[port].local;
            let arrival = fc.arrival(false, pk, &self.cfg.flow_apps);
            if fc.tables[s as usize].pinned(in_local, arrival).is_some() {
                return;
            }
            self.ugal_choose(port, node, pk)
        };
        pk.via = via;
        self.arena.get_mut(pkt).via = via;
    }

    /// The data frame `pkt` from a host joined channel `id` of global input port `port`
    /// (its ingress edge), `new` if it made it: a new channel keeps the frame's choice,
    /// an existing one gives the frame its own.
    pub(super) fn ugal_joined(&mut self, port: u32, (id, new): (u16, bool), pkt: u32) {
        let Some(u) = self.channels.as_deref_mut().and_then(|fc| fc.ugal.as_mut()) else {
            return;
        };
        let pk = self.arena.get_mut(pkt);
        if new {
            u.edge_via.insert((port, id), pk.via);
            if pk.via == NO_VIA {
                u.minimal += 1;
            } else {
                u.nonminimal += 1;
            }
        } else if let Some(&via) = u.edge_via.get(&(port, id)) {
            pk.via = via;
        }
    }

    /// Checks the module's first invariant at switch `s`: every data frame queued there
    /// that came from a host in a channel still in use carries that channel's
    /// intermediate.
    pub(super) fn check_ugal(&self, s: u32) -> Result<(), String> {
        let Some(fc) = self.channels.as_deref() else {
            return Ok(());
        };
        let Some(u) = fc.ugal.as_ref() else {
            return Ok(());
        };
        let sw = &self.switches[s as usize];
        for pkt in sw
            .ports()
            .flat_map(|gp| (0..PRIORITIES).flat_map(move |q| self.class_packets(gp, q)))
        {
            let pk = self.arena.get(pkt);
            let gp_in = sw.port(pk.in_port);
            if pk.kind != Kind::Data
                || self.ports[gp_in].peer_is_switch
                || fc.tables[s as usize]
                    .input(pk.in_port, pk.channel)
                    .is_none()
            {
                continue;
            }
            let chosen = u.edge_via.get(&(gp_in, pk.channel)).copied();
            if chosen != Some(pk.via) {
                return Err(format!(
                    "switch {}: flow {} frame at {} carries intermediate {} in edge channel \
                     {} of port {}, which was made for {chosen:?}",
                    sw.node, pk.flow, pk.seq, pk.via, pk.channel, pk.in_port
                ));
            }
        }
        Ok(())
    }

    /// The ingress edge's choice for a new channel of `pk` arrived on global `port` of
    /// switch `node`: an intermediate, or `NO_VIA` for the minimal path.
    fn ugal_choose(&self, port: u32, node: u32, pk: &Packet) -> u16 {
        let Some(u) = self.channels.as_deref().and_then(|fc| fc.ugal.as_ref()) else {
            return NO_VIA;
        };
        let Some(dst_edge) = self.edge_of(pk.dst) else {
            return NO_VIA;
        };
        if dst_edge == node {
            return NO_VIA;
        }
        let Some(via) = u.draw(pk, node, dst_edge) else {
            return NO_VIA;
        };
        let (mid, mid_host) = u.intermediates[usize::from(via)];
        let (Some((_, (min_full, min_bytes))), Some((_, (far_full, far_bytes)))) = (
            self.least_loaded_hop(port, node, pk.dst, pk),
            self.least_loaded_hop(port, node, mid_host, pk),
        ) else {
            return NO_VIA;
        };
        if min_full != far_full {
            return if min_full { via } else { NO_VIA };
        }
        // Hops to the destination's host link included, so that no path weighs nothing.
        let min_hops = u64::from(self.switch_hops(node, pk.dst)) + 1;
        let far_hops =
            u64::from(self.switch_hops(node, mid_host) + self.switch_hops(mid, pk.dst)) + 1;
        let (min_cost, far_cost) = (
            u64::from(min_bytes) * min_hops,
            u64::from(far_bytes) * far_hops,
        );
        if min_cost > far_cost.saturating_add(u.threshold) {
            via
        } else {
            NO_VIA
        }
    }

    /// The switch host `host` hangs off (`None`: its link is down or it has none).
    fn edge_of(&self, host: u32) -> Option<u32> {
        let Slot::Host(h) = self.slots[host as usize] else {
            return None;
        };
        // The host may be another part's: its port's wiring and its link's state are known
        // to every part.
        let w = self.ports.wire(self.hosts[h as usize].port);
        let edge = self.ports.wire(w.peer).node;
        let up = self.link_up[w.link as usize];
        (up && matches!(self.slots[edge as usize], Slot::Switch(_))).then_some(edge)
    }

    /// Switch-to-switch hops from switch `node` to the switch `host` hangs off, along the
    /// first next hop of each (every next hop lies on a shortest path).
    fn switch_hops(&self, mut node: u32, host: u32) -> u32 {
        let mut hops = 0;
        // A shortest path visits each switch at most once.
        for _ in 0..self.switches.len() {
            let Slot::Switch(s) = self.slots[node as usize] else {
                break;
            };
            let Some(&out) = self.routes.next_hops(NodeId(node), NodeId(host)).first() else {
                break;
            };
            let gp = self.switches[s as usize].port(out);
            let next = self.ports.wire(self.ports.wire(gp).peer).node;
            if next == host || !matches!(self.slots[next as usize], Slot::Switch(_)) {
                break;
            }
            node = next;
            hops += 1;
        }
        hops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::builders::{dragonfly, Dragonfly};
    use headroom_mech::units::{Rate, Time};

    #[test]
    fn draws_cover_every_other_switch_and_never_an_end() {
        let topo = dragonfly(&Dragonfly {
            groups: 5,
            routers: 4,
            hosts_per_router: 2,
            global_links: 1,
            rate: Rate::from_gbps(100),
            global_rate: Rate::from_gbps(100),
            delay: Time::from_ns(100),
            global_delay: Time::from_us(1),
        })
        .expect("balanced dragonfly");
        let u = Ugal::new(&topo, 0).expect("20 switches");
        assert_eq!(u.intermediates.len(), 20);
        let hosts = 40;
        // Every switch has hosts; each intermediate's host hangs off it.
        for (i, &(s, h)) in u.intermediates.iter().enumerate() {
            assert_eq!(s as usize, hosts + i);
            assert_eq!(h as usize, 2 * i);
            assert_eq!(u.index_of[s as usize], i as u16);
        }
        let (from, to) = (hosts as u32 + 3, hosts as u32 + 17);
        let mut seen = [0u32; 20];
        let mut pk = Packet::new(Kind::Data);
        for seq in 0..18_000u64 {
            pk.hash = 0x9e37_79b9_7f4a_7c15;
            pk.seq = seq * 1000;
            let via = u.draw(&pk, from, to).expect("18 others");
            seen[usize::from(via)] += 1;
        }
        assert_eq!((seen[3], seen[17]), (0, 0), "an end was drawn");
        for (i, &n) in seen.iter().enumerate().filter(|&(i, _)| i != 3 && i != 17) {
            assert!((800..1200).contains(&n), "switch {i}: {n} of 18,000 draws");
        }
        // Two switches with hosts leave nothing to go through.
        let two = Ugal {
            intermediates: u.intermediates[..2].to_vec(),
            ..Ugal::new(&topo, 0).expect("20 switches")
        };
        assert_eq!(two.draw(&pk, hosts as u32, hosts as u32 + 1), None);
    }
}
