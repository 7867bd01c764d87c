//! Credit-based link flow control (the InfiniBand link layer).
//!
//! Flow control is per virtual lane (VL) and counted in blocks (64 bytes by default). Each
//! end of a link is a transmitter towards its peer and a receiver of the peer's frames:
//! - [`VlTransmitter`] keeps FCTBS, the blocks it has sent (modulo 4096), and FCCL, the
//!   latest credit limit its receiver advertised. It may start a frame of `n` blocks iff
//!   `(FCCL − (FCTBS + n)) mod 4096 ≤ 2048`.
//! - [`VlReceiver`] keeps ABR, the blocks it has received (modulo 4096), and how many of
//!   them it still holds. It advertises `FCCL = ABR + free blocks` (at most 2048 ahead).
//! - Flow-control packets (FCPs) carry, per VL, the sender's FCTBS and FCCL. A receiver that
//!   gets the peer's FCTBS sets ABR to it, so a data frame lost on the wire costs no credit
//!   for ever; limits are absolute, so a lost FCP is healed by the next one.
//! - [`CreditPort`] holds both halves of one link end for every VL and decides when to send
//!   FCPs: each VL within one update period of its first change since its last FCP, and
//!   (optionally) as soon as more than a threshold of blocks was freed on a VL since its
//!   last FCP. Each VL keeps its own deadline, so traffic on one VL (ACKs on theirs) never
//!   hurries another VL's update.
//!
//! Invariants: a transmitter never has more than 2048 blocks outstanding and never sends
//! beyond the limit it was given; a receiver never advertises more than it can hold
//! (`FCCL − ABR ≤ free`); a blocked episode of a VL (it wanted to send and had no credit)
//! is accounted once, from the first refusal to the credit that lifts it.

use crate::units::Time;

mod vl;

pub use vl::{VlReceiver, VlTransmitter};

/// Credits are counted modulo this (12-bit FCTBS, FCCL and ABR).
pub const MODULUS: u16 = 4096;

/// Most blocks a transmitter may have outstanding (half the modulus, which keeps the
/// modular comparison unambiguous).
pub const MAX_OUTSTANDING: u16 = 2048;

/// Most data VLs a port has (InfiniBand implementations offer 1, 2, 4 or 8).
pub const MAX_VLS: usize = 8;

/// Size of a flow-control packet on the wire before the link's per-frame overhead.
pub const FCP_BYTES: u64 = 6;

const MASK: u16 = MODULUS - 1;

/// Blocks of `block` bytes that a frame of `bytes` occupies (rounded up; at least one).
pub fn blocks(bytes: u64, block: u32) -> u16 {
    let block = u64::from(block.max(1));
    u16::try_from(bytes.div_ceil(block).max(1)).unwrap_or(u16::MAX)
}

/// `a − b` modulo 4096.
fn diff(a: u16, b: u16) -> u16 {
    a.wrapping_sub(b) & MASK
}

/// When a port sends flow-control packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpdatePolicy {
    /// A VL whose FCP would say something new sends it within this time.
    pub period: Time,
    /// Also send a VL's FCP as soon as more than this many blocks were freed on it since
    /// its last one (`None`: only periodic updates).
    pub threshold: Option<u32>,
}

/// Receive buffer blocks of a VL whose owner takes every frame at once (a host that
/// consumes what it receives): it always grants the most a transmitter may have
/// outstanding.
pub const UNLIMITED: u32 = u32::MAX;

/// One VL of one link end: both halves, the size of the receive buffer, what may still be
/// freed before its FCP must go. Everything a data frame touches on its VL, on one cache
/// line: the port's block size and whether the VL's update is pending are copied here so
/// that a frame reads no other line of the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
struct Lane {
    tx: VlTransmitter,
    rx: VlReceiver,
    /// Blocks this end's receive buffer of the VL holds ([`UNLIMITED`]: no limit).
    capacity: u32,
    /// Blocks that may still be freed before the VL's FCP goes at once: the threshold,
    /// less what was freed since its last FCP ([`NO_THRESHOLD`]: no threshold).
    freeable: u32,
    /// The port's `block_shift`.
    block_shift: u8,
    /// The VL has a deadline (`CreditPort::due`): its news will be sent.
    pending: bool,
}

/// [`Lane::freeable`] of a port without an update threshold.
const NO_THRESHOLD: u32 = u32::MAX;

impl Lane {
    /// Blocks of a frame of `bytes` (`block`: the port's block size, read only when it is
    /// not a power of two).
    #[inline]
    fn blocks(&self, bytes: u64, block: u32) -> u16 {
        if self.block_shift == NO_SHIFT {
            return blocks(bytes, block);
        }
        let n = (bytes + (1u64 << self.block_shift) - 1) >> self.block_shift;
        u16::try_from(n.max(1)).unwrap_or(u16::MAX)
    }
}

/// [`Lane::block_shift`] when the block size is not a power of two.
const NO_SHIFT: u8 = u8::MAX;

/// One end of a credit link: the transmitter and receiver of each VL, and when to send
/// FCPs.
///
/// FCPs are sent when they say something new: a VL whose FCTBS or FCCL differs from what
/// its last FCP carried sends one within the update period (a deadline per VL, set by its
/// first change after its last FCP; the driver keeps one timer per port, for the earliest),
/// or at once when more than the threshold of blocks was freed. A link at rest sends none.
/// At most one FCP per VL waits to be sent, and it carries the values of the moment it
/// leaves.
///
/// Layout: what every frame reads (the block size, the policy, which VLs have an update
/// pending) on the first cache line, then one line per VL (`Lane`); the deadlines (set
/// once per update period) and the FCP bookkeeping come after.
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct CreditPort {
    /// The update period (a VL with news sends its FCP within it).
    period: Time,
    /// When the driver's timer fires next (`Time::MAX`: not armed).
    timer: Time,
    /// Bytes per block.
    block: u32,
    /// Send a VL's FCP at once when more than this many blocks were freed on it since its
    /// last one ([`NO_THRESHOLD`]: never).
    threshold: u32,
    vls: u8,
    /// Bit `vl` set: an FCP of that VL waits to be sent.
    queued: u8,
    lanes: [Lane; MAX_VLS],
    /// When each VL's periodic update is due (`Time::MAX`: nothing new to say).
    due: [Time; MAX_VLS],
    /// (FCTBS, FCCL) of each VL's last FCP.
    last_sent: [(u16, u16); MAX_VLS],
    /// FCPs sent per VL.
    fcp_sent: [u64; MAX_VLS],
}

impl CreditPort {
    /// A port with `vls` data VLs and blocks of `block` bytes, whose receive buffer holds
    /// `capacity` blocks per VL ([`UNLIMITED`]: no limit) and whose peer's holds
    /// `peer_capacity`: both ends start as if they had exchanged FCPs. FCPs go as `policy`
    /// says.
    pub fn new(
        vls: u8,
        block: u32,
        capacity: u32,
        peer_capacity: u32,
        policy: UpdatePolicy,
    ) -> Self {
        let grant = |c: u32| u16::try_from(c.min(u32::from(MAX_OUTSTANDING))).unwrap_or(0);
        let vls = vls.clamp(1, MAX_VLS as u8);
        let block = block.max(1);
        let threshold = policy
            .threshold
            .map_or(NO_THRESHOLD, |t| t.min(NO_THRESHOLD - 1));
        let lane = Lane {
            tx: VlTransmitter::default(),
            rx: VlReceiver::default(),
            capacity,
            freeable: threshold,
            // log2 of the block size when it is a power of two: a frame's blocks by a
            // shift, not a division.
            block_shift: if block.is_power_of_two() {
                block.trailing_zeros() as u8
            } else {
                NO_SHIFT
            },
            pending: false,
        };
        let mut lanes = [lane; MAX_VLS];
        let mut last_sent = [(0, 0); MAX_VLS];
        for v in 0..usize::from(vls) {
            lanes[v].tx = VlTransmitter::with_limit(grant(peer_capacity));
            last_sent[v] = (0, grant(capacity));
        }
        CreditPort {
            period: policy.period.max(Time(1)),
            timer: Time::MAX,
            block,
            threshold,
            vls,
            queued: 0,
            lanes,
            due: [Time::MAX; MAX_VLS],
            last_sent,
            fcp_sent: [0; MAX_VLS],
        }
    }

    /// Data VLs.
    pub fn vls(&self) -> u8 {
        self.vls
    }

    /// Bytes per block.
    pub fn block_bytes(&self) -> u32 {
        self.block
    }

    /// Blocks a frame of `bytes` occupies on this link.
    #[inline]
    pub fn blocks(&self, bytes: u64) -> u16 {
        self.lanes[0].blocks(bytes, self.block)
    }

    /// Whether a frame of `bytes` may start on `vl` at `now` (see
    /// [`VlTransmitter::may_send`]).
    #[inline]
    pub fn may_send(&mut self, now: Time, vl: u8, bytes: u64) -> bool {
        let block = self.block;
        let l = &mut self.lanes[usize::from(vl)];
        let blocks = l.blocks(bytes, block);
        l.tx.may_send(now, blocks)
    }

    /// The transmitter of `vl`.
    pub fn tx(&self, vl: u8) -> &VlTransmitter {
        &self.lanes[usize::from(vl)].tx
    }

    /// The receiver of `vl`.
    pub fn rx(&self, vl: u8) -> &VlReceiver {
        &self.lanes[usize::from(vl)].rx
    }

    /// The credit limit (FCCL) this end would advertise for `vl` now: what it has received
    /// plus what its buffer can still take.
    pub fn limit(&self, vl: u8) -> u16 {
        let l = &self.lanes[usize::from(vl)];
        l.rx.limit(l.capacity.saturating_sub(l.rx.held()))
    }

    /// Blocks `vl`'s receive buffer holds ([`UNLIMITED`]: no limit).
    pub fn capacity(&self, vl: u8) -> u32 {
        self.lanes[usize::from(vl)].capacity
    }

    /// Blocks of `vl` the peer may still send on the credit this end last advertised
    /// (promised, not yet received).
    pub fn promised(&self, vl: u8) -> u32 {
        let v = usize::from(vl);
        u32::from(diff(self.last_sent[v].1, self.lanes[v].rx.abr()))
    }

    /// Resizes `vl`'s receive buffer to `blocks` (a switch granting credits from its shared
    /// buffer). Never below what it holds and has promised: those blocks are the peer's.
    pub fn set_capacity(&mut self, vl: u8, blocks: u32) {
        debug_assert!(
            blocks >= self.rx(vl).held() + self.promised(vl),
            "capacity below what VL {vl} holds and promised"
        );
        self.lanes[usize::from(vl)].capacity = blocks;
    }

    /// A frame of `bytes` arrived on `vl`. Returns whether it overflowed the receive
    /// buffer (a transmitter that ignored its credits).
    #[inline]
    pub fn on_received(&mut self, vl: u8, bytes: u64) -> bool {
        let block = self.block;
        let l = &mut self.lanes[usize::from(vl)];
        l.rx.on_received(l.blocks(bytes, block));
        l.rx.held() > l.capacity
    }

    /// A frame of `bytes` left `vl`'s receive buffer at `now`. Returns what to do: send
    /// the VL's FCP now (the threshold was passed), or arm the update timer.
    #[inline]
    pub fn on_freed(&mut self, now: Time, vl: u8, bytes: u64) -> Update {
        let block = self.block;
        let l = &mut self.lanes[usize::from(vl)];
        let blocks = l.blocks(bytes, block);
        l.rx.on_freed(blocks);
        self.count_freed(now, vl, blocks)
    }

    /// `blocks` of `vl` were freed at `now`: what the update policy asks.
    #[inline(always)]
    fn count_freed(&mut self, now: Time, vl: u8, blocks: u16) -> Update {
        let l = &mut self.lanes[usize::from(vl)];
        if l.freeable != NO_THRESHOLD {
            if u32::from(blocks) > l.freeable {
                l.freeable = 0;
                return Update::SendNow;
            }
            l.freeable -= u32::from(blocks);
        }
        self.changed(now, vl)
    }

    /// A frame of `bytes` arrived on `vl` and was consumed at once (a receiver whose VL has
    /// no buffer limit, [`UNLIMITED`]: a host): counted and freed in one step, which is
    /// [`CreditPort::on_received`] followed by [`CreditPort::on_freed`]. Such a VL cannot
    /// overflow.
    #[inline]
    pub fn on_consumed(&mut self, now: Time, vl: u8, bytes: u64) -> Update {
        let block = self.block;
        let l = &mut self.lanes[usize::from(vl)];
        debug_assert_eq!(
            l.capacity, UNLIMITED,
            "consumed on a VL with a buffer limit"
        );
        let blocks = l.blocks(bytes, block);
        l.rx.on_received(blocks);
        l.rx.on_freed(blocks);
        self.count_freed(now, vl, blocks)
    }

    /// A frame of `bytes` was sent on `vl` (after its transmitter allowed it) at `now`.
    /// Returns whether to arm the update timer (the peer will want the new FCTBS).
    #[inline]
    pub fn on_sent(&mut self, now: Time, vl: u8, bytes: u64) -> Update {
        let block = self.block;
        let l = &mut self.lanes[usize::from(vl)];
        l.tx.on_sent(l.blocks(bytes, block));
        self.changed(now, vl)
    }

    /// VL `v` changed at `now`: its update is due within the period, unless it already is.
    /// Deadlines set later are never earlier (one period after a later time), so an armed
    /// timer is never late for a new one.
    #[inline]
    fn changed(&mut self, now: Time, vl: u8) -> Update {
        let l = &mut self.lanes[usize::from(vl)];
        if l.pending {
            return Update::Pending;
        }
        l.pending = true;
        let t = now + self.period;
        self.due[usize::from(vl)] = t;
        if self.timer != Time::MAX {
            return Update::Pending;
        }
        self.timer = t;
        Update::ArmTimer(t)
    }

    /// Marks an FCP of `vl` as queued. Returns `false` if one already waits (it will carry
    /// the newest values anyway).
    pub fn queue_fcp(&mut self, vl: u8) -> bool {
        let bit = 1u8 << vl;
        if self.queued & bit != 0 {
            return false;
        }
        self.queued |= bit;
        true
    }

    /// The FCP of `vl` leaves now: what it carries (this end's FCTBS and FCCL).
    pub fn send_fcp(&mut self, vl: u8) -> (u16, u16) {
        let v = usize::from(vl);
        self.queued &= !(1u8 << vl);
        let values = (self.lanes[v].tx.fctbs(), self.limit(vl));
        self.last_sent[v] = values;
        self.lanes[v].freeable = self.threshold;
        // What was due is said; the next change sets a new deadline.
        self.due[v] = Time::MAX;
        self.lanes[v].pending = false;
        self.fcp_sent[v] += 1;
        values
    }

    /// An FCP of `vl` waiting to be sent was dropped with its link.
    pub fn fcp_lost(&mut self, vl: u8) {
        self.queued &= !(1u8 << vl);
    }

    /// The peer's FCP of `vl` arrived at `now` with its FCTBS and FCCL. Returns whether it
    /// lifted a block of this end's transmitter.
    pub fn on_fcp(&mut self, now: Time, vl: u8, fctbs: u16, fccl: u16) -> bool {
        let l = &mut self.lanes[usize::from(vl)];
        l.rx.on_peer_fctbs(fctbs);
        l.tx.on_limit(now, fccl)
    }

    /// When the driver's update timer is armed to fire.
    pub fn poll_timeout(&self) -> Option<Time> {
        (self.timer != Time::MAX).then_some(self.timer)
    }

    /// The update timer fired at `now`: the VLs (bit set) whose deadline has come and whose
    /// FCP would say something new, and when the timer must fire next (the earliest
    /// deadline still ahead; `None`: nothing pending, the next change arms it again).
    pub fn handle_timeout(&mut self, now: Time) -> (u8, Option<Time>) {
        if self.timer > now {
            return (0, None);
        }
        let mut due = 0u8;
        let mut next = Time::MAX;
        for vl in 0..self.vls {
            let v = usize::from(vl);
            if self.due[v] > now {
                next = next.min(self.due[v]);
                continue;
            }
            self.due[v] = Time::MAX;
            self.lanes[v].pending = false;
            if (self.lanes[v].tx.fctbs(), self.limit(vl)) != self.last_sent[v] {
                due |= 1 << v;
            }
        }
        self.timer = next;
        (due, self.poll_timeout())
    }

    /// FCPs sent per VL.
    pub fn fcp_sent(&self) -> &[u64] {
        &self.fcp_sent[..usize::from(self.vls)]
    }
}

/// The credit loop of one VL of one link: how long a block takes to come back as credit
/// when the flow is limited by credit (cbfc.md). A block's credit returns one loop after
/// the frame that spent it started: the frame crosses the link, the receiver frees it (a
/// switch as it forwards it), waits at most the update period for its FCP, and the FCP
/// crosses back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditLoop {
    /// Propagation delay of the link, one way.
    pub propagation: Time,
    /// The VL's update period (the longest an FCP waits after the first change).
    pub update_period: Time,
    /// Wire time of one full data frame (with the link's per-frame overhead).
    pub frame_time: Time,
    /// Wire time of one FCP (the processing left between a free and the transmitter's
    /// next frame: the receiver forwards and the transmitter reacts at once).
    pub fcp_time: Time,
    /// FCPs the flow's direction of the link carries per update period, ahead of data: one
    /// per VL with news (the data VL's FCTBS, the credit of the VL the reverse traffic
    /// uses). They take their wire time from the line rate.
    pub fcps_per_period: u32,
}

impl CreditLoop {
    /// The loop time: round-trip propagation + update period + one frame + one FCP.
    pub fn time(&self) -> Time {
        self.propagation + self.propagation + self.update_period + self.frame_time + self.fcp_time
    }

    /// The fraction of the line rate one flow of full frames of `frame_blocks` reaches on a
    /// VL whose receiver holds `buffer_blocks`: as many whole frames as the buffer holds
    /// (and 2048 blocks allow) per loop, at most what the FCPs leave of the line. A flow
    /// needs a buffer of at least `line rate × loop time` to reach line rate.
    ///
    /// Every block is taken to wait the whole update period for its FCP, which is exact
    /// when the frames freed while an update is pending are few; when many are (a period
    /// shorter than a buffer's worth of frames), some return sooner and a flow runs
    /// faster than this.
    pub fn utilisation(&self, buffer_blocks: u32, frame_blocks: u16) -> f64 {
        let usable = buffer_blocks.min(u32::from(MAX_OUTSTANDING));
        let frames = usable / u32::from(frame_blocks.max(1));
        let busy = self.frame_time.as_ps() as f64 * f64::from(frames);
        (busy / self.time().as_ps().max(1) as f64).min(self.line_share())
    }

    /// The fraction of the line the FCPs leave to data.
    pub fn line_share(&self) -> f64 {
        let fcps = self.fcp_time.as_ps() as f64 * f64::from(self.fcps_per_period);
        (1.0 - fcps / self.update_period.as_ps().max(1) as f64).max(0.0)
    }
}

/// What a change of a [`CreditPort`] asks of its driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// Queue the VL's FCP now.
    SendNow,
    /// Have [`CreditPort::handle_timeout`] run at this time.
    ArmTimer(Time),
    /// The update timer is already armed.
    Pending,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_take_whole_blocks() {
        assert_eq!(blocks(1, 64), 1);
        assert_eq!(blocks(64, 64), 1);
        assert_eq!(blocks(65, 64), 2);
        assert_eq!(blocks(4096, 64), 64);
        assert_eq!(blocks(0, 64), 1, "an empty frame still takes a block");
    }

    /// What a frame touches of its VL is one cache line.
    #[test]
    fn a_lane_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Lane>(), 64);
    }

    /// A power-of-two block counts by a shift; any other by a division; both round up.
    #[test]
    fn a_port_counts_blocks_as_the_division_does() {
        for block in [1, 32, 64, 100, 128, 4096] {
            let p = CreditPort::new(1, block, 100, 100, POLICY);
            assert_eq!(p.lanes[0].block_shift != NO_SHIFT, block.is_power_of_two());
            for bytes in [0, 1, 63, 64, 65, 1048, 4096, 9000, 1 << 20, 1 << 40] {
                assert_eq!(
                    p.blocks(bytes),
                    blocks(bytes, block),
                    "{bytes} B in {block} B"
                );
            }
        }
    }

    /// Bytes per block of the ports below: frames of `n * B` bytes take `n` blocks.
    const B: u64 = 64;

    const POLICY: UpdatePolicy = UpdatePolicy {
        period: Time(1000),
        threshold: Some(10),
    };

    /// What a port has promised is what it advertised beyond what arrived; a resized
    /// buffer's next FCP grants from the new size.
    #[test]
    fn a_port_grants_from_a_resized_buffer() {
        let mut p = CreditPort::new(1, 64, 100, 100, POLICY);
        assert_eq!(p.promised(0), 100, "the handshake's grant");
        p.on_received(0, 30 * B);
        assert_eq!(p.promised(0), 70);
        // Grown to 500 blocks: the next FCP grants 470 beyond the 30 held.
        p.set_capacity(0, 500);
        assert_eq!(p.send_fcp(0), (0, 500));
        assert_eq!(p.promised(0), 470);
        p.on_freed(Time(0), 0, 30 * B);
        // Shrunk to what it promised: nothing more to grant.
        p.set_capacity(0, 470);
        assert_eq!(p.send_fcp(0), (0, 500));
    }

    #[test]
    fn a_port_sends_what_changed_within_the_period() {
        let mut p = CreditPort::new(2, 64, 100, 50, POLICY);
        assert_eq!(p.vls(), 2);
        assert_eq!(p.blocks(1500), 24);
        assert_eq!(p.tx(1).available(), 50);
        assert_eq!(p.poll_timeout(), None, "a link at rest sends nothing");
        assert!(!p.on_received(0, 20 * B));
        // Receiving alone changes no FCCL (ABR up, free down).
        assert_eq!(p.on_freed(Time(10), 0, 5 * B), Update::ArmTimer(Time(1010)));
        assert_eq!(p.on_freed(Time(20), 0, 5 * B), Update::Pending);
        assert_eq!(p.handle_timeout(Time(1009)), (0, None), "not due");
        assert_eq!(
            p.handle_timeout(Time(1010)),
            (0b01, None),
            "only VL 0 has news"
        );
        assert_eq!(p.poll_timeout(), None);
        assert!(p.queue_fcp(0));
        assert!(!p.queue_fcp(0), "one FCP per VL waits");
        assert_eq!(p.send_fcp(0), (0, 110), "FCCL = ABR 20 + 90 free");
        assert_eq!(p.fcp_sent(), &[1, 0]);
        assert!(p.queue_fcp(0));
        p.fcp_lost(0);
        assert!(p.queue_fcp(0));
    }

    #[test]
    fn the_credit_loop_limits_a_flow_to_whole_frames_per_loop() {
        let l = CreditLoop {
            propagation: Time(1000),
            update_period: Time(5000),
            frame_time: Time(100),
            fcp_time: Time(10),
            fcps_per_period: 2,
        };
        assert_eq!(l.time(), Time(7110));
        // 17-block frames: 100 blocks hold 5 of them, 500 ps of frames per 7110 ps loop.
        assert!((l.utilisation(100, 17) - 500.0 / 7110.0).abs() < 1e-12);
        // 72 frames fill the loop; two FCPs of 10 ps per 5000 ps period take 0.4 %.
        assert!((l.utilisation(17 * 72, 17) - 0.996).abs() < 1e-12);
        // Beyond 2048 blocks no more credit can be outstanding.
        let long = CreditLoop {
            update_period: Time(1_000_000),
            ..l
        };
        assert_eq!(long.utilisation(4000, 1), long.utilisation(2048, 1));
        assert_eq!(l.utilisation(16, 17), 0.0, "no whole frame fits");
    }

    #[test]
    fn each_vl_keeps_its_own_deadline() {
        let mut p = CreditPort::new(2, 64, 100, 50, POLICY);
        assert_eq!(p.on_sent(Time(0), 1, 3 * B), Update::ArmTimer(Time(1000)));
        // VL 0's first change comes later: its deadline is its own, the timer stays.
        assert!(!p.on_received(0, 5 * B));
        assert_eq!(p.on_freed(Time(500), 0, 5 * B), Update::Pending);
        assert_eq!(p.handle_timeout(Time(1000)), (0b10, Some(Time(1500))));
        assert!(p.queue_fcp(1));
        p.send_fcp(1);
        assert_eq!(p.handle_timeout(Time(1500)), (0b01, None));
        assert_eq!(p.poll_timeout(), None);
        // A VL whose FCP went at once (threshold) has nothing left due.
        assert_eq!(p.on_sent(Time(1600), 1, B), Update::ArmTimer(Time(2600)));
        assert!(p.queue_fcp(1));
        p.send_fcp(1);
        assert_eq!(p.handle_timeout(Time(2600)), (0, None));
    }

    #[test]
    fn a_port_sends_at_once_past_the_threshold() {
        let mut p = CreditPort::new(1, 64, 100, 100, POLICY);
        assert!(!p.on_received(0, 30 * B));
        assert_eq!(p.on_freed(Time(0), 0, 10 * B), Update::ArmTimer(Time(1000)));
        assert_eq!(p.on_freed(Time(1), 0, B), Update::SendNow, "11 > 10");
        p.queue_fcp(0);
        p.send_fcp(0);
        assert_eq!(
            p.on_freed(Time(2), 0, 9 * B),
            Update::Pending,
            "counted anew"
        );
    }

    #[test]
    fn a_port_reports_an_overflow() {
        let mut p = CreditPort::new(1, 64, 4, 4, POLICY);
        assert!(!p.on_received(0, 4 * B));
        assert!(p.on_received(0, B));
        let mut host = CreditPort::new(1, 64, UNLIMITED, 4, POLICY);
        assert!(!host.on_received(0, 2000 * B));
        // ABR 2000 plus the most a transmitter may have outstanding.
        assert_eq!(host.send_fcp(0).1, 4048);
    }

    #[test]
    fn consuming_is_receiving_then_freeing() {
        let mut one = CreditPort::new(2, 64, UNLIMITED, 4, POLICY);
        let mut two = one.clone();
        // Frame sizes in blocks; the third passes the threshold (10), and with no FCP sent
        // every later one does too.
        for (t, blocks) in [(0, 3), (5, 4), (9, 6), (2000, 1), (2001, 12)] {
            let (now, bytes) = (Time(t), blocks * B);
            assert!(!two.on_received(1, bytes));
            assert_eq!(
                one.on_consumed(now, 1, bytes),
                two.on_freed(now, 1, bytes),
                "at {t}"
            );
            assert_eq!(one, two, "at {t}");
        }
        assert_eq!(one.rx(1).abr(), 26);
        assert_eq!(one.rx(1).held(), 0);
        assert_eq!(one.rx(1).peak(), 12);
    }

    #[test]
    fn an_fcp_updates_both_halves() {
        let mut p = CreditPort::new(1, 64, 100, 4, POLICY);
        assert!(p.may_send(Time(0), 0, 4 * B));
        assert_eq!(p.on_sent(Time(0), 0, 4 * B), Update::ArmTimer(Time(1000)));
        assert!(!p.may_send(Time(5), 0, B));
        assert!(!p.on_received(0, 3 * B));
        assert_eq!(p.tx(0).last_block(), Some((Time(5), Time::MAX)));
        assert_eq!(p.tx(0).latest_until(), Time::MAX);
        assert!(p.on_fcp(Time(9), 0, 7, 8), "the limit lifts the block");
        assert_eq!(p.rx(0).abr(), 7, "ABR follows the peer's FCTBS");
        assert_eq!(p.tx(0).blocked_time(Time(20)), Time(4));
        assert_eq!(p.tx(0).last_block(), Some((Time(5), Time(9))));
        assert_eq!(p.tx(0).latest_until(), Time(9));
        assert_eq!(p.tx(1).last_block(), None, "never blocked");
        assert_eq!(p.tx(1).latest_until(), Time::ZERO);
    }
}
