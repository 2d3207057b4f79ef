//! `mcpspec.lock`: for every remote pack, the commit or archive it resolved to, the
//! digest of its content and its version. Written by `mcpspec pack update` in a fixed
//! order and layout (the same packs give the same bytes, so it diffs well in review);
//! `run`, `validate` and `list` use exactly what it records.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::language::dsl::LoadErrors;

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
    /// `sha256:HEX` of the pack's files ([`super::cache::tree_digest`]): its cache key.
    pub digest: String,
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
        let file = crate::language::dsl::error::read_source(path)?;
        let doc: LockDoc = crate::language::dsl::load::parse_yaml(&file)?;
        let bad = |message: String| -> LoadErrors {
            crate::language::dsl::LoadError::file(&file.name, message)
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
            entries.push(Entry {
                key,
                name: e.name,
                version: e.version,
                commit: e.commit,
                digest: e.digest,
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
        }
        out
    }

    /// Write atomically (a temporary file renamed over the lock).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension(format!("lock.{}.tmp", std::process::id()));
        std::fs::write(&tmp, self.to_text())?;
        std::fs::rename(&tmp, path)
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
            digest: "sha256:01".into(),
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
    }
}
