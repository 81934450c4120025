//! A fault-injecting, in-memory [`Vfs`] for durability tests.
//!
//! MODEL
//! =====
//! Each file has two states: `durable` (what survives a crash) and `volatile` (what the running
//! process sees). Writes change the volatile content; `sync` copies it to durable. The directory
//! has the same split: creations, renames and removals become durable on `sync_dir`.
//!
//! FAULTS
//! ======
//! - `crash_at_sync(n)`: the n-th sync point (file or directory sync, counted from 1) does not
//!   happen; instead the "process dies": that call and every later call fail. What the next
//!   process sees is [`FaultVfs::after_crash`]: the durable state only — optionally with a torn
//!   prefix of the unsynced tail of each file, which real disks can leave behind.
//! - `fail_writes_after(n)`: the n-th write and all after it fail with an I/O error (a full or
//!   broken disk) without crashing.
//! - `short_write_at(n)`: the n-th write stores only half its bytes and then reports an error.
//!
//! Every number is counted deterministically, so a test can enumerate all crash points of a
//! workload: run it once to count the syncs, then once per sync index.

use crate::vfs::{Vfs, VfsFile};
use parking_lot::Mutex;
use plexus_types::{Error, Result};
use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

#[derive(Clone, Default)]
struct FileState {
    volatile: Vec<u8>,
    durable: Vec<u8>,
}

#[derive(Default)]
struct State {
    /// name → file id, as the running process sees the directory.
    dir_volatile: BTreeMap<String, usize>,
    /// name → file id, as a crash would leave the directory.
    dir_durable: BTreeMap<String, usize>,
    files: Vec<FileState>,
    syncs: u64,
    writes: u64,
    crashed: bool,
    crash_at_sync: Option<u64>,
    fail_writes_after: Option<u64>,
    short_write_at: Option<u64>,
}

/// See the module documentation. Cloning shares the same file system.
#[derive(Clone, Default)]
pub struct FaultVfs {
    state: Arc<Mutex<State>>,
}

fn injected(what: &str) -> Error {
    Error::io(
        format!("faultvfs:{what}"),
        io::Error::other("injected fault"),
    )
}

impl State {
    fn check_alive(&self) -> Result<()> {
        if self.crashed {
            Err(injected("crashed"))
        } else {
            Ok(())
        }
    }

    /// Counts a sync point; returns an error (and marks the crash) if this is the chosen one.
    fn sync_point(&mut self) -> Result<()> {
        self.check_alive()?;
        self.syncs += 1;
        if self.crash_at_sync == Some(self.syncs) {
            self.crashed = true;
            return Err(injected("crash at sync"));
        }
        Ok(())
    }

    fn file_id(&self, name: &str) -> Result<usize> {
        self.dir_volatile.get(name).copied().ok_or_else(|| {
            Error::io(
                format!("faultvfs:{name}"),
                io::Error::from(io::ErrorKind::NotFound),
            )
        })
    }
}

impl FaultVfs {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn crash_at_sync(&self, n: u64) {
        self.state.lock().crash_at_sync = Some(n);
    }

    pub fn fail_writes_after(&self, n: u64) {
        self.state.lock().fail_writes_after = Some(n);
    }

    pub fn short_write_at(&self, n: u64) {
        self.state.lock().short_write_at = Some(n);
    }

    /// Writes attempted so far (failed ones included): `short_write_at(write_count() + k)`
    /// makes the k-th write from now short.
    pub fn write_count(&self) -> u64 {
        self.state.lock().writes
    }

    pub fn sync_count(&self) -> u64 {
        self.state.lock().syncs
    }

    pub fn has_crashed(&self) -> bool {
        self.state.lock().crashed
    }

    /// The file system a restarted process would find: durable directory entries with their
    /// durable content. With `keep_torn_tail`, each file also keeps the first half of its
    /// unsynced bytes (a torn write).
    pub fn after_crash(&self, keep_torn_tail: bool) -> FaultVfs {
        let state = self.state.lock();
        let mut next = State::default();
        for (name, &id) in &state.dir_durable {
            let file = &state.files[id];
            let mut content = file.durable.clone();
            if keep_torn_tail && file.volatile.starts_with(&file.durable) {
                let tail = &file.volatile[file.durable.len()..];
                content.extend_from_slice(&tail[..tail.len() / 2]);
            }
            let new_id = next.files.len();
            next.files.push(FileState {
                volatile: content.clone(),
                durable: content,
            });
            next.dir_volatile.insert(name.clone(), new_id);
            next.dir_durable.insert(name.clone(), new_id);
        }
        FaultVfs {
            state: Arc::new(Mutex::new(next)),
        }
    }

    /// Overwrites bytes of a file (volatile and durable) — for corruption tests.
    pub fn corrupt(&self, name: &str, offset: usize, bytes: &[u8]) -> Result<()> {
        let mut state = self.state.lock();
        let id = state.file_id(name)?;
        let file = &mut state.files[id];
        for content in [&mut file.volatile, &mut file.durable] {
            let end = (offset + bytes.len()).min(content.len());
            if offset < end {
                content[offset..end].copy_from_slice(&bytes[..end - offset]);
            }
        }
        Ok(())
    }

    fn new_file(&self, name: &str, keep_content: bool) -> Result<Box<dyn VfsFile>> {
        let mut state = self.state.lock();
        state.check_alive()?;
        match state.dir_volatile.get(name).copied() {
            Some(id) if keep_content => {
                return Ok(Box::new(FaultFile {
                    vfs: self.clone(),
                    id,
                }));
            }
            Some(id) => state.files[id].volatile.clear(),
            None => {
                let id = state.files.len();
                state.files.push(FileState::default());
                state.dir_volatile.insert(name.to_string(), id);
            }
        }
        let id = state.file_id(name)?;
        Ok(Box::new(FaultFile {
            vfs: self.clone(),
            id,
        }))
    }
}

struct FaultFile {
    vfs: FaultVfs,
    id: usize,
}

impl VfsFile for FaultFile {
    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        let mut state = self.vfs.state.lock();
        state.check_alive()?;
        state.writes += 1;
        let n = state.writes;
        if state.fail_writes_after.is_some_and(|limit| n >= limit) {
            return Err(injected("write failed"));
        }
        if state.short_write_at == Some(n) {
            state.files[self.id]
                .volatile
                .extend_from_slice(&data[..data.len() / 2]);
            return Err(injected("short write"));
        }
        state.files[self.id].volatile.extend_from_slice(data);
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        let mut state = self.vfs.state.lock();
        state.sync_point()?;
        let file = &mut state.files[self.id];
        file.durable = file.volatile.clone();
        Ok(())
    }
}

impl Vfs for FaultVfs {
    fn open_append(&self, name: &str) -> Result<Box<dyn VfsFile>> {
        self.new_file(name, true)
    }

    fn create(&self, name: &str) -> Result<Box<dyn VfsFile>> {
        self.new_file(name, false)
    }

    fn read(&self, name: &str) -> Result<Vec<u8>> {
        let state = self.state.lock();
        state.check_alive()?;
        let id = state.file_id(name)?;
        Ok(state.files[id].volatile.clone())
    }

    fn read_at(&self, name: &str, offset: u64, len_bytes: usize) -> Result<Vec<u8>> {
        let state = self.state.lock();
        state.check_alive()?;
        let content = &state.files[state.file_id(name)?].volatile;
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match content.get(start..start.saturating_add(len_bytes)) {
            Some(bytes) => Ok(bytes.to_vec()),
            None => Err(Error::io(
                format!("faultvfs:{name}"),
                io::Error::from(io::ErrorKind::UnexpectedEof),
            )),
        }
    }

    fn size(&self, name: &str) -> Result<u64> {
        let state = self.state.lock();
        state.check_alive()?;
        Ok(state.files[state.file_id(name)?].volatile.len() as u64)
    }

    fn exists(&self, name: &str) -> bool {
        self.state.lock().dir_volatile.contains_key(name)
    }

    fn list(&self) -> Result<Vec<String>> {
        let state = self.state.lock();
        state.check_alive()?;
        Ok(state.dir_volatile.keys().cloned().collect())
    }

    fn remove(&self, name: &str) -> Result<()> {
        let mut state = self.state.lock();
        state.check_alive()?;
        state.file_id(name)?;
        state.dir_volatile.remove(name);
        Ok(())
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let mut state = self.state.lock();
        state.check_alive()?;
        let id = state.file_id(from)?;
        state.dir_volatile.remove(from);
        state.dir_volatile.insert(to.to_string(), id);
        Ok(())
    }

    fn truncate(&self, name: &str, len_bytes: u64) -> Result<()> {
        let mut state = self.state.lock();
        state.sync_point()?;
        let id = state.file_id(name)?;
        let file = &mut state.files[id];
        let len = (len_bytes as usize).min(file.volatile.len());
        file.volatile.truncate(len);
        file.durable = file.volatile.clone();
        Ok(())
    }

    fn sync_dir(&self) -> Result<()> {
        let mut state = self.state.lock();
        state.sync_point()?;
        state.dir_durable = state.dir_volatile.clone();
        Ok(())
    }

    fn describe(&self, name: &str) -> String {
        format!("faultvfs:{name}")
    }

    fn map(&self, name: &str) -> Result<crate::vfs::MappedBytes> {
        Ok(Arc::new(self.read(name)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsynced_data_and_entries_are_lost_on_crash() {
        let vfs = FaultVfs::new();
        let mut f = vfs.create("a").unwrap();
        f.write_all(b"hello").unwrap();
        f.sync().unwrap();
        vfs.sync_dir().unwrap();
        f.write_all(b" world").unwrap();
        let mut g = vfs.create("b").unwrap();
        g.write_all(b"x").unwrap();
        g.sync().unwrap();
        let after = vfs.after_crash(false);
        assert_eq!(after.read("a").unwrap(), b"hello");
        assert!(
            !after.exists("b"),
            "entry of b was never made durable by sync_dir"
        );
        assert_eq!(vfs.after_crash(true).read("a").unwrap(), b"hello wo");
    }

    #[test]
    fn crash_point_fails_that_sync_and_everything_after() {
        let vfs = FaultVfs::new();
        vfs.crash_at_sync(2);
        let mut f = vfs.create("a").unwrap();
        f.sync().unwrap();
        assert!(f.sync().is_err());
        assert!(vfs.has_crashed());
        assert!(f.write_all(b"x").is_err());
    }
}
