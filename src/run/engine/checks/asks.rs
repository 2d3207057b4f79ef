//! The server asks only for what the client declared (`asks_only_declared`): 2025-11-25
//! (client/roots, client/sampling, client/elicitation, each "Capabilities": clients that
//! support the feature MUST declare it — a server has nothing to ask of a client without
//! it) and 2026-07-28 `basic/patterns/mrtr`: "The server MUST NOT include input requests for
//! capabilities the client did not declare". The check runs each allowed tool (read-only
//! or `safe_tools`) with example arguments and looks at what the server asks back: legacy,
//! the requests it sends on the connection; modern, an `input_required` result's
//! `inputRequests`.

use indexmap::IndexMap;
use serde_json::{Value, json};

use super::calls::{CallCtx, allowed_tools};
use super::outcome::{CheckOutcome, Finding};
use crate::protocol::fields::{self, INPUT_REQUESTS};
use crate::protocol::methods;
use crate::run::argsgen;
use crate::run::client::{Connection, Exchange, TransportError};

pub async fn asks_only_declared(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<CheckOutcome, String> {
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(tools) => tools,
        Err(other) => return Ok(other),
    };
    let declared = conn.client_capabilities().clone();
    let mut findings = Vec::new();
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
            let method = asked.get("method").and_then(Value::as_str).unwrap_or("");
            let Some(capability) = methods::client_capability_for(method) else {
                continue;
            };
            if declared.get(capability).is_none() {
                findings.push(Finding::new(
                    format!(
                        "`tools/call {}`: the server asked `{method}`, but the client did not declare the `{capability}` capability",
                        tool.name
                    ),
                    format!("no `{method}`: the client declares {}", list(&declared)),
                    crate::language::assert::compact(&asked, 500),
                ));
            }
        }
    }
    Ok(if findings.is_empty() {
        CheckOutcome::Pass
    } else {
        CheckOutcome::Fail(findings)
    })
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
