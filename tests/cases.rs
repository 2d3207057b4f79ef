//! Tests as data: each folder `tests/cases/NAME/` holds a scenario (or several files) and
//! `case.yaml`, the commands to run and what each must give. Found by glob: a new case is
//! a new folder, no Rust.
//!
//! `case.yaml`:
//!
//! ```yaml
//! # what the case shows (one line, printed when it fails)
//! shows: exit 1 when an expectation fails
//! stdio: [--defect, NAME]      # optional: `{stdio}` is the example server with these flags
//! http: []                     # optional: `{url}` is the example server over HTTP
//! runs:
//!   - args: [run, "{case}/scenario.yaml", --stdio, "{stdio}", --json, "{out}/result.json"]
//!     code: 1
//!     stdout: [FAIL, goodbye]  # each must appear (stderr: in stderr; output: in either)
//!     json:                    # JSON pointer into `{out}/result.json` → the value there
//!       /summary/failed: 1
//!     reports: [...]           # each in a file the run wrote to `{out}`
//!     anywhere: [...]          # each in stdout, stderr or a file in `{out}`
//!     absent: [...]            # none anywhere (secrets)
//! env: { NAME: value }         # environment of every run
//! ```
//!
//! `{case}` is the case folder (relative to the repository root, mcpspec's cwd), `{out}` a
//! fresh temporary folder for reports.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{HttpServer, assert_contains, read_json, repo_root, run_in, stdio_target};
use serde::Deserialize;
use serde_json::Value;

const CASES: &str = "tests/cases";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    shows: String,
    #[serde(default)]
    stdio: Option<Vec<String>>,
    #[serde(default)]
    http: Option<Vec<String>>,
    /// Environment of every run (besides NO_COLOR).
    #[serde(default)]
    env: BTreeMap<String, String>,
    runs: Vec<Command>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Command {
    args: Vec<String>,
    code: i32,
    #[serde(default)]
    stdout: Vec<String>,
    #[serde(default)]
    stderr: Vec<String>,
    /// Each must appear on stdout or stderr.
    #[serde(default)]
    output: Vec<String>,
    #[serde(default)]
    json: BTreeMap<String, Value>,
    /// Each must appear in one of the files the run wrote to `{out}`.
    #[serde(default)]
    reports: Vec<String>,
    /// Each must appear in stdout, stderr or a file in `{out}`.
    #[serde(default)]
    anywhere: Vec<String>,
    /// None may appear in stdout, stderr or any file in `{out}` (secrets).
    #[serde(default)]
    absent: Vec<String>,
}

/// The text of every file in `dir`, one after the other.
fn files_text(dir: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("out dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap_or_default())
        .collect()
}

/// Every case folder, sorted.
fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(repo_root().join(CASES))
        .expect("tests/cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("case.yaml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn run_case(dir: &Path) {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(dir.join("case.yaml")).expect("case.yaml");
    let case: Case =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name}/case.yaml: {e}"));
    let stdio = case.stdio.as_ref().map(|flags| {
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        stdio_target(&flags)
    });
    let http = case.http.as_ref().map(|flags| {
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        HttpServer::start(&flags)
    });
    let rel = format!("{CASES}/{name}");
    for (i, command) in case.runs.iter().enumerate() {
        let out = tempfile::tempdir().expect("tempdir");
        let fill = |arg: &str| {
            let mut arg = arg
                .replace("{case}", &rel)
                .replace("{out}", out.path().to_str().expect("utf-8 temp path"));
            if let Some(target) = &stdio {
                arg = arg.replace("{stdio}", target);
            }
            if let Some(server) = &http {
                arg = arg.replace("{url}", &server.url);
            }
            arg
        };
        let args: Vec<String> = command.args.iter().map(|a| fill(a)).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = case
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let r = run_in(&repo_root(), &args, &env);
        let what = format!("case {name} ({}), run {}: {args:?}", case.shows, i + 1);
        assert_eq!(r.code, command.code, "{what}: {r:?}");
        for needle in &command.stdout {
            assert_contains(&r.stdout, &fill(needle));
        }
        for needle in &command.stderr {
            assert_contains(&r.stderr, &fill(needle));
        }
        for needle in &command.output {
            assert_contains(&r.all_output(), &fill(needle));
        }
        let written = files_text(out.path());
        for needle in &command.reports {
            assert_contains(&written, &fill(needle));
        }
        let everything = format!("{}{written}", r.all_output());
        for needle in &command.anywhere {
            assert_contains(&everything, &fill(needle));
        }
        for needle in &command.absent {
            assert!(
                !everything.contains(needle.as_str()),
                "{what}: {needle:?} leaked:\n{everything}"
            );
        }
        if !command.json.is_empty() {
            let report = read_json(&out.path().join("result.json"));
            for (pointer, want) in &command.json {
                assert_eq!(
                    report.pointer(pointer),
                    Some(want),
                    "{what}: {pointer} in {report}"
                );
            }
        }
    }
}

#[test]
fn every_case_gives_what_it_says() {
    let all = cases();
    assert!(!all.is_empty(), "the cases of tests/cases/ were found");
    for dir in all {
        run_case(&dir);
    }
}
