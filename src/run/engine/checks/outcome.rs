//! What a built-in check concludes: the one outcome type every family returns.

use crate::results::outcome::Finding;
use crate::run::client::Connection;

/// The conclusion of a built-in check. A check that could not run at all returns
/// `Err(reason)` instead (an error of the step, not a failure of the server).
pub enum CheckOutcome {
    Pass,
    /// Not applicable here, with the reason.
    Skip(String),
    /// What the server does wrong: one failure of the step each (a warning for
    /// `level: should`).
    Fail(Vec<Finding>),
}

impl CheckOutcome {
    /// A failure with one finding.
    pub fn fail(message: String, expected: impl Into<String>, actual: Option<String>) -> Self {
        CheckOutcome::Fail(vec![Finding {
            message,
            expected: Some(expected.into()),
            actual,
        }])
    }
}

/// Pass when something was judged, skip with the reasons when nothing could be. What
/// could not be judged (e.g. a slow tool) is noted in the step's transcript either way.
pub fn conclude(
    conn: &mut Connection,
    findings: Vec<Finding>,
    judged: usize,
    untestable: Vec<String>,
) -> CheckOutcome {
    if !findings.is_empty() || judged > 0 {
        for why in &untestable {
            conn.note(format!("not judged: {why}"));
        }
    }
    if !findings.is_empty() {
        CheckOutcome::Fail(findings)
    } else if judged == 0 {
        CheckOutcome::Skip(format!("not testable: {}", untestable.join("; ")))
    } else {
        CheckOutcome::Pass
    }
}
