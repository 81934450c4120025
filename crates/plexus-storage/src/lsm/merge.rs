//! Merging components: the slices of a vertex's entries across memtables and runs, the
//! per-segment listings merged in vertex order, and the per-vertex merge of run entries —
//! tombstones cancelled, entries sorted, property column values copied (see PROPERTY COLUMNS
//! in the module documentation).

use super::*;

/// One slice of a vertex's entries handed to a scan: neighbours, edge offsets, and the
/// values of the requested property column when the slice comes from a run whose column the
/// reader may use.
pub(super) type Slice<'a> = (&'a [u32], &'a [u32], Option<ColumnSlice<'a>>);

/// Receives one slice: neighbours, edge offsets, column values.
pub(super) type SliceFn<'f> = dyn FnMut(&[u32], &[u32], Option<ColumnSlice<'_>>) + 'f;

/// One vertex's parts across components, oldest first, and whether any holds a tombstone.
pub(super) struct Parts<'a> {
    pub(super) slices: Vec<Slice<'a>>,
    pub(super) tombstones: bool,
}

impl<'a> Parts<'a> {
    pub(super) fn push(&mut self, slice: Slice<'a>, may_have_tombstones: bool) {
        let (nbr, eid, _) = slice;
        if nbr.is_empty() {
            return;
        }
        self.tombstones |= may_have_tombstones && eid.iter().any(|e| e & TOMBSTONE_BIT != 0);
        self.slices.push(slice);
    }

    /// Calls `f` with the visible entries: the slices themselves when nothing is deleted
    /// (else one merged slice, without column values).
    pub(super) fn emit(&self, f: &mut SliceFn<'_>) {
        if !self.tombstones {
            for &(nbr, eid, values) in &self.slices {
                f(nbr, eid, values);
            }
            return;
        }
        let (nbr, eid) = merge_live(self.slices.iter().map(|&(n, e, _)| (n, e)));
        if !nbr.is_empty() {
            f(&nbr, &eid, None);
        }
    }
}

/// One component's entries in a segment, in vertex order: (vertex, slice, whether it may
/// hold a tombstone).
pub(super) type Listing<'a> = Vec<(u32, Slice<'a>, bool)>;

/// Calls `f(vertex, parts)` for every vertex in any listing, in vertex order, with its parts
/// in listing order (listings are given oldest component first).
pub(super) fn merge_listings<'a>(listings: &[Listing<'a>], f: &mut impl FnMut(u32, &Parts<'a>)) {
    let mut cursors = vec![0usize; listings.len()];
    let mut parts = Parts {
        slices: Vec::with_capacity(listings.len()),
        tombstones: false,
    };
    let head = |listing: &Listing<'a>, cursor: usize| listing.get(cursor).map(|entry| entry.0);
    while let Some(v) = listings
        .iter()
        .zip(&cursors)
        .filter_map(|(listing, &cursor)| head(listing, cursor))
        .min()
    {
        parts.slices.clear();
        parts.tombstones = false;
        for (listing, cursor) in listings.iter().zip(cursors.iter_mut()) {
            if let Some(&(w, slice, tombstones)) = listing.get(*cursor)
                && w == v
            {
                parts.push(slice, tombstones);
                *cursor += 1;
            }
        }
        f(v, &parts);
    }
    debug_assert!(cursors.iter().zip(listings).all(|(c, l)| *c == l.len()));
}

/// The property columns (key, kind) every merge input carries, when all carry the same
/// non-empty list and all are current (`prop_ts >= U`, see PROPERTY COLUMNS); `None`: the
/// merge re-reads the values from the rows.
pub(super) fn current_columns(
    inputs: &[RunEntry],
    updated_ts: Timestamp,
) -> Option<Vec<(u32, ColumnKind)>> {
    let first = inputs.first()?.run.columns();
    let current = !first.is_empty()
        && inputs
            .iter()
            .all(|e| e.run.columns() == first && e.run.meta.prop_ts >= updated_ts);
    current.then(|| first.to_vec())
}

/// Sorts one vertex's run entries by (neighbour, edge offset): a run's neighbour lists come
/// out sorted, so projections that need sorted lists (CSR builds) skip sorting vertices held
/// by one run. Entry order carries no meaning (tombstones name edge offsets).
pub(super) fn sort_entries(nbr: &mut Vec<u32>, eid: &mut Vec<u32>) {
    let sorted = (1..nbr.len()).all(|i| (nbr[i - 1], eid[i - 1]) <= (nbr[i], eid[i]));
    if sorted {
        return;
    }
    let mut pairs: Vec<(u32, u32)> = nbr.iter().copied().zip(eid.iter().copied()).collect();
    pairs.sort_unstable();
    (*nbr, *eid) = pairs.into_iter().unzip();
}

/// Appends to `columns` the values of vertex `v`'s `kept` entries (edge offsets, unique within
/// a vertex's merged entries), found among the inputs' entries. Every part's run carries
/// `columns`, in the same order.
fn copy_values(columns: &mut [ColumnData], parts: &[(&[u32], &[u32], &Run)], v: u32, kept: &[u32]) {
    if columns.is_empty() {
        return;
    }
    let sources: Vec<Vec<ColumnSlice>> = parts
        .iter()
        .map(|(_, _, run)| {
            (0..columns.len())
                .map(|c| run.column_entries(c, v))
                .collect()
        })
        .collect();
    // (edge offset, part, position), sorted for lookups by edge offset.
    let mut positions: Vec<(u32, usize, usize)> = parts
        .iter()
        .enumerate()
        .flat_map(|(p, (_, eid, _))| eid.iter().enumerate().map(move |(i, &e)| (e, p, i)))
        .collect();
    positions.sort_unstable();
    for &e in kept {
        let at = positions.partition_point(|&(x, _, _)| x < e);
        let (found, p, i) = positions[at];
        assert_eq!(found, e, "merged entries come from the inputs");
        for (column, slice) in columns.iter_mut().zip(&sources[p]) {
            column.push_from(slice, i);
        }
    }
}

/// Concatenates slices (oldest first), cancelling each tombstone with the entry it deletes
/// when both are present; tombstones for older runs are kept.
fn concat_cancelling(slices: &[(&[u32], &[u32])]) -> (Vec<u32>, Vec<u32>) {
    let nbr: Vec<u32> = slices.iter().flat_map(|(n, _)| n.iter().copied()).collect();
    let eid: Vec<u32> = slices.iter().flat_map(|(_, e)| e.iter().copied()).collect();
    crate::topology::cancel_pairs(&nbr, &eid)
}

/// Concatenates slices (oldest first) and removes tombstones and the entries they delete.
fn merge_live<'a>(
    slices: impl Iterator<Item = (&'a [u32], &'a [u32])> + Clone,
) -> (Vec<u32>, Vec<u32>) {
    let mut dead: Vec<u32> = slices
        .clone()
        .flat_map(|(_, eid)| {
            eid.iter()
                .filter(|e| *e & TOMBSTONE_BIT != 0)
                .map(|e| e & !TOMBSTONE_BIT)
        })
        .collect();
    dead.sort_unstable();
    let mut out = (Vec::new(), Vec::new());
    for (nbr, eid) in slices {
        for (n, e) in nbr.iter().zip(eid) {
            if e & TOMBSTONE_BIT == 0 && dead.binary_search(e).is_err() {
                out.0.push(*n);
                out.1.push(*e);
            }
        }
    }
    out
}

/// The merged entries of every vertex of `range` held by `inputs` (oldest first), sorted per
/// vertex: tombstones dropped with the entries they delete (`drop_tombstones`) or cancelled
/// only against them; `columns` (copied from the inputs, possibly none) receive the values.
pub(super) fn merge_vertices(
    inputs: &[RunEntry],
    (lo, hi): (u32, u32),
    drop_tombstones: bool,
    columns: &mut [ColumnData],
) -> Vec<(u32, Vec<u32>, Vec<u32>)> {
    Scratch::with_many(inputs.len(), |scratch| {
        merge_vertices_with(inputs, (lo, hi), drop_tombstones, columns, scratch)
    })
}

/// [`merge_vertices`] with a scratch per input.
fn merge_vertices_with(
    inputs: &[RunEntry],
    (lo, hi): (u32, u32),
    drop_tombstones: bool,
    columns: &mut [ColumnData],
    scratch: &mut [Scratch],
) -> Vec<(u32, Vec<u32>, Vec<u32>)> {
    let mut merged = Vec::new();
    for v in lo..hi {
        let parts: Vec<(&[u32], &[u32], &Run)> = inputs
            .iter()
            .zip(scratch.iter_mut())
            .map(|(e, scratch)| {
                let (nbr, eid) = e.run.entries(v, scratch);
                (nbr, eid, &*e.run)
            })
            .filter(|(nbr, _, _)| !nbr.is_empty())
            .collect();
        if parts.is_empty() {
            continue;
        }
        let slices: Vec<(&[u32], &[u32])> = parts.iter().map(|p| (p.0, p.1)).collect();
        let (mut nbr, mut eid) = if drop_tombstones {
            merge_live(slices.iter().copied())
        } else {
            concat_cancelling(&slices)
        };
        if !nbr.is_empty() {
            sort_entries(&mut nbr, &mut eid);
            copy_values(columns, &parts, v, &eid);
            merged.push((v, nbr, eid));
        }
    }
    merged
}
