//! `--set NAME=VALUE` parameters, and `NAME=env:VAR` secrets that never reach any output.

mod common;

use common::{run, run_in, scenario_file, stdio_target};

const SCENARIO: &str = r#"
scenario: params
vars: { city: Boston }
steps:
  - name: echo the token
    request: { method: tools/call, params: { name: echo, arguments: { text: "token={{ token }}" } } }
    expect:
      - { path: "$.content[0].text", matches: "^token=" }
  - name: weather for the city
    request: { method: tools/call, params: { name: get_weather, arguments: { city: "{{ city }}" } } }
    expect:
      - { path: "$.structuredContent.city", equals: "{{ city }}" }
"#;

#[test]
fn parameters_are_template_variables_and_win_over_vars() {
    let (dir, path) = scenario_file("p.yaml", SCENARIO);
    let json = dir.path().join("r.json");
    let r = run(&[
        "run",
        path.to_str().unwrap(),
        "--stdio",
        &stdio_target(&[]),
        "--era",
        "legacy",
        "--set",
        "token=plain",
        "--set",
        "city=Paris",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(
        text.contains(r#"\"city\":\"Paris\""#),
        "--set wins over vars: {text}"
    );
}

#[test]
fn an_unset_parameter_is_a_load_error_and_bad_sets_exit_2() {
    let (_d, path) = scenario_file("p.yaml", SCENARIO);
    let p = path.to_str().unwrap();
    let r = run(&["run", p, "--stdio", &stdio_target(&[])]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("undefined template variable `token`"),
        "{r:?}"
    );
    for (set, needle) in [
        ("token", "expected NAME=VALUE"),
        ("1x=y", "is not a variable name"),
        ("token=env:MCPSPEC_UNSET_VAR", "is not set"),
    ] {
        let r = run(&["run", p, "--stdio", &stdio_target(&[]), "--set", set]);
        assert_eq!(r.code, 2, "{set}: {r:?}");
        assert!(r.stderr.contains(needle), "{set}: {r:?}");
    }
}

#[test]
fn env_parameters_are_secrets_in_every_output() {
    let (dir, path) = scenario_file("p.yaml", SCENARIO);
    let (json, junit) = (dir.path().join("r.json"), dir.path().join("j.xml"));
    let r = run_in(
        &common::repo_root(),
        &[
            "run",
            path.to_str().unwrap(),
            "--stdio",
            &stdio_target(&[]),
            "--era",
            "legacy",
            "-v",
            "--set",
            "token=env:MCPSPEC_TEST_TOKEN",
            "--json",
            json.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[("MCPSPEC_TEST_TOKEN", "S3CRET-VALUE-42")],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let all = format!(
        "{}{}{}",
        r.all_output(),
        std::fs::read_to_string(&json).unwrap(),
        std::fs::read_to_string(&junit).unwrap()
    );
    assert!(
        !all.contains("S3CRET-VALUE-42"),
        "the secret leaked:\n{all}"
    );
    assert!(
        all.contains("token=***"),
        "the transcript shows the redacted value:\n{all}"
    );
}
