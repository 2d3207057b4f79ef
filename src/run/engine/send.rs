//! Running one step: render its message against the variables, send it (paginating,
//! on a fresh connection, or overlapped with the judging of the step before), then hand
//! the exchange to `judge`. Built-in checks and contract steps go their own way.

mod build;
mod contract;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::checks::CheckState;
use super::judge::{Deferred, Judgement, StepRun, judge, null_error_id, wrong_error_id};
use crate::language::assert::{self, ExpectOutcome, Observed};
use crate::language::dsl::scenario::expect::ExpectKind;
use crate::language::dsl::{Action, Step};
use crate::protocol::{ListKind, errors, methods};
use crate::results::exchange::Exchange;
use crate::results::outcome::Outcome;
use crate::run::client::{Connection, TransportError};

use build::{Built, build, template_error};
use contract::contract_check;

/// stdio: how long a step checking `noResponse` watches for an unwanted reply to a
/// message that expects none (a notification).
const NO_RESPONSE_WINDOW: Duration = Duration::from_millis(100);

/// `within`: how long one listen lasts before the pending expectations are judged again.
const LISTEN_SLICE: Duration = Duration::from_millis(25);

/// Run one step: render, send, judge, capture.
pub(super) async fn run_step<'s>(
    step: &'s Step,
    conn: &mut Connection,
    ctx_value: &Arc<Value>,
    ctx: &mut Map<String, Value>,
    params: &Map<String, Value>,
    checks: &mut CheckState<'_>,
    earlier: &mut Deferred<'_>,
) -> StepRun<'s> {
    use StepRun::Done;
    // Only a plain send overlaps the judging of the step before; anything else judges it first.
    let plain_send = matches!(
        step.action,
        Action::Request {
            paginate: false,
            task: None,
            ..
        } | Action::Notification { .. }
            | Action::Raw { fresh: false, .. }
    );
    if !plain_send {
        earlier.flush();
    }
    if matches!(step.action, Action::Handshake) {
        let Some(result) = conn.negotiated.handshake.clone() else {
            return Done(Outcome::Error {
                message: "the connection has no handshake result".into(),
                detail: None,
            });
        };
        // The handshake's result is judged as it is: no exchange, no envelope.
        let exchange = Exchange::default();
        let snapshots = &checks.snapshots;
        let (outcome, notes) = judge(
            step,
            conn,
            &exchange,
            Some(&result),
            snapshots,
            ctx,
            ctx_value,
            None,
        )
        .await;
        return StepRun::Judged(outcome, notes);
    }
    if let Action::Check {
        kind,
        method,
        options,
    } = &step.action
    {
        let input = super::checks::CheckInput {
            method,
            options,
            vars: ctx,
            params,
        };
        return Done(super::checks::run(step, conn, *kind, &input, checks).await);
    }
    if let Action::Contract { baseline, rules } = &step.action {
        return Done(contract_check(step, conn, baseline, rules).await);
    }
    if let Action::Roots(roots) = &step.action
        && let Some(done) = change_roots(step, conn, roots, ctx_value)
    {
        return Done(done);
    }
    let timeout = step.timeout.unwrap_or(conn.target().timeout);
    let task = match &step.action {
        Action::Request { task: Some(t), .. } => Some(t),
        _ => None,
    };
    if task.is_some() && conn.negotiated.kind == crate::protocol::era::EraKind::Modern {
        return Done(Outcome::Skipped {
            reason: format!(
                "a task step needs the 2025-11-25 tasks utility; 2026-07-28 moved tasks to the `{}` extension (server-directed, `resultType: \"task\"`, `tasks/update`), which the pinned 2026-07-28 schema only names as an example extension key and mcpspec does not speak",
                crate::protocol::tasks::MODERN_EXTENSION
            ),
        });
    }
    // Modern HTTP: `Mcp-Param-*` headers need the tool's inputSchema; fetch the list once.
    if conn.is_http()
        && conn.negotiated.kind == crate::protocol::era::EraKind::Modern
        && matches!(&step.action, Action::Request { method, .. } if method == methods::TOOLS_CALL)
        && !conn.knows_tools()
    {
        let _ = conn.tools().await;
    }
    let mut built = match build(step, conn, ctx_value, timeout) {
        Ok(x) => x,
        Err(e) => {
            return Done(Outcome::Error {
                message: e,
                detail: None,
            });
        }
    };
    if step
        .expects
        .iter()
        .any(|e| matches!(e.kind, ExpectKind::NoResponse(_)))
    {
        built.out.quiet_period = NO_RESPONSE_WINDOW;
    }
    let paginate = matches!(step.action, Action::Request { paginate: true, .. });
    let fresh = matches!(step.action, Action::Raw { fresh: true, .. });
    // An answer due at once: a harmless request first, and a wait in the server's speed.
    let prompt = if !fresh && !paginate && task.is_none() && answered_at_once(step) {
        conn.prompt_wait(timeout).await
    } else {
        None
    };
    if let Some(p) = &prompt {
        built.out.timeout = p.wait;
    }
    // Judged later (with the response parsed then), or now.
    let defer = earlier.may_defer(step);
    // `Err(Ok(_))`: a transport error; `Err(Err(_))`: pagination or input rounds broke.
    // With pagination, also the merged result the step is judged on.
    let exchange = if fresh {
        conn.send_fresh(&built.out)
            .await
            .map(|ex| (ex, None))
            .map_err(Ok)
    } else if paginate {
        paginate_all(conn, &built, timeout).await.map_err(Err)
    } else if let Some(run) = task {
        let bounds = super::tasks::Bounds {
            timeout,
            started: Instant::now(),
            after_terminal: 0,
        };
        match conn.send(&built.out).await {
            Ok(created) => super::tasks::carry(conn, created, run, &bounds)
                .await
                .map(|ex| (ex, None))
                .map_err(Err),
            Err(e) => Err(Ok(e)),
        }
    } else {
        send_carrying(step, conn, &built, defer, timeout, earlier)
            .await
            .map(|ex| (ex, None))
    };
    earlier.flush();
    let (exchange, merged) = match exchange {
        Ok(x) => x,
        Err(Ok(TransportError::WrongId {
            expected,
            got,
            error: Some(error),
        })) => return Done(wrong_error_id(step, &expected, &got, &error)),
        Err(e) => {
            // A model that could not answer the server is why the step failed.
            if let Some(why) = conn.answerer().and_then(|a| a.take_failure()) {
                return Done(Outcome::Error {
                    message: why,
                    detail: None,
                });
            }
            // What the server wrote instead of a reply, then its stderr tail.
            let tail = conn.stderr_tail().await;
            let detail: Vec<String> = conn
                .take_unanswered()
                .into_iter()
                .chain(tail.map(|t| format!("server stderr (last lines):\n{t}")))
                .collect();
            let message = match (&e, &prompt) {
                (Ok(TransportError::Timeout(d)), Some(p)) => p.timed_out(*d, &due_at_once(step)),
                _ => e.map_or_else(|s| s, |t| t.to_string()),
            };
            return Done(Outcome::Error {
                message,
                detail: (!detail.is_empty()).then(|| detail.join("\n")),
            });
        }
    };
    let mut exchange = exchange;
    // A fresh connection is gone: nothing more arrives on it.
    if !fresh {
        collect_late_notifications(step, conn, &mut exchange, ctx_value).await;
    }
    if let Some(why) = conn.answerer().and_then(|a| a.take_failure()) {
        return Done(Outcome::Error {
            message: why,
            detail: None,
        });
    }
    if let Some(outcome) = null_error_id(step, &built.out, &exchange) {
        return Done(outcome);
    }
    // A fresh process that printed a banner and then answered: the answer is judged, the
    // noise noted — it is `stdout_clean`'s to judge, not this step's rule (a failed version
    // negotiation, say, when the step probes one).
    if fresh
        && (exchange.response.is_some() || exchange.response_text.is_some())
        && let Some(noise) = exchange.stdout_noise.first()
    {
        conn.note(format!(
            "stdout noise on the fresh connection ({} non-JSON line(s), first: `{noise}`): judged by stdout_clean, not by this step",
            exchange.stdout_noise.len()
        ));
    } else if let Some(noise) = exchange.stdout_noise.first() {
        let mut lines: Vec<&str> = exchange.stdout_noise.iter().map(String::as_str).collect();
        let more = format!("… ({} more not kept)", exchange.stdout_noise.dropped());
        if exchange.stdout_noise.dropped() > 0 {
            lines.insert(crate::results::exchange::KEPT_EACH_END, &more);
        }
        return Done(Outcome::Error {
            message: format!("the server wrote non-JSON to stdout: `{noise}`"),
            detail: Some(format!(
                "stdout must carry only JSON-RPC messages; {} non-JSON line(s) seen:\n{}",
                exchange.stdout_noise.len(),
                lines.join("\n")
            )),
        });
    }
    if defer {
        return StepRun::Deferred(Box::new(Judgement {
            step,
            exchange,
            is_http: conn.is_http(),
            ctx_value: ctx_value.clone(),
            snapshots: checks.snapshots.clone(),
        }));
    }
    let (outcome, notes) = judge(
        step,
        conn,
        &exchange,
        merged.as_ref(),
        &checks.snapshots,
        ctx,
        ctx_value,
        Some((&built.method, built.params.as_deref())),
    )
    .await;
    StepRun::Judged(outcome, notes)
}

/// Whether the spec wants `step`'s request answered at once: a request for a method no
/// server serves (the packs' made-up `mcpspec/` methods), or one expected to get only
/// errors a server gives without any work ([`errors::ANSWERED_AT_ONCE`]: malformed input,
/// an unknown method, invalid params).
fn answered_at_once(step: &Step) -> bool {
    let unknown = matches!(&step.action, Action::Request { method, .. }
        if method.starts_with(errors::UNKNOWN_METHOD_PREFIX));
    let sends = matches!(
        step.action,
        Action::Request { .. } | Action::Raw { fresh: false, .. }
    );
    let codes_at_once = step.expects.iter().any(|e| {
        matches!(&e.kind, ExpectKind::Error { code: Some(code), .. }
            if code.codes().iter().all(|c| errors::ANSWERED_AT_ONCE.contains(c)))
    });
    sends && step.retry.is_none() && (unknown || codes_at_once)
}

/// What `step` expects answered at once, for the message of a timeout.
fn due_at_once(step: &Step) -> String {
    match &step.action {
        Action::Request { method, .. } if method.starts_with(errors::UNKNOWN_METHOD_PREFIX) => {
            format!("an unknown method (`{method}`)")
        }
        Action::Request { method, .. } => format!("a `{method}` expected to get a protocol error"),
        _ => "a malformed message".to_string(),
    }
}

/// A `roots` step: the client answers later roots requests with the new list. Legacy, with
/// `roots.listChanged` declared, the step goes on to send `notifications/roots/list_changed`
/// (`None`); otherwise it is done here.
fn change_roots(
    step: &Step,
    conn: &mut Connection,
    roots: &crate::language::dsl::Roots,
    ctx: &Value,
) -> Option<Outcome> {
    let error = |message: String| {
        Some(Outcome::Error {
            message,
            detail: None,
        })
    };
    let Some(answerer) = conn.answerer() else {
        return error("the scenario declares no client, so it has no roots to change".into());
    };
    if !answerer.client_declares_roots() {
        return error("the scenario's client does not declare `roots`".into());
    }
    let rendered = match crate::run::client::answers::render_roots(roots, ctx) {
        Ok(r) => r,
        Err((line, col, e)) => return error(template_error(step, line, col, &e)),
    };
    let uris: Vec<String> = rendered
        .iter()
        .map(|r| {
            r.get("uri").map_or_else(String::new, |u| match u {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        })
        .collect();
    let notify = answerer.roots_list_changed();
    answerer.change_roots(rendered);
    let changed = format!("the client's roots are now [{}]", uris.join(", "));
    let legacy = conn.negotiated.kind == crate::protocol::era::EraKind::Legacy;
    if legacy && notify {
        conn.note(format!(
            "{changed}; `{}` sent",
            methods::NOTIFICATIONS_ROOTS_LIST_CHANGED
        ));
        return None;
    }
    conn.note(if legacy {
        format!(
            "{changed}; no `{}` sent: the client does not declare `roots.listChanged` (later `roots/list` requests get the new list)",
            methods::NOTIFICATIONS_ROOTS_LIST_CHANGED
        )
    } else {
        format!("{changed}: the next roots input request is answered with them (2026-07-28 has no notification)")
    });
    Some(Outcome::Passed)
}

/// Send the step's message, overlapped with the judging of the step before. With a client
/// that answers, a request step's `input_required` result is carried to its end
/// ([`super::mrtr`]); a raw message stays as written.
async fn send_carrying(
    step: &Step,
    conn: &mut Connection,
    built: &Built<'_>,
    defer: bool,
    timeout: Duration,
    earlier: &mut Deferred<'_>,
) -> Result<Exchange, Result<TransportError, String>> {
    let started = Instant::now();
    let mut ex = conn
        .send_overlapped(&built.out, defer, || earlier.flush())
        .await
        .map_err(Ok)?;
    if conn.answerer().is_none() || !matches!(step.action, Action::Request { .. }) {
        return Ok(ex);
    }
    ex.settle();
    if !super::mrtr::applies(conn, &built.method, &ex) {
        return Ok(ex);
    }
    let first = super::mrtr::FirstRequest {
        method: &built.method,
        params: built.params.as_deref(),
        meta: &built.meta,
        headers: &built.headers,
        timeout,
        started,
    };
    super::mrtr::carry(conn, &first, ex).await.map_err(Err)
}

/// `within`: while a `notifications` expectation that has one does not hold yet, listen
/// for what the server sends after its reply (stdio), each up to its own `within`.
async fn collect_late_notifications(
    step: &Step,
    conn: &mut Connection,
    exchange: &mut Exchange,
    ctx: &Value,
) {
    let waiting: Vec<(&crate::language::dsl::scenario::expect::Expect, Duration)> = step
        .expects
        .iter()
        .filter_map(|e| match &e.kind {
            ExpectKind::Notifications {
                within: Some(w), ..
            } => Some((e, *w)),
            _ => None,
        })
        .collect();
    if waiting.is_empty() || conn.is_http() {
        return;
    }
    let started = Instant::now();
    loop {
        let elapsed = started.elapsed();
        let pending = waiting.iter().filter(|(e, w)| {
            elapsed < *w
                && !matches!(
                    assert::check(e, &Observed::new(exchange, false), ctx),
                    ExpectOutcome::Pass
                )
        });
        let Some(left) = pending.map(|(_, w)| *w - elapsed).max() else {
            return;
        };
        match conn.listen(left.min(LISTEN_SLICE)).await {
            Ok(messages) => exchange.other_messages.extend(messages),
            Err(e) => {
                conn.note(format!("listening for notifications after the reply: {e}"));
                return;
            }
        }
    }
}

/// Follow `nextCursor` to the end. The step is judged on the merged list (the last page's
/// result with every page's items), next to the last page's exchange; a page that is not
/// a result ends the walk and is judged as it came.
async fn paginate_all(
    conn: &mut Connection,
    built: &Built<'_>,
    timeout: Duration,
) -> Result<(Exchange, Option<Value>), String> {
    let (method, params) = (built.method.as_ref(), built.params.as_deref());
    let Some(key) = ListKind::from_method(method).map(ListKind::result_key) else {
        return Err(format!(
            "`paginate` applies to list methods, not `{method}`"
        ));
    };
    let mut ex = conn.send(&built.out).await.map_err(|e| e.to_string())?;
    let mut merged: Vec<Value> = Vec::new();
    let mut walk = crate::protocol::fields::Pages::new();
    // The merged exchange takes as long as all its pages (a `duration` expectation).
    let mut earlier_pages = std::time::Duration::ZERO;
    loop {
        ex.elapsed += earlier_pages;
        let Some(result) = ex.response.as_ref().and_then(|r| r.get("result")).cloned() else {
            return Ok((ex, None));
        };
        if let Some(items) = result.get(key).and_then(Value::as_array) {
            merged.extend(items.iter().cloned());
        }
        let Some(cursor) = walk.after(method, &result)? else {
            let mut result = result;
            if let Some(obj) = result.as_object_mut() {
                obj.insert(key.into(), Value::Array(std::mem::take(&mut merged)));
            }
            return Ok((ex, Some(result)));
        };
        let mut p = match params {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        p.insert(crate::protocol::fields::CURSOR.into(), cursor);
        earlier_pages = ex.elapsed;
        let id = conn.next_id();
        let out = conn.build(
            method,
            Some(Value::Object(p)),
            Some(id),
            &built.meta,
            &built.headers,
            timeout,
        );
        ex = conn.send(&out).await.map_err(|e| e.to_string())?;
    }
}
