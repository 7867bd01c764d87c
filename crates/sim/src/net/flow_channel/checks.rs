//! The flow-channel layer's invariant checks and its end-of-run statistics.
//!
//! Invariants: [`Simulation::check_channels`] asks of every switch's tables what the
//! parent module's documentation states, and fails with the first violation, naming the
//! switch; [`Simulation::channel_stats`] reads the layer without changing it.

use crate::net::{Simulation, Slot};
use crate::results::ChannelStats;
use headroom_mech::units::Time;

impl Simulation {
    /// Checks the invariants of the module documentation.
    pub(in crate::net) fn check_channels(&self) -> Result<(), String> {
        let Some(fc) = self.channels.as_deref() else {
            return Ok(());
        };
        if let Some(f) = &fc.fault {
            return Err(format!("flow channels: {f}"));
        }
        for (i, t) in fc.tables.iter().enumerate() {
            t.check()
                .map_err(|e| format!("switch {}: flow channels: {e}", self.switches[i].node))?;
            if t.in_use() != fc.occupancy[i].channels as usize {
                return Err(format!(
                    "switch {}: {} channels in use, {} counted",
                    self.switches[i].node,
                    t.in_use(),
                    fc.occupancy[i].channels
                ));
            }
        }
        for &(s, in_port, id) in fc.edge_acked.keys() {
            if fc.tables[s as usize].input(in_port, id).is_none() {
                return Err(format!(
                    "switch {}: the release delay remembers channel {id} of port {in_port}, \
                     which is not in use",
                    self.switches[s as usize].node
                ));
            }
        }
        for &(s, in_port, id) in fc.reroute_holds.keys() {
            if !fc.tables[s as usize].is_rerouting((in_port, id)) {
                return Err(format!(
                    "switch {}: channel {id} of port {in_port} is remembered as held for a \
                     reroute, but is not",
                    self.switches[s as usize].node
                ));
            }
        }
        let holding: usize = fc.tables.iter().map(|t| t.rerouting()).sum();
        if holding != fc.reroute_holds.len() {
            return Err(format!(
                "{holding} channels held for a reroute, {} remembered",
                fc.reroute_holds.len()
            ));
        }
        for (port, pkt) in self.arbitration.held_heads() {
            let Slot::Switch(s) = self.slots[self.ports[port].node as usize] else {
                return Err(format!("port {port}: a flow held at a host"));
            };
            let pk = self.arena.get(pkt);
            let channel = fc.tables[s as usize]
                .input(pk.in_port, pk.channel)
                .map_or(0, |c| c.flow_extent());
            // A port at its injection limit holds flows with nothing of their own in flight.
            let host_port = fc.injection.as_ref().map_or(0, |inj| {
                inj.in_flight(self.switches[s as usize].port(pk.in_port))
            });
            let delayed = !fc.released_by_now(s, (pk.in_port, pk.channel), self.now);
            // Held for a reroute with nothing in flight, a frame of it is staged: the ACK
            // of that one moves it.
            let staged = fc.tables[s as usize].is_rerouting((pk.in_port, pk.channel))
                && self.ports[port].queues.iter().any(|q| {
                    q.fifo.front().is_some_and(|f| {
                        let f = self.arena.get(f);
                        f.in_port == pk.in_port && f.channel == pk.channel
                    })
                });
            if channel == 0 && host_port == 0 && !delayed && !staged {
                return Err(format!(
                    "port {port}: flow {} held by its injection limit with nothing in flight \
                     (no ACK will let it go)",
                    pk.flow
                ));
            }
        }
        self.check_fgfc()?;
        if let Some(inj) = &fc.injection {
            for (i, sw) in self.switches.iter().enumerate() {
                if !self.mine(sw.node) {
                    continue; // another part's ports
                }
                for gp in sw.ports() {
                    let local = self.ports[gp].local;
                    let channels = fc.tables[i].in_flight(local);
                    if !self.ports[gp].peer_is_switch && inj.in_flight(gp) != channels {
                        return Err(format!(
                            "switch {} port {local}: {} units injected in flight, its channels \
                             have {channels}",
                            sw.node,
                            inj.in_flight(gp)
                        ));
                    }
                    if let Some(per_ilid) = inj.ilid_in_flight(gp) {
                        let sum: u64 = per_ilid.iter().sum();
                        if sum != inj.in_flight(gp) {
                            return Err(format!(
                                "switch {} port {local}: ILIDs have {per_ilid:?} units in \
                                 flight, the port {}",
                                sw.node,
                                inj.in_flight(gp)
                            ));
                        }
                    }
                }
            }
        }
        if let Some(hop) = &fc.hop {
            for (s, in_port, id) in hop.channels() {
                if !self.channel_in_use(s, (in_port, id)) {
                    return Err(format!(
                        "switch {}: hop-by-hop credit state for channel {id} of port \
                         {in_port}, not in use",
                        self.switches[s as usize].node
                    ));
                }
            }
        }
        let counted: u64 = fc.occupancy.iter().map(|o| u64::from(o.channels)).sum();
        if counted != fc.in_use {
            return Err(format!(
                "{} channels in use at the switches, {} in all",
                counted, fc.in_use
            ));
        }
        Ok(())
    }

    /// The layer's statistics at the end of a run.
    pub(in crate::net) fn channel_stats(&self) -> Option<ChannelStats> {
        let fc = self.channels.as_deref()?;
        let now = self.now;
        let mut st = fc.stats.clone();
        let elapsed = now.as_ps().max(1) as f64;
        for (i, o) in fc.occupancy.iter().enumerate() {
            let area = o.area + u128::from(o.channels) * u128::from((now - o.since).as_ps());
            st.switches.push(crate::results::SwitchChannels {
                node: self.switches[i].node,
                peak: o.peak,
                mean: area as f64 / elapsed,
                in_use_at_end: o.channels,
            });
        }
        st.waiting_at_end = fc.waits.total();
        st.endpoint = fc.params.endpoint.is_some();
        if fc.params.reroute.is_some() {
            st.reroute = Some(fc.reroutes);
        }
        if fc
            .params
            .endpoint
            .is_some_and(|e| e.release_delay > Time::ZERO)
        {
            st.release_delays = Some(st.release_delays.unwrap_or(0));
        }
        if let Some(edges) = &fc.fgfc {
            st.fgfc = Some((edges.pauses, edges.resumes));
        }
        if let Some(hop) = &fc.hop {
            st.hop_credits = Some((hop.metered, hop.acks));
        }
        if let Some(u) = &fc.ugal {
            st.ugal = Some(u.choices());
        }
        if let Some(inj) = &fc.injection {
            let unit = u64::from(fc.params.unit);
            let ilids = match (fc.params.ilid_injection, inj.ilid_peaks()) {
                (Some(cfg), Some(peaks)) => (0..peaks.len())
                    .map(|i| crate::results::IlidStats {
                        // At most 8 ILIDs.
                        ilid: i as u8,
                        limit: cfg.limit[i],
                        ratio: cfg.ratio[i],
                        peak: peaks[i] * unit,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            st.injection = Some(crate::results::InjectionStats {
                port_limit: inj.limit().map(|l| l * unit),
                node_limit: fc.params.ilid_injection.and_then(|c| c.node),
                peak: inj.peak() * unit,
                ilids,
            });
        }
        st.flow_limit_holds = self.arbitration.holds();
        Some(st)
    }
}
