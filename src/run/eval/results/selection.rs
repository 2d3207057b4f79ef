//! Tool selection across a set, per tool: precision (of the trials that called the tool, the
//! share whose task expected it) and recall (of the trials whose task expected the tool, the
//! share that called it). A trial counts a tool once, however often it called it; a
//! `noToolCall` task expects none, so any call there is a false positive.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::TaskResult;

/// One tool's selection counts over every trial of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolSelection {
    pub tool: String,
    /// Trials that expected the tool and called it.
    pub true_positives: u32,
    /// Trials that called the tool without expecting it.
    pub false_positives: u32,
    /// Trials that expected the tool and did not call it.
    pub false_negatives: u32,
    /// TP / (TP + FP); none when no trial called the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// TP / (TP + FN); none when no task expected the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<f64>,
}

/// Per tool (by name), over every trial of `tasks`.
pub fn tool_selection(tasks: &[TaskResult]) -> Vec<ToolSelection> {
    let mut counts: BTreeMap<&str, (u32, u32, u32)> = BTreeMap::new();
    for task in tasks {
        let expected: BTreeSet<&str> = task.expected_tools.iter().map(String::as_str).collect();
        for trial in &task.trials {
            let called: BTreeSet<&str> = trial.tool_calls.iter().map(|c| c.name.as_str()).collect();
            for tool in expected.union(&called) {
                let c = counts.entry(tool).or_default();
                match (expected.contains(tool), called.contains(tool)) {
                    (true, true) => c.0 += 1,
                    (false, true) => c.1 += 1,
                    (true, false) => c.2 += 1,
                    (false, false) => {}
                }
            }
        }
    }
    counts
        .into_iter()
        .map(|(tool, (tp, fp, fn_))| ToolSelection {
            tool: tool.to_string(),
            true_positives: tp,
            false_positives: fp,
            false_negatives: fn_,
            precision: (tp + fp > 0).then(|| f64::from(tp) / f64::from(tp + fp)),
            recall: (tp + fn_ > 0).then(|| f64::from(tp) / f64::from(tp + fn_)),
        })
        .collect()
}

/// The console lines: `  get_weather  precision 0.50 (1/2)  recall 1.00 (1/1)`.
pub fn console(selection: &[ToolSelection]) -> String {
    if selection.is_empty() {
        return String::new();
    }
    let width = selection.iter().map(|s| s.tool.len()).max().unwrap_or(0);
    let mut out = String::from("tool selection (per trial):\n");
    for s in selection {
        let ratio = |v: Option<f64>, num: u32, den: u32| match v {
            Some(v) => format!("{v:.2} ({num}/{den})"),
            None => "-".to_string(),
        };
        out.push_str(&format!(
            "  {:width$}  precision {}  recall {}\n",
            s.tool,
            ratio(
                s.precision,
                s.true_positives,
                s.true_positives + s.false_positives
            ),
            ratio(
                s.recall,
                s.true_positives,
                s.true_positives + s.false_negatives
            ),
        ));
    }
    out
}
