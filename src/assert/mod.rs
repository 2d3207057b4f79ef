//! Expectations judged against what came back. Pure functions of (expectation,
//! response, template context): the engine fetches anything else they need (the tool's
//! `outputSchema`) beforehand.

mod failure;
pub mod snapshot;

use serde_json::Value;

pub use failure::Failure;

use crate::dsl::model::{JsonType, LengthSpec};
use crate::dsl::template::render_value;
use crate::dsl::{Expect, ExpectKind, Predicate};
use crate::exchange::Exchange;
use crate::json::{json_eq, json_type_name, path, sort_keys, subset_of};
use crate::source::Severity;

/// What an expectation sees of one step's exchange.
pub struct Observed<'a> {
    pub exchange: &'a Exchange,
    /// The JSONPath document: `result`, or `{"error": …}` for an error response.
    /// Borrowed from the response when it is a result (no copy per step).
    pub document: Option<std::borrow::Cow<'a, Value>>,
    /// Over HTTP?
    pub is_http: bool,
    /// The called tool's declared `outputSchema` (for `outputSchema: conforms`):
    /// `Ok(None)` when the tool declares none, `Err` when it could not be fetched.
    pub output_schema: Option<Result<Option<Value>, String>>,
    /// How failures are rendered: `Warning` for `level: should` steps.
    pub severity: Severity,
}

impl<'a> Observed<'a> {
    pub fn new(exchange: &'a Exchange, is_http: bool) -> Self {
        Observed {
            exchange,
            document: document_of(exchange),
            is_http,
            output_schema: None,
            severity: Severity::Error,
        }
    }
}

/// The JSONPath document of a response.
pub fn document_of(ex: &Exchange) -> Option<std::borrow::Cow<'_, Value>> {
    let resp = ex.response.as_ref()?;
    if let Some(result) = resp.get("result") {
        return Some(std::borrow::Cow::Borrowed(result));
    }
    resp.get("error")
        .map(|e| std::borrow::Cow::Owned(serde_json::json!({ "error": e })))
}

/// Outcome of one expectation.
pub enum ExpectOutcome {
    Pass,
    Fail(Failure),
    /// Does not apply here (e.g. `http` over stdio).
    NotApplicable(String),
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
            let Some(doc) = &seen.document else {
                return fail(
                    format!("`{source}`: no JSON-RPC response to evaluate"),
                    None,
                    Some(describe_no_response(seen.exchange)),
                );
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
            let errors: Vec<String> = validator
                .iter_errors(&instance)
                .take(5)
                .map(|e| {
                    format!(
                        "at `{}`: {e}",
                        display_pointer(&e.instance_path().to_string())
                    )
                })
                .collect();
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
            let resp = seen.exchange.response.as_ref();
            let Some(err) = resp.and_then(|r| r.get("error")) else {
                let actual = match resp.and_then(|r| r.get("result")) {
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
            let resp = seen.exchange.response.as_ref();
            if let Some(err) = resp.and_then(|r| r.get("error")) {
                return fail(
                    format!(
                        "expected a tool result with isError: {want}, got JSON-RPC error {}",
                        err.get("code").map(|c| c.to_string()).unwrap_or_default()
                    ),
                    Some(format!("result with isError: {want}")),
                    Some(compact(err, 500)),
                );
            }
            let Some(result) = resp.and_then(|r| r.get("result")) else {
                return fail(
                    format!("expected a tool result with isError: {want}"),
                    None,
                    Some(describe_no_response(seen.exchange)),
                );
            };
            let got = result
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false);
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
        ExpectKind::Snapshot(spec) => snapshot::check(expect, spec, seen, ctx),
        ExpectKind::Notifications {
            method,
            count,
            path,
            predicates,
            ..
        } => check_notifications(
            expect,
            seen,
            ctx,
            method.as_deref(),
            count,
            path,
            predicates,
        ),
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
            if seen.exchange.response.is_none()
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
            let got = seen.exchange.response.is_some()
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

fn check_output_schema(expect: &Expect, seen: &Observed) -> ExpectOutcome {
    let fail = |message: String, expected: Option<String>, actual: Option<String>| {
        ExpectOutcome::Fail(failure(expect, seen.severity, message, expected, actual))
    };
    let schema = match &seen.output_schema {
        Some(Ok(Some(schema))) => schema,
        Some(Ok(None)) => {
            return fail(
                "the tool declares no outputSchema to conform to".into(),
                None,
                None,
            );
        }
        Some(Err(e)) => {
            return fail(
                format!("cannot get the tool's outputSchema: {e}"),
                None,
                None,
            );
        }
        None => {
            return fail(
                "outputSchema applies to tools/call steps".into(),
                None,
                None,
            );
        }
    };
    let resp = seen.exchange.response.as_ref();
    let Some(result) = resp.and_then(|r| r.get("result")) else {
        return fail(
            "no tool result to check against outputSchema".into(),
            None,
            Some(describe_no_response(seen.exchange)),
        );
    };
    let Some(structured) = result.get("structuredContent") else {
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return fail(
                "the tool returned an error result (isError: true), not structuredContent".into(),
                None,
                Some(compact(result, 300)),
            );
        }
        return fail(
            "the tool declares an outputSchema but the result has no structuredContent".into(),
            Some("structuredContent".into()),
            Some(compact(result, 300)),
        );
    };
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => {
            return fail(
                format!("the tool's outputSchema is not a valid JSON Schema: {e}"),
                None,
                None,
            );
        }
    };
    let errors: Vec<String> = validator
        .iter_errors(structured)
        .take(5)
        .map(|e| {
            format!(
                "at `{}`: {e}",
                display_pointer(&e.instance_path().to_string())
            )
        })
        .collect();
    if errors.is_empty() {
        ExpectOutcome::Pass
    } else {
        fail(
            format!(
                "structuredContent does not conform to outputSchema: {}",
                errors[0]
            ),
            Some(compact(schema, 500)),
            Some(format!(
                "{}\n{}",
                compact(structured, 500),
                errors.join("\n")
            )),
        )
    }
}

/// The notifications an exchange received (`method`: of that method only): how many
/// arrived, and those kept to judge. The one place that reads what a transport kept of
/// the messages received meanwhile. Server requests (they have an id) are not counted.
pub fn received_notifications<'a>(
    ex: &'a Exchange,
    method: Option<&str>,
) -> (usize, Vec<&'a Value>) {
    let kept: Vec<&Value> = ex
        .other_messages
        .iter()
        .filter(|m| m.get("id").is_none())
        .filter(
            |m| match (m.get("method").and_then(Value::as_str), method) {
                (Some(got), Some(wanted)) => method_matches(wanted, got),
                (Some(_), None) => true,
                (None, _) => false,
            },
        )
        .collect();
    if ex.other_messages.dropped() == 0 {
        return (kept.len(), kept);
    }
    // A flood: only the first and last few were kept, so count by method. Server requests
    // are never named `notifications/…`, so these counts are of notifications alone.
    let arrived = ex
        .other_messages
        .counts()
        .filter_map(|(got, n)| {
            let got = got?;
            let wanted = match method {
                Some(wanted) => method_matches(wanted, got),
                None => got.starts_with("notifications/"),
            };
            wanted.then_some(n)
        })
        .sum();
    (arrived, kept)
}

/// A method name against a pattern in which `*` stands for any text
/// (`notifications/*/list_changed`).
fn method_matches(pattern: &str, method: &str) -> bool {
    let Some((first, rest)) = pattern.split_once('*') else {
        return pattern == method;
    };
    let Some(mut tail) = method.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('*').collect();
    let (last, middle) = parts.split_last().expect("split yields one part at least");
    for part in middle {
        match tail.find(part) {
            Some(at) => tail = &tail[at + part.len()..],
            None => return false,
        }
    }
    tail.len() >= last.len() && tail.ends_with(last)
}

/// A `notifications` expectation: how many arrived, then the predicates over `path`
/// evaluated on each of them (all matches judged together, as a multi-node path).
fn check_notifications(
    expect: &Expect,
    seen: &Observed,
    ctx: &Value,
    method: Option<&str>,
    count: &Option<LengthSpec>,
    path: &Option<(path::CompiledPath, String)>,
    predicates: &[Predicate],
) -> ExpectOutcome {
    let fail = |message: String, expected: Option<String>, actual: Option<String>| {
        ExpectOutcome::Fail(failure(expect, seen.severity, message, expected, actual))
    };
    let label = method.unwrap_or("*");
    let (total, kept) = received_notifications(seen.exchange, method);
    // Without a count or a path: at least one.
    let at_least_one = LengthSpec::Compare(crate::dsl::model::LengthCompare {
        gte: Some(1),
        ..Default::default()
    });
    let wanted_count = match (count, path) {
        (Some(c), _) => Some(c),
        (None, None) => Some(&at_least_one),
        (None, Some(_)) => None,
    };
    if let Some(spec) = wanted_count {
        let (ok, wanted) = length_holds(spec, total as u64);
        if !ok {
            let (_, all) = received_notifications(seen.exchange, None);
            return fail(
                format!("received {total} `{label}` notification(s), expected {wanted}"),
                Some(format!("{wanted} `{label}` notification(s)")),
                Some(summarize_methods(&all)),
            );
        }
    }
    let Some((path, source)) = path else {
        return ExpectOutcome::Pass;
    };
    let matches: Vec<&Value> = kept
        .iter()
        .flat_map(|n| path.query(n).as_slice().to_vec())
        .collect();
    // Reported as `notifications/message $.params.level`.
    let src = format!("{label} {source}");
    for pred in predicates {
        if let Err((message, expected, actual)) =
            check_predicate(pred, &src, matches.as_slice(), false, ctx)
        {
            return fail(message, expected, actual);
        }
    }
    ExpectOutcome::Pass
}

/// `method ×count` of the notifications received, for failure messages.
fn summarize_methods(all: &[&Value]) -> String {
    if all.is_empty() {
        return "no notifications".into();
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for m in all {
        let name = m.get("method").and_then(Value::as_str).unwrap_or("?");
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    counts
        .iter()
        .map(|(n, c)| format!("{n} ×{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

type PredFail = (String, Option<String>, Option<String>);

/// One predicate over the matches of `src`. `singular`: the path selects at most one
/// node by construction ([`is_singular_path`]); otherwise its matches are a list.
fn check_predicate(
    pred: &Predicate,
    src: &str,
    matches: &[&Value],
    singular: bool,
    ctx: &Value,
) -> Result<(), PredFail> {
    let render = |v: &crate::dsl::value::TValue| -> Result<Value, PredFail> {
        render_value(v, ctx).map_err(|(_, _, e)| (format!("template error: {e}"), None, None))
    };
    let nothing = || {
        (
            format!("`{src}` matched nothing"),
            None,
            Some("no match".to_string()),
        )
    };
    // A multi-node path (wildcard, filter, slice, descendant) yields the list of its
    // matches; a singular path yields its one value. For `equals`/`notEquals`, one match
    // of a multi-node path compared with a value that is not a list is that value (the
    // natural `readOnlyHint equals true` on a filter), as `scalar` says.
    let single_as = |scalar: bool| -> Result<std::borrow::Cow<'_, Value>, PredFail> {
        use std::borrow::Cow;
        let one_value = scalar && matches.len() == 1;
        if !(singular || one_value) {
            return Ok(Cow::Owned(Value::Array(
                matches.iter().map(|v| (*v).clone()).collect(),
            )));
        }
        match matches {
            [] => Err(nothing()),
            [one] => Ok(Cow::Borrowed(*one)),
            many => Ok(Cow::Owned(Value::Array(
                many.iter().map(|v| (*v).clone()).collect(),
            ))),
        }
    };
    match pred {
        Predicate::Equals(v) => {
            let expected = render(v)?;
            let actual = single_as(!expected.is_array())?;
            if json_eq(&expected, &actual) {
                Ok(())
            } else {
                // Several (or no) matches against a single value: say how to check each.
                let hint = if !singular && !expected.is_array() && matches.len() != 1 {
                    format!(
                        " (the path matched {} nodes, compared as a list; `oneOf: [{}]` checks each match)",
                        matches.len(),
                        compact(&expected, 60)
                    )
                } else {
                    String::new()
                };
                Err((
                    format!(
                        "`{src}` is {}, expected {}{hint}",
                        compact(&actual, 120),
                        compact(&expected, 120)
                    ),
                    Some(pretty(&expected)),
                    Some(pretty(&actual)),
                ))
            }
        }
        Predicate::NotEquals(v) => {
            let expected = render(v)?;
            let actual = single_as(!expected.is_array())?;
            if json_eq(&expected, &actual) {
                Err((
                    format!(
                        "`{src}` equals {}, expected a different value",
                        compact(&actual, 120)
                    ),
                    Some(format!("not {}", compact(&expected, 200))),
                    Some(pretty(&actual)),
                ))
            } else {
                Ok(())
            }
        }
        Predicate::Contains(v) => {
            let expected = render(v)?;
            if matches.is_empty() {
                return Err(nothing());
            }
            let found = if matches.len() > 1 {
                matches.iter().any(|m| {
                    json_eq(m, &expected) || (expected.is_object() && subset_of(&expected, m))
                })
            } else {
                contains(matches[0], &expected)
            };
            if found {
                Ok(())
            } else {
                let actual = single_as(false)?;
                Err((
                    format!("`{src}` does not contain {}", compact(&expected, 120)),
                    Some(format!("contains {}", compact(&expected, 500))),
                    Some(pretty(&actual)),
                ))
            }
        }
        Predicate::Matches(re) => {
            if matches.is_empty() {
                // Every match must hold: vacuously true for a multi-node path.
                return if singular { Err(nothing()) } else { Ok(()) };
            }
            for m in matches {
                match m.as_str() {
                    Some(s) if re.is_match(s) => {}
                    None => {
                        return Err((
                            format!(
                                "`{src}` is {} ({}), not a string to match /{}/",
                                json_type_name(m),
                                compact(m, 80),
                                re.as_str()
                            ),
                            Some(format!("a string matching /{}/", re.as_str())),
                            Some(compact(m, 500)),
                        ));
                    }
                    _ => {
                        return Err((
                            format!(
                                "`{src}` value {} does not match /{}/",
                                compact(m, 120),
                                re.as_str()
                            ),
                            Some(format!("/{}/", re.as_str())),
                            Some(compact(m, 500)),
                        ));
                    }
                }
            }
            Ok(())
        }
        Predicate::Type(t) => {
            if matches.is_empty() {
                // Every match must hold: vacuously true for a multi-node path.
                return if singular { Err(nothing()) } else { Ok(()) };
            }
            for m in matches {
                if !has_type(m, *t) {
                    return Err((
                        format!(
                            "`{src}` is {} ({}), expected type {}",
                            json_type_name(m),
                            compact(m, 80),
                            type_label(*t)
                        ),
                        Some(type_label(*t).into()),
                        Some(json_type_name(m).into()),
                    ));
                }
            }
            Ok(())
        }
        Predicate::Length(spec) => {
            let len = if singular {
                match matches {
                    [] => return Err(nothing()),
                    [one] => match one {
                        Value::Array(a) => a.len(),
                        Value::String(s) => s.chars().count(),
                        Value::Object(o) => o.len(),
                        other => {
                            return Err((
                                format!(
                                    "`{src}` is {}, which has no length",
                                    json_type_name(other)
                                ),
                                None,
                                Some(compact(other, 200)),
                            ));
                        }
                    },
                    _ => matches.len(),
                }
            } else {
                matches.len()
            } as u64;
            let (ok, wanted) = length_holds(spec, len);
            if ok {
                Ok(())
            } else {
                Err((
                    format!("`{src}` has length {len}, expected {wanted}"),
                    Some(wanted),
                    Some(len.to_string()),
                ))
            }
        }
        Predicate::Exists(want) => {
            let got = !matches.is_empty();
            match (want, got) {
                (true, false) => Err((
                    format!("`{src}` matched nothing, expected it to exist"),
                    Some("exists".into()),
                    Some("absent".into()),
                )),
                (false, true) => Err((
                    format!("`{src}` exists, expected it to be absent"),
                    Some("absent".into()),
                    Some(compact(&*single_as(false)?, 500)),
                )),
                _ => Ok(()),
            }
        }
        Predicate::OneOf(options) => {
            let options: Vec<Value> = match render(options)? {
                Value::Array(items) => items,
                other => {
                    return Err((
                        format!("`oneOf` rendered to {}, not a list", json_type_name(&other)),
                        Some("a list of values".into()),
                        Some(compact(&other, 200)),
                    ));
                }
            };
            if matches.is_empty() {
                // Every match must hold: vacuously true for a multi-node path.
                return if singular { Err(nothing()) } else { Ok(()) };
            }
            for m in matches {
                if !options.iter().any(|o| json_eq(o, m)) {
                    let list = Value::Array(options.clone());
                    return Err((
                        format!(
                            "`{src}` is {}, expected one of {}",
                            compact(m, 120),
                            compact(&list, 200)
                        ),
                        Some(compact(&list, 500)),
                        Some(compact(m, 500)),
                    ));
                }
            }
            Ok(())
        }
        Predicate::Unique(want) => {
            let mut seen: Vec<String> = Vec::new();
            let mut dups: Vec<String> = Vec::new();
            for m in matches {
                let key = sort_keys((*m).clone()).to_string();
                if seen.contains(&key) {
                    if !dups.contains(&key) {
                        dups.push(key);
                    }
                } else {
                    seen.push(key);
                }
            }
            match (want, dups.is_empty()) {
                (true, false) => Err((
                    format!("`{src}` has duplicates: {}", dups.join(", ")),
                    Some("distinct values".into()),
                    Some(dups.join(", ")),
                )),
                (false, true) => Err((
                    format!("`{src}` has no duplicates"),
                    Some("duplicates".into()),
                    None,
                )),
                _ => Ok(()),
            }
        }
        Predicate::ValidSchema(want) => {
            if matches.is_empty() {
                // Every match must hold: vacuously true for a multi-node path.
                return if singular { Err(nothing()) } else { Ok(()) };
            }
            for m in matches {
                let problem = if !m.is_object() {
                    Some(format!("{} is not a schema object", json_type_name(m)))
                } else {
                    jsonschema::meta::validate(m).err().map(|e| e.to_string())
                };
                match (want, problem) {
                    (true, Some(p)) => {
                        return Err((
                            format!("`{src}` is not a valid JSON Schema: {p}"),
                            Some("a JSON Schema 2020-12 object".into()),
                            Some(compact(m, 300)),
                        ));
                    }
                    (false, None) => {
                        return Err((
                            format!("`{src}` is a valid JSON Schema"),
                            Some("an invalid schema".into()),
                            Some(compact(m, 300)),
                        ));
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        Predicate::Compare(op, bound) => {
            if matches.is_empty() {
                // Every match must hold: vacuously true for a multi-node path.
                return if singular { Err(nothing()) } else { Ok(()) };
            }
            for m in matches {
                match m.as_f64() {
                    Some(n) if op.holds(n, *bound) => {}
                    _ => {
                        return Err((
                            format!(
                                "`{src}` is {}, expected {} {bound}",
                                compact(m, 120),
                                op.symbol()
                            ),
                            Some(format!("{} {bound}", op.symbol())),
                            Some(compact(m, 500)),
                        ));
                    }
                }
            }
            Ok(())
        }
    }
}

/// Single match containment: array element, substring, object subset.
fn contains(haystack: &Value, needle: &Value) -> bool {
    match (haystack, needle) {
        (Value::Array(items), _) => items
            .iter()
            .any(|i| json_eq(i, needle) || (needle.is_object() && subset_of(needle, i))),
        (Value::String(s), Value::String(n)) => s.contains(n.as_str()),
        (Value::Object(_), Value::Object(_)) => subset_of(needle, haystack),
        _ => false,
    }
}

fn has_type(v: &Value, t: JsonType) -> bool {
    match t {
        JsonType::String => v.is_string(),
        JsonType::Number => v.is_number(),
        JsonType::Integer => {
            v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        JsonType::Boolean => v.is_boolean(),
        JsonType::Object => v.is_object(),
        JsonType::Array => v.is_array(),
        JsonType::Null => v.is_null(),
    }
}

fn type_label(t: JsonType) -> &'static str {
    match t {
        JsonType::String => "string",
        JsonType::Number => "number",
        JsonType::Integer => "integer",
        JsonType::Boolean => "boolean",
        JsonType::Object => "object",
        JsonType::Array => "array",
        JsonType::Null => "null",
    }
}

fn length_holds(spec: &LengthSpec, len: u64) -> (bool, String) {
    match spec {
        LengthSpec::Exact(n) => (len == *n, n.to_string()),
        LengthSpec::Compare(c) => {
            let mut parts = Vec::new();
            let mut ok = true;
            if let Some(b) = c.gt {
                ok &= len > b;
                parts.push(format!("> {b}"));
            }
            if let Some(b) = c.gte {
                ok &= len >= b;
                parts.push(format!(">= {b}"));
            }
            if let Some(b) = c.lt {
                ok &= len < b;
                parts.push(format!("< {b}"));
            }
            if let Some(b) = c.lte {
                ok &= len <= b;
                parts.push(format!("<= {b}"));
            }
            (ok, parts.join(" and "))
        }
    }
}

/// Whether a JSONPath selects at most one node by construction (no wildcard, filter,
/// slice, union or descendant segment). Used by `length`: a singular path measures the
/// value, a multi-node path counts the matches.
pub fn is_singular_path(src: &str) -> bool {
    let mut in_quote: Option<char> = None;
    let mut depth = 0;
    let mut prev = ' ';
    for c in src.chars() {
        if let Some(q) = in_quote {
            if c == q && prev != '\\' {
                in_quote = None;
            }
        } else {
            match c {
                '\'' | '"' => in_quote = Some(c),
                '[' => depth += 1,
                ']' => depth -= 1,
                '*' | '?' => return false,
                '.' if prev == '.' => return false,
                ':' | ',' if depth > 0 => return false,
                _ => {}
            }
        }
        prev = c;
    }
    true
}

fn failure(
    expect: &Expect,
    severity: Severity,
    message: String,
    expected: Option<String>,
    actual: Option<String>,
) -> Failure {
    let snippet = expect
        .pos
        .snippet(severity, &message, "this expectation failed");
    Failure {
        kind: expect.kind.name().to_string(),
        message: first_line(&message),
        expected,
        actual,
        snippet,
        file: expect.pos.file_name().to_string(),
        line: expect.pos.line,
        column: expect.pos.col,
    }
}

/// A measured duration in milliseconds (`humantime` would print nanoseconds).
fn show_duration(d: std::time::Duration) -> String {
    format!("{:.1}ms", d.as_secs_f64() * 1000.0)
}

pub fn describe_no_response(ex: &Exchange) -> String {
    match (&ex.http, &ex.raw_body) {
        (Some(h), Some(body)) => format!(
            "HTTP {} with body: {}",
            h.status,
            crate::redact::shorten(body, 300)
        ),
        (Some(h), None) => format!("HTTP {} with no JSON-RPC response", h.status),
        (None, Some(body)) => crate::redact::shorten(body, 300),
        (None, None) => "no response".into(),
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// One-line JSON, shortened to about `max` characters (redacted before it is cut).
pub fn compact(v: &Value, max: usize) -> String {
    crate::redact::shorten(&v.to_string(), max)
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn display_pointer(p: &str) -> String {
    if p.is_empty() { "/".into() } else { p.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        use crate::dsl::model::JsonType;
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
        let tv = |y: &str| serde_saphyr::from_str::<crate::dsl::value::TValue>(y).unwrap();
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
