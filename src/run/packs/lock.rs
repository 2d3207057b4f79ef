//! `mcpspec.lock`: for every remote pack, the commit or archive it resolved to, the
//! digest of its content and its version. Written by `mcpspec pack update` in a fixed
//! order and layout (the same packs give the same bytes, so it diffs well in review);
//! `run`, `validate` and `list` use exactly what it records.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::ground::load_error::LoadErrors;

/// The lock's file name, in the project root (the working directory).
pub const FILE: &str = "mcpspec.lock";
const FORMAT: u32 = 1;

/// What an import names, as the lock records it: the key an import is looked up by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    Git {
        url: String,
        rev: String,
        path: Option<String>,
    },
    Archive {
        url: String,
        sha256: String,
        path: Option<String>,
    },
}

impl Key {
    pub fn url(&self) -> &str {
        match self {
            Key::Git { url, .. } | Key::Archive { url, .. } => url,
        }
    }

    /// `git URL@REV` / `archive URL`, with ` path P`: how messages name the import.
    pub fn label(&self) -> String {
        let (base, path) = match self {
            Key::Git { url, rev, path } => (format!("git {url}@{rev}"), path),
            Key::Archive { url, path, .. } => (format!("archive {url}"), path),
        };
        match path {
            Some(p) => format!("{base} path {p}"),
            None => base,
        }
    }
}

/// One locked pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: Key,
    pub name: String,
    pub version: String,
    /// The commit a `git:` import resolved to.
    pub commit: Option<String>,
    /// `sha256:HEX`: of a `git:` pack's files ([`super::cache::tree_digest`]); of an
    /// `archive:`, its pin (the archive's bytes: what the import's `sha256:` says and
    /// `pack build` printed).
    pub digest: String,
    /// `sha256:HEX` of an archive's unpacked files: the cache folder it lives in, checked
    /// at every use (a git pack's `digest` is that already).
    pub unpacked: Option<String>,
}

impl Entry {
    /// The digest of the pack's files: the name of its cache folder.
    pub fn files_digest(&self) -> &str {
        self.unpacked.as_deref().unwrap_or(&self.digest)
    }
}

/// `sha256:HEX`: a pin as the lock's `digest:` writes it.
pub fn pin_digest(sha256: &str) -> String {
    format!("sha256:{}", sha256.to_ascii_lowercase())
}

/// The lock file's content.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    pub entries: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LockDoc {
    version: u32,
    #[serde(default)]
    packs: Vec<EntryDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryDoc {
    name: String,
    version: String,
    #[serde(default)]
    git: Option<String>,
    #[serde(default)]
    rev: Option<String>,
    #[serde(default)]
    archive: Option<String>,
    #[serde(default)]
    sha256: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    commit: Option<String>,
    digest: String,
    #[serde(default)]
    unpacked: Option<String>,
}

impl Lock {
    pub fn path() -> PathBuf {
        PathBuf::from(FILE)
    }

    /// The lock at `path`; `None` when there is none.
    pub fn read(path: &Path) -> Result<Option<Lock>, LoadErrors> {
        if !path.exists() {
            return Ok(None);
        }
        let file = crate::ground::load_error::read_source(path)?;
        let doc: LockDoc = crate::ground::yaml::parse(&file)?;
        let bad = |message: String| -> LoadErrors {
            crate::ground::load_error::LoadError::file(&file.name, message)
                .with_help(
                    "the lock is written by `mcpspec pack update`; run it to rewrite the file",
                )
                .into()
        };
        if doc.version != FORMAT {
            return Err(bad(format!(
                "lock format {} (this mcpspec reads format {FORMAT})",
                doc.version
            )));
        }
        let mut entries = Vec::new();
        for e in doc.packs {
            let key = match (e.git, e.rev, e.archive, e.sha256) {
                (Some(url), Some(rev), None, None) => Key::Git {
                    url,
                    rev,
                    path: e.path,
                },
                (None, None, Some(url), Some(sha256)) => Key::Archive {
                    url,
                    sha256,
                    path: e.path,
                },
                _ => {
                    return Err(bad(format!(
                        "the entry of `{}` records neither `git:` with `rev:` nor `archive:` with `sha256:`",
                        e.name
                    )));
                }
            };
            // An archive's `digest:` is its pin; a lock written before said the digest of
            // its unpacked files there (and had no `unpacked:`).
            let (digest, unpacked) = match (&key, e.unpacked) {
                (Key::Archive { sha256, .. }, None) if e.digest != pin_digest(sha256) => {
                    (pin_digest(sha256), Some(e.digest))
                }
                (_, unpacked) => (e.digest, unpacked),
            };
            entries.push(Entry {
                key,
                name: e.name,
                version: e.version,
                commit: e.commit,
                digest,
                unpacked,
            });
        }
        Ok(Some(Lock { entries }))
    }

    pub fn find(&self, key: &Key) -> Option<&Entry> {
        self.entries.iter().find(|e| &e.key == key)
    }

    /// The file's text: entries sorted by name then source, strings quoted (JSON strings
    /// are YAML), nothing that changes between two writes of the same packs.
    pub fn to_text(&self) -> String {
        let mut entries = self.entries.clone();
        entries.sort_by(|a, b| (&a.name, &a.key).cmp(&(&b.name, &b.key)));
        entries.dedup();
        let q = |s: &str| serde_json::to_string(s).expect("strings serialize");
        let mut out = format!(
            "# {FILE}: the exact revisions of the remote packs, written by `mcpspec pack update`.\n\
             # Commit it; do not edit it by hand.\nversion: {FORMAT}\n"
        );
        if entries.is_empty() {
            out.push_str("packs: []\n");
            return out;
        }
        out.push_str("packs:\n");
        for e in &entries {
            let _ = writeln!(out, "  - name: {}", q(&e.name));
            let _ = writeln!(out, "    version: {}", q(&e.version));
            let path = match &e.key {
                Key::Git { url, rev, path } => {
                    let _ = writeln!(out, "    git: {}", q(url));
                    let _ = writeln!(out, "    rev: {}", q(rev));
                    path
                }
                Key::Archive { url, sha256, path } => {
                    let _ = writeln!(out, "    archive: {}", q(url));
                    let _ = writeln!(out, "    sha256: {}", q(sha256));
                    path
                }
            };
            if let Some(p) = path {
                let _ = writeln!(out, "    path: {}", q(p));
            }
            if let Some(c) = &e.commit {
                let _ = writeln!(out, "    commit: {}", q(c));
            }
            let _ = writeln!(out, "    digest: {}", q(&e.digest));
            if let Some(u) = &e.unpacked {
                let _ = writeln!(out, "    unpacked: {}", q(u));
            }
        }
        out
    }

    /// Write atomically (a temporary file renamed over the lock).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::ground::files::write_whole(path, self.to_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_deterministic_and_reads_back() {
        let a = Entry {
            key: Key::Git {
                url: "file:///x/platform.git".into(),
                rev: "v1".into(),
                path: Some("packs/p".into()),
            },
            name: "platform".into(),
            version: "1.0.0".into(),
            commit: Some("abc".into()),
            digest: "sha256:00".into(),
            unpacked: None,
        };
        let b = Entry {
            key: Key::Archive {
                url: "http://127.0.0.1:1/a.tar.gz".into(),
                sha256: "ff".into(),
                path: None,
            },
            name: "auth".into(),
            version: "2.0.0".into(),
            commit: None,
            digest: "sha256:ff".into(),
            unpacked: Some("sha256:01".into()),
        };
        let one = Lock {
            entries: vec![a.clone(), b.clone()],
        };
        let two = Lock {
            entries: vec![b, a],
        };
        assert_eq!(one.to_text(), two.to_text());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        one.write(&path).unwrap();
        let back = Lock::read(&path).unwrap().unwrap();
        assert_eq!(back.to_text(), one.to_text());
        assert_eq!(back.entries.len(), 2);
        // An archive's digest is its pin; its files' digest is `unpacked:` (#38 item 16).
        let text = one.to_text();
        assert!(
            text.contains(
                "    sha256: \"ff\"\n    digest: \"sha256:ff\"\n    unpacked: \"sha256:01\"\n"
            ),
            "{text}"
        );
    }

    /// A lock written before `unpacked:` (an archive's `digest:` held its files' digest)
    /// reads as the pin and the files' digest, and is written back in today's form.
    #[test]
    fn an_older_archive_entry_reads_as_pin_and_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(
            &path,
            "version: 1\npacks:\n  - name: \"auth\"\n    version: \"2.0.0\"\n    archive: \"http://127.0.0.1:1/a.tar.gz\"\n    sha256: \"FF\"\n    digest: \"sha256:01\"\n",
        )
        .unwrap();
        let lock = Lock::read(&path).unwrap().unwrap();
        let e = &lock.entries[0];
        assert_eq!(e.digest, "sha256:ff");
        assert_eq!(e.unpacked.as_deref(), Some("sha256:01"));
        assert_eq!(e.files_digest(), "sha256:01");
    }
}
