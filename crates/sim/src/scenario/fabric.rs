//! `[fabric]`: how the links keep the fabric lossless (`kind = "pfc" | "credit"`), and
//! `[fabric.credit]`, the parameters of credit links; also the SL → VL tables that
//! `[fabric.credit]` and `[[topology.link]]` entries give.
//!
//! Invariants: keys not given keep [`crate::config::FabricConfig::default`]'s values;
//! `[fabric.credit]` is accepted with either kind (a scenario can switch kinds by one key)
//! and checked by `SimConfig::validate` when the kind is `"credit"`.

use super::fields::{Cx, Fld, Res, V};
use crate::config::{CreditGrant, FabricConfig, FlowControlKind, SlToVl};
use headroom_mech::PRIORITIES;

/// The kinds of flow control, by name.
const KINDS: [(&str, FlowControlKind); 2] = [
    ("pfc", FlowControlKind::Pfc),
    ("credit", FlowControlKind::Credit),
];

pub(super) fn parse_fabric(cx: &Cx, f: &Fld, fabric: &mut FabricConfig) -> Res<()> {
    let mut t = f.table(cx)?;
    t.check_keys(cx, &["kind", "credit"])?;
    if let Some(x) = t.get(cx, "kind") {
        fabric.kind = x.choice(cx, "flow control", &KINDS)?;
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
