//! Checkpoints and the manifest.
//!
//! CHECKPOINT FILE
//! ===============
//! `ckpt-<ts>.ckpt` holds the committed state as of timestamp `ts`: the catalog, then the rows
//! of every vertex table and every edge table (with each table's reserved row count, so offsets
//! of aborted or deleted rows are never handed out again). It is a magic header followed by
//! sections, each framed and checksummed like WAL records, and must end with an `End` section:
//! a file without one was cut short and is rejected.
//!
//! ```text
//!   "PLXCKPT1" [len u32][crc u32][section] [len][crc][section] ... [len][crc][End ts]
//! ```
//!
//! Edge sections are columnar (tag 5): the rows' offsets as runs of consecutive offsets, all
//! sources, all destinations, then the properties of the rows that have any — a bulk load's
//! edges cost 8 bytes each. Files of earlier versions hold tag 3 (each row's offset,
//! endpoints and properties in turn), which is still read.
//!
//! MANIFEST
//! ========
//! `MANIFEST` names the current checkpoint, its timestamp and the first WAL segment to replay.
//! It is replaced atomically: write `MANIFEST.tmp`, fsync it, rename over `MANIFEST`, fsync the
//! directory. A crash at any point leaves either the old or the new manifest, both complete.
//! It is a few lines of text ending with a CRC32C of the lines before it, so truncation or a
//! stray edit is detected rather than misread.

use crate::catalog::CatalogOp;
use crate::codec::{DecodeResult, Decoder, Encoder};
use crate::vfs::{Vfs, VfsFile};
use plexus_types::{Error, LabelId, PropKeyId, Result, Timestamp, Value};

pub const MANIFEST: &str = "MANIFEST";
const MANIFEST_TMP: &str = "MANIFEST.tmp";
const MAGIC: &[u8; 8] = b"PLXCKPT1";
/// Rows per checkpoint section: bounds the memory used to encode or decode one section.
pub const ROWS_PER_SECTION: usize = 1 << 16;

pub fn checkpoint_name(ts: Timestamp) -> String {
    format!("ckpt-{ts:016}.ckpt")
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Manifest {
    pub checkpoint: Option<String>,
    pub checkpoint_ts: Timestamp,
    pub wal_start: u64,
    /// The next CSR run file number.
    pub next_run_seq: u64,
    /// Per topology (edge table, outgoing): every commit up to this timestamp is in its runs.
    pub flushed: Vec<(u32, bool, Timestamp)>,
    /// The current CSR run files (file name, sequence number).
    pub runs: Vec<(String, u64)>,
    /// Per edge table: the newest change of a property of an existing edge when the manifest
    /// was written (`U` of the run property columns, see `lsm`). Written at every checkpoint,
    /// so it covers every change the WAL no longer replays.
    pub prop_updated: Vec<(u32, Timestamp)>,
}

impl Manifest {
    fn encode(&self) -> String {
        let mut body = format!(
            "plexus-manifest 1\ncheckpoint {}\ncheckpoint_ts {}\nwal_start {}\nnext_run {}\n",
            self.checkpoint.as_deref().unwrap_or("-"),
            self.checkpoint_ts,
            self.wal_start,
            self.next_run_seq
        );
        for (table, outgoing, ts) in &self.flushed {
            body += &format!("flushed {table} {} {ts}\n", *outgoing as u8);
        }
        for (name, seq) in &self.runs {
            body += &format!("run {name} {seq}\n");
        }
        for (table, ts) in &self.prop_updated {
            body += &format!("prop_updated {table} {ts}\n");
        }
        format!("{body}crc32c {:08x}\n", crc32c::crc32c(body.as_bytes()))
    }

    fn decode(text: &[u8], file: &str) -> Result<Manifest> {
        let bad = |detail: &str| Error::corruption(file, 0, format!("invalid manifest: {detail}"));
        let text = std::str::from_utf8(text).map_err(|_| bad("not UTF-8"))?;
        let crc_at = text
            .rfind("crc32c ")
            .ok_or_else(|| bad("no checksum line (truncated?)"))?;
        let (body, crc_line) = text.split_at(crc_at);
        let crc = u32::from_str_radix(crc_line.trim_start_matches("crc32c ").trim(), 16)
            .map_err(|_| bad("unreadable checksum"))?;
        if crc != crc32c::crc32c(body.as_bytes()) {
            return Err(bad("checksum mismatch"));
        }
        let mut lines = body.lines();
        if lines.next() != Some("plexus-manifest 1") {
            return Err(bad("unknown format version"));
        }
        let mut field = |name: &str| -> Result<String> {
            let line = lines
                .next()
                .ok_or_else(|| bad(&format!("missing '{name}'")))?;
            line.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix(' '))
                .map(str::to_string)
                .ok_or_else(|| bad(&format!("expected '{name}', found '{line}'")))
        };
        let checkpoint = field("checkpoint")?;
        let checkpoint_ts = field("checkpoint_ts")?
            .parse()
            .map_err(|_| bad("bad checkpoint_ts"))?;
        let wal_start = field("wal_start")?
            .parse()
            .map_err(|_| bad("bad wal_start"))?;
        let next_run_seq = field("next_run")?
            .parse()
            .map_err(|_| bad("bad next_run"))?;
        let mut manifest = Manifest {
            checkpoint: (checkpoint != "-").then_some(checkpoint),
            checkpoint_ts,
            wal_start,
            next_run_seq,
            ..Default::default()
        };
        for line in lines {
            let words: Vec<&str> = line.split(' ').collect();
            let number = |i: usize| {
                words
                    .get(i)
                    .and_then(|w| w.parse::<u64>().ok())
                    .ok_or_else(|| bad(&format!("bad number in '{line}'")))
            };
            match words.first() {
                Some(&"flushed") if words.len() == 4 => {
                    manifest
                        .flushed
                        .push((number(1)? as u32, number(2)? != 0, number(3)?));
                }
                Some(&"run") if words.len() == 3 => {
                    manifest.runs.push((words[1].to_string(), number(2)?))
                }
                Some(&"prop_updated") if words.len() == 3 => {
                    manifest.prop_updated.push((number(1)? as u32, number(2)?))
                }
                _ => return Err(bad(&format!("unexpected line '{line}'"))),
            }
        }
        Ok(manifest)
    }

    pub fn read(vfs: &dyn Vfs) -> Result<Manifest> {
        Manifest::decode(&vfs.read(MANIFEST)?, &vfs.describe(MANIFEST))
    }

    /// Atomically replaces the manifest (see MANIFEST above).
    pub fn write(&self, vfs: &dyn Vfs) -> Result<()> {
        let mut file = vfs.create(MANIFEST_TMP)?;
        file.write_all(self.encode().as_bytes())?;
        file.sync()?;
        vfs.rename(MANIFEST_TMP, MANIFEST)?;
        vfs.sync_dir()
    }
}

/// One vertex row in a checkpoint: offset, extra labels, properties.
pub type VertexRow = (u32, Vec<LabelId>, Vec<(PropKeyId, Value)>);
/// One edge row in a checkpoint: offset, source offset, destination offset, properties.
pub type EdgeRow = (u32, u32, u32, Vec<(PropKeyId, Value)>);

#[derive(Debug, PartialEq)]
pub enum Section {
    Catalog(Vec<CatalogOp>),
    /// Replication origins' positions as of the checkpoint (see `origin`).
    Origins(Vec<(String, u64)>),
    Vertices {
        table: u32,
        row_count: u32,
        rows: Vec<VertexRow>,
    },
    Edges {
        table: u32,
        row_count: u32,
        rows: Vec<EdgeRow>,
    },
    End {
        ts: Timestamp,
    },
}

fn encode_props(enc: &mut Encoder, props: &[(PropKeyId, Value)]) {
    enc.len(props.len());
    for (k, v) in props {
        enc.u32(*k);
        enc.value(v);
    }
}

fn decode_props(dec: &mut Decoder) -> DecodeResult<Vec<(PropKeyId, Value)>> {
    let n = dec.len()?;
    (0..n).map(|_| Ok((dec.u32()?, dec.value()?))).collect()
}

impl Section {
    fn encode(&self, enc: &mut Encoder) {
        match self {
            Section::Catalog(ops) => {
                enc.u8(1);
                enc.len(ops.len());
                ops.iter().for_each(|op| op.encode(enc));
            }
            Section::Origins(positions) => {
                enc.u8(4);
                enc.len(positions.len());
                for (name, position) in positions {
                    enc.str(name);
                    enc.u64(*position);
                }
            }
            Section::Vertices {
                table,
                row_count,
                rows,
            } => {
                enc.u8(2);
                enc.u32(*table);
                enc.u32(*row_count);
                enc.len(rows.len());
                for (offset, labels, props) in rows {
                    enc.u32(*offset);
                    enc.u32s(labels);
                    encode_props(enc, props);
                }
            }
            Section::Edges {
                table,
                row_count,
                rows,
            } => {
                // Columnar (tag 5; tag 3, a row at a time, is still read): offsets as runs of
                // consecutive rows, then the sources, the destinations, and properties only
                // for the rows that have some — 8 bytes per edge of a bulk load, not 16.
                enc.u8(5);
                enc.u32(*table);
                enc.u32(*row_count);
                enc.len(rows.len());
                let mut runs: Vec<(u32, u32)> = Vec::new();
                for &(offset, ..) in rows {
                    match runs.last_mut() {
                        Some((start, len)) if start.checked_add(*len) == Some(offset) => *len += 1,
                        _ => runs.push((offset, 1)),
                    }
                }
                enc.len(runs.len());
                for (start, len) in runs {
                    enc.u32(start);
                    enc.u32(len);
                }
                rows.iter().for_each(|&(_, src, ..)| enc.u32(src));
                rows.iter().for_each(|&(_, _, dst, _)| enc.u32(dst));
                let with_props = rows.iter().filter(|(.., props)| !props.is_empty());
                enc.len(with_props.clone().count());
                for (i, (.., props)) in rows.iter().enumerate() {
                    if !props.is_empty() {
                        enc.u32(i as u32);
                        encode_props(enc, props);
                    }
                }
            }
            Section::End { ts } => {
                enc.u8(0xff);
                enc.u64(*ts);
            }
        }
    }

    fn decode(dec: &mut Decoder) -> DecodeResult<Section> {
        Ok(match dec.u8()? {
            1 => {
                let n = dec.len()?;
                let ops: DecodeResult<Vec<_>> = (0..n).map(|_| CatalogOp::decode(dec)).collect();
                Section::Catalog(ops?)
            }
            4 => {
                let n = dec.len()?;
                let positions: DecodeResult<Vec<_>> = (0..n)
                    .map(|_| Ok((dec.str()?.to_owned(), dec.u64()?)))
                    .collect();
                Section::Origins(positions?)
            }
            2 => {
                let (table, row_count, n) = (dec.u32()?, dec.u32()?, dec.len()?);
                let rows: DecodeResult<Vec<_>> = (0..n)
                    .map(|_| Ok((dec.u32()?, dec.u32s()?, decode_props(dec)?)))
                    .collect();
                Section::Vertices {
                    table,
                    row_count,
                    rows: rows?,
                }
            }
            3 => {
                let (table, row_count, n) = (dec.u32()?, dec.u32()?, dec.len()?);
                let rows: DecodeResult<Vec<_>> = (0..n)
                    .map(|_| Ok((dec.u32()?, dec.u32()?, dec.u32()?, decode_props(dec)?)))
                    .collect();
                Section::Edges {
                    table,
                    row_count,
                    rows: rows?,
                }
            }
            5 => {
                let (table, row_count, n) = (dec.u32()?, dec.u32()?, dec.len()?);
                let mut offsets = Vec::with_capacity(n);
                for _ in 0..dec.len()? {
                    let (start, len) = (dec.u32()?, dec.u32()?);
                    if len as usize > n - offsets.len() || start.checked_add(len).is_none() {
                        return Err(dec.error(format!(
                            "edge rows {start}+{len} overrun the section's {n} rows"
                        )));
                    }
                    offsets.extend(start..start + len);
                }
                if offsets.len() != n {
                    return Err(dec.error(format!(
                        "the row runs hold {} rows, the section {n}",
                        offsets.len()
                    )));
                }
                let src: Vec<u32> = (0..n).map(|_| dec.u32()).collect::<DecodeResult<_>>()?;
                let dst: Vec<u32> = (0..n).map(|_| dec.u32()).collect::<DecodeResult<_>>()?;
                let mut rows: Vec<EdgeRow> = (offsets.into_iter().zip(src).zip(dst))
                    .map(|((offset, src), dst)| (offset, src, dst, Vec::new()))
                    .collect();
                let mut last = None;
                for _ in 0..dec.len()? {
                    let i = dec.u32()? as usize;
                    if i >= n || last.is_some_and(|last| i <= last) {
                        return Err(dec.error(format!(
                            "edge property row {i} is out of order or past the section's {n} rows"
                        )));
                    }
                    last = Some(i);
                    rows[i].3 = decode_props(dec)?;
                }
                Section::Edges {
                    table,
                    row_count,
                    rows,
                }
            }
            0xff => Section::End { ts: dec.u64()? },
            tag => return Err(dec.error(format!("unknown checkpoint section tag {tag}"))),
        })
    }
}

pub struct CheckpointWriter {
    file: Box<dyn VfsFile>,
}

impl CheckpointWriter {
    pub fn create(vfs: &dyn Vfs, name: &str) -> Result<Self> {
        let mut file = vfs.create(name)?;
        file.write_all(MAGIC)?;
        Ok(Self { file })
    }

    pub fn write(&mut self, section: &Section) -> Result<()> {
        let mut enc = Encoder::default();
        section.encode(&mut enc);
        let mut frame = Vec::with_capacity(enc.buf.len() + 8);
        frame.extend_from_slice(&(enc.buf.len() as u32).to_le_bytes());
        frame.extend_from_slice(&crc32c::crc32c(&enc.buf).to_le_bytes());
        frame.extend_from_slice(&enc.buf);
        self.file.write_all(&frame)
    }

    /// Writes the `End` section and fsyncs the file.
    pub fn finish(mut self, ts: Timestamp) -> Result<()> {
        self.write(&Section::End { ts })?;
        self.file.sync()
    }
}

/// Decodes checkpoint file `name` section by section, reading each from the file only when
/// its turn comes and handing it to `visit` as soon as it is decoded and checked — so a reader
/// holds one section at a time (at most [`ROWS_PER_SECTION`] rows), neither the whole file
/// nor the whole database decoded — and returns its timestamp. Any damage is an error naming
/// the file and offset; it may come after `visit` saw the sections before it (the caller
/// discards what it built: recovery fails as a whole).
pub fn read_checkpoint(
    vfs: &dyn Vfs,
    name: &str,
    visit: &mut dyn FnMut(Section) -> Result<()>,
) -> Result<Timestamp> {
    let file = vfs.describe(name);
    let size = vfs.size(name)?;
    let read = |pos: u64, len: usize| vfs.read_at(name, pos, len);
    if size < MAGIC.len() as u64 || read(0, MAGIC.len())? != MAGIC {
        return Err(Error::corruption(
            &file,
            0,
            "not a Plexus checkpoint (bad magic)",
        ));
    }
    let mut pos = MAGIC.len() as u64;
    while pos < size {
        if size - pos < 8 {
            return Err(Error::corruption(
                &file,
                pos,
                "checkpoint section header cut short",
            ));
        }
        let header = read(pos, 8)?;
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        if size - pos - 8 < u64::from(len) {
            return Err(Error::corruption(
                &file,
                pos,
                "checkpoint section extends past the end of the file (truncated)",
            ));
        }
        let payload = read(pos + 8, len as usize)?;
        if crc32c::crc32c(&payload) != crc {
            return Err(Error::corruption(
                &file,
                pos,
                "checkpoint section checksum mismatch",
            ));
        }
        let mut dec = Decoder::new(&payload, pos + 8);
        let section =
            Section::decode(&mut dec).map_err(|e| Error::corruption(&file, e.offset, e.detail))?;
        pos += 8 + u64::from(len);
        if let Section::End { ts } = section {
            if pos != size {
                return Err(Error::corruption(
                    &file,
                    pos,
                    "data after the end of the checkpoint",
                ));
            }
            return Ok(ts);
        }
        visit(section)?;
    }
    Err(Error::corruption(
        &file,
        pos,
        "checkpoint has no end marker (truncated)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FaultVfs;

    #[test]
    fn manifest_round_trips_and_detects_truncation() {
        let vfs = FaultVfs::new();
        let m = Manifest {
            checkpoint: Some(checkpoint_name(7)),
            checkpoint_ts: 7,
            wal_start: 3,
            next_run_seq: 12,
            flushed: vec![(0, true, 6), (0, false, 5)],
            runs: vec![("run-0000000000000003.run".into(), 3)],
            prop_updated: vec![(0, 4), (2, 9)],
        };
        m.write(&vfs).unwrap();
        assert_eq!(Manifest::read(&vfs).unwrap(), m);
        let text = m.encode();
        for cut in 0..text.len() - 1 {
            let err = Manifest::decode(&text.as_bytes()[..cut], "MANIFEST").unwrap_err();
            assert!(err.to_string().contains("MANIFEST"), "{err}");
        }
    }

    #[test]
    fn edge_sections_are_columnar_and_tag_3_still_reads() {
        let rows = vec![
            (4, 1, 2, vec![]),
            (5, 2, 1, vec![(3, Value::Int(7))]),
            (6, 0, 0, vec![]),
            (9, 3, 4, vec![(1, Value::Null), (2, Value::from("x"))]),
        ];
        let section = Section::Edges {
            table: 2,
            row_count: 10,
            rows: rows.clone(),
        };
        let mut enc = Encoder::default();
        section.encode(&mut enc);
        assert_eq!(enc.buf[0], 5);
        let mut dec = Decoder::new(&enc.buf, 0);
        assert_eq!(Section::decode(&mut dec).unwrap(), section);
        // 1,000 edges without properties: 8 bytes each, plus the header.
        let bulk: Vec<EdgeRow> = (0..1000).map(|i| (i, i, i + 1, Vec::new())).collect();
        let mut enc = Encoder::default();
        Section::Edges {
            table: 0,
            row_count: 1000,
            rows: bulk,
        }
        .encode(&mut enc);
        assert!(enc.buf.len() < 8 * 1000 + 32, "{} bytes", enc.buf.len());
        // The row-at-a-time form earlier versions wrote.
        let mut old = Encoder::default();
        old.u8(3);
        old.u32(2);
        old.u32(10);
        old.len(rows.len());
        for (offset, src, dst, props) in &rows {
            old.u32(*offset);
            old.u32(*src);
            old.u32(*dst);
            encode_props(&mut old, props);
        }
        let mut dec = Decoder::new(&old.buf, 0);
        assert_eq!(Section::decode(&mut dec).unwrap(), section);
    }

    #[test]
    fn damaged_edge_sections_are_errors() {
        let encode = |runs: &[(u32, u32)], n: u32, prop_rows: &[u32]| {
            let mut enc = Encoder::default();
            enc.u8(5);
            enc.u32(0);
            enc.u32(100);
            enc.len(n as usize);
            enc.len(runs.len());
            for &(start, len) in runs {
                enc.u32(start);
                enc.u32(len);
            }
            (0..2 * n).for_each(|i| enc.u32(i));
            enc.len(prop_rows.len());
            for &i in prop_rows {
                enc.u32(i);
                encode_props(&mut enc, &[(0, Value::Int(1))]);
            }
            enc.buf
        };
        let decode = |buf: Vec<u8>| Section::decode(&mut Decoder::new(&buf, 0)).map(|_| ());
        assert!(decode(encode(&[(0, 3)], 3, &[0, 2])).is_ok());
        for (runs, prop_rows) in [
            (&[(0, 4)][..], &[][..]),
            (&[(0, 2)], &[]),
            (&[(u32::MAX, 3)], &[]),
            (&[(0, 3)], &[3]),
            (&[(0, 3)], &[1, 1]),
        ] {
            let err = decode(encode(runs, 3, prop_rows)).unwrap_err();
            assert!(err.detail.contains("rows"), "{}", err.detail);
        }
    }

    #[test]
    fn checkpoint_round_trips_and_rejects_truncation() {
        let vfs = FaultVfs::new();
        let mut w = CheckpointWriter::create(&vfs, "c").unwrap();
        let section = Section::Vertices {
            table: 0,
            row_count: 3,
            rows: vec![(2, vec![1], vec![(0, Value::Int(5))])],
        };
        let origins = Section::Origins(vec![("pg".to_string(), 0x16_B374_D848)]);
        w.write(&origins).unwrap();
        w.write(&section).unwrap();
        w.finish(9).unwrap();
        let data = vfs.read("c").unwrap();
        let mut sections = Vec::new();
        let mut visit = |section| {
            sections.push(section);
            Ok(())
        };
        let ts = read_checkpoint(&vfs, "c", &mut visit).unwrap();
        assert_eq!((sections, ts), (vec![origins, section], 9));
        for cut in 0..data.len() {
            let cut_vfs = FaultVfs::new();
            cut_vfs
                .create("c")
                .unwrap()
                .write_all(&data[..cut])
                .unwrap();
            let err = read_checkpoint(&cut_vfs, "c", &mut |_| Ok(())).unwrap_err();
            assert!(
                matches!(err, Error::Corruption { .. }),
                "cut at {cut}: {err}"
            );
        }
    }
}
