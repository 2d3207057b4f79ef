//! `mcpspec init`: the generated project validates and passes against the server it was
//! generated from (both eras, stdio and HTTP), is deterministic (and matches the golden
//! tree under tests/golden/init/), never overwrites without --force, never writes a
//! secret, and fails when the server changes.
//!
//! Regenerate the golden tree with `UPDATE_GOLDEN=1 cargo test --test init golden`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{HttpServer, example_server, read_json, repo_root, run_in, stdio_target, suite};
use serde_json::Value;

const GOLDEN: &str = "tests/golden/init";
/// Stands for the example server's path (machine-specific) in the golden tree.
const SERVER_PLACEHOLDER: &str = "<example-server>";
/// A fixed snapshot time, so two runs write the same bytes.
const EPOCH: (&str, &str) = ("SOURCE_DATE_EPOCH", "1767225600");

/// Every file under `dir` (relative path → contents).
fn tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn init(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> common::Run {
    let mut all = vec!["init", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    run_in(&repo_root(), &all, env)
}

/// `mcpspec validate tests/mcp` then `mcpspec run --json` in the project folder, no other flags.
fn validate_and_run(dir: &Path, env: &[(&str, &str)]) -> (common::Run, Value) {
    let v = run_in(dir, &["validate", "tests/mcp"], env);
    assert_eq!(v.code, 0, "validate: {v:?}");
    let r = run_in(dir, &["run"], env);
    let report = dir.join("reports/results.json");
    assert!(report.exists(), "no JSON report (from mcpspec.yaml): {r:?}");
    (r, read_json(&report))
}

fn step_status(report: &Value, suite_id: &str, step: &str) -> String {
    common::step(suite(report, suite_id), step)["outcome"]["status"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn example_server_both_eras_validates_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let r = init(dir.path(), &["--stdio", &stdio_target(&[])], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("legacy (2025-11-25), 2026-07-28 (2026-07-28)"),
        "{r:?}"
    );
    assert!(r.stdout.contains("mcpspec validate tests/mcp"), "{r:?}");
    assert!(r.stdout.contains("mcpspec run"), "{r:?}");
    let files = tree(dir.path());
    let config = &files["mcpspec.yaml"];
    assert!(config.contains("eras: [legacy, 2026-07-28]"), "{config}");
    assert!(config.contains("paths: [tests/mcp]"), "{config}");
    for f in files.keys().filter(|f| f.ends_with(".yaml")) {
        assert!(
            files[f].starts_with("# yaml-language-server: $schema=") || f.ends_with("pack.yaml"),
            "{f} has no $schema modeline"
        );
    }
    // Only read-only tools are called: create_note is listed, never called.
    let note = &files["tests/mcp/tools/create-note.yaml"];
    assert!(!note.contains("method: tools/call"), "{note}");
    assert!(note.contains("not marked readOnlyHint"), "{note}");
    assert!(files["tests/mcp/tools/add.yaml"].contains("outputSchema: conforms"));
    assert!(files["tests/mcp/tools/echo.yaml"].contains("$.content[*].type"));
    for era in ["legacy", "2026-07-28"] {
        assert!(files.contains_key(&format!("tests/mcp/contract/{era}/tools.json")));
    }

    let (r, report) = validate_and_run(dir.path(), &[]);
    assert_eq!(r.code, 0, "{r:?}");
    // Every generated scenario ran in both eras; the calls really happened and passed.
    for era in ["legacy", "2026-07-28"] {
        for (scenario, step) in [
            ("tool-add", "called with example arguments"),
            ("tool-echo", "called with example arguments"),
            ("tool-get-weather", "called with example arguments"),
            ("prompt-greet", "gets messages with example arguments"),
            ("resource-readme", "read"),
            ("template-item", "listed"),
            ("contract", &format!("no breaking change ({era})")),
        ] {
            assert_eq!(
                step_status(&report, &format!("{scenario}@{era}"), step),
                "passed",
                "{scenario}@{era}:{step}\n{r:?}"
            );
        }
    }
    // The NOT-written calls: the tool that may write is listed only.
    assert_eq!(
        suite(&report, "tool-create-note@legacy")["steps"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn explicit_era_writes_only_that_era() {
    let dir = tempfile::tempdir().unwrap();
    let r = init(
        dir.path(),
        &["--stdio", &stdio_target(&[]), "--era", "2026-07-28"],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let files = tree(dir.path());
    assert!(files["mcpspec.yaml"].contains("eras: [2026-07-28]"));
    assert!(!files.keys().any(|f| f.contains("contract/legacy")));
    let (r, _) = validate_and_run(dir.path(), &[]);
    assert_eq!(r.code, 0, "{r:?}");
}

/// Two runs with --force write the same bytes, and the tree matches the golden one.
#[test]
fn deterministic_and_golden() {
    let dir = tempfile::tempdir().unwrap();
    let target = stdio_target(&[]);
    let r = init(dir.path(), &["--stdio", &target], &[EPOCH]);
    assert_eq!(r.code, 0, "{r:?}");
    let first = tree(dir.path());
    let r = init(dir.path(), &["--stdio", &target, "--force"], &[EPOCH]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(first, tree(dir.path()), "a second init wrote other bytes");

    // The golden tree: the server's path replaced, the schemas compared with `mcpspec schema`.
    let server = example_server().display().to_string();
    let mut actual: BTreeMap<String, String> = first
        .into_iter()
        .map(|(k, v)| (k, v.replace(&server, SERVER_PLACEHOLDER)))
        .collect();
    for (file, kind) in [
        (".mcpspec/schema/scenario.schema.json", "scenario"),
        (".mcpspec/schema/pack.schema.json", "pack"),
        (".mcpspec/schema/config.schema.json", "config"),
    ] {
        let printed = run_in(&repo_root(), &["schema", kind], &[]).stdout;
        assert_eq!(
            actual.remove(file).as_deref(),
            Some(printed.as_str()),
            "{file}"
        );
    }
    // The run state is kept out of the project's history (a file named .gitignore among the
    // goldens would be one of the repository's own).
    assert_eq!(
        actual.remove(".gitignore").as_deref(),
        Some(".mcpspec/last-run.json\n"),
        "init ignores the run state"
    );
    let golden_dir = repo_root().join(GOLDEN);
    if common::updating_golden() {
        let _ = std::fs::remove_dir_all(&golden_dir);
        for (rel, text) in &actual {
            let path = golden_dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        return;
    }
    let golden = tree(&golden_dir);
    assert_eq!(
        golden.keys().collect::<Vec<_>>(),
        actual.keys().collect::<Vec<_>>(),
        "the generated files differ from {GOLDEN} (UPDATE_GOLDEN=1 regenerates it)"
    );
    for (rel, text) in &actual {
        assert_eq!(
            &golden[rel], text,
            "{rel} differs from {GOLDEN}/{rel} (UPDATE_GOLDEN=1 regenerates it)"
        );
    }
}

#[test]
fn refuses_to_overwrite_without_force() {
    let dir = tempfile::tempdir().unwrap();
    // An existing mcpspec.yaml is refused before anything is started.
    std::fs::write(dir.path().join("mcpspec.yaml"), "# mine\n").unwrap();
    let r = init(dir.path(), &["--stdio", "/no/such/server"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("mcpspec.yaml"), "{r:?}");
    assert!(r.stderr.contains("--force"), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mcpspec.yaml")).unwrap(),
        "# mine\n"
    );

    // Any generated file that exists is refused, and nothing is written.
    std::fs::remove_file(dir.path().join("mcpspec.yaml")).unwrap();
    let echo = dir.path().join("tests/mcp/tools/echo.yaml");
    std::fs::create_dir_all(echo.parent().unwrap()).unwrap();
    std::fs::write(&echo, "# mine\n").unwrap();
    let r = init(dir.path(), &["--stdio", &stdio_target(&[])], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("echo.yaml"), "{r:?}");
    assert_eq!(std::fs::read_to_string(&echo).unwrap(), "# mine\n");
    assert!(!dir.path().join("mcpspec.yaml").exists());

    // --force overwrites, and names the pack's files it did not write (still loaded).
    let mine = dir.path().join("tests/mcp/tools/gone.yaml");
    std::fs::write(
        &mine,
        "scenario: gone\nsteps:\n  - name: ping\n    request: { method: ping }\n",
    )
    .unwrap();
    let r = init(dir.path(), &["--stdio", &stdio_target(&[]), "--force"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_ne!(std::fs::read_to_string(&echo).unwrap(), "# mine\n");
    assert!(
        r.stdout
            .contains("note: tests/mcp/tools/gone.yaml was not written by this init"),
        "{r:?}"
    );
    assert!(mine.exists());
}

/// Over HTTP with a bearer token: the variable's name is written, never the token (nor a
/// secret header); the project runs with the variable set.
#[test]
fn bearer_env_writes_the_name_never_the_token() {
    const TOKEN: &str = "init-s3cret-token-value";
    const API_KEY: &str = "init-api-key-value";
    let server = HttpServer::start(&["--defect", &format!("require-token={TOKEN}")]);
    let dir = tempfile::tempdir().unwrap();
    let env = [("INIT_TEST_TOKEN", TOKEN)];
    let r = init(
        dir.path(),
        &[
            "--url",
            &server.url,
            "--bearer-env",
            "INIT_TEST_TOKEN",
            "--header",
            &format!("X-Api-Key: {API_KEY}"),
            "--header",
            "X-Team: qa",
        ],
        &env,
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.all_output().contains(TOKEN) && !r.all_output().contains(API_KEY));
    let files = tree(dir.path());
    for (name, text) in &files {
        assert!(
            !text.contains(TOKEN) && !text.contains(API_KEY),
            "{name} holds a secret"
        );
    }
    let config = &files["mcpspec.yaml"];
    assert!(config.contains("bearerEnv: INIT_TEST_TOKEN"), "{config}");
    assert!(config.contains("X-Team: \"qa\""), "{config}");
    assert!(
        config.contains("# header X-Api-Key is a secret, so it is not written"),
        "{config}"
    );
    assert!(
        r.stdout.contains("note: header X-Api-Key is a secret"),
        "{r:?}"
    );

    let (r, _) = validate_and_run(dir.path(), &env);
    assert_eq!(r.code, 0, "{r:?}");
    let report = std::fs::read_to_string(dir.path().join("reports/junit.xml")).unwrap();
    assert!(!report.contains(TOKEN));
    // Without the variable the run stops with a usage error naming it.
    let r = run_in(dir.path(), &["run"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("INIT_TEST_TOKEN"), "{r:?}");
}

/// The generated expectations catch what changes: run the project generated from the clean
/// server against a changed or defective one.
#[test]
fn generated_project_fails_when_the_server_changes() {
    let dir = tempfile::tempdir().unwrap();
    let r = init(dir.path(), &["--stdio", &stdio_target(&[])], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    /// Server flags, and the (scenario, step) checks that must fail against that server.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);
    let cases: &[Case] = &[
        (
            &["--change", "rename-tool"],
            &[
                (
                    "tool-get-weather",
                    "listed with valid input and output schemas",
                ),
                ("tool-get-weather", "called with example arguments"),
                ("contract", "no breaking change (legacy)"),
            ],
        ),
        (
            &["--change", "remove-resource"],
            &[("resource-logo", "listed"), ("resource-logo", "read")],
        ),
        (
            &["--change", "add-required-param"],
            &[("contract", "no breaking change (legacy)")],
        ),
        (
            &["--change", "prompt-required-arg"],
            &[("prompt-greet", "gets messages with example arguments")],
        ),
    ];
    for (flags, failing) in cases {
        let target = stdio_target(flags);
        let json = dir.path().join("changed.json");
        let r = run_in(
            dir.path(),
            &[
                "run",
                "--stdio",
                &target,
                "--era",
                "legacy",
                "--json",
                json.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(r.code, 1, "{flags:?}: {r:?}");
        let report = read_json(&json);
        for (scenario, step) in *failing {
            let status = step_status(&report, &format!("{scenario}@legacy"), step);
            assert!(
                status == "failed" || status == "error",
                "{flags:?}: {scenario}:{step} is {status}\n{r:?}"
            );
        }
    }
}

#[test]
fn help_describes_the_command() {
    let r = run_in(&repo_root(), &["init", "--help"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    for needle in [
        "--force",
        "--era",
        "--stdio",
        "--bearer-env",
        "readOnlyHint",
        "[DIR]",
    ] {
        assert!(r.stdout.contains(needle), "{needle}: {r:?}");
    }
}

/// Bad input is a usage error (exit 2); a server that cannot be started is exit 4; neither
/// writes anything.
#[test]
fn bad_input_and_unreachable_servers_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    let r = init(&project, &[], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no target"), "{r:?}");
    let r = init(
        &project,
        &["--stdio", &stdio_target(&[]), "--era", "2026-7-28"],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--era"), "{r:?}");
    let r = init(
        &project,
        &[
            "--url",
            "http://127.0.0.1:9/mcp",
            "--bearer-env",
            "INIT_UNSET_VAR",
        ],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("INIT_UNSET_VAR"), "{r:?}");
    let r = init(&project, &["--stdio", "/no/such/mcp-server"], &[]);
    assert_eq!(r.code, 4, "{r:?}");
    let r = init(
        &project,
        &["--stdio", &stdio_target(&["--defect", "exit-at-start"])],
        &[],
    );
    assert_eq!(r.code, 4, "{r:?}");
    assert!(!project.exists(), "nothing is written when init fails");
}

/// init adds the run state to an existing `.gitignore` once, keeping what it holds.
#[test]
fn init_ignores_the_run_state_in_an_existing_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gitignore"), "node_modules").unwrap();
    let target = stdio_target(&[]);
    for args in [
        &["--stdio", &target][..],
        &["--stdio", &target, "--force"][..],
    ] {
        let r = init(dir.path(), args, &[]);
        assert_eq!(r.code, 0, "{r:?}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".gitignore")).unwrap(),
        "node_modules\n.mcpspec/last-run.json\n"
    );
}

#[test]
fn interactive_tools_get_a_scenario_that_answers_them() {
    // Tools that ask back (elicitation twice, sampling with and without tools, roots), seen by a
    // probe that declares every client capability: a scenario each, declaring what the
    // tool asked and answering with defaults, that passes in both eras.
    let dir = tempfile::tempdir().unwrap();
    let target = stdio_target(&["--interactive"]);
    let r = init(dir.path(), &["--stdio", &target], &[EPOCH]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.all_output().contains("5 tool(s) ask the client back"),
        "{r:?}"
    );
    let asks = dir.path().join("tests/mcp/asks");
    let with_tools = std::fs::read_to_string(asks.join("sample-with-tools.yaml")).unwrap();
    assert!(
        with_tools.contains("sampling: {tools: true}"),
        "{with_tools}"
    );
    assert!(
        with_tools.contains("- asked: sampling/createMessage"),
        "{with_tools}"
    );
    let confirm = std::fs::read_to_string(asks.join("ask-confirmation.yaml")).unwrap();
    assert!(confirm.contains("elicitation: {form: true}") && confirm.contains("action: accept"));
    let roots = std::fs::read_to_string(asks.join("client-roots.yaml")).unwrap();
    assert!(roots.contains("roots: {}") && roots.contains("uri: \"file:///tmp/mcpspec-root\""));
    assert!(asks.join("summarize.yaml").exists());
    let (run, report) = validate_and_run(dir.path(), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    for tool in [
        "approve-job",
        "ask-confirmation",
        "client-roots",
        "sample-with-tools",
        "summarize",
    ] {
        for era in ["legacy", "2026-07-28"] {
            let id = format!("asks-{tool}@{era}");
            let step = &suite(&report, &id)["steps"][0];
            assert_eq!(step["outcome"]["status"], "passed", "{id}: {step}");
        }
    }
}
