//! PFC semantics (buffer-and-pfc.md §3) observed end to end in the simulator:
//! (a) refresh mode without RESUME frames: pauses end by timer expiry, traffic resumes and
//!     every flow finishes; the paused time is exactly what the received PAUSE frames imply;
//! (b) refresh keeps a port paused through a long congestion episode (PAUSE frames every
//!     half timer, one continuous pause much longer than one timer);
//! (c) a paused transmitter finishes the frame it has started and starts no frame while
//!     paused; no frame is cut or lost (byte conservation, no retransmission, exact
//!     transmitted byte counts);
//! (d) other priorities keep flowing while one is paused: at a paused host NIC, and at a
//!     paused switch port;
//! plus: a second PAUSE arriving within the response time of a first one must not postpone
//! the pause (unit-level and whole-run reproductions), and XON must come before the queue
//! runs dry (buffer-and-pfc.md §1, with the spec's LIFO release accounting).

use headroom_mech::pfc::{quanta_time, PauseTimers, PfcConfig};
use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{CcConfig, SimConfig};
use headroom_sim::net::Simulation;
use headroom_sim::results::{PfcRecord, PortStats, RunResults, StopReason};
use headroom_sim::topology::{builders, LinkSpec, NodeId, NodeKind, Topology};
use headroom_sim::workload::{generators, FlowSpec};

const RATE: Rate = Rate::from_gbps(100);
const PRIO: u8 = 3;
const LOSSY: u8 = 1;
const SIZE: u64 = 1_000_000;
/// Quanta of the refresh-mode PAUSE frames: 200 × 5.12 ns = 1.024 µs at 100 Gb/s.
const QUANTA: u16 = 200;

fn run(cfg: SimConfig) -> RunResults {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run_until(Time::MAX);
    sim.check_invariants().expect("invariants at the end");
    sim.finish()
}

/// Star of 3 hosts (switch node 3, port i = host i), incast 0,1 -> 2 on lossless priority
/// 3, no congestion control, a small buffer so PFC fires often.
fn incast(pfc: PfcConfig) -> SimConfig {
    let topo = builders::star(3, RATE, Time::from_us(1)).expect("star");
    let flows = generators::incast(
        &[NodeId(0), NodeId(1)],
        NodeId(2),
        SIZE,
        Time::ZERO,
        None,
        PRIO,
    )
    .expect("incast");
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.switch.buffer_bytes = 300_000;
    cfg.switch.pfc = pfc;
    cfg
}

fn port(r: &RunResults, node: u32, local: u16) -> &PortStats {
    r.ports
        .iter()
        .find(|p| p.node == node && p.port == local)
        .expect("port exists")
}

fn response(cfg: &SimConfig, rate: Rate) -> Time {
    rate.serialization(cfg.switch.response_bytes)
}

/// Pause intervals a transmitter at `node`/`local` must observe from the PFC frames it
/// received: a PAUSE received at `t` pauses `[t + response, t + response + quanta)`, a
/// refresh received while paused extends the pause, a RESUME received at `t` ends it at `t`.
/// Merged, clipped at `end`.
fn pause_intervals(
    received: &[PfcRecord],
    node: u32,
    local: u16,
    prio: u8,
    rate: Rate,
    resp: Time,
    end: Time,
) -> Vec<(Time, Time)> {
    let mut out: Vec<(Time, Time)> = Vec::new();
    let mut cur: Option<(Time, Time)> = None;
    for f in received
        .iter()
        .filter(|f| f.node == node && f.port == local && f.prio == prio)
    {
        if f.quanta == 0 {
            if let Some((a, b)) = cur.take() {
                let b = b.min(f.time);
                if b > a {
                    out.push((a, b));
                }
            }
            continue;
        }
        let (from, until) = (f.time + resp, f.time + resp + quanta_time(rate, f.quanta));
        cur = match cur {
            // Paused (or about to be) when this frame arrives: the pause goes on.
            Some((a, b)) if f.time < b => Some((a, until.max(b))),
            Some(iv) => {
                out.push(iv);
                Some((from, until))
            }
            None => Some((from, until)),
        };
    }
    out.extend(cur);
    out.into_iter()
        .filter_map(|(a, b)| (a < end).then_some((a, b.min(end))))
        .collect()
}

fn total(iv: &[(Time, Time)]) -> Time {
    iv.iter().fold(Time::ZERO, |acc, (a, b)| acc + (*b - *a))
}

/// (a) Refresh mode without RESUME: timers expire, traffic resumes, flows finish.
#[test]
fn refresh_mode_resumes_on_timer_expiry() {
    let cfg = incast(PfcConfig::refresh_mode(QUANTA));
    let resp = response(&cfg, RATE);
    let r = run(cfg);
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
    assert!(
        r.flows.iter().all(|f| f.finish.is_some()),
        "every flow finishes"
    );
    assert!(r.lossless_drops.is_empty());
    let pauses = r.pfc_sent.iter().filter(|f| f.quanta > 0).count();
    assert!(pauses > 0, "PFC must fire in this incast");
    assert!(
        r.pfc_sent.iter().all(|f| f.quanta == QUANTA),
        "refresh mode sends only PAUSE frames with the configured timer, never RESUME"
    );
    assert!(r
        .ports
        .iter()
        .all(|p| p.resume_sent.iter().all(|&n| n == 0)));
    for h in [0u32, 1] {
        let paused = port(&r, h, 0).paused_time[usize::from(PRIO)];
        let expect = pause_intervals(&r.pfc_received, h, 0, PRIO, RATE, resp, r.end_time);
        eprintln!("host {h}: paused {paused} in {} intervals", expect.len());
        assert!(paused > Time::ZERO, "host {h} was paused");
        assert_eq!(
            paused,
            total(&expect),
            "host {h}: paused time = what the PAUSEs imply"
        );
        // Every pause ended by expiry (no RESUME) before the end of the run, except possibly
        // a last one still running when the last flow finished.
        for (a, b) in &expect[..expect.len() - 1] {
            assert!(
                *b - *a >= quanta_time(RATE, QUANTA),
                "an interval is at least one timer"
            );
        }
    }
}

/// (b) Refresh keeps the port paused through a long congestion: PAUSEs every half timer.
#[test]
fn refresh_keeps_paused_through_long_congestion() {
    let cfg = incast(PfcConfig::refresh_mode(QUANTA));
    let resp = response(&cfg, RATE);
    let r = run(cfg);
    let qt = quanta_time(RATE, QUANTA);
    let half = Time(qt.as_ps() / 2);
    let mut longest = Time::ZERO;
    let mut longest_chain = 0usize;
    for h in [0u16, 1] {
        // PAUSEs the switch sent on port h, in order; a chain is a run spaced by exactly half
        // a timer (the refresh period), i.e. one congestion episode kept alive by refreshes.
        let sent: Vec<Time> = r
            .pfc_sent
            .iter()
            .filter(|f| f.node == 3 && f.port == h && f.prio == PRIO)
            .map(|f| f.time)
            .collect();
        let mut chain = 1;
        for w in sent.windows(2) {
            assert!(w[1] > w[0], "two PAUSEs for one PG at one instant");
            if w[1] - w[0] == half {
                chain += 1;
                longest_chain = longest_chain.max(chain);
            } else {
                chain = 1;
            }
        }
        let iv = pause_intervals(
            &r.pfc_received,
            u32::from(h),
            0,
            PRIO,
            RATE,
            resp,
            r.end_time,
        );
        longest = iv.iter().map(|(a, b)| *b - *a).fold(longest, Time::max);
    }
    eprintln!("longest refresh chain {longest_chain} PAUSEs, longest pause {longest}, timer {qt}");
    assert!(
        longest_chain >= 3,
        "several PAUSE frames per congestion episode"
    );
    assert!(
        longest > qt + qt,
        "one continuous pause much longer than one timer"
    );
}

/// (c) A paused transmitter finishes its frame, starts none while paused, loses none.
#[test]
fn frames_in_flight_complete_and_nothing_starts_while_paused() {
    for pfc in [
        PfcConfig::refresh_mode(QUANTA),
        PfcConfig::explicit_resume_mode(),
    ] {
        let cfg = incast(pfc);
        let resp = response(&cfg, RATE);
        let hc = cfg.host.clone();
        let r = run(cfg.clone());
        // Nothing cut, nothing lost, nothing sent twice.
        assert!(r.drops.is_empty(), "{pfc:?}: drops {:?}", r.drops);
        assert_eq!(r.bytes.sent, 2 * SIZE);
        assert_eq!(r.bytes.delivered, 2 * SIZE);
        assert_eq!(r.bytes.in_flight, 0);
        assert!(r
            .flows
            .iter()
            .all(|f| f.finish.is_some() && f.retransmitted == 0));
        let packets = SIZE.div_ceil(hc.mtu_payload);
        let frames = SIZE + packets * hc.header_bytes;
        for h in [0u32, 1] {
            // The sender transmits exactly its data frames (it receives nothing to ACK).
            let p = port(&r, h, 0);
            assert_eq!(
                (p.tx_frames, p.tx_bytes),
                (packets, frames),
                "{pfc:?}: host {h}"
            );
        }
        // The switch port to the receiver carries exactly both flows' data frames.
        let to_rx = port(&r, 3, 2);
        assert_eq!(
            (to_rx.tx_frames, to_rx.tx_bytes),
            (2 * packets, 2 * frames),
            "{pfc:?}"
        );

        // Replay the run up to chosen instants (runs are deterministic) and count the frames
        // host 0 has started: none may start while it is paused, and it must start again
        // after the pause.
        let iv = pause_intervals(&r.pfc_received, 0, 0, PRIO, RATE, resp, r.end_time);
        assert!(!iv.is_empty(), "{pfc:?}: host 0 paused");
        let started_before = |t: Time| {
            let mut c = cfg.clone();
            c.stop_time = Some(t);
            let mut sim = Simulation::new(c).expect("valid");
            sim.run_until(Time::MAX);
            sim.check_invariants().expect("invariants mid-run");
            port(&sim.finish(), 0, 0).tx_frames
        };
        let wire = RATE.serialization(hc.mtu_payload + hc.header_bytes + 20);
        let mut checked = 0;
        for &(a, b) in iv.iter().take(3) {
            if b - a < wire + wire || b >= r.end_time {
                continue;
            }
            checked += 1;
            let at_start = started_before(a);
            assert_eq!(
                at_start,
                started_before(b - Time(1)),
                "{pfc:?}: frame started in [{a}, {b})"
            );
            assert!(
                started_before(b + wire + Time(1)) > at_start,
                "{pfc:?}: no restart after {b}"
            );
            // The frame on the wire when the PAUSE took effect was still completed: host 0
            // was transmitting without a gap right before the pause.
            assert!(started_before(a) > started_before(a.saturating_sub(wire + Time(1))));
        }
        assert!(
            checked > 0,
            "{pfc:?}: no pause interval long enough to check"
        );
    }
}

/// (d1) At a host NIC paused on priority 3, a flow on lossy priority 1 keeps the link.
#[test]
fn other_priority_keeps_flowing_at_a_paused_nic() {
    // One switch (node 4), hosts 0, 1, 3 at 100 Gb/s and host 2 at 25 Gb/s. Hosts 0 and 1
    // send prio 3 to host 2 (8:1 oversubscribed: each gets ~12.5 Gb/s, so each is paused most
    // of the time), and host 0 also sends prio 1 to host 3 over an idle path.
    let link = |a: u32, rate: Rate| LinkSpec {
        a: NodeId(a),
        b: NodeId(4),
        rate,
        delay: Time::from_us(1),
        error_rate: 0.0,
    };
    let topo = Topology {
        nodes: vec![
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch,
        ],
        links: vec![
            link(0, RATE),
            link(1, RATE),
            link(2, Rate::from_gbps(25)),
            link(3, RATE),
        ],
    };
    let mut flows = generators::incast(
        &[NodeId(0), NodeId(1)],
        NodeId(2),
        SIZE,
        Time::ZERO,
        None,
        PRIO,
    )
    .expect("incast");
    flows.push(FlowSpec {
        src: NodeId(0),
        dst: NodeId(3),
        prio: LOSSY,
        size: SIZE,
        start: Time::from_us(20),
        dport: 7,
    });
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.switch.buffer_bytes = 400_000;
    let resp = response(&cfg, RATE);
    let r = run(cfg);
    assert!(r.lossless_drops.is_empty());
    assert!(r.flows.iter().all(|f| f.finish.is_some()));
    let lossy = r
        .flows
        .iter()
        .find(|f| f.prio == LOSSY)
        .expect("lossy flow");
    let (s, e) = (lossy.start, lossy.finish.expect("finished"));
    let iv = pause_intervals(&r.pfc_received, 0, 0, PRIO, RATE, resp, r.end_time);
    let overlap: u64 = iv
        .iter()
        .map(|(a, b)| (*b).min(e).as_ps().saturating_sub((*a).max(s).as_ps()))
        .sum();
    let slowdown = lossy.slowdown().expect("finished");
    eprintln!(
        "prio-3 paused {:.1}% of the prio-1 flow's lifetime; its slowdown {slowdown:.3}",
        100.0 * overlap as f64 / (e - s).as_ps() as f64
    );
    assert!(
        overlap * 2 > (e - s).as_ps(),
        "prio 3 paused during >50% of the lossy flow"
    );
    assert_eq!(port(&r, 0, 0).paused_time[usize::from(LOSSY)], Time::ZERO);
    assert_eq!(lossy.retransmitted, 0);
    // While prio 3 is paused the lossy flow has host 0's link to itself; otherwise it shares
    // it round robin. Mostly paused prio 3 => close to the lossy flow's unloaded FCT.
    assert!(slowdown < 1.5, "lossy flow slowed down {slowdown}");
}

/// (d2) A switch port paused on priority 3 keeps sending priority 1 at full rate.
#[test]
fn other_priority_keeps_flowing_at_a_paused_switch_port() {
    // Dumbbell 2+2, hosts at 100G, bottleneck 200G: hosts 0,1 left (switch 4), hosts 2,3
    // right (switch 5); the bottleneck is port 2 of both switches. Host 0 (across the
    // bottleneck) and host 3 (local) send prio 3 to host 2: the right switch pauses prio 3
    // on the bottleneck. Host 1 sends prio 1 to host 3 across the same bottleneck.
    let topo =
        builders::dumbbell(2, 2, RATE, Rate::from_gbps(200), Time::from_us(1)).expect("dumbbell");
    let mut flows = generators::incast(
        &[NodeId(0), NodeId(3)],
        NodeId(2),
        4 * SIZE,
        Time::ZERO,
        None,
        PRIO,
    )
    .expect("incast");
    flows.push(FlowSpec {
        src: NodeId(1),
        dst: NodeId(3),
        prio: LOSSY,
        size: 2 * SIZE,
        start: Time::from_us(20),
        dport: 7,
    });
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.switch.buffer_bytes = 600_000;
    let resp = response(&cfg, Rate::from_gbps(200));
    let r = run(cfg);
    assert!(r.lossless_drops.is_empty());
    assert!(r.flows.iter().all(|f| f.finish.is_some()));
    let bottleneck = port(&r, 4, 2);
    assert!(
        bottleneck.paused_time[usize::from(PRIO)] > Time::ZERO,
        "bottleneck paused"
    );
    assert_eq!(bottleneck.paused_time[usize::from(LOSSY)], Time::ZERO);
    let lossy = r
        .flows
        .iter()
        .find(|f| f.prio == LOSSY)
        .expect("lossy flow");
    let (s, e) = (lossy.start, lossy.finish.expect("finished"));
    let iv = pause_intervals(
        &r.pfc_received,
        4,
        2,
        PRIO,
        Rate::from_gbps(200),
        resp,
        r.end_time,
    );
    let overlap: u64 = iv
        .iter()
        .map(|(a, b)| (*b).min(e).as_ps().saturating_sub((*a).max(s).as_ps()))
        .sum();
    let slowdown = lossy.slowdown().expect("finished");
    eprintln!(
        "bottleneck prio 3 paused {:.1}% of the prio-1 flow's lifetime; its slowdown {slowdown:.3}",
        100.0 * overlap as f64 / (e - s).as_ps() as f64
    );
    assert!(
        overlap * 5 > (e - s).as_ps(),
        "prio 3 paused during >20% of the lossy flow"
    );
    assert_eq!(lossy.retransmitted, 0);
    assert!(
        slowdown < 1.1,
        "the lossy flow is not slowed by the prio-3 pause: {slowdown}"
    );
}

/// Unit-level reproduction: a PAUSE received at t=0 stops the peer at t=response at the
/// latest. A second PAUSE (a refresh, or the PAUSE of a new XOFF episode in refresh mode)
/// that arrives before that must extend the pause, not postpone its start.
#[test]
fn second_pause_within_response_time_does_not_postpone_the_pause() {
    let rate = RATE;
    let resp = Time::from_ns(300);
    let mut t = PauseTimers::default();
    t.on_frame(Time::ZERO, PRIO, 100, rate, resp);
    t.on_frame(Time::from_ns(200), PRIO, 100, rate, resp);
    assert!(
        t.is_paused(Time::from_ns(300), PRIO),
        "the first PAUSE takes effect at its response time"
    );
    assert!(t.is_paused(
        Time::from_ns(200) + resp + quanta_time(rate, 100) - Time(1),
        PRIO
    ));
}

/// The same in a whole run: with no XON hysteresis (offset 0) the PG of a 100G -> 50G
/// bottleneck flaps XOFF -> XON -> XOFF within one frame time, so in refresh mode (XON is
/// silent) two PAUSE frames reach the sender less than a response time apart. The sender
/// must be paused from the first one's response time on: its paused time must equal what
/// the received frames imply.
#[test]
fn flapping_pg_pauses_from_the_first_pause() {
    let topo =
        builders::dumbbell(1, 1, RATE, Rate::from_gbps(50), Time::from_us(1)).expect("dumbbell");
    let flows = vec![FlowSpec {
        src: NodeId(0),
        dst: NodeId(1),
        prio: PRIO,
        size: SIZE,
        start: Time::ZERO,
        dport: 1,
    }];
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.switch.buffer_bytes = 300_000;
    cfg.switch.xon_offset = 0;
    cfg.switch.pfc = PfcConfig::refresh_mode(QUANTA);
    let resp = response(&cfg, RATE);
    let r = run(cfg);
    assert!(r.flows.iter().all(|f| f.finish.is_some()));
    let rx: Vec<Time> = r
        .pfc_received
        .iter()
        .filter(|f| f.node == 0 && f.prio == PRIO && f.quanta > 0)
        .map(|f| f.time)
        .collect();
    let close = rx.windows(2).filter(|w| w[1] - w[0] < resp).count();
    let paused = port(&r, 0, 0).paused_time[usize::from(PRIO)];
    let expect = total(&pause_intervals(
        &r.pfc_received,
        0,
        0,
        PRIO,
        RATE,
        resp,
        r.end_time,
    ));
    eprintln!(
        "{} PAUSEs received, {close} within a response time ({resp}) of the previous one; \
         paused {paused}, implied by the frames {expect}",
        rx.len()
    );
    assert!(
        close > 0,
        "the scenario must produce PAUSEs closer than the response time"
    );
    assert_eq!(paused, expect, "pause onset postponed by a second PAUSE");
}

/// XON must come early enough that the queue does not run dry before traffic resumes
/// (buffer-and-pfc.md §1, "XON offset"). One 100 Gb/s sender into a 50 Gb/s bottleneck
/// (dumbbell 1+1, 1 µs links), PFC only, 1 MB buffers: the left switch's PG goes to XOFF at
/// about 100 KB of shared occupancy (alpha 1/8), and with a 3 KB XON offset it may resume as
/// soon as it holds no headroom and about 99 KB of shared. The RESUME round trip (2 µs of
/// cable, a PFC frame, the host's restart) drains only ~13 KB at 50 Gb/s, so the bottleneck
/// never idles: its utilization over the flow's life must be ~100 %.
///
/// This fails with the MMU's "region of admission" release (a departing packet frees the
/// region it was admitted to): the PG's headroom packets are the newest, at the tail of the
/// FIFO, so the PG holds headroom — and stays in XOFF — until its whole backlog has left;
/// every PFC cycle then idles the bottleneck for a round trip (measured: 94 % utilization,
/// slowdown 1.05; 82 % with 200 KB buffers). The spec's LIFO accounting (a departure frees
/// headroom first, then shared, then private) resumes with the backlog still queued.
#[test]
fn resume_comes_before_the_queue_runs_dry() {
    let topo =
        builders::dumbbell(1, 1, RATE, Rate::from_gbps(50), Time::from_us(1)).expect("dumbbell");
    let flows = vec![FlowSpec {
        src: NodeId(0),
        dst: NodeId(1),
        prio: PRIO,
        size: 5 * SIZE,
        start: Time::ZERO,
        dport: 1,
    }];
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.switch.buffer_bytes = 1_000_000;
    let overhead = cfg.link.frame_overhead;
    let r = run(cfg);
    let f = &r.flows[0];
    let fct = f.fct().expect("finished");
    // Left switch (node 2): port 0 faces the sender, port 1 is the bottleneck.
    let pauses = port(&r, 2, 0).pause_sent[usize::from(PRIO)];
    let b = port(&r, 2, 1);
    let util = (b.tx_bytes + overhead * b.tx_frames) as f64 * 8.0 / (fct.as_secs_f64() * 50e9);
    eprintln!(
        "{pauses} PAUSEs; bottleneck utilization {util:.3}; slowdown {:.3}",
        f.slowdown().unwrap_or(f64::NAN)
    );
    assert!(pauses > 5, "PFC cycles");
    assert!(util >= 0.98, "the bottleneck idled: utilization {util:.3}");
}

/// Seven lossless classes flapping between PAUSE and RESUME (XON = XOFF) on every ingress
/// port of an 8-to-1 incast: decisions come faster than PFC frames can be sent (one per
/// 6.7 ns at 100 Gb/s). A decision for a class whose last frame has not left updates that
/// frame, so the control queue never holds two frames of one class (checked every 200 ns)
/// and a PAUSE never waits behind stale frames: no lossless drop with headroom sized by
/// the DSH formula. Without the merge, the Fig. 14 scenario's SIH dropped lossless packets
/// 4.6 us after a PAUSE (two propagation delays are 4 us).
#[test]
fn pfc_decisions_for_a_waiting_frame_update_it() {
    let mut text = String::from(
        r#"
[topology]
kind = "star"
hosts = 9
rate = "100Gbps"
delay = "2us"
[switch]
buffer = "5MiB"
cell = "80B"
private = "3KB"
headroom = "dsh"
lossless = [0, 1, 2, 3, 4, 5, 6]
alpha = 0.0625
xon_offset = "0B"
[switch.scheduler]
strict = [7]
quantum = "1600B"
[host]
mtu = "1452B"
[host.cc]
algorithm = "none"
"#,
    );
    for class in 0..7 {
        text.push_str(&format!(
            "[[workload]]\nkind = \"incast\"\nsenders = [1, 2, 3, 4, 5, 6, 7, 8]\n\
             receiver = 0\nsize = \"200KB\"\nprio = {class}\n"
        ));
    }
    let sc = headroom_sim::scenario::parse(&text, std::path::Path::new("flap.toml"))
        .expect("valid scenario");
    let mut sim = Simulation::new(sc.config).expect("valid config");
    let mut t = Time::ZERO;
    while !sim.run_until(t) {
        sim.check_invariants().expect("invariants");
        t += Time::from_ns(200);
    }
    let r = sim.finish();
    let merged: u64 = r.ports.iter().map(|p| u64::from(p.pfc_merged)).sum();
    let decided = r.pfc_sent.len() as u64;
    eprintln!("{decided} PFC decisions, {merged} merged into a waiting frame");
    assert!(
        merged > 0,
        "the scenario must make decisions faster than frames"
    );
    assert!(r.lossless_drops.is_empty(), "{:?}", r.lossless_drops);
    assert!(
        r.flows.iter().all(|f| f.fct().is_some()),
        "every flow finishes"
    );
}
