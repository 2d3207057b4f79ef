//! `examples/ci/eval-pipeline.sh`, the CI recipe of the eval chapter, run as shown there:
//! contract diff → tasks at risk → eval run on base and candidate → paired comparison,
//! with the workspace's binaries on PATH and the local model server on a free port.

mod common;

use std::path::Path;
use std::process::Command;

use common::{assert_valid_junit, repo_root};

/// The script with `env` set, its reports in `out`: (exit code, stdout + stderr).
fn pipeline(out: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let bins = common::example_server()
        .parent()
        .expect("target dir")
        .to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bins).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let output = Command::new("sh")
        .arg("examples/ci/eval-pipeline.sh")
        .current_dir(repo_root())
        .env("PATH", path)
        .env("OUT", out)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("sh runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

#[test]
fn a_tool_the_model_misuses_fails_the_pipeline_at_compare() {
    let out = tempfile::tempdir().unwrap();
    let (code, text) = pipeline(out.path(), &[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("noToolCall task now calls send_greeting"),
        "{text}"
    );
    assert!(text.contains("REGRESSION: 1 task(s) flagged"), "{text}");
    // A tool was added, so any tool-calling or noToolCall task may lose or gain prompts
    // (the default `--affected-scope wide`): the whole set ran, on both sides.
    assert_eq!(text.matches("3 of 3 task(s) selected").count(), 2, "{text}");
    assert!(
        text.contains("every tool-calling and noToolCall task is at risk"),
        "{text}"
    );
    for report in [
        "contract-diff.xml",
        "eval-base.xml",
        "eval-candidate.xml",
        "eval-compare.xml",
    ] {
        assert_valid_junit(&out.path().join(report));
    }
}

#[test]
fn no_change_a_model_reads_skips_the_eval() {
    let out = tempfile::tempdir().unwrap();
    let (code, text) = pipeline(out.path(), &[("CAND_CMD", "mcpspec-example-server")]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("no change affects models: eval skipped"),
        "{text}"
    );
    assert!(!out.path().join("eval-base.json").exists());
}

#[test]
fn a_breaking_change_stops_the_pipeline_at_the_contract_diff() {
    let out = tempfile::tempdir().unwrap();
    let (code, text) = pipeline(
        out.path(),
        &[("CAND_CMD", "mcpspec-example-server --change remove-tool")],
    );
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("contract diff failed (exit 1)"), "{text}");
    assert!(!out.path().join("eval-base.json").exists());
}
