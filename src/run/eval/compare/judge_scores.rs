//! Judge scores in a comparison: a task's mean judge score per side (over its trials with a
//! verdict), the paired change over the tasks judged on both sides with its 95% paired t
//! interval, and a task's drop past `--max-judge-drop` flagged as a regression even when
//! its pass verdicts did not flip.

use serde::Serialize;

use super::super::report::{judge_score, mean_score};
use super::super::results::TaskResult;
use super::super::stats;

/// The mean judge score of a task's trials (none without a verdict).
pub fn mean(task: &TaskResult) -> Option<f64> {
    mean_score(task, judge_score)
}

/// The judge-score shift over the tasks judged on both sides.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeStats {
    /// Tasks with a mean judge score on both sides.
    pub tasks: usize,
    /// Mean over those tasks of their mean score.
    pub base: f64,
    pub candidate: f64,
    pub delta: f64,
    /// 95% paired t interval of the mean per-task change; `null` under two tasks.
    pub ci95: Option<[f64; 2]>,
    /// `--max-judge-drop`: the largest accepted drop of one task's mean score.
    pub limit: Option<f64>,
}

/// The shift over `pairs` of (base, candidate) mean scores; none when no task was judged on
/// both sides.
pub fn stats(pairs: &[(f64, f64)], limit: Option<f64>) -> Option<JudgeStats> {
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    let base = stats::sum(pairs.iter().map(|p| p.0)) / n;
    let candidate = stats::sum(pairs.iter().map(|p| p.1)) / n;
    let diffs: Vec<f64> = pairs.iter().map(|(b, c)| c - b).collect();
    Some(JudgeStats {
        tasks: pairs.len(),
        base,
        candidate,
        delta: candidate - base,
        ci95: stats::paired_t_interval(&diffs).map(|i| [i.low.max(-1.0), i.high.min(1.0)]),
        limit,
    })
}

/// A task's drop from `base` to `candidate` passes `limit`.
pub fn dropped(base: f64, candidate: f64, limit: f64) -> bool {
    base - candidate > limit + 1e-9
}
