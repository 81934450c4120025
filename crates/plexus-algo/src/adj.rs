//! Set operations on sorted neighbour lists.
//!
//! [`Graph`](crate::Graph) keeps every neighbour list sorted by target id (duplicates, i.e.
//! parallel edges, stay adjacent). The set-based kernels (LCC, triangle count) need
//! neighbourhoods as *sets* — the union of out- and in-neighbours, each once, without the vertex
//! itself — and the common elements of two such sets. Both are done here on the sorted slices
//! directly, with no allocation:
//!
//! - [`merge_union`] is a two-pointer merge that emits each distinct id once, in order, with a
//!   mask telling which of the two lists held it (for "is there an edge in this direction?");
//! - [`for_each_common`] merges when the lists have similar lengths and switches to binary
//!   search of the shorter list in the longer one when they differ by more than
//!   [`GALLOP_RATIO`] (a hub against a leaf), so one skewed pair costs `O(short · log long)`.

/// Length ratio beyond which [`for_each_common`] binary-searches instead of merging.
const GALLOP_RATIO: usize = 32;

/// [`merge_union`] mask bit: the id is in the first list.
pub(crate) const IN_FIRST: u8 = 1;
/// [`merge_union`] mask bit: the id is in the second list.
pub(crate) const IN_SECOND: u8 = 2;

/// Call `f(id, mask)` once for each distinct id in `a ∪ b` (both sorted, repeats allowed), in
/// increasing order, except `skip`; `mask` has [`IN_FIRST`] and/or [`IN_SECOND`] set.
#[inline]
pub(crate) fn merge_union(a: &[u32], b: &[u32], skip: u32, mut f: impl FnMut(u32, u8)) {
    let (mut i, mut j) = (0, 0);
    loop {
        let x = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => return,
        };
        let mut mask = 0;
        while a.get(i) == Some(&x) {
            mask |= IN_FIRST;
            i += 1;
        }
        while b.get(j) == Some(&x) {
            mask |= IN_SECOND;
            j += 1;
        }
        if x != skip {
            f(x, mask);
        }
    }
}

/// Call `f(i, j)` for every pair of positions with `a[i] == b[j]`, in increasing order, for
/// sorted lists without repeats.
#[inline]
pub(crate) fn for_each_common(a: &[u32], b: &[u32], mut f: impl FnMut(usize, usize)) {
    debug_assert!(a.windows(2).all(|w| w[0] < w[1]));
    debug_assert!(b.windows(2).all(|w| w[0] < w[1]));
    if a.len().saturating_mul(GALLOP_RATIO) < b.len() {
        for (i, x) in a.iter().enumerate() {
            if let Ok(j) = b.binary_search(x) {
                f(i, j);
            }
        }
    } else if b.len().saturating_mul(GALLOP_RATIO) < a.len() {
        for (j, y) in b.iter().enumerate() {
            if let Ok(i) = a.binary_search(y) {
                f(i, j);
            }
        }
    } else {
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    f(i, j);
                    i += 1;
                    j += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn union(a: &[u32], b: &[u32], skip: u32) -> Vec<(u32, u8)> {
        let mut out = Vec::new();
        merge_union(a, b, skip, |x, mask| out.push((x, mask)));
        out
    }

    fn common(a: &[u32], b: &[u32]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for_each_common(a, b, |i, j| out.push((i, j)));
        out
    }

    #[test]
    fn union_dedups_skips_and_tags() {
        assert_eq!(
            union(&[1, 3, 3, 5], &[2, 3, 6], 5),
            vec![(1, 1), (2, 2), (3, 3), (6, 2)]
        );
        assert_eq!(union(&[], &[4, 4], 0), vec![(4, 2)]);
        assert_eq!(union(&[7], &[], 7), vec![]);
    }

    #[test]
    fn common_all_strategies() {
        let a = [2u32, 4, 6, 8];
        assert_eq!(common(&a, &[1, 2, 6, 9]), vec![(0, 1), (2, 2)]);
        // long b: binary search of a in b
        let long: Vec<u32> = (0..1000).collect();
        assert_eq!(common(&a, &long), vec![(0, 2), (1, 4), (2, 6), (3, 8)]);
        // long a: binary search of b in a
        assert_eq!(common(&long, &[5, 7]), vec![(5, 0), (7, 1)]);
        assert_eq!(common(&[], &long), vec![]);
    }
}
