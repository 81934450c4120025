//! The code cache: compiled predicates (and pipelines) shared by every query that filters
//! (and aggregates) on the same expressions over the same types.
//!
//! WHAT
//! ====
//! A key is the program's fingerprint (its expressions' text, parameters by name only — their
//! values are passed at run time), the [`Signature`] it is compiled for (the type of each
//! leaf column and parameter) and the catalog version the caller runs against. An entry is a
//! [`CompileCell`]: empty while a compile is under way, then the compiled predicate or the
//! reason it could not be compiled (so an unsupported type combination is tried once, not
//! per batch).
//!
//! - `on` ([`Cache::get_or_compile`]): a miss compiles on the caller's thread; a compile
//!   already under way elsewhere is waited for.
//! - `adaptive` ([`Cache::get_or_spawn`]): a miss starts the compile on a new background
//!   thread and returns at once; the caller keeps interpreting and polls the cell between
//!   batches ([`Lookup::Pending`]).
//!
//! BOUND AND FREEING
//! =================
//! At most [`MAX_CACHED_PREDICATES`] entries (one Cranelift module each, typically a few KiB
//! of code); inserting beyond that evicts the least recently used. Entries are `Arc`s: an
//! evicted predicate still running in some query stays alive until that query lets go, and
//! then `CompiledCode`'s drop frees its module's memory — never earlier, never leaked.
//!
//! Why the catalog version is in the key although compiled code reads no catalog: it makes
//! "a schema change never runs code compiled before it" true by construction, whatever a
//! later compiler might bake in (property key ids, say); old entries age out by LRU.

use crate::codegen::CompiledCode;
use crate::shape::{Shape, Unsupported};
use crate::{Program, Signature, compile_program};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, OnceLock};

/// The most compiled predicates (Cranelift modules) the process keeps, in modules.
pub const MAX_CACHED_PREDICATES: usize = 256;

/// A compile's outcome, set once.
pub type CompileCell = OnceLock<Result<Arc<CompiledCode>, Unsupported>>;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    fingerprint: String,
    signature: Signature,
    catalog_version: u64,
}

/// What the cache has for a predicate.
#[derive(Debug, Clone)]
pub enum Lookup {
    Ready(Arc<CompiledCode>),
    /// Not compiled (the reason), for these types.
    Unsupported(Unsupported),
    /// A background compile is under way: poll the cell.
    Pending(Arc<CompileCell>),
}

impl Lookup {
    /// The lookup once `cell` is set (or still pending).
    pub fn of(cell: &Arc<CompileCell>) -> Lookup {
        match cell.get() {
            Some(Ok(compiled)) => Lookup::Ready(compiled.clone()),
            Some(Err(why)) => Lookup::Unsupported(why.clone()),
            None => Lookup::Pending(cell.clone()),
        }
    }
}

/// A bounded map of compile cells with least-recently-used eviction.
pub struct Cache {
    capacity: usize,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    map: HashMap<Key, (Arc<CompileCell>, u64)>,
    clock: u64,
    evictions: u64,
}

static GLOBAL: LazyLock<Cache> = LazyLock::new(|| Cache::new(MAX_CACHED_PREDICATES));

impl Cache {
    /// A cache of at most `capacity` entries (at least one).
    pub fn new(capacity: usize) -> Cache {
        Cache {
            capacity: capacity.max(1),
            entries: Mutex::new(Entries::default()),
        }
    }

    /// The process-wide cache the executor uses.
    pub fn global() -> &'static Cache {
        &GLOBAL
    }

    /// Entries held now, and evicted so far.
    pub fn stats(&self) -> (usize, u64) {
        let entries = self.entries.lock();
        (entries.map.len(), entries.evictions)
    }

    /// The cell for a key, and whether this call created it (and so must fill it).
    fn cell(&self, key: Key) -> (Arc<CompileCell>, bool) {
        let mut entries = self.entries.lock();
        entries.clock += 1;
        let now = entries.clock;
        if let Some((cell, used)) = entries.map.get_mut(&key) {
            *used = now;
            return (cell.clone(), false);
        }
        if entries.map.len() >= self.capacity {
            let oldest = entries
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                entries.map.remove(&oldest);
                entries.evictions += 1;
            }
        }
        let cell = Arc::new(CompileCell::new());
        entries.map.insert(key, (cell.clone(), now));
        (cell, true)
    }

    /// The compiled predicate, compiling it on this thread on a miss (`jit = on`).
    pub fn get_or_compile(
        &self,
        program: &Program,
        shape: &Shape,
        signature: &Signature,
        catalog_version: u64,
    ) -> Lookup {
        let (cell, created) = self.cell(key(shape, signature, catalog_version));
        if created {
            let _ = cell.set(guarded_compile(program, shape, signature));
        }
        cell.wait();
        Lookup::of(&cell)
    }

    /// The compiled predicate if ready; on a miss, a compile started on a background thread
    /// (`jit = adaptive`).
    pub fn get_or_spawn(
        &self,
        program: &Program,
        shape: &Shape,
        signature: &Signature,
        catalog_version: u64,
    ) -> Lookup {
        let (cell, created) = self.cell(key(shape, signature, catalog_version));
        if created {
            let (program, shape, signature) = (program.clone(), shape.clone(), signature.clone());
            let target = cell.clone();
            let spawned = std::thread::Builder::new()
                .name("plexus-jit".into())
                .spawn(move || {
                    let _ = target.set(guarded_compile(&program, &shape, &signature));
                });
            if let Err(e) = spawned {
                let _ = cell.set(Err(Unsupported::new(format!("no compile thread: {e}"))));
            }
        }
        Lookup::of(&cell)
    }
}

/// Compiles, turning a panic inside the code generator into "not compiled": a cell is always
/// set, so nobody waits on it forever, and the query runs interpreted.
fn guarded_compile(
    program: &Program,
    shape: &Shape,
    signature: &Signature,
) -> Result<Arc<CompiledCode>, Unsupported> {
    // Nothing is shared with the compile but its inputs, read only: no state to leave torn.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compile_program(program, shape, signature).map(Arc::new)
    }))
    .unwrap_or_else(|_| Err(Unsupported::new("the code generator panicked")))
}

fn key(shape: &Shape, signature: &Signature, catalog_version: u64) -> Key {
    Key {
        fingerprint: shape.fingerprint.clone(),
        signature: signature.clone(),
        catalog_version,
    }
}
