//! What the compare reports meant for people (the HTML page, the Markdown summary) show
//! beyond the console table: the tasks sorted into the buckets a reviewer reads —
//! regressions, improvements, unchanged, missing or never judged, judge-score changes — and
//! what each run spent. One sorting for both reports.

use super::compare::findings::Regression;
use super::compare::{Bucket, Comparison, TaskDelta};
use super::results::{EvalResults, Usage};

/// The tasks of a comparison by what a reviewer does with them.
pub struct View<'a> {
    /// Tasks with a finding (a regression; flagged only, on a capability set).
    pub regressions: Vec<&'a TaskDelta>,
    pub improvements: Vec<&'a TaskDelta>,
    /// Paired tasks whose verdict did not change, with no finding.
    pub unchanged: Vec<&'a TaskDelta>,
    /// Tasks on one side only: never judged on the other.
    pub missing: Vec<&'a TaskDelta>,
    /// Paired tasks judged on both sides whose mean judge score moved, largest drop first.
    pub judge_changes: Vec<JudgeChange<'a>>,
}

/// A task's mean judge score on both sides.
pub struct JudgeChange<'a> {
    pub task: &'a TaskDelta,
    pub base: f64,
    pub candidate: f64,
    /// The drop is past `--max-judge-drop` (a finding).
    pub flagged: bool,
}

impl<'a> View<'a> {
    pub fn of(c: &'a Comparison) -> View<'a> {
        let mut v = View {
            regressions: Vec::new(),
            improvements: Vec::new(),
            unchanged: Vec::new(),
            missing: Vec::new(),
            judge_changes: Vec::new(),
        };
        for t in &c.tasks {
            let list = match t.bucket {
                _ if !t.findings.is_empty() => &mut v.regressions,
                Bucket::MissingInBase | Bucket::MissingInCandidate => &mut v.missing,
                Bucket::Improved => &mut v.improvements,
                Bucket::Regressed | Bucket::UnchangedPass | Bucket::UnchangedFail => {
                    &mut v.unchanged
                }
            };
            list.push(t);
            let scores = (
                t.base.as_ref().and_then(|s| s.judge_score),
                t.candidate.as_ref().and_then(|s| s.judge_score),
            );
            if let (Some(base), Some(candidate)) = scores
                && (base - candidate).abs() > f64::EPSILON
            {
                let flagged = t
                    .findings
                    .iter()
                    .any(|f| matches!(f, Regression::JudgeScoreDropped { .. }));
                v.judge_changes.push(JudgeChange {
                    task: t,
                    base,
                    candidate,
                    flagged,
                });
            }
        }
        v.judge_changes
            .sort_by(|a, b| (a.candidate - a.base).total_cmp(&(b.candidate - b.base)));
        v
    }
}

/// What each run spent: the model's tokens and cost, and the judge's.
pub struct Spend {
    pub base: Usage,
    pub candidate: Usage,
    pub base_judge: Option<Usage>,
    pub candidate_judge: Option<Usage>,
}

impl Spend {
    pub fn of(base: &EvalResults, candidate: &EvalResults) -> Spend {
        Spend {
            base: base.usage.clone(),
            candidate: candidate.usage.clone(),
            base_judge: base.judge_usage.clone(),
            candidate_judge: candidate.judge_usage.clone(),
        }
    }

    /// `(label, base, candidate)` rows: the model's, then the judge's when a side had one.
    pub fn rows(&self) -> Vec<(&'static str, String, String)> {
        let mut rows = vec![("model", self.base.describe(), self.candidate.describe())];
        if self.base_judge.is_some() || self.candidate_judge.is_some() {
            let show = |u: &Option<Usage>| u.as_ref().map_or("-".into(), Usage::describe);
            rows.push(("judge", show(&self.base_judge), show(&self.candidate_judge)));
        }
        rows
    }
}
