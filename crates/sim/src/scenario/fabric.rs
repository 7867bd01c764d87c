//! `[fabric]`: how the links keep the fabric lossless (`kind = "pfc" | "credit" |
//! "flow-channels"`, `class_per_hop`), `[fabric.credit]`, the parameters of credit links, and
//! `[fabric.flow_channels]`, those of the flow-channel layer and the links beneath it; also
//! the SL → VL tables that `[fabric.credit]` and `[[topology.link]]` entries give.
//!
//! Invariants: keys not given keep [`crate::config::FabricConfig::default`]'s values;
//! `[fabric.credit]` and `[fabric.flow_channels]` are accepted with any kind (a scenario
//! can switch kinds by one key) and checked by `SimConfig::validate` when in use.

use super::fields::{Cx, Fld, Res, V};
use crate::config::{
    ChannelRouting, CreditGrant, EdgeMatch, FabricConfig, FlowChannelParams, FlowControlKind,
    IlidInjectionConfig, RerouteConfig, SlToVl,
};
use headroom_mech::endpoint_congestion::{EndpointConfig, Watermarks, MAX_LEVELS};
use headroom_mech::fgfc::FgfcConfig;
use headroom_mech::hop_credit::HopCreditConfig;
use headroom_mech::injection::ILIDS;
use headroom_mech::inq_arbiter::NO_FLOW_APPG;
use headroom_mech::PRIORITIES;

/// The kinds of flow control, by name.
const KINDS: [(&str, FlowControlKind); 2] = [
    ("pfc", FlowControlKind::Pfc),
    ("credit", FlowControlKind::Credit),
];

/// `[fabric] kind`: a kind of link flow control, or flow channels over links.
#[derive(Clone, Copy)]
enum FabricKind {
    Links(FlowControlKind),
    FlowChannels,
}

pub(super) fn parse_fabric(cx: &Cx, f: &Fld, fabric: &mut FabricConfig) -> Res<()> {
    let mut t = f.table(cx)?;
    t.check_keys(cx, &["kind", "class_per_hop", "credit", "flow_channels"])?;
    if let Some(x) = t.get(cx, "class_per_hop") {
        fabric.class_per_hop = x.boolean(cx)?;
    }
    let mut kind = FabricKind::Links(fabric.kind);
    if let Some(x) = t.get(cx, "kind") {
        kind = x.choice(
            cx,
            "fabric kind",
            &[
                ("pfc", FabricKind::Links(FlowControlKind::Pfc)),
                ("credit", FabricKind::Links(FlowControlKind::Credit)),
                ("flow-channels", FabricKind::FlowChannels),
            ],
        )?;
    }
    let mut params = FlowChannelParams::default();
    let mut beneath = FlowControlKind::Pfc;
    if let Some(x) = t.get(cx, "flow_channels") {
        beneath = parse_flow_channels(cx, &x, &mut params)?;
    }
    match kind {
        FabricKind::Links(k) => fabric.kind = k,
        FabricKind::FlowChannels => {
            fabric.kind = beneath;
            fabric.flow_channels = Some(params);
        }
    }
    if let Some(x) = t.get(cx, "credit") {
        let c = &mut fabric.credit;
        let mut t = x.table(cx)?;
        t.check_keys(
            cx,
            &[
                "vls",
                "sl_to_vl",
                "block",
                "vl_buffer",
                "update_period",
                "update_threshold",
                "grant",
            ],
        )?;
        if let Some(x) = t.get(cx, "vls") {
            c.vls = match x.uint(cx, 1, 8)? {
                v @ (1 | 2 | 4 | 8) => v as u8,
                v => return Err(x.err(cx, format!("{v} VLs; must be 1, 2, 4 or 8"))),
            };
        }
        if let Some(x) = t.get(cx, "sl_to_vl") {
            c.sl_to_vl = sl_to_vl(cx, &x)?;
        }
        if let Some(x) = t.get(cx, "block") {
            let b = x.positive_bytes(cx)?;
            c.block =
                u32::try_from(b).map_err(|_| x.err(cx, "a credit block must be below 4 GiB"))?;
        }
        if let Some(x) = t.get(cx, "vl_buffer") {
            c.vl_buffer = x.positive_bytes(cx)?;
        }
        if let Some(x) = t.get(cx, "update_period") {
            c.update_period = Some(x.positive_time(cx)?);
        }
        if let Some(x) = t.get(cx, "update_threshold") {
            c.update_threshold = Some(x.bytes(cx)?);
        }
        if let Some(x) = t.get(cx, "grant") {
            c.grant = x.choice(
                cx,
                "credit grant",
                &[
                    ("static", CreditGrant::Static),
                    ("shared", CreditGrant::Shared),
                ],
            )?;
        }
    }
    Ok(())
}

/// `[fabric.flow_channels]` into `p`; returns the flow control of the links beneath.
fn parse_flow_channels(cx: &Cx, f: &Fld, p: &mut FlowChannelParams) -> Res<FlowControlKind> {
    let mut t = f.table(cx)?;
    if let Some(x) = t.get(cx, "arbitration") {
        // Arbitration orders any switch's queues, on every fabric: say where it lives.
        return Err(x.err(
            cx,
            "arbitration is the switches' scheduler's: set `[switch.scheduler] arbitration` \
             (\"input-port\", \"flow\" for flow channels, or \"application\")",
        ));
    }
    t.check_keys(
        cx,
        &[
            "link",
            "table_size",
            "unit",
            "match",
            "routing",
            "ugal_threshold",
            "ack_batch",
            "ack_bits",
            "ack_frame_overhead",
            "ack_idle_delay",
            "ack_busy_delay",
            "ack_max_delay",
            "endpoint",
            "fgfc",
            "hop_credits",
            "injection",
            "reroute",
        ],
    )?;
    let mut link = FlowControlKind::Pfc;
    if let Some(x) = t.get(cx, "link") {
        link = x.choice(cx, "link flow control", &KINDS)?;
    }
    if let Some(x) = t.get(cx, "table_size") {
        p.table_size = x.uint(cx, 1, u64::from(u16::MAX))? as u16;
    }
    if let Some(x) = t.get(cx, "unit") {
        p.unit = u32::try_from(x.positive_bytes(cx)?)
            .map_err(|_| x.err(cx, "a unit must be below 4 GiB"))?;
    }
    if let Some(x) = t.get(cx, "match") {
        p.edge_match = x.choice(cx, "match pattern", &EdgeMatch::NAMES)?;
    }
    if let Some(x) = t.get(cx, "routing") {
        p.routing = x.choice(cx, "channel routing", &ChannelRouting::NAMES)?;
    }
    if let Some(x) = t.get(cx, "ugal_threshold") {
        let ChannelRouting::Ugal { threshold } = &mut p.routing else {
            return Err(x.err(cx, "a UGAL threshold needs routing = \"ugal\""));
        };
        *threshold = x.bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "ack_batch") {
        p.ack_batch = x.uint(cx, 1, u64::from(u16::MAX))? as u16;
    }
    if let Some(x) = t.get(cx, "ack_bits") {
        p.ack_bits = x.uint(cx, 1, 1 << 16)? as u32;
    }
    if let Some(x) = t.get(cx, "ack_frame_overhead") {
        p.ack_frame_overhead = u32::try_from(x.bytes(cx)?)
            .ok()
            .filter(|&b| b <= 1 << 16)
            .ok_or_else(|| x.err(cx, "an ACK frame's overhead must be at most 64 KiB"))?;
    }
    if let Some(x) = t.get(cx, "ack_idle_delay") {
        p.ack_idle_delay = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "ack_busy_delay") {
        p.ack_busy_delay = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "ack_max_delay") {
        p.ack_max_delay = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "endpoint") {
        p.endpoint = Some(parse_endpoint(cx, &x)?);
    }
    if let Some(x) = t.get(cx, "fgfc") {
        p.fgfc = Some(parse_fgfc(cx, &x)?);
    }
    if let Some(x) = t.get(cx, "hop_credits") {
        p.hop_credits = Some(parse_hop_credits(cx, &x)?);
    }
    if let Some(x) = t.get(cx, "reroute") {
        let mut t = x.table(cx)?;
        t.check_keys(cx, &["queue", "interval"])?;
        let mut r = RerouteConfig::default();
        if let Some(x) = t.get(cx, "queue") {
            r.queue = x.positive_bytes(cx)?;
        }
        if let Some(x) = t.get(cx, "interval") {
            r.interval = x.positive_time(cx)?;
        }
        p.reroute = Some(r);
    }
    if let Some(x) = t.get(cx, "injection") {
        let mut t = x.table(cx)?;
        t.check_keys(cx, &["port", "node", "ilid"])?;
        if let Some(x) = t.get(cx, "port") {
            p.port_injection_limit = Some(x.positive_bytes(cx)?);
        }
        let node = t.get(cx, "node");
        let ilids = t.get(cx, "ilid");
        if node.is_some() || ilids.is_some() {
            let mut c = IlidInjectionConfig::default();
            if let Some(x) = node {
                c.node = Some(x.positive_bytes(cx)?);
            }
            if let Some(x) = ilids {
                parse_ilids(cx, &x, &mut c)?;
            }
            p.ilid_injection = Some(c);
        }
    }
    Ok(link)
}

/// `[[fabric.flow_channels.injection.ilid]]`: each entry's ILID (`id`, 0 to 7, once), the
/// applications mapped to it (each in one ILID at most; 127 is reserved for frames of no
/// flow), its absolute limit and its ratio.
fn parse_ilids(cx: &Cx, f: &Fld, c: &mut IlidInjectionConfig) -> Res<()> {
    let mut listed = 0u8;
    for (i, node) in f.array(cx)?.iter().enumerate() {
        let e = f.elem(i, node);
        let mut t = e.table(cx)?;
        t.check_keys(cx, &["id", "apps", "limit", "ratio"])?;
        let idf = t.req(cx, "id")?;
        // 0..=7 fits in usize.
        let id = idf.uint(cx, 0, ILIDS as u64 - 1)? as usize;
        if listed & (1 << id) != 0 {
            return Err(idf.err(cx, format!("ILID {id} is listed twice")));
        }
        listed |= 1 << id;
        if let Some(af) = t.get(cx, "apps") {
            for (k, an) in af.array(cx)?.iter().enumerate() {
                let a = af.elem(k, an);
                let app = a.uint(cx, 0, u64::from(NO_FLOW_APPG))?;
                if app == u64::from(NO_FLOW_APPG) {
                    return Err(a.err(
                        cx,
                        format!("application {NO_FLOW_APPG} is reserved for frames of no flow"),
                    ));
                }
                let bit = 1u128 << app;
                if let Some(other) = c.apps.iter().position(|m| m & bit != 0) {
                    return Err(a.err(
                        cx,
                        format!("application {app} is already mapped to ILID {other}"),
                    ));
                }
                c.apps[id] |= bit;
            }
        }
        if let Some(x) = t.get(cx, "limit") {
            c.limit[id] = Some(x.positive_bytes(cx)?);
        }
        if let Some(x) = t.get(cx, "ratio") {
            // 1..=u32::MAX fits.
            c.ratio[id] = x.uint(cx, 1, u64::from(u32::MAX))? as u32;
        }
    }
    Ok(())
}

/// `[fabric.flow_channels.hop_credits]`: per-flow hop-by-hop credits, their defaults for
/// the keys not given.
fn parse_hop_credits(cx: &Cx, f: &Fld) -> Res<HopCreditConfig> {
    let mut h = HopCreditConfig::default();
    let mut t = f.table(cx)?;
    t.check_keys(cx, &["high", "target", "drop", "margin", "credit"])?;
    if let Some(x) = t.get(cx, "high") {
        h.high = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "target") {
        h.target = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "drop") {
        h.drop = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "margin") {
        h.margin = x.bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "credit") {
        h.credit = x.bytes(cx)?;
    }
    Ok(h)
}

/// `[fabric.flow_channels.fgfc]`: fine-grained flow control, its defaults for the keys not
/// given.
fn parse_fgfc(cx: &Cx, f: &Fld) -> Res<FgfcConfig> {
    let mut g = FgfcConfig::default();
    let mut t = f.table(cx)?;
    t.check_keys(cx, &["target", "drop", "pause", "credit"])?;
    if let Some(x) = t.get(cx, "target") {
        g.target = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "drop") {
        g.drop = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "pause") {
        g.pause = x.positive_time(cx)?;
    }
    if let Some(x) = t.get(cx, "credit") {
        g.credit = x.bytes(cx)?;
    }
    Ok(g)
}

/// `[fabric.flow_channels.endpoint]`: endpoint congestion management, its defaults for the
/// keys not given.
fn parse_endpoint(cx: &Cx, f: &Fld) -> Res<EndpointConfig> {
    let mut e = EndpointConfig::default();
    let mut t = f.table(cx)?;
    t.check_keys(
        cx,
        &[
            "bytes",
            "packets",
            "growth",
            "window",
            "limits",
            "watermarks",
            "release_delay",
        ],
    )?;
    if let Some(x) = t.get(cx, "release_delay") {
        e.release_delay = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "bytes") {
        e.bytes = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "packets") {
        e.packets = x.uint(cx, 1, u64::from(u32::MAX))? as u32;
    }
    if let Some(x) = t.get(cx, "growth") {
        e.growth = Some(x.positive_rate(cx)?);
    }
    if let Some(x) = t.get(cx, "window") {
        e.window = x.positive_time(cx)?;
    }
    if let Some(x) = t.get(cx, "limits") {
        let items = x.array(cx)?;
        if items.is_empty() || items.len() > MAX_LEVELS {
            return Err(x.err(
                cx,
                format!(
                    "expected 1 to {MAX_LEVELS} limits (one per severity level), found {}",
                    items.len()
                ),
            ));
        }
        e.limits = [0; MAX_LEVELS];
        for (i, node) in items.iter().enumerate() {
            e.limits[i] = x.elem(i, node).bytes(cx)?;
        }
        // At most 8: fits in u8.
        e.levels = items.len() as u8;
    }
    if let Some(x) = t.get(cx, "watermarks") {
        let items = x.array(cx)?;
        if items.is_empty() || items.len() > usize::from(e.levels) {
            return Err(x.err(
                cx,
                format!(
                    "expected 1 to {} watermark entries (one per severity level of `limits`), \
                     found {}",
                    e.levels,
                    items.len()
                ),
            ));
        }
        for (i, node) in items.iter().enumerate() {
            let mut w = x.elem(i, node).table(cx)?;
            w.check_keys(cx, &["high", "target", "drop"])?;
            e.watermarks[i] = Watermarks {
                high: w.req(cx, "high")?.positive_bytes(cx)?,
                target: w.req(cx, "target")?.positive_bytes(cx)?,
                drop: w.req(cx, "drop")?.positive_bytes(cx)?,
            };
        }
        // At most `levels` (8): fits in u8.
        e.watermark_levels = items.len() as u8;
    }
    Ok(e)
}

/// An SL → VL table: one VL (0–7) for each of the 8 service levels.
pub(super) fn sl_to_vl(cx: &Cx, f: &Fld) -> Res<SlToVl> {
    let items = f.array(cx)?;
    if items.len() != PRIORITIES {
        return Err(f.err(
            cx,
            format!(
                "expected {PRIORITIES} VLs (one per service level 0-7), found {}",
                items.len()
            ),
        ));
    }
    let mut table = SlToVl::default();
    for (sl, node) in items.iter().enumerate() {
        // At most 7: fits in u8.
        table[sl] = f.elem(sl, node).uint(cx, 0, PRIORITIES as u64 - 1)? as u8;
    }
    Ok(table)
}

/// A link's flow control: one kind, or one per end (`[a's, b's]`), which must agree.
pub(super) fn link_flow_control(cx: &Cx, f: &Fld) -> Res<FlowControlKind> {
    let V::Array(items) = &f.node.v else {
        return f.choice(cx, "flow control", &KINDS);
    };
    let [a, b] = items.as_slice() else {
        return Err(f.err(
            cx,
            format!(
                "give one kind, or one per end ([a's, b's]); found {} entries",
                items.len()
            ),
        ));
    };
    let (fa, fb) = (f.elem(0, a), f.elem(1, b));
    let (ka, kb) = (
        fa.choice(cx, "flow control", &KINDS)?,
        fb.choice(cx, "flow control", &KINDS)?,
    );
    if ka != kb {
        let name = |k| KINDS.iter().find(|(_, x)| *x == k).map_or("?", |(n, _)| *n);
        return Err(f.err(
            cx,
            format!(
                "the ends disagree: a uses {}, b uses {}; both ends of a link use one kind",
                name(ka),
                name(kb)
            ),
        ));
    }
    Ok(ka)
}
