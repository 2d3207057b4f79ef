//! Live progress while a run goes: on a terminal the running `scenario@era › step` line,
//! elsewhere plain "still running" lines for a long step, and nothing extra on a fast run.

mod common;

use common::{mcpspec, run_in, stdio_target};

const SLOW: &str = r#"
scenario: live-demo
eras: [legacy]
steps:
  - name: a slow call
    request: { method: tools/call, params: { name: slow, arguments: { ms: 1800 } } }
    expect:
      - isError: false
"#;

const FAST: &str = r#"
scenario: quick-demo
eras: [legacy]
steps:
  - name: lists tools
    request: { method: tools/list }
"#;

fn project(yaml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.yaml"), yaml).unwrap();
    dir
}

#[test]
fn a_long_step_is_reported_in_plain_lines_when_not_a_terminal() {
    let dir = project(SLOW);
    let target = stdio_target(&[]);
    let run = run_in(
        dir.path(),
        &["run", "s.yaml", "--stdio", &target],
        &[("MCPSPEC_PROGRESS_EVERY", "500ms")],
    );
    assert_eq!(run.code, 0, "{}", run.all_output());
    assert!(
        run.stderr
            .contains("… still running live-demo@legacy › a slow call ("),
        "no progress line for the long step:\n{}",
        run.all_output()
    );
    assert!(
        !run.stderr.contains('\r'),
        "no terminal redraws in plain mode"
    );
}

#[test]
fn a_fast_run_prints_no_progress_lines() {
    let dir = project(FAST);
    let target = stdio_target(&[]);
    let run = run_in(dir.path(), &["run", "s.yaml", "--stdio", &target], &[]);
    assert_eq!(run.code, 0, "{}", run.all_output());
    assert!(!run.stderr.contains("still running"), "{}", run.stderr);
}

/// On a terminal (`script` gives the run a pseudo-terminal), the status line names the
/// running item and step while the slow step runs, and is cleared before the report.
/// Linux only: util-linux's `script` (BSD's takes other arguments; Windows has none).
#[test]
#[cfg(target_os = "linux")]
fn on_a_terminal_the_running_item_and_step_are_shown_live() {
    let dir = project(SLOW);
    let command = format!(
        "{} run s.yaml --stdio '{}'",
        mcpspec().display(),
        stdio_target(&[])
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir.path())
        .env_remove("CI")
        .env("NO_COLOR", "1")
        .output()
        .expect("script (util-linux) runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("[0/1] live-demo@legacy › a slow call ("),
        "no live status line:\n{text:?}"
    );
    assert!(
        text.contains("\r\x1b[2K"),
        "the line is redrawn and cleared:\n{text:?}"
    );
    assert!(text.contains("PASS"), "the report follows:\n{text}");
}
