//! Expectations judged against what came back. Pure functions of (expectation,
//! response, template context): the engine fetches anything else they need (the tool's
//! `outputSchema`) beforehand. [`check`] dispatches on the expectation's kind: one file
//! per kind (`path`, `schema`, `error_response`, …), as the predicates are (`predicate/`).

mod describe;
mod duration;
mod error_response;
pub mod golden;
mod http;
mod is_error;
mod json_text;
mod no_response;
mod notifications;
mod output_schema;
mod path;
mod predicate;
mod rounds;
mod schema;
mod task_status;

use std::borrow::Cow;

use serde_json::Value;

use crate::ground::json::path::CompiledPath;

use describe::failure;
pub use describe::{compact, describe_error_response, describe_no_response};
use notifications::check_notifications;
pub use notifications::{asked_requests, received_notifications};
use output_schema::check_output_schema;
pub use predicate::is_singular_path;

use crate::ground::source::Severity;
use crate::language::dsl::scenario::expect::{Expect, ExpectKind};
use crate::results::exchange::Exchange;
use crate::results::outcome::{Failure, Finding};

/// The JSON-RPC answer a step is judged on: the `result` and `error` members of the
/// response, or a result the engine assembled itself (the handshake's, the merged pages of
/// a paginated list, a tool call's arguments in an eval) — no envelope is invented for it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reply<'a> {
    pub result: Option<&'a Value>,
    pub error: Option<&'a Value>,
}

impl<'a> Reply<'a> {
    /// The members of the exchange's response (none without a response).
    pub fn of(ex: &'a Exchange) -> Self {
        let resp = ex.response.as_ref();
        Reply {
            result: resp.and_then(|r| r.get("result")),
            error: resp.and_then(|r| r.get("error")),
        }
    }

    /// A result built by the engine.
    pub fn result(result: &'a Value) -> Self {
        Reply {
            result: Some(result),
            error: None,
        }
    }

    /// Neither a result nor an error.
    pub fn is_none(&self) -> bool {
        self.result.is_none() && self.error.is_none()
    }

    /// The JSONPath document: `result`, or `{"error": …}` for an error response.
    /// Borrowed when it is a result (no copy per step).
    pub fn document(&self) -> Option<std::borrow::Cow<'a, Value>> {
        if let Some(result) = self.result {
            return Some(std::borrow::Cow::Borrowed(result));
        }
        self.error
            .map(|e| std::borrow::Cow::Owned(serde_json::json!({ "error": e })))
    }
}

/// What an expectation sees of one step: the answer ([`Reply`]) and the facts of the
/// exchange around it (HTTP status and headers, notifications, elapsed time, raw body).
pub struct Observed<'a> {
    pub exchange: &'a Exchange,
    pub reply: Reply<'a>,
    /// The JSONPath document of [`Observed::reply`].
    pub document: Option<std::borrow::Cow<'a, Value>>,
    /// Over HTTP?
    pub is_http: bool,
    /// The called tool's declared `outputSchema` (for `outputSchema: conforms`):
    /// `Ok(None)` when the tool declares none, `Err` when it could not be fetched.
    pub output_schema: Option<Result<Option<Value>, String>>,
    /// How failures are rendered: `Warning` for `level: should` steps.
    pub severity: Severity,
    /// Where `golden` expectations write under `--update-snapshots` (none: compare only).
    pub snapshots: Option<&'a golden::Snapshots>,
}

impl<'a> Observed<'a> {
    pub fn new(exchange: &'a Exchange, is_http: bool) -> Self {
        Self::with_reply(exchange, Reply::of(exchange), is_http)
    }

    /// Judge `reply` (built by the engine) with the transport facts of `exchange`.
    pub fn with_reply(exchange: &'a Exchange, reply: Reply<'a>, is_http: bool) -> Self {
        Observed {
            exchange,
            reply,
            document: reply.document(),
            is_http,
            output_schema: None,
            severity: Severity::Error,
            snapshots: None,
        }
    }
}

/// Outcome of one expectation.
pub enum ExpectOutcome {
    Pass,
    Fail(Failure),
    /// Does not apply here (e.g. `http` over stdio).
    NotApplicable(String),
    /// Held, but over nothing: a list that matched nothing (the note says what).
    Vacuous(String),
}

/// Why an expectation has nothing to look at: the message and what came back instead.
type Unresolved = (String, Option<String>);

/// The document of `seen` and `path` rendered against `ctx`, or why not (the message and
/// what came back instead).
fn resolved<'a>(
    seen: &'a Observed,
    path: &'a crate::language::dsl::PathExpr,
    source: &str,
    ctx: &Value,
) -> Result<(&'a Value, Cow<'a, CompiledPath>), Unresolved> {
    let Some(doc) = &seen.document else {
        return Err((
            format!("`{source}`: no JSON-RPC response to evaluate"),
            Some(describe_no_response(seen.exchange)),
        ));
    };
    Ok((doc, path.resolve(ctx).map_err(|why| (why, None))?))
}

/// A failed expectation, told at `expect` (`seen` gives the severity).
fn failing<'a>(
    expect: &'a Expect,
    seen: &'a Observed,
) -> impl Fn(String, Option<String>, Option<String>) -> ExpectOutcome + 'a {
    move |message, expected, actual| {
        ExpectOutcome::Fail(failure(
            expect,
            seen.severity,
            Finding {
                message,
                expected,
                actual,
            },
        ))
    }
}

/// Judge one expectation: each kind in its own file.
pub fn check(expect: &Expect, seen: &Observed, ctx: &Value) -> ExpectOutcome {
    match &expect.kind {
        ExpectKind::Path {
            path,
            source,
            predicates,
        } => path::check(expect, path, source, predicates, seen, ctx),
        ExpectKind::Schema { path, validator } => {
            schema::check(expect, path.as_ref(), validator, seen)
        }
        ExpectKind::Error {
            code,
            message,
            data,
        } => error_response::check(
            expect,
            code.as_ref(),
            message.as_ref(),
            data.as_ref(),
            seen,
            ctx,
        ),
        ExpectKind::IsError(want) => is_error::check(expect, *want, seen),
        ExpectKind::OutputSchema => check_output_schema(expect, seen),
        ExpectKind::Json {
            path,
            source,
            inner,
        } => json_text::check(expect, path, source, inner, seen, ctx),
        ExpectKind::Snapshot(spec) => golden::check(expect, spec, seen, ctx),
        ExpectKind::Notifications { .. } => check_notifications(expect, seen, ctx),
        ExpectKind::Rounds(spec) => rounds::check(expect, spec, seen, ctx),
        ExpectKind::TaskStatus { statuses, last } => {
            task_status::check(expect, statuses, *last, seen)
        }
        ExpectKind::Http { status, headers } => http::check(expect, status.as_ref(), headers, seen),
        ExpectKind::Duration(bounds) => duration::check(expect, bounds, seen, ctx),
        ExpectKind::NoResponse(want) => no_response::check(expect, *want, seen),
    }
}

#[cfg(test)]
mod tests {
    use super::notifications::method_matches;
    use super::predicate::{check_predicate, contains};
    use super::*;
    use crate::language::dsl::scenario::expect::Predicate;

    #[test]
    fn received_notifications_are_counted_beyond_those_kept() {
        use serde_json::json;
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}});
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"});
        let ex = Exchange {
            other_messages: std::iter::repeat_n(progress, 1000)
                .chain([request])
                .collect(),
            ..Exchange::default()
        };
        assert!(ex.other_messages.dropped() > 0);
        assert_eq!(received_notifications(&ex, None).0, 1000);
        assert_eq!(received_notifications(&ex, Some("notifications/*")).0, 1000);
        assert_eq!(
            received_notifications(&ex, Some("notifications/message")).0,
            0
        );
    }

    #[test]
    fn received_notifications_skip_requests_and_responses() {
        use serde_json::json;
        let ex = Exchange {
            other_messages: [
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}),
                json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"}),
                json!({"jsonrpc": "2.0", "id": 3, "result": {}}),
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}),
            ]
            .into_iter()
            .collect(),
            ..Exchange::default()
        };
        assert_eq!(received_notifications(&ex, None).0, 2);
        assert_eq!(
            received_notifications(&ex, Some("notifications/progress")).0,
            1
        );
        assert_eq!(received_notifications(&ex, Some("notifications/*")).0, 2);
        assert_eq!(received_notifications(&ex, Some("roots/list")).0, 0);
    }

    #[test]
    fn method_patterns() {
        assert!(method_matches(
            "notifications/progress",
            "notifications/progress"
        ));
        assert!(!method_matches(
            "notifications/progress",
            "notifications/message"
        ));
        assert!(method_matches(
            "notifications/*/list_changed",
            "notifications/tools/list_changed"
        ));
        assert!(!method_matches(
            "notifications/*/list_changed",
            "notifications/progress"
        ));
        assert!(method_matches("notifications/*", "notifications/message"));
        assert!(!method_matches("a*b*c", "ac"));
        assert!(method_matches("a*b*c", "abc"));
    }

    #[test]
    fn singular_paths() {
        assert!(is_singular_path("$.tools"));
        assert!(is_singular_path("$.content[0].text"));
        assert!(is_singular_path("$['a.b']"));
        assert!(!is_singular_path("$.tools[*].name"));
        assert!(!is_singular_path("$..name"));
        assert!(!is_singular_path("$.tools[?@.name == 'x']"));
        assert!(!is_singular_path("$.tools[0:2]"));
    }

    #[test]
    fn every_match_predicates_hold_vacuously_only_on_multi_node_paths() {
        use crate::language::dsl::document::JsonType;
        let ctx = serde_json::json!({});
        let none: Vec<&Value> = Vec::new();
        assert!(
            check_predicate(
                &Predicate::Type(JsonType::String),
                "$.tools[*].name",
                &none,
                false,
                &ctx
            )
            .is_ok()
        );
        assert!(
            check_predicate(
                &Predicate::ValidSchema(true),
                "$.tools[*].inputSchema",
                &none,
                false,
                &ctx
            )
            .is_ok()
        );
        let err = check_predicate(
            &Predicate::Type(JsonType::String),
            "$.name",
            &none,
            true,
            &ctx,
        )
        .unwrap_err();
        assert!(err.message.contains("matched nothing"), "{err:?}");
        let one = serde_json::json!(3);
        let err = check_predicate(
            &Predicate::Type(JsonType::String),
            "$.tools[*].name",
            &[&one],
            false,
            &ctx,
        )
        .unwrap_err();
        assert!(err.message.contains("expected type string"), "{err:?}");
    }

    /// One match of a multi-node path equals a value that is not a list (the natural
    /// `readOnlyHint equals true` on a filter); a list value still compares the list, and
    /// several matches against a value say how to check each.
    #[test]
    fn equals_on_one_match_of_a_filter_compares_the_value() {
        let ctx = serde_json::json!({});
        let tv = |y: &str| {
            crate::ground::yaml::from_str::<crate::ground::yaml::value::TValue>(y).unwrap()
        };
        let (t, f) = (serde_json::json!(true), serde_json::json!(false));
        let src = "$.tools[?@.name == 'x'].annotations.readOnlyHint";
        let eq =
            |v: &str, m: &[&Value]| check_predicate(&Predicate::Equals(tv(v)), src, m, false, &ctx);
        let ne = |v: &str, m: &[&Value]| {
            check_predicate(&Predicate::NotEquals(tv(v)), src, m, false, &ctx)
        };
        assert!(eq("true", &[&t]).is_ok());
        assert!(eq("[true]", &[&t]).is_ok());
        let err = eq("true", &[&f]).unwrap_err();
        assert_eq!(err.message, format!("`{src}` is false, expected true"));
        assert!(ne("true", &[&f]).is_ok());
        assert!(ne("false", &[&f]).is_err());
        let err = eq("true", &[&t, &t]).unwrap_err();
        assert!(
            err.message.ends_with(
                "(the path matched 2 nodes, compared as a list; `oneOf: [true]` checks each match)"
            ),
            "{err:?}"
        );
        assert!(
            eq("true", &[])
                .unwrap_err()
                .message
                .contains("matched 0 nodes")
        );
    }

    #[test]
    fn containment() {
        use serde_json::json;
        assert!(contains(&json!(["a", "b"]), &json!("b")));
        assert!(contains(&json!("hello world"), &json!("lo w")));
        assert!(contains(
            &json!({"a": 1, "b": {"c": 2}}),
            &json!({"b": {"c": 2}})
        ));
        assert!(contains(
            &json!([{"name": "x", "n": 1}]),
            &json!({"name": "x"})
        ));
        assert!(!contains(&json!([1, 2]), &json!(3)));
    }
}
