//! A step's failures and its outcome: shared by the step runner and the built-in checks,
//! so that neither imports the other for them.

use std::time::Duration;

use crate::ground::source::Severity;
use crate::language::dsl::Step;
use crate::results::exchange::TranscriptEntry;
use crate::results::outcome::Finding;
use crate::results::outcome::{Failure, Level, Outcome};
use crate::results::report::result::StepResult;

tokio::task_local! {
    /// The column of the rule table (`protocol::rules`) for the revision the running
    /// scenario's connection negotiated: a step with a `rule` takes its level there.
    static NEGOTIATED: usize;
}

/// Run `f` (a scenario's steps) with the levels of the revision its connection negotiated.
pub async fn at_revision<F: std::future::Future>(revision: &str, f: F) -> F::Output {
    NEGOTIATED
        .scope(crate::protocol::rules::column_of(revision), f)
        .await
}

/// The step's level: its rule's at the negotiated revision (inside [`at_revision`]), else
/// its own. A revision where the rule is none skips the step before it runs.
pub fn level_of(step: &Step) -> Level {
    use crate::protocol::rules::RuleLevel;
    match step
        .rule
        .and_then(|r| NEGOTIATED.try_with(|c| r.levels[*c]).ok())
    {
        Some(RuleLevel::Must) => Level::Must,
        Some(RuleLevel::Should) => Level::Should,
        Some(RuleLevel::NotARule) | None => step.level,
    }
}

/// Snippets of `level: should` steps are warnings.
pub fn severity_of(step: &Step) -> Severity {
    if level_of(step) == Level::Should {
        Severity::Warning
    } else {
        Severity::Error
    }
}

/// A failure located at the step itself (not at one expectation).
pub fn step_failure(step: &Step, kind: &str, finding: Finding) -> Failure {
    Failure::at(kind, finding, &step.pos, severity_of(step), "this step")
}

/// Failures become a failed step, or a warning for `level: should`.
pub fn outcome_for(step: &Step, failures: Vec<Failure>) -> Outcome {
    if failures.is_empty() {
        Outcome::Passed
    } else if level_of(step) == Level::Should {
        Outcome::Warning { failures }
    } else {
        Outcome::Failed { failures }
    }
}

/// The report entry of one step.
pub fn step_result(
    step: &Step,
    outcome: Outcome,
    duration: Duration,
    transcript: Vec<TranscriptEntry>,
) -> StepResult {
    StepResult {
        name: step.name.clone(),
        file: step.pos.shown_file().to_string(),
        line: step.pos.line,
        column: step.pos.col,
        level: level_of(step),
        duration,
        outcome,
        transcript,
        notes: Vec::new(),
        exchanged: None,
    }
}
