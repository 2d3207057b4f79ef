//! The server asks only for what the client declared (`asks_only_declared`): 2025-11-25
//! (client/roots, client/sampling, client/elicitation, each "Capabilities": clients that
//! support the feature MUST declare it — a server has nothing to ask of a client without
//! it) and 2026-07-28 `basic/patterns/mrtr`: "The server MUST NOT include input requests for
//! capabilities the client did not declare". The check runs each allowed tool (read-only
//! or `safe_tools`) with example arguments and looks at what the server asks back: legacy,
//! the requests it sends on the connection; modern, an `input_required` result's
//! `inputRequests`. The same sweep judges the elicitation schemas asked
//! (`elicitation_schema_restricted`).

use std::time::Instant;

use indexmap::IndexMap;
use serde_json::{Value, json};

use super::calls::{CallCtx, allowed_tools};
use super::outcome::{CheckOutcome, Finding};
use crate::protocol::fields::{self, INPUT_REQUESTS};
use crate::protocol::{elicitation, methods};
use crate::run::argsgen;
use crate::run::client::{Connection, Exchange, TransportError};
use crate::run::engine::mrtr;

pub async fn asks_only_declared(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<CheckOutcome, String> {
    let declared = conn.client_capabilities().clone();
    let mut findings = Vec::new();
    let swept = sweep(conn, ctx, false, |called| {
        for asked in &called.asked {
            let method = asked.get("method").and_then(Value::as_str).unwrap_or("");
            let Some(capability) = methods::client_capability_for(method) else {
                continue;
            };
            if declared.get(capability).is_none() {
                findings.push(Finding::new(
                    format!(
                        "`tools/call {}`: the server asked `{method}`, but the client did not declare the `{capability}` capability",
                        called.tool
                    ),
                    format!("no `{method}`: the client declares {}", list(&declared)),
                    crate::language::assert::compact(asked, 500),
                ));
            }
        }
    })
    .await?;
    Ok(verdict(swept, findings))
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
    let swept = sweep(conn, ctx, false, |called| {
        for asked in &called.asked {
            let params = asked.get("params");
            let form = params
                .and_then(|p| p.get("mode"))
                .and_then(Value::as_str)
                .is_none_or(|mode| mode == "form");
            if !is_elicitation(asked) || !form {
                continue;
            }
            let schema = params
                .and_then(|p| p.get("requestedSchema"))
                .unwrap_or(&Value::Null);
            if let Some(why) = elicitation::restricted_schema_problem(schema) {
                findings.push(Finding::new(
                    format!(
                        "`tools/call {}`: the elicitation's requestedSchema is not within the restricted form: {why}",
                        called.tool
                    ),
                    "a flat object of primitive properties (string, number, integer, boolean, or SEP-1330's enum forms)".to_string(),
                    crate::language::assert::compact(schema, 500),
                ));
            }
        }
    })
    .await?;
    Ok(verdict(swept, findings))
}

/// A tool that asked an elicitation the client declined answers with a result — its
/// `isError` if it cannot go on — not a protocol error (`declined_elicitation_answered`;
/// schema `CallToolResult.isError`: errors that originate from the tool SHOULD be reported
/// inside the result, not as a protocol-level error). 2026-07-28 calls are carried through
/// their `input_required` rounds. The scenario's `client:` declines every elicitation.
pub async fn declined_elicitation_answered(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<CheckOutcome, String> {
    let mut findings = Vec::new();
    let swept = sweep(conn, ctx, true, |called| {
        let declined = called.asked.iter().any(is_elicitation);
        if let Some(error) = called.response.and_then(|r| r.get("error")).filter(|_| declined) {
            findings.push(Finding::new(
                format!(
                    "`tools/call {}`: after the elicitation it asked was declined, the server answered a protocol error",
                    called.tool
                ),
                "a result (with `isError: true` if the tool cannot go on)".to_string(),
                crate::language::assert::compact(error, 500),
            ));
        }
    })
    .await?;
    Ok(verdict(swept, findings))
}

fn is_elicitation(asked: &Value) -> bool {
    asked.get("method").and_then(Value::as_str) == Some(methods::ELICITATION_CREATE)
}

/// One allowed tool's call in a sweep: what the server asked, and its final response.
struct Called<'a> {
    tool: &'a str,
    asked: Vec<Value>,
    response: Option<&'a Value>,
}

/// Run each allowed tool once with example arguments and hand `judge` each call (`carry`:
/// a 2026-07-28 `input_required` is carried to its final result from the scenario's
/// answers). `Ok(Some(outcome))`: no tool to run (the outcome says why).
async fn sweep(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
    carry: bool,
    mut judge: impl FnMut(&Called<'_>),
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
        let started = Instant::now();
        let out = conn.build(
            methods::TOOLS_CALL,
            Some(params.clone()),
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
        let mut asked = asked_of(&ex);
        let mut ex = ex;
        if carry && mrtr::applies(conn, methods::TOOLS_CALL, &ex) {
            let no_extras = IndexMap::new();
            let first = mrtr::FirstRequest {
                method: methods::TOOLS_CALL,
                params: Some(&params),
                meta: &no_extras,
                headers: &IndexMap::new(),
                timeout: ctx.timeout,
                started,
            };
            match mrtr::carry(conn, &first, ex).await {
                Ok(done) => {
                    asked = done.input_requests.clone();
                    ex = done;
                }
                Err(e) => {
                    conn.note(format!("`tools/call {}`: {e}", tool.name));
                    continue;
                }
            }
        }
        judge(&Called {
            tool: &tool.name,
            asked,
            response: ex.response.as_ref(),
        });
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

/// The sweep's own outcome (a skip: nothing could be judged), else the findings'.
fn verdict(swept: Option<CheckOutcome>, findings: Vec<Finding>) -> CheckOutcome {
    swept.unwrap_or(if findings.is_empty() {
        CheckOutcome::Pass
    } else {
        CheckOutcome::Fail(findings)
    })
}
