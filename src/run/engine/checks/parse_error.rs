//! Parse errors (`parse_error_answered`, `parse_error_id_null`, `parse_error_survived`):
//! what a server does with a message that is not JSON — a request cut short by one byte.
//!
//! JSON-RPC 2.0, which every MCP revision adopts ("All messages between MCP clients and
//! servers MUST follow the JSON-RPC 2.0 specification"), wants a Response with error
//! -32700 whose `id` is Null ("If there was an error in detecting the id in the Request
//! object (e.g. Parse error/Invalid Request), it MUST be Null"); MCP's schema of 2025-11-25
//! and later leaves the id out instead (`id?: RequestId`, "except in error cases where the
//! ID could not be read"), so both are accepted. Nothing in either spec lets a malformed
//! message end the connection: the next request is still a request the server must answer.
//!
//! One probe per scenario ([`ParseProbe`], kept in the check state), on a connection of the
//! probe's own: the scenario's connection is never disturbed, and a server that dies of
//! the probe takes only that connection with it.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::outcome::CheckOutcome;
use crate::protocol::errors;
use crate::run::client::{Connection, StreamItem, TransportError, is_response};
use crate::run::engine::pool::Pool;

/// Over stdio, how long a late answer to the cut-short line is waited for once the request
/// written right behind it is answered: see [`LateWait`]. At most this (and at most the
/// target's timeout) ...
const LATE_REPLY_GRACE: Duration = Duration::from_secs(1);
/// ... and at least this, ...
const LATE_REPLY_FLOOR: Duration = Duration::from_millis(100);
/// ... or this many times the slowest round trip of those requests, if longer ...
const LATE_REPLY_RTTS: u32 = 10;
/// ... and until this many more requests, each sent when the one before was answered, are
/// answered too.
const LATE_REPLY_ROUNDS: u32 = 3;

/// What the probe saw.
pub struct ParseProbe {
    /// The text sent (a request without its last byte).
    sent: String,
    reply: Reply,
    /// The harmless request before the probe: `Err` when it did not get a result either.
    before: Result<(), String>,
    /// The same request after the probe.
    after: Result<(), String>,
    method: &'static str,
    /// The `notifications/message` the server sent on the probe's connection around the
    /// cut-short message (judged by `undeclared_logging_not_sent`: every message a server
    /// sends is judged, a probe's own too).
    logs: Vec<Value>,
}

impl ParseProbe {
    /// The log messages seen on the probe's connection.
    pub fn logs(&self) -> &[Value] {
        &self.logs
    }
}

/// What answered the cut-short message.
pub(super) enum Reply {
    /// A JSON-RPC response (whatever its id).
    Message(Value),
    /// HTTP: a body that is no JSON-RPC response.
    Http {
        status: u16,
        content_type: String,
        body: String,
    },
    /// Nothing, and why.
    Nothing(String),
}

/// Run the probe on a connection of its own like `conn`'s (same target and era: a warm
/// process of the pool that no other scenario needs any more, else a new one), noting what
/// it did in `conn`'s transcript. The probe's connection is stopped after it.
pub async fn probe(conn: &mut Connection, pool: &Pool) -> Result<ParseProbe, String> {
    let mut own = own_connection(conn, pool).await?;
    let probe = run_probe(&mut own).await;
    own.close().await;
    conn.note(format!(
        "parse-error probe, on a connection of its own: sent `{}`; {}; `{m}` before it: {}; after it: {}",
        probe.sent,
        probe.reply.describe(),
        outcome(&probe.before),
        outcome(&probe.after),
        m = probe.method,
    ));
    Ok(probe)
}

fn outcome(r: &Result<(), String>) -> String {
    match r {
        Ok(()) => "a result".into(),
        Err(e) => e.clone(),
    }
}

async fn run_probe(own: &mut Connection) -> ParseProbe {
    let method = own.harmless_method();
    let before = call(own, method).await;
    let id = own.next_id();
    let mut out = own.build_plain(method, None, Some(id));
    // The request without its closing brace: JSON that ends too early. Its id cannot be
    // read, so an answer with a null (or no) id answers it.
    out.body.pop();
    out.id = None;
    let sent = out.body.clone();
    let mut logs = Vec::new();
    let (reply, after) = if own.is_http() {
        let reply = http_reply(own, &out, &mut logs).await;
        (reply, call(own, method).await)
    } else {
        stdio_reply(own, &out, method, &mut logs).await
    };
    ParseProbe {
        sent,
        reply,
        before,
        after,
        method,
        logs,
    }
}

/// A harmless request: `Ok` when it got a result.
async fn call(conn: &mut Connection, method: &str) -> Result<(), String> {
    conn.call(method, None).await.map(|_| ())
}

/// HTTP: the answer to the POST of the cut-short body.
pub(super) async fn http_reply(
    own: &mut Connection,
    out: &crate::run::client::Outgoing,
    logs: &mut Vec<Value>,
) -> Reply {
    let ex = match own.send(out).await {
        Ok(ex) => ex,
        Err(e) => return Reply::Nothing(e.to_string()),
    };
    logs.extend(ex.other_messages.iter().filter(|m| is_log(m)).cloned());
    match (ex.response, ex.http) {
        (Some(msg), _) => Reply::Message(msg),
        (None, Some(http)) => Reply::Http {
            status: http.status,
            content_type: http.header("content-type").unwrap_or("").to_string(),
            body: crate::ground::redact::shorten(ex.raw_body.as_deref().unwrap_or("").trim(), 300),
        },
        (None, None) => Reply::Nothing("an empty answer".into()),
    }
}

/// stdio: write the cut-short line and a harmless request right behind it, then read
/// until that request is answered (and a [`LateWait`] after): any other response is the
/// answer to the broken line, and the answer to the request shows whether the process
/// still serves. A server that answers the line with nothing costs no timeout.
pub(super) async fn stdio_reply(
    own: &mut Connection,
    bad: &crate::run::client::Outgoing,
    method: &str,
    logs: &mut Vec<Value>,
) -> (Reply, Result<(), String>) {
    let timeout = own.target().timeout;
    let noise_before = own.stdout_noise_total();
    let mut watch = match own.open_request(bad).await {
        Ok(open) => open,
        Err(e) => return (Reply::Nothing(e.to_string()), Err(e.to_string())),
    };
    let id = own.next_id();
    let next = own.build_plain(method, None, Some(id.clone()));
    let sent_at = Instant::now();
    if let Err(e) = own.open_request(&next).await {
        return (Reply::Nothing(e.to_string()), Err(e.to_string()));
    }
    let mut deadline = Instant::now() + timeout;
    let mut after: Option<Result<(), String>> = None;
    let mut reply = None;
    let mut late: Option<LateWait> = None;
    // Until both are in, and no extra request of the late wait is left unanswered (the
    // connection may be used again: a stale answer must not be taken for the next one's).
    while reply.is_none() || after.is_none() || late.as_ref().is_some_and(LateWait::busy) {
        let next = own.next_on(&mut watch, deadline).await;
        // The handle only reads stdout: a response with a null id (the one awaited) does
        // not end the reading.
        watch.ended = false;
        match next {
            Ok(StreamItem::Message(msg)) if is_response(&msg) => {
                let msg_id = msg.get("id");
                if let Some(wait) = late.as_mut().filter(|w| w.awaits(msg_id)) {
                    if reply.is_some() {
                        // Nothing more to wait for: no more rounds.
                        wait.settle();
                    } else {
                        deadline = wait.answered(own, method, deadline).await;
                    }
                } else if late.as_ref().is_some_and(|w| w.answered_before(msg_id)) {
                    // A second answer to one of the extra requests: not the broken line's.
                } else if msg_id != Some(&id) {
                    reply.get_or_insert(Reply::Message(msg));
                } else if after.is_none() {
                    after = Some(match msg.get("result") {
                        Some(_) => Ok(()),
                        None => Err(format!(
                            "JSON-RPC error {}",
                            crate::language::assert::compact(&msg["error"], 300)
                        )),
                    });
                    // A late answer is waited for only when none came yet.
                    if reply.is_none() {
                        let mut wait = LateWait::new(sent_at.elapsed(), deadline);
                        deadline = wait.next_round(own, method, deadline).await;
                        late = Some(wait);
                    }
                }
            }
            Ok(StreamItem::Message(msg)) => {
                if is_log(&msg) {
                    logs.push(msg);
                }
            }
            Ok(StreamItem::Ended | StreamItem::Quiet) => break,
            Err(e) => {
                let why = match e {
                    TransportError::Closed(why) => {
                        format!("the server closed the connection ({why})")
                    }
                    other => other.to_string(),
                };
                reply.get_or_insert_with(|| Reply::Nothing(why.clone()));
                after.get_or_insert(Err(why));
                break;
            }
        }
    }
    let waited = humantime::format_duration(timeout);
    let reply = reply.unwrap_or_else(|| {
        let noise = own.stdout_noise_total() - noise_before;
        let instead = if noise > 0 {
            format!(", but {noise} non-JSON line(s) on stdout")
        } else {
            String::new()
        };
        Reply::Nothing(match &late {
            Some(wait) => format!(
                "no JSON-RPC answer, while the `{method}` sent right after it was answered{}{instead}",
                wait.describe()
            ),
            None => format!("no JSON-RPC answer within {waited}{instead}"),
        })
    });
    let after = after.unwrap_or_else(|| Err(format!("no answer within {waited}")));
    (reply, after)
}

/// Whether `msg` is a `notifications/message`.
fn is_log(msg: &Value) -> bool {
    msg.get("method").and_then(Value::as_str)
        == Some(crate::protocol::methods::NOTIFICATIONS_MESSAGE)
}

/// How long the stdio probe still waits for a late answer to the cut-short line once the
/// request behind it is answered. Over stdio a server reads lines in order, but it need not
/// answer them in order (a server that handles each line in a task of its own may answer
/// the request first), so that answer alone does not prove that no answer is coming. The
/// wait is measured in the server's own speed, not a constant: it ends once
/// [`LATE_REPLY_ROUNDS`] more requests, each written when the one before was answered, are
/// answered — steps of the server's own, which slow down with it on a busy machine — and
/// [`LATE_REPLY_RTTS`] times the slowest of their round trips and the request's (at least
/// [`LATE_REPLY_FLOOR`]) has passed since the request's answer. (The harmless request before
/// the probe is not counted: a first request may pay for warming up.) It never waits longer
/// than [`LATE_REPLY_GRACE`], the fixed wait it replaces, so a slow server is judged as
/// before.
struct LateWait {
    started: Instant,
    /// The slowest round trip so far.
    slowest: Duration,
    /// Never after this.
    cap: Instant,
    /// The extra request in flight (its id, when it was sent).
    in_flight: Option<(Value, Instant)>,
    /// The ids of the extra requests answered.
    done: Vec<Value>,
    rounds: u32,
    /// Why no more rounds are sent, if the server could not be written to.
    stopped: Option<String>,
}

impl LateWait {
    /// `rtt`: the round trip of the request behind the cut-short line.
    fn new(rtt: Duration, deadline: Instant) -> LateWait {
        let started = Instant::now();
        LateWait {
            started,
            slowest: rtt,
            cap: deadline.min(started + LATE_REPLY_GRACE),
            in_flight: None,
            done: Vec::new(),
            rounds: 0,
            stopped: None,
        }
    }

    /// Whether `id` is that of the extra request in flight.
    fn awaits(&self, id: Option<&Value>) -> bool {
        id.is_some() && self.in_flight.as_ref().map(|(id, _)| id) == id
    }

    /// Whether an extra request is in flight.
    fn busy(&self) -> bool {
        self.in_flight.is_some()
    }

    /// The extra request in flight was answered and no more rounds are sent.
    fn settle(&mut self) {
        if let Some((id, _)) = self.in_flight.take() {
            self.done.push(id);
        }
    }

    /// Whether `id` is that of an extra request answered already.
    fn answered_before(&self, id: Option<&Value>) -> bool {
        id.is_some_and(|id| self.done.contains(id))
    }

    /// The extra request in flight was answered (whatever the answer): the next round, or
    /// the new deadline.
    async fn answered(&mut self, own: &mut Connection, method: &str, deadline: Instant) -> Instant {
        if let Some((id, sent)) = self.in_flight.take() {
            self.slowest = self.slowest.max(sent.elapsed());
            self.done.push(id);
        }
        self.rounds += 1;
        self.next_round(own, method, deadline).await
    }

    /// Sends the next extra request while rounds remain; returns the reading deadline.
    async fn next_round(
        &mut self,
        own: &mut Connection,
        method: &str,
        deadline: Instant,
    ) -> Instant {
        if self.rounds >= LATE_REPLY_ROUNDS {
            let settle = (self.slowest * LATE_REPLY_RTTS).max(LATE_REPLY_FLOOR);
            return deadline.min(self.cap).min(self.started + settle);
        }
        let id = own.next_id();
        let out = own.build_plain(method, None, Some(id.clone()));
        let sent = Instant::now();
        match own.open_request(&out).await {
            Ok(_) => self.in_flight = Some((id, sent)),
            // Reading tells what became of the server; the wait falls back to the cap.
            Err(e) => self.stopped = Some(e.to_string()),
        }
        deadline.min(self.cap)
    }

    /// What the wait saw, for the transcript: ", then N more one after another, in T".
    fn describe(&self) -> String {
        let waited = humantime::format_duration(Duration::from_millis(
            self.started.elapsed().as_millis() as u64,
        ));
        match &self.stopped {
            Some(why) => format!(
                ", then {} more (the next could not be sent: {why}); waited {waited}",
                self.rounds
            ),
            None => format!(
                ", then {} more one after another; waited {waited}",
                self.rounds
            ),
        }
    }
}

impl Reply {
    pub(super) fn describe(&self) -> String {
        match self {
            Reply::Message(msg) => {
                format!("answered `{}`", crate::language::assert::compact(msg, 300))
            }
            Reply::Http {
                status,
                content_type,
                body,
            } => format!("answered HTTP {status} ({content_type}) `{body}`, no JSON-RPC response"),
            Reply::Nothing(why) => why.clone(),
        }
    }
}

const EXPECTED_ERROR: &str = "a JSON-RPC error -32700 (Parse error) with id null or no id";

/// `parse_error_answered`: the answer is a JSON-RPC error -32700.
pub fn answered(probe: &ParseProbe) -> CheckOutcome {
    let code = match &probe.reply {
        Reply::Message(msg) => msg.pointer("/error/code").and_then(Value::as_i64),
        _ => None,
    };
    if code == Some(errors::PARSE_ERROR) {
        return CheckOutcome::Pass;
    }
    // HTTP (2025-03-26 onwards, basic/transports): "If the server cannot accept the input, it
    // MUST return an HTTP error status code (e.g., 400 Bad Request). The HTTP response body
    // MAY comprise a JSON-RPC error response that has no id" — a 4xx with any body answers.
    if let Reply::Http { status, .. } = &probe.reply
        && (400..500).contains(status)
    {
        return CheckOutcome::Pass;
    }
    let what = match (&probe.reply, code) {
        (Reply::Message(_), Some(code)) => format!("error {code}, not -32700 Parse error"),
        (Reply::Message(msg), None) if msg.get("error").is_some() => {
            "an error without an integer code".into()
        }
        (Reply::Message(_), None) => "a result, not an error".into(),
        _ => probe.reply.describe(),
    };
    CheckOutcome::fail(
        format!("a request cut short (not JSON) got {what}"),
        EXPECTED_ERROR,
        Some(probe.reply.describe()),
    )
}

/// `parse_error_id_null`: an error answering an unreadable message claims no request id.
pub fn id_null(probe: &ParseProbe) -> CheckOutcome {
    let Reply::Message(msg) = &probe.reply else {
        return CheckOutcome::Skip(format!(
            "no JSON-RPC answer to judge: {}",
            probe.reply.describe()
        ));
    };
    match msg.get("id") {
        None | Some(Value::Null) => CheckOutcome::Pass,
        Some(id) => CheckOutcome::fail(
            format!(
                "the answer to a request cut short (its id unreadable) carries id {id}, which no request had"
            ),
            "id null, or no id",
            Some(crate::language::assert::compact(msg, 300)),
        ),
    }
}

/// `parse_error_survived`: the connection answers as it did before the probe.
pub fn survived(probe: &ParseProbe) -> CheckOutcome {
    let method = probe.method;
    match (&probe.before, &probe.after) {
        (Err(why), _) => CheckOutcome::Skip(format!(
            "`{method}` got no result even before the probe: {why}"
        )),
        (Ok(()), Ok(())) => CheckOutcome::Pass,
        (Ok(()), Err(why)) => CheckOutcome::fail(
            format!(
                "after a request cut short (not JSON), the connection no longer serves requests: `{method}` got {why}"
            ),
            format!("a result to `{method}`, as before the probe"),
            Some(why.clone()),
        ),
    }
}

/// A connection of the probe's own like `conn`'s: a warm process of the pool that no other
/// scenario needs any more, else a new one.
pub(super) async fn own_connection(
    conn: &mut Connection,
    pool: &Pool,
) -> Result<Connection, String> {
    match pool.take_spare(&conn.negotiated.requested) {
        Some(spare) => Ok(spare),
        None => conn
            .open_another()
            .await
            .map_err(|e| format!("the probe's own connection failed: {e}")),
    }
}
