//! The interactive tools behind `--interactive`: each asks the client something —
//! `ask_confirmation` (an elicitation form), `summarize` (sampling), `client_roots` (roots),
//! `sample_with_tools` (sampling with tools: the client's model may call `get_weather`, and
//! is asked again with the tool's result) — the same way in both eras: legacy, a server-to-client request sent while the call is
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

const TOOLS: [Asks; 4] = [
    Asks {
        tool: "ask_confirmation",
        capability: "elicitation",
        method: "elicitation/create",
    },
    // Called plainly it asks like `ask_confirmation`; called as a 2025-11-25 task it asks
    // from inside the task (`crate::tasks`).
    Asks {
        tool: crate::tasks::APPROVE_TOOL,
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
            "name": crate::tasks::APPROVE_TOOL,
            "description": "Ask the user to approve a job (needs the client's elicitation capability); as a task (2025-11-25, stdio) it asks from inside the task, over tasks/result.",
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
            "name": "sample_with_tools",
            "description": "Answer a weather question with the client's model, which may use the get_weather tool (needs the client's sampling.tools capability).",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
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
    name == sampling_tools::TOOL || TOOLS.iter().any(|t| t.tool == name)
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

/// The params of the form-mode confirmation `ask_confirmation` and `approve_job` ask.
pub fn confirm_params(action: &str) -> Value {
    json!({
        "mode": "form",
        "message": format!("Confirm {action}?"),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "default": true},
                "note": {"type": "string"},
            },
            "required": ["confirm"],
        },
    })
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
        "elicitation" => confirm_params(&arg("action")),
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

/// `approve_job`'s result from the client's answer to its elicitation (as a task too).
pub fn approval_outcome(answer: Result<Value, String>) -> CallToolResult {
    let asks = TOOLS
        .iter()
        .find(|t| t.tool == crate::tasks::APPROVE_TOOL)
        .expect("approve_job is an interactive tool");
    outcome(asks, answer)
}

/// Call an interactive tool.
pub async fn call(
    defects: &Defects,
    request: &CallToolRequestParams,
    modern: bool,
    context: &RequestContext<RoleServer>,
    unrelated: bool,
) -> Result<CallToolResponse, McpError> {
    let asks = TOOLS.iter().find(|t| t.tool == request.name);
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
    let Some(asks) = asks else {
        return sampling_tools::call(request, modern, context).await;
    };
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
    let answer = ask(context, asks.method, params, unrelated).await;
    if let Some(error) = refused_protocol_error(defects, &answer) {
        return Err(error);
    }
    Ok(outcome(asks, answer).into())
}

/// Legacy: ask the client `method` while the call is in flight; its answer, or why none.
async fn ask(
    context: &RequestContext<RoleServer>,
    method: &str,
    params: Value,
    unrelated: bool,
) -> Result<Value, String> {
    let custom = ServerRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    let peer = context.peer.clone();
    let ask = async move {
        match tokio::time::timeout(ASK_TIMEOUT, peer.send_request(custom)).await {
            Err(_) => Err("no answer in time".to_string()),
            Ok(Err(e)) => Err(e.to_string()),
            Ok(Ok(result)) => serde_json::to_value(result).map_err(|e| e.to_string()),
        }
    };
    if unrelated {
        // rmcp ties a request to the call through a task-local: a task of its own sends it
        // tied to nothing (the standalone stream).
        tokio::spawn(ask)
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
    } else {
        ask.await
    }
}

/// 2026-07-28: one input response, or (a refusal, sent as a JSON-RPC error object) its error.
fn input_response(answer: impl serde::Serialize) -> Result<Value, String> {
    let answer = serde_json::to_value(answer).unwrap_or(Value::Null);
    match answer.get("code").and_then(Value::as_i64) {
        Some(code) => Err(format!(
            "{code} {}",
            answer.get("message").and_then(Value::as_str).unwrap_or("")
        )),
        None => Ok(answer),
    }
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
        let answer = input_response(answer);
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

/// `sample_with_tools`: sampling with tools (2025-11-25, SEP-1577). The server offers the
/// client's model a `get_weather` tool; a `tool_use` answer (stop reason `toolUse`) is run
/// here and the model is asked again with the `tool_result`, until it answers with text.
/// Legacy: one `sampling/createMessage` per round while the call is in flight; 2026-07-28:
/// one `input_required` per round, the conversation so far carried in `requestState`.
mod sampling_tools {
    use super::*;

    pub const TOOL: &str = "sample_with_tools";
    const METHOD: &str = "sampling/createMessage";
    /// Tool rounds before the tool gives up on a model that keeps calling tools.
    const MAX_TOOL_ROUNDS: usize = 3;
    const STATE_PREFIX: &str = "sample_with_tools:";

    enum Step {
        Done(CallToolResult),
        Ask(Vec<Value>),
    }

    fn error(text: String) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(text)])
    }

    fn first_messages(request: &CallToolRequestParams) -> Vec<Value> {
        let city = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("city"))
            .and_then(Value::as_str)
            .unwrap_or("Paris");
        vec![json!({"role": "user", "content": {"type": "text",
            "text": format!("What is the current weather in {city}?")}})]
    }

    fn params(messages: &[Value]) -> Value {
        json!({
            "messages": messages,
            "systemPrompt": "Answer weather questions; use get_weather for current conditions.",
            "tools": [{
                "name": "get_weather",
                "description": "Current weather of a city",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                    "required": ["city"]},
            }],
            "toolChoice": {"mode": "auto"},
            "maxTokens": 200,
        })
    }

    /// The content blocks of a sampling answer (one block or a list).
    fn blocks(answer: &Value) -> Vec<Value> {
        match answer.get("content") {
            Some(Value::Array(items)) => items.clone(),
            Some(block) => vec![block.clone()],
            None => Vec::new(),
        }
    }

    /// What the model's answer leads to: the tool's result, or another question.
    fn step(mut messages: Vec<Value>, answer: Result<Value, String>) -> Step {
        let answer = match answer {
            Ok(a) => a,
            Err(e) => return Step::Done(error(format!("the client refused `{METHOD}`: {e}"))),
        };
        let blocks = blocks(&answer);
        let uses: Vec<&Value> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .collect();
        let model = answer.get("model").and_then(Value::as_str).unwrap_or("?");
        let tool_rounds = messages
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
            .count();
        if uses.is_empty() {
            let text: Vec<&str> = blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            let used = if tool_rounds == 0 {
                "no tool used".to_string()
            } else {
                format!("after {tool_rounds} tool round(s)")
            };
            return Step::Done(CallToolResult::success(vec![ContentBlock::text(format!(
                "answer by {model}: {} ({used})",
                text.join(" ")
            ))]));
        }
        if tool_rounds >= MAX_TOOL_ROUNDS {
            return Step::Done(error(format!(
                "the model kept calling tools after {MAX_TOOL_ROUNDS} rounds"
            )));
        }
        let mut results = Vec::new();
        for u in &uses {
            let id = u.get("id").and_then(Value::as_str).unwrap_or("");
            let name = u.get("name").and_then(Value::as_str).unwrap_or("");
            let city = u.pointer("/input/city").and_then(Value::as_str);
            let (text, is_error) = match (name, city) {
                ("get_weather", Some(city)) => (format!("Sunny, 21°C in {city}"), false),
                ("get_weather", None) => ("get_weather needs a `city`".to_string(), true),
                (other, _) => (format!("unknown tool `{other}`"), true),
            };
            results.push(json!({"type": "tool_result", "toolUseId": id,
                "content": [{"type": "text", "text": text}], "isError": is_error}));
        }
        messages.push(json!({"role": "assistant", "content": uses}));
        messages.push(json!({"role": "user", "content": results}));
        Step::Ask(messages)
    }

    pub async fn call(
        request: &CallToolRequestParams,
        modern: bool,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caps = context
            .client_capabilities()
            .and_then(|c| serde_json::to_value(c).ok())
            .unwrap_or(Value::Null);
        if caps.pointer("/sampling/tools").is_none_or(Value::is_null) {
            if modern {
                let required: ClientCapabilities =
                    serde_json::from_value(json!({"sampling": {"tools": {}}})).unwrap_or_default();
                return Err(McpError::missing_required_client_capability(required));
            }
            let text = format!("{TOOL} needs the client's sampling.tools capability");
            return Ok(error(text).into());
        }
        if modern {
            return Ok(round_trip(request));
        }
        let mut messages = first_messages(request);
        loop {
            let answer = ask(context, METHOD, params(&messages), false).await;
            match step(messages, answer) {
                Step::Done(result) => return Ok(result.into()),
                Step::Ask(next) => messages = next,
            }
        }
    }

    /// The modern round: the conversation so far from `requestState`, the model's answer
    /// from `inputResponses`; a tool use asks again.
    fn round_trip(request: &CallToolRequestParams) -> CallToolResponse {
        let state = request.request_state.as_deref();
        let answer = request.input_responses.as_ref().and_then(|r| r.get(TOOL));
        let asked = state
            .and_then(|s| s.strip_prefix(STATE_PREFIX))
            .and_then(|s| serde_json::from_str::<Vec<Value>>(s).ok());
        let next = match (asked, answer) {
            (Some(messages), Some(answer)) => step(messages, input_response(answer)),
            _ => Step::Ask(first_messages(request)),
        };
        let messages = match next {
            Step::Done(result) => return result.into(),
            Step::Ask(messages) => messages,
        };
        let state = format!(
            "{STATE_PREFIX}{}",
            serde_json::to_string(&messages).unwrap_or_default()
        );
        let requests: InputRequests =
            serde_json::from_value(json!({TOOL: {"method": METHOD, "params": params(&messages)}}))
                .expect("valid input requests");
        InputRequiredResult::new(Some(requests), Some(state)).into()
    }
}
