//! `--set NAME=VALUE` parameters, and `NAME=env:VAR` secrets that never reach any output.

mod common;

use common::{run_in, stdio_target};

// `--set` and `NAME=env:VAR` on one scenario: tests/cases/params/.

/// Every parameter a built-in check reads (`CheckKind::parameters`) is declared by every
/// built-in pack that contains the check, so `--set`, mcpspec.yaml and
/// `MCPSPEC_PARAM_<NAME>` all reach it.
#[test]
fn builtin_packs_declare_what_their_checks_read() {
    use mcpspec::language::dsl::params::ParamInputs;
    use mcpspec::language::dsl::{Action, builtin, load};
    let mut missing = Vec::new();
    for pack in builtin::pack_names() {
        let loaded = load::load_all(&[pack.into()], &ParamInputs::default()).expect("loads");
        let declared: Vec<String> = loaded
            .packs
            .iter()
            .flat_map(|p| p.parameters.iter().map(|(n, _)| n.clone()))
            .collect();
        for scenario in &loaded.scenarios {
            for step in scenario.compiled_steps().expect("compiles").iter() {
                if let Action::Check { kind, .. } = &step.action {
                    for name in kind.parameters() {
                        if !declared.iter().any(|d| d == name) {
                            missing.push(format!("{pack}: {kind:?} reads `{name}`"));
                        }
                    }
                }
            }
        }
    }
    assert!(missing.is_empty(), "undeclared: {missing:?}");
}

/// `tools/call` requests of a JSON report, by tool name.
fn called_tools(report: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for suite in report["suites"].as_array().unwrap() {
        for step in suite["steps"].as_array().unwrap() {
            for entry in step["transcript"].as_array().into_iter().flatten() {
                if entry["direction"] != "sent" {
                    continue;
                }
                let body: serde_json::Value =
                    serde_json::from_str(entry["body"].as_str().unwrap_or("")).unwrap_or_default();
                if body["method"] == "tools/call" {
                    out.push(body["params"]["name"].as_str().unwrap_or("").to_string());
                }
            }
        }
    }
    out
}

/// The documented ways to name safe tools reach the conformance pack's tool-call checks:
/// `--set safe_tools=…` and `MCPSPEC_PARAM_SAFE_TOOLS` (create_note has side effects, so
/// only they make it called); a `MCPSPEC_PARAM_*` that names no parameter is a warning
/// naming it, not an error (a CI sets one environment for several packs).
#[test]
fn safe_tools_is_settable_for_conformance_and_unknown_env_params_warn() {
    let dir = tempfile::tempdir().unwrap();
    let target = stdio_target(&[]);
    let conformance = |extra: &[&str], env: &[(&str, &str)]| {
        let json = dir.path().join("r.json");
        let _ = std::fs::remove_file(&json);
        let mut args = vec![
            "run",
            "conformance",
            "--stdio",
            &target,
            "--era",
            "2026-07-28",
            "--filter",
            "modern-tool-calls",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let r = run_in(&common::repo_root(), &args, env);
        let report = std::fs::read_to_string(&json)
            .ok()
            .map(|t| serde_json::from_str::<serde_json::Value>(&t).unwrap());
        (r, report)
    };
    let (r, report) = conformance(&[], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!called_tools(&report.unwrap()).contains(&"create_note".to_string()));
    let (r, report) = conformance(&["--set", "safe_tools=create_note,echo"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(called_tools(&report.unwrap()).contains(&"create_note".to_string()));
    let (r, report) = conformance(&[], &[("MCPSPEC_PARAM_SAFE_TOOLS", "create_note")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(called_tools(&report.unwrap()).contains(&"create_note".to_string()));
    // A typo of the variable's name, or a variable meant for another pack: a warning
    // naming it on stderr, never silently ignored, and the run goes on without it.
    let (r, report) = conformance(&[], &[("MCPSPEC_PARAM_SAFE_TOOL", "create_note")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!called_tools(&report.unwrap()).contains(&"create_note".to_string()));
    assert!(
        r.stderr.contains(
            "warning: environment variable `MCPSPEC_PARAM_SAFE_TOOL` names no parameter of the packs run"
        ) && r.stderr.contains("did you mean `MCPSPEC_PARAM_SAFE_TOOLS`?"),
        "{r:?}"
    );
    assert!(!r.stdout.contains("MCPSPEC_PARAM_SAFE_TOOL"), "{r:?}");
    // The budget is a number of seconds.
    let (r, _) = conformance(&["--set", "tool_call_budget=soon"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("tool_call_budget"), "{r:?}");
}
