//! The result vocabulary: how much a step weighs ([`Level`]), what a judgement that did
//! not hold says ([`Finding`]) and where it is told ([`Failure`]), and how a step ended
//! ([`Outcome`]). The DSL sets the level, the assertions and checks make the findings and
//! failures, the engine the outcomes and the reports print them, so they sit below all
//! four (a report reads them without importing `dsl` or `assert`).

use serde::{Deserialize, Serialize};

use crate::ground::source::{Pos, Severity};

/// How much a step's failure weighs: `must` fails the run, `should` is a warning.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Must,
    Should,
}

/// One expectation that did not hold.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// Expectation kind: `path`, `schema`, `error`, `isError`, `outputSchema`, `http`,
    /// `noResponse`, `notifications`, `asked`, `rounds`, `duration`, `snapshot`.
    pub kind: String,
    /// One line, suitable for a JUnit `message` attribute.
    pub message: String,
    pub expected: Option<String>,
    pub actual: Option<String>,
    /// rustc-style snippet pointing at the expectation in the scenario file (plain text).
    pub snippet: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl Failure {
    /// `finding` told at `pos`, where the `kind` of judgement that made it is written: the
    /// message's first line for one-line reports, all of it in the snippet under `label`.
    pub fn at(
        kind: impl Into<String>,
        finding: Finding,
        pos: &Pos,
        severity: Severity,
        label: &str,
    ) -> Failure {
        Failure {
            kind: kind.into(),
            snippet: pos.snippet(severity, &finding.message, label),
            message: finding.message.lines().next().unwrap_or("").to_string(),
            expected: finding.expected,
            actual: finding.actual,
            file: pos.shown_file().to_string(),
            line: pos.line,
            column: pos.col,
        }
    }
}

/// What a judgement that did not hold says, whoever judged (a predicate, an expectation, a
/// built-in check, the step runner): one form from the judge to the report, where
/// [`Failure::at`] places it in the scenario file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Finding {
    pub message: String,
    /// What should have been there, when it can be said apart from the message.
    pub expected: Option<String>,
    /// What was there instead.
    pub actual: Option<String>,
}

impl Finding {
    /// A finding with what was expected and what came instead.
    pub fn new(message: String, expected: impl Into<String>, actual: impl Into<String>) -> Self {
        Finding {
            message,
            expected: Some(expected.into()),
            actual: Some(actual.into()),
        }
    }

    /// A finding told by its message alone.
    pub fn message(message: impl Into<String>) -> Self {
        Finding {
            message: message.into(),
            ..Finding::default()
        }
    }
}

/// How a step ended.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Outcome {
    Passed,
    /// One or more expectations did not hold (level `must`).
    Failed {
        failures: Vec<Failure>,
    },
    /// Expectations did not hold but the step's level is `should`: reported, not failing.
    Warning {
        failures: Vec<Failure>,
    },
    /// The step could not be judged: transport breakdown, timeout, crash, template error.
    Error {
        message: String,
        detail: Option<String>,
    },
    /// Not applicable (era, capability, earlier breakdown) — with the reason.
    Skipped {
        reason: String,
    },
    /// Failed, and listed in the expected-failures baseline.
    ExpectedFailure {
        failures: Vec<Failure>,
        entry: String,
    },
}

impl Outcome {
    /// The expectations that did not hold (failed, warning, expected failure); empty otherwise.
    pub fn failures(&self) -> &[Failure] {
        match self {
            Outcome::Failed { failures }
            | Outcome::Warning { failures }
            | Outcome::ExpectedFailure { failures, .. } => failures,
            _ => &[],
        }
    }

    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed { .. } => "failed",
            Outcome::Warning { .. } => "warning",
            Outcome::Error { .. } => "error",
            Outcome::Skipped { .. } => "skipped",
            Outcome::ExpectedFailure { .. } => "expectedFailure",
        }
    }
}
