//! Cell accounting of one shared-memory switch (its MMU), and the PFC decisions it drives.
//!
//! Every packet is accounted twice: against its ingress priority group (PG: ingress port,
//! priority) and against its egress queue (egress port, priority). Ingress accounting
//! drives PFC; egress accounting drives lossy drops.
//!
//! Ingress regions of a PG: **private** (guaranteed) cells up to its port's
//! [`PrivateReservation`], used first; **shared** cells from the one shared pool; **headroom** for the bytes that
//! still arrive after a PAUSE. Where headroom lives and when PAUSE is sent is the
//! [`HeadroomScheme`]:
//!
//! - **SIH** (static, individual headroom): eta reserved per lossless PG. A PG goes to XOFF
//!   when it holds headroom, or when its shared occupancy `ω > 0` and `ω ≥ T`; back to XON
//!   when it holds no headroom and `ω = 0` or `ω + xon_offset ≤ T`. In XOFF, arrivals go to
//!   its headroom (at most eta).
//! - **SHP** (shared headroom pool): the same thresholds, but headroom cells come from one
//!   pool shared by all PGs (each PG still at most eta). When the pool is empty a lossless
//!   packet is dropped ([`DropCause::HeadroomPoolExhausted`]): the risk SHP accepts.
//! - **DSH** (dynamic and shared headroom): eta of *insurance* headroom per port. Shared
//!   buffer holds headroom and footroom alike. Queue level: QOFF when `ω > T − eta`, QON when
//!   `ω < T − eta − δq`; arrivals of a QOFF queue still go to shared. Port level: POFF
//!   (pause every class) when `Σω > Nq × T`, PON when `Σω < Nq × T − δp` and the insurance
//!   is empty; arrivals of a POFF port go to its insurance headroom. An arrival the shared
//!   pool cannot take (a pool of a few frames) also goes to the insurance, and the port
//!   pauses at once (POFF whenever its insurance is in use), so the insurance holds that
//!   arrival and what follows the port-level pause, not a silent backlog.
//!
//! `T = alpha_p × free` with `free = shared_pool − Σ shared occupancy`, or, with
//! [`StaticThresholds`] (SIH and SHP only), a fixed XOFF level, and XON at a fixed level
//! below it instead of `ω + xon_offset ≤ T` (htsim's lossless input queues, and switches
//! configured with static PG limits). Dynamic thresholds are
//! re-evaluated for every congested PG (and port) at *every* admission and release anywhere
//! in the switch, because `T` moves with the free buffer: a queue can cross its threshold
//! because another port filled the buffer. The re-evaluation is skipped when it provably
//! changes nothing: an admission or release of private cells (see
//! `Mmu::private_skips_evaluate`), and any event that leaves the free cells between the
//! levels at which some PG or port would change state; a re-evaluation that cannot be
//! skipped revisits only the ports whose levels were crossed and those where headroom was
//! taken or emptied or a paused PG emptied (module `evaluate`). Where each packet's cells
//! go is module `admission`.
//!
//! Release order: a departing packet frees its PG's cells LIFO: headroom first, then shared,
//! then private (its [`Placement`] records only where it was admitted and how many cells).
//!
//! Invariants (checked by [`Mmu::check_conservation`] and the tests):
//! - cells allocated = cells freed + cells resident, and the per-PG, per-port, per-egress-queue
//!   and per-region sums agree;
//! - shared occupancy never exceeds the shared pool, headroom never exceeds its limits;
//! - transitions of a PG (and of a port) alternate pause/resume, starting with pause.

mod admission;
mod config;
mod evaluate;

pub use config::{
    HeadroomScheme, MmuConfig, MmuError, PrivateReservation, Reservation, StaticThresholds,
};

use crate::PRIORITIES;
use serde::Serialize;

/// How an MMU's PFC thresholds move, for the hot paths (one match instead of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Levels {
    /// SIH or SHP with the dynamic threshold `alpha x free`.
    Dynamic,
    /// SIH or SHP with static XOFF and XON levels, in cells.
    Static { xoff: u32, xon: u32 },
    /// DSH's queue and port levels.
    Dsh,
}

/// Where a packet's cells were counted on ingress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Region {
    /// The PG's guaranteed cells.
    Private,
    /// The shared pool.
    Shared,
    /// Headroom (the PG's own, the shared headroom pool, or the port's insurance).
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
    /// Lossless packet with its headroom (or its port's insurance) full: a sizing error.
    HeadroomExhausted,
    /// Lossless packet with the shared headroom pool (SHP) empty: the oversubscription risk.
    HeadroomPoolExhausted,
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
            DropCause::HeadroomPoolExhausted => "headroom_pool_exhausted",
            DropCause::EgressThreshold => "egress_threshold",
            DropCause::BufferFull => "buffer_full",
        }
    }
}

/// A PFC decision; the driver sends the frame upstream on `port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// One lossless PG entered (`pause`) or left XOFF/QOFF: pause or resume its class.
    Queue {
        /// Ingress port.
        port: u16,
        /// Priority.
        prio: u8,
        /// `true`: PAUSE; `false`: RESUME.
        pause: bool,
    },
    /// A whole port entered or left POFF (DSH): pause or resume every class.
    Port {
        /// Ingress port.
        port: u16,
        /// `true`: PAUSE all classes; `false`: RESUME.
        pause: bool,
    },
}

/// Occupancy of one ingress PG, in cells, the private cells it may hold and its place in
/// the MMU's list of congested PGs (beside its counts, so that an admission reads and
/// writes one record). 32 bytes: two records to a cache line, none across two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[repr(C, align(32))]
pub struct PgOccupancy {
    /// Private cells held.
    pub private: u32,
    /// Shared cells held (omega).
    pub shared: u32,
    /// Headroom cells held.
    pub headroom: u32,
    /// In XOFF (QOFF).
    pub xoff: bool,
    /// Highest shared occupancy seen.
    pub peak_shared: u32,
    /// Highest headroom occupancy seen.
    pub peak_headroom: u32,
    /// Private cells it may hold: its reservation (see [`PrivateReservation`]), or what a
    /// credit grant made of it (0: none).
    pub private_cap: u32,
    /// While the PG is in `Mmu::active`: its index there (transitions are reported in
    /// that order). Here rather than in a table of its own, whose line an admission that
    /// makes the PG congested missed (a large fabric's PGs go in and out of the list).
    #[serde(skip)]
    active_pos: u32,
}

/// Occupancy of one ingress port (DSH's port-level state), in cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PortOccupancy {
    /// Shared cells held by the port's lossless PGs (Σω).
    pub shared: u64,
    /// Headroom cells held by the port's PGs (DSH: its insurance).
    pub headroom: u32,
    /// In POFF.
    pub poff: bool,
    /// Highest headroom (insurance) occupancy seen.
    pub peak_headroom: u32,
}

/// What admissions, releases and evaluations read and write of one ingress port beside
/// the arriving packet's PG, in one cache line. A large fabric's switches hold more ports
/// than the caches do, and with one table per field an admission missed once per field it
/// read (a fat tree with k = 32: about four of its fifteen second-level misses per event).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct IngressPort {
    /// Its occupancy (DSH's port-level state).
    occupancy: PortOccupancy,
    /// The free shared cells at or above which none of its PGs in `active` that is not
    /// paused pauses (see `Mmu::xoff_free_bound`).
    xoff_bound: f64,
    /// The free shared cells below which each of its paused PGs in `active` stays paused.
    resume_bound: f64,
    /// Its alpha: the dynamic threshold's share of the free shared cells.
    alpha: f64,
    /// Its headroom (eta), in cells.
    headroom_cells: u32,
    /// Bit `prio`: its PG `prio` is in `active`.
    pgs_active: u8,
    /// DSH: it is in `active_ports`.
    in_active_ports: bool,
}

/// Two bits of each of 64 ingress ports, side by side so that an admission that sets one
/// and the evaluation after it that reads the other touch one cache line.
#[derive(Clone, Copy, Debug, Default)]
struct PortBits {
    /// Bit set: the port has a PG in `Mmu::active`. Only these ports have bounds other
    /// than `(0, ∞)`, so the scans and folds of per-port bounds visit these alone: usually
    /// a few of a switch's ports (loops over all of them made `evaluate_active` 14 % of a
    /// k = 24 fat tree's run; 4 % with the mask).
    in_active: u64,
    /// Bit set: the port is flagged for a visit of its PGs (`Mmu::flagged`).
    flagged: u64,
}

/// The MMU of one switch.
///
/// Laid out by cache line (`repr(C)`): a simulator touches many switches in turn, so what
/// an admission or release of private cells reads comes first, in two lines (line 0: the
/// per-PG, per-queue and per-port tables, the shared pool, the cell size, the lossless
/// classes; line 1: the counters, the occupancy watch and whether the scheme is DSH);
/// line 2 holds what shared cells add (the scheme, how thresholds move, the switch's
/// bounds), line 3 the congested PGs and ports, line 4 what a scan of them uses. The rest
/// is read rarely.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Mmu {
    pgs: Box<[PgOccupancy]>,
    egress: Box<[u32]>,
    /// Per ingress port: its occupancy, bounds and parameters.
    ingress: Box<[IngressPort]>,
    shared_pool: u64,
    cell_bytes: u32,
    lossless: u8,
    /// `evaluate` reaches a fixed point in one pass (no PG can satisfy its XOFF and XON
    /// conditions at once: DSH, or a non-zero XON offset). Then an admission or release that
    /// moves only private cells, which `evaluate` never reads, cannot change any PFC state,
    /// and skips the re-evaluation.
    private_skips_evaluate: bool,
    /// Ports differ in their private space (a switch with PFC and credit ports): a PG's
    /// is its `PgOccupancy::private_cap`, not `private_cells` and `private_pgs`.
    private_per_port: bool,
    private_pgs: u8,
    private_used: u64,
    shared_used: u64,
    headroom_used: u64,
    allocated: u64,
    freed: u64,
    /// Highest number of cells in use at once (a buffer holds fewer than 2^32 cells:
    /// `MmuError::TooManyCells`).
    peak_used: u32,
    /// Private cells of every PG in `private_pgs` when all ports have the same private
    /// space; the most of any PG and every PG that has some when they differ (then
    /// each PG has its own `private_cap`).
    private_cells: u32,
    /// The watched range of cells in use, `[watch_lo, watch_lo + watch_span)` (see
    /// `set_watch`); cells never reach `u32::MAX` (`MmuError::TooManyCells`). As a start
    /// and a span, one wrapping comparison tells whether the count left it.
    watch_lo: u32,
    watch_span: u32,
    /// Headroom cells in use when the occupancy watch was last set (see `set_watch`).
    watch_headroom: u32,
    /// The scheme is DSH: here, in the line every admission writes, so that an admission
    /// of private cells (whose one question about the scheme is this) does not read the
    /// line holding `scheme`.
    dsh: bool,
    /// Bit `q`: egress queues of class `q` keep a count of their cells (see
    /// [`Mmu::count_egress_of`]; all by default). Beside the counters every admission writes.
    egress_counted: u8,
    scheme: HeadroomScheme,
    /// How PFC thresholds move (the scheme and static thresholds, in one value for the
    /// hot paths).
    levels: Levels,
    egress_alpha: f64,
    /// What the last scan of `active` (and `active_ports`) found, so that the next can be
    /// skipped when it provably changes nothing. Every threshold is `alpha x free shared
    /// cells`, so each PG or port not paused stays so while the free cells stay at or above
    /// a level, and each paused one stays paused while they stay below a level:
    /// `xoff_free_bound` is an upper bound on the first levels (raised by every shared
    /// admission), `resume_free_bound` a lower bound on the second (lowered by every shared
    /// release; infinite when nothing is paused). Each ingress port keeps the same two
    /// levels over its own PGs in `active` (`IngressPort::xoff_bound` and `resume_bound`;
    /// not its DSH port-level state, which every scan visits), so that a scan rescans only
    /// the ports whose own levels the free cells crossed.
    xoff_free_bound: f64,
    resume_free_bound: f64,
    /// Lossless PGs holding shared or headroom cells, or paused: the only ones whose PFC
    /// state can change (each marked in its port's `IngressPort::pgs_active`). Kept small so
    /// re-evaluation at every event stays cheap.
    active: Vec<u32>,
    /// DSH: ports holding shared or insurance cells, or paused (each marked in its
    /// `IngressPort::in_active_ports`).
    active_ports: Vec<u32>,
    /// Two bits per ingress port, by words of 64 ports (see [`PortBits`]): the first word
    /// here, in the line of the lists it marks (a switch of up to 64 ports has no other),
    /// the others in `port_bits_high`. Read through `Mmu::bits` and `Mmu::bits_mut`.
    port_bits_low: PortBits,
    /// Words 1 and up of the port bits (ports 64 and up).
    port_bits_high: Box<[PortBits]>,
    /// Ingress ports where something happened that only a visit of their PGs handles
    /// (headroom taken or emptied, a congested PG emptied while paused or while a scan is
    /// owed anyway): the next evaluation visits their PGs besides those of the ports whose
    /// own levels the free cells crossed. Marked in `PortBits::flagged` too (which also
    /// marks the crossed ports during a scan).
    flagged: Vec<u32>,
    /// Something happened that only a scan of every congested PG handles (the shared pool
    /// resized by a grant).
    scan_needed: bool,
    /// Scratch of a partial scan: (index in `active`, transition).
    partial: Vec<(u32, Transition)>,
    ports: usize,
    n_lossless: u64,
    xon_offset_cells: u32,
    delta_q_cells: u64,
    delta_p_cells: u64,
    /// SHP: the headroom pool and its use.
    hpool: u64,
    hpool_used: u64,
    total_cells: u64,
    /// Private cells reserved on all ports.
    reserved_private: u64,
}

impl Mmu {
    /// Cells a packet of `bytes` occupies.
    pub fn cells_for(&self, bytes: u64) -> u32 {
        u32::try_from(bytes.div_ceil(u64::from(self.cell_bytes))).unwrap_or(u32::MAX)
    }

    /// Whether `prio` is lossless.
    pub fn is_lossless(&self, prio: u8) -> bool {
        self.lossless & (1 << prio) != 0
    }

    /// The headroom scheme.
    pub fn scheme(&self) -> HeadroomScheme {
        self.scheme
    }

    fn free_shared(&self) -> u64 {
        self.shared_pool - self.shared_used
    }

    /// Word `word` of the port bits (ports `64 word` to `64 word + 63`).
    #[inline(always)]
    fn bits(&self, word: usize) -> &PortBits {
        match word {
            0 => &self.port_bits_low,
            _ => &self.port_bits_high[word - 1],
        }
    }

    /// [`Mmu::bits`], to change.
    #[inline(always)]
    fn bits_mut(&mut self, word: usize) -> &mut PortBits {
        match word {
            0 => &mut self.port_bits_low,
            _ => &mut self.port_bits_high[word - 1],
        }
    }

    /// Words of port bits: one per 64 ports.
    fn bit_words(&self) -> usize {
        1 + self.port_bits_high.len()
    }

    /// The current threshold of a PG on `port` (dynamic, or the static XOFF), in cells.
    pub fn threshold_cells(&self, port: usize) -> u64 {
        self.threshold(port, self.free_shared() as f64)
    }

    /// Occupancy of a PG.
    pub fn pg(&self, port: usize, prio: u8) -> PgOccupancy {
        self.pgs[port * PRIORITIES + usize::from(prio)]
    }

    /// Occupancy of an ingress port.
    pub fn port(&self, port: usize) -> PortOccupancy {
        self.ingress[port].occupancy
    }

    /// `cells` queued for egress (`from_port`, `from_queue`) are queued for (`to_port`,
    /// `to_queue`) instead (a flow moved to another output). Their ingress accounting, and
    /// so every PFC decision, stays as it is.
    pub fn move_egress(
        &mut self,
        (from_port, from_queue): (usize, u8),
        (to_port, to_queue): (usize, u8),
        cells: u32,
    ) {
        if self.counts_egress(from_queue) {
            self.egress[from_port * PRIORITIES + usize::from(from_queue)] -= cells;
        }
        if self.counts_egress(to_queue) {
            self.egress[to_port * PRIORITIES + usize::from(to_queue)] += cells;
        }
    }

    /// Cells queued for egress (`port`, `queue`), if that class's queues keep a count (see
    /// [`Mmu::count_egress_of`]).
    pub fn egress_cells(&self, port: usize, queue: u8) -> Option<u32> {
        self.counts_egress(queue)
            .then(|| self.egress[port * PRIORITIES + usize::from(queue)])
    }

    /// Whether the egress queues of class `queue` count their cells.
    #[inline(always)]
    fn counts_egress(&self, queue: u8) -> bool {
        self.egress_counted & (1 << queue) != 0
    }

    /// Only the egress queues of the classes in `queues` (bit `q`: class `q`) count their
    /// cells from now on; the MMU starts with every class counted, and the others' counts
    /// stay as they are. An egress queue's count is read only to admit a lossy packet to
    /// it, so a caller whose lossy packets always go to queues of those classes (a switch
    /// whose packets leave in the class of their ingress priority, with `queues` the lossy
    /// classes) gives up nothing, and each lossless admission and release writes one cache
    /// line fewer (a large fabric's switches hold more egress counts than the caches do).
    /// Lossy packets for other classes are a caller's error (checked in debug builds).
    pub fn count_egress_of(&mut self, queues: u8) {
        self.egress_counted = queues;
    }

    /// Cells in use in all regions.
    pub fn used_cells(&self) -> u64 {
        self.private_used + self.shared_used + self.headroom_used
    }

    /// Cells in use, from the two counters in the line every admission and release writes
    /// (equal to [`Mmu::used_cells`] by conservation, which `check_conservation` checks).
    #[inline(always)]
    fn resident_cells(&self) -> u64 {
        self.allocated - self.freed
    }

    /// Watches the occupancy: until the next call, [`Mmu::occupancy_moved`] tells whether
    /// the cells in use have left `[lo, hi)` or the headroom cells in use have changed. An
    /// observer that only cares about ranges (a histogram of percents) asks this instead of
    /// keeping its own copy, which would be one more cache line per buffer change.
    pub fn set_watch(&mut self, lo: u64, hi: u64) {
        let lo = u32::try_from(lo).unwrap_or(u32::MAX);
        let hi = u32::try_from(hi).unwrap_or(u32::MAX);
        self.watch_lo = lo;
        // An empty range (hi <= lo) has every count outside it.
        self.watch_span = hi.saturating_sub(lo);
        self.watch_headroom = u32::try_from(self.headroom_used).unwrap_or(u32::MAX);
    }

    /// Whether the occupancy left the range given to [`Mmu::set_watch`] (see there).
    #[inline]
    pub fn occupancy_moved(&self) -> bool {
        let used = self.resident_cells();
        // Below the start wraps to above any span.
        used.wrapping_sub(u64::from(self.watch_lo)) >= u64::from(self.watch_span)
            || self.headroom_used != u64::from(self.watch_headroom)
    }

    /// Highest number of cells ever in use at once.
    pub fn peak_used_cells(&self) -> u64 {
        u64::from(self.peak_used)
    }

    /// Cells of the shared pool (buffer minus reservations).
    pub fn shared_pool_cells(&self) -> u64 {
        self.shared_pool
    }

    /// Cells reserved for headroom (per-PG eta, the SHP pool, or DSH insurance).
    pub fn headroom_reserved_cells(&self) -> u64 {
        self.total_cells - self.shared_pool - self.reserved_private
    }

    /// Private cells PG (`port`, `pg`) may hold.
    pub fn private_cap(&self, port: usize, pg: u8) -> u32 {
        if self.private_per_port {
            self.pgs[port * PRIORITIES + usize::from(pg)].private_cap
        } else if self.private_pgs & (1 << pg) != 0 {
            self.private_cells
        } else {
            0
        }
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
        for (port, ps) in self.ingress.iter().map(|i| i.occupancy).enumerate() {
            let pgs = &self.pgs[port * PRIORITIES..(port + 1) * PRIORITIES];
            let hs: u32 = pgs.iter().map(|pg| pg.headroom).sum();
            let ss: u64 = pgs
                .iter()
                .enumerate()
                .filter(|(prio, _)| self.lossless & (1 << prio) != 0)
                .map(|(_, pg)| u64::from(pg.shared))
                .sum();
            if hs != ps.headroom || ss != ps.shared {
                return Err(format!("port {port}: per-port sums disagree with its PGs"));
            }
        }
        // Queues of uncounted classes hold cells the sum leaves out.
        let eg: u64 = (0..self.egress.len())
            .filter(|qi| self.counts_egress((qi % PRIORITIES) as u8))
            .map(|qi| u64::from(self.egress[qi]))
            .sum();
        if eg > resident || (self.egress_counted == u8::MAX && eg != resident) {
            return Err(format!("egress sum {eg} != resident {resident}"));
        }
        if self.shared_used > self.shared_pool {
            return Err(format!(
                "shared {} over pool {}",
                self.shared_used, self.shared_pool
            ));
        }
        if self.hpool_used > self.hpool {
            return Err(format!(
                "headroom pool {} over {}",
                self.hpool_used, self.hpool
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::alpha::Alpha;

    pub(super) fn cfg(ports: usize) -> MmuConfig {
        MmuConfig {
            cell_bytes: 100,
            buffer_bytes: 100_000,
            private: vec![
                PrivateReservation {
                    bytes: 200,
                    pgs: 0xff
                };
                ports
            ],
            headroom_bytes: vec![1_000; ports],
            alpha: vec![Alpha::from_value(1.0).expect("positive"); ports],
            egress_alpha: Alpha::from_value(1.0).expect("positive"),
            xon_offset_bytes: 200,
            lossless: 1 << 3,
            scheme: HeadroomScheme::Sih {
                reservation: Reservation::PerPg,
            },
            static_thresholds: None,
        }
    }

    /// The hot fields sit where the struct's documentation says.
    #[test]
    fn hot_fields_lie_where_documented() {
        use std::mem::offset_of;
        assert_eq!(std::mem::align_of::<Mmu>(), 64);
        assert!(offset_of!(Mmu, private_pgs) < 64);
        assert!(offset_of!(Mmu, shared_pool) + 8 <= 64);
        assert!(offset_of!(Mmu, private_used) >= 64);
        assert!(offset_of!(Mmu, watch_headroom) + 4 <= 128);
        assert!((64..128).contains(&offset_of!(Mmu, dsh)));
        assert!((64..128).contains(&offset_of!(Mmu, egress_counted)));
        assert!(offset_of!(Mmu, scheme) >= 128);
        assert!(offset_of!(Mmu, resume_free_bound) + 8 <= 192);
        assert_eq!(offset_of!(Mmu, active), 192);
        assert!(offset_of!(Mmu, port_bits_low) + 16 <= 256);
        assert!(offset_of!(Mmu, scan_needed) < 320);
    }

    /// The watch reports a count that leaves `[lo, hi)` on either side, and every count
    /// for an empty range.
    #[test]
    fn the_watch_sees_the_count_leave_its_range() {
        let mut m = Mmu::new(&cfg(2)).expect("fits");
        let mut out = Vec::new();
        assert!(!m.occupancy_moved(), "a fresh watch covers every count");
        m.set_watch(2, 4);
        let mut moved = Vec::new();
        let mut placed = Vec::new();
        for prio in [0, 0, 1, 1] {
            // One cell each, private (two cells per PG).
            placed.push(m.admit(0, 1, (prio, prio), 100, &mut out).expect("private"));
            moved.push((m.used_cells(), m.occupancy_moved()));
        }
        assert_eq!(moved, vec![(1, true), (2, false), (3, false), (4, true)]);
        m.release(0, 1, (1, 1), placed[3], &mut out);
        assert!(!m.occupancy_moved(), "3 is inside [2, 4)");
        for (prio, p) in [(1, placed[2]), (0, placed[1])] {
            m.release(0, 1, (prio, prio), p, &mut out);
        }
        assert!(m.occupancy_moved(), "1 is below 2");
        m.set_watch(1, 1);
        assert!(m.occupancy_moved(), "an empty range holds no count");
        assert!(out.is_empty());
    }

    /// Ports beyond the first 64 (the port bits' later words) pause and resume as the
    /// first ones do.
    #[test]
    fn ports_past_the_first_64_pause_and_resume() {
        let mut c = cfg(130);
        c.buffer_bytes = 10_000_000;
        let mut m = Mmu::new(&c).expect("fits");
        let mut out = Vec::new();
        let mut held = Vec::new();
        for port in [0usize, 70, 129] {
            let before = out.len();
            while out.len() == before {
                let placed = m.admit(port, 1, (3, 3), 1_000, &mut out).expect("admitted");
                held.push((port, placed));
            }
            assert_eq!(
                out[before..],
                [Transition::Queue {
                    port: port as u16,
                    prio: 3,
                    pause: true
                }]
            );
        }
        for (port, placed) in held {
            m.release(port, 1, (3, 3), placed, &mut out);
        }
        let mut resumed: Vec<u16> = out
            .iter()
            .filter_map(|t| match *t {
                Transition::Queue {
                    port, pause: false, ..
                } => Some(port),
                _ => None,
            })
            .collect();
        resumed.sort_unstable();
        assert_eq!(resumed, [0, 70, 129], "each resumes once");
        assert_eq!(m.used_cells(), 0);
        m.check_conservation().expect("conserved");
    }

    /// A PG's record is half a cache line (see [`PgOccupancy`]).
    #[test]
    fn a_pg_record_is_half_a_line() {
        assert_eq!(std::mem::size_of::<PgOccupancy>(), 32);
        assert_eq!(std::mem::align_of::<PgOccupancy>(), 32);
    }

    /// An ingress port's record is one cache line (see [`IngressPort`]).
    #[test]
    fn an_ingress_port_is_one_line() {
        assert_eq!(std::mem::size_of::<IngressPort>(), 64);
        assert_eq!(std::mem::align_of::<IngressPort>(), 64);
    }
}
