//! # The PostgreSQL mirror
//!
//! The business keeps writing to PostgreSQL as it always has; Plexus keeps a graph view of
//! those rows, queryable and analysable within milliseconds of each source commit. This crate
//! is that follower. It is a client of the `plexus` facade like any front end: everything it
//! writes goes through ordinary graph transactions (and, for the initial copy, the bulk
//! loader), so the mirrored graph is an ordinary Plexus graph.
//!
//! The pieces, in the order data flows through them:
//!
//! - a **mapping** (SQL/PGQ `CREATE PROPERTY GRAPH`, with a few Plexus extensions) says which
//!   tables become vertex tables and edge tables, their keys, labels and properties; it is
//!   validated against the live PostgreSQL catalog before anything is copied;
//! - the **source** side talks to PostgreSQL: it creates a publication and a logical
//!   replication slot whose exported snapshot the initial copy reads (so the copy and the
//!   stream meet with no gap and no duplicate), then follows the slot with `pgoutput` and
//!   decodes it into [`change::SourceTxn`]s;
//! - the **apply** side turns source transactions into graph writes, grouping several into
//!   one graph commit per epoch, and stores the last applied source position atomically with
//!   that commit so a restart resumes exactly once.
//!
//! [`apply`] holds the mirror itself ([`Mirror`]); [`change`] is the vocabulary between the source and the apply side; [`cluster`] starts
//! throwaway PostgreSQL servers for tests, benchmarks and the demo.

pub mod apply;
pub mod change;
pub mod cluster;
pub mod mapping;
pub mod source;

pub use apply::{
    Mirror, MirrorError, MirrorHandle, MirrorOptions, MirrorState, MirrorStatus, MirrorThread,
    load_mapping,
};
