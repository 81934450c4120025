//! Source changes: what the PostgreSQL side hands the apply side.
//!
//! A [`SourceTxn`] is one committed PostgreSQL transaction as logical decoding delivers it:
//! its commit position and time and its row changes in commit order. Row values stay in
//! PostgreSQL's text representation ([`Datum::Text`]), the form both `pgoutput` (protocol 1)
//! and `COPY ... TO STDOUT` produce, so one conversion (by column type) serves the initial
//! copy and the stream alike.
//!
//! Invariants: within one replication stream, `commit_lsn` strictly increases from one
//! transaction to the next; a [`Change::Relation`] describing a relation precedes the first
//! change that names that relation's oid in the stream (PostgreSQL resends it after a schema
//! change, which is how the mirror notices `ALTER TABLE`).

use std::fmt;
use std::str::FromStr;

/// A position in PostgreSQL's write-ahead log (`pg_lsn`), printed as PostgreSQL prints it:
/// `16/B374D848`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xFFFF_FFFF)
    }
}

impl FromStr for Lsn {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad =
            || format!("not a PostgreSQL LSN (expected HEX/HEX such as 16/B374D848): {text:?}");
        let (high, low) = text.trim().split_once('/').ok_or_else(bad)?;
        let high = u32::from_str_radix(high, 16).map_err(|_| bad())?;
        let low = u32::from_str_radix(low, 16).map_err(|_| bad())?;
        Ok(Lsn((u64::from(high) << 32) | u64::from(low)))
    }
}

/// A relation (table) as the replication stream describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelationInfo {
    pub oid: u32,
    pub schema: String,
    pub name: String,
    /// PostgreSQL's `relreplident`: `d` (primary key), `n` (nothing), `f` (full row) or `i`
    /// (an index).
    pub replica_identity: u8,
    pub columns: Vec<RelationColumn>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelationColumn {
    pub name: String,
    pub type_oid: u32,
    /// `atttypmod` (-1 when the type has none).
    pub type_modifier: i32,
    /// Part of the replica identity (sent in the old row of an update or delete).
    pub is_key: bool,
}

/// One column value of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Datum {
    Null,
    /// PostgreSQL's text output for the value.
    Text(String),
    /// A TOASTed value the update did not change; PostgreSQL does not resend it.
    UnchangedToast,
}

/// The old row an update or delete carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OldRow {
    /// Only the replica-identity columns are meaningful (the others are [`Datum::Null`]).
    pub key_only: bool,
    pub values: Vec<Datum>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    Relation(RelationInfo),
    Insert {
        relation: u32,
        new: Vec<Datum>,
    },
    /// `old` is absent when the replica identity did not change and is not `FULL`.
    Update {
        relation: u32,
        old: Option<OldRow>,
        new: Vec<Datum>,
    },
    Delete {
        relation: u32,
        old: OldRow,
    },
    Truncate {
        relations: Vec<u32>,
        cascade: bool,
        restart_identity: bool,
    },
}

/// One committed source transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceTxn {
    pub xid: u32,
    /// The commit record's position (pgoutput's Commit `commit_lsn`).
    pub commit_lsn: Lsn,
    /// The end of the commit record: what to confirm once the transaction is applied durably.
    pub end_lsn: Lsn,
    /// Commit time in microseconds since the Unix epoch (converted from PostgreSQL's 2000
    /// epoch).
    pub commit_time_unix_us: i64,
    pub changes: Vec<Change>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsn_round_trips_through_postgres_text() {
        for text in ["0/0", "16/B374D848", "FFFFFFFF/FFFFFFFF"] {
            let lsn: Lsn = text.parse().unwrap();
            assert_eq!(lsn.to_string(), text);
        }
        assert_eq!("1/0".parse::<Lsn>().unwrap(), Lsn(1 << 32));
        assert!("16B374D848".parse::<Lsn>().is_err());
        assert!("G/0".parse::<Lsn>().is_err());
    }
}
