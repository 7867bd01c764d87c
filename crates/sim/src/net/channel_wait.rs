//! Frames waiting for a flow channel (the flow-channel fabric's full tables).
//!
//! A data frame for which its switch cannot make a channel (a full table, or its channel
//! pinned to another output since it was routed) waits on its input port, holding the
//! buffer its MMU admitted it to, and every frame arriving behind it on that port waits
//! with it, in order. With classes per hop there is one lane per class a frame arrived
//! in, so frames wait only behind frames of their own class (the classes' flow ids are
//! kept apart too: `SimConfig::channel_reserved_classes`). When a channel of the switch
//! is released, its waiting frames are retried, lane by lane and in order, as far as
//! they get channels.
//!
//! Invariants: a frame is in at most one lane, and counted in its switch's count while
//! it is; a lane's `since` is when its first frame became first. Frames waiting for each
//! other's channels are found by deadlock detection (`deadlock`).

use super::features::General;
use super::Simulation;
use headroom_mech::units::Time;
use headroom_mech::PRIORITIES;
use std::collections::VecDeque;

/// The frames waiting for channels, per port and lane.
#[derive(Debug)]
pub(super) struct ChannelWaits {
    /// Per global port and lane: the waiting frames, with the local egress port the MMU
    /// admitted each for.
    queues: Vec<VecDeque<(u32, u16)>>,
    /// Per global port and lane: since when its first frame has been first.
    since: Vec<Time>,
    /// Lanes per port: 1, or one per class with classes per hop.
    lanes: usize,
    /// Per switch: frames waiting on its ports.
    per_switch: Vec<u32>,
}

impl ChannelWaits {
    /// Waits for `ports` global ports and `switches` switches; one lane per class with
    /// classes per hop (`per_hop`).
    pub(super) fn new(ports: usize, switches: usize, per_hop: bool) -> Self {
        let lanes = if per_hop { PRIORITIES } else { 1 };
        ChannelWaits {
            queues: vec![VecDeque::new(); ports * lanes],
            since: vec![Time::ZERO; ports * lanes],
            lanes,
            per_switch: vec![0; switches],
        }
    }

    /// The lanes of global port `gp` (indices into the queues).
    fn lanes_of(&self, gp: u32) -> std::ops::Range<usize> {
        let first = gp as usize * self.lanes;
        first..first + self.lanes
    }

    /// The lane of global port `gp` for a frame that arrived in `class`.
    fn lane(&self, gp: u32, class: u8) -> usize {
        let lane = if self.lanes > 1 {
            usize::from(class)
        } else {
            0
        };
        gp as usize * self.lanes + lane
    }

    /// Whether a frame arriving on global port `gp` in `class` has frames to wait behind.
    fn behind(&self, gp: u32, class: u8) -> bool {
        !self.queues[self.lane(gp, class)].is_empty()
    }

    /// Frames waiting at switch `s`.
    pub(super) fn at(&self, s: u32) -> u32 {
        self.per_switch[s as usize]
    }

    /// Frames waiting anywhere.
    pub(super) fn total(&self) -> u64 {
        self.per_switch.iter().map(|&n| u64::from(n)).sum()
    }

    /// The frames waiting on global port `gp`.
    pub(super) fn waiting_on(&self, gp: u32) -> impl Iterator<Item = u32> + '_ {
        self.lanes_of(gp)
            .flat_map(|l| self.queues[l].iter().map(|&(pkt, _)| pkt))
    }

    /// Per lane of global port `gp` with frames: its first frame, the local egress port it
    /// is for, since when it has been first, and the lane's frames.
    pub(super) fn heads(
        &self,
        gp: u32,
    ) -> impl Iterator<Item = ((u32, u16, Time), impl Iterator<Item = u32> + '_)> + '_ {
        self.lanes_of(gp).filter_map(|l| {
            let &(pkt, out_local) = self.queues[l].front()?;
            let frames = self.queues[l].iter().map(|&(pkt, _)| pkt);
            Some(((pkt, out_local, self.since[l]), frames))
        })
    }
}

impl Simulation {
    /// Takes the admitted data frame `pkt`, arrived on global port `port` of switch `s`
    /// for local egress `out_local`, into its channel. Returns `false` if it must wait for
    /// a channel (it is then in its port's waiting lane).
    #[inline(never)] // flow-channel fabrics only: out of the plain fabrics' receive path
    pub(super) fn channel_admit(&mut self, s: u32, port: u32, out_local: u16, pkt: u32) -> bool {
        let Some(fc) = self.channels.as_deref() else {
            return true;
        };
        let behind = fc.waits.behind(port, self.arena.get(pkt).prio);
        if behind || self.channel_receive(s, port, out_local, pkt).is_err() {
            self.channel_wait(s, port, out_local, pkt);
            return false;
        }
        true
    }

    fn channel_wait(&mut self, s: u32, port: u32, out_local: u16, pkt: u32) {
        let Some(fc) = self.channels.as_deref_mut() else {
            return;
        };
        let waits = &mut fc.waits;
        let lane = waits.lane(port, self.arena.get(pkt).prio);
        if waits.queues[lane].is_empty() {
            waits.since[lane] = self.now;
        }
        waits.queues[lane].push_back((pkt, out_local));
        waits.per_switch[s as usize] += 1;
        fc.stats.waits += 1;
    }

    /// Channels of switch `s` were released: its waiting frames get theirs, in order, as
    /// far as they can.
    pub(super) fn retry_waiting(&mut self, s: u32) {
        if self
            .channels
            .as_deref()
            .is_none_or(|fc| fc.waits.at(s) == 0)
        {
            return;
        }
        for gp in self.switches[s as usize].ports() {
            let lanes = match self.channels.as_deref() {
                Some(fc) => fc.waits.lanes_of(gp),
                None => return,
            };
            for lane in lanes {
                self.retry_lane(s, gp, lane);
            }
        }
    }

    /// [`Simulation::retry_waiting`] for the frames waiting in `lane` of global port `gp`.
    fn retry_lane(&mut self, s: u32, gp: u32, lane: usize) {
        loop {
            let Some(fc) = self.channels.as_deref() else {
                return;
            };
            let Some(&(pkt, out_local)) = fc.waits.queues[lane].front() else {
                break;
            };
            if self.channel_receive(s, gp, out_local, pkt).is_err() {
                break;
            }
            if let Some(fc) = self.channels.as_deref_mut() {
                let waits = &mut fc.waits;
                waits.queues[lane].pop_front();
                waits.since[lane] = self.now;
                waits.per_switch[s as usize] -= 1;
            }
            let out = self.switches[s as usize].port(out_local);
            let class = self.egress_class::<General>((gp, out), self.arena.get(pkt));
            self.enqueue_egress::<General>(s, (gp, out), (class, pkt));
            let ready = self.arena.get(pkt).ready_at;
            if ready <= self.now {
                // Not `try_send`: a release may come while `out` hands a frame over.
                self.schedule_wake(out, self.now);
            } else {
                let free = self.ports[out].busy_until;
                self.schedule_wake(out, ready.max(free));
            }
        }
    }

    /// The frames waiting for a channel at switch `s`.
    pub(super) fn channel_waiting(&self, s: u32) -> impl Iterator<Item = u32> + '_ {
        let fc = self.channels.as_deref();
        self.switches[s as usize]
            .ports()
            .flat_map(move |gp| fc.into_iter().flat_map(move |fc| fc.waits.waiting_on(gp)))
    }
}
