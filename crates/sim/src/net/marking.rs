//! Congestion marking: the one place that decides the mark a packet takes at a switch
//! egress queue.
//!
//! Today's congestion point is RED/ECN, at enqueue or at dequeue
//! ([`crate::config::EcnPoint`]), on data packets only. The mark is added to what the packet
//! carries ([`Mark::upgrade`]: nothing downgrades CE). Ternary congestion detection, a
//! per-queue state machine in `headroom_mech::tcd`, joins here.
//!
//! Random numbers: RED's uniform draw comes from the switch's own ECN stream. At enqueue one
//! is drawn for every data packet that reaches a marking queue; at dequeue only when the
//! marking probability is strictly between 0 and 1 (as the ns-3 HPCC simulator's switch
//! draws). Both keep every run's marks a function of its seed alone.

use super::packet::Kind;
use super::Simulation;
use crate::config::EcnPoint;
use headroom_mech::ecn::Mark;

impl Simulation {
    /// Marks data packet `pkt` of switch `s` on egress queue `q` of global port `port`,
    /// which holds `qlen` bytes (before the packet at enqueue, after it at dequeue), if
    /// `point` is where this run marks. Inlined into both hot paths (as the code it
    /// replaced was): a call per packet cost about 2 % of a run's instructions.
    #[inline(always)]
    pub(super) fn congestion_mark(
        &mut self,
        s: u32,
        port: u32,
        q: usize,
        qlen: u64,
        pkt: u32,
        point: EcnPoint,
    ) {
        if self.cfg.switch.ecn.point != point || self.arena.get(pkt).kind != Kind::Data {
            return;
        }
        let class = usize::from(self.ports[port as usize].red_class);
        let Some(red) = &self.red[class][q] else {
            return;
        };
        let rng = &mut self.switches[s as usize].rng_ecn;
        let ce = match point {
            EcnPoint::Enqueue => red.should_mark(qlen, rand::Rng::gen::<f64>(rng)),
            EcnPoint::Dequeue => {
                let p = red.probability(qlen);
                p >= 1.0 || (p > 0.0 && rand::Rng::gen::<f64>(rng) < p)
            }
        };
        if ce {
            let pk = self.arena.get_mut(pkt);
            pk.mark = pk.mark.upgrade(Mark::Ce);
        }
    }
}
