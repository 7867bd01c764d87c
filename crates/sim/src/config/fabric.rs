//! The fabric's link flow control: PFC or credits.
//!
//! Invariants (checked by [`FabricConfig::validate`] as part of `SimConfig::validate`): a
//! credit fabric has 1, 2, 4 or 8 data VLs, blocks of at least one byte, a VL buffer that
//! holds the largest frame a host sends, and every frame's priority (its VL: SL → VL is
//! the identity) below the number of VLs.

use super::{ConfigError, SwitchConfig};
use headroom_mech::credit::UpdatePolicy;
use headroom_mech::units::{Rate, Time};
use serde::Serialize;
use std::borrow::Cow;

/// How the links keep the fabric lossless.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum FlowControlKind {
    /// Priority flow control (IEEE 802.1Qbb): a receiver pauses a class when its buffer
    /// fills.
    #[default]
    Pfc,
    /// Credits per virtual lane (InfiniBand): a receiver grants blocks of its buffer.
    Credit,
}

/// The fabric's link flow control.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FabricConfig {
    /// The kind every link uses.
    pub kind: FlowControlKind,
    /// Parameters of credit links.
    pub credit: CreditConfig,
}

/// Parameters of credit links.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CreditConfig {
    /// Data virtual lanes: 1, 2, 4 or 8. A frame of priority `p` travels on VL `p`.
    pub vls: u8,
    /// Bytes per credit block.
    pub block: u32,
    /// A switch's receive buffer per (ingress port, VL), bytes: a static reservation in
    /// its MMU. Hosts take what they receive at once and grant the most a transmitter may
    /// have outstanding (2048 blocks).
    pub vl_buffer: u64,
    /// A VL's credit update is sent within this time of a change (`None`: 65,536 symbol
    /// times at the link's rate, a symbol being a byte, IBA's longest interval).
    pub update_period: Option<Time>,
    /// Also send a VL's update as soon as more than this many bytes were freed on it
    /// since its last one (`None`: only updates within the period).
    pub update_threshold: Option<u64>,
}

impl Default for CreditConfig {
    fn default() -> Self {
        CreditConfig {
            vls: 8,
            block: 64,
            vl_buffer: 128 << 10,
            update_period: None,
            update_threshold: None,
        }
    }
}

/// Symbol times between two credit updates of a VL at the most (IBA).
pub const UPDATE_SYMBOLS: u64 = 65_536;

impl CreditConfig {
    /// When the credit updates of a link of `rate` go.
    pub fn policy(&self, rate: Rate) -> UpdatePolicy {
        UpdatePolicy {
            period: self
                .update_period
                .unwrap_or_else(|| rate.serialization(UPDATE_SYMBOLS)),
            threshold: self
                .update_threshold
                .map(|b| u32::try_from(b / u64::from(self.block.max(1))).unwrap_or(u32::MAX)),
        }
    }

    /// Blocks of a switch's receive buffer per (ingress port, VL).
    pub fn vl_buffer_blocks(&self) -> u32 {
        u32::try_from(self.vl_buffer / u64::from(self.block.max(1))).unwrap_or(u32::MAX)
    }

    /// Bit `v` set for every data VL.
    pub fn vl_mask(&self) -> u8 {
        ((1u16 << self.vls.min(8)) - 1) as u8
    }
}

impl FabricConfig {
    /// The switch parameters a fabric of this kind runs with: a credit fabric reserves
    /// each (ingress port, VL) its VL buffer as private MMU space, needs no headroom (a
    /// credit port never pauses) and makes every VL lossless.
    pub fn switch<'a>(&self, switch: &'a SwitchConfig) -> Cow<'a, SwitchConfig> {
        match self.kind {
            FlowControlKind::Pfc => Cow::Borrowed(switch),
            FlowControlKind::Credit => Cow::Owned(SwitchConfig {
                private_bytes: self.credit.vl_buffer,
                headroom: super::HeadroomSizing::Fixed(0),
                scheme: super::SchemeConfig::Sih,
                reservation: super::Reservation::PerPg,
                lossless: self.credit.vl_mask(),
                ..switch.clone()
            }),
        }
    }

    /// Checks the invariants of the module documentation; `largest_frame` is the largest
    /// frame a host sends, `prios` every priority frames use (flows, ACKs).
    pub fn validate(
        &self,
        largest_frame: u64,
        prios: impl IntoIterator<Item = (String, u8)>,
    ) -> Result<(), ConfigError> {
        if self.kind != FlowControlKind::Credit {
            return Ok(());
        }
        let c = &self.credit;
        let param =
            |field: &'static str, reason: String| Err(ConfigError::Parameter { field, reason });
        if ![1, 2, 4, 8].contains(&c.vls) {
            return param(
                "fabric.credit.vls",
                format!("{} VLs; must be 1, 2, 4 or 8", c.vls),
            );
        }
        if c.block == 0 {
            return param("fabric.credit.block", "must be at least 1 byte".into());
        }
        if c.vl_buffer < largest_frame {
            return param(
                "fabric.credit.vl_buffer",
                format!(
                    "{} bytes hold no largest frame ({largest_frame} bytes): no frame could \
                     ever be sent",
                    c.vl_buffer
                ),
            );
        }
        if c.update_period == Some(Time::ZERO) {
            return param("fabric.credit.update_period", "must be > 0".into());
        }
        for (what, prio) in prios {
            if prio >= c.vls {
                return param(
                    "fabric.credit.vls",
                    format!(
                        "{what} uses priority {prio}, which has no VL ({} VLs)",
                        c.vls
                    ),
                );
            }
        }
        Ok(())
    }
}
