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
    /// What did not hold; its message is one line here, suitable for a JUnit `message`
    /// attribute (all of it is in the snippet). Flattened: the serialized form keeps
    /// `message`, `expected` and `actual` beside `kind`.
    #[serde(flatten)]
    pub finding: Finding,
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
        let snippet = pos.snippet(severity, &finding.message, label);
        let message = finding.message.lines().next().unwrap_or("").to_string();
        Failure {
            kind: kind.into(),
            finding: Finding { message, ..finding },
            snippet,
            file: pos.shown_file().to_string(),
            line: pos.line,
            column: pos.col,
        }
    }

    /// `finding` told at a place with no snippet to point there: a step that errored
    /// (before any expectation was judged) listed among the expected failures.
    pub fn unpointed(
        kind: impl Into<String>,
        finding: Finding,
        file: impl Into<String>,
        line: u32,
        column: u32,
    ) -> Failure {
        Failure {
            kind: kind.into(),
            finding,
            snippet: String::new(),
            file: file.into(),
            line,
            column,
        }
    }
}

/// What a judgement that did not hold says, whoever judged (a predicate, an expectation, a
/// built-in check, the step runner): one form from the judge to the report, where
/// [`Failure::at`] places it in the scenario file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
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

#[cfg(test)]
mod tests {
    use super::{Failure, Finding};

    /// The finding is flattened: reports, last-run files and baselines keep the form they
    /// had when `Failure` held its three fields itself.
    #[test]
    fn a_failure_serializes_its_finding_beside_its_kind() {
        let failure = Failure {
            kind: "path".into(),
            finding: Finding {
                message: "m".into(),
                expected: None,
                actual: Some("2".into()),
            },
            snippet: String::new(),
            file: "s.yaml".into(),
            line: 3,
            column: 5,
        };
        let text = serde_json::to_string(&failure).unwrap();
        assert_eq!(
            text,
            r#"{"kind":"path","message":"m","expected":null,"actual":"2","snippet":"","file":"s.yaml","line":3,"column":5}"#
        );
        let back: Failure = serde_json::from_str(&text).unwrap();
        assert_eq!(back.finding, failure.finding);
        let without: Failure = serde_json::from_str(
            r#"{"kind":"k","message":"m","snippet":"","file":"f","line":1,"column":1}"#,
        )
        .unwrap();
        assert_eq!(without.finding, Finding::message("m"));
    }
}
