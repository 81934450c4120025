//! Protected labels and relationship types: graph data another system owns.
//!
//! A follower (the PostgreSQL mirror) keeps some labels and relationship types equal to its
//! source; a user write to them would be silently overwritten or, worse, make the graph
//! disagree with the source for good. So while a follower runs it *protects* them: every
//! transaction's writes to a vertex carrying a protected label (creating one, changing its
//! properties or labels, deleting it) or to a relationship of a protected type fail with a
//! clear error, except the follower's own transactions ([`Transaction::follow`]). Other
//! labels stay writable, and reads are never affected.
//!
//! Cost: one relaxed atomic load per write while nothing is protected; name lookups in a
//! small set otherwise.
//!
//! [`Transaction::follow`]: crate::Transaction::follow

use parking_lot::RwLock;
use plexus_types::{Error, Result};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What one follower protects.
#[derive(Clone, Debug)]
pub struct Protection {
    /// The follower (its replication origin's name).
    pub owner: String,
    pub labels: HashSet<String>,
    pub edge_types: HashSet<String>,
    /// Why, for the error message (e.g. "mirrored from PostgreSQL by mirror 'pg'").
    pub reason: String,
}

#[derive(Default)]
pub struct Protections {
    any: AtomicBool,
    list: RwLock<Arc<Vec<Protection>>>,
}

impl Protections {
    /// Adds (or replaces) `protection.owner`'s protection.
    pub fn set(&self, protection: Protection) {
        let mut list = self.list.write();
        let mut next: Vec<Protection> = list
            .iter()
            .filter(|p| p.owner != protection.owner)
            .cloned()
            .collect();
        next.push(protection);
        self.any.store(true, Ordering::Release);
        *list = Arc::new(next);
    }

    /// Removes `owner`'s protection.
    pub fn clear(&self, owner: &str) {
        let mut list = self.list.write();
        let next: Vec<Protection> = list.iter().filter(|p| p.owner != owner).cloned().collect();
        self.any.store(!next.is_empty(), Ordering::Release);
        *list = Arc::new(next);
    }

    /// Whether anything is protected (the fast path of every check).
    pub fn active(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    /// Fails if `label` is protected by someone other than `follower`.
    pub fn check_label(&self, label: &str, follower: Option<&str>) -> Result<()> {
        self.check(
            follower,
            |p| p.labels.contains(label),
            || format!("label :{label}"),
        )
    }

    /// Fails if relationship type `edge_type` is protected by someone other than `follower`.
    pub fn check_edge_type(&self, edge_type: &str, follower: Option<&str>) -> Result<()> {
        self.check(
            follower,
            |p| p.edge_types.contains(edge_type),
            || format!("relationship type :{edge_type}"),
        )
    }

    fn check(
        &self,
        follower: Option<&str>,
        protects: impl Fn(&Protection) -> bool,
        what: impl Fn() -> String,
    ) -> Result<()> {
        if !self.active() {
            return Ok(());
        }
        let list = self.list.read().clone();
        match list
            .iter()
            .find(|p| Some(p.owner.as_str()) != follower && protects(p))
        {
            Some(p) => Err(Error::Constraint(format!(
                "{} is read-only here: it is {}; change the source instead",
                what(),
                p.reason
            ))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_writes_what_it_protects() {
        let protections = Protections::default();
        assert!(protections.check_label("Person", None).is_ok());
        protections.set(Protection {
            owner: "pg".into(),
            labels: ["Person".to_string()].into(),
            edge_types: ["KNOWS".to_string()].into(),
            reason: "mirrored from PostgreSQL".into(),
        });
        let err = protections.check_label("Person", None).unwrap_err();
        assert!(
            err.to_string().contains("label :Person is read-only"),
            "{err}"
        );
        assert!(protections.check_label("Person", Some("pg")).is_ok());
        assert!(protections.check_label("Person", Some("other")).is_err());
        assert!(protections.check_label("Other", None).is_ok());
        assert!(protections.check_edge_type("KNOWS", None).is_err());
        protections.clear("pg");
        assert!(!protections.active());
        assert!(protections.check_edge_type("KNOWS", None).is_ok());
    }
}
