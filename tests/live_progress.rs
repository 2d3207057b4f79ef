//! Live progress while a run goes: on a terminal the running `scenario@era › step` line,
//! elsewhere plain "still running" lines for a long step, and nothing extra on a fast run.

mod common;

use common::{mcpspec, repo_root, stdio_target};

/// A 1.8 s step; the case folder shows its plain progress lines when not on a terminal.
const SLOW: &str = "tests/cases/slow-step-reported-in-plain-lines/s.yaml";

// A fast run prints no progress lines, a slow step plain ones when not on a terminal:
// tests/cases/fast-run-prints-no-progress/, tests/cases/slow-step-reported-in-plain-lines/.

fn project(scenario: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo_root().join(scenario), dir.path().join("s.yaml")).unwrap();
    dir
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
