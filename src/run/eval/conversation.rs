//! The API-neutral conversation with a model: the tools it is sent, its messages and
//! replies, where a turn sits in the run, and why a request failed. [`super::wire`] maps it
//! to each API's shape for the model client ([`super::llm`]); the recorder and replayer
//! ([`super::record`], [`super::replay`]) key exchanges by [`TurnAt`]. Nothing here talks to
//! the network, so every file of the eval run can share these types without a circle.

use serde_json::{Value, json};

use super::names::{Names, hex};

/// A tool as the model sees it: the model-side name (mapped, see [`super::names`]).
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub schema: Value,
}

/// A tool call the model asked for.
#[derive(Debug, Clone)]
pub struct Call {
    pub id: String,
    /// The model-side name.
    pub name: String,
    /// Parsed arguments, or the raw text and why it is not a JSON object.
    pub arguments: Result<Value, (String, String)>,
}

/// The API-neutral conversation.
#[derive(Debug, Clone)]
pub enum Msg {
    User(String),
    Assistant {
        text: Option<String>,
        calls: Vec<Call>,
    },
    /// Results of the previous assistant message's calls: (call id, text, is_error).
    ToolResults(Vec<(String, String, bool)>),
}

/// One model reply.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    pub text: Option<String>,
    pub calls: Vec<Call>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Requests repeated after a 429 or 5xx before this reply came.
    pub retries: u32,
    /// The API reported no `usage`: the token counts are estimated from the request's and
    /// the reply's sizes (see [`super::estimate`]).
    pub estimated: bool,
}

/// Why a model request failed.
#[derive(Debug, Clone)]
pub enum ApiError {
    /// Nothing answered at the base URL, or it serves no such model (exit 4 for the run).
    Unreachable(String),
    /// 401/403 (exit 3 for the run).
    Auth(String),
    /// Anything else, after retries: this trial fails.
    Failed(String),
    /// The next request could take the run past `--max-cost`: the run stops (exit 5).
    Budget(String),
    /// A limit of the run: too many model requests failed in a row (the circuit breaker), or
    /// `--max-duration` passed. The run stops (exit 5).
    Limit(String),
    /// `--replay`: the recording cannot answer this run (another set, profile or tool
    /// list): a setup error (exit 2), re-record.
    Replay(String),
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiError::Unreachable(m)
            | ApiError::Auth(m)
            | ApiError::Failed(m)
            | ApiError::Budget(m)
            | ApiError::Limit(m)
            | ApiError::Replay(m) => f.write_str(m),
        }
    }
}

/// Where a model turn sits in the run: the key of a recorded exchange.
#[derive(Debug, Clone, Copy)]
pub struct TurnAt<'a> {
    pub task: &'a str,
    /// 0-based trial index.
    pub trial: u32,
    /// 1-based model turn of the trial; for the judge, 1-based judged answer of the trial.
    pub turn: u32,
    /// A judge's request grading the trial's answer, not the model's turn.
    pub judge: bool,
    /// How many messages of the conversation come from the set (the task's prompt or
    /// messages): a request that differs there asks another question than the recording.
    pub set_messages: usize,
    /// The fence of a grading prompt (see [`super::fence`]): recorded and compared as a
    /// placeholder, so a replay matches with its own fence.
    pub fence: Option<&'a str>,
}

/// The model-side tool list of the server's tools, and the hash the results record.
pub fn tool_specs(tools: &[Value], names: &Names) -> (Vec<ToolSpec>, String) {
    let specs: Vec<ToolSpec> = tools
        .iter()
        .filter_map(|t| {
            let name = t.get("name")?.as_str()?;
            Some(tool_spec(t, names.to_model(name).to_string()))
        })
        .collect();
    let canonical = crate::ground::json::sort_keys(Value::Array(sent_tools(&specs))).to_string();
    use sha2::Digest;
    (specs, hex(&sha2::Sha256::digest(canonical.as_bytes())))
}

/// A tool (an MCP `Tool`, or a sampling request's tool) as the model sees it, named `name`.
pub fn tool_spec(t: &Value, name: String) -> ToolSpec {
    ToolSpec {
        name,
        description: t
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        schema: crate::protocol::fields::input_schema(t)
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"})),
    }
}

/// The tool list as the model is sent it, API-neutral: what `toolsHash` hashes and what a
/// recording keeps to say which tool changed.
pub fn sent_tools(specs: &[ToolSpec]) -> Vec<Value> {
    specs
        .iter()
        .map(|s| json!({"name": s.name, "description": s.description, crate::protocol::fields::INPUT_SCHEMA: s.schema}))
        .collect()
}
