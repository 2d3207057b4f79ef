//! Fetching an import into the cache: through git or over HTTP, from a mirror when one has
//! it, checked against the lock.

use std::path::{Path, PathBuf};

use super::cache::{Cache, Lookup};
use super::lock::{Entry, Key};
use super::{Installed, Places, Sources, Token, manifest_identity};
use super::{archive, cache, git, lock};
use crate::ground::load_error::LoadError;
use crate::ground::source::Pos;
use crate::language::dsl::discover::MANIFEST;

impl Sources {
    /// The locked entry's folder: from the cache when it is there and intact, else
    /// fetched again (never when offline) and checked against the locked digest.
    pub(super) fn materialize(
        &self,
        entry: &Entry,
        token: Option<&Token>,
        pos: &Pos,
        more: &Places,
    ) -> Result<PathBuf, LoadError> {
        let cache = self.cache(pos)?;
        let label = entry.key.label();
        let corrupt = match cache.lookup(entry.files_digest()) {
            Lookup::Found(dir) => return Ok(dir),
            // Never run: moved away, then fetched again (or refused, below).
            Lookup::Corrupt(dir) => {
                cache.evict(&dir);
                true
            }
            Lookup::Missing => false,
        };
        // Offline, a git pack can still be exported from the cache's mirror of its
        // repository, when that has the locked commit: no network involved.
        if self.offline && !self.in_mirror(cache, entry) {
            let message = if corrupt {
                format!(
                    "the cached copy of `{label}` was corrupt (its files no longer matched {}) and --offline forbids fetching it again",
                    entry.files_digest()
                )
            } else {
                format!("`{label}` is not in the cache, and --offline forbids fetching it")
            };
            return Err(LoadError::at(pos.clone(), message).with_help(format!(
                "run once without --offline, or restore the cache folder {} (CI: cache it keyed on {})",
                cache.root().display(),
                lock::FILE
            )));
        }
        let fetched = self.fetch_key(
            &entry.key,
            entry.commit.as_deref(),
            Some(&entry.name),
            token,
            pos,
            more,
        )?;
        // An archive matched its pin already (its `digest`); its files must be those of the
        // lock's `unpacked:` too, when the lock records it.
        let (now, recorded) = match &entry.unpacked {
            Some(files) => (fetched.entry.files_digest(), files.as_str()),
            None => (fetched.entry.digest.as_str(), entry.digest.as_str()),
        };
        if now != recorded {
            return Err(LoadError::at(
                pos.clone(),
                format!(
                    "digest mismatch: `{label}` now has the digest {now}, {} records {recorded}",
                    lock::FILE,
                ),
            )
            .with_help(
                "the source changed under the same revision; check it, then `mcpspec pack update` records it",
            ));
        }
        Ok(fetched.dir)
    }

    /// Whether the cache's git mirror holds the locked commit (offline use).
    fn in_mirror(&self, cache: &Cache, entry: &Entry) -> bool {
        let (Key::Git { url, .. }, Some(commit)) = (&entry.key, &entry.commit) else {
            return false;
        };
        cache.git_dir(url).join("HEAD").is_file()
            && git::Mirror::open(cache, url, None).is_ok_and(|m| m.commit_of(commit).is_some())
    }

    /// Fetch what `key` names (at `commit` when locked, else its `rev`) into the cache;
    /// `name`: the pack's name when the lock knows it (for messages).
    pub(super) fn fetch_key(
        &self,
        key: &Key,
        commit: Option<&str>,
        name: Option<&str>,
        token: Option<&Token>,
        pos: &Pos,
        more: &Places,
    ) -> Result<Installed, LoadError> {
        let cache = self.cache(pos)?;
        // Read only when fetching: a run from the cache needs no token.
        let token = match token {
            Some(t) if !self.offline => Some(t.value()?),
            _ => None,
        };
        let token = token.as_deref();
        let scratch = cache
            .scratch()
            .map_err(|e| LoadError::at(pos.clone(), format!("cannot write the cache: {e}")))?;
        let result = self.fetch_into(cache, &scratch, key, commit, name, token, pos, more);
        let _ = std::fs::remove_dir_all(&scratch);
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn fetch_into(
        &self,
        cache: &Cache,
        scratch: &Path,
        key: &Key,
        commit: Option<&str>,
        name: Option<&str>,
        token: Option<&str>,
        pos: &Pos,
        more: &Places,
    ) -> Result<Installed, LoadError> {
        let label = key.label();
        let at = |m: String| LoadError::at(pos.clone(), m);
        let (dir, commit) = match key {
            Key::Git { url, rev, path } => {
                let mirror = git::Mirror::open(cache, url, token.map(str::to_string))
                    .map_err(|e| at(format!("`{label}`: {e}")))?;
                let wanted = match commit {
                    Some(c) => mirror.commit_of(c).map_or_else(
                        || {
                            mirror
                                .fetch()
                                .map_err(|e| self.unreachable_error(pos, key, &e))?;
                            mirror.commit_of(c).ok_or_else(|| {
                                at(format!("commit {c} of `{label}` is no longer in the repository"))
                                    .with_help(format!(
                                        "{} pins a commit that was removed; `mcpspec pack update` resolves `{rev}` again",
                                        lock::FILE
                                    ))
                            })
                        },
                        Ok,
                    )?,
                    None => {
                        mirror
                            .fetch()
                            .map_err(|e| self.unreachable_error(pos, key, &e))?;
                        mirror.commit_of(rev).ok_or_else(|| {
                            let p = more.rev.clone().unwrap_or_else(|| pos.clone());
                            LoadError::at(p, format!("no revision `{rev}` in `{url}`"))
                                .with_help("`rev:` names a tag, a branch or a commit of the repository")
                        })?
                    }
                };
                mirror
                    .export(&wanted, path.as_deref(), scratch)
                    .map_err(|e| match path {
                        Some(p) => LoadError::at(
                            more.path.clone().unwrap_or_else(|| pos.clone()),
                            format!("no folder `{p}` in `{url}` at {rev}: {e}"),
                        ),
                        None => at(format!("cannot export `{label}`: {e}")),
                    })?;
                (scratch.join("tree"), Some(wanted))
            }
            Key::Archive { url, sha256, path } => {
                let bytes = archive::download(url, token).map_err(|e| match e {
                    archive::DownloadError::Unreachable(why) => {
                        self.unreachable_error(pos, key, &why)
                    }
                    archive::DownloadError::Refused(why) => {
                        at(format!("cannot download `{url}`: {why}"))
                    }
                })?;
                let got = cache::sha256_hex(&bytes);
                let root = scratch.join("tree");
                if !got.eq_ignore_ascii_case(sha256) {
                    // Named by the lock, else by the manifest the archive holds (read, never
                    // used), else by its URL.
                    let pack = name.map(str::to_string).or_else(|| {
                        archive::unpack(&bytes, &root).ok()?;
                        let dir = archive::pack_root(&root, path.as_deref()).ok()?;
                        manifest_identity(&dir).ok().map(|(name, _)| name)
                    });
                    let pack = match pack {
                        Some(name) => format!("pack `{name}` (`{url}`)"),
                        None => format!("the pack at `{url}`"),
                    };
                    let p = more.sha.clone().unwrap_or_else(|| pos.clone());
                    return Err(LoadError::at(
                        p,
                        format!(
                            "digest mismatch: {pack} is pinned to sha256 {sha256}, the archive has sha256 {got}"
                        ),
                    )
                    .with_help("the archive changed or the `sha256:` is wrong; a pinned archive is never used with another digest"));
                }
                archive::unpack(&bytes, &root)
                    .map_err(|e| at(format!("cannot unpack `{url}`: {e}")))?;
                let dir = archive::pack_root(&root, path.as_deref())
                    .map_err(|e| at(format!("`{url}`: {e}")))?;
                (dir, None)
            }
        };
        if !dir.join(MANIFEST).is_file() {
            return Err(at(format!("`{label}` holds no {MANIFEST}"))
                .with_help("name the pack's folder inside the repository with `path:`"));
        }
        let files = cache::tree_digest(&dir).map_err(|e| at(format!("`{label}`: {e}")))?;
        let (name, version) = manifest_identity(&dir)?;
        let installed = cache
            .install(&dir, &files)
            .map_err(|e| at(format!("cannot write the cache: {e}")))?;
        // An archive is recorded by its pin, a git pack by its files.
        let (digest, unpacked) = match key {
            Key::Archive { sha256, .. } => (lock::pin_digest(sha256), Some(files)),
            Key::Git { .. } => (files, None),
        };
        Ok(Installed {
            dir: installed,
            entry: Entry {
                key: key.clone(),
                name,
                version,
                commit,
                digest,
                unpacked,
            },
        })
    }
}
