//! The two halves of one VL's credit accounting: the transmitter's FCTBS, its limit and
//! its blocked episodes, and the receiver's ABR and the blocks it holds (the parent
//! module's docs give the rules and invariants).

use super::{diff, MASK, MAX_OUTSTANDING};
use crate::units::Time;

/// The transmitting side of one VL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlTransmitter {
    /// Total blocks sent, modulo 4096.
    fctbs: u16,
    /// Credit limit from the receiver's latest FCP, modulo 4096.
    fccl: u16,
    /// Blocks of the frame refused for lack of credit (0: not blocked).
    wanted: u16,
    /// Start of the current blocked episode.
    blocked_since: Time,
    /// Time blocked in finished episodes.
    blocked_total: Time,
    /// End of the last finished blocked episode ([`NEVER`]: none has finished; not an
    /// `Option`, which would push the VL's state past one cache line).
    unblocked_at: Time,
    /// Blocked episodes begun.
    episodes: u32,
}

/// [`VlTransmitter::unblocked_at`] of a VL no blocked episode of which has finished.
const NEVER: Time = Time::MAX;

impl Default for VlTransmitter {
    fn default() -> Self {
        VlTransmitter {
            fctbs: 0,
            fccl: 0,
            wanted: 0,
            blocked_since: Time::ZERO,
            blocked_total: Time::ZERO,
            unblocked_at: NEVER,
            episodes: 0,
        }
    }
}

impl VlTransmitter {
    /// A transmitter whose receiver has granted `limit` blocks (the link's initial
    /// handshake).
    pub fn with_limit(limit: u16) -> Self {
        VlTransmitter {
            fccl: limit.min(MAX_OUTSTANDING),
            ..Self::default()
        }
    }

    /// Blocks it may still send.
    pub fn available(&self) -> u16 {
        let d = diff(self.fccl, self.fctbs);
        if d <= MAX_OUTSTANDING {
            d
        } else {
            0
        }
    }

    /// Whether a frame of `blocks` may start at `now`. A refusal opens a blocked episode
    /// (if none is open); it ends when a limit arrives that lets the frame go.
    pub fn may_send(&mut self, now: Time, blocks: u16) -> bool {
        if diff(self.fccl, self.fctbs.wrapping_add(blocks)) <= MAX_OUTSTANDING
            && blocks <= MAX_OUTSTANDING
        {
            return true;
        }
        if self.wanted == 0 {
            self.blocked_since = now;
            self.episodes += 1;
        }
        self.wanted = blocks.max(1);
        false
    }

    /// A frame of `blocks` started (after [`VlTransmitter::may_send`] allowed it).
    pub fn on_sent(&mut self, blocks: u16) {
        debug_assert!(blocks <= self.available(), "sent beyond the credit limit");
        self.fctbs = self.fctbs.wrapping_add(blocks) & MASK;
    }

    /// The receiver's FCP set the limit to `fccl` at `now`. Returns whether this lifted a
    /// block (the transmitter should look again).
    pub fn on_limit(&mut self, now: Time, fccl: u16) -> bool {
        self.fccl = fccl & MASK;
        if self.wanted != 0 && self.available() >= self.wanted {
            self.blocked_total += now - self.blocked_since;
            self.wanted = 0;
            self.unblocked_at = now;
            return true;
        }
        false
    }

    /// The latest blocked episode: its start and its end (`Time::MAX` while it lasts);
    /// `None` if the VL was never blocked. What a paused class is to PFC.
    pub fn last_block(&self) -> Option<(Time, Time)> {
        if self.wanted != 0 {
            Some((self.blocked_since, Time::MAX))
        } else if self.unblocked_at == NEVER {
            None
        } else {
            Some((self.blocked_since, self.unblocked_at))
        }
    }

    /// No blocked episode changes at or after this time unless a frame is refused: the end
    /// of the last one (`Time::MAX` while blocked; `Time::ZERO` if never blocked). The
    /// credit counterpart of `PauseTimers::latest_until`.
    pub fn latest_until(&self) -> Time {
        if self.wanted != 0 {
            Time::MAX
        } else if self.unblocked_at == NEVER {
            Time::ZERO
        } else {
            self.unblocked_at
        }
    }

    /// Total blocks sent, modulo 4096 (what this side's FCPs carry).
    pub fn fctbs(&self) -> u16 {
        self.fctbs
    }

    /// The latest limit received.
    pub fn limit(&self) -> u16 {
        self.fccl
    }

    /// Whether a frame is waiting for credit.
    pub fn is_blocked(&self) -> bool {
        self.wanted != 0
    }

    /// Blocked episodes begun (the credit analogue of pauses received).
    pub fn episodes(&self) -> u32 {
        self.episodes
    }

    /// Time spent blocked for lack of credit up to `now` (an open episode counts to `now`).
    pub fn blocked_time(&self, now: Time) -> Time {
        let open = if self.wanted != 0 {
            now - self.blocked_since
        } else {
            Time::ZERO
        };
        self.blocked_total + open
    }
}

/// The receiving side of one VL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VlReceiver {
    /// Blocks received (adjusted to the peer's FCTBS at each FCP), modulo 4096.
    abr: u16,
    /// Blocks received and not yet freed.
    held: u32,
    /// Largest `held` seen.
    peak: u32,
}

impl VlReceiver {
    /// A frame of `blocks` arrived.
    pub fn on_received(&mut self, blocks: u16) {
        self.abr = self.abr.wrapping_add(blocks) & MASK;
        self.held += u32::from(blocks);
        self.peak = self.peak.max(self.held);
    }

    /// The peer's FCP carries its FCTBS: every frame it counts has arrived or was lost
    /// (a link delivers in order), so ABR becomes exactly that.
    pub fn on_peer_fctbs(&mut self, fctbs: u16) {
        self.abr = fctbs & MASK;
    }

    /// `blocks` held here left the buffer (forwarded or delivered).
    pub fn on_freed(&mut self, blocks: u16) {
        debug_assert!(u32::from(blocks) <= self.held, "freed more than held");
        self.held = self.held.saturating_sub(u32::from(blocks));
    }

    /// The limit to advertise when `free` more blocks could be accepted now.
    pub fn limit(&self, free: u32) -> u16 {
        let grant = u16::try_from(free.min(u32::from(MAX_OUTSTANDING))).unwrap_or(0);
        self.abr.wrapping_add(grant) & MASK
    }

    /// Blocks held.
    pub fn held(&self) -> u32 {
        self.held
    }

    /// Most blocks held at once.
    pub fn peak(&self) -> u32 {
        self.peak
    }

    /// Blocks received, modulo 4096.
    pub fn abr(&self) -> u16 {
        self.abr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transmitter_sends_up_to_its_limit_and_waits() {
        let mut t = VlTransmitter::with_limit(10);
        assert_eq!(t.available(), 10);
        assert!(t.may_send(Time(0), 4));
        t.on_sent(4);
        assert!(t.may_send(Time(0), 6));
        t.on_sent(6);
        assert_eq!(t.available(), 0);
        assert!(!t.may_send(Time(100), 1));
        assert!(t.is_blocked());
        // A second refusal does not restart the episode.
        assert!(!t.may_send(Time(150), 2));
        // A limit that does not cover the waiting frame keeps it blocked.
        assert!(!t.on_limit(Time(200), 11));
        assert!(t.on_limit(Time(300), 12), "lifted");
        assert_eq!(t.blocked_time(Time(400)), Time(200));
        assert!(t.may_send(Time(300), 2));
    }

    #[test]
    fn credit_arithmetic_wraps_modulo_4096() {
        let mut t = VlTransmitter::with_limit(0);
        // Send 4090 blocks in total, granted step by step, crossing the wrap.
        let mut limit = 0u16;
        for _ in 0..409 {
            limit = (limit + 10) & MASK;
            t.on_limit(Time(0), limit);
            assert!(t.may_send(Time(0), 10));
            t.on_sent(10);
        }
        assert_eq!(t.fctbs(), 4090);
        limit = (limit + 20) & MASK; // wraps to 14
        assert_eq!(limit, 14);
        t.on_limit(Time(0), limit);
        assert_eq!(t.available(), 20);
        assert!(t.may_send(Time(0), 20));
        assert!(!t.may_send(Time(0), 21));
    }

    #[test]
    fn a_stale_limit_behind_the_sent_count_grants_nothing() {
        let mut t = VlTransmitter::with_limit(100);
        t.on_sent(100);
        // An old FCP (limit 60, before 100 blocks went) must not read as 4056 blocks.
        t.on_limit(Time(0), 60);
        assert_eq!(t.available(), 0);
        assert!(!t.may_send(Time(0), 1));
    }

    #[test]
    fn never_more_than_2048_blocks_outstanding() {
        let t = VlTransmitter::with_limit(4000);
        assert_eq!(t.available(), MAX_OUTSTANDING);
        let mut r = VlReceiver::default();
        assert_eq!(r.limit(1_000_000), MAX_OUTSTANDING);
        r.on_received(10);
        assert_eq!(r.limit(5), 15);
    }

    #[test]
    fn a_receiver_grants_what_it_can_hold() {
        // A 100-block buffer: the transmitter fills it, the receiver frees some.
        let cap = 100u32;
        let mut r = VlReceiver::default();
        let mut t = VlTransmitter::with_limit(r.limit(cap));
        let mut sent = 0;
        while t.may_send(Time(0), 3) {
            t.on_sent(3);
            r.on_received(3);
            sent += 3;
        }
        assert_eq!(sent, 99);
        assert!(r.held() <= cap);
        r.on_freed(30);
        t.on_limit(Time(0), r.limit(cap - r.held()));
        assert_eq!(t.available(), 31);
        assert_eq!(r.peak(), 99);
    }

    #[test]
    fn the_peer_fctbs_heals_a_lost_frame() {
        let cap = 20u32;
        let mut r = VlReceiver::default();
        let mut t = VlTransmitter::with_limit(r.limit(cap));
        // Two frames of 5 blocks; the first is lost on the wire.
        t.on_sent(5);
        t.on_sent(5);
        r.on_received(5);
        // Without the peer's count, the receiver would grant 5 blocks too few for ever
        // (10 instead of the 15 it has free).
        assert_eq!(diff(r.limit(cap - r.held()), t.fctbs()), 10);
        r.on_peer_fctbs(t.fctbs());
        r.on_freed(5);
        t.on_limit(Time(0), r.limit(cap - r.held()));
        assert_eq!(t.available() as u32, cap, "all credit back once drained");
    }

    #[test]
    fn a_lost_fcp_is_healed_by_the_next() {
        let cap = 8u32;
        let mut r = VlReceiver::default();
        let mut t = VlTransmitter::with_limit(r.limit(cap));
        t.on_sent(8);
        r.on_received(8);
        r.on_freed(4);
        let _lost = r.limit(cap - r.held());
        r.on_freed(4);
        t.on_limit(Time(0), r.limit(cap - r.held()));
        assert_eq!(t.available(), 8);
    }
}
