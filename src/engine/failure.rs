//! A step's failures and its outcome: shared by the step runner and the built-in checks,
//! so that neither imports the other for them.

use std::time::Duration;

use crate::dsl::Step;
use crate::report::model::{Failure, Level, Outcome, StepResult, TranscriptEntry};
use crate::source::Severity;

/// Snippets of `level: should` steps are warnings.
pub fn severity_of(step: &Step) -> Severity {
    if step.level == Level::Should {
        Severity::Warning
    } else {
        Severity::Error
    }
}

/// A failure located at the step itself (not at one expectation).
pub fn step_failure(
    step: &Step,
    kind: &str,
    message: String,
    expected: Option<String>,
    actual: Option<String>,
) -> Failure {
    Failure {
        kind: kind.into(),
        snippet: step.pos.snippet(severity_of(step), &message, "this step"),
        message: message.lines().next().unwrap_or("").to_string(),
        expected,
        actual,
        file: step.pos.file_name().to_string(),
        line: step.pos.line,
        column: step.pos.col,
    }
}

/// Failures become a failed step, or a warning for `level: should`.
pub fn outcome_for(step: &Step, failures: Vec<Failure>) -> Outcome {
    if failures.is_empty() {
        Outcome::Passed
    } else if step.level == Level::Should {
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
        file: step.pos.file_name().to_string(),
        line: step.pos.line,
        column: step.pos.col,
        level: step.level,
        duration,
        outcome,
        transcript,
    }
}
