//! Calling tools from a built-in check, safely and at a bounded cost.
//!
//! Safety first: a check only ever calls the tools it is allowed to — those annotated
//! `readOnlyHint: true` and not `openWorldHint: true` (a read-only tool that fetches a URL or
//! drives a browser still reaches outside the machine: a conformance run must not unless
//! asked), plus the tools the user names as safe (`safeTools:` on the check, else the
//! `safe_tools` variable, e.g. `--set safe_tools=create_note`). Any other tool is never
//! called, not even with invalid arguments: a buggy server might execute it anyway. The
//! tools left out are named in the step's transcript, each with why. (An absent
//! `openWorldHint` — most servers set none — is not taken as open: only an explicit `true`.)
//! Arguments come from `argsgen` (a valid example, schema-checked invalid variants), so a
//! failure is the server's, not the generator's.
//!
//! Bounded cost: a call with given arguments is sent once per run and revision, and every
//! check that needs it shares the answer ([`ToolCalls`]); each call has a budget
//! (`tool_call_budget`), and a tool slower than that is skipped with the reason instead of
//! holding every check up for its full duration.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::outcome::CheckOutcome;
use crate::language::dsl::scenario::CheckOptions;
use crate::protocol::fields::is_error;
use crate::protocol::{ListKind, methods};
use crate::results::exchange::Exchange;
use crate::run::argsgen;
use crate::run::client::connection::error_of;
use crate::run::client::{Connection, TransportError};

/// Seconds one tool call may take when `tool_call_budget` is not set.
const DEFAULT_CALL_BUDGET: f64 = 5.0;
/// Upper bound of `tool_call_budget`.
const MAX_CALL_BUDGET: f64 = 300.0;
/// Arguments longer than this (as JSON text) are not shared: each check sends its own call.
const MAX_SHARED_ARGUMENTS: usize = 4096;

/// The answers to the tool calls of one run, shared by its checks: the first check that
/// needs a call (tool, arguments, revision) sends it, the others (in any scenario,
/// concurrently or later) get its answer. A crash or a broken connection is not kept: it
/// belongs to the connection it happened on.
#[derive(Clone, Default)]
pub struct ToolCalls(Arc<Mutex<HashMap<CallKey, Arc<tokio::sync::OnceCell<Called>>>>>);

/// (negotiated revision, tool name, arguments as JSON text).
type CallKey = (String, String, String);

impl ToolCalls {
    /// `tools/call` of `name` with `arguments`, or the answer an earlier check got.
    pub async fn call(
        &self,
        conn: &mut Connection,
        name: &str,
        arguments: &Value,
        timeout: Duration,
    ) -> Called {
        let text = arguments.to_string();
        // Big arguments (the fuzz's oversized string) would make a big cache: sent each time.
        if text.len() > MAX_SHARED_ARGUMENTS {
            return call_tool(conn, name, arguments, timeout).await;
        }
        let key = (conn.negotiated.revision.clone(), name.to_string(), text);
        let cell = self
            .0
            .lock()
            .expect("tool call cache lock")
            .entry(key)
            .or_default()
            .clone();
        if let Some(shared) = cell.get() {
            conn.note(format!(
                "tools/call {name} {arguments}: the answer of an earlier call in this run is reused"
            ));
            return shared.clone();
        }
        let mut sent = false;
        let answer = cell
            .get_or_try_init(|| async {
                sent = true;
                let called = call_tool(conn, name, arguments, timeout).await;
                if called.is_fatal() {
                    Err(called)
                } else {
                    Ok(called)
                }
            })
            .await;
        match answer {
            Ok(shared) => {
                if !sent {
                    conn.note(format!(
                        "tools/call {name} {arguments}: the answer of a concurrent call in this run is reused"
                    ));
                }
                shared.clone()
            }
            Err(fatal) => fatal,
        }
    }
}

/// `tool_call_budget`: how long one tool call may take.
fn call_budget(vars: &Map<String, Value>) -> Result<Duration, String> {
    let seconds = match vars.get("tool_call_budget") {
        None | Some(Value::Null) => return Ok(Duration::from_secs_f64(DEFAULT_CALL_BUDGET)),
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(_) => None,
    };
    seconds
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_CALL_BUDGET)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            format!(
                "parameter tool_call_budget must be a number of seconds above 0 and at most {MAX_CALL_BUDGET}, got `{}`",
                vars["tool_call_budget"]
            )
        })
}

/// What every tool-calling check needs: its settings, the variables, the per-call timeout
/// (the step's timeout within the call budget), the run's shared calls.
pub struct CallCtx<'a> {
    pub options: &'a CheckOptions,
    pub vars: &'a Map<String, Value>,
    pub timeout: Duration,
    pub calls: &'a ToolCalls,
}

impl<'a> CallCtx<'a> {
    /// The context of a tool-calling check whose step waits `timeout` per request; an
    /// invalid `tool_call_budget` is the step's error.
    pub fn new(
        options: &'a CheckOptions,
        vars: &'a Map<String, Value>,
        timeout: Duration,
        calls: &'a ToolCalls,
    ) -> Result<Self, String> {
        Ok(CallCtx {
            options,
            vars,
            timeout: timeout.min(call_budget(vars)?),
            calls,
        })
    }

    /// A variable as a list of strings: a YAML/JSON list, or a string split on commas
    /// and whitespace (`--set safe_tools=a,b`). Empty when unset.
    pub fn list_var(&self, name: &str) -> Vec<String> {
        string_list(self.vars.get(name))
    }

    /// A non-empty string variable.
    pub fn str_var(&self, name: &str) -> Option<String> {
        match self.vars.get(name)? {
            Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
            Value::Null => None,
            Value::String(_) => None,
            other => Some(other.to_string()),
        }
    }

    /// The tool's answer to its example arguments (shared by the run's checks), or why
    /// there is none to judge: no example can be derived, or the tool is slower than the
    /// budget (skipped: a slow tool, not a fault).
    pub async fn example_call(
        &self,
        conn: &mut Connection,
        tool: &Tool,
    ) -> Result<(Value, Called), String> {
        let schema = tool.input_schema();
        let Some(args) = argsgen::example(&schema) else {
            return Err(no_variants(&tool.name, &schema));
        };
        let called = self.calls.call(conn, &tool.name, &args, self.timeout).await;
        if let Called::TimedOut(d) = &called {
            return Err(slow_tool(&tool.name, *d));
        }
        Ok((args, called))
    }

    /// Tools the check may call besides read-only ones.
    fn safe_tools(&self) -> Vec<String> {
        match &self.options.safe_tools {
            Some(list) => list.clone(),
            None => self.list_var("safe_tools"),
        }
    }
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect(),
        Some(Value::String(s)) => s
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// A tool the check may call.
pub struct Tool {
    pub name: String,
    pub def: Value,
}

impl Tool {
    pub fn input_schema(&self) -> Value {
        crate::protocol::fields::input_schema(&self.def)
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"}))
    }
}

/// The tools a check may call, in `tools/list` order; `Err(Skip)` when there are none.
pub async fn allowed_tools(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<Result<Vec<Tool>, CheckOutcome>, String> {
    if !crate::language::dsl::scenario::capability_declared(
        &conn.negotiated.capabilities,
        ListKind::Tools.capability(),
    ) {
        return Ok(Err(CheckOutcome::Skip(
            "the server does not declare the `tools` capability".into(),
        )));
    }
    let safe = ctx.safe_tools();
    let tools = conn
        .tools()
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    let mut allowed: Vec<Tool> = Vec::new();
    // Tools left out, with why: said in the transcript (and in the skip when none is left).
    let mut left_out: Vec<String> = Vec::new();
    for def in tools {
        let Some(name) = def.get("name").and_then(Value::as_str).map(str::to_string) else {
            continue;
        };
        let hint = |key: &str| {
            def.pointer(&format!("/annotations/{key}"))
                .and_then(Value::as_bool)
        };
        if safe.contains(&name) {
            allowed.push(Tool { name, def });
        } else if hint("readOnlyHint") != Some(true) {
            left_out.push(format!("\"{name}\" (not readOnlyHint)"));
        } else if hint("openWorldHint") == Some(true) {
            left_out.push(format!(
                "\"{name}\" (openWorldHint: it may reach outside this machine)"
            ));
        } else {
            allowed.push(Tool { name, def });
        }
    }
    let unsafe_note = (!left_out.is_empty()).then(|| {
        format!(
            "tools not called: {}; name one in safe_tools to call it",
            left_out.join(", ")
        )
    });
    if let Some(note) = &unsafe_note {
        conn.note(note.clone());
    }
    if allowed.is_empty() {
        return Ok(Err(CheckOutcome::Skip(match unsafe_note {
            Some(note) if left_out.iter().any(|t| t.contains("openWorldHint")) => {
                format!("no tool safe to call here: {note} (e.g. --set safe_tools=NAME,NAME)")
            }
            _ => "no read-only tool to call; set safe_tools (e.g. --set safe_tools=NAME,NAME) to allow tools without readOnlyHint".into(),
        })));
    }
    Ok(Ok(allowed))
}

/// Why a tool that did not answer its example arguments within the budget is not judged.
fn slow_tool(name: &str, budget: Duration) -> String {
    format!(
        "tool \"{name}\" skipped: no answer to its example arguments within the {} per-call budget (a slow tool; --set tool_call_budget=SECONDS to wait longer)",
        humantime::format_duration(budget)
    )
}

/// What came back for one request.
#[derive(Clone)]
pub enum Called {
    Result(Value),
    Error {
        code: i64,
        message: String,
    },
    /// The server closed the connection (stdio: the process exited).
    Crashed(String),
    TimedOut(Duration),
    /// HTTP: an answer without a JSON-RPC message (e.g. 413, 500); the server is alive.
    Http(u16, String),
    /// No answer at all (e.g. a refused connection, a malformed reply).
    Broken(String),
}

impl Called {
    pub fn is_success(&self) -> bool {
        matches!(self, Called::Result(r) if !is_error(r))
    }

    /// One line saying what came back.
    pub fn describe(&self) -> String {
        match self {
            Called::Result(r) if is_error(r) => {
                format!("a tool result with isError: true ({})", first_text(r))
            }
            Called::Result(_) => "a successful result (isError absent or false)".into(),
            Called::Error { code, message } => format!("JSON-RPC error {code}: {message}"),
            Called::Crashed(why) => format!("no answer: the server closed the connection ({why})"),
            Called::TimedOut(d) => format!(
                "no answer within {} (the server hangs)",
                humantime::format_duration(*d)
            ),
            Called::Http(status, body) => {
                format!("HTTP {status} without a JSON-RPC message: {body}")
            }
            Called::Broken(why) => format!("no JSON-RPC answer: {why}"),
        }
    }

    /// The server died or stopped answering: later calls would say nothing more.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Called::Crashed(_) | Called::Broken(_))
    }
}

fn first_text(result: &Value) -> String {
    let text = crate::protocol::fields::text_blocks(result)
        .next()
        .unwrap_or("");
    crate::ground::redact::shorten(text, 120)
}

/// Send one request built for the connection's era and classify the answer.
pub async fn request(
    conn: &mut Connection,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Called {
    let id = conn.next_id();
    let out = conn.build(
        method,
        Some(params),
        Some(id),
        &IndexMap::new(),
        &IndexMap::new(),
        timeout,
    );
    match conn.send(&out).await {
        Ok(ex) => classify(&ex),
        Err(TransportError::Timeout(d)) => Called::TimedOut(d),
        Err(TransportError::Closed(why)) => Called::Crashed(why),
        Err(e) => Called::Broken(e.to_string()),
    }
}

fn classify(ex: &Exchange) -> Called {
    if let Some(result) = ex.response.as_ref().and_then(|r| r.get("result")) {
        return Called::Result(result.clone());
    }
    if let Some((code, message)) = error_of(ex) {
        return Called::Error { code, message };
    }
    if let Some(h) = &ex.http {
        let body: String = ex
            .raw_body
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(200)
            .collect();
        return Called::Http(h.status, body);
    }
    match crate::run::client::connection::result_of(ex) {
        Ok(r) => Called::Result(r),
        Err(why) => Called::Broken(why),
    }
}

pub async fn call_tool(
    conn: &mut Connection,
    name: &str,
    arguments: &Value,
    timeout: Duration,
) -> Called {
    let params = json!({"name": name, "arguments": arguments});
    request(conn, methods::TOOLS_CALL, params, timeout).await
}

/// Call `tool` with one variant of its arguments. `Err(why)` when the call timed out and
/// the tool is merely slow (its valid example does not answer within the budget either):
/// the tool is skipped with that reason rather than judged on a hang.
pub async fn call_variant(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
    tool: &Tool,
    arguments: &Value,
) -> Result<Called, String> {
    let called = ctx
        .calls
        .call(conn, &tool.name, arguments, ctx.timeout)
        .await;
    if matches!(called, Called::TimedOut(_))
        && let Some(why) = slow_not_hanging(conn, ctx, tool).await
    {
        return Err(why);
    }
    Ok(called)
}

/// After a call with invalid arguments timed out: why the tool is skipped when it is slow
/// with its valid example arguments too (`None`: it answers those, so the invalid ones
/// made it hang — a finding).
async fn slow_not_hanging(conn: &mut Connection, ctx: &CallCtx<'_>, tool: &Tool) -> Option<String> {
    let args = argsgen::example(&tool.input_schema())?;
    match ctx.calls.call(conn, &tool.name, &args, ctx.timeout).await {
        Called::TimedOut(budget) => Some(slow_tool(&tool.name, budget)),
        _ => None,
    }
}

/// Why a tool's arguments cannot be varied: no example, or nothing to violate.
pub fn no_variants(name: &str, schema: &Value) -> String {
    if argsgen::example(schema).is_none() {
        format!("tool \"{name}\": no example arguments can be derived from its inputSchema")
    } else {
        format!("tool \"{name}\": its inputSchema leaves nothing to violate")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_from_strings_and_arrays() {
        assert_eq!(
            string_list(Some(&json!("a, b c"))),
            vec!["a".to_string(), "b".into(), "c".into()]
        );
        assert_eq!(string_list(Some(&json!(["x", 1]))), vec!["x", "1"]);
        assert!(string_list(None).is_empty());
    }
}
