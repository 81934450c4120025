//! Sorted runs: an `IndexRun` in a scratch file (see RUN FORMAT) — its block index, bloom
//! filter and checked block reads — the `RunWriter` that writes one, and the cursors that
//! merge runs into a new one (see MERGES).

use super::*;

/// Where a block is, and its first key (see RUN FORMAT).
pub(super) struct BlockRef {
    pub(super) first_key: Box<[u8]>,
    pub(super) offset: u64,
    pub(super) len_bytes: u32,
}

/// One decoded block: groups of (key, rows).
pub(super) type Block = Vec<(Box<[u8]>, Vec<u32>)>;

/// An immutable sorted run of one map in a scratch file (see RUN FORMAT). Its file is
/// deleted when the run is dropped.
pub(super) struct IndexRun {
    pub(super) vfs: Arc<dyn Vfs>,
    pub(super) cache: Arc<IndexCache>,
    pub(super) name: String,
    pub(super) level: u32,
    pub(super) blocks: Vec<BlockRef>,
    /// Hashed maps only.
    pub(super) bloom: Option<Vec<u64>>,
    pub(super) keys: u64,
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read by MapStats, a test figure")
    )]
    pub(super) entries: u64,
    pub(super) file_bytes: u64,
    pub(super) meta_bytes: u64,
}

impl Drop for IndexRun {
    fn drop(&mut self) {
        // A file that cannot be deleted now is deleted at the next open.
        let _ = self.vfs.remove(&self.name);
        let cache = &self.cache;
        cache
            .run_meta_bytes
            .fetch_sub(self.meta_bytes, Ordering::Relaxed);
        cache.runs.fetch_sub(1, Ordering::Relaxed);
        cache
            .run_file_bytes
            .fetch_sub(self.file_bytes, Ordering::Relaxed);
    }
}

/// The bloom filter probes of `key` in a filter of `bits` bits.
fn bloom_positions(key: &[u8], bits: u64) -> impl Iterator<Item = u64> {
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    let h1 = hasher.finish();
    let h2 = (h1 ^ (h1 >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD) | 1;
    (0..BLOOM_PROBES).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
}

impl IndexRun {
    /// False when the run certainly holds no entry of `key` (bloom filter).
    pub(super) fn may_hold(&self, key: &[u8]) -> bool {
        let Some(bloom) = &self.bloom else {
            return true;
        };
        let bits = bloom.len() as u64 * 64;
        bloom_positions(key, bits).all(|bit| bloom[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
    }

    /// Calls `f` with each key of `range` the run holds, in key order, with its rows (a key
    /// spanning blocks is called once per block).
    pub(super) fn scan(&self, range: &ByteRange, f: &mut dyn FnMut(&[u8], &[u32])) -> Result<()> {
        let first = match range.start() {
            // The last block starting before the start key: it may end with that key.
            Included(low) | Excluded(low) => {
                (self.blocks.partition_point(|b| &*b.first_key < low)).saturating_sub(1)
            }
            Unbounded => 0,
        };
        for index in first..self.blocks.len() {
            let first_key = &self.blocks[index].first_key;
            if range.after_lower(first_key) && !range.continues_to(first_key) {
                return Ok(());
            }
            for (key, rows) in self.read_block(index)? {
                if !range.after_lower(&key) {
                    continue;
                }
                if !range.continues_to(&key) {
                    return Ok(());
                }
                f(&key, &rows);
            }
        }
        Ok(())
    }

    /// Block `index`, verified and decoded (see RUN FORMAT).
    fn read_block(&self, index: usize) -> Result<Block> {
        let block = &self.blocks[index];
        let corrupt =
            |at: u64, detail: String| Error::corruption(self.vfs.describe(&self.name), at, detail);
        self.cache.blocks_read.fetch_add(1, Ordering::Relaxed);
        let bytes = match (self.vfs).read_at(&self.name, block.offset, block.len_bytes as usize) {
            Ok(bytes) => bytes,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(corrupt(
                    block.offset,
                    format!("index run block of {} bytes is truncated", block.len_bytes),
                ));
            }
            Err(e) => return Err(e),
        };
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        if bytes.len() < BLOCK_HEADER_BYTES || word(0) != BLOCK_MAGIC {
            return Err(corrupt(
                block.offset,
                "not an index run block (bad magic)".into(),
            ));
        }
        let payload_len = word(4) as usize;
        if payload_len + BLOCK_HEADER_BYTES != bytes.len() {
            return Err(corrupt(
                block.offset + 4,
                format!(
                    "index run block says {payload_len} payload bytes, expected {}",
                    bytes.len() - BLOCK_HEADER_BYTES
                ),
            ));
        }
        let groups = word(8);
        let payload = &bytes[BLOCK_HEADER_BYTES..];
        if block_crc(block.offset, groups, payload) != word(12) {
            return Err(corrupt(
                block.offset + 12,
                "index run block checksum mismatch".into(),
            ));
        }
        let base = block.offset + BLOCK_HEADER_BYTES as u64;
        let decoded = decode_block(payload, groups, base)
            .map_err(|e| corrupt(e.offset, format!("index run block: {}", e.detail)))?;
        if decoded.first().map(|(key, _)| key) != Some(&block.first_key) {
            return Err(corrupt(
                base,
                "index run block's first key differs from the block index".into(),
            ));
        }
        Ok(decoded)
    }
}

/// The groups of a block payload, checking structure and order (see RUN FORMAT).
fn decode_block(payload: &[u8], groups: u32, base_offset: u64) -> DecodeResult<Block> {
    let mut decoder = Decoder::new(payload, base_offset);
    // Every group takes at least 12 bytes: a corrupt count must not allocate without bound.
    if groups as usize > payload.len() / 12 || groups == 0 {
        return Err(decoder.error(format!("implausible group count {groups}")));
    }
    let mut block: Block = Vec::with_capacity(groups as usize);
    for _ in 0..groups {
        let key_len = decoder.u32()? as usize;
        let key: Box<[u8]> = decoder.bytes(key_len)?.into();
        if block.last().is_some_and(|(last, _)| *last >= key) {
            return Err(decoder.error("keys out of order"));
        }
        let count = decoder.u32()? as usize;
        let rows_bytes = decoder.bytes(count.saturating_mul(4))?;
        if count == 0 {
            return Err(decoder.error("a key without rows"));
        }
        let rows: Vec<u32> = (rows_bytes.chunks_exact(4))
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if rows.windows(2).any(|pair| pair[0] >= pair[1]) {
            return Err(decoder.error("rows out of order"));
        }
        block.push((key, rows));
    }
    if !decoder.is_empty() {
        return Err(decoder.error("bytes after the last group"));
    }
    Ok(block)
}

fn block_crc(offset: u64, groups: u32, payload: &[u8]) -> u32 {
    let head = crc32c::crc32c_append(crc32c::crc32c(&offset.to_le_bytes()), &groups.to_le_bytes());
    crc32c::crc32c_append(head, payload)
}

/// Writes a run's blocks as entries arrive (sorted by key, then row, without repeats).
pub(super) struct RunWriter {
    pub(super) file: Box<dyn VfsFile>,
    pub(super) block_target_bytes: usize,
    /// Bytes written so far: the next block's offset.
    pub(super) offset: u64,
    /// Closed groups of the block being filled.
    pub(super) payload: Vec<u8>,
    pub(super) groups: u32,
    pub(super) first_key: Option<Box<[u8]>>,
    /// The group being filled: its key and rows.
    pub(super) current: Option<(Vec<u8>, Vec<u32>)>,
    pub(super) blocks: Vec<BlockRef>,
    pub(super) bloom: Option<Vec<u64>>,
    pub(super) keys: u64,
    pub(super) entries: u64,
}

impl RunWriter {
    /// Adds the entry `(key, row)`, after every entry added so far.
    pub(super) fn push(&mut self, key: &[u8], row: u32) -> Result<()> {
        if key.len() > MAX_KEY_BYTES {
            return Err(Error::LimitExceeded(format!(
                "an index key of {} bytes does not fit an index run block",
                key.len()
            )));
        }
        let same_key = self.current.as_ref().is_some_and(|(k, _)| k == key);
        if !same_key {
            self.close_group();
            self.keys += 1;
            if let Some(bloom) = &mut self.bloom {
                let bits = bloom.len() as u64 * 64;
                for bit in bloom_positions(key, bits) {
                    bloom[(bit / 64) as usize] |= 1 << (bit % 64);
                }
            }
            self.current = Some((key.to_vec(), Vec::new()));
        }
        let Some((current_key, rows)) = self.current.as_mut() else {
            unreachable!("a group was just opened");
        };
        debug_assert!(rows.last().is_none_or(|&last| last < row), "rows ascend");
        rows.push(row);
        self.entries += 1;
        let open_bytes = 8 + current_key.len() + 4 * rows.len();
        if self.payload.len() + open_bytes >= self.block_target_bytes {
            // The key's remaining rows continue in the next block.
            let key = current_key.clone();
            self.close_group();
            self.finish_block()?;
            self.current = Some((key, Vec::new()));
        }
        Ok(())
    }

    /// Appends the group being filled (if it has rows) to the block's payload.
    fn close_group(&mut self) {
        let Some((key, rows)) = self.current.take() else {
            return;
        };
        if rows.is_empty() {
            return;
        }
        if self.groups == 0 {
            self.first_key = Some(key.as_slice().into());
        }
        self.payload
            .extend_from_slice(&(key.len() as u32).to_le_bytes());
        self.payload.extend_from_slice(&key);
        self.payload
            .extend_from_slice(&(rows.len() as u32).to_le_bytes());
        for row in rows {
            self.payload.extend_from_slice(&row.to_le_bytes());
        }
        self.groups += 1;
    }

    /// Writes the block being filled, if it holds anything (the open group included).
    pub(super) fn finish_block(&mut self) -> Result<()> {
        self.close_group();
        if self.groups == 0 {
            return Ok(());
        }
        let len = BLOCK_HEADER_BYTES + self.payload.len();
        let len_bytes = u32::try_from(len).map_err(|_| {
            Error::LimitExceeded(format!("an index run block of {len} bytes is too long"))
        })?;
        let mut block = Vec::with_capacity(len);
        block.extend_from_slice(&BLOCK_MAGIC.to_le_bytes());
        block.extend_from_slice(&(self.payload.len() as u32).to_le_bytes());
        block.extend_from_slice(&self.groups.to_le_bytes());
        block.extend_from_slice(&block_crc(self.offset, self.groups, &self.payload).to_le_bytes());
        block.extend_from_slice(&self.payload);
        self.file.write_all(&block)?;
        let first_key = self
            .first_key
            .take()
            .expect("a block with groups has a first key");
        self.blocks.push(BlockRef {
            first_key,
            offset: self.offset,
            len_bytes,
        });
        self.offset += len as u64;
        self.payload.clear();
        self.groups = 0;
        Ok(())
    }
}

/// Reads one run's entries in order, a block at a time.
pub(super) struct Cursor<'a> {
    pub(super) run: &'a IndexRun,
    next_block: usize,
    pub(super) block: Block,
    pub(super) group: usize,
    pub(super) row: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(run: &'a IndexRun) -> Result<Self> {
        let mut cursor = Cursor {
            run,
            next_block: 0,
            block: Vec::new(),
            group: 0,
            row: 0,
        };
        cursor.settle()?;
        Ok(cursor)
    }

    /// Moves to the next block while the current one is used up.
    fn settle(&mut self) -> Result<()> {
        while self.group == self.block.len() && self.next_block < self.run.blocks.len() {
            self.block = self.run.read_block(self.next_block)?;
            self.next_block += 1;
            self.group = 0;
            self.row = 0;
        }
        Ok(())
    }

    fn peek(&self) -> Option<(&[u8], u32)> {
        let (key, rows) = self.block.get(self.group)?;
        Some((key, rows[self.row]))
    }

    fn advance(&mut self) -> Result<()> {
        self.row += 1;
        if self.row == self.block[self.group].1.len() {
            self.group += 1;
            self.row = 0;
        }
        self.settle()
    }
}

/// Writes the union of `inputs`' entries, in order, each once.
pub(super) fn merge_into(inputs: &[Arc<IndexRun>], writer: &mut RunWriter) -> Result<()> {
    let mut cursors = (inputs.iter())
        .map(|run| Cursor::new(run))
        .collect::<Result<Vec<_>>>()?;
    loop {
        let smallest = (cursors.iter().enumerate())
            .filter_map(|(i, c)| c.peek().map(|entry| (entry, i)))
            .min();
        let Some(((key, row), _)) = smallest else {
            return Ok(());
        };
        let key: Box<[u8]> = key.into();
        writer.push(&key, row)?;
        for cursor in &mut cursors {
            while cursor.peek() == Some((&*key, row)) {
                cursor.advance()?;
            }
        }
    }
}
