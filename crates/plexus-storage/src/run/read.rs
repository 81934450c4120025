//! Reading a run: opening and verifying the mapped file, and handing out a vertex's entries,
//! range scans and property columns — zero-copy for a raw run, decoded into the caller's
//! `Scratch` for a packed one.

use super::*;
/// Buffers a packed run's neighbours are decoded into (reused across calls; a raw run leaves
/// them alone). Slices handed out by [`Run::entries`] and [`Run::scan_range`] borrow it.
#[derive(Default)]
pub struct Scratch {
    pub(super) nbr: Vec<u32>,
    /// The (vertex, index among present vertices) a packed scan decoded, in order.
    wanted: Vec<(u32, usize)>,
}

/// Scratches a thread keeps between reads (see [`Scratch::with_many`]).
const MAX_POOLED_SCRATCHES: usize = 64;
/// A pooled scratch whose buffer grew past this many neighbours is dropped, not kept.
const MAX_POOLED_SCRATCH_ENTRIES: usize = 1 << 20;

thread_local! {
    static SCRATCH_POOL: std::cell::Cell<Vec<Scratch>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Scratch {
    /// Runs `f` with one scratch each for `n` runs read side by side, reused from this
    /// thread's earlier reads: a scan decodes segment after segment, and fresh buffers per
    /// segment cost an allocation, page faults and regrowth copies each time. A nested call
    /// (from inside `f`) gets fresh scratches. At most [`MAX_POOLED_SCRATCHES`] are kept,
    /// none grown past [`MAX_POOLED_SCRATCH_ENTRIES`].
    pub fn with_many<R>(n: usize, f: impl FnOnce(&mut [Scratch]) -> R) -> R {
        let mut pool = SCRATCH_POOL.with(|pool| pool.take());
        if pool.len() < n {
            pool.resize_with(n, Scratch::default);
        }
        let result = f(&mut pool[..n]);
        pool.truncate(MAX_POOLED_SCRATCHES);
        // Only the scratches `f` used can have grown.
        for scratch in pool.iter_mut().take(n) {
            if scratch.nbr.capacity() > MAX_POOLED_SCRATCH_ENTRIES {
                *scratch = Scratch::default();
            }
        }
        SCRATCH_POOL.with(|slot| slot.set(pool));
        result
    }
}

/// An open, verified run. Cheap to share (`Arc<Run>`); the bytes are mapped, not copied.
pub struct Run {
    pub name: String,
    pub meta: RunMeta,
    pub(super) bytes: MappedBytes,
    /// Byte ranges of the sections within `bytes`.
    pub(super) sections: Vec<(usize, usize)>,
    pub(super) bloom_bits: u64,
    /// Property columns: (key, kind), in section order.
    pub(super) columns: Vec<(u32, ColumnKind)>,
}

pub(super) fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

pub(super) fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Reinterprets little-endian bytes as a slice of `T` (u32 or u64).
fn cast<T: Copy>(bytes: &[u8]) -> &[T] {
    let size = size_of::<T>();
    assert_eq!(
        bytes.as_ptr() as usize % align_of::<T>(),
        0,
        "section alignment"
    );
    assert_eq!(bytes.len() % size, 0, "section length");
    // SAFETY: alignment and length were checked; u32/u64 have no invalid bit patterns; the
    // bytes live as long as the returned borrow.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size) }
}

/// Bytes [`section_crc`] reads at a time.
const VERIFY_READ_BYTES: usize = 4 << 20;

/// The CRC32C of the `len` bytes of run file `name` at `offset`, read in pieces of at most
/// [`VERIFY_READ_BYTES`] with `Vfs::read_at` rather than through the run's mapping: reading
/// every page of a mapping makes it resident in this process (a reopened database's runs
/// would all count in its memory before any query asked for them), while read pages stay in
/// the page cache only.
fn section_crc(vfs: &dyn Vfs, name: &str, offset: usize, len: usize) -> Result<u32> {
    let mut crc = 0;
    let mut at = offset;
    while at < offset + len {
        let piece = VERIFY_READ_BYTES.min(offset + len - at);
        crc = crc32c::crc32c_append(crc, &vfs.read_at(name, at as u64, piece)?);
        at += piece;
    }
    Ok(crc)
}

/// Largest run file [`Run::open`] verifies from a private copy (see there).
const VERIFY_COPY_MAX_BYTES: u64 = 64 << 20;

/// A private copy of a file's bytes, 8-byte aligned as `cast` needs.
pub(super) struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBytes {
    pub(super) fn copy_of(bytes: &[u8]) -> AlignedBytes {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        for (word, chunk) in words.iter_mut().zip(bytes.chunks(8)) {
            let mut le = [0u8; 8];
            le[..chunk.len()].copy_from_slice(chunk);
            *word = u64::from_ne_bytes(le); // in memory: the chunk's bytes, in file order
        }
        AlignedBytes {
            words,
            len: bytes.len(),
        }
    }
}

impl AsRef<[u8]> for AlignedBytes {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: the words hold at least `len` initialised bytes (each word's memory is its
        // chunk of the file, `from_ne_bytes`); any byte pattern is a valid u8; the borrow
        // lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
    }
}

/// How [`Run::open_checked`] computes the sections' checksums.
#[derive(Clone, Copy)]
enum SectionChecksums {
    /// Over the bytes being checked (a private copy).
    InPlace,
    /// With `Vfs::read_at` ([`section_crc`]): the bytes being checked are the mapping.
    ByReadAt,
}

impl Run {
    /// Maps and verifies a run file (see FILE LAYOUT): every byte is read and checked. A file
    /// of at most [`VERIFY_COPY_MAX_BYTES`] is checked in a private copy read with
    /// `Vfs::read` and then mapped without being touched; a larger one is checked through
    /// its mapping, its sections' checksums computed with `read_at`. Either way the open
    /// leaves no page of the mapping resident beyond the few a large file's structure
    /// checks touch: reading a mapping makes its pages part of this process's memory (this
    /// kernel maps page-cache folios of up to 2 MB per touch), while pages read with
    /// `read`/`read_at` stay in the page cache only, for the queries that will map them.
    pub fn open(vfs: &dyn Vfs, name: &str) -> Result<Run> {
        Self::open_with(vfs, name, VERIFY_COPY_MAX_BYTES)
    }

    /// [`open`](Self::open) with the copy threshold as a parameter (tests take both ways).
    pub(super) fn open_with(vfs: &dyn Vfs, name: &str, copy_max_bytes: u64) -> Result<Run> {
        let size = vfs.size(name)?;
        if size == 0 || size > copy_max_bytes {
            return Self::open_checked(vfs, name, vfs.map(name)?, SectionChecksums::ByReadAt);
        }
        let read = vfs.read(name)?;
        // Checked in place when the allocator aligned it for `cast` (it does, for buffers
        // this large), else in an aligned copy.
        let copy: MappedBytes = if (read.as_ptr() as usize).is_multiple_of(8) {
            std::sync::Arc::new(read)
        } else {
            std::sync::Arc::new(AlignedBytes::copy_of(&read))
        };
        let mut run = Self::open_checked(vfs, name, copy, SectionChecksums::InPlace)?;
        let mapped = vfs.map(name)?;
        if (*mapped).as_ref().len() != (*run.bytes).as_ref().len() {
            return Err(Error::corruption(
                vfs.describe(name),
                0,
                "CSR run: the file changed size while it was opened",
            ));
        }
        run.bytes = mapped;
        Ok(run)
    }

    /// Checks `bytes`, the content of run file `name`, and makes the run over them.
    fn open_checked(
        vfs: &dyn Vfs,
        name: &str,
        bytes: MappedBytes,
        checksums: SectionChecksums,
    ) -> Result<Run> {
        let file = vfs.describe(name);
        let b: &[u8] = (*bytes).as_ref();
        let bad = |offset: usize, detail: &str| {
            Error::corruption(&file, offset as u64, format!("CSR run: {detail}"))
        };
        let h = 8;
        let magic_ok = b.len() >= h + HEADER_BYTES
            && [MAGIC, MAGIC_RAW_ONLY, MAGIC_WITHOUT_COLUMNS]
                .iter()
                .any(|magic| &b[..8] == *magic)
            && &b[b.len() - 8..] == FOOTER_MAGIC;
        if !magic_ok {
            return Err(bad(0, "bad magic or truncated file"));
        }
        if !(b.as_ptr() as usize).is_multiple_of(8) {
            return Err(bad(0, "mapping is not 8-byte aligned"));
        }
        // The column count locates the footer; a damaged count fails the checksums below.
        let column_count = read_u32(b, h + 60) as usize;
        if column_count > MAX_COLUMNS {
            return Err(bad(h + 60, "more property columns than a run may hold"));
        }
        let section_total = section_count(column_count);
        let footer_bytes = section_total * 24 + 16;
        if b.len() < h + HEADER_BYTES + footer_bytes {
            return Err(bad(0, "truncated file"));
        }
        let footer = b.len() - footer_bytes;
        let entries_end = footer + section_total * 24;
        if crc32c::crc32c(&b[footer..entries_end]) != read_u32(b, entries_end + 4) {
            return Err(bad(footer, "footer checksum mismatch"));
        }
        if crc32c::crc32c(&b[h..h + HEADER_BYTES]) != read_u32(b, entries_end) {
            return Err(bad(h, "header checksum mismatch"));
        }
        let meta = RunMeta {
            edge_table: read_u32(b, h),
            outgoing: b[h + 4] != 0,
            level: b[h + 5],
            vertex_lo: read_u32(b, h + 8),
            vertex_hi: read_u32(b, h + 12),
            entries: read_u64(b, h + 16),
            tombstones: read_u64(b, h + 24),
            min_ts: read_u64(b, h + 32),
            max_ts: read_u64(b, h + 40),
            prop_ts: read_u64(b, h + 64),
            packed: match (b[h + ENCODING_BYTE], &b[..8] == MAGIC) {
                (ENCODING_RAW, _) => false,
                (ENCODING_PACKED, true) => true,
                _ => return Err(bad(h + ENCODING_BYTE, "unknown neighbour encoding")),
            },
        };
        let bloom_bits = read_u64(b, h + 48);
        if meta.vertex_hi < meta.vertex_lo || bloom_bits == 0 || !bloom_bits.is_multiple_of(64) {
            return Err(bad(h, "inconsistent header"));
        }
        let mut sections = Vec::with_capacity(section_total);
        for i in 0..section_total {
            let at = footer + i * 24;
            let (offset, len) = (read_u64(b, at) as usize, read_u64(b, at + 8) as usize);
            let aligned = offset.is_multiple_of(8) && len.is_multiple_of(8);
            if !aligned || offset.checked_add(len).is_none_or(|end| end > footer) {
                return Err(bad(at, "section outside the file or not aligned"));
            }
            let crc = match checksums {
                SectionChecksums::InPlace => crc32c::crc32c(&b[offset..offset + len]),
                SectionChecksums::ByReadAt => section_crc(vfs, name, offset, len)?,
            };
            if crc != read_u32(b, at + 16) {
                return Err(bad(offset, &format!("section {i} checksum mismatch")));
            }
            sections.push((offset, offset + len));
        }
        let first_section = sections[0].0;
        let mut run = Run {
            name: name.to_string(),
            meta,
            bytes,
            sections,
            bloom_bits,
            columns: Vec::new(),
        };
        run.columns = run
            .read_column_directory(column_count)
            .map_err(|detail| bad(first_section, &detail))?;
        run.check_shape()
            .map_err(|detail| bad(first_section, &detail))?;
        Ok(run)
    }

    /// The (key, kind) of each property column, from the directory section.
    fn read_column_directory(&self, count: usize) -> Result<Vec<(u32, ColumnKind)>, String> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let directory = self.u32_section(BASE_SECTIONS);
        if directory.len() != 2 * count {
            return Err("property column directory does not match the header".into());
        }
        directory
            .chunks(2)
            .map(|pair| {
                ColumnKind::from_tag(pair[1])
                    .map(|kind| (pair[0], kind))
                    .ok_or_else(|| format!("unknown property column kind {}", pair[1]))
            })
            .collect()
    }

    fn check_shape(&self) -> Result<(), String> {
        let n = (self.meta.vertex_hi - self.meta.vertex_lo) as usize;
        let m = self.meta.entries as usize;
        let bitmap = self.u64_section(3);
        if bitmap.len() != n.div_ceil(64)
            || self.u64_section(4).len() as u64 * 64 != self.bloom_bits
        {
            return Err("bitmap or bloom filter size does not match the header".into());
        }
        let rank = &self.u32_section(5)[..bitmap.len().min(self.u32_section(5).len())];
        let mut before = 0u32;
        for (w, word) in bitmap.iter().enumerate() {
            if rank.get(w) != Some(&before) {
                return Err("rank index does not match the bitmap".into());
            }
            before += word.count_ones();
        }
        let offsets = self.offsets();
        if offsets.len() != before as usize + 1 || offsets.last().copied() != Some(m as u64) {
            return Err("offsets do not match the bitmap and the header".into());
        }
        if offsets.windows(2).any(|w| w[0] >= w[1]) {
            return Err("offsets do not strictly ascend".into());
        }
        if self.meta.packed {
            self.check_packed()?;
        } else if self.u32_section(1).len() < m {
            return Err("neighbour column shorter than the entry count".into());
        }
        if self.u32_section(2).len() < m {
            return Err("edge offset column shorter than the entry count".into());
        }
        for c in 0..self.columns.len() {
            let (values, valid) = self.column_sections(c);
            if values.len() != m || valid.len() != m.div_ceil(64) {
                return Err(format!(
                    "property column {c} does not match the entry count"
                ));
            }
        }
        Ok(())
    }

    /// A packed neighbour section's structure (see NEIGHBOUR PACKING): one index entry per
    /// block of the `m` entries and one more, widths at most 32, each block's words where the
    /// index puts them, then the pad word. With it, decoding stays within the section.
    pub(super) fn check_packed(&self) -> Result<(), String> {
        let m = self.meta.entries as usize;
        let section = self.u64_section(1);
        let blocks = m.div_ceil(PACK_BLOCK_ENTRIES);
        if section.len() < blocks + 2 {
            return Err("packed neighbours shorter than their block index".into());
        }
        let (index, words) = self.packed_sections();
        let mut expected = 0u64;
        for (k, &entry) in index.iter().enumerate() {
            let (offset, width) = (entry >> INDEX_WIDTH_BITS, entry & INDEX_WIDTH_MASK);
            if offset != expected || width > 32 || (k == blocks && width != 0) {
                return Err(format!("packed neighbour block {k} has a bad index entry"));
            }
            let entries = PACK_BLOCK_ENTRIES.min(m.saturating_sub(k * PACK_BLOCK_ENTRIES));
            expected += block_words(entries, width as u32);
        }
        if words.len() as u64 != expected + 1 {
            return Err("packed neighbour blocks do not match their index".into());
        }
        Ok(())
    }

    /// A packed neighbour section split into (block index, blocks and the pad word).
    fn packed_sections(&self) -> (&[u64], &[u64]) {
        let blocks = (self.meta.entries as usize).div_ceil(PACK_BLOCK_ENTRIES);
        self.u64_section(1).split_at(blocks + 1)
    }

    /// [`packed_sections`](Self::packed_sections) with the blocks as bytes, as `unpack` reads
    /// them.
    pub(super) fn packed_bytes(&self) -> (&[u64], &[u8]) {
        let blocks = (self.meta.entries as usize).div_ceil(PACK_BLOCK_ENTRIES);
        let (index, words) = self.section(1).split_at(8 * (blocks + 1));
        (cast(index), words)
    }

    /// Neighbours of entries `a..b` (a vertex's span): the mapped slice of a raw run, or
    /// decoded into `out` (replacing its content) for a packed one.
    pub(super) fn neighbours<'a>(&'a self, a: usize, b: usize, out: &'a mut Vec<u32>) -> &'a [u32] {
        if !self.meta.packed {
            return &self.u32_section(1)[a..b];
        }
        out.clear();
        self.decode_into(a, b, out);
        out
    }

    /// Appends the decoded neighbours of entries `a..b` (a vertex's span) of a packed run.
    fn decode_into(&self, a: usize, b: usize, out: &mut Vec<u32>) {
        debug_assert!(self.meta.packed);
        let at = out.len();
        out.resize(at + (b - a), 0);
        let (index, blocks) = self.packed_bytes();
        unpack(index, blocks, a, &mut out[at..]);
    }

    /// (values, validity bitmap) of property column `c`.
    fn column_sections(&self, c: usize) -> (&[u64], &[u64]) {
        let first = BASE_SECTIONS + 1 + 2 * c;
        (self.u64_section(first), self.u64_section(first + 1))
    }

    /// The position of the property column of `key`, if this run has one.
    pub fn column(&self, key: u32) -> Option<usize> {
        self.columns.iter().position(|&(k, _)| k == key)
    }

    /// The property columns this run carries: (key, kind).
    pub fn columns(&self) -> &[(u32, ColumnKind)] {
        &self.columns
    }

    /// Entries `a..b` of property column `c`.
    fn column_slice(&self, c: usize, a: usize, b: usize) -> ColumnSlice<'_> {
        let (values, valid) = self.column_sections(c);
        ColumnSlice {
            kind: self.columns[c].1,
            values: &values[a..b],
            valid,
            first: a,
        }
    }

    pub(super) fn section(&self, i: usize) -> &[u8] {
        let b: &[u8] = (*self.bytes).as_ref();
        &b[self.sections[i].0..self.sections[i].1]
    }

    fn u32_section(&self, i: usize) -> &[u32] {
        cast(self.section(i))
    }

    fn u64_section(&self, i: usize) -> &[u64] {
        cast(self.section(i))
    }

    pub(super) fn offsets(&self) -> &[u64] {
        self.u64_section(0)
    }

    /// The index of `v` among the vertices present, if present (bitmap + rank).
    pub(super) fn index(&self, v: u32) -> Option<usize> {
        if v < self.meta.vertex_lo || v >= self.meta.vertex_hi {
            return None;
        }
        let i = (v - self.meta.vertex_lo) as usize;
        let word = self.u64_section(3)[i / 64];
        let bit = 1u64 << (i % 64);
        (word & bit != 0).then(|| {
            self.u32_section(5)[i / 64] as usize + (word & (bit - 1)).count_ones() as usize
        })
    }

    /// Whether vertex `v` has entries in this run (source-vertex bitmap).
    pub fn contains_vertex(&self, v: u32) -> bool {
        self.index(v).is_some()
    }

    /// (neighbours, edge offsets) of vertex `v`; empty when the run does not hold it. A packed
    /// run decodes the neighbours into `scratch`.
    pub fn entries<'a>(&'a self, v: u32, scratch: &'a mut Scratch) -> (&'a [u32], &'a [u32]) {
        let (a, b) = self.span(v);
        (
            self.neighbours(a, b, &mut scratch.nbr),
            &self.u32_section(2)[a..b],
        )
    }

    /// `v`'s slice of property column `c` (aligned with [`Run::entries`]).
    pub fn column_entries(&self, c: usize, v: u32) -> ColumnSlice<'_> {
        let (a, b) = self.span(v);
        self.column_slice(c, a, b)
    }

    /// The entry positions of `v` (empty when the run does not hold it).
    fn span(&self, v: u32) -> (usize, usize) {
        let Some(k) = self.index(v) else {
            return (0, 0);
        };
        self.span_of(k)
    }

    /// The entry positions of the `k`-th vertex present.
    fn span_of(&self, k: usize) -> (usize, usize) {
        let offsets = self.offsets();
        (offsets[k] as usize, offsets[k + 1] as usize)
    }

    /// Calls `f(vertex, k)` for every vertex in `[lo, hi)` with entries, in order, `k` being
    /// its index among the vertices present — a walk over the bitmap's set bits.
    fn walk(&self, lo: u32, hi: u32, mut f: impl FnMut(u32, usize)) {
        let (lo, hi) = (lo.max(self.meta.vertex_lo), hi.min(self.meta.vertex_hi));
        if lo >= hi {
            return;
        }
        let (bitmap, rank) = (self.u64_section(3), self.u32_section(5));
        let (first, last) = (
            (lo - self.meta.vertex_lo) as usize,
            (hi - self.meta.vertex_lo) as usize,
        );
        for w in first / 64..last.div_ceil(64) {
            let mut word = bitmap[w];
            // Index of the word's first set bit among all present vertices.
            let mut k = rank[w] as usize;
            if w == first / 64 {
                let below_first = (1u64 << (first % 64)) - 1;
                k += (word & below_first).count_ones() as usize;
                word &= !below_first;
            }
            if w == (last - 1) / 64 && last % 64 != 0 {
                word &= (1u64 << (last % 64)) - 1;
            }
            while word != 0 {
                let bit = word.trailing_zeros() as usize;
                f(self.meta.vertex_lo + (w * 64 + bit) as u32, k);
                word &= word - 1;
                k += 1;
            }
        }
    }

    /// Calls `f(vertex, neighbours, edge offsets, values)` for every vertex in `[lo, hi)`
    /// with entries for which `want(vertex)` holds, in order — a walk over the bitmap's set
    /// bits and the offsets, the static-CSR loop. `values` is the vertex's slice of property
    /// column `column` (see [`Run::column`]), when one is asked for. A packed run first
    /// decodes the wanted vertices' neighbours into `scratch` (one walk), then hands them out
    /// (`want` is called once per vertex either way).
    pub fn scan_range<'a>(
        &'a self,
        lo: u32,
        hi: u32,
        want: &impl Fn(u32) -> bool,
        column: Option<usize>,
        scratch: &'a mut Scratch,
        f: &mut impl FnMut(u32, &'a [u32], &'a [u32], Option<ColumnSlice<'a>>),
    ) {
        let eid = self.u32_section(2);
        let mut emit = |v: u32, (a, b): (usize, usize), nbr: &'a [u32]| {
            let values = column.map(|c| self.column_slice(c, a, b));
            f(v, nbr, &eid[a..b], values);
        };
        let offsets = self.offsets();
        if !self.meta.packed {
            let nbr = self.u32_section(1);
            return self.walk(lo, hi, |v, k| {
                if want(v) {
                    let (a, b) = (offsets[k] as usize, offsets[k + 1] as usize);
                    emit(v, (a, b), &nbr[a..b]);
                }
            });
        }
        let Scratch { nbr, wanted } = scratch;
        nbr.clear();
        wanted.clear();
        // Sections looked up once for the whole walk, not per vertex.
        let (index, blocks) = self.packed_bytes();
        let span = |k: usize| (offsets[k] as usize, offsets[k + 1] as usize);
        self.walk(lo, hi, |v, k| {
            if want(v) {
                wanted.push((v, k));
            }
        });
        // Sized once, then decoded in place: no regrowth copies.
        nbr.resize(wanted.iter().map(|&(_, k)| span(k).1 - span(k).0).sum(), 0);
        let mut at = 0;
        for &(_, k) in wanted.iter() {
            let (a, b) = span(k);
            unpack(index, blocks, a, &mut nbr[at..at + (b - a)]);
            at += b - a;
        }
        let nbr: &'a [u32] = nbr;
        let mut at = 0;
        for &(v, k) in wanted.iter() {
            let (a, b) = span(k);
            emit(v, (a, b), &nbr[at..at + (b - a)]);
            at += b - a;
        }
    }

    /// False when the run certainly holds no entry `src -> dst` (bloom filter).
    pub fn may_contain_edge(&self, src: u32, dst: u32) -> bool {
        let bloom = self.u64_section(4);
        bloom_positions(src, dst, self.bloom_bits)
            .all(|bit| bloom[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
    }

    pub fn size_bytes(&self) -> usize {
        let b: &[u8] = (*self.bytes).as_ref();
        b.len()
    }
}
