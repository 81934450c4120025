//! Decoder for `pgoutput` logical replication messages, protocol version 1.
//!
//! FORMAT
//! ======
//! Each XLogData payload of a `pgoutput` stream is one message: a type byte, then big-endian
//! fixed-width integers, NUL-terminated UTF-8 strings and, for rows, a TupleData part:
//!
//! ```text
//!   'I' | relation oid: i32 | 'N' | TupleData
//!   TupleData = column count: i16, then per column one of
//!               'n'                        SQL NULL
//!               'u'                        unchanged TOASTed value (not resent)
//!               't' | length: i32 | bytes  the value in its text output format
//! ```
//!
//! Begin, Commit, Origin, Relation, Type, Insert, Update (with an optional `'K'` key-only or
//! `'O'` full old row before the `'N'` new row), Delete, Truncate and logical decoding
//! Messages are decoded; the streaming-transaction messages of protocol 2 and later are not
//! (the mirror requests protocol 1, which never sends them) and decode to an error.
//!
//! INVARIANTS
//! ==========
//! - [`decode`] never panics, whatever the bytes: every read is bounds-checked and every
//!   failure is a [`DecodeError`] naming the message type and the byte offset where decoding
//!   stopped;
//! - a message must be consumed exactly: trailing bytes are an error (protocol 1 messages have
//!   no optional tail), so a misframed stream is noticed at once rather than misread.

use std::fmt;

use crate::change::{Change, Datum, Lsn, OldRow, RelationColumn, RelationInfo};

/// One decoded `pgoutput` message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PgOutputMessage {
    Begin {
        final_lsn: Lsn,
        /// Microseconds since 2000-01-01 (PostgreSQL's epoch).
        commit_time_pg_us: i64,
        xid: u32,
    },
    Commit {
        flags: u8,
        commit_lsn: Lsn,
        end_lsn: Lsn,
        /// Microseconds since 2000-01-01 (PostgreSQL's epoch).
        commit_time_pg_us: i64,
    },
    Origin {
        commit_lsn: Lsn,
        name: String,
    },
    /// A relation description or a row change, as the apply side receives it.
    Change(Change),
    /// A non-built-in data type used by a following Relation.
    Type {
        oid: u32,
        schema: String,
        name: String,
    },
    /// A logical decoding message (`pg_logical_emit_message`).
    Message {
        transactional: bool,
        lsn: Lsn,
        prefix: String,
        content: Vec<u8>,
    },
}

/// A `pgoutput` message that could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// The message's type byte (0 for an empty message).
    pub message_type: u8,
    /// Offset in the message where decoding stopped.
    pub offset: usize,
    pub reason: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "malformed pgoutput {} message at byte {}: {}",
            message_kind(self.message_type),
            self.offset,
            self.reason
        )
    }
}

impl std::error::Error for DecodeError {}

/// The name of a message type byte, for errors.
fn message_kind(tag: u8) -> String {
    let name = match tag {
        b'B' => "Begin",
        b'C' => "Commit",
        b'O' => "Origin",
        b'R' => "Relation",
        b'Y' => "Type",
        b'I' => "Insert",
        b'U' => "Update",
        b'D' => "Delete",
        b'T' => "Truncate",
        b'M' => "Message",
        0 => return "empty".to_owned(),
        _ => "unknown",
    };
    if tag.is_ascii_graphic() {
        format!("{name} ('{}')", char::from(tag))
    } else {
        format!("{name} (0x{tag:02x})")
    }
}

/// A bounds-checked reader over one message.
struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
    tag: u8,
}

impl<'a> Reader<'a> {
    /// An error at the current offset.
    fn error(&self, reason: impl Into<String>) -> DecodeError {
        self.error_at(self.offset, reason)
    }

    /// An error about the field that starts at `offset`.
    fn error_at(&self, offset: usize, reason: impl Into<String>) -> DecodeError {
        DecodeError {
            message_type: self.tag,
            offset,
            reason: reason.into(),
        }
    }

    /// A non-negative length or count, read as an i16 or i32.
    fn length(&mut self, what: &str, wide: bool) -> Result<usize, DecodeError> {
        let at = self.offset;
        let value = if wide {
            i64::from(self.i32(what)?)
        } else {
            i64::from(self.i16(what)?)
        };
        usize::try_from(value).map_err(|_| self.error_at(at, format!("negative {what} {value}")))
    }

    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        let end = self
            .offset
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| {
                self.error(format!(
                    "truncated: {what} needs {len} bytes, {} left",
                    self.bytes.len() - self.offset
                ))
            })?;
        let slice = &self.bytes[self.offset..end];
        self.offset = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(what)?[0])
    }

    fn i16(&mut self, what: &str) -> Result<i16, DecodeError> {
        Ok(i16::from_be_bytes(self.array(what)?))
    }

    fn i32(&mut self, what: &str) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    fn u32(&mut self, what: &str) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }

    fn i64(&mut self, what: &str) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }

    fn lsn(&mut self, what: &str) -> Result<Lsn, DecodeError> {
        Ok(Lsn(u64::from_be_bytes(self.array(what)?)))
    }

    fn utf8(&self, bytes: &[u8], what: &str) -> Result<String, DecodeError> {
        String::from_utf8(bytes.to_vec())
            .map_err(|e| self.error(format!("{what} is not valid UTF-8: {e}")))
    }

    /// A NUL-terminated string.
    fn string(&mut self, what: &str) -> Result<String, DecodeError> {
        let rest = &self.bytes[self.offset..];
        let len = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.error(format!("truncated: {what} has no NUL terminator")))?;
        let text = self.utf8(&rest[..len], what)?;
        self.offset += len + 1;
        Ok(text)
    }

    fn finish(&self) -> Result<(), DecodeError> {
        let left = self.bytes.len() - self.offset;
        if left != 0 {
            return Err(self.error(format!("{left} trailing bytes")));
        }
        Ok(())
    }

    fn tuple(&mut self) -> Result<Vec<Datum>, DecodeError> {
        let count = self.length("tuple column count", false)?;
        // No allocation before the data proves itself: each column needs at least one byte.
        let mut values = Vec::with_capacity(count.min(self.bytes.len() - self.offset));
        for _ in 0..count {
            let at = self.offset;
            let value = match self.u8("tuple column kind")? {
                b'n' => Datum::Null,
                b'u' => Datum::UnchangedToast,
                b't' => {
                    let len = self.length("text value length", true)?;
                    let bytes = self.take(len, "text value")?;
                    Datum::Text(self.utf8(bytes, "text value")?)
                }
                b'b' => {
                    return Err(
                        self.error_at(at, "binary column value (binary mode is not requested)")
                    );
                }
                other => {
                    return Err(self.error_at(
                        at,
                        format!(
                            "unknown tuple column kind 0x{other:02x} (expected 'n', 'u' or 't')"
                        ),
                    ));
                }
            };
            values.push(value);
        }
        Ok(values)
    }

    fn old_row(&mut self, marker: u8) -> Result<OldRow, DecodeError> {
        Ok(OldRow {
            key_only: marker == b'K',
            values: self.tuple()?,
        })
    }

    /// Checks the marker byte just read.
    fn expect_new_marker(&mut self, marker: u8) -> Result<(), DecodeError> {
        if marker != b'N' {
            return Err(self.error_at(
                self.offset - 1,
                format!("expected new-tuple marker 'N', found 0x{marker:02x}"),
            ));
        }
        Ok(())
    }
}

/// Decodes one `pgoutput` (protocol 1) message.
pub fn decode(bytes: &[u8]) -> Result<PgOutputMessage, DecodeError> {
    let Some(&tag) = bytes.first() else {
        return Err(DecodeError {
            message_type: 0,
            offset: 0,
            reason: "empty message".to_owned(),
        });
    };
    let mut r = Reader {
        bytes,
        offset: 1,
        tag,
    };
    let message = match tag {
        b'B' => PgOutputMessage::Begin {
            final_lsn: r.lsn("final LSN")?,
            commit_time_pg_us: r.i64("commit time")?,
            xid: r.u32("xid")?,
        },
        b'C' => PgOutputMessage::Commit {
            flags: r.u8("flags")?,
            commit_lsn: r.lsn("commit LSN")?,
            end_lsn: r.lsn("end LSN")?,
            commit_time_pg_us: r.i64("commit time")?,
        },
        b'O' => PgOutputMessage::Origin {
            commit_lsn: r.lsn("origin commit LSN")?,
            name: r.string("origin name")?,
        },
        b'R' => {
            let oid = r.u32("relation oid")?;
            let schema = r.string("namespace")?;
            let name = r.string("relation name")?;
            let replica_identity = r.u8("replica identity")?;
            let count = r.length("column count", false)?;
            let mut columns = Vec::with_capacity(count.min(bytes.len()));
            for _ in 0..count {
                let flags = r.u8("column flags")?;
                columns.push(RelationColumn {
                    name: r.string("column name")?,
                    type_oid: r.u32("column type oid")?,
                    type_modifier: r.i32("column type modifier")?,
                    is_key: flags & 1 != 0,
                });
            }
            PgOutputMessage::Change(Change::Relation(RelationInfo {
                oid,
                schema,
                name,
                replica_identity,
                columns,
            }))
        }
        b'Y' => PgOutputMessage::Type {
            oid: r.u32("type oid")?,
            schema: r.string("type namespace")?,
            name: r.string("type name")?,
        },
        b'I' => {
            let relation = r.u32("relation oid")?;
            let marker = r.u8("new-tuple marker")?;
            r.expect_new_marker(marker)?;
            PgOutputMessage::Change(Change::Insert {
                relation,
                new: r.tuple()?,
            })
        }
        b'U' => {
            let relation = r.u32("relation oid")?;
            let mut marker = r.u8("tuple marker")?;
            let old = if marker == b'K' || marker == b'O' {
                let old = r.old_row(marker)?;
                marker = r.u8("new-tuple marker")?;
                Some(old)
            } else {
                None
            };
            r.expect_new_marker(marker)?;
            PgOutputMessage::Change(Change::Update {
                relation,
                old,
                new: r.tuple()?,
            })
        }
        b'D' => {
            let relation = r.u32("relation oid")?;
            let marker = r.u8("old-tuple marker")?;
            if marker != b'K' && marker != b'O' {
                return Err(r.error_at(
                    r.offset - 1,
                    format!("expected old-tuple marker 'K' or 'O', found 0x{marker:02x}"),
                ));
            }
            PgOutputMessage::Change(Change::Delete {
                relation,
                old: r.old_row(marker)?,
            })
        }
        b'T' => {
            let count = r.length("relation count", true)?;
            let options = r.u8("options")?;
            let mut relations = Vec::with_capacity(count.min(bytes.len()));
            for _ in 0..count {
                relations.push(r.u32("relation oid")?);
            }
            PgOutputMessage::Change(Change::Truncate {
                relations,
                cascade: options & 1 != 0,
                restart_identity: options & 2 != 0,
            })
        }
        b'M' => {
            let flags = r.u8("flags")?;
            let lsn = r.lsn("message LSN")?;
            let prefix = r.string("prefix")?;
            let len = r.length("content length", true)?;
            PgOutputMessage::Message {
                transactional: flags & 1 != 0,
                lsn,
                prefix,
                content: r.take(len, "content")?.to_vec(),
            }
        }
        _ => return Err(r.error_at(0, "unknown message type (protocol 1 expected)")),
    };
    r.finish()?;
    Ok(message)
}
