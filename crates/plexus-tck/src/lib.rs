//! Conformance helpers shared by the `plexus-tck` binary, its tests and the other front ends:
//! the LDBC Graphalytics validation harness ([`graphalytics`]: reading the validation data,
//! parameters, comparison rules; `plexus algo validate` runs it through a database), the LDBC
//! SNB mini loader ([`ldbc`]) and the SNB queries with their parameters ([`ldbc_queries`]).
//! Like every front end, this crate reaches the engine through the `plexus` facade only.

pub mod graphalytics;
pub mod ldbc;
pub mod ldbc_queries;
