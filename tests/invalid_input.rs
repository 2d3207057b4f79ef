//! Invalid input is rejected with exit 2 and a precise diagnostic, never a panic.
//!
//! Each case is `tests/invalid/NAME.yaml` (or a folder `tests/invalid/NAME/` for problems
//! that span files) with its expected stderr in `tests/invalid/NAME.stderr`; a `# case: …`
//! comment in it (in a folder: in one of its files) says what it shows. A new case is a new
//! file: the tests find every case in the folder.
//! Regenerate the goldens with `UPDATE_GOLDEN=1 cargo test --workspace --test invalid_input`
//! and review the diff.
// Unix only: marker commands through `sh -c`, symlinks.
#![cfg(unix)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{Run, repo_root, run};

const INVALID_DIR: &str = "tests/invalid";

/// One case of tests/invalid/: its name and what it shows (its `# case:` comment).
struct Case {
    name: String,
    what: String,
}

/// Every case in tests/invalid/, sorted: each `NAME.yaml` and each folder.
fn cases() -> Vec<Case> {
    let mut cases: Vec<Case> = std::fs::read_dir(repo_root().join(INVALID_DIR))
        .expect("tests/invalid")
        .map(|e| e.expect("entry").path())
        .filter_map(|path| {
            let file = path.file_name()?.to_string_lossy().into_owned();
            let name = if path.is_dir() {
                file
            } else {
                file.strip_suffix(".yaml")?.to_string()
            };
            let what = case_comment(&path)
                .unwrap_or_else(|| panic!("{}: no `# case: …` comment", path.display()));
            Some(Case { name, what })
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(cases.len() > 30, "the cases of tests/invalid/ were found");
    cases
}

/// The text of the first `# case: ` line of a file, or of the files of a folder (sorted).
fn case_comment(path: &Path) -> Option<String> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .ok()?
            .map(|e| e.expect("entry").path())
            .collect();
        entries.sort();
        return entries.iter().find_map(|p| case_comment(p));
    }
    // Lossy: a case may hold bytes that are not UTF-8 on purpose.
    let text = String::from_utf8_lossy(&std::fs::read(path).ok()?).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("# case: "))
        .map(str::to_string)
}

/// The path (relative to the repo root, as a user would type it) of a case's input.
fn case_input(name: &str) -> String {
    let dir = format!("{INVALID_DIR}/{name}");
    if repo_root().join(&dir).is_dir() {
        dir
    } else {
        format!("{dir}.yaml")
    }
}

fn golden_path(name: &str) -> PathBuf {
    repo_root().join(format!("{INVALID_DIR}/{name}.stderr"))
}

fn assert_no_panic(out: &Run, what: &str) {
    assert!(
        !out.all_output().contains("panicked"),
        "{what}: mcpspec panicked: {out:?}"
    );
}

/// A `--stdio` target that leaves a marker file when it is started.
struct StartProbe {
    dir: tempfile::TempDir,
}

impl StartProbe {
    fn new() -> Self {
        StartProbe {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }
    fn marker(&self) -> PathBuf {
        self.dir.path().join("started")
    }
    fn command(&self) -> String {
        format!("sh -c 'touch \"{}\"'", self.marker().display())
    }
    fn started(&self) -> bool {
        self.marker().exists()
    }
}

/// Every golden file belongs to a case (every case's golden is checked by the tests below).
#[test]
fn every_golden_file_has_its_case() {
    let names: BTreeSet<String> = cases().into_iter().map(|c| c.name).collect();
    for entry in std::fs::read_dir(repo_root().join(INVALID_DIR)).expect("tests/invalid") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".stderr") {
            assert!(
                names.contains(stem),
                "{name}: golden file of no case (remove it, or add {stem}.yaml or {stem}/)"
            );
        }
    }
}

#[test]
fn validate_rejects_each_invalid_file_with_its_golden_diagnostic() {
    let mut problems = Vec::new();
    for Case { name, what } in &cases() {
        let input = case_input(name);
        let out = run(&["validate", &input]);
        assert_no_panic(&out, what);
        if out.code != 2 {
            problems.push(format!(
                "{name} ({what}): exit {} instead of 2: {out:?}",
                out.code
            ));
            continue;
        }
        if !out.stdout.is_empty() {
            problems.push(format!("{name}: nothing on stdout, got {:?}", out.stdout));
        }
        // Every diagnostic names the file, and (except for cross-file cases) a line.
        if !out.stderr.starts_with("error: ") || !out.stderr.contains(&format!("--> {input}")) {
            problems.push(format!(
                "{name}: stderr does not point at {input}: {}",
                out.stderr
            ));
        }
        if !out.stderr.trim_end().ends_with("found") {
            problems.push(format!("{name}: no error count at the end: {}", out.stderr));
        }
        if let Err(e) = common::check_golden(&golden_path(name), &out.stderr) {
            problems.push(format!("{name} ({what}): {e}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// `run` loads before it connects: the same diagnostics, exit 2, no server started.
#[test]
fn run_rejects_invalid_files_before_starting_a_server() {
    for Case { name, what } in &cases() {
        let probe = StartProbe::new();
        let input = case_input(name);
        let out = run(&[
            "run",
            &input,
            "--stdio",
            &probe.command(),
            "--timeout",
            "5s",
        ]);
        assert_no_panic(&out, what);
        assert_eq!(out.code, 2, "{name} ({what}): {out:?}");
        assert!(
            !probe.started(),
            "{name}: the server was started for an invalid file"
        );
        assert_eq!(out.stdout, "", "{name}: no suite ran");
        let golden = std::fs::read_to_string(golden_path(name)).unwrap_or_default();
        if !common::updating_golden() {
            assert_eq!(
                out.stderr, golden,
                "{name}: `run` reports what `validate` does"
            );
        }
    }
}

/// The probe above would notice a start: with a valid file the command does run.
#[test]
fn start_probe_detects_a_started_server() {
    let probe = StartProbe::new();
    let out = run(&[
        "run",
        "examples/scenarios/tools.yaml",
        "--stdio",
        &probe.command(),
        "--era",
        "legacy",
        "--timeout",
        "5s",
    ]);
    assert!(probe.started(), "the probe command ran: {out:?}");
    assert_eq!(
        out.code, 4,
        "a server that exits at once cannot be reached: {out:?}"
    );
}

/// `mcpspec run` on a valid file with these flags; `--stdio` gets the start probe.
fn run_flags(args: &[&str]) -> (Run, StartProbe) {
    let probe = StartProbe::new();
    let command = probe.command();
    let mut full = vec!["run", "examples/scenarios/tools.yaml"];
    for a in args {
        full.push(a);
        if *a == "--stdio" {
            full.push(&command);
        }
    }
    let out = run(&full);
    (out, probe)
}

#[test]
fn bad_era_flag_is_a_usage_error() {
    let (out, probe) = run_flags(&["--stdio", "--era", "nonsense"]);
    assert_no_panic(&out, "--era nonsense");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(!probe.started(), "no server for a usage error");
    assert_eq!(
        out.stderr,
        "error: --era: `nonsense` is not an era: expected `legacy`, `modern`, `auto` or a revision date such as `2025-11-25` or `2026-07-28`\n"
    );
    assert_eq!(out.stdout, "");
}

#[test]
fn bad_timeout_flag_is_a_usage_error() {
    let (out, probe) = run_flags(&["--stdio", "--timeout", "x"]);
    assert_no_panic(&out, "--timeout x");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(!probe.started(), "no server for a usage error");
    assert!(
        out.stderr
            .starts_with("error: invalid value 'x' for '--timeout <DURATION>'"),
        "{out:?}"
    );
    assert!(
        out.stderr.contains("expected e.g. `500ms`, `30s`"),
        "{out:?}"
    );
}

/// Numeric flags have documented ranges: beyond them, a usage error before anything
/// starts (a timeout of 2^64 s panicked computing the deadline; `--jobs 0` ran nothing).
#[test]
fn numeric_flags_out_of_range_are_usage_errors() {
    for (flag, value, needle) in [
        (
            "--timeout",
            "18446744073709551615s",
            "out of range (expected 1ms to 1day)",
        ),
        ("--timeout", "0s", "out of range (expected 1ms to 1day)"),
        ("--jobs", "0", "0 is out of range (expected 1 to 1024)"),
        ("--jobs", "99999999999999999999", "is not a whole number"),
        (
            "--max-message-size",
            "0",
            "0 is out of range (expected 1024 to 1073741824)",
        ),
        ("--shard", "1/100000", "N must be 1 to 10000"),
    ] {
        let (out, probe) = run_flags(&["--stdio", "--era", "legacy", flag, value]);
        assert_no_panic(&out, flag);
        assert_eq!(out.code, 2, "{flag} {value}: {out:?}");
        assert!(
            !probe.started(),
            "{flag} {value}: no server for a usage error"
        );
        assert!(out.stderr.contains(needle), "{flag} {value}: {out:?}");
    }
    // The edges of the ranges are accepted.
    for (flag, value) in [
        ("--timeout", "1day"),
        ("--jobs", "1024"),
        ("--max-message-size", "1024"),
    ] {
        let (out, probe) = run_flags(&["--stdio", "--era", "legacy", flag, value]);
        assert!(probe.started(), "{flag} {value}: {out:?}");
    }
}

/// A schemaFile that is a FIFO is refused at once (reading it blocked `validate` forever).
#[test]
fn schema_file_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("schema.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let scenario = dir.path().join("s.yaml");
    std::fs::write(
        &scenario,
        "scenario: s\nsteps:\n  - name: a\n    request: { method: tools/list }\n    expect:\n      - schemaFile: schema.json\n",
    )
    .unwrap();
    // Under `timeout`: the old reader waited for a writer that never comes (exit 124).
    let out = std::process::Command::new("timeout")
        .arg("10")
        .arg(common::mcpspec())
        .args(["validate", scenario.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .output()
        .expect("timeout runs mcpspec");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("not a regular file (it is a FIFO)")
            && stderr.contains(&format!("--> {}:6:21", scenario.display())),
        "{stderr}"
    );
}

#[test]
fn missing_target_is_a_usage_error() {
    let (out, _probe) = run_flags(&[]);
    assert_no_panic(&out, "no target");
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(
        out.stderr,
        "error: no target: pass --stdio \"<command line>\" or --url <URL>\n"
    );
    assert_eq!(out.stdout, "");
}

#[test]
fn two_targets_are_a_usage_error() {
    let (out, probe) = run_flags(&["--stdio", "--url", "http://127.0.0.1:9/mcp"]);
    assert_no_panic(&out, "two targets");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(!probe.started());
    assert!(
        out.stderr
            .contains("'--stdio <COMMAND LINE>' cannot be used with '--url <URL>'"),
        "{out:?}"
    );
}

#[test]
fn unreadable_scenario_path_is_invalid_input() {
    let out = run(&["validate", "tests/invalid/no-such-file.yaml"]);
    assert_no_panic(&out, "missing file");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.starts_with(
            "error: cannot read: No such file or directory (os error 2)\n --> tests/invalid/no-such-file.yaml\n"
        ),
        "{out:?}"
    );
}

/// A folder large enough to be compiled on several threads (over 64 KB of scenarios)
/// reports its errors, and lists its scenarios, in file order.
#[test]
fn a_large_folder_reports_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=40 {
        let mut text = format!("scenario: s{i:02}\nsteps:\n");
        for j in 1..=30 {
            text.push_str(&format!(
                "  - name: step {j}\n    request: {{ method: tools/list }}\n    expect:\n      - {{ path: \"$.tools[0].name\", equals: \"echo {j}\" }}\n"
            ));
        }
        std::fs::write(dir.path().join(format!("s{i:02}.yaml")), text).unwrap();
    }
    let listed = common::run_in(dir.path(), &["list", "."], &[]);
    assert_eq!(listed.code, 0, "{listed:?}");
    // Scenario lines are `ID (eras)  FILE:LINE:COL`, their checks indented below.
    let ids: Vec<&str> = listed
        .stdout
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let expected: Vec<String> = (1..=40).map(|i| format!("s{i:02}")).collect();
    assert_eq!(ids, expected, "{}", listed.stdout);

    for broken in ["s07.yaml", "s23.yaml"] {
        let path = dir.path().join(broken);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replacen("steps:", "stepz:", 1)).unwrap();
    }
    std::fs::remove_file(dir.path().join("s15.yaml")).unwrap();
    std::os::unix::fs::symlink("/nonexistent", dir.path().join("s15.yaml")).unwrap();
    let out = common::run_in(dir.path(), &["validate", "."], &[]);
    assert_no_panic(&out, "large folder");
    assert_eq!(out.code, 2, "{out:?}");
    let files: Vec<&str> = out
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix(" --> ./"))
        .collect();
    assert_eq!(
        files,
        ["s07.yaml:2:1", "s15.yaml", "s23.yaml:2:1"],
        "{}",
        out.stderr
    );
    assert!(out.stderr.ends_with("3 errors found\n"), "{}", out.stderr);
}

/// A long scenario is no mistake: 12,000 steps (2.2 MB, over 250,000 YAML values, the
/// YAML library's default limit) load, up to mcpspec's own limit tied to the file size.
#[test]
fn a_scenario_of_twelve_thousand_steps_loads() {
    let mut text = String::from("scenario: long\nsteps:\n");
    for i in 0..12_000 {
        text.push_str(&format!(
            "  - name: call {i}\n    request: {{ method: tools/call, params: {{ name: echo, arguments: {{ text: \"hi {i}\" }} }} }}\n    expect:\n      - {{ path: \"$.content[0].text\", equals: \"hi {i}\" }}\n"
        ));
    }
    let (_dir, path) = common::scenario_file("long.yaml", &text);
    let out = run(&["validate", path.to_str().unwrap()]);
    assert_no_panic(&out, "long scenario");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("12000 step(s)"), "{out:?}");
}

// A typo in `eras:`, a JSONPath without `$`, indentation mistakes: tests/cases/era-typo-and-jsonpath-without-root/,
// tests/cases/indentation-errors-say-how-to-indent/.

/// NEL, LS and PS are content to YAML 1.2, not line breaks: one right after a flow
/// collection or a quoted scalar is a syntax error there (`a: [b]` and a PS: 9 bytes),
/// refused with its position by `validate`, by `run` before any server starts, and as
/// the configuration file (`mcpspec.yaml`) — never a panic (issue #40: exit 101).
#[test]
fn a_unicode_line_separator_after_a_value_is_refused_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    for value in ["a: [b]", "a: \"b\"", "a: 'b'", "a: {b: c}"] {
        for separator in ['\u{85}', '\u{2028}', '\u{2029}'] {
            let what = format!("{value:?} + U+{:04X}", separator as u32);
            let text = format!("{value}{separator}");
            let path = dir.path().join("s.yaml");
            std::fs::write(&path, &text).unwrap();
            let input = path.to_str().unwrap();
            let validated = run(&["validate", input]);
            assert_no_panic(&validated, &what);
            assert_eq!(validated.code, 2, "{what}: {validated:?}");
            assert!(
                validated.stderr.contains(&format!("--> {input}:1:")),
                "{what}: {validated:?}"
            );
            let probe = StartProbe::new();
            let ran = run(&["run", input, "--stdio", &probe.command()]);
            assert_no_panic(&ran, &what);
            assert_eq!(ran.code, 2, "{what}: {ran:?}");
            assert!(!probe.started(), "{what}: a server was started");
            let project = tempfile::tempdir().unwrap();
            std::fs::write(project.path().join("mcpspec.yaml"), &text).unwrap();
            // `validate` with no paths checks the project's configuration.
            let configured = common::run_in(project.path(), &["validate"], &[]);
            assert_no_panic(&configured, &what);
            assert_eq!(configured.code, 2, "{what}: {configured:?}");
            assert!(
                configured.stderr.contains("--> mcpspec.yaml:1:"),
                "{what}: {configured:?}"
            );
        }
    }
}

/// A plain value a YAML 1.1 reader reads otherwise (`yes`, `0127`) is read as YAML 1.2
/// reads it — text, the integer 127 — and `validate` warns where it is (exit 0).
#[test]
fn validate_warns_where_a_yaml_1_1_reader_would_read_a_value_otherwise() {
    let (_dir, path) = common::scenario_file(
        "w.yaml",
        "scenario: w\nsteps:\n  - name: a\n    request:\n      method: tools/call\n      params: { name: echo, arguments: { text: yes, n: 0127 } }\n",
    );
    let input = path.to_str().unwrap();
    let out = run(&["validate", input]);
    assert_no_panic(&out, "YAML 1.1 values");
    assert_eq!(out.code, 0, "{out:?}");
    for (what, at) in [
        (
            "`yes` is read as YAML 1.2 reads it; a YAML 1.1 reader would read the boolean true",
            48,
        ),
        (
            "`0127` is read as YAML 1.2 reads it; a YAML 1.1 reader would read an octal integer",
            56,
        ),
    ] {
        assert!(
            out.stderr
                .contains(&format!("warning: {what}\n --> {input}:6:{at}\n")),
            "{out:?}"
        );
    }
    let json = run(&["validate", input, "--format", "json"]);
    assert_eq!(json.code, 0, "{json:?}");
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["warnings"].as_array().map(Vec::len), Some(3), "{doc}");
}
