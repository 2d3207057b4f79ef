//! Expected-failures baselines: the committed interop baselines name known checks, and
//! `validate` checks baseline and rules files. The runs with baselines (the four exit rules,
//! era qualifiers, warnings and --strict, JUnit marks, --write-baseline, bad entries and bad
//! files) are the case tests/cases/baselines/.

mod common;

use common::{run, scenario_file};

/// The committed interop baselines name only checks of the built-in conformance packs.
#[test]
fn interop_baselines_name_known_checks() {
    let loaded = mcpspec::language::dsl::load::load_all(
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
        let baseline = mcpspec::face::baseline::Baseline::load(&path).expect("the baseline loads");
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
        "examples/scenarios/contract/rules.yaml",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stdout,
        "ok: tests/interop/baselines/python.yaml (baseline)\nok: examples/scenarios/contract/rules.yaml (contract rules)\n"
    );
    let (dir, _) = scenario_file("b.yaml", "server:\n  - s@nonsense\n");
    let r = run(&["validate", dir.path().join("b.yaml").to_str().unwrap()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("is not an era") && r.stderr.contains("b.yaml:2:5"),
        "{r:?}"
    );
}
