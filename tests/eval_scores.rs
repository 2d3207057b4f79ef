//! Scored expectations of `mcpspec eval run`, end to end: judged answers (`answer: {judge:
//! RUBRIC}`, graded by the local model server's deterministic fake judge, over both APIs,
//! the judge's failures as errors, its usage apart and inside `--max-cost`) and argument
//! critics (`calls` + weighted `critics`, against a model whose arguments are nearly right).

mod common;

use std::path::Path;

use common::model_server::ModelServer;
use common::{assert_valid_junit, read_json, run, run_in, stdio_target};
use serde_json::Value;

const SET: &str = r#"
evalset: scores
judge: grader
models:
  local: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy, maxTurns: 3, price: { input: 3, output: 15 } }
  local-anthropic: { api: anthropic, baseUrl: "http://127.0.0.1:9", model: policy, maxTurns: 3 }
  grader: { api: anthropic, baseUrl: "http://127.0.0.1:9", model: judge, timeout: 1s, price: { input: 1, output: 5 } }
  grader-openai: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: judge, timeout: 1s }
  pricey-grader: { api: anthropic, baseUrl: "http://127.0.0.1:9", model: judge, price: { input: 1000, output: 1000 } }
  keyed-grader: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: judge, key: "env:MCPSPEC_JUDGE_TEST_KEY" }
tasks:
  - id: weather
    prompt: What is the current weather in Boston?
    expect:
      - calls: get_weather
      - answer:
          judge: The answer reports the "temperature" and the "conditions" in "Boston".
          threshold: 0.9
  - id: add
    prompt: Add the numbers 2 and 3 and give me the sum.
    expect:
      - calls: add
        critics:
          - { path: "$.a", number: 2, tolerance: 0.5 }
          - { path: "$.b", number: 3, tolerance: 1 }
  - id: city
    prompt: What is the current weather in Boston?
    expect:
      - calls: get_weather
        critics:
          - { path: "$.city", similar: Boston, threshold: 0.8, weight: 2 }
          - { path: "$.city", exact: Boston }
        threshold: 0.6
  - id: echo
    prompt: Return the text 'hello world' unchanged.
    expect:
      - calls: echo
        critics:
          - { path: "$.text", oneOf: [hello world, Hello world] }
"#;

fn write_set(dir: &Path, yaml: &str) -> String {
    // One file per content: a test that writes two sets keeps both.
    let path = dir.join(format!("scores-{}.eval.yaml", yaml.len()));
    std::fs::write(&path, yaml).unwrap();
    path.display().to_string()
}

/// `eval run SET` through `model` (profile `local` unless `extra` names one), the judge at
/// `judge` when given; the results JSON and the run.
fn eval(
    dir: &Path,
    set: &str,
    model: &ModelServer,
    judge: Option<&ModelServer>,
    extra: &[&str],
) -> (common::Run, Value) {
    let json = dir.join("results.json");
    let _ = std::fs::remove_file(&json);
    let target = stdio_target(&[]);
    let mut flags: Vec<&str> = Vec::new();
    if let Some(j) = judge {
        flags.extend(["--judge-base-url", &j.url]);
    }
    flags.extend(extra);
    let r = common::model_server::eval_run(set, &target, model, &json, &flags);
    let v = if json.exists() {
        read_json(&json)
    } else {
        Value::Null
    };
    (r, v)
}

fn task<'a>(results: &'a Value, id: &str) -> &'a Value {
    results["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("task {id} in {results:#}"))
}

fn trial<'a>(results: &'a Value, id: &str) -> &'a Value {
    &task(results, id)["trials"][0]
}

/// The outcome of the task's expectation named starting with `prefix`.
fn outcome<'a>(results: &'a Value, id: &str, prefix: &str) -> &'a Value {
    trial(results, id)["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"].as_str().unwrap().starts_with(prefix))
        .unwrap_or_else(|| panic!("{prefix} in {:#}", trial(results, id)))
}

/// `set` run with the judge `pricey-grader` under `--max-cost 0.5`: its first request could
/// pass the cap, so the run stops (exit 5), naming the judge. The results.
fn stopped_by_the_pricey_judge(dir: &Path, set: &str, model: &ModelServer) -> Value {
    let (r, v) = eval(
        dir,
        set,
        model,
        Some(model),
        &["--judge", "pricey-grader", "--max-cost", "0.5"],
    );
    assert_eq!(r.code, 5, "{r:?}");
    assert!(
        r.stderr.contains(
            "the judge (profile `pricey-grader`): stopped before spending more than --max-cost"
        ),
        "{r:?}"
    );
    v
}

/// A judged answer passes when the answer has what the rubric asks (the judge on another
/// API than the model, both ways) and fails, with the judge's reason, when the model's
/// answer does not say what the tool returned; the judge's usage is recorded apart.
#[test]
fn judged_answers_pass_good_answers_and_fail_vague_ones() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), SET);
    let model = ModelServer::start(&[]);
    let junit = dir.path().join("eval.xml");
    let mut runs = Vec::new();
    for (profile, grader) in [("local", "grader"), ("local-anthropic", "grader-openai")] {
        let extra = [
            "--model",
            profile,
            "--judge",
            grader,
            "--junit",
            junit.to_str().unwrap(),
        ];
        let (r, v) = eval(dir.path(), &set, &model, Some(&model), &extra);
        assert_eq!(r.code, 0, "{profile}/{grader}: {r:?}");
        let o = outcome(&v, "weather", "answer judged");
        assert_eq!(o["passed"], true, "{o:#}");
        assert_eq!(o["score"], 1.0, "{o:#}");
        assert_eq!(o["threshold"], 0.9, "{o:#}");
        assert_eq!(o["judge"]["profile"], grader);
        assert_eq!(
            o["judge"]["reason"],
            "the answer has \"temperature\", \"conditions\", \"Boston\""
        );
        assert_eq!(v["judge"]["profile"], grader, "{v:#}");
        assert_eq!(v["judge"]["model"], "judge");
        // The judge's tokens are its own, apart from the model's.
        let judged = &trial(&v, "weather")["judgeUsage"];
        assert!(judged["inputTokens"].as_u64().unwrap() > 0, "{v:#}");
        assert_eq!(
            v["judgeUsage"]["inputTokens"], judged["inputTokens"],
            "only one trial was judged: {v:#}"
        );
        assert!(trial(&v, "add").get("judgeUsage").is_none());
        assert!(r.stdout.contains("judge 1.00"), "{r:?}");
        assert!(
            r.stdout.contains(&format!("· judge {grader}: tokens ")),
            "{r:?}"
        );
        assert_valid_junit(&junit);
        let xml = std::fs::read_to_string(&junit).unwrap();
        assert!(
            xml.contains(r#"name="judgeScore.mean" value="1.000""#),
            "{xml}"
        );
        assert!(
            xml.contains(&format!(r#"name="judge.profile" value="{grader}""#)),
            "{xml}"
        );
        let file = dir.path().join(format!("{profile}.json"));
        std::fs::write(&file, v.to_string()).unwrap();
        runs.push(file.display().to_string());
    }
    // Two runs graded by different judge models: `eval compare` says so.
    let r = run(&["eval", "compare", &runs[0], &runs[1]]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.all_output().contains(
            "the runs differ in judge model (base anthropic judge, candidate openai judge)"
        ),
        "{r:?}"
    );
    // A model that answers without the facts: the judge scores it 0, the trial fails.
    let vague = ModelServer::start(&["--fault", "vague"]);
    let (r, v) = eval(dir.path(), &set, &vague, Some(&vague), &[]);
    assert_eq!(r.code, 1, "{r:?}");
    let o = outcome(&v, "weather", "answer judged");
    assert_eq!(
        (o["passed"].clone(), o["score"].clone()),
        (false.into(), 0.0.into()),
        "{o:#}"
    );
    assert_eq!(
        o["message"],
        "judge score 0.00 < 0.90: the answer lacks \"temperature\", \"conditions\", \"Boston\""
    );
    assert_eq!(trial(&v, "weather")["success"], false);
    assert!(r.stdout.contains("judge score 0.00 < 0.90"), "{r:?}");
}

/// A judge that gives no verdict — prose instead of the JSON asked for, or no answer within
/// its timeout — makes that judgement an error with the reason, never a pass; the run goes
/// on. A judge nobody can reach, or without its key, stops the run like the model's would.
#[test]
fn a_failing_judge_is_an_error_never_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), SET);
    let model = ModelServer::start(&[]);
    let junit = dir.path().join("eval.xml");
    for (fault, reason) in [
        (
            "garbage-verdict",
            "judge error: the judge's verdict is not the JSON object asked for",
        ),
        (
            "hang",
            // `--model-timeout` does not apply to the judge: the message does not send
            // the user there.
            "judge error: the model API did not answer within 1s (the judge profile's `timeout`; `--model-timeout` applies to the model under test only)",
        ),
    ] {
        let judge = ModelServer::start(&["--fault", fault]);
        let (r, v) = eval(
            dir.path(),
            &set,
            &model,
            Some(&judge),
            &["--junit", junit.to_str().unwrap()],
        );
        assert_eq!(r.code, 1, "{fault}: {r:?}");
        let o = outcome(&v, "weather", "answer judged");
        assert_eq!(o["passed"], false, "{fault}: {o:#}");
        assert!(
            o.get("score").is_none(),
            "{fault}: no score without a verdict: {o:#}"
        );
        assert!(
            o["message"].as_str().unwrap().starts_with(reason),
            "{fault}: {o:#}"
        );
        assert!(o["judge"]["error"].is_string(), "{fault}: {o:#}");
        // The other tasks ran and passed.
        assert_eq!(trial(&v, "add")["success"], true, "{fault}: {v:#}");
        assert!(r.stdout.contains(reason), "{fault}: {r:?}");
        let xml = std::fs::read_to_string(&junit).unwrap();
        assert!(xml.contains(r#"type="judge_error""#), "{fault}: {xml}");
        assert!(xml.contains("<error "), "{fault}: {xml}");
    }
    // Nothing answers at the judge's URL: a setup error of the judge, exit 4.
    let (r, _) = eval(
        dir.path(),
        &set,
        &model,
        None,
        &["--judge-base-url", "http://127.0.0.1:9/v1"],
    );
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("the judge (profile `grader`)"), "{r:?}");
    // The judge's key variable is unset: exit 3, naming it.
    let (r, _) = eval(
        dir.path(),
        &set,
        &model,
        Some(&model),
        &["--judge", "keyed-grader"],
    );
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("MCPSPEC_JUDGE_TEST_KEY"), "{r:?}");
    // A judged answer and no judge named: a usage error before anything runs.
    let unjudged = write_set(dir.path(), &SET.replace("judge: grader\n", ""));
    let (r, _) = eval(dir.path(), &unjudged, &model, Some(&model), &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--judge PROFILE"), "{r:?}");
    let (r, _) = eval(
        dir.path(),
        &set,
        &model,
        Some(&model),
        &["--judge", "nobody"],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("--judge nobody: the eval set has no such model profile"),
        "{r:?}"
    );
}

/// `--max-cost` counts the judge's requests (at the judge's prices) with the model's: a cap
/// the model's own spend fits under stops the run once the judge's is added; a judge
/// without prices cannot be capped.
#[test]
fn the_judges_cost_counts_in_max_cost() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), SET);
    let model = ModelServer::start(&[]);
    let (r, v) = eval(dir.path(), &set, &model, Some(&model), &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let model_cost = v["usage"]["costUsd"].as_f64().unwrap();
    let judge_cost = v["judgeUsage"]["costUsd"].as_f64().unwrap();
    let (input, output) = (
        v["judgeUsage"]["inputTokens"].as_f64().unwrap(),
        v["judgeUsage"]["outputTokens"].as_f64().unwrap(),
    );
    assert!(
        (judge_cost - (input + output * 5.0) / 1e6).abs() < 1e-12,
        "the judge's prices: {v:#}"
    );
    // The model's usage is the model's alone: the same as a run without the judged task.
    let unjudged = SET.replace(
        "      - answer:\n          judge: The answer reports the \"temperature\" and the \"conditions\" in \"Boston\".\n          threshold: 0.9\n",
        "",
    );
    assert_ne!(unjudged, SET);
    let plain = write_set(dir.path(), &unjudged);
    let (r, plain_v) = eval(dir.path(), &plain, &model, None, &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(plain_v["usage"], v["usage"], "{plain_v:#}");
    assert!(plain_v.get("judge").is_none() && plain_v.get("judgeUsage").is_none());
    // A judge priced so that its first request could pass the cap the model's requests fit
    // under: the run stops before the judge is asked, and says it was the judge.
    // A stop by the cap: exit 5, not the 1 of a failed trial.
    let v = stopped_by_the_pricey_judge(dir.path(), &set, &model);
    assert_eq!(v["partial"], true);
    let spent = v["usage"]["costUsd"].as_f64().unwrap()
        + v["judgeUsage"]["costUsd"].as_f64().unwrap_or(0.0);
    assert!(spent <= 0.5, "spent {spent} over the cap: {v:#}");
    // A cap with room for both: the run completes.
    let (r, _) = eval(
        dir.path(),
        &set,
        &model,
        Some(&model),
        &[
            "--max-cost",
            &format!("{}", (model_cost + judge_cost) * 100.0),
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let (r, _) = eval(
        dir.path(),
        &set,
        &model,
        Some(&model),
        &["--judge", "grader-openai", "--max-cost", "1"],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("profile `grader-openai`"), "{r:?}");
}

/// `--record` keeps the judge's exchanges with those of the model whose answers it graded
/// (each model of `--model a --model b` judged on its own tape); `--replay` grades from them
/// with no judge key and nothing listening: the same verdicts and usage. A recording that
/// lacks a judge turn is a setup error, like a missing model turn. Side by side, each model
/// has its mean judge score.
#[test]
fn judged_answers_are_recorded_and_replayed_per_model() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), SET);
    let model = ModelServer::start(&[]);
    let target = stdio_target(&[]);
    let rec = dir.path().join("rec");
    let rec = rec.to_str().unwrap();
    let go = |url: &str, tape: &[&str], json: &str, env: &[(&str, &str)]| {
        let mut args = vec![
            "eval",
            "run",
            &set,
            "--stdio",
            &target,
            "--base-url",
            url,
            "--judge-base-url",
            url,
            "--json",
            json,
            "--model",
            "local",
            "--model",
            "local-anthropic",
            "--judge",
            "keyed-grader",
        ];
        args.extend(tape);
        run_in(dir.path(), &args, env)
    };
    let recorded_json = dir.path().join("recorded.json");
    let r = go(
        &model.url,
        &["--record", rec],
        recorded_json.to_str().unwrap(),
        &[("MCPSPEC_JUDGE_TEST_KEY", "sk-judge-test-0123456789")],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let judge_line = r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("side by side"))
        .find(|l| l.trim_start().starts_with("judge "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
    assert_eq!(judge_line.as_deref(), Some("judge 1.00 1.00"), "{r:?}");
    let task_file = dir.path().join("rec/local/weather.json");
    let text = std::fs::read_to_string(&task_file).unwrap();
    assert!(text.contains("\"judge\": true"), "{text}");
    assert!(!text.contains("sk-judge-test"), "{text}");
    // Replay: no key for the judge, no model server, the same verdicts.
    drop(model);
    let replayed_json = dir.path().join("replayed.json");
    let r = go(
        "http://127.0.0.1:9",
        &["--replay", rec],
        replayed_json.to_str().unwrap(),
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let (a, b) = (read_json(&recorded_json), read_json(&replayed_json));
    for i in 0..2 {
        let (ra, rb) = (&a["runs"][i], &b["runs"][i]);
        assert_eq!(rb["model"]["replayedFrom"], rec);
        assert_eq!(ra["judgeUsage"], rb["judgeUsage"], "{rb:#}");
        for (ta, tb) in ra["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .zip(rb["tasks"].as_array().unwrap())
        {
            assert_eq!(
                ta["trials"][0]["expectations"], tb["trials"][0]["expectations"],
                "{tb:#}"
            );
        }
        let o = outcome(rb, "weather", "answer judged");
        assert_eq!(
            (o["score"].clone(), o["judge"]["profile"].clone()),
            (1.0.into(), "keyed-grader".into()),
            "{o:#}"
        );
    }
    // A recording without the judge's turn cannot stand for it.
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    for trial in doc["trials"].as_array_mut().unwrap() {
        trial["turns"]
            .as_array_mut()
            .unwrap()
            .retain(|x| x.get("judge").is_none());
    }
    std::fs::write(&task_file, doc.to_string()).unwrap();
    let r = go(
        "http://127.0.0.1:9",
        &["--replay", rec],
        replayed_json.to_str().unwrap(),
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("has no judge turn 1 of trial 0 of task `weather`"),
        "{r:?}"
    );
}

/// Argument critics measure "the right tool with nearly the right arguments": a model that
/// gets the arguments right scores 1 everywhere (both APIs); one whose numbers are off by
/// one and strings a character short scores in between — a task whose threshold accepts
/// the near miss passes with its score recorded, the others fail with each critic's
/// reason. `eval compare` pairs the pass/fail verdicts the thresholds give.
#[test]
fn argument_critics_score_nearly_right_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), SET);
    let model = ModelServer::start(&[]);
    let mut good_json = None;
    for profile in ["local-anthropic", "local"] {
        let (r, v) = eval(
            dir.path(),
            &set,
            &model,
            Some(&model),
            &["--model", profile],
        );
        assert_eq!(r.code, 0, "{profile}: {r:?}");
        for id in ["add", "city", "echo"] {
            assert_eq!(trial(&v, id)["argumentScore"], 1.0, "{profile} {id}: {v:#}");
            assert_eq!(trial(&v, id)["success"], true, "{profile} {id}");
        }
        let critics = &outcome(&v, "city", "calls get_weather")["critics"];
        assert_eq!(
            critics[0]["detail"], "similarity 1.00 ≥ 0.80",
            "{critics:#}"
        );
        assert_eq!(critics[0]["weight"], 2.0);
        assert!(trial(&v, "weather").get("argumentScore").is_none());
        assert!(r.stdout.contains("args 1.00"), "{r:?}");
        good_json = Some(v);
    }
    let sloppy = ModelServer::start(&["--fault", "sloppy-args"]);
    let junit = dir.path().join("eval.xml");
    let (r, v) = eval(
        dir.path(),
        &set,
        &sloppy,
        Some(&model),
        &["--junit", junit.to_str().unwrap()],
    );
    assert_eq!(r.code, 1, "{r:?}");
    // add: a = 3 is off by 1 (tolerance 0.5), b = 4 within 1: half the weight.
    let add = outcome(&v, "add", "calls add");
    assert_eq!(
        (add["score"].clone(), add["passed"].clone()),
        (0.5.into(), false.into()),
        "{add:#}"
    );
    assert_eq!(
        add["message"],
        "argument score 0.50 < 1.00: $.a number 2 ± 0.5: off by 1 (tolerance 0.5)"
    );
    assert_eq!(add["critics"][0]["actual"], 3.0);
    assert_eq!(trial(&v, "add")["argumentScore"], 0.5);
    // city: "Bosto" is similar enough (weight 2) but not exact (weight 1): 2/3 ≥ 0.6 passes.
    let city = trial(&v, "city");
    assert_eq!(city["success"], true, "{city:#}");
    let score = city["argumentScore"].as_f64().unwrap();
    assert!((score - 2.0 / 3.0).abs() < 1e-9, "{city:#}");
    assert_eq!(
        outcome(&v, "city", "calls get_weather")["critics"][0]["detail"],
        "similarity 0.83 ≥ 0.80"
    );
    // echo: "hello worl" is none of the accepted texts.
    assert_eq!(trial(&v, "echo")["argumentScore"], 0.0);
    assert!(r.stdout.contains("args 0.50"), "{r:?}");
    assert!(r.stdout.contains("args 0.67"), "{r:?}");
    assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"name="argumentScore.mean" value="0.500""#),
        "{xml}"
    );
    // The pass/fail verdicts compare as before: add and echo regressed, city did not.
    let base = dir.path().join("good.json");
    std::fs::write(&base, good_json.unwrap().to_string()).unwrap();
    let cand = dir.path().join("sloppy.json");
    std::fs::write(&cand, v.to_string()).unwrap();
    let out = dir.path().join("compare.json");
    let r = run(&[
        "eval",
        "compare",
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    let c = read_json(&out);
    let bucket = |id: &str| {
        c["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()["bucket"]
            .clone()
    };
    assert_eq!(bucket("add"), "regressed");
    assert_eq!(bucket("echo"), "regressed");
    assert_eq!(bucket("city"), "unchanged-pass");
}

/// Mistakes in critics and judged answers are invalid input with `file:line:col`.
#[test]
fn scored_expectations_are_validated_with_positions() {
    let dir = tempfile::tempdir().unwrap();
    for (yaml, line_col, message) in [
        (
            "      - { calls: add, critics: [ { path: \"$.a\", number: 2, weight: 0 } ] }\n",
            "8:",
            "`weight: 0` must be more than 0",
        ),
        (
            "      - { calls: add, critics: [ { path: \"$.a\", number: 2, exact: 2 } ] }\n",
            "8:",
            "a critic has one matcher; this one mixes exact, number",
        ),
        (
            "      - { calls: add, critics: [ { path: \"$.a\", exact: 2, tolerance: 1 } ] }\n",
            "8:",
            "`tolerance` applies only to a `number` critic",
        ),
        (
            "      - { calls: add, critics: [ { path: \"$.a\", similar: x, threshold: 2 } ] }\n",
            "8:",
            "`threshold: 2` is out of range",
        ),
        (
            "      - { calls: add, critics: [ { path: \"a\", exact: 2 } ] }\n",
            "8:",
            "did you mean `$.a`",
        ),
        (
            "      - { calls: add, threshold: 0.5 }\n",
            "8:",
            "`threshold` of a `calls` expectation needs `critics`",
        ),
        (
            "      - { noToolCall: true, critics: [ { path: \"$.a\", exact: 2 } ] }\n",
            "8:",
            "`critics` and `threshold` apply only to a `calls` expectation",
        ),
        (
            "      - answer: { judge: \"  \" }\n",
            "8:",
            "the rubric is empty",
        ),
        (
            "      - answer: { contains: x, threshold: 0.5 }\n",
            "8:",
            "`threshold` of an `answer` applies only with `judge`",
        ),
        (
            "      - answer: { judge: x, threshold: -1 }\n",
            "8:",
            "`threshold: -1` is out of range",
        ),
        (
            "      - { calls: add, critics: [ { path: \"$.a\", judge: \" \" } ] }\n",
            "8:",
            "`judge` of a critic is empty",
        ),
        (
            "      - { calls: add, critics: [ { path: \"$.a\", judge: x, tolerance: 1 } ] }\n",
            "8:",
            "`tolerance` applies only to a `number` critic",
        ),
    ] {
        let path = dir.path().join("bad.eval.yaml");
        std::fs::write(
            &path,
            format!(
                "evalset: bad\nmodels:\n  m: {{ api: openai, baseUrl: \"http://127.0.0.1:9/v1\", model: x }}\ntasks:\n  - id: a\n    prompt: p\n    expect:\n{yaml}"
            ),
        )
        .unwrap();
        let r = run_in(dir.path(), &["validate", "bad.eval.yaml"], &[]);
        assert_eq!(r.code, 2, "{yaml}: {r:?}");
        assert!(
            r.stderr.contains(&format!("bad.eval.yaml:{line_col}")),
            "{yaml}: {r:?}"
        );
        assert!(r.stderr.contains(message), "{yaml}: {r:?}");
    }
    let path = dir.path().join("bad.eval.yaml");
    std::fs::write(
        &path,
        "evalset: bad\njudge: nobody\nmodels:\n  m: { api: openai, baseUrl: \"http://127.0.0.1:9/v1\", model: x }\ntasks:\n  - id: a\n    prompt: p\n    expect: [ { answer: { judge: ok } } ]\n",
    )
    .unwrap();
    let r = run_in(dir.path(), &["validate", "bad.eval.yaml"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("bad.eval.yaml:2:8")
            && r.stderr
                .contains("`judge: nobody` names no model profile of the set"),
        "{r:?}"
    );
}

const CRITIC_SET: &str = r#"
evalset: llm-critics
judge: grader
models:
  local: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy, maxTurns: 3, price: { input: 3, output: 15 } }
  grader: { api: anthropic, baseUrl: "http://127.0.0.1:9", model: judge, timeout: 1s, price: { input: 1, output: 5 } }
  pricey-grader: { api: anthropic, baseUrl: "http://127.0.0.1:9", model: judge, price: { input: 1000, output: 1000 } }
tasks:
  - id: city
    prompt: What is the current weather in Boston?
    expect:
      - calls: get_weather
        critics:
          - path: "$.city"
            judge: The city is "Boston".
  - id: wrong-city
    prompt: What is the current weather in Boston?
    expect:
      - calls: get_weather
        critics:
          - { path: "$.city", exact: Boston }
          - path: "$.city"
            judge: The city is "Paris", in "France".
            threshold: 0.5
            weight: 3
"#;

/// An LLM critic per argument (`judge:` in `critics`): the judge profile's model grades the
/// argument against the criterion like a judged answer (score, threshold, reason in the
/// results), its tokens count in the judge's usage and under `--max-cost`, and its requests
/// are recorded and replayed with the model's, the random fence stored as `{fence}`.
#[test]
fn llm_critics_grade_arguments_through_the_judge() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), CRITIC_SET);
    let model = ModelServer::start(&[]);
    let (r, v) = eval(dir.path(), &set, &model, Some(&model), &[]);
    assert_eq!(r.code, 1, "{r:?}");
    let good = &outcome(&v, "city", "calls get_weather")["critics"][0];
    assert_eq!(good["matched"], true, "{good:#}");
    assert_eq!(
        good["critic"],
        "judge \"The city is \\\"Boston\\\".\" ≥ 0.7"
    );
    assert_eq!(
        good["detail"],
        "judge score 1.00 ≥ 0.70: the answer has \"Boston\""
    );
    assert_eq!(
        (
            good["judge"]["profile"].clone(),
            good["judge"]["score"].clone()
        ),
        ("grader".into(), 1.0.into())
    );
    let bad = outcome(&v, "wrong-city", "calls get_weather");
    assert_eq!(bad["passed"], false, "{bad:#}");
    assert_eq!(bad["score"], 0.25, "{bad:#}");
    assert_eq!(
        bad["critics"][1]["detail"],
        "judge score 0.00 < 0.50: the answer lacks \"Paris\", \"France\""
    );
    assert!(
        bad["message"].as_str().unwrap().contains(
            "$.city judge \"The city is \\\"Paris\\\", in \\\"France\\\".\" ≥ 0.5: judge score 0.00"
        ),
        "{bad:#}"
    );
    // The judge's tokens: its own usage, priced at its prices, two requests.
    let judged = &trial(&v, "city")["judgeUsage"];
    assert!(judged["inputTokens"].as_u64().unwrap() > 0, "{v:#}");
    assert!(v["judgeUsage"]["costUsd"].as_f64().unwrap() > 0.0, "{v:#}");
    assert!(r.stdout.contains("judge score 0.00 < 0.50"), "{r:?}");
    // Counted under --max-cost: a judge priced past the cap stops the run (exit 5).
    stopped_by_the_pricey_judge(dir.path(), &set, &model);
    // No judge named: a usage error before anything runs.
    let unjudged = write_set(dir.path(), &CRITIC_SET.replace("judge: grader\n", ""));
    let (r, _) = eval(dir.path(), &unjudged, &model, None, &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("a judged argument"), "{r:?}");
    // Recorded with the model's exchanges, the fence as a placeholder; replayed with
    // nothing listening: the same outcomes.
    let rec = dir.path().join("rec");
    let (r, recorded) = eval(
        dir.path(),
        &set,
        &model,
        Some(&model),
        &["--record", rec.to_str().unwrap()],
    );
    assert_eq!(r.code, 1, "{r:?}");
    let text = std::fs::read_to_string(rec.join("local/city.json")).unwrap();
    assert!(text.contains("<argument-{fence}>"), "{text}");
    assert!(text.contains("\"judge\": true"), "{text}");
    drop(model);
    let nothing = ModelServer::start(&["--fault", "server-error"]);
    let (r, replayed) = eval(
        dir.path(),
        &set,
        &nothing,
        Some(&nothing),
        &["--replay", rec.to_str().unwrap()],
    );
    assert_eq!(r.code, 1, "{r:?}");
    for id in ["city", "wrong-city"] {
        assert_eq!(
            trial(&recorded, id)["expectations"],
            trial(&replayed, id)["expectations"],
            "{replayed:#}"
        );
    }
    assert_eq!(recorded["judgeUsage"], replayed["judgeUsage"]);
}
