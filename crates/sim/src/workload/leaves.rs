//! Which leaf each host hangs off, so generators can draw peers "on another leaf".
//!
//! A host's leaf is the node at the other end of its first link (its top-of-rack switch).
//! [`Leaves`] keeps the hosts of a list ordered by leaf, so that the hosts on the other
//! leaves of host `i` are all of them but one contiguous run: drawing uniformly among them
//! costs one random index and one comparison, and the whole structure is linear in the
//! number of hosts (no per-leaf copy of the others).
//!
//! Invariants: `order` is a permutation of `0..n`; the run of a host's leaf in `order`
//! contains that host; with [`Leaves::isolated`] every host is its own run, so "another
//! leaf" means "another host".

use crate::topology::{NodeId, Topology};
use rand::Rng;
use rand_pcg::Pcg64;

/// The hosts of a list grouped by leaf.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaves {
    /// Host indices (into the list), ordered by leaf, then by index.
    order: Vec<u32>,
    /// Per host index, the run `[start, end)` of `order` holding its leaf's hosts.
    run: Vec<(u32, u32)>,
    /// Distinct leaves.
    count: usize,
}

impl Leaves {
    /// The leaves of `hosts` in `topo`: a host's leaf is the peer of its first link; a
    /// host without links is a leaf of its own.
    pub fn of(topo: &Topology, hosts: &[NodeId]) -> Leaves {
        let mut first_peer = vec![u32::MAX; topo.len()];
        for l in &topo.links {
            for (end, peer) in [(l.a, l.b), (l.b, l.a)] {
                if first_peer[end.index()] == u32::MAX {
                    first_peer[end.index()] = peer.0;
                }
            }
        }
        let groups: Vec<u64> = hosts
            .iter()
            .map(|h| match first_peer[h.index()] {
                // Without a link, a key no leaf has: the host alone.
                u32::MAX => (1 << 32) | u64::from(h.0),
                p => u64::from(p),
            })
            .collect();
        Leaves::from_groups(&groups)
    }

    /// Leaves from one group key per host (hosts with equal keys share a leaf).
    pub fn from_groups(groups: &[u64]) -> Leaves {
        let n = groups.len();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&i| (groups[i as usize], i));
        let mut run = vec![(0, 0); n];
        let mut count = 0;
        let mut start = 0;
        while start < n {
            let key = groups[order[start] as usize];
            let mut end = start;
            while end < n && groups[order[end] as usize] == key {
                end += 1;
            }
            for &i in &order[start..end] {
                run[i as usize] = (start as u32, end as u32);
            }
            count += 1;
            start = end;
        }
        Leaves { order, run, count }
    }

    /// Every host on a leaf of its own: "another leaf" is any other host.
    pub fn isolated(n: usize) -> Leaves {
        let groups: Vec<u64> = (0..n as u64).collect();
        Leaves::from_groups(&groups)
    }

    /// Number of distinct leaves.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Number of hosts.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there are no hosts.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// How many hosts are on other leaves than host `i`.
    pub fn elsewhere(&self, i: usize) -> usize {
        let (s, e) = self.run[i];
        self.order.len() - (e - s) as usize
    }

    /// The `k`-th host (`k < self.elsewhere(i)`) on another leaf than host `i`, in leaf
    /// order.
    pub fn elsewhere_nth(&self, i: usize, k: usize) -> usize {
        let (s, e) = self.run[i];
        let skip = if k >= s as usize { (e - s) as usize } else { 0 };
        self.order[k + skip] as usize
    }

    /// A host drawn uniformly among those on other leaves than host `i` (one
    /// `gen_range(0..elsewhere(i))`); `None` when there is none.
    pub fn draw_elsewhere(&self, i: usize, rng: &mut Pcg64) -> Option<usize> {
        let m = self.elsewhere(i);
        (m > 0).then(|| self.elsewhere_nth(i, rng.gen_range(0..m)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::generators::rng_from_seed;

    #[test]
    fn runs_group_hosts_by_leaf() {
        // Hosts 0, 2, 4 on leaf 7; 1, 3 on leaf 5.
        let l = Leaves::from_groups(&[7, 5, 7, 5, 7]);
        assert_eq!(l.count(), 2);
        assert_eq!(l.elsewhere(0), 2);
        assert_eq!(l.elsewhere(1), 3);
        let others: Vec<usize> = (0..2).map(|k| l.elsewhere_nth(0, k)).collect();
        assert_eq!(others, [1, 3]);
        let others: Vec<usize> = (0..3).map(|k| l.elsewhere_nth(3, k)).collect();
        assert_eq!(others, [0, 2, 4]);
    }

    #[test]
    fn isolated_hosts_see_every_other_host() {
        let l = Leaves::isolated(4);
        assert_eq!(l.count(), 4);
        let others: Vec<usize> = (0..3).map(|k| l.elsewhere_nth(2, k)).collect();
        assert_eq!(others, [0, 1, 3]);
    }

    #[test]
    fn draws_are_uniform_over_the_other_leaves() {
        let l = Leaves::from_groups(&[0, 0, 1, 1, 2, 2]);
        let mut rng = rng_from_seed(3);
        let mut hits = [0u32; 6];
        for _ in 0..40_000 {
            hits[l.draw_elsewhere(0, &mut rng).expect("others")] += 1;
        }
        assert_eq!(hits[0] + hits[1], 0);
        for h in &hits[2..] {
            assert!((9_400..10_600).contains(h), "{hits:?}");
        }
    }

    #[test]
    fn one_leaf_has_no_elsewhere() {
        let l = Leaves::from_groups(&[9, 9, 9]);
        assert_eq!(l.count(), 1);
        assert_eq!(l.elsewhere(1), 0);
        assert_eq!(l.draw_elsewhere(1, &mut rng_from_seed(1)), None);
    }
}
