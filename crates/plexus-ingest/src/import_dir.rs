//! The import directory: the only place a server reads files from.
//!
//! RESOLUTION
//! ==========
//! A statement names a file as a URL or a path: `'file:///people/p.csv'`, `'file:/p.csv'`,
//! `'people/p.csv'` or `'/people/p.csv'`. All of them mean a file *under the import
//! directory*, as in Neo4j: a leading `/` is the import directory's root, not the machine's.
//! Resolution is two checks, both needed:
//!
//! 1. Lexical: the URL scheme must be `file` (or absent); the path is percent-decoded, split
//!    on `/`, `.` dropped and `..` applied. A `..` that would climb above the root is refused
//!    (`'../etc/passwd'`, `'a/../../x'`); `'a/../b.csv'` is just `b.csv`.
//! 2. Physical: the joined path is canonicalized (every symbolic link followed) and must still
//!    lie under the canonical root. A link inside the import directory pointing outside it is
//!    refused; one pointing elsewhere inside is fine.
//!
//! Only then is the file opened, with `O_NOFOLLOW` on the final component so that a link
//! swapped in after the check is not followed. (An attacker who can rename directories inside
//! the import directory between check and open could still redirect an intermediate component;
//! the import directory is the operator's, and writing to it is outside a client's reach.)
//!
//! Messages name the file as the statement did and say "the import directory", never the
//! server's absolute paths: a Bolt client learns nothing about the server's file system.

use crate::error::{IngestError, IngestErrorKind, Result};
use std::fs::File;
use std::path::{Path, PathBuf};

/// A directory files may be read from; see the module docs.
#[derive(Debug, Clone)]
pub struct ImportDir {
    /// Canonical (absolute, no symbolic links).
    root: PathBuf,
}

/// A file resolved under an [`ImportDir`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedFile {
    /// The canonical path to open.
    pub path: PathBuf,
    /// The file relative to the import directory, `/`-separated: what messages show.
    pub name: String,
}

pub(crate) fn location(message: String) -> IngestError {
    IngestError::new(IngestErrorKind::Location, message)
}

impl ImportDir {
    /// The import directory at `root`, which must exist and be a directory.
    pub fn new(root: impl AsRef<Path>) -> Result<ImportDir> {
        Ok(ImportDir {
            root: canonical_dir(root.as_ref(), "import directory")?,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a statement's file name (see the module docs); the file must exist and be a
    /// regular file.
    pub fn resolve(&self, name: &str) -> Result<ResolvedFile> {
        let parts = file_parts(name, "import directory", "read")?;
        let relative = parts.join("/");
        let joined = parts.iter().fold(self.root.clone(), |p, part| p.join(part));
        let canonical = joined.canonicalize().map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::NotFound {
                "no such file".to_string()
            } else {
                e.to_string()
            };
            IngestError::new(
                IngestErrorKind::Io,
                format!("{what} in the import directory"),
            )
            .in_file(&relative)
        })?;
        if !canonical.starts_with(&self.root) {
            return Err(location(format!(
                "'{name}' resolves through a symbolic link to a file outside the import \
                 directory; files are read only from the import directory"
            )));
        }
        if !canonical.is_file() {
            return Err(location(format!("'{name}' is not a regular file")));
        }
        Ok(ResolvedFile {
            path: canonical,
            name: relative,
        })
    }

    /// Resolves `name` and opens it for reading (the final component not followed if it has
    /// become a symbolic link since the check).
    pub fn open(&self, name: &str) -> Result<(ResolvedFile, File)> {
        use std::os::unix::fs::OpenOptionsExt;
        let resolved = self.resolve(name)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&resolved.path)
            .map_err(|e| {
                IngestError::new(IngestErrorKind::Io, format!("cannot open: {e}"))
                    .in_file(&resolved.name)
            })?;
        Ok((resolved, file))
    }
}

/// `root` canonicalized (absolute, no symbolic links); it must exist and be a directory.
/// `what` names it in messages ("import directory").
pub(crate) fn canonical_dir(root: &Path, what: &str) -> Result<PathBuf> {
    let canonical = root.canonicalize().map_err(|e| {
        IngestError::new(
            IngestErrorKind::Io,
            format!("{what} {}: {e}", root.display()),
        )
    })?;
    if !canonical.is_dir() {
        return Err(location(format!(
            "{what} {} is not a directory",
            root.display()
        )));
    }
    Ok(canonical)
}

/// A statement's file name as path components under a directory (the lexical check of the
/// module docs): `dir` names the directory in messages ("import directory"), `verb` what
/// is done with its files ("read").
pub(crate) fn file_parts(name: &str, dir: &str, verb: &str) -> Result<Vec<String>> {
    let path = strip_file_url(name, dir, verb)?;
    let decoded = percent_decode(&path).ok_or_else(|| {
        location(format!(
            "'{name}': invalid percent-encoding in the file name"
        ))
    })?;
    if decoded.contains('\0') {
        return Err(location(format!(
            "'{name}': a file name cannot contain NUL"
        )));
    }
    let mut parts: Vec<String> = Vec::new();
    for part in decoded.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(location(format!(
                        "'{name}' leaves the {dir} (through '..'); files are {verb} only \
                         in the {dir}"
                    )));
                }
            }
            part => parts.push(part.to_owned()),
        }
    }
    if parts.is_empty() {
        return Err(location(format!(
            "'{name}' names the {dir} itself, not a file"
        )));
    }
    Ok(parts)
}

/// The path part of a `file:` URL, or the name itself when it has no scheme.
fn strip_file_url(name: &str, dir: &str, verb: &str) -> Result<String> {
    let scheme_end = name.find(':').filter(|&i| {
        i > 1 // a one-letter "scheme" would be a drive letter; there are none here, refuse below
            && name[..i]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
            && name.as_bytes()[0].is_ascii_alphabetic()
    });
    let Some(end) = scheme_end else {
        return Ok(name.to_string());
    };
    let scheme = &name[..end];
    if !scheme.eq_ignore_ascii_case("file") {
        return Err(location(format!(
            "'{name}': only file: URLs are {verb} ({scheme}: is not); files are {verb} only \
             in the {dir}"
        )));
    }
    let rest = &name[end + 1..];
    match rest.strip_prefix("//") {
        Some(after) => {
            let (host, path) = after.split_at(after.find('/').unwrap_or(after.len()));
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return Err(location(format!(
                    "'{name}': a file URL names no host other than localhost (got '{host}')"
                )));
            }
            Ok(path.to_string())
        }
        None => Ok(rest.to_string()),
    }
}

/// Decodes `%XX` escapes; `None` on a malformed escape or a result that is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;
    use std::os::unix::fs::symlink;

    /// `<tmp>/import` holding `a.csv` and `sub/b.csv`, and `<tmp>/secret.txt` outside it.
    fn scratch(tag: &str) -> (Scratch, ImportDir) {
        let scratch = Scratch::new(&format!("importdir-{tag}"));
        let base = scratch.0.clone();
        std::fs::create_dir_all(base.join("import/sub")).unwrap();
        std::fs::write(base.join("import/a.csv"), "x\n").unwrap();
        std::fs::write(base.join("import/sub/b.csv"), "y\n").unwrap();
        std::fs::write(base.join("secret.txt"), "no\n").unwrap();
        let dir = ImportDir::new(base.join("import")).unwrap();
        (scratch, dir)
    }

    #[test]
    fn urls_and_paths_resolve_under_the_root() {
        let (_s, dir) = scratch("ok");
        for name in [
            "a.csv",
            "/a.csv",
            "file:///a.csv",
            "file:/a.csv",
            "file://localhost/a.csv",
            "FILE:///a.csv",
            "./a.csv",
            "sub/../a.csv",
            "file:///%61.csv",
        ] {
            let resolved = dir.resolve(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(resolved.name, "a.csv", "{name}");
            assert_eq!(resolved.path, dir.root().join("a.csv"), "{name}");
        }
        assert_eq!(dir.resolve("file:///sub/b.csv").unwrap().name, "sub/b.csv");
    }

    #[test]
    fn escapes_and_other_schemes_are_refused_without_naming_server_paths() {
        let (s, dir) = scratch("escape");
        symlink(s.0.join("secret.txt"), dir.root().join("link.txt")).unwrap();
        symlink(s.0.clone(), dir.root().join("up")).unwrap();
        symlink(dir.root().join("sub/b.csv"), dir.root().join("inside.csv")).unwrap();
        let refused = [
            ("../secret.txt", "leaves the import directory"),
            ("file:///../secret.txt", "leaves the import directory"),
            ("sub/../../secret.txt", "leaves the import directory"),
            ("%2e%2e/secret.txt", "leaves the import directory"),
            ("link.txt", "symbolic link"),
            ("up/secret.txt", "symbolic link"),
            ("http://example.invalid/x.csv", "only file: URLs"),
            ("https://x/y.csv", "only file: URLs"),
            ("file://otherhost/a.csv", "no host other than localhost"),
            ("/", "import directory itself"),
            ("sub", "not a regular file"),
            ("nope.csv", "no such file"),
            ("a%zz.csv", "percent-encoding"),
        ];
        let root = s.0.display().to_string();
        for (name, expected) in refused {
            let err = dir.resolve(name).expect_err(name);
            let text = err.to_string();
            assert!(text.contains(expected), "{name}: {text}");
            assert!(!text.contains(&root), "{name} leaks a server path: {text}");
        }
        assert_eq!(dir.resolve("inside.csv").unwrap().name, "inside.csv");
        let (_, mut file) = dir.open("inside.csv").unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).unwrap();
        assert_eq!(text, "y\n");
    }
}
