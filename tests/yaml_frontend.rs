//! The fast YAML front end (`mcpspec::dsl::yaml`) agrees with serde-saphyr: every YAML
//! file of the repository (specs, examples, tests) loads to the same values with the same
//! positions both ways, or the fast path declines it (and serde-saphyr loads it).

use std::path::{Path, PathBuf};

use mcpspec::dsl::model::ScenarioDoc;
use mcpspec::dsl::value::TValue;
use mcpspec::dsl::yaml;

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

#[test]
fn every_repository_yaml_file_loads_the_same_both_ways() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["specs", "examples", "tests"] {
        yaml_files(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() > 20, "found only {} files", files.len());
    let (mut fast_values, mut fast_scenarios) = (0, 0);
    for file in &files {
        // tests/invalid/bad-utf8.yaml is not text: the loader refuses it before parsing.
        let Ok(text) = String::from_utf8(std::fs::read(file).unwrap()) else {
            continue;
        };
        let name = file.display();
        // Untyped: values, scalar resolution and positions of every node.
        let reference = serde_saphyr::from_str::<TValue>(&text);
        if let Ok(fast) = yaml::from_str::<TValue>(&text) {
            fast_values += 1;
            let reference = reference
                .unwrap_or_else(|e| panic!("{name}: fast path accepted, serde-saphyr: {e}"));
            assert_eq!(fast, reference, "{name}: untyped values differ");
        }
        // Typed: the scenario model, with the positions it keeps.
        let reference = serde_saphyr::from_str::<ScenarioDoc>(&text);
        if let Ok(fast) = yaml::from_str::<ScenarioDoc>(&text) {
            fast_scenarios += 1;
            let reference = reference
                .unwrap_or_else(|e| panic!("{name}: fast path accepted, serde-saphyr: {e}"));
            assert_eq!(
                format!("{fast:#?}"),
                format!("{reference:#?}"),
                "{name}: scenario models differ"
            );
        }
    }
    // The fast path must actually carry the load, not decline everything.
    assert!(
        fast_values * 10 >= files.len() * 9,
        "fast path loaded only {fast_values} of {} files",
        files.len()
    );
    assert!(
        fast_scenarios > 20,
        "fast path loaded only {fast_scenarios} scenarios"
    );
    eprintln!(
        "{} files: {fast_values} untyped and {fast_scenarios} scenarios by the fast path",
        files.len()
    );
}

/// A scenario using each scalar form and layout the DSL allows, both ways.
#[test]
fn scalar_forms_and_layouts_agree() {
    let text = r#"# comment
scenario: "forms"
description: >
  folded
  text
tags: [a, 'b', "c"]
eras: [2026-07-28, legacy]
vars:
  int: 42
  neg: -7
  float: 1.25
  exp: 1e3
  zero_lead: 0127
  yes11: yes
  nothing: ~
  empty:
  quoted_null: "null"
  date: 2026-07-28
  multi: first
    second line
  literal: |
    line one
      indented
  list: [1, two, 3.5, true, null]
  nested: {a: {b: [x, {c: d}]}}
steps:
  - name: one
    timeout: 5s
    retry: { count: 2, interval: 10ms }
    request:
      method: tools/call
      params: { name: echo, arguments: { text: "{{ int }}" } }
    expect:
      - { path: "$.a", equals: 5, gte: 1.5, lt: 10 }
      - { path: "$.b", length: { gte: 1 } }
      - { path: "$.c", length: 3 }
      - error: { code: [-32602, -32601], message: "." }
      - error: { code: -32602 }
      - { path: "$.d", type: string }
      - isError: false
    capture: { x: "$.x" }
  - name: two
    level: should
    transport: stdio
    check: { kind: list_deterministic }
"#;
    let fast: ScenarioDoc = yaml::from_str(text).expect("fast path handles these forms");
    let reference: ScenarioDoc = serde_saphyr::from_str(text).unwrap();
    assert_eq!(format!("{fast:#?}"), format!("{reference:#?}"));
    let fast: TValue = yaml::from_str(text).unwrap();
    assert_eq!(fast, serde_saphyr::from_str::<TValue>(text).unwrap());
}
