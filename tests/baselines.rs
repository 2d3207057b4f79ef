//! Expected-failures baselines end to end: the four exit rules, era qualifiers, warnings
//! and --strict, stale entries, --write-baseline, bad files.

mod common;

use common::{read_json, run, scenario_file, stdio_target};
use serde_json::Value;

const SCENARIO: &str = r#"
scenario: s
steps:
  - name: passes
    request: { method: tools/list }
    expect:
      - { path: "$.tools", type: array }
  - name: fails
    request: { method: tools/call, params: { name: no_such_tool, arguments: {} } }
    expect:
      - error: { code: -32000 }
  - name: warns
    level: should
    request: { method: tools/list }
    expect:
      - { path: "$.tools", length: 0 }
"#;

struct Case {
    dir: tempfile::TempDir,
    scenario: String,
}

fn case() -> Case {
    let (dir, path) = scenario_file("s.yaml", SCENARIO);
    Case {
        scenario: path.display().to_string(),
        dir,
    }
}

impl Case {
    fn run(&self, baseline: &str, extra: &[&str]) -> (i32, Value, String) {
        let file = self.dir.path().join("baseline.yaml");
        std::fs::write(&file, baseline).unwrap();
        let json = self.dir.path().join("r.json");
        let mut args = vec![
            "run",
            &self.scenario,
            "--stdio",
            Box::leak(stdio_target(&[]).into_boxed_str()),
            "--expected-failures",
            file.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let r = run(&args);
        let v = if json.exists() {
            read_json(&json)
        } else {
            Value::Null
        };
        (r.code, v, r.all_output())
    }
}

fn statuses(v: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for suite in v["suites"].as_array().unwrap() {
        for step in suite["steps"].as_array().unwrap() {
            out.push((
                suite["id"].as_str().unwrap().to_string(),
                step["name"].as_str().unwrap().to_string(),
                step["outcome"]["status"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

fn status_of(v: &Value, suite: &str, step: &str) -> String {
    statuses(v)
        .into_iter()
        .find(|(s, n, _)| s == suite && n == step)
        .map(|x| x.2)
        .unwrap_or_else(|| panic!("no {suite}:{step}"))
}

#[test]
fn the_four_exit_rules() {
    let c = case();
    // fails + listed → 0 (expected failure)
    let (code, v, out) = c.run("server:\n  - s:fails\n", &["--era", "legacy"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(status_of(&v, "s@legacy", "fails"), "expectedFailure");
    assert!(out.contains("XFAIL"), "{out}");
    // fails + unlisted → 1
    let (code, v, _) = c.run("server: []\n", &["--era", "legacy"]);
    assert_eq!(code, 1);
    assert_eq!(status_of(&v, "s@legacy", "fails"), "failed");
    // passes + listed → 1 (stale), with the line to remove
    let (code, v, out) = c.run("server:\n  - s:fails\n  - s:passes\n", &["--era", "legacy"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("passes now: remove line 3"), "{out}");
    assert_eq!(v["staleEntries"][0]["entry"], "s:passes");
    assert_eq!(v["staleEntries"][0]["line"], 3);
    // passes + unlisted → 0 (a scenario without failures)
    let (ok, path) = scenario_file(
        "ok.yaml",
        "scenario: ok\nsteps:\n  - name: lists\n    request: { method: tools/list }\n",
    );
    let file = ok.path().join("b.yaml");
    std::fs::write(&file, "server: []\n").unwrap();
    let r = run(&[
        "run",
        path.to_str().unwrap(),
        "--stdio",
        &stdio_target(&[]),
        "--era",
        "legacy",
        "--expected-failures",
        file.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
}

#[test]
fn whole_scenario_entries_and_era_qualifiers() {
    let c = case();
    let matrix = ["--era", "legacy", "--era", "2026-07-28"];
    let (code, v, out) = c.run("server:\n  - s\n", &matrix);
    assert_eq!(code, 0, "{out}");
    assert_eq!(status_of(&v, "s@2026-07-28", "fails"), "expectedFailure");
    // Only in legacy: the modern failure is unexpected.
    let (code, v, _) = c.run("server:\n  - s@legacy:fails\n", &matrix);
    assert_eq!(code, 1);
    assert_eq!(status_of(&v, "s@legacy", "fails"), "expectedFailure");
    assert_eq!(status_of(&v, "s@2026-07-28", "fails"), "failed");
    let (code, _, out) = c.run(
        "server:\n  - s@legacy:fails\n  - s@2026-07-28:fails\n",
        &matrix,
    );
    assert_eq!(code, 0, "{out}");
}

#[test]
fn warnings_and_strict() {
    let c = case();
    let base = "server:\n  - s:fails\n";
    let (code, v, _) = c.run(base, &["--era", "legacy"]);
    assert_eq!(code, 0, "an unlisted warning does not fail");
    assert_eq!(status_of(&v, "s@legacy", "warns"), "warning");
    let (code, _, _) = c.run(base, &["--era", "legacy", "--strict"]);
    assert_eq!(code, 1, "--strict: an unlisted warning fails");
    let (code, v, out) = c.run(
        "server:\n  - s:fails\n  - s:warns\n",
        &["--era", "legacy", "--strict"],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(status_of(&v, "s@legacy", "warns"), "expectedFailure");
    // Without a baseline, --strict also fails on warnings.
    let only_warning = SCENARIO.replace("name: fails", "name: fails\n    level: should");
    let (_d, path) = scenario_file("w.yaml", &only_warning);
    let p = path.to_str().unwrap();
    let r = run(&["run", p, "--stdio", &stdio_target(&[]), "--era", "legacy"]);
    assert_eq!(r.code, 0, "warnings only: {r:?}");
    let r = run(&[
        "run",
        p,
        "--stdio",
        &stdio_target(&[]),
        "--era",
        "legacy",
        "--strict",
    ]);
    assert_eq!(r.code, 1, "warnings only, --strict: {r:?}");
}

#[test]
fn junit_marks_expected_failures_and_stale_entries() {
    let c = case();
    let junit = c.dir.path().join("j.xml");
    let (code, _, _) = c.run(
        "server:\n  - s:fails\n  - s:passes\n",
        &["--era", "legacy", "--junit", junit.to_str().unwrap()],
    );
    assert_eq!(code, 1);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("type=\"xfail\""), "{xml}");
    assert!(xml.contains("stale entry: s:passes"), "{xml}");
    common::assert_valid_junit(&junit);
}

#[test]
fn write_baseline_round_trips() {
    let c = case();
    let written = c.dir.path().join("written.yaml");
    let r = run(&[
        "run",
        &c.scenario,
        "--stdio",
        &stdio_target(&[]),
        "--era",
        "legacy",
        "--era",
        "2026-07-28",
        "--write-baseline",
        written.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.contains("- s:fails"), "{text}");
    assert!(
        !text.contains("warns"),
        "warnings are listed only with --strict:\n{text}"
    );
    let (code, _, out) = c.run(&text, &["--era", "legacy", "--era", "2026-07-28"]);
    assert_eq!(code, 0, "a run with its own baseline passes:\n{out}");
}

/// An entry must name a scenario, and a check of it, that exists in what is loaded: a
/// typo or an id copied from another tool was silently never matched.
#[test]
fn entries_naming_no_scenario_or_check_exit_2_with_did_you_mean() {
    let c = case();
    for (text, needle) in [
        (
            "server:\n  - s:fail\n",
            "error: scenario `s` has no check `fail`",
        ),
        ("server:\n  - s:fail\n", "did you mean `fails`?"),
        ("server:\n  - s@legacy:pases\n", "did you mean `passes`?"),
        (
            "server:\n  - ss:fails\n",
            "error: no scenario `ss` in the files and packs run",
        ),
        ("server:\n  - ss\n", "did you mean `s`?"),
        (
            "server:\n  - legacy-tools:unknown_tool_protocol_error\n",
            "no scenario `legacy-tools`",
        ),
    ] {
        let (code, v, out) = c.run(text, &["--era", "legacy"]);
        assert_eq!(code, 2, "{text:?}: {out}");
        assert_eq!(v, Value::Null, "nothing ran: {out}");
        assert!(
            out.contains(needle),
            "{text:?}: missing {needle:?} in\n{out}"
        );
        assert!(
            out.contains("baseline.yaml:2:5"),
            "{text:?}: the entry's position: {out}"
        );
    }
    // A known check of a scenario that does not run in this selection stays tolerated.
    let (_other_dir, other) = scenario_file(
        "other.yaml",
        "scenario: other\nsteps:\n  - name: lists\n    request: { method: tools/list }\n",
    );
    let (code, _, out) = c.run(
        "server:\n  - s:fails\n  - other:lists\n",
        &["--era", "legacy", "--filter", "s", other.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}");
}

/// The committed interop baselines name only checks of the built-in conformance packs.
#[test]
fn interop_baselines_name_known_checks() {
    let loaded = mcpspec::dsl::load::load_all(
        &[std::path::PathBuf::from("conformance")],
        &Default::default(),
    )
    .expect("the conformance packs load");
    let known = loaded
        .scenarios
        .iter()
        .map(|s| (s.id.as_str(), s.step_names()))
        .collect();
    for file in ["python.yaml", "memory.yaml"] {
        let path = common::repo_root()
            .join("tests/interop/baselines")
            .join(file);
        let baseline = mcpspec::baseline::Baseline::load(&path).expect("the baseline loads");
        assert!(!baseline.entries.is_empty());
        if let Err(e) = baseline.check_known(&known) {
            panic!("{file}: {}", e.render());
        }
    }
}

/// `validate` tells baselines and rules files from scenarios and checks them.
#[test]
fn validate_checks_baseline_and_rules_files() {
    let r = run(&[
        "validate",
        "tests/interop/baselines/python.yaml",
        "examples/contract/rules.yaml",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stdout,
        "ok: tests/interop/baselines/python.yaml (baseline)\nok: examples/contract/rules.yaml (contract rules)\n"
    );
    let (dir, _) = scenario_file("b.yaml", "server:\n  - s@nonsense\n");
    let r = run(&["validate", dir.path().join("b.yaml").to_str().unwrap()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("is not an era") && r.stderr.contains("b.yaml:2:5"),
        "{r:?}"
    );
}

#[test]
fn malformed_baselines_exit_2_with_positions() {
    let c = case();
    for (text, needle) in [
        ("server:\n  - s: fails\n", "no space after the colon"),
        ("server:\n  - s\n  - s:fails\n", "both"),
        ("servr:\n  - s\n", "did you mean `server`"),
        ("server:\n  - s@nonsense\n", "is not an era"),
    ] {
        let (code, _, out) = c.run(text, &["--era", "legacy"]);
        assert_eq!(code, 2, "{text:?}: {out}");
        assert!(
            out.contains(needle),
            "{text:?}: missing {needle:?} in\n{out}"
        );
        assert!(out.contains("baseline.yaml:"), "{out}");
    }
}
