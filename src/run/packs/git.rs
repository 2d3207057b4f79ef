//! `git:` imports, through the `git` command: it already knows the user's credentials
//! (SSH agent, credential helpers), which is how private repositories work without
//! mcpspec storing anything. Each repository URL has one bare mirror in the cache,
//! updated under a file lock; a pack is exported from a commit with `git archive`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;

use super::cache::{Cache, FileLock};

/// A git command that takes longer is stopped (a hung network, a stuck credential helper).
const GIT_TIMEOUT: Duration = Duration::from_secs(600);

/// The cache's bare mirror of one repository, locked while this value lives.
pub struct Mirror {
    dir: PathBuf,
    url: String,
    /// A token for HTTPS (`token: env:VAR`): sent as an `http.extraHeader` given through
    /// the environment of the git process, never its command line or a file.
    token: Option<String>,
    _lock: FileLock,
}

impl Mirror {
    pub fn open(cache: &Cache, url: &str, token: Option<String>) -> Result<Mirror, String> {
        let dir = cache.git_dir(url);
        let lock = FileLock::acquire(&dir.with_extension("lock"))
            .map_err(|e| format!("cannot lock the cache's git mirror: {e}"))?;
        if !dir.join("HEAD").is_file() {
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let m = Mirror {
                dir: dir.clone(),
                url: url.to_string(),
                token: None,
                _lock: lock,
            };
            m.git(&["init", "--quiet", "--bare"])?;
            return Ok(Mirror { token, ..m });
        }
        Ok(Mirror {
            dir,
            url: url.to_string(),
            token,
            _lock: lock,
        })
    }

    /// Fetch every branch and tag (tags forced: a tag that moved upstream moves here, and
    /// only the lock keeps a run on the old commit). An error is the URL being unreachable.
    pub fn fetch(&self) -> Result<(), String> {
        self.git(&[
            "fetch",
            "--quiet",
            "--force",
            "--prune",
            "--no-tags",
            "--",
            &self.url,
            "+refs/heads/*:refs/heads/*",
            "+refs/tags/*:refs/tags/*",
        ])
        .map(|_| ())
    }

    /// The commit a tag, branch or commit id names, if the mirror has it.
    pub fn commit_of(&self, rev: &str) -> Option<String> {
        let candidates = [
            format!("refs/tags/{rev}^{{commit}}"),
            format!("refs/heads/{rev}^{{commit}}"),
            format!("{rev}^{{commit}}"),
        ];
        // A bare `rev` is taken as a commit id only (not `HEAD~1` or other expressions).
        let is_hex = rev.len() >= 7 && rev.bytes().all(|b| b.is_ascii_hexdigit());
        candidates
            .iter()
            .take(if is_hex { 3 } else { 2 })
            .find_map(|c| {
                let out = self.git(&["rev-parse", "--verify", "--quiet", c]).ok()?;
                Some(out.trim().to_string()).filter(|s| !s.is_empty())
            })
    }

    /// Write the tree of `commit` (or of its folder `path`) as files under `into`.
    pub fn export(&self, commit: &str, path: Option<&str>, into: &Path) -> Result<(), String> {
        let tree = match path {
            Some(p) => format!("{commit}:{}", p.trim_end_matches('/')),
            None => commit.to_string(),
        };
        let tar = into.join("export.tar");
        let out = format!("--output={}", tar.display());
        self.git(&["archive", "--format=tar", &out, &tree])?;
        let file = std::fs::File::open(&tar).map_err(|e| e.to_string())?;
        let unpacked = into.join("tree");
        std::fs::create_dir_all(&unpacked).map_err(|e| e.to_string())?;
        let result = super::archive::untar(file, &unpacked);
        let _ = std::fs::remove_file(&tar);
        result
    }

    /// Run git on the mirror: stdout, or stderr's last lines as the error (the token,
    /// should git ever echo it, redacted).
    fn git(&self, args: &[&str]) -> Result<String, String> {
        let mut cmd = Command::new("git");
        cmd.arg("--git-dir")
            .arg(&self.dir)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Never wait for a password on the terminal: fail, and say so.
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GCM_INTERACTIVE", "never");
        if let Some(token) = &self.token {
            cmd.env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "http.extraHeader")
                .env(
                    "GIT_CONFIG_VALUE_0",
                    format!("Authorization: Basic {}", basic_auth(token)),
                );
        }
        let (ok, stdout, stderr) =
            run(cmd, GIT_TIMEOUT).map_err(|e| format!("cannot run git: {e}"))?;
        if ok {
            return Ok(stdout);
        }
        let mut text = stderr.trim().to_string();
        if let Some(t) = &self.token {
            text = text
                .replace(t.as_str(), "***")
                .replace(&basic_auth(t), "***");
        }
        Err(if text.is_empty() {
            format!("git {} failed", args[0])
        } else {
            text
        })
    }
}

/// HTTP Basic credentials for a token, as GitHub and GitLab accept it.
fn basic_auth(token: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{token}"))
}

/// Run a command with a deadline: (success, stdout, stderr). Killed when the time is up.
fn run(mut cmd: Command, timeout: Duration) -> std::io::Result<(bool, String, String)> {
    let mut child = cmd.spawn()?;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = reader.join().unwrap_or_default();
    let mut stderr = err_reader.join().unwrap_or_default();
    if status.is_none() {
        stderr = format!(
            "git took longer than {}s and was stopped",
            timeout.as_secs()
        );
    }
    Ok((status.is_some_and(|s| s.success()), stdout, stderr))
}
