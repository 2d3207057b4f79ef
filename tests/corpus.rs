//! The interop corpus: the built-in packs against pinned third-party MCP servers of every SDK
//! family (Python SDK 1.x, FastMCP 2, TypeScript SDK v1 and v2, Go's mcp-go and go-sdk shipped
//! as npm binaries, ...), one row per server and transport in tests/interop/corpus.tsv, each
//! server with a committed baseline (tests/interop/baselines/<server>.yaml) whose every entry
//! is a real defect with its spec quote. A red or a warning outside the baseline is either a
//! new defect of the server (add it, with its quote) or a false alarm of mcpspec (fix mcpspec).
//!
//! `core_servers` runs the rows marked `core` (one server per family that starts fast) in every
//! `cargo test`; `full_corpus` runs every row and is ignored by default: `scripts/corpus`
//! runs it (docs/src/corpus.md gives its timing). The conformance runs of the servers of
//! tests/interop.rs (Python SDK 2.3.0, FastMCP 4.2.3, server-memory, server-everything) are
//! there; their rows here run the other packs.
//!
//! The servers are installed by `scripts/test`; a missing installation fails with the step to
//! run, never a silent pass.
// Unix only: the corpus HTTP servers start through `sh -c` and venvs under .venv/bin.
#![cfg(unix)]

mod common;

use std::collections::BTreeSet;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::table::{self, Row};
use common::{read_json, repo_root, run};

const TABLE: &str = "tests/interop/corpus.tsv";
const COLUMNS: &[&str] = &[
    "server",
    "transport",
    "eras",
    "negotiated",
    "packs",
    "baseline",
    "core",
    "command",
];

fn interop_dir() -> PathBuf {
    repo_root().join("tests/interop")
}

/// The row's command line with `{port}` and `{tmp}` filled in.
fn command_line(row: &Row, port: Option<u16>, tmp: &Path) -> String {
    let mut line = row
        .get("command")
        .replace("{tmp}", &tmp.display().to_string());
    if let Some(port) = port {
        line = line.replace("{port}", &port.to_string());
    }
    line
}

/// Fails with the install step when the row's server is not installed from its committed
/// lockfile or requirements.txt (the stamps scripts/test leaves).
fn assert_installed(row: &Row) {
    let dir = interop_dir().join(row.get("server"));
    let (committed, stamp) = if dir.join("requirements.txt").exists() {
        ("requirements.txt", ".venv/installed-requirements.txt")
    } else {
        (
            "package-lock.json",
            "node_modules/.installed-package-lock.json",
        )
    };
    let want = std::fs::read(dir.join(committed)).unwrap_or_default();
    let have = std::fs::read(dir.join(stamp)).ok();
    if have.as_deref() != Some(want.as_slice()) {
        row.fail(format!(
            "{} is not installed from its committed {committed}: run `scripts/test` (its \
             \"Pinned third-party MCP servers\" and \"Pinned Python servers\" steps install \
             every server of tests/interop/)",
            dir.display()
        ));
    }
}

/// A free TCP port on 127.0.0.1 (the listener is closed at once; the server binds it next).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

/// An HTTP server of the corpus, started with `sh -c 'exec COMMAND'` (so killing the child
/// kills the server), killed on drop.
struct HttpServer {
    child: Child,
    stderr: PathBuf,
}

impl HttpServer {
    fn start(line: &str, port: u16, logs: &Path) -> Result<HttpServer, String> {
        let stderr = logs.join("server-stderr.log");
        let child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {line}"))
            .current_dir(interop_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .map_err(|e| format!("`{line}` did not start: {e}"))?;
        let mut server = HttpServer { child, stderr };
        // Generous: a Python server imports for seconds on a loaded machine.
        let deadline = Instant::now() + Duration::from_secs(90);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("`{line}` exited ({status}): {}", server.log()));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "`{line}` did not listen on 127.0.0.1:{port} within 90s: {}",
                    server.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(server)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the row's packs against its server; `Err` says what is wrong (every problem of the
/// run, with its console output).
fn check_row(row: &Row) -> Result<(), String> {
    assert_installed(row);
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("result.json");
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // `own.yaml+transport.yaml`: several files, merged into one.
    let files: Vec<PathBuf> = (!row.get("baseline").is_empty())
        .then(|| row.get("baseline"))
        .into_iter()
        .flat_map(|b| b.split('+'))
        .map(|f| interop_dir().join("baselines").join(f))
        .collect();
    if let Some(missing) = files.iter().find(|f| !f.exists()) {
        row.fail(format!("no baseline {}", missing.display()));
    }
    let baseline = match files.len() {
        0 => None,
        1 => Some(files[0].display().to_string()),
        _ => Some(
            common::merged_baseline(&files, tmp.path())
                .display()
                .to_string(),
        ),
    };

    let mut args = vec!["run".to_string()];
    args.extend(row.get("packs").split(',').map(String::from));
    let _http;
    match row.one_of("transport", &["stdio", "http"]) {
        "stdio" => {
            let line = command_line(row, None, &data);
            // Only the scenarios stdio runs (each scenario starts a server).
            args.extend(["--stdio".into(), line, "--cwd".into()]);
            args.push(interop_dir().display().to_string());
            args.extend(["--tag".into(), "not http".into()]);
        }
        _ => {
            let port = free_port();
            let server =
                HttpServer::start(&command_line(row, Some(port), &data), port, tmp.path())?;
            args.extend(["--url".into(), format!("http://127.0.0.1:{port}/mcp")]);
            _http = server;
        }
    }
    for era in row.get("eras").split(',') {
        args.extend(["--era".into(), era.into()]);
    }
    if let Some(baseline) = baseline {
        args.extend(["--expected-failures".into(), baseline]);
    }
    args.extend(["--json".into(), json.display().to_string()]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run(&argv);
    let output = r.all_output();
    if !json.exists() {
        return Err(format!("no JSON report (exit {}):\n{output}", r.code));
    }
    let report = read_json(&json);

    let mut problems = Vec::new();
    if r.code != 0 {
        problems.push(format!("exit {}", r.code));
    }
    // A warning (SHOULD) outside the baseline is a finding nobody reviewed.
    for count in ["failed", "errors", "warnings"] {
        if report["summary"][count] != 0 {
            problems.push(format!("{count}: {}", report["summary"][count]));
        }
    }
    if let Some(stale) = report["staleEntries"].as_array().filter(|a| !a.is_empty()) {
        problems.push(format!("stale baseline entries: {stale:?}"));
    }
    let want: BTreeSet<&str> = row.get("negotiated").split(',').collect();
    let mut negotiated = BTreeSet::new();
    for suite in report["suites"].as_array().unwrap() {
        if !suite["setupError"].is_null() {
            problems.push(format!(
                "{} did not connect: {}",
                suite["id"], suite["setupError"]
            ));
        }
        if let Some(n) = suite["era"]["negotiated"].as_str() {
            negotiated.insert(n.to_string());
        }
    }
    let negotiated: BTreeSet<&str> = negotiated.iter().map(String::as_str).collect();
    if negotiated != want {
        problems.push(format!(
            "negotiated {negotiated:?}, the table says {want:?}"
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n{output}", problems.join("; ")))
    }
}

/// Runs the rows `keep` selects and fails with every row's problems at once.
fn check_rows(keep: impl Fn(&Row) -> bool) {
    let rows = table::read(TABLE, COLUMNS);
    let mut failures = Vec::new();
    let mut ran = 0;
    for row in rows.iter().filter(|r| keep(r)) {
        ran += 1;
        let started = Instant::now();
        let result = check_row(row);
        eprintln!(
            "{} {} over {}: {} in {:.0?}",
            row.at,
            row.get("server"),
            row.get("transport"),
            if result.is_ok() { "ok" } else { "FAILED" },
            started.elapsed()
        );
        if let Err(why) = result {
            failures.push(format!(
                "{} ({} over {}): {why}",
                row.at,
                row.get("server"),
                row.get("transport")
            ));
        }
    }
    assert!(ran > 0, "no row selected in {TABLE}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// One server per family that starts fast, in every `cargo test`.
#[test]
fn core_servers() {
    check_rows(|row| row.one_of("core", &["yes", ""]) == "yes");
}

/// Every server of the corpus (`scripts/corpus`); `CORPUS_ONLY=server,...` keeps the rows of
/// those servers (to recheck one after a change), `server:transport` one row of it
/// (`CORPUS_ONLY=python-1.9.4:http`).
#[test]
#[ignore = "the full interop corpus takes minutes: run scripts/corpus"]
fn full_corpus() {
    let only = std::env::var("CORPUS_ONLY").unwrap_or_default();
    let only: BTreeSet<&str> = only.split(',').filter(|s| !s.is_empty()).collect();
    check_rows(|row| {
        let server = row.get("server");
        let one = format!("{server}:{}", row.get("transport"));
        only.is_empty() || only.contains(server) || only.contains(one.as_str())
    });
}

/// The corpus holds at least 12 third-party servers, each with a row, and every installed
/// folder of tests/interop/ is in a row.
#[test]
fn corpus_is_complete() {
    let rows = table::read(TABLE, COLUMNS);
    let in_table: BTreeSet<&str> = rows.iter().map(|r| r.get("server")).collect();
    assert!(in_table.len() >= 12, "{in_table:?}");
    for row in &rows {
        let baseline = row.get("baseline");
        for file in baseline.split('+').filter(|f| !f.is_empty()) {
            if !interop_dir().join("baselines").join(file).exists() {
                row.fail(format!("no baseline tests/interop/baselines/{file}"));
            }
        }
    }
    // Every installed folder is tested (everything-2025.4.8 is the contract-diff test's).
    for entry in std::fs::read_dir(interop_dir()).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let installable = entry.path().join("package.json").exists()
            || entry.path().join("requirements.txt").exists();
        if installable && name != "everything-2025.4.8" {
            assert!(
                in_table.contains(name.as_str()),
                "tests/interop/{name} is installed but in no row of {TABLE}"
            );
        }
    }
}
