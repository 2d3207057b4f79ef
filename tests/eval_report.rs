//! The eval reports meant for people, end to end from the CLI: `eval run --html` and `eval
//! report RESULTS --html` (per task
//! its trials, tool calls with arguments, final answer, the judge's score and reason, the
//! spend) and `eval compare --html / --markdown / --step-summary` (the buckets, the
//! regressions, judge-score changes, cost), from results files of real runs against the
//! example server through the project's local model server. Answers and arguments are the
//! model's untrusted text: they reach the page escaped.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};

use common::model_server::ModelServer;
use common::{run_in, stdio_target};

/// The example set's profiles, priced, with a judge, and tasks whose prompt (so the
/// model's answer or argument) carries markup.
const SET: &str = r#"
evalset: report
judge: grader
trials: 1
models:
  local: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy, seed: 7, maxTurns: 4, price: { input: 3, output: 15 } }
  grader: { api: anthropic, baseUrl: "http://127.0.0.1:9", model: judge, price: { input: 1, output: 5 } }
tasks:
  - id: weather-boston
    prompt: What is the current weather in Boston?
    expect:
      - calls: get_weather
        args:
          - { path: "$.city", equals: Boston }
      - answer:
          judge: The answer reports the "temperature" and the "conditions" in "Boston".
          threshold: 0.5
  - id: echo-markup
    prompt: Return the text '<b>bold</b>' unchanged.
    expect:
      - calls: echo
  - id: greeting-script
    prompt: "Write a friendly greeting for the team <script>alert(1)</script>"
    expect:
      - noToolCall: true
      - answer: { contains: greeting }
"#;

fn write_set(dir: &Path) -> String {
    let path = dir.join("report.eval.yaml");
    std::fs::write(&path, SET).unwrap();
    path.display().to_string()
}

/// `eval run` of the set against the example server with `changes`; its results file.
fn eval(
    dir: &Path,
    model: &ModelServer,
    name: &str,
    changes: &[&str],
    extra: &[&str],
) -> (common::Run, PathBuf) {
    let set = write_set(dir);
    let json = dir.join(format!("{name}.json"));
    let mut flags = Vec::new();
    for c in changes {
        flags.extend(["--change", c]);
    }
    let mut args = vec!["--judge-base-url", model.url.as_str()];
    args.extend(extra);
    let r = common::model_server::eval_run(&set, &stdio_target(&flags), model, &json, &args);
    (r, json)
}

/// The page holds no script, no external resource, and no markup of the model's.
fn assert_self_contained(page: &str) {
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    for bad in ["<script", "src=", "href=\"http", "<b>bold", "@import"] {
        assert!(!page.contains(bad), "the page has {bad:?}:\n{page}");
    }
}

/// `eval report RESULTS --html` makes the same page as the run's `--html` from its file.
fn assert_report_remakes(dir: &Path, json: &Path, page: &str) {
    let again = dir.join("again.html");
    let r = run_in(
        dir,
        &[
            "eval",
            "report",
            json.to_str().unwrap(),
            "--html",
            again.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(std::fs::read_to_string(&again).unwrap(), page);
}

/// The text of the HTML element with `id="ID"` up to its closing `</table>`.
fn table<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in\n{page}"));
    let end = start + page[start..].find("</table>").unwrap();
    &page[start..end]
}

#[test]
fn the_run_report_shows_each_trial_its_calls_answer_judge_and_cost_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&[]);
    let html = dir.path().join("reports/eval.html");
    let (r, json) = eval(
        dir.path(),
        &model,
        "run",
        &[],
        &["--html", html.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    // `eval report` makes the same page from the results file.
    assert_report_remakes(dir.path(), &json, &page);
    assert_self_contained(&page);
    for task in ["weather-boston", "echo-markup", "greeting-script"] {
        assert!(
            page.contains(&format!("data-task=\"{task}\"")),
            "{task}:\n{page}"
        );
    }
    // The calls, with their arguments (escaped JSON).
    assert!(page.contains("<td>get_weather</td>"), "{page}");
    assert!(
        page.contains("&quot;city&quot;: &quot;Boston&quot;"),
        "{page}"
    );
    assert!(
        page.contains("&quot;text&quot;: &quot;&lt;b&gt;bold&lt;/b&gt;&quot;"),
        "the argument escaped:\n{page}"
    );
    // The final answers, the model's markup escaped.
    assert!(page.contains("final answer:"), "{page}");
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the answer escaped:\n{page}"
    );
    // The judge's verdict: its profile, score and reason.
    assert!(page.contains("judge grader 1.00:"), "{page}");
    assert!(
        page.contains("the answer has"),
        "the judge's reason:\n{page}"
    );
    // The spend: the run's and the judge's, in USD.
    assert!(page.contains("model spend"), "{page}");
    assert!(page.contains("grader (judge) · "), "{page}");
    assert!(page.matches(" · $0.0").count() >= 3, "{page}");
}

#[test]
fn the_compare_reports_put_a_regression_in_its_bucket_and_summarise_for_ci() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&[]);
    let (base, base_json) = eval(dir.path(), &model, "base", &[], &[]);
    assert_eq!(base.code, 0, "{base:?}");
    // The description change takes the weather prompt to `echo` (and echo's own prompt
    // elsewhere): two regressions, the weather answer's judge score dropping too.
    let (cand, cand_json) = eval(
        dir.path(),
        &model,
        "candidate",
        &["echo-claims-weather"],
        &[],
    );
    assert_eq!(cand.code, 1, "{cand:?}");
    let summary = dir.path().join("step-summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let r = run_in(
        dir.path(),
        &[
            "eval",
            "compare",
            base_json.to_str().unwrap(),
            cand_json.to_str().unwrap(),
            "--html",
            "compare.html",
            "--markdown",
            "compare.md",
            "--step-summary",
        ],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );
    assert_eq!(r.code, 1, "compare's own exit code: {r:?}");
    let page = std::fs::read_to_string(dir.path().join("compare.html")).unwrap();
    assert_self_contained(&page);
    assert!(page.contains("REGRESSION: 2 task(s) flagged"), "{page}");
    let regressions = table(&page, "regressions");
    assert!(
        regressions.contains(
            "<tr class=\"failed\"><td>weather-boston</td><td>regressed</td><td>1/1 → 0/1</td>"
        ),
        "{page}"
    );
    assert!(regressions.contains("success rate 100.0% → 0.0%"), "{page}");
    assert!(regressions.contains("judge score 1.00 → 0.33"), "{page}");
    let judged = table(&page, "judge-changes");
    assert!(judged.contains("<td>weather-boston</td>"), "{page}");
    assert!(judged.contains("drop past the limit"), "{page}");
    let unchanged = table(&page, "unchanged");
    assert!(!unchanged.contains("weather-boston"), "{page}");
    assert!(unchanged.contains("<td>greeting-script</td>"), "{page}");
    assert!(table(&page, "spend").contains("$0.0"), "{page}");

    let md = std::fs::read_to_string(dir.path().join("compare.md")).unwrap();
    assert!(
        md.contains("❌ **REGRESSION: 2 task(s) flagged (!)**"),
        "{md}"
    );
    assert!(
        md.contains("| 2 | 0 | 1 | 0 | 1 |"),
        "counts per bucket:\n{md}"
    );
    assert!(
        md.contains("#### Regressions\n\n| task | bucket | success | why |\n|---|---|---|---|\n| weather-boston | regressed | 1/1 → 0/1 |"),
        "{md}"
    );
    assert!(
        md.contains("| weather-boston | 1.00 | 0.33 | -0.67 | drop past the limit |"),
        "{md}"
    );
    assert!(md.contains("#### Cost"), "{md}");
    assert!(md.contains("| judge |"), "the judge's cost:\n{md}");
    let appended = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(appended, format!("earlier step\n{md}\n"));
}

/// The summary of committed results: judge-score changes (a drop past the limit flagged),
/// and a partial candidate's never-judged tasks with the INCOMPLETE verdict (exit 5, the
/// reports written all the same).
#[test]
fn the_markdown_summary_shows_judge_score_drops_and_partial_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = common::repo_root().join("tests/eval_compare");
    for (case, code, expected) in [
        (
            "judge-score-dropped",
            1,
            &[
                "#### Judge-score changes",
                "| get-weather | 0.93 | 0.63 | -0.30 | drop past the limit |",
                "| 1 | 0 | 3 | 0 | 1 |",
            ][..],
        ),
        (
            "partial",
            5,
            &[
                "❌ **INCOMPLETE: a partial run cannot clear the gate**",
                "never judged",
            ][..],
        ),
    ] {
        let md = dir.path().join(format!("{case}.md"));
        let html = dir.path().join(format!("{case}.html"));
        let r = run_in(
            dir.path(),
            &[
                "eval",
                "compare",
                fixtures.join(case).join("base.json").to_str().unwrap(),
                fixtures.join(case).join("candidate.json").to_str().unwrap(),
                "--markdown",
                md.to_str().unwrap(),
                "--html",
                html.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(r.code, code, "{case}: {r:?}");
        let md = std::fs::read_to_string(&md).unwrap();
        for e in expected {
            assert!(md.contains(e), "{case}: no {e:?} in\n{md}");
        }
        assert!(html.is_file(), "{case}");
    }
}

/// Not on GitHub Actions, `--step-summary` warns and writes nothing.
#[test]
fn step_summary_without_github_warns() {
    let fixtures = common::repo_root().join("tests/eval_compare/unchanged");
    let out = std::process::Command::new(common::mcpspec())
        .args(["eval", "compare"])
        .arg(fixtures.join("base.json"))
        .arg(fixtures.join("candidate.json"))
        .arg("--step-summary")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("GITHUB_STEP_SUMMARY is not set"),
        "{out:?}"
    );
}

/// Several models' runs (`eval run --model A --model B`): a section per model, on the page
/// of the run and on `eval report`'s of its file.
#[test]
fn several_models_get_a_section_each() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&[]);
    let set = write_set(dir.path()).replace("report.eval.yaml", "two.eval.yaml");
    std::fs::write(
        &set,
        SET.replace(
            "  grader:",
            "  sloppy: { api: openai, baseUrl: \"http://127.0.0.1:9/v1\", model: sloppy, maxTurns: 4 }\n  grader:",
        ),
    )
    .unwrap();
    let json = dir.path().join("runs.json");
    let html = dir.path().join("runs.html");
    let r = common::model_server::eval_run(
        &set,
        &stdio_target(&[]),
        &model,
        &json,
        &[
            "--judge-base-url",
            &model.url,
            "--model",
            "local",
            "--model",
            "sloppy",
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert!(html.is_file(), "{r:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert_self_contained(&page);
    assert!(page.contains("id=\"model-local\""), "{page}");
    assert!(page.contains("id=\"model-sloppy\""), "{page}");
    assert_eq!(page.matches("data-task=\"weather-boston\"").count(), 2);
    assert_report_remakes(dir.path(), &json, &page);
}
