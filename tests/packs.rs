//! Packs end to end, against the real example server: the example team pack (parameters,
//! an import of a team pack and of a built-in pack, a reusable step group), parameter
//! precedence, secret parameters, pack requirements, imports that run once, and the
//! parameter mistakes only a run can see. Pack *file* mistakes are goldens in
//! `tests/invalid/` (pack-*, group-*).

mod common;

use std::path::Path;

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

// A pack's secret parameters, parameter mistakes of a run, unmet pack requirements and a
// pack imported through two paths: tests/cases/pack-*/.
