//! What `mcpspec init` learns from the live server: which eras it speaks, its contract
//! snapshot in each, and what its read-only operations answer to example arguments.
//! Only tools marked `readOnlyHint: true` are ever called; prompts/get and
//! resources/read are reads by definition.

use serde_json::{Value, json};

use crate::protocol::era::EraRequest;
use crate::protocol::fields;
use crate::protocol::methods;
use crate::run::argsgen;
use crate::run::client::{ConnectError, Connection, Target};
use crate::run::contract::{Snapshot, take_snapshot};

/// The value sent for each required prompt argument (prompt arguments are strings).
pub const PROMPT_ARGUMENT_EXAMPLE: &str = "example";

/// One era the server was seen in.
pub struct EraSeen {
    /// The era label written to the project (`legacy`, `2026-07-28`, or as given).
    pub label: String,
    /// `legacy (2025-11-25)`: for the console.
    pub described: String,
    pub snapshot: Snapshot,
    /// Tool name → the answer to a call with example arguments (read-only tools only).
    pub calls: Vec<(String, ProbedAnswer)>,
    /// Prompt name → the answer to prompts/get with example arguments.
    pub prompt_gets: Vec<(String, ProbedAnswer)>,
    /// Resource uri → the answer to resources/read.
    pub reads: Vec<(String, ProbedAnswer)>,
}

/// The answer to one read-only request.
#[derive(Clone, Debug)]
pub enum ProbedAnswer {
    /// A result (for tools/call: not `isError`).
    Result(Value),
    /// A tool result with `isError: true`, or a JSON-RPC error: the text of it.
    Failed(String),
}

/// Connect in `label`'s era (any failure is returned for the caller to report).
pub async fn connect(target: &Target, label: &str) -> Result<Connection, ConnectError> {
    let request = EraRequest::parse(label).map_err(|message| ConnectError {
        kind: crate::run::client::ConnectErrorKind::Protocol,
        message,
        stderr_tail: None,
        transcript: Vec::new(),
        refused: false,
    })?;
    Connection::open(target, label, &request).await
}

/// Snapshot the server over `conn` and observe its read-only operations.
pub async fn observe(conn: &mut Connection, label: &str) -> Result<EraSeen, String> {
    let snapshot = take_snapshot(conn, None).await?;
    let mut calls = Vec::new();
    for tool in &snapshot.tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        if !is_read_only(tool) {
            continue;
        }
        let Some(arguments) = fields::input_schema(tool).and_then(argsgen::example) else {
            continue;
        };
        let answer = request(
            conn,
            methods::TOOLS_CALL,
            json!({ "name": name, "arguments": arguments }),
        )
        .await;
        calls.push((name.to_string(), answer));
    }
    let mut prompt_gets = Vec::new();
    for prompt in &snapshot.prompts {
        let Some(name) = prompt.get("name").and_then(Value::as_str) else {
            continue;
        };
        let answer = request(conn, methods::PROMPTS_GET, prompt_get_params(prompt)).await;
        prompt_gets.push((name.to_string(), answer));
    }
    let mut reads = Vec::new();
    for resource in &snapshot.resources {
        let Some(uri) = resource.get("uri").and_then(Value::as_str) else {
            continue;
        };
        let answer = request(conn, methods::RESOURCES_READ, json!({ "uri": uri })).await;
        reads.push((uri.to_string(), answer));
    }
    let n = &conn.negotiated;
    Ok(EraSeen {
        label: label.to_string(),
        described: format!("{label} ({})", n.revision),
        snapshot,
        calls,
        prompt_gets,
        reads,
    })
}

/// `annotations.readOnlyHint: true` — the only tools init may call.
pub fn is_read_only(tool: &Value) -> bool {
    tool.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true))
}

/// prompts/get params: the required arguments, each set to [`PROMPT_ARGUMENT_EXAMPLE`].
pub fn prompt_get_params(prompt: &Value) -> Value {
    let name = prompt.get("name").cloned().unwrap_or(Value::Null);
    let required: serde_json::Map<String, Value> = prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a.get("required") == Some(&Value::Bool(true)))
        .filter_map(|a| a.get("name").and_then(Value::as_str))
        .map(|a| (a.to_string(), json!(PROMPT_ARGUMENT_EXAMPLE)))
        .collect();
    if required.is_empty() {
        json!({ "name": name })
    } else {
        json!({ "name": name, "arguments": required })
    }
}

/// The answer, redacted: what init writes from it goes into files meant to be committed.
async fn request(conn: &mut Connection, method: &str, params: Value) -> ProbedAnswer {
    let redactor = crate::ground::redact::known();
    match conn.call(method, Some(params)).await {
        Ok(result) if fields::is_error(&result) => {
            let text = fields::text_blocks(&result).next().unwrap_or("no text");
            ProbedAnswer::Failed(redactor.redact(&format!("isError: true ({})", one_line(text))))
        }
        Ok(mut result) => {
            redactor.redact_json(&mut result);
            ProbedAnswer::Result(result)
        }
        Err(e) => ProbedAnswer::Failed(redactor.redact(&one_line(&e))),
    }
}

fn one_line(s: &str) -> String {
    crate::ground::redact::shorten(s.lines().next().unwrap_or(""), 160)
}
