//! Why a task counts as a regression, by metric, each told in one line (a change between two
//! runs, not a failed judgement: not a [`crate::results::outcome::Finding`]).

use serde::Serialize;

use super::{num, pct};

/// Why a task (or the whole run) counts as a regression.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Regression {
    /// Passed on the base, fails on the candidate.
    SuccessDropped { base: f64, candidate: f64 },
    /// A `noToolCall` task whose candidate trials called tools (none did on the base).
    CallsATool {
        tools: Vec<String>,
        trials: u32,
        of: u32,
    },
    /// A mean per trial rose by more than its limit. `increase` is in percent (`null` in
    /// JSON when the base was 0: any rise from nothing).
    CostRose {
        metric: Metric,
        base: f64,
        candidate: f64,
        increase: Option<f64>,
        limit: f64,
    },
    /// The task's mean judge score fell by more than `--max-judge-drop`.
    JudgeScoreDropped {
        base: f64,
        candidate: f64,
        limit: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Metric {
    Calls,
    Tokens,
    ToolErrors,
}

impl Metric {
    pub fn label(self) -> &'static str {
        match self {
            Metric::Calls => "tool calls",
            Metric::Tokens => "tokens",
            Metric::ToolErrors => "tool errors",
        }
    }
}

impl Regression {
    /// One line, for the console and JUnit messages.
    pub fn describe(&self) -> String {
        match self {
            Regression::SuccessDropped { base, candidate } => format!(
                "success rate {} → {} (below the pass rate)",
                pct(*base),
                pct(*candidate)
            ),
            Regression::CallsATool { tools, trials, of } => format!(
                "noToolCall task now calls {} ({trials} of {of} trials)",
                tools.join(", ")
            ),
            Regression::CostRose {
                metric,
                base,
                candidate,
                increase,
                limit,
            } => format!(
                "{} per trial {} → {} ({}, limit +{}%)",
                metric.label(),
                num(*base),
                num(*candidate),
                match increase {
                    Some(i) => format!("+{}%", num(*i)),
                    None => "up from 0".into(),
                },
                num(*limit)
            ),
            Regression::JudgeScoreDropped {
                base,
                candidate,
                limit,
            } => format!(
                "judge score {base:.2} → {candidate:.2} (-{:.2}, limit -{limit:.2})",
                base - candidate
            ),
        }
    }
}
