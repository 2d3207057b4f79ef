//! Undeclared logging (`log_messages_absent`): "Servers that emit log message notifications
//! MUST declare the `logging` capability" (server/utilities/logging, Capabilities, in every
//! revision from 2024-11-05 to 2026-07-28). The check provokes what a server may log
//! about: a harmless request, each declared list, and each tool it may call (read-only or
//! `safe_tools`) with example arguments; in the modern era every request also asks for
//! `logLevel: debug`, so a server that logs only when asked is seen too.
//!
//! What the server sends around malformed input counts too: the parse-error probe's
//! connection (a request cut short, on a connection of its own) and the invalid-request
//! probe's (JSON that is no valid Request object) are judged like this one, and so is every
//! log message the scenario's connection received before the check (the handshake, earlier
//! steps) — and so is what every other scenario's connection of the run received (their
//! scenario runs before this check's: `CheckKind::judges_run`), one finding per scenario:
//! every message a server sends, on any connection of the run, goes through the
//! judgement.
//!
//! The other notifications bound to a capability (list changes without the list's
//! `listChanged`, resource updates without `resources.subscribe`) are judged the same way
//! across the run's connections by [`undeclared_notifications_absent`].
//!
//! The tool calls are sent by this check, not taken from the run's shared answers: log
//! messages travel with a call's own reply (stdio: the lines before it; HTTP: its SSE
//! stream), which a shared answer made on another connection does not carry.

use indexmap::IndexMap;
use serde_json::{Value, json};

use super::calls::{CallCtx, allowed_tools};
use super::outcome::CheckOutcome;
use crate::protocol::era::EraKind;
use crate::protocol::{ListKind, methods};
use crate::results::outcome::Finding;
use crate::run::argsgen;
use crate::run::client::{Connection, TransportError};
use crate::run::engine::pool::SeenOn;

/// The log messages a probe's own connection received, and where.
pub struct Probed<'a> {
    /// What was sent there, for the failure ("the first with …").
    pub during: &'static str,
    /// `Err`: the probe did not run, and why.
    pub logs: Result<&'a [Value], &'a str>,
}

pub async fn log_messages_absent(
    conn: &mut Connection,
    ctx: &CallCtx<'_>,
    probed: &[Probed<'_>],
    others: &[SeenOn],
) -> Result<CheckOutcome, String> {
    // What the connection received before the check's own requests.
    let earlier = conn.logs_seen().clone();
    let mut requests: Vec<(String, Option<Value>)> = vec![(conn.harmless_method().into(), None)];
    for list in ListKind::ALL {
        if crate::language::dsl::scenario::capability_declared(
            &conn.negotiated.capabilities,
            list.capability(),
        ) {
            requests.push((list.method().into(), None));
        }
    }
    match allowed_tools(conn, ctx).await? {
        Ok(tools) => requests.extend(tools.iter().filter_map(|tool| {
            let arguments = argsgen::example(&tool.input_schema())?;
            Some((
                methods::TOOLS_CALL.to_string(),
                Some(json!({"name": tool.name, "arguments": arguments})),
            ))
        })),
        Err(CheckOutcome::Skip(why)) => conn.note(format!("no tool called: {why}")),
        Err(other) => return Ok(other),
    }
    let meta: IndexMap<String, Value> = match conn.negotiated.kind {
        EraKind::Modern => IndexMap::from([("logLevel".to_string(), json!("debug"))]),
        EraKind::Legacy => IndexMap::new(),
    };
    let mut count = 0;
    let mut first: Option<(String, Value)> = None;
    for (method, params) in requests {
        let what = match params.as_ref().and_then(|p| p.get("name")) {
            Some(name) => format!("{method} {name}"),
            None => method.clone(),
        };
        let id = conn.next_id();
        let out = conn.build(
            &method,
            params,
            Some(id),
            &meta,
            &IndexMap::new(),
            ctx.timeout,
        );
        let ex = match conn.send(&out).await {
            Ok(ex) => ex,
            Err(TransportError::Timeout(_)) if !conn.is_broken() => {
                conn.note(format!(
                    "`{what}` did not answer in time; the check goes on"
                ));
                continue;
            }
            Err(e) if count == 0 => return Err(format!("`{what}` failed: {e}")),
            Err(e) => {
                conn.note(format!("`{what}` failed: {e}"));
                break;
            }
        };
        let logs = ex.other_messages.count(methods::NOTIFICATIONS_MESSAGE);
        count += logs;
        if logs > 0 && first.is_none() {
            let msg = ex.other_messages.iter().find(|m| {
                m.get("method").and_then(Value::as_str) == Some(methods::NOTIFICATIONS_MESSAGE)
            });
            first = msg.map(|m| (what, m.clone()));
        }
    }
    if earlier.count > 0 {
        count += earlier.count;
        if let (None, Some(msg)) = (&first, earlier.first) {
            first = Some((
                "an earlier exchange on this connection (before this check)".into(),
                msg,
            ));
        }
    }
    for probe in probed {
        match probe.logs {
            Ok(logs) => {
                count += logs.len();
                if let (None, Some(msg)) = (&first, logs.first()) {
                    first = Some((probe.during.into(), msg.clone()));
                }
            }
            Err(e) => conn.note(format!("not sent: {}: {e}", probe.during)),
        }
    }
    let mut findings = Vec::new();
    if count > 0 {
        let (during, msg) = first.map_or((String::new(), None), |(w, m)| (w, Some(m)));
        findings.push(Finding {
            message: format!(
                "the server sent {count} notifications/message without declaring the `logging` capability (the first with `{during}`)"
            ),
            expected: Some(NO_LOGGING.into()),
            actual: msg.map(|m| crate::language::assert::compact(&m, 500)),
        });
    }
    findings.extend(on_other_connections(others, |method| {
        method == methods::NOTIFICATIONS_MESSAGE
    }));
    Ok(if findings.is_empty() {
        CheckOutcome::Pass
    } else {
        CheckOutcome::Fail(findings)
    })
}

const NO_LOGGING: &str = "no notifications/message: the server does not declare `logging`";

/// One finding per scenario and notification (those `judged` picks) that another
/// scenario's connection received without its capability declared.
fn on_other_connections(others: &[SeenOn], judged: impl Fn(&str) -> bool) -> Vec<Finding> {
    let mut findings = Vec::new();
    for other in others {
        for (method, capability, seen) in &other.undeclared {
            if !judged(method) || seen.count == 0 {
                continue;
            }
            findings.push(Finding {
                message: format!(
                    "{}: its connection received {} {method} without the server declaring `{capability}`",
                    other.item, seen.count
                ),
                expected: Some(format!(
                    "no {method}: the server does not declare `{capability}`"
                )),
                actual: seen
                    .first
                    .as_ref()
                    .map(|m| crate::language::assert::compact(m, 500)),
            });
        }
    }
    findings
}

/// No list change without the list's `listChanged` and no resource update without
/// `resources.subscribe`, on this connection (its scenario so far) or any other scenario's
/// of the run in this era (they all ran before it): basic/lifecycle Operation, "Both
/// parties SHOULD … only use capabilities that were successfully negotiated" — the server
/// is the party that uses the capability when it sends the notification.
pub fn undeclared_notifications_absent(conn: &Connection, others: &[SeenOn]) -> CheckOutcome {
    let is_judged = |method: &str| method != methods::NOTIFICATIONS_MESSAGE;
    let own = SeenOn {
        item: "this scenario".into(),
        kind: conn.negotiated.kind,
        undeclared: conn
            .seen()
            .by_method
            .iter()
            .filter_map(|(method, seen)| {
                let (_, capability) = methods::CAPABILITY_BOUND
                    .iter()
                    .find(|(m, _)| m == method)?;
                (!crate::language::dsl::scenario::capability_declared(
                    &conn.negotiated.capabilities,
                    capability,
                ))
                .then(|| (*method, *capability, seen.clone()))
            })
            .collect(),
    };
    let findings = on_other_connections(std::slice::from_ref(&own), is_judged)
        .into_iter()
        .chain(on_other_connections(others, is_judged))
        .collect::<Vec<_>>();
    if findings.is_empty() {
        CheckOutcome::Pass
    } else {
        CheckOutcome::Fail(findings)
    }
}
