//! Vertices as runs of consecutive offsets: what a label scan lists without one id per vertex.

use crate::ids::{VertexId, VertexTableId};
use std::ops::Range;

/// Vertices as runs of consecutive offsets within their tables, each run with the number of
/// vertices before it, so the vertices at positions `a..b` of the whole list are found by a
/// binary search and read without the list ever being made: a label scan over a table without
/// deleted rows is one run per storage chunk (`Transaction::scan_label_runs`), and a parallel
/// scan hands its workers positions (morsels) into it.
///
/// INVARIANT: no run is empty, and `starts` holds, per run, the vertices before it, then the
/// total.
#[derive(Debug, Clone)]
pub struct VertexRuns {
    runs: Vec<(VertexTableId, Range<u32>)>,
    starts: Vec<usize>,
}

impl Default for VertexRuns {
    fn default() -> Self {
        VertexRuns {
            runs: Vec::new(),
            starts: vec![0],
        }
    }
}

impl VertexRuns {
    /// Adds `rows` of `table` at the end (nothing if empty), joined to the last run when they
    /// follow it.
    pub fn push(&mut self, table: VertexTableId, rows: Range<u32>) {
        if rows.is_empty() {
            return;
        }
        let added = rows.len();
        match self.runs.last_mut() {
            Some((last_table, last)) if *last_table == table && last.end == rows.start => {
                last.end = rows.end;
            }
            _ => {
                self.runs.push((table, rows));
                self.starts.push(self.len());
            }
        }
        *self.starts.last_mut().expect("starts ends with the total") += added;
        debug_assert_eq!(self.starts.len(), self.runs.len() + 1);
    }

    /// `ids` in the order given, as runs.
    pub fn from_ids(ids: impl IntoIterator<Item = VertexId>) -> Self {
        let mut runs = VertexRuns::default();
        for v in ids {
            runs.push(v.table, v.offset..v.offset + 1);
        }
        runs
    }

    /// Vertices in all runs.
    pub fn len(&self) -> usize {
        *self.starts.last().expect("starts ends with the total")
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the vertices are in strictly increasing id order (each listed once).
    pub fn is_sorted(&self) -> bool {
        self.runs
            .windows(2)
            .all(|w| (w[0].0, w[0].1.end) <= (w[1].0, w[1].1.start))
    }

    /// The vertices at `positions` of the list, in order (those past its end are not
    /// there), as runs.
    pub fn runs_in(
        &self,
        positions: Range<usize>,
    ) -> impl Iterator<Item = (VertexTableId, Range<u32>)> + '_ {
        let first = (self.starts[..self.runs.len()])
            .partition_point(|&start| start <= positions.start)
            .saturating_sub(1);
        (self.runs[first..].iter().zip(&self.starts[first..]))
            .take_while(move |(_, start)| **start < positions.end)
            .map(move |((table, rows), &start)| {
                let len = rows.len();
                let from = positions.start.saturating_sub(start).min(len);
                let to = (positions.end - start).min(len);
                (*table, rows.start + from as u32..rows.start + to as u32)
            })
            .filter(|(_, rows)| !rows.is_empty())
    }

    /// Every vertex, in order.
    pub fn ids(&self) -> Vec<VertexId> {
        let mut ids = Vec::with_capacity(self.len());
        for (table, rows) in &self.runs {
            ids.extend(rows.clone().map(|offset| VertexId::new(*table, offset)));
        }
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_join_and_ranges_read_across_them() {
        let mut runs = VertexRuns::default();
        assert!(runs.is_empty() && runs.runs_in(0..5).next().is_none());
        runs.push(0, 3..6);
        runs.push(0, 6..8); // joined: 3..8
        runs.push(0, 9..9); // empty: nothing
        runs.push(0, 10..12);
        runs.push(2, 0..3);
        let all: Vec<VertexId> = [(0, 3..8), (0, 10..12), (2, 0..3)]
            .into_iter()
            .flat_map(|(t, rows)| rows.map(move |o| VertexId::new(t, o)))
            .collect();
        assert_eq!(runs.len(), all.len());
        assert_eq!(runs.runs.len(), 3);
        assert!(runs.is_sorted());
        assert_eq!(runs.ids(), all);
        for a in 0..=all.len() + 1 {
            for b in a..=all.len() + 2 {
                let expected: Vec<_> = all.iter().copied().skip(a).take(b - a).collect();
                let got: Vec<_> = (runs.runs_in(a..b))
                    .flat_map(|(t, rows)| rows.map(move |o| VertexId::new(t, o)))
                    .collect();
                assert_eq!(got, expected, "{a}..{b}");
            }
        }
        assert_eq!(VertexRuns::from_ids(all.iter().copied()).runs, runs.runs);
    }

    #[test]
    fn out_of_order_runs_are_not_sorted() {
        let runs = VertexRuns::from_ids([VertexId::new(1, 4), VertexId::new(0, 9)]);
        assert!(!runs.is_sorted());
        let runs = VertexRuns::from_ids([VertexId::new(0, 4), VertexId::new(0, 4)]);
        assert!(!runs.is_sorted(), "a vertex twice");
    }
}
