//! The protocol utilities behind `--utilities`: logging, completions, resource
//! subscriptions (legacy), `listChanged` on the three lists, and a `confirm` tool that needs the
//! client's elicitation capability (modern: -32021 without it, an `input_required`
//! round trip with it). Progress is not gated: any `tools/list` or `slow` call that
//! carries a `progressToken` gets two `notifications/progress`.
//!
//! Off by default: declaring these capabilities changes the contract that the snapshot
//! tests pin (and `logging` is deprecated in 2026-07-28).

#![allow(
    deprecated,
    reason = "logging is deprecated (SEP-2577) but still served"
)]

use rmcp::{
    ErrorData as McpError, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities,
        CompleteRequestParams, CompleteResult, ContentBlock, ErrorCode, InputRequests,
        InputRequiredResult, LoggingLevel, LoggingMessageNotificationParam,
        ProgressNotificationParam, ServerCapabilities, Tool,
    },
    service::RequestContext,
};
use serde_json::{Value, json};

use crate::defects::{Defect, Defects};

/// A logging level (rmcp marks the type deprecated, as logging is).
pub type LogLevel = LoggingLevel;

/// Name of the tool that needs elicitation.
pub const CONFIRM_TOOL: &str = "confirm";
/// Key of its one input request (`inputRequests` / `inputResponses`).
const CONFIRM_KEY: &str = "confirm";
/// The `requestState` it hands out and expects back.
const CONFIRM_STATE: &str = "confirm-v1";

/// The capabilities `--utilities` adds.
pub fn capabilities(mut caps: ServerCapabilities) -> ServerCapabilities {
    caps.logging = Some(Default::default());
    caps.completions = Some(Default::default());
    let mut resources = caps.resources.take().unwrap_or_default();
    resources.subscribe = Some(true);
    resources.list_changed = Some(true);
    caps.resources = Some(resources);
    let mut tools = caps.tools.take().unwrap_or_default();
    tools.list_changed = Some(true);
    caps.tools = Some(tools);
    if let Some(prompts) = caps.prompts.as_mut() {
        prompts.list_changed = Some(true);
    }
    caps
}

/// The `confirm` tool's definition (listed with `--utilities`).
pub fn confirm_tool() -> Tool {
    serde_json::from_value(json!({
        "name": CONFIRM_TOOL,
        "title": "Confirm",
        "description": "Ask the user to confirm an action (needs the client's elicitation capability).",
        "inputSchema": {
            "type": "object",
            "properties": {"action": {"type": "string", "description": "What to confirm"}},
        },
        "annotations": {"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false},
    }))
    .expect("a valid tool")
}

fn level_rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Progress of a request that asked for it: two steps of two.
pub async fn report_progress(defects: &Defects, context: &RequestContext<RoleServer>) {
    let Some(token) = context.meta.get_progress_token() else {
        return;
    };
    let mut token = serde_json::to_value(&token).unwrap_or(Value::Null);
    if defects.has(&Defect::ProgressWrongToken) {
        token = json!(format!("not-{token}"));
    }
    let steps: [u32; 2] = if defects.has(&Defect::ProgressDecreasing) {
        [2, 1]
    } else {
        [1, 2]
    };
    for step in steps {
        let param: ProgressNotificationParam = serde_json::from_value(json!({
            "progressToken": token, "progress": step, "total": 2,
        }))
        .expect("a valid progress notification");
        let _ = context.peer.notify_progress(param).await;
    }
}

/// Log a line at each level of `LOG_LEVELS` that the request's level lets through: the
/// modern `_meta` logLevel, or (legacy) the level of `logging/setLevel`. Without a level,
/// nothing (2026-07-28: MUST NOT) — unless a defect says otherwise.
pub async fn log(
    defects: &Defects,
    session_level: Option<LoggingLevel>,
    modern: bool,
    context: &RequestContext<RoleServer>,
    what: &str,
) {
    let level = if modern {
        context.meta.log_level()
    } else {
        session_level
    };
    let level = match level {
        Some(level) => Some(level),
        None if modern && defects.has(&Defect::LogWithoutLevel) => Some(LoggingLevel::Debug),
        None => return,
    };
    let ignore = defects.has(&Defect::LogLevelIgnored);
    for candidate in [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Warning,
        LoggingLevel::Error,
    ] {
        if !ignore && level.is_some_and(|l| level_rank(candidate) < level_rank(l)) {
            continue;
        }
        let param = LoggingMessageNotificationParam::new(candidate, json!(format!("{what}")))
            .with_logger("example");
        let _ = context.peer.notify_logging_message(param).await;
    }
}

/// `undeclared-logging`: one info line whatever was asked, from a server that declares
/// no `logging` capability.
pub async fn log_undeclared(context: &RequestContext<RoleServer>, what: &str) {
    let param = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(what))
        .with_logger("example");
    let _ = context.peer.notify_logging_message(param).await;
}

/// `notify-undeclared`: a tools list change and an update of `uri`, for a server that
/// declares neither `tools.listChanged` nor `resources.subscribe`.
pub async fn notify_undeclared(context: &RequestContext<RoleServer>, uri: &str) {
    let _ = context.peer.notify_tool_list_changed().await;
    let _ = context
        .peer
        .notify_resource_updated(rmcp::model::ResourceUpdatedNotificationParam::new(uri))
        .await;
}

/// `completion/complete`: values of the prompt arguments that have them.
pub fn complete(
    defects: &Defects,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, McpError> {
    let mut values: Vec<String> = match request.argument.name.as_str() {
        "style" => ["casual", "formal", "friendly", "funny", "poetic"]
            .iter()
            .map(|s| s.to_string())
            .filter(|v| v.starts_with(&request.argument.value))
            .collect(),
        _ => Vec::new(),
    };
    if defects.has(&Defect::CompletionOverLimit) {
        values = (0..150).map(|i| format!("value-{i}")).collect();
    }
    let total = values.len();
    serde_json::from_value(json!({
        "resultType": "complete",
        "completion": {"values": values, "total": total, "hasMore": false},
    }))
    .map_err(|e| McpError::internal_error(e.to_string(), None))
}

/// The `confirm` tool. Modern: -32021 unless the request declares elicitation; then an
/// `input_required` result asking for a form, and the result once the retry carries the
/// answer and the `requestState`. Legacy: the server would have to send an
/// `elicitation/create` request, which mcpspec refuses; it answers a tool error instead.
pub fn confirm(
    defects: &Defects,
    request: &CallToolRequestParams,
    modern: bool,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    if !modern {
        return Ok(CallToolResult::error(vec![ContentBlock::text(
            "confirm needs elicitation, which this session cannot do",
        )])
        .into());
    }
    let declared = context
        .client_capabilities()
        .is_some_and(|c| c.elicitation.is_some());
    if !declared {
        if defects.has(&Defect::MissingCapabilityOldCode) {
            // The draft number before the renumbering (-32003 → -32021).
            return Err(McpError::new(
                ErrorCode(-32003),
                "Missing required client capability: elicitation",
                Some(json!({"requiredCapabilities": {"elicitation": {}}})),
            ));
        }
        let mut required = ClientCapabilities::default();
        required.elicitation = Some(Default::default());
        return Err(McpError::missing_required_client_capability(required));
    }
    let answer = request
        .input_responses
        .as_ref()
        .and_then(|r| r.get(CONFIRM_KEY));
    let state_ok = request.request_state.as_deref() == Some(CONFIRM_STATE);
    let answered = answer.filter(|_| state_ok);
    if answered.is_some() || (state_ok && defects.has(&Defect::InputRequiredUnanswered)) {
        let accepted = answered
            .and_then(|a| a.get("action"))
            .and_then(Value::as_str)
            == Some("accept");
        let text = if accepted { "confirmed" } else { "declined" };
        return Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into());
    }
    if defects.has(&Defect::InputRequiredEmpty) {
        return Ok(InputRequiredResult::new(None, None).into());
    }
    let action = request
        .arguments
        .as_ref()
        .and_then(|a| a.get("action"))
        .and_then(Value::as_str)
        .unwrap_or("the action");
    let requests: InputRequests = serde_json::from_value(json!({
        CONFIRM_KEY: {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": format!("Confirm {action}?"),
                "requestedSchema": {
                    "type": "object",
                    "properties": {"confirm": {"type": "boolean"}},
                    "required": ["confirm"],
                },
            },
        },
    }))
    .map_err(|e| McpError::internal_error(e.to_string(), None))?;
    Ok(InputRequiredResult::new(Some(requests), Some(CONFIRM_STATE.into())).into())
}

/// `unrequested-list-changed`: the list's `list_changed` rides along with a modern list
/// reply, which no `subscriptions/listen` asked for.
pub async fn unrequested_list_changed(
    defects: &Defects,
    modern: bool,
    list: &str,
    context: &RequestContext<RoleServer>,
) {
    if !modern || !defects.has(&Defect::UnrequestedListChanged) {
        return;
    }
    let _ = match list {
        "tools" => context.peer.notify_tool_list_changed().await,
        "prompts" => context.peer.notify_prompt_list_changed().await,
        _ => context.peer.notify_resource_list_changed().await,
    };
}
