//! Checks of a [`SimConfig`] before anything is built from it: flows between existing
//! hosts, parameters in their ranges, the fabric's flow control, and every switch's
//! reservations fitting its buffer (the MMU the run would build accepts them).

use super::{CcConfig, ConfigError, EcnPoint, FlowControlKind, SimConfig, SlToVl};
use crate::topology::NodeKind;
use headroom_mech::buffer::mmu::Mmu;
use headroom_mech::units::{Rate, Time};
use headroom_mech::PRIORITIES;
use std::collections::BTreeMap;

impl SimConfig {
    /// Checks the invariants listed in the documentation of [`crate::config`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.topology.validate()?;
        let n = self.topology.nodes.len();
        for (index, f) in self.flows.iter().enumerate() {
            let bad = |reason: String| Err(ConfigError::Flow { index, reason });
            for (what, node) in [("src", f.src), ("dst", f.dst)] {
                if node.index() >= n {
                    return bad(format!("{what} {} does not exist ({n} nodes)", node.0));
                }
                if self.topology.nodes[node.index()] != NodeKind::Host {
                    return bad(format!("{what} {} is a switch, not a host", node.0));
                }
            }
            if f.src == f.dst {
                return bad(format!("src and dst are the same host {}", f.src.0));
            }
            if f.prio >= 8 {
                return bad(format!("priority {} is not in 0..8", f.prio));
            }
            if f.size == 0 {
                return bad("size is 0".into());
            }
            if let Some(&app) = self.flow_apps.get(index) {
                if app >= headroom_mech::inq_arbiter::NO_FLOW_APPG {
                    return bad(format!(
                        "application {app} is not in 0..127 (127 is reserved for frames of no \
                         flow)"
                    ));
                }
            }
        }
        if !self.flow_apps.is_empty() && self.flow_apps.len() != self.flows.len() {
            return Err(ConfigError::Parameter {
                field: "flow_apps",
                reason: format!(
                    "{} applications for {} flows (give one per flow, or none)",
                    self.flow_apps.len(),
                    self.flows.len()
                ),
            });
        }
        let param = |field, reason: &str| {
            Err(ConfigError::Parameter {
                field,
                reason: reason.into(),
            })
        };
        if self.host.mtu_payload == 0 {
            return param("host.mtu_payload", "must be > 0");
        }
        if let Err(reason) = self.switch.ecn.validate() {
            return param("switch.ecn.detector", reason);
        }
        if self.switch.ecn.fecn_for(&self.host.cc).is_some() {
            if self.switch.ecn.point != EcnPoint::Dequeue {
                return param(
                    "switch.ecn.point",
                    "FECN (InfiniBand CC) marks the packets a switch forwards: it needs \
                     point = \"dequeue\"",
                );
            }
            if !self.switch.ecn.enabled {
                return param(
                    "switch.ecn.enabled",
                    "InfiniBand CC needs its switches to mark FECN (enabled = true)",
                );
            }
        }
        if let CcConfig::IbCc(c) = &self.host.cc {
            if let Err(e) = c.validate() {
                return Err(ConfigError::Parameter {
                    field: "host.cc.cct",
                    reason: e.to_string(),
                });
            }
        }
        // The engine's frame sizes are 32-bit (`Packet::size`).
        let frame_limit = u64::from(u32::MAX);
        if self
            .host
            .mtu_payload
            .checked_add(self.host.header_bytes)
            .is_none_or(|b| b > frame_limit)
        {
            return param(
                "host.mtu_payload",
                "with the header, a data frame must be below 4 GiB",
            );
        }
        if self.host.ack_bytes > frame_limit {
            return param("host.ack_bytes", "must be below 4 GiB");
        }
        if self.host.cnp_bytes > frame_limit {
            return param("host.cnp_bytes", "must be below 4 GiB");
        }
        if self.host.ack_prio >= 8 {
            return param("host.ack_prio", "must be in 0..8");
        }
        if self.host.ack_pause_class >= 8 {
            return param("host.ack_pause_class", "must be in 0..8");
        }
        if self.switch.cell_bytes == 0 {
            return param("switch.cell_bytes", "must be > 0");
        }
        if self.switch.buffer_bytes > u64::from(u32::MAX) {
            // Queue byte counters are 32-bit, which keeps a port's queues on one cache line.
            return param("switch.buffer_bytes", "must be below 4 GiB");
        }
        if self.switch.scheduler.quantum == 0 {
            return param("switch.scheduler.quantum", "must be > 0");
        }
        if self.switch.scheduler.quantum > frame_limit {
            // Below 4 GiB, a quantum times a 32-bit weight fits the 64-bit DWRR deficit.
            return param("switch.scheduler.quantum", "must be below 4 GiB");
        }
        if !self.link_failures.is_empty() && self.stop_time.is_none() {
            return param(
                "stop_time",
                "link failures need a stop time (flows cut off from their destination never finish)",
            );
        }
        for (i, f) in self.link_failures.iter().enumerate() {
            let joins = |l: &crate::topology::LinkSpec| {
                (l.a == f.a && l.b == f.b) || (l.a == f.b && l.b == f.a)
            };
            if !self.topology.links.iter().any(joins) {
                return Err(ConfigError::Parameter {
                    field: "link_failures",
                    reason: format!("failure {i}: no link joins nodes {} and {}", f.a.0, f.b.0),
                });
            }
        }
        if let Some(b) = &self.host.nic_buffer {
            if !(b.xon < b.xoff && b.xoff <= b.size) {
                return param("host.nic_buffer", "needs xon < xoff <= size");
            }
            if b.drain.bps() == 0 {
                return param("host.nic_buffer.drain", "must be > 0");
            }
        }
        if let Some((&index, _)) = self.fabric.links.range(self.topology.links.len()..).next() {
            return Err(ConfigError::Link {
                index,
                field: "a",
                reason: format!("no such link: there are {}", self.topology.links.len()),
            });
        }
        let links = self.topology.links.len();
        if self.fabric.uses(links, FlowControlKind::Credit) {
            if self.host.nic_buffer.is_some() {
                return param(
                    "host.nic_buffer",
                    "a NIC buffer paused by PFC has no place on credit links (hosts take what \
                     they receive at once)",
                );
            }
            if self.host.ack_pause_class != self.host.ack_prio {
                return param(
                    "host.ack_pause_class",
                    "on credit links ACKs travel and wait on the VL of host.ack_prio",
                );
            }
            let largest = self
                .host
                .largest_data_frame()
                .max(self.host.ack_bytes)
                .max(self.host.cnp_bytes);
            let flows = self
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| (format!("flow {i}"), f.prio));
            let acks = std::iter::once(("host.ack_prio".to_string(), self.host.ack_prio));
            let cell = self.switch.cell_bytes;
            self.fabric
                .validate(links, largest, cell, flows.chain(acks))?;
        }
        if let Some(fc) = &self.fabric.flow_channels {
            fc.validate(self)?;
        }
        self.validate_switches()?;
        if self.stop_time.is_none() && self.flows.is_empty() {
            return param(
                "stop_time",
                "no flows and no stop time: the run would never end",
            );
        }
        Ok(())
    }

    /// The classes that keep one flow id of every link for themselves on a flow-channel
    /// fabric with `fabric.class_per_hop`, on routes of up to `max_hops` switch-to-switch
    /// hops: every class a data frame rises to after its first such hop (a bit per class;
    /// 0 without flow channels or classes per hop). A channel waiting for an id then waits
    /// only for channels of a higher class, so full tables cannot lock up in a cycle.
    /// Every link needs one shared id more: a smaller `table_size` is an error.
    pub(crate) fn channel_reserved_classes(&self, max_hops: u32) -> Result<u8, ConfigError> {
        let Some(params) = self.fabric.flow_channels else {
            return Ok(0);
        };
        if !self.fabric.class_per_hop || max_hops <= 1 {
            return Ok(0);
        }
        let rise = u8::try_from(max_hops - 1).unwrap_or(u8::MAX);
        let mut mask = 0u8;
        let prios: std::collections::BTreeSet<u8> = self.flows.iter().map(|f| f.prio).collect();
        for (kind, table) in self.link_class_tables() {
            let top = self.highest_class(kind);
            for &sl in &prios {
                let base = table[usize::from(sl)];
                for c in base.saturating_add(1)..=base.saturating_add(rise).min(top) {
                    mask |= 1 << c;
                }
            }
        }
        let reserved = mask.count_ones() as u16;
        if params.table_size <= reserved {
            return Err(ConfigError::Parameter {
                field: "fabric.flow_channels.table_size",
                reason: format!(
                    "with fabric.class_per_hop each of the {reserved} classes data frames rise \
                     to between switches keeps one flow id of every link, and at least one \
                     more is shared: {} is too few (at least {})",
                    params.table_size,
                    reserved + 1
                ),
            });
        }
        Ok(mask)
    }

    /// The distinct (flow control, SL → VL table) pairs of the topology's links.
    fn link_class_tables(&self) -> Vec<(FlowControlKind, SlToVl)> {
        (0..self.topology.links.len())
            .map(|l| (self.fabric.link_kind(l), self.fabric.sl_to_vl(l)))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// The highest class on links of `kind`: the last VL on credit links, priority 7 on
    /// PFC links.
    fn highest_class(&self, kind: FlowControlKind) -> u8 {
        match kind {
            FlowControlKind::Credit => self.fabric.credit.vls - 1,
            FlowControlKind::Pfc => PRIORITIES as u8 - 1,
        }
    }

    /// With `fabric.class_per_hop`, on routes of up to `max_hops` switch-to-switch hops:
    /// every class a frame can rise to exists (a VL on credit links, a priority on PFC
    /// links), and on PFC links it is lossless exactly when the frame's own class is.
    pub(crate) fn validate_class_per_hop(&self, max_hops: u32) -> Result<(), ConfigError> {
        if !self.fabric.class_per_hop || max_hops <= 1 {
            return Ok(());
        }
        let rise = u8::try_from(max_hops - 1).unwrap_or(u8::MAX);
        let sls = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| (format!("flow {i}"), f.prio))
            .chain(std::iter::once((
                "host.ack_prio".to_string(),
                self.host.ack_prio,
            )));
        let param = |field, reason| Err(ConfigError::Parameter { field, reason });
        let tables = self.link_class_tables();
        for (what, sl) in sls {
            for &(kind, table) in &tables {
                let base = table[usize::from(sl)];
                let top = self.highest_class(kind);
                let unit = match kind {
                    FlowControlKind::Credit => "VL",
                    FlowControlKind::Pfc => "priority",
                };
                if u16::from(base) + u16::from(rise) > u16::from(top) {
                    return param(
                        "fabric.class_per_hop",
                        format!(
                            "{what} travels in {unit} {base}; on routes of {max_hops} \
                             switch-to-switch hops it rises to {unit} {}, and the highest is \
                             {top}",
                            u16::from(base) + u16::from(rise)
                        ),
                    );
                }
                if kind == FlowControlKind::Pfc {
                    let lossless = |p: u8| self.switch.lossless & (1 << p) != 0;
                    if let Some(p) =
                        (base + 1..=base + rise).find(|&p| lossless(p) != lossless(base))
                    {
                        return param(
                            "switch.lossless",
                            format!(
                                "{what} travels in priority {base} and, with \
                                 fabric.class_per_hop, rises to {p} on longer routes: one is \
                                 lossless and the other not"
                            ),
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// Every switch's chip has a port for each of its links, and its buffer holds its
    /// reservations (the MMU the run would build accepts them).
    fn validate_switches(&self) -> Result<(), ConfigError> {
        // Per switch, its links' rates, delays and flow control in link order: the port
        // order of the run.
        let mut ports: BTreeMap<usize, Vec<(Rate, Time, FlowControlKind)>> = BTreeMap::new();
        for (node, kind) in self.topology.nodes.iter().enumerate() {
            if *kind == NodeKind::Switch {
                ports.insert(node, Vec::new());
            }
        }
        for (i, l) in self.topology.links.iter().enumerate() {
            for end in [l.a.index(), l.b.index()] {
                if let Some(p) = ports.get_mut(&end) {
                    p.push((l.rate, l.delay, self.fabric.link_kind(i)));
                }
            }
        }
        // Switches with the same ports have the same MMU: check each kind once (a chain or
        // a fat tree has a few kinds and up to millions of switches).
        let mut checked = std::collections::BTreeSet::new();
        for (node, mine) in &ports {
            if !checked.insert(mine) {
                continue;
            }
            if let Some(chip) = self.switch.chip_ports.filter(|&c| c < mine.len()) {
                return Err(ConfigError::Parameter {
                    field: "switch.chip_ports",
                    reason: format!(
                        "{chip} ports are fewer than the {} links of switch {node}",
                        mine.len()
                    ),
                });
            }
            Mmu::new(&self.mmu_config(mine)).map_err(|e| ConfigError::Parameter {
                field: "switch.buffer_bytes",
                reason: if mine.iter().any(|p| p.2 == FlowControlKind::Credit) {
                    // Where the private space comes from is not in [switch].
                    format!(
                        "switch {node}: {e} (on credit links every ingress port reserves \
                         fabric.credit.vl_buffer for each of its {} VLs)",
                        self.fabric.credit.vls
                    )
                } else {
                    format!("switch {node}: {e}")
                },
            })?;
        }
        Ok(())
    }
}
