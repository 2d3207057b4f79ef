//! A connection in one era: opening it (handshake / discover / auto probe), building
//! era-correct requests, and logging every message for the step transcripts.

mod calls;
mod liveness;
mod negotiate;
mod open;
mod request;
mod reuse;
pub mod seen;
mod session;
mod shared;
mod transcript;
pub(super) mod transport;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Outgoing, Target, TransportError};
use crate::protocol::era::{EraKind, EraRequest, Negotiated};
use crate::results::exchange::Exchange;
use crate::results::exchange::{Direction, TranscriptEntry};
use request::lists_tools;
pub use request::{client_info, encode_header_value, expand_meta_key, name_header, raw_outgoing};
use reuse::count_start;
pub use reuse::{Handover, starts};
pub use shared::SharedProcess;
use transcript::describe_unanswered;
pub use transcript::{error_of, result_of};

use crate::protocol::methods;

use seen::{LogsSeen, NotificationsSeen};
use transport::Transport;

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
                || self
                    .transcript
                    .last()
                    .is_some_and(|t| t.direction == crate::results::exchange::Direction::Received))
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
