//! headroom's packet-level simulator of lossless Ethernet fabrics.
//!
//! Layers, bottom up (the mechanisms themselves live in `headroom-mech`):
//! - [`topology`], [`workload`]: the network and the flows, as plain data, with builders,
//!   generators and the ns-3 HPCC simulator's file formats;
//! - [`config`]: the resolved input of one run ([`config::SimConfig`]);
//! - [`scenario`], [`hpcc_config`], [`ns3_rdma_config`]: user input (TOML scenarios, the
//!   HPCC simulator's and the DCQCN/TCD simulator's `config.txt`, sharing [`ns3_files`])
//!   translated into a `SimConfig`, with errors that name the file, field and reason;
//! - [`input`]: size-bounded reading of input files;
//! - [`engine`]: events and the `(time, key)`-ordered queue;
//! - [`routing`]: shortest paths and the deterministic ECMP hash;
//! - [`net`]: ports/links, switches, hosts: the state the events act on, one driver file
//!   per mechanism (marking and TCD, PFC watchdog, deadlock detection, ...), and the driver
//!   that runs a network as parts on several threads (`net::parallel`);
//! - [`results`], [`output`]: what a run produces, and the files it is written to.
//!
//! Determinism: the same `SimConfig` (seed included) produces identical results. Every
//! random choice draws from a named stream seeded from the run seed (per switch for ECN
//! marking, per port for link errors); event ties are broken by a key that names the port
//! that scheduled the event and its count of scheduled events; maps that are iterated are
//! ordered.

pub mod config;
pub mod engine;
pub mod hpcc_config;
pub mod input;
pub mod net;
pub mod ns3_files;
pub mod ns3_rdma_config;
pub mod output;
pub mod results;
pub mod routing;
pub mod scenario;
pub mod topology;
pub mod workload;
