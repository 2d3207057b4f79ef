//! A partial run (stopped by `--max-cost`, `--max-duration`, the circuit breaker, Ctrl-C, a
//! fatal model API error) is incomplete evidence: its missing tasks are not "not a
//! regression", they were never judged. `eval compare` refuses to pass it (exit 5) unless
//! told `--allow-partial`, and names those tasks.

use std::collections::HashMap;

use super::super::results::EvalResults;

/// Why a side of the comparison is partial, and the tasks it never judged (fully or in
/// part: `id (1 of 3 trials)`); `None` when neither side is partial.
pub fn incomplete(base: &EvalResults, cand: &EvalResults) -> Option<String> {
    let mut out = Vec::new();
    for (side, run, other) in [("candidate", cand, base), ("base", base, cand)] {
        if !run.partial && run.aborted.is_none() {
            continue;
        }
        let own: HashMap<&str, usize> = run
            .tasks
            .iter()
            .map(|t| (t.id.as_str(), t.trials.len()))
            .collect();
        let mut never = Vec::new();
        // The other side's tasks (what should have been judged), then this side's own.
        let mut ids: Vec<(&str, usize)> = other
            .tasks
            .iter()
            .map(|t| (t.id.as_str(), t.trials.len()))
            .collect();
        for t in &run.tasks {
            if !ids.iter().any(|(i, _)| *i == t.id) {
                ids.push((t.id.as_str(), 0));
            }
        }
        for (id, want) in ids {
            match own.get(id).copied().unwrap_or(0) {
                0 => never.push(id.to_string()),
                n if n < want => never.push(format!("{id} ({n} of {want} trials)")),
                _ => {}
            }
        }
        let why = run
            .aborted
            .as_deref()
            .map(|a| format!("stopped early: {a}"))
            .unwrap_or_else(|| "interrupted or stopped early".into());
        let listed = if never.is_empty() {
            "its missing trials were never judged".to_string()
        } else {
            format!("{} task(s) never judged: {}", never.len(), never.join(", "))
        };
        out.push(format!("the {side} run is partial ({why}); {listed}"));
    }
    (!out.is_empty()).then(|| out.join("\n"))
}
