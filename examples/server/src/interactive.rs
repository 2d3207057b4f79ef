//! The interactive tools behind `--interactive`: each asks the client something —
//! `ask_confirmation` (an elicitation form), `summarize` (sampling), `client_roots` (roots)
//! — the same way in both eras: legacy, a server-to-client request sent while the call is
//! in flight; modern (2026-07-28), an `input_required` result, answered by the retry's
//! `inputResponses` with the `requestState` echoed.
//!
//! Off by default: three more tools change the contract the snapshot tests pin.

#![allow(
    deprecated,
    reason = "sampling and roots are deprecated (SEP-2577) but still served"
)]

use std::time::Duration;

use rmcp::{
    ErrorData as McpError, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
        CustomRequest, InputRequests, InputRequiredResult, ServerRequest, Tool,
    },
    service::RequestContext,
};
use serde_json::{Value, json};

use crate::defects::{Defect, Defects};

/// How long a legacy server-to-client request may wait for the client's answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(10);

/// `asks-forever`: the pause before each `input_required`.
const ASKS_FOREVER_PAUSE: Duration = Duration::from_millis(50);

/// One interactive tool: what it asks, and how.
struct Asks {
    tool: &'static str,
    /// The client capability it needs.
    capability: &'static str,
    method: &'static str,
}

const TOOLS: [Asks; 3] = [
    Asks {
        tool: "ask_confirmation",
        capability: "elicitation",
        method: "elicitation/create",
    },
    Asks {
        tool: "summarize",
        capability: "sampling",
        method: "sampling/createMessage",
    },
    Asks {
        tool: "client_roots",
        capability: "roots",
        method: "roots/list",
    },
];

/// The tools `--interactive` lists: read-only (they only ask), so the conformance checks
/// that call tools call them.
pub fn tools() -> Vec<Tool> {
    let defs = [
        json!({
            "name": "ask_confirmation",
            "description": "Ask the user to confirm an action (needs the client's elicitation capability).",
            "inputSchema": {"type": "object", "properties": {"action": {"type": "string"}}},
            "annotations": {"readOnlyHint": true},
        }),
        json!({
            "name": "summarize",
            "description": "Summarise a text with the client's model (needs the client's sampling capability).",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "annotations": {"readOnlyHint": true},
        }),
        json!({
            "name": "client_roots",
            "description": "List the client's roots (needs the client's roots capability).",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"readOnlyHint": true},
        }),
    ];
    defs.into_iter()
        .map(|d| serde_json::from_value(d).expect("a valid tool"))
        .collect()
}

/// Whether `name` is one of the interactive tools.
pub fn is_interactive(name: &str) -> bool {
    TOOLS.iter().any(|t| t.tool == name)
}

fn declared(caps: Option<&ClientCapabilities>, capability: &str) -> bool {
    let Some(caps) = caps.and_then(|c| serde_json::to_value(c).ok()) else {
        return false;
    };
    caps.get(capability).is_some_and(|v| !v.is_null())
}

/// The params of what `tool` asks, from its arguments (`asks-huge-schema`: an elicitation
/// schema of about 1 MB).
fn request_params(defects: &Defects, asks: &Asks, request: &CallToolRequestParams) -> Value {
    let mut params = plain_params(asks, request);
    if defects.has(&Defect::AsksHugeSchema)
        && let Some(schema) = params.get_mut("requestedSchema")
    {
        schema["description"] = json!("x".repeat(1 << 20));
    }
    params
}

/// `asks-nested-schema`: an elicitation schema gets a nested object property, outside the
/// restricted form. Legacy adds it here; 2026-07-28 in the response rewrite
/// (`defects::messages`), as rmcp's typed `inputRequests` cannot hold it.
pub fn nest_schema(params: &mut Value) {
    if let Some(properties) = params.pointer_mut("/requestedSchema/properties") {
        properties["reviewer"] = json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
        });
    }
}

fn plain_params(asks: &Asks, request: &CallToolRequestParams) -> Value {
    let arg = |key: &str| {
        request
            .arguments
            .as_ref()
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    match asks.capability {
        "elicitation" => json!({
            "mode": "form",
            "message": format!("Confirm {}?", arg("action")),
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "confirm": {"type": "boolean", "default": true},
                    "note": {"type": "string"},
                },
                "required": ["confirm"],
            },
        }),
        "sampling" => json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": format!("Summarise: {}", arg("text"))}}],
            "maxTokens": 100,
        }),
        _ => json!({}),
    }
}

/// The tool's result from the client's answer (`Ok`) or its error (`Err`).
fn outcome(asks: &Asks, answer: Result<Value, String>) -> CallToolResult {
    let answer = match answer {
        Ok(a) => a,
        Err(e) => {
            let text = format!("the client refused `{}`: {e}", asks.method);
            return CallToolResult::error(vec![ContentBlock::text(text)]);
        }
    };
    let text = match asks.capability {
        "elicitation" => {
            let action = answer.get("action").and_then(Value::as_str).unwrap_or("?");
            match answer.get("content") {
                Some(content) => format!("{action}: {content}"),
                None => action.to_string(),
            }
        }
        "sampling" => {
            let text = answer
                .pointer("/content/text")
                .and_then(Value::as_str)
                .unwrap_or("");
            let model = answer.get("model").and_then(Value::as_str).unwrap_or("?");
            format!("summary by {model}: {text}")
        }
        _ => {
            let uris: Vec<&str> = answer
                .get("roots")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.get("uri").and_then(Value::as_str))
                .collect();
            format!("roots: {}", uris.join(", "))
        }
    };
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// Call an interactive tool.
pub async fn call(
    defects: &Defects,
    request: &CallToolRequestParams,
    modern: bool,
    context: &RequestContext<RoleServer>,
    unrelated: bool,
) -> Result<CallToolResponse, McpError> {
    let asks = TOOLS
        .iter()
        .find(|t| t.tool == request.name)
        .expect("an interactive tool");
    // Bad arguments are the tool's error, whatever the client declares.
    if let Some((key, _)) = request
        .arguments
        .iter()
        .flatten()
        .find(|(_, v)| !v.is_string())
    {
        let text = format!("`{key}` must be a string");
        return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
    }
    let caps = context.client_capabilities();
    if !declared(caps.as_ref(), asks.capability) && !defects.has(&Defect::AsksUndeclared) {
        if modern {
            let required: ClientCapabilities =
                serde_json::from_value(json!({ asks.capability: {} })).unwrap_or_default();
            return Err(McpError::missing_required_client_capability(required));
        }
        let text = format!(
            "{} needs the client's {} capability",
            asks.tool, asks.capability
        );
        return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
    }
    if modern {
        if defects.has(&Defect::AsksForever) {
            // Slowly, too: a step's timeout must bound all its rounds.
            tokio::time::sleep(ASKS_FOREVER_PAUSE).await;
        }
        return round_trip(defects, asks, request);
    }
    let mut params = request_params(defects, asks, request);
    if defects.has(&Defect::AsksNestedSchema) {
        nest_schema(&mut params);
    }
    let custom = ServerRequest::CustomRequest(CustomRequest::new(asks.method, Some(params)));
    let peer = context.peer.clone();
    let ask = async move {
        match tokio::time::timeout(ASK_TIMEOUT, peer.send_request(custom)).await {
            Err(_) => Err("no answer in time".to_string()),
            Ok(Err(e)) => Err(e.to_string()),
            Ok(Ok(result)) => serde_json::to_value(result).map_err(|e| e.to_string()),
        }
    };
    let answer = if unrelated {
        // rmcp ties a request to the call through a task-local: a task of its own sends it
        // tied to nothing (the standalone stream).
        tokio::spawn(ask)
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
    } else {
        ask.await
    };
    if let Some(error) = refused_protocol_error(defects, &answer) {
        return Err(error);
    }
    Ok(outcome(asks, answer).into())
}

/// `declined-is-error`: a declined or cancelled elicitation becomes a protocol error.
fn refused_protocol_error(defects: &Defects, answer: &Result<Value, String>) -> Option<McpError> {
    let action = answer.as_ref().ok()?.get("action")?.as_str()?;
    (defects.has(&Defect::DeclinedIsError) && matches!(action, "decline" | "cancel"))
        .then(|| McpError::internal_error(format!("the user chose {action}"), None))
}

/// The modern round: the answer under the tool's key with the exact state, else ask.
fn round_trip(
    defects: &Defects,
    asks: &Asks,
    request: &CallToolRequestParams,
) -> Result<CallToolResponse, McpError> {
    let state = format!("{}-v1", asks.tool);
    if defects.has(&Defect::ExtraResponseBreaks)
        && let Some(extra) = request
            .input_responses
            .iter()
            .flat_map(|r| r.keys())
            .find(|k| k.as_str() != asks.tool)
    {
        return Err(McpError::invalid_params(
            format!("unexpected input response `{extra}`"),
            None,
        ));
    }
    // `trusts-request-state`: any state will do, as long as one came.
    let state_ok = match request.request_state.as_deref() {
        Some(_) if defects.has(&Defect::TrustsRequestState) => true,
        got => got == Some(state.as_str()),
    };
    let answer = request
        .input_responses
        .as_ref()
        .and_then(|r| r.get(asks.tool))
        .filter(|_| state_ok);
    if let Some(answer) = answer.filter(|_| !defects.has(&Defect::AsksForever)) {
        let answer = serde_json::to_value(answer).unwrap_or(Value::Null);
        // An error answer (a refusal) arrives as a JSON-RPC error object.
        let answer = match answer.get("code").and_then(Value::as_i64) {
            Some(code) => Err(format!(
                "{code} {}",
                answer.get("message").and_then(Value::as_str).unwrap_or("")
            )),
            None => Ok(answer),
        };
        if let Some(error) = refused_protocol_error(defects, &answer) {
            return Err(error);
        }
        return Ok(outcome(asks, answer).into());
    }
    let requests: InputRequests = serde_json::from_value(json!({
        asks.tool: {"method": asks.method, "params": request_params(defects, asks, request)},
    }))
    .expect("valid input requests");
    Ok(InputRequiredResult::new(Some(requests), Some(state)).into())
}
