//! Tool calls (`tool_input_errors_are_results`, `tool_output_schema`, `tool_output_text`,
//! `tool_input_fuzz`): how allowed tools answer valid, invalid and boundary arguments.

use serde_json::Value;

use super::calls::{CallCtx, Called, Tool, allowed_tools, call_variant, no_variants};
use super::outcome::{CheckOutcome, conclude};
use crate::protocol::errors;
use crate::protocol::fields::is_error;
use crate::results::outcome::Finding;
use crate::run::argsgen;
use crate::run::client::Connection;

/// SEP-1303: arguments the inputSchema rejects get a tool result with `isError: true`
/// (the model can read it and correct the call), not a -32602 protocol error, and
/// certainly not a success.
pub async fn input_errors_are_results(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<CheckOutcome, String> {
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(t) => t,
        Err(skip) => return Ok(skip),
    };
    let (mut findings, mut judged, mut untestable) = (Vec::new(), 0, Vec::new());
    for tool in &tools {
        let schema = tool.input_schema();
        let variants: Vec<_> = argsgen::invalid_variants(&schema)
            .into_iter()
            .filter(|v| v.must_reject)
            .collect();
        if variants.is_empty() {
            untestable.push(no_variants(&tool.name, &schema));
            continue;
        }
        let mut found = Vec::new();
        let mut slow = None;
        for v in variants {
            let called = match call_variant(conn, ctx, tool, &v.arguments).await {
                Ok(called) => called,
                Err(why) => {
                    slow = Some(why);
                    break;
                }
            };
            let message = match &called {
                Called::Result(r) if is_error(r) => continue,
                Called::Error {
                    code: errors::INVALID_PARAMS,
                    ..
                } => format!(
                    "tool \"{}\", {}: a -32602 protocol error instead of a tool result with isError: true",
                    tool.name, v.label
                ),
                Called::Result(_) => format!(
                    "tool \"{}\", {}: succeeded with arguments its inputSchema rejects",
                    tool.name, v.label
                ),
                _ => format!("tool \"{}\", {}: {}", tool.name, v.label, called.describe()),
            };
            found.push(Finding::new(
                message,
                "a CallToolResult with isError: true (input validation errors are tool execution errors, SEP-1303)",
                called.describe(),
            ));
            if called.is_fatal() || conn.is_broken() {
                findings.append(&mut found);
                return Ok(CheckOutcome::Fail(findings));
            }
        }
        match slow {
            Some(why) => untestable.push(why),
            None => {
                judged += 1;
                findings.append(&mut found);
            }
        }
    }
    Ok(conclude(conn, findings, judged, untestable))
}

/// `structuredContent` of a successful call conforms to the declared `outputSchema`
/// (MUST), and (`text`) is mirrored as serialized JSON in a text block (SHOULD).
pub async fn output(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
    text: bool,
) -> Result<CheckOutcome, String> {
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(t) => t,
        Err(skip) => return Ok(skip),
    };
    let with_schema: Vec<&Tool> = tools
        .iter()
        .filter(|t| crate::protocol::fields::output_schema(&t.def).is_some_and(Value::is_object))
        .collect();
    if with_schema.is_empty() {
        return Ok(CheckOutcome::Skip(
            "no allowed tool declares an outputSchema".into(),
        ));
    }
    let (mut findings, mut judged, mut untestable) = (Vec::new(), 0, Vec::new());
    for tool in with_schema {
        let (args, called) = match ctx.example_call(conn, tool).await {
            Ok(answer) => answer,
            Err(why) => {
                untestable.push(why);
                continue;
            }
        };
        let Called::Result(result) = &called else {
            untestable.push(format!(
                "tool \"{}\" with example arguments {args}: {}",
                tool.name,
                called.describe()
            ));
            if called.is_fatal() {
                break;
            }
            continue;
        };
        if is_error(result) {
            untestable.push(format!(
                "tool \"{}\" with example arguments {args}: {}",
                tool.name,
                called.describe()
            ));
            continue;
        }
        judged += 1;
        let schema = &tool.def[crate::protocol::fields::OUTPUT_SCHEMA];
        let structured = crate::protocol::fields::structured_content(result);
        let problem = match (text, structured) {
            (false, None) => Some((
                "declares an outputSchema but the result has no structuredContent".to_string(),
                "structuredContent conforming to the outputSchema".to_string(),
                "no structuredContent".to_string(),
            )),
            (false, Some(value)) => schema_errors(schema, value).map(|errors| {
                (
                    "structuredContent does not conform to the outputSchema".to_string(),
                    format!(
                        "conforms to {}",
                        crate::language::assert::compact(schema, 300)
                    ),
                    format!(
                        "{} — {}",
                        crate::language::assert::compact(value, 300),
                        errors.join("; ")
                    ),
                )
            }),
            (true, None) => None,
            (true, Some(value)) => (!mirrored(result, value)).then(|| {
                (
                    "no text content block carries the serialized structuredContent".to_string(),
                    "a text block whose JSON equals structuredContent (backwards compatibility)"
                        .to_string(),
                    crate::language::assert::compact(
                        result.get("content").unwrap_or(&Value::Null),
                        300,
                    ),
                )
            }),
        };
        if let Some((message, expected, actual)) = problem {
            findings.push(Finding::new(
                format!("tool \"{}\" with arguments {args}: {message}", tool.name),
                expected,
                actual,
            ));
        }
    }
    Ok(conclude(conn, findings, judged, untestable))
}

/// Validation errors of `value` against `schema` (instance path: message); `None` when
/// it conforms. An invalid schema is another check's business (`output_schema_valid`).
fn schema_errors(schema: &Value, value: &Value) -> Option<Vec<String>> {
    let validator = crate::ground::bounds::validator(schema).ok()?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .take(5)
        .map(|e| {
            let path = e.instance_path().to_string();
            let at = if path.is_empty() { "/".into() } else { path };
            format!("at {at}: {e}")
        })
        .collect();
    (!errors.is_empty()).then_some(errors)
}

fn mirrored(result: &Value, structured: &Value) -> bool {
    crate::protocol::fields::text_blocks(result)
        .any(|t| serde_json::from_str::<Value>(t).is_ok_and(|v| &v == structured))
}

/// Boundary and type-confused arguments: each must get an `isError` result or a -32602
/// error (`must_reject` variants), and none may crash or hang the server.
pub async fn fuzz(conn: &mut Connection, ctx: &CallCtx<'_>) -> Result<CheckOutcome, String> {
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(t) => t,
        Err(skip) => return Ok(skip),
    };
    let (mut findings, mut judged, mut untestable) = (Vec::new(), 0, Vec::new());
    for tool in &tools {
        let schema = tool.input_schema();
        let variants = argsgen::invalid_variants(&schema);
        if variants.is_empty() {
            untestable.push(no_variants(&tool.name, &schema));
            continue;
        }
        let mut found = Vec::new();
        let mut slow = None;
        for v in variants {
            let called = match call_variant(conn, ctx, tool, &v.arguments).await {
                Ok(called) => called,
                Err(why) => {
                    slow = Some(why);
                    break;
                }
            };
            let ok = match &called {
                Called::Result(r) => !v.must_reject || is_error(r),
                Called::Error { code, .. } => !v.must_reject || *code == errors::INVALID_PARAMS,
                // An HTTP refusal (e.g. 413 for a body over the server's limit) is an
                // answer: fine for a value the schema allows, a finding otherwise.
                Called::Http(status, _) => !v.must_reject && *status < 500,
                Called::Crashed(_) | Called::TimedOut(_) | Called::Broken(_) => false,
            };
            if ok {
                continue;
            }
            let (what, expected) = if v.must_reject {
                (
                    if called.is_success() {
                        "succeeded, ignoring its inputSchema".to_string()
                    } else {
                        called.describe()
                    },
                    "a tool result with isError: true or a -32602 error",
                )
            } else {
                (
                    called.describe(),
                    "any answer (the schema allows this value): no crash, no hang",
                )
            };
            found.push(Finding::new(
                format!("tool \"{}\", {}: {what}", tool.name, v.label),
                expected,
                called.describe(),
            ));
            if called.is_fatal() || conn.is_broken() {
                findings.append(&mut found);
                // A hang (no answer, then none to a ping) is not a crash: say which.
                let why = match &called {
                    Called::TimedOut(d) => format!(
                        "the server hung on tool \"{}\", {} (no answer within {}, then none to a ping)",
                        tool.name,
                        v.label,
                        humantime::format_duration(*d)
                    ),
                    _ => format!(
                        "the server is gone after tool \"{}\", {}",
                        tool.name, v.label
                    ),
                };
                findings.push(Finding {
                    message: format!("the remaining variants were not sent: {why}"),
                    expected: None,
                    actual: None,
                });
                return Ok(CheckOutcome::Fail(findings));
            }
        }
        match slow {
            Some(why) => untestable.push(why),
            None => {
                judged += 1;
                findings.append(&mut found);
            }
        }
    }
    Ok(conclude(conn, findings, judged, untestable))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mirrored_text_is_found() {
        let result = json!({"content": [{"type": "text", "text": "{\"sum\": 3}"}]});
        assert!(mirrored(&result, &json!({"sum": 3})));
        assert!(!mirrored(&result, &json!({"sum": 4})));
    }

    #[test]
    fn schema_errors_name_the_path() {
        let schema = json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]});
        assert!(schema_errors(&schema, &json!({"sum": 1})).is_none());
        let errors = schema_errors(&schema, &json!({"sum": "x"})).unwrap();
        assert!(errors[0].starts_with("at /sum:"), "{errors:?}");
    }
}
