//! The file-system seam: every byte Plexus reads or writes goes through [`Vfs`].
//!
//! WHY
//! ===
//! Durability bugs hide in the gap between "written" and "on stable storage". Routing all I/O
//! through a small trait lets tests swap the real file system ([`OsVfs`]) for a fault injector
//! ([`crate::fault::FaultVfs`]) that fails or shortens writes, drops everything not yet
//! synced, and "crashes" at the Nth sync point — deterministically.
//!
//! CONTRACT
//! ========
//! - `VfsFile::write_all` appends; data is durable only after `VfsFile::sync`.
//! - Creating, renaming or removing a file is durable only after `Vfs::sync_dir`.
//! - `rename` atomically replaces the destination (POSIX semantics).
//!
//! Paths are relative to the database directory and use `/`; file names are flat (no
//! sub-directories), which keeps both implementations small.

use plexus_types::{Error, Result};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The read-only bytes of a whole file: memory-mapped by [`OsVfs`], a copy in memory
/// elsewhere. Only immutable files (CSR runs) are mapped.
pub type MappedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

pub trait VfsFile: Send {
    fn write_all(&mut self, data: &[u8]) -> Result<()>;
    fn sync(&mut self) -> Result<()>;
}

pub trait Vfs: Send + Sync {
    /// Opens `name` for appending, creating it if absent.
    fn open_append(&self, name: &str) -> Result<Box<dyn VfsFile>>;
    /// Creates `name` empty (truncating any previous content) for writing.
    fn create(&self, name: &str) -> Result<Box<dyn VfsFile>>;
    fn read(&self, name: &str) -> Result<Vec<u8>>;
    /// Reads `len_bytes` of `name` starting at `offset` (random access, for the row cache's
    /// spill pages). A file shorter than `offset + len_bytes` is an `UnexpectedEof` I/O error.
    fn read_at(&self, name: &str, offset: u64, len_bytes: usize) -> Result<Vec<u8>>;
    /// The length of `name` in bytes.
    fn size(&self, name: &str) -> Result<u64>;
    fn exists(&self, name: &str) -> bool;
    /// File names in the directory, sorted.
    fn list(&self) -> Result<Vec<String>>;
    fn remove(&self, name: &str) -> Result<()>;
    fn rename(&self, from: &str, to: &str) -> Result<()>;
    /// Shortens `name` to `len_bytes` (used to cut a torn WAL tail) and syncs it.
    fn truncate(&self, name: &str, len_bytes: u64) -> Result<()>;
    fn sync_dir(&self) -> Result<()>;
    /// A human-readable location for error messages.
    fn describe(&self, name: &str) -> String;
    /// Maps an immutable file for reading.
    fn map(&self, name: &str) -> Result<MappedBytes>;
}

/// The real file system, rooted at a database directory.
pub struct OsVfs {
    root: PathBuf,
}

impl OsVfs {
    pub fn new(root: &Path) -> Result<Self> {
        fs::create_dir_all(root).map_err(|e| Error::io(root.display().to_string(), e))?;
        Ok(Self {
            root: root.to_path_buf(),
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        debug_assert!(!name.contains('/'), "flat file names only: {name}");
        self.root.join(name)
    }

    fn err(&self, name: &str) -> impl FnOnce(std::io::Error) -> Error + '_ {
        let file = self.describe(name);
        move |e| Error::io(file, e)
    }
}

struct OsFile {
    file: fs::File,
    name: String,
}

impl VfsFile for OsFile {
    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.file
            .write_all(data)
            .map_err(|e| Error::io(&self.name, e))
    }

    fn sync(&mut self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io(&self.name, e))
    }
}

impl Vfs for OsVfs {
    fn open_append(&self, name: &str) -> Result<Box<dyn VfsFile>> {
        let file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path(name))
            .map_err(self.err(name))?;
        Ok(Box::new(OsFile {
            file,
            name: self.describe(name),
        }))
    }

    fn create(&self, name: &str) -> Result<Box<dyn VfsFile>> {
        let file = fs::File::create(self.path(name)).map_err(self.err(name))?;
        Ok(Box::new(OsFile {
            file,
            name: self.describe(name),
        }))
    }

    fn read(&self, name: &str) -> Result<Vec<u8>> {
        fs::read(self.path(name)).map_err(self.err(name))
    }

    fn read_at(&self, name: &str, offset: u64, len_bytes: usize) -> Result<Vec<u8>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = fs::File::open(self.path(name)).map_err(self.err(name))?;
        file.seek(SeekFrom::Start(offset)).map_err(self.err(name))?;
        let mut buf = vec![0; len_bytes];
        file.read_exact(&mut buf).map_err(self.err(name))?;
        Ok(buf)
    }

    fn size(&self, name: &str) -> Result<u64> {
        let metadata = fs::metadata(self.path(name)).map_err(self.err(name))?;
        Ok(metadata.len())
    }

    fn exists(&self, name: &str) -> bool {
        self.path(name).exists()
    }

    fn list(&self) -> Result<Vec<String>> {
        let entries = fs::read_dir(&self.root).map_err(self.err(""))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(self.err(""))?;
            if let Some(name) = entry.file_name().to_str() {
                names.push(name.to_string());
            }
        }
        names.sort();
        Ok(names)
    }

    fn remove(&self, name: &str) -> Result<()> {
        fs::remove_file(self.path(name)).map_err(self.err(name))
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        fs::rename(self.path(from), self.path(to)).map_err(self.err(from))
    }

    fn truncate(&self, name: &str, len_bytes: u64) -> Result<()> {
        let file = fs::OpenOptions::new()
            .write(true)
            .open(self.path(name))
            .map_err(self.err(name))?;
        file.set_len(len_bytes).map_err(self.err(name))?;
        file.sync_all().map_err(self.err(name))
    }

    fn sync_dir(&self) -> Result<()> {
        let dir = fs::File::open(&self.root).map_err(self.err(""))?;
        dir.sync_all().map_err(self.err(""))
    }

    fn describe(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }

    fn map(&self, name: &str) -> Result<MappedBytes> {
        let file = fs::File::open(self.path(name)).map_err(self.err(name))?;
        let len = file.metadata().map_err(self.err(name))?.len();
        if len == 0 {
            return Ok(Arc::new(Vec::new()));
        }
        // SAFETY: Plexus maps only run files, which are written once, fsynced and never
        // modified or truncated while mapped (they are deleted only when unreferenced).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(self.err(name))?;
        Ok(Arc::new(map))
    }
}
