//! PackStream v1: the binary value format every Bolt message is written in.
//!
//! FORMAT
//! ======
//! Every value starts with a marker byte; small sizes and small integers live in the marker's
//! low nibble, larger ones in a big-endian size that follows it:
//!
//! ```text
//!   C0            null              C2 / C3       false / true
//!   F0..7F        tiny int -16..127  C8 C9 CA CB   int8 / int16 / int32 / int64
//!   C1            float64           CC CD CE      bytes, size u8 / u16 / u32
//!   80..8F        tiny string       D0 D1 D2      string, size u8 / u16 / u32
//!   90..9F        tiny list         D4 D5 D6      list, size u8 / u16 / u32
//!   A0..AF        tiny map          D8 D9 DA      map, size u8 / u16 / u32
//!   B0..BF tag    structure of 0..15 fields, then a one-byte tag ('N' node, 'D' date, ...)
//! ```
//!
//! This module knows nothing of Cypher: a structure is a tag and its fields ([`Structure`]).
//! What a tag means (nodes, temporals, messages) is decided by `values` and `message`.
//!
//! UNTRUSTED INPUT
//! ===============
//! [`decode`] reads bytes straight from the network, so it never panics and never trusts a
//! declared size: a list or map that claims more items than there are bytes left fails
//! before anything is allocated for it (every item takes at least one byte), and nesting is
//! bounded by [`MAX_NESTING_DEPTH`] so that a message of ten million `0x91` bytes cannot
//! overflow the stack. A message must be exactly one value: trailing bytes are an error.

use std::fmt;

/// Deepest nesting of lists, maps and structures a decoded value may have.
pub const MAX_NESTING_DEPTH: usize = 64;

/// A PackStream value.
#[derive(Clone, Debug, PartialEq)]
pub enum Pack {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Bytes(Vec<u8>),
    String(String),
    List(Vec<Pack>),
    /// Entries in wire order (maps are small; lookups are linear).
    Map(Vec<(String, Pack)>),
    Struct(Structure),
}

/// A tagged structure of at most 15 fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Structure {
    pub tag: u8,
    pub fields: Vec<Pack>,
}

/// Most fields a structure can have (the size is the marker's low nibble).
pub const MAX_STRUCT_FIELDS: usize = 15;

impl Pack {
    pub fn string(text: impl Into<String>) -> Pack {
        Pack::String(text.into())
    }

    pub fn structure(tag: u8, fields: Vec<Pack>) -> Pack {
        debug_assert!(fields.len() <= MAX_STRUCT_FIELDS);
        Pack::Struct(Structure { tag, fields })
    }

    /// The value under `key` when this is a map.
    pub fn get(&self, key: &str) -> Option<&Pack> {
        match self {
            Pack::Map(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Pack::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Pack::Int(i) => Some(*i),
            _ => None,
        }
    }
}

/// Why bytes are not a PackStream value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes end inside a value.
    Truncated,
    /// A marker byte that PackStream does not define.
    UnknownMarker(u8),
    /// A string that is not UTF-8.
    InvalidUtf8,
    /// A map key that is not a string.
    NonStringKey,
    /// Nesting deeper than [`MAX_NESTING_DEPTH`].
    TooDeep,
    /// Bytes left over after the value.
    TrailingBytes(usize),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "PackStream value truncated"),
            DecodeError::UnknownMarker(m) => write!(f, "unknown PackStream marker 0x{m:02X}"),
            DecodeError::InvalidUtf8 => write!(f, "PackStream string is not UTF-8"),
            DecodeError::NonStringKey => write!(f, "PackStream map key is not a string"),
            DecodeError::TooDeep => write!(
                f,
                "PackStream value nested deeper than {MAX_NESTING_DEPTH} levels"
            ),
            DecodeError::TrailingBytes(n) => {
                write!(f, "{n} bytes left after the PackStream value")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decodes exactly one value from `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Pack, DecodeError> {
    let mut reader = Reader { bytes, pos: 0 };
    let value = reader.value(0)?;
    match bytes.len() - reader.pos {
        0 => Ok(value),
        left => Err(DecodeError::TrailingBytes(left)),
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or(DecodeError::Truncated)?;
        let slice = self
            .bytes
            .get(self.pos..end)
            .ok_or(DecodeError::Truncated)?;
        self.pos = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    /// A size of 1, 2 or 4 big-endian bytes.
    fn size(&mut self, width: u8) -> Result<usize, DecodeError> {
        Ok(match width {
            0 => self.byte()? as usize,
            1 => u16::from_be_bytes(self.array()?) as usize,
            _ => u32::from_be_bytes(self.array()?) as usize,
        })
    }

    /// Checks that `items` values of at least one byte each can still follow.
    fn room_for(&self, items: usize) -> Result<(), DecodeError> {
        if items > self.bytes.len() - self.pos {
            Err(DecodeError::Truncated)
        } else {
            Ok(())
        }
    }

    fn string(&mut self, len: usize) -> Result<String, DecodeError> {
        let raw = self.take(len)?;
        std::str::from_utf8(raw)
            .map(str::to_owned)
            .map_err(|_| DecodeError::InvalidUtf8)
    }

    fn list(&mut self, len: usize, depth: usize) -> Result<Pack, DecodeError> {
        self.room_for(len)?;
        let mut items = Vec::with_capacity(len);
        for _ in 0..len {
            items.push(self.value(depth + 1)?);
        }
        Ok(Pack::List(items))
    }

    fn map(&mut self, len: usize, depth: usize) -> Result<Pack, DecodeError> {
        self.room_for(len.saturating_mul(2))?;
        let mut entries = Vec::with_capacity(len);
        for _ in 0..len {
            let Pack::String(key) = self.value(depth + 1)? else {
                return Err(DecodeError::NonStringKey);
            };
            entries.push((key, self.value(depth + 1)?));
        }
        Ok(Pack::Map(entries))
    }

    fn value(&mut self, depth: usize) -> Result<Pack, DecodeError> {
        if depth > MAX_NESTING_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let marker = self.byte()?;
        let nibble = (marker & 0x0F) as usize;
        Ok(match marker {
            0x00..=0x7F => Pack::Int(marker as i64),
            0xF0..=0xFF => Pack::Int(marker as i8 as i64),
            0x80..=0x8F => Pack::String(self.string(nibble)?),
            0x90..=0x9F => self.list(nibble, depth)?,
            0xA0..=0xAF => self.map(nibble, depth)?,
            0xB0..=0xBF => {
                let tag = self.byte()?;
                self.room_for(nibble)?;
                let mut fields = Vec::with_capacity(nibble);
                for _ in 0..nibble {
                    fields.push(self.value(depth + 1)?);
                }
                Pack::Struct(Structure { tag, fields })
            }
            0xC0 => Pack::Null,
            0xC1 => Pack::Float(f64::from_be_bytes(self.array()?)),
            0xC2 => Pack::Bool(false),
            0xC3 => Pack::Bool(true),
            0xC8 => Pack::Int(i8::from_be_bytes(self.array()?) as i64),
            0xC9 => Pack::Int(i16::from_be_bytes(self.array()?) as i64),
            0xCA => Pack::Int(i32::from_be_bytes(self.array()?) as i64),
            0xCB => Pack::Int(i64::from_be_bytes(self.array()?)),
            0xCC..=0xCE => {
                let len = self.size(marker - 0xCC)?;
                Pack::Bytes(self.take(len)?.to_vec())
            }
            0xD0..=0xD2 => {
                let len = self.size(marker - 0xD0)?;
                Pack::String(self.string(len)?)
            }
            0xD4..=0xD6 => {
                let len = self.size(marker - 0xD4)?;
                self.list(len, depth)?
            }
            0xD8..=0xDA => {
                let len = self.size(marker - 0xD8)?;
                self.map(len, depth)?
            }
            other => return Err(DecodeError::UnknownMarker(other)),
        })
    }
}

/// Appends the encoding of `value` to `out`.
pub fn encode(value: &Pack, out: &mut Vec<u8>) {
    match value {
        Pack::Null => out.push(0xC0),
        Pack::Bool(false) => out.push(0xC2),
        Pack::Bool(true) => out.push(0xC3),
        Pack::Int(i) => encode_int(*i, out),
        Pack::Float(f) => {
            out.push(0xC1);
            out.extend_from_slice(&f.to_be_bytes());
        }
        Pack::Bytes(bytes) => {
            header(out, bytes.len(), None, [0xCC, 0xCD, 0xCE]);
            out.extend_from_slice(bytes);
        }
        Pack::String(s) => {
            header(out, s.len(), Some(0x80), [0xD0, 0xD1, 0xD2]);
            out.extend_from_slice(s.as_bytes());
        }
        Pack::List(items) => {
            header(out, items.len(), Some(0x90), [0xD4, 0xD5, 0xD6]);
            items.iter().for_each(|item| encode(item, out));
        }
        Pack::Map(entries) => {
            header(out, entries.len(), Some(0xA0), [0xD8, 0xD9, 0xDA]);
            for (key, item) in entries {
                header(out, key.len(), Some(0x80), [0xD0, 0xD1, 0xD2]);
                out.extend_from_slice(key.as_bytes());
                encode(item, out);
            }
        }
        Pack::Struct(s) => {
            debug_assert!(s.fields.len() <= MAX_STRUCT_FIELDS);
            out.push(0xB0 | (s.fields.len().min(MAX_STRUCT_FIELDS) as u8));
            out.push(s.tag);
            s.fields
                .iter()
                .take(MAX_STRUCT_FIELDS)
                .for_each(|field| encode(field, out));
        }
    }
}

fn encode_int(i: i64, out: &mut Vec<u8>) {
    if (-16..=127).contains(&i) {
        out.push(i as i8 as u8);
    } else if let Ok(small) = i8::try_from(i) {
        out.push(0xC8);
        out.push(small as u8);
    } else if let Ok(small) = i16::try_from(i) {
        out.push(0xC9);
        out.extend_from_slice(&small.to_be_bytes());
    } else if let Ok(small) = i32::try_from(i) {
        out.push(0xCA);
        out.extend_from_slice(&small.to_be_bytes());
    } else {
        out.push(0xCB);
        out.extend_from_slice(&i.to_be_bytes());
    }
}

/// Writes a size header: the tiny form when `tiny` is given and `len < 16`, else the
/// smallest of the u8 / u16 / u32 forms. Sizes above `u32::MAX` cannot be written; they are
/// clamped (no Plexus value comes near: messages are bounded far below).
fn header(out: &mut Vec<u8>, len: usize, tiny: Option<u8>, sized: [u8; 3]) {
    match tiny {
        Some(base) if len < 16 => out.push(base | len as u8),
        _ if len <= u8::MAX as usize => out.extend_from_slice(&[sized[0], len as u8]),
        _ if len <= u16::MAX as usize => {
            out.push(sized[1]);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        _ => {
            out.push(sized[2]);
            let len = u32::try_from(len).unwrap_or(u32::MAX);
            out.extend_from_slice(&len.to_be_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(value: Pack) {
        let mut bytes = Vec::new();
        encode(&value, &mut bytes);
        assert_eq!(decode(&bytes), Ok(value));
    }

    #[test]
    fn integers_use_the_smallest_form_and_round_trip() {
        for (i, len) in [
            (0, 1),
            (-16, 1),
            (127, 1),
            (-17, 2),
            (-128, 2),
            (128, 3),
            (-129, 3),
            (32_767, 3),
            (32_768, 5),
            (i32::MIN as i64, 5),
            (i32::MAX as i64 + 1, 9),
            (i64::MIN, 9),
            (i64::MAX, 9),
        ] {
            let mut bytes = Vec::new();
            encode(&Pack::Int(i), &mut bytes);
            assert_eq!(bytes.len(), len, "{i}");
            round_trip(Pack::Int(i));
        }
    }

    #[test]
    fn sizes_cross_the_header_boundaries() {
        for len in [0, 15, 16, 255, 256, 65_535, 65_536] {
            round_trip(Pack::String("x".repeat(len)));
            round_trip(Pack::Bytes(vec![7; len]));
        }
        for len in [0, 15, 16, 255, 256, 70_000] {
            round_trip(Pack::List(vec![Pack::Null; len]));
            round_trip(Pack::Map(
                (0..len).map(|i| (i.to_string(), Pack::Int(1))).collect(),
            ));
        }
    }

    #[test]
    fn known_encodings() {
        let mut bytes = Vec::new();
        encode(
            &Pack::structure(
                0x10,
                vec![
                    Pack::string("RETURN 1"),
                    Pack::Map(vec![]),
                    Pack::Float(1.5),
                ],
            ),
            &mut bytes,
        );
        let mut expected = vec![0xB3, 0x10, 0x88];
        expected.extend_from_slice(b"RETURN 1");
        expected.push(0xA0);
        expected.push(0xC1);
        expected.extend_from_slice(&1.5f64.to_be_bytes());
        assert_eq!(bytes, expected);
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert_eq!(decode(&[]), Err(DecodeError::Truncated));
        assert_eq!(decode(&[0xC7]), Err(DecodeError::UnknownMarker(0xC7)));
        assert_eq!(decode(&[0x82, 0xFF, 0xFE]), Err(DecodeError::InvalidUtf8));
        assert_eq!(decode(&[0xA1, 0x01, 0x01]), Err(DecodeError::NonStringKey));
        assert_eq!(decode(&[0x01, 0x02]), Err(DecodeError::TrailingBytes(1)));
        // A list that claims four billion items in a five-byte message.
        assert_eq!(
            decode(&[0xD6, 0xFF, 0xFF, 0xFF, 0xFF]),
            Err(DecodeError::Truncated)
        );
        assert_eq!(decode(&[0x91; 100_000]), Err(DecodeError::TooDeep));
    }

    fn arb_pack() -> impl Strategy<Value = Pack> {
        let leaf = prop_oneof![
            Just(Pack::Null),
            any::<bool>().prop_map(Pack::Bool),
            any::<i64>().prop_map(Pack::Int),
            any::<f64>()
                .prop_filter("NaN != NaN", |f| !f.is_nan())
                .prop_map(Pack::Float),
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(Pack::Bytes),
            ".{0,40}".prop_map(Pack::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(Pack::List),
                proptest::collection::vec((".{0,8}", inner.clone()), 0..8).prop_map(Pack::Map),
                (
                    any::<u8>(),
                    proptest::collection::vec(inner, 0..=MAX_STRUCT_FIELDS)
                )
                    .prop_map(|(tag, fields)| Pack::structure(tag, fields)),
            ]
        })
    }

    proptest! {
        #[test]
        fn every_value_round_trips(value in arb_pack()) {
            round_trip(value);
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn truncated_encodings_are_errors(value in arb_pack(), cut in any::<prop::sample::Index>()) {
            let mut bytes = Vec::new();
            encode(&value, &mut bytes);
            let cut = cut.index(bytes.len());
            prop_assert!(decode(&bytes[..cut]).is_err());
        }
    }
}
