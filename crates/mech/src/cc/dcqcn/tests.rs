//! Tests of the DCQCN reaction point ([`super::Dcqcn`]): each variant's reactions against
//! the rules of its paper or reference simulator, and a property test of the invariants
//! the module states.

use super::super::Feedback;
use super::*;
use proptest::prelude::*;

const LINE: Rate = Rate::from_gbps(100);
const G: f64 = 1.0 / 256.0;

fn us(n: u64) -> Time {
    Time::from_us(n)
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// Mellanox with F = 5 so that all three increase phases are visible.
fn mlx(f: u32) -> DcqcnConfig {
    DcqcnConfig {
        fast_recovery_times: f,
        ..DcqcnConfig::default()
    }
}

/// Paper with the byte counter at 1 MB and a 100 µs timer, easy to reason about.
fn paper() -> DcqcnConfig {
    DcqcnConfig {
        byte_counter: 1_000_000,
        rp_timer: us(100),
        alpha_resume_interval: us(55),
        ..DcqcnConfig::paper()
    }
}

/// Paper reaction point after two CNPs (at 0 and 1 µs): RT = 50G, RC = 25G, timers
/// restarted at 1 µs.
fn paper_below_line(cfg: DcqcnConfig) -> Dcqcn {
    let mut d = Dcqcn::new(cfg, LINE);
    d.on_cnp(Time::ZERO);
    d.on_cnp(us(1));
    assert_eq!((d.rt, d.rc), (50e9, 25e9));
    d
}

/// Drives `d` deadline by deadline up to `until`, as a poll-driven simulator would.
fn drive(d: &mut Dcqcn, until: Time) {
    while let Some(t) = d.poll_timeout() {
        if t > until {
            break;
        }
        d.handle_timeout(t);
    }
    d.handle_timeout(until);
}

#[test]
fn starts_at_line_rate_with_no_timers() {
    for cfg in [DcqcnConfig::default(), DcqcnConfig::paper()] {
        let mut d = Dcqcn::new(cfg, LINE);
        assert_eq!(d.rate(), LINE);
        assert_eq!(d.target_rate(), LINE);
        assert_eq!(d.alpha(), 1.0);
        assert_eq!(d.poll_timeout(), None);
        let before = d.clone();
        d.on_bytes_sent(us(1), 50_000_000);
        d.handle_timeout(Time::from_ms(10));
        assert_eq!(d, before, "nothing runs before the first CNP");
    }
}

#[test]
fn paper_cnp_cuts_by_half_alpha_and_clamps_target() {
    let mut d = Dcqcn::new(paper(), LINE);
    let t0 = us(10);
    d.on_cnp(t0);
    // alpha starts at 1: the first cut halves the rate, alpha stays (1-g)*1+g = 1.
    assert_eq!(d.rate(), Rate::from_gbps(50));
    assert_eq!(d.target_rate(), LINE);
    assert_eq!(d.alpha(), 1.0);
    // Let alpha decay for 3 periods (one rate-increase event, at t0+100us, runs too).
    d.handle_timeout(t0 + us(3 * 55));
    let a = (1.0 - G).powi(3);
    assert!(close(d.alpha(), a, 1e-15), "{} vs {a}", d.alpha());
    let rc = d.rc;
    d.on_cnp(t0 + us(170));
    assert!(close(d.rc, rc * (1.0 - a / 2.0), 1e-3));
    assert_eq!(
        d.target_rate(),
        Rate::from_f64(rc),
        "RT = RC before the cut"
    );
    assert!(close(d.alpha(), (1.0 - G) * a + G, 1e-15));
    assert_eq!(d.poll_timeout(), Some(t0 + us(170) + us(55)));
}

#[test]
fn paper_alpha_closed_form_with_and_without_cnps() {
    let mut d = Dcqcn::new(paper(), LINE);
    d.on_cnp(Time::ZERO);
    // n periods without CNP: alpha = (1-g)^n (timers re-armed on the 55us grid).
    let n = 7u64;
    d.handle_timeout(us(55 * n));
    let a_n = (1.0 - G).powi(n as i32);
    assert!(close(d.alpha(), a_n, 1e-14));
    // m CNPs: alpha = 1 - (1 - a_n) (1-g)^m.
    let m = 9;
    for k in 0..m {
        d.on_cnp(us(55 * n + 1 + k));
    }
    let expect = 1.0 - (1.0 - a_n) * (1.0 - G).powi(m as i32);
    assert!(close(d.alpha(), expect, 1e-14), "{} vs {expect}", d.alpha());
}

#[test]
fn mellanox_alpha_closed_form_with_and_without_cnps() {
    let mut d = Dcqcn::new(DcqcnConfig::default(), LINE);
    d.on_cnp(Time::ZERO);
    assert_eq!(d.alpha(), 1.0);
    // n alpha periods without CNP.
    let n = 40u64;
    d.handle_timeout(us(n));
    let a_n = (1.0 - G).powi(n as i32);
    assert!(close(d.alpha(), a_n, 1e-14));
    // A CNP inside each of the next m periods: each update adds g.
    let m = 25u64;
    for k in 0..m {
        d.on_cnp(us(n) + Time::from_ns(500) + us(k));
    }
    d.handle_timeout(us(n + m));
    let expect = 1.0 - (1.0 - a_n) * (1.0 - G).powi(m as i32);
    assert!(close(d.alpha(), expect, 1e-14), "{} vs {expect}", d.alpha());
    // Several CNPs within one period count once.
    let mut e = Dcqcn::new(DcqcnConfig::default(), LINE);
    e.on_cnp(Time::ZERO);
    e.handle_timeout(us(10));
    let a10 = e.alpha();
    for k in 0..5 {
        e.on_cnp(us(10) + Time::from_ns(100 + k));
    }
    e.handle_timeout(us(11));
    assert!(close(e.alpha(), (1.0 - G) * a10 + G, 1e-15));
}

#[test]
fn mellanox_first_cnp_sets_alpha_one_and_rate_on_first_cnp() {
    let cfg = DcqcnConfig {
        rate_on_first_cnp: 0.5,
        ..DcqcnConfig::default()
    };
    let mut d = Dcqcn::new(cfg, LINE);
    d.alpha = 0.3;
    let t0 = us(7);
    d.on_cnp(t0);
    assert_eq!(d.alpha(), 1.0);
    assert!(
        !d.alpha_cnp,
        "the first CNP does not count for the alpha update"
    );
    assert!(d.decrease_cnp);
    assert_eq!(d.rate(), Rate::from_gbps(50));
    assert_eq!(d.target_rate(), Rate::from_gbps(50));
    assert_eq!(d.poll_timeout(), Some(t0 + us(1)));
    assert_eq!(d.decrease_deadline, Some(t0 + us(4)));
    assert_eq!(
        d.increase_deadline, None,
        "no rate-increase timer before the first cut"
    );
    // At t0+4us: three alpha decays, the fourth decay, then the cut with that alpha.
    d.handle_timeout(t0 + us(4));
    let a4 = (1.0 - G).powi(4);
    assert!(close(d.alpha(), a4, 1e-15));
    assert!(close(d.rc, 50e9 * (1.0 - a4 / 2.0), 1e-3));
    // stage was 0 and clamp is off: the target stays at 50G.
    assert_eq!(d.target_rate(), Rate::from_gbps(50));
    assert_eq!(d.increase_deadline, Some(t0 + us(304)));
}

#[test]
fn mellanox_decrease_only_when_cnp_in_interval() {
    let mut d = Dcqcn::new(DcqcnConfig::default(), LINE);
    d.on_cnp(Time::ZERO);
    d.handle_timeout(us(4));
    let after_first_cut = d.rate();
    assert!(after_first_cut < LINE);
    // No CNP: the checks at 8, 12, ..., 100 us do nothing to the rate.
    d.handle_timeout(us(100));
    assert_eq!(d.rate(), after_first_cut);
    assert_eq!(d.decrease_deadline, Some(us(104)));
    // A CNP at 101 us: the check at 104 us cuts with the alpha current then.
    d.on_cnp(us(101));
    d.handle_timeout(us(103));
    assert_eq!(d.rate(), after_first_cut, "not before the check");
    let rc = d.rc;
    d.handle_timeout(us(104));
    let a = d.alpha();
    assert!(close(d.rc, rc * (1.0 - a / 2.0), 1e-3));
    assert!(!d.decrease_cnp);
    // And only once: the next check has no CNP.
    let cut = d.rate();
    d.handle_timeout(us(108));
    assert_eq!(d.rate(), cut);
}

#[test]
fn mellanox_cut_resets_stage_and_restarts_rp_timer() {
    let mut d = Dcqcn::new(mlx(5), LINE);
    d.on_cnp(Time::ZERO);
    d.handle_timeout(us(4)); // first cut, rp timer at 304us
    d.handle_timeout(us(904)); // three increase events: 304, 604, 904
    assert_eq!(d.stage, 3);
    assert_eq!(d.increase_deadline, Some(us(1204)));
    let rc = d.rc;
    d.on_cnp(us(905));
    d.handle_timeout(us(908));
    assert_eq!(d.stage, 0, "a cut resets the stage");
    assert_eq!(
        d.target_rate(),
        Rate::from_f64(rc),
        "stage != 0 clamps RT = RC"
    );
    assert_eq!(
        d.increase_deadline,
        Some(us(1208)),
        "rp timer restarted at the cut"
    );
    // A second cut right after (stage 0, clamp off) keeps the target.
    let rt = d.target_rate();
    d.on_cnp(us(909));
    d.handle_timeout(us(912));
    assert_eq!(d.target_rate(), rt);
    assert_eq!(d.increase_deadline, Some(us(1212)));
    // With clamp_target_rate the target follows even at stage 0.
    let mut c = Dcqcn::new(
        DcqcnConfig {
            clamp_target_rate: true,
            ..mlx(5)
        },
        LINE,
    );
    c.on_cnp(Time::ZERO);
    c.handle_timeout(us(4));
    assert_eq!(c.target_rate(), LINE);
    let rc = c.rc;
    c.on_cnp(us(5));
    c.handle_timeout(us(8));
    assert_eq!(c.target_rate(), Rate::from_f64(rc));
}

#[test]
fn mellanox_fast_recovery_then_additive_then_hyper() {
    let f = 5;
    // Halve the rate on the first CNP so that the target sits below line rate.
    let cfg = DcqcnConfig {
        rate_on_first_cnp: 0.5,
        ..mlx(f)
    };
    let (ai, hai) = (cfg.rate_ai.as_f64(), cfg.rate_hai.as_f64());
    let mut d = Dcqcn::new(cfg, LINE);
    d.on_cnp(Time::ZERO);
    d.handle_timeout(us(4));
    let rt = d.rt;
    assert_eq!(rt, 50e9);
    assert!(d.rc < rt);
    let mut t = us(304);
    for k in 0..f {
        let gap = d.rt - d.rc;
        d.handle_timeout(t);
        assert_eq!(d.rt, rt, "fast recovery keeps the target (event {k})");
        assert!(
            close(d.rt - d.rc, gap / 2.0, 1e-3),
            "distance halves (event {k})"
        );
        t += us(300);
    }
    let (rt0, rc0) = (d.rt, d.rc);
    d.handle_timeout(t);
    assert!(close(d.rt, rt0 + ai, 1e-3), "additive step at stage F");
    assert!(close(d.rc, (rc0 + rt0 + ai) / 2.0, 1e-3));
    for _ in 0..3 {
        t += us(300);
        let rt0 = d.rt;
        d.handle_timeout(t);
        assert!(close(d.rt, rt0 + hai, 1e-3), "hyper step after F");
    }
}

#[test]
fn paper_timer_increase_phases() {
    let f = 5;
    let cfg = paper();
    let ai = cfg.rate_ai.as_f64();
    let mut d = paper_below_line(cfg);
    let rt = d.rt;
    // Timer only: T = 1..F-1 fast recovery.
    for k in 1..f {
        let gap = d.rt - d.rc;
        d.handle_timeout(us(1 + 100 * u64::from(k)));
        assert_eq!(d.t_count, k);
        assert_eq!(d.rt, rt);
        assert!(close(d.rt - d.rc, gap / 2.0, 1e-3));
    }
    // T >= F with BC = 0: additive increase every event (never hyper on one counter).
    for k in f..f + 4 {
        let rt0 = d.rt;
        d.handle_timeout(us(1 + 100 * u64::from(k)));
        assert_eq!(d.t_count, k);
        assert!(close(d.rt, rt0 + ai, 1e-3), "additive at T={k}");
    }
}

#[test]
fn paper_byte_counter_triggers_increase_events() {
    let mut d = Dcqcn::new(paper(), LINE);
    d.on_cnp(Time::ZERO);
    let (rt, rc) = (d.rt, d.rc);
    d.on_bytes_sent(us(1), 999_999);
    assert_eq!((d.bc_count, d.rc), (0, rc), "not yet B bytes");
    d.on_bytes_sent(us(2), 1);
    assert_eq!(d.bc_count, 1);
    assert!(close(d.rc, (rc + rt) / 2.0, 1e-3));
    // 3.5 B at once: three events, half a counter left over.
    d.on_bytes_sent(us(3), 3_500_000);
    assert_eq!(d.bc_count, 4);
    assert_eq!(d.bytes_acc, 500_000);
    // A CNP resets the byte counter.
    d.on_cnp(us(4));
    assert_eq!((d.bc_count, d.t_count, d.bytes_acc), (0, 0, 0));
    // The Mellanox variant ignores sent bytes.
    let mut m = Dcqcn::new(DcqcnConfig::default(), LINE);
    m.on_cnp(Time::ZERO);
    let before = m.clone();
    m.on_bytes_sent(Time::ZERO, 1 << 40);
    assert_eq!(m, before);
}

#[test]
fn paper_hyper_increase_when_both_counters_exceed_f() {
    let f = 5u32;
    let cfg = paper();
    let (ai, hai) = (cfg.rate_ai.as_f64(), cfg.rate_hai.as_f64());
    let mut d = paper_below_line(cfg);
    // Drive BC to F+2 = 7 within the first timer period: FR x4, then AI x3 (T = 0).
    let rt = d.rt;
    d.on_bytes_sent(us(2), 7_000_000);
    assert_eq!(d.bc_count, 7);
    assert!(close(d.rt, rt + 3.0 * ai, 1e-3));
    // Timer events T = 1..=F: min(T, BC) <= F, so additive, no hyper yet.
    for k in 1..=u64::from(f) {
        let rt0 = d.rt;
        d.handle_timeout(us(1 + 100 * k));
        assert!(close(d.rt, rt0 + ai, 1e-3), "additive at T={k}");
    }
    // T = F+1 = 6, BC = 7: hyper with i = min - F = 1.
    let rt0 = d.rt;
    d.handle_timeout(us(601));
    assert!(close(d.rt, rt0 + hai, 1e-3));
    // T = 7, BC = 7: i = 2.
    let rt0 = d.rt;
    d.handle_timeout(us(701));
    assert!(close(d.rt, rt0 + 2.0 * hai, 1e-3));
    // One more byte event: BC = 8, T = 7: i = 2 again.
    let rt0 = d.rt;
    d.on_bytes_sent(us(702), 1_000_000);
    assert_eq!(d.bc_count, 8);
    assert!(close(d.rt, rt0 + 2.0 * hai, 1e-3));
}

#[test]
fn rates_never_exceed_line_rate_and_recover_to_it() {
    for cfg in [
        DcqcnConfig::default(),
        mlx(5),
        paper(),
        DcqcnConfig::paper(),
    ] {
        let mut d = Dcqcn::new(cfg, LINE);
        d.on_cnp(Time::ZERO);
        let mut t = Time::ZERO;
        for _ in 0..20_000 {
            t += us(50);
            d.handle_timeout(t);
            d.on_bytes_sent(t, 600_000);
            assert!(d.rate() <= LINE && d.target_rate() <= LINE);
            assert!(d.rc <= d.line() && d.rt <= d.line());
        }
        assert_eq!(d.rate(), LINE, "{:?}", d.config().variant);
        assert_eq!(d.target_rate(), LINE);
    }
}

#[test]
fn rate_floors_at_min_rate_after_many_cnps() {
    for cfg in [DcqcnConfig::default(), DcqcnConfig::paper()] {
        let min = cfg.min_rate;
        let mut d = Dcqcn::new(cfg, LINE);
        let mut t = Time::ZERO;
        for _ in 0..5_000 {
            d.on_cnp(t);
            t += us(2);
            d.handle_timeout(t);
            assert!(d.rate() >= min);
        }
        assert_eq!(d.rate(), min);
        assert!(d.target_rate() >= min);
    }
    // A min_rate above the line rate is capped at the line rate.
    let cfg = DcqcnConfig {
        min_rate: Rate::from_gbps(400),
        ..DcqcnConfig::default()
    };
    let mut d = Dcqcn::new(cfg, LINE);
    d.on_cnp(Time::ZERO);
    d.handle_timeout(us(4));
    assert_eq!(d.rate(), LINE);
}

#[test]
fn poll_timeout_is_min_deadline_and_timers_reschedule() {
    let mut d = Dcqcn::new(DcqcnConfig::default(), LINE);
    let t0 = us(3);
    d.on_cnp(t0);
    d.handle_timeout(t0 + us(4));
    assert_eq!(d.alpha_deadline, Some(t0 + us(5)));
    assert_eq!(d.decrease_deadline, Some(t0 + us(8)));
    assert_eq!(d.increase_deadline, Some(t0 + us(304)));
    assert_eq!(d.poll_timeout(), Some(t0 + us(5)));
    // Late call: the grid is kept (deadlines re-armed from their own deadline).
    d.handle_timeout(t0 + us(10) + Time::from_ns(300));
    assert_eq!(d.alpha_deadline, Some(t0 + us(11)));
    assert_eq!(d.decrease_deadline, Some(t0 + us(12)));
    assert_eq!(d.poll_timeout(), Some(t0 + us(11)));
    // With a slow alpha timer the decrease check is the earliest.
    let mut e = Dcqcn::new(
        DcqcnConfig {
            alpha_resume_interval: us(10),
            ..DcqcnConfig::default()
        },
        LINE,
    );
    e.on_cnp(t0);
    assert_eq!(e.poll_timeout(), Some(t0 + us(4)));
    // Paper: the alpha timer and the rp timer.
    let mut p = Dcqcn::new(paper(), LINE);
    p.on_cnp(t0);
    assert_eq!(p.poll_timeout(), Some(t0 + us(55)));
    p.handle_timeout(t0 + us(55));
    assert_eq!(p.poll_timeout(), Some(t0 + us(100)));
    assert_eq!(p.alpha_deadline, Some(t0 + us(110)));
}

#[test]
fn spurious_and_early_timeouts_change_nothing() {
    for cfg in [DcqcnConfig::default(), paper()] {
        let mut d = Dcqcn::new(cfg, LINE);
        d.on_cnp(us(1));
        d.handle_timeout(us(20));
        let next = d.poll_timeout().expect("armed");
        let before = d.clone();
        d.handle_timeout(next - Time::from_ps(1));
        d.handle_timeout(us(20));
        d.handle_timeout(us(2));
        assert_eq!(d, before);
        d.handle_timeout(next);
        assert_ne!(d, before);
        let once = d.clone();
        d.handle_timeout(next);
        assert_eq!(d, once, "handling the same instant twice is idempotent");
    }
}

#[test]
fn tie_order_alpha_then_increase_then_decrease() {
    // Default Mellanox: the cut at 4us sits on the alpha grid and the rp timer (304us)
    // on the decrease grid.
    let mut d = Dcqcn::new(DcqcnConfig::default(), LINE);
    d.on_cnp(Time::ZERO);
    d.handle_timeout(us(303));
    let (rc, rt, a) = (d.rc, d.rt, d.alpha);
    d.on_cnp(us(303) + Time::from_ns(500));
    d.handle_timeout(us(304));
    // alpha update at 304 (flag set) first ...
    let a304 = (1.0 - G) * a + G;
    assert!(close(d.alpha, a304, 1e-15));
    // ... then the increase (F = 1, stage 0: fast recovery) ...
    let rc_inc = (rc + rt) / 2.0;
    // ... then the decrease with stage 1: RT = RC, cut with the updated alpha.
    assert!(close(d.rt, rc_inc, 1e-3));
    assert!(close(d.rc, rc_inc * (1.0 - a304 / 2.0), 1e-3));
    assert_eq!(d.stage, 0);
    assert_eq!(d.increase_deadline, Some(us(604)));
}

#[test]
fn ue_only_cnp_holds_the_rate_without_cut_or_alpha_update() {
    for cfg in [DcqcnConfig::default(), paper()] {
        let mut d = Dcqcn::new(cfg.clone(), LINE);
        // Before any CE: at line rate, nothing to hold.
        d.on_feedback(
            us(1),
            &Feedback::Cnp {
                ce: false,
                ue: true,
            },
        );
        assert_eq!((d.rate(), d.poll_timeout()), (LINE, None));
        d.on_cnp(us(10));
        // Let some recovery happen, then a UE-only CNP.
        let t = us(10) + cfg.rp_timer + cfg.rp_timer + Time(1);
        d.handle_timeout(t);
        let (rc, alpha, alpha_at) = (d.rc, d.alpha, d.alpha_deadline);
        assert!(d.rt > d.rc, "recovering towards a higher target");
        d.on_feedback(
            t,
            &Feedback::Cnp {
                ce: false,
                ue: true,
            },
        );
        assert_eq!(d.rc, rc, "no cut");
        assert_eq!(d.rt, rc, "target = current rate");
        assert_eq!(d.alpha, alpha, "no alpha update");
        assert_eq!((d.stage, d.t_count, d.bc_count, d.bytes_acc), (0, 0, 0, 0));
        assert_eq!(d.increase_deadline, Some(t + cfg.rp_timer));
        assert_eq!(d.alpha_deadline, alpha_at, "Hold leaves the alpha timer");
        // CE and UE together: a normal cut.
        d.on_feedback(t, &Feedback::Cnp { ce: true, ue: true });
        if cfg.variant == DcqcnVariant::Paper {
            assert!(d.rc < rc);
        } else {
            assert!(d.decrease_cnp);
        }
    }
}

#[test]
fn ue_reactions_restart_the_alpha_timer_or_are_ignored() {
    let mut released = Dcqcn::new(
        DcqcnConfig {
            on_ue: UeReaction::HoldRestartAlpha,
            ..paper()
        },
        LINE,
    );
    released.on_cnp(Time::ZERO);
    released.on_ue(us(30));
    assert_eq!(released.alpha_deadline, Some(us(30 + 55)));
    let ignore = DcqcnConfig {
        on_ue: UeReaction::Ignore,
        ..paper()
    };
    let mut a = Dcqcn::new(ignore.clone(), LINE);
    let mut b = Dcqcn::new(ignore, LINE);
    a.on_cnp(Time::ZERO);
    b.on_cnp(Time::ZERO);
    a.on_feedback(
        us(80),
        &Feedback::Cnp {
            ce: false,
            ue: true,
        },
    );
    a.handle_timeout(us(200));
    b.handle_timeout(us(200));
    assert_eq!(a, b);
}

#[test]
fn late_handling_matches_on_time_handling() {
    for cfg in [DcqcnConfig::default(), mlx(5), paper()] {
        let mut on_time = Dcqcn::new(cfg.clone(), LINE);
        let mut late = Dcqcn::new(cfg, LINE);
        for d in [&mut on_time, &mut late] {
            d.on_cnp(Time::ZERO);
            d.on_cnp(us(2));
        }
        let end = Time::from_ms(3) + Time::from_ns(1);
        drive(&mut on_time, end);
        late.handle_timeout(end);
        assert_eq!(on_time.rc, late.rc);
        assert_eq!(on_time.rt, late.rt);
        assert_eq!(on_time.stage, late.stage);
        assert_eq!(on_time.t_count, late.t_count);
        assert!(close(on_time.alpha, late.alpha, 1e-15));
        assert_eq!(on_time.poll_timeout(), late.poll_timeout());
    }
}

#[test]
fn long_gap_recovers_towards_line_rate_in_bounded_work() {
    for cfg in [DcqcnConfig::default(), paper()] {
        let mut d = Dcqcn::new(cfg, LINE);
        d.on_cnp(Time::ZERO);
        d.handle_timeout(us(10));
        assert!(d.rate() < LINE);
        // One call covering a whole second: ~1e6 alpha periods, ~3000 rp periods.
        d.handle_timeout(Time::from_ms(1000));
        assert_eq!(d.rate(), LINE);
        assert_eq!(d.target_rate(), LINE);
        assert!(d.alpha() < 1e-20, "alpha decayed: {}", d.alpha());
        assert!(d.poll_timeout().expect("still armed") > Time::from_ms(1000));
        // And one up to the end of time returns promptly.
        d.on_cnp(Time::from_ms(1001));
        d.handle_timeout(Time(u64::MAX - 1));
        assert!(!matches!(d.poll_timeout(), Some(t) if t <= Time(u64::MAX - 1)));
        assert!(d.rate() >= d.config().min_rate && d.rate() <= LINE);
    }
}

#[test]
fn zero_intervals_disable_timers() {
    let cfg = DcqcnConfig {
        alpha_resume_interval: Time::ZERO,
        rate_decrease_interval: Time::ZERO,
        ..DcqcnConfig::default()
    };
    let mut d = Dcqcn::new(cfg, LINE);
    d.on_cnp(Time::ZERO);
    assert_eq!(d.poll_timeout(), None);
    d.handle_timeout(Time::from_ms(5));
    assert_eq!(d.rate(), LINE);
}

#[derive(Debug, Clone)]
enum Op {
    Cnp(u64),
    Ue(u64),
    Bytes(u64, u64),
    Timeout(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u64..200_000_000).prop_map(Op::Cnp),
        (0u64..200_000_000).prop_map(Op::Ue),
        (0u64..50_000_000, 0u64..20_000_000).prop_map(|(dt, b)| Op::Bytes(dt, b)),
        (0u64..2_000_000_000).prop_map(Op::Timeout),
    ]
}

fn config() -> impl Strategy<Value = DcqcnConfig> {
    (
        any::<bool>(),
        0.0f64..=1.0,
        0u32..8,
        0u64..5_000,
        0u64..300,
        any::<bool>(),
        0.0f64..1.5,
        0u64..3_000_000,
    )
        .prop_map(|(mlx, g, f, ai, min_mbps, clamp, first, bc)| DcqcnConfig {
            variant: if mlx {
                DcqcnVariant::Mellanox
            } else {
                DcqcnVariant::Paper
            },
            g,
            fast_recovery_times: f,
            rate_ai: Rate::from_mbps(ai),
            rate_hai: Rate::from_mbps(ai * 10),
            min_rate: Rate::from_mbps(min_mbps),
            clamp_target_rate: clamp,
            rate_on_first_cnp: first,
            byte_counter: bc,
            ..DcqcnConfig::default()
        })
}

proptest! {
    #[test]
    fn rate_and_alpha_stay_in_bounds(
        cfg in config(),
        ops in proptest::collection::vec(op(), 1..200),
    ) {
        let floor = cfg.min_rate.min(LINE);
        let mut d = Dcqcn::new(cfg, LINE);
        let mut now = Time::ZERO;
        for o in ops {
            match o {
                Op::Cnp(dt) => {
                    now += Time::from_ps(dt);
                    d.on_cnp(now);
                }
                Op::Ue(dt) => {
                    now += Time::from_ps(dt);
                    d.on_ue(now);
                }
                Op::Bytes(dt, b) => {
                    now += Time::from_ps(dt);
                    d.on_bytes_sent(now, b);
                }
                Op::Timeout(dt) => {
                    now += Time::from_ps(dt);
                    d.handle_timeout(now);
                    prop_assert!(!matches!(d.poll_timeout(), Some(t) if t <= now));
                }
            }
            prop_assert!(d.rate() >= floor && d.rate() <= LINE, "rate {}", d.rate());
            prop_assert!(d.target_rate() >= floor && d.target_rate() <= LINE);
            prop_assert!(d.rc >= d.floor() && d.rc <= d.line());
            prop_assert!((0.0..=1.0).contains(&d.alpha()), "alpha {}", d.alpha());
        }
    }

    /// Waking only at `poll_rate_timeout` gives the same rate at every instant as
    /// running every timer at its deadline, and the same alpha once replayed.
    #[test]
    fn rate_deadlines_alone_give_the_same_rates(
        cfg in config(),
        ops in proptest::collection::vec(op(), 1..100),
    ) {
        let mut every = Dcqcn::new(cfg.clone(), LINE);
        let mut lazy = Dcqcn::new(cfg, LINE);
        let mut now = Time::ZERO;
        for o in ops {
            let (dt, input) = match o {
                Op::Cnp(dt) | Op::Ue(dt) => (dt, Some(None)),
                Op::Bytes(dt, b) => (dt, Some(Some(b))),
                Op::Timeout(dt) => (dt, None),
            };
            let next = now + Time::from_ps(dt);
            // Between inputs: `every` runs each deadline, `lazy` only the rate ones; the
            // rates must agree whenever either of them wakes.
            loop {
                let a = every.poll_timeout().filter(|&t| t < next);
                let b = lazy.poll_rate_timeout().filter(|&t| t < next);
                let Some(t) = a.into_iter().chain(b).min() else { break };
                every.handle_timeout(t);
                if b == Some(t) {
                    lazy.handle_timeout(t);
                }
                prop_assert_eq!(every.rate(), lazy.rate(), "at {}", t);
            }
            now = next;
            match input {
                Some(None) => {
                    every.on_cnp(now);
                    lazy.on_cnp(now);
                }
                Some(Some(b)) => {
                    every.on_bytes_sent(now, b);
                    lazy.on_bytes_sent(now, b);
                }
                None => {}
            }
            prop_assert_eq!(every.rate(), lazy.rate(), "after input at {}", now);
        }
        every.handle_timeout(now);
        lazy.handle_timeout(now);
        // Equal up to rounding: a replay of more than `STEPWISE_DECAYS` decays at once
        // uses one power instead of repeated products.
        let (a, b) = (every.alpha(), lazy.alpha());
        prop_assert!((a - b).abs() <= 1e-12 * a.abs().max(b.abs()) + 1e-300, "alpha {} vs {}", a, b);
        prop_assert_eq!(every.target_rate(), lazy.target_rate());
    }
}
