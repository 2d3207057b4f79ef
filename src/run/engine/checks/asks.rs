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
use super::outcome::CheckOutcome;
use crate::protocol::era::EraKind;
use crate::protocol::fields::{self, INPUT_REQUESTS, REQUEST_STATE};
use crate::protocol::{elicitation, methods};
use crate::results::exchange::Exchange;
use crate::results::outcome::Finding;
use crate::run::argsgen;
use crate::run::client::{Connection, TransportError};
use crate::run::engine::mrtr::{self, Retry};

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
    params: &'a Value,
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
        let params = json!({"name": tool.name, "arguments": arguments});
        let started = Instant::now();
        let ex = match call(conn, ctx, &params).await {
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
            params: &params,
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

/// How a 2026-07-28 call ended: its final response's kind, for comparing two retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// A JSON-RPC error.
    Error,
    /// `input_required` again.
    Asked,
    /// A result with `isError: true`.
    ToolError,
    /// A final result.
    Done,
}

impl Ending {
    fn of(ex: &Exchange) -> Ending {
        let response = ex.response.as_ref();
        match response.and_then(|r| r.get("result")) {
            None => Ending::Error,
            Some(result) if fields::is_input_required(result) => Ending::Asked,
            Some(result) if result.get("isError") == Some(&Value::Bool(true)) => Ending::ToolError,
            Some(_) => Ending::Done,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Ending::Error => "a JSON-RPC error",
            Ending::Asked => "`input_required` again",
            Ending::ToolError => "a result with `isError: true`",
            Ending::Done => "a final result",
        }
    }
}

/// The key of the unasked response `extra_responses_ignored` adds.
const EXTRA_KEY: &str = "mcpspec-unasked";

/// 2026-07-28 `basic/patterns/mrtr` Error Handling: "If additional, unexpected parameters
/// are provided in the `InputResponses` object, the server SHOULD ignore any information it
/// does not recognize or need" (`extra_responses_ignored`). Each allowed tool answered
/// `input_required` is retried twice, each time from a call of its own: as the spec has it,
/// and with a response more under a key the server did not ask (`mcpspec-unasked`); both
/// must end alike.
pub async fn extra_responses_ignored(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<CheckOutcome, String> {
    let asking = match asking_tools(conn, ctx).await? {
        Ok(asking) => asking,
        Err(skip) => return Ok(skip),
    };
    let extra = Retry {
        extra_response: Some((EXTRA_KEY.into(), json!({"action": "cancel"}))),
        state: None,
    };
    let mut findings = Vec::new();
    for call in &asking {
        let Some(plain) = call.retry(conn, ctx, &call.result, &Retry::default()).await else {
            continue;
        };
        let Some(again) = call.ask_again(conn, ctx).await else {
            continue;
        };
        let Some(with_extra) = call.retry(conn, ctx, &again, &extra).await else {
            continue;
        };
        let (before, after) = (Ending::of(&plain), Ending::of(&with_extra));
        if before != after {
            findings.push(Finding::new(
                format!(
                    "`tools/call {}`: a retry with an input response the server did not ask for (`{EXTRA_KEY}`) ended in {}, the same retry without it in {}",
                    call.tool,
                    after.describe(),
                    before.describe()
                ),
                format!("the unasked response ignored: {}", before.describe()),
                response_text(&with_extra),
            ));
        }
    }
    Ok(verdict(None, findings))
}

/// 2026-07-28 `basic/patterns/mrtr` Server Requirements: "servers MUST treat
/// `requestState` as an attacker-controlled input. If `requestState` influences
/// authorization, resource access, or business logic, servers MUST protect its integrity
/// (e.g. HMAC or AEAD) and MUST reject state that fails verification"
/// (`request_state_tampered_refused`). Each allowed tool answered `input_required` with a
/// `requestState` is retried with the state altered (one character in its middle): an
/// error, `input_required` again or `isError` refuses it. A final result is a failure when
/// the state matters — the same retry without any state is not completed — and is let
/// pass otherwise (tampering then "can cause nothing worse than request failure").
pub async fn request_state_tampered_refused(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<CheckOutcome, String> {
    let asking = match asking_tools(conn, ctx).await? {
        Ok(asking) => asking,
        Err(skip) => return Ok(skip),
    };
    let mut findings = Vec::new();
    let mut judged = 0;
    for call in &asking {
        let Some(state) = call.result.get(REQUEST_STATE).and_then(Value::as_str) else {
            continue;
        };
        judged += 1;
        let tampered = tamper(state);
        let alter = Retry {
            extra_response: None,
            state: Some(Some(tampered.clone())),
        };
        let Some(ex) = call.retry(conn, ctx, &call.result, &alter).await else {
            continue;
        };
        if Ending::of(&ex) != Ending::Done {
            continue;
        }
        // Accepted: does the state matter at all?
        let Some(again) = call.ask_again(conn, ctx).await else {
            continue;
        };
        let stateless = Retry {
            extra_response: None,
            state: Some(None),
        };
        let Some(without) = call.retry(conn, ctx, &again, &stateless).await else {
            continue;
        };
        if Ending::of(&without) == Ending::Done {
            conn.note(format!(
                "`tools/call {}` completes without its requestState too: the state does not decide the result",
                call.tool
            ));
            continue;
        }
        findings.push(Finding::new(
            format!(
                "`tools/call {}`: a retry with its requestState altered ({} → {}) was completed, while the same retry without the state ended in {}",
                call.tool,
                crate::language::assert::compact(&json!(state), 80),
                crate::language::assert::compact(&json!(tampered), 80),
                Ending::of(&without).describe()
            ),
            "the altered state refused: an error, `input_required` again or `isError`".to_string(),
            response_text(&ex),
        ));
    }
    if judged == 0 {
        return Ok(CheckOutcome::Skip(
            "no allowed tool answered `input_required` with a requestState".into(),
        ));
    }
    Ok(verdict(None, findings))
}

/// `state` with one character in its middle changed (a base64 tail's padding bits would
/// not change the bytes).
fn tamper(state: &str) -> String {
    let chars: Vec<char> = state.chars().collect();
    let middle = chars.len() / 2;
    chars
        .iter()
        .enumerate()
        .map(|(i, &c)| match (i == middle, c) {
            (false, c) => c,
            (true, 'A') => 'B',
            (true, _) => 'A',
        })
        .collect()
}

/// A response, shortened for a finding.
fn response_text(ex: &Exchange) -> String {
    ex.response.as_ref().map_or_else(
        || "no response".to_string(),
        |r| crate::language::assert::compact(r, 500),
    )
}

/// One allowed tool whose call with example arguments was answered `input_required`.
struct Asking {
    tool: String,
    params: Value,
    /// The `input_required` result.
    result: Value,
}

impl Asking {
    fn first<'a>(&'a self, ctx: &CallCtx<'_>, no_extras: &'a NoExtras) -> mrtr::FirstRequest<'a> {
        mrtr::FirstRequest {
            method: methods::TOOLS_CALL,
            params: Some(&self.params),
            meta: &no_extras.0,
            headers: &no_extras.1,
            timeout: ctx.timeout,
            started: Instant::now(),
        }
    }

    /// One retry after `result`, altered as `alter` says; `None` (noted) if it failed.
    async fn retry(
        &self,
        conn: &mut Connection,
        ctx: &CallCtx<'_>,
        result: &Value,
        alter: &Retry,
    ) -> Option<Exchange> {
        let no_extras = NoExtras::default();
        let first = self.first(ctx, &no_extras);
        match mrtr::retry(conn, &first, result, alter, ctx.timeout).await {
            Ok(ex) => Some(ex),
            Err(e) => {
                conn.note(format!("`tools/call {}`: the retry failed: {e}", self.tool));
                None
            }
        }
    }

    /// The tool called again: its `input_required` result, or `None` (noted).
    async fn ask_again(&self, conn: &mut Connection, ctx: &CallCtx<'_>) -> Option<Value> {
        match call(conn, ctx, &self.params).await {
            Ok(ex) => match ex.response.as_ref().and_then(|r| r.get("result")) {
                Some(result) if fields::is_input_required(result) => Some(result.clone()),
                _ => {
                    conn.note(format!(
                        "`tools/call {}` called again was not answered `input_required`",
                        self.tool
                    ));
                    None
                }
            },
            Err(e) => {
                conn.note(format!("`tools/call {}` failed: {e}", self.tool));
                None
            }
        }
    }
}

/// No `_meta` extras and no headers beyond the connection's.
#[derive(Default)]
struct NoExtras(IndexMap<String, Value>, IndexMap<String, Option<String>>);

/// One `tools/call` with `params`.
async fn call(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
    params: &Value,
) -> Result<Exchange, TransportError> {
    let id = conn.next_id();
    let out = conn.build(
        methods::TOOLS_CALL,
        Some(params.clone()),
        Some(id),
        &IndexMap::new(),
        &IndexMap::new(),
        ctx.timeout,
    );
    conn.send(&out).await
}

/// Each allowed tool called once with example arguments, those answered `input_required`
/// (2026-07-28, a client that answers); `Err`: the check's skip.
async fn asking_tools(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
) -> Result<Result<Vec<Asking>, CheckOutcome>, String> {
    if conn.negotiated.kind != EraKind::Modern || conn.answerer().is_none() {
        return Ok(Err(CheckOutcome::Skip(
            "input_required rounds need the 2026-07-28 era and a client: that answers".into(),
        )));
    }
    let mut asking = Vec::new();
    let swept = sweep(conn, ctx, false, |called| {
        if let Some(result) = called.response.and_then(|r| r.get("result"))
            && fields::is_input_required(result)
        {
            asking.push(Asking {
                tool: called.tool.to_string(),
                params: called.params.clone(),
                result: result.clone(),
            });
        }
    })
    .await?;
    if let Some(skip) = swept {
        return Ok(Err(skip));
    }
    if asking.is_empty() {
        return Ok(Err(CheckOutcome::Skip(
            "no allowed tool answered `input_required` to a call with example arguments".into(),
        )));
    }
    Ok(Ok(asking))
}
