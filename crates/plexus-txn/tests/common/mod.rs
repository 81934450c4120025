//! What the transaction tests share: a manager over an in-memory storage.

use plexus_storage::{FaultVfs, Storage};
use plexus_txn::TxnManager;
use plexus_types::Config;
use std::sync::Arc;

/// A transaction manager over a fresh in-memory storage, without background maintenance.
pub fn manager() -> Arc<TxnManager> {
    let config = Config {
        background_maintenance: false,
        ..Config::default()
    };
    let (storage, _report) = Storage::open(Arc::new(FaultVfs::new()), &config).unwrap();
    TxnManager::new(Arc::new(storage), config)
}
