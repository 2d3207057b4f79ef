//! `eval run --record` / `--replay` and several models in one run (`--model a --model b`),
//! end to end: the example MCP server over stdio, the project's local model server
//! (`examples/model-server`) over both APIs, and the eval set under `tests/eval/`.

mod common;

use std::path::{Path, PathBuf};

use common::model_server::ModelServer;
use common::{Run, assert_valid_junit, read_json, repo_root, run_in, stdio_target};
use serde_json::Value;

const SET: &str = "tests/eval/example.eval.yaml";
/// The key the model server demands in the recording tests (secret-shaped on purpose).
const KEY: &str = "sk-replaytestkey-0123456789abcdefXYZ";

fn set_path() -> String {
    repo_root().join(SET).display().to_string()
}

/// `mcpspec eval run SET --stdio <example server with changes> ARGS` in `dir`, with `env`.
fn eval(dir: &Path, set: &str, changes: &[&str], args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut flags = Vec::new();
    for c in changes {
        flags.extend(["--change", c]);
    }
    let target = stdio_target(&flags);
    let mut all = vec!["eval", "run", set, "--stdio", &target];
    all.extend(args);
    run_in(dir, &all, env)
}

/// Record both APIs' runs of the set into `dir/rec`, through a model server that demands
/// [`KEY`], at a base URL carrying query credentials. Returns the recording folder and the
/// recorded run's results.
fn record(dir: &Path) -> (PathBuf, Value) {
    record_with(dir, "rec", &["local", "local-anthropic"], false)
}

/// [`record`] into `dir/NAME` for `profiles`; `userinfo`: the base URL carries a user and
/// password too (reqwest sends them as Basic authorization, so only with a profile whose
/// key goes in another header).
fn record_with(dir: &Path, name: &str, profiles: &[&str], userinfo: bool) -> (PathBuf, Value) {
    let model = ModelServer::start(&["--api-key", KEY]);
    let mut base = model.url.clone();
    if userinfo {
        base = base.replace("http://", "http://alice:pw-userinfo-SECRET@");
    }
    base.push_str("/v1?api-version=2024-10-21&api_key=query-SECRET-value");
    let rec = dir.join(name);
    let json = dir.join(format!("{name}.json"));
    let mut models = Vec::new();
    for p in profiles {
        models.extend(["--model", p]);
    }
    let mut args = models;
    args.extend([
        "--base-url",
        &base,
        "--api-key-env",
        "REPLAY_TEST_KEY",
        "--record",
        rec.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let r = eval(dir, &set_path(), &[], &args, &[("REPLAY_TEST_KEY", KEY)]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("model exchange(s) of profile `local-anthropic` in"),
        "{r:?}"
    );
    (rec, read_json(&json))
}

/// Replay profile `local` of the recording `rec` with `set` against the example server with
/// `changes`, the results written to `dir/JSON`: the run and that path.
fn replay_local(dir: &Path, rec: &Path, set: &str, changes: &[&str], json: &str) -> (Run, PathBuf) {
    let json = dir.join(json);
    let r = eval(
        dir,
        set,
        changes,
        &[
            "--model",
            "local",
            "--replay",
            rec.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    (r, json)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// What a trial did, for comparing a replay with its recording.
fn trials(results: &Value) -> Vec<Value> {
    results["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["trials"].as_array().unwrap())
        .map(|t| {
            serde_json::json!([
                t["success"],
                t["toolCalls"],
                t["finalAnswer"],
                t["inputTokens"],
                t["outputTokens"],
                t["turns"],
                t["expectations"]
            ])
        })
        .collect()
}

#[test]
fn a_recording_replays_without_key_or_model_and_holds_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let (rec, recorded) = record(dir.path());
    assert_eq!(recorded["format"], "mcpspec-eval-runs/1");
    // Layout: a manifest, one file per profile and task, every exchange with its request
    // and the reply, under the toolsHash the results record.
    let manifest = read_json(&rec.join("recording.json"));
    assert_eq!(manifest["format"], "mcpspec-eval-recording/1");
    for (i, profile) in ["local", "local-anthropic"].iter().enumerate() {
        let entry = &manifest["profiles"][profile];
        assert_eq!(entry["complete"], true, "{manifest:#}");
        assert_eq!(
            entry["toolsHash"],
            recorded["runs"][i]["server"]["toolsHash"]
        );
        assert_eq!(entry["tasks"].as_array().unwrap().len(), 4);
        let task = read_json(&rec.join(profile).join("weather-boston.json"));
        assert_eq!(task["trials"].as_array().unwrap().len(), 2);
        let turns = task["trials"][0]["turns"].as_array().unwrap();
        assert_eq!(turns.len(), 2, "{task:#}");
        assert_eq!(turns[0]["turn"], 1);
        assert!(turns[0]["request"]["messages"].is_array());
        assert!(turns[0]["reply"].is_object());
    }
    // No secret in any byte of the recording: not the key, not an auth header, not the
    // URL's userinfo or query credentials.
    let (with_userinfo, _) = record_with(dir.path(), "userinfo", &["local-anthropic"], true);
    let manifest = read_json(&with_userinfo.join("recording.json"));
    assert!(
        manifest["profiles"]["local-anthropic"]["baseUrl"]
            .as_str()
            .unwrap()
            .ends_with("/v1"),
        "{manifest:#}"
    );
    for file in files_under(&rec)
        .into_iter()
        .chain(files_under(&with_userinfo))
    {
        let text = std::fs::read_to_string(&file).unwrap();
        for secret in [
            KEY,
            "pw-userinfo-SECRET",
            "query-SECRET-value",
            "alice",
            "Bearer",
            "authorization",
            "x-api-key",
        ] {
            assert!(
                !text.to_lowercase().contains(&secret.to_lowercase()),
                "{} holds {secret:?}",
                file.display()
            );
        }
    }
    // Replay: no model server, no key in the environment, the profile's base URL points at
    // nothing: the same trials, both APIs.
    let json = dir.path().join("replayed.json");
    let junit = dir.path().join("replayed.xml");
    let r = eval(
        dir.path(),
        &set_path(),
        &[],
        &[
            "--model",
            "local",
            "--model",
            "local-anthropic",
            "--api-key-env",
            "REPLAY_TEST_KEY_UNSET",
            "--replay",
            rec.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("model answers replayed from"), "{r:?}");
    let replayed = read_json(&json);
    for i in 0..2 {
        let (a, b) = (&recorded["runs"][i], &replayed["runs"][i]);
        assert_eq!(a["model"]["profile"], b["model"]["profile"]);
        assert_eq!(trials(a), trials(b), "profile {}", a["model"]["profile"]);
        assert_eq!(b["model"]["replayedFrom"], rec.display().to_string());
    }
    assert_valid_junit(&junit);
    assert!(!r.all_output().contains(KEY));
}

#[test]
fn a_replay_that_does_not_fit_is_one_setup_error() {
    let dir = tempfile::tempdir().unwrap();
    let (rec, _) = record(dir.path());
    let replay = |set: &str, changes: &[&str], json: &str| {
        replay_local(dir.path(), &rec, set, changes, json)
    };
    // Another tool list (a tool added): exit 2, one message naming the change.
    let (r, json) = replay(&set_path(), &["add-greeting-tool"], "tools.json");
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(r.stderr.matches("error:").count(), 1, "{r:?}");
    for want in [
        "the tools the model would be sent differ from the recording",
        "added `send_greeting`",
        "re-record",
    ] {
        assert!(r.stderr.contains(want), "missing {want:?}: {r:?}");
    }
    assert!(!json.exists(), "nothing ran, nothing is written");
    // A description edit (same names) is named too.
    let (r, _) = replay(&set_path(), &["echo-claims-weather"], "desc.json");
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("`echo` changed (description)"), "{r:?}");

    // The set asks for a trial the recording lacks: exit 2, and what finished is written.
    let text = std::fs::read_to_string(repo_root().join(SET)).unwrap();
    let more = dir.path().join("more.eval.yaml");
    std::fs::write(&more, text.replace("trials: 2", "trials: 3")).unwrap();
    let (r, json) = replay(more.to_str().unwrap(), &[], "more.json");
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("has no trial 2 of task `weather-boston` (it recorded 2 trial(s))"),
        "{r:?}"
    );
    assert_eq!(read_json(&json)["partial"], true);
    // A reworded prompt asks the model another question.
    let other = dir.path().join("other.eval.yaml");
    std::fs::write(
        &other,
        text.replace(
            "What is the current weather in Boston?",
            "What is the weather in Boston now?",
        ),
    )
    .unwrap();
    let (r, _) = replay(other.to_str().unwrap(), &[], "other.json");
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("asks the model another question"),
        "{r:?}"
    );
    assert!(r.stderr.contains("from the set"), "{r:?}");
    // A profile the recording does not have.
    let r = eval(
        dir.path(),
        &set_path(),
        &[],
        &["--model", "sloppy", "--replay", rec.to_str().unwrap()],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("no recording of model profile `sloppy` (it has: local, local-anthropic)"),
        "{r:?}"
    );
    // No recording at all.
    let r = eval(
        dir.path(),
        &set_path(),
        &[],
        &["--model", "local", "--replay", "no-such-folder"],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no recording there"), "{r:?}");
}

/// The server's tools read the same to the model but a tool now answers differently: the
/// recorded answers no longer follow, so those trials fail (exit 1) — a server regression
/// caught with no model.
#[test]
fn a_changed_tool_result_fails_its_trials_under_replay() {
    let dir = tempfile::tempdir().unwrap();
    let (rec, _) = record(dir.path());
    let json = dir.path().join("changed.json");
    let r = eval(
        dir.path(),
        &set_path(),
        &["add-output-property"],
        &[
            "--model",
            "local-anthropic",
            "--replay",
            rec.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 1, "{r:?}");
    let v = read_json(&json);
    let weather = v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "weather-boston")
        .unwrap();
    let error = weather["trials"][0]["error"].as_str().unwrap_or("");
    assert!(
        error.contains("the server's tool results differ from the recording"),
        "{weather:#}"
    );
    assert!(error.contains("humidity"), "{error}");
    // The tasks whose tools answer as recorded still pass.
    let add = v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "add-numbers")
        .unwrap();
    assert!(
        add["trials"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["success"] == true),
        "{add:#}"
    );
}

#[test]
fn record_refuses_a_folder_that_is_not_a_recording() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let r = eval(
        dir.path(),
        &set_path(),
        &[],
        &["--model", "local", "--record", dir.path().to_str().unwrap()],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("not a recording, left alone"), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "mine"
    );
    // --record with --replay, or with --affected-by: a usage error.
    let r = eval(
        dir.path(),
        &set_path(),
        &[],
        &["--model", "local", "--record", "a", "--replay", "b"],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn several_models_run_side_by_side_and_compare_pairs_two_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&[]);
    let runs = dir.path().join("runs.json");
    let junit = dir.path().join("runs.xml");
    let r = eval(
        dir.path(),
        &set_path(),
        &[],
        &[
            "--model",
            "local",
            "--model",
            "sloppy",
            "--base-url",
            &model.url,
            "--json",
            runs.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[],
    );
    // The sloppy model fills free-text arguments with the whole task: its weather and echo
    // tasks fail, so the regression set fails.
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout
            .contains("side by side (2 models, successes/trials per task):"),
        "{r:?}"
    );
    let line = |id: &str| {
        r.stdout
            .lines()
            .skip_while(|l| !l.starts_with("side by side"))
            .find(|l| l.trim_start().starts_with(id))
            .unwrap_or_else(|| panic!("{id} in {r:?}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("weather-boston"), "weather-boston 2/2 0/2", "{r:?}");
    assert_eq!(line("add-numbers"), "add-numbers 2/2 2/2", "{r:?}");
    let v = read_json(&runs);
    assert_eq!(v["format"], "mcpspec-eval-runs/1");
    assert_eq!(v["runs"][0]["model"]["profile"], "local");
    assert_eq!(v["runs"][1]["model"]["profile"], "sloppy");
    assert_eq!(v["runs"][1]["model"]["model"], "sloppy");
    assert_eq!(
        v["runs"][0]["server"]["toolsHash"],
        v["runs"][1]["server"]["toolsHash"]
    );
    assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"<testsuite name="example-server [local]""#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<testsuite name="example-server [sloppy]""#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"classname="example-server.sloppy""#),
        "{xml}"
    );

    let compare = |args: &[&str]| {
        let mut all = vec!["eval", "compare"];
        all.extend(args);
        run_in(dir.path(), &all, &[])
    };
    // Two models on one server, from the one file.
    let c = compare(&[
        "runs.json",
        "--base-model",
        "local",
        "--candidate-model",
        "sloppy",
    ]);
    assert_eq!(c.code, 1, "{c:?}");
    assert!(
        c.stdout
            .contains("pairing:   two models on one server, mcpspec-example-server"),
        "{c:?}"
    );
    assert!(
        c.stdout.contains("local (policy) → sloppy (sloppy)"),
        "{c:?}"
    );
    assert!(!c.stderr.contains("differ in model"), "{c:?}");
    // Ambiguous: a several-models file without a profile.
    let c = compare(&["runs.json"]);
    assert_eq!(c.code, 2, "{c:?}");
    assert!(
        c.stderr
            .contains("holds the runs of 2 models (local, sloppy): say which one the base is"),
        "{c:?}"
    );
    // Two servers through one model: the local model against a server whose echo claims
    // weather reports.
    let single = dir.path().join("drift.json");
    let r = eval(
        dir.path(),
        &set_path(),
        &["echo-claims-weather"],
        &[
            "--model",
            "local",
            "--base-url",
            &model.url,
            "--json",
            single.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 1, "{r:?}");
    let c = compare(&["runs.json", "drift.json", "--base-model", "local"]);
    assert_eq!(c.code, 1, "{c:?}");
    assert!(
        c.stdout
            .contains("pairing:   two servers through one model, local (policy)"),
        "{c:?}"
    );
    // Mixed: another model *and* another server: refused, one message.
    let c = compare(&["runs.json", "drift.json", "--base-model", "sloppy"]);
    assert_eq!(c.code, 2, "{c:?}");
    assert!(
        c.stderr.contains(
            "the runs differ in the model (profile sloppy → local, model sloppy → policy) and in the server (tools (toolsHash)"
        ),
        "{c:?}"
    );
    // A profile the file does not have; a single-run file named with another profile.
    let c = compare(&[
        "runs.json",
        "--base-model",
        "local",
        "--candidate-model",
        "x",
    ]);
    assert_eq!(c.code, 2, "{c:?}");
    assert!(
        c.stderr.contains("has no run of model profile `x`"),
        "{c:?}"
    );
    let c = compare(&["runs.json", "drift.json", "--model", "sloppy"]);
    assert_eq!(c.code, 2, "{c:?}");
    assert!(
        c.stderr
            .contains("drift.json is a run of model profile `local`, not `sloppy`"),
        "{c:?}"
    );
    // --model-name cannot override several profiles at once; a profile twice is an error.
    let r = eval(
        dir.path(),
        &set_path(),
        &[],
        &["--model", "local", "--model", "sloppy", "--model-name", "m"],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    let r = eval(
        dir.path(),
        &set_path(),
        &[],
        &["--model", "local", "--model", "local"],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--model local is given twice"), "{r:?}");
}

/// A set for the sanitizer test: three trials of one weather task; `sanitize` lines after
/// the set's name.
fn sanitized_set(dir: &Path, name: &str, sanitize: &str) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "evalset: sanitized\n{sanitize}models:\n  local: {{ api: openai, baseUrl: \"http://127.0.0.1:9/v1\", model: policy, maxTurns: 3 }}\ntrials: 3\ntasks:\n  - id: weather\n    prompt: What is the current weather in Boston?\n    expect:\n      - calls: get_weather\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// Eval recordings take the golden responses' sanitizers (#42 item 5): a recording whose
/// tool results differ from the server's only at a sanitized `{path}` replays 3/3; without
/// the sanitizer the same recording fails every trial (the server's answer changed).
#[test]
fn a_result_differing_at_a_sanitized_path_replays() {
    let dir = tempfile::tempdir().unwrap();
    let plain = sanitized_set(dir.path(), "plain.eval.yaml", "");
    let rec = dir.path().join("rec");
    let model = ModelServer::start(&[]);
    let recorded = dir.path().join("recorded.json");
    let r = common::model_server::eval_run(
        &plain,
        &stdio_target(&[]),
        &model,
        &recorded,
        &["--record", rec.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{r:?}");
    drop(model);
    // The recorded tool results now say another temperature than the server gives.
    let file = rec.join("local").join("weather.json");
    let mut doc = read_json(&file);
    let mut changed = 0;
    for trial in doc["trials"].as_array_mut().unwrap() {
        for turn in trial["turns"].as_array_mut().unwrap() {
            for m in turn["request"]["messages"].as_array_mut().unwrap() {
                if m["role"] == "tool" {
                    let mut result: Value =
                        serde_json::from_str(m["content"].as_str().unwrap()).unwrap();
                    assert!(result["temperature"].is_number(), "{result:#}");
                    result["temperature"] = 99.into();
                    m["content"] = result.to_string().into();
                    changed += 1;
                }
            }
        }
    }
    assert_eq!(changed, 3, "one tool result per trial: {doc:#}");
    std::fs::write(&file, doc.to_string()).unwrap();
    let replay = |set: &str, json: &str| {
        let (r, json) = replay_local(dir.path(), &rec, set, &[], json);
        (r, read_json(&json))
    };
    let successes = |v: &Value| {
        v["tasks"][0]["trials"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["success"] == true)
            .count()
    };
    let (r, v) = replay(&plain, "without.json");
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(successes(&v), 0, "{v:#}");
    let error = v["tasks"][0]["trials"][0]["error"].as_str().unwrap_or("");
    assert!(
        error.contains("the server's tool results differ from the recording")
            && error.contains("99"),
        "{error}"
    );
    let with = sanitized_set(
        dir.path(),
        "sanitized.eval.yaml",
        "sanitize:\n  - { path: \"$.temperature\", replace: \"<temperature>\" }\n",
    );
    let (r, v) = replay(&with, "with.json");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(successes(&v), 3, "{v:#}");
    // A sanitizer that cannot be compiled is a load error at its position.
    let bad = sanitized_set(
        dir.path(),
        "bad.eval.yaml",
        "sanitize:\n  - { path: \"$[\" }\n  - timestamp\n",
    );
    let (r, _) = replay_local(dir.path(), &rec, &bad, &[], "bad.json");
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("bad.eval.yaml:3:"), "{r:?}");
    assert!(r.stderr.contains("invalid JSONPath"), "{r:?}");
    assert!(r.stderr.contains("unknown sanitizer `timestamp`"), "{r:?}");
}
