//! `retry: {count, interval}`: a failing step is re-sent, each attempt is in the
//! transcript, and a passing step is sent once.

mod common;

use common::{read_json, run, scenario_file, stdio_target};

const SCENARIO: &str = r#"
scenario: retry
steps:
  - name: never passes
    retry: { count: 2, interval: 50ms }
    request: { method: tools/list }
    expect:
      - { path: "$.tools", length: 0 }
  - name: passes at once
    retry: { count: 5 }
    request: { method: tools/list }
"#;

#[test]
fn retries_are_attempted_and_recorded() {
    let (dir, path) = scenario_file("retry.yaml", SCENARIO);
    let json = dir.path().join("r.json");
    let r = run(&[
        "run",
        path.to_str().unwrap(),
        "--stdio",
        &stdio_target(&[]),
        "--era",
        "legacy",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = read_json(&json);
    let steps = v["suites"][0]["steps"].as_array().unwrap();
    let sent = |i: usize| {
        steps[i]["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["direction"] == "sent")
            .count()
    };
    let notes: Vec<&str> = steps[0]["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["direction"] == "note")
        .map(|t| t["body"].as_str().unwrap())
        .collect();
    assert_eq!(steps[0]["outcome"]["status"], "failed");
    assert_eq!(sent(0), 3, "first attempt + 2 retries");
    assert_eq!(
        notes,
        [
            "retry: attempt 2 of 3 after 50ms",
            "retry: attempt 3 of 3 after 50ms"
        ]
    );
    assert_eq!(steps[1]["outcome"]["status"], "passed");
    assert_eq!(sent(1), 1, "a passing step is not retried");
}
