//! Reports of an eval run: the console summary, and JUnit (a `<testsuite>` per set, a
//! `<testcase>` per task whose properties carry the rates; a task fails when a trial
//! failed). Every text is redacted with the process's known secrets.

use std::time::Duration;

use crate::results::junit::{Policy, TestCaseStatus, TestSuite};

use super::results::{EvalResults, SetKind, TaskResult};
use crate::ground::redact::escape_controls;

/// Per-task averages over its trials.
pub struct Rates {
    pub trials: u32,
    pub successes: u32,
    pub tool_calls: f64,
    pub tool_errors: f64,
    pub tokens: f64,
    pub latency_ms: f64,
}

/// The mean judge score of a trial's judged answers (none without a verdict).
pub fn judge_score(r: &super::results::TrialResult) -> Option<f64> {
    let scores: Vec<f64> = r
        .expectations
        .iter()
        .filter_map(|e| e.judge.as_ref()?.score)
        .collect();
    (!scores.is_empty()).then(|| super::stats::sum(scores.iter().copied()) / scores.len() as f64)
}

/// A trial's judgement failed (the judge gave no verdict on an answer, or on an argument of
/// a `judge` critic).
pub fn judge_failed(r: &super::results::TrialResult) -> bool {
    let failed =
        |j: &Option<super::results::JudgeVerdict>| j.as_ref().is_some_and(|j| j.error.is_some());
    r.expectations
        .iter()
        .any(|e| failed(&e.judge) || e.critics.iter().any(|c| failed(&c.judge)))
}

/// The mean over the task's trials that have a score (none when none has).
pub fn mean_score(
    t: &TaskResult,
    score: impl Fn(&super::results::TrialResult) -> Option<f64>,
) -> Option<f64> {
    let scores: Vec<f64> = t.trials.iter().filter_map(score).collect();
    (!scores.is_empty()).then(|| super::stats::sum(scores.iter().copied()) / scores.len() as f64)
}

/// The sample standard deviation over the task's trials that have a score (none with
/// fewer than two).
pub fn score_sd(
    t: &TaskResult,
    score: impl Fn(&super::results::TrialResult) -> Option<f64>,
) -> Option<f64> {
    let scores: Vec<f64> = t.trials.iter().filter_map(score).collect();
    if scores.len() < 2 {
        return None;
    }
    let n = scores.len() as f64;
    let mean = super::stats::sum(scores.iter().copied()) / n;
    let var = super::stats::sum(scores.iter().map(|s| (s - mean) * (s - mean))) / (n - 1.0);
    Some(var.sqrt())
}

/// `  args 0.75  judge 0.90` for a task with scores, else nothing; over several trials
/// the mean ± the standard deviation (`args 0.75 ± 0.12`).
fn scores(t: &TaskResult) -> String {
    let mut out = String::new();
    let both = |name: &str, f: &dyn Fn(&super::results::TrialResult) -> Option<f64>| {
        let Some(mean) = mean_score(t, f) else {
            return String::new();
        };
        match score_sd(t, f) {
            Some(sd) => format!("  {name} {mean:.2} ± {sd:.2}"),
            None => format!("  {name} {mean:.2}"),
        }
    };
    out.push_str(&both("args", &|r| r.argument_score));
    out.push_str(&both("judge", &judge_score));
    out
}

pub fn rates(t: &TaskResult) -> Rates {
    let n = t.trials.len().max(1) as f64;
    let sum = |f: &dyn Fn(&super::results::TrialResult) -> f64| {
        super::stats::sum(t.trials.iter().map(f)) / n
    };
    Rates {
        trials: t.trials.len() as u32,
        successes: t.successes(),
        tool_calls: sum(&|r| r.tool_calls.len() as f64),
        tool_errors: sum(&|r| r.tool_errors as f64),
        tokens: sum(&|r| (r.input_tokens + r.output_tokens) as f64),
        latency_ms: sum(&|r| r.latency_ms as f64),
    }
}

/// A task's verdict as every report shows it: `PASS`, `WARN` (passed, a score in the warn
/// band), `FAIL`, or `NOT RUN` — a task the run's stop never reached has no outcome, which
/// is not a failure of the model.
pub fn mark(t: &TaskResult) -> &'static str {
    if t.trials.is_empty() {
        "NOT RUN"
    } else if t.failed() {
        "FAIL"
    } else if first_warning(t).is_some() {
        "WARN"
    } else {
        "PASS"
    }
}

/// The first warning (a passing score in the warn band) of the task's trials.
pub fn first_warning(t: &TaskResult) -> Option<String> {
    t.trials.iter().find_map(|r| {
        r.expectations
            .iter()
            .find_map(|e| Some(format!("{}: {}", e.name, e.warning.as_ref()?)))
    })
}

/// The first reason a trial of the task failed.
pub fn first_failure(t: &TaskResult) -> Option<String> {
    t.trials.iter().filter(|r| !r.success).find_map(|r| {
        r.error.clone().or_else(|| {
            r.expectations
                .iter()
                .find(|e| !e.passed)
                .map(|e| match &e.message {
                    Some(m) => format!("{}: {m}", e.name),
                    None => e.name.clone(),
                })
        })
    })
}

fn r(text: &str) -> String {
    escape_controls(&crate::ground::redact::known().redact(text)).into_owned()
}

/// The console summary (one line per task, then totals).
pub fn console(results: &EvalResults) -> String {
    let mut out = String::new();
    let kind = match results.set.kind {
        SetKind::Regression => "regression",
        SetKind::Capability => "capability",
    };
    out.push_str(&format!(
        "eval set {} ({kind}) · model {} ({}) · server {} {} · {} {}\n",
        results.set.name,
        results.model.profile,
        results.model.model,
        results.server.name,
        results.server.version,
        results.server.era,
        results.server.revision
    ));
    if let Some(dir) = &results.model.replayed_from {
        out.push_str(&format!(
            "  model answers replayed from {dir}: no model request, no cost (tokens as recorded)\n"
        ));
    }
    let (mut trials, mut ok) = (0, 0);
    for t in &results.tasks {
        let rt = rates(t);
        trials += rt.trials;
        ok += rt.successes;
        let warning = first_warning(t);
        let mark = mark(t);
        out.push_str(&format!(
            "  {mark} {}  {}/{} trials{}  calls {:.1}  tool errors {:.1}  tokens {:.0}{}{}\n",
            t.id,
            rt.successes,
            rt.trials,
            if t.pass.is_all() { "" } else { " (majority)" },
            rt.tool_calls,
            rt.tool_errors,
            rt.tokens,
            cost(&t.usage),
            scores(t)
        ));
        if let Some(cut) = &t.cut {
            out.push_str(&format!(
                "       {} trial(s) cut short by the run's stop: no outcome, their spend is counted\n",
                cut.trials.len()
            ));
        }
        if mark == "WARN"
            && let Some(why) = &warning
        {
            out.push_str(&format!(
                "       {}\n",
                r(&crate::ground::redact::shorten(why, 300))
            ));
        }
        if mark == "FAIL"
            && let Some(why) = first_failure(t)
        {
            out.push_str(&format!(
                "       {}\n",
                r(&crate::ground::redact::shorten(&why, 300))
            ));
        }
    }
    out.push_str(&format!(
        "{} task(s), {ok}/{trials} trial(s) succeeded in {:.1}s · tokens {} in, {} out{}{}{}{}\n",
        results.tasks.len(),
        results.duration_ms as f64 / 1000.0,
        results.usage.input_tokens,
        results.usage.output_tokens,
        if results.usage.estimated {
            " (ESTIMATED: the model API reported no usage; counted at 4 bytes a token)"
        } else {
            ""
        },
        cost(&results.usage),
        match (&results.judge, &results.judge_usage) {
            (Some(j), Some(u)) => format!(
                " · judge {}: tokens {} in, {} out{}",
                j.profile,
                u.input_tokens,
                u.output_tokens,
                cost(u)
            ),
            _ => String::new(),
        },
        match (&results.aborted, results.partial) {
            (Some(_), _) => " (PARTIAL: aborted)",
            (None, true) => " (PARTIAL: interrupted)",
            (None, false) => "",
        }
    ));
    out.push_str(&super::results::selection::console(&results.tool_selection));
    out
}

/// `  est. cost $0.0123` when the profile gave prices, else nothing.
fn cost(usage: &super::results::Usage) -> String {
    usage
        .cost_usd
        .map(|c| format!("  est. cost ${c:.4}"))
        .unwrap_or_default()
}

/// The JUnit document (the one JUnit policy: see [`crate::results::junit`]).
pub fn junit(results: &EvalResults, flavor: crate::results::junit::Flavor) -> String {
    crate::results::junit::document(
        "mcpspec eval",
        Some(&results.started),
        Some(Duration::from_millis(results.duration_ms)),
        [suite(results)],
        flavor,
    )
}

/// The `<testsuite>` of one run: a `<testcase>` per task.
pub fn suite(results: &EvalResults) -> TestSuite {
    let policy = Policy::known();
    let mut suite = TestSuite::new(policy.text(&results.set.name));
    let props = [
        ("set.kind", format!("{:?}", results.set.kind).to_lowercase()),
        ("model.profile", results.model.profile.clone()),
        ("model", results.model.model.clone()),
        ("model.baseUrl", results.model.base_url.clone()),
        (
            "server",
            format!("{} {}", results.server.name, results.server.version),
        ),
        ("era", results.server.era.clone()),
        ("revision", results.server.revision.clone()),
        ("toolsHash", results.server.tools_hash.clone()),
        ("partial", results.partial.to_string()),
        ("mcpspec.version", env!("CARGO_PKG_VERSION").to_string()),
    ];
    let aborted = (results.aborted.iter().map(|why| ("aborted", why.clone()))).chain(
        results
            .model
            .replayed_from
            .iter()
            .map(|d| ("replayedFrom", d.clone())),
    );
    let judge = results.judge.iter().flat_map(|j| {
        [
            ("judge.profile", j.profile.clone()),
            ("judge.model", j.model.clone()),
        ]
    });
    for (k, v) in props.into_iter().chain(aborted).chain(judge) {
        suite.add_property(policy.property(k, &v));
    }
    for t in &results.tasks {
        let rt = rates(t);
        let status = if rt.trials > 0 && !t.failed() {
            TestCaseStatus::success()
        } else if rt.trials == 0 {
            match &results.aborted {
                Some(why) => policy.error(
                    "aborted",
                    &crate::ground::redact::shorten(
                        &format!("NOT RUN: no trial finished: the run stopped: {why}"),
                        500,
                    ),
                    None,
                ),
                None => policy.error(
                    "interrupted",
                    "NOT RUN: no trial finished (interrupted)",
                    None,
                ),
            }
        } else {
            // A trial the judge could not grade was not judged at all: an error, not a failure.
            let judge_error = t.trials.iter().any(judge_failed);
            let why = first_failure(t).unwrap_or_default();
            let message = crate::ground::redact::shorten(
                &format!(
                    "{}/{} trials failed: {}",
                    rt.trials - rt.successes,
                    rt.trials,
                    why.lines().next().unwrap_or("")
                ),
                500,
            );
            let body: Vec<String> = t
                .trials
                .iter()
                .filter(|x| !x.success)
                .map(|x| {
                    let mut line = format!("trial {}:", x.index);
                    if let Some(e) = &x.error {
                        line.push_str(&format!(" error: {e};"));
                    }
                    for e in x.expectations.iter().filter(|e| !e.passed) {
                        line.push_str(&format!(
                            " {} failed{};",
                            e.name,
                            e.message
                                .as_ref()
                                .map(|m| format!(" ({m})"))
                                .unwrap_or_default()
                        ));
                    }
                    line
                })
                .collect();
            if judge_error {
                policy.error("judge_error", &message, Some(&body.join("\n")))
            } else {
                policy.failure("eval", &message, Some(&body.join("\n")))
            }
        };
        let mut case = policy.case(&t.id, &results.set.name, status);
        case.set_time(Duration::from_millis(
            t.trials.iter().map(|x| x.latency_ms).sum(),
        ));
        let success_rate = if rt.trials == 0 {
            0.0
        } else {
            rt.successes as f64 / rt.trials as f64
        };
        for (k, v) in [
            ("trials", rt.trials.to_string()),
            ("successes", rt.successes.to_string()),
            ("successRate", format!("{success_rate:.3}")),
            ("toolCalls.mean", format!("{:.2}", rt.tool_calls)),
            ("toolErrors.mean", format!("{:.2}", rt.tool_errors)),
            ("tokens.mean", format!("{:.1}", rt.tokens)),
            ("latencyMs.mean", format!("{:.1}", rt.latency_ms)),
            ("inputTokens", t.usage.input_tokens.to_string()),
            ("outputTokens", t.usage.output_tokens.to_string()),
        ]
        .into_iter()
        .chain(t.usage.cost_usd.map(|c| ("costUsd", format!("{c:.6}"))))
        .chain(
            mean_score(t, |r| r.argument_score).map(|a| ("argumentScore.mean", format!("{a:.3}"))),
        )
        .chain(mean_score(t, judge_score).map(|j| ("judgeScore.mean", format!("{j:.3}"))))
        .chain(t.judge_usage.iter().flat_map(|u| {
            [
                ("judge.inputTokens", u.input_tokens.to_string()),
                ("judge.outputTokens", u.output_tokens.to_string()),
            ]
            .into_iter()
            .chain(u.cost_usd.map(|c| ("judge.costUsd", format!("{c:.6}"))))
        })) {
            case.add_property(policy.property(k, &v));
        }
        suite.add_test_case(case);
    }
    suite
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `judge` critic without a verdict is a judge error, like a judged answer's.
    #[test]
    fn a_critic_the_judge_could_not_grade_is_a_judge_error() {
        let mut trial: super::super::results::TrialResult = serde_json::from_value(serde_json::json!({
            "index": 0, "success": false, "toolCalls": [], "toolErrors": 0, "inputTokens": 0,
            "outputTokens": 0, "turns": 1, "latencyMs": 0,
            "expectations": [{"name": "calls get_weather", "passed": false, "critics": [
                {"path": "$.city", "critic": "judge \"a city\" ≥ 0.7", "weight": 1.0, "matched": false,
                 "judge": {"profile": "grader", "error": "timed out"}}]}]
        }))
        .unwrap();
        assert!(judge_failed(&trial));
        trial.expectations[0].critics[0].judge = None;
        assert!(!judge_failed(&trial));
    }

    /// A task an interrupted run never reached: its means are 0, never `-0`.
    #[test]
    fn a_task_without_trials_prints_no_negative_zero() {
        let results: EvalResults = serde_json::from_value(serde_json::json!({
            "format": "mcpspec-eval-results/1", "partial": true,
            "set": {"name": "s", "kind": "regression", "file": "s.eval.yaml", "trials": 1},
            "model": {"profile": "p", "api": "openai", "model": "m", "baseUrl": "http://127.0.0.1:9/v1"},
            "server": {"name": "x", "version": "1", "era": "modern", "revision": "2026-07-28",
                       "toolsHash": "00", "toolCount": 0},
            "started": "2026-12-01T12:00:00Z", "durationMs": 0,
            "tasks": [{"id": "unrun", "tags": [], "noToolCall": false, "expectedTools": [], "trials": []}]
        }))
        .unwrap();
        let text = console(&results) + &junit(&results, crate::results::junit::Flavor::Default);
        assert!(!text.contains("-0.") && !text.contains(" -0 "), "{text}");
        assert!(
            text.contains("calls 0.0  tool errors 0.0  tokens 0"),
            "{text}"
        );
    }
}
