//! The eval gate cannot be fooled: the pipeline (base run, candidate run with a description
//! change, compare) never says OK because of a cap, a partial run, a hung model API or an
//! API that reports no `usage`. Real processes on 127.0.0.1: the example MCP server (stdio)
//! and the project's local model server with seeded faults.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};

use common::model_server::ModelServer;
use common::{read_json, run, stdio_target};
use serde_json::Value;

/// The example set with prices: `local` costs like a hosted model.
fn priced_set(dir: &Path) -> String {
    let set = std::fs::read_to_string(common::repo_root().join("tests/eval/example.eval.yaml"))
        .unwrap()
        .replace(
            "    seed: 7\n    maxTurns: 4\n  local-anthropic:",
            "    seed: 7\n    maxTurns: 4\n    maxTokens: 200\n    price: { input: 3, output: 15 }\n  local-anthropic:",
        );
    assert!(set.contains("price:"), "the set changed: {set}");
    let path = dir.join("priced.eval.yaml");
    std::fs::write(&path, set).unwrap();
    path.display().to_string()
}

/// `eval run SET` against the example server with `changes`, through `model`.
fn eval(
    dir: &Path,
    set: &str,
    name: &str,
    changes: &[&str],
    model: &ModelServer,
    extra: &[&str],
) -> (common::Run, PathBuf) {
    let json = dir.join(format!("{name}.json"));
    let mut flags = Vec::new();
    for c in changes {
        flags.extend(["--change", c]);
    }
    let r = common::model_server::eval_run(set, &stdio_target(&flags), model, &json, extra);
    (r, json)
}

fn compare(base: &Path, cand: &Path, extra: &[&str]) -> common::Run {
    let mut args = vec![
        "eval",
        "compare",
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
    ];
    args.extend(extra);
    run(&args)
}

fn tasks(v: &Value) -> &Vec<Value> {
    v["tasks"].as_array().unwrap()
}

/// Item 1 and 11: a candidate capped by `--max-cost` exits 5 (not 1, a failed trial), its
/// results keep what a cut trial spent, unrun tasks show NOT RUN, and compare refuses it
/// (exit 5, never-judged tasks named) unless `--allow-partial`.
#[test]
fn a_capped_candidate_never_clears_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let set = priced_set(dir.path());
    let model = ModelServer::start(&[]);
    let (base, base_json) = eval(dir.path(), &set, "base", &[], &model, &[]);
    assert_eq!(base.code, 0, "{base:?}");
    let full = read_json(&base_json)["usage"]["costUsd"].as_f64().unwrap();
    // The candidate's description change regresses weather-boston; the cap stops the run
    // about a third of the way.
    let cap = format!("{}", full / 3.0);
    let (cand, cand_json) = eval(
        dir.path(),
        &set,
        "candidate",
        &["echo-claims-weather"],
        &model,
        &["--max-cost", &cap],
    );
    assert_eq!(cand.code, 5, "a stop of its own: {cand:?}");
    assert!(
        cand.stderr
            .contains("stopped before spending more than --max-cost"),
        "{cand:?}"
    );
    assert!(cand.stdout.contains("NOT RUN"), "{cand:?}");
    let v = read_json(&cand_json);
    assert_eq!(v["partial"], true);
    assert!(v["aborted"].is_string(), "{v:#}");
    // What was spent is in the results: the finished trials' and the cut trial's.
    let finished: f64 = tasks(&v)
        .iter()
        .flat_map(|t| t["trials"].as_array().unwrap())
        .map(|t| t["inputTokens"].as_f64().unwrap())
        .sum();
    let cut: f64 = tasks(&v)
        .iter()
        .filter_map(|t| t["cut"]["usage"]["inputTokens"].as_f64())
        .sum();
    assert!(cut > 0.0, "the trial the cap cut kept its spend: {v:#}");
    assert_eq!(
        v["usage"]["inputTokens"].as_f64().unwrap(),
        finished + cut,
        "{v:#}"
    );
    let c = compare(&base_json, &cand_json, &[]);
    assert_eq!(c.code, 5, "{c:?}");
    assert!(c.stdout.contains("INCOMPLETE"), "{c:?}");
    assert!(!c.stdout.contains("OK:"), "{c:?}");
    assert!(c.stderr.contains("never judged: "), "{c:?}");
    assert!(c.stderr.contains("--max-cost"), "{c:?}");
    let allowed = compare(&base_json, &cand_json, &["--allow-partial"]);
    assert_ne!(allowed.code, 5, "{allowed:?}");
    assert!(!allowed.stdout.contains("INCOMPLETE"), "{allowed:?}");
}

/// Item 2: an API that reports no `usage` is costed from sizes (labelled estimated), and
/// `--max-cost` acts on the estimate.
#[test]
fn a_model_api_without_usage_is_estimated_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let set = priced_set(dir.path());
    let model = ModelServer::start(&["--fault", "no-usage"]);
    let (r, json) = eval(dir.path(), &set, "estimated", &[], &model, &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&json);
    assert_eq!(v["usage"]["estimated"], true, "{v:#}");
    assert!(v["usage"]["inputTokens"].as_u64().unwrap() > 0, "{v:#}");
    assert!(v["usage"]["costUsd"].as_f64().unwrap() > 0.0, "{v:#}");
    assert_eq!(tasks(&v)[0]["trials"][0]["estimatedTokens"], true);
    assert!(r.stdout.contains("ESTIMATED"), "{r:?}");
    let spent = v["usage"]["costUsd"].as_f64().unwrap();
    let (r, json) = eval(
        dir.path(),
        &set,
        "estimated-capped",
        &[],
        &model,
        &["--max-cost", &format!("{}", spent / 3.0)],
    );
    assert_eq!(r.code, 5, "the cap acts on the estimate: {r:?}");
    let v = read_json(&json);
    assert_eq!(v["partial"], true);
    assert!(
        v["usage"]["costUsd"].as_f64().unwrap() <= spent / 3.0,
        "{v:#}"
    );
}

/// Item 4: consecutive API failures open the circuit breaker: the run stops with a clear
/// reason, the report is written, exit 5; compare refuses the partial candidate.
#[test]
fn a_hung_model_api_trips_the_circuit_breaker() {
    let dir = tempfile::tempdir().unwrap();
    let set = priced_set(dir.path());
    let good = ModelServer::start(&[]);
    let (base, base_json) = eval(dir.path(), &set, "base", &[], &good, &[]);
    assert_eq!(base.code, 0, "{base:?}");
    let hung = ModelServer::start(&["--fault", "hang"]);
    let (r, json) = eval(
        dir.path(),
        &set,
        "hung",
        &["echo-claims-weather"],
        &hung,
        &["--model-timeout", "1s", "--max-api-failures", "2"],
    );
    assert_eq!(r.code, 5, "{r:?}");
    assert!(
        r.stderr
            .contains("2 model requests failed in a row (the circuit breaker"),
        "{r:?}"
    );
    let v = read_json(&json);
    assert_eq!(v["partial"], true);
    assert!(
        v["aborted"].as_str().unwrap().contains("circuit breaker"),
        "{v:#}"
    );
    let ran: usize = tasks(&v)
        .iter()
        .map(|t| t["trials"].as_array().unwrap().len())
        .sum();
    assert!(ran <= 2, "the run stopped after 2 failures: {v:#}");
    let c = compare(&base_json, &json, &[]);
    assert_eq!(c.code, 5, "{c:?}");
}

/// Item 4: `--max-duration` bounds the whole run, whatever the per-request timeout.
#[test]
fn max_duration_stops_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let set = priced_set(dir.path());
    let hung = ModelServer::start(&["--fault", "hang"]);
    let started = std::time::Instant::now();
    let (r, json) = eval(
        dir.path(),
        &set,
        "slow",
        &[],
        &hung,
        &["--model-timeout", "10m", "--max-duration", "2s"],
    );
    assert_eq!(r.code, 5, "{r:?}");
    assert!(r.stderr.contains("--max-duration 2s"), "{r:?}");
    // Far below the 10 minutes one request could take; generous under load.
    assert!(started.elapsed().as_secs() < 120, "{:?}", started.elapsed());
    let v = read_json(&json);
    assert_eq!(v["partial"], true);
    assert!(r.stdout.contains("NOT RUN"), "{r:?}");
}

/// Item 10: a reply whose body stalls after its headers is a timeout, said so.
#[test]
fn a_stalled_reply_body_is_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let set = priced_set(dir.path());
    let model = ModelServer::start(&["--fault", "stall-body:boston"]);
    let (r, json) = eval(
        dir.path(),
        &set,
        "stalled",
        &[],
        &model,
        &["--model-timeout", "1s"],
    );
    assert_eq!(r.code, 1, "{r:?}");
    let v = read_json(&json);
    let weather = tasks(&v)
        .iter()
        .find(|t| t["id"] == "weather-boston")
        .unwrap();
    let error = weather["trials"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("did not answer within 1s: its reply body stalled"),
        "{error}"
    );
    assert!(!error.contains("not JSON"), "{error}");
}

/// Item 5: a recording of the example server's `create_note` (a new UUID on every call)
/// replays 3/3 with no key and no model server: the tool results differ only in UUIDs.
#[test]
fn a_recording_with_volatile_results_replays() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("notes.eval.yaml");
    std::fs::write(
        &set,
        r#"evalset: notes
trials: 3
models:
  local: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy, maxTurns: 3 }
tasks:
  - id: note
    prompt: Store a note in memory and return its id.
    expect: [ { calls: create_note } ]
"#,
    )
    .unwrap();
    let set = set.to_str().unwrap();
    let rec = dir.path().join("rec");
    let model = ModelServer::start(&[]);
    let (r, json) = eval(
        dir.path(),
        set,
        "recorded",
        &[],
        &model,
        &["--record", rec.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        tasks(&read_json(&json))[0]["trials"][0]["toolCalls"][0]["name"],
        "create_note"
    );
    drop(model);
    let json = dir.path().join("replayed.json");
    let r = run(&[
        "eval",
        "run",
        set,
        "--stdio",
        &stdio_target(&[]),
        "--model",
        "local",
        "--replay",
        rec.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&json);
    let ok = tasks(&v)[0]["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["success"] == true)
        .count();
    assert_eq!(ok, 3, "{v:#}");
}
