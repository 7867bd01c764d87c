//! Admission and release: where each arriving packet's cells go (private, shared or
//! headroom, by the scheme), or why it is dropped; and credits granted from the shared pool.
//!
//! Invariants: every admission and release moves the PG, port, egress and region counts
//! together (`Mmu::check_conservation`); a lossless packet that can neither go to shared
//! nor to headroom is dropped with its cause, never half-counted; every change that can
//! move a PFC state ends in an evaluation (module `evaluate`) or flags its port for one.

use super::{DropCause, HeadroomScheme, Mmu, Placement, Region, Reservation, Transition};
use crate::PRIORITIES;

impl Mmu {
    /// Where a lossless packet of `cells` arriving on `pgi` goes, or why it cannot.
    fn lossless_region(&self, port: usize, pgi: usize, cells: u32) -> Result<Region, DropCause> {
        let pg = self.pgs[pgi];
        let eta = self.ingress[port].headroom_cells;
        let shared_fits = self.free_shared() >= u64::from(cells);
        match self.scheme {
            HeadroomScheme::Sih { reservation } => {
                if !pg.xoff && shared_fits {
                    return Ok(Region::Shared);
                }
                let port_ok = reservation == Reservation::PerPg
                    || self.ingress[port].occupancy.headroom + cells <= eta;
                if pg.headroom + cells <= eta && port_ok {
                    Ok(Region::Headroom)
                } else {
                    Err(DropCause::HeadroomExhausted)
                }
            }
            HeadroomScheme::Shp { .. } => {
                if !pg.xoff && shared_fits {
                    Ok(Region::Shared)
                } else if pg.headroom + cells > eta {
                    Err(DropCause::HeadroomExhausted)
                } else if self.hpool_used + u64::from(cells) > self.hpool {
                    Err(DropCause::HeadroomPoolExhausted)
                } else {
                    Ok(Region::Headroom)
                }
            }
            HeadroomScheme::Dsh { .. } => {
                let ps = self.ingress[port].occupancy;
                if !ps.poff && shared_fits {
                    Ok(Region::Shared)
                } else if ps.headroom + cells <= eta {
                    Ok(Region::Headroom)
                } else {
                    Err(DropCause::HeadroomExhausted)
                }
            }
        }
    }

    /// Admits a packet of `bytes` arriving on (`in_port`, `prio`) for egress queue
    /// (`out_port`, `queue`), or says why it is dropped. The queue is the packet's class
    /// at egress: its priority under PFC, the VL its output port maps its service level to
    /// on credit links. PFC transitions it causes anywhere in the switch are appended to
    /// `out`.
    ///
    /// Always inlined: the simulator calls it from one place, compiled twice (its lean and
    /// general forwarding paths), and it is most of that caller's work.
    #[inline(always)]
    pub fn admit(
        &mut self,
        in_port: usize,
        out_port: usize,
        (prio, queue): (u8, u8),
        bytes: u64,
        out: &mut Vec<Transition>,
    ) -> Result<Placement, DropCause> {
        let cells = self.cells_for(bytes);
        let pgi = in_port * PRIORITIES + usize::from(prio);
        let qi = out_port * PRIORITIES + usize::from(queue);
        let lossless = self.is_lossless(prio);
        // Only the private count and cap: a copy of the whole record costs registers.
        let (private, private_cap) = (self.pgs[pgi].private, self.pgs[pgi].private_cap);
        let dsh_poff = self.dsh && self.ingress[in_port].occupancy.poff;
        let has_private = self.private_pgs & (1 << prio) != 0;
        let region = if private + cells <= self.private_cells
            && has_private
            && !(lossless && dsh_poff)
            && (!self.private_per_port || private + cells <= private_cap)
        {
            Region::Private
        } else if lossless {
            self.lossless_region(in_port, pgi, cells)?
        } else {
            debug_assert!(
                self.counts_egress(queue),
                "a lossy packet for an egress queue whose cells are not counted"
            );
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
                if lossless {
                    let pg = *pg;
                    self.ingress[in_port].occupancy.shared += u64::from(cells);
                    let need =
                        self.pause_level(in_port, pg, self.ingress[in_port].occupancy.shared);
                    if need > self.xoff_free_bound {
                        self.xoff_free_bound = need;
                    }
                    if need > self.ingress[in_port].xoff_bound {
                        self.ingress[in_port].xoff_bound = need;
                    }
                }
            }
            Region::Headroom => {
                // Headroom held pauses its PG (SIH, SHP) or port (DSH's insurance) and keeps
                // it paused; it is not shared, so no threshold moves. Only a PG or port not
                // yet paused needs the scan.
                let paused = match self.scheme {
                    HeadroomScheme::Dsh { .. } => self.ingress[in_port].occupancy.poff,
                    HeadroomScheme::Sih { .. } | HeadroomScheme::Shp { .. } => pg.xoff,
                };
                pg.headroom += cells;
                pg.peak_headroom = pg.peak_headroom.max(pg.headroom);
                self.headroom_used += u64::from(cells);
                let ps = &mut self.ingress[in_port].occupancy;
                ps.headroom += cells;
                ps.peak_headroom = ps.peak_headroom.max(ps.headroom);
                if matches!(self.scheme, HeadroomScheme::Shp { .. }) {
                    self.hpool_used += u64::from(cells);
                }
                if !paused {
                    self.flag_port(in_port);
                }
            }
        }
        if self.counts_egress(queue) {
            self.egress[qi] += cells;
        }
        self.allocated += u64::from(cells);
        // Exact: a buffer holds fewer than 2^32 cells (`Mmu::new`).
        self.peak_used = self.peak_used.max(self.resident_cells() as u32);
        if lossless && region != Region::Private {
            if self.ingress[in_port].pgs_active & (1 << prio) == 0 {
                self.ingress[in_port].pgs_active |= 1 << prio;
                self.bits_mut(in_port / 64).in_active |= 1 << (in_port % 64);
                self.pgs[pgi].active_pos = self.active.len() as u32;
                self.active.push(pgi as u32);
            }
            let ingress = &mut self.ingress[in_port];
            if self.dsh && !ingress.in_active_ports {
                ingress.in_active_ports = true;
                self.active_ports.push(in_port as u32);
            }
        }
        if region != Region::Private || !self.private_skips_evaluate {
            self.evaluate(out);
        }
        Ok(Placement { region, cells })
    }

    /// Releases a packet admitted with `placement` (it left the switch). Its cells are freed
    /// from its PG in LIFO order: headroom first, then shared, then private (the packets that
    /// arrived last, into headroom, are conceptually the ones still queued behind it). This
    /// lets a paused PG leave XOFF as soon as its backlog shrinks, instead of waiting for the
    /// headroom packets at the tail of its queue.
    ///
    /// Always inlined: most releases are of private cells, a dozen instructions, and a call
    /// cost as many again in saved registers. Most of the others, in a congested fabric,
    /// free shared cells of a PG that keeps some: a short path of their own.
    #[inline(always)]
    pub fn release(
        &mut self,
        in_port: usize,
        out_port: usize,
        (prio, queue): (u8, u8),
        placement: Placement,
        out: &mut Vec<Transition>,
    ) {
        let pgi = in_port * PRIORITIES + usize::from(prio);
        let qi = out_port * PRIORITIES + usize::from(queue);
        let cells = placement.cells;
        let pg = &mut self.pgs[pgi];
        if pg.headroom == 0 && pg.shared == 0 {
            // Nothing above the private cells: all of them are private (the common case).
            debug_assert!(
                cells <= pg.private,
                "releasing more cells than the PG holds"
            );
            pg.private -= cells;
            self.private_used -= u64::from(cells);
            if self.counts_egress(queue) {
                self.egress[qi] -= cells;
            }
            self.freed += u64::from(cells);
            if !self.private_skips_evaluate {
                self.evaluate(out);
            }
            return;
        }
        let lossless = self.lossless & (1 << prio) != 0;
        if pg.headroom == 0 && cells < pg.shared {
            // Shared cells only, and the PG keeps some (a congested fabric's common case): it
            // neither empties nor leaves the list, and no headroom count moves.
            pg.shared -= cells;
            let paused = pg.xoff;
            self.shared_used -= u64::from(cells);
            if lossless {
                let ps = &mut self.ingress[in_port].occupancy;
                ps.shared -= u64::from(cells);
                if paused || ps.poff {
                    self.lower_resume_bounds(in_port, pgi);
                }
            }
            if self.counts_egress(queue) {
                self.egress[qi] -= cells;
            }
            self.freed += u64::from(cells);
            self.evaluate(out);
            return;
        }
        let shp = matches!(self.scheme, HeadroomScheme::Shp { .. });
        let h = cells.min(pg.headroom);
        let sh = (cells - h).min(pg.shared);
        pg.headroom -= h;
        pg.shared -= sh;
        let mut flag = false;
        if h > 0 || (lossless && sh > 0) {
            // Only then does the port's state change (most releases are private cells).
            let ps = &mut self.ingress[in_port].occupancy;
            ps.headroom -= h;
            if lossless {
                ps.shared -= u64::from(sh);
            }
            if h > 0 && pg.headroom == 0 {
                // A PG (or DSH port) resumes only without headroom held: only a scan sees it.
                flag = true;
            } else if lossless && sh > 0 && (pg.xoff || ps.poff) {
                self.lower_resume_bounds(in_port, pgi);
            }
        }
        let pg = &mut self.pgs[pgi];
        self.headroom_used -= u64::from(h);
        if shp {
            self.hpool_used -= u64::from(h);
        }
        self.shared_used -= u64::from(sh);
        let pr = cells - h - sh;
        let emptied = pg.headroom == 0 && pg.shared == 0;
        let paused = pg.xoff;
        debug_assert!(pr <= pg.private, "releasing more cells than the PG holds");
        pg.private -= pr;
        self.private_used -= u64::from(pr);
        if self.counts_egress(queue) {
            self.egress[qi] -= cells;
        }
        self.freed += u64::from(cells);
        if emptied && self.ingress[in_port].pgs_active & (1 << prio) != 0 {
            if paused || flag || self.scan_needed || !self.flagged.is_empty() {
                // The PG may leave the active list: the next evaluation must visit it (a
                // paused one to resume first).
                flag = true;
            } else {
                self.leave_active(pgi);
            }
        }
        if flag {
            self.flag_port(in_port);
        }
        if pr != cells || !self.private_skips_evaluate {
            self.evaluate(out);
        }
    }

    /// Less shared held by paused PG `pgi` (or its paused DSH port) lowers the level at
    /// which it resumes: the switch's and the port's resume bounds follow.
    fn lower_resume_bounds(&mut self, in_port: usize, pgi: usize) {
        let (pg, ps) = (self.pgs[pgi], self.ingress[in_port].occupancy);
        let level = self.resume_level(in_port, pg, ps);
        if level < self.resume_free_bound {
            self.resume_free_bound = level;
        }
        if level < self.ingress[in_port].resume_bound {
            self.ingress[in_port].resume_bound = level;
        }
    }

    /// Takes PG `pgi`, not paused and holding nothing above its private cells, off the
    /// list of congested PGs, where it stands. A scan of its port would do only that for
    /// it, at the same place in the list, as long as no other PG waits for a scan to leave
    /// (none is flagged and no full scan is owed): so the evaluation after its release need
    /// not walk the list. (Kept out of line: `release` is inlined everywhere.)
    #[inline(never)]
    fn leave_active(&mut self, pgi: usize) {
        let at = self.pgs[pgi].active_pos as usize;
        let dropped = self.drop_if_idle(at, pgi);
        debug_assert!(dropped, "only an idle PG leaves");
    }

    /// Grants PG (`port`, `pg`) private cells from the shared pool by the dynamic
    /// threshold, as a shared-buffer switch grants credits: `base + alpha_port × free
    /// shared cells`, kept within `min..=max` (`min`: what the PG has already promised, which
    /// it never gives up) and within what the pool can give. Growing takes free shared
    /// cells out of the pool, shrinking gives back what the PG does not hold; every other
    /// PG's threshold moves with the pool, and the PFC transitions that causes are appended
    /// to `out`. Returns the PG's private cells now.
    pub fn grant_private(
        &mut self,
        port: usize,
        pg: u8,
        (min, base, max): (u32, u32, u32),
        out: &mut Vec<Transition>,
    ) -> u32 {
        let pgi = port * PRIORITIES + usize::from(pg);
        let cap = self.pgs[pgi].private_cap;
        let share = self.threshold_cells(port);
        let wanted = (u64::from(base) + share).min(u64::from(max));
        let wanted = wanted
            .max(u64::from(min))
            .max(u64::from(self.pgs[pgi].private));
        let new = if wanted > u64::from(cap) {
            u64::from(cap) + (wanted - u64::from(cap)).min(self.free_shared())
        } else {
            wanted
        };
        // At most `max(max, min, cap)`: u32.
        let new = u32::try_from(new).unwrap_or(u32::MAX);
        if new == cap {
            return cap;
        }
        self.shared_pool = self.shared_pool + u64::from(cap) - u64::from(new);
        self.reserved_private = self.reserved_private + u64::from(new) - u64::from(cap);
        self.pgs[pgi].private_cap = new;
        // The uniform fast check stays an upper bound of every PG's private cells.
        self.private_per_port = true;
        self.private_cells = self.private_cells.max(new);
        self.private_pgs |= 1 << pg;
        self.scan_needed = true;
        self.evaluate(out);
        new
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::cfg;
    use super::super::*;
    use crate::buffer::alpha::Alpha;

    /// A switch whose ports differ (PFC and credit ports): each PG gets its own port's
    /// private space, and only the PGs that have it.
    #[test]
    fn ports_may_have_their_own_private_space() {
        let mut c = cfg(2);
        c.private[1] = PrivateReservation {
            bytes: 1_000,
            pgs: 0b0000_1111,
        };
        let mut m = Mmu::new(&c).expect("fits");
        // 1000 cells - port 0: 8 PGs x 2 - port 1: 4 PGs x 10 - 2 ports x 10 headroom.
        assert_eq!(m.shared_pool_cells(), 1000 - 16 - 40 - 20);
        assert_eq!(m.headroom_reserved_cells(), 20);
        let mut tr = Vec::new();
        for _ in 0..10 {
            let p = m.admit(1, 0, (2, 2), 100, &mut tr).expect("private");
            assert_eq!(p.region, Region::Private);
        }
        let p = m.admit(1, 0, (2, 2), 100, &mut tr).expect("shared");
        assert_eq!(p.region, Region::Shared);
        // PG 5 of port 1 has no private cells; PG 5 of port 0 has two.
        let p = m.admit(1, 0, (5, 5), 100, &mut tr).expect("shared");
        assert_eq!(p.region, Region::Shared);
        let p = m.admit(0, 1, (5, 5), 100, &mut tr).expect("private");
        assert_eq!(p.region, Region::Private);
    }

    /// Credits granted from the shared buffer: a PG's private cells grow by the dynamic
    /// threshold out of the pool, never below what it promised, and shrink back.
    #[test]
    fn private_cells_are_granted_by_the_dynamic_threshold() {
        let mut m = Mmu::new(&cfg(2)).expect("fits");
        let pool = m.shared_pool_cells(); // 1000 - 32 private - 20 headroom
        assert_eq!(pool, 948);
        let mut tr = Vec::new();
        // alpha 1: base 2 + 948 free, at most 500.
        assert_eq!(m.grant_private(0, 3, (0, 2, 500), &mut tr), 500);
        assert_eq!(m.shared_pool_cells(), pool - 498);
        assert_eq!(m.private_cap(0, 3), 500);
        assert_eq!(m.private_cap(1, 3), 2);
        // Another PG gets alpha x what is left: 2 + 450.
        assert_eq!(m.grant_private(1, 3, (0, 2, 10_000), &mut tr), 452);
        assert_eq!(m.shared_pool_cells(), 0);
        for _ in 0..450 {
            let p = m.admit(0, 1, (3, 3), 100, &mut tr).expect("granted");
            assert_eq!(p.region, Region::Private);
        }
        m.check_conservation().expect("conserved");
        // Nothing free: the grant shrinks to what the PG holds and has promised.
        assert_eq!(m.grant_private(0, 3, (480, 2, 500), &mut tr), 480);
        assert_eq!(m.grant_private(0, 3, (0, 2, 500), &mut tr), 450);
        assert_eq!(m.shared_pool_cells(), 50);
        m.check_conservation().expect("conserved");
    }

    #[test]
    fn fills_private_then_shared_then_pauses_into_headroom() {
        let mut m = Mmu::new(&cfg(2)).expect("fits");
        let mut tr = Vec::new();
        let p = |m: &mut Mmu, tr: &mut Vec<Transition>| m.admit(0, 1, (3, 3), 100, tr);
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
            vec![Transition::Queue {
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
            placed.push(m.admit(0, 1, (3, 3), 100, &mut tr).expect("admitted"));
        }
        let h = m.admit(0, 1, (3, 3), 100, &mut tr).expect("headroom");
        assert_eq!(h.region, Region::Headroom);
        tr.clear();
        // Releasing shared cells alone does not resume while headroom is held.
        let last = placed.pop().expect("some");
        m.release(0, 1, (3, 3), last, &mut tr);
        assert!(tr.is_empty());
        m.release(0, 1, (3, 3), h, &mut tr);
        // omega = 473, T = 948 - 473 = 475: 473 + 2 > 475? no: 475 <= 475 resumes.
        assert_eq!(
            tr,
            vec![Transition::Queue {
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
            m.admit(0, 2, (3, 3), 100, &mut tr).expect("admitted");
        }
        assert!(tr.is_empty());
        // Port 1 (lossy priority 0) fills the buffer: T of port 0 falls below its omega.
        let mut k = 0;
        while tr.is_empty() && k < 2_000 {
            if m.admit(1, 2, (0, 0), 100, &mut tr).is_err() {
                break;
            }
            k += 1;
        }
        assert_eq!(
            tr,
            vec![Transition::Queue {
                port: 0,
                prio: 3,
                pause: true
            }]
        );
    }

    #[test]
    fn shp_drops_when_the_pool_runs_out() {
        let mut c = cfg(3);
        c.lossless = 0b0001_1000;
        c.scheme = HeadroomScheme::Shp { pool_bytes: 1_500 };
        let mut m = Mmu::new(&c).expect("fits");
        // 1000 cells - 3 * 8 * 2 private - 15 pool cells.
        assert_eq!(m.shared_pool_cells(), 1000 - 48 - 15);
        assert_eq!(m.headroom_reserved_cells(), 15);
        let mut tr = Vec::new();
        // Drive two PGs into XOFF, then into headroom: 15 pool cells for 2 x 10 of eta.
        for prio in [3u8, 4] {
            while !tr
                .iter()
                .any(|t| matches!(t, Transition::Queue { prio: p, pause: true, .. } if *p == prio))
            {
                m.admit(0, 2, (prio, prio), 100, &mut tr).expect("shared");
            }
        }
        let mut dropped = None;
        for k in 0..20 {
            if let Err(e) = m.admit(0, 2, (3 + (k % 2) as u8, 3 + (k % 2) as u8), 100, &mut tr) {
                dropped = Some(e);
                break;
            }
        }
        assert_eq!(dropped, Some(DropCause::HeadroomPoolExhausted));
        m.check_conservation().expect("conserved");
    }

    #[test]
    fn dsh_queue_and_port_state_machines() {
        let mut c = cfg(2);
        c.lossless = 0b0001_1000; // Nq = 2
        c.private.iter_mut().for_each(|r| r.bytes = 0);
        c.alpha = vec![Alpha::from_value(0.5).expect("positive"); 2];
        c.headroom_bytes = vec![2_000; 2]; // eta = 20 cells per port
        c.scheme = HeadroomScheme::Dsh {
            delta_q_bytes: 300,
            delta_p_bytes: 300,
        };
        let mut m = Mmu::new(&c).expect("fits");
        // Insurance only per port: 1000 - 2 * 20.
        assert_eq!(m.shared_pool_cells(), 960);
        let mut tr = Vec::new();
        let mut placed = Vec::new();
        // Queue level: QOFF once omega > T - eta, T = 0.5 * (960 - omega).
        while tr.is_empty() {
            placed.push(m.admit(0, 1, (3, 3), 100, &mut tr).expect("admitted"));
        }
        let omega = u64::from(m.pg(0, 3).shared);
        let t = (960 - omega) / 2;
        assert!(
            omega > t - 20 && omega - 1 <= (961 - omega) / 2 - 20,
            "omega {omega}, T {t}"
        );
        assert_eq!(
            tr,
            vec![Transition::Queue {
                port: 0,
                prio: 3,
                pause: true
            }]
        );
        tr.clear();
        // QOFF arrivals still go to shared (shared headroom), until the port sum crosses
        // Nq x T: then the whole port pauses and arrivals go to insurance.
        let mut port_paused = false;
        for _ in 0..2_000 {
            let p = m
                .admit(0, 1, (3, 3), 100, &mut tr)
                .expect("lossless is never dropped here");
            placed.push(p);
            if tr.contains(&Transition::Port {
                port: 0,
                pause: true,
            }) {
                port_paused = true;
                break;
            }
            assert_eq!(p.region, Region::Shared);
        }
        assert!(port_paused, "the port never paused");
        let sum = m.port(0).shared;
        assert!(sum > 2 * ((960 - sum) / 2), "POFF only above Nq x T");
        let p = m.admit(0, 1, (4, 4), 100, &mut tr).expect("insurance");
        assert_eq!(
            p.region,
            Region::Headroom,
            "POFF arrivals use the insurance"
        );
        placed.push(p);
        // Draining: the port resumes only once the insurance is empty and the sum is below
        // Xpon; the queue resumes below T - eta - delta_q.
        tr.clear();
        while let Some(p) = placed.pop() {
            let prio = if p.region == Region::Headroom { 4 } else { 3 };
            m.release(0, 1, (prio, prio), p, &mut tr);
            if let Some(i) = tr.iter().position(|t| {
                *t == Transition::Port {
                    port: 0,
                    pause: false,
                }
            }) {
                assert_eq!(m.port(0).headroom, 0);
                let sum = m.port(0).shared;
                assert!(sum < 2 * ((960 - sum) / 2) - 3, "PON below Xpon");
                tr.remove(i);
            }
        }
        assert!(tr.contains(&Transition::Queue {
            port: 0,
            prio: 3,
            pause: false
        }));
        m.check_conservation().expect("conserved");
    }

    #[test]
    fn dsh_leaves_more_shared_buffer_than_sih() {
        let mut c = cfg(32);
        c.buffer_bytes = 1_000_000;
        c.lossless = 0b1111_1110; // 7 lossless queues per port
        c.private.iter_mut().for_each(|r| r.bytes = 0);
        c.headroom_bytes = vec![2_000; 32];
        let sih = Mmu::new(&c).expect("fits").shared_pool_cells();
        c.scheme = HeadroomScheme::Dsh {
            delta_q_bytes: 0,
            delta_p_bytes: 0,
        };
        let dsh = Mmu::new(&c).expect("fits").shared_pool_cells();
        assert_eq!(sih, 10_000 - 32 * 7 * 20);
        assert_eq!(dsh, 10_000 - 32 * 20);
    }

    #[test]
    fn static_thresholds_pause_at_xoff_and_resume_at_xon_whatever_the_free_buffer() {
        let mut c = cfg(3);
        c.private = vec![PrivateReservation { bytes: 0, pgs: 0 }; 3];
        // 100 B cells: XOFF at 2,050 B = 21 cells, XON at 1,000 B = 10 cells.
        c.static_thresholds = Some(StaticThresholds {
            xoff_bytes: 2_050,
            xon_bytes: 1_000,
        });
        let mut m = Mmu::new(&c).expect("fits");
        let mut tr = Vec::new();
        let mut held = Vec::new();
        // Another port fills most of the shared buffer first: a dynamic threshold would
        // fall, the static one does not.
        for _ in 0..400 {
            m.admit(1, 2, (0, 0), 100, &mut tr).expect("lossy fits");
        }
        let mut n = 0;
        while tr.is_empty() {
            let pl = m.admit(0, 2, (3, 3), 100, &mut tr).expect("admitted");
            assert_eq!(pl.region, Region::Shared);
            held.push(pl);
            n += 1;
        }
        assert_eq!(n, 21, "XOFF when the shared occupancy reaches 21 cells");
        assert_eq!(
            std::mem::take(&mut tr),
            [Transition::Queue {
                port: 0,
                prio: 3,
                pause: true
            }]
        );
        // Releases down to 11 cells keep it paused; the one to 10 resumes it.
        while held.len() > 11 {
            let pl = held.pop().expect("held");
            m.release(0, 2, (3, 3), pl, &mut tr);
            assert!(tr.is_empty(), "resumed early at {} cells", held.len());
        }
        let pl = held.pop().expect("held");
        m.release(0, 2, (3, 3), pl, &mut tr);
        assert_eq!(
            tr,
            [Transition::Queue {
                port: 0,
                prio: 3,
                pause: false
            }]
        );
        m.check_conservation().expect("conserved");
    }

    #[test]
    fn lossy_drops_at_egress_threshold() {
        let mut m = Mmu::new(&cfg(2)).expect("fits");
        let mut tr = Vec::new();
        let mut dropped = None;
        for _ in 0..2_000 {
            if let Err(e) = m.admit(0, 1, (0, 0), 100, &mut tr) {
                dropped = Some(e);
                break;
            }
        }
        assert_eq!(dropped, Some(DropCause::EgressThreshold));
        assert!(tr.is_empty(), "lossy traffic never pauses");
        m.check_conservation().expect("conserved");
    }

    proptest::proptest! {
        /// An MMU that counts only the lossy classes' egress cells decides every packet as
        /// one that counts them all, when packets leave in the class they arrived in.
        #[test]
        fn counting_only_lossy_egress_classes_changes_no_decision(
            ops in proptest::collection::vec(
                (0usize..3, 0u8..8, 0usize..3, 1u64..3000, proptest::bool::ANY), 1..400),
            lossless in proptest::prop_oneof![
                proptest::strategy::Just(0b0000_1000u8),
                proptest::strategy::Just(0b0111_1111u8),
            ],
        ) {
            let mut c = cfg(3);
            c.lossless = lossless;
            let mut all = Mmu::new(&c).expect("fits");
            let mut lossy_only = all.clone();
            lossy_only.count_egress_of(!lossless);
            let (mut tr_all, mut tr_lossy) = (Vec::new(), Vec::new());
            let mut held = Vec::new();
            for (inp, prio, outp, bytes, release) in ops {
                if release && !held.is_empty() {
                    let (i, p, o, pl) = held.remove(bytes as usize % held.len());
                    all.release(i, o, (p, p), pl, &mut tr_all);
                    lossy_only.release(i, o, (p, p), pl, &mut tr_lossy);
                } else {
                    let a = all.admit(inp, outp, (prio, prio), bytes, &mut tr_all);
                    let b = lossy_only.admit(inp, outp, (prio, prio), bytes, &mut tr_lossy);
                    proptest::prop_assert_eq!(a, b);
                    if let Ok(pl) = a {
                        held.push((inp, prio, outp, pl));
                    }
                }
                proptest::prop_assert_eq!(&tr_all, &tr_lossy);
                for (port, q) in (0..3).flat_map(|p| (0..8).map(move |q| (p, q))) {
                    let counted = lossless & (1 << q) == 0;
                    proptest::prop_assert_eq!(
                        lossy_only.egress_cells(port, q),
                        all.egress_cells(port, q).filter(|_| counted)
                    );
                }
                proptest::prop_assert!(lossy_only.check_conservation().is_ok());
            }
        }
    }
}
