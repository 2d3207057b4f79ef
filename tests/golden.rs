//! Golden reports: a fixed set of scenarios (`tests/golden/scenarios/`, with passing,
//! failing, warning, skipped and errored steps) runs against the stdio example server in
//! both eras; the console output (plain and `-v`) and the JUnit XML must equal the golden
//! files in `tests/golden/` once durations, timestamps, the server path and the mcpspec
//! version are masked. Every JUnit report produced here is also validated against
//! `tests/junit/junit.xsd` with xmllint (package libxml2-utils).
//!
//! Regenerate the goldens with `UPDATE_GOLDEN=1 cargo test --workspace --test golden` and
//! review the diff.

mod common;

use std::path::PathBuf;

use common::{Run, assert_valid_junit, example_server, repo_root, run, stdio_target, xmllint};
use regex::Regex;

const SCENARIOS: &str = "tests/golden/scenarios";
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn golden(name: &str) -> PathBuf {
    repo_root().join("tests/golden").join(name)
}

/// Compare `actual` with a golden file of tests/golden/ (or rewrite it under UPDATE_GOLDEN=1).
fn check_golden(name: &str, actual: &str) {
    if let Err(e) = common::check_golden(&golden(name), actual) {
        panic!("{e}");
    }
}

/// Mask what varies between runs and machines in console output.
fn mask_console(text: &str) -> String {
    let durations = Regex::new(r"\b\d+\.\d{3}s\b").unwrap();
    let text = durations.replace_all(text, "<T>");
    mask_common(&text)
}

/// Mask what varies between runs and machines in JUnit XML.
fn mask_xml(text: &str) -> String {
    let time = Regex::new(r#"\btime="[^"]*""#).unwrap();
    let timestamp = Regex::new(r#"\btimestamp="[^"]*""#).unwrap();
    let text = time.replace_all(text, r#"time="<T>""#);
    let text = timestamp.replace_all(&text, r#"timestamp="<TIMESTAMP>""#);
    mask_common(&text)
}

fn mask_common(text: &str) -> String {
    let server = example_server().display().to_string();
    text.replace(&server, "<SERVER>")
        .replace(VERSION, "<VERSION>")
}

/// One run of the golden scenarios, its JUnit report kept in a temp dir.
struct GoldenRun {
    out: Run,
    junit: PathBuf,
    _dir: tempfile::TempDir,
}

fn golden_run(extra: &[&str]) -> GoldenRun {
    let dir = tempfile::tempdir().expect("tempdir");
    let junit = dir.path().join("report.xml");
    let junit_arg = junit.display().to_string();
    let target = stdio_target(&[]);
    let mut args = vec![
        "run",
        SCENARIOS,
        "--stdio",
        &target,
        "--era",
        "legacy",
        "--era",
        "2026-07-28",
        "--timeout",
        "5s",
        "--junit",
        &junit_arg,
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert!(!out.all_output().contains("panicked"), "{out:?}");
    assert!(junit.exists(), "no JUnit report written: {out:?}");
    GoldenRun {
        out,
        junit,
        _dir: dir,
    }
}

#[test]
fn console_and_junit_match_the_goldens() {
    let g = golden_run(&[]);
    // Failures and errors in the scenarios: exit 1, nothing on stderr.
    assert_eq!(g.out.code, 1, "{:?}", g.out);
    assert_eq!(g.out.stderr, "", "{:?}", g.out);

    assert_valid_junit(&g.junit);
    let xml = std::fs::read_to_string(&g.junit).expect("junit");
    // The masks hide real values: check they were there to hide.
    assert!(
        xml.contains(&format!(
            r#"<property name="mcpspec.version" value="{VERSION}"/>"#
        )),
        "{xml}"
    );
    assert!(
        xml.contains(&format!(
            r#"<property name="target" value="stdio: {}"/>"#,
            example_server().display()
        )),
        "{xml}"
    );
    let masked = mask_xml(&xml);
    assert!(!masked.contains(&example_server().display().to_string()));
    check_golden("run.junit.xml", &masked);
    check_golden("run.console.txt", &mask_console(&g.out.stdout));
}

#[test]
fn verbose_console_matches_the_golden() {
    let g = golden_run(&["--verbose"]);
    assert_eq!(g.out.code, 1, "{:?}", g.out);
    assert_eq!(g.out.stderr, "", "{:?}", g.out);
    check_golden("run.verbose.txt", &mask_console(&g.out.stdout));
    // `-v` changes the console only: the JUnit report is the same (once masked).
    assert_valid_junit(&g.junit);
    let xml = std::fs::read_to_string(&g.junit).expect("junit");
    if !common::updating_golden() {
        let expected = std::fs::read_to_string(golden("run.junit.xml")).expect("golden");
        assert_eq!(
            mask_xml(&xml),
            expected,
            "-v must not change the JUnit report"
        );
    }
}

/// A server that exits at start: every suite is a setup error with a `connect` test case.
/// The message depends on how the process died (a race between write and exit), so this
/// report is validated, not compared with a golden file.
#[test]
fn setup_error_report_is_valid_junit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let junit = dir.path().join("report.xml");
    let junit_arg = junit.display().to_string();
    let target = stdio_target(&["--defect", "exit-at-start"]);
    let out = run(&[
        "run",
        "tests/golden/scenarios/2-passing.yaml",
        "--stdio",
        &target,
        "--era",
        "legacy",
        "--era",
        "2026-07-28",
        "--timeout",
        "5s",
        "--junit",
        &junit_arg,
    ]);
    assert_eq!(out.code, 4, "the server could not be started: {out:?}");
    assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).expect("junit");
    assert!(
        xml.contains(r#"<testsuites name="mcpspec" tests="2" skipped="0" failures="0" errors="2""#),
        "{xml}"
    );
    for era in ["legacy", "2026-07-28"] {
        assert!(
            xml.contains(&format!(
                r#"<testcase name="connect" classname="golden-passing@{era}""#
            )),
            "{xml}"
        );
    }
    assert_eq!(
        xml.matches(r#"<error message="the server did not start"#)
            .count(),
        2,
        "{xml}"
    );
}

/// The expectation scenarios produce every failure kind, warnings and skips: their JUnit
/// reports are valid too.
#[test]
fn expectation_reports_are_valid_junit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = stdio_target(&["--page-size", "2"]);
    for (file, code) in [
        ("tests/expectations/pass.yaml", 0),
        ("tests/expectations/fail.yaml", 1),
        ("tests/expectations/should.yaml", 0),
    ] {
        let junit = dir.path().join("report.xml");
        let junit_arg = junit.display().to_string();
        let out = run(&[
            "run",
            file,
            "--stdio",
            &target,
            "--era",
            "legacy",
            "--era",
            "2026-07-28",
            "--timeout",
            "5s",
            "--junit",
            &junit_arg,
        ]);
        assert_eq!(out.code, code, "{file}: {out:?}");
        assert_valid_junit(&junit);
        let xml = std::fs::read_to_string(&junit).expect("junit");
        let steps = out
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("Summary: 2 suites, "))
            .and_then(|l| l.split(' ').next())
            .expect("summary line");
        assert!(
            xml.contains(&format!(r#"<testsuites name="mcpspec" tests="{steps}""#)),
            "{file}: one test case per step"
        );
        assert_eq!(
            xml.matches("<testcase ").count().to_string(),
            steps,
            "{file}"
        );
    }
}

/// The XSD is not a rubber stamp: xmllint accepts a minimal report and rejects reports
/// that break the structure.
#[test]
fn xsd_accepts_minimal_and_rejects_malformed_reports() {
    let dir = tempfile::tempdir().expect("tempdir");
    let check = |name: &str, body: &str| -> Result<(), String> {
        let path = dir.path().join(format!("{name}.xml"));
        std::fs::write(
            &path,
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{body}\n"),
        )
        .expect("write");
        xmllint(&path)
    };
    let ok = r#"<testsuites name="x" tests="2" failures="1" errors="0" skipped="0" time="0.010" timestamp="2026-01-02T03:04:05.678+00:00">
  <testsuite name="s@legacy" tests="2" failures="1" errors="0" skipped="0" time="0.010" timestamp="2026-01-02T03:04:05.678+00:00">
    <properties><property name="era" value="legacy"/></properties>
    <testcase name="a" classname="s@legacy" time="0.001" file="s.yaml" line="3"/>
    <testcase name="b" classname="s@legacy" time="0.001" file="s.yaml" line="7">
      <failure message="m" type="path">details</failure>
      <system-out>--&gt; {}</system-out>
      <system-err>WARNING: w</system-err>
    </testcase>
    <system-err>server stderr</system-err>
  </testsuite>
</testsuites>"#;
    check("ok", ok).expect("a minimal report is valid");

    let broken = [
        (
            "no-classname",
            ok.replace(r#"name="a" classname="s@legacy" "#, r#"name="a" "#),
        ),
        (
            "two-outcomes",
            ok.replace(
                r#"<failure message="m" type="path">details</failure>"#,
                r#"<failure message="m">x</failure><error message="e">y</error>"#,
            ),
        ),
        (
            "count-not-a-number",
            ok.replace(
                r#"tests="2" failures="1" errors="0" skipped="0" time="0.010" timestamp"#,
                r#"tests="two" failures="1" errors="0" skipped="0" time="0.010" timestamp"#,
            ),
        ),
        (
            "negative-time",
            ok.replace(
                r#"time="0.001" file="s.yaml" line="3""#,
                r#"time="-1" file="s.yaml" line="3""#,
            ),
        ),
        (
            "bad-timestamp",
            ok.replace(
                "2026-01-02T03:04:05.678+00:00\">\n  <testsuite",
                "yesterday\">\n  <testsuite",
            ),
        ),
        ("line-zero", ok.replace(r#"line="3""#, r#"line="0""#)),
        (
            "unknown-element",
            ok.replace(
                "<system-err>server stderr</system-err>",
                "<stderr>x</stderr>",
            ),
        ),
        (
            "out-of-order",
            ok.replace(
                "<system-out>--&gt; {}</system-out>\n      <system-err>WARNING: w</system-err>",
                "<system-err>WARNING: w</system-err>\n      <system-out>--&gt; {}</system-out>",
            ),
        ),
        (
            "property-without-value",
            ok.replace(
                r#"<property name="era" value="legacy"/>"#,
                r#"<property name="era"/>"#,
            ),
        ),
        (
            "suite-without-tests",
            ok.replace(
                r#"<testsuite name="s@legacy" tests="2" "#,
                r#"<testsuite name="s@legacy" "#,
            ),
        ),
    ];
    for (name, body) in broken {
        assert_ne!(body, ok, "{name}: the mutation applies");
        assert!(
            check(name, &body).is_err(),
            "{name}: the XSD must reject it:\n{body}"
        );
    }
}
