//! `--sandbox` (issue 39, item 11): a stdio server with no route out of the machine and a
//! read-only filesystem but for a private HOME. The example server's `reach_out` tool
//! (`--reach-out HOST:PORT`), labelled read-only and closed-world, tries to connect to
//! HOST:PORT and to write `$HOME/../mcpspec-reach-out.txt`: in the sandbox both fail and the
//! run names the tool; without it the write goes through (to a folder of the test's) and
//! the run says nothing of a sandbox.
//!
//! No test opens a connection beyond this machine: outside the sandbox the tool connects
//! to a closed port of 127.0.0.1; inside it, to 192.0.2.1 (TEST-NET-1, routed nowhere),
//! which the sandbox's network (loopback only) cannot reach.

mod common;

use common::{assert_contains, read_json, run, scenario_file, stdio_target, suite};

const REACH: &str = "scenario: reach\nsteps:\n  - name: reach\n    request: { method: tools/call, params: { name: reach_out } }\n";

/// The text of the `reach` step's tool result in a `--json` report.
fn reach_text(report: &serde_json::Value) -> String {
    let step = &suite(report, "reach@auto")["steps"][0];
    let transcript = step["transcript"].as_array().expect("a transcript");
    transcript
        .iter()
        .filter(|e| e["direction"] == "received")
        .filter_map(|e| serde_json::from_str::<serde_json::Value>(e["body"].as_str()?).ok())
        .find_map(|m| Some(m.pointer("/result/content/0/text")?.as_str()?.to_string()))
        .unwrap_or_else(|| panic!("no tool result in {step:#}"))
}

/// Whether this machine can make the sandbox; when it cannot, the run must have said so
/// and stopped (exit 2) — checked here.
fn sandbox_refused(out: &common::Run) -> bool {
    if out.stderr.contains("--sandbox is not available here:") {
        assert_eq!(out.code, 2, "{out:?}");
        eprintln!(
            "the sandbox is not available on this machine: {}",
            out.stderr
        );
        return true;
    }
    false
}

#[test]
fn in_the_sandbox_a_mislabelled_tool_cannot_reach_out_and_the_run_names_it() {
    let (dir, file) = scenario_file("reach.yaml", REACH);
    let json = dir.path().join("r.json");
    let target = stdio_target(&["--reach-out", "192.0.2.1:443"]);
    let out = run(&[
        "run",
        file.to_str().unwrap(),
        "--sandbox",
        "--stdio",
        &target,
        "--json",
        json.to_str().unwrap(),
    ]);
    if sandbox_refused(&out) {
        return;
    }
    assert_eq!(out.code, 0, "{out:?}");
    let text = reach_text(&read_json(&json));
    assert_contains(&text, "connect to 192.0.2.1:443: Network is unreachable");
    assert_contains(&text, "Read-only file system");
    assert!(!text.contains("wrote "), "{text}");
    assert_contains(
        &out.stdout,
        "Sandbox (--sandbox): the server ran with no route out of the machine and a private HOME",
    );
    assert_contains(&out.stdout, "they tried to reach out");
    assert_contains(
        &out.stdout,
        "- `reach_out`: connect to 192.0.2.1:443: Network is unreachable",
    );
    let report = read_json(&json);
    assert_eq!(report["servers"]["sandboxed"], true, "{report:#}");
    assert_contains(
        report["servers"]["reachedOut"][0]
            .as_str()
            .unwrap_or_default(),
        "`reach_out`",
    );
}

/// The promise of the built-in packs under `--sandbox`: their tool calls reach the
/// mislabelled tool (it says read-only, closed-world), and the run names it.
#[test]
fn the_security_pack_in_the_sandbox_names_the_tool_that_tried() {
    let target = stdio_target(&["--reach-out", "192.0.2.1:443"]);
    let out = run(&["run", "security", "--sandbox", "--stdio", &target]);
    if sandbox_refused(&out) {
        return;
    }
    assert_contains(&out.stdout, "they tried to reach out");
    assert_contains(
        &out.stdout,
        "- `reach_out`: connect to 192.0.2.1:443: Network is unreachable",
    );
}
/// `load --sandbox` says what `run --sandbox` says: that the server ran sandboxed, and the
/// tools whose answers show a failed connection.
#[test]
fn load_in_the_sandbox_names_the_tool_that_tried() {
    let (dir, file) = scenario_file("reach.yaml", REACH);
    let json = dir.path().join("l.json");
    let target = stdio_target(&["--reach-out", "192.0.2.1:443"]);
    let out = run(&[
        "load",
        file.to_str().unwrap(),
        "--sandbox",
        "--stdio",
        &target,
        "--clients",
        "1",
        "--iterations",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    if sandbox_refused(&out) {
        return;
    }
    // The tool's failed calls (isError) break the default budget, errorRate <= 0%.
    assert_eq!(out.code, 1, "{out:?}");
    assert_contains(
        &out.stdout,
        "Sandbox (--sandbox): the server ran with no route out of the machine and a private HOME",
    );
    assert_contains(&out.stdout, "they tried to reach out");
    assert_contains(
        &out.stdout,
        "- `reach_out`: connect to 192.0.2.1:443: Network is unreachable",
    );
    let report = read_json(&json);
    assert_eq!(report["sandboxed"], true, "{report:#}");
    assert_contains(
        report["reachedOut"][0].as_str().unwrap_or_default(),
        "`reach_out`",
    );
}

/// `init --sandbox` writes `sandbox: true` into the target it writes (and a run there is
/// sandboxed); without it the setting is there commented out, to be turned on.
#[test]
fn init_writes_the_sandbox_setting() {
    let dir = tempfile::tempdir().unwrap();
    let target = stdio_target(&[]);
    let plain = dir.path().join("plain");
    let out = run(&["init", plain.to_str().unwrap(), "--stdio", &target]);
    assert_eq!(out.code, 0, "{out:?}");
    let config = std::fs::read_to_string(plain.join("mcpspec.yaml")).unwrap();
    assert_contains(&config, "    # sandbox: true   # as --sandbox");
    let boxed = dir.path().join("boxed");
    let out = run(&[
        "init",
        boxed.to_str().unwrap(),
        "--stdio",
        &target,
        "--sandbox",
    ]);
    if sandbox_refused(&out) {
        return;
    }
    assert_eq!(out.code, 0, "{out:?}");
    let config = std::fs::read_to_string(boxed.join("mcpspec.yaml")).unwrap();
    assert_contains(&config, "\n    sandbox: true   # as --sandbox");
    let out = common::run_in(&boxed, &["run"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_contains(&out.stdout, "Sandbox (--sandbox): the server ran");
}

#[test]
fn without_the_sandbox_the_write_goes_through_and_nothing_is_said() {
    let (dir, file) = scenario_file("reach.yaml", REACH);
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    // A port of 127.0.0.1 that nothing listens on (bound, then let go).
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let json = dir.path().join("r.json");
    let target = stdio_target(&["--reach-out", &closed.to_string()]);
    let out = run(&[
        "run",
        file.to_str().unwrap(),
        "--stdio",
        &target,
        "--env",
        &format!("HOME={}", home.display()),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let written = dir.path().join("mcpspec-reach-out.txt");
    assert!(
        written.exists(),
        "the write outside HOME went through: {out:?}"
    );
    let text = reach_text(&read_json(&json));
    assert_contains(&text, "wrote ");
    assert!(!out.stdout.contains("Sandbox"), "{out:?}");
    assert!(!out.stdout.contains("reach out"), "{out:?}");
}

#[test]
fn the_sandbox_is_for_stdio_targets() {
    let out = run(&[
        "run",
        "conformance",
        "--sandbox",
        "--url",
        "http://127.0.0.1:9/mcp",
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_contains(&out.stderr, "--sandbox applies to --stdio targets");
}
