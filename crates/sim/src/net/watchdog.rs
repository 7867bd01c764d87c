//! The PFC watchdog, driven: polls of every lossless egress queue of this part's switches,
//! and what a queue in a storm does (`headroom_mech::pfcwd`).
//!
//! Invariants:
//! - Polls happen at the same simulated times in every part, between windows
//!   (`Partitioned::run_until`); each part polls only its own switches, so the storms and
//!   their effects do not depend on the number of threads.
//! - A queue in a storm ignores PAUSE frames for its class (its pause ends at detection);
//!   with the drop action it holds nothing: what it held is dropped at detection and what
//!   arrives for it while the storm lasts is dropped on arrival, all under cause `pfcwd`.
//!   A port-level PAUSE (DSH) still stops it.

use super::features::Features;
use super::{Simulation, Slot};
use crate::results::WatchdogCounts;
use headroom_mech::pfcwd::{QueueObservation, WatchdogAction, WatchdogEvent};
use headroom_mech::units::Time;
use headroom_mech::PRIORITIES;

impl Simulation {
    /// Polls the watchdogs of this part's switch ports at `now` (every part has handled
    /// its events up to `now`) and acts on the storms that begin or end.
    pub(crate) fn watchdog_poll(&mut self, now: Time) {
        let Some(cfg) = self.cfg.switch.watchdog else {
            return;
        };
        // Nothing happened after `now` yet: bring the clock here for what the poll does.
        self.now = self.now.max(now);
        let lossless = self.cfg.switch.lossless;
        for s in 0..self.switches.len() {
            if !self.mine(self.switches[s].node) {
                continue;
            }
            for gp in self.switches[s].ports() {
                let mut resume = false;
                for q in (0..PRIORITIES).filter(|&q| lossless & (1 << q) != 0) {
                    let port = &self.ports[gp];
                    let obs = QueueObservation {
                        holds_data: port.nonempty & (1 << q) != 0,
                        paused_since: port.fc.pfc().and_then(|t| t.paused_since(now, q as u8)),
                    };
                    let i = self.ports.held_index(gp);
                    match self.watchdogs[i][q].poll(now, obs, &cfg) {
                        Some(WatchdogEvent::StormDetected) => {
                            let rate = self.ports[gp].rate;
                            // Ends the class's pause now (a zero-quanta frame's effect).
                            if let Some(timers) = self.ports[gp].fc.pfc_mut() {
                                timers.on_frame(now, q as u8, 0, rate, Time::ZERO);
                            }
                            if cfg.action == WatchdogAction::Drop {
                                self.ports[gp].wd_drop |= 1 << q;
                                self.flush_egress_queue(s as u32, gp, q, "pfcwd");
                            }
                            resume = true;
                        }
                        Some(WatchdogEvent::StormRestored) => {
                            self.ports[gp].wd_drop &= !(1 << q);
                        }
                        None => {}
                    }
                }
                if resume {
                    // Scheduled as the port's own events, as its other sends are.
                    self.creator = gp;
                    self.try_send(gp);
                }
            }
        }
    }

    /// A PAUSE frame for class `prio` arrived at switch port `port` with the watchdog on:
    /// whether the port must ignore it (its queue is in a storm). Port-level frames are
    /// never ignored.
    pub(super) fn watchdog_pause_frame(&mut self, port: u32, prio: u8, quanta: u16) -> bool {
        let Some(wd) = self
            .watchdogs
            .get_mut(self.ports.held_index(port))
            .and_then(|w| w.get_mut(usize::from(prio)))
        else {
            return false;
        };
        if quanta > 0 {
            wd.on_pause_frame(self.now);
        }
        wd.in_storm()
    }

    /// Whether a packet of class `prio` for global egress port `out` must be dropped
    /// because its queue is in a storm with the drop action.
    #[inline(always)]
    pub(super) fn watchdog_drops<F: Features>(&self, out: u32, prio: u8) -> bool {
        F::OPTIONAL && self.ports[out].wd_drop & (1 << prio) != 0
    }

    /// The watchdog counters of this part's switch ports at `now` (the watchdogs are kept
    /// for the ports this part holds, which are its own).
    pub(super) fn watchdog_counts(&self, now: Time) -> WatchdogCounts {
        let mut c = WatchdogCounts::default();
        for (gp, queues) in self.ports.held_numbers().zip(&self.watchdogs) {
            let node = self.ports.wire(gp).node;
            if !matches!(self.slots[node as usize], Slot::Switch(_)) {
                continue;
            }
            for w in queues {
                c.storms += u64::from(w.storms);
                c.restorations += u64::from(w.restorations);
                c.storm_time += w.storm_time_at(now);
            }
        }
        c
    }
}
