//! SONiC-compatible dynamic buffer calculation.
//!
//! Computes what SONiC's buffer manager (buffermgrd in dynamic mode, with the vendor
//! plugins) computes: each lossless priority group's headroom from port speed, cable length
//! and ASIC parameters, the shared buffer pool sizes, and the maximum-headroom check; and
//! speaks SONiC's Redis table protocol so a daemon can replace buffermgrd.
//!
//! Layers (sans-IO first, I/O last):
//! - [`tables`]: typed CONFIG_DB / STATE_DB / APPL_DB tables parsed from SONiC's string
//!   encodings (nested `config_db.json` and flat `asic_table.json` shapes), with errors naming
//!   table, key and field; the real ASIC parameters per generation.
//! - [`model`]: headroom models behind one trait ([`model::HeadroomModel`]): `mellanox`
//!   (bit-compatible with SONiC's plugin), `generic` (the design's well-known formula), `dsh`
//!   (Dynamic and Shared Headroom, with its switch-level plan).
//! - [`pool`]: shared buffer pool sizes and shared headroom pool (SONiC's pool plugin),
//!   including the fallback path, and what buffermgrd writes from the result.
//! - [`check`]: the per-port maximum-headroom check.
//! - [`validate`]: what SONiC's YANG models and `config` CLI refuse in a typed CONFIG_DB (id
//!   ranges, bounds), the one validation of every `headroom sonic` command.
//! - [`naming`]: dynamic profile names and platform model numbers.
//! - [`render`]: the steady-state APPL_DB for a configuration snapshot.
//! - [`defaults`]: SONiC's default dynamic-mode configuration and zero profiles.
//! - [`lua`]: Lua 5.1 number parsing/printing as SONiC's plugins see it.
//! - [`swss`]: the swss-common Redis table protocol (key formats, ProducerStateTable writes,
//!   keyspace notifications), the only module that talks to Redis.
//! - [`daemon`]: `bufmgrd`, the [`bufmgr`] state machine driven from Redis through [`swss`]
//!   (event loop, reconnection and reconciliation, benchmark).
//!
//! Everything except [`swss`] and [`daemon`] is sans-IO and deterministic (`BTreeMap` everywhere).
//! Section numbers (§) refer to the behaviour spec `sonic-buffer.md`.

pub mod bufmgr;
pub mod check;
pub mod daemon;
pub mod defaults;
pub mod lua;
pub mod model;
pub mod naming;
pub mod pool;
pub mod render;
pub mod swss;
pub mod tables;
pub mod validate;
