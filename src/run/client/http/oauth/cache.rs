//! The token cache of `mcpspec auth login`: one entry per server (its canonical URI, the
//! `resource` its tokens are for), in `tokens.json` of the user's config folder
//! (`$MCPSPEC_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mcpspec`, else `~/.config/mcpspec`,
//! else `%APPDATA%\mcpspec`). The file is the user's alone (mode 0600, its folder 0700);
//! every change is read-modify-write under a file lock and lands by one rename of a
//! complete temporary file, so a second run writing at the same time never tears it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::run::packs::cache::FileLock;

/// A signed-in server: its tokens and where they came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The server's canonical URI (the key; the `resource` of its tokens, RFC 8707).
    pub resource: String,
    /// The authorization server that issued the tokens.
    pub issuer: String,
    pub client_id: String,
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Unix seconds after which the access token is not sent; `None`: until refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    entries: Vec<Entry>,
}

/// The folder of the cache (see the module doc).
pub fn dir() -> Result<PathBuf, String> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("MCPSPEC_CONFIG_DIR") {
        Ok(PathBuf::from(dir))
    } else if let Some(dir) = var("XDG_CONFIG_HOME") {
        Ok(PathBuf::from(dir).join("mcpspec"))
    } else if let Some(home) = var("HOME") {
        Ok(PathBuf::from(home).join(".config").join("mcpspec"))
    } else if let Some(appdata) = var("APPDATA") {
        Ok(PathBuf::from(appdata).join("mcpspec"))
    } else {
        Err("no config folder: set MCPSPEC_CONFIG_DIR (or XDG_CONFIG_HOME, HOME or APPDATA)".into())
    }
}

/// The cache file.
pub fn path() -> Result<PathBuf, String> {
    Ok(dir()?.join("tokens.json"))
}

/// Now, in Unix seconds.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Every entry (none when there is no cache yet).
pub fn list() -> Result<Vec<Entry>, String> {
    Ok(read(&path()?)?.entries)
}

/// The cache held by this process until dropped: a run renewing its cached sign-in holds
/// it from reading the entry's refresh token to writing the new tokens, so a second run
/// renewing at the same time waits, then renews with the refresh token the first one got
/// (an authorization server that rotates them refuses the used one).
pub struct Locked {
    _lock: FileLock,
}

/// Take the cache's lock (blocks while another process holds it).
pub fn locked() -> Result<Locked, String> {
    let dir = dir()?;
    create_private_dir(&dir)?;
    let lock = FileLock::acquire(&dir.join("tokens.lock"))
        .map_err(|e| format!("{}: cannot lock: {e}", dir.display()))?;
    Ok(Locked { _lock: lock })
}

impl Locked {
    /// The entry of `resource`, as the file holds it now.
    pub fn find(&self, resource: &str) -> Result<Option<Entry>, String> {
        find(resource)
    }

    /// Store `entry`, replacing the one of its server.
    pub fn save(&self, entry: Entry) -> Result<(), String> {
        self.update(|entries| {
            entries.retain(|e| !same_resource(&e.resource, &entry.resource));
            entries.push(entry);
        })
    }

    /// Read-modify-write; the file replaced by a rename.
    fn update(&self, change: impl FnOnce(&mut Vec<Entry>)) -> Result<(), String> {
        let path = path()?;
        let dir = path.parent().expect("a file in a folder");
        let mut file = read(&path)?;
        change(&mut file.entries);
        let text = serde_json::to_string_pretty(&file).expect("entries serialize");
        let temp = dir.join(format!("tokens.json.{}.tmp", std::process::id()));
        let written = (|| {
            let mut out = private_file(&temp)?;
            out.write_all(text.as_bytes())?;
            out.write_all(b"\n")?;
            out.sync_all()?;
            std::fs::rename(&temp, &path)
        })();
        written.map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            format!("{}: cannot write: {e}", path.display())
        })
    }
}

/// The entry of the server `resource` (its canonical URI), if signed in.
pub fn find(resource: &str) -> Result<Option<Entry>, String> {
    Ok(list()?
        .into_iter()
        .find(|e| same_resource(&e.resource, resource)))
}

/// Store `entry`, replacing the one of its server.
pub fn save(entry: Entry) -> Result<(), String> {
    locked()?.save(entry)
}

/// Remove the entry of `resource`, or all of them when `None`: the entries removed.
pub fn remove(resource: Option<&str>) -> Result<Vec<Entry>, String> {
    let mut removed = Vec::new();
    locked()?.update(|entries| {
        let (gone, kept) = std::mem::take(entries)
            .into_iter()
            .partition(|e| resource.is_none_or(|r| same_resource(&e.resource, r)));
        *entries = kept;
        removed = gone;
    })?;
    Ok(removed)
}

fn same_resource(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

fn read(path: &Path) -> Result<File, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: not a token cache ({e}); `mcpspec auth logout` removes it",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn create_private_dir(dir: &Path) -> Result<(), String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("{}: cannot create: {e}", dir.display()))
}

/// A new file only its owner can read (0600 from its creation, not chmod-ed after).
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}
