//! A connection in one era: opening it (handshake / discover / auto probe), building
//! era-correct requests, and logging every message for the step transcripts.

mod negotiate;
mod request;
mod reuse;
mod session;
mod shared;
mod transcript;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http::HttpTransport;
use super::stdio::StdioTransport;
use super::{Exchange, Outgoing, Target, TargetKind, TransportError};
use crate::protocol::era::{
    EraKind, EraRequest, LATEST_LEGACY_REVISION, LEGACY_REVISIONS, MODERN_REVISION, Negotiated,
};
use crate::results::exchange::{Direction, TranscriptEntry};
use request::*;
pub use request::{client_info, encode_header_value, expand_meta_key, name_header, raw_outgoing};
use reuse::count_start;
pub use reuse::{Handover, starts};
pub use shared::SharedProcess;
use transcript::*;
pub use transcript::{error_of, result_of};

use crate::protocol::fields::{self, Pages};
use crate::protocol::{ListKind, errors, headers as h, meta, methods};

/// Longest wait for the `auto` probe over HTTP before falling back to legacy. Over stdio the
/// probe is the first request of a process just spawned: its wait includes the server's
/// start-up (a Python server may take seconds on a loaded machine), so it gets the
/// target's whole timeout, like any first request — a silent answer then means legacy.
const AUTO_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// Over stdio, the first `auto` probe of a run (no decision yet) waits at most this, not
/// the whole timeout: a server that ignores requests before `initialize` costs this once.
/// Its silence is taken for legacy only when a fresh process then starts and answers
/// `initialize` in at most a [`STARTUP_FACTOR`]th of the wait; a server slower to start is
/// probed again on a fresh process, waiting [`STARTUP_FACTOR`] times that start and
/// handshake (at least [`PROMPT_FLOOR`], at most the timeout), so a slow modern server is
/// still found modern.
const FIRST_PROBE_WAIT: Duration = Duration::from_secs(3);
const STARTUP_FACTOR: u32 = 3;
/// After a request timed out, a harmless request proves the connection alive. It waits
/// [`LIVENESS_FACTOR`] times the slowest answer seen so far on the connection (the server's
/// own speed), at least [`LIVENESS_FLOOR`], at most [`LIVENESS_WAIT`] and the timeout: a
/// timed-out step then costs its timeout and little more, not twice it.
const LIVENESS_WAIT: Duration = Duration::from_secs(5);
const LIVENESS_FACTOR: u32 = 4;
/// Against scheduling hiccups on a loaded machine: a ping answered in 1 ms still gets this.
const LIVENESS_FLOOR: Duration = Duration::from_secs(1);

/// How long the liveness request waits (see [`LIVENESS_WAIT`]); `slowest`: the slowest
/// answer on the connection, `None` if nothing was answered yet.
fn liveness_wait(slowest: Option<Duration>, timeout: Duration) -> Duration {
    let ceiling = timeout.min(LIVENESS_WAIT);
    match slowest {
        Some(d) => d
            .saturating_mul(LIVENESS_FACTOR)
            .max(LIVENESS_FLOOR)
            .min(ceiling),
        None => ceiling,
    }
}

/// A request the spec wants answered at once, without any work (an unknown method,
/// invalid params, malformed input: [`crate::protocol::errors::answered_at_once`]), waits
/// [`PROMPT_FACTOR`] times the round trip of a harmless request sent just before it (the
/// server's speed right now), at least [`PROMPT_FLOOR`], at most the step's timeout: a
/// server that never answers such a request costs seconds, not the whole timeout — as the
/// parse-error probe's wait already does.
pub const PROMPT_FACTOR: u32 = 10;
/// Against scheduling hiccups on a loaded machine: a ping answered in 1 ms still gives this.
pub const PROMPT_FLOOR: Duration = Duration::from_secs(2);

/// The wait for an answer due at once (see [`PROMPT_FACTOR`]); `rtt`: the round trip of the
/// harmless request just before it.
pub fn prompt_wait(rtt: Duration, timeout: Duration) -> Duration {
    rtt.saturating_mul(PROMPT_FACTOR)
        .max(PROMPT_FLOOR)
        .min(timeout)
}

/// How long a request due at once was waited for, and why (for a timeout's message).
#[derive(Debug, Clone, Copy)]
pub struct PromptWait {
    /// The round trip of the harmless request sent just before it.
    pub rtt: Duration,
    pub method: &'static str,
    /// The wait: [`prompt_wait`] of `rtt`.
    pub wait: Duration,
    /// The step's timeout, which it replaced.
    pub timeout: Duration,
}

impl PromptWait {
    /// "`ping` sent just before it was answered in 3ms; waited 10 × that (at least 2s, at most the timeout 30s)".
    pub fn describe(&self) -> String {
        let ms = |d: Duration| {
            if d < Duration::from_millis(1) {
                "under 1ms".to_string()
            } else {
                humantime::format_duration(Duration::from_millis(d.as_millis() as u64)).to_string()
            }
        };
        format!(
            "the `{}` sent just before it was answered in {}, so it waited {} ({PROMPT_FACTOR} × that round trip, at least {}, at most the timeout {}) instead of the whole timeout",
            self.method,
            ms(self.rtt),
            ms(self.wait),
            ms(PROMPT_FLOOR),
            ms(self.timeout),
        )
    }

    /// The message of a request due at once (`what`, e.g. "an unknown method (`x`)") that
    /// got no answer within `waited`.
    pub fn timed_out(&self, waited: Duration, what: &str) -> String {
        format!(
            "no answer within {}: {what} is answered at once, without any work (JSON-RPC 2.0 section 5.1); {}",
            humantime::format_duration(waited),
            self.describe()
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectErrorKind {
    /// The server process could not be started or died before answering (exit 4).
    Start,
    /// Nothing answered at the URL (exit 4).
    Unreachable,
    /// HTTP 401/403 (exit 3).
    Auth,
    /// The server answered, but not in the requested era (a test failure).
    Protocol,
}

#[derive(Debug, Clone)]
pub struct ConnectError {
    pub kind: ConnectErrorKind,
    pub message: String,
    pub stderr_tail: Option<String>,
    pub transcript: Vec<TranscriptEntry>,
    /// The server refused the era outright, in a way that does not change from one try to
    /// the next (it answered the handshake, and not as asked; or it exited on
    /// `server/discover` while a fresh process took `initialize`): see [`ConnectError::refused`].
    pub refused: bool,
}

impl ConnectError {
    /// The server answered the handshake, and not as asked (or exited on it, see
    /// `refused`): a refusal of the era. A handshake that broke down (a timeout, a closed
    /// connection) may go through next time.
    pub fn refused(&self) -> bool {
        self.kind == ConnectErrorKind::Protocol
            && (self.refused
                || self.transcript.last().is_some_and(|t| {
                    t.direction == crate::results::report::result::Direction::Received
                }))
    }
}

#[allow(
    clippy::large_enum_variant,
    reason = "one per connection, made once and never moved: boxing would only add an indirection"
)]
pub(super) enum Transport {
    Stdio(StdioTransport),
    Http(HttpTransport),
    /// One server process shared with other connections (`load --stdio-mode shared`).
    Shared(shared::SharedTransport),
}

impl Transport {
    fn open(target: &Target) -> Result<Transport, ConnectError> {
        match &target.kind {
            TargetKind::Stdio {
                program,
                args,
                env,
                cwd,
                sandbox,
            } => StdioTransport::spawn(
                program,
                args,
                env,
                cwd.as_deref(),
                target.max_message_bytes,
                *sandbox,
            )
            .map(Transport::Stdio)
            .map_err(|e| ConnectError {
                kind: ConnectErrorKind::Start,
                message: format!("cannot start `{program}`: {e}"),
                stderr_tail: None,
                transcript: Vec::new(),
                refused: false,
            }),
            TargetKind::Http {
                url,
                headers,
                bearer,
                auth,
            } => HttpTransport::new(
                url,
                headers,
                bearer.as_deref(),
                auth.clone(),
                target.max_message_bytes,
            )
            .map(Transport::Http)
            .map_err(|message| ConnectError {
                kind: ConnectErrorKind::Unreachable,
                message,
                stderr_tail: None,
                transcript: Vec::new(),
                refused: false,
            }),
        }
    }

    /// Why the connection cannot be used any more (the stdio server exited or stopped
    /// answering; the HTTP target stopped answering), if it cannot.
    fn closed_reason(&self) -> Option<&str> {
        match self {
            Transport::Stdio(t) => t.closed_reason(),
            Transport::Http(t) => t.closed_reason(),
            Transport::Shared(t) => t.closed_reason(),
        }
    }

    fn set_answerer(&mut self, answerer: Option<std::sync::Arc<super::answers::Answerer>>) {
        match self {
            Transport::Stdio(t) => t.answerer = answerer,
            Transport::Http(t) => t.set_answerer(answerer),
            // The process answers as the connection that opened it.
            Transport::Shared(_) => {}
        }
    }

    fn mark_closed(&mut self, why: String) {
        match self {
            Transport::Stdio(t) => t.mark_closed(why),
            Transport::Http(t) => t.mark_closed(why),
            Transport::Shared(t) => t.mark_closed(why),
        }
    }
}

pub struct Connection {
    pub(super) transport: Transport,
    target: Target,
    pub negotiated: Negotiated,
    next_id: u64,
    /// Hand-overs so far ([`Connection::settle_for_handover`]): its request's id is a
    /// string of its own, so the scenarios' numbering is the same with and without it.
    handovers: u64,
    session_id: Option<String>,
    log: Vec<TranscriptEntry>,
    log_started: Instant,
    /// The time its exchanges took since [`Connection::take_exchanged`] (each from the
    /// request sent to its reply read): a step's latency under load, without its judging.
    exchanged: Duration,
    /// Tool definitions seen in `tools/list` replies (for `outputSchema` checks).
    tools: Option<Vec<Value>>,
    /// How this connection was asked to speak (a second connection asks the same).
    pub era_request: EraRequest,
    /// Wire validation of every message the server sent on this connection.
    wire: crate::protocol::wire::WireLog,
    /// Requests the server sent to the client on this connection (each was answered).
    server_requests: Vec<Value>,
    /// The notifications bound to a capability (`notifications/message`, list changes,
    /// resource updates) the server sent on this connection since its scenario began
    /// ([`Connection::take_seen`]), for the undeclared-capability judgements.
    seen: NotificationsSeen,
    /// The scenario's answers to what the server asks (none: nothing declared).
    answerer: Option<std::sync::Arc<super::answers::Answerer>>,
    /// The modern `_meta` as text, for the revision it was made for.
    meta_text: Option<(String, String)>,
    /// A liveness probe is in flight (it does not probe itself).
    probing: bool,
    /// What the server wrote instead of answering the last failed exchange, for the
    /// step's report (taken once).
    unanswered: Option<String>,
    /// A request timed out on this connection (a shared process is not handed on then).
    timed_out: bool,
    /// The slowest answer before the handshake was done (it includes a stdio server's
    /// start-up) and after it: the server's speed, for [`liveness_wait`].
    slowest_opening: Option<Duration>,
    slowest_answer: Option<Duration>,
    /// The opening is done ([`Connection::open_as`]); `used`: something was sent after it
    /// (an unused legacy HTTP session is not ended with a DELETE: see `close_transport`).
    opened: bool,
    used: bool,
    /// The wire log as the opening left it: a connection handed to the next scenario
    /// starts again from here ([`Connection::begin_reuse`]).
    opening_wire: crate::protocol::wire::WireLog,
}

impl Connection {
    /// Open a connection in the requested era.
    pub async fn open(
        target: &Target,
        era_label: &str,
        era: &EraRequest,
    ) -> Result<Connection, ConnectError> {
        Self::open_as(target, era_label, era, None).await
    }

    /// [`Connection::open`] as a client that declares capabilities and answers the
    /// server's requests from a script (`answerer`).
    pub async fn open_as(
        target: &Target,
        era_label: &str,
        era: &EraRequest,
        answerer: Option<std::sync::Arc<super::answers::Answerer>>,
    ) -> Result<Connection, ConnectError> {
        let started = Instant::now();
        let mut processes = 1;
        let mut transport = Transport::open(target)?;
        transport.set_answerer(answerer.clone());
        let mut conn = Connection {
            transport,
            target: target.clone(),
            negotiated: Negotiated {
                requested: era_label.to_string(),
                kind: EraKind::Legacy,
                revision: String::new(),
                note: None,
                server_info: None,
                capabilities: Value::Null,
                supported_versions: Vec::new(),
                instructions: None,
                handshake: None,
                handshake_headers: None,
            },
            next_id: 0,
            handovers: 0,
            session_id: None,
            log: Vec::new(),
            log_started: Instant::now(),
            exchanged: Duration::ZERO,
            tools: None,
            server_requests: Vec::new(),
            seen: NotificationsSeen::default(),
            answerer,
            meta_text: None,
            probing: false,
            unanswered: None,
            timed_out: false,
            slowest_opening: None,
            slowest_answer: None,
            opening_wire: Default::default(),
            opened: false,
            used: false,
            era_request: era.clone(),
            wire: Default::default(),
        };
        let result = match era {
            EraRequest::Legacy => conn.handshake(LATEST_LEGACY_REVISION, false).await,
            EraRequest::PinnedLegacy(rev) => conn.handshake(rev, true).await,
            EraRequest::Modern(rev) => match conn.discover(rev).await {
                Err(e) => Err(conn.exited_on_discover(rev, e, &mut processes).await),
                ok => ok,
            },
            EraRequest::Auto => conn.open_auto(&mut processes).await?,
        };
        if !target.is_http() {
            count_start(processes, started.elapsed());
        }
        match result {
            Ok(()) => {
                conn.opening_wire = conn.wire.clone();
                conn.opened = true;
                Ok(conn)
            }
            Err(mut e) => {
                e.transcript = conn.take_log();
                if e.stderr_tail.is_none() {
                    e.stderr_tail = conn.stderr_tail().await;
                }
                conn.close().await;
                Err(e)
            }
        }
    }

    /// Another connection to the same target, asked for in the same way (same era request
    /// and label): for checks that compare, or probe on a connection of their own.
    pub async fn open_another(&self) -> Result<Connection, String> {
        let target = self.target.clone();
        Connection::open(&target, &self.negotiated.requested, &self.era_request)
            .await
            .map_err(|e| e.message)
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    pub fn is_http(&self) -> bool {
        matches!(self.transport, Transport::Http(_))
    }

    pub fn next_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id)
    }

    /// Send a message and log both directions.
    pub async fn send(&mut self, out: &Outgoing) -> Result<Exchange, TransportError> {
        self.send_overlapped(out, false, || {}).await
    }

    /// [`Connection::send`], running `while_waiting` once the message is on its way
    /// (written to stdin; the HTTP request started): work done there costs no time
    /// between one request and the next.
    ///
    /// With `settle_later`, a stdio response may come back unparsed (`unsettled`): the
    /// caller settles it when it judges it, off the request-to-request path.
    pub async fn send_overlapped(
        &mut self,
        out: &Outgoing,
        settle_later: bool,
        while_waiting: impl FnOnce(),
    ) -> Result<Exchange, TransportError> {
        self.used |= self.opened;
        let sent_http = if self.is_http() {
            let mut parts = vec![out.http_method.clone().unwrap_or_else(|| "POST".into())];
            parts.extend(
                out.headers
                    .iter()
                    .filter(|(k, _)| !k.eq_ignore_ascii_case("authorization"))
                    .map(|(k, v)| format!("{k}: {v}")),
            );
            Some(parts.join(" | "))
        } else {
            None
        };
        self.record(Direction::Sent, out.body.clone(), sent_http);
        let mut result = match &mut self.transport {
            // The line is written, then the work runs while the server answers (a direct
            // stdio wait blocks inside its poll: it must not start before the work is done).
            Transport::Stdio(t) => match t.send(out).await {
                Ok(started) => {
                    while_waiting();
                    t.receive(out, started).await
                }
                Err(e) => {
                    while_waiting();
                    Err(e)
                }
            },
            Transport::Http(t) => sent_then(t.exchange(out), while_waiting).await,
            Transport::Shared(t) => sent_then(t.exchange(out), while_waiting).await,
        };
        match &mut result {
            Ok(ex) => {
                self.exchanged += ex.elapsed;
                if out.expects_response {
                    self.time_answer(ex.elapsed);
                }
                // What this connection reads from a response (a complete tools list, the
                // wire checks) needs it parsed now.
                if !settle_later || self.target.wire_validation || lists_tools(out) {
                    ex.settle();
                }
                self.record_received(ex);
                for note in std::mem::take(&mut ex.notes) {
                    self.record(Direction::Note, note, None);
                }
                let http = ex.http.as_ref().map(|h| {
                    let mut s = format!("HTTP {}", h.status);
                    for key in ["content-type", "mcp-session-id", "www-authenticate"] {
                        if let Some(v) = h.header(key) {
                            s.push_str(&format!(" | {key}: {v}"));
                        }
                    }
                    s
                });
                match (&ex.response, &ex.raw_body) {
                    (Some(r), _) => {
                        // The transcript keeps the text as received (nothing else reads it).
                        let text = ex.response_text.take().unwrap_or_else(|| r.to_string());
                        self.record(Direction::Received, text, http)
                    }
                    (None, Some(raw)) => self.record(
                        Direction::Received,
                        crate::ground::redact::shorten(raw, 4096),
                        http,
                    ),
                    // Unsettled: the text stays in the exchange to be parsed later.
                    (None, None) if ex.unsettled => {
                        let text = ex.response_text.clone().unwrap_or_default();
                        self.record(Direction::Received, text, http)
                    }
                    (None, None) => {
                        if http.is_some() {
                            self.record(Direction::Received, String::new(), http)
                        }
                    }
                }
                if let Some(Value::Object(result)) =
                    ex.response.as_ref().and_then(|r| r.get("result"))
                {
                    self.remember_tools(out, result);
                }
                if self.target.wire_validation {
                    self.validate_wire(out, ex);
                }
            }
            Err(e) => {
                let e = e.to_string();
                self.unanswered = None;
                if let Transport::Stdio(t) = &mut self.transport
                    && let Some(partial) = t.take_unanswered()
                {
                    self.record_received(&partial);
                    self.unanswered = describe_unanswered(&partial);
                }
                self.record(Direction::Note, e, None);
            }
        }
        if matches!(result, Err(TransportError::Timeout(_))) {
            self.timed_out = true;
            self.check_alive().await;
        }
        result
    }

    /// Listen for up to `window` without sending anything, and return the messages the
    /// server sent meanwhile (notifications it sends just after a reply). stdio only: over
    /// HTTP a request's messages come on its own stream, which has ended.
    pub async fn listen(&mut self, window: Duration) -> Result<Vec<Value>, TransportError> {
        let Transport::Stdio(t) = &mut self.transport else {
            return Ok(Vec::new());
        };
        let out = Outgoing {
            body: String::new(),
            id: None,
            expects_response: false,
            headers: Vec::new(),
            drop_headers: Vec::new(),
            http_method: None,
            timeout: window,
            quiet_period: window,
        };
        let mut ex = t.receive(&out, Instant::now()).await?;
        ex.settle();
        // A stray response (to nothing in flight) is kept with the other messages.
        let mut messages: Vec<Value> = std::mem::take(&mut ex.other_messages)
            .iter()
            .cloned()
            .collect();
        messages.extend(ex.response.take());
        for m in &messages {
            self.seen.saw(m);
            self.record(Direction::Received, m.to_string(), None);
            if super::is_server_request(m) {
                // The transport answered it, as during an exchange.
                self.server_requests.push(m.clone());
            }
            if self.target.wire_validation {
                let era = self.negotiated.kind;
                self.wire
                    .record(crate::protocol::wire::check_server_message(era, m));
            }
        }
        Ok(messages)
    }

    /// After a request timed out (stdio or HTTP): is anyone still answering? A harmless
    /// request (`ping`, modern `server/discover`) gets a short wait; if it times out too,
    /// the connection is dead and the scenario's remaining steps are not run, instead of
    /// each waiting out its own timeout. A server that is only slow on one request
    /// answers it and the run goes on.
    async fn check_alive(&mut self) {
        if self.probing
            || self.transport.closed_reason().is_some()
            || self.negotiated.handshake.is_none()
        {
            return;
        }
        let method = self.harmless_method();
        let id = self.next_id();
        let mut out = self.build_plain(method, None, Some(id));
        out.timeout = liveness_wait(
            self.slowest_answer.or(self.slowest_opening),
            self.target.timeout,
        );
        self.note(format!(
            "the request timed out: is the connection alive? (`{method}`, {} to answer)",
            humantime::format_duration(out.timeout)
        ));
        self.probing = true;
        let alive = Box::pin(self.send(&out)).await;
        self.probing = false;
        if let Err(TransportError::Timeout(d)) = alive {
            self.transport.mark_closed(format!(
                "the connection is dead: a request timed out, then `{method}` got no answer within {}",
                humantime::format_duration(d)
            ));
        }
    }

    /// Before a request due at once: a harmless request, timed (the server's speed right
    /// now), and the wait it gives ([`prompt_wait`]) within `timeout`. `None` (wait the
    /// whole timeout) when the connection is not open yet or broken, or the harmless
    /// request got no result.
    pub async fn prompt_wait(&mut self, timeout: Duration) -> Option<PromptWait> {
        if self.probing
            || self.transport.closed_reason().is_some()
            || self.negotiated.handshake.is_none()
        {
            return None;
        }
        let method = self.harmless_method();
        let id = self.next_id();
        let mut out = self.build_plain(method, None, Some(id));
        out.timeout = liveness_wait(self.slowest_answer.or(self.slowest_opening), timeout);
        self.probing = true;
        let sent = Box::pin(self.send(&out)).await;
        self.probing = false;
        let ex = sent.ok()?;
        result_of(&ex).ok()?;
        let wait = prompt_wait(ex.elapsed, timeout);
        (wait < timeout).then_some(PromptWait {
            rtt: ex.elapsed,
            method,
            wait,
            timeout,
        })
    }

    /// [`Connection::call`] of a request due at once (`what` it is, for the message): it
    /// waits [`Connection::prompt_wait`], not the whole timeout.
    pub async fn call_due_at_once(&mut self, method: &str, what: &str) -> Result<Value, String> {
        result_of(&self.exchange_due_at_once(method, what).await?)
    }

    /// The exchange of [`Connection::call_due_at_once`], whatever the server answered (a
    /// result or an error): `Err` only when it did not answer.
    pub async fn exchange_due_at_once(
        &mut self,
        method: &str,
        what: &str,
    ) -> Result<Exchange, String> {
        let prompt = self.prompt_wait(self.target.timeout).await;
        let id = self.next_id();
        let mut out = self.build_plain(method, None, Some(id));
        if let Some(p) = &prompt {
            out.timeout = p.wait;
        }
        match (self.send(&out).await, prompt) {
            (Ok(ex), _) => Ok(ex),
            (Err(TransportError::Timeout(d)), Some(p)) => Err(p.timed_out(d, what)),
            (Err(e), _) => Err(e.to_string()),
        }
    }

    /// Keep the answer time of a request of this connection's own (not a notification,
    /// whose "answer" is a quiet period; not a liveness probe; not one sent over a fresh
    /// connection, which includes a process start).
    fn time_answer(&mut self, took: Duration) {
        if self.probing {
            return;
        }
        let slowest = if self.negotiated.handshake.is_some() {
            &mut self.slowest_answer
        } else {
            &mut self.slowest_opening
        };
        *slowest = Some(slowest.map_or(took, |d| d.max(took)));
    }

    /// A request without params or effects that every server of this era answers with a
    /// result: `ping` (legacy), `server/discover` (modern, where `ping` was removed).
    pub fn harmless_method(&self) -> &'static str {
        match self.negotiated.kind {
            EraKind::Modern => methods::SERVER_DISCOVER,
            EraKind::Legacy => methods::PING,
        }
    }

    /// Why the connection cannot be used any more, if it cannot.
    pub fn broken_reason(&self) -> Option<&str> {
        self.transport.closed_reason()
    }

    /// Send a request built for this era and return its `result` (internal requests).
    pub async fn call(&mut self, method: &str, params: Option<Value>) -> Result<Value, String> {
        let id = self.next_id();
        let out = self.build_plain(method, params, Some(id));
        let ex = self.send(&out).await.map_err(|e| e.to_string())?;
        result_of(&ex)
    }

    /// Whether the server serves `method` at all: not when it answers -32601 (method not
    /// found); any other answer, error or not, counts as served.
    pub async fn serves(&mut self, method: &str) -> Result<bool, String> {
        let id = self.next_id();
        let out = self.build_plain(method, None, Some(id));
        let ex = self.send(&out).await.map_err(|e| e.to_string())?;
        Ok(!matches!(error_of(&ex), Some((code, _)) if code == errors::METHOD_NOT_FOUND))
    }

    /// All pages of a list method, merged (`key` is e.g. `tools`).
    pub async fn list_all(&mut self, method: &str, key: &str) -> Result<Vec<Value>, String> {
        let mut items = Vec::new();
        self.each_page(method, |result| {
            if let Some(page) = result.get(key).and_then(Value::as_array) {
                items.extend(page.iter().cloned());
            }
        })
        .await?;
        Ok(items)
    }

    /// Every page of a list method, in order, handed to `page` (the one walk of internal
    /// requests; a step's `paginate: true` follows the same [`Pages`] rule).
    pub async fn each_page(
        &mut self,
        method: &str,
        mut page: impl FnMut(&Value),
    ) -> Result<(), String> {
        let mut pages = Pages::new();
        let mut cursor: Option<Value> = None;
        loop {
            let params = cursor.take().map(|c| json!({ fields::CURSOR: c }));
            let result = self.call(method, params).await?;
            page(&result);
            match pages.after(method, &result)? {
                Some(next) => cursor = Some(next),
                None => return Ok(()),
            }
        }
    }

    /// The declared tools (fetched once, then cached).
    pub async fn tools(&mut self) -> Result<Vec<Value>, String> {
        if let Some(t) = &self.tools {
            return Ok(t.clone());
        }
        let tools = self
            .list_all(ListKind::Tools.method(), ListKind::Tools.result_key())
            .await?;
        self.tools = Some(tools.clone());
        Ok(tools)
    }

    /// Send a raw message over a brand-new transport (stdio: a separate, short-lived
    /// server process; HTTP: no session), then close it. Logged with this connection.
    pub async fn send_fresh(&mut self, out: &Outgoing) -> Result<Exchange, TransportError> {
        let started = Instant::now();
        let mut fresh = Transport::open(&self.target).map_err(|e| TransportError::Io(e.message))?;
        self.record(Direction::Note, "sent over a fresh connection".into(), None);
        std::mem::swap(&mut self.transport, &mut fresh);
        // A timeout here says nothing about this connection: no liveness probe.
        let probing = std::mem::replace(&mut self.probing, true);
        let result = self.send(out).await;
        self.probing = probing;
        std::mem::swap(&mut self.transport, &mut fresh);
        if let Transport::Stdio(mut t) = fresh {
            count_start(1, started.elapsed());
            t.shutdown().await;
        }
        result
    }

    /// Stderr written so far is start-up: a failure's tail shows only what comes after.
    pub async fn mark_started(&mut self) {
        if let Transport::Stdio(t) = &mut self.transport {
            t.mark_started().await;
        }
    }

    pub async fn stderr_tail(&self) -> Option<String> {
        match &self.transport {
            Transport::Stdio(t) => t.stderr_tail().await,
            Transport::Http(_) | Transport::Shared(_) => None,
        }
    }

    /// stdio: `n` requests of `method` written at once, responses collected in any order.
    /// Returns how many got a response and the non-JSON lines seen. `None` over HTTP.
    pub async fn burst(
        &mut self,
        method: &str,
        n: usize,
    ) -> Option<Result<(usize, Vec<String>), String>> {
        let mut outs = Vec::with_capacity(n);
        for _ in 0..n {
            let id = self.next_id();
            outs.push(self.build_plain(method, None, Some(id)));
        }
        let timeout = self.target.timeout;
        let Transport::Stdio(t) = &mut self.transport else {
            return None;
        };
        let result = t.burst(&outs, timeout).await;
        self.record(
            Direction::Note,
            format!("burst of {n} concurrent `{method}` requests"),
            None,
        );
        Some(match result {
            Ok((responses, noise)) => Ok((
                responses.iter().filter(|r| r.is_some()).count(),
                noise.iter().cloned().collect(),
            )),
            Err(e) => Err(e.to_string()),
        })
    }

    /// Non-JSON lines the server wrote on stdout over this connection (stdio).
    pub fn stdout_noise_total(&self) -> usize {
        match &self.transport {
            Transport::Stdio(t) => t.noise_total(),
            Transport::Http(_) | Transport::Shared(_) => 0,
        }
    }

    /// The first non-JSON line the server wrote on stdout over this connection (when its
    /// text was kept) and the start of the line written to it just before (stdio).
    pub fn first_stdout_noise(&self) -> Option<&(String, Option<String>)> {
        match &self.transport {
            Transport::Stdio(t) => t.first_noise(),
            Transport::Http(_) | Transport::Shared(_) => None,
        }
    }

    pub fn is_broken(&self) -> bool {
        self.transport.closed_reason().is_some()
    }

    async fn close_transport(&mut self) {
        // A session no step used is left to expire rather than ended at once: a server may
        // still be settling the handshake (mcp 1.9.4's session manager died of a DELETE
        // right after `initialized`, taking every later session with it).
        let sid = self.session_id.take().filter(|_| self.used);
        let delete = sid.map(|sid| self.session_delete(sid));
        match &mut self.transport {
            Transport::Stdio(t) => t.shutdown().await,
            Transport::Http(t) => {
                t.stop_listening();
                // A legacy session is ended explicitly (servers may answer 405: fine).
                if let Some(out) = delete {
                    let _ = t.exchange(&out).await;
                }
            }
            // The process ends with the last connection sharing it.
            Transport::Shared(_) => {}
        }
    }

    /// Requests the server sent to the client on this connection so far.
    pub fn server_requests(&self) -> &[Value] {
        &self.server_requests
    }

    /// The `notifications/message` the server sent on this connection since its scenario
    /// began (whatever the step that received them).
    pub fn logs_seen(&self) -> &LogsSeen {
        self.seen
            .of(crate::protocol::methods::NOTIFICATIONS_MESSAGE)
    }

    /// The notifications bound to a capability the server sent on this connection since
    /// its scenario began, by method.
    pub fn seen(&self) -> &NotificationsSeen {
        &self.seen
    }

    /// Hand over what the connection has seen so far (a scenario is done with it: the
    /// next scenario on the same process starts from nothing).
    pub fn take_seen(&mut self) -> NotificationsSeen {
        std::mem::take(&mut self.seen)
    }

    /// Answer the server's requests from `answerer` from now on (a warm process handed to
    /// a scenario with a `client:` of its own, in the modern era, where the capabilities
    /// travel with each request).
    pub fn answer_as(&mut self, answerer: Option<std::sync::Arc<super::answers::Answerer>>) {
        self.transport.set_answerer(answerer.clone());
        self.answerer = answerer;
        // The cached modern `_meta` holds the capabilities: made again for this client.
        self.meta_text = None;
    }

    /// The scenario's answers to the server's requests, if it declares a client.
    pub fn answerer(&self) -> Option<&super::answers::Answerer> {
        self.answerer.as_deref()
    }

    /// The answerer, shared (to answer while the connection is borrowed again).
    pub fn answerer_arc(&self) -> Option<std::sync::Arc<super::answers::Answerer>> {
        self.answerer.clone()
    }

    /// The `ClientCapabilities` this connection declares (`{}`: none).
    pub fn client_capabilities(&self) -> &Value {
        static NONE: std::sync::LazyLock<Value> =
            std::sync::LazyLock::new(|| Value::Object(Default::default()));
        match &self.answerer {
            Some(a) => a.capabilities(),
            None => &NONE,
        }
    }

    /// Whether `Mcp-Param-*` headers can be derived (the tool list is known).
    pub fn knows_tools(&self) -> bool {
        self.tools.is_some()
    }

    /// End the connection (stdio: close stdin → wait → SIGTERM → SIGKILL).
    pub async fn close(mut self) {
        self.close_transport().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_liveness_wait_follows_the_servers_speed_within_floor_and_ceiling() {
        let ms = Duration::from_millis;
        let secs = Duration::from_secs;
        // A fast server: the floor, not the timeout.
        assert_eq!(liveness_wait(Some(ms(3)), secs(30)), LIVENESS_FLOOR);
        // A slower one: a multiple of its slowest answer.
        assert_eq!(liveness_wait(Some(ms(800)), secs(30)), ms(3200));
        // Never past the timeout nor the ceiling.
        assert_eq!(liveness_wait(Some(ms(800)), secs(2)), secs(2));
        assert_eq!(liveness_wait(Some(secs(10)), secs(30)), LIVENESS_WAIT);
        assert_eq!(liveness_wait(Some(ms(1)), ms(500)), ms(500));
        // Nothing answered yet: as before, the timeout (at most the ceiling).
        assert_eq!(liveness_wait(None, secs(2)), secs(2));
    }
}

/// Drive `exchange` until it has sent its request (its first poll), run `while_waiting`, then
/// finish it.
async fn sent_then<F: std::future::Future>(exchange: F, while_waiting: impl FnOnce()) -> F::Output {
    let mut exchange = std::pin::pin!(exchange);
    let first = futures::poll!(exchange.as_mut());
    while_waiting();
    match first {
        std::task::Poll::Ready(result) => result,
        std::task::Poll::Pending => exchange.await,
    }
}

/// The `notifications/message` a server sent on a connection (or another notification
/// bound to a capability: [`NotificationsSeen`]): how many, and the first.
#[derive(Clone, Debug, Default)]
pub struct LogsSeen {
    pub count: usize,
    pub first: Option<Value>,
}

/// The server notifications bound to a capability
/// ([`crate::protocol::methods::CAPABILITY_BOUND`]) a connection received, by method:
/// for the undeclared-capability judgements, whatever the step that received them.
#[derive(Clone, Debug, Default)]
pub struct NotificationsSeen {
    /// In the order of `CAPABILITY_BOUND` (only methods seen at least once).
    pub by_method: Vec<(&'static str, LogsSeen)>,
}

impl NotificationsSeen {
    fn entry(&mut self, method: &'static str) -> &mut LogsSeen {
        let at = match self.by_method.iter().position(|(b, _)| *b == method) {
            Some(at) => at,
            None => {
                self.by_method.push((method, LogsSeen::default()));
                self.by_method.len() - 1
            }
        };
        &mut self.by_method[at].1
    }

    fn saw(&mut self, m: &Value) {
        let Some(method) = m.get("method").and_then(Value::as_str) else {
            return;
        };
        if let Some((bound, _)) = crate::protocol::methods::CAPABILITY_BOUND
            .iter()
            .find(|(b, _)| *b == method)
        {
            let seen = self.entry(bound);
            seen.count += 1;
            seen.first.get_or_insert_with(|| m.clone());
        }
    }

    /// Every message of `ex` besides its response (those not kept are counted too).
    fn saw_exchange(&mut self, ex: &Exchange) {
        for (method, _) in crate::protocol::methods::CAPABILITY_BOUND {
            let count = ex.other_messages.count(method);
            if count == 0 {
                continue;
            }
            let first = ex
                .other_messages
                .iter()
                .find(|m| m.get("method").and_then(Value::as_str) == Some(method))
                .cloned();
            let seen = self.entry(method);
            seen.count += count;
            if seen.first.is_none() {
                seen.first = first;
            }
        }
    }

    /// What was seen of `method` (none: an empty record).
    pub fn of(&self, method: &str) -> &LogsSeen {
        static NONE: LogsSeen = LogsSeen {
            count: 0,
            first: None,
        };
        self.by_method
            .iter()
            .find(|(b, _)| *b == method)
            .map_or(&NONE, |(_, seen)| seen)
    }

    pub fn is_empty(&self) -> bool {
        self.by_method.is_empty()
    }
}
