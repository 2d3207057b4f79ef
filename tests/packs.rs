//! Packs end to end, against the real example server: the example team pack (parameters,
//! an import of a team pack and of a built-in pack, a reusable step group), parameter
//! precedence, secret parameters, pack requirements, imports that run once, and the
//! parameter mistakes only a run can see. Pack *file* mistakes are goldens in
//! `tests/invalid/` (pack-*, group-*).

mod common;

use std::path::{Path, PathBuf};

use common::{read_json, repo_root, run, run_in, stdio_target};
use serde_json::Value;

const TEAM: &str = "examples/packs/notes-team";

/// Write a tree of files under a temporary folder.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Run from the repository root with `--json`; returns the exit code, the report and the
/// console output.
fn run_json(args: &[&str], env: &[(&str, &str)]) -> (i32, Value, String) {
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("r.json");
    let server = stdio_target(&[]);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--stdio", &server, "--json", json.to_str().unwrap()]);
    let r = run_in(&repo_root(), &all, env);
    let report = if json.exists() {
        read_json(&json)
    } else {
        Value::Null
    };
    (r.code, report, r.all_output())
}

/// `suite id` → its steps' (name, status) pairs.
fn steps(report: &Value, suite: &str) -> Vec<(String, String)> {
    let suite = report["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == suite)
        .unwrap_or_else(|| panic!("no suite {suite} in {report}"));
    suite["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["outcome"]["status"]
                    .as_str()
                    .or_else(|| s["status"].as_str())
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

fn suite_ids(report: &Value) -> Vec<String> {
    report["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_example_team_pack_validates_and_passes_against_the_example_server() {
    let v = run(&["validate", TEAM]);
    assert_eq!(v.code, 0, "{v:?}");
    assert!(v.stdout.contains("3 pack(s)"), "{v:?}");
    let (code, report, out) = run_json(
        &["run", TEAM, "--era", "2026-07-28", "--era", "legacy"],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(report["summary"]["failed"], 0, "{out}");
    // The group's steps ran in place, prefixed by the call's name.
    let names: Vec<String> = steps(&report, "notes-lifecycle@legacy")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        [
            "create_note is listed",
            "first/create",
            "first/echo handle",
            "second/create",
            "second/echo handle",
            "handles differ"
        ]
    );
    // The imported team pack got `with: {city: Paris}`; the built-in pack ran too, and
    // the scenarios carry their own pack.
    let text = report.to_string();
    assert!(text.contains(r#"\"city\":\"Paris\""#), "{out}");
    let ids = suite_ids(&report);
    assert!(
        ids.contains(&"modern-tools@2026-07-28".to_string()),
        "{ids:?}"
    );
    let pack_of = |id: &str| {
        report["suites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .map(|s| s["pack"].clone())
            .unwrap()
    };
    assert_eq!(pack_of("weather-basics@legacy"), "weather-basics@1.2.0");
    assert_eq!(pack_of("notes-lifecycle@legacy"), "notes-team@1.4.0");
    assert_eq!(
        pack_of("modern-tools@2026-07-28"),
        "conformance-2026-07-28@1.0.0"
    );
}

#[test]
fn the_example_team_pack_fails_against_a_broken_server() {
    // `create_note` answering with a tool error breaks the group's first step.
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("r.json");
    let r = run(&[
        "run",
        TEAM,
        "--era",
        "legacy",
        "--filter",
        "notes-*",
        "--stdio",
        &stdio_target(&["--defect", "crash-on-call"]),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        read_json(&json)["summary"]["failed"].as_u64().unwrap()
            + read_json(&json)["summary"]["errors"].as_u64().unwrap()
            > 0
    );
}

#[test]
fn list_shows_packs_with_parameters_imports_and_groups() {
    let r = run(&["list", TEAM]);
    assert_eq!(r.code, 0, "{r:?}");
    for needle in [
        "pack notes-team 1.4.0  examples/packs/notes-team/pack.yaml",
        "pack weather-basics 1.2.0  examples/packs/weather-basics/pack.yaml",
        "pack conformance-2026-07-28 1.0.0  builtin:conformance-2026-07-28/pack.yaml",
        "    parameter max_notes (integer) = 2  How many notes the bulk check creates  [MCPSPEC_PARAM_MAX_NOTES]",
        "    imports ../weather-basics",
        "    group create_note(title, body)",
        "  notes-lifecycle:first/create",
    ] {
        assert!(r.stdout.contains(needle), "{needle}\n{r:?}");
    }
    let builtins = run(&["list"]);
    assert!(
        builtins.stdout.contains("  cross-era 1.0.0 — "),
        "{builtins:?}"
    );
}

/// The city the imported `weather-basics` pack asked for.
fn weather_city(extra: &[&str], env: &[(&str, &str)], cwd: Option<&Path>) -> String {
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("r.json");
    let team = repo_root().join(TEAM);
    let server = stdio_target(&[]);
    let mut args = vec![
        "run",
        team.to_str().unwrap(),
        "--era",
        "legacy",
        "--filter",
        "weather-basics",
        "-v",
        "--stdio",
        &server,
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(extra);
    let r = run_in(cwd.unwrap_or(&repo_root()), &args, env);
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(&json).unwrap();
    let at = text
        .find(r#"\"city\":\""#)
        .expect("the request names a city")
        + r#"\"city\":\""#.len();
    text[at..].split('\\').next().unwrap().to_string()
}

#[test]
fn parameter_precedence_set_over_config_over_env_over_with_over_default() {
    // `with:` (Paris) beats the default (Boston).
    assert_eq!(weather_city(&[], &[], None), "Paris");
    // The environment beats `with:`.
    let env = [("MCPSPEC_PARAM_CITY", "Rome")];
    assert_eq!(weather_city(&[], &env, None), "Rome");
    // mcpspec.yaml beats the environment.
    let config = tree(&[("mcpspec.yaml", "parameters: { city: Oslo }\n")]);
    assert_eq!(weather_city(&[], &env, Some(config.path())), "Oslo");
    // --set beats everything.
    assert_eq!(
        weather_city(&["--set", "city=Lima"], &env, Some(config.path())),
        "Lima"
    );
}

const SECRET_PACK: &[(&str, &str)] = &[
    (
        "p/pack.yaml",
        "name: secrets\nversion: 0.1.0\nparameters:\n  token: { type: string, secret: true, required: true }\n",
    ),
    (
        "p/echo.yaml",
        "scenario: echo-token\nsteps:\n  - name: echo\n    request: { method: tools/call, params: { name: echo, arguments: { text: \"token={{ token }}\" } } }\n    expect:\n      - { path: \"$.content[0].text\", matches: \"^token=\" }\n",
    ),
];

#[test]
fn secret_parameters_are_redacted_in_every_output_whatever_their_source() {
    let dir = tree(SECRET_PACK);
    let pack = dir.path().join("p");
    for (set, env) in [
        (Some("token=S3CRET-PLAIN-77"), vec![]),
        (None, vec![("MCPSPEC_PARAM_TOKEN", "S3CRET-PLAIN-77")]),
    ] {
        let out = tempfile::tempdir().unwrap();
        let (json, junit) = (out.path().join("r.json"), out.path().join("r.xml"));
        let server = stdio_target(&[]);
        let mut args = vec![
            "run",
            pack.to_str().unwrap(),
            "-v",
            "--era",
            "legacy",
            "--stdio",
            &server,
            "--json",
            json.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ];
        if let Some(s) = set {
            args.extend(["--set", s]);
        }
        let r = run_in(&repo_root(), &args, &env);
        assert_eq!(r.code, 0, "{r:?}");
        let all = format!(
            "{}{}{}",
            r.all_output(),
            std::fs::read_to_string(&json).unwrap(),
            std::fs::read_to_string(&junit).unwrap()
        );
        assert!(!all.contains("S3CRET-PLAIN-77"), "leaked:\n{all}");
        assert!(all.contains("token=***"), "{all}");
    }
}

#[test]
fn parameter_mistakes_of_a_run_are_errors_before_anything_starts() {
    let dir = tree(SECRET_PACK);
    let pack = dir.path().join("p");
    let p = pack.to_str().unwrap();
    let server = stdio_target(&[]);
    // A required parameter that is not set.
    let r = run(&["run", p, "--stdio", &server]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("parameter `token` of pack `secrets` is required and not set"),
        "{r:?}"
    );
    assert!(r.stderr.contains("pack.yaml:4:10"), "{r:?}");
    // An unknown parameter for the packs run, with did-you-mean.
    let r = run(&["run", p, "--stdio", &server, "--set", "tokn=x"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("unknown parameter `tokn`"), "{r:?}");
    assert!(r.stderr.contains("did you mean `token`?"), "{r:?}");
    // A value of the wrong type from the command line.
    let r = run(&["run", TEAM, "--stdio", &server, "--set", "max_notes=many"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains(
            "parameter `max_notes` of pack `notes-team`: expected an integer, got `many`"
        ),
        "{r:?}"
    );
    // `validate` needs no values.
    let v = run(&["validate", p]);
    assert_eq!(v.code, 0, "{v:?}");
}

#[test]
fn unmet_pack_requirements_skip_every_scenario_with_the_reason() {
    let dir = tree(&[
        (
            "p/pack.yaml",
            "name: needs\nversion: 1.0.0\nrequires: { eras: [2026-07-28], capabilities: [tools] }\n",
        ),
        (
            "p/s.yaml",
            "scenario: needs\nsteps:\n  - name: list\n    request: { method: tools/list }\n",
        ),
        (
            "q/pack.yaml",
            "name: needs-completions\nversion: 1.0.0\nrequires: { capabilities: [completions] }\n",
        ),
        (
            "q/s.yaml",
            "scenario: needs-completions\nsteps:\n  - name: list\n    request: { method: tools/list }\n",
        ),
    ]);
    let (p, q) = (dir.path().join("p"), dir.path().join("q"));
    let (code, report, out) = run_json(
        &[
            "run",
            p.to_str().unwrap(),
            q.to_str().unwrap(),
            "--era",
            "legacy",
            "--era",
            "2026-07-28",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        steps(&report, "needs@2026-07-28"),
        [("list".into(), "passed".into())],
        "{out}"
    );
    assert_eq!(steps(&report, "needs@legacy")[0].1, "skipped", "{out}");
    assert!(
        out.contains("pack `needs` requires eras [2026-07-28]; the connection negotiated legacy"),
        "{out}"
    );
    assert!(
        out.contains("pack `needs-completions` requires the `completions` capability, which the server does not declare"),
        "{out}"
    );
}

#[test]
fn a_pack_imported_through_two_paths_runs_once() {
    let scenario = |id: &str| {
        format!("scenario: {id}\nsteps:\n  - name: list\n    request: {{ method: tools/list }}\n")
    };
    let files: Vec<(String, String)> = vec![
        (
            "root/pack.yaml".into(),
            "name: root\nversion: 1.0.0\nimports:\n  - pack: ../a\n  - pack: ../b\n".into(),
        ),
        ("root/s.yaml".into(), scenario("root")),
        (
            "a/pack.yaml".into(),
            "name: a\nversion: 1.0.0\nimports:\n  - pack: ../common\n    version: \"^2\"\n".into(),
        ),
        ("a/s.yaml".into(), scenario("a")),
        (
            "b/pack.yaml".into(),
            "name: b\nversion: 1.0.0\nimports:\n  - pack: ./../common\n".into(),
        ),
        ("b/s.yaml".into(), scenario("b")),
        (
            "common/pack.yaml".into(),
            "name: common\nversion: 2.1.0\n".into(),
        ),
        ("common/s.yaml".into(), scenario("common")),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = tree(&refs);
    let root: PathBuf = dir.path().join("root/pack.yaml");
    let (code, report, out) = run_json(&["run", root.to_str().unwrap(), "--era", "legacy"], &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        suite_ids(&report),
        ["common@legacy", "a@legacy", "b@legacy", "root@legacy"],
        "imports first, each pack once"
    );
}
