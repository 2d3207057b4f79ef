//! The `subscriptions/listen` family of 2026-07-28: a long-lived request whose stream
//! carries the notifications the client opted in to (`SubscriptionFilter`).
//!
//! Each check opens one listen request through the client's open-request facility
//! ([`crate::run::client::open`]), reads it with deadlines, and cancels it — over stdio with
//! `notifications/cancelled`, over HTTP by closing the stream. A real change to watch for
//! comes from the `list_change_tool` parameter: a tool whose call adds or removes a tool.
//!
//! Facts checked (schema 2026-07-28 `SubscriptionsAcknowledgedNotification`,
//! `SubscriptionFilter`, `NotificationMetaObject`; basic/transports):
//! - the first message carrying the subscription's id is
//!   `notifications/subscriptions/acknowledged`, whose `notifications` is a subset of the
//!   request's filter, with `_meta` `io.modelcontextprotocol/subscriptionId` = the listen id;
//! - the server never sends notification types that were not requested;
//! - a requested `list_changed` arrives after a real change;
//! - after `notifications/cancelled` (stdio) nothing more arrives on the subscription.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::outcome::CheckOutcome;
use crate::language::dsl::document::check::CheckKind;
use crate::protocol::{ListKind, meta, methods};
use crate::results::outcome::Finding;
use crate::run::client::{Connection, OpenRequest, StreamItem, deadline_after};

/// The parameter naming the tool whose call changes the tools list.
pub const CHANGE_TOOL: &str = crate::language::dsl::document::check::LIST_CHANGE_TOOL;
/// How long to wait for the acknowledgement (at most the target's timeout).
const ACK_WAIT: Duration = Duration::from_secs(5);
/// How long to watch for unwanted notifications after a change (at most the target's
/// timeout): their absence is judged, so every passing run waits this long.
const WATCH: Duration = Duration::from_millis(600);
/// How long a wanted notification may take after a change (at most the target's timeout);
/// the wait ends as soon as it arrives.
const DELIVERY: Duration = Duration::from_secs(2);

pub(super) async fn run(
    conn: &mut Connection,
    kind: CheckKind,
    params: &Map<String, Value>,
) -> Result<CheckOutcome, String> {
    if conn.negotiated.kind != crate::protocol::era::EraKind::Modern {
        return Ok(CheckOutcome::Skip(
            "subscriptions/listen is a 2026-07-28 method; this connection is legacy".into(),
        ));
    }
    let declared = declared_filter(&conn.negotiated.capabilities);
    if declared.is_empty() {
        return Ok(CheckOutcome::Skip(
            "the server declares no listChanged capability (tools, prompts or resources): nothing to subscribe to".into(),
        ));
    }
    let trigger = params
        .get(CHANGE_TOOL)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    match kind {
        CheckKind::ListenAcknowledged => acknowledged(conn, &declared).await,
        CheckKind::ListenDeliversListChanged => match trigger {
            Some(tool) => delivers(conn, &declared, tool).await,
            None => Ok(unset()),
        },
        CheckKind::ListenOnlyRequested => match trigger {
            Some(tool) => only_requested(conn, &declared, tool).await,
            None => Ok(unset()),
        },
        CheckKind::ListenEndsOnCancel => match trigger {
            _ if conn.is_http() => Ok(CheckOutcome::Skip(
                "over HTTP closing the stream is the cancellation: nothing the server sends afterwards can reach the client".into(),
            )),
            Some(tool) => ends_on_cancel(conn, &declared, tool).await,
            None => Ok(unset()),
        },
        other => Err(format!("{other:?} is not a subscriptions check")),
    }
}

fn unset() -> CheckOutcome {
    CheckOutcome::Skip(format!(
        "parameter {CHANGE_TOOL} is not set (--set {CHANGE_TOOL}=TOOL: a tool whose call adds or removes a tool): nothing triggers a change to watch for"
    ))
}

/// The filter opting in to every `list_changed` the server declares.
fn declared_filter(capabilities: &Value) -> Map<String, Value> {
    ListKind::ALL
        .into_iter()
        .filter(|k| {
            crate::language::dsl::scenario::capability_declared(
                capabilities,
                &format!("{}.listChanged", k.capability()),
            )
        })
        .filter_map(ListKind::listen_filter_key)
        .map(|key| (key.to_string(), Value::Bool(true)))
        .collect()
}

/// The subscription id a notification carries, if any.
fn subscription_of(msg: &Value) -> Option<&Value> {
    msg.pointer("/params/_meta")?.get(meta::SUBSCRIPTION_ID)
}

fn method_of(msg: &Value) -> &str {
    msg.get("method").and_then(Value::as_str).unwrap_or("")
}

/// Whether `msg` belongs to the open subscription: on its HTTP stream, anything; over
/// stdio, a message carrying its id (or its response).
fn on_subscription(conn: &Connection, open: &OpenRequest, msg: &Value) -> bool {
    conn.is_http() || open.is_end(msg) || subscription_of(msg) == Some(&open.id)
}

/// The notification types (by method) a filter opts in to.
fn allowed_methods(filter: &Map<String, Value>) -> Vec<&'static str> {
    let mut allowed: Vec<&'static str> = ListKind::ALL
        .into_iter()
        .filter(|k| {
            k.listen_filter_key()
                .is_some_and(|key| filter.get(key) == Some(&Value::Bool(true)))
        })
        .filter_map(ListKind::list_changed_method)
        .collect();
    if filter
        .get("resourceSubscriptions")
        .and_then(Value::as_array)
        .is_some_and(|uris| !uris.is_empty())
    {
        allowed.push(methods::NOTIFICATIONS_RESOURCES_UPDATED);
    }
    allowed
}

/// Notification types no filter field covers are never sent on a listen stream;
/// `list_changed` and `resources/updated` only when requested. Everything else a
/// server sends over stdio (progress of another request, log messages) is not ours.
fn is_subscription_type(method: &str) -> bool {
    method.ends_with("/list_changed") || method == methods::NOTIFICATIONS_RESOURCES_UPDATED
}

/// Open a listen request with `filter` and wait for its acknowledgement:
/// `Ok(Ok((open, ack)))`, or the failing verdict (the request is cancelled then).
async fn open_acknowledged(
    conn: &mut Connection,
    filter: &Map<String, Value>,
) -> Result<Result<(OpenRequest, Value), CheckOutcome>, String> {
    let id = json!(format!("mcpspec-listen-{}", conn.next_id()));
    let mut out = conn.build_plain(
        methods::SUBSCRIPTIONS_LISTEN,
        Some(json!({ "notifications": filter })),
        Some(id.clone()),
    );
    let wait = conn.target().timeout.min(ACK_WAIT);
    out.timeout = wait;
    let mut open = conn
        .open_request(&out)
        .await
        .map_err(|e| format!("{}: {e}", methods::SUBSCRIPTIONS_LISTEN))?;
    let deadline = deadline_after(wait);
    let fail = |message: String, actual: Option<String>| {
        CheckOutcome::Fail(vec![Finding {
            message,
            expected: Some(format!(
                "{} with _meta {} = {id} and notifications within {}",
                methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
                meta::SUBSCRIPTION_ID,
                json!(filter)
            )),
            actual,
        }])
    };
    loop {
        let item = conn
            .next_on(&mut open, deadline)
            .await
            .map_err(|e| format!("waiting for the acknowledgement: {e}"))?;
        let msg = match item {
            StreamItem::Message(msg) => msg,
            StreamItem::Ended => {
                return Ok(Err(fail(
                    "the listen stream ended before any acknowledgement".into(),
                    open.http_status.map(|s| format!("HTTP {s}")),
                )));
            }
            StreamItem::Quiet => {
                let _ = conn.cancel(open, "no acknowledgement").await;
                return Ok(Err(fail(
                    format!(
                        "no {} within {}",
                        methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
                        humantime::format_duration(wait)
                    ),
                    None,
                )));
            }
        };
        if !on_subscription(conn, &open, &msg) {
            continue;
        }
        if open.is_end(&msg) {
            let what = match msg.get("error") {
                Some(e) => format!("refused {} with {e}", methods::SUBSCRIPTIONS_LISTEN),
                None => "answered the listen request at once, before any acknowledgement".into(),
            };
            return Ok(Err(fail(
                format!("the server declares listChanged but {what}"),
                Some(msg.to_string()),
            )));
        }
        if method_of(&msg) != methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED {
            let _ = conn.cancel(open, "not acknowledged").await;
            return Ok(Err(fail(
                format!(
                    "the first message of the subscription is `{}`, not {} (MUST NOT notify before acknowledging)",
                    method_of(&msg),
                    methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED
                ),
                Some(msg.to_string()),
            )));
        }
        if let Some(problem) = ack_problem(&msg, &open.id, filter) {
            let _ = conn.cancel(open, "bad acknowledgement").await;
            return Ok(Err(fail(problem, Some(msg.to_string()))));
        }
        return Ok(Ok((open, msg)));
    }
}

/// What is wrong with an acknowledgement, if anything.
fn ack_problem(ack: &Value, id: &Value, filter: &Map<String, Value>) -> Option<String> {
    match subscription_of(ack) {
        Some(got) if got == id => {}
        Some(got) => {
            return Some(format!(
                "the acknowledgement names subscription {got}, not the listen request's id {id}"
            ));
        }
        None => {
            return Some(format!(
                "the acknowledgement carries no _meta {} (it MUST name the listen request's id)",
                meta::SUBSCRIPTION_ID
            ));
        }
    }
    let Some(honored) = ack
        .pointer("/params/notifications")
        .and_then(Value::as_object)
    else {
        return Some(
            "the acknowledgement has no `notifications` object (the subset honored)".into(),
        );
    };
    for (key, value) in honored {
        let requested = filter.get(key);
        let ok = match (value, requested) {
            (Value::Bool(false), _) => true,
            (Value::Bool(true), Some(Value::Bool(true))) => true,
            (Value::Array(uris), Some(Value::Array(asked))) => {
                uris.iter().all(|u| asked.contains(u))
            }
            (Value::Array(uris), None) => uris.is_empty(),
            _ => false,
        };
        if !ok {
            return Some(format!(
                "the acknowledgement honors `{key}`: {value}, which was not requested (it reports a subset of the request)"
            ));
        }
    }
    None
}

/// Read what arrives into `got` until `deadline`, or until a message satisfies `enough`.
async fn collect(
    conn: &mut Connection,
    open: &mut OpenRequest,
    deadline: Instant,
    got: &mut Vec<Value>,
    enough: &dyn Fn(&Value) -> bool,
) -> Result<(), String> {
    if got.iter().any(enough) {
        return Ok(());
    }
    loop {
        match conn
            .next_on(open, deadline)
            .await
            .map_err(|e| e.to_string())?
        {
            StreamItem::Message(msg) => {
                let done = enough(&msg);
                got.push(msg);
                if done {
                    return Ok(());
                }
            }
            StreamItem::Ended | StreamItem::Quiet => return Ok(()),
        }
    }
}

/// What to wait for after a change.
enum Watch<'a> {
    /// Watch the whole [`WATCH`] window (judging an absence).
    Window,
    /// Wait up to [`DELIVERY`] for a message this accepts.
    Until(&'a dyn Fn(&Value) -> bool),
}

/// Call the change tool, then watch: the messages that arrived during the call (stdio)
/// and after it.
async fn change_and_watch(
    conn: &mut Connection,
    open: &mut OpenRequest,
    tool: &str,
    watch: Watch<'_>,
) -> Result<Vec<Value>, String> {
    let id = conn.next_id();
    let out = conn.build_plain(
        methods::TOOLS_CALL,
        Some(json!({"name": tool, "arguments": {}})),
        Some(id),
    );
    let mut ex = conn
        .send(&out)
        .await
        .map_err(|e| format!("calling {CHANGE_TOOL} `{tool}`: {e}"))?;
    ex.settle();
    let result = crate::run::client::connection::result_of(&ex)
        .map_err(|e| format!("calling {CHANGE_TOOL} `{tool}`: {e}"))?;
    if crate::protocol::fields::is_error(&result) {
        return Err(format!(
            "calling {CHANGE_TOOL} `{tool}` returned isError: true, so nothing changed: {}",
            crate::ground::redact::shorten(&result.to_string(), 300)
        ));
    }
    let mut got: Vec<Value> = ex.other_messages.iter().cloned().collect();
    let timeout = conn.target().timeout;
    match watch {
        Watch::Window => {
            let deadline = deadline_after(timeout.min(WATCH));
            collect(conn, open, deadline, &mut got, &|_| false).await?
        }
        Watch::Until(enough) => {
            let deadline = deadline_after(timeout.min(DELIVERY));
            collect(conn, open, deadline, &mut got, enough).await?
        }
    }
    Ok(got)
}

async fn acknowledged(
    conn: &mut Connection,
    declared: &Map<String, Value>,
) -> Result<CheckOutcome, String> {
    match open_acknowledged(conn, declared).await? {
        Ok((open, _)) => {
            conn.cancel(open, "check done")
                .await
                .map_err(|e| e.to_string())?;
            Ok(CheckOutcome::Pass)
        }
        Err(verdict) => Ok(verdict),
    }
}

async fn delivers(
    conn: &mut Connection,
    declared: &Map<String, Value>,
    tool: &str,
) -> Result<CheckOutcome, String> {
    let (mut open, _) = match open_acknowledged(conn, declared).await? {
        Ok(opened) => opened,
        Err(verdict) => return Ok(verdict),
    };
    let wanted = methods::NOTIFICATIONS_TOOLS_LIST_CHANGED;
    let id = open.id.clone();
    let is_wanted = |m: &Value| method_of(m) == wanted;
    let got = change_and_watch(conn, &mut open, tool, Watch::Until(&is_wanted)).await;
    let cancelled = conn.cancel(open, "check done").await;
    let got = got?;
    cancelled.map_err(|e| e.to_string())?;
    let http = conn.is_http();
    // Ours: on the stream (HTTP); over stdio, naming this subscription or none at all.
    let arrived: Vec<&Value> = got
        .iter()
        .filter(|m| method_of(m) == wanted)
        .filter(|m| http || subscription_of(m).is_none_or(|s| *s == id))
        .collect();
    if arrived.is_empty() {
        return Ok(CheckOutcome::Fail(vec![Finding {
            message: format!(
                "the subscription asked for toolsListChanged, `{tool}` changed the tools list, and no {wanted} arrived within {}",
                humantime::format_duration(conn.target().timeout.min(DELIVERY))
            ),
            expected: Some(format!("{wanted} on the subscription")),
            actual: Some(methods_seen(&got)),
        }]));
    }
    if let Some(missing) = arrived.iter().find(|m| subscription_of(m) != Some(&id)) {
        return Ok(CheckOutcome::Fail(vec![Finding {
            message: format!(
                "a {wanted} for the subscription does not carry _meta {} = {id} (MUST be on every notification of a listen stream)",
                meta::SUBSCRIPTION_ID
            ),
            expected: Some(format!("_meta {{\"{}\": {id}}}", meta::SUBSCRIPTION_ID)),
            actual: Some(missing.to_string()),
        }]));
    }
    Ok(CheckOutcome::Pass)
}

async fn only_requested(
    conn: &mut Connection,
    declared: &Map<String, Value>,
    tool: &str,
) -> Result<CheckOutcome, String> {
    // Opt in to every declared type but the tools list's (possibly nothing): the change
    // the tool makes is then unrequested.
    let mut filter = declared.clone();
    filter.remove(ListKind::Tools.listen_filter_key().unwrap_or_default());
    let (mut open, _) = match open_acknowledged(conn, &filter).await? {
        Ok(opened) => opened,
        Err(verdict) => return Ok(verdict),
    };
    let got = change_and_watch(conn, &mut open, tool, Watch::Window).await;
    let id = open.id.clone();
    let http = conn.is_http();
    let cancelled = conn.cancel(open, "check done").await;
    let got = got?;
    cancelled.map_err(|e| e.to_string())?;
    let allowed = allowed_methods(&filter);
    // Ours: on the stream (HTTP), or naming this subscription or none (stdio); a message
    // naming another subscription is that one's business.
    let unrequested = got.iter().find(|m| {
        let ours = http || subscription_of(m).is_none_or(|s| *s == id);
        ours && is_subscription_type(method_of(m)) && !allowed.contains(&method_of(m))
    });
    match unrequested {
        None => Ok(CheckOutcome::Pass),
        Some(msg) => Ok(CheckOutcome::Fail(vec![Finding {
            message: format!(
                "the subscription opted in to {}, and the server sent `{}` after `{tool}` changed the tools list (MUST NOT send notification types the client has not requested)",
                json!(filter),
                method_of(msg)
            ),
            expected: Some(format!("only {:?}", allowed)),
            actual: Some(msg.to_string()),
        }])),
    }
}

async fn ends_on_cancel(
    conn: &mut Connection,
    declared: &Map<String, Value>,
    tool: &str,
) -> Result<CheckOutcome, String> {
    let (mut open, _) = match open_acknowledged(conn, declared).await? {
        Ok(opened) => opened,
        Err(verdict) => return Ok(verdict),
    };
    let id = open.id.clone();
    // The change must reach the live subscription first: otherwise silence after the
    // cancellation proves nothing.
    let delivery =
        |m: &Value| is_subscription_type(method_of(m)) && subscription_of(m) == Some(&id);
    let before = match change_and_watch(conn, &mut open, tool, Watch::Until(&delivery)).await {
        Ok(got) => got,
        Err(e) => {
            let _ = conn.cancel(open, "check failed").await;
            return Err(e);
        }
    };
    let delivered = before.iter().any(delivery);
    conn.cancel(open, "check: the stream must end")
        .await
        .map_err(|e| e.to_string())?;
    if !delivered {
        return Ok(CheckOutcome::Skip(format!(
            "calling `{tool}` delivered no notification on the live subscription, so silence after cancelling would prove nothing (see listen_delivers_list_changed)"
        )));
    }
    // Closed for us: read what still comes, with a throwaway open handle over stdio.
    let mut after_open = conn
        .watch_only()
        .ok_or("the connection cannot be read without a request")?;
    let late = |got: &[Value]| {
        got.iter()
            .find(|m| subscription_of(m) == Some(&id) && !method_of(m).is_empty())
            .cloned()
    };
    let after = change_and_watch(conn, &mut after_open, tool, Watch::Window).await?;
    if late(&after).is_none() {
        return Ok(CheckOutcome::Pass);
    }
    // A cancellation takes effect when the server gets to it: the change called right
    // after it may still cross it in flight (an async server ends the subscription on
    // another task). A second change, made once the server has answered the first and
    // the window has passed, is past any such race: only a delivery of that one fails.
    let again = change_and_watch(conn, &mut after_open, tool, Watch::Window).await?;
    match late(&again) {
        None => Ok(CheckOutcome::Pass),
        Some(msg) => Ok(CheckOutcome::Fail(vec![Finding {
            message: format!(
                "after notifications/cancelled the server still sent `{}` on subscription {id}, for a change made after it had answered another call",
                method_of(&msg)
            ),
            expected: Some("nothing more on a cancelled subscription".into()),
            actual: Some(msg.to_string()),
        }])),
    }
}

fn methods_seen(got: &[Value]) -> String {
    if got.is_empty() {
        return "nothing".into();
    }
    got.iter()
        .map(|m| match m.get("method").and_then(Value::as_str) {
            Some(method) => method.to_string(),
            None => format!("a response (id {})", m.get("id").unwrap_or(&Value::Null)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_follows_the_declared_capabilities() {
        let caps = json!({"tools": {"listChanged": true}, "prompts": {}, "resources": {"listChanged": false}});
        let filter = declared_filter(&caps);
        assert_eq!(
            Value::Object(filter.clone()),
            json!({"toolsListChanged": true})
        );
        assert_eq!(
            allowed_methods(&filter),
            vec![methods::NOTIFICATIONS_TOOLS_LIST_CHANGED]
        );
        assert!(allowed_methods(&Map::new()).is_empty());
    }

    #[test]
    fn an_acknowledgement_names_the_id_and_a_subset() {
        let id = json!("l-1");
        let filter: Map<String, Value> =
            serde_json::from_value(json!({"toolsListChanged": true})).unwrap();
        let ack = |meta: Value, notifications: Value| {
            json!({"method": methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
                   "params": {"_meta": meta, "notifications": notifications}})
        };
        let good = ack(
            json!({meta::SUBSCRIPTION_ID: "l-1"}),
            json!({"toolsListChanged": true}),
        );
        assert_eq!(ack_problem(&good, &id, &filter), None);
        let narrower = ack(json!({meta::SUBSCRIPTION_ID: "l-1"}), json!({}));
        assert_eq!(ack_problem(&narrower, &id, &filter), None);
        let wider = ack(
            json!({meta::SUBSCRIPTION_ID: "l-1"}),
            json!({"toolsListChanged": true, "promptsListChanged": true}),
        );
        assert!(
            ack_problem(&wider, &id, &filter)
                .unwrap()
                .contains("promptsListChanged")
        );
        let other_id = ack(json!({meta::SUBSCRIPTION_ID: "l-2"}), json!({}));
        assert!(
            ack_problem(&other_id, &id, &filter)
                .unwrap()
                .contains("l-2")
        );
        let no_id = ack(json!({}), json!({}));
        assert!(
            ack_problem(&no_id, &id, &filter)
                .unwrap()
                .contains("no _meta")
        );
    }
}
