//! Bolt version negotiation.
//!
//! ```text
//!   client: 60 60 B0 17                        magic
//!           00 RR mm MM  × 4                    offers, best first: major MM, minor mm,
//!                                               and RR more minors below it (a range)
//!   server: 00 00 mm MM                         the chosen version, or 00 00 00 00
//! ```
//!
//! An offer `00 08 08 05` means "5.8 down to 5.0". The server walks the offers in the
//! client's order and answers with the highest version it supports inside the first offer
//! that contains one. Plexus speaks Bolt 5.0 to 5.4 ([`SUPPORTED`]). The "manifest" offer of
//! newer drivers (`00 00 01 FF`) is not a version and is skipped: the drivers that send it
//! also offer plain ranges.

/// The magic preamble every Bolt connection starts with.
pub const MAGIC: [u8; 4] = [0x60, 0x60, 0xB0, 0x17];

/// Bytes the client sends: the magic and four offers.
pub const HANDSHAKE_SIZE_BYTES: usize = 20;

/// A Bolt protocol version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u8,
    pub minor: u8,
}

impl Version {
    pub const fn new(major: u8, minor: u8) -> Self {
        Version { major, minor }
    }

    /// LOGON / LOGOFF carry the credentials (before 5.1 HELLO does).
    pub fn has_logon(self) -> bool {
        self >= Version::new(5, 1)
    }

    /// TELEMETRY exists.
    pub fn has_telemetry(self) -> bool {
        self >= Version::new(5, 4)
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The versions Plexus speaks, lowest first.
pub const SUPPORTED: std::ops::RangeInclusive<Version> = Version::new(5, 0)..=Version::new(5, 4);

/// Why a handshake failed.
#[derive(Debug, PartialEq, Eq)]
pub enum HandshakeError {
    BadMagic([u8; 4]),
    NoCommonVersion,
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandshakeError::BadMagic(m) => {
                write!(f, "not a Bolt client (preamble {m:02X?})")
            }
            HandshakeError::NoCommonVersion => write!(
                f,
                "no common Bolt version (server speaks {} to {})",
                SUPPORTED.start(),
                SUPPORTED.end()
            ),
        }
    }
}

/// Picks the version to speak from the client's 20 handshake bytes.
pub fn negotiate(bytes: &[u8; HANDSHAKE_SIZE_BYTES]) -> Result<Version, HandshakeError> {
    let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
    if magic != MAGIC {
        return Err(HandshakeError::BadMagic(magic));
    }
    bytes[4..]
        .chunks_exact(4)
        .find_map(|offer| {
            let (range, minor, major) = (offer[1], offer[2], offer[3]);
            let high = Version::new(major, minor);
            let low = Version::new(major, minor.saturating_sub(range));
            let best = std::cmp::min(high, *SUPPORTED.end());
            (best >= low && SUPPORTED.contains(&best)).then_some(best)
        })
        .ok_or(HandshakeError::NoCommonVersion)
}

/// The server's 4-byte answer.
pub fn answer(version: Option<Version>) -> [u8; 4] {
    match version {
        Some(v) => [0, 0, v.minor, v.major],
        None => [0; 4],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(offers: [[u8; 4]; 4]) -> [u8; HANDSHAKE_SIZE_BYTES] {
        let mut bytes = [0u8; HANDSHAKE_SIZE_BYTES];
        bytes[..4].copy_from_slice(&MAGIC);
        for (i, offer) in offers.iter().enumerate() {
            bytes[4 + 4 * i..8 + 4 * i].copy_from_slice(offer);
        }
        bytes
    }

    #[test]
    fn picks_the_best_supported_version_in_the_first_matching_offer() {
        // What the official Python driver 6 sends: manifest, 5.8..5.0, 4.4..4.2, 3.0.
        let driver = hello([[0, 0, 1, 0xFF], [0, 8, 8, 5], [0, 2, 4, 4], [0, 0, 0, 3]]);
        assert_eq!(negotiate(&driver), Ok(Version::new(5, 4)));
        let exact = hello([[0, 0, 2, 5], [0; 4], [0; 4], [0; 4]]);
        assert_eq!(negotiate(&exact), Ok(Version::new(5, 2)));
        let range_below = hello([[0, 2, 8, 5], [0, 0, 0, 5], [0; 4], [0; 4]]);
        assert_eq!(negotiate(&range_below), Ok(Version::new(5, 0)));
        let none = hello([[0, 0, 4, 4], [0, 0, 0, 3], [0; 4], [0; 4]]);
        assert_eq!(negotiate(&none), Err(HandshakeError::NoCommonVersion));
        let mut http = hello([[0; 4]; 4]);
        http[..4].copy_from_slice(b"GET ");
        assert!(matches!(negotiate(&http), Err(HandshakeError::BadMagic(_))));
        assert_eq!(answer(Some(Version::new(5, 4))), [0, 0, 4, 5]);
    }
}
