//! Neighbour packing (see NEIGHBOUR PACKING in the module documentation): per-vertex
//! deltas, bit-packed in blocks of `PACK_BLOCK_ENTRIES` at a width per block, and unpacked.

use super::*;
/// Per entry, the delta from the previous neighbour of its vertex (the first from 0), in
/// entry order. Wrapping, so unsorted neighbours still round-trip (at a wide width).
pub(super) fn neighbour_deltas(vertices: &[RunVertex<'_>]) -> Vec<u32> {
    let mut deltas = Vec::with_capacity(vertices.iter().map(|(_, n, _)| n.len()).sum());
    for (_, nbr, _) in vertices {
        let mut previous = 0u32;
        for &n in nbr.iter() {
            deltas.push(n.wrapping_sub(previous));
            previous = n;
        }
    }
    deltas
}

/// Words of a block of `entries` deltas of `width` bits.
pub(super) fn block_words(entries: usize, width: u32) -> u64 {
    (entries as u64 * u64::from(width)).div_ceil(64)
}

/// The packed neighbour section (see NEIGHBOUR PACKING) of `deltas`, if `packing` asks for it
/// and, under `WhenItPays`, it takes at most `PACK_MAX_PERCENT_OF_RAW` % of the raw bytes.
pub(super) fn pack_neighbours(deltas: &[u32], packing: RunPacking) -> Option<Vec<u64>> {
    if packing == RunPacking::Never {
        return None;
    }
    let blocks: Vec<&[u32]> = deltas.chunks(PACK_BLOCK_ENTRIES).collect();
    let widths: Vec<u32> = blocks
        .iter()
        .map(|block| u32::BITS - block.iter().fold(0, |all, d| all | d).leading_zeros())
        .collect();
    let block_total: u64 = blocks
        .iter()
        .zip(&widths)
        .map(|(block, &width)| block_words(block.len(), width))
        .sum();
    let packed_bytes = 8 * (blocks.len() as u64 + 1 + block_total + 1);
    let raw_bytes = (4 * deltas.len() as u64).next_multiple_of(8);
    let pays = packed_bytes * 100 <= raw_bytes * PACK_MAX_PERCENT_OF_RAW;
    if packing == RunPacking::WhenItPays && !pays {
        return None;
    }
    let mut words = Vec::with_capacity((packed_bytes / 8) as usize);
    let mut offset = 0u64;
    for (block, &width) in blocks.iter().zip(&widths) {
        words.push(offset << INDEX_WIDTH_BITS | u64::from(width));
        offset += block_words(block.len(), width);
    }
    words.push(offset << INDEX_WIDTH_BITS);
    for (block, &width) in blocks.iter().zip(&widths) {
        pack_block(&mut words, block, width);
    }
    words.push(0);
    debug_assert_eq!(8 * words.len() as u64, packed_bytes);
    Some(words)
}

/// Appends `block`'s values, `width` bits each, LSB first.
fn pack_block(words: &mut Vec<u64>, block: &[u32], width: u32) {
    let first = words.len();
    words.resize(first + block_words(block.len(), width) as usize, 0);
    if width == 0 {
        return; // every delta is 0: the block takes no words
    }
    let width = width as usize;
    for (j, &d) in block.iter().enumerate() {
        let (at, shift) = (first + j * width / 64, j * width % 64);
        words[at] |= u64::from(d) << shift;
        if shift + width > 64 {
            words[at + 1] |= u64::from(d) >> (64 - shift);
        }
    }
}

/// Decodes entries `first..first + out.len()` of a packed section (`index`, then `blocks`: the
/// blocks and the pad word as bytes), `first` being the first entry of a vertex: per block
/// touched, one unaligned 8-byte load, a shift and a mask per entry, and a running sum of the
/// deltas. An entry starts in its block's words, so its load ends at most 8 bytes past them:
/// within the next block or the pad word (`check_packed` guarantees the layout).
pub(super) fn unpack(index: &[u64], blocks: &[u8], first: usize, out: &mut [u32]) {
    let mut sum = 0u32;
    let mut done = 0;
    while done < out.len() {
        let entry = first + done;
        let (block, in_block) = (entry / PACK_BLOCK_ENTRIES, entry % PACK_BLOCK_ENTRIES);
        let n = (PACK_BLOCK_ENTRIES - in_block).min(out.len() - done);
        let start_bit = 64 * (index[block] >> INDEX_WIDTH_BITS) as usize;
        let width = (index[block] & INDEX_WIDTH_MASK) as usize;
        let slots = &mut out[done..done + n];
        if width == 0 {
            slots.fill(sum); // every delta is 0
        } else {
            let mask = (1u64 << width) - 1;
            let mut bit = start_bit + in_block * width;
            for slot in slots {
                let at = bit / 8;
                let word = u64::from_le_bytes(blocks[at..at + 8].try_into().expect("8 bytes"));
                sum = sum.wrapping_add(((word >> (bit % 8)) & mask) as u32);
                *slot = sum;
                bit += width;
            }
        }
        done += n;
    }
}
