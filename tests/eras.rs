//! Era negotiation against the example server (legacy 2025-11-25 with `initialize`,
//! modern 2026-07-28 with per-request `_meta`), over stdio and HTTP.

mod common;

use std::path::PathBuf;

use common::{
    HttpServer, Run, assert_contains, read_json, repo_root, run, stdio_target, step, suite,
};
use serde_json::Value;

#[derive(Clone, Copy, Debug)]
enum Transport {
    Stdio,
    Http,
}

const BOTH: [Transport; 2] = [Transport::Stdio, Transport::Http];

/// Target arguments, keeping the HTTP server alive as long as needed.
struct Target {
    args: Vec<String>,
    _server: Option<HttpServer>,
}

fn target(transport: Transport) -> Target {
    match transport {
        Transport::Stdio => Target {
            args: vec!["--stdio".into(), stdio_target(&[])],
            _server: None,
        },
        Transport::Http => {
            let server = HttpServer::start(&[]);
            Target {
                args: vec!["--url".into(), server.url.clone()],
                _server: Some(server),
            }
        }
    }
}

fn scenario(name: &str) -> String {
    repo_root()
        .join("tests/faults")
        .join(name)
        .display()
        .to_string()
}

struct Outcome {
    run: Run,
    /// The JSON report, when the run got far enough to write one.
    report: Option<Value>,
    junit: String,
}

/// `mcpspec run <scenario> <target> --era E… EXTRA --json … --junit …`.
fn run_eras(target: &Target, file: &str, eras: &[&str], extra: &[&str]) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let json: PathBuf = dir.path().join("result.json");
    let junit: PathBuf = dir.path().join("junit.xml");
    let path = scenario(file);
    let mut args: Vec<&str> = vec!["run", &path];
    args.extend(target.args.iter().map(String::as_str));
    for era in eras {
        args.extend(["--era", era]);
    }
    args.extend([
        "--timeout",
        "5s",
        "--json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    args.extend(extra);
    let run = run(&args);
    Outcome {
        report: json.exists().then(|| read_json(&json)),
        junit: std::fs::read_to_string(&junit).unwrap_or_default(),
        run,
    }
}

/// The step's `sent` transcript entry for `method`: (body, HTTP line). (A step may send
/// internal requests too, e.g. a `tools/list` before a `tools/call`.)
fn sent(step: &Value, method: &str) -> (String, String) {
    let needle = format!(r#""method":"{method}""#);
    let entry = step["transcript"]
        .as_array()
        .expect("transcript")
        .iter()
        .find(|e| {
            e["direction"] == "sent" && e["body"].as_str().unwrap_or_default().contains(&needle)
        })
        .unwrap_or_else(|| {
            panic!(
                "no {method} sent in {}: {:#}",
                step["name"], step["transcript"]
            )
        });
    (
        entry["body"].as_str().unwrap_or_default().to_string(),
        entry["http"].as_str().unwrap_or_default().to_string(),
    )
}

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

#[test]
fn legacy_negotiates_2025_11_25_with_a_handshake() {
    for transport in BOTH {
        let t = target(transport);
        let out = run_eras(&t, "healthy.yaml", &["legacy"], &[]);
        assert_eq!(out.run.code, 0, "{transport:?}: {:?}", out.run);
        let report = out.report.expect("report");
        let s = suite(&report, "healthy@legacy");
        assert_eq!(s["era"]["requested"], "legacy", "{transport:?}");
        assert_eq!(s["era"]["negotiated"], "2025-11-25", "{transport:?}");
        assert_eq!(s["era"]["era"], "legacy", "{transport:?}");
        // Legacy requests carry no per-request protocol `_meta`; HTTP uses the session.
        let (body, http) = sent(step(s, "lists tools"), "tools/list");
        assert!(!body.contains(META_VERSION), "{transport:?}: {body}");
        if let Transport::Http = transport {
            assert_contains(&http, "Mcp-Session-Id");
            assert_contains(&http, "MCP-Protocol-Version: 2025-11-25");
        }
        assert_contains(&out.run.stdout, "PASS  healthy@legacy (2025-11-25)");
    }
}

#[test]
fn modern_revision_negotiates_modern_without_a_handshake() {
    for transport in BOTH {
        let t = target(transport);
        let out = run_eras(&t, "healthy.yaml", &["2026-07-28", "modern"], &[]);
        assert_eq!(out.run.code, 0, "{transport:?}: {:?}", out.run);
        let report = out.report.expect("report");
        for id in ["healthy@2026-07-28", "healthy@modern"] {
            let s = suite(&report, id);
            assert_eq!(s["era"]["negotiated"], "2026-07-28", "{transport:?} {id}");
            assert_eq!(s["era"]["era"], "modern", "{transport:?} {id}");
            let (body, http) = sent(step(s, "lists tools"), "tools/list");
            assert_contains(&body, &format!(r#""{META_VERSION}":"2026-07-28""#));
            if let Transport::Http = transport {
                assert_contains(&http, "MCP-Protocol-Version: 2026-07-28");
                assert_contains(&http, "Mcp-Method: tools/list");
                assert!(!http.contains("Mcp-Session-Id"), "{transport:?}: {http}");
            }
        }
    }
}

#[test]
fn auto_negotiates_modern_with_a_note_about_discover() {
    for transport in BOTH {
        let t = target(transport);
        let out = run_eras(&t, "healthy.yaml", &["auto"], &["--verbose"]);
        assert_eq!(out.run.code, 0, "{transport:?}: {:?}", out.run);
        let report = out.report.expect("report");
        let s = suite(&report, "healthy@auto");
        assert_eq!(s["era"]["negotiated"], "2026-07-28", "{transport:?}");
        assert_eq!(s["era"]["era"], "modern", "{transport:?}");
        assert_contains(
            s["era"]["note"].as_str().unwrap_or_default(),
            "server/discover",
        );
        assert_contains(&out.run.stdout, "era: auto: server/discover");
        assert_contains(&out.junit, r#"<property name="era.note""#);
    }
}

#[test]
fn pinned_legacy_revision_fails_when_the_server_counter_offers() {
    for transport in BOTH {
        let t = target(transport);
        let out = run_eras(&t, "healthy.yaml", &["2025-06-18"], &[]);
        assert_eq!(out.run.code, 1, "{transport:?}: {:?}", out.run);
        let report = out.report.expect("report");
        let s = suite(&report, "healthy@2025-06-18");
        assert_eq!(s["setupErrorKind"], "protocol", "{transport:?}: {s:#}");
        let error = s["setupError"].as_str().unwrap_or_default();
        assert_contains(error, "pinned `2025-06-18`");
        assert_contains(error, "`2025-11-25`");
        assert!(s["era"]["negotiated"].is_null(), "{transport:?}: {s:#}");
        assert_contains(&out.run.stdout, "pinned `2025-06-18`");
        assert_contains(&out.junit, r#"<testcase name="connect""#);

        // Pinning the revision the server speaks works.
        let out = run_eras(&t, "healthy.yaml", &["2025-11-25"], &[]);
        assert_eq!(out.run.code, 0, "{transport:?}: {:?}", out.run);
        let report = out.report.expect("report");
        let s = suite(&report, "healthy@2025-11-25");
        assert_eq!(s["era"]["negotiated"], "2025-11-25");
        assert_eq!(s["era"]["era"], "legacy");
    }
}

#[test]
fn unknown_future_revision_is_refused_with_the_servers_supported_list() {
    for transport in BOTH {
        let t = target(transport);
        let out = run_eras(&t, "healthy.yaml", &["2027-01-01"], &[]);
        assert_eq!(out.run.code, 1, "{transport:?}: {:?}", out.run);
        let report = out.report.expect("report");
        let error = suite(&report, "healthy@2027-01-01")["setupError"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert_contains(&error, "the server supports 2025-11-25, 2026-07-28");
        assert_contains(&error, "try --era 2026-07-28");
        assert!(!error.contains("legacy-only"), "{transport:?}: {error}");
    }
}

#[test]
fn impossible_revision_dates_are_invalid_input() {
    let t = target(Transport::Stdio);
    for era in ["2026-13-45", "2025-02-29", "2026-07-32"] {
        let out = run_eras(&t, "healthy.yaml", &[era], &[]);
        assert_eq!(out.run.code, 2, "{era}: {:?}", out.run);
        assert_contains(&out.run.stderr, "is not an era");
    }
}

#[test]
fn legacy_only_scenario_is_not_run_in_a_modern_era() {
    for transport in BOTH {
        let t = target(transport);
        let out = run_eras(&t, "legacy-only.yaml", &["2026-07-28"], &[]);
        assert_eq!(out.run.code, 2, "{transport:?}: {:?}", out.run);
        assert_contains(&out.run.stderr, "no scenario matches");
        assert!(out.report.is_none(), "no run, no report");
    }
}

#[test]
fn legacy_only_scenario_is_skipped_with_a_reason_under_auto() {
    for transport in BOTH {
        let t = target(transport);
        let out = run_eras(&t, "legacy-only.yaml", &["auto"], &[]);
        assert_eq!(out.run.code, 0, "{transport:?}: {:?}", out.run);
        let report = out.report.expect("report");
        let s = suite(&report, "legacy-only@auto");
        let outcome = &step(s, "lists tools")["outcome"];
        assert_eq!(outcome["status"], "skipped", "{transport:?}: {outcome:#}");
        let reason = outcome["reason"].as_str().unwrap_or_default();
        assert_contains(reason, "applies to eras [legacy]");
        assert_contains(reason, "modern (2026-07-28)");
        assert_contains(&out.run.stdout, "SKIP  legacy-only@auto");

        // Without --era the scenario runs in its own eras.
        let out = run_eras(&t, "legacy-only.yaml", &[], &[]);
        assert_eq!(out.run.code, 0, "{transport:?}: {:?}", out.run);
        let report = out.report.expect("report");
        let s = suite(&report, "legacy-only@legacy");
        assert_eq!(s["era"]["negotiated"], "2025-11-25");
        assert_eq!(step(s, "lists tools")["outcome"]["status"], "passed");
    }
}

#[test]
fn matrix_runs_each_era_as_its_own_suite() {
    for transport in BOTH {
        let t = target(transport);
        let out = run_eras(&t, "healthy.yaml", &["legacy", "2026-07-28"], &[]);
        assert_eq!(out.run.code, 0, "{transport:?}: {:?}", out.run);
        for id in ["healthy@legacy", "healthy@2026-07-28"] {
            assert_contains(&out.junit, &format!(r#"<testsuite name="{id}""#));
            assert_contains(&out.junit, &format!(r#"classname="{id}""#));
        }
        assert_contains(
            &out.junit,
            r#"<property name="era.negotiated" value="2025-11-25"/>"#,
        );
        assert_contains(
            &out.junit,
            r#"<property name="era.negotiated" value="2026-07-28"/>"#,
        );
        let report = out.report.expect("report");
        let ids: Vec<&str> = report["suites"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            ["healthy@legacy", "healthy@2026-07-28"],
            "{transport:?}"
        );
        assert_contains(&out.run.stdout, "PASS  healthy@legacy (2025-11-25)");
        assert_contains(&out.run.stdout, "PASS  healthy@2026-07-28 (2026-07-28)");
    }
}

#[test]
fn steps_follow_the_negotiated_era() {
    for transport in BOTH {
        let t = target(transport);
        let out = run_eras(&t, "era-steps.yaml", &["legacy", "2026-07-28", "auto"], &[]);
        assert_eq!(out.run.code, 0, "{transport:?}: {:?}", out.run);
        let report = out.report.expect("report");
        let cases = [
            (
                "era-steps@legacy",
                "legacy only",
                "modern only",
                "legacy",
                "2025-11-25",
            ),
            (
                "era-steps@2026-07-28",
                "modern only",
                "legacy only",
                "modern",
                "2026-07-28",
            ),
            (
                "era-steps@auto",
                "modern only",
                "legacy only",
                "modern",
                "2026-07-28",
            ),
        ];
        for (id, runs, skips, era, revision) in cases {
            let s = suite(&report, id);
            assert_eq!(
                step(s, runs)["outcome"]["status"],
                "passed",
                "{transport:?} {id}"
            );
            let skipped = &step(s, skips)["outcome"];
            assert_eq!(skipped["status"], "skipped", "{transport:?} {id}");
            assert_contains(skipped["reason"].as_str().unwrap_or_default(), revision);
            let (body, _) = sent(step(s, "knows its era"), "tools/call");
            assert_contains(&body, &format!("era={era} revision={revision}"));
        }
    }
}
