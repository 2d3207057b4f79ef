//! `mcpspec eval compare` as data: each folder `tests/eval_compare/<case>/` holds two results
//! files (`base.json`, `candidate.json`, written by `gen.py`), the extra arguments (`args`),
//! the expected exit code (`exit`) and the expected output (`expected.out`: stdout, then
//! stderr after a `--- stderr` line when there is any). Cases are found by glob.
//! Regenerate the outputs with `UPDATE_GOLDEN=1 cargo test --test eval_compare` and review
//! the diff; `exit` is the intent of a case and is never regenerated.

mod common;

use std::path::{Path, PathBuf};

use common::{Run, repo_root, run_in};

const DIR: &str = "tests/eval_compare";

fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| !v.is_empty() && v != "0")
}

fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(repo_root().join(DIR))
        .expect("tests/eval_compare exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("args").is_file())
        .collect();
    cases.sort();
    cases
}

fn compare(dir: &Path, extra: &[&str]) -> Run {
    let args_text = std::fs::read_to_string(dir.join("args")).unwrap();
    let mut args = vec!["eval", "compare", "base.json", "candidate.json"];
    args.extend(args_text.split_whitespace());
    args.extend(extra);
    run_in(dir, &args, &[])
}

fn rendered(r: &Run) -> String {
    if r.stderr.is_empty() {
        r.stdout.clone()
    } else {
        format!("{}--- stderr\n{}", r.stdout, r.stderr)
    }
}

#[test]
fn every_case_gives_its_output_and_exit_code() {
    let cases = cases();
    assert!(cases.len() >= 10, "cases found: {cases:?}");
    let mut failures = Vec::new();
    for dir in &cases {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let r = compare(dir, &[]);
        let want_exit: i32 = std::fs::read_to_string(dir.join("exit"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        if r.code != want_exit {
            failures.push(format!(
                "{name}: exit {} (expected {want_exit})\n{r:?}",
                r.code
            ));
        }
        assert!(
            !r.stderr.contains("panicked"),
            "{name}: mcpspec panicked\n{r:?}"
        );
        let got = rendered(&r);
        let golden = dir.join("expected.out");
        if updating() {
            std::fs::write(&golden, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&golden)
            .unwrap_or_else(|_| panic!("{name}: no expected.out (UPDATE_GOLDEN=1 writes it)"));
        if got != want {
            failures.push(format!(
                "{name}: output differs\n--- expected\n{want}\n--- got\n{got}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The JUnit report is valid, has a testcase per task and a failure per regressed task.
#[test]
fn junit_has_a_failure_per_regression() {
    let dir = repo_root().join(DIR).join("calls-doubled");
    let tmp = tempfile::tempdir().unwrap();
    let junit = tmp.path().join("compare.xml");
    let r = compare(&dir, &["--junit", junit.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    common::assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    // The task, and the total (4 → 6 calls per pass of the set, +50%).
    assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
    assert!(
        xml.contains(r#"<testcase name="forecast" classname="eval.weather""#),
        "{xml}"
    );
    assert!(xml.contains("tool calls per trial 2 → 4"), "{xml}");
    // A clean comparison: no failure at all.
    let dir = repo_root().join(DIR).join("unchanged");
    let r = compare(&dir, &["--junit", junit.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    common::assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<failure").count(), 0, "{xml}");
    assert_eq!(xml.matches("<testcase").count(), 4 + 3, "{xml}");
}

/// `--junit-flavor jenkins`: the comparison (test-case properties in the default flavour)
/// is valid against the Jenkins xUnit plugin's junit-10.xsd; the default one is not.
#[test]
fn junit_jenkins_flavor_is_valid_against_junit_10() {
    let dir = repo_root().join(DIR).join("calls-doubled");
    let tmp = tempfile::tempdir().unwrap();
    let strict = tmp.path().join("strict.xml");
    let r = compare(
        &dir,
        &[
            "--junit",
            strict.to_str().unwrap(),
            "--junit-flavor",
            "jenkins",
        ],
    );
    assert_eq!(r.code, 1, "{r:?}");
    common::assert_valid_junit_10(&strict);
    let xml = std::fs::read_to_string(&strict).unwrap();
    assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
    let default = tmp.path().join("default.xml");
    let r = compare(&dir, &["--junit", default.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    common::assert_valid_junit(&default);
    assert!(
        common::xmllint_against(&default, common::JUNIT_10_XSD).is_err(),
        "the default flavour is valid against junit-10.xsd"
    );
}

/// `--json FILE` writes the same document `--json -` prints, and it parses.
#[test]
fn json_file_matches_json_stdout() {
    let dir = repo_root().join(DIR).join("regressed");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("compare.json");
    let r = compare(&dir, &["--json", file.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["format"], "mcpspec-eval-compare/1");
    assert_eq!(doc["regression"], true);
    assert_eq!(doc["counts"]["regressed"], 1);
    let stdout = compare(&dir, &["--json", "-"]);
    let doc2: serde_json::Value = serde_json::from_str(&stdout.stdout).unwrap();
    assert_eq!(doc, doc2);
}
