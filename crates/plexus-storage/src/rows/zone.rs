//! Zone maps: the range of each numeric column's values over a chunk, for scans that skip
//! the chunks that cannot hold a row they want.
//!
//! WHAT
//! ====
//! A chunk's [`Zone`] of a declared INT64 or FLOAT64 column (in a column of its own, not a
//! family) is the smallest and largest value among the chunk's existing rows — `Empty` when
//! no row exists — provided every existing row has a value and none is NaN; otherwise the
//! column has no zone (`None`) and nothing may be skipped by it. A top-k sort under a
//! parallel scan reads them (`Transaction::vertex_property_zones`): a chunk whose largest
//! value is below the sort's bar holds no row of `ORDER BY … DESC LIMIT k`, and is not read.
//!
//! VALID WHEN
//! ==========
//! A zone describes the values stored in place (the newest, see VERSIONS in the module
//! essay), so it answers only a reader that sees exactly those: one at or after the chunk's
//! newest write (`ts >= max_write_ts`, the condition under which typed reads take a column
//! whole). An older reader gets `None`.
//!
//! KEPT, DROPPED
//! =============
//! A resident chunk computes its zones together, once, on the first request
//! (`Chunk::zones`), under its read latch — no write can fall between the values read and
//! the zones kept. Every write reaches a chunk through `latch_write`, which drops them under
//! the write latch. Eviction hands them (computed then if never asked for, while the values
//! are at hand) to the slot's `ExistingRows`, so they outlive eviction and are answered for
//! an evicted chunk without reading its page; a load hands them back to the chunk (the page
//! holds the same values). Garbage collection drops only older versions. What an evicted
//! chunk keeps in memory grows by its zones: one `Option<Zone>` (24 bytes) per column.

use super::*;

/// The range of a numeric column over a chunk's existing rows (see the module essay).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Zone {
    /// No row of the chunk exists.
    Empty,
    Int {
        min: i64,
        max: i64,
    },
    /// Neither is NaN (a chunk holding a NaN has no zone).
    Float {
        min: f64,
        max: f64,
    },
}

/// The zones of a chunk's columns, by column (`None`: that column has none).
pub(super) type ChunkZones = Box<[Option<Zone>]>;

impl Chunk {
    /// The zone of every column (see WHAT).
    pub(super) fn zone_maps(&self, layout: &Layout) -> ChunkZones {
        (self.columns.iter().enumerate())
            .map(|(i, column)| {
                let single = !layout.is_family(i);
                single.then(|| column.zone(&self.exists)).flatten()
            })
            .collect()
    }
}

impl Column {
    /// The zone of this single-property column over the rows `exists` marks.
    fn zone(&self, exists: &[bool]) -> Option<Zone> {
        debug_assert_eq!(exists.len(), CHUNK_ROWS);
        let rows = || (0..CHUNK_ROWS).filter(|&r| exists[r]);
        if rows().any(|r| !self.valid[r]) {
            return None;
        }
        match &self.data {
            ColumnData::Int64(values) => Some(
                (rows().map(|r| values[r]))
                    .fold(None, |range: Option<(i64, i64)>, v| {
                        Some(range.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
                    })
                    .map_or(Zone::Empty, |(min, max)| Zone::Int { min, max }),
            ),
            ColumnData::Float64(values) => {
                let mut range: Option<(f64, f64)> = None;
                for v in rows().map(|r| values[r]) {
                    if v.is_nan() {
                        return None;
                    }
                    range = Some(range.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
                }
                Some(range.map_or(Zone::Empty, |(min, max)| Zone::Float { min, max }))
            }
            _ => None,
        }
    }
}

impl RowTable {
    /// The zones of property `key` over `rows` for a reader at `ts`: `rows` cut at chunk
    /// boundaries, each part with its chunk's zone (see the module essay) — `None` when the
    /// key is not a declared INT64 / FLOAT64 column of its own, the chunk has no zone for it,
    /// the reader is older than the chunk's newest write, or the rows are past the last
    /// chunk.
    pub fn zones(
        &self,
        rows: Range<u32>,
        key: PropKeyId,
        ts: Timestamp,
    ) -> Vec<(Range<u32>, Option<Zone>)> {
        let column = match self.layout.declared.get(&key) {
            Some(&(DataType::Int64 | DataType::Float64, ColumnRef::Single(c))) => Some(c),
            _ => None,
        };
        let mut parts = Vec::new();
        let mut start = rows.start;
        while start < rows.end {
            let chunk_end = (start as usize / CHUNK_ROWS + 1) * CHUNK_ROWS;
            let end = rows.end.min(u32::try_from(chunk_end).unwrap_or(u32::MAX));
            let zone = column.and_then(|column| self.chunk_zone(start, column, ts));
            parts.push((start..end, zone));
            start = end;
        }
        parts
    }

    /// The zone of column `column` over the chunk holding `row`, for a reader at `ts`.
    fn chunk_zone(&self, row: u32, column: usize, ts: Timestamp) -> Option<Zone> {
        let slot = self.slot(row)?;
        let state = slot.state.read();
        let zones = match (&state.chunk, &state.existing) {
            (Some(chunk), _) if ts >= chunk.max_write_ts => {
                chunk.zones.get_or_init(|| chunk.zone_maps(&self.layout))
            }
            (None, Some(existing)) if ts >= existing.max_write_ts => &existing.zones,
            _ => return None,
        };
        zones[column]
    }
}

#[cfg(test)]
mod tests {
    use super::super::eviction::tests::spilling_table;
    use super::*;

    const C: u32 = CHUNK_ROWS as u32;

    /// Zones bound the values of the rows that exist in place, per chunk, for readers at or
    /// after the chunk's newest write; a chunk with a row without a value, or a NaN, has none;
    /// they are answered for evicted chunks without loading them, and a write replaces them.
    #[test]
    fn zones_bound_each_chunks_existing_values_and_outlive_eviction() {
        let (_vfs, _cache, t) = spilling_table();
        let rows = 2 * C + 5;
        for _ in 0..rows {
            let row = t.reserve(u32::MAX).unwrap();
            let props = [
                (0, Value::Bool(true)),
                (1, Value::Int(i64::from(row) * 3)),
                (2, Value::Float(-f64::from(row) / 2.0)),
                (7, Value::Int(1)),
            ];
            t.install_create(row, 1, 1, &[], &props).unwrap();
        }
        let int = |min: u32, max: u32| {
            Some(Zone::Int {
                min: i64::from(min) * 3,
                max: i64::from(max) * 3,
            })
        };
        let ints = vec![
            (0..C, int(0, C - 1)),
            (C..2 * C, int(C, 2 * C - 1)),
            (2 * C..rows, int(2 * C, rows - 1)),
        ];
        assert_eq!(t.zones(0..rows, 1, 1), ints);
        let float = |min: u32, max: u32| {
            Some(Zone::Float {
                min: -f64::from(max) / 2.0,
                max: -f64::from(min) / 2.0,
            })
        };
        assert_eq!(
            t.zones(10..C + 3, 2, 1),
            vec![(10..C, float(0, C - 1)), (C..C + 3, float(C, 2 * C - 1))]
        );
        // A BOOLEAN column, an INT64 in a family, an undeclared key, an older reader, rows
        // past the last chunk: no zone.
        for (key, ts) in [(0, 1), (7, 1), (30, 1), (1, 0)] {
            assert!(
                t.zones(0..C, key, ts).iter().all(|(_, z)| z.is_none()),
                "{key} at {ts}"
            );
        }
        assert_eq!(
            t.zones(4 * C..4 * C + 1, 1, 1),
            vec![(4 * C..4 * C + 1, None)]
        );

        // Evicted: the same zones, and the chunks stay evicted.
        assert_eq!(t.evict(1, 0).unwrap(), 2);
        assert_eq!(t.chunk_residency(), (1, 2));
        assert_eq!(t.zones(0..rows, 1, 1), ints);
        assert_eq!(t.chunk_residency(), (1, 2));

        // Deleting the largest value of chunk 0 narrows its zone (for readers after it); a
        // row losing its value in chunk 1 and a NaN in chunk 2 leave theirs without one.
        t.install_delete(C - 1, 2, 2).unwrap();
        t.install_prop(C + 7, 3, 3, 1, None).unwrap();
        t.install_prop(2 * C + 1, 4, 4, 2, Some(Value::Float(f64::NAN)))
            .unwrap();
        assert_eq!(t.zones(0..1, 1, 1), vec![(0..1, None)], "older reader");
        assert_eq!(t.zones(0..1, 1, 4), vec![(0..1, int(0, C - 2))]);
        assert_eq!(t.zones(C..C + 1, 1, 4), vec![(C..C + 1, None)]);
        assert_eq!(t.zones(2 * C..rows, 2, 4), vec![(2 * C..rows, None)]);
        assert_eq!(
            t.zones(2 * C..rows, 1, 4),
            vec![(2 * C..rows, int(2 * C, rows - 1))]
        );
        // A chunk none of whose rows exists is empty.
        for row in 2 * C..rows {
            t.install_delete(row, 5, 5).unwrap();
        }
        assert_eq!(
            t.zones(2 * C..rows, 2, 5),
            vec![(2 * C..rows, Some(Zone::Empty))]
        );
        // A chunk written and evicted before any request has its zones computed then.
        t.install_prop(0, 6, 6, 1, Some(Value::Int(-9))).unwrap();
        t.evict(6, 0).unwrap();
        assert_eq!(t.chunk_residency().1, 2);
        let written = Zone::Int {
            min: -9,
            max: i64::from(C - 2) * 3,
        };
        assert_eq!(t.zones(0..1, 1, 6), vec![(0..1, Some(written))]);
        assert_eq!(t.chunk_residency().1, 2);
    }
}
