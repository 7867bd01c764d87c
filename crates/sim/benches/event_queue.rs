//! Benchmarks of the event queue and of a small end-to-end simulation.
//!
//! `cargo bench -p headroom-sim` — criterion measures; nothing here asserts a speed.

// criterion_group! generates an undocumented function.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use headroom_mech::units::{Rate, Time};
use headroom_sim::config::SimConfig;
use headroom_sim::engine::{tiebreak, CalendarQueue, Event, EventQueue, HeapQueue};
use headroom_sim::net::Simulation;
use headroom_sim::topology::{builders, NodeId};
use headroom_sim::workload::generators;

/// Hold model: a queue of `n` pending events, each pop followed by a push a pseudo-random
/// time later (the steady state of a packet simulator).
fn hold(c: &mut Criterion) {
    for n in [1_000usize, 20_000] {
        hold_one(
            c,
            &format!("heap_queue_hold_{n}"),
            HeapQueue::with_capacity(n),
            n,
        );
        hold_one(
            c,
            &format!("calendar_queue_hold_{n}"),
            CalendarQueue::default(),
            n,
        );
    }
}

/// One hold-model benchmark of `q` with `n` pending events.
fn hold_one(c: &mut Criterion, name: &str, mut q: impl EventQueue, n: usize) {
    {
        c.bench_function(name, |b| {
            let mut x = 0x2545_f491_4f6c_dd1du64;
            let mut step = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly within a microsecond, like serialization and propagation.
                x % 1_000_000
            };
            let mut count = 0u32;
            let mut key = || {
                count = count.wrapping_add(1);
                tiebreak(0, 0, count)
            };
            for i in 0..n {
                q.push(Time(step()), key(), Event::Wake { port: i as u32 });
            }
            b.iter(|| {
                let s = q.pop().expect("queue is never empty");
                q.push(Time(s.time.as_ps() + step()), key(), black_box(s.event));
            });
        });
    }
}

/// A 16:1 incast on a star with DCQCN: the engine's hot path end to end.
fn incast(c: &mut Criterion) {
    let topo = builders::star(17, Rate::from_gbps(100), Time::from_us(1)).expect("valid star");
    let senders: Vec<NodeId> = (0..16).map(NodeId).collect();
    let flows = generators::incast(&senders, NodeId(16), 256 * 1024, Time::ZERO, None, 3)
        .expect("valid incast");
    let cfg = SimConfig::new(topo, flows);
    c.bench_function("incast_16to1_256KiB", |b| {
        b.iter(|| {
            let sim = Simulation::new(cfg.clone()).expect("valid config");
            black_box(sim.run().events)
        });
    });
}

criterion_group!(benches, hold, incast);
criterion_main!(benches);
