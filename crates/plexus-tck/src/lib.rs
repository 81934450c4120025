//! Conformance helpers shared by the `plexus-tck` binary and its tests: the LDBC SNB mini
//! loader ([`ldbc`]) and the SNB queries with their parameters ([`ldbc_queries`]).

pub mod ldbc;
pub mod ldbc_queries;
