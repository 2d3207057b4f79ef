//! How a failed expectation is told: the failure record, values shown short, what came
//! back instead of a response.

use serde_json::Value;

use crate::ground::source::Severity;
use crate::language::dsl::scenario::expect::Expect;
use crate::results::exchange::Exchange;
use crate::results::outcome::Failure;
use crate::results::outcome::Finding;

/// What `expect`'s judge found, told at the expectation.
pub(super) fn failure(expect: &Expect, severity: Severity, finding: Finding) -> Failure {
    Failure::at(
        expect.kind.name(),
        finding,
        &expect.pos,
        severity,
        "this expectation failed",
    )
}

/// A measured duration in milliseconds (`humantime` would print nanoseconds).
pub(super) fn show_duration(d: std::time::Duration) -> String {
    format!("{:.1}ms", d.as_secs_f64() * 1000.0)
}

pub fn describe_no_response(ex: &Exchange) -> String {
    match (&ex.http, &ex.raw_body) {
        (Some(h), Some(body)) => format!(
            "HTTP {} with body: {}",
            h.status,
            crate::ground::redact::shorten(body, 300)
        ),
        (Some(h), None) => format!("HTTP {} with no JSON-RPC response", h.status),
        (None, Some(body)) => crate::ground::redact::shorten(body, 300),
        (None, None) => "no response".into(),
    }
}

/// A JSON-RPC error response as a step reports it: with the HTTP status when it was not
/// 2xx. After a handshake that the same credentials passed, 401/403 means the server
/// withdrew the session's authorization: said in words, not only as the error's text.
pub fn describe_error_response(ex: &Exchange, error: &Value) -> String {
    let error = compact(error, 300);
    match ex.http.as_ref().map(|h| h.status) {
        Some(status @ (401 | 403)) => format!(
            "HTTP {status} with JSON-RPC error {error}: the server dropped the session's authorization (the handshake passed with the same credentials)"
        ),
        Some(status) if !(200..300).contains(&status) => {
            format!("HTTP {status} with JSON-RPC error {error}")
        }
        _ => format!("JSON-RPC error {error}"),
    }
}

pub(super) fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// One-line JSON, shortened to about `max` characters (redacted before it is cut).
pub fn compact(v: &Value, max: usize) -> String {
    crate::ground::redact::shorten(&v.to_string(), max)
}

pub(super) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The first few ways `instance` breaks a schema, each with where (`at `/a/0`: …`).
pub(super) fn schema_errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .take(5)
        .map(|e| {
            // The validator's message quotes the instance: cut, a server's value may be MBs.
            format!(
                "at `{}`: {}",
                crate::ground::redact::excerpt(&display_pointer(&e.instance_path().to_string())),
                crate::ground::redact::shorten(&e.to_string(), 300)
            )
        })
        .collect()
}

pub(super) fn display_pointer(p: &str) -> String {
    if p.is_empty() { "/".into() } else { p.into() }
}
