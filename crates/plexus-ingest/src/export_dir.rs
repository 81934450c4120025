//! The export directory: the only place a server writes files to.
//!
//! A statement that writes a file (a `COPY` report today, exports later) names it as it names
//! a file to read (see the import directory): `'file:///reports/bad.txt'`, `'bad.txt'`, all
//! meaning a file *under the export directory*. The checks mirror the import directory's, for
//! a file that may not exist yet:
//!
//! 1. Lexical: as for reading (`file` scheme only, percent-decoding, `..` that would climb
//!    above the root refused).
//! 2. Physical, component by component: each directory on the way is created if absent (one
//!    level at a time, never through a link), and an existing one must canonicalize to a
//!    place under the canonical root — a link pointing outside is refused. The final
//!    component must not be a symbolic link or a directory.
//!
//! The file is then created (or truncated) with `O_NOFOLLOW` on the final component, so a
//! link swapped in after the check is not followed. Messages say "the export directory" and
//! never show the server's absolute paths.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{IngestError, IngestErrorKind, Result};
use crate::import_dir::{ResolvedFile, canonical_dir, file_parts, location};

const DIR: &str = "export directory";

/// A directory files may be written to; see the module docs.
#[derive(Debug, Clone)]
pub struct ExportDir {
    /// Canonical (absolute, no symbolic links).
    root: PathBuf,
}

fn io(name: &str, what: &str, e: std::io::Error) -> IngestError {
    IngestError::new(IngestErrorKind::Io, format!("{what}: {e}")).in_file(name)
}

impl ExportDir {
    /// The export directory at `root`, which must exist and be a directory.
    pub fn new(root: impl AsRef<Path>) -> Result<ExportDir> {
        Ok(ExportDir {
            root: canonical_dir(root.as_ref(), DIR)?,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a statement's file name for writing (see the module docs), creating the
    /// directories on the way.
    pub fn resolve(&self, name: &str) -> Result<ResolvedFile> {
        let parts = file_parts(name, DIR, "written")?;
        let relative = parts.join("/");
        let (last, dirs) = parts.split_last().expect("file_parts returns a component");
        let mut at = self.root.clone();
        for part in dirs {
            let next = at.join(part);
            match std::fs::symlink_metadata(&next) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::fs::create_dir(&next)
                        .map_err(|e| io(&relative, "cannot create its directory", e))?;
                    at = next;
                }
                Err(e) => return Err(io(&relative, "cannot inspect its directory", e)),
                Ok(_) => {
                    let canonical = next
                        .canonicalize()
                        .map_err(|e| io(&relative, "cannot resolve its directory", e))?;
                    if !canonical.starts_with(&self.root) {
                        return Err(location(format!(
                            "'{name}' leads through a symbolic link out of the {DIR}; files \
                             are written only in the {DIR}"
                        )));
                    }
                    if !canonical.is_dir() {
                        return Err(location(format!("'{name}': '{part}' is not a directory")));
                    }
                    at = canonical;
                }
            }
        }
        let path = at.join(last);
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            if meta.file_type().is_symlink() {
                return Err(location(format!(
                    "'{name}' is a symbolic link; files are written only in the {DIR}, \
                     never through a link"
                )));
            }
            if meta.is_dir() {
                return Err(location(format!("'{name}' is a directory, not a file")));
            }
        }
        Ok(ResolvedFile {
            path,
            name: relative,
        })
    }

    /// Resolves `name` and creates (or truncates) it for writing, the final component not
    /// followed if it has become a symbolic link since the check.
    pub fn create(&self, name: &str) -> Result<(ResolvedFile, File)> {
        use std::os::unix::fs::OpenOptionsExt;
        let resolved = self.resolve(name)?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&resolved.path)
            .map_err(|e| io(&resolved.name, "cannot create", e))?;
        Ok((resolved, file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;
    use std::os::unix::fs::symlink;

    /// `<tmp>/export` (with `sub/`), and `<tmp>/outside/` beside it.
    fn scratch(tag: &str) -> (Scratch, ExportDir) {
        let scratch = Scratch::new(&format!("exportdir-{tag}"));
        let base = scratch.0.clone();
        std::fs::create_dir_all(base.join("export/sub")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        let dir = ExportDir::new(base.join("export")).unwrap();
        (scratch, dir)
    }

    #[test]
    fn files_are_created_under_the_root_with_their_directories() {
        let (_s, dir) = scratch("ok");
        for name in ["r.txt", "/r.txt", "file:///r.txt", "sub/../r.txt"] {
            let resolved = dir.resolve(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(resolved.name, "r.txt", "{name}");
            assert_eq!(resolved.path, dir.root().join("r.txt"), "{name}");
        }
        let (resolved, file) = dir.create("new/deeper/report.txt").expect("create");
        drop(file);
        assert_eq!(resolved.name, "new/deeper/report.txt");
        assert!(dir.root().join("new/deeper/report.txt").is_file());
        std::fs::write(dir.root().join("sub/old.txt"), "old").unwrap();
        let (_, mut file) = dir.create("sub/old.txt").expect("truncate");
        std::io::Write::write_all(&mut file, b"new").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.root().join("sub/old.txt")).unwrap(),
            "new"
        );
    }

    #[test]
    fn escapes_are_refused_without_naming_server_paths() {
        let (s, dir) = scratch("escape");
        symlink(s.0.join("outside"), dir.root().join("out")).unwrap();
        symlink(s.0.join("outside/x.txt"), dir.root().join("link.txt")).unwrap();
        let refused = [
            ("../x.txt", "leaves the export directory"),
            ("sub/../../x.txt", "leaves the export directory"),
            ("%2e%2e/x.txt", "leaves the export directory"),
            ("out/x.txt", "symbolic link out of the export directory"),
            ("link.txt", "is a symbolic link"),
            ("sub", "is a directory"),
            ("/", "export directory itself"),
            ("http://h/x.txt", "only file: URLs are written"),
        ];
        let root = s.0.display().to_string();
        for (name, expected) in refused {
            let text = dir.create(name).expect_err(name).to_string();
            assert!(text.contains(expected), "{name}: {text}");
            assert!(!text.contains(&root), "{name} leaks a server path: {text}");
        }
        assert!(
            !s.0.join("outside/x.txt").exists(),
            "nothing written outside"
        );
    }
}
