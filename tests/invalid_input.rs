//! Invalid input is rejected with exit 2 and a precise diagnostic, never a panic.
//!
//! Each case is `tests/invalid/NAME.yaml` (or a folder `tests/invalid/NAME/` for problems
//! that span files) with its expected stderr in `tests/invalid/NAME.stderr`.
//! Regenerate the goldens with `UPDATE_GOLDEN=1 cargo test --workspace --test invalid_input`
//! and review the diff.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{Run, repo_root, run};

/// Every case, with what it shows. Keep in sync with the files in tests/invalid/.
const CASES: &[(&str, &str)] = &[
    ("syntax", "invalid YAML syntax"),
    ("unknown-key", "an unknown key, with did-you-mean"),
    ("wrong-type", "a value of the wrong type"),
    ("missing-key", "a missing required key"),
    ("bad-jsonpath", "a JSONPath that does not parse"),
    ("bad-regex", "a regular expression that does not compile"),
    ("bad-schema", "an inline JSON Schema that is not a schema"),
    ("missing-schema-file", "a schemaFile that cannot be read"),
    (
        "undefined-var",
        "an undefined template variable, with did-you-mean",
    ),
    ("bad-era", "an era that does not exist"),
    ("bad-timeout", "a timeout that is not a duration"),
    (
        "bad-duration",
        "duration bounds that are no durations, none, mixed or on a handshake",
    ),
    ("two-actions", "a step with two actions"),
    ("mixed-kinds", "an expectation mixing kinds"),
    ("duplicate-step", "a duplicate step name"),
    ("duplicate-id", "the same scenario id in two files"),
    (
        "several-errors",
        "several problems in one file, all reported",
    ),
    (
        "structural-errors",
        "several wrong types and unknown keys in one file, all reported in DSL words",
    ),
    ("empty-length", "a length comparison without any bound"),
    ("pack-cycle", "packs importing each other, with the chain"),
    (
        "pack-version-conflict",
        "two versions of one pack, and an unmet version range",
    ),
    (
        "pack-unknown-param",
        "a `with:` value for an undeclared parameter, with did-you-mean",
    ),
    (
        "pack-type-mismatch",
        "parameter values (default, `with:`) of the wrong type",
    ),
    ("group-missing", "a call of an undefined step group"),
    (
        "group-bad-args",
        "bad group arguments, and an error inside a group naming its callers",
    ),
    (
        "bad-requires",
        "supportedVersions that are no eras, a handshake header that is no header name",
    ),
    (
        "bad-check-feature",
        "a deprecated_feature_unused check without its feature, a feature on another check",
    ),
    (
        "bad-defined",
        "`requires: {defined}` with an undefined variable, a syntax error, an empty reason",
    ),
    (
        "bad-notifications",
        "`count` outside `notifications`, predicates without a path, a bad `within`, a handshake step",
    ),
    (
        "out-of-range",
        "a timeout, retry interval and counts beyond their documented ranges",
    ),
    (
        "deep-jsonpath",
        "a JSONPath nested 4,000 parentheses deep (it overflowed the stack)",
    ),
    ("deep-yaml", "a YAML value nested 5,000 levels deep"),
    ("deep-template", "a template nested 4,000 parentheses deep"),
    (
        "bad-utf8",
        "a byte that is not UTF-8, at its line and column with the text around it",
    ),
    (
        "schema-file-device",
        "a schemaFile that is a device (/dev/zero), not a regular file",
    ),
    (
        "unknown-check-kind",
        "a misspelt built-in check, named with the closest valid one",
    ),
    (
        "bad-snapshot",
        "snapshot sanitizers: an unknown built-in, a bad regex and JSONPath; a name that is no file name; misplaced keys",
    ),
    (
        "bad-sanitizer-shape",
        "a snapshot sanitizer that is neither a built-in, a path nor a regex",
    ),
];

const INVALID_DIR: &str = "tests/invalid";

fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| !v.is_empty() && v != "0")
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

/// Compare `actual` to the golden file, or rewrite it under UPDATE_GOLDEN=1.
fn check_golden(path: &Path, actual: &str, what: &str) -> Result<(), String> {
    if updating() {
        std::fs::write(path, actual).expect("write golden");
        return Ok(());
    }
    let expected = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read {}: {e}\nrun `UPDATE_GOLDEN=1 cargo test --workspace --test invalid_input` to create it",
            path.display()
        )
    })?;
    if expected == actual {
        Ok(())
    } else {
        Err(format!(
            "{what}: stderr differs from {}\n--- expected\n{expected}\n--- actual\n{actual}\n(UPDATE_GOLDEN=1 regenerates the golden files)",
            path.display()
        ))
    }
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

#[test]
fn cases_and_files_agree() {
    let listed: BTreeSet<String> = CASES.iter().map(|(n, _)| n.to_string()).collect();
    let mut on_disk = BTreeSet::new();
    for entry in std::fs::read_dir(repo_root().join(INVALID_DIR)).expect("tests/invalid") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            on_disk.insert(name);
        } else if let Some(stem) = name.strip_suffix(".yaml") {
            on_disk.insert(stem.to_string());
        } else if let Some(stem) = name.strip_suffix(".stderr") {
            assert!(
                listed.contains(stem),
                "{name}: golden file of no case (remove it or add the case to CASES)"
            );
        }
    }
    assert_eq!(
        on_disk, listed,
        "tests/invalid/ holds exactly the cases in CASES"
    );
}

#[test]
fn validate_rejects_each_invalid_file_with_its_golden_diagnostic() {
    let mut problems = Vec::new();
    for (name, what) in CASES {
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
        if let Err(e) = check_golden(&golden_path(name), &out.stderr, what) {
            problems.push(e);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// `run` loads before it connects: the same diagnostics, exit 2, no server started.
#[test]
fn run_rejects_invalid_files_before_starting_a_server() {
    for (name, what) in CASES {
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
        if !updating() {
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
