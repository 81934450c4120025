//! Procedures that front ends add to a database: the facade cannot depend on the crates
//! built on it (`plexus-graphar` writes GraphAr through this facade), so such a crate offers
//! a registration function and the program that opens the database calls it at start-up.
//!
//! `Database::register_procedure` keeps the procedure in the database; every connection
//! opened afterwards — embedded, shell or Bolt session — can `CALL` it, as it can the
//! built-in ones (a registered procedure of the same name replaces a built-in one on those
//! connections). Connections opened before the call do not see it, so register first.
//!
//! A registered procedure's body gets the calling statement's transaction, like every
//! procedure. One that must read on its own — an export pins one snapshot-isolation
//! transaction of its own, whatever the caller's isolation or uncommitted writes — keeps a
//! [`DatabaseHandle`]: it begins transactions, reads the schema, and names the database's
//! export directory (the only place a statement may write files).

use crate::schema::Schema;
use parking_lot::Mutex;
use plexus_exec::Procedure;
use plexus_ingest::ExportDir;
use plexus_txn::{Transaction, TxnManager};
use plexus_types::IsolationLevel;
use std::sync::Arc;

/// The procedures registered on one database, in registration order.
#[derive(Default)]
pub(crate) struct Extensions {
    procedures: Mutex<Vec<Procedure>>,
}

impl Extensions {
    /// Keeps `procedure`, replacing one registered under the same name.
    pub(crate) fn add(&self, procedure: Procedure) {
        let mut procedures = self.procedures.lock();
        procedures.retain(|p| !p.name.eq_ignore_ascii_case(&procedure.name));
        procedures.push(procedure);
    }

    /// The registered procedures, in registration order.
    pub(crate) fn procedures(&self) -> Vec<Procedure> {
        self.procedures.lock().clone()
    }
}

/// What a registered procedure may keep of its database (see the module docs). Like a
/// `Connection`, it keeps the engine alive, not the `Database` handle.
#[derive(Clone)]
pub struct DatabaseHandle {
    manager: Arc<TxnManager>,
    export_dir: Option<Arc<ExportDir>>,
}

impl DatabaseHandle {
    pub(crate) fn new(manager: Arc<TxnManager>, export_dir: Option<Arc<ExportDir>>) -> Self {
        DatabaseHandle {
            manager,
            export_dir,
        }
    }

    /// Begins a snapshot-isolation transaction: everything read through it shows the
    /// database at one instant.
    pub fn begin_snapshot(&self) -> Transaction {
        plexus_txn::begin(&self.manager, IsolationLevel::Snapshot)
    }

    /// The catalog by name, as it is now (tables only grow, so read after a transaction
    /// begins it names every table that transaction can see).
    pub fn schema(&self) -> Schema {
        Schema::of(&self.manager.catalog())
    }

    /// The export directory (`export_directory`), if the database has one.
    pub fn export_dir(&self) -> Option<&ExportDir> {
        self.export_dir.as_deref()
    }
}
