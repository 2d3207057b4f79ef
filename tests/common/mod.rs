//! Shared helpers for end-to-end tests: the built binaries and example-server fixtures.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub mod model_server;
pub mod process;
pub mod table;

/// The mcpspec binary under test.
pub fn mcpspec() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcpspec"))
}

/// The example server binary, next to mcpspec. `cargo test --workspace` does not build
/// another package's binaries for these tests, so the first test that needs it builds the
/// workspace's binaries (same profile, same features as the test build, so nothing is
/// rebuilt twice; cargo serializes concurrent builds).
pub fn example_server() -> PathBuf {
    static BUILT: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let path = mcpspec().with_file_name(format!(
        "mcpspec-example-server{}",
        std::env::consts::EXE_SUFFIX
    ));
    let built = BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        // Only the two server packages: `--workspace` would unify features without the
        // dev-dependencies `cargo test` built with, rebuild `mcpspec` itself and replace the
        // binary other tests are running (seen as a failed build under load).
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "mcpspec-example-server",
            "-p",
            "mcpspec-model-server",
        ])
        .current_dir(repo_root());
        if mcpspec()
            .parent()
            .and_then(|d| d.file_name())
            .is_some_and(|n| n == "release")
        {
            cmd.arg("--release");
        }
        match cmd.status() {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(format!("building the example server failed ({s})")),
            Err(e) => Err(format!("cannot run cargo to build the example server: {e}")),
        }
    });
    if let Err(e) = built {
        panic!("{e}");
    }
    assert!(
        path.exists(),
        "{} is missing after building it",
        path.display()
    );
    path
}

/// `--stdio` argument running the example server with extra flags.
pub fn stdio_target(flags: &[&str]) -> String {
    let mut words = vec![example_server().display().to_string()];
    words.extend(flags.iter().map(|f| f.to_string()));
    words.join(" ")
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Result of one mcpspec invocation.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn all_output(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Run mcpspec with these arguments (cwd: repo root, NO_COLOR set).
pub fn run(args: &[&str]) -> Run {
    run_in(&repo_root(), args, &[])
}

pub fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(mcpspec());
    cmd.args(args).current_dir(dir).env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out: Output = cmd.output().expect("mcpspec runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The example server over HTTP on 127.0.0.1 (a free port), stopped on drop.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    pub fn start(flags: &[&str]) -> HttpServer {
        let mut cmd = Command::new(example_server());
        cmd.arg("--http").arg("127.0.0.1:0").args(flags);
        let Listening { child, url } = Listening::start(cmd);
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server started from `cmd` that prints `listening on URL` as its first line (the
/// example server over HTTP, the model server, the Python SDK server): its process and URL.
pub struct Listening {
    pub child: Child,
    pub url: String,
}

impl Listening {
    pub fn start(mut cmd: Command) -> Listening {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{cmd:?} does not start: {e}"));
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("listening line");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from {cmd:?}: {line:?}"))
            .to_string();
        Listening { child, url }
    }
}

/// Write a scenario file into a fresh temp dir and return (dir, path).
pub fn scenario_file(name: &str, yaml: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, yaml).expect("write scenario");
    (dir, path)
}

/// Parse the `--json` result file.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("json report written");
    serde_json::from_str(&text).expect("json report parses")
}

/// The JUnit XSD the reports are validated against.
pub const XSD: &str = "tests/junit/junit.xsd";

/// The Jenkins xUnit plugin's strict JUnit schema: `--junit-flavor jenkins` reports are
/// validated against it too (and the default flavour fails it).
pub const JUNIT_10_XSD: &str = "tests/junit/junit-10.xsd";

/// Validate a JUnit file against the XSD with xmllint. Fails (never skips) when xmllint
/// is not installed.
pub fn xmllint(file: &Path) -> Result<(), String> {
    xmllint_against(file, XSD)
}

/// Validate a file against `xsd` (relative to the repository root) with xmllint.
pub fn xmllint_against(file: &Path, xsd: &str) -> Result<(), String> {
    let out = match Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(repo_root().join(xsd))
        .arg(file)
        .output()
    {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "xmllint is not installed, so JUnit reports cannot be validated against {xsd}: \
             install libxml2-utils (e.g. `apt-get install -y libxml2-utils`)"
        ),
        Err(e) => panic!("cannot run xmllint: {e}"),
    };
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

pub fn assert_valid_junit(file: &Path) {
    assert_valid_against(file, XSD);
}

/// Valid against the Jenkins xUnit plugin's junit-10.xsd (and the project's own XSD).
pub fn assert_valid_junit_10(file: &Path) {
    assert_valid_against(file, XSD);
    assert_valid_against(file, JUNIT_10_XSD);
}

fn assert_valid_against(file: &Path, xsd: &str) {
    if let Err(e) = xmllint_against(file, xsd) {
        panic!(
            "{} is not valid against {xsd}:\n{e}\n--- document\n{}",
            file.display(),
            std::fs::read_to_string(file).unwrap_or_default()
        );
    }
}

/// An HS256 JWT with these claims signed with `secret`, minted by the example server
/// (`--mint-jwt`, the same HMAC it verifies with; RFC 4231 vectors test it there).
pub fn mint_jwt(secret: &str, claims: &str) -> String {
    let out = Command::new(example_server())
        .args(["--auth-jwt-secret", secret, "--mint-jwt", claims])
        .output()
        .expect("example server runs");
    assert!(out.status.success(), "minting failed: {out:?}");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_string()
}

/// The JWT resource server's test secret and audience (`--auth-jwt-secret`, `--auth-audience`).
pub const JWT_SECRET: &str = "mcpspec-test-hs256-secret";
pub const JWT_AUDIENCE: &str = "mcpspec-example";

/// Tokens for the example server run with [`jwt_server_flags`]: the valid one, one for
/// another audience, an expired one.
pub struct Tokens {
    pub valid: String,
    pub wrong_audience: String,
    pub expired: String,
}

impl Tokens {
    pub fn mint() -> Tokens {
        let claims = |aud: &str, exp: u64| {
            format!(r#"{{"sub":"alice","aud":"{aud}","exp":{exp},"iss":"mcpspec-tests"}}"#)
        };
        Tokens {
            valid: mint_jwt(JWT_SECRET, &claims(JWT_AUDIENCE, 4_102_444_800)),
            wrong_audience: mint_jwt(JWT_SECRET, &claims("someone-else", 4_102_444_800)),
            expired: mint_jwt(JWT_SECRET, &claims(JWT_AUDIENCE, 1_000_000_000)),
        }
    }
}

/// Example-server flags of the sound JWT-protected resource, plus `extra` ones.
pub fn jwt_server_flags<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut flags = vec![
        "--auth-jwt-secret",
        JWT_SECRET,
        "--auth-audience",
        JWT_AUDIENCE,
    ];
    flags.extend(extra);
    flags
}

/// Processes whose working directory is `dir`: `(pid, command line)` (Linux `/proc`); the
/// orphan checks of the fault tests look for a server by its working directory.
pub fn processes_in(dir: &Path) -> Vec<(u32, String)> {
    let dir = dir.canonicalize().expect("dir exists");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == dir) {
            let cmdline = std::fs::read(entry.path().join("cmdline"))
                .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
                .unwrap_or_default();
            found.push((pid, cmdline.trim().to_string()));
        }
    }
    found
}

/// Read a child's pipe to its end on a thread (so a full pipe never stalls the child).
pub fn drain(mut pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// `UPDATE_GOLDEN=1`: golden-file tests rewrite their expected files instead of comparing.
pub fn updating_golden() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Compare `actual` with the golden file at `path` (or rewrite it under UPDATE_GOLDEN=1).
/// The error names the first differing line and carries the whole actual output.
pub fn check_golden(path: &Path, actual: &str) -> Result<(), String> {
    if updating_golden() {
        std::fs::write(path, actual).expect("write golden");
        return Ok(());
    }
    let expected = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read {}: {e}\nrun the test with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    })?;
    if expected == actual {
        return Ok(());
    }
    let first = expected
        .lines()
        .zip(actual.lines())
        .position(|(e, a)| e != a)
        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    Err(format!(
        "{} differs from this run (first difference at line {}):\n  expected: {:?}\n  actual:   {:?}\n--- whole actual output\n{actual}\n(UPDATE_GOLDEN=1 regenerates the golden files)",
        path.display(),
        first + 1,
        expected.lines().nth(first).unwrap_or("<end of file>"),
        actual.lines().nth(first).unwrap_or("<end of output>"),
    ))
}

/// The suite `id` (`scenario@era`) of a `--json` result; panics listing the ids there are.
pub fn suite<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    let suites = report["suites"].as_array().expect("suites");
    suites.iter().find(|s| s["id"] == id).unwrap_or_else(|| {
        let ids: Vec<&serde_json::Value> = suites.iter().map(|s| &s["id"]).collect();
        panic!("no suite `{id}` in the report; suites: {ids:?}")
    })
}

/// The step `name` of a suite of a `--json` result; panics listing the steps there are.
pub fn step<'a>(suite: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    let steps = suite["steps"].as_array().expect("steps");
    steps.iter().find(|s| s["name"] == name).unwrap_or_else(|| {
        let names: Vec<&serde_json::Value> = steps.iter().map(|s| &s["name"]).collect();
        panic!(
            "no step `{name}` in suite `{}`; steps: {names:?}",
            suite["id"]
        )
    })
}

/// One row of the change-kind table (docs/src/contracts.md).
pub struct ChangeKindRow {
    /// As the diff names them (`any` for every list).
    pub lists: Vec<String>,
    /// `input`/`output` from a `(input)`/`(output)` qualifier.
    pub direction: Option<String>,
    pub kinds: Vec<String>,
    pub breaks: String,
    pub models: String,
}

/// The change-kind table of the book's chapter on contracts. A kind is the first name of its
/// cell or a name with an underscore (the others in a cell, such as `required`, explain it);
/// `pattern_added`/`_changed`: a suffix takes the stem of the kind before it.
pub fn change_kind_table() -> Vec<ChangeKindRow> {
    let doc = std::fs::read_to_string(repo_root().join("docs/src/contracts.md")).unwrap();
    let start = doc
        .find("## Change kinds")
        .expect("docs/src/contracts.md has ## Change kinds");
    let mut rows = Vec::new();
    for line in doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with("|---"))
        .skip(1)
        .take_while(|l| l.starts_with('|'))
    {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let [lists, kinds, breaks, models] = cells[..] else {
            panic!("change-kind row with other than 4 cells: {line}");
        };
        let direction = ["input", "output"]
            .into_iter()
            .find(|d| lists.contains(&format!("({d})")))
            .map(str::to_string);
        let lists = lists
            .split(',')
            .map(|l| match l.split_whitespace().next().unwrap_or("") {
                "templates" => "resource-templates".to_string(),
                other => other.to_string(),
            })
            .collect();
        let mut names: Vec<String> = Vec::new();
        for (i, token) in kinds.split('`').skip(1).step_by(2).enumerate() {
            if let Some(suffix) = token.strip_prefix('_') {
                let stem = names
                    .last()
                    .and_then(|k| k.rsplit_once('_'))
                    .map(|(s, _)| s);
                names.push(format!("{}_{suffix}", stem.unwrap_or("")));
            } else if token.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && (i == 0 || token.contains('_'))
            {
                names.push(token.to_string());
            }
        }
        rows.push(ChangeKindRow {
            lists,
            direction,
            kinds: names,
            breaks: breaks.to_string(),
            models: models.to_string(),
        });
    }
    assert!(rows.len() > 20, "the change-kind table was not found");
    rows
}

/// Exit code of `child` once it ends; `None` (after killing it) if it outlives `limit`.
pub fn wait_limited(child: &mut Child, limit: std::time::Duration) -> Option<i32> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status.code().unwrap_or(-1));
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Several baseline files as one, in `dir`: the first file, with the `server:` entries of the
/// others spliced in before its `client: []` (a server's own baseline plus entries that hold
/// for one transport only, or for every server of one SDK).
pub fn merged_baseline(files: &[PathBuf], dir: &Path) -> PathBuf {
    let read =
        |p: &PathBuf| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut text = read(&files[0]);
    for extra in &files[1..] {
        let more = read(extra);
        let entries = more
            .split_once("\nserver:\n")
            .and_then(|(_, rest)| rest.split_once("\nclient:"))
            .map(|(entries, _)| entries.to_string())
            .unwrap_or_else(|| panic!("{}: `server:` entries, then `client:`", extra.display()));
        assert_eq!(
            text.matches("\nclient: []").count(),
            1,
            "{}",
            files[0].display()
        );
        text = text.replace("\nclient: []", &format!("\n{entries}\nclient: []"));
    }
    let path = dir.join("baseline.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `haystack` contains `needle`, or the test fails showing both.
#[track_caller]
pub fn assert_contains(haystack: &str, needle: &str) {
    assert!(
        haystack.contains(needle),
        "expected to find {needle:?} in:\n{haystack}"
    );
}
