//! The record of an expectation that did not hold: made here, carried by the step
//! results, printed by the reports.

use serde::{Deserialize, Serialize};

/// One expectation that did not hold.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// Expectation kind: `path`, `schema`, `error`, `isError`, `outputSchema`, `http`,
    /// `noResponse`, `notifications`, `duration`, `snapshot`.
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
