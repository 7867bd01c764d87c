//! The machine's memory as the subcommands see it: what a run may use, and what it used.
//!
//! Invariants: a run is refused before it is built when its [`Footprint`] exceeds the memory
//! available to this process (the smaller of the kernel's `MemAvailable` and what is left
//! under `ulimit -v`); when it would fit as one part but not as several, it runs as fewer
//! parts, with a note. Where `/proc` is missing nothing is refused.

use headroom_mech::units::human_bytes;
use headroom_sim::config::SimConfig;
use headroom_sim::net::Footprint;
use miette::{miette, Result};

/// A `kB` field of a `/proc` file in bytes.
fn proc_kb(file: &str, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_rss() -> Option<u64> {
    proc_kb("/proc/self/status", "VmHWM:")
}

/// Bytes of address space left under `ulimit -v`, if one is set.
fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = line.split_whitespace().nth(3)?.parse().ok()?; // "unlimited" → None
    let used = proc_kb("/proc/self/status", "VmSize:").unwrap_or(0);
    Some(soft.saturating_sub(used))
}

/// Bytes this process may still allocate, if known, and what bounds them.
pub fn available() -> Option<(u64, &'static str)> {
    let free = proc_kb("/proc/meminfo", "MemAvailable:").map(|b| (b, "available memory"));
    let limit = address_space_left().map(|b| (b, "the address-space limit (ulimit -v)"));
    match (free, limit) {
        (Some(f), Some(l)) => Some(if l.0 < f.0 { l } else { f }),
        (f, l) => f.or(l),
    }
}

/// Refuses `copies` simulations of `cfg` held at once (a comparison runs its schemes side
/// by side) when they would exceed the memory available, naming the estimate.
pub fn ensure_fits(name: &str, cfg: &SimConfig, copies: usize) -> Result<()> {
    let Some((avail, bound)) = available() else {
        return Ok(());
    };
    let one = Footprint::of(cfg, 1);
    let need = one.total().saturating_mul(copies as u64);
    if need > avail {
        return Err(miette!(
            "{name}: {copies} simultaneous run(s) would need {} ({one} each), more than the \
             {} of {bound}; use a smaller network or fewer flows",
            human_bytes(need),
            human_bytes(avail)
        ));
    }
    Ok(())
}

/// How many threads the run `name` of `cfg` can use of the `threads` asked for without
/// exceeding the memory available (each part holds its own copy of the network): fewer,
/// with a note, when several parts do not fit but one does; an error naming the estimate
/// when not even one does.
pub fn threads_that_fit(name: &str, cfg: &SimConfig, threads: usize, quiet: bool) -> Result<usize> {
    let Some((avail, bound)) = available() else {
        return Ok(threads);
    };
    let fits = |parts: usize| Footprint::of(cfg, parts).total() <= avail;
    if fits(threads) {
        return Ok(threads);
    }
    match (1..threads).rev().find(|&t| fits(t)) {
        Some(t) => {
            if !quiet {
                errln!(
                    "note: {name}: runs as {t} part(s) instead of {threads}: {} parts need {}, \
                     more than the {} of {bound}",
                    threads,
                    human_bytes(Footprint::of(cfg, threads).total()),
                    human_bytes(avail)
                );
            }
            Ok(t)
        }
        None => Err(miette!(
            "{name}: the run would need {}, more than the {} of {bound}; use a smaller \
             network or fewer flows",
            Footprint::of(cfg, 1),
            human_bytes(avail)
        )),
    }
}
