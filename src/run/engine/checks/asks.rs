//! The server asks only for what the client declared (`asks_only_declared`): 2025-11-25
//! (client/roots, client/sampling, client/elicitation, each "Capabilities": clients that
//! support the feature MUST declare it — a server has nothing to ask of a client without
//! it) and 2026-07-28 `basic/patterns/mrtr`: "The server MUST NOT include input requests for
//! capabilities the client did not declare". The check runs each allowed tool (read-only
//! or `safe_tools`) with example arguments and looks at what the server asks back: legacy,
//! the requests it sends on the connection; modern, an `input_required` result's
//! `inputRequests`. The same sweep judges the elicitation schemas asked
//! (`elicitation_schema_restricted`).

use indexmap::IndexMap;
use serde_json::{Value, json};

use super::calls::{CallCtx, allowed_tools};
use super::outcome::{CheckOutcome, Finding};
use crate::protocol::fields::{self, INPUT_REQUESTS};
use crate::protocol::{elicitation, methods};
use crate::run::argsgen;
use crate::run::client::{Connection, Exchange, TransportError};

pub async fn asks_only_declared(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<CheckOutcome, String> {
    let declared = conn.client_capabilities().clone();
    let mut findings = Vec::new();
    let swept = sweep(conn, ctx, |tool, asked| {
        let method = asked.get("method").and_then(Value::as_str).unwrap_or("");
        let Some(capability) = methods::client_capability_for(method) else {
            return;
        };
        if declared.get(capability).is_none() {
            findings.push(Finding::new(
                format!(
                    "`tools/call {tool}`: the server asked `{method}`, but the client did not declare the `{capability}` capability"
                ),
                format!("no `{method}`: the client declares {}", list(&declared)),
                crate::language::assert::compact(asked, 500),
            ));
        }
    })
    .await?;
    Ok(swept.unwrap_or(if findings.is_empty() {
        CheckOutcome::Pass
    } else {
        CheckOutcome::Fail(findings)
    }))
}

/// Every form-mode elicitation the server asks while the allowed tools run requests a schema
/// within the restricted form (`elicitation_schema_restricted`; 2025-06-18 onwards,
/// `ElicitRequestFormParams.requestedSchema`): flat, of primitive properties and SEP-1330's
/// enum forms. The scenario's `client:` declares elicitation and answers it.
pub async fn elicitation_schema_restricted(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<CheckOutcome, String> {
    let mut findings = Vec::new();
    let swept = sweep(conn, ctx, |tool, asked| {
        let params = asked.get("params");
        let form = params
            .and_then(|p| p.get("mode"))
            .and_then(Value::as_str)
            .is_none_or(|mode| mode == "form");
        if asked.get("method").and_then(Value::as_str) != Some(methods::ELICITATION_CREATE) || !form {
            return;
        }
        let schema = params.and_then(|p| p.get("requestedSchema")).unwrap_or(&Value::Null);
        if let Some(why) = elicitation::restricted_schema_problem(schema) {
            findings.push(Finding::new(
                format!("`tools/call {tool}`: the elicitation's requestedSchema is not within the restricted form: {why}"),
                "a flat object of primitive properties (string, number, integer, boolean, or SEP-1330's enum forms)".to_string(),
                crate::language::assert::compact(schema, 500),
            ));
        }
    })
    .await?;
    Ok(swept.unwrap_or(if findings.is_empty() {
        CheckOutcome::Pass
    } else {
        CheckOutcome::Fail(findings)
    }))
}

/// Run each allowed tool once with example arguments and hand `judge` every request the
/// server asked meanwhile (with the tool's name). `Ok(Some(outcome))`: no tool to run (the
/// outcome says why).
async fn sweep(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
    mut judge: impl FnMut(&str, &Value),
) -> Result<Option<CheckOutcome>, String> {
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(tools) => tools,
        Err(other) => return Ok(Some(other)),
    };
    let mut called = 0;
    for tool in tools {
        let Some(arguments) = argsgen::example(&tool.input_schema()) else {
            continue;
        };
        let id = conn.next_id();
        let params = json!({"name": tool.name, "arguments": arguments});
        let out = conn.build(
            methods::TOOLS_CALL,
            Some(params),
            Some(id),
            &IndexMap::new(),
            &IndexMap::new(),
            ctx.timeout,
        );
        let ex = match conn.send(&out).await {
            Ok(ex) => ex,
            Err(TransportError::Timeout(_)) if !conn.is_broken() => {
                conn.note(format!(
                    "`{}` did not answer in time; the check goes on",
                    tool.name
                ));
                continue;
            }
            Err(e) if called == 0 => return Err(format!("`tools/call {}` failed: {e}", tool.name)),
            Err(e) => {
                conn.note(format!("`tools/call {}` failed: {e}", tool.name));
                break;
            }
        };
        called += 1;
        for asked in asked_of(&ex) {
            judge(&tool.name, &asked);
        }
    }
    Ok(None)
}

/// What the server asked during one exchange: requests on the connection (legacy), the
/// input requests of an `input_required` result (modern).
fn asked_of(ex: &Exchange) -> Vec<Value> {
    let mut asked: Vec<Value> = ex
        .other_messages
        .iter()
        .filter(|m| crate::run::client::is_server_request(m))
        .cloned()
        .collect();
    if let Some(result) = ex.response.as_ref().and_then(|r| r.get("result"))
        && fields::is_input_required(result)
        && let Some(requests) = result.get(INPUT_REQUESTS).and_then(Value::as_object)
    {
        asked.extend(requests.values().cloned());
    }
    asked
}

/// The capabilities declared, for messages.
fn list(declared: &Value) -> String {
    match declared.as_object().filter(|m| !m.is_empty()) {
        None => "none".into(),
        Some(m) => m
            .keys()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}
