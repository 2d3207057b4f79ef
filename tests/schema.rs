//! The published DSL schema: `mcpspec schema` matches the committed
//! `schema/scenario.schema.json`, the example scenarios (and the scenarios the other
//! end-to-end tests use) validate against it, and `mcpspec validate` accepts them.

mod common;

use std::path::{Path, PathBuf};

use common::{repo_root, run};
use serde_json::Value;

const SCHEMA: &str = "schema/scenario.schema.json";

fn committed_schema() -> Value {
    let text = std::fs::read_to_string(repo_root().join(SCHEMA)).expect("committed schema");
    serde_json::from_str(&text).expect("the committed schema is JSON")
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&committed_schema())
        .expect("the committed schema is a valid JSON Schema")
}

fn yaml_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
}

fn parse_yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("scenario file");
    serde_saphyr::from_str::<Value>(&text)
        .unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
}

/// Schema errors of one file, one per line (empty when valid).
fn schema_errors(validator: &jsonschema::Validator, path: &Path) -> Vec<String> {
    let doc = parse_yaml(path);
    validator
        .iter_errors(&doc)
        .map(|e| format!("{}: at `{}`: {e}", path.display(), e.instance_path()))
        .collect()
}

#[test]
fn printed_schema_matches_the_committed_file() {
    let out = run(&["schema"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stderr, "", "{out:?}");
    let committed = std::fs::read_to_string(repo_root().join(SCHEMA)).expect("committed schema");
    assert!(
        out.stdout == committed,
        "{SCHEMA} is stale: run `mcpspec schema > schema/scenario.schema.json` and commit the result"
    );
    // It is the DSL's schema, for JSON Schema 2020-12 editors.
    let schema = committed_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["title"], "mcpspec scenario");
    assert_eq!(schema["required"], serde_json::json!(["scenario", "steps"]));
}

#[test]
fn example_scenarios_validate_against_the_schema() {
    let validator = validator();
    let files = yaml_files("examples/scenarios");
    assert!(files.len() >= 4, "the examples are there: {files:?}");
    let errors: Vec<String> = files
        .iter()
        .flat_map(|f| schema_errors(&validator, f))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The scenarios of the other end-to-end tests are valid too (editors using the schema
/// would otherwise flag them).
#[test]
fn test_scenarios_validate_against_the_schema() {
    let validator = validator();
    let mut files = yaml_files("tests/expectations");
    files.extend(yaml_files("tests/golden/scenarios"));
    // What `mcpspec init` generates (its golden tree) is valid for editors too.
    files.extend(yaml_files("tests/golden/init/tests/mcp"));
    for kind in ["tools", "prompts", "resources", "resource-templates"] {
        files.extend(yaml_files(&format!("tests/golden/init/tests/mcp/{kind}")));
    }
    files.retain(|f| !f.ends_with("pack.yaml"));
    assert!(files.len() >= 6, "{files:?}");
    let mut errors: Vec<String> = files
        .iter()
        .flat_map(|f| schema_errors(&validator, f))
        .collect();
    let config_schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("schema/config.schema.json")).unwrap(),
    )
    .unwrap();
    let config = jsonschema::validator_for(&config_schema).unwrap();
    errors.extend(schema_errors(
        &config,
        &repo_root().join("tests/golden/init/mcpspec.yaml"),
    ));
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The schema is not vacuous: structural mistakes the loader rejects, it rejects too.
#[test]
fn schema_rejects_structurally_invalid_scenarios() {
    let validator = validator();
    for case in ["unknown-key", "wrong-type", "missing-key"] {
        let path = repo_root().join(format!("tests/invalid/{case}.yaml"));
        assert!(
            !schema_errors(&validator, &path).is_empty(),
            "{case}: the schema accepts {}",
            path.display()
        );
    }
    for (what, doc) in [
        ("no steps key", serde_json::json!({"scenario": "x"})),
        (
            "a step that is not a mapping",
            serde_json::json!({"scenario": "x", "steps": ["tools/list"]}),
        ),
        (
            "an unknown expectation key",
            serde_json::json!({"scenario": "x", "steps": [{"name": "s", "request": {"method": "m"}, "expect": [{"equal": 1}]}]}),
        ),
        (
            "a bad level",
            serde_json::json!({"scenario": "x", "steps": [{"name": "s", "level": "may", "request": {"method": "m"}}]}),
        ),
        (
            "a bad type predicate",
            serde_json::json!({"scenario": "x", "steps": [{"name": "s", "request": {"method": "m"}, "expect": [{"path": "$", "type": "float"}]}]}),
        ),
    ] {
        assert!(
            !validator.is_valid(&doc),
            "the schema accepts {what}: {doc}"
        );
    }
}

#[test]
fn mcpspec_validate_accepts_the_examples() {
    let out = run(&["validate", "examples/scenarios"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stderr, "", "{out:?}");
    let files = yaml_files("examples/scenarios").len();
    assert!(
        out.stdout
            .starts_with(&format!("ok: {files} scenario(s), ")),
        "{out:?}"
    );
}

#[test]
fn printed_rules_schema_matches_the_committed_file() {
    let printed = run(&["schema", "rules"]);
    assert_eq!(printed.code, 0, "{printed:?}");
    let committed = std::fs::read_to_string(repo_root().join("schema/rules.schema.json"))
        .expect("schema/rules.schema.json");
    assert_eq!(
        printed.stdout.trim_end(),
        committed.trim_end(),
        "schema/rules.schema.json is stale: run `mcpspec schema rules > schema/rules.schema.json` and commit the result"
    );
    // The example rules file validates against it.
    let schema: Value = serde_json::from_str(&committed).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let rules = parse_yaml(&repo_root().join("examples/scenarios/contract/rules.yaml"));
    assert!(validator.is_valid(&rules));
    let bad: Value = serde_json::json!({"accept": [{"list": "tools"}]});
    assert!(
        !validator.is_valid(&bad),
        "an acceptance without name/kind/reason is invalid"
    );
}

#[test]
fn printed_pack_schema_matches_the_committed_file_and_accepts_the_packs() {
    let printed = run(&["schema", "pack"]);
    assert_eq!(printed.code, 0, "{printed:?}");
    let committed = std::fs::read_to_string(repo_root().join("schema/pack.schema.json"))
        .expect("schema/pack.schema.json");
    assert_eq!(
        printed.stdout.trim_end(),
        committed.trim_end(),
        "schema/pack.schema.json is stale: run `mcpspec schema pack > schema/pack.schema.json` and commit the result"
    );
    let schema: Value = serde_json::from_str(&committed).unwrap();
    assert_eq!(schema["title"], "mcpspec pack");
    let packs = jsonschema::validator_for(&schema).unwrap();
    let mut manifests = vec![
        "examples/packs/notes-team/pack.yaml",
        "examples/packs/weather-basics/pack.yaml",
    ];
    manifests.extend([
        "specs/conformance-2026-07-28/pack.yaml",
        "specs/conformance-2025-11-25/pack.yaml",
        "specs/cross-era/pack.yaml",
    ]);
    for m in manifests {
        let errors = schema_errors(&packs, &repo_root().join(m));
        assert!(errors.is_empty(), "{}", errors.join("\n"));
    }
    let bad = serde_json::json!({"name": "x", "version": "1.0.0", "parameters": {"p": {"type": "float"}}});
    assert!(
        !packs.is_valid(&bad),
        "an unknown parameter type is invalid"
    );
    // The example packs' scenarios (with group calls) are valid scenarios.
    let scenarios = validator();
    for dir in [
        "examples/packs/notes-team/scenarios",
        "examples/packs/weather-basics",
    ] {
        // Eval sets (`*.eval.yaml`) are not scenarios: tests/eval.rs checks them.
        for f in yaml_files(dir)
            .into_iter()
            .filter(|f| !f.ends_with("pack.yaml") && !f.to_string_lossy().ends_with(".eval.yaml"))
        {
            let errors = schema_errors(&scenarios, &f);
            assert!(errors.is_empty(), "{}", errors.join("\n"));
        }
    }
}

/// Every YAML file under `dir` (recursively).
fn yaml_tree(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.flatten().map(|e| e.path()) {
        if path.is_dir() {
            yaml_tree(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// The `kind` of every `check:` step under `value`.
fn check_kinds(value: &Value, out: &mut std::collections::BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(kind) = map
                .get("check")
                .and_then(|c| c.get("kind"))
                .and_then(Value::as_str)
            {
                out.insert(kind.to_string());
            }
            map.values().for_each(|v| check_kinds(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| check_kinds(v, out)),
        _ => {}
    }
}

/// The recipe for a built-in check (see `CheckKind`) ends with a YAML step that uses it:
/// every check the schema lists is used by a step of a pack, an example or a test
/// scenario (the invalid inputs aside).
#[test]
fn every_builtin_check_is_used_by_a_yaml_step() {
    let schema = committed_schema();
    let kinds: Vec<&str> = schema["$defs"]["CheckKind"]["oneOf"]
        .as_array()
        .expect("CheckKind lists its variants")
        .iter()
        .map(|v| v["const"].as_str().expect("a check name"))
        .collect();
    assert!(kinds.len() > 20, "{kinds:?}");
    let root = repo_root();
    let mut files = Vec::new();
    for dir in ["specs", "examples", "tests"] {
        yaml_tree(&root.join(dir), &mut files);
    }
    let mut used = std::collections::BTreeSet::new();
    for file in files
        .iter()
        .filter(|f| !f.starts_with(root.join("tests/invalid")))
    {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        if let Ok(value) = serde_saphyr::from_str::<Value>(&text) {
            check_kinds(&value, &mut used);
        }
    }
    let unused: Vec<&&str> = kinds.iter().filter(|k| !used.contains(**k)).collect();
    assert!(
        unused.is_empty(),
        "built-in checks no YAML step uses: {unused:?}"
    );
}
