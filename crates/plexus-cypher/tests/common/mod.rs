//! Helpers shared by the integration tests: locating the shared data sets and the round-trip
//! check (parse → print → parse gives an equal tree).

use std::path::PathBuf;

/// `/…/shared/data/<relative>`, located from this crate's manifest directory (never hard-coded).
#[allow(dead_code)] // only the TCK and LDBC test crates read shared data
pub fn shared_data(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(relative)
}

/// Parses `query`, prints it, parses the printed text and checks the trees are equal.
/// Returns the printed form, or a description of what went wrong.
pub fn round_trip(query: &str) -> Result<String, String> {
    let statement = plexus_cypher::parse(query).map_err(|error| format!("parse: {error}"))?;
    let printed = statement.to_string();
    let reparsed = plexus_cypher::parse(&printed)
        .map_err(|error| format!("reparse of `{printed}`: {error}"))?;
    if reparsed != statement {
        return Err(format!(
            "printed form `{printed}` parses to a different tree"
        ));
    }
    let pretty = format!("{statement:#}");
    match plexus_cypher::parse(&pretty) {
        Ok(reparsed) if reparsed == statement => Ok(printed),
        _ => Err(format!("multi-line form `{pretty}` does not round-trip")),
    }
}
