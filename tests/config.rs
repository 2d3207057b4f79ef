//! Project configuration (mcpspec.yaml): a CI job runs `mcpspec run` and nothing else;
//! flags override the file.

mod common;

use common::{example_server, read_json, repo_root, run_in};

fn project(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    std::fs::copy(
        repo_root().join("examples/scenarios/tools.yaml"),
        scenarios.join("tools.yaml"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("mcpspec.yaml"),
        config.replace("SERVER", &example_server().display().to_string()),
    )
    .unwrap();
    dir
}

const CONFIG: &str = r#"
targets:
  local:
    stdio: SERVER
  paged:
    stdio: SERVER --page-size 2
defaultTarget: local
paths: [scenarios]
eras: [legacy, 2026-07-28]
json: reports/result.json
junit: reports/junit.xml
timeout: 10s
"#;

#[test]
fn mcpspec_run_alone_uses_the_configuration() {
    let dir = project(CONFIG);
    let r = run_in(dir.path(), &["run"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&dir.path().join("reports/result.json"));
    let ids: Vec<&str> = v["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["tools@legacy", "tools@2026-07-28"]);
    assert!(dir.path().join("reports/junit.xml").exists());
}

#[test]
fn a_named_target_and_flags_override_the_file() {
    let dir = project(CONFIG);
    let r = run_in(
        dir.path(),
        &["run", "--target", "paged", "--era", "legacy"],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&dir.path().join("reports/result.json"));
    assert!(
        v["target"].as_str().unwrap().ends_with("--page-size 2"),
        "{}",
        v["target"]
    );
    let ids: Vec<&str> = v["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["tools@legacy"], "--era overrides `eras`");
    let other = dir.path().join("other.json");
    let r = run_in(dir.path(), &["run", "--json", other.to_str().unwrap()], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(other.exists(), "--json overrides `json`");
}

#[test]
fn configuration_mistakes_exit_2_with_a_pointed_error() {
    let dir = project(CONFIG);
    let r = run_in(dir.path(), &["run", "--target", "pagd"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("no target named `pagd`") && r.stderr.contains("did you mean `paged`?"),
        "{r:?}"
    );
    let dir = project(&CONFIG.replace("defaultTarget", "defaultTargte"));
    let r = run_in(dir.path(), &["run"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("mcpspec.yaml:7:1") && r.stderr.contains("did you mean `defaultTarget`"),
        "{r:?}"
    );
    let r = run_in(
        tempfile::tempdir().unwrap().path(),
        &["run", "--target", "x"],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("--target needs a configuration file"),
        "{r:?}"
    );
    let r = run_in(tempfile::tempdir().unwrap().path(), &["run"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("nothing to run"), "{r:?}");
}

/// `jobs` and `timeout` have documented ranges; beyond them the file is wrong even when a
/// flag overrides the value (a 2^64 s timeout panicked computing the deadline).
#[test]
fn numbers_out_of_range_exit_2_with_their_position() {
    let config =
        format!("{CONFIG}jobs: 0\n").replace("timeout: 10s", "timeout: 18446744073709551615s");
    let dir = project(&config);
    let r = run_in(dir.path(), &["run", "--jobs", "2", "--timeout", "5s"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(!r.stderr.contains("panicked"), "{r:?}");
    assert!(
        r.stderr.contains("error: jobs 0 is out of range")
            && r.stderr.contains("mcpspec.yaml:13:7")
            && r.stderr.contains("expected 1 to 1024"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains(
            "invalid timeout `18446744073709551615s`: out of range (expected 1ms to 1day)"
        ) && r.stderr.contains("mcpspec.yaml:12:10"),
        "{r:?}"
    );
    assert_eq!(r.stdout, "", "nothing ran");
    // `validate` checks the file the same way.
    let v = run_in(dir.path(), &["validate", "mcpspec.yaml"], &[]);
    assert_eq!(v.code, 2, "{v:?}");
    assert_eq!(v.stderr, r.stderr, "validate reports what run does");
    let ok = run_in(project(CONFIG).path(), &["validate", "mcpspec.yaml"], &[]);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert_eq!(ok.stdout, "ok: mcpspec.yaml (configuration)\n");
}

#[test]
fn committed_config_schema_is_current() {
    let r = common::run(&["schema", "config"]);
    let committed = std::fs::read_to_string(repo_root().join("schema/config.schema.json")).unwrap();
    assert_eq!(
        r.stdout.trim_end(),
        committed.trim_end(),
        "schema/config.schema.json is stale: run `mcpspec schema config > schema/config.schema.json`"
    );
}
