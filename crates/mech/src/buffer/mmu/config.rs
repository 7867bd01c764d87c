//! What an MMU is built from (its configuration: scheme, reservations, thresholds) and
//! building one: the reservations are checked against the buffer, and everything the hot
//! paths read is derived once here (cells, bounds, the evaluation shortcuts).

use super::{IngressPort, Levels, Mmu, PgOccupancy, PortBits, PortOccupancy};
use crate::buffer::alpha::Alpha;
use crate::PRIORITIES;
use serde::Serialize;

/// How headroom is provided.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum HeadroomScheme {
    /// Static, individual headroom: eta reserved for every lossless PG.
    Sih {
        /// Where the reservation is counted.
        reservation: Reservation,
    },
    /// A headroom pool shared by all lossless PGs.
    Shp {
        /// Size of the pool in bytes.
        pool_bytes: u64,
    },
    /// Dynamic and shared headroom: insurance eta per port, headroom from the shared pool.
    Dsh {
        /// Queue-level hysteresis δq in bytes.
        delta_q_bytes: u64,
        /// Port-level hysteresis δp in bytes.
        delta_p_bytes: u64,
    },
}

impl HeadroomScheme {
    /// Short lower-case name: `sih`, `shp`, `dsh`.
    pub fn name(&self) -> &'static str {
        match self {
            HeadroomScheme::Sih { .. } => "sih",
            HeadroomScheme::Shp { .. } => "shp",
            HeadroomScheme::Dsh { .. } => "dsh",
        }
    }
}

/// How static headroom is reserved out of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Reservation {
    /// eta per lossless PG, each PG limited to its own eta (SIH proper).
    PerPg,
    /// eta once per port, shared by the port's lossless PGs (the ns-3 HPCC simulator's
    /// switch model). The port's PGs together hold at most eta of headroom.
    PerPort,
}

/// Configuration of one switch's MMU.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MmuConfig {
    /// Cell size in bytes.
    pub cell_bytes: u32,
    /// Total buffer in bytes.
    pub buffer_bytes: u64,
    /// Private (guaranteed) space of each ingress port's PGs, one entry per port.
    pub private: Vec<PrivateReservation>,
    /// eta in bytes, one entry per port: per lossless PG (SIH, SHP) or per port (DSH).
    pub headroom_bytes: Vec<u64>,
    /// Ingress alpha per port.
    pub alpha: Vec<Alpha>,
    /// Egress alpha for lossy queues: a lossy packet is dropped when its egress queue would
    /// exceed `egress_alpha × free`.
    pub egress_alpha: Alpha,
    /// XON hysteresis of SIH and SHP in bytes: RESUME when `ω + offset ≤ T`.
    pub xon_offset_bytes: u64,
    /// Bit i set: priority i is lossless (PFC-enabled).
    pub lossless: u8,
    /// Headroom scheme.
    pub scheme: HeadroomScheme,
    /// Fixed PFC thresholds instead of the dynamic one (SIH and SHP only).
    pub static_thresholds: Option<StaticThresholds>,
}

/// Fixed PFC thresholds of every lossless ingress PG, in place of the dynamic threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StaticThresholds {
    /// XOFF when the PG's shared occupancy reaches this (rounded up to whole cells).
    pub xoff_bytes: u64,
    /// XON when it falls to this or below (rounded down to whole cells); below `xoff_bytes`.
    pub xon_bytes: u64,
}

/// The private (guaranteed) space of one ingress port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PrivateReservation {
    /// Private bytes per PG that has them.
    pub bytes: u64,
    /// Bit i set: PG i has them (every PG of a PFC port; the data VLs of a credit port,
    /// whose receive buffers they are). A PG without them takes every cell from the shared
    /// buffer.
    pub pgs: u8,
}

/// Why an MMU configuration is unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MmuError {
    /// Private and headroom reservations leave no shared buffer.
    #[error(
        "reservations ({reserved} B: private {private} B + headroom {headroom} B) leave no \
         shared buffer out of {buffer} B"
    )]
    OverCommitted {
        /// Bytes reserved in total.
        reserved: u64,
        /// Of which private.
        private: u64,
        /// Of which headroom.
        headroom: u64,
        /// The buffer size.
        buffer: u64,
    },
    /// `headroom_bytes`, `alpha` and `private` must all have one entry per port.
    #[error(
        "per-port vectors disagree: {headroom} headroom entries, {alpha} alpha entries, \
         {private} private entries"
    )]
    PortCount {
        /// Entries in `headroom_bytes`.
        headroom: usize,
        /// Entries in `alpha`.
        alpha: usize,
        /// Entries in `private`.
        private: usize,
    },
    /// Cell size zero.
    #[error("cell size must be at least 1 byte")]
    ZeroCell,
    /// A buffer of 2^32 cells or more: every count of cells is 32-bit.
    #[error(
        "a buffer of {cells} cells is too large: at most {max} cells (a larger cell size \
         holds more bytes)",
        max = u32::MAX - 1
    )]
    TooManyCells {
        /// Cells the buffer would hold.
        cells: u64,
    },
    /// Static thresholds that cannot work: XON not below XOFF, or with DSH (whose
    /// thresholds are dynamic by design).
    #[error("static PFC thresholds: {0}")]
    StaticThresholds(&'static str),
}

impl Mmu {
    /// Builds the MMU, checking that the reservations fit in the buffer.
    pub fn new(cfg: &MmuConfig) -> Result<Mmu, MmuError> {
        if cfg.cell_bytes == 0 {
            return Err(MmuError::ZeroCell);
        }
        if cfg.headroom_bytes.len() != cfg.alpha.len() || cfg.private.len() != cfg.alpha.len() {
            return Err(MmuError::PortCount {
                headroom: cfg.headroom_bytes.len(),
                alpha: cfg.alpha.len(),
                private: cfg.private.len(),
            });
        }
        let ports = cfg.alpha.len();
        let cell = u64::from(cfg.cell_bytes);
        let static_cells = match cfg.static_thresholds {
            None => None,
            Some(_) if matches!(cfg.scheme, HeadroomScheme::Dsh { .. }) => {
                return Err(MmuError::StaticThresholds(
                    "DSH's thresholds are dynamic by design; use SIH or SHP",
                ))
            }
            Some(s) if s.xon_bytes >= s.xoff_bytes => {
                return Err(MmuError::StaticThresholds("XON must be below XOFF"))
            }
            Some(s) => {
                let xoff = u32::try_from(s.xoff_bytes.div_ceil(cell)).unwrap_or(u32::MAX);
                let xon = u32::try_from(s.xon_bytes / cell).unwrap_or(u32::MAX);
                Some((xoff.max(1), xon.min(xoff.max(1) - 1)))
            }
        };
        let cells = |b: u64| u32::try_from(b.div_ceil(cell)).unwrap_or(u32::MAX);
        let total_cells = cfg.buffer_bytes / cell;
        if total_cells >= u64::from(u32::MAX) {
            return Err(MmuError::TooManyCells { cells: total_cells });
        }
        let private_cap: Box<[u32]> = cfg
            .private
            .iter()
            .flat_map(|r| {
                let c = cells(r.bytes);
                (0..PRIORITIES).map(move |pg| if r.pgs & (1 << pg) != 0 { c } else { 0 })
            })
            .collect();
        let headroom_cells: Vec<u32> = cfg.headroom_bytes.iter().map(|b| cells(*b)).collect();
        let n_lossless = u64::from(cfg.lossless.count_ones());
        let per_port: u64 = headroom_cells.iter().map(|h| u64::from(*h)).sum();
        let (reserved_headroom, hpool, delta_q, delta_p) = match cfg.scheme {
            HeadroomScheme::Sih {
                reservation: Reservation::PerPg,
            } => (per_port * n_lossless, 0, 0, 0),
            HeadroomScheme::Sih {
                reservation: Reservation::PerPort,
            } => (per_port * u64::from(n_lossless > 0), 0, 0, 0),
            HeadroomScheme::Shp { pool_bytes } => {
                let pool = pool_bytes.div_ceil(cell);
                (pool, pool, 0, 0)
            }
            HeadroomScheme::Dsh {
                delta_q_bytes,
                delta_p_bytes,
            } => (
                per_port * u64::from(n_lossless > 0),
                0,
                delta_q_bytes.div_ceil(cell),
                delta_p_bytes.div_ceil(cell),
            ),
        };
        let reserved_private: u64 = private_cap.iter().map(|&c| u64::from(c)).sum();
        // Saturating: an SHP pool may be sized up to u64::MAX bytes (a tiny
        // over-subscription ratio), which is over-committed, not an overflow.
        let reserved = reserved_headroom.saturating_add(reserved_private);
        if reserved >= total_cells {
            return Err(MmuError::OverCommitted {
                reserved: reserved.saturating_mul(cell),
                private: reserved_private.saturating_mul(cell),
                headroom: reserved_headroom.saturating_mul(cell),
                buffer: cfg.buffer_bytes,
            });
        }
        Ok(Mmu {
            cell_bytes: cfg.cell_bytes,
            ports,
            lossless: cfg.lossless,
            n_lossless,
            scheme: cfg.scheme,
            private_per_port: cfg.private.windows(2).any(|w| w[0] != w[1]),
            private_cells: private_cap.iter().copied().max().unwrap_or(0),
            private_pgs: cfg.private.iter().fold(0, |m, r| m | r.pgs),
            reserved_private,
            // Static thresholds resume at `shared + offset <= XOFF`, i.e. `shared <= XON`.
            xon_offset_cells: static_cells
                .map_or(cells(cfg.xon_offset_bytes), |(xoff, xon)| xoff - xon),
            levels: match (cfg.scheme, static_cells) {
                (HeadroomScheme::Dsh { .. }, _) => Levels::Dsh,
                (_, Some((xoff, xon))) => Levels::Static { xoff, xon },
                (_, None) => Levels::Dynamic,
            },
            delta_q_cells: delta_q,
            delta_p_cells: delta_p,
            egress_alpha: cfg.egress_alpha.value(),
            shared_pool: total_cells - reserved,
            hpool,
            hpool_used: 0,
            total_cells,
            shared_used: 0,
            private_used: 0,
            headroom_used: 0,
            ingress: cfg
                .alpha
                .iter()
                .zip(&headroom_cells)
                .map(|(alpha, &headroom_cells)| IngressPort {
                    occupancy: PortOccupancy::default(),
                    xoff_bound: 0.0,
                    resume_bound: f64::INFINITY,
                    alpha: alpha.value(),
                    headroom_cells,
                    pgs_active: 0,
                    in_active_ports: false,
                })
                .collect(),
            pgs: private_cap
                .iter()
                .map(|&private_cap| PgOccupancy {
                    private_cap,
                    ..PgOccupancy::default()
                })
                .collect(),
            egress: vec![0; ports * PRIORITIES].into_boxed_slice(),
            egress_counted: u8::MAX,
            active: Vec::with_capacity(ports * PRIORITIES),
            port_bits_low: PortBits::default(),
            port_bits_high: vec![PortBits::default(); ports.div_ceil(64).saturating_sub(1)]
                .into_boxed_slice(),
            active_ports: Vec::with_capacity(ports),
            xoff_free_bound: 0.0,
            resume_free_bound: f64::INFINITY,
            scan_needed: false,
            flagged: Vec::new(),
            partial: Vec::new(),
            watch_headroom: 0,
            dsh: matches!(cfg.scheme, HeadroomScheme::Dsh { .. }),
            watch_lo: 0,
            watch_span: u32::MAX,
            allocated: 0,
            freed: 0,
            peak_used: 0,
            // Static thresholds do not move with the free buffer at all.
            private_skips_evaluate: matches!(cfg.scheme, HeadroomScheme::Dsh { .. })
                || cells(cfg.xon_offset_bytes) > 0
                || static_cells.is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::cfg;
    use super::*;

    #[test]
    fn reservations_shrink_the_shared_pool() {
        let m = Mmu::new(&cfg(4)).expect("fits");
        // 1000 cells - 4 ports * 8 PGs * 2 private - 4 ports * 1 lossless * 10 headroom.
        assert_eq!(m.shared_pool_cells(), 1000 - 64 - 40);
        let per_port = MmuConfig {
            scheme: HeadroomScheme::Sih {
                reservation: Reservation::PerPort,
            },
            lossless: 0b0001_1000,
            ..cfg(4)
        };
        assert_eq!(
            Mmu::new(&per_port).expect("fits").shared_pool_cells(),
            1000 - 64 - 40
        );
        let big = MmuConfig {
            headroom_bytes: vec![30_000; 4],
            ..cfg(4)
        };
        assert!(matches!(
            Mmu::new(&big),
            Err(MmuError::OverCommitted { .. })
        ));
    }

    /// Every count of cells is 32-bit: a buffer of 2^32 cells or more is refused, one
    /// cell below is built.
    #[test]
    fn a_buffer_of_2_to_the_32_cells_is_refused() {
        let mut c = cfg(2);
        c.cell_bytes = 1;
        c.buffer_bytes = u64::from(u32::MAX);
        assert_eq!(
            Mmu::new(&c).err(),
            Some(MmuError::TooManyCells {
                cells: u64::from(u32::MAX)
            })
        );
        c.buffer_bytes = u64::from(u32::MAX) - 1;
        assert!(Mmu::new(&c).is_ok());
    }

    #[test]
    fn static_thresholds_refuse_dsh_and_an_xon_not_below_xoff() {
        let mut c = cfg(2);
        c.static_thresholds = Some(StaticThresholds {
            xoff_bytes: 1_000,
            xon_bytes: 1_000,
        });
        assert!(matches!(Mmu::new(&c), Err(MmuError::StaticThresholds(_))));
        c.static_thresholds = Some(StaticThresholds {
            xoff_bytes: 1_000,
            xon_bytes: 500,
        });
        c.scheme = HeadroomScheme::Dsh {
            delta_q_bytes: 100,
            delta_p_bytes: 100,
        };
        assert!(matches!(Mmu::new(&c), Err(MmuError::StaticThresholds(_))));
    }
}
