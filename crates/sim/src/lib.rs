//! headroom's packet-level simulator of lossless Ethernet fabrics.

pub mod topology;
pub mod workload;
