//! What makes two eval runs less comparable than they look: a different era or
//! trial count, another tool list, a partial run. Said as warnings beside the comparison.

use std::collections::HashMap;

use super::super::results::EvalResults;

/// The runs differ in something other than what the pairing compares (era, trials…), or one of
/// them is partial: the change may come from there.
pub(super) fn warnings(base: &EvalResults, cand: &EvalResults) -> Vec<String> {
    let mut w = Vec::new();
    let mut differ = |what: &str, a: String, b: String| {
        if a != b {
            w.push(format!(
                "the runs differ in {what} (base {a}, candidate {b}): the change may come from there"
            ));
        }
    };
    differ("eval set", base.set.name.clone(), cand.set.name.clone());
    differ(
        "set kind",
        format!("{:?}", base.set.kind).to_lowercase(),
        format!("{:?}", cand.set.kind).to_lowercase(),
    );
    // The model (API, name, temperature, seed) is not warned about: it is either the same
    // (two servers) or the point of the comparison (two models), see `pairing`.
    let opt = |v: Option<String>| v.unwrap_or_else(|| "unset".into());
    // Judged answers graded by another judge model are scored on another scale.
    let judge = |r: &EvalResults| {
        opt(r
            .judge
            .as_ref()
            .map(|j| format!("{} {}", format!("{:?}", j.api).to_lowercase(), j.model)))
    };
    differ("judge model", judge(base), judge(cand));
    differ("era", base.server.era.clone(), cand.server.era.clone());
    differ(
        "protocol revision",
        base.server.revision.clone(),
        cand.server.revision.clone(),
    );
    differ(
        "trials per task",
        base.set.trials.to_string(),
        cand.set.trials.to_string(),
    );
    // Per task too (a task may override the set's default, a partial run may cut trials).
    let cand_trials: HashMap<&str, usize> = cand
        .tasks
        .iter()
        .map(|t| (t.id.as_str(), t.trials.len()))
        .collect();
    let uneven = base
        .tasks
        .iter()
        .filter(|t| {
            // A task that never ran on a side is missing there, not uneven.
            cand_trials
                .get(t.id.as_str())
                .is_some_and(|&n| n != t.trials.len() && n > 0 && !t.trials.is_empty())
        })
        .count();
    if uneven > 0 {
        w.push(format!(
            "{uneven} task(s) ran a different number of trials in the two runs: their rates are compared per trial"
        ));
    }
    if base.server.tools_hash != cand.server.tools_hash {
        w.push(format!(
            "the servers listed different tools (tool-list hash {} → {}, {} → {} tools): expected when a description or a tool changed",
            short_hash(&base.server.tools_hash),
            short_hash(&cand.server.tools_hash),
            base.server.tool_count,
            cand.server.tool_count
        ));
    }
    for (side, run) in [("base", base), ("candidate", cand)] {
        let unrun = run.tasks.iter().filter(|t| t.trials.is_empty()).count();
        if run.partial || unrun > 0 {
            let listed = if unrun > 0 {
                format!(": {unrun} task(s) never ran and are listed as missing, not compared")
            } else {
                ": missing tasks and trials are not comparable".into()
            };
            w.push(format!(
                "the {side} run is partial (interrupted or stopped early){listed}"
            ));
        }
    }
    w
}

fn short_hash(h: &str) -> &str {
    h.get(..12).unwrap_or(h)
}
