//! `CALL db.mirror.status()`: how the followers running in this process are doing.
//!
//! A follower (the PostgreSQL mirror) publishes a status function through its
//! [`OriginClaim`](crate::OriginClaim); the procedure calls each one and returns a row per
//! follower with the columns of [`MIRROR_STATUS_COLUMNS`] (a column the follower does not
//! report is null). The registry lives in the `Database`, so every connection — embedded,
//! shell or Bolt session — sees the same followers.

use parking_lot::Mutex;
use plexus_exec::{Procedure, ProcedureFn, QueryError, Value};
use plexus_txn::Transaction;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The columns of `CALL db.mirror.status()`, in order.
pub const MIRROR_STATUS_COLUMNS: [&str; 12] = [
    "name",
    "state",
    "message",
    "slot",
    "appliedPosition",
    "confirmedPosition",
    "sourceTransactions",
    "epochs",
    "pending",
    "freshnessP50Ms",
    "freshnessP99Ms",
    "freshnessMaxMs",
];

/// What a follower reports: (column, value) pairs, columns from [`MIRROR_STATUS_COLUMNS`].
pub type StatusFn = Arc<dyn Fn() -> Vec<(&'static str, plexus_types::Value)> + Send + Sync>;

/// The followers of one database that publish a status, by origin name.
#[derive(Default)]
pub(crate) struct FollowerStatuses {
    by_name: Mutex<BTreeMap<String, StatusFn>>,
}

impl FollowerStatuses {
    pub(crate) fn set(&self, name: &str, status: StatusFn) {
        self.by_name.lock().insert(name.to_owned(), status);
    }

    pub(crate) fn remove(&self, name: &str) {
        self.by_name.lock().remove(name);
    }

    fn rows(&self) -> Vec<Vec<Value>> {
        let followers: Vec<(String, StatusFn)> = self
            .by_name
            .lock()
            .iter()
            .map(|(name, status)| (name.clone(), status.clone()))
            .collect();
        followers
            .into_iter()
            .map(|(name, status)| {
                let reported = status();
                MIRROR_STATUS_COLUMNS
                    .iter()
                    .map(|column| match *column {
                        "name" => Value::string(&name),
                        column => reported
                            .iter()
                            .find(|(c, _)| *c == column)
                            .map_or(Value::Null, |(_, v)| Value::from_storage(v.clone())),
                    })
                    .collect()
            })
            .collect()
    }
}

/// The `db.mirror.status` procedure over `statuses`.
pub(crate) fn status_procedure(statuses: Arc<FollowerStatuses>) -> Procedure {
    let body = move |_: &[Value], _: &mut Transaction| -> Result<Vec<Vec<Value>>, QueryError> {
        Ok(statuses.rows())
    };
    Procedure {
        name: "db.mirror.status".into(),
        inputs: Vec::new(),
        input_types: Vec::new(),
        defaults: Vec::new(),
        outputs: MIRROR_STATUS_COLUMNS.map(String::from).to_vec(),
        rows: Vec::new(),
        compute: Some(ProcedureFn(Arc::new(body))),
    }
}
