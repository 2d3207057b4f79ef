//! Golden responses (`snapshot` expectations), as data: `tests/snapshots/golden.yaml` and
//! its committed files under `tests/snapshots/__snapshots__/golden/` run against the
//! example server. A seeded contract change fails with a diff; `--update-snapshots` writes
//! (a temp copy); a secret never lands in a snapshot file.

mod common;

use std::path::Path;

use common::{repo_root, run_in, stdio_target};

const SCENARIO: &str = "tests/snapshots/golden.yaml";
const FILES: &str = "tests/snapshots/__snapshots__/golden";

fn run_golden(dir: &Path, server_flags: &[&str], extra: &[&str]) -> common::Run {
    let target = stdio_target(server_flags);
    let mut args = vec!["run", "golden.yaml", "--stdio", &target];
    args.extend(extra);
    run_in(dir, &args, &[])
}

/// A copy of the scenario and its snapshot files in a temp dir.
fn temp_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo_root().join(SCENARIO), dir.path().join("golden.yaml")).unwrap();
    let files = dir.path().join("__snapshots__/golden");
    std::fs::create_dir_all(&files).unwrap();
    for entry in std::fs::read_dir(repo_root().join(FILES)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), files.join(entry.file_name())).unwrap();
    }
    dir
}

fn snapshot_texts(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn committed_snapshots_match_and_volatile_parts_are_sanitized() {
    let scenario_dir = repo_root().join("tests/snapshots");
    let before = snapshot_texts(&repo_root().join(FILES));
    // Twice: the note's id is fresh each run; and once with ids of another shape.
    for flags in [&[][..], &[], &["--defect", "sequential-handles"]] {
        let r = run_golden(&scenario_dir, flags, &[]);
        assert_eq!(r.code, 0, "{flags:?}:\n{}", r.all_output());
        assert!(r.stdout.contains("5 passed"), "{}", r.stdout);
    }
    // Judging never writes.
    assert_eq!(snapshot_texts(&repo_root().join(FILES)), before);
    // The files hold placeholders, sorted keys and a final newline.
    for (name, text) in &before {
        assert!(text.ends_with("}\n") || text.ends_with("]\n"), "{name}");
    }
    let note = &before.iter().find(|(n, _)| n == "note.json").unwrap().1;
    assert!(note.contains(r#""id": "<id>""#), "{note}");
    let echo = &before
        .iter()
        .find(|(n, _)| n == "echo-stamped.json")
        .unwrap()
        .1;
    assert!(echo.contains("at <timestamp>, request <uuid>"), "{echo}");
    assert!(before.iter().any(|(n, _)| n == "quotient@legacy.json"));
}

#[test]
fn a_changed_response_fails_with_a_diff_and_update_accepts_it() {
    let dir = temp_copy();
    let files = dir.path().join("__snapshots__/golden");
    let before = snapshot_texts(&files);
    let r = run_golden(dir.path(), &["--change", "add-tool"], &[]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    let out = &r.stdout;
    assert!(out.contains("the response differs from snapshot"), "{out}");
    assert!(out.contains("diff (- expected, + actual):"), "{out}");
    assert!(out.contains(r#"+  "multiply","#), "{out}");
    assert!(out.contains("4 passed, 1 failed"), "{out}");
    assert_eq!(
        snapshot_texts(&files),
        before,
        "a failing run writes nothing"
    );

    // Accept the change, and write a removed file anew.
    std::fs::remove_file(files.join("weather-boston.json")).unwrap();
    let r = run_golden(
        dir.path(),
        &["--change", "add-tool"],
        &["--update-snapshots"],
    );
    assert_eq!(r.code, 0, "{}", r.all_output());
    assert!(
        r.stderr
            .contains("snapshot updated: __snapshots__/golden/tool-names.json"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("snapshot written: __snapshots__/golden/weather-boston.json"),
        "{}",
        r.stderr
    );
    // Written by rename: no temporary file is left behind.
    let left: Vec<String> = snapshot_texts(&files).into_iter().map(|(n, _)| n).collect();
    assert!(left.iter().all(|n| n.ends_with(".json")), "{left:?}");
    let names = std::fs::read_to_string(files.join("tool-names.json")).unwrap();
    assert!(
        names.contains("multiply") && names.ends_with("]\n"),
        "{names}"
    );
    let weather = &before
        .iter()
        .find(|(n, _)| n == "weather-boston.json")
        .unwrap()
        .1;
    assert_eq!(
        &std::fs::read_to_string(files.join("weather-boston.json")).unwrap(),
        weather,
        "the same response writes the same text"
    );
    // Accepted: the changed server now passes, the original one fails.
    let r = run_golden(dir.path(), &["--change", "add-tool"], &[]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    let r = run_golden(dir.path(), &[], &[]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    assert!(r.stdout.contains(r#"-  "multiply","#), "{}", r.stdout);
}

#[test]
fn a_missing_snapshot_fails_unless_updating() {
    let dir = temp_copy();
    let files = dir.path().join("__snapshots__/golden");
    std::fs::remove_file(files.join("quotient@legacy.json")).unwrap();
    let r = run_golden(dir.path(), &[], &[]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    assert!(
        r.stdout.contains(
            "no snapshot __snapshots__/golden/quotient@legacy.json; run with --update-snapshots to write it"
        ),
        "{}",
        r.stdout
    );
    assert!(!files.join("quotient@legacy.json").exists());
}

// A secret never lands in a snapshot file; two eras writing one snapshot need `perEra`:
// tests/cases/snapshot-*/.
