//! Wire validation: every message a server sends is checked against the message schema
//! of its revision (legacy 2025-11-25 or modern 2026-07-28), chosen by the method of the
//! request it answers.
//!
//! The schemas (`2025-11-25.json`, `2026-07-28.json` here) are mcpspec's own compact
//! rendering of the specification text: required fields and their types, unknown fields
//! allowed. `tests/wire.rs` proves them against the official `schema.json` of each
//! revision when it is available (no false positives on the official examples; the
//! official schema's rejections of mutated messages are ours too).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

use crate::protocol::era::{EraKind, LATEST_LEGACY_REVISION, MODERN_REVISION};
use crate::protocol::jsonrpc::{JSONRPC, VERSION};
use crate::protocol::methods as m;

const MODERN_SCHEMA: &str = include_str!("2026-07-28.json");
const LEGACY_SCHEMA: &str = include_str!("2025-11-25.json");

/// At most this many violations are reported per message (the first ones by position).
const PER_MESSAGE: usize = 5;

/// One way a server message breaks its revision's schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// What the message was: `tools/list response (id 3)`, `notifications/progress`.
    pub message: String,
    /// The schema type it was validated as, with the revision: `ListToolsResult (2026-07-28)`.
    pub schema_type: String,
    /// JSON pointer of the offending value inside the message (`/result/tools/0`).
    pub pointer: String,
    /// What the schema wanted there, in words.
    pub wanted: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(
            f,
            "{} is not a valid {}: at {at}: {}",
            self.message, self.schema_type, self.wanted
        )
    }
}

/// The schema revision of an era.
pub fn revision(era: EraKind) -> &'static str {
    match era {
        EraKind::Modern => MODERN_REVISION,
        EraKind::Legacy => LATEST_LEGACY_REVISION,
    }
}

/// The result type a response to `method` must have (`None`: only the base `Result`).
/// Modern `tools/call`, `prompts/get` and `resources/read` may also answer with an
/// `InputRequiredResult` (multi round-trip requests); `result_type` tells which.
pub fn result_type(era: EraKind, method: &str, result: &Value) -> &'static str {
    let modern = era == EraKind::Modern;
    if modern
        && matches!(method, m::TOOLS_CALL | m::PROMPTS_GET | m::RESOURCES_READ)
        && result.get("resultType").and_then(Value::as_str) == Some("input_required")
    {
        return "InputRequiredResult";
    }
    match (method, modern) {
        (m::INITIALIZE, false) => "InitializeResult",
        (m::SERVER_DISCOVER, true) => "DiscoverResult",
        (m::SUBSCRIPTIONS_LISTEN, true) => "SubscriptionsListenResult",
        (m::TOOLS_LIST, _) => "ListToolsResult",
        (m::TOOLS_CALL, _) => "CallToolResult",
        (m::PROMPTS_LIST, _) => "ListPromptsResult",
        (m::PROMPTS_GET, _) => "GetPromptResult",
        (m::RESOURCES_LIST, _) => "ListResourcesResult",
        (m::RESOURCES_TEMPLATES_LIST, _) => "ListResourceTemplatesResult",
        (m::RESOURCES_READ, _) => "ReadResourceResult",
        (m::COMPLETION_COMPLETE, _) => "CompleteResult",
        _ => "Result",
    }
}

/// The notification type of a server notification `method` (`JSONRPCNotification` when
/// the revision defines none for it).
fn notification_type(era: EraKind, method: &str) -> &'static str {
    match method {
        m::NOTIFICATIONS_PROGRESS => "ProgressNotification",
        m::NOTIFICATIONS_MESSAGE => "LoggingMessageNotification",
        m::NOTIFICATIONS_CANCELLED => "CancelledNotification",
        m::NOTIFICATIONS_RESOURCES_UPDATED => "ResourceUpdatedNotification",
        m::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED if era == EraKind::Modern => {
            "SubscriptionsAcknowledgedNotification"
        }
        _ => "JSONRPCNotification",
    }
}

/// Validate a response to a request of `method` (`None`: the request was unreadable, so
/// only the envelope can be judged).
pub fn check_response(
    era: EraKind,
    method: Option<&str>,
    message: &Value,
) -> Result<(), Vec<Violation>> {
    let id = message
        .get("id")
        .map(|id| format!(" (id {id})"))
        .unwrap_or_default();
    let what = format!("{} response{id}", method.unwrap_or("the"));
    if message.get("error").is_some() {
        return check_as(era, "JSONRPCErrorResponse", message, &what);
    }
    let ty = result_type(
        era,
        method.unwrap_or(""),
        message.get("result").unwrap_or(&Value::Null),
    );
    check_as(era, &format!("{ty}Response"), message, &what)
}

/// Validate a message the server sent on its own: a notification, or a request (legacy
/// servers may send requests; only the JSON-RPC envelope is judged then).
pub fn check_server_message(era: EraKind, message: &Value) -> Result<(), Vec<Violation>> {
    let method = message.get("method").and_then(Value::as_str);
    let Some(name) = method else {
        return check_response(era, None, message);
    };
    if message.get("id").is_some() {
        return check_as(era, "JSONRPCRequest", message, &format!("{name} request"));
    }
    check_as(era, notification_type(era, name), message, name)
}

/// Validate `value` as the named type of the era's schema: a definition name
/// (`ListToolsResult`), or a definition with a `Response` suffix for the full JSON-RPC
/// response carrying it. Public for `tests/wire.rs`.
pub fn check_as(
    era: EraKind,
    type_name: &str,
    value: &Value,
    what: &str,
) -> Result<(), Vec<Violation>> {
    let validator = validator(era, type_name);
    let shown = match type_name.strip_suffix("Response") {
        Some(result) if schema_doc(era)["$defs"].get(type_name).is_none() => result,
        _ => type_name,
    };
    let mut errors: Vec<Violation> = validator
        .iter_errors(value)
        .map(|e| Violation {
            message: what.to_string(),
            schema_type: format!("{shown} ({})", revision(era)),
            pointer: e.instance_path().to_string(),
            wanted: describe(&e),
        })
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    errors.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    errors.dedup();
    errors.truncate(PER_MESSAGE);
    Err(errors)
}

/// The names this revision's schema defines (for tests).
pub fn type_names(era: EraKind) -> Vec<String> {
    schema_doc(era)["$defs"]
        .as_object()
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default()
}

/// The error in words, with the schema keyword it comes from.
fn describe(e: &jsonschema::ValidationError<'_>) -> String {
    let keyword = e
        .schema_path()
        .to_string()
        .rsplit('/')
        .next()
        .unwrap_or("")
        .to_string();
    let text = e.to_string();
    if keyword.is_empty() {
        text
    } else {
        format!("{text} (schema keyword `{keyword}`)")
    }
}

fn schema_doc(era: EraKind) -> &'static Value {
    static MODERN: OnceLock<Value> = OnceLock::new();
    static LEGACY: OnceLock<Value> = OnceLock::new();
    let (cell, text) = match era {
        EraKind::Modern => (&MODERN, MODERN_SCHEMA),
        EraKind::Legacy => (&LEGACY, LEGACY_SCHEMA),
    };
    cell.get_or_init(|| serde_json::from_str(text).expect("the embedded wire schema is JSON"))
}

type Cache = Mutex<HashMap<(EraKind, String), Arc<jsonschema::Validator>>>;

/// The compiled validator of one type (compiled once per process).
fn validator(era: EraKind, type_name: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (era, type_name.to_string());
    if let Some(v) = cache.lock().expect("wire cache").get(&key) {
        return v.clone();
    }
    let doc = schema_doc(era);
    let root = match type_name.strip_suffix("Response") {
        Some(result) if doc["$defs"].get(result).is_some() => json!({
            "type": "object",
            "required": [JSONRPC, "id", "result"],
            "properties": {
                JSONRPC: { "const": VERSION },
                "id": { "$ref": "#/$defs/RequestId" },
                "result": { "$ref": format!("#/$defs/{result}") },
            },
        }),
        _ if doc["$defs"].get(type_name).is_some() => {
            json!({ "$ref": format!("#/$defs/{type_name}") })
        }
        _ => panic!(
            "the {} wire schema has no type `{type_name}`",
            revision(era)
        ),
    };
    let mut schema = root;
    schema["$defs"] = doc["$defs"].clone();
    schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    let compiled =
        Arc::new(jsonschema::validator_for(&schema).expect("the embedded wire schema compiles"));
    cache
        .lock()
        .expect("wire cache")
        .insert(key, compiled.clone());
    compiled
}

/// The era a request was sent in, from its own `_meta` protocol version when it has one
/// (a raw message may speak another era than its connection), else the connection's.
pub fn era_of_request(body: &Value, connection: EraKind) -> EraKind {
    match body.get("method").and_then(Value::as_str) {
        Some(m::INITIALIZE) => return EraKind::Legacy,
        Some(m::SERVER_DISCOVER) => return EraKind::Modern,
        _ => {}
    }
    let version = body
        .pointer("/params/_meta")
        .and_then(|m| m.get(crate::protocol::meta::PROTOCOL_VERSION))
        .and_then(Value::as_str);
    match version {
        Some(v) if v >= MODERN_REVISION => EraKind::Modern,
        Some(v) if crate::protocol::era::LEGACY_REVISIONS.contains(&v) => EraKind::Legacy,
        _ => connection,
    }
}

/// Every violation seen on one connection, oldest first.
#[derive(Debug, Default, Clone)]
pub struct WireLog {
    /// Messages validated so far.
    pub checked: usize,
    pub violations: Vec<Violation>,
}

/// Keep at most this many violations per connection (a broken server repeats itself).
const MAX_KEPT: usize = 200;

impl WireLog {
    pub fn record(&mut self, outcome: Result<(), Vec<Violation>>) {
        self.checked += 1;
        if let Err(v) = outcome {
            let room = MAX_KEPT.saturating_sub(self.violations.len());
            self.violations.extend(v.into_iter().take(room));
        }
    }
}
