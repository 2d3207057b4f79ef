//! The HTML report and the SARIF security findings, end to end against the example server
//! over HTTP with a seeded security defect (`--defect allow-any-origin`).
//!
//! The HTML is opened in a real headless Chromium (Debian's `chromium`, installed by
//! `scripts/test`): it renders, its script runs without a console error, and the failure
//! details are open in the rendered DOM.

mod common;

use std::path::Path;
use std::process::Command;

use common::{HttpServer, read_json, repo_root, run_in};

const SECRET: &str = "s3cr3t-html-report-value-91";

/// A scenario that fails with the secret in its expected value (so the report must mask it),
/// and one that passes; the case folder also shows what the HTML report holds.
const SCENARIO: &str = "tests/cases/html-report-redacted-and-self-contained/demo.yaml";

struct Reports {
    _dir: tempfile::TempDir,
    html_path: std::path::PathBuf,
    sarif: serde_json::Value,
}

fn run_reports(defects: &[&str], sarif_source: Option<&str>) -> Reports {
    let mut flags = Vec::new();
    for d in defects {
        flags.extend(["--defect", d]);
    }
    let server = HttpServer::start(&flags);
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo_root().join(SCENARIO), dir.path().join("demo.yaml")).unwrap();
    let mut args = vec![
        "run",
        "demo.yaml",
        "security",
        "--filter",
        "html-demo*",
        "--filter",
        "security-exposure*",
        "--url",
        &server.url,
        "--set",
        "api_token=env:HTML_REPORT_SECRET",
        "--html",
        "out/report.html",
        "--sarif",
        "out/findings.sarif",
    ];
    if let Some(source) = sarif_source {
        args.extend(["--sarif-source", source]);
    }
    let run = run_in(dir.path(), &args, &[("HTML_REPORT_SECRET", SECRET)]);
    let html_path = dir.path().join("out/report.html");
    assert!(html_path.is_file(), "no HTML report: {}", run.all_output());
    let sarif = read_json(&dir.path().join("out/findings.sarif"));
    Reports {
        _dir: dir,
        html_path,
        sarif,
    }
}

// What the HTML report holds: tests/cases/html-report-redacted-and-self-contained/.

#[test]
fn html_report_renders_in_headless_chromium_without_console_errors() {
    let r = run_reports(&["allow-any-origin"], None);
    let profile = tempfile::tempdir().unwrap();
    let (dom, log) = chromium(&r.html_path, profile.path(), &["--dump-dom"]);
    assert!(
        dom.contains("data-ready=\"1\""),
        "the report's script did not run to its end:\n{log}"
    );
    assert!(
        dom.contains("<button type=\"button\" data-status=\"FAIL\""),
        "the status filter was not built:\n{dom}"
    );
    // The failure details are open in the rendered page.
    assert!(
        dom.contains("data-status=\"failed\" open=\"\"")
            || dom.contains("data-status=\"failed\" open>")
    );
    for line in log.lines() {
        assert!(
            !(line.contains("CONSOLE") && (line.contains("Uncaught") || line.contains("Error"))),
            "console error while rendering the report: {line}"
        );
    }
    let shot = profile.path().join("shot.png");
    let arg = format!("--screenshot={}", shot.display());
    let _ = chromium(
        &r.html_path,
        profile.path(),
        &[&arg, "--window-size=1200,900"],
    );
    let png = std::fs::read(&shot).expect("a screenshot was written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 5_000,
        "a real picture: {} bytes",
        png.len()
    );
}

#[test]
fn sarif_lists_security_findings_only_with_levels_and_locations() {
    let r = run_reports(&["allow-any-origin"], Some("src/server.rs"));
    let sarif = &r.sarif;
    assert_eq!(sarif["version"], "2.1.0");
    let run = &sarif["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "mcpspec");
    let results = run["results"].as_array().expect("results");
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"security-exposure/foreign_origin_rejected"),
        "the seeded defect is a finding: {ids:?}"
    );
    assert!(
        !ids.iter().any(|id| id.starts_with("html-demo/")),
        "a non-security scenario's failure is not a security finding: {ids:?}"
    );
    for result in results {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            rules[index]["id"], result["ruleId"],
            "ruleIndex points at the rule"
        );
        assert!(["error", "warning", "note"].contains(&result["level"].as_str().unwrap()));
        let location = &result["locations"][0]["physicalLocation"];
        assert_eq!(location["artifactLocation"]["uri"], "src/server.rs");
        assert_eq!(location["region"]["startLine"], 1);
        assert!(result["partialFingerprints"]["mcpspecCheck/v1"].is_string());
    }
    let origin = results
        .iter()
        .find(|r| r["ruleId"] == "security-exposure/foreign_origin_rejected")
        .unwrap();
    assert_eq!(origin["level"], "error", "a failed MUST is an error");
    assert!(!serde_json::to_string(sarif).unwrap().contains(SECRET));
}

#[test]
fn sarif_of_a_sound_server_has_no_findings_and_points_at_the_scenario_by_default() {
    let r = run_reports(&[], None);
    let results = r.sarif["runs"][0]["results"].as_array().expect("results");
    // Over plain HTTP without auth the security pack has nothing that fails.
    let errors: Vec<_> = results.iter().filter(|r| r["level"] == "error").collect();
    assert!(
        errors.is_empty(),
        "a sound server has no security errors: {errors:?}"
    );
    for result in results {
        let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(
            uri.ends_with(".yaml"),
            "default location is the scenario file: {uri}"
        );
    }
}

/// Run Debian's headless Chromium on a local file; returns (stdout, stderr).
/// `MCPSPEC_TEST_CHROMIUM` names another Chromium-based browser (the release workflow's
/// macOS and Windows runners have Google Chrome).
fn chromium(page: &Path, profile: &Path, extra: &[&str]) -> (String, String) {
    let browser = std::env::var("MCPSPEC_TEST_CHROMIUM")
        .ok()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| "chromium".into());
    // `file:///C:/…` on Windows, `file:///tmp/…` elsewhere.
    let url = format!(
        "file:///{}",
        page.display()
            .to_string()
            .replace('\\', "/")
            .trim_start_matches('/')
    );
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "chromium is not installed, so the HTML report cannot be tested in a browser: \
             install Debian's chromium (`apt-get install -y chromium`; scripts/test does)"
        ),
        Err(e) => panic!("cannot run chromium: {e}"),
    };
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
