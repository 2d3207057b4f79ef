//! The per-user cache of fetched packs. A pack lives in `packs/<digest>/`, keyed by the
//! SHA-256 of its content ([`tree_digest`]), so an entry that was corrupted or tampered
//! with is noticed before it runs. Entries are unpacked into a private scratch folder and
//! installed by one atomic rename: concurrent runs (`--jobs`, CI shards sharing a cache)
//! see a whole entry or none. Git mirrors (`git/<hash>/`) are shared under a file lock.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// The cache root: `$MCPSPEC_CACHE_DIR`, else `$XDG_CACHE_HOME/mcpspec`, else
/// `~/.cache/mcpspec`, else `%LOCALAPPDATA%\mcpspec\cache` (Windows sets no `HOME`).
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

/// What the cache holds for a digest.
pub enum Lookup {
    Missing,
    Found(PathBuf),
    /// The folder's content no longer has the digest it is stored under.
    Corrupt(PathBuf),
}

impl Cache {
    pub fn locate() -> Result<Cache, String> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let root = if let Some(dir) = var("MCPSPEC_CACHE_DIR") {
            PathBuf::from(dir)
        } else if let Some(dir) = var("XDG_CACHE_HOME") {
            PathBuf::from(dir).join("mcpspec")
        } else if let Some(home) = var("HOME") {
            PathBuf::from(home).join(".cache").join("mcpspec")
        } else if let Some(local) = var("LOCALAPPDATA") {
            PathBuf::from(local).join("mcpspec").join("cache")
        } else {
            return Err(
                "no cache folder: set MCPSPEC_CACHE_DIR (or XDG_CACHE_HOME, HOME or LOCALAPPDATA)"
                    .into(),
            );
        };
        Ok(Cache { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn entry(&self, digest: &str) -> PathBuf {
        self.root.join("packs").join(digest_hex(digest))
    }

    /// The bare mirror of a git repository URL.
    pub fn git_dir(&self, url: &str) -> PathBuf {
        self.root
            .join("git")
            .join(&sha256_hex(url.as_bytes())[..32])
    }

    /// A fresh private folder to unpack into (same file system as the entries, so the
    /// final rename is atomic).
    pub fn scratch(&self) -> io::Result<PathBuf> {
        static N: AtomicU64 = AtomicU64::new(0);
        if N.load(Ordering::Relaxed) == 0 {
            self.sweep_scratch();
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = self.root.join("tmp").join(format!(
            "{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    /// Remove scratch folders a killed process left behind (older than a day, so never
    /// one a running process is still filling).
    fn sweep_scratch(&self) {
        let Ok(entries) = fs::read_dir(self.root.join("tmp")) else {
            return;
        };
        let day = std::time::Duration::from_secs(24 * 3600);
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > day));
            if old {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }

    /// The entry of `digest`, checked against its content.
    pub fn lookup(&self, digest: &str) -> Lookup {
        let dir = self.entry(digest);
        if !dir.is_dir() {
            return Lookup::Missing;
        }
        match tree_digest(&dir) {
            Ok(d) if d == digest => Lookup::Found(dir),
            _ => Lookup::Corrupt(dir),
        }
    }

    /// Move the pack folder `dir` (inside a scratch folder) into the cache as the entry of
    /// `digest`. Another process may have installed it meanwhile: then its entry is used.
    pub fn install(&self, dir: &Path, digest: &str) -> io::Result<PathBuf> {
        let entry = self.entry(digest);
        fs::create_dir_all(entry.parent().expect("entries are under packs/"))?;
        match fs::rename(dir, &entry) {
            Ok(()) => Ok(entry),
            Err(e) => match self.lookup(digest) {
                Lookup::Found(entry) => Ok(entry),
                _ => Err(e),
            },
        }
    }

    /// Remove a corrupt entry: renamed away first (atomic), so no run sees half of it.
    pub fn evict(&self, dir: &Path) {
        if let Ok(scratch) = self.scratch() {
            let aside = scratch.join("evicted");
            if fs::rename(dir, &aside).is_ok() {
                let _ = fs::remove_dir_all(&scratch);
                return;
            }
            let _ = fs::remove_dir_all(&scratch);
        }
    }
}

/// `sha256:HEX` → `HEX` (entries and lock records carry the algorithm's name).
fn digest_hex(digest: &str) -> &str {
    digest.strip_prefix("sha256:").unwrap_or(digest)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The digest of a pack folder: SHA-256 over its files (paths sorted, `/`-separated, each
/// with its length and bytes), as `sha256:HEX`. Independent of mtimes, owners and the
/// order the file system lists entries in; a symbolic link is an error (a pack is files).
pub fn tree_digest(dir: &Path) -> io::Result<String> {
    let mut files = Vec::new();
    walk(dir, "", &mut files)?;
    files.sort();
    let mut h = Sha256::new();
    h.update(b"mcpspec-tree-1\0");
    for rel in files {
        let bytes = fs::read(dir.join(&rel))?;
        h.update(rel.as_bytes());
        h.update([0]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(format!("sha256:{}", hex(&h.finalize())))
}

/// Relative paths of the regular files under `dir`.
pub fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_str().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, "a file name is not UTF-8")
        })?;
        let rel = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&entry.path(), &rel, out)?;
        } else if kind.is_file() {
            out.push(rel);
        } else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("`{rel}` is not a regular file (symbolic links are not packed)"),
            ));
        }
    }
    Ok(())
}

/// An exclusive lock on a file, held until dropped: one process at a time updates a git
/// mirror.
pub struct FileLock {
    _file: fs::File,
}

impl FileLock {
    pub fn acquire(path: &Path) -> io::Result<FileLock> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        // std's advisory lock (flock on Unix), released when the file is closed.
        file.lock()?;
        Ok(FileLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_left_by_a_killed_process_is_swept_after_a_day() {
        let root = tempfile::tempdir().unwrap();
        let cache = Cache {
            root: root.path().to_path_buf(),
        };
        let (old, fresh) = (root.path().join("tmp/old"), root.path().join("tmp/fresh"));
        fs::create_dir_all(&old).unwrap();
        fs::create_dir_all(&fresh).unwrap();
        let two_days = std::time::SystemTime::now() - std::time::Duration::from_secs(48 * 3600);
        fs::File::open(&old)
            .unwrap()
            .set_modified(two_days)
            .unwrap();
        cache.sweep_scratch();
        assert!(!old.exists());
        assert!(fresh.exists(), "a running process's scratch stays");
    }

    #[test]
    fn the_tree_digest_depends_on_content_and_names_only() {
        let a = tempfile::tempdir().unwrap();
        fs::create_dir_all(a.path().join("s")).unwrap();
        fs::write(a.path().join("pack.yaml"), "x").unwrap();
        fs::write(a.path().join("s/a.yaml"), "y").unwrap();
        let d1 = tree_digest(a.path()).unwrap();
        assert!(d1.starts_with("sha256:"));
        fs::write(a.path().join("s/a.yaml"), "z").unwrap();
        assert_ne!(tree_digest(a.path()).unwrap(), d1);
        fs::write(a.path().join("s/a.yaml"), "y").unwrap();
        assert_eq!(tree_digest(a.path()).unwrap(), d1);
        fs::rename(a.path().join("s/a.yaml"), a.path().join("s/b.yaml")).unwrap();
        assert_ne!(tree_digest(a.path()).unwrap(), d1);
    }
}
