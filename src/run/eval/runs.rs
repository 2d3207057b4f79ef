//! Several models in one `eval run` (`--model a --model b`): the set runs once per profile,
//! one after the other; each run is a complete results document, and they are reported
//! side by side. `--json` then writes one `mcpspec-eval-runs/1` document holding every
//! run (`eval compare` picks a run from it with `--model` / `--base-model` /
//! `--candidate-model`); JUnit gets a `<testsuite>` per model, named after it.

use serde::{Deserialize, Serialize};

use super::report::rates;
use super::results::EvalResults;

/// The `format` of a several-models results file.
pub const RUNS_FORMAT: &str = "mcpspec-eval-runs/1";

/// The results of one `eval run` with several `--model`s.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalRuns {
    /// Always [`RUNS_FORMAT`].
    pub format: String,
    /// One complete results document (`mcpspec-eval-results/1`) per model, in `--model`
    /// order; a model whose run never started (the run stopped before it) is absent.
    pub runs: Vec<EvalResults>,
}

/// Side by side: a line per task with each model's successes / trials, then each model's
/// totals (success rate, tool calls, tokens, and with judged answers the mean judge score
/// of each model's answers and the judge's cost).
pub fn side_by_side(runs: &[EvalResults]) -> String {
    let mut ids: Vec<&str> = Vec::new();
    for run in runs {
        for t in &run.tasks {
            if !ids.contains(&t.id.as_str()) {
                ids.push(&t.id);
            }
        }
    }
    let heads: Vec<String> = runs.iter().map(|r| r.model.profile.clone()).collect();
    let first = ids.iter().map(|i| i.len()).chain([4]).max().unwrap_or(4);
    let width = heads.iter().map(String::len).chain([9]).max().unwrap_or(9);
    let mut out = format!(
        "side by side ({} models, successes/trials per task):\n  {:first$}",
        runs.len(),
        "task"
    );
    for h in &heads {
        out.push_str(&format!("  {h:>width$}"));
    }
    out.push('\n');
    for id in &ids {
        out.push_str(&format!("  {id:first$}"));
        for run in runs {
            let cell = match run.tasks.iter().find(|t| t.id == *id) {
                Some(t) => {
                    let r = rates(t);
                    format!("{}/{}", r.successes, r.trials)
                }
                None => "-".into(),
            };
            out.push_str(&format!("  {cell:>width$}"));
        }
        out.push('\n');
    }
    let total = |label: &str, f: &dyn Fn(&EvalResults) -> String| {
        let mut line = format!("  {label:first$}");
        for run in runs {
            line.push_str(&format!("  {:>width$}", f(run)));
        }
        line.push('\n');
        line
    };
    out.push_str(&total("success", &|run| {
        let (ok, n) = run.tasks.iter().fold((0, 0), |(ok, n), t| {
            let r = rates(t);
            (ok + r.successes, n + r.trials)
        });
        if n == 0 {
            "-".into()
        } else {
            format!("{:.1}%", f64::from(ok) * 100.0 / f64::from(n))
        }
    }));
    out.push_str(&total("calls", &|run| {
        let calls: usize = run
            .tasks
            .iter()
            .flat_map(|t| &t.trials)
            .map(|t| t.tool_calls.len())
            .sum();
        calls.to_string()
    }));
    out.push_str(&total("tokens", &|run| {
        (run.usage.input_tokens + run.usage.output_tokens).to_string()
    }));
    if runs.iter().any(|r| r.usage.cost_usd.is_some()) {
        out.push_str(&total("est. cost", &|run| {
            run.usage
                .cost_usd
                .map_or_else(|| "-".into(), |c| format!("${c:.4}"))
        }));
    }
    let judged = |run: &EvalResults| -> Vec<f64> {
        run.tasks
            .iter()
            .flat_map(|t| &t.trials)
            .filter_map(super::report::judge_score)
            .collect()
    };
    if runs.iter().any(|r| !judged(r).is_empty()) {
        out.push_str(&total("judge", &|run| {
            let s = judged(run);
            if s.is_empty() {
                "-".into()
            } else {
                format!(
                    "{:.2}",
                    super::stats::sum(s.iter().copied()) / s.len() as f64
                )
            }
        }));
    }
    let judge_cost = |run: &EvalResults| run.judge_usage.as_ref().and_then(|u| u.cost_usd);
    if runs.iter().any(|r| judge_cost(r).is_some()) {
        out.push_str(&total("judge cost", &|run| {
            judge_cost(run).map_or_else(|| "-".into(), |c| format!("${c:.4}"))
        }));
    }
    out
}

/// JUnit: a `<testsuite>` per model, named `SET [PROFILE]`; each testcase's classname is
/// `SET.PROFILE`, so a CI view tells the models apart.
pub fn junit(runs: &[EvalResults], flavor: crate::results::junit::Flavor) -> String {
    let suites = runs.iter().map(|run| {
        let mut suite = super::report::suite(run);
        let profile = &run.model.profile;
        suite.name = format!("{} [{profile}]", run.set.name).into();
        for case in &mut suite.test_cases {
            case.classname = Some(format!("{}.{profile}", run.set.name).into());
        }
        suite
    });
    crate::results::junit::document(
        "mcpspec eval",
        runs.first().map(|r| r.started.as_str()),
        Some(std::time::Duration::from_millis(
            runs.iter().map(|r| r.duration_ms).sum(),
        )),
        suites,
        flavor,
    )
}
