//! `[switch]` and its sub-tables: buffer, headroom sizing, headroom scheme (SIH, SHP,
//! DSH), alpha, PFC, scheduler and ECN/RED marking, applied to a [`SwitchConfig`].
//!
//! Invariants:
//! - Keys not given keep [`SwitchConfig::default`]'s values.
//! - At most one of `alpha`, `dynamic_th`, `alpha_percent`, `alpha_scaling` is given.
//! - `[switch.headroom_params]` accepts only the parameters of the chosen `headroom`
//!   formula; `[switch.shp]` and `[switch.dsh]` only appear with their scheme.
//! - RED thresholds are given all three (`kmin`, `kmax`, `pmax`) or not at all, with
//!   `kmin <= kmax` and `pmax` in [0, 1].
//! - `[switch.ecn.tcd]` appears only with a TCD `detector` and takes only that detector's
//!   parameters; a TCD detector needs marking on, at dequeue.

use super::fields::{join, unit_reason, Cx, Fld, Quantity, Res, Tbl};
use crate::config::{
    Admission, AlphaPolicy, Arbitration, DetectorConfig, EcnConfig, EcnPoint, FecnConfig,
    HeadroomSizing, QueueEcn, SchemeConfig, ShpPool, SwitchConfig,
};
use headroom_mech::buffer::formula;
use headroom_mech::buffer::mmu::{Reservation, StaticThresholds};
use headroom_mech::buffer::Alpha;
use headroom_mech::ecn::RedConfig;
use headroom_mech::pfc::{PfcConfig, MAX_QUANTA};
use headroom_mech::pfcwd::{WatchdogAction, WatchdogConfig};
use headroom_mech::tcd::ReleasedConfig;
use headroom_mech::units::{parse_bytes, Time};

pub(super) fn parse_switch(cx: &Cx, f: &Fld, sw: &mut SwitchConfig) -> Res<()> {
    let mut t = f.table(cx)?;
    t.check_keys(
        cx,
        &[
            "buffer",
            "cell",
            "private",
            "headroom",
            "headroom_params",
            "reservation",
            "scheme",
            "shp",
            "dsh",
            "ports",
            "alpha",
            "dynamic_th",
            "alpha_percent",
            "alpha_scaling",
            "egress_alpha",
            "xon_offset",
            "lossless",
            "pfc",
            "pfc_watchdog",
            "scheduler",
            "ecn",
            "admission",
        ],
    )?;
    if let Some(f) = t.get(cx, "admission") {
        sw.admission = f.choice(
            cx,
            "admission point",
            &[
                ("first-bit", Admission::FirstBit),
                ("last-bit", Admission::LastBit),
            ],
        )?;
    }
    if let Some(f) = t.get(cx, "buffer") {
        sw.buffer_bytes = f.positive_bytes(cx)?;
        if sw.buffer_bytes > u64::from(u32::MAX) {
            return Err(f.err(cx, "must be below 4 GiB"));
        }
    }
    if let Some(f) = t.get(cx, "cell") {
        let c = f.positive_bytes(cx)?;
        sw.cell_bytes =
            u32::try_from(c).map_err(|_| f.err(cx, format!("cell size {c} B is too large")))?;
    }
    if let Some(f) = t.get(cx, "private") {
        sw.private_bytes = f.bytes(cx)?;
    }
    sw.headroom = parse_headroom(cx, &mut t)?;
    if let Some(f) = t.get(cx, "reservation") {
        sw.reservation = f.choice(
            cx,
            "reservation",
            &[
                ("per-pg", Reservation::PerPg),
                ("per-port", Reservation::PerPort),
            ],
        )?;
    }
    parse_scheme(cx, &mut t, sw)?;
    if let Some(f) = t.get(cx, "ports") {
        sw.chip_ports = Some(f.uint(cx, 1, 4096)? as usize);
    }
    let alpha_keys = ["alpha", "dynamic_th", "alpha_percent", "alpha_scaling"];
    let given: Vec<&str> = alpha_keys.iter().copied().filter(|k| t.has(k)).collect();
    if given.len() > 1 {
        let second = t.get(cx, given[1]).map(|f| f.span()).unwrap_or(None);
        return Err(cx.err(
            &join(&t.name, given[1]),
            second,
            format!(
                "give at most one of `alpha`, `dynamic_th`, `alpha_percent`, `alpha_scaling` (found `{}` and `{}`)",
                given[0], given[1]
            ),
        ));
    }
    if let Some(f) = t.get(cx, "alpha") {
        sw.alpha = AlphaPolicy::Fixed(alpha_value(cx, &f)?);
    }
    if let Some(f) = t.get(cx, "dynamic_th") {
        let th = f.int(cx)?;
        let a = i32::try_from(th)
            .ok()
            .and_then(|th| Alpha::from_dynamic_th(th).ok())
            .ok_or_else(|| f.err(cx, format!("dynamic_th {th} is out of range (-7..=3)")))?;
        sw.alpha = AlphaPolicy::Fixed(a);
    }
    if let Some(f) = t.get(cx, "alpha_percent") {
        let p = f.uint(cx, 0, 100)? as u32;
        let a = Alpha::from_percent(p).map_err(|e| f.err(cx, e.to_string()))?;
        sw.alpha = AlphaPolicy::Fixed(a);
    }
    if let Some(f) = t.get(cx, "alpha_scaling") {
        let mut s = f.table(cx)?;
        s.check_keys(cx, &["base", "nic_rate"])?;
        let base = alpha_value(cx, &s.req(cx, "base")?)?;
        let nic_rate = s.req(cx, "nic_rate")?.positive_rate(cx)?;
        sw.alpha = AlphaPolicy::ScaledByRate { base, nic_rate };
    }
    if let Some(f) = t.get(cx, "egress_alpha") {
        sw.egress_alpha = alpha_value(cx, &f)?;
    }
    if let Some(f) = t.get(cx, "xon_offset") {
        sw.xon_offset = f.bytes(cx)?;
    }
    if let Some(f) = t.get(cx, "lossless") {
        sw.lossless = f.prio_mask(cx)?;
    }
    if let Some(f) = t.get(cx, "pfc_watchdog") {
        let mut w = f.table(cx)?;
        w.check_keys(cx, &["detection", "restoration", "action", "interval"])?;
        let mut wd = WatchdogConfig::sonic_default();
        if let Some(d) = w.get(cx, "detection") {
            wd.detection = d.positive_time(cx)?;
        }
        if let Some(r) = w.get(cx, "restoration") {
            wd.restoration = r.positive_time(cx)?;
        }
        wd.interval = match w.get(cx, "interval") {
            Some(i) => i.positive_time(cx)?,
            // SONiC polls every 200 ms, which is its detection time: a poll per detection.
            None => wd.detection.min(wd.restoration),
        };
        if let Some(a) = w.get(cx, "action") {
            wd.action = a.choice(
                cx,
                "watchdog action",
                &[
                    ("drop", WatchdogAction::Drop),
                    ("forward", WatchdogAction::Forward),
                ],
            )?;
        }
        sw.watchdog = Some(wd);
    }
    if let Some(f) = t.get(cx, "pfc") {
        let mut p = f.table(cx)?;
        p.check_keys(cx, &["mode", "quanta", "response", "xoff", "xon"])?;
        if let Some(m) = p.get(cx, "mode") {
            sw.pfc = m.choice(
                cx,
                "PFC mode",
                &[
                    ("explicit-resume", PfcConfig::explicit_resume_mode()),
                    ("refresh", PfcConfig::refresh_mode(MAX_QUANTA)),
                ],
            )?;
        }
        if let Some(q) = p.get(cx, "quanta") {
            // 1..=65535 fits in u16.
            sw.pfc.quanta = q.uint(cx, 1, u64::from(MAX_QUANTA))? as u16;
        }
        if let Some(r) = p.get(cx, "response") {
            sw.response_bytes = r.bytes(cx)?;
        }
        match (p.get(cx, "xoff"), p.get(cx, "xon")) {
            (None, None) => {}
            (Some(f), None) | (None, Some(f)) => {
                return Err(f.err(
                    cx,
                    "static PFC thresholds take both `xoff` and `xon` (bytes of an ingress \
                     PG's shared occupancy)",
                ))
            }
            (Some(off), Some(on)) => {
                let xoff_bytes = off.positive_bytes(cx)?;
                let xon_bytes = on.bytes(cx)?;
                if xon_bytes >= xoff_bytes {
                    return Err(on.err(cx, format!("must be below xoff ({xoff_bytes} B)")));
                }
                if matches!(sw.scheme, SchemeConfig::Dsh { .. }) {
                    return Err(off.err(
                        cx,
                        "static PFC thresholds need scheme \"sih\" or \"shp\" (DSH's \
                         thresholds are dynamic by design)",
                    ));
                }
                sw.static_pfc = Some(StaticThresholds {
                    xoff_bytes,
                    xon_bytes,
                });
            }
        }
    }
    if let Some(f) = t.get(cx, "scheduler") {
        let mut s = f.table(cx)?;
        s.check_keys(cx, &["strict", "quantum", "weights", "arbitration"])?;
        if let Some(x) = s.get(cx, "arbitration") {
            sw.scheduler.arbitration = x.choice(cx, "arbitration", &Arbitration::NAMES)?;
        }
        if let Some(x) = s.get(cx, "strict") {
            sw.scheduler.strict = x.prio_mask(cx)?;
        }
        if let Some(x) = s.get(cx, "quantum") {
            sw.scheduler.quantum = x.positive_bytes(cx)?;
        }
        if let Some(x) = s.get(cx, "weights") {
            let items = x.array(cx)?;
            if items.len() != 8 {
                return Err(x.err(
                    cx,
                    format!("expected 8 weights (one per queue), found {}", items.len()),
                ));
            }
            for (i, node) in items.iter().enumerate() {
                // 1..=u32::MAX fits in u32.
                sw.scheduler.weights[i] = x.elem(i, node).uint(cx, 1, u64::from(u32::MAX))? as u32;
            }
        }
    }
    if let Some(f) = t.get(cx, "ecn") {
        let mut e = f.table(cx)?;
        e.check_keys(
            cx,
            &[
                "enabled", "point", "kmin", "kmax", "pmax", "queue", "detector", "tcd", "fecn",
            ],
        )?;
        if let Some(x) = e.get(cx, "enabled") {
            sw.ecn.enabled = x.boolean(cx)?;
        }
        if let Some(x) = e.get(cx, "point") {
            sw.ecn.point = x.choice(
                cx,
                "marking point",
                &[
                    ("dequeue", EcnPoint::Dequeue),
                    ("enqueue", EcnPoint::Enqueue),
                ],
            )?;
        }
        if let Some(r) = parse_red(cx, &mut e)? {
            sw.ecn.red = Some(r);
        }
        parse_detector(cx, &mut e, &mut sw.ecn)?;
        if let Some(x) = e.get(cx, "fecn") {
            if sw.ecn.point != EcnPoint::Dequeue {
                return Err(x.err(
                    cx,
                    "FECN marks the packets a switch forwards: it needs point = \"dequeue\"",
                ));
            }
            sw.ecn.fecn = Some(parse_fecn(cx, &x)?);
        }
        if let Some(qs) = e.get(cx, "queue") {
            let qt = qs.table(cx)?;
            for entry in qt.entries {
                let fld = Fld {
                    name: join(&qt.name, &entry.key),
                    node: &entry.node,
                };
                let q = entry
                    .key
                    .parse::<usize>()
                    .ok()
                    .filter(|&q| q < headroom_mech::PRIORITIES)
                    .ok_or_else(|| {
                        cx.err(
                            &fld.name,
                            entry.key_span.clone().or_else(|| fld.span()),
                            format!("`{}` is not a queue (expected 0 to 7)", entry.key),
                        )
                    })?;
                let mut t = fld.table(cx)?;
                t.check_keys(cx, &["enabled", "kmin", "kmax", "pmax"])?;
                let on = match t.get(cx, "enabled") {
                    Some(x) => x.boolean(cx)?,
                    None => true,
                };
                let red = parse_red(cx, &mut t)?;
                sw.ecn.queues[q] = match (on, red) {
                    (false, None) => QueueEcn::Off,
                    (false, Some(_)) => {
                        return Err(cx.err(
                            &fld.name,
                            fld.span(),
                            "a queue with `enabled = false` takes no thresholds",
                        ))
                    }
                    (true, None) => QueueEcn::Inherit,
                    (true, Some(r)) => QueueEcn::Red(r),
                };
            }
        }
    }
    Ok(())
}

/// `detector` of `[switch.ecn]` and its parameters in `[switch.ecn.tcd]`.
fn parse_detector(cx: &Cx, e: &mut Tbl, ecn: &mut EcnConfig) -> Res<()> {
    let name = match e.get(cx, "detector") {
        Some(x) => {
            let name = x.str(cx)?;
            if !matches!(name, "red" | "tcd" | "tcd-released") {
                return Err(x.err(
                    cx,
                    format!("unknown detector `{name}` (expected red, tcd or tcd-released)"),
                ));
            }
            name
        }
        None => "red",
    };
    let params = match e.get(cx, "tcd") {
        Some(f) => {
            let t = f.table(cx)?;
            Some((f, t))
        }
        None => None,
    };
    if let Some((f, t)) = &params {
        let keys: &[&str] =
            match name {
                "tcd" => &["max_t_on", "threshold"],
                "tcd-released" => &["interval", "growth", "empty"],
                _ => return Err(f.err(
                    cx,
                    "[switch.ecn.tcd] sets parameters of a TCD detector; set detector = \"tcd\" \
                     or \"tcd-released\"",
                )),
            };
        t.check_keys_with(cx, keys, &format!("detector = \"{name}\""))?;
    }
    let mut t = params.map(|(_, t)| t);
    let mut get = |key: &str| t.as_mut().and_then(|t| t.get(cx, key));
    ecn.detector = match name {
        "tcd" => DetectorConfig::Tcd {
            max_t_on: get("max_t_on").map(|x| x.positive_time(cx)).transpose()?,
            threshold: get("threshold").map(|x| x.bytes(cx)).transpose()?,
        },
        "tcd-released" => {
            let mut c = ReleasedConfig::default();
            if let Some(x) = get("interval") {
                c.interval = x.positive_time(cx)?;
                if c.interval < Time::from_us(1) {
                    return Err(x.err(
                        cx,
                        "the released detector counts whole microseconds: at least 1us",
                    ));
                }
            }
            if let Some(x) = get("growth") {
                c.growth = x.bytes(cx)?;
            }
            if let Some(x) = get("empty") {
                c.empty = x.bytes(cx)?;
            }
            DetectorConfig::TcdReleased(c)
        }
        _ => DetectorConfig::Red,
    };
    if let (Err(reason), Some(x)) = (ecn.validate(), e.get(cx, "detector")) {
        return Err(x.err(cx, reason));
    }
    Ok(())
}

/// RED thresholds `kmin`, `kmax`, `pmax` of table `e`: all three, or none (`None`).
fn parse_red(cx: &Cx, e: &mut Tbl) -> Res<Option<RedConfig>> {
    let red_keys = ["kmin", "kmax", "pmax"];
    if !red_keys.iter().any(|k| e.has(k)) {
        return Ok(None);
    }
    let missing: Vec<&str> = red_keys.iter().copied().filter(|k| !e.has(k)).collect();
    if !missing.is_empty() {
        return Err(cx.err(
            &join(&e.name, missing[0]),
            e.span.clone(),
            format!(
                "give all of kmin, kmax and pmax, or none (to scale them with the port rate); `{}` is missing",
                missing[0]
            ),
        ));
    }
    let kmin = e.req(cx, "kmin")?.bytes(cx)?;
    let kmax_f = e.req(cx, "kmax")?;
    let kmax = kmax_f.bytes(cx)?;
    if kmax < kmin {
        return Err(kmax_f.err(cx, format!("kmax ({kmax} B) is below kmin ({kmin} B)")));
    }
    let pf = e.req(cx, "pmax")?;
    let pmax = pf.float(cx)?;
    if !(0.0..=1.0).contains(&pmax) {
        return Err(pf.err(cx, format!("must be in [0, 1], found {pmax}")));
    }
    Ok(Some(RedConfig { kmin, kmax, pmax }))
}

fn alpha_value(cx: &Cx, f: &Fld) -> Res<Alpha> {
    let v = f.float(cx)?;
    Alpha::from_value(v).map_err(|e| f.err(cx, e.to_string()))
}

fn parse_headroom(cx: &Cx, t: &mut Tbl) -> Res<HeadroomSizing> {
    #[derive(PartialEq)]
    enum Kind {
        PfcGuide,
        Dsh,
        Sonic,
        Hpcc,
        Fixed(u64),
    }
    let (kind, label) = match t.get(cx, "headroom") {
        None => (Kind::PfcGuide, "pfc-guide".to_string()),
        Some(f) => {
            let s = f.str(cx)?;
            let k = match s {
                "pfc-guide" => Kind::PfcGuide,
                "dsh" => Kind::Dsh,
                "sonic" => Kind::Sonic,
                "hpcc" => Kind::Hpcc,
                other => match parse_bytes(other) {
                    Ok(b) => Kind::Fixed(b.0),
                    Err(e) => {
                        return Err(f.err(
                            cx,
                            format!(
                                "`{other}` is neither a formula ({}) nor a size: {}",
                                HEADROOM_FORMULAS.map(|(f, _)| f).join(", "),
                                unit_reason(e, Quantity::Bytes)
                            ),
                        ))
                    }
                },
            };
            (k, s.to_string())
        }
    };
    // A fixed size takes no parameters.
    let known = HEADROOM_FORMULAS
        .iter()
        .find(|(f, _)| *f == label)
        .map_or(&[][..], |(_, keys)| *keys);
    let params = t.get(cx, "headroom_params");
    let mut p = match &params {
        Some(f) => {
            let p = f.table(cx)?;
            p.check_keys_with(cx, known, &format!("headroom = \"{label}\""))?;
            Some(p)
        }
        None => None,
    };
    let mut size = |key: &str, default: u64| -> Res<u64> {
        match p.as_mut().and_then(|p| p.get(cx, key)) {
            Some(f) => f.bytes(cx),
            None => Ok(default),
        }
    };
    Ok(match kind {
        Kind::PfcGuide => HeadroomSizing::PfcGuide {
            mtu_r: size("mtu_r", formula::MAX_FRAME_BYTES)?,
            mtu_s: size("mtu_s", formula::MAX_FRAME_BYTES)?,
            response: size("response", formula::PEER_RESPONSE_BYTES)?,
        },
        Kind::Dsh => HeadroomSizing::Dsh {
            mtu: size("mtu", DSH_MTU)?,
        },
        Kind::Sonic => {
            let port_mtu = size("port_mtu", SONIC_PORT_MTU)?;
            let lossless_mtu = size("lossless_mtu", SONIC_LOSSLESS_MTU)?;
            let mac_phy_bytes = size("mac_phy", SONIC_MAC_PHY_BYTES)?;
            let default_peer_response = size("response", formula::PEER_RESPONSE_BYTES)?;
            let small_packet_percent =
                match p.as_mut().and_then(|p| p.get(cx, "small_packet_percent")) {
                    Some(f) => f.uint(cx, 0, 100)?,
                    None => SONIC_SMALL_PACKET_PERCENT,
                };
            let gearbox_delay = match p.as_mut().and_then(|p| p.get(cx, "gearbox_delay")) {
                Some(f) => f.time(cx)?,
                None => Time::ZERO,
            };
            HeadroomSizing::SonicGeneric {
                port_mtu,
                lossless_mtu,
                small_packet_percent,
                mac_phy_bytes,
                gearbox_delay,
                default_peer_response,
            }
        }
        Kind::Hpcc => HeadroomSizing::HpccCompat,
        Kind::Fixed(b) => HeadroomSizing::Fixed(b),
    })
}

/// Every headroom formula with the keys its `[switch.headroom_params]` accepts (the
/// reference's test checks each is documented).
pub(super) const HEADROOM_FORMULAS: [(&str, &[&str]); 4] = [
    ("pfc-guide", &["mtu_r", "mtu_s", "response"]),
    ("dsh", &["mtu"]),
    (
        "sonic",
        &[
            "port_mtu",
            "lossless_mtu",
            "small_packet_percent",
            "mac_phy",
            "gearbox_delay",
            "response",
        ],
    ),
    ("hpcc", &[]),
];

/// Default MTU of the DSH formula: the DSH paper's 1500 B.
const DSH_MTU: u64 = 1500;
/// SONiC's default port MTU.
const SONIC_PORT_MTU: u64 = 9100;
/// SONiC's lossless MTU (`LOSSLESS_TRAFFIC_PATTERN|AZURE`).
const SONIC_LOSSLESS_MTU: u64 = 1024;
/// SONiC's small-packet percentage (`LOSSLESS_TRAFFIC_PATTERN|AZURE`).
const SONIC_SMALL_PACKET_PERCENT: u64 = 50;
/// SONiC's MAC/PHY delay on Mellanox Spectrum (0.8 kB, rounded down).
const SONIC_MAC_PHY_BYTES: u64 = 819;

/// `scheme = "sih" | "shp" | "dsh"` with its `[switch.shp]` / `[switch.dsh]` parameters.
fn parse_scheme(cx: &Cx, t: &mut Tbl, sw: &mut SwitchConfig) -> Res<()> {
    let name = match t.get(cx, "scheme") {
        Some(f) => {
            let n = f.str(cx)?.to_string();
            if !["sih", "shp", "dsh"].contains(&n.as_str()) {
                return Err(f.err(
                    cx,
                    format!("unknown scheme `{n}` (expected sih, shp or dsh)"),
                ));
            }
            n
        }
        None => "sih".to_string(),
    };
    let shp = t.get(cx, "shp");
    let dsh = t.get(cx, "dsh");
    if let (Some(f), false) = (&shp, name == "shp") {
        return Err(f.err(cx, "[switch.shp] is only used with scheme = \"shp\""));
    }
    if let (Some(f), false) = (&dsh, name == "dsh") {
        return Err(f.err(cx, "[switch.dsh] is only used with scheme = \"dsh\""));
    }
    sw.scheme = match name.as_str() {
        "shp" => {
            let Some(f) = shp else {
                return Err(cx.err(
                    &join(&t.name, "shp"),
                    t.span.clone(),
                    "scheme = \"shp\" needs [switch.shp] with `pool` or `over_subscribe_ratio`",
                ));
            };
            let mut s = f.table(cx)?;
            s.check_keys(cx, &["pool", "over_subscribe_ratio"])?;
            match (s.get(cx, "pool"), s.get(cx, "over_subscribe_ratio")) {
                (Some(p), None) => SchemeConfig::Shp(ShpPool::Bytes(p.positive_bytes(cx)?)),
                (None, Some(r)) => {
                    let v = r.float(cx)?;
                    if !(v.is_finite() && v > 0.0) {
                        return Err(r.err(cx, format!("must be a positive number, found {v}")));
                    }
                    SchemeConfig::Shp(ShpPool::Ratio(v))
                }
                (Some(p), Some(_)) => {
                    return Err(p.err(cx, "give `pool` or `over_subscribe_ratio`, not both"))
                }
                (None, None) => {
                    return Err(f.err(cx, "give `pool` (a size) or `over_subscribe_ratio`"))
                }
            }
        }
        "dsh" => {
            let (mut dq, mut dp) = (DSH_DEFAULT_DELTA, DSH_DEFAULT_DELTA);
            if let Some(f) = dsh {
                let mut d = f.table(cx)?;
                d.check_keys(cx, &["delta_q", "delta_p"])?;
                if let Some(x) = d.get(cx, "delta_q") {
                    dq = x.bytes(cx)?;
                }
                if let Some(x) = d.get(cx, "delta_p") {
                    dp = x.bytes(cx)?;
                }
            }
            SchemeConfig::Dsh {
                delta_q: dq,
                delta_p: dp,
            }
        }
        _ => SchemeConfig::Sih,
    };
    Ok(())
}

/// DSH's default hysteresis: one MTU-sized (1500 B) packet.
const DSH_DEFAULT_DELTA: u64 = 1500;

/// `[switch.ecn.fecn]`: InfiniBand FECN marking (every key optional).
fn parse_fecn(cx: &Cx, f: &Fld) -> Res<FecnConfig> {
    let mut t = f.table(cx)?;
    t.check_keys(
        cx,
        &["threshold", "marking_rate", "packet_size", "victim_mask"],
    )?;
    let mut c = FecnConfig::default();
    if let Some(x) = t.get(cx, "threshold") {
        c.threshold = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "marking_rate") {
        // 1..=65535 fits in u32.
        c.marking_rate = x.uint(cx, 1, 65_535)? as u32;
    }
    if let Some(x) = t.get(cx, "packet_size") {
        c.packet_size = x.bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "victim_mask") {
        c.victim_mask = x.boolean(cx)?;
    }
    Ok(c)
}
