//! The ingress edge's three-level arbiter (the flow-channel patent's INQ): injection-limit
//! id (ILID) → application group (APPG) → flow channel (FC).
//!
//! Each APPG keeps a queue of the FCs that have something to send, each FC in it at most
//! once (the `fc_queued` mask). A grant is chosen in three steps: round-robin over the
//! ILIDs that may inject (`injection_ok`, one bit per ILID), round-robin over the APPGs
//! mapped to that ILID from the ILID's own priority pointer, and the FC at the head of that
//! APPG's queue. Fairness is therefore between applications first: an application with one
//! flow channel and one with a hundred get an edge port's grants half and half, where a
//! round-robin over flow channels gives the first one 1 %.
//!
//! The same machine is the port-fair and the flow-fair arbiter of the patent's Fig. 6A:
//! key its FCs by input port, or by flow, and map every one to APPG 0.
//!
//! A grant is speculative, as in the patent's pipeline: [`InqArbiter::select`] changes
//! nothing, and [`InqArbiter::complete`] applies the outcome:
//! - sent, or aborted by the flow's own limit (`abort_fc_dequeue`): the FC leaves the head of
//!   its APPG queue and, if its flow queue still holds packets, re-enters at the tail (with
//!   `was_abort` set after a flow-limit abort: the patent retries it at lower priority);
//! - aborted by the ILID's injection limit (`abort_il`): the arbiter is as before the grant,
//!   except that the ILID's priority pointer is set to the aborted APPG, so that it comes
//!   next, and the FC stays at the head of its queue.
//!
//! (The seed is the authority on the flow-limit abort: the FC's APPG dequeue completes and
//! it re-enters at the tail; only an injection-limit abort keeps it at the head.)
//!
//! APPG 127 is reserved for frames of no flow and maps to an ILID that no injection limit
//! holds ([`UNLIMITED_ILID`]); a real flow whose computed APPG is 127 gets 126
//! ([`flow_appg`]).
//!
//! Invariants (checked by the tests at the bottom): an FC is queued at most once, in one
//! APPG; `fc_queued` is set exactly for the queued FCs; each ILID's mask of non-empty APPG
//! queues matches the queues; a selection is always the head of a non-empty queue of an
//! ILID that may inject.

use std::collections::VecDeque;
use thiserror::Error;

/// Application groups per edge port.
pub const APPGS: usize = 128;
/// Injection-limit ids subject to a limit.
pub const ILIDS: usize = 8;
/// The APPG of frames that belong to no flow.
pub const NO_FLOW_APPG: u8 = 127;
/// The ILID of [`NO_FLOW_APPG`]: never held by an injection limit.
pub const UNLIMITED_ILID: u8 = ILIDS as u8;

/// The APPG a real flow is queued in, given the one its match computed: [`NO_FLOW_APPG`] is
/// reserved, so 127 becomes 126 (the caller notes it); any index is taken modulo [`APPGS`].
pub fn flow_appg(computed: u8) -> u8 {
    match computed % APPGS as u8 {
        NO_FLOW_APPG => NO_FLOW_APPG - 1,
        a => a,
    }
}

/// A configuration the arbiter cannot run with.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum InqArbiterError {
    /// An APPG is mapped to an ILID that does not exist (ILIDs are 0 to 7).
    #[error("APPG {appg} is mapped to ILID {ilid}; ILIDs are 0 to 7")]
    IlidOutOfRange {
        /// The APPG.
        appg: usize,
        /// Its ILID.
        ilid: u8,
    },
    /// The APPG → ILID map does not have one entry per APPG below 127.
    #[error("the APPG to ILID map has {0} entries; it needs 127 (APPG 127 is reserved)")]
    MapLength(usize),
}

/// A grant [`InqArbiter::select`] proposes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The ILID chosen.
    pub ilid: u8,
    /// The APPG chosen (mapped to `ilid`).
    pub appg: u8,
    /// The FC at the head of the APPG's queue.
    pub fc: u32,
    /// Its last grant was aborted by its flow limit (the patent retries it at lower
    /// priority).
    pub was_abort: bool,
}

/// What became of a grant (the outcome of the FC dequeue the patent's pipeline attempts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A packet left; `more`: the FC's flow queue still holds packets.
    Sent {
        /// The flow queue is not empty.
        more: bool,
    },
    /// The flow's own injection limit stopped it (`abort_fc_dequeue`); `more` as above.
    FlowLimit {
        /// The flow queue is not empty.
        more: bool,
    },
    /// The ILID's injection limit stopped it (`abort_il`).
    InjectionLimit,
}

/// One queued FC.
#[derive(Clone, Copy, Debug)]
struct Entry {
    fc: u32,
    was_abort: bool,
}

/// The three-level arbiter of one edge port's input queue.
#[derive(Clone, Debug)]
pub struct InqArbiter {
    /// ILID of each APPG (the last is [`UNLIMITED_ILID`]).
    ilid_of: [u8; APPGS],
    /// FCs with something to send, per APPG, in arrival order.
    queues: Vec<VecDeque<Entry>>,
    /// Per FC: queued in an APPG queue.
    fc_queued: Vec<bool>,
    /// Per ILID (and the unlimited one): bit `a` set when APPG `a`, mapped to it, has a
    /// non-empty queue.
    nonempty: [u128; ILIDS + 1],
    /// The ILID the round-robin considers first.
    ilid_next: u8,
    /// Per ILID: the APPG its round-robin considers first (its priority pointer).
    appg_next: [u8; ILIDS + 1],
}

impl InqArbiter {
    /// An arbiter whose APPGs 0 to 126 map to the ILIDs in `ilid_of`.
    pub fn new(ilid_of: &[u8]) -> Result<Self, InqArbiterError> {
        if ilid_of.len() != APPGS - 1 {
            return Err(InqArbiterError::MapLength(ilid_of.len()));
        }
        let mut map = [UNLIMITED_ILID; APPGS];
        for (appg, &ilid) in ilid_of.iter().enumerate() {
            if usize::from(ilid) >= ILIDS {
                return Err(InqArbiterError::IlidOutOfRange { appg, ilid });
            }
            map[appg] = ilid;
        }
        Ok(InqArbiter {
            ilid_of: map,
            queues: vec![VecDeque::new(); APPGS],
            fc_queued: Vec::new(),
            nonempty: [0; ILIDS + 1],
            ilid_next: 0,
            appg_next: [0; ILIDS + 1],
        })
    }

    /// An arbiter whose APPGs all map to ILID 0.
    pub fn single_ilid() -> Self {
        let ilid_of = [0u8; APPGS - 1];
        // Cannot fail: the map has 127 entries, all ILID 0.
        Self::new(&ilid_of).expect("a valid map")
    }

    /// The ILID APPG `appg` maps to.
    pub fn ilid_of(&self, appg: u8) -> u8 {
        self.ilid_of[usize::from(appg) % APPGS]
    }

    /// A packet was queued for FC `fc` of APPG `appg`: the FC joins the tail of the APPG's
    /// queue unless it is queued already. Returns whether it joined. The `fc_queued` mask
    /// grows to the largest FC id seen.
    pub fn enqueue(&mut self, fc: u32, appg: u8) -> bool {
        let f = fc as usize;
        if f >= self.fc_queued.len() {
            self.fc_queued.resize(f + 1, false);
        }
        if self.fc_queued[f] {
            return false;
        }
        self.fc_queued[f] = true;
        let a = usize::from(appg) % APPGS;
        self.queues[a].push_back(Entry {
            fc,
            was_abort: false,
        });
        self.nonempty[usize::from(self.ilid_of[a])] |= 1 << a;
        true
    }

    /// Whether FC `fc` is in an APPG queue.
    pub fn is_queued(&self, fc: u32) -> bool {
        self.fc_queued.get(fc as usize).copied().unwrap_or(false)
    }

    /// Whether no FC is queued.
    pub fn is_empty(&self) -> bool {
        self.nonempty.iter().all(|&m| m == 0)
    }

    /// The grant the arbiter proposes when the ILIDs in `injection_ok` (bit `i`: ILID `i`)
    /// may inject; the unlimited ILID always may. Changes nothing.
    pub fn select(&self, injection_ok: u8) -> Option<Selection> {
        let ilids = ILIDS + 1;
        (0..ilids)
            .map(|k| (usize::from(self.ilid_next) + k) % ilids)
            .filter(|&i| i == ILIDS || injection_ok & (1 << i) != 0)
            .find_map(|i| {
                let appg = round_robin(self.nonempty[i], self.appg_next[i])?;
                // Cannot be empty: `nonempty` has the APPG's bit only while it holds FCs.
                let head = self.queues[usize::from(appg)].front()?;
                Some(Selection {
                    ilid: i as u8,
                    appg,
                    fc: head.fc,
                    was_abort: head.was_abort,
                })
            })
    }

    /// Applies the outcome of grant `sel` (the last [`InqArbiter::select`], with no
    /// [`InqArbiter::complete`] since).
    pub fn complete(&mut self, sel: Selection, outcome: Outcome) {
        let i = usize::from(sel.ilid);
        let a = usize::from(sel.appg);
        debug_assert_eq!(self.queues[a].front().map(|e| e.fc), Some(sel.fc));
        let (more, was_abort) = match outcome {
            Outcome::InjectionLimit => {
                // The arbiter's state goes back to before the grant, and this APPG is
                // the ILID's next.
                self.appg_next[i] = sel.appg;
                return;
            }
            Outcome::Sent { more } => (more, false),
            Outcome::FlowLimit { more } => (more, true),
        };
        self.queues[a].pop_front();
        if more {
            self.queues[a].push_back(Entry {
                fc: sel.fc,
                was_abort,
            });
        } else {
            self.fc_queued[sel.fc as usize] = false;
        }
        if self.queues[a].is_empty() {
            self.nonempty[i] &= !(1 << a);
        }
        self.appg_next[i] = ((a + 1) % APPGS) as u8;
        self.ilid_next = ((i + 1) % (ILIDS + 1)) as u8;
    }
}

/// The first set bit of `mask` at or after `from`, wrapping around.
fn round_robin(mask: u128, from: u8) -> Option<u8> {
    if mask == 0 {
        return None;
    }
    let at_or_after = mask & (u128::MAX << from);
    let pick = if at_or_after != 0 { at_or_after } else { mask };
    Some(pick.trailing_zeros() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Grants `n` packets to always-backlogged FCs and counts them per FC.
    fn grants(arb: &mut InqArbiter, n: usize, fcs: usize) -> Vec<usize> {
        let mut count = vec![0; fcs];
        for _ in 0..n {
            let sel = arb.select(u8::MAX).expect("backlogged");
            count[sel.fc as usize] += 1;
            arb.complete(sel, Outcome::Sent { more: true });
        }
        count
    }

    #[test]
    fn applications_get_equal_shares_whatever_their_flow_counts() {
        // Application X: one FC in APPG 0; application Y: 100 FCs in APPG 1.
        let mut arb = InqArbiter::single_ilid();
        arb.enqueue(0, 0);
        for fc in 1..=100 {
            arb.enqueue(fc, 1);
        }
        let count = grants(&mut arb, 10_000, 101);
        assert_eq!(count[0], 5_000);
        assert!(count[1..].iter().all(|&c| c == 50));
    }

    #[test]
    fn one_group_for_every_flow_gives_each_flow_an_equal_share() {
        // Per-flow round-robin: the one-flow application gets 1 / 101.
        let mut arb = InqArbiter::single_ilid();
        for fc in 0..=100 {
            arb.enqueue(fc, 0);
        }
        let count = grants(&mut arb, 10_100, 101);
        assert!(count.iter().all(|&c| c == 100));
    }

    #[test]
    fn ilids_take_turns_and_a_held_ilid_waits() {
        let mut map = [0u8; APPGS - 1];
        map[1] = 3;
        let mut arb = InqArbiter::new(&map).expect("valid");
        arb.enqueue(0, 0); // ILID 0
        arb.enqueue(1, 1); // ILID 3
        let mut order = Vec::new();
        for _ in 0..4 {
            let sel = arb.select(u8::MAX).expect("backlogged");
            order.push(sel.ilid);
            arb.complete(sel, Outcome::Sent { more: true });
        }
        assert_eq!(order, [0, 3, 0, 3]);
        // ILID 3 may not inject: only ILID 0 is granted.
        for _ in 0..3 {
            let sel = arb.select(0b0000_0001).expect("ILID 0 may");
            assert_eq!(sel.ilid, 0);
            arb.complete(sel, Outcome::Sent { more: true });
        }
        assert_eq!(arb.select(0), None);
    }

    #[test]
    fn the_no_flow_group_is_never_held_by_a_limit() {
        let mut arb = InqArbiter::single_ilid();
        arb.enqueue(0, 0);
        arb.enqueue(1, NO_FLOW_APPG);
        let sel = arb.select(0).expect("the unlimited ILID may always inject");
        assert_eq!(
            (sel.ilid, sel.appg, sel.fc),
            (UNLIMITED_ILID, NO_FLOW_APPG, 1)
        );
        assert_eq!(arb.ilid_of(NO_FLOW_APPG), UNLIMITED_ILID);
        assert_eq!(flow_appg(127), 126);
        assert_eq!(flow_appg(5), 5);
        assert_eq!(flow_appg(128 + 9), 9);
    }

    #[test]
    fn an_injection_limit_abort_makes_the_aborted_group_next() {
        let mut arb = InqArbiter::single_ilid();
        arb.enqueue(0, 0);
        arb.enqueue(1, 1);
        arb.enqueue(2, 2);
        let first = arb.select(u8::MAX).expect("backlogged");
        arb.complete(first, Outcome::Sent { more: true }); // APPG 0 served; pointer at 1
        let sel = arb.select(u8::MAX).expect("backlogged");
        assert_eq!(sel.appg, 1);
        arb.complete(sel, Outcome::InjectionLimit);
        // Nothing moved: the same FC is proposed again, at the head of its queue.
        assert_eq!(arb.select(u8::MAX), Some(sel));
        arb.complete(sel, Outcome::Sent { more: false });
        assert!(!arb.is_queued(1));
        assert_eq!(arb.select(u8::MAX).map(|s| s.appg), Some(2));
    }

    #[test]
    fn a_flow_limit_abort_sends_the_channel_to_the_tail_marked() {
        let mut arb = InqArbiter::single_ilid();
        arb.enqueue(0, 0);
        arb.enqueue(1, 0);
        let sel = arb.select(u8::MAX).expect("backlogged");
        assert_eq!((sel.fc, sel.was_abort), (0, false));
        arb.complete(sel, Outcome::FlowLimit { more: true });
        let sel = arb.select(u8::MAX).expect("backlogged");
        assert_eq!(sel.fc, 1);
        arb.complete(sel, Outcome::Sent { more: true });
        let sel = arb.select(u8::MAX).expect("backlogged");
        assert_eq!((sel.fc, sel.was_abort), (0, true));
        arb.complete(sel, Outcome::Sent { more: true });
        let sel = arb.select(u8::MAX).expect("backlogged");
        arb.complete(sel, Outcome::Sent { more: true });
        let sel = arb.select(u8::MAX).expect("backlogged");
        assert_eq!((sel.fc, sel.was_abort), (0, false));
    }

    #[test]
    fn a_channel_is_queued_once_and_leaves_when_its_queue_empties() {
        let mut arb = InqArbiter::single_ilid();
        assert!(arb.enqueue(0, 4));
        assert!(!arb.enqueue(0, 4));
        let sel = arb.select(u8::MAX).expect("queued");
        arb.complete(sel, Outcome::Sent { more: false });
        assert!(arb.is_empty());
        assert!(!arb.is_queued(0));
        assert_eq!(arb.select(u8::MAX), None);
        assert!(arb.enqueue(0, 4));
    }

    #[test]
    fn bad_maps_are_refused() {
        let mut map = [0u8; APPGS - 1];
        map[7] = 8;
        assert_eq!(
            InqArbiter::new(&map).err(),
            Some(InqArbiterError::IlidOutOfRange { appg: 7, ilid: 8 })
        );
        assert_eq!(
            InqArbiter::new(&[0; 128]).err(),
            Some(InqArbiterError::MapLength(128))
        );
    }

    /// Checks the module's invariants against the queues themselves.
    fn check(arb: &InqArbiter) {
        let mut seen = vec![false; arb.fc_queued.len()];
        for (a, q) in arb.queues.iter().enumerate() {
            let i = usize::from(arb.ilid_of[a]);
            assert_eq!(arb.nonempty[i] & (1 << a) != 0, !q.is_empty(), "APPG {a}");
            for e in q {
                assert!(!seen[e.fc as usize], "FC {} queued twice", e.fc);
                seen[e.fc as usize] = true;
            }
        }
        assert_eq!(seen, arb.fc_queued);
    }

    proptest::proptest! {
        /// Any sequence of arrivals and grant outcomes keeps the invariants, and every
        /// selection is the head of a queue of an ILID that may inject.
        #[test]
        fn invariants_hold(
            steps in proptest::collection::vec((0u32..12, 0u8..128, 0u8..4, proptest::bits::u8::ANY), 1..300),
        ) {
            let mut map = [0u8; APPGS - 1];
            for (a, m) in map.iter_mut().enumerate() {
                *m = (a % ILIDS) as u8;
            }
            let mut arb = InqArbiter::new(&map).expect("valid");
            for (fc, appg, op, ok) in steps {
                if op == 0 {
                    arb.enqueue(fc, appg);
                } else if let Some(sel) = arb.select(ok) {
                    proptest::prop_assert!(sel.ilid == UNLIMITED_ILID || ok & (1 << sel.ilid) != 0);
                    proptest::prop_assert_eq!(arb.ilid_of(sel.appg), sel.ilid);
                    proptest::prop_assert_eq!(
                        arb.queues[usize::from(sel.appg)].front().map(|e| e.fc),
                        Some(sel.fc)
                    );
                    let outcome = match op {
                        1 => Outcome::Sent { more: fc % 2 == 0 },
                        2 => Outcome::FlowLimit { more: fc % 3 != 0 },
                        _ => Outcome::InjectionLimit,
                    };
                    arb.complete(sel, outcome);
                } else {
                    // Nothing to grant: no queue of an ILID that may inject holds an FC.
                    for i in 0..=ILIDS {
                        if i == ILIDS || ok & (1 << i) != 0 {
                            proptest::prop_assert_eq!(arb.nonempty[i], 0);
                        }
                    }
                }
                check(&arb);
            }
        }
    }

    #[test]
    fn round_robin_wraps() {
        assert_eq!(round_robin(0, 3), None);
        assert_eq!(round_robin(0b1001, 1), Some(3));
        assert_eq!(round_robin(0b1001, 4), Some(0));
        assert_eq!(round_robin(1 << 127, 127), Some(127));
    }
}
