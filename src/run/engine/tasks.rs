//! Task steps (2025-11-25 `basic/utilities/tasks`): a `tools/call` sent with `task: {ttl}`
//! is answered at once with a `CreateTaskResult`; mcpspec polls `tasks/get` (at the
//! server's `pollInterval`, held within sane bounds, else the step's) until a terminal
//! status, or cancels it first (`tasks/cancel`), then fetches `tasks/result` for a task that
//! completed or failed. Every status seen goes in `Exchange::task_statuses`; the step's
//! timeout covers the call, every poll and every pause, and `maxPolls` bounds the polls.
//!
//! A task in `input_required` ("Input Required Status": "When the requestor encounters the
//! `input_required` status, it SHOULD preemptively call `tasks/result`") gets its
//! `tasks/result` at once: the server sends its requests (tied to the task by
//! `io.modelcontextprotocol/related-task`) while that request is in flight, and the
//! connection answers them from the scenario's script like any server request. A
//! `tasks/result` "MUST block the response until the task reaches a terminal status", so
//! its answer is the task's result; the polls then go on to see the terminal status. The
//! server's requests seen on any of the task's exchanges are the step's (`asked:`).

use std::time::{Duration, Instant};

use indexmap::IndexMap;
use serde_json::{Value, json};

use crate::language::dsl::TaskRun;
use crate::language::dsl::limits::TASK_POLL_INTERVAL;
use crate::protocol::tasks::{self, TASK_ID};
use crate::results::exchange::Exchange;
use crate::run::client::{Connection, TransportError};

/// What bounds carrying a task: the step's time, from when the call was sent.
pub struct Bounds {
    pub timeout: Duration,
    pub started: Instant,
    /// `tasks/get` polls after the terminal status, to see that it stays (the
    /// `task_status_forward` check; a step stops at the terminal status).
    pub after_terminal: u32,
}

fn result_of(ex: &Exchange) -> Option<&Value> {
    ex.response.as_ref().and_then(|r| r.get("result"))
}

/// `params` with `task: {ttl?}` added (the task-augmented request).
pub fn augmented(params: Option<&Value>, run: &TaskRun) -> Value {
    let mut p = match params {
        Some(Value::Object(m)) => m.clone(),
        _ => serde_json::Map::new(),
    };
    let metadata = match run.ttl {
        Some(ttl) => json!({ tasks::TTL: ttl }),
        None => json!({}),
    };
    p.insert(tasks::TASK.into(), metadata);
    Value::Object(p)
}

/// Statuses as the error messages show them: `working ×3, completed`.
pub fn describe(statuses: &[String]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < statuses.len() {
        let n = statuses[i..]
            .iter()
            .take_while(|s| **s == statuses[i])
            .count();
        out.push(if n > 1 {
            format!("{} ×{n}", statuses[i])
        } else {
            statuses[i].clone()
        });
        i += n;
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(", ")
    }
}

/// Carry a task to its end from the exchange that created it. A result that is not a
/// `CreateTaskResult` (the server ran the call plainly, or refused it) is returned as it
/// came, with a note.
pub async fn carry(
    conn: &mut Connection,
    created: Exchange,
    run: &TaskRun,
    bounds: &Bounds,
) -> Result<Exchange, String> {
    let Some(task) = result_of(&created)
        .and_then(|r| r.get(tasks::TASK))
        .and_then(tasks::task_of)
        .cloned()
    else {
        if result_of(&created).is_some() {
            conn.note(
                "the task-augmented call was answered with a plain result, not a CreateTaskResult"
                    .into(),
            );
        }
        return Ok(created);
    };
    let id = task.get(TASK_ID).cloned().unwrap_or(Value::Null);
    let mut statuses: Vec<String> = Vec::new();
    let seen = |task: &Value, statuses: &mut Vec<String>| {
        let status = tasks::status_of(task).unwrap_or("(none)").to_string();
        statuses.push(status.clone());
        status
    };
    let mut status = seen(&task, &mut statuses);
    let mut interval = poll_interval(&task, run);
    let mut elapsed = created.elapsed;
    let mut last = created;
    let id_text = id.as_str().unwrap_or("?").to_string();
    // The server's messages on the task's exchanges before the last (its requests are
    // the step's, wherever they came).
    let mut earlier = crate::results::exchange::Received::default();
    if run.cancel && !tasks::is_terminal(&status) {
        let ex = ask(conn, tasks::TASKS_CANCEL, &id, bounds, &statuses, &id_text).await?;
        elapsed += ex.elapsed;
        if let Some(t) = result_of(&ex).and_then(tasks::task_of) {
            status = seen(t, &mut statuses);
        }
        earlier.extend(std::mem::take(&mut last.other_messages).iter().cloned());
        last = ex;
    }
    let mut polls = 0u32;
    let mut after = 0u32;
    // The `tasks/result` sent for the current `input_required`, and its answer.
    let mut fetched: Option<Exchange> = None;
    let mut fetched_for_input = false;
    while !tasks::is_terminal(&status) || after < bounds.after_terminal {
        if status == tasks::INPUT_REQUIRED && !fetched_for_input {
            fetched_for_input = true;
            earlier.extend(std::mem::take(&mut last.other_messages).iter().cloned());
            let mut ex = ask(conn, tasks::TASKS_RESULT, &id, bounds, &statuses, &id_text).await?;
            elapsed += ex.elapsed;
            earlier.extend(std::mem::take(&mut ex.other_messages).iter().cloned());
            fetched = Some(ex);
        }
        if tasks::is_terminal(&status) {
            after += 1;
        } else {
            polls += 1;
            if polls > run.max_polls {
                return Err(format!(
                    "the task `{id_text}` did not end within maxPolls ({}) `tasks/get` polls; statuses seen: {}",
                    run.max_polls,
                    describe(&statuses)
                ));
            }
        }
        let left = bounds.timeout.saturating_sub(bounds.started.elapsed());
        if left <= interval {
            return Err(out_of_time(bounds, &id_text, &statuses));
        }
        tokio::time::sleep(interval).await;
        let ex = ask(conn, tasks::TASKS_GET, &id, bounds, &statuses, &id_text).await?;
        elapsed += ex.elapsed + interval;
        match result_of(&ex).and_then(tasks::task_of) {
            Some(t) => {
                interval = poll_interval(t, run);
                status = seen(t, &mut statuses);
                if status != tasks::INPUT_REQUIRED {
                    fetched_for_input = false;
                }
            }
            None => {
                let got = ex
                    .response
                    .as_ref()
                    .map(|r| crate::language::assert::compact(r, 300))
                    .unwrap_or_else(|| "no response".into());
                return Err(format!(
                    "`tasks/get` for task `{id_text}` answered no task: {got}; statuses seen: {}",
                    describe(&statuses)
                ));
            }
        }
        earlier.extend(std::mem::take(&mut last.other_messages).iter().cloned());
        last = ex;
    }
    if matches!(status.as_str(), tasks::COMPLETED | tasks::FAILED) {
        earlier.extend(std::mem::take(&mut last.other_messages).iter().cloned());
        // The `tasks/result` of an `input_required` answered the task's result, unless it
        // answered an error (then it is asked again, now that the task has ended).
        last = match fetched.take().filter(|ex| result_of(ex).is_some()) {
            Some(ex) => ex,
            None => {
                let ex = ask(conn, tasks::TASKS_RESULT, &id, bounds, &statuses, &id_text).await?;
                elapsed += ex.elapsed;
                ex
            }
        };
    }
    earlier.extend(std::mem::take(&mut last.other_messages).iter().cloned());
    last.other_messages = earlier;
    last.elapsed = elapsed;
    last.task_statuses = statuses;
    Ok(last)
}

/// The server's `pollInterval` (ms) within [`TASK_POLL_INTERVAL`], else the step's.
fn poll_interval(task: &Value, run: &TaskRun) -> Duration {
    task.get(tasks::POLL_INTERVAL)
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .map(|d| d.clamp(*TASK_POLL_INTERVAL.start(), *TASK_POLL_INTERVAL.end()))
        .unwrap_or(run.poll_interval)
}

fn out_of_time(bounds: &Bounds, id: &str, statuses: &[String]) -> String {
    format!(
        "the task `{id}` did not end within the step's timeout ({}); statuses seen: {}",
        humantime::format_duration(bounds.timeout),
        describe(statuses)
    )
}

/// One `tasks/*` request about the task, within what is left of the step's time.
async fn ask(
    conn: &mut Connection,
    method: &str,
    id: &Value,
    bounds: &Bounds,
    statuses: &[String],
    id_text: &str,
) -> Result<Exchange, String> {
    let left = bounds.timeout.saturating_sub(bounds.started.elapsed());
    if left.is_zero() {
        return Err(out_of_time(bounds, id_text, statuses));
    }
    let request_id = conn.next_id();
    let out = conn.build(
        method,
        Some(json!({ TASK_ID: id })),
        Some(request_id),
        &IndexMap::new(),
        &IndexMap::new(),
        left,
    );
    let ex = conn.send(&out).await.map_err(|e| match e {
        TransportError::Timeout(_) => out_of_time(bounds, id_text, statuses),
        other => format!("`{method}` for task `{id_text}` failed: {other}"),
    })?;
    if let Some(error) = ex.response.as_ref().and_then(|r| r.get("error"))
        && method != tasks::TASKS_RESULT
    {
        return Err(format!(
            "`{method}` for task `{id_text}` answered an error: {}; statuses seen: {}",
            crate::language::assert::compact(error, 300),
            describe(statuses)
        ));
    }
    Ok(ex)
}
