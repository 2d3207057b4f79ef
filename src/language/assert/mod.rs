//! Expectations judged against what came back. Pure functions of (expectation,
//! response, template context): the engine fetches anything else they need (the tool's
//! `outputSchema`) beforehand.

mod describe;
mod failure;
pub mod golden;
mod json_text;
mod notifications;
mod output_schema;
mod predicate;

use std::borrow::Cow;

use serde_json::Value;

use crate::ground::json::path::CompiledPath;

use describe::*;
pub use describe::{compact, describe_error_response, describe_no_response};
pub use failure::Failure;
use notifications::*;
pub use notifications::{asked_requests, received_notifications};
use output_schema::*;
pub use predicate::is_singular_path;
use predicate::*;

use crate::ground::json::subset_of;
use crate::ground::source::Severity;
use crate::language::dsl::template::render_value;
use crate::language::dsl::{DurationBound, Expect, ExpectKind};
use crate::results::exchange::Exchange;

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

/// The note of an expectation that held over no match.
fn matched_nothing(src: &str) -> String {
    format!(
        "`{src}` matched nothing: its predicates held for no value (`minMatches: 1` demands a match)"
    )
}

/// A templated `duration` bound rendered and read as a duration (`200ms`).
fn render_duration(t: &str, ctx: &Value) -> Result<std::time::Duration, String> {
    let rendered = crate::language::dsl::template::render_str(t, ctx)
        .map_err(|e| format!("template error in `{t}`: {e}"))?;
    let text = match &rendered {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    crate::language::dsl::limits::duration(&text, &crate::language::dsl::limits::TIMEOUT)
        .map_err(|e| format!("`{t}` renders to `{text}`, not a duration such as `200ms`: {e}"))
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

/// Judge one expectation.
pub fn check(expect: &Expect, seen: &Observed, ctx: &Value) -> ExpectOutcome {
    let fail = |message: String, expected: Option<String>, actual: Option<String>| {
        ExpectOutcome::Fail(failure(expect, seen.severity, message, expected, actual))
    };
    match &expect.kind {
        ExpectKind::Path {
            path,
            source,
            predicates,
        } => {
            let (doc, path) = match resolved(seen, path, source, ctx) {
                Ok(found) => found,
                Err((why, actual)) => return fail(why, None, actual),
            };
            let matches = path.query(doc);
            let singular = is_singular_path(source);
            for pred in predicates {
                if let Err((message, expected, actual)) =
                    check_predicate(pred, source, matches.as_slice(), singular, ctx)
                {
                    return fail(message, expected, actual);
                }
            }
            if held_vacuously(predicates, matches.as_slice(), singular) {
                return ExpectOutcome::Vacuous(matched_nothing(source));
            }
            ExpectOutcome::Pass
        }
        ExpectKind::Schema { path, validator } => {
            let Some(doc) = &seen.document else {
                return fail(
                    "schema: no JSON-RPC response to validate".into(),
                    None,
                    Some(describe_no_response(seen.exchange)),
                );
            };
            let (instance, label) = match path {
                Some((p, src)) => match p.query(doc).as_slice() {
                    [one] => ((*one).clone(), src.clone()),
                    [] => return fail(format!("`{src}` matched nothing to validate"), None, None),
                    many => (
                        Value::Array(many.iter().map(|v| (*v).clone()).collect()),
                        src.clone(),
                    ),
                },
                None => (doc.as_ref().clone(), "$".to_string()),
            };
            let errors = describe::schema_errors(validator, &instance);
            if errors.is_empty() {
                ExpectOutcome::Pass
            } else {
                fail(
                    format!("`{label}` does not match the schema: {}", errors[0]),
                    Some("a value valid against the schema".into()),
                    Some(errors.join("\n")),
                )
            }
        }
        ExpectKind::Error {
            code,
            message,
            data,
        } => {
            let Some(err) = seen.reply.error else {
                let actual = match seen.reply.result {
                    Some(r) => format!("a result: {}", compact(r, 300)),
                    None => describe_no_response(seen.exchange),
                };
                let wanted = code
                    .as_ref()
                    .map(|c| format!("JSON-RPC error {}", c.describe()))
                    .unwrap_or("a JSON-RPC error".into());
                return fail(
                    format!("expected {wanted}, got {}", first_line(&actual)),
                    Some(wanted),
                    Some(actual),
                );
            };
            let got_code = err.get("code").and_then(Value::as_i64);
            if let Some(c) = code
                && !got_code.is_some_and(|g| c.accepts(g))
            {
                let got = got_code.map(|g| g.to_string()).unwrap_or("no code".into());
                return fail(
                    format!("expected error code {}, got {got}", c.describe()),
                    Some(c.describe()),
                    Some(compact(err, 500)),
                );
            }
            if let Some(re) = message {
                let msg = err.get("message").and_then(Value::as_str).unwrap_or("");
                if !re.is_match(msg) {
                    return fail(
                        format!("error message `{msg}` does not match /{}/", re.as_str()),
                        Some(format!("/{}/", re.as_str())),
                        Some(msg.to_string()),
                    );
                }
            }
            if let Some(d) = data {
                let expected = match render_value(d, ctx) {
                    Ok(v) => v,
                    Err((_, _, e)) => return fail(format!("template error: {e}"), None, None),
                };
                let actual = err.get("data").cloned().unwrap_or(Value::Null);
                if !subset_of(&expected, &actual) {
                    return fail(
                        "error.data does not contain the expected values".into(),
                        Some(pretty(&expected)),
                        Some(pretty(&actual)),
                    );
                }
            }
            ExpectOutcome::Pass
        }
        ExpectKind::IsError(want) => {
            if let Some(err) = seen.reply.error {
                return fail(
                    format!(
                        "expected a tool result with isError: {want}, got JSON-RPC error {}",
                        err.get("code").map(|c| c.to_string()).unwrap_or_default()
                    ),
                    Some(format!("result with isError: {want}")),
                    Some(compact(err, 500)),
                );
            }
            let Some(result) = seen.reply.result else {
                return fail(
                    format!("expected a tool result with isError: {want}"),
                    None,
                    Some(describe_no_response(seen.exchange)),
                );
            };
            let got = crate::protocol::fields::is_error(result);
            if got == *want {
                ExpectOutcome::Pass
            } else {
                fail(
                    format!("expected isError: {want}, got isError: {got}"),
                    Some(want.to_string()),
                    Some(format!("{got}: {}", compact(result, 300))),
                )
            }
        }
        ExpectKind::OutputSchema => check_output_schema(expect, seen),
        ExpectKind::Json {
            path,
            source,
            inner,
        } => json_text::check(expect, path, source, inner, seen, ctx),
        ExpectKind::Snapshot(spec) => golden::check(expect, spec, seen, ctx),
        ExpectKind::Notifications { .. } => check_notifications(expect, seen, ctx),
        ExpectKind::Rounds(spec) => {
            let rounds = seen.exchange.rounds;
            match length_holds(spec, rounds.into(), ctx) {
                Err(why) => fail(why, None, None),
                Ok((true, _)) => ExpectOutcome::Pass,
                Ok((false, wanted)) => fail(
                    format!(
                        "the request took {rounds} `input_required` round(s), expected {wanted}"
                    ),
                    Some(format!("{wanted} round(s)")),
                    Some(rounds.to_string()),
                ),
            }
        }
        ExpectKind::TaskStatus { statuses, last } => {
            let seen_all = crate::protocol::tasks::collapsed(
                seen.exchange.task_statuses.iter().map(String::as_str),
            );
            let got: Vec<&str> = if *last {
                seen_all.last().copied().into_iter().collect()
            } else {
                seen_all.clone()
            };
            if got == *statuses {
                ExpectOutcome::Pass
            } else if seen_all.is_empty() {
                fail(
                    "no task status was seen (a task step — `task:` on a tools/call — that the server answered with a task)".to_string(),
                    Some(statuses.join(", ")),
                    None,
                )
            } else {
                let message = if *last {
                    format!(
                        "the task ended `{}`, expected `{}`",
                        got.join(", "),
                        statuses.join(", ")
                    )
                } else {
                    format!(
                        "the task statuses were [{}], expected [{}]",
                        got.join(", "),
                        statuses.join(", ")
                    )
                };
                fail(
                    message,
                    Some(statuses.join(", ")),
                    Some(seen_all.join(", ")),
                )
            }
        }
        ExpectKind::Http { status, headers } => {
            if !seen.is_http {
                return ExpectOutcome::NotApplicable(
                    "`http` expectations apply only over HTTP".into(),
                );
            }
            let Some(http) = &seen.exchange.http else {
                return fail("no HTTP response".into(), None, None);
            };
            if let Some(s) = status
                && !s.accepts(http.status as i64)
            {
                return fail(
                    format!("expected HTTP status {}, got {}", s.describe(), http.status),
                    Some(s.describe()),
                    Some(http.status.to_string()),
                );
            }
            for (name, re) in headers {
                match (http.header(name), re) {
                    (Some(v), None) => {
                        return fail(
                            format!("expected no `{name}` header, got `{v}`"),
                            Some("absent".into()),
                            Some(v.into()),
                        );
                    }
                    (None, Some(r)) => {
                        return fail(
                            format!("expected a `{name}` header matching /{}/", r.as_str()),
                            Some(format!("/{}/", r.as_str())),
                            Some("absent".into()),
                        );
                    }
                    (Some(v), Some(r)) if !r.is_match(v) => {
                        return fail(
                            format!("header `{name}: {v}` does not match /{}/", r.as_str()),
                            Some(format!("/{}/", r.as_str())),
                            Some(v.into()),
                        );
                    }
                    _ => {}
                }
            }
            ExpectOutcome::Pass
        }
        ExpectKind::Duration(bounds) => {
            let took = seen.exchange.elapsed;
            // A step that got no reply has no latency to judge: say so, not a time.
            if seen.reply.is_none()
                && seen.exchange.response.is_none()
                && seen.exchange.raw_body.is_none()
                && seen.exchange.http.is_none()
            {
                return fail(
                    "no response to time".into(),
                    None,
                    Some(describe_no_response(seen.exchange)),
                );
            }
            for (op, bound) in bounds {
                let bound = match bound {
                    DurationBound::Fixed(d) => *d,
                    DurationBound::Template(t) => match render_duration(t, ctx) {
                        Ok(d) => d,
                        Err(why) => return fail(why, None, None),
                    },
                };
                let bound = &bound;
                if !op.holds(took, *bound) {
                    let want = format!("{} {}", op.symbol(), humantime::format_duration(*bound));
                    return fail(
                        format!("the response took {}, expected {want}", show_duration(took)),
                        Some(want),
                        Some(show_duration(took)),
                    );
                }
            }
            ExpectOutcome::Pass
        }
        ExpectKind::NoResponse(want) => {
            let got = !seen.reply.is_none()
                || seen.exchange.response.is_some()
                || seen
                    .exchange
                    .raw_body
                    .as_ref()
                    .is_some_and(|b| !b.trim().is_empty());
            match (want, got) {
                (true, true) => fail(
                    "expected no response, but the server answered".into(),
                    Some("no response".into()),
                    Some(
                        seen.exchange
                            .response
                            .as_ref()
                            .or(seen.reply.result)
                            .map(|r| compact(r, 500))
                            .or_else(|| seen.exchange.raw_body.clone())
                            .unwrap_or_default(),
                    ),
                ),
                (false, false) => fail(
                    "expected a response, got none".into(),
                    Some("a response".into()),
                    Some(describe_no_response(seen.exchange)),
                ),
                _ => ExpectOutcome::Pass,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::dsl::Predicate;

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
        assert!(err.0.contains("matched nothing"), "{err:?}");
        let one = serde_json::json!(3);
        let err = check_predicate(
            &Predicate::Type(JsonType::String),
            "$.tools[*].name",
            &[&one],
            false,
            &ctx,
        )
        .unwrap_err();
        assert!(err.0.contains("expected type string"), "{err:?}");
    }

    /// One match of a multi-node path equals a value that is not a list (the natural
    /// `readOnlyHint equals true` on a filter); a list value still compares the list, and
    /// several matches against a value say how to check each.
    #[test]
    fn equals_on_one_match_of_a_filter_compares_the_value() {
        let ctx = serde_json::json!({});
        let tv = |y: &str| {
            crate::ground::yaml::from_str::<crate::language::dsl::value::TValue>(y).unwrap()
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
        assert_eq!(err.0, format!("`{src}` is false, expected true"));
        assert!(ne("true", &[&f]).is_ok());
        assert!(ne("false", &[&f]).is_err());
        let err = eq("true", &[&t, &t]).unwrap_err();
        assert!(
            err.0.ends_with(
                "(the path matched 2 nodes, compared as a list; `oneOf: [true]` checks each match)"
            ),
            "{err:?}"
        );
        assert!(eq("true", &[]).unwrap_err().0.contains("matched 0 nodes"));
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
