//! The paired comparison of two eval runs (`mcpspec eval compare BASE CANDIDATE`).
//!
//! Tasks are paired by id. Each side of a task is reduced to its success rate and its mean
//! cost per trial (tool calls, tokens, tool errors), so runs with different trial counts
//! still compare (with a warning). A task *passes* when its success rate reaches the pass
//! rate (default 0.8: a regression set is expected near 100%); the pass verdicts of the two
//! sides put it in a bucket. A task *regresses* when its verdict goes from pass to fail, when
//! a `noToolCall` task now calls a tool in any trial while no base trial did (a rare call
//! hides under the pass rate, so it is caught on its own), or when a cost rises more than
//! its threshold. The statistics (see [`super::stats`]) say whether the overall shift is more
//! than noise; the exit code follows the tasks.

use std::collections::HashMap;

use serde::Serialize;

use super::results::{EvalResults, SetKind, TaskResult};
use super::stats;

use findings::{Metric, Regression};
use thresholds::Thresholds;

pub mod findings;
mod judge_scores;
mod pairing;
mod partial;
pub mod thresholds;
mod warnings;

pub use judge_scores::JudgeStats;
pub use pairing::{Pairing, PairingKind};
pub use partial::incomplete;
use warnings::warnings;

/// Where a task lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bucket {
    Improved,
    Regressed,
    UnchangedPass,
    UnchangedFail,
    /// In the base run only.
    MissingInCandidate,
    /// In the candidate run only.
    MissingInBase,
}

impl Bucket {
    pub fn label(self) -> &'static str {
        match self {
            Bucket::Improved => "improved",
            Bucket::Regressed => "regressed",
            Bucket::UnchangedPass => "unchanged-pass",
            Bucket::UnchangedFail => "unchanged-fail",
            Bucket::MissingInCandidate => "missing-in-candidate",
            Bucket::MissingInBase => "missing-in-base",
        }
    }
}

/// One side of a task, per trial.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Side {
    pub trials: u32,
    pub successes: u32,
    pub rate: f64,
    pub passed: bool,
    /// Means per trial.
    pub calls: f64,
    pub input_tokens: f64,
    pub output_tokens: f64,
    pub tool_errors: f64,
    /// Trials that called at least one tool.
    pub trials_with_calls: u32,
    /// The mean judge score of its trials with a verdict (none without judged answers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_score: Option<f64>,
}

impl Side {
    fn of(task: &TaskResult, pass_rate: f64) -> Side {
        let trials = task.trials.len() as u32;
        let successes = task.successes();
        let per = |sum: f64| {
            if trials == 0 {
                0.0
            } else {
                sum / trials as f64
            }
        };
        let rate = per(successes as f64);
        Side {
            trials,
            successes,
            rate,
            // No trial at all (an interrupted run) is no evidence of success.
            passed: trials > 0 && rate + 1e-9 >= pass_rate,
            calls: per(stats::sum(
                task.trials.iter().map(|t| t.tool_calls.len() as f64),
            )),
            input_tokens: per(stats::sum(
                task.trials.iter().map(|t| t.input_tokens as f64),
            )),
            output_tokens: per(stats::sum(
                task.trials.iter().map(|t| t.output_tokens as f64),
            )),
            tool_errors: per(stats::sum(task.trials.iter().map(|t| t.tool_errors as f64))),
            trials_with_calls: task
                .trials
                .iter()
                .filter(|t| !t.tool_calls.is_empty())
                .count() as u32,
            judge_score: judge_scores::mean(task),
        }
    }

    pub fn tokens(&self) -> f64 {
        self.input_tokens + self.output_tokens
    }
}

/// One task of either run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskDelta {
    pub id: String,
    pub bucket: Bucket,
    pub no_tool_call: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<Side>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate: Option<Side>,
    /// Candidate rate − base rate (paired tasks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_delta: Option<f64>,
    /// Empty: not a regression.
    pub findings: Vec<Regression>,
}

/// A total over the paired tasks: the sum of the per-trial means, i.e. the cost of one pass
/// through the set.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Total {
    pub base: f64,
    pub candidate: f64,
    /// Percent; `null` when the base is 0.
    pub increase: Option<f64>,
    pub limit: Option<f64>,
    pub exceeded: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub calls: Total,
    pub tokens: Total,
    pub tool_errors: Total,
}

/// The success-rate shift and whether it is more than noise.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SuccessStats {
    /// Mean per-task success rate over the paired tasks (each task weighs the same).
    pub base: f64,
    pub candidate: f64,
    pub delta: f64,
    /// 95% paired t interval of the mean per-task rate delta, clamped to [-1, 1]; `null`
    /// under two paired tasks.
    pub ci95: Option<[f64; 2]>,
    /// Exact McNemar test on the tasks whose pass verdict flipped.
    pub mcnemar: Binomial,
    /// Exact sign test on the tasks whose success rate moved at all.
    pub sign_test: Binomial,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Binomial {
    pub up: u64,
    pub down: u64,
    pub p: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub paired: usize,
    pub improved: usize,
    pub regressed: usize,
    pub unchanged_pass: usize,
    pub unchanged_fail: usize,
    pub missing_in_candidate: usize,
    pub missing_in_base: usize,
    /// Tasks with at least one finding.
    pub regressions: usize,
}

/// The whole comparison: what every output renders.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub set: String,
    /// Two servers through one model, or two models on one server.
    pub pairing: Pairing,
    pub kind: SetKind,
    pub pass_rate: f64,
    /// Things that differ between the runs besides the server, and partial runs.
    pub warnings: Vec<String>,
    pub counts: Counts,
    pub success: SuccessStats,
    /// The judge-score shift over the tasks judged on both sides (none without any).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeStats>,
    pub totals: Totals,
    /// Base order, then the tasks new in the candidate.
    pub tasks: Vec<TaskDelta>,
    /// Whether the comparison fails (exit 1): any finding on a regression set. A capability
    /// set is tracked, not gated on.
    pub regression: bool,
    /// A side is partial and `--allow-partial` was not given: why, and the tasks never
    /// judged. The comparison fails (exit 5) whatever the tasks that ran say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// A results file that cannot be compared (exit 2).
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch(pub String);

/// Compare two runs. `Err` when they cannot be paired at all (duplicate ids, no task in
/// common).
pub fn compare(
    base: &EvalResults,
    cand: &EvalResults,
    th: &Thresholds,
) -> Result<Comparison, Mismatch> {
    let pairing = pairing::pairing(base, cand)?;
    let base_ids = index(base, "base")?;
    let cand_ids = index(cand, "candidate")?;
    let mut tasks = Vec::with_capacity(base.tasks.len().max(cand.tasks.len()));
    let mut counts = Counts::default();
    let mut diffs = Vec::new();
    for b in base.tasks.iter().filter(|t| ran(t)) {
        let bs = Side::of(b, th.pass_rate);
        let Some(&ci) = cand_ids.get(b.id.as_str()) else {
            counts.missing_in_candidate += 1;
            tasks.push(TaskDelta {
                id: b.id.clone(),
                bucket: Bucket::MissingInCandidate,
                no_tool_call: b.no_tool_call,
                base: Some(bs),
                candidate: None,
                rate_delta: None,
                findings: Vec::new(),
            });
            continue;
        };
        let c = &cand.tasks[ci];
        let cs = Side::of(c, th.pass_rate);
        counts.paired += 1;
        let bucket = match (bs.passed, cs.passed) {
            (true, true) => Bucket::UnchangedPass,
            (false, false) => Bucket::UnchangedFail,
            (false, true) => Bucket::Improved,
            (true, false) => Bucket::Regressed,
        };
        let mut findings = Vec::new();
        if bucket == Bucket::Regressed {
            findings.push(Regression::SuccessDropped {
                base: bs.rate,
                candidate: cs.rate,
            });
        }
        if (b.no_tool_call || c.no_tool_call)
            && bs.trials_with_calls == 0
            && cs.trials_with_calls > 0
        {
            let mut tools: Vec<String> = Vec::new();
            for call in c.trials.iter().flat_map(|t| &t.tool_calls) {
                if !tools.contains(&call.name) {
                    tools.push(call.name.clone());
                }
            }
            findings.push(Regression::CallsATool {
                tools,
                trials: cs.trials_with_calls,
                of: cs.trials,
            });
        }
        for (metric, limit, before, after) in [
            (Metric::Calls, th.max_calls_increase, bs.calls, cs.calls),
            (
                Metric::Tokens,
                th.max_tokens_increase,
                bs.tokens(),
                cs.tokens(),
            ),
            (
                Metric::ToolErrors,
                th.max_tool_errors_increase,
                bs.tool_errors,
                cs.tool_errors,
            ),
        ] {
            // A no-tool task's first call is already reported as such.
            let already = metric == Metric::Calls
                && findings
                    .iter()
                    .any(|f| matches!(f, Regression::CallsATool { .. }));
            if let Some(limit) = limit
                && !already
                && exceeds(before, after, limit)
            {
                findings.push(Regression::CostRose {
                    metric,
                    base: before,
                    candidate: after,
                    increase: increase(before, after),
                    limit,
                });
            }
        }
        if let (Some(limit), Some(before), Some(after)) =
            (th.max_judge_drop, bs.judge_score, cs.judge_score)
            && judge_scores::dropped(before, after, limit)
        {
            findings.push(Regression::JudgeScoreDropped {
                base: before,
                candidate: after,
                limit,
            });
        }
        match bucket {
            Bucket::Improved => counts.improved += 1,
            Bucket::Regressed => counts.regressed += 1,
            Bucket::UnchangedPass => counts.unchanged_pass += 1,
            _ => counts.unchanged_fail += 1,
        }
        diffs.push(cs.rate - bs.rate);
        tasks.push(TaskDelta {
            id: b.id.clone(),
            bucket,
            no_tool_call: b.no_tool_call || c.no_tool_call,
            rate_delta: Some(cs.rate - bs.rate),
            base: Some(bs),
            candidate: Some(cs),
            findings,
        });
    }
    for c in cand
        .tasks
        .iter()
        .filter(|c| ran(c) && !base_ids.contains_key(c.id.as_str()))
    {
        counts.missing_in_base += 1;
        tasks.push(TaskDelta {
            id: c.id.clone(),
            bucket: Bucket::MissingInBase,
            no_tool_call: c.no_tool_call,
            base: None,
            candidate: Some(Side::of(c, th.pass_rate)),
            rate_delta: None,
            findings: Vec::new(),
        });
    }
    if counts.paired == 0 {
        return Err(Mismatch(
            "the two runs have no task id in common: nothing to compare".into(),
        ));
    }
    counts.regressions = tasks.iter().filter(|t| !t.findings.is_empty()).count();

    let paired = || {
        tasks
            .iter()
            .filter_map(|t| Some((t.base.as_ref()?, t.candidate.as_ref()?)))
    };
    let n = counts.paired as f64;
    let base_rate = stats::sum(paired().map(|(b, _)| b.rate)) / n;
    let cand_rate = stats::sum(paired().map(|(_, c)| c.rate)) / n;
    let (up, down) = (counts.improved as u64, counts.regressed as u64);
    let moved_up = diffs.iter().filter(|d| **d > 1e-9).count() as u64;
    let moved_down = diffs.iter().filter(|d| **d < -1e-9).count() as u64;
    let success = SuccessStats {
        base: base_rate,
        candidate: cand_rate,
        delta: cand_rate - base_rate,
        // A delta of rates lies in [-1, 1]; the t interval of few tasks can reach past it.
        ci95: stats::paired_t_interval(&diffs).map(|i| [i.low.max(-1.0), i.high.min(1.0)]),
        mcnemar: Binomial {
            up,
            down,
            p: stats::binomial_two_sided(up, up + down),
        },
        sign_test: Binomial {
            up: moved_up,
            down: moved_down,
            p: stats::binomial_two_sided(moved_up, moved_up + moved_down),
        },
    };
    let total = |f: &dyn Fn(&Side) -> f64, limit: Option<f64>| {
        let before = stats::sum(paired().map(|(b, _)| f(b)));
        let after = stats::sum(paired().map(|(_, c)| f(c)));
        Total {
            base: before,
            candidate: after,
            increase: increase(before, after),
            limit,
            exceeded: limit.is_some_and(|l| exceeds(before, after, l)),
        }
    };
    let totals = Totals {
        calls: total(&|s| s.calls, th.max_calls_increase),
        tokens: total(&|s| s.tokens(), th.max_tokens_increase),
        tool_errors: total(&|s| s.tool_errors, th.max_tool_errors_increase),
    };
    let judged: Vec<(f64, f64)> = paired()
        .filter_map(|(b, c)| Some((b.judge_score?, c.judge_score?)))
        .collect();
    let judge = judge_scores::stats(&judged, th.max_judge_drop);
    let warnings = warnings(base, cand);
    let failing = counts.regressions > 0
        || totals.calls.exceeded
        || totals.tokens.exceeded
        || totals.tool_errors.exceeded;
    let kind = if base.set.kind == SetKind::Capability && cand.set.kind == SetKind::Capability {
        SetKind::Capability
    } else {
        SetKind::Regression
    };
    Ok(Comparison {
        set: cand.set.name.clone(),
        pairing,
        kind,
        pass_rate: th.pass_rate,
        warnings,
        counts,
        success,
        judge,
        totals,
        tasks,
        regression: failing && kind == SetKind::Regression,
        incomplete: None,
    })
}

/// A task that finished at least one trial. One with none (a task an interrupted run never
/// reached) is no evidence either way: it counts as missing from that run, not as failed.
fn ran(t: &TaskResult) -> bool {
    !t.trials.is_empty()
}

/// Task id → index of the tasks that ran; duplicate ids make pairing ambiguous.
fn index<'a>(run: &'a EvalResults, side: &str) -> Result<HashMap<&'a str, usize>, Mismatch> {
    let mut ids = HashMap::with_capacity(run.tasks.len());
    let mut seen = std::collections::HashSet::with_capacity(run.tasks.len());
    for (i, t) in run.tasks.iter().enumerate() {
        if !seen.insert(t.id.as_str()) {
            return Err(Mismatch(format!(
                "the {side} run has task `{}` twice: tasks are paired by id",
                t.id
            )));
        }
        if ran(t) {
            ids.insert(t.id.as_str(), i);
        }
    }
    Ok(ids)
}

/// Percent rise from `before` to `after`; `None` from 0.
fn increase(before: f64, after: f64) -> Option<f64> {
    (before > 0.0).then(|| (after - before) / before * 100.0)
}

/// A rise above `limit` percent; any rise from 0 counts.
fn exceeds(before: f64, after: f64, limit: f64) -> bool {
    const EPS: f64 = 1e-9;
    if after <= before + EPS {
        return false;
    }
    match increase(before, after) {
        Some(i) => i > limit + EPS,
        None => true,
    }
}

/// A rate as a percentage with one decimal.
pub fn pct(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// A number with at most two decimals, trailing zeros cut (`1`, `1.5`, `0.33`).
pub fn num(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rises_from_zero_always_exceed() {
        assert!(exceeds(0.0, 0.2, 1000.0));
        assert!(!exceeds(0.0, 0.0, 0.0));
        assert!(!exceeds(4.0, 5.0, 25.0));
        assert!(exceeds(4.0, 5.01, 25.0));
        assert!(!exceeds(5.0, 1.0, 0.0));
    }
}
