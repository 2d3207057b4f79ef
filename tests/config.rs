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

/// An era typo in the file is an error at its position, with did-you-mean (it was reported
/// as `--era: modren is not an era`, as if typed on the command line); a scalar where a
/// list goes says so in DSL words.
#[test]
fn config_era_mistakes_point_at_the_file() {
    let dir = project(&CONFIG.replace("[legacy, 2026-07-28]", "[legacy, modren]"));
    let r = run_in(dir.path(), &["run"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(!r.stderr.contains("--era"), "{r:?}");
    assert!(
        r.stderr
            .starts_with("error: `modren` is not an era: expected `legacy`, `modern`")
            && r.stderr.contains("--> mcpspec.yaml:9:16")
            && r.stderr.contains("did you mean `modern`?"),
        "{r:?}"
    );
    assert_eq!(r.stdout, "", "nothing ran");
    for args in [&["validate", "mcpspec.yaml"][..], &["validate"]] {
        let v = run_in(dir.path(), args, &[]);
        assert_eq!(v.code, 2, "{args:?}: {v:?}");
        assert_eq!(
            v.stderr, r.stderr,
            "{args:?}: validate reports what run does"
        );
    }
    let dir = project(&CONFIG.replace("[legacy, 2026-07-28]", "legacy"));
    let r = run_in(dir.path(), &["validate", "mcpspec.yaml"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.starts_with(
            "error: `eras` takes a list of eras, e.g. [legacy]\n --> mcpspec.yaml:9:7"
        ) && r.stderr.contains("help: write `eras: [legacy]`"),
        "{r:?}"
    );
    // `validate` checks `defaultTarget` as `run` does (it said "ok").
    let dir = project(&CONFIG.replace("defaultTarget: local", "defaultTarget: lokal"));
    let r = run_in(dir.path(), &["validate", "mcpspec.yaml"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("error: no target named `lokal` in mcpspec.yaml")
            && r.stderr.contains("--> mcpspec.yaml:7:16")
            && r.stderr.contains("did you mean `local`?"),
        "{r:?}"
    );
    let dir = project(&CONFIG.replace("targets:", "tragets:"));
    let r = run_in(dir.path(), &["validate", "mcpspec.yaml"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("error: unknown key `tragets`")
            && r.stderr.contains("--> mcpspec.yaml:2:1")
            && r.stderr.contains("did you mean `targets`?"),
        "{r:?}"
    );
}

/// `validate` with no paths checks what `run` with no paths loads: mcpspec.yaml, its
/// `paths:` and its baseline, every file's errors together.
#[test]
fn validate_without_paths_checks_the_configuration_and_its_paths() {
    let dir = project(&format!("{CONFIG}expectedFailures: baseline.yaml\n"));
    std::fs::write(
        dir.path().join("baseline.yaml"),
        "server:\n  - tools:lists the tools\n",
    )
    .unwrap();
    let ok = run_in(dir.path(), &["validate"], &[]);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert_eq!(
        ok.stdout,
        "ok: mcpspec.yaml (configuration)\nok: baseline.yaml (baseline)\nok: 1 scenario(s), 7 step(s)\n"
    );
    // A bad scenario under `paths:` and a typo in the baseline: both reported.
    std::fs::write(
        dir.path().join("scenarios/bad.yaml"),
        "scenario: bad\nsteps:\n  - name: a\n    reqest: { method: tools/list }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("baseline.yaml"), "server: []\nclinet: []\n").unwrap();
    let r = run_in(dir.path(), &["validate"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("--> scenarios/bad.yaml:4:5")
            && r.stderr.contains("did you mean `request`?"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("--> baseline.yaml:2:1") && r.stderr.contains("did you mean `client`?"),
        "{r:?}"
    );
    assert!(r.stderr.trim_end().ends_with("2 errors found"), "{r:?}");
    let r = run_in(tempfile::tempdir().unwrap().path(), &["validate"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr,
        "error: nothing to validate: give files, folders or packs (or `paths:` in mcpspec.yaml)\n"
    );
}

/// Each kind of file `validate` is given is read by its own loader, so a typo in one of
/// its keys gets that loader's did-you-mean (rules with a misspelt key were read as a
/// scenario: "unknown key `fail`").
#[test]
fn validate_recognises_each_document_kind() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    };
    write("rules.yaml", "fail: [breaking]\nacept: []\n");
    write("baseline.yaml", "server: []\nclinet: []\n");
    write("pack/pack.yaml", "name: p\nverison: 1.0.0\n");
    for (file, at, help) in [
        ("rules.yaml", "rules.yaml:2:1", "did you mean `accept`?"),
        (
            "baseline.yaml",
            "baseline.yaml:2:1",
            "did you mean `client`?",
        ),
        (
            "pack/pack.yaml",
            "pack/pack.yaml:2:1",
            "did you mean `version`?",
        ),
    ] {
        let r = run_in(dir.path(), &["validate", file], &[]);
        assert_eq!(r.code, 2, "{file}: {r:?}");
        assert!(
            r.stderr.contains(&format!("--> {at}")) && r.stderr.contains(help),
            "{file}: {r:?}"
        );
    }
    write("rules.yaml", "fail: [breaking]\naccept: []\n");
    let r = run_in(dir.path(), &["validate", "rules.yaml"], &[]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "ok: rules.yaml (contract rules)\n"),
        "{r:?}"
    );
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

/// A `paths:` entry that names nothing is an error at its line and column in mcpspec.yaml
/// (it was a bare "cannot read" naming the path, with no position).
#[test]
fn missing_paths_entry_has_its_position() {
    let dir = project("targets:\n  local:\n    stdio: SERVER\npaths: [scenarios, tests/mpc]\n");
    for args in [&["validate"][..], &["run"][..]] {
        let r = run_in(dir.path(), args, &[]);
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stderr.contains("mcpspec.yaml:4:20"), "{r:?}");
        assert!(
            r.stderr
                .contains("`paths:` entry `tests/mpc`: no such file or folder"),
            "{r:?}"
        );
    }
}

/// One wrong top-level key does not hide the file's other mistakes: every error of
/// mcpspec.yaml comes in one run, each at its line; what follows from the wrong key (the
/// `defaultTarget` naming a target of the misspelt `tragets:`) is not reported. The other
/// mistakes used to wait for the next run.
#[test]
fn every_mistake_of_the_configuration_at_once() {
    let config = "tragets:\n  local: { stdio: SERVER }\ndefaultTarget: local\npaths: [scenarios, nowhere]\neras: [modren]\ntimeout: 10 parsecs\n";
    let dir = project(config);
    let r = run_in(dir.path(), &["validate"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    for (at, what) in [
        ("mcpspec.yaml:1:1", "unknown key `tragets`"),
        ("mcpspec.yaml:4:20", "`paths:` entry `nowhere`"),
        ("mcpspec.yaml:5:8", "did you mean `modern`?"),
        ("mcpspec.yaml:6:10", "invalid timeout `10 parsecs`"),
    ] {
        assert!(r.stderr.contains(at), "{at}: {r:?}");
        assert!(r.stderr.contains(what), "{what}: {r:?}");
    }
    assert!(r.stderr.contains("4 errors found"), "{r:?}");
    assert!(!r.stderr.contains("no target named"), "{r:?}");
}

// `validate` knows the configuration's parameters: tests/cases/validate-knows-configuration-parameters/.
