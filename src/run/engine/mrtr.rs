//! Multi round-trip requests (2026-07-28 `basic/patterns/mrtr`): a modern `tools/call`,
//! `prompts/get` or `resources/read` answered `input_required` is carried to its final
//! result from the scenario's `client:` answers. Each retry is a new request with a new
//! id: the original params, `inputResponses` under the keys asked, and the `requestState`
//! echoed exactly (only when one came). Bounded by `maxRounds` and by the step's timeout,
//! which covers every round.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::protocol::era::EraKind;
use crate::protocol::fields::{self, INPUT_REQUESTS, INPUT_RESPONSES, REQUEST_STATE};
use crate::protocol::methods;
use crate::results::exchange::Exchange;
use crate::run::client::{Connection, TransportError};

/// What the retries need of the step's first request.
pub(super) struct FirstRequest<'a> {
    pub method: &'a str,
    pub params: Option<&'a Value>,
    pub meta: &'a indexmap::IndexMap<String, Value>,
    pub headers: &'a indexmap::IndexMap<String, Option<String>>,
    pub timeout: Duration,
    pub started: Instant,
}

/// The result of an exchange, if it is one.
fn result_of(ex: &Exchange) -> Option<&Value> {
    ex.response.as_ref().and_then(|r| r.get("result"))
}

/// Whether the step's exchange is to be carried: a modern multi round-trip method, a
/// client that answers, and an `input_required` result.
pub(super) fn applies(conn: &Connection, method: &str, ex: &Exchange) -> bool {
    conn.negotiated.kind == EraKind::Modern
        && conn.answerer().is_some()
        && methods::MULTI_ROUND_TRIP.contains(&method)
        && result_of(ex).is_some_and(fields::is_input_required)
}

/// Retry until the result is final, `maxRounds` is exceeded, or the step's time is up.
/// The final exchange carries what was asked (`input_requests`) and the `rounds`.
pub(super) async fn carry(
    conn: &mut Connection,
    first: &FirstRequest<'_>,
    mut ex: Exchange,
) -> Result<Exchange, String> {
    let max_rounds = conn.answerer().map_or(1, |a| a.max_rounds());
    let mut asked: Vec<Value> = Vec::new();
    let mut rounds_seen: Vec<String> = Vec::new();
    let mut rounds = 0u32;
    let mut elapsed = Duration::ZERO;
    while let Some(result) = result_of(&ex)
        .filter(|r| fields::is_input_required(r))
        .cloned()
    {
        rounds += 1;
        let requests = result
            .get(INPUT_REQUESTS)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let keys: Vec<&str> = requests.keys().map(String::as_str).collect();
        rounds_seen.push(format!("round {rounds}: [{}]", keys.join(", ")));
        // `InputRequiredResult`: "At least one of the two fields MUST be present"; a retry
        // could answer nothing and echo nothing, so it would only ask the same again.
        if result.get(INPUT_REQUESTS).is_none() && result.get(REQUEST_STATE).is_none() {
            return Err(format!(
                "the server answered `input_required` with neither `{INPUT_REQUESTS}` nor `{REQUEST_STATE}` (at least one MUST be present), so there is nothing to answer or echo: {}",
                rounds_seen.join("; ")
            ));
        }
        for (key, request) in &requests {
            let mut entry = request.clone();
            if let Some(obj) = entry.as_object_mut() {
                obj.insert("key".into(), json!(key));
            }
            asked.push(entry);
        }
        if rounds > max_rounds {
            return Err(format!(
                "the server answered `input_required` {rounds} times, more than maxRounds ({max_rounds}): {}",
                rounds_seen.join("; ")
            ));
        }
        let out_of_time = || {
            format!(
                "the step's timeout ({}) ran out during the `input_required` rounds: {}",
                humantime::format_duration(first.timeout),
                rounds_seen.join("; ")
            )
        };
        let remaining = first.timeout.saturating_sub(first.started.elapsed());
        if remaining.is_zero() {
            return Err(out_of_time());
        }
        elapsed += ex.elapsed;
        ex = retry(conn, first, &result, &Retry::default(), remaining)
            .await
            .map_err(|e| match e {
                TransportError::Timeout(_) => out_of_time(),
                other => format!("the retry of round {rounds} failed: {other}"),
            })?;
    }
    ex.elapsed += elapsed;
    ex.input_requests = asked;
    ex.rounds = rounds;
    Ok(ex)
}

/// How a probe alters a retry (the default: as the spec has it).
#[derive(Debug, Default)]
pub(super) struct Retry {
    /// A response under a key the server did not ask for.
    pub extra_response: Option<(String, Value)>,
    /// The `requestState` sent instead of the one echoed (`Some(None)`: none at all).
    pub state: Option<Option<String>>,
}

/// One retry of the first request after the `input_required` `result`: the original
/// params, the client's answers under the keys asked, and the `requestState` echoed (or
/// as `alter` has it), with a new id.
pub(super) async fn retry(
    conn: &mut Connection,
    first: &FirstRequest<'_>,
    result: &Value,
    alter: &Retry,
    timeout: Duration,
) -> Result<Exchange, TransportError> {
    let requests = result
        .get(INPUT_REQUESTS)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut responses = answer_all(conn, &requests, timeout).await;
    if let Some((key, value)) = &alter.extra_response {
        responses.insert(key.clone(), value.clone());
    }
    let mut params = match first.params {
        Some(Value::Object(p)) => p.clone(),
        _ => Map::new(),
    };
    params.insert(INPUT_RESPONSES.into(), Value::Object(responses));
    let state = match &alter.state {
        Some(state) => state.clone().map(Value::String),
        None => result.get(REQUEST_STATE).cloned(),
    };
    match state {
        Some(state) => params.insert(REQUEST_STATE.into(), state),
        None => params.remove(REQUEST_STATE),
    };
    let id = conn.next_id();
    let out = conn.build(
        first.method,
        Some(Value::Object(params)),
        Some(id),
        first.meta,
        first.headers,
        timeout,
    );
    conn.send(&out).await
}

/// The client's answer to each input request, under its key: the result, or (a refusal)
/// the JSON-RPC error object.
async fn answer_all(
    conn: &mut Connection,
    requests: &Map<String, Value>,
    timeout: std::time::Duration,
) -> Map<String, Value> {
    let mut responses = Map::new();
    for (key, request) in requests {
        let Some(answerer) = conn.answerer_arc() else {
            continue;
        };
        let answered =
            crate::run::client::answers::answer_now(Some(&answerer), request, timeout, false).await;
        conn.note(format!("input request `{key}`: {}", answered.note));
        let value = match answered.outcome {
            Ok(result) => result,
            Err((code, message)) => json!({"code": code, "message": message}),
        };
        responses.insert(key.clone(), value);
    }
    responses
}
