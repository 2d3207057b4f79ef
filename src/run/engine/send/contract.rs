//! A contract step: snapshot the server over the step's connection and diff it with its baseline.

use crate::language::dsl::Step;
use crate::results::outcome::Finding;
use crate::results::outcome::{Failure, Outcome};
use crate::run::client::Connection;
use crate::run::engine::failure::{outcome_for, step_failure};

/// A `contract` step: snapshot the live server over this connection, diff it with the
/// baseline, and fail on what the rules make failing (plus stale acceptances).
pub(super) async fn contract_check(
    step: &Step,
    conn: &mut Connection,
    baseline_dir: &std::path::Path,
    rules: &crate::language::contract_rules::Rules,
) -> Outcome {
    use crate::run::contract::{self, Snapshot, rules::ChangeDecision};
    let baseline = match Snapshot::read(baseline_dir) {
        Ok(s) => s,
        Err(e) => {
            return Outcome::Error {
                message: e,
                detail: None,
            };
        }
    };
    let live = match contract::take_snapshot(conn, None).await {
        Ok(s) => s,
        Err(e) => {
            return Outcome::Error {
                message: format!("cannot take the snapshot: {e}"),
                detail: None,
            };
        }
    };
    let labels = (
        baseline.label(&baseline_dir.display().to_string()),
        live.label("live server"),
    );
    let report = contract::diff_snapshots(&baseline, &live, labels);
    let judgement = contract::rules::judge(rules, &report, chrono::Utc::now().date_naive());
    let failure = |message: String, expected: Option<String>, actual: Option<String>| {
        step_failure(
            step,
            "contract",
            Finding {
                message,
                expected,
                actual,
            },
        )
    };
    let mut failures: Vec<Failure> = judgement
        .changes
        .iter()
        .filter(|j| j.verdict == ChangeDecision::Fail)
        .map(|j| {
            let c = &j.change;
            let at = c
                .path
                .as_ref()
                .map(|p| format!(" at {p}"))
                .unwrap_or_default();
            failure(
                format!("{}/{}: {}{at}", c.list, c.name, c.kind),
                c.before.as_ref().map(|v| v.to_string()),
                c.after.as_ref().map(|v| v.to_string()),
            )
        })
        .collect();
    failures.extend(
        judgement
            .stale
            .iter()
            .map(|s| failure(format!("stale acceptance: {}", s.message()), None, None)),
    );
    outcome_for(step, failures)
}
