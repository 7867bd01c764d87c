//! The flow-channel fabric (flow-channels.md "what the project must show"): channels are
//! made by the first packet and released by the last ACK on every hop, so a drained run
//! leaves every table empty; nothing is lost; adaptive routing keeps every flow in order
//! (no go-back-N retransmission); a table too small for the traffic backs frames up
//! instead of losing them; ACKs are aggregated into frames as the batch and timers say.
//! Congestion management: endpoint congestion ACKs and injection limits keep an incast
//! from slowing a victim that shares its fabric links, FGFC keeps it from pausing the host
//! links it shares, and per-flow hop-by-hop credits keep a congested fabric link from
//! pausing the links that feed it.

mod common;

use headroom_mech::units::Time;
use headroom_sim::results::{RunResults, StopReason};
use headroom_sim::scenario;
use std::path::Path;

/// Web-search traffic at `load` on a k = 4 fat tree (16 hosts, 4 paths between pods),
/// with `fabric` as the `[fabric]` section's body.
fn websearch(load: f64, fabric: &str) -> headroom_sim::config::SimConfig {
    let text = format!(
        r#"
seed = 3
[topology]
kind = "fat-tree"
k = 4
rate = "100Gbps"
delay = "1us"

[switch]
lossless = [3]

[host]
mtu = "1000B"

[fabric]
{fabric}

[[workload]]
kind = "poisson"
cdf = "websearch"
load = {load}
duration = "300us"
prio = 3
"#
    );
    scenario::parse(&text, Path::new("flow-channels.toml"))
        .unwrap_or_else(|e| panic!("{e}"))
        .config
}

/// A `[fabric]` body: flow channels with `keys` in `[fabric.flow_channels]`.
fn channels(keys: &str) -> String {
    format!("kind = \"flow-channels\"\n[fabric.flow_channels]\n{keys}")
}

/// Runs `cfg` checking the invariants every `step`.
fn run_checked(cfg: headroom_sim::config::SimConfig, step: Time) -> RunResults {
    common::run_checking(cfg, step).finish()
}

/// Everything delivered, nothing dropped, in order, no table left holding a channel.
fn assert_drained(r: &RunResults, what: &str) {
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone), "{what}");
    assert_eq!(r.drops.values().sum::<u64>(), 0, "{what}: {:?}", r.drops);
    assert!(r.lossless_drops.is_empty(), "{what}");
    let retx: u64 = r.flows.iter().map(|f| f.retransmitted).sum();
    assert_eq!(retx, 0, "{what}: a flow was delivered out of order");
    let c = r.channels.as_ref().expect("a flow-channel fabric");
    assert_eq!(c.waiting_at_end, 0, "{what}");
    for s in &c.switches {
        assert_eq!(s.in_use_at_end, 0, "{what}: switch {} leaks", s.node);
    }
    assert!(
        c.switches.iter().any(|s| s.peak > 0),
        "{what}: no channel made"
    );
}

#[test]
fn a_drained_run_leaves_no_channel_and_delivers_in_order() {
    let r = run_checked(
        websearch(0.6, r#"kind = "flow-channels""#),
        Time::from_us(20),
    );
    assert_drained(&r, "adaptive");
    let c = r.channels.as_ref().expect("channels");
    assert!(c.ack_frames > 0 && c.acks >= c.ack_frames);
    assert!(c.acks_home > 0);
}

#[test]
fn adaptive_routing_chooses_other_paths_than_the_hash() {
    let adaptive = run_checked(
        websearch(0.6, r#"kind = "flow-channels""#),
        Time::from_us(50),
    );
    let ecmp = run_checked(
        websearch(0.6, &channels("routing = \"ecmp\"")),
        Time::from_us(50),
    );
    assert_drained(&ecmp, "ecmp");
    let fcts = |r: &RunResults| -> Vec<Option<Time>> { r.flows.iter().map(|f| f.finish).collect() };
    assert_ne!(
        fcts(&adaptive),
        fcts(&ecmp),
        "routing by load changed no flow's completion"
    );
    // The same traffic takes the paths its hash gives on a plain PFC fabric: the flow
    // channels' own frames aside, the ECMP run moves the same packets.
    let pfc = run_checked(websearch(0.6, r#"kind = "pfc""#), Time::from_us(50));
    assert!(pfc.channels.is_none());
}

#[test]
fn a_small_table_backs_frames_up_and_loses_nothing() {
    let r = run_checked(
        websearch(0.8, &channels("table_size = 2")),
        Time::from_us(10),
    );
    assert_drained(&r, "table_size 2");
    let c = r.channels.as_ref().expect("channels");
    assert!(c.waits > 0, "no frame waited for a channel with 2 per port");
    assert!(c.switches.iter().all(|s| s.peak > 0));
}

#[test]
fn channels_run_over_credit_links_too() {
    let r = run_checked(
        websearch(0.6, &channels("link = \"credit\"")),
        Time::from_us(20),
    );
    assert_drained(&r, "credit links");
    let updates: u64 = r.ports.iter().flat_map(|p| p.credit_updates).sum();
    let pauses: u32 = r.ports.iter().flat_map(|p| p.pause_sent).sum();
    assert!(updates > 0, "the links beneath used credits");
    assert_eq!(pauses, 0, "credit links never pause");
}

#[test]
fn acks_are_batched_by_size_and_timers() {
    let one = run_checked(
        websearch(0.6, &channels("ack_batch = 1")),
        Time::from_us(50),
    );
    let c1 = one.channels.as_ref().expect("channels");
    assert_eq!(c1.ack_frames, c1.acks, "one ACK per frame");
    // Long timers gather many ACKs per frame, never more than the batch.
    let slow = run_checked(
        websearch(
            0.6,
            &channels(
                "ack_batch = 8\nack_idle_delay = \"2us\"\nack_busy_delay = \"2us\"\n\
                 ack_max_delay = \"2us\"",
            ),
        ),
        Time::from_us(50),
    );
    assert_drained(&slow, "slow ACKs");
    let c = slow.channels.as_ref().expect("channels");
    assert!(
        c.acks > 4 * c.ack_frames,
        "{} ACKs in {} frames",
        c.acks,
        c.ack_frames
    );
    assert!(c.acks <= 8 * c.ack_frames);
}

/// Split into parts, a run is the one run: ACK frames cross between parts with their ACKs,
/// every part's channels and counters add up, and the run ends at the same event (the
/// release of the last channel anywhere).
#[test]
fn runs_are_the_same_on_any_number_of_threads() {
    // Plain; with the congestion management whose timers and moves are events of their
    // own (release delays, reroutes); with the edges' and hops' own controls (FGFC frames
    // to hosts, HeadroomACKs, injection limits).
    let managed = "kind = \"flow-channels\"\n[fabric.flow_channels.endpoint]\n\
                   limits = [\"8KiB\", \"0B\"]\nrelease_delay = \"1us\"\n\
                   [fabric.flow_channels.reroute]\nqueue = \"16KiB\"\n\
                   [switch.scheduler]\narbitration = \"flow\"";
    let edges = channels(
        "[fabric.flow_channels.endpoint]\n[fabric.flow_channels.fgfc]\n\
         [fabric.flow_channels.hop_credits]\n[fabric.flow_channels.injection]\n\
         port = \"32KiB\"\n[switch.scheduler]\narbitration = \"flow\"",
    );
    // ACKs slower than the hosts' own: the last flow finishes with channels still in use,
    // which the parts drain together.
    let slow_acks =
        channels("ack_idle_delay = \"5us\"\nack_busy_delay = \"5us\"\nack_max_delay = \"5us\"");
    for fabric in [r#"kind = "flow-channels""#, managed, &edges, &slow_acks] {
        let cfg = websearch(0.5, fabric);
        let one = headroom_sim::net::parallel::Partitioned::new(cfg.clone(), 1)
            .expect("valid")
            .run();
        assert_drained(&one, fabric);
        let last_finish = one.flows.iter().filter_map(|f| f.finish).max();
        if fabric == slow_acks {
            let last_finish = last_finish.expect("flows finished");
            assert!(
                one.end_time > last_finish,
                "the run ended with its last flow: the drain was not tested"
            );
            // A stop time within the drain ends it there, in parts as in one.
            let mut stopped = cfg.clone();
            stopped.stop_time = Some(Time((last_finish.as_ps() + one.end_time.as_ps()) / 2));
            let single = headroom_sim::net::parallel::Partitioned::new(stopped.clone(), 1)
                .expect("valid")
                .run();
            let split = headroom_sim::net::parallel::Partitioned::new(stopped, 3)
                .expect("valid")
                .run();
            assert_eq!(single.stop_reason, Some(StopReason::StopTime));
            assert_eq!(
                (
                    single.end_time,
                    single.events,
                    &single.flows,
                    &single.channels
                ),
                (split.end_time, split.events, &split.flows, &split.channels)
            );
        }
        for threads in 2..=4 {
            let run =
                headroom_sim::net::parallel::Partitioned::new(cfg.clone(), threads).expect("valid");
            assert_eq!(run.parts(), threads, "{fabric}");
            let r = run.run();
            assert_eq!(one.flows, r.flows, "{threads} threads: {fabric}");
            assert_eq!(one.channels, r.channels, "{threads} threads: {fabric}");
            assert_eq!(
                (one.end_time, one.events, one.stop_reason),
                (r.end_time, r.events, r.stop_reason),
                "{threads} threads: {fabric}"
            );
        }
    }
}

/// A leaf-spine of `leaves` × `hosts` hosts under one spine (100 Gb/s host links, uplinks
/// at `uplink`, 1 us cables), switches with `buffer` and a queue per flow, hosts without
/// congestion control; `fabric` is the `[fabric]` section's body and `workloads` the
/// scenario's workloads.
fn one_spine(
    (leaves, hosts, uplink): (u32, u32, &str),
    buffer: &str,
    fabric: &str,
    workloads: &str,
) -> headroom_sim::config::SimConfig {
    let topology = format!(
        "kind = \"leaf-spine\"\nleaves = {leaves}\nspines = 1\nhosts_per_leaf = {hosts}\n\
         host_rate = \"100Gbps\"\nuplink_rate = \"{uplink}\"\ndelay = \"1us\""
    );
    no_host_cc(&topology, buffer, fabric, workloads)
}

/// A scenario of `topology` (the `[topology]` body) with lossless class 3, `buffer` per
/// switch, a queue per flow, 1000 B frames and no host congestion control; `fabric` is the
/// `[fabric]` section's body, `workloads` the workloads.
fn no_host_cc(
    topology: &str,
    buffer: &str,
    fabric: &str,
    workloads: &str,
) -> headroom_sim::config::SimConfig {
    let text = format!(
        r#"
[topology]
{topology}

[switch]
lossless = [3]
buffer = "{buffer}"

[switch.scheduler]
arbitration = "flow"

[host]
mtu = "1000B"

[host.cc]
algorithm = "none"

[fabric]
{fabric}

{workloads}"#
    );
    scenario::parse(&text, Path::new("no-host-cc.toml"))
        .unwrap_or_else(|e| panic!("{e}"))
        .config
}

/// A 500 KB flow from `src` to `dst` starting at `start`, in a `flows` workload.
fn flow(src: u32, dst: u32, start: &str) -> String {
    format!("[[workload.flow]]\nsrc = {src}\ndst = {dst}\nsize = \"500KB\"\nstart = \"{start}\"\n")
}

/// Seven hosts (0-6) of one leaf send 500 KB each to one host of the other leaf (an incast
/// on its egress edge), and host `victim` of the first leaf sends 500 KB to another host
/// there: its path shares every fabric link with the incast but not the congested output
/// (and with `victim` 0, its host link too). The uplinks (800 Gb/s) are no bottleneck.
fn incast_with_victim(fabric: &str, buffer: &str, victim: u32) -> headroom_sim::config::SimConfig {
    let workloads = format!(
        "[[workload]]\nkind = \"incast\"\nsenders = [0, 1, 2, 3, 4, 5, 6]\nreceiver = 8\n\
         size = \"500KB\"\n\n[[workload]]\nkind = \"flows\"\n{}",
        flow(victim, 9, "5us")
    );
    one_spine((2, 8, "800Gbps"), buffer, fabric, &workloads)
}

/// Runs `before` and `after` checking the invariants, asserts both drained, and returns
/// each one's victim slowdown and incast finish ([`victim_and_incast`]), printed.
fn victim_before_and_after(
    (before, before_what): (headroom_sim::config::SimConfig, &str),
    (after, after_what): (headroom_sim::config::SimConfig, &str),
) -> [(RunResults, f64, f64); 2] {
    let step = Time::from_us(20);
    let runs = [(before, before_what), (after, after_what)].map(|(cfg, what)| {
        let r = run_checked(cfg, step);
        assert_drained(&r, what);
        let (victim, incast) = victim_and_incast(&r);
        (r, victim, incast)
    });
    eprintln!(
        "victim slowdown {:.3} -> {:.3}; incast done at {:.0} -> {:.0} ps",
        runs[0].1, runs[1].1, runs[0].2, runs[1].2
    );
    runs
}

/// The victim's slowdown and the incast's last finish time.
fn victim_and_incast(r: &RunResults) -> (f64, f64) {
    let victim = r
        .flows
        .iter()
        .find(|f| f.dst == 9)
        .expect("the victim flow");
    let fct = |f: &headroom_sim::results::FlowRecord| f.fct().expect("finished").as_ps() as f64;
    let ideal = victim.ideal_fct.as_ps() as f64;
    let incast = r
        .flows
        .iter()
        .filter(|f| f.dst == 8)
        .map(fct)
        .fold(0.0, f64::max);
    (fct(victim) / ideal, incast)
}

#[test]
fn endpoint_congestion_isolates_a_victim_from_an_incast() {
    // 4 MiB buffers hold what the ingress edge holds back (see the FGFC test for less).
    let [(plain, plain_victim, plain_incast), (managed, managed_victim, managed_incast)] =
        victim_before_and_after(
            (
                incast_with_victim(&channels(""), "4MiB", 7),
                "without endpoint congestion management",
            ),
            (
                incast_with_victim(&channels("[fabric.flow_channels.endpoint]"), "4MiB", 7),
                "with it",
            ),
        );
    // Without it the congested egress backs up into the fabric link the victim shares
    // (PFC pauses it); with it the incast's flows are held at their ingress edges.
    assert!(plain_victim > 2.0, "the victim suffers: {plain_victim}");
    assert!(
        managed_victim < 1.05,
        "the victim is isolated: {managed_victim}"
    );
    assert!(
        managed_incast <= plain_incast * 1.02,
        "the incast loses nothing by it: {managed_incast} vs {plain_incast}"
    );
    let c = managed.channels.as_ref().expect("channels");
    assert!(
        c.endpoint && c.endpoint_acks > 0 && c.flow_limit_holds > 0,
        "{c:?}"
    );
    let c = plain.channels.as_ref().expect("channels");
    assert!(!c.endpoint && c.endpoint_acks == 0 && c.flow_limit_holds == 0);
}

#[test]
fn fgfc_pauses_the_held_sources_instead_of_their_links() {
    // The victim leaves from host 0, which also sends into the incast. What the sending
    // leaf holds back at the incast's injection limits fills host 0's ingress queue there:
    // PFC pauses host 0's link, and the victim with it. FGFC pauses host 0's incast flow
    // alone.
    let endpoint = "[fabric.flow_channels.endpoint]";
    let [(held, held_victim, held_incast), (paused, paused_victim, paused_incast)] =
        victim_before_and_after(
            (
                incast_with_victim(&channels(endpoint), "4MiB", 0),
                "endpoint congestion management alone",
            ),
            (
                incast_with_victim(
                    &channels(&format!("{endpoint}\n[fabric.flow_channels.fgfc]")),
                    "4MiB",
                    0,
                ),
                "with FGFC",
            ),
        );
    assert!(held_victim > 2.0, "the victim suffers: {held_victim}");
    assert!(
        paused_victim < 1.2,
        "the victim is isolated: {paused_victim}"
    );
    let pauses = |r: &RunResults| r.pfc_sent.iter().filter(|p| p.quanta > 0).count();
    assert!(pauses(&held) > 0, "host links are paused");
    assert_eq!(pauses(&paused), 0, "no link is paused");
    assert!(
        paused_incast <= held_incast * 1.02,
        "the incast loses nothing by it: {paused_incast} vs {held_incast}"
    );
    let c = paused.channels.as_ref().expect("channels");
    let (pauses, resumes) = c.fgfc.expect("FGFC counts");
    assert!(
        pauses > 0 && resumes > 0,
        "{pauses} pauses, {resumes} resumes"
    );
    assert_eq!(held.channels.as_ref().and_then(|c| c.fgfc), None);
}

#[test]
fn severity_watermarks_pause_congested_sources_earlier() {
    // FGFC's own target (64 KiB per flow) lets each of the incast's 7 flows pile up that
    // much at the sending leaf; severity watermarks (8 KiB from severity 1) pause their
    // sources sooner, so the leaf holds far less, and nothing else changes.
    let fgfc = "[fabric.flow_channels.endpoint]\n[fabric.flow_channels.fgfc]";
    let marked = "[fabric.flow_channels.endpoint]\nwatermarks = [{ high = \"32KiB\", target = \
                  \"8KiB\", drop = \"2KiB\" }]\n[fabric.flow_channels.fgfc]";
    let [(own, own_victim, own_incast), (lower, lower_victim, lower_incast)] =
        victim_before_and_after(
            (
                incast_with_victim(&channels(fgfc), "4MiB", 0),
                "FGFC's own watermarks",
            ),
            (
                incast_with_victim(&channels(marked), "4MiB", 0),
                "severity watermarks",
            ),
        );
    // The sending leaf is the first switch (node 16).
    let leaf = |r: &RunResults| r.switches[0].peak_bytes;
    assert!(
        leaf(&lower) * 2 < leaf(&own),
        "the sending leaf holds less: {} vs {}",
        leaf(&lower),
        leaf(&own)
    );
    let pauses = |r: &RunResults| r.channels.as_ref().and_then(|c| c.fgfc).map_or(0, |f| f.0);
    assert!(pauses(&lower) > pauses(&own), "more FGFC pauses");
    assert!(
        lower_victim <= own_victim * 1.02,
        "{lower_victim} vs {own_victim}"
    );
    assert!(
        lower_incast <= own_incast * 1.02,
        "{lower_incast} vs {own_incast}"
    );
}

/// Hosts 0, 1 (leaf 0) and 4, 5 (leaf 1) send 500 KB each to hosts 8-11 (leaf 2) under one
/// spine with 100 Gb/s uplinks: the spine's link to leaf 2 is congested (a fabric link, not
/// an endpoint). Host 2 (leaf 0) sends 500 KB to host 6 (leaf 1), sharing leaf 0's uplink
/// and the spine with the congesting flows but not the congested link. `fabric` is the
/// `[fabric]` section's body.
fn fabric_link_congestion(fabric: &str) -> headroom_sim::config::SimConfig {
    let workloads = format!(
        "[[workload]]\nkind = \"flows\"\n{}{}{}{}\n[[workload]]\nkind = \"flows\"\n{}",
        flow(0, 8, "0us"),
        flow(1, 9, "0us"),
        flow(4, 10, "0us"),
        flow(5, 11, "0us"),
        flow(2, 6, "5us"),
    );
    one_spine((3, 4, "100Gbps"), "4MiB", fabric, &workloads)
}

#[test]
fn hop_by_hop_credits_meter_flows_instead_of_pausing_fabric_links() {
    let step = Time::from_us(20);
    let spine = 15; // nodes: 12 hosts, 3 leaves, the spine
    let victim = |r: &RunResults| {
        let f = r.flows.iter().find(|f| f.src == 2).expect("the victim");
        f.fct().expect("finished").as_ps() as f64 / f.ideal_fct.as_ps() as f64
    };
    let spine_pauses = |r: &RunResults| {
        r.pfc_sent
            .iter()
            .filter(|p| p.node == spine && p.quanta > 0)
            .count()
    };
    let plain = run_checked(fabric_link_congestion(&channels("")), step);
    let metered = run_checked(
        fabric_link_congestion(&channels("[fabric.flow_channels.hop_credits]")),
        step,
    );
    let both = run_checked(
        fabric_link_congestion(&channels(
            "[fabric.flow_channels.hop_credits]\n[fabric.flow_channels.fgfc]",
        )),
        step,
    );
    for (r, what) in [
        (&plain, "plain"),
        (&metered, "metered"),
        (&both, "with FGFC"),
    ] {
        assert_drained(r, what);
    }
    eprintln!(
        "victim slowdown {:.3} -> {:.3} -> {:.3}",
        victim(&plain),
        victim(&metered),
        victim(&both)
    );
    // Without credits the spine pauses leaf 0's uplink, and the victim behind it; with
    // them the spine meters the congesting flows alone and the victim gets what the
    // congesting flows leave of leaf 0's uplink (half of it: slowdown about 2).
    assert!(spine_pauses(&plain) > 0, "the spine pauses its uplinks");
    assert!(victim(&plain) > 2.4, "the victim waits: {}", victim(&plain));
    assert_eq!(spine_pauses(&metered), 0, "the spine pauses nothing");
    assert!(
        victim(&metered) < 2.0,
        "the victim gets its share: {}",
        victim(&metered)
    );
    let (metered_flows, acks) = metered
        .channels
        .as_ref()
        .and_then(|c| c.hop_credits)
        .expect("counts");
    assert!(
        metered_flows >= 4 && acks > metered_flows,
        "{metered_flows} {acks}"
    );
    // FGFC at the ingress edges takes the last pauses off the host links.
    assert_eq!(both.pfc_sent.iter().filter(|p| p.quanta > 0).count(), 0);
}

#[test]
fn a_port_injection_limit_bounds_what_an_incast_has_in_the_fabric() {
    // 64 KiB per host port, about one bandwidth-delay product: the victim keeps its rate,
    // and the incast's 7 x 64 KiB are far below what would make the receiving leaf pause
    // the spine. FGFC keeps what the sending leaf holds back from pausing host links.
    let [(plain, plain_victim, plain_incast), (limited, limited_victim, limited_incast)] =
        victim_before_and_after(
            (
                incast_with_victim(&channels(""), "4MiB", 7),
                "without an injection limit",
            ),
            (
                incast_with_victim(
                    &channels(
                        "[fabric.flow_channels.injection]\nport = \"64KiB\"\n\
                         [fabric.flow_channels.fgfc]",
                    ),
                    "4MiB",
                    7,
                ),
                "with one",
            ),
        );
    assert!(plain_victim > 2.0, "the victim suffers: {plain_victim}");
    assert!(
        limited_victim < 1.05,
        "the victim is isolated: {limited_victim}"
    );
    assert!(
        limited_incast <= plain_incast * 1.02,
        "the incast loses nothing by it: {limited_incast} vs {plain_incast}"
    );
    let inj = limited
        .channels
        .as_ref()
        .and_then(|c| c.injection.clone())
        .expect("injection counts");
    let (limit, peak) = (inj.port_limit.expect("a port limit"), inj.peak);
    assert_eq!(limit, 64 * 1024);
    assert!(peak <= limit && peak > limit / 2, "peak {peak} of {limit}");
    assert!(inj.ilids.is_empty() && inj.node_limit.is_none());
    assert_eq!(
        plain.channels.as_ref().and_then(|c| c.injection.clone()),
        None
    );
}

/// Host 0 sends 2 MB to host 8 for application 1 (ILID 0) and 2 MB to host 9 for
/// application 2 (ILID 1), both at once, under a node limit of 32 KiB that the ILIDs share
/// with ratios `ratios`; returns the FCTs (application 1, application 2) and the run.
fn two_applications(ratios: (u32, u32)) -> (f64, f64, RunResults) {
    let fabric = channels(&format!(
        "[fabric.flow_channels.injection]\nnode = \"32KiB\"\n\
         [[fabric.flow_channels.injection.ilid]]\nid = 0\napps = [1]\nratio = {}\n\
         [[fabric.flow_channels.injection.ilid]]\nid = 1\napps = [2]\nratio = {}\n\
         [fabric.flow_channels.fgfc]",
        ratios.0, ratios.1
    ));
    let app = |app: u32, dst: u32| {
        format!(
            "[[workload]]\nkind = \"flows\"\napp = {app}\n[[workload.flow]]\nsrc = 0\n\
             dst = {dst}\nsize = \"2MB\"\n"
        )
    };
    let cfg = one_spine(
        (2, 8, "800Gbps"),
        "4MiB",
        &fabric,
        &format!("{}{}", app(1, 8), app(2, 9)),
    );
    let r = run_checked(cfg, Time::from_us(20));
    assert_drained(&r, "two applications");
    let fct = |i: usize| r.flows[i].fct().expect("finished").as_secs_f64();
    (fct(0), fct(1), r)
}

#[test]
fn ilids_share_a_node_limit_by_their_ratios() {
    // Equal ratios: 16 KiB each while both send, so they finish together.
    let (one, two, _) = two_applications((1, 1));
    assert!((one / two - 1.0).abs() < 0.05, "{one} vs {two}");
    // 3 : 1: application 1 has 24 KiB in flight to application 2's 8 KiB and runs about
    // three times as fast; application 2 then has all 32 KiB: 2 MB / 3 of the rate, then
    // the rest at all of it, 2 / 3 of the time the equal split takes... give or take.
    let (fast, slow, r) = two_applications((3, 1));
    assert!(fast / slow < 0.75, "{fast} vs {slow}");
    assert!(
        slow < two * 1.05,
        "the slower one loses nothing overall: {slow} vs {two}"
    );
    let inj = r
        .channels
        .as_ref()
        .and_then(|c| c.injection.clone())
        .expect("injection counts");
    assert_eq!(inj.node_limit, Some(32 * 1024));
    assert_eq!(inj.port_limit, None);
    assert_eq!(inj.ilids.len(), 8);
    assert_eq!((inj.ilids[0].ratio, inj.ilids[1].ratio), (3, 1));
    let frame = 1_300;
    // ILID 0 is alone at first (the whole node limit), ILID 1 alone at the end.
    for l in &inj.ilids[..2] {
        assert!(l.peak <= 32 * 1024 + frame && l.peak > 16 * 1024, "{l:?}");
    }
    assert!(inj.ilids[2..].iter().all(|l| l.peak == 0));
}

#[test]
fn flows_held_for_their_release_delay_are_let_go() {
    // A 96-to-1 incast: even one frame per flow in flight (the limit of severity 2) is more
    // than the receiver's link drains in a round trip, so flows reach the highest severity
    // with nothing in flight, and their ingress edges hold them for the release delay after
    // each ACK. No ACK comes to let them go: the delay's own event must, and the run checks
    // every 20 us that no flow is held with neither in flight nor a delay running.
    let endpoint = "[fabric.flow_channels.endpoint]\nlimits = [\"8KiB\", \"0B\"]";
    let incast = |fabric: &str| {
        let senders: Vec<String> = (0..96).map(|h| h.to_string()).collect();
        let workloads = format!(
            "[[workload]]\nkind = \"incast\"\nsenders = [{}]\nreceiver = 100\nsize = \"20KB\"",
            senders.join(", ")
        );
        let r = run_checked(
            one_spine((4, 32, "800Gbps"), "16MiB", &channels(fabric), &workloads),
            Time::from_us(20),
        );
        assert_drained(&r, fabric);
        let done = r.flows.iter().filter_map(|f| f.finish).max();
        (r.channels.as_ref().and_then(|c| c.release_delays), done)
    };
    let (none, plain_done) = incast(endpoint);
    assert_eq!(none, None, "no delay configured, none counted");
    for delay in ["1us", "10us"] {
        let (delays, done) = incast(&format!("{endpoint}\nrelease_delay = \"{delay}\""));
        eprintln!(
            "release delay {delay}: {delays:?} delays, done at {done:?} ({plain_done:?} without)"
        );
        assert!(delays.is_some_and(|n| n > 10), "{delay}: {delays:?}");
        assert_ne!(done, plain_done, "{delay}: the delays changed the run");
    }
}

/// A k = 4 fat tree (16 hosts, 2 per edge switch, 4 cores), all links 100 Gb/s, running
/// 8 MB flows `(src, dst, start in us)`; `keys` is the `[fabric.flow_channels]` body.
fn fat_tree_flows(flows: &[(u32, u32, u32)], keys: &str) -> headroom_sim::config::SimConfig {
    let flows: String = flows
        .iter()
        .map(|(src, dst, start)| {
            format!("[[workload.flow]]\nsrc = {src}\ndst = {dst}\nsize = \"8MB\"\nstart = \"{start}us\"\n")
        })
        .collect();
    no_host_cc(
        "kind = \"fat-tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"",
        "4MiB",
        &channels(keys),
        &format!("[[workload]]\nkind = \"flows\"\n{flows}"),
    )
}

#[test]
fn reroutes_move_flows_off_an_overloaded_downlink() {
    // Pod 0's two edge switches send two 8 MB flows each to pod 1's two edge switches, one
    // to each. Each edge spreads its flows over its two aggregation switches, but neither
    // sees the other's choice: both send the flows to one destination edge through the
    // same aggregation switch, so each downlink into pod 1's edges carries two flows while
    // its twin carries none. The overloaded downlinks' reroute ACKs reach the source edges,
    // which move a flow to their other uplink once it drains.
    let flows = [(0, 4, 0), (2, 5, 5), (1, 6, 10), (3, 7, 15)];
    let run = |keys: &str| {
        let r = run_checked(fat_tree_flows(&flows, keys), Time::from_us(20));
        assert_drained(&r, keys);
        let fcts: Vec<f64> = r
            .flows
            .iter()
            .map(|f| f.fct().expect("done").as_us_f64())
            .collect();
        (r, fcts)
    };
    let (_, plain) = run("");
    let (moved, rerouted) = run("[fabric.flow_channels.reroute]");
    let stats = moved
        .channels
        .as_ref()
        .and_then(|c| c.reroute)
        .expect("counted");
    eprintln!("FCTs (us) {plain:?} -> {rerouted:?}; {stats:?}");
    let worst = |fcts: &[f64]| fcts.iter().copied().fold(0.0, f64::max);
    // At 100 Gb/s 8 MB take 640 us; two flows sharing a link, twice that.
    assert!(worst(&plain) > 1_250.0, "the flows collide: {plain:?}");
    assert!(
        worst(&rerouted) < 800.0,
        "reroutes separate them: {rerouted:?}"
    );
    assert!(stats.moved >= 1 && stats.asks >= stats.moved, "{stats:?}");
}

#[test]
fn the_edge_match_pattern_decides_which_flows_share_a_channel() {
    // Host 0 sends four flows at once to host 1, through its leaf, the spine and the other
    // leaf: one per traffic class (3, 4) and application (1, 2).
    let peak_channels = |pattern: &str| {
        let app = |app: u32| {
            let flow = |prio: u32| {
                format!("[[workload.flow]]\nsrc = 0\ndst = 1\nsize = \"200KB\"\nprio = {prio}\n")
            };
            format!(
                "[[workload]]\nkind = \"flows\"\napp = {app}\n{}{}",
                flow(3),
                flow(4)
            )
        };
        let text = format!(
            "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 1\n\
             host_rate = \"100Gbps\"\nuplink_rate = \"100Gbps\"\ndelay = \"1us\"\n\
             [switch]\nlossless = [3, 4]\n[host]\nmtu = \"1000B\"\n\
             [fabric]\nkind = \"flow-channels\"\n[fabric.flow_channels]\nmatch = \"{pattern}\"\n\
             {}{}",
            app(1),
            app(2)
        );
        let cfg = scenario::parse(&text, Path::new("match.toml"))
            .unwrap_or_else(|e| panic!("{e}"))
            .config;
        let r = run_checked(cfg, Time::from_us(5));
        assert_drained(&r, pattern);
        let c = r.channels.as_ref().expect("channels");
        c.switches.iter().map(|s| s.peak).max().expect("one switch")
    };
    let one = peak_channels("destination");
    assert!(one > 0);
    for (pattern, channels) in [
        ("flow", 4),
        ("destination+class", 2),
        ("destination+app", 2),
        ("destination+class+app", 4),
    ] {
        assert_eq!(
            peak_channels(pattern),
            channels * one,
            "{pattern}: {channels} channels per one of `destination`"
        );
    }
}
