//! Label columns as runs, read straight from their RLE-encoded Parquet pages.
//!
//! WHY
//! ===
//! A label filter needs, per label column, where the flag changes — not the flags. Decoding a
//! column through the Arrow reader writes one bit per vertex (and a filter over three labels
//! of a million vertices spends milliseconds there); the RLE/bit-packed hybrid the pages hold
//! already says "the next 40,000 values are true" in two bytes. [`label_runs`] reads those
//! headers: an RLE run becomes one run, a bit-packed group is walked a byte at a time (whole
//! bytes of one flag at once).
//!
//! WHEN
//! ====
//! Only for the layout Plexus writes (`crate::write`): a REQUIRED BOOLEAN column of flat
//! schema, data pages (v1 or v2) with the `RLE` encoding and no dictionary. Anything else —
//! another writer's PLAIN booleans, a nullable column — answers `None` and the caller decodes
//! through Arrow. Malformed RLE data (a run past the page's values, a truncated header) is an
//! error naming the file.
//!
//! FORMAT
//! ======
//! A page's values: a 4-byte little-endian length, then hybrid groups, each led by a ULEB128
//! header `h`: `h & 1 == 0` → `h >> 1` repeats of the next byte's value (bit width 1: one
//! byte); `h & 1 == 1` → `h >> 1` groups of 8 values bit-packed, least significant bit first.

use std::fs::File;
use std::path::Path;

use parquet::basic::{Encoding, Type as PhysicalType};
use parquet::column::page::Page;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::Error;

/// One column's flags as runs: `(end row, exclusive; flag)`, ends ascending, neighbours of
/// different flags, the last ending at the column's row count.
pub type Runs = Vec<(usize, bool)>;

/// The runs of the columns `names` of the chunk at `path` (see the module docs), or `None`
/// when the file is not laid out for reading them so.
pub fn label_runs(path: &Path, names: &[&str], rows: usize) -> Result<Option<Vec<Runs>>, Error> {
    let bad = |e: parquet::errors::ParquetError| {
        Error::file(path, format!("not a readable Parquet file: {e}"))
    };
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let reader = SerializedFileReader::new(file).map_err(bad)?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let mut all = Vec::with_capacity(names.len());
    for name in names {
        let Some(column) = (schema.columns().iter()).position(|c| {
            c.name() == *name
                && c.max_def_level() == 0
                && c.max_rep_level() == 0
                && c.physical_type() == PhysicalType::BOOLEAN
        }) else {
            return Ok(None);
        };
        let mut runs = Runs::new();
        let mut at = 0;
        for group in 0..reader.num_row_groups() {
            let pages = reader.get_row_group(group).map_err(bad)?;
            for page in pages.get_column_page_reader(column).map_err(bad)? {
                let (buf, values, skip) = match page.map_err(bad)? {
                    Page::DataPage {
                        buf,
                        num_values,
                        encoding: Encoding::RLE,
                        ..
                    } => (buf, num_values, 0),
                    Page::DataPageV2 {
                        buf,
                        num_values,
                        encoding: Encoding::RLE,
                        num_nulls: 0,
                        def_levels_byte_len,
                        rep_levels_byte_len,
                        ..
                    } => (
                        buf,
                        num_values,
                        (def_levels_byte_len + rep_levels_byte_len) as usize,
                    ),
                    _ => return Ok(None),
                };
                let data = buf.get(skip..).unwrap_or_default();
                at = decode_page(data, values as usize, at, &mut runs)
                    .map_err(|what| Error::file(path, format!("column {name:?}: {what}")))?;
            }
        }
        if at != rows {
            return Err(Error::file(
                path,
                format!("column {name:?} holds {at} values, the vertex count says {rows}"),
            ));
        }
        all.push(runs);
    }
    Ok(Some(all))
}

/// Appends the runs of one page's `values` flags, starting at row `at`; returns the row after.
fn decode_page(
    page: &[u8],
    values: usize,
    mut at: usize,
    runs: &mut Runs,
) -> Result<usize, String> {
    let Some((length, rest)) = page.split_first_chunk::<4>() else {
        return Err("a page shorter than its length prefix".into());
    };
    let length = u32::from_le_bytes(*length) as usize;
    let Some(mut data) = rest.get(..length) else {
        return Err(format!(
            "an RLE length of {length} bytes past the page's end"
        ));
    };
    let end = at + values;
    while at < end {
        let header = read_uleb128(&mut data).ok_or("a truncated RLE header")?;
        if header & 1 == 0 {
            let count = (header >> 1) as usize;
            let (&value, rest) = data.split_first().ok_or("an RLE run without its value")?;
            data = rest;
            let count = count.min(end - at);
            push(runs, at + count, value & 1 == 1);
            at += count;
        } else {
            let bytes = (header >> 1) as usize;
            let packed = data
                .get(..bytes)
                .ok_or("bit-packed values past the page's end")?;
            data = &data[bytes..];
            for &byte in packed {
                if at >= end {
                    break; // padding of the last group
                }
                let take = (end - at).min(8);
                if byte == 0 || byte == 0xFF {
                    push(runs, at + take, byte == 0xFF);
                } else {
                    for bit in 0..take {
                        push(runs, at + bit + 1, byte >> bit & 1 == 1);
                    }
                }
                at += take;
            }
        }
    }
    Ok(at)
}

/// Extends the last run to `end` if it holds `flag`, else starts a new one.
fn push(runs: &mut Runs, end: usize, flag: bool) {
    match runs.last_mut() {
        Some(last) if last.1 == flag => last.0 = end,
        _ => runs.push((end, flag)),
    }
}

fn read_uleb128(data: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = data.split_first()?;
        *data = rest;
        value |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(groups: &[u8]) -> Vec<u8> {
        let mut page = (groups.len() as u32).to_le_bytes().to_vec();
        page.extend_from_slice(groups);
        page
    }

    #[test]
    fn runs_and_packed_groups_become_merged_runs() {
        // 300 true (RLE), then 16 bit-packed values: 0xFF, 0b0000_0101, then 5 false (RLE).
        let header_300 = [(300u32 << 1) as u8 | 0x80, ((300u32 << 1) >> 7) as u8];
        let mut groups = vec![header_300[0], header_300[1], 1];
        groups.extend([(2 << 1) | 1, 0xFF, 0b0000_0101]);
        groups.extend([5 << 1, 0]);
        let mut runs = Runs::new();
        let end = decode_page(&page(&groups), 321, 0, &mut runs).unwrap();
        assert_eq!(end, 321);
        assert_eq!(
            runs,
            vec![(309, true), (310, false), (311, true), (321, false)]
        );
    }

    #[test]
    fn padding_is_ignored_and_bad_pages_are_errors() {
        let mut runs = Runs::new();
        // One packed group of 8 where only 3 values count.
        assert_eq!(
            decode_page(&page(&[3, 0b0000_0110]), 3, 10, &mut runs),
            Ok(13)
        );
        assert_eq!(runs, vec![(11, false), (13, true)]);
        assert!(decode_page(&[1, 0], 1, 0, &mut Runs::new()).is_err());
        assert!(decode_page(&page(&[8 << 1]), 8, 0, &mut Runs::new()).is_err());
        assert!(decode_page(&page(&[(4 << 1) | 1, 0]), 32, 0, &mut Runs::new()).is_err());
        assert!(decode_page(&page(&[0x80]), 1, 0, &mut Runs::new()).is_err());
    }
}
