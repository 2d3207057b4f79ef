//! How an iteration's step failed, by kind, for the run's error counts.

use serde::Serialize;
use serde_json::Value;

use crate::results::exchange::Direction;
use crate::results::outcome::Outcome;
use crate::results::report::result::StepResult;

/// What went wrong with one step, by kind: what the reply was (a JSON-RPC error, a tool
/// result with `isError: true`, a wrong answer), or that none came (a timeout, a transport
/// failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// The scenario's expectations failed on the reply.
    Expectation,
    /// A JSON-RPC error reply no expectation asked for.
    Protocol,
    /// A tool result with `isError: true` no expectation asked for.
    IsError,
    Timeout,
    /// No reply: the connection broke, the server exited, the request could not be sent.
    Transport,
}

impl ErrorKind {
    const ALL: [ErrorKind; 5] = [
        ErrorKind::Expectation,
        ErrorKind::Protocol,
        ErrorKind::IsError,
        ErrorKind::Timeout,
        ErrorKind::Transport,
    ];

    pub(super) fn named(name: &str) -> Option<ErrorKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Expectation => "expectation",
            ErrorKind::Protocol => "protocol",
            ErrorKind::IsError => "isError",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Transport => "transport",
        }
    }
}

/// The error of a step, if any. A failed step is named by its reply (a JSON-RPC error or
/// an `isError` result is that kind, else a failed expectation); a step that passed with
/// no expectation at all still fails on such a reply: under load nothing counts as a
/// success merely because it was fast. Warnings (`level: should`) are not errors, as in
/// `run`.
pub fn error_of(result: &StepResult, expects_nothing: bool) -> Option<(ErrorKind, String)> {
    match &result.outcome {
        Outcome::Passed if expects_nothing => {
            reply_kind(result).map(|k| (k, format!("step `{}`: {}", result.name, k.name())))
        }
        Outcome::Passed | Outcome::Skipped { .. } | Outcome::Warning { .. } => None,
        Outcome::Failed { failures } => {
            let why = failures
                .first()
                .map_or("failed", |f| f.finding.message.as_str());
            Some((
                reply_kind(result).unwrap_or(ErrorKind::Expectation),
                format!("step `{}`: {why}", result.name),
            ))
        }
        Outcome::Error { message, .. } => Some((
            if message.starts_with("timed out") {
                ErrorKind::Timeout
            } else {
                ErrorKind::Transport
            },
            format!("step `{}`: {message}", result.name),
        )),
        _ => None,
    }
}

/// A JSON-RPC error or an `isError` result in the step's last received message.
fn reply_kind(result: &StepResult) -> Option<ErrorKind> {
    let last = result
        .transcript
        .iter()
        .rev()
        .find(|e| e.direction == Direction::Received)?;
    let reply: Value = serde_json::from_str(&last.body).ok()?;
    if reply.get("error").is_some() {
        Some(ErrorKind::Protocol)
    } else if reply
        .get("result")
        .is_some_and(crate::protocol::fields::is_error)
    {
        Some(ErrorKind::IsError)
    } else {
        None
    }
}
