//! `[output]`: what a run records and writes besides the simulation itself.
//!
//! Invariant: `sample_interval`, `fail_on_lossless_drop` and `pfc_log` go into the [`SimConfig`]'s
//! record options (they change what the run does); `plots` and `compat` only into
//! [`OutputOptions`].

use super::fields::{Cx, Fld, Res};
use super::OutputOptions;
use crate::config::SimConfig;

pub(super) fn parse_output(
    cx: &Cx,
    f: &Fld,
    config: &mut SimConfig,
    out: &mut OutputOptions,
) -> Res<()> {
    let mut t = f.table(cx)?;
    t.check_keys(
        cx,
        &[
            "sample_interval",
            "fail_on_lossless_drop",
            "pfc_log",
            "credit_log",
            "plots",
            "compat",
        ],
    )?;
    if let Some(x) = t.get(cx, "sample_interval") {
        config.record.sample_interval = Some(x.positive_time(cx)?);
    }
    if let Some(x) = t.get(cx, "fail_on_lossless_drop") {
        config.record.fail_on_lossless_drop = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "pfc_log") {
        config.record.omit_pfc_log = !x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "credit_log") {
        config.record.omit_credit_log = !x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "plots") {
        out.plots = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "compat") {
        out.compat_hpcc = x.choice(cx, "compat format", &[("hpcc", true), ("none", false)])?;
    }
    Ok(())
}
