//! Remote packs: `git:` and `archive:` imports made local. The dsl resolves imports and
//! asks [`Sources`] (its [`RemoteImports`]) for a folder; this module pins what it hands
//! out with `mcpspec.lock` ([`lock`]), keeps fetched packs in a per-user cache keyed by
//! their digest ([`cache`]), and fetches through `git` ([`git`]) or HTTP ([`archive`]).
//!
//! Two modes: [`Mode::Locked`] (`run`, `validate`, `list`) hands out exactly the locked
//! revisions and fails, naming `mcpspec pack update`, when an import is not locked;
//! [`Mode::Update`] (`mcpspec pack update [NAME]`) resolves tags and branches afresh and
//! records the new lock.

pub mod archive;
pub mod build;
pub mod cache;
mod fetching;
pub mod git;
pub mod lock;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::ground::load_error::LoadError;
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml::value::At;
use crate::language::dsl::discover::MANIFEST;
use crate::language::dsl::document::{ImportDoc, PackDoc};
use crate::language::dsl::params::{Fetched, RemoteImports};
use cache::Cache;
use lock::{Entry, Key, Lock};

/// How imports are resolved.
#[derive(Debug, Clone)]
pub enum Mode {
    /// Exactly the revisions in the lock.
    Locked,
    /// Resolve afresh: every remote pack, or only the one named (the others stay locked).
    Update { only: Option<String> },
}

/// The remote-import resolver of one command.
#[derive(Debug)]
pub struct Sources {
    cache: Result<Cache, String>,
    offline: bool,
    mode: Mode,
    lock: Option<Lock>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Entries handed out (the new lock, in update mode).
    used: Vec<Entry>,
    /// URLs that could not be reached (exit 4).
    unreachable: BTreeSet<String>,
    /// `pack update NAME`: whether an import of NAME was seen.
    matched: bool,
    /// Imports already made local by this command (a pack imported twice is fetched and
    /// checked once).
    done: std::collections::HashMap<Key, PathBuf>,
    /// Cache folder (canonical) → the locked entry it holds and the token of its import:
    /// where it came from (for `list`), and where its relative imports are looked up.
    local: std::collections::HashMap<PathBuf, (Entry, Option<Token>)>,
}

impl Sources {
    /// The resolver for a command run in the project root (where `mcpspec.lock` is).
    pub fn new(
        mode: Mode,
        offline: bool,
    ) -> Result<Arc<Sources>, crate::ground::load_error::LoadErrors> {
        let lock = Lock::read(&Lock::path())?;
        Ok(Arc::new(Sources {
            cache: Cache::locate(),
            offline,
            mode,
            lock,
            state: Mutex::new(State::default()),
        }))
    }

    /// The URLs that could not be reached: the command exits 4 when there are any.
    pub fn unreachable(&self) -> Vec<String> {
        self.state().unreachable.iter().cloned().collect()
    }

    /// The lock of the packs handed out (update mode).
    pub fn new_lock(&self) -> Lock {
        Lock {
            entries: self.state().used.clone(),
        }
    }

    /// The lock read at the start (none when there is no file).
    pub fn old_lock(&self) -> Option<&Lock> {
        self.lock.as_ref()
    }

    /// `pack update NAME`: whether some import named NAME.
    pub fn matched(&self) -> bool {
        self.state().matched
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn cache(&self, pos: &Pos) -> Result<&Cache, LoadError> {
        self.cache
            .as_ref()
            .map_err(|e| LoadError::at(pos.clone(), e.clone()))
    }

    fn unreachable_error(&self, pos: &Pos, key: &Key, why: &str) -> LoadError {
        self.state().unreachable.insert(key.url().to_string());
        LoadError::at(pos.clone(), format!("cannot reach `{}`: {why}", key.url())).with_help(
            "check the URL and your network or credentials (`git` uses yours; `token: env:VAR` \
             sends a token); a locked pack already in the cache needs no network",
        )
    }
}

/// A pack fetched into the cache.
struct Installed {
    dir: PathBuf,
    entry: Entry,
}

/// Name and version of a fetched pack, for the lock (the resolver checks the manifest
/// fully when it loads it).
pub fn manifest_identity(dir: &Path) -> Result<(String, String), LoadError> {
    let file = crate::ground::load_error::read_source(&dir.join(MANIFEST))?;
    let doc: PackDoc = crate::ground::yaml::parse(&file).map_err(|mut e| e.0.remove(0))?;
    Ok((doc.name.value, doc.version.value))
}

/// `token: env:VAR`: read when a fetch needs it, never stored.
#[derive(Debug, Clone)]
struct Token {
    var: String,
    pos: Pos,
}

impl Token {
    fn value(&self) -> Result<String, LoadError> {
        match std::env::var(&self.var) {
            Ok(value) if !value.is_empty() => {
                crate::ground::redact::remember(std::slice::from_ref(&value));
                Ok(value)
            }
            _ => Err(LoadError::at(
                self.pos.clone(),
                format!("environment variable `{}` is not set", self.var),
            )
            .with_help("set it to the token for this repository or archive")),
        }
    }
}

/// The import's key, token and positions.
struct Import {
    key: Key,
    token: Option<Token>,
    pos: Pos,
    more: Places,
}

/// Where an import's `rev:`, `path:` and `sha256:` are, for errors about them.
#[derive(Default)]
struct Places {
    rev: Option<Pos>,
    path: Option<Pos>,
    sha: Option<Pos>,
}

fn import_of(file: &Arc<SourceFile>, doc: &ImportDoc) -> Result<Import, LoadError> {
    let at = |a: &At<String>| Pos::new(file, a.line, a.col);
    let v = |a: &Option<At<String>>| a.as_ref().map(|a| a.value.clone());
    let path = v(&doc.path).map(|p| p.trim_end_matches('/').to_string());
    let (key, pos) = match (&doc.git, &doc.archive) {
        (Some(url), _) => (
            Key::Git {
                url: url.value.clone(),
                rev: v(&doc.rev).unwrap_or_default(),
                path,
            },
            at(url),
        ),
        (None, Some(url)) => (
            Key::Archive {
                url: url.value.clone(),
                sha256: v(&doc.sha256).unwrap_or_default().to_ascii_lowercase(),
                path,
            },
            at(url),
        ),
        (None, None) => unreachable!("the dsl hands over remote imports only"),
    };
    let token = doc.token.as_ref().map(|t| Token {
        var: t.value.trim_start_matches("env:").to_string(),
        pos: at(t),
    });
    Ok(Import {
        key,
        token,
        pos,
        more: Places {
            rev: doc.rev.as_ref().map(at),
            path: doc.path.as_ref().map(at),
            sha: doc.sha256.as_ref().map(at),
        },
    })
}

/// How `mcpspec list` shows where a remote pack came from.
fn origin(entry: &Entry) -> String {
    match (&entry.key, &entry.commit) {
        (Key::Git { .. }, Some(c)) => {
            format!("{} (commit {})", entry.key.label(), short_commit(c))
        }
        _ => format!("{} ({})", entry.key.label(), entry.digest),
    }
}

/// A commit as shown: its first 12 characters. Characters, not bytes: the lockfile is
/// text anyone may edit, and a byte index can fall inside a character.
pub fn short_commit(commit: &str) -> String {
    commit.chars().take(12).collect()
}

/// The key of the pack at `rel` beside the remote pack of `entry`: the same repository and
/// revision (or archive), another folder; or why there is none.
fn sibling_key(entry: &Entry, rel: &str) -> Result<Key, String> {
    // `Some(None)`: the root of the repository or archive.
    let inside = |path: &Option<String>| {
        crate::language::dsl::pack::join_inside(path.as_deref().unwrap_or(""), rel)
            .map(|p| (!p.is_empty()).then_some(p))
    };
    match &entry.key {
        Key::Git { url, rev, path } => match inside(path) {
            Some(path) => Ok(Key::Git {
                url: url.clone(),
                rev: rev.clone(),
                path,
            }),
            None => Err(format!("it leads outside the repository `{url}`")),
        },
        // Without `path:` the pack is the whole archive (at its root or in its one top
        // folder): nothing lies beside it.
        Key::Archive { url, sha256, path } => match path.as_ref().and(inside(path)) {
            Some(path) => Ok(Key::Archive {
                url: url.clone(),
                sha256: sha256.clone(),
                path,
            }),
            None => Err(format!(
                "it leads outside the archive `{url}`{}",
                if path.is_some() {
                    ""
                } else {
                    ", which holds this pack only"
                }
            )),
        },
    }
}

impl Sources {
    /// Make `import` local: from the lock (and the cache), or resolved afresh in update
    /// mode. `commit`: the commit a pack beside an already resolved one must come from
    /// (its importer's), whatever the lock says.
    fn make_local(&self, import: Import, commit: Option<&str>) -> Result<Fetched, LoadError> {
        if let Some(dir) = self.state().done.get(&import.key) {
            return Ok(Fetched { dir: dir.clone() });
        }
        let token = import.token.as_ref();
        let locked = self
            .lock
            .as_ref()
            .and_then(|l| l.find(&import.key))
            .filter(|e| commit.is_none() || e.commit.as_deref() == commit)
            .cloned();
        let fresh = match (&self.mode, &locked) {
            (Mode::Locked, _) => false,
            (Mode::Update { only: None }, _) => true,
            (Mode::Update { only: Some(_) }, None) => true,
            // Beside a pack already resolved: its commit decides, the name does not.
            (Mode::Update { .. }, Some(_)) if commit.is_some() => false,
            (Mode::Update { only: Some(name) }, Some(e)) => {
                let hit = &e.name == name;
                if hit {
                    self.state().matched = true;
                }
                hit
            }
        };
        let (entry, dir) = if fresh {
            if self.offline {
                return Err(LoadError::at(
                    import.pos.clone(),
                    "`mcpspec pack update` needs the network; --offline forbids it",
                ));
            }
            let known = locked.as_ref().map(|e| e.name.as_str());
            let got =
                self.fetch_key(&import.key, commit, known, token, &import.pos, &import.more)?;
            if let Mode::Update { only: Some(name) } = &self.mode
                && &got.entry.name == name
            {
                self.state().matched = true;
            }
            (got.entry, got.dir)
        } else {
            let Some(entry) = locked else {
                let label = import.key.label();
                let message = match &self.lock {
                    None => format!("`{label}` is not locked: there is no {}", lock::FILE),
                    Some(_) => format!(
                        "`{label}` is not in {}: the imports changed since it was written",
                        lock::FILE
                    ),
                };
                return Err(LoadError::at(import.pos, message).with_help(format!(
                    "run `mcpspec pack update` to resolve the remote packs and record them in {} (commit it)",
                    lock::FILE
                )));
            };
            let dir = self.materialize(&entry, token, &import.pos, &import.more)?;
            (entry, dir)
        };
        let mut state = self.state();
        state.done.insert(entry.key.clone(), dir.clone());
        let canonical = std::fs::canonicalize(&dir).unwrap_or(dir.clone());
        state
            .local
            .insert(canonical, (entry.clone(), import.token.clone()));
        state.used.push(entry);
        Ok(Fetched { dir })
    }
}

impl RemoteImports for Sources {
    fn fetch(&self, file: &Arc<SourceFile>, doc: &ImportDoc) -> Result<Fetched, LoadError> {
        self.make_local(import_of(file, doc)?, None)
    }

    fn origin_of(&self, dir: &Path) -> Option<String> {
        let dir = std::fs::canonicalize(dir).ok()?;
        self.state().local.get(&dir).map(|(entry, _)| origin(entry))
    }

    fn shown_of(&self, dir: &Path) -> Option<String> {
        let dir = std::fs::canonicalize(dir).ok()?;
        let state = self.state();
        let (entry, _) = state.local.get(&dir)?;
        let (at, path) = match &entry.key {
            Key::Git { rev, path, .. } => (rev, path),
            Key::Archive { path, .. } => (&entry.version, path),
        };
        let path = path
            .as_deref()
            .map(|p| format!("{}/", p.trim_end_matches('/')))
            .unwrap_or_default();
        Some(format!("{}@{at} {path}", entry.name))
    }

    fn relative(
        &self,
        dir: &Path,
        file: &Arc<SourceFile>,
        target: &At<String>,
    ) -> Option<Result<Fetched, LoadError>> {
        let canonical = std::fs::canonicalize(dir).ok()?;
        let (entry, token) = self.state().local.get(&canonical).cloned()?;
        let pos = Pos::new(file, target.line, target.col);
        let key = match sibling_key(&entry, &target.value) {
            Ok(key) => key,
            Err(why) => {
                let help = match &entry.key {
                    Key::Git { .. } => {
                        "a pack fetched with `git:` imports folders of its own repository (at the same commit); import a pack of another repository with `git:`"
                    }
                    Key::Archive { .. } => {
                        "publish the imported pack too and import it with `archive:` or `git:`"
                    }
                };
                return Some(Err(LoadError::at(
                    pos,
                    format!(
                        "`pack: {}` of `{}` cannot be imported: {why}",
                        target.value,
                        entry.key.label()
                    ),
                )
                .with_help(help)));
            }
        };
        let import = Import {
            key,
            token,
            pos: pos.clone(),
            more: Places {
                path: Some(pos),
                ..Places::default()
            },
        };
        Some(self.make_local(import, entry.commit.as_deref()))
    }
}
