//! The write-ahead log: checksummed redo records in segment files, with group commit.
//!
//! FORMAT
//! ======
//! Segment files `wal-NNNNNNNNNNNNNNNN.log` hold a sequence of frames:
//!
//! ```text
//!   [payload length: u32 LE][CRC32C of payload: u32 LE][payload: a LogRecord]
//! ```
//!
//! A new segment starts when the current one exceeds `wal_segment_max_bytes`, at every
//! checkpoint, and at every open (so a process never appends after a tail it did not write).
//!
//! GROUP COMMIT
//! ============
//! Committers append encoded frames to an in-memory buffer (in commit-timestamp order: the
//! commit pipeline appends under its commit lock) and get back the log sequence number (LSN) of
//! their frame's end. In `fsync` mode a committer then waits until `durable_lsn` passes its LSN.
//! One waiter at a time becomes the *flusher*: it takes the whole buffer, writes it and fsyncs
//! once; everyone whose frame was in that buffer is released by the same fsync. In `periodic`
//! and `none` modes a background thread flushes every `sync_interval_ms` (with and without
//! fsync) and committers do not wait.
//!
//! FAILURE
//! =======
//! A failed write or fsync *poisons* the log: the outcome of that data on disk is unknown
//! (PostgreSQL's fsync lesson), so every later commit fails with `Error::Poisoned` until the
//! database is reopened and recovery reads what really reached the disk.
//!
//! READING
//! =======
//! [`read_segment`] decodes frames until the end. An incomplete frame at the end, or a bad
//! checksum on the very last frame, is a torn write: the frames before it are returned and the
//! caller cuts the file there. A bad frame followed by more data is corruption and an error
//! naming the file and offset — never silently skipped, since that could drop acknowledged
//! commits.

use crate::codec::{Decoder, Encoder};
use crate::record::LogRecord;
use crate::vfs::{Vfs, VfsFile};
use parking_lot::{Condvar, Mutex};
use plexus_types::{Error, Result, Timestamp};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub const FRAME_HEADER_BYTES: usize = 8;
/// Upper bound on one record, so a corrupt length cannot trigger a huge allocation.
pub const MAX_RECORD_BYTES: usize = 1 << 30;

pub fn segment_name(id: u64) -> String {
    format!("wal-{id:016}.log")
}

pub fn parse_segment_name(name: &str) -> Option<u64> {
    name.strip_prefix("wal-")?
        .strip_suffix(".log")?
        .parse()
        .ok()
}

pub fn encode_frame(record: &LogRecord, out: &mut Vec<u8>) {
    let mut enc = Encoder::default();
    record.encode(&mut enc);
    assert!(
        enc.buf.len() <= MAX_RECORD_BYTES,
        "log record of {} bytes is too large",
        enc.buf.len()
    );
    out.extend_from_slice(&(enc.buf.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32c::crc32c(&enc.buf).to_le_bytes());
    out.extend_from_slice(&enc.buf);
}

/// The records of one segment, and where its valid part ends.
pub struct SegmentContents {
    pub records: Vec<LogRecord>,
    pub valid_bytes: u64,
    pub torn_tail: bool,
}

pub fn read_segment(data: &[u8], file: &str) -> Result<SegmentContents> {
    let mut records = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let rest = &data[pos..];
        let torn = |records| {
            Ok(SegmentContents {
                records,
                valid_bytes: pos as u64,
                torn_tail: true,
            })
        };
        if rest.len() < FRAME_HEADER_BYTES {
            return torn(records);
        }
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let crc = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]);
        let frame_end = FRAME_HEADER_BYTES.saturating_add(len);
        if len > MAX_RECORD_BYTES || frame_end > rest.len() {
            // Either a torn frame, or a corrupt length; both only acceptable at the tail.
            if len > MAX_RECORD_BYTES && rest.len() > FRAME_HEADER_BYTES + MAX_RECORD_BYTES {
                return Err(Error::corruption(
                    file,
                    pos as u64,
                    format!("WAL frame length {len} is implausible"),
                ));
            }
            return torn(records);
        }
        let payload = &rest[FRAME_HEADER_BYTES..frame_end];
        if crc32c::crc32c(payload) != crc {
            if frame_end == rest.len() {
                return torn(records);
            }
            return Err(Error::corruption(
                file,
                pos as u64,
                "WAL record checksum mismatch in the middle of the log (not a torn tail); refusing to replay past it",
            ));
        }
        let mut dec = Decoder::new(payload, (pos + FRAME_HEADER_BYTES) as u64);
        let record = LogRecord::decode(&mut dec).map_err(|e| {
            Error::corruption(
                file,
                e.offset,
                format!("undecodable WAL record: {}", e.detail),
            )
        })?;
        records.push(record);
        pos += frame_end;
    }
    Ok(SegmentContents {
        records,
        valid_bytes: pos as u64,
        torn_tail: false,
    })
}

struct Buffer {
    bytes: Vec<u8>,
    /// LSN just past the end of `bytes`.
    end_lsn: u64,
    /// Highest commit timestamp in the log so far (buffered or flushed).
    end_ts: Timestamp,
    flushing: bool,
    poisoned: Option<String>,
}

struct Output {
    file: Box<dyn VfsFile>,
    segment_id: u64,
    segment_bytes: u64,
}

pub struct Wal {
    vfs: Arc<dyn Vfs>,
    segment_max_bytes: u64,
    buffer: Mutex<Buffer>,
    flushed: Condvar,
    output: Mutex<Output>,
    durable_lsn: AtomicU64,
    durable_ts: AtomicU64,
    /// WAL bytes appended since the last checkpoint (for automatic checkpoints).
    bytes_since_checkpoint: AtomicU64,
    /// Bytes written to segment files and fsyncs of them since open (see [`WalStats`]).
    written_bytes: AtomicU64,
    fsyncs: AtomicU64,
}

/// What the log has done since the database opened, for metrics: bytes written to segment
/// files (frames, not the in-memory buffer) and fsyncs of segment files. Under group commit
/// one fsync makes many commits durable, so `fsyncs` below the commit count is the point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalStats {
    pub written_bytes: u64,
    pub fsyncs: u64,
}

impl Wal {
    /// Starts a new segment `segment_id` (recovery has read everything before it).
    pub fn create(
        vfs: Arc<dyn Vfs>,
        segment_id: u64,
        segment_max_bytes: u64,
        recovered_ts: Timestamp,
    ) -> Result<Self> {
        let file = vfs.create(&segment_name(segment_id))?;
        vfs.sync_dir()?;
        Ok(Self {
            vfs,
            segment_max_bytes,
            buffer: Mutex::new(Buffer {
                bytes: Vec::new(),
                end_lsn: 0,
                end_ts: recovered_ts,
                flushing: false,
                poisoned: None,
            }),
            flushed: Condvar::new(),
            output: Mutex::new(Output {
                file,
                segment_id,
                segment_bytes: 0,
            }),
            durable_lsn: AtomicU64::new(0),
            durable_ts: AtomicU64::new(recovered_ts),
            bytes_since_checkpoint: AtomicU64::new(0),
            written_bytes: AtomicU64::new(0),
            fsyncs: AtomicU64::new(0),
        })
    }

    /// Appends a record to the buffer; returns the LSN a committer waits for.
    pub fn append(&self, record: &LogRecord) -> Result<u64> {
        let mut buffer = self.buffer.lock();
        if let Some(reason) = &buffer.poisoned {
            return Err(Error::Poisoned(reason.clone()));
        }
        let before = buffer.bytes.len();
        encode_frame(record, &mut buffer.bytes);
        let added = (buffer.bytes.len() - before) as u64;
        buffer.end_lsn += added;
        if let LogRecord::Commit(commit) = record {
            debug_assert!(
                commit.ts > buffer.end_ts || buffer.end_ts == 0,
                "commits are logged in timestamp order"
            );
            buffer.end_ts = buffer.end_ts.max(commit.ts);
        }
        self.bytes_since_checkpoint
            .fetch_add(added, Ordering::Relaxed);
        Ok(buffer.end_lsn)
    }

    pub fn durable_ts(&self) -> Timestamp {
        self.durable_ts.load(Ordering::Acquire)
    }

    pub fn bytes_since_checkpoint(&self) -> u64 {
        self.bytes_since_checkpoint.load(Ordering::Relaxed)
    }

    /// Blocks until everything up to `lsn` is on stable storage, flushing it if no one else is.
    pub fn wait_durable(&self, lsn: u64) -> Result<()> {
        let mut buffer = self.buffer.lock();
        loop {
            if let Some(reason) = &buffer.poisoned {
                return Err(Error::Poisoned(reason.clone()));
            }
            if self.durable_lsn.load(Ordering::Acquire) >= lsn {
                return Ok(());
            }
            if buffer.flushing {
                self.flushed.wait(&mut buffer);
                continue;
            }
            drop(buffer);
            let result = self.flush(true);
            buffer = self.buffer.lock();
            result?;
        }
    }

    /// Writes the buffer out (and fsyncs it when `sync`). One flusher at a time.
    pub fn flush(&self, sync: bool) -> Result<()> {
        let mut output = self.output.lock();
        let (bytes, end_lsn, end_ts) = {
            let mut buffer = self.buffer.lock();
            if let Some(reason) = &buffer.poisoned {
                return Err(Error::Poisoned(reason.clone()));
            }
            let synced_everything = self.durable_lsn.load(Ordering::Acquire) == buffer.end_lsn;
            if buffer.bytes.is_empty() && (synced_everything || !sync) {
                return Ok(()); // nothing new to write or to make durable
            }
            buffer.flushing = true;
            (
                std::mem::take(&mut buffer.bytes),
                buffer.end_lsn,
                buffer.end_ts,
            )
        };
        let result = self.write_out(&mut output, &bytes, sync);
        let mut buffer = self.buffer.lock();
        buffer.flushing = false;
        match &result {
            Ok(()) if sync => {
                self.durable_lsn.fetch_max(end_lsn, Ordering::AcqRel);
                self.durable_ts.fetch_max(end_ts, Ordering::AcqRel);
            }
            Ok(()) => {}
            Err(e) => buffer.poisoned = Some(format!("WAL write failed: {e}")),
        }
        self.flushed.notify_all();
        result
    }

    fn write_out(&self, output: &mut Output, bytes: &[u8], sync: bool) -> Result<()> {
        if !bytes.is_empty() {
            output.file.write_all(bytes)?;
            output.segment_bytes += bytes.len() as u64;
            self.written_bytes
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        }
        if sync {
            self.sync_segment(output)?;
        }
        if output.segment_bytes >= self.segment_max_bytes {
            if !sync {
                self.sync_segment(output)?;
            }
            self.open_next_segment(output)?;
        }
        Ok(())
    }

    fn sync_segment(&self, output: &mut Output) -> Result<()> {
        output.file.sync()?;
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    pub fn stats(&self) -> WalStats {
        WalStats {
            written_bytes: self.written_bytes.load(Ordering::Relaxed),
            fsyncs: self.fsyncs.load(Ordering::Relaxed),
        }
    }

    fn open_next_segment(&self, output: &mut Output) -> Result<()> {
        let next = output.segment_id + 1;
        output.file = self.vfs.create(&segment_name(next))?;
        self.vfs.sync_dir()?;
        output.segment_id = next;
        output.segment_bytes = 0;
        Ok(())
    }

    /// Flushes and syncs everything, then starts a new segment; returns its id. Every record
    /// appended before this call is in an older segment. Used by checkpoints.
    pub fn rotate(&self) -> Result<u64> {
        self.flush(true)?;
        let mut output = self.output.lock();
        let result = self.open_next_segment(&mut output);
        if let Err(e) = &result {
            self.buffer.lock().poisoned = Some(format!("WAL rotation failed: {e}"));
        }
        result?;
        self.bytes_since_checkpoint.store(0, Ordering::Relaxed);
        Ok(output.segment_id)
    }

    pub fn poisoned(&self) -> Option<String> {
        self.buffer.lock().poisoned.clone()
    }

    pub fn poison(&self, reason: String) {
        self.buffer.lock().poisoned.get_or_insert(reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CatalogOp;

    fn frames(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..n {
            encode_frame(
                &LogRecord::Catalog(CatalogOp::Label {
                    id: i as u32,
                    name: format!("L{i}"),
                }),
                &mut out,
            );
        }
        out
    }

    #[test]
    fn torn_tail_is_cut_at_the_last_complete_frame() {
        let data = frames(3);
        let full = read_segment(&data, "f").unwrap();
        assert_eq!(full.records.len(), 3);
        for cut in 1..data.len() {
            let part = read_segment(&data[..cut], "f").unwrap();
            assert!(part.valid_bytes as usize <= cut);
            assert_eq!(
                part.torn_tail,
                part.valid_bytes as usize != cut,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn corruption_in_the_middle_is_an_error_naming_file_and_offset() {
        let mut data = frames(3);
        data[10] ^= 0xff; // inside the first payload
        let err = read_segment(&data, "wal-1.log")
            .err()
            .expect("corruption detected");
        let text = err.to_string();
        assert!(
            text.contains("wal-1.log") && text.contains("byte 0"),
            "{text}"
        );
    }

    #[test]
    fn bad_checksum_on_the_last_frame_is_a_torn_tail() {
        let mut data = frames(2);
        let last = data.len() - 1;
        data[last] ^= 0xff;
        let part = read_segment(&data, "f").unwrap();
        assert!(part.torn_tail);
        assert_eq!(part.records.len(), 1);
    }
}
