//! Cell accounting of one shared-memory switch (its MMU), and the PFC decisions it drives.
//!
//! Every packet is accounted twice: against its ingress priority group (PG: ingress port,
//! priority) and against its egress queue (egress port, priority). Ingress accounting
//! drives PFC; egress accounting drives lossy drops.
//!
//! Ingress regions of a PG, used in this order on admission:
//! 1. **private** (guaranteed) cells, up to `private_bytes` per PG;
//! 2. **shared** cells from the one shared pool, while the PG is not in XOFF;
//! 3. **headroom** cells (lossless PGs only) while it is in XOFF, up to the PG's eta.
//!
//! The dynamic threshold of a PG on port `p` is `T = alpha_p × free`, where
//! `free = shared_pool − Σ shared occupancy`. A lossless PG goes to XOFF when it holds
//! headroom, or when its shared occupancy `ω > 0` and `ω ≥ T`; it returns to XON when it holds
//! no headroom and `ω = 0` or `ω + xon_offset ≤ T`. Thresholds are re-evaluated for every
//! congested PG at *every* admission and release anywhere in the switch, because `T` moves
//! with the free buffer (a queue can cross XOFF because another port filled the buffer).
//!
//! Release order: a departing packet frees exactly the cells of the region it was admitted
//! to (its [`Placement`]). This is the "region of admission" policy: a packet admitted to
//! headroom frees headroom, even if older packets of the same PG sit in shared.
//!
//! Invariants (checked by [`Mmu::check_conservation`] and the tests):
//! - cells allocated = cells freed + cells resident, and the per-PG, per-egress-queue and
//!   per-region sums agree;
//! - shared occupancy never exceeds the shared pool, headroom never exceeds its limits;
//! - transitions of a PG alternate Pause/Resume, starting with Pause.

use super::alpha::Alpha;
use crate::PRIORITIES;
use serde::Serialize;

/// How headroom is provided. Further schemes (SHP, DSH) are added as variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum HeadroomScheme {
    /// Static, individual headroom: eta reserved for every lossless PG; Xoff = T,
    /// Xon = T − offset.
    Sih {
        /// Where the reservation is counted.
        reservation: Reservation,
    },
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
    /// Private (guaranteed) bytes per ingress PG.
    pub private_bytes: u64,
    /// Headroom (eta) in bytes per lossless PG, one entry per port.
    pub headroom_bytes: Vec<u64>,
    /// Ingress alpha per port.
    pub alpha: Vec<Alpha>,
    /// Egress alpha for lossy queues: a lossy packet is dropped when its egress queue would
    /// exceed `egress_alpha × free`.
    pub egress_alpha: Alpha,
    /// XON hysteresis in bytes: RESUME when `ω + offset ≤ T`.
    pub xon_offset_bytes: u64,
    /// Bit i set: priority i is lossless (PFC-enabled).
    pub lossless: u8,
    /// Headroom scheme.
    pub scheme: HeadroomScheme,
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
    /// `headroom_bytes` and `alpha` must both have one entry per port.
    #[error("per-port vectors disagree: {headroom} headroom entries, {alpha} alpha entries")]
    PortCount {
        /// Entries in `headroom_bytes`.
        headroom: usize,
        /// Entries in `alpha`.
        alpha: usize,
    },
    /// Cell size zero.
    #[error("cell size must be at least 1 byte")]
    ZeroCell,
}

/// Where a packet's cells were counted on ingress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Region {
    /// The PG's guaranteed cells.
    Private,
    /// The shared pool.
    Shared,
    /// Headroom.
    Headroom,
}

/// The ingress region and cell count of an admitted packet; hand it back on release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Region the cells were taken from.
    pub region: Region,
    /// Number of cells.
    pub cells: u32,
}

/// Why a packet was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum DropCause {
    /// Lossless PG in XOFF with its headroom full: a sizing error, never expected.
    HeadroomExhausted,
    /// Lossy packet over its egress queue's dynamic threshold.
    EgressThreshold,
    /// Lossy packet with no private cell and no free shared cell.
    BufferFull,
}

impl DropCause {
    /// Stable lower-case name for outputs.
    pub fn name(self) -> &'static str {
        match self {
            DropCause::HeadroomExhausted => "headroom_exhausted",
            DropCause::EgressThreshold => "egress_threshold",
            DropCause::BufferFull => "buffer_full",
        }
    }
}

/// A lossless PG changed PFC state; the driver sends the frame upstream on `port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PgTransition {
    /// Ingress port.
    pub port: u16,
    /// Priority.
    pub prio: u8,
    /// `true`: entered XOFF (send PAUSE); `false`: left it (RESUME).
    pub pause: bool,
}

/// Occupancy of one ingress PG, in cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PgOccupancy {
    /// Private cells held.
    pub private: u32,
    /// Shared cells held (omega).
    pub shared: u32,
    /// Headroom cells held.
    pub headroom: u32,
    /// In XOFF.
    pub xoff: bool,
    /// Highest shared occupancy seen.
    pub peak_shared: u32,
    /// Highest headroom occupancy seen.
    pub peak_headroom: u32,
}

/// The MMU of one switch.
#[derive(Clone, Debug)]
pub struct Mmu {
    cell_bytes: u32,
    ports: usize,
    lossless: u8,
    private_cells: u32,
    headroom_cells: Vec<u32>,
    xon_offset_cells: u32,
    alpha: Vec<f64>,
    egress_alpha: f64,
    reservation: Reservation,
    shared_pool: u64,
    total_cells: u64,
    shared_used: u64,
    private_used: u64,
    headroom_used: u64,
    port_headroom: Vec<u32>,
    pgs: Vec<PgOccupancy>,
    egress: Vec<u32>,
    /// Lossless PGs holding shared or headroom cells, or in XOFF: the only ones whose PFC
    /// state can change. Kept small so re-evaluation at every event stays cheap.
    active: Vec<u32>,
    in_active: Vec<bool>,
    allocated: u64,
    freed: u64,
    peak_used: u64,
}

impl Mmu {
    /// Builds the MMU, checking that the reservations fit in the buffer.
    pub fn new(cfg: &MmuConfig) -> Result<Mmu, MmuError> {
        if cfg.cell_bytes == 0 {
            return Err(MmuError::ZeroCell);
        }
        if cfg.headroom_bytes.len() != cfg.alpha.len() {
            return Err(MmuError::PortCount {
                headroom: cfg.headroom_bytes.len(),
                alpha: cfg.alpha.len(),
            });
        }
        let ports = cfg.alpha.len();
        let cell = u64::from(cfg.cell_bytes);
        let cells = |b: u64| u32::try_from(b.div_ceil(cell)).unwrap_or(u32::MAX);
        let total_cells = cfg.buffer_bytes / cell;
        let private_cells = cells(cfg.private_bytes);
        let headroom_cells: Vec<u32> = cfg.headroom_bytes.iter().map(|b| cells(*b)).collect();
        let n_lossless = u64::from(cfg.lossless.count_ones());
        let HeadroomScheme::Sih { reservation } = cfg.scheme;
        let per_port_factor = match reservation {
            Reservation::PerPg => n_lossless,
            Reservation::PerPort => u64::from(n_lossless > 0),
        };
        let reserved_headroom: u64 = headroom_cells
            .iter()
            .map(|h| u64::from(*h) * per_port_factor)
            .sum();
        let reserved_private = u64::from(private_cells) * (ports * PRIORITIES) as u64;
        let reserved = reserved_headroom + reserved_private;
        if reserved >= total_cells {
            return Err(MmuError::OverCommitted {
                reserved: reserved * cell,
                private: reserved_private * cell,
                headroom: reserved_headroom * cell,
                buffer: cfg.buffer_bytes,
            });
        }
        Ok(Mmu {
            cell_bytes: cfg.cell_bytes,
            ports,
            lossless: cfg.lossless,
            private_cells,
            headroom_cells,
            xon_offset_cells: cells(cfg.xon_offset_bytes),
            alpha: cfg.alpha.iter().map(|a| a.value()).collect(),
            egress_alpha: cfg.egress_alpha.value(),
            reservation,
            shared_pool: total_cells - reserved,
            total_cells,
            shared_used: 0,
            private_used: 0,
            headroom_used: 0,
            port_headroom: vec![0; ports],
            pgs: vec![PgOccupancy::default(); ports * PRIORITIES],
            egress: vec![0; ports * PRIORITIES],
            active: Vec::with_capacity(ports * PRIORITIES),
            in_active: vec![false; ports * PRIORITIES],
            allocated: 0,
            freed: 0,
            peak_used: 0,
        })
    }

    /// Cells a packet of `bytes` occupies.
    pub fn cells_for(&self, bytes: u64) -> u32 {
        u32::try_from(bytes.div_ceil(u64::from(self.cell_bytes))).unwrap_or(u32::MAX)
    }

    /// Whether `prio` is lossless.
    pub fn is_lossless(&self, prio: u8) -> bool {
        self.lossless & (1 << prio) != 0
    }

    fn free_shared(&self) -> u64 {
        self.shared_pool - self.shared_used
    }

    /// The current dynamic threshold of a PG on `port`, in cells.
    pub fn threshold_cells(&self, port: usize) -> u64 {
        (self.free_shared() as f64 * self.alpha[port]) as u64
    }

    /// Admits a packet of `bytes` arriving on (`in_port`, `prio`) for egress `out_port`, or
    /// says why it is dropped. PFC transitions it causes anywhere in the switch are appended
    /// to `out`.
    pub fn admit(
        &mut self,
        in_port: usize,
        prio: u8,
        out_port: usize,
        bytes: u64,
        out: &mut Vec<PgTransition>,
    ) -> Result<Placement, DropCause> {
        let cells = self.cells_for(bytes);
        let pgi = in_port * PRIORITIES + usize::from(prio);
        let qi = out_port * PRIORITIES + usize::from(prio);
        let lossless = self.is_lossless(prio);
        let pg = self.pgs[pgi];
        let region = if pg.private + cells <= self.private_cells {
            Region::Private
        } else if lossless {
            if !pg.xoff && self.free_shared() >= u64::from(cells) {
                Region::Shared
            } else if self.headroom_fits(in_port, pg.headroom, cells) {
                Region::Headroom
            } else {
                return Err(DropCause::HeadroomExhausted);
            }
        } else {
            let limit = self.free_shared() as f64 * self.egress_alpha;
            if f64::from(self.egress[qi] + cells) > limit {
                return Err(DropCause::EgressThreshold);
            }
            if self.free_shared() < u64::from(cells) {
                return Err(DropCause::BufferFull);
            }
            Region::Shared
        };
        let pg = &mut self.pgs[pgi];
        match region {
            Region::Private => {
                pg.private += cells;
                self.private_used += u64::from(cells);
            }
            Region::Shared => {
                pg.shared += cells;
                pg.peak_shared = pg.peak_shared.max(pg.shared);
                self.shared_used += u64::from(cells);
            }
            Region::Headroom => {
                pg.headroom += cells;
                pg.peak_headroom = pg.peak_headroom.max(pg.headroom);
                self.headroom_used += u64::from(cells);
                self.port_headroom[in_port] += cells;
            }
        }
        self.egress[qi] += cells;
        self.allocated += u64::from(cells);
        self.peak_used = self.peak_used.max(self.used_cells());
        if lossless && region != Region::Private && !self.in_active[pgi] {
            self.in_active[pgi] = true;
            self.active.push(pgi as u32);
        }
        self.evaluate(out);
        Ok(Placement { region, cells })
    }

    fn headroom_fits(&self, port: usize, held: u32, cells: u32) -> bool {
        let limit = self.headroom_cells[port];
        let pg_ok = held + cells <= limit;
        match self.reservation {
            Reservation::PerPg => pg_ok,
            Reservation::PerPort => pg_ok && self.port_headroom[port] + cells <= limit,
        }
    }

    /// Releases a packet admitted with `placement` (it left the switch).
    pub fn release(
        &mut self,
        in_port: usize,
        prio: u8,
        out_port: usize,
        placement: Placement,
        out: &mut Vec<PgTransition>,
    ) {
        let pgi = in_port * PRIORITIES + usize::from(prio);
        let qi = out_port * PRIORITIES + usize::from(prio);
        let cells = placement.cells;
        let pg = &mut self.pgs[pgi];
        match placement.region {
            Region::Private => {
                pg.private -= cells;
                self.private_used -= u64::from(cells);
            }
            Region::Shared => {
                pg.shared -= cells;
                self.shared_used -= u64::from(cells);
            }
            Region::Headroom => {
                pg.headroom -= cells;
                self.headroom_used -= u64::from(cells);
                self.port_headroom[in_port] -= cells;
            }
        }
        self.egress[qi] -= cells;
        self.freed += u64::from(cells);
        self.evaluate(out);
    }

    /// Re-evaluates XOFF/XON of every congested PG against the current threshold.
    fn evaluate(&mut self, out: &mut Vec<PgTransition>) {
        let free = self.free_shared() as f64;
        let mut i = 0;
        while i < self.active.len() {
            let pgi = self.active[i] as usize;
            let port = pgi / PRIORITIES;
            let t = (free * self.alpha[port]) as u64;
            let pg = &mut self.pgs[pgi];
            let shared = u64::from(pg.shared);
            if !pg.xoff {
                if pg.headroom > 0 || (shared > 0 && shared >= t) {
                    pg.xoff = true;
                    out.push(PgTransition {
                        port: port as u16,
                        prio: (pgi % PRIORITIES) as u8,
                        pause: true,
                    });
                }
            } else if pg.headroom == 0
                && (shared == 0 || shared + u64::from(self.xon_offset_cells) <= t)
            {
                pg.xoff = false;
                out.push(PgTransition {
                    port: port as u16,
                    prio: (pgi % PRIORITIES) as u8,
                    pause: false,
                });
            }
            if !pg.xoff && pg.shared == 0 && pg.headroom == 0 {
                self.in_active[pgi] = false;
                self.active.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Occupancy of a PG.
    pub fn pg(&self, port: usize, prio: u8) -> PgOccupancy {
        self.pgs[port * PRIORITIES + usize::from(prio)]
    }

    /// Cells queued for egress (`port`, `prio`).
    pub fn egress_cells(&self, port: usize, prio: u8) -> u32 {
        self.egress[port * PRIORITIES + usize::from(prio)]
    }

    /// Cells in use in all regions.
    pub fn used_cells(&self) -> u64 {
        self.private_used + self.shared_used + self.headroom_used
    }

    /// Highest number of cells ever in use at once.
    pub fn peak_used_cells(&self) -> u64 {
        self.peak_used
    }

    /// Cells of the shared pool (buffer minus reservations).
    pub fn shared_pool_cells(&self) -> u64 {
        self.shared_pool
    }

    /// Shared cells in use.
    pub fn shared_used_cells(&self) -> u64 {
        self.shared_used
    }

    /// Headroom cells in use.
    pub fn headroom_used_cells(&self) -> u64 {
        self.headroom_used
    }

    /// Total cells of the buffer.
    pub fn total_cells(&self) -> u64 {
        self.total_cells
    }

    /// Cell size in bytes.
    pub fn cell_bytes(&self) -> u32 {
        self.cell_bytes
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// Cells allocated and freed since the start.
    pub fn allocated_freed(&self) -> (u64, u64) {
        (self.allocated, self.freed)
    }

    /// Checks that every way of counting the resident cells agrees.
    pub fn check_conservation(&self) -> Result<(), String> {
        let resident = self.used_cells();
        if self.allocated != self.freed + resident {
            return Err(format!(
                "allocated {} != freed {} + resident {}",
                self.allocated, self.freed, resident
            ));
        }
        let (mut p, mut s, mut h) = (0u64, 0u64, 0u64);
        for pg in &self.pgs {
            p += u64::from(pg.private);
            s += u64::from(pg.shared);
            h += u64::from(pg.headroom);
        }
        if (p, s, h) != (self.private_used, self.shared_used, self.headroom_used) {
            return Err(format!(
                "PG sums (private {p}, shared {s}, headroom {h}) disagree with totals ({}, {}, {})",
                self.private_used, self.shared_used, self.headroom_used
            ));
        }
        let eg: u64 = self.egress.iter().map(|c| u64::from(*c)).sum();
        if eg != resident {
            return Err(format!("egress sum {eg} != resident {resident}"));
        }
        if self.shared_used > self.shared_pool {
            return Err(format!(
                "shared {} over pool {}",
                self.shared_used, self.shared_pool
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cfg(ports: usize) -> MmuConfig {
        MmuConfig {
            cell_bytes: 100,
            buffer_bytes: 100_000,
            private_bytes: 200,
            headroom_bytes: vec![1_000; ports],
            alpha: vec![Alpha::from_value(1.0).expect("positive"); ports],
            egress_alpha: Alpha::from_value(1.0).expect("positive"),
            xon_offset_bytes: 200,
            lossless: 1 << 3,
            scheme: HeadroomScheme::Sih {
                reservation: Reservation::PerPg,
            },
        }
    }

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

    #[test]
    fn fills_private_then_shared_then_pauses_into_headroom() {
        let mut m = Mmu::new(&cfg(2)).expect("fits");
        let mut tr = Vec::new();
        let p = |m: &mut Mmu, tr: &mut Vec<PgTransition>| m.admit(0, 3, 1, 100, tr);
        assert_eq!(p(&mut m, &mut tr).map(|p| p.region), Ok(Region::Private));
        assert_eq!(p(&mut m, &mut tr).map(|p| p.region), Ok(Region::Private));
        // Pool = 1000 - 32 - 2*10 = 948 cells; alpha 1: XOFF once omega >= 948 - omega.
        let mut n = 0;
        while tr.is_empty() {
            assert_eq!(p(&mut m, &mut tr).map(|p| p.region), Ok(Region::Shared));
            n += 1;
        }
        assert_eq!(n, 474, "omega = 474 >= T = 948 - 474");
        assert_eq!(
            tr,
            vec![PgTransition {
                port: 0,
                prio: 3,
                pause: true
            }]
        );
        // Now in XOFF: arrivals go to headroom, 10 cells of it, then drop.
        for _ in 0..10 {
            assert_eq!(p(&mut m, &mut tr).map(|p| p.region), Ok(Region::Headroom));
        }
        assert_eq!(p(&mut m, &mut tr), Err(DropCause::HeadroomExhausted));
        assert_eq!(tr.len(), 1);
        m.check_conservation().expect("conserved");
    }

    #[test]
    fn resumes_below_threshold_minus_offset_after_headroom_drains() {
        let mut m = Mmu::new(&cfg(2)).expect("fits");
        let mut tr = Vec::new();
        let mut placed = Vec::new();
        while tr.is_empty() {
            placed.push(m.admit(0, 3, 1, 100, &mut tr).expect("admitted"));
        }
        let h = m.admit(0, 3, 1, 100, &mut tr).expect("headroom");
        assert_eq!(h.region, Region::Headroom);
        tr.clear();
        // Releasing shared cells alone does not resume while headroom is held.
        let last = placed.pop().expect("some");
        m.release(0, 3, 1, last, &mut tr);
        assert!(tr.is_empty());
        m.release(0, 3, 1, h, &mut tr);
        // omega = 473, T = 948 - 473 = 475: 473 + 2 > 475? no: 475 <= 475 resumes.
        assert_eq!(
            tr,
            vec![PgTransition {
                port: 0,
                prio: 3,
                pause: false
            }]
        );
        m.check_conservation().expect("conserved");
    }

    #[test]
    fn another_port_filling_the_buffer_pauses_an_idle_queue() {
        let mut c = cfg(3);
        c.alpha = vec![Alpha::from_value(0.25).expect("positive"); 3];
        let mut m = Mmu::new(&c).expect("fits");
        let mut tr = Vec::new();
        // Port 0 holds some shared cells well below its threshold.
        for _ in 0..2 + 150 {
            m.admit(0, 3, 2, 100, &mut tr).expect("admitted");
        }
        assert!(tr.is_empty());
        // Port 1 (lossy priority 0) fills the buffer: T of port 0 falls below its omega.
        let mut k = 0;
        while tr.is_empty() && k < 2_000 {
            if m.admit(1, 0, 2, 100, &mut tr).is_err() {
                break;
            }
            k += 1;
        }
        assert_eq!(
            tr,
            vec![PgTransition {
                port: 0,
                prio: 3,
                pause: true
            }]
        );
    }

    #[test]
    fn lossy_drops_at_egress_threshold() {
        let mut m = Mmu::new(&cfg(2)).expect("fits");
        let mut tr = Vec::new();
        let mut dropped = None;
        for _ in 0..2_000 {
            if let Err(e) = m.admit(0, 0, 1, 100, &mut tr) {
                dropped = Some(e);
                break;
            }
        }
        assert_eq!(dropped, Some(DropCause::EgressThreshold));
        assert!(tr.is_empty(), "lossy traffic never pauses");
        m.check_conservation().expect("conserved");
    }

    proptest! {
        #[test]
        fn cells_are_conserved_and_transitions_alternate(
            ops in proptest::collection::vec((0usize..3, 0u8..8, 0usize..3, 1u64..3000, any::<bool>()), 1..400)
        ) {
            let mut c = cfg(3);
            c.lossless = 0b0001_1000;
            let mut m = Mmu::new(&c).expect("fits");
            let mut tr = Vec::new();
            let mut held: Vec<(usize, u8, usize, Placement)> = Vec::new();
            let mut paused = [false; 24];
            for (inp, prio, outp, bytes, release) in ops {
                if release && !held.is_empty() {
                    let (i, p, o, pl) = held.remove(bytes as usize % held.len());
                    m.release(i, p, o, pl, &mut tr);
                } else if let Ok(pl) = m.admit(inp, prio, outp, bytes, &mut tr) {
                    held.push((inp, prio, outp, pl));
                }
                for t in tr.drain(..) {
                    let k = usize::from(t.port) * 8 + usize::from(t.prio);
                    prop_assert_ne!(paused[k], t.pause, "transition must alternate");
                    paused[k] = t.pause;
                }
                prop_assert!(m.check_conservation().is_ok(), "{:?}", m.check_conservation());
                prop_assert!(m.shared_used_cells() <= m.shared_pool_cells());
            }
            for (i, p, o, pl) in held.drain(..) {
                m.release(i, p, o, pl, &mut tr);
            }
            prop_assert_eq!(m.used_cells(), 0);
            for t in tr.drain(..) {
                let k = usize::from(t.port) * 8 + usize::from(t.prio);
                prop_assert_ne!(paused[k], t.pause);
                paused[k] = t.pause;
            }
            prop_assert!(paused.iter().all(|p| !p), "every PG resumes once empty");
        }
    }
}
