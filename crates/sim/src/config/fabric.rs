//! The fabric's link flow control: PFC or credits, the fabric's kind unless a link sets
//! its own (both ends of a link always use one kind). A switch whose ports all use credits
//! runs with [`FabricConfig::switch`]'s credit parameters; a switch with both kinds keeps
//! its PFC parameters and gives each credit port VL buffers instead of private space and
//! headroom (`SimConfig::mmu_config`).
//!
//! Invariants (checked by [`FabricConfig::validate`] as part of `SimConfig::validate`):
//! where any link uses credits, there are 1, 2, 4 or 8 data VLs, blocks of at least one
//! byte, a VL buffer that holds the largest frame a host sends, and every service level a
//! frame uses (a flow's priority, the ACKs') mapped to an existing VL by every credit
//! port's SL → VL table (the fabric's, or its link's own); per-link settings name existing
//! links.

use super::{ConfigError, SwitchConfig};
use headroom_mech::credit::UpdatePolicy;
use headroom_mech::units::{Rate, Time};
use headroom_mech::PRIORITIES;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// How the links keep the fabric lossless.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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
    /// Settings of single links (by index in the topology's link list) that differ from
    /// the fabric's.
    pub links: BTreeMap<usize, LinkFabric>,
    /// The flow-channel layer over the links (`None`: none, a plain PFC or credit fabric).
    pub flow_channels: Option<super::FlowChannelParams>,
    /// A frame's class (its VL on credit links, its priority on PFC links) rises by one at
    /// every switch-to-switch hop after its first: the class of a hop between switches is
    /// the class its service level maps to plus the switch-to-switch hops before it. Each
    /// buffer then waits only for buffers of a higher class, so no cycle of them can form
    /// whatever the topology and routing (InfiniBand's VLs per hop class on a dragonfly).
    /// Frames leave for a host in their service level's own class.
    pub class_per_hop: bool,
}

/// What one link sets differently from the fabric (`None`: the fabric's).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkFabric {
    /// Its flow control (both ends use it).
    pub kind: Option<FlowControlKind>,
    /// SL → VL table of both its ends (credit links).
    pub sl_to_vl: Option<SlToVl>,
}

/// A port's SL → VL table: entry `s` is the VL frames of service level `s` leave on.
pub type SlToVl = [u8; PRIORITIES];

/// The identity table: service level `s` travels on VL `s`.
pub const IDENTITY_SL_TO_VL: SlToVl = [0, 1, 2, 3, 4, 5, 6, 7];

/// Parameters of credit links.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CreditConfig {
    /// Data virtual lanes: 1, 2, 4 or 8.
    pub vls: u8,
    /// Every port's SL → VL table unless its link has its own (default: the identity). A
    /// frame's service level is its priority.
    pub sl_to_vl: SlToVl,
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
    /// How a switch sizes a VL's receive buffer.
    pub grant: CreditGrant,
}

/// How a switch sizes the receive buffer of a credit (ingress port, VL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum CreditGrant {
    /// `vl_buffer`, reserved in the MMU.
    #[default]
    Static,
    /// `vl_buffer` reserved, plus what the dynamic threshold grants from the shared
    /// buffer each time the VL's credit update goes (`alpha` of the port × free shared
    /// cells), as shared-buffer InfiniBand switches do. A grant never shrinks below what
    /// the VL holds and has promised.
    Shared,
}

impl Default for CreditConfig {
    fn default() -> Self {
        CreditConfig {
            vls: 8,
            sl_to_vl: IDENTITY_SL_TO_VL,
            block: 64,
            vl_buffer: 128 << 10,
            update_period: None,
            update_threshold: None,
            grant: CreditGrant::Static,
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

    /// Blocks of a switch's receive buffer per (ingress port, VL) at the start, in an MMU
    /// of `cell`-byte cells. Shared grants count every block as whole cells (a frame of
    /// `n` blocks takes at most `n × ⌈block / cell⌉` cells), so that what is granted in
    /// cells always holds what is granted in blocks.
    pub fn vl_buffer_blocks(&self, cell: u32) -> u32 {
        let blocks =
            u32::try_from(self.vl_buffer / u64::from(self.block.max(1))).unwrap_or(u32::MAX);
        match self.grant {
            CreditGrant::Static => blocks,
            CreditGrant::Shared => {
                blocks.min(self.vl_buffer_cells(cell) / self.cells_per_block(cell))
            }
        }
    }

    /// Cells of a switch's static receive buffer per (ingress port, VL).
    pub fn vl_buffer_cells(&self, cell: u32) -> u32 {
        u32::try_from(self.vl_buffer.div_ceil(u64::from(cell.max(1)))).unwrap_or(u32::MAX)
    }

    /// Cells one block may take at most (shared grants).
    pub fn cells_per_block(&self, cell: u32) -> u32 {
        self.block.div_ceil(cell.max(1)).max(1)
    }

    /// Bit `v` set for every data VL.
    pub fn vl_mask(&self) -> u8 {
        ((1u16 << self.vls.min(8)) - 1) as u8
    }
}

impl FabricConfig {
    /// The flow control of link `link` (its own, or the fabric's).
    pub fn link_kind(&self, link: usize) -> FlowControlKind {
        self.links
            .get(&link)
            .and_then(|l| l.kind)
            .unwrap_or(self.kind)
    }

    /// Whether some of the `links` links uses `kind`.
    pub fn uses(&self, links: usize, kind: FlowControlKind) -> bool {
        // Links without their own kind use the fabric's: check one of them, then the rest.
        (links > self.links.values().filter(|l| l.kind.is_some()).count() && self.kind == kind)
            || self.links.values().any(|l| l.kind == Some(kind))
    }

    /// The fabric kinds by name, as `[fabric] kind` takes them.
    pub const KINDS: [&'static str; 3] = ["pfc", "credit", "flow-channels"];

    /// Makes every link use `kind` (`"pfc"`, `"credit"`, or `"flow-channels"` over the
    /// links' kind, PFC unless it is credit): links' own kinds go; flow channels keep
    /// their parameters if the fabric had them. `Err` names the kinds if `kind` is none.
    pub fn set_kind(&mut self, kind: &str) -> Result<(), String> {
        let (links, channels) = match kind {
            "pfc" => (FlowControlKind::Pfc, false),
            "credit" => (FlowControlKind::Credit, false),
            "flow-channels" => (self.kind, true),
            other => {
                return Err(format!(
                    "unknown kind `{other}` (expected {})",
                    Self::KINDS.join(", ")
                ))
            }
        };
        for link in self.links.values_mut() {
            link.kind = None;
        }
        self.kind = links;
        self.flow_channels = match (channels, self.flow_channels) {
            (false, _) => None,
            (true, Some(params)) => Some(params),
            (true, None) => Some(super::FlowChannelParams::default()),
        };
        Ok(())
    }

    /// What keeps the fabric lossless, for reports: `"pfc"` or `"credit"` when every one
    /// of the `links` links uses it, else `"mixed"`; with `"flow-channels/"` before it
    /// when flow channels run over the links.
    pub fn describe(&self, links: usize) -> String {
        match self.flow_channels {
            Some(_) => format!("flow-channels/{}", self.name(links)),
            None => self.name(links).to_string(),
        }
    }

    /// `"pfc"` or `"credit"` when every one of the `links` links uses it, else `"mixed"`.
    pub fn name(&self, links: usize) -> &'static str {
        match (
            self.uses(links, FlowControlKind::Pfc),
            self.uses(links, FlowControlKind::Credit),
        ) {
            (true, true) => "mixed",
            (false, true) => "credit",
            _ => "pfc",
        }
    }

    /// The switch parameters of a switch whose ports are all on credit links (`credit`;
    /// others run with `switch` as it is): it reserves each (ingress port, VL) its VL
    /// buffer as private MMU space, needs no headroom (a credit port never pauses) and
    /// makes every VL lossless.
    pub fn switch<'a>(&self, switch: &'a SwitchConfig, credit: bool) -> Cow<'a, SwitchConfig> {
        if !credit {
            return Cow::Borrowed(switch);
        }
        Cow::Owned(SwitchConfig {
            private_bytes: self.credit.vl_buffer,
            headroom: super::HeadroomSizing::Fixed(0),
            scheme: super::SchemeConfig::Sih,
            reservation: super::Reservation::PerPg,
            lossless: self.credit.vl_mask(),
            ..switch.clone()
        })
    }

    /// Checks the invariants of the module documentation; `largest_frame` is the largest
    /// frame a host sends, `prios` every priority frames use (flows, ACKs).
    pub fn validate(
        &self,
        links: usize,
        largest_frame: u64,
        cell: u32,
        prios: impl IntoIterator<Item = (String, u8)>,
    ) -> Result<(), ConfigError> {
        if !self.uses(links, FlowControlKind::Credit) {
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
        // Credits count whole blocks, and a switch granting from its shared buffer starts
        // with what its reservation holds in cells (each block as whole cells): the first
        // frame must fit that, or the link never moves (nothing frees, no update goes).
        let frame_blocks = largest_frame.div_ceil(u64::from(c.block));
        let blocks = u64::from(c.vl_buffer_blocks(cell));
        if blocks < frame_blocks {
            let cells = match c.grant {
                CreditGrant::Static => String::new(),
                CreditGrant::Shared => format!(
                    " (shared grants reserve {} cells of {cell} bytes and count a block as {} \
                     whole cell(s))",
                    c.vl_buffer_cells(cell),
                    c.cells_per_block(cell)
                ),
            };
            return param(
                "fabric.credit.vl_buffer",
                format!(
                    "{} bytes give a VL {blocks} blocks of {} bytes{cells}; the largest frame \
                     ({largest_frame} bytes) needs {frame_blocks}: no frame could ever be sent",
                    c.vl_buffer, c.block
                ),
            );
        }
        if c.update_period == Some(Time::ZERO) {
            return param("fabric.credit.update_period", "must be > 0".into());
        }
        let prios: Vec<(String, u8)> = prios.into_iter().collect();
        let unmapped = |table: &SlToVl| {
            prios.iter().find_map(|(what, sl)| {
                let vl = table[usize::from(*sl)];
                (vl >= c.vls).then(|| {
                    format!(
                        "{what} uses service level {sl}, which maps to VL {vl}: there are {} \
                         VLs (an SL with no VL)",
                        c.vls
                    )
                })
            })
        };
        let fabric_table_used = (0..links)
            .any(|l| self.link_kind(l) == FlowControlKind::Credit && self.sl_to_vl_of(l).is_none());
        if let Some(reason) = unmapped(&c.sl_to_vl).filter(|_| fabric_table_used) {
            let field = if c.sl_to_vl == IDENTITY_SL_TO_VL {
                "fabric.credit.vls"
            } else {
                "fabric.credit.sl_to_vl"
            };
            return param(field, reason);
        }
        for (&index, link) in &self.links {
            if self.link_kind(index) != FlowControlKind::Credit {
                continue;
            }
            if let Some(reason) = link.sl_to_vl.as_ref().and_then(unmapped) {
                return Err(ConfigError::Link {
                    index,
                    field: "sl_to_vl",
                    reason,
                });
            }
        }
        Ok(())
    }

    /// The SL → VL table of the ends of link `link`: its own, the fabric's on a credit
    /// link, the identity on a PFC link (whose class is the service level).
    pub fn sl_to_vl(&self, link: usize) -> SlToVl {
        match self.link_kind(link) {
            FlowControlKind::Pfc => IDENTITY_SL_TO_VL,
            FlowControlKind::Credit => self.sl_to_vl_of(link).unwrap_or(self.credit.sl_to_vl),
        }
    }

    /// The SL → VL table link `link` gives itself, if any.
    fn sl_to_vl_of(&self, link: usize) -> Option<SlToVl> {
        self.links.get(&link).and_then(|l| l.sl_to_vl)
    }
}
