//! Remote packs (#15) offline: a local bare git repository (`file://`) and a tiny HTTP
//! server on 127.0.0.1 serving archives stand in for the network. End to end: a product
//! pack imports a platform pack by git tag, `mcpspec.lock` pins it, the platform moves its
//! tag, and `run` keeps the locked commit until `mcpspec pack update`. Then the cache
//! (offline, tampering, concurrency), archives, `pack build`, `list`, and the bad inputs
//! (a table of cases below).
// Unix only: a fake `git` shell script on PATH.
#![cfg(unix)]

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{Run, read_json, run_in, stdio_target};

/// Write files under `dir`.
fn write(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

const PLATFORM_SCENARIO: &str = "scenario: platform-weather
steps:
  - name: weather STEP
    request: { method: tools/call, params: { name: get_weather, arguments: { city: \"{{ city }}\" } } }
    expect:
      - { path: \"$.structuredContent.city\", equals: \"{{ city }}\" }
";

/// A platform team's repository: `packs/platform` (version `version`, step `weather
/// STEP`), committed and tagged `tag`. Returns the working copy.
fn platform_commit(work: &Path, version: &str, step: &str, tag: &str) {
    write(
        work,
        &[
            (
                "packs/platform/pack.yaml",
                &format!(
                    "name: platform\nversion: {version}\nparameters:\n  city: {{ type: string, default: Boston }}\n"
                ),
            ),
            (
                "packs/platform/weather.yaml",
                &PLATFORM_SCENARIO.replace("STEP", step),
            ),
        ],
    );
    git(work, &["add", "-A"]);
    git(work, &["commit", "-qm", step]);
    git(work, &["tag", "-f", tag]);
}

/// Everything one test needs: a temporary root with `platform-work/` (a git working
/// copy), `platform.git` (its bare "remote"), `product/` (the project) and `cache/`.
struct World {
    root: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().join("platform-work");
        std::fs::create_dir_all(&work).unwrap();
        git(&work, &["init", "-q"]);
        platform_commit(&work, "1.0.0", "v1", "v1");
        git(
            root.path(),
            &["clone", "-q", "--bare", "platform-work", "platform.git"],
        );
        World { root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    fn git_url(&self) -> String {
        format!("file://{}", self.path("platform.git").display())
    }

    /// Move the platform's tag `v1` to a new commit (version 1.1.0, step `weather v2`).
    fn move_tag(&self) {
        let work = self.path("platform-work");
        platform_commit(&work, "1.1.0", "v2", "v1");
        git(
            &work,
            &["push", "-q", "--force", "../platform.git", "main", "v1"],
        );
    }

    /// The product pack importing `import` (YAML lines of one import, indented 4).
    fn product(&self, import: &str) -> PathBuf {
        let dir = self.path("product");
        write(
            &dir,
            &[
                (
                    "packs/product/pack.yaml",
                    &format!("name: product\nversion: 0.1.0\nimports:\n{import}"),
                ),
                (
                    "packs/product/smoke.yaml",
                    "scenario: product-smoke\nsteps:\n  - name: tools\n    request: { method: tools/list }\n",
                ),
            ],
        );
        dir
    }

    fn git_import(&self, rev: &str) -> String {
        format!(
            "  - git: {}\n    rev: {rev}\n    path: packs/platform\n    version: \"^1.0\"\n",
            self.git_url()
        )
    }

    /// mcpspec in the product folder with this world's cache.
    fn mcpspec(&self, args: &[&str]) -> Run {
        self.mcpspec_env(args, &[])
    }

    fn mcpspec_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let cache = self.path("cache");
        let mut all = vec![("MCPSPEC_CACHE_DIR", cache.to_str().unwrap())];
        all.extend_from_slice(env);
        run_in(&self.path("product"), args, &all)
    }

    /// `run` the product pack against the example server: the platform step names run.
    fn run_steps(&self, extra: &[&str]) -> (Run, Vec<String>) {
        let json = self.path("r.json");
        let _ = std::fs::remove_file(&json);
        let server = stdio_target(&[]);
        let mut args = vec!["run", "packs/product", "--stdio", &server];
        args.extend(["--json", json.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let r = self.mcpspec(&args);
        let mut names = Vec::new();
        if json.exists() {
            for suite in read_json(&json)["suites"].as_array().unwrap() {
                for step in suite["steps"].as_array().unwrap() {
                    names.push(step["name"].as_str().unwrap().to_string());
                }
            }
        }
        (r, names)
    }

    fn lock(&self) -> String {
        std::fs::read_to_string(self.path("product/mcpspec.lock")).unwrap_or_default()
    }

    fn cached_entries(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.path("cache/packs"))
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default()
    }
}

#[test]
fn the_lock_keeps_the_commit_until_pack_update() {
    let w = World::new();
    w.product(&w.git_import("v1"));

    // No lock yet: the import is refused, naming the command that fixes it.
    let r = w.mcpspec(&["validate", "packs/product"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("packs/product/pack.yaml:4:10"), "{r:?}");
    assert!(r.stderr.contains("mcpspec pack update"), "{r:?}");

    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    let lock = w.lock();
    let commit = git(&w.path("platform-work"), &["rev-parse", "v1"]);
    assert!(lock.contains(&commit), "{lock}");
    assert!(lock.contains("version: \"1.0.0\""), "{lock}");

    let (r, steps) = w.run_steps(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(steps.contains(&"weather v1".to_string()), "{steps:?}");

    // The platform moves its tag: runs keep the locked commit.
    w.move_tag();
    let (r, steps) = w.run_steps(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(steps.contains(&"weather v1".to_string()), "{steps:?}");
    assert_eq!(w.lock(), lock, "a run does not rewrite the lock");
    // Even with the cache gone: the locked commit is fetched, not the tag's new one.
    std::fs::remove_dir_all(w.path("cache")).unwrap();
    let (_, steps) = w.run_steps(&[]);
    assert!(steps.contains(&"weather v1".to_string()), "{steps:?}");

    // `pack update NAME` moves it, and says so.
    let r = w.mcpspec(&["pack", "update", "platform", "--path", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("updated 1.0.0"), "{r:?}");
    let new_commit = git(&w.path("platform-work"), &["rev-parse", "v1"]);
    assert!(w.lock().contains(&new_commit), "{}", w.lock());
    let (r, steps) = w.run_steps(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(steps.contains(&"weather v2".to_string()), "{steps:?}");

    // The lock is deterministic: updating again without changes writes the same bytes.
    let before = w.lock();
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(w.lock(), before);

    // `pack update NAME` for a pack nobody imports is an error.
    let r = w.mcpspec(&["pack", "update", "nope", "--path", "packs/product"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no remote pack named `nope`"), "{r:?}");
}

#[test]
fn a_lock_that_no_longer_matches_the_manifest_names_the_fix() {
    let w = World::new();
    w.product(&w.git_import("v1"));
    assert_eq!(
        w.mcpspec(&["pack", "update", "--path", "packs/product"])
            .code,
        0
    );
    // The manifest now asks for a branch the lock does not record.
    w.product(&w.git_import("main"));
    let r = w.mcpspec(&["validate", "packs/product"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("is not in mcpspec.lock"), "{r:?}");
    assert!(r.stderr.contains("run `mcpspec pack update`"), "{r:?}");
    assert!(r.stderr.contains("packs/product/pack.yaml:4:10"), "{r:?}");
}

#[test]
fn list_shows_where_each_pack_came_from() {
    let w = World::new();
    w.product(&w.git_import("v1"));
    assert_eq!(
        w.mcpspec(&["pack", "update", "--path", "packs/product"])
            .code,
        0
    );
    let commit = git(&w.path("platform-work"), &["rev-parse", "v1"]);
    let r = w.mcpspec(&["list", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    let from = format!(
        "from git {}@v1 path packs/platform (commit {})",
        w.git_url(),
        &commit[..12]
    );
    assert!(r.stdout.contains(&from), "{r:?}");
    let r = w.mcpspec(&["list", "--format", "json", "packs/product"]);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let origins: Vec<&serde_json::Value> = doc["packs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["origin"])
        .collect();
    assert!(
        origins.contains(&&serde_json::Value::Null),
        "local packs: {origins:?}"
    );
    assert!(
        origins
            .iter()
            .any(|o| o.as_str().is_some_and(|o| o.contains(&commit[..12]))),
        "{origins:?}"
    );
}

#[test]
fn offline_uses_the_cache_and_fails_clearly_without_it() {
    let w = World::new();
    w.product(&w.git_import("v1"));
    assert_eq!(
        w.mcpspec(&["pack", "update", "--path", "packs/product"])
            .code,
        0
    );
    // The repository is gone (no network): the cache serves the locked pack.
    std::fs::rename(w.path("platform.git"), w.path("gone.git")).unwrap();
    let r = w.mcpspec(&["validate", "--offline", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    // An empty cache, offline: a clear error, not a fetch.
    let r = w.mcpspec_env(
        &["validate", "--offline", "packs/product"],
        &[("MCPSPEC_CACHE_DIR", w.path("empty-cache").to_str().unwrap())],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("is not in the cache, and --offline forbids fetching it"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("empty-cache"),
        "names the cache folder: {r:?}"
    );
    // And online with the repository gone: unreachable, exit 4, naming the URL.
    let r = w.mcpspec_env(
        &["validate", "packs/product"],
        &[("MCPSPEC_CACHE_DIR", w.path("empty-cache").to_str().unwrap())],
    );
    assert_eq!(r.code, 4, "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("cannot reach `{}`", w.git_url())),
        "{r:?}"
    );
}

#[test]
fn a_tampered_cache_entry_is_fetched_again_or_refused() {
    let w = World::new();
    w.product(&w.git_import("v1"));
    assert_eq!(
        w.mcpspec(&["pack", "update", "--path", "packs/product"])
            .code,
        0
    );
    let tamper = |w: &World| {
        for entry in w.cached_entries() {
            let f = entry.join("weather.yaml");
            let text = std::fs::read_to_string(&f).unwrap();
            std::fs::write(&f, text.replace("weather v1", "weather EVIL")).unwrap();
        }
    };
    tamper(&w);
    // Online: the entry is fetched again; the tampered step never runs.
    let (r, steps) = w.run_steps(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(steps.contains(&"weather v1".to_string()), "{steps:?}");
    assert!(!steps.iter().any(|s| s.contains("EVIL")), "{steps:?}");
    // Offline with the git mirror gone too: refused, never run.
    tamper(&w);
    std::fs::remove_dir_all(w.path("cache/git")).unwrap();
    let (r, steps) = w.run_steps(&["--offline"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(steps.is_empty(), "{steps:?}");
    assert!(r.stderr.contains("was corrupt"), "{r:?}");
}

#[test]
fn concurrent_runs_share_one_cache() {
    let w = World::new();
    w.product(&w.git_import("v1"));
    assert_eq!(
        w.mcpspec(&["pack", "update", "--path", "packs/product"])
            .code,
        0
    );
    std::fs::remove_dir_all(w.path("cache")).unwrap();
    // Eight processes fill the empty cache at once (as CI shards sharing it would).
    let cache = w.path("cache");
    let children: Vec<_> = (0..8)
        .map(|_| {
            Command::new(common::mcpspec())
                .args(["validate", "packs/product"])
                .current_dir(w.path("product"))
                .env("MCPSPEC_CACHE_DIR", &cache)
                .env("NO_COLOR", "1")
                .output()
        })
        .collect();
    for out in children {
        let out = out.unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(w.cached_entries().len(), 1);
    // No scratch folder is left behind.
    let tmp = std::fs::read_dir(cache.join("tmp")).map_or(0, |d| d.count());
    assert_eq!(tmp, 0);
}

/// A tiny HTTP server on 127.0.0.1 serving files by path; counts requests. With `token`,
/// answers 401 unless `Authorization: Bearer TOKEN` is sent.
struct Archives {
    url: String,
    files: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    hits: Arc<AtomicUsize>,
}

impl Archives {
    fn start(token: Option<&str>) -> Archives {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let files: Arc<Mutex<HashMap<String, Vec<u8>>>> = Arc::default();
        let hits = Arc::new(AtomicUsize::new(0));
        let (f, h, token) = (files.clone(), hits.clone(), token.map(str::to_string));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                h.fetch_add(1, Ordering::SeqCst);
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let mut auth = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("authorization:") {
                        auth = Some(v.trim().to_string());
                    }
                }
                let path = first.split_whitespace().nth(1).unwrap_or("/").to_string();
                let allowed = token.as_ref().is_none_or(|t| {
                    auth.as_deref() == Some(&format!("bearer {}", t.to_ascii_lowercase()))
                });
                let body = f.lock().unwrap().get(&path).cloned();
                let (status, body) = match (allowed, body) {
                    (false, _) => ("401 Unauthorized", Vec::new()),
                    (true, Some(b)) => ("200 OK", b),
                    (true, None) => ("404 Not Found", Vec::new()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            }
        });
        Archives { url, files, hits }
    }

    fn serve(&self, path: &str, bytes: Vec<u8>) -> String {
        self.files.lock().unwrap().insert(path.to_string(), bytes);
        format!("{}{path}", self.url)
    }
}

/// `pack build` of a small platform pack: (archive bytes, sha256 printed).
fn built_archive(w: &World) -> (Vec<u8>, String) {
    let src = w.path("to-publish");
    write(
        &src,
        &[
            (
                "pack.yaml",
                "name: platform\nversion: 1.0.0\nparameters:\n  city: { type: string, default: Boston }\n",
            ),
            ("weather.yaml", &PLATFORM_SCENARIO.replace("STEP", "v1")),
        ],
    );
    let out = w.path("platform-1.0.0.tar.gz");
    let r = run_in(
        w.root.path(),
        &[
            "pack",
            "build",
            "to-publish",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let bytes = std::fs::read(&out).unwrap();
    let sum = std::fs::read_to_string(w.path("platform-1.0.0.tar.gz.sha256")).unwrap();
    let sha = sum.split_whitespace().next().unwrap().to_string();
    assert!(r.stdout.contains(&sha), "{r:?}");
    (bytes, sha)
}

#[test]
fn pack_build_is_reproducible_and_validates_first() {
    let w = World::new();
    let (one, sha) = built_archive(&w);
    // Touch every file (new mtimes): the same bytes, the same sha256.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    for f in ["pack.yaml", "weather.yaml"] {
        let p = w.path("to-publish").join(f);
        let text = std::fs::read(&p).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    let (two, sha2) = built_archive(&w);
    assert_eq!(one, two);
    assert_eq!(sha, sha2);
    // A broken pack is not built.
    write(
        &w.path("to-publish"),
        &[("bad.yaml", "scenario: x\nsteps: 3\n")],
    );
    let out = w.path("broken.tar.gz");
    let r = run_in(
        w.root.path(),
        &[
            "pack",
            "build",
            "to-publish",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("bad.yaml:2:"), "{r:?}");
    assert!(!out.exists());
    // Not a pack folder.
    let r = run_in(w.root.path(), &["pack", "build", "platform-work"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("holds no pack.yaml"), "{r:?}");
}

#[test]
fn archive_imports_are_pinned_by_sha256_and_cached() {
    let w = World::new();
    let (bytes, sha) = built_archive(&w);
    let server = Archives::start(Some("s3cr3t-token"));
    let url = server.serve("/platform-1.0.0.tar.gz", bytes);
    let import = format!(
        "  - archive: {url}\n    sha256: {sha}\n    token: env:PACK_TOKEN\n    version: \"^1\"\n"
    );
    w.product(&import);
    // The token's variable unset: said so, at the `token:` line.
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("pack.yaml:6:12"), "{r:?}");
    assert!(r.stderr.contains("`PACK_TOKEN` is not set"), "{r:?}");
    let env = [("PACK_TOKEN", "s3cr3t-token")];
    let r = w.mcpspec_env(&["pack", "update", "--path", "packs/product"], &env);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!w.lock().contains("s3cr3t"), "{}", w.lock());
    // The lock's digest is the pin, the digest the import wrote and `pack build` printed,
    // and `pack update` names the archive by it (#38 item 16); the unpacked files' digest
    // (the cache folder) is `unpacked:`.
    assert!(
        w.lock().contains(&format!(
            "    sha256: \"{sha}\"\n    digest: \"sha256:{sha}\"\n    unpacked: \"sha256:"
        )),
        "{}",
        w.lock()
    );
    assert!(
        r.stdout.contains(&format!("platform 1.0.0 (sha256 {sha})")),
        "{r:?}"
    );
    let r = w.mcpspec_env(&["pack", "update", "--path", "packs/product"], &env);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains(&format!("locked  platform 1.0.0 (sha256 {sha})")),
        "{r:?}"
    );
    let r = w.mcpspec(&["list", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains(&format!("(sha256:{sha})")), "{r:?}");
    let (r, steps) = w.run_steps(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(steps.contains(&"weather v1".to_string()), "{steps:?}");
    assert!(!r.all_output().contains("s3cr3t"));
    // Offline never touches the network: served from the cache.
    let hits = server.hits.load(Ordering::SeqCst);
    let r = w.mcpspec(&["validate", "--offline", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(server.hits.load(Ordering::SeqCst), hits);

    // The archive changes upstream: its digest no longer matches the import's sha256.
    std::fs::remove_dir_all(w.path("cache")).unwrap();
    let changed = b"\x1f\x8bnot the same".to_vec();
    let actual = mcpspec::run::packs::cache::sha256_hex(&changed);
    server.serve("/platform-1.0.0.tar.gz", changed);
    let r = w.mcpspec_env(&["validate", "packs/product"], &env);
    assert_eq!(r.code, 2, "{r:?}");
    // The pack (as the lock knows it), the pinned and the actual digest.
    assert!(
        r.stderr.contains(&format!(
            "digest mismatch: pack `platform` (`{url}`) is pinned to sha256 {sha}, the archive has sha256 {actual}"
        )),
        "{r:?}"
    );
    assert!(r.stderr.contains("pack.yaml:5:13"), "at the sha256: {r:?}");
}

/// A pin that is not the archive's digest: `pack update` refuses it, naming the pack (read
/// from the archive's pack.yaml: no lock knows it yet), the pinned and the actual digest,
/// at the `sha256:`; nothing is locked or cached (#38 item 16).
#[test]
fn a_wrong_pin_names_the_pack_and_both_digests() {
    let w = World::new();
    let (_bytes, sha) = built_archive(&w);
    let url = format!("file://{}", w.path("platform-1.0.0.tar.gz").display());
    let wrong = "0".repeat(64);
    w.product(&format!("  - archive: {url}\n    sha256: {wrong}\n"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "digest mismatch: pack `platform` (`{url}`) is pinned to sha256 {wrong}, the archive has sha256 {sha}"
        )),
        "{r:?}"
    );
    assert!(r.stderr.contains("pack.yaml:5:13"), "at the sha256: {r:?}");
    assert!(w.lock().is_empty(), "{}", w.lock());
    assert!(w.cached_entries().is_empty(), "{:?}", w.cached_entries());
    // Bytes that are no archive at all: named by the URL.
    std::fs::write(w.path("junk.tar.gz"), b"junk").unwrap();
    let junk = format!("file://{}", w.path("junk.tar.gz").display());
    w.product(&format!("  - archive: {junk}\n    sha256: {wrong}\n"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "digest mismatch: the pack at `{junk}` is pinned to sha256 {wrong}"
        )),
        "{r:?}"
    );
}

/// A lock written before an archive's `digest:` was its pin (it held the digest of the
/// unpacked files) still runs from the cache, and `pack update` rewrites it in today's
/// form without calling the pack updated.
#[test]
fn an_older_lock_of_an_archive_still_serves() {
    let w = World::new();
    let (_bytes, sha) = built_archive(&w);
    let url = format!("file://{}", w.path("platform-1.0.0.tar.gz").display());
    w.product(&format!("  - archive: {url}\n    sha256: {sha}\n"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    let today = w.lock();
    let files = today
        .lines()
        .find_map(|l| l.trim().strip_prefix("unpacked: "))
        .unwrap()
        .to_string();
    let older = today
        .replace(
            &format!("digest: \"sha256:{sha}\""),
            &format!("digest: {files}"),
        )
        .replace(&format!("    unpacked: {files}\n"), "");
    assert!(!older.contains("unpacked"), "{older}");
    std::fs::write(w.path("product/mcpspec.lock"), &older).unwrap();
    let (r, steps) = w.run_steps(&["--offline"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(steps.contains(&"weather v1".to_string()), "{steps:?}");
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("locked  platform 1.0.0"), "{r:?}");
    assert_eq!(w.lock(), today);
}

/// Bad remote imports: (case, the import's YAML lines with `{GIT}`/`{HTTP}` for the test
/// repository and server, the command, exit code, what stderr must say).
const BAD: &[(&str, &str, &str, i32, &[&str])] = &[
    (
        "missing rev",
        "  - git: {GIT}\n    path: packs/platform\n",
        "validate",
        2,
        &["pack.yaml:4:10", "missing `rev:`"],
    ),
    (
        "a revision the repository does not have",
        "  - git: {GIT}\n    rev: v9\n    path: packs/platform\n",
        "update",
        2,
        &["pack.yaml:5:10", "no revision `v9`"],
    ),
    (
        "a folder the revision does not have",
        "  - git: {GIT}\n    rev: v1\n    path: packs/nope\n",
        "update",
        2,
        &["pack.yaml:6:11", "no folder `packs/nope`"],
    ),
    (
        "a version outside the range",
        "  - git: {GIT}\n    rev: v1\n    path: packs/platform\n    version: \"^2\"\n",
        "update",
        2,
        &["pack.yaml:7:14", "does not satisfy `^2`"],
    ),
    (
        "a path out of the repository",
        "  - git: {GIT}\n    rev: v1\n    path: ../../etc\n",
        "validate",
        2,
        &["pack.yaml:6:11", "must stay inside"],
    ),
    (
        "an archive without sha256",
        "  - archive: {HTTP}/a.tar.gz\n",
        "validate",
        2,
        &["pack.yaml:4:14", "missing `sha256:`"],
    ),
    (
        "both pack and git",
        "  - pack: ../x\n    git: {GIT}\n    rev: v1\n",
        "validate",
        2,
        &["pack.yaml:5:10", "one of `pack:`, `git:` and `archive:`"],
    ),
    (
        "a token written in the file",
        "  - git: {GIT}\n    rev: v1\n    token: ghp_literal_secret\n",
        "validate",
        2,
        &["pack.yaml:6:12", "a token is read from the environment"],
    ),
    (
        "an unreachable repository",
        "  - git: file:///nonexistent/mcpspec-test.git\n    rev: v1\n",
        "update",
        4,
        &["cannot reach `file:///nonexistent/mcpspec-test.git`"],
    ),
    (
        "an unreachable archive server",
        "  - archive: http://127.0.0.1:9/a.tar.gz\n    sha256: 0000000000000000000000000000000000000000000000000000000000000000\n",
        "update",
        4,
        &["cannot reach `http://127.0.0.1:9/a.tar.gz`"],
    ),
];

#[test]
fn bad_remote_imports_are_refused_at_their_position() {
    let w = World::new();
    for (case, import, command, code, says) in BAD {
        let import = import
            .replace("{GIT}", &w.git_url())
            .replace("{HTTP}", "http://127.0.0.1:9");
        w.product(&import);
        let r = match *command {
            "update" => w.mcpspec(&["pack", "update", "--path", "packs/product"]),
            _ => w.mcpspec(&["validate", "packs/product"]),
        };
        assert_eq!(r.code, *code, "{case}: {r:?}");
        for s in *says {
            assert!(r.stderr.contains(s), "{case}: expected `{s}` in {r:?}");
        }
        assert!(
            !r.all_output().contains("ghp_literal_secret"),
            "{case}: {r:?}"
        );
        assert!(!r.stderr.contains("panicked"), "{case}: {r:?}");
    }
}

#[test]
fn an_import_cycle_across_repositories_is_reported() {
    let w = World::new();
    // The product's own repository, whose pack imports the platform...
    let product_work = w.path("product-work");
    std::fs::create_dir_all(&product_work).unwrap();
    git(&product_work, &["init", "-q"]);
    write(
        &product_work,
        &[(
            "pack.yaml",
            &format!(
                "name: product\nversion: 0.1.0\nimports:\n{}",
                w.git_import("v1")
            ),
        )],
    );
    git(&product_work, &["add", "-A"]);
    git(&product_work, &["commit", "-qm", "product"]);
    git(
        w.root.path(),
        &["clone", "-q", "--bare", "product-work", "product.git"],
    );
    // ...and a platform release importing the product back.
    let work = w.path("platform-work");
    write(
        &work,
        &[(
            "packs/platform/pack.yaml",
            &format!(
                "name: platform\nversion: 1.0.1\nimports:\n  - git: file://{}\n    rev: main\n",
                w.path("product.git").display()
            ),
        )],
    );
    git(&work, &["commit", "-qam", "cycle"]);
    git(&work, &["tag", "-f", "v1"]);
    git(
        &work,
        &["push", "-q", "--force", "../platform.git", "main", "v1"],
    );
    w.product(&w.git_import("v1"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("import cycle: product → platform → product"),
        "{r:?}"
    );
    // At the platform's import of the product (its manifest, in the cache).
    assert!(r.stderr.contains("pack.yaml:4:10"), "{r:?}");
}

#[test]
fn mcpspec_yaml_imports_remote_packs_too() {
    let w = World::new();
    let dir = w.path("product");
    let server = stdio_target(&[]);
    let config = |range: &str| {
        format!(
            "targets:\n  local: {{ stdio: \"{server}\" }}\nimports:\n  - git: {}\n    rev: v1\n    path: packs/platform\n    version: \"{range}\"\n",
            w.git_url()
        )
    };
    write(&dir, &[("mcpspec.yaml", &config("^1.0"))]);
    // Not locked yet: the error points into mcpspec.yaml.
    let r = w.mcpspec(&["run"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("mcpspec.yaml:4:10"), "{r:?}");
    assert_eq!(w.mcpspec(&["pack", "update"]).code, 0);
    let r = w.mcpspec(&["run"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.all_output().contains("platform-weather"), "{r:?}");
    // The range is checked against the fetched pack's version, at the `version:`.
    write(&dir, &[("mcpspec.yaml", &config("^2"))]);
    let r = w.mcpspec(&["validate"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("mcpspec.yaml:7:14"), "{r:?}");
    assert!(r.stderr.contains("does not satisfy `^2`"), "{r:?}");
}

/// The token of a private git repository reaches git through its environment only: not
/// its command line, not the lock, not the cache, not the messages (even when git echoes
/// it). A stand-in `git` on PATH records what it was given and fails as an
/// authentication failure would.
#[cfg(unix)]
#[test]
fn a_git_token_travels_in_the_environment_only() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let bin = w.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = w.path("git.log");
    let fake = bin.join("git");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"ARGS $*\" >> '{log}'\nenv | grep '^GIT_CONFIG' >> '{log}'\n\
             case \"$*\" in *init*) exit 0;; esac\n\
             echo \"fatal: Authentication failed for $PLATFORM_TOKEN (sent $(env | grep GIT_CONFIG_VALUE_0))\" >&2\nexit 128\n",
            log = log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    w.product("  - git: https://example.invalid/private.git\n    rev: v1\n    token: env:PLATFORM_TOKEN\n");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let token = "tok-7f3a9c";
    let r = w.mcpspec_env(
        &["pack", "update", "--path", "packs/product"],
        &[("PATH", &path), ("PLATFORM_TOKEN", token)],
    );
    assert_eq!(r.code, 4, "{r:?}");
    assert!(
        r.stderr
            .contains("cannot reach `https://example.invalid/private.git`"),
        "{r:?}"
    );
    assert!(!r.all_output().contains(token), "{r:?}");
    let log = std::fs::read_to_string(&log).unwrap();
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{token}"));
    assert!(
        log.contains(&format!("GIT_CONFIG_VALUE_0=Authorization: Basic {basic}")),
        "{log}"
    );
    assert!(!r.all_output().contains(&basic), "{r:?}");
    for line in log.lines().filter(|l| l.starts_with("ARGS")) {
        assert!(!line.contains(token) && !line.contains(&basic), "{line}");
    }
    assert!(!w.lock().contains(token));
}

/// `archive: file://…` is a local archive (air-gapped teams), pinned by its sha256 as a
/// downloaded one; a missing file is invalid input (exit 2) naming it. It was refused as a
/// network failure: "URL scheme is not allowed", exit 4.
#[test]
fn local_archives_are_imported_by_file_url() {
    let w = World::new();
    let (_bytes, sha) = built_archive(&w);
    let url = format!("file://{}", w.path("platform-1.0.0.tar.gz").display());
    w.product(&format!("  - archive: {url}\n    sha256: {sha}\n"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    let (r, steps) = w.run_steps(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(steps.contains(&"weather v1".to_string()), "{steps:?}");

    std::fs::remove_dir_all(w.path("cache")).unwrap();
    std::fs::remove_file(w.path("product/mcpspec.lock")).unwrap();
    let missing = format!("file://{}", w.path("nope.tar.gz").display());
    w.product(&format!("  - archive: {missing}\n    sha256: {sha}\n"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("nope.tar.gz"), "{r:?}");
    assert!(r.stderr.contains("cannot read"), "{r:?}");
}

/// A `.zip` archive (as GitHub's zipballs: everything inside one top folder, deflated) is
/// imported like a `.tar.gz`: pinned, unpacked, its pack found in the single folder.
#[test]
fn zip_archives_are_imported_too() {
    use sha2::Digest;
    use std::io::Write;
    let w = World::new();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    zip.add_directory("platform-main/", options).unwrap();
    for (name, text) in [
        (
            "platform-main/pack.yaml",
            "name: platform\nversion: 1.0.0\nparameters:\n  city: { type: string, default: Boston }\n"
                .to_string(),
        ),
        (
            "platform-main/weather.yaml",
            PLATFORM_SCENARIO.replace("STEP", "zip"),
        ),
    ] {
        zip.start_file(name, options).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    let bytes = zip.finish().unwrap().into_inner();
    let sha: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(w.path("platform-main.zip"), &bytes).unwrap();
    let url = format!("file://{}", w.path("platform-main.zip").display());
    w.product(&format!("  - archive: {url}\n    sha256: {sha}\n"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    let (r, steps) = w.run_steps(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(steps.contains(&"weather zip".to_string()), "{steps:?}");
}

/// `pack build` of a pack importing a folder outside it (the book's notes-team imports
/// `../weather-basics`) refuses, at the import, with the reason: the archive would hold the
/// folder only, and importers would get "no pack ../weather-basics". It used to publish it.
#[test]
fn pack_build_refuses_an_import_outside_the_pack() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("notes.tar.gz");
    let r = run_in(
        &common::repo_root(),
        &[
            "pack",
            "build",
            "examples/packs/notes-team",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("notes-team/pack.yaml:10:11"), "{r:?}");
    assert!(
        r.stderr
            .contains("`pack: ../weather-basics` lies outside the pack's folder"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("import it with `git:` or `archive:`"),
        "{r:?}"
    );
    assert!(!out.exists());
}

/// Commit the platform work copy, tag it `tag` and push both to the bare repository.
fn commit_and_push(w: &World, tag: &str) {
    let work = w.path("platform-work");
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", tag]);
    git(&work, &["tag", "-f", tag]);
    git(
        &work,
        &["push", "-q", "--force", "../platform.git", "main", tag],
    );
}

/// A pack fetched with `git:` imports a folder of its own repository (`pack: ../shared`),
/// found in the same repository at the same commit and locked as a pack of its own; one
/// that leads outside the repository is refused at its line. Both used to fail with
/// "no pack `../shared`" (looked up beside the cache entry).
#[test]
fn a_git_pack_imports_folders_of_its_own_repository() {
    let w = World::new();
    write(
        &w.path("platform-work"),
        &[
            (
                "packs/platform/pack.yaml",
                "name: platform\nversion: 1.2.0\nparameters:\n  city: { type: string, default: Boston }\nimports:\n  - pack: ../shared\n",
            ),
            ("packs/shared/pack.yaml", "name: shared\nversion: 0.1.0\n"),
            (
                "packs/shared/tools.yaml",
                "scenario: shared-tools\nsteps:\n  - name: shared tools listed\n    request: { method: tools/list }\n",
            ),
        ],
    );
    commit_and_push(&w, "v2");
    w.product(&w.git_import("v2"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    let lock = w.lock();
    assert!(lock.contains("path: \"packs/shared\""), "{lock}");
    let (r, steps) = w.run_steps(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        steps.contains(&"shared tools listed".to_string()),
        "{steps:?}"
    );
    assert!(steps.contains(&"weather v1".to_string()), "{steps:?}");
    // The lock holds both: a run offline needs nothing more.
    let (r, _) = w.run_steps(&["--offline"]);
    assert_eq!(r.code, 0, "{r:?}");

    // Out of the repository: refused at the import, naming it.
    write(
        &w.path("platform-work"),
        &[(
            "packs/platform/pack.yaml",
            "name: platform\nversion: 1.3.0\nimports:\n  - pack: ../../../elsewhere\n",
        )],
    );
    commit_and_push(&w, "v3");
    w.product(&w.git_import("v3"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("pack.yaml:4:11"), "{r:?}");
    assert!(
        r.stderr
            .contains("`pack: ../../../elsewhere` of `git file://"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("it leads outside the repository"),
        "{r:?}"
    );
}

/// An archive holding several packs, imported with `path:`, resolves a relative import
/// inside the archive; an archive of one pack refuses a relative import out of it, naming
/// the import (it used to say "no pack `../shared`").
#[test]
fn relative_imports_out_of_an_archive_are_refused_by_name() {
    let w = World::new();
    let src = w.path("several");
    write(
        &src,
        &[
            (
                "packs/team/pack.yaml",
                "name: team\nversion: 1.0.0\nimports:\n  - pack: ../shared\n",
            ),
            ("packs/shared/pack.yaml", "name: shared\nversion: 0.1.0\n"),
            (
                "packs/shared/tools.yaml",
                "scenario: shared-tools\nsteps:\n  - name: shared tools listed\n    request: { method: tools/list }\n",
            ),
        ],
    );
    let tar = |dir: &Path, what: &str, out: &str| -> String {
        let status = Command::new("tar")
            .args(["-czf", w.path(out).to_str().unwrap(), what])
            .current_dir(dir)
            .status()
            .expect("tar runs");
        assert!(status.success());
        mcpspec::run::packs::cache::sha256_hex(&std::fs::read(w.path(out)).unwrap())
    };
    let sha = tar(&src, "packs", "several.tar.gz");
    let url = format!("file://{}", w.path("several.tar.gz").display());
    w.product(&format!(
        "  - archive: {url}\n    sha256: {sha}\n    path: packs/team\n"
    ));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    let (r, steps) = w.run_steps(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        steps.contains(&"shared tools listed".to_string()),
        "{steps:?}"
    );

    // The team pack alone: nothing beside it in the archive.
    let sha = tar(&src.join("packs"), "team", "team.tar.gz");
    let url = format!("file://{}", w.path("team.tar.gz").display());
    w.product(&format!("  - archive: {url}\n    sha256: {sha}\n"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("pack.yaml:4:11"), "{r:?}");
    assert!(
        r.stderr.contains("`pack: ../shared` of `archive file://"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("it leads outside the archive")
            && r.stderr.contains("which holds this pack only"),
        "{r:?}"
    );
}

/// A failure inside a git-imported pack is shown as the pack's name, the revision it came
/// from and its path in the repository (`platform@v3 packs/platform/fails.yaml:5:9`), in
/// the console and in JUnit, never as a path into the cache folder (#38 item 14).
#[test]
fn a_failure_in_a_remote_pack_names_the_pack_not_the_cache() {
    let w = World::new();
    write(
        &w.path("platform-work"),
        &[(
            "packs/platform/fails.yaml",
            "scenario: platform-fails\nsteps:\n  - name: echo\n    request: { method: tools/call, params: { name: echo, arguments: { text: hello } } }\n    expect:\n      - { path: \"$.content[0].text\", equals: goodbye }\n",
        )],
    );
    commit_and_push(&w, "v3");
    w.product(&w.git_import("v3"));
    let r = w.mcpspec(&["pack", "update", "--path", "packs/product"]);
    assert_eq!(r.code, 0, "{r:?}");
    let junit = w.path("junit.xml");
    let (r, _) = w.run_steps(&["--junit", junit.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    let cache = w.path("cache").display().to_string();
    let junit = std::fs::read_to_string(&junit).unwrap();
    for (what, text) in [("console", &r.stdout), ("JUnit", &junit)] {
        assert!(
            text.contains("platform@v3 packs/platform/fails.yaml:6:"),
            "{what}: {text}"
        );
        assert!(
            !text.contains(&cache),
            "{what} points into the cache: {text}"
        );
    }
}
