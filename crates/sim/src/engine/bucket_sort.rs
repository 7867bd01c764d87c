//! Sorting a calendar bucket when the cursor reaches it.
//!
//! Invariant: [`sort_descending`] leaves a bucket in descending order of its entries' keys
//! (unique within a bucket), whatever its size; every size class is tested against the
//! standard library's sort, and each sorting network against every input of zeros and ones
//! (which, by the zero-one principle, covers every input).

use super::Entry;

/// Buckets of at most this many events are sorted by a network.
const NETWORK_UP_TO: usize = 8;

/// The compare-exchange steps of a sorting network for 2 to 8 elements (index `n - 2`),
/// each a pair `(i, j)` with `i < j`: optimal in size for these `n` (Knuth, TAOCP 3,
/// 5.3.4).
#[rustfmt::skip]
const NETWORKS: [&[(u8, u8)]; NETWORK_UP_TO - 1] = [
    &[(0, 1)],
    &[(0, 2), (0, 1), (1, 2)],
    &[(0, 2), (1, 3), (0, 1), (2, 3), (1, 2)],
    &[(0, 3), (1, 4), (0, 2), (1, 3), (0, 1), (2, 4), (1, 2), (3, 4), (2, 3)],
    &[
        (0, 5), (1, 3), (2, 4), (1, 2), (3, 4), (0, 3), (2, 5), (0, 1), (2, 3), (4, 5),
        (1, 2), (3, 4),
    ],
    &[
        (0, 6), (2, 3), (4, 5), (0, 2), (1, 4), (3, 6), (0, 1), (2, 5), (3, 4), (1, 2),
        (4, 6), (2, 3), (4, 5), (1, 2), (3, 4), (5, 6),
    ],
    &[
        (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7), (0, 1), (2, 3),
        (4, 5), (6, 7), (2, 4), (3, 5), (1, 4), (3, 6), (1, 2), (3, 4), (5, 6),
    ],
];

/// Sorts a bucket of at most [`NETWORK_UP_TO`] events by descending key with the network
/// for its size: a fixed sequence of compare-exchanges, each a comparison and conditional
/// moves, where an insertion sort branches on every comparison (and mispredicts about
/// half of them on a bucket's unordered keys).
fn sort_by_network(v: &mut [Entry]) {
    /// One compare-exchange: afterwards `x[i]` has the larger key.
    #[inline(always)]
    fn exchange<const N: usize>(x: &mut [Entry; N], i: usize, j: usize) {
        let (hi, lo) = (x[i], x[j]);
        let swap = hi.0 < lo.0;
        x[i] = if swap { lo } else { hi };
        x[j] = if swap { hi } else { lo };
    }
    /// The network for `N` elements, unrolled, on a copy held in registers.
    #[inline(always)]
    fn run<const N: usize>(v: &mut [Entry]) {
        let Ok(a) = <&mut [Entry; N]>::try_from(v) else {
            // The caller matched on the length.
            return;
        };
        let mut x = *a;
        macro_rules! unrolled {
            ($($k:literal)*) => {
                $(
                    if let Some(&(i, j)) = NETWORKS[N - 2].get($k) {
                        exchange(&mut x, usize::from(i), usize::from(j));
                    }
                )*
            };
        }
        unrolled!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18);
        *a = x;
    }
    match v.len() {
        2 => run::<2>(v),
        3 => run::<3>(v),
        4 => run::<4>(v),
        5 => run::<5>(v),
        6 => run::<6>(v),
        7 => run::<7>(v),
        8 => run::<8>(v),
        _ => {}
    }
}

/// Buckets of more events than this are sorted by the top bits of their keys first.
const DISTRIBUTE_ABOVE: usize = 32;

/// Sorts a bucket's events by descending in-bucket key (keys are unique, so any correct
/// sort gives the same order).
///
/// A bucket of at most [`NETWORK_UP_TO`] events (most of them on the 320-host benchmark:
/// five or six) goes through a sorting network for its size ([`sort_by_network`]); up to
/// `DISTRIBUTE_ABOVE` events, the standard library's sort (an insertion sort at these
/// sizes). A large one (a big fabric's busy nanoseconds hold 40 to 70
/// events, whose general sort was 7 % of a k = 32 fat tree's instructions) is first
/// distributed by the key's top `DIGIT_BITS` bits, the high bits of the event's time within
/// the bucket, into `scratch` (a counting sort, highest digit first); each digit's run,
/// usually one or two events, is then sorted on its own (by its network up to
/// `NETWORK_UP_TO` events), and `v` and `scratch` swap.
pub(super) fn sort_descending(v: &mut Vec<Entry>, scratch: &mut Vec<Entry>) {
    const DIGIT_BITS: u32 = 6;
    const DIGITS: usize = 1 << DIGIT_BITS;
    if v.len() <= NETWORK_UP_TO {
        sort_by_network(v);
        return;
    }
    if v.len() <= DISTRIBUTE_ABOVE {
        v.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
        return;
    }
    let digit = |key: u64| (key >> (64 - DIGIT_BITS)) as usize;
    let mut count = [0u32; DIGITS];
    for e in v.iter() {
        count[digit(e.0)] += 1;
    }
    // Where each digit's run starts, the highest digit first (descending order).
    let mut next = [0u32; DIGITS];
    let mut at = 0;
    for d in (0..DIGITS).rev() {
        next[d] = at;
        at += count[d];
    }
    scratch.clear();
    scratch.resize(v.len(), v[0]);
    for e in v.iter() {
        let d = digit(e.0);
        scratch[next[d] as usize] = *e;
        next[d] += 1;
    }
    // `next[d]` is now the end of digit d's run.
    for d in 0..DIGITS {
        let end = next[d] as usize;
        let run = &mut scratch[end - count[d] as usize..end];
        if run.len() > NETWORK_UP_TO {
            // Many events within one digit (8 ps of the default bucket): a burst at one
            // instant.
            run.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
        } else {
            sort_by_network(run);
        }
    }
    std::mem::swap(v, scratch);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Event, PackedEvent};
    use proptest::prelude::*;

    fn entry(key: u64, i: usize) -> Entry {
        (key, PackedEvent::pack(Event::Wake { port: i as u32 }))
    }

    /// Every network sorts every input of zeros and ones (keys 0 and 1 with distinct low
    /// bits, so that they stay unique), hence every input.
    #[test]
    fn networks_sort_every_zero_one_input() {
        for n in 2..=NETWORK_UP_TO {
            for bits in 0u32..1 << n {
                let mut v: Vec<Entry> = (0..n)
                    .map(|i| entry(u64::from(bits >> i & 1) << 32 | i as u64, i))
                    .collect();
                sort_by_network(&mut v);
                let high: Vec<u64> = v.iter().map(|e| e.0 >> 32).collect();
                assert!(
                    high.windows(2).all(|w| w[0] >= w[1]),
                    "n = {n}, input {bits:b}: {high:?}"
                );
            }
        }
    }

    proptest! {
        /// Buckets of every size class (a network, the library's sort, distributed by
        /// their time bits first), with times spread over the bucket or bunched at a few
        /// instants, come out in the library's descending order.
        #[test]
        fn buckets_sort_descending(
            keys in proptest::collection::vec((0u64..512, 0u64..1 << 20), 0..300),
            bunched in any::<bool>(),
        ) {
            let mut seen = std::collections::BTreeSet::new();
            let mut v: Vec<Entry> = keys
                .iter()
                .map(|&(t, seq)| ((if bunched { t % 3 } else { t }) << 55) | seq)
                .filter(|k| seen.insert(*k))
                .enumerate()
                .map(|(i, k)| entry(k, i))
                .collect();
            let mut expected = v.clone();
            expected.sort_by_key(|e| std::cmp::Reverse(e.0));
            let mut scratch = Vec::new();
            sort_descending(&mut v, &mut scratch);
            prop_assert_eq!(v, expected);
        }
    }

    proptest! {
        /// Buckets of the sizes most buckets have, which the networks sort.
        #[test]
        fn small_buckets_sort_descending(keys in proptest::collection::btree_set(any::<u64>(), 0..12)) {
            let mut v: Vec<Entry> = keys.iter().enumerate().map(|(i, &k)| entry(k, i)).collect();
            // Shuffled deterministically by the keys themselves.
            v.sort_by_key(|e| e.0.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut expected = v.clone();
            expected.sort_by_key(|e| std::cmp::Reverse(e.0));
            let mut scratch = Vec::new();
            sort_descending(&mut v, &mut scratch);
            prop_assert_eq!(v, expected);
        }
    }
}
