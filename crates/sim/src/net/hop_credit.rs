//! The driver of per-flow hop-by-hop credits ([`headroom_mech::hop_credit`], the
//! flow-channel patent's HeadroomACK): a switch whose queue of one flow grows past its
//! target meters that flow's upstream hop instead of pausing the link.
//!
//! - A data frame from another switch joins its channel's queue: past `target` the channel
//!   starts metering its upstream hop and a HeadroomACK goes up the link at once (in the
//!   ACK frames, beside the channel's other ACKs, but for that hop only: it is not passed
//!   on).
//! - A frame leaves: a metered channel's credit is spent, and a metering channel sends the
//!   credit its queue's band says (or, below `drop`, the clearing HeadroomACK).
//! - The egress arbitration holds a metered flow with no credit left (`channel_gate`); a
//!   HeadroomACK arriving looks again at the flows held at the channel's output.
//!
//! Invariants (checked through `check_channels`): state is kept only for channels in use
//! that are metered or metering; a flow held for credit has data in flight downstream (so a
//! HeadroomACK or a clear will come).

use super::flow_channel::ChannelKey;
use headroom_mech::endpoint_congestion::Watermarks;
use headroom_mech::hop_credit::{HeadroomAck, HopCreditConfig, Metering};
use rustc_hash::FxHashMap;

/// The hop-by-hop credit state of a run's channels.
#[derive(Debug)]
pub(super) struct HopCredits {
    pub(super) cfg: HopCreditConfig,
    /// The channels metered or metering (the others are neither).
    entries: FxHashMap<ChannelKey, Metering>,
    /// Times a channel started metering its upstream hop.
    pub(super) metered: u64,
    /// HeadroomACKs sent (clears included).
    pub(super) acks: u64,
}

impl HopCredits {
    pub(super) fn new(cfg: HopCreditConfig) -> Self {
        HopCredits {
            cfg,
            entries: FxHashMap::default(),
            metered: 0,
            acks: 0,
        }
    }

    /// A frame of `channel` from another switch joined its queue, leaving `queued` bytes,
    /// under the watermarks `marks` of its congestion (`None`: the credits' own): the
    /// HeadroomACK to send upstream, if metering starts.
    pub(super) fn arrived(
        &mut self,
        channel: ChannelKey,
        queued: u64,
        marks: Option<Watermarks>,
    ) -> Option<HeadroomAck> {
        let mut m = self.entries.get(&channel).copied().unwrap_or_default();
        let ack = m.arrived(&self.cfg.under(marks), queued)?;
        self.entries.insert(channel, m);
        self.metered += 1;
        self.acks += 1;
        Some(ack)
    }

    /// A frame of `bytes` of `channel` left, leaving `queued` bytes, under the watermarks
    /// `marks`: the HeadroomACK to send upstream, if the channel meters its upstream hop.
    pub(super) fn left(
        &mut self,
        channel: ChannelKey,
        (queued, bytes): (u64, u64),
        marks: Option<Watermarks>,
    ) -> Option<HeadroomAck> {
        let m = self.entries.get_mut(&channel)?;
        m.forwarded(bytes);
        let ack = m.left(&self.cfg.under(marks), queued, bytes);
        if m.is_idle() {
            self.entries.remove(&channel);
        }
        self.acks += u64::from(ack.is_some());
        ack
    }

    /// A HeadroomACK for `channel` came from its downstream hop.
    pub(super) fn credited(&mut self, channel: ChannelKey, ack: HeadroomAck) {
        let m = self.entries.entry(channel).or_default();
        m.credited(ack);
        if m.is_idle() {
            self.entries.remove(&channel);
        }
    }

    /// Whether `channel` may forward a frame now.
    pub(super) fn may_forward(&self, channel: ChannelKey) -> bool {
        self.entries.get(&channel).is_none_or(Metering::may_forward)
    }

    /// `channel` was released.
    pub(super) fn released(&mut self, channel: ChannelKey) {
        self.entries.remove(&channel);
    }

    /// The channels with state.
    pub(super) fn channels(&self) -> impl Iterator<Item = ChannelKey> + '_ {
        self.entries.keys().copied()
    }
}
