//! SONiC-compatible dynamic buffer calculation.
//!
//! Computes what SONiC's buffer manager (buffermgrd in dynamic mode, with the vendor
//! plugins) computes: each lossless priority group's headroom from port speed, cable length
//! and ASIC parameters, the shared buffer pool sizes, and the maximum-headroom check; and
//! speaks SONiC's Redis table protocol so a daemon can replace buffermgrd.
//!
//! Layers (sans-IO first, I/O last):
//! - [`swss`]: the swss-common Redis table protocol (key formats, ProducerStateTable writes,
//!   keyspace notifications), the only module that talks to Redis.

pub mod swss;
