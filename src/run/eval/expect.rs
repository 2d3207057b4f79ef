//! `mcpspec eval expect RESULTS.json`: the tool calls a model made, written as `calls:` /
//! `args:` expectations of an eval set, for review (capture mode). Per task the first
//! successful trial is taken (else the first trial): each call becomes `calls: TOOL` with
//! an `equals` per top-level argument; a trial without calls becomes `noToolCall: true`.
//! Values are written as JSON, which YAML reads as written.

use serde_json::Value;

use super::caps::TRUNCATED_KEY;
use super::results::{EvalResults, TrialResult};

/// The `tasks:` fragment of expectations captured from `results`.
pub fn expectations(results: &EvalResults, source: &str) -> String {
    let mut out = format!(
        "# Expectations captured by `mcpspec eval expect` from {source}\n\
         # (set `{}`, model profile `{}`, {}): the calls the model made, not necessarily the\n\
         # right ones. Review them, then put each task's `expect:` in the set.\n",
        results.set.name, results.model.profile, results.model.model
    );
    out.push_str("tasks:\n");
    for task in &results.tasks {
        out.push_str(&format!(
            "  - id: {}\n",
            json(&Value::String(task.id.clone()))
        ));
        let Some((index, trial)) = pick(&task.trials) else {
            out.push_str("    # no trial ran: nothing to capture\n    expect: []\n");
            continue;
        };
        let differ = task.trials.iter().any(|t| names(t) != names(trial));
        out.push_str(&format!(
            "    # from trial {}{}{}\n",
            index + 1,
            if trial.success { "" } else { " (it failed)" },
            if differ {
                "; other trials called other tools"
            } else {
                ""
            }
        ));
        out.push_str("    expect:\n");
        if trial.tool_calls.is_empty() {
            out.push_str("      - noToolCall: true\n");
            continue;
        }
        for call in &trial.tool_calls {
            out.push_str(&format!(
                "      - calls: {}\n",
                json(&Value::String(call.name.clone()))
            ));
            match &call.arguments {
                Value::Object(map) if map.contains_key(TRUNCATED_KEY) => {
                    out.push_str("        # arguments too large to store: none captured\n");
                }
                Value::Object(map) if !map.is_empty() => {
                    out.push_str("        args:\n");
                    for (key, value) in map {
                        out.push_str(&format!(
                            "          - {{ path: {}, equals: {} }}\n",
                            json(&Value::String(crate::ground::json::path::child("$", key))),
                            json(value)
                        ));
                    }
                }
                Value::Object(_) => {}
                _ => out.push_str("        # the arguments were malformed: none captured\n"),
            }
        }
    }
    out
}

/// The first successful trial, else the first one.
fn pick(trials: &[TrialResult]) -> Option<(usize, &TrialResult)> {
    trials
        .iter()
        .enumerate()
        .find(|(_, t)| t.success)
        .or_else(|| trials.iter().enumerate().next())
}

fn names(t: &TrialResult) -> Vec<&str> {
    t.tool_calls.iter().map(|c| c.name.as_str()).collect()
}

/// A value as JSON on one line (valid YAML flow).
fn json(v: &Value) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_quote_what_is_not_a_name() {
        assert_eq!(crate::ground::json::path::child("$", "city"), "$.city");
        assert_eq!(
            crate::ground::json::path::child("$", "max-days"),
            "$['max-days']"
        );
        assert_eq!(crate::ground::json::path::child("$", "it's"), "$['it\\'s']");
    }
}
