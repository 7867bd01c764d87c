//! What a run reports: time-series samples while it runs, the conservation checks, and the
//! [`RunResults`] it ends with.
//!
//! Invariants: samples and records come only from this part's own nodes, so the parts of a
//! partitioned run report each node once; [`Simulation::check_parts`] holds between events
//! of any run (payload bytes sent = delivered + dropped + in flight, cells conserved per
//! MMU) and is what [`Simulation::check_invariants`] asks of a whole one.

use super::packet::Kind;
use super::{host, Simulation, Slot};
use crate::engine::Event;
use crate::results::{
    BufferSample, ByteLedger, CreditBlock, FlowRecord, PortStats, QueueSample, RateSample,
    RunResults, SwitchStats,
};
use headroom_mech::units::Time;

impl Simulation {
    /// Takes a time-series sample and schedules the next one.
    pub(super) fn sample(&mut self) {
        for s in &self.switches {
            if !self.mine(s.node) {
                continue;
            }
            let cell = u64::from(s.mmu.cell_bytes());
            self.buffer_samples.push(BufferSample {
                time: self.now,
                node: s.node,
                used: s.mmu.used_cells() * cell,
                headroom: s.mmu.headroom_used_cells() * cell,
            });
            for gp in s.ports() {
                let p = &self.ports[gp];
                for (q, bytes) in p.queues.iter().map(|eq| eq.bytes).enumerate() {
                    if bytes > 0 {
                        self.queue_samples.push(QueueSample {
                            time: self.now,
                            node: s.node,
                            port: p.local,
                            queue: q as u8,
                            bytes: u64::from(bytes),
                        });
                    }
                }
            }
        }
        for h in &self.hosts {
            if !self.mine(h.node) {
                continue;
            }
            for &host::NicEntry { flow: f, .. } in &h.active {
                let fl = &self.flows[f];
                self.rate_samples.push(RateSample {
                    time: self.now,
                    flow: f,
                    gbps: fl.cc.rate().as_gbps_f64(),
                });
            }
        }
        self.sample_marks();
        if let Some(iv) = self.cfg.record.sample_interval {
            self.schedule(self.now + iv, Event::Sample);
        }
    }

    /// Checks the conservation invariants; `Err` describes the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        Self::check_parts(&[self])
    }

    /// Checks the conservation invariants of a run made of `parts` (between windows, when
    /// every frame is in some part's arena).
    pub(super) fn check_parts(parts: &[&Simulation]) -> Result<(), String> {
        let mut l = ByteLedger::default();
        for p in parts {
            l.absorb(&p.ledger);
        }
        if l.sent != l.delivered + l.dropped + l.in_flight {
            return Err(format!(
                "payload not conserved: sent {} != delivered {} + dropped {} + in flight {}",
                l.sent, l.delivered, l.dropped, l.in_flight
            ));
        }
        let live: u64 = parts
            .iter()
            .flat_map(|p| p.arena.live())
            .filter(|p| p.kind == Kind::Data)
            .map(|p| u64::from(p.payload))
            .sum();
        if live != l.in_flight {
            return Err(format!(
                "in-flight ledger {} != live data payload {live}",
                l.in_flight
            ));
        }
        for (p, port) in parts
            .iter()
            .flat_map(|p| p.ports.iter().map(move |(_, q)| (p, q)))
        {
            port.check_pfc_queue(&p.arena)?;
        }
        for p in parts {
            p.arbitration
                .check(|port, q| p.ports[port].queues[q].fifo.is_empty())?;
        }
        for (p, h) in parts
            .iter()
            .flat_map(|p| p.hosts.iter().map(move |h| (p, h)))
        {
            if p.mine(h.node) {
                h.check_unheld()?;
            }
        }
        for (p, i) in parts
            .iter()
            .flat_map(|p| (0..p.switches.len()).map(move |i| (p, i)))
            .filter(|(p, i)| p.mine(p.switches[*i].node))
        {
            p.check_queued_by_ingress(i as u32)?;
            p.check_channels()?;
            p.check_ugal(i as u32)?;
            p.check_credit_buffers(i as u32)?;
            let s = &p.switches[i];
            s.mmu
                .check_conservation()
                .map_err(|e| format!("switch {}: {e}", s.node))?;
            let queued: u64 = p
                .held_packets(i as u32)
                .map(|pk| u64::from(p.arena.get(pk).placement().cells))
                .sum();
            if queued != s.mmu.used_cells() {
                return Err(format!(
                    "switch {}: queued packets hold {queued} cells, MMU counts {}",
                    s.node,
                    s.mmu.used_cells()
                ));
            }
        }
        Ok(())
    }

    /// Ends the run (if it has not ended) and collects the results. A part of a
    /// partitioned run reports its own ports, and for each of their peers in another part
    /// only the victim pauses judged here, which the driver adds to the owner's report.
    pub fn finish(mut self) -> RunResults {
        let now = self.now;
        let held = self.ports.held_numbers();
        let mut ports = Vec::with_capacity(held.len());
        let log_credit = !self.cfg.record.omit_credit_log;
        for gp in held {
            let p = &mut self.ports[gp];
            let mut st = PortStats {
                node: p.node,
                port: p.local,
                peer: 0,
                pause_sent: p.pause_sent,
                resume_sent: p.resume_sent,
                paused_time: [Time::ZERO; 8],
                port_pause_sent: p.port_pause_sent,
                port_resume_sent: p.port_resume_sent,
                pfc_merged: p.pfc_merged,
                port_paused_time: p
                    .fc
                    .pfc_mut()
                    .map_or(Time::ZERO, |t| t.port_paused_time(now)),
                pause_episodes: [0; 8],
                victim_pauses: [0; 8],
                port_pause_episodes: 0,
                port_victim_pauses: 0,
                tx_frames: p.tx_frames,
                tx_bytes: p.tx_bytes,
                peak_queue: p.queues.map(|q| u64::from(q.peak)),
                credit_blocked_time: [Time::ZERO; 8],
                credit_updates: [0; 8],
                credit_peak_bytes: [0; 8],
                credit_waits: [0; 8],
                credit_victim_waits: [0; 8],
            };
            if let Some(timers) = p.fc.pfc_mut() {
                for prio in 0..8u8 {
                    st.paused_time[usize::from(prio)] = timers.paused_time(now, prio);
                }
            }
            if let Some(c) = p.fc.credit() {
                let block = u64::from(c.block_bytes());
                for vl in 0..c.vls() {
                    let v = usize::from(vl);
                    st.credit_blocked_time[v] = c.tx(vl).blocked_time(now);
                    st.credit_peak_bytes[v] = u64::from(c.rx(vl).peak()) * block;
                    st.credit_waits[v] = c.tx(vl).episodes();
                    // An episode still open ends with the run.
                    match c.tx(vl).last_block() {
                        Some((start, Time::MAX)) if log_credit => {
                            self.credit_blocks.push(CreditBlock {
                                start,
                                end: now,
                                node: p.node,
                                is_switch: matches!(self.slots[p.node as usize], Slot::Switch(_)),
                                port: p.local,
                                vl,
                            })
                        }
                        _ => {}
                    }
                }
                for (n, sent) in st.credit_updates.iter_mut().zip(c.fcp_sent()) {
                    *n = *sent;
                }
            }
            let peer_number = self.ports.wire(gp).peer;
            let peer = *self.ports.wire(peer_number);
            st.peer = peer.node;
            let here = &self.pause_episodes[self.ports.held_index(gp)];
            st.pause_episodes.copy_from_slice(&here.decided[..8]);
            st.port_pause_episodes = here.decided[8];
            st.credit_victim_waits = here.credit_victim;
            // Victim pauses are judged where the PAUSE frames arrive: this port's at its
            // peer, its peer's here.
            match self.ports.held_slot(peer_number) {
                Some(i) => {
                    (st.victim_pauses, st.port_victim_pauses) =
                        self.pause_episodes[i].peer_victim_pauses();
                }
                None => {
                    let (victim_pauses, port_victim_pauses) = here.peer_victim_pauses();
                    ports.push(PortStats {
                        node: peer.node,
                        port: peer.local,
                        victim_pauses,
                        port_victim_pauses,
                        ..PortStats::default()
                    });
                }
            }
            ports.push(st);
        }
        // By canonical index (node, then local port), whatever the part's numbering.
        ports.sort_unstable_by_key(|st| (st.node, st.port));
        let switches = self
            .switches
            .iter_mut()
            .map(|s| s.stats(now))
            .collect::<Vec<SwitchStats>>();
        let flows = self
            .flows
            .iter()
            .map(|f| FlowRecord {
                id: f.id,
                src: self.cfg.flows[f.id as usize].src.0,
                dst: f.dst,
                prio: f.prio,
                size: f.size,
                start: f.start,
                finish: f.finish,
                ideal_fct: f.ideal_fct,
                dport: f.dport,
                sport: f.sport,
                retransmitted: f.retransmitted,
                delivered: f.rcv_nxt,
            })
            .collect();
        let watchdog = self.watchdog_counts(now);
        let marking = self.marking_results();
        let channels = self.channel_stats();
        let mut r = RunResults {
            flows,
            pfc_sent: self.pfc_sent,
            pfc_received: self.pfc_received,
            pfc_log: !self.cfg.record.omit_pfc_log,
            credit_blocks: self.credit_blocks,
            credit_log: log_credit,
            ports,
            switches,
            drops: self.drops,
            lossless_drops: self.lossless_drops,
            queue_samples: self.queue_samples,
            buffer_samples: self.buffer_samples,
            rate_samples: self.rate_samples,
            events: self.events,
            end_time: now,
            stop_reason: self.stop,
            bytes: self.ledger,
            arena_slots: self.arena.capacity_used(),
            deadlock: None,
            watchdog,
            marking,
            mark_samples: std::mem::take(&mut self.marking.samples),
            channels,
        };
        r.sort_records();
        r
    }
}
