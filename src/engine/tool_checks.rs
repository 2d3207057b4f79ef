//! Built-in checks that call tools (`check: { kind: tool_… }`, handles, injection lint).
//!
//! Safety first: a check only ever calls the tools it is allowed to — those annotated
//! `readOnlyHint: true`, plus the tools the user names as safe (`safeTools:` on the check,
//! else the `safe_tools` variable, e.g. `--set safe_tools=create_note`). Any other tool is
//! never called, not even with invalid arguments: a buggy server might execute it anyway.
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

use crate::argsgen;
use crate::client::connection::error_of;
use crate::client::{Connection, Exchange, TransportError};
use crate::dsl::Step;
use crate::dsl::model::CheckKind;
use crate::dsl::scenario::CheckOptions;
use crate::report::model::Outcome;

/// At most this many findings are reported per step (the rest are counted).
const MAX_FINDINGS: usize = 20;
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
    pub(super) async fn call(
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

/// What a tool-calling check found.
pub(super) enum Findings {
    Pass,
    Skip(String),
    Fail(Vec<Finding>),
}

/// One problem, reported as one failure of the step.
pub(super) struct Finding {
    pub message: String,
    pub expected: Option<String>,
    pub actual: Option<String>,
}

impl Finding {
    pub fn new(message: String, expected: impl Into<String>, actual: impl Into<String>) -> Self {
        Finding {
            message,
            expected: Some(expected.into()),
            actual: Some(actual.into()),
        }
    }
}

/// Judge what a check found: pass, skip, findings (failed, or warnings for `level:
/// should`) or an error when it could not run.
pub async fn run(
    step: &Step,
    conn: &mut Connection,
    kind: CheckKind,
    options: &CheckOptions,
    vars: &Map<String, Value>,
    calls: &ToolCalls,
) -> Outcome {
    let timeout = step.timeout.unwrap_or(conn.target().timeout);
    let budget = match call_budget(vars) {
        Ok(b) => b,
        Err(message) => {
            return Outcome::Error {
                message,
                detail: None,
            };
        }
    };
    let ctx = CallCtx {
        options,
        vars,
        timeout: timeout.min(budget),
        calls,
    };
    let result = match kind {
        CheckKind::ToolInputErrorsAreResults => input_errors_are_results(conn, &ctx).await,
        CheckKind::ToolOutputSchema | CheckKind::ToolOutputText => {
            output(conn, &ctx, kind == CheckKind::ToolOutputText).await
        }
        CheckKind::ToolInputFuzz => fuzz(conn, &ctx).await,
        CheckKind::HandlesUnguessable => super::handles::unguessable(conn, &ctx).await,
        CheckKind::HandleBinding => super::handles::binding(conn, &ctx).await,
        CheckKind::DescriptionInjection => super::injection::descriptions(conn, &ctx).await,
        CheckKind::ResultInjection => super::injection::results(conn, &ctx).await,
        other => Err(format!("{other:?} does not call tools")),
    };
    match result {
        Ok(Findings::Pass) => Outcome::Passed,
        Ok(Findings::Skip(reason)) => Outcome::Skipped { reason },
        Ok(Findings::Fail(found)) => {
            let total = found.len();
            let mut failures: Vec<_> = found
                .into_iter()
                .take(MAX_FINDINGS)
                .map(|f| super::step::step_failure(step, "check", f.message, f.expected, f.actual))
                .collect();
            if total > MAX_FINDINGS {
                failures.push(super::step::step_failure(
                    step,
                    "check",
                    format!("… and {} more finding(s)", total - MAX_FINDINGS),
                    None,
                    None,
                ));
            }
            super::step::outcome_for(step, failures)
        }
        Err(message) => Outcome::Error {
            message,
            detail: conn
                .stderr_tail()
                .map(|t| format!("server stderr (last lines):\n{t}")),
        },
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
pub(super) struct CallCtx<'a> {
    pub options: &'a CheckOptions,
    pub vars: &'a Map<String, Value>,
    pub timeout: Duration,
    pub calls: &'a ToolCalls,
}

impl CallCtx<'_> {
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

pub(super) fn string_list(value: Option<&Value>) -> Vec<String> {
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
pub(super) struct Tool {
    pub name: String,
    pub def: Value,
}

impl Tool {
    pub fn input_schema(&self) -> Value {
        self.def
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"}))
    }
}

/// The tools a check may call, in `tools/list` order; `Err(Skip)` when there are none.
pub(super) async fn allowed_tools(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<Result<Vec<Tool>, Findings>, String> {
    if !crate::dsl::scenario::capability_declared(&conn.negotiated.capabilities, "tools") {
        return Ok(Err(Findings::Skip(
            "the server does not declare the `tools` capability".into(),
        )));
    }
    let safe = ctx.safe_tools();
    let tools = conn
        .tools()
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    let allowed: Vec<Tool> = tools
        .into_iter()
        .filter_map(|def| {
            let name = def.get("name")?.as_str()?.to_string();
            let read_only = def.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true));
            (read_only || safe.contains(&name)).then_some(Tool { name, def })
        })
        .collect();
    if allowed.is_empty() {
        return Ok(Err(Findings::Skip(
            "no read-only tool to call; set safe_tools (e.g. --set safe_tools=NAME,NAME) to allow tools without readOnlyHint"
                .into(),
        )));
    }
    Ok(Ok(allowed))
}

/// Why a tool that did not answer its example arguments within the budget is not judged.
pub(super) fn slow_tool(name: &str, budget: Duration) -> String {
    format!(
        "tool \"{name}\" skipped: no answer to its example arguments within the {} per-call budget (a slow tool; --set tool_call_budget=SECONDS to wait longer)",
        humantime::format_duration(budget)
    )
}

/// What came back for one request.
#[derive(Clone)]
pub(super) enum Called {
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

pub(super) fn is_error(result: &Value) -> bool {
    result.get("isError") == Some(&Value::Bool(true))
}

fn first_text(result: &Value) -> String {
    let text = result
        .get("content")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find_map(|b| b.get("text").and_then(Value::as_str)))
        .unwrap_or("");
    crate::redact::shorten(text, 120)
}

/// Send one request built for the connection's era and classify the answer.
pub(super) async fn request(
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
    match crate::client::connection::result_of(ex) {
        Ok(r) => Called::Result(r),
        Err(why) => Called::Broken(why),
    }
}

pub(super) async fn call_tool(
    conn: &mut Connection,
    name: &str,
    arguments: &Value,
    timeout: Duration,
) -> Called {
    let params = json!({"name": name, "arguments": arguments});
    request(conn, "tools/call", params, timeout).await
}

/// Pass when something was judged, skip with the reasons when nothing could be. What
/// could not be judged (e.g. a slow tool) is noted in the step's transcript either way.
pub(super) fn conclude(
    conn: &mut Connection,
    findings: Vec<Finding>,
    judged: usize,
    untestable: Vec<String>,
) -> Findings {
    if !findings.is_empty() || judged > 0 {
        for why in &untestable {
            conn.note(format!("not judged: {why}"));
        }
    }
    if !findings.is_empty() {
        Findings::Fail(findings)
    } else if judged == 0 {
        Findings::Skip(format!("not testable: {}", untestable.join("; ")))
    } else {
        Findings::Pass
    }
}

/// SEP-1303: arguments the inputSchema rejects get a tool result with `isError: true`
/// (the model can read it and correct the call), not a -32602 protocol error, and
/// certainly not a success.
async fn input_errors_are_results(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<Findings, String> {
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(t) => t,
        Err(skip) => return Ok(skip),
    };
    let (mut findings, mut judged, mut untestable) = (Vec::new(), 0, Vec::new());
    for tool in &tools {
        let schema = tool.input_schema();
        let variants: Vec<_> = argsgen::invalid_variants(&schema)
            .into_iter()
            .filter(|v| v.must_reject)
            .collect();
        if variants.is_empty() {
            untestable.push(no_variants(&tool.name, &schema));
            continue;
        }
        let mut found = Vec::new();
        let mut slow = None;
        for v in variants {
            let called = match call_variant(conn, ctx, tool, &v.arguments).await {
                Ok(called) => called,
                Err(why) => {
                    slow = Some(why);
                    break;
                }
            };
            let message = match &called {
                Called::Result(r) if is_error(r) => continue,
                Called::Error { code: -32602, .. } => format!(
                    "tool \"{}\", {}: a -32602 protocol error instead of a tool result with isError: true",
                    tool.name, v.label
                ),
                Called::Result(_) => format!(
                    "tool \"{}\", {}: succeeded with arguments its inputSchema rejects",
                    tool.name, v.label
                ),
                _ => format!("tool \"{}\", {}: {}", tool.name, v.label, called.describe()),
            };
            found.push(Finding::new(
                message,
                "a CallToolResult with isError: true (input validation errors are tool execution errors, SEP-1303)",
                called.describe(),
            ));
            if called.is_fatal() || conn.is_broken() {
                findings.append(&mut found);
                return Ok(Findings::Fail(findings));
            }
        }
        match slow {
            Some(why) => untestable.push(why),
            None => {
                judged += 1;
                findings.append(&mut found);
            }
        }
    }
    Ok(conclude(conn, findings, judged, untestable))
}

/// After a call with invalid arguments timed out: why the tool is skipped when it is slow
/// with its valid example arguments too (`None`: it answers those, so the invalid ones
/// made it hang — a finding).
/// Call `tool` with one variant of its arguments. `Err(why)` when the call timed out and
/// the tool is merely slow (its valid example does not answer within the budget either):
/// the tool is skipped with that reason rather than judged on a hang.
async fn call_variant(
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

async fn slow_not_hanging(conn: &mut Connection, ctx: &CallCtx<'_>, tool: &Tool) -> Option<String> {
    let args = argsgen::example(&tool.input_schema())?;
    match ctx.calls.call(conn, &tool.name, &args, ctx.timeout).await {
        Called::TimedOut(budget) => Some(slow_tool(&tool.name, budget)),
        _ => None,
    }
}

fn no_variants(name: &str, schema: &Value) -> String {
    if argsgen::example(schema).is_none() {
        format!("tool \"{name}\": no example arguments can be derived from its inputSchema")
    } else {
        format!("tool \"{name}\": its inputSchema leaves nothing to violate")
    }
}

/// `structuredContent` of a successful call conforms to the declared `outputSchema`
/// (MUST), and (`text`) is mirrored as serialized JSON in a text block (SHOULD).
async fn output(conn: &mut Connection, ctx: &CallCtx<'_>, text: bool) -> Result<Findings, String> {
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(t) => t,
        Err(skip) => return Ok(skip),
    };
    let with_schema: Vec<&Tool> = tools
        .iter()
        .filter(|t| t.def.get("outputSchema").is_some_and(Value::is_object))
        .collect();
    if with_schema.is_empty() {
        return Ok(Findings::Skip(
            "no allowed tool declares an outputSchema".into(),
        ));
    }
    let (mut findings, mut judged, mut untestable) = (Vec::new(), 0, Vec::new());
    for tool in with_schema {
        let (args, called) = match ctx.example_call(conn, tool).await {
            Ok(answer) => answer,
            Err(why) => {
                untestable.push(why);
                continue;
            }
        };
        let Called::Result(result) = &called else {
            untestable.push(format!(
                "tool \"{}\" with example arguments {args}: {}",
                tool.name,
                called.describe()
            ));
            if called.is_fatal() {
                break;
            }
            continue;
        };
        if is_error(result) {
            untestable.push(format!(
                "tool \"{}\" with example arguments {args}: {}",
                tool.name,
                called.describe()
            ));
            continue;
        }
        judged += 1;
        let schema = &tool.def["outputSchema"];
        let structured = result.get("structuredContent");
        let problem = match (text, structured) {
            (false, None) => Some((
                "declares an outputSchema but the result has no structuredContent".to_string(),
                "structuredContent conforming to the outputSchema".to_string(),
                "no structuredContent".to_string(),
            )),
            (false, Some(value)) => schema_errors(schema, value).map(|errors| {
                (
                    "structuredContent does not conform to the outputSchema".to_string(),
                    format!("conforms to {}", crate::assert::compact(schema, 300)),
                    format!(
                        "{} — {}",
                        crate::assert::compact(value, 300),
                        errors.join("; ")
                    ),
                )
            }),
            (true, None) => None,
            (true, Some(value)) => (!mirrored(result, value)).then(|| {
                (
                    "no text content block carries the serialized structuredContent".to_string(),
                    "a text block whose JSON equals structuredContent (backwards compatibility)"
                        .to_string(),
                    crate::assert::compact(result.get("content").unwrap_or(&Value::Null), 300),
                )
            }),
        };
        if let Some((message, expected, actual)) = problem {
            findings.push(Finding::new(
                format!("tool \"{}\" with arguments {args}: {message}", tool.name),
                expected,
                actual,
            ));
        }
    }
    Ok(conclude(conn, findings, judged, untestable))
}

/// Validation errors of `value` against `schema` (instance path: message); `None` when
/// it conforms. An invalid schema is another check's business (`output_schema_valid`).
fn schema_errors(schema: &Value, value: &Value) -> Option<Vec<String>> {
    let validator = jsonschema::validator_for(schema).ok()?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .take(5)
        .map(|e| {
            let path = e.instance_path().to_string();
            let at = if path.is_empty() { "/".into() } else { path };
            format!("at {at}: {e}")
        })
        .collect();
    (!errors.is_empty()).then_some(errors)
}

fn mirrored(result: &Value, structured: &Value) -> bool {
    result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .any(|t| serde_json::from_str::<Value>(t).is_ok_and(|v| &v == structured))
}

/// Boundary and type-confused arguments: each must get an `isError` result or a -32602
/// error (`must_reject` variants), and none may crash or hang the server.
async fn fuzz(conn: &mut Connection, ctx: &CallCtx<'_>) -> Result<Findings, String> {
    let tools = match allowed_tools(conn, ctx).await? {
        Ok(t) => t,
        Err(skip) => return Ok(skip),
    };
    let (mut findings, mut judged, mut untestable) = (Vec::new(), 0, Vec::new());
    for tool in &tools {
        let schema = tool.input_schema();
        let variants = argsgen::invalid_variants(&schema);
        if variants.is_empty() {
            untestable.push(no_variants(&tool.name, &schema));
            continue;
        }
        let mut found = Vec::new();
        let mut slow = None;
        for v in variants {
            let called = match call_variant(conn, ctx, tool, &v.arguments).await {
                Ok(called) => called,
                Err(why) => {
                    slow = Some(why);
                    break;
                }
            };
            let ok = match &called {
                Called::Result(r) => !v.must_reject || is_error(r),
                Called::Error { code, .. } => !v.must_reject || *code == -32602,
                // An HTTP refusal (e.g. 413 for a body over the server's limit) is an
                // answer: fine for a value the schema allows, a finding otherwise.
                Called::Http(status, _) => !v.must_reject && *status < 500,
                Called::Crashed(_) | Called::TimedOut(_) | Called::Broken(_) => false,
            };
            if ok {
                continue;
            }
            let (what, expected) = if v.must_reject {
                (
                    if called.is_success() {
                        "succeeded, ignoring its inputSchema".to_string()
                    } else {
                        called.describe()
                    },
                    "a tool result with isError: true or a -32602 error",
                )
            } else {
                (
                    called.describe(),
                    "any answer (the schema allows this value): no crash, no hang",
                )
            };
            found.push(Finding::new(
                format!("tool \"{}\", {}: {what}", tool.name, v.label),
                expected,
                called.describe(),
            ));
            if called.is_fatal() || conn.is_broken() {
                findings.append(&mut found);
                findings.push(Finding {
                    message: "the remaining variants were not sent: the server is gone".into(),
                    expected: None,
                    actual: None,
                });
                return Ok(Findings::Fail(findings));
            }
        }
        match slow {
            Some(why) => untestable.push(why),
            None => {
                judged += 1;
                findings.append(&mut found);
            }
        }
    }
    Ok(conclude(conn, findings, judged, untestable))
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

    #[test]
    fn mirrored_text_is_found() {
        let result = json!({"content": [{"type": "text", "text": "{\"sum\": 3}"}]});
        assert!(mirrored(&result, &json!({"sum": 3})));
        assert!(!mirrored(&result, &json!({"sum": 4})));
    }

    #[test]
    fn schema_errors_name_the_path() {
        let schema = json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]});
        assert!(schema_errors(&schema, &json!({"sum": 1})).is_none());
        let errors = schema_errors(&schema, &json!({"sum": "x"})).unwrap();
        assert!(errors[0].starts_with("at /sum:"), "{errors:?}");
    }
}
