//! Conformance helpers shared by the `plexus-tck` binary and its tests: the LDBC SNB mini
//! loader ([`ldbc`]).

pub mod ldbc;
