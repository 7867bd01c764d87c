//! Sans-IO mechanisms of lossless fabrics.
//!
//! Every mechanism here is a state machine that takes the current time and its inputs and
//! returns decisions; none reads a clock, does I/O or keeps global state. The simulator
//! (`headroom-sim`) and the planners only drive them, so each can be unit-tested against the
//! formulas of the specification on its own.
//!
//! Layers, bottom up:
//! - [`units`]: picosecond [`units::Time`], [`units::Bytes`], [`units::Rate`] and their parsers.
//! - [`buffer`]: the switch MMU: cells, private/shared/headroom accounting, the dynamic
//!   threshold and its alpha encodings, the headroom formulas.
//! - [`pfc`]: IEEE 802.1Qbb priority flow control: the PAUSE generator of a congested
//!   ingress queue and the pause timers of a paused transmitter.
//! - [`credit`]: InfiniBand-style credit-based flow control: per-VL transmitters and
//!   receivers of 64-byte blocks with modulo-4096 FCTBS/FCCL, and when to send updates.
//! - [`flow_control`]: one gate before every frame over either kind of link flow control.
//! - [`pfcwd`]: the PFC watchdog: queues paused too long stop honouring PAUSE for a while.
//! - [`ecn`]: packet marks (none, UE, CE) and RED-style ECN marking of egress queues.
//! - [`tcd`]: ternary congestion detection: an egress queue's non-congestion, congestion
//!   and undetermined states, the paper's detector and the authors' released one.
//! - [`congestion_point`]: one egress queue's marking decision (RED or TCD) fed by its
//!   flow-control history, with what it decided over the run.
//! - [`int`]: in-band network telemetry hop records (what HPCC's and PowerTCP's switches
//!   append).
//! - [`cc`]: congestion control: senders (DCQCN, DCTCP, TIMELY, HPCC, PowerTCP, or none)
//!   fed by one feedback type, and the receivers' notification points.
//! - [`inq_arbiter`]: the flow-channel fabric's ingress arbiter: injection-limit ids,
//!   application groups and flow channels in three round-robin levels (also the port-fair
//!   and flow-fair arbiters it is compared with).
//! - [`flow_channel`]: the flow-channel fabric's per-hop tables (IFCT, OFCT, EFCT): a
//!   channel per flow from its first packet to its last ACK, link-local ids, progress
//!   counters, in-order paths while data is in flight.
//! - [`endpoint_congestion`]: the flow-channel egress edge's congestion detector (bytes,
//!   packets, growth) and the per-flow injection limits its severities set.
//! - [`fgfc`]: fine-grained flow control: an ingress edge pauses one source of its host by
//!   the flow's queue watermarks, and the source's pause and credit.
//! - [`hop_credit`]: per-flow hop-by-hop credits (HeadroomACK): a switch meters one flow's
//!   upstream hop by its queue's watermarks.
//! - [`injection`]: the ingress edge's injection limit: the data one host port has in the
//!   fabric, unacknowledged, at the most.

pub mod buffer;
pub mod cc;
pub mod congestion_point;
pub mod credit;
pub mod ecn;
pub mod endpoint_congestion;
pub mod fgfc;
pub mod flow_channel;
pub mod flow_control;
pub mod hop_credit;
pub mod injection;
pub mod inq_arbiter;
pub mod int;
pub mod pfc;
pub mod pfcwd;
pub mod tcd;
pub mod units;

/// Number of priorities (traffic classes) on a port.
pub const PRIORITIES: usize = 8;
