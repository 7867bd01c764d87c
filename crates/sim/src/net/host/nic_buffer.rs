//! The NIC's receive buffer, where one is modelled (`[host] nic_buffer`): frames drain from
//! it at the host's drain rate; above XOFF it pauses the switch above (PFC on the host's
//! port), at or below XON it resumes it.
//!
//! Invariants: the buffer never holds more than its size (a data frame without room is
//! dropped, and counted as a lossless drop on a lossless priority); a paused priority is
//! resumed exactly once, by the drain check that finds the buffer at or below XON; at most
//! one drain check is pending per host (`Host::rx_check`).

use super::super::Simulation;
use crate::engine::Event;
use crate::net::packet::Packet;
use crate::results::StopReason;

impl Simulation {
    /// Drains the NIC receive buffer of host `h` up to now.
    fn nic_settle(&mut self, h: u32, drain: headroom_mech::units::Rate) {
        let now = self.now;
        let host = &mut self.hosts[h as usize];
        let drained = drain.bytes_in(now - host.rx_at);
        host.rx_bytes = host.rx_bytes.saturating_sub(drained);
        host.rx_at = now;
    }

    /// Puts a data packet into the NIC receive buffer (when one is modelled); pauses the
    /// switch above XOFF. `false`: no room, the packet is lost (a lossless drop if its
    /// priority is lossless).
    pub(in crate::net) fn nic_admit(&mut self, h: u32, pk: &Packet) -> bool {
        let Some(b) = self.cfg.host.nic_buffer.clone() else {
            return true;
        };
        self.nic_settle(h, b.drain);
        let lossless = self.cfg.switch.lossless & (1 << pk.prio) != 0;
        let host = &mut self.hosts[h as usize];
        if host.rx_bytes + u64::from(pk.size) > b.size {
            let node = host.node;
            if lossless {
                self.lossless_drops.push(crate::results::LosslessDrop {
                    time: self.now,
                    node,
                    port: 0,
                    prio: pk.prio,
                    cause: "nic_buffer_full",
                });
                if self.cfg.record.fail_on_lossless_drop {
                    self.stop = Some(StopReason::LosslessDrop(
                        self.lossless_drops[self.lossless_drops.len() - 1],
                    ));
                }
            }
            *self.drops.entry("nic_buffer_full".into()).or_insert(0) += 1;
            return false;
        }
        host.rx_bytes += u64::from(pk.size);
        if lossless && host.rx_bytes >= b.xoff && host.rx_paused & (1 << pk.prio) == 0 {
            host.rx_paused |= 1 << pk.prio;
            let port = host.port;
            self.pfc_transition(port, Some(pk.prio), true);
        }
        self.nic_schedule_check(h, &b);
        true
    }

    fn nic_schedule_check(&mut self, h: u32, b: &crate::config::NicBufferConfig) {
        let host = &mut self.hosts[h as usize];
        if host.rx_paused != 0 && !host.rx_check {
            host.rx_check = true;
            let t = self.now + b.drain.serialization(host.rx_bytes.saturating_sub(b.xon));
            self.schedule(t, Event::NicDrain { host: h });
        }
    }

    /// The drain check of host `h`: resume every paused priority once at or below XON.
    pub(in crate::net) fn nic_drain(&mut self, h: u32) {
        let Some(b) = self.cfg.host.nic_buffer.clone() else {
            return;
        };
        self.hosts[h as usize].rx_check = false;
        self.nic_settle(h, b.drain);
        let host = &mut self.hosts[h as usize];
        if host.rx_bytes <= b.xon {
            let paused = std::mem::take(&mut host.rx_paused);
            let port = host.port;
            for prio in 0..8u8 {
                if paused & (1 << prio) != 0 {
                    self.pfc_transition(port, Some(prio), false);
                }
            }
        } else {
            self.nic_schedule_check(h, &b);
        }
    }
}
