//! Writing a run (see FILE LAYOUT in the module documentation): the header, the vertex
//! bitmap and edge bloom filter, sparse offsets, the neighbour sections (raw or packed) and
//! the property columns.

use super::*;
pub(super) fn bloom_positions(src: u32, dst: u32, bits: u64) -> impl Iterator<Item = u64> {
    let key = (u64::from(src) << 32) | u64::from(dst);
    let h1 = key.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) ^ 0xD6E8_FEB8_6659_FD93;
    let h2 = (key ^ (key >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9) | 1;
    (0..u64::from(BLOOM_HASHES)).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
}

fn push_u32s(out: &mut Vec<u8>, items: impl Iterator<Item = u32>) {
    for x in items {
        out.extend_from_slice(&x.to_le_bytes());
    }
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

fn push_u64s(out: &mut Vec<u8>, items: impl Iterator<Item = u64>) {
    for x in items {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// The 80 header bytes (see FILE LAYOUT).
pub(super) fn header(meta: &RunMeta, bloom_bits: u64, columns: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES);
    out.extend_from_slice(&meta.edge_table.to_le_bytes());
    out.push(meta.outgoing as u8);
    out.push(meta.level);
    out.push(match meta.packed {
        true => ENCODING_PACKED,
        false => ENCODING_RAW,
    });
    out.push(0);
    out.extend_from_slice(&meta.vertex_lo.to_le_bytes());
    out.extend_from_slice(&meta.vertex_hi.to_le_bytes());
    for x in [
        meta.entries,
        meta.tombstones,
        meta.min_ts,
        meta.max_ts,
        bloom_bits,
    ] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.extend_from_slice(&BLOOM_HASHES.to_le_bytes());
    out.extend_from_slice(&(columns as u32).to_le_bytes());
    out.extend_from_slice(&meta.prop_ts.to_le_bytes());
    out.resize(HEADER_BYTES, 0);
    out
}

/// The source-vertex bitmap and the bloom filter (`bloom_bits` bits) of `vertices`.
fn bitmap_and_bloom(
    meta: &RunMeta,
    vertices: &[RunVertex<'_>],
    bloom_bits: u64,
) -> (Vec<u64>, Vec<u64>) {
    let n = (meta.vertex_hi - meta.vertex_lo) as usize;
    let mut bloom = vec![0u64; (bloom_bits / 64) as usize];
    let mut bitmap = vec![0u64; n.div_ceil(64)];
    for &(v, nbr, _) in vertices {
        if !nbr.is_empty() {
            let i = (v - meta.vertex_lo) as usize;
            bitmap[i / 64] |= 1 << (i % 64);
        }
        for &d in nbr {
            for bit in bloom_positions(v, d, bloom_bits) {
                bloom[(bit / 64) as usize] |= 1 << (bit % 64);
            }
        }
    }
    (bitmap, bloom)
}

/// The sparse offsets of `vertices` (see FILE LAYOUT), checking the writer's preconditions.
fn sparse_offsets(meta: &RunMeta, vertices: &[RunVertex<'_>]) -> Vec<u64> {
    let mut offsets = vec![0u64];
    let mut previous = None;
    for &(v, nbr, eid) in vertices {
        assert!(
            v >= meta.vertex_lo && v < meta.vertex_hi,
            "vertex {v} outside the run's range"
        );
        assert!(previous < Some(v), "run vertices ascend");
        assert_eq!(nbr.len(), eid.len(), "aligned columns");
        previous = Some(v);
        if !nbr.is_empty() {
            offsets.push(offsets[offsets.len() - 1] + nbr.len() as u64);
        }
    }
    offsets
}

/// Writes a run file (and fsyncs it). `vertices` must ascend and lie in the meta's range;
/// `meta.entries`, `tombstones`, `packed`, `min_ts` and `max_ts` are filled in from them / by
/// the caller. `columns` (at most [`MAX_COLUMNS`], read as of `meta.prop_ts`) hold one value
/// per entry. `packing` decides whether the neighbours are packed (see NEIGHBOUR PACKING).
/// Returns the file size in bytes.
pub fn write_run(
    vfs: &dyn Vfs,
    name: &str,
    meta: &mut RunMeta,
    vertices: &[RunVertex<'_>],
    columns: &[ColumnData],
    packing: RunPacking,
) -> Result<u64> {
    assert!(meta.vertex_lo <= meta.vertex_hi, "run range is ordered");
    assert!(columns.len() <= MAX_COLUMNS, "too many property columns");
    let offsets = sparse_offsets(meta, vertices);
    let m = offsets[offsets.len() - 1];
    assert!(
        columns.iter().all(|c| c.len() as u64 == m),
        "property columns aligned with the entries"
    );
    let packed = pack_neighbours(&neighbour_deltas(vertices), packing);
    meta.entries = m;
    meta.packed = packed.is_some();
    meta.tombstones = vertices
        .iter()
        .flat_map(|(_, _, e)| e.iter())
        .filter(|e| *e & TOMBSTONE_BIT != 0)
        .count() as u64;
    let bloom_bits = (m * BLOOM_BITS_PER_ENTRY).next_multiple_of(64).max(64);
    let (bitmap, bloom) = bitmap_and_bloom(meta, vertices, bloom_bits);

    let mut out = Vec::with_capacity(HEADER_BYTES + 8 * offsets.len() + 8 * m as usize + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&header(meta, bloom_bits, columns.len()));
    let header_crc = crc32c::crc32c(&out[MAGIC.len()..]);

    let mut sections = Vec::with_capacity(section_count(columns.len()));
    let mut section = |out: &mut Vec<u8>, write: &dyn Fn(&mut Vec<u8>)| {
        let start = out.len();
        write(out);
        sections.push((
            start as u64,
            (out.len() - start) as u64,
            crc32c::crc32c(&out[start..]),
        ));
    };
    section(&mut out, &|o| push_u64s(o, offsets.iter().copied()));
    section(&mut out, &|o| match &packed {
        Some(words) => push_u64s(o, words.iter().copied()),
        None => push_u32s(
            o,
            vertices.iter().flat_map(|(_, nbr, _)| nbr.iter().copied()),
        ),
    });
    section(&mut out, &|o| {
        push_u32s(
            o,
            vertices.iter().flat_map(|(_, _, eid)| eid.iter().copied()),
        )
    });
    section(&mut out, &|o| push_u64s(o, bitmap.iter().copied()));
    section(&mut out, &|o| push_u64s(o, bloom.iter().copied()));
    let rank: Vec<u32> = bitmap
        .iter()
        .scan(0u32, |before, word| {
            let here = *before;
            *before += word.count_ones();
            Some(here)
        })
        .collect();
    section(&mut out, &|o| push_u32s(o, rank.iter().copied()));
    if !columns.is_empty() {
        section(&mut out, &|o| {
            push_u32s(o, columns.iter().flat_map(|c| [c.key, c.kind as u32]))
        });
        for column in columns {
            section(&mut out, &|o| push_u64s(o, column.values.iter().copied()));
            section(&mut out, &|o| push_u64s(o, column.valid.iter().copied()));
        }
    }
    let section_total = sections.len();
    for (offset, len, crc) in sections {
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    let footer_crc = crc32c::crc32c(&out[out.len() - section_total * 24..]);
    out.extend_from_slice(&header_crc.to_le_bytes());
    out.extend_from_slice(&footer_crc.to_le_bytes());
    out.extend_from_slice(FOOTER_MAGIC);
    let mut file = vfs.create(name)?;
    file.write_all(&out)?;
    file.sync()?;
    Ok(out.len() as u64)
}

/// Sections of a run with `columns` property columns (see FILE LAYOUT).
pub(super) fn section_count(columns: usize) -> usize {
    match columns {
        0 => BASE_SECTIONS,
        k => BASE_SECTIONS + 1 + 2 * k,
    }
}
