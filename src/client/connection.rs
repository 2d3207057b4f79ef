//! A connection in one era: opening it (handshake / discover / auto probe), building
//! era-correct requests, and logging every message for the step transcripts.

use std::time::{Duration, Instant};

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::http::HttpTransport;
use super::stdio::StdioTransport;
use super::{Exchange, Outgoing, Target, TargetKind, TransportError};
use crate::era::{EraKind, EraRequest, LATEST_LEGACY_REVISION, LEGACY_REVISIONS, MODERN_REVISION};
use crate::report::model::{Direction, TranscriptEntry};

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Error codes that only a modern server sends (a modern rejection, not "unknown method").
const MODERN_ERROR_CODES: &[i64] = &[-32020, -32021, -32022];
/// Longest wait for the `auto` probe before falling back to legacy.
const AUTO_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// After a request timed out: how long a harmless request may take to prove the
/// connection is still alive (at most the target's timeout).
const LIVENESS_WAIT: Duration = Duration::from_secs(5);

/// What the connection speaks, and how it got there.
#[derive(Debug, Clone)]
pub struct Negotiated {
    pub requested: String,
    pub kind: EraKind,
    pub revision: String,
    pub note: Option<String>,
    pub server_info: Option<Value>,
    pub capabilities: Value,
    pub supported_versions: Vec<String>,
    pub instructions: Option<String>,
    /// The handshake result as received: `initialize` (legacy) or `server/discover` (modern).
    pub handshake: Option<Value>,
    /// HTTP: the handshake response's headers (lower-case names); `None` over stdio.
    pub handshake_headers: Option<Vec<(String, String)>>,
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
}

pub(super) enum Transport {
    Stdio(StdioTransport),
    Http(HttpTransport),
}

impl Transport {
    fn open(target: &Target) -> Result<Transport, ConnectError> {
        match &target.kind {
            TargetKind::Stdio {
                program,
                args,
                env,
                cwd,
            } => {
                StdioTransport::spawn(program, args, env, cwd.as_deref(), target.max_message_bytes)
                    .map(Transport::Stdio)
                    .map_err(|e| ConnectError {
                        kind: ConnectErrorKind::Start,
                        message: format!("cannot start `{program}`: {e}"),
                        stderr_tail: None,
                        transcript: Vec::new(),
                    })
            }
            TargetKind::Http {
                url,
                headers,
                bearer,
            } => HttpTransport::new(url, headers, bearer.as_deref(), target.max_message_bytes)
                .map(Transport::Http)
                .map_err(|message| ConnectError {
                    kind: ConnectErrorKind::Unreachable,
                    message,
                    stderr_tail: None,
                    transcript: Vec::new(),
                }),
        }
    }

    /// Why the connection cannot be used any more (the stdio server exited or stopped
    /// answering; the HTTP target stopped answering), if it cannot.
    fn closed_reason(&self) -> Option<&str> {
        match self {
            Transport::Stdio(t) => t.closed_reason(),
            Transport::Http(t) => t.closed_reason(),
        }
    }

    fn mark_closed(&mut self, why: String) {
        match self {
            Transport::Stdio(t) => t.mark_closed(why),
            Transport::Http(t) => t.mark_closed(why),
        }
    }
}

pub struct Connection {
    pub(super) transport: Transport,
    target: Target,
    pub negotiated: Negotiated,
    next_id: u64,
    session_id: Option<String>,
    log: Vec<TranscriptEntry>,
    log_started: Instant,
    /// Tool definitions seen in `tools/list` replies (for `outputSchema` checks).
    tools: Option<Vec<Value>>,
    /// How this connection was asked to speak (a second connection asks the same).
    pub era_request: EraRequest,
    /// Wire validation of every message the server sent on this connection.
    wire: crate::wire::WireLog,
    /// Requests the server sent to the client on this connection (each was answered).
    server_requests: Vec<Value>,
    /// The modern `_meta` as text, for the revision it was made for.
    meta_text: Option<(String, String)>,
    /// A liveness probe is in flight (it does not probe itself).
    probing: bool,
    /// What the server wrote instead of answering the last failed exchange, for the
    /// step's report (taken once).
    unanswered: Option<String>,
}

impl Connection {
    /// Open a connection in the requested era.
    pub async fn open(
        target: &Target,
        era_label: &str,
        era: &EraRequest,
    ) -> Result<Connection, ConnectError> {
        let transport = Transport::open(target)?;
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
            session_id: None,
            log: Vec::new(),
            log_started: Instant::now(),
            tools: None,
            server_requests: Vec::new(),
            meta_text: None,
            probing: false,
            unanswered: None,
            era_request: era.clone(),
            wire: Default::default(),
        };
        let result = match era {
            EraRequest::Legacy => conn.handshake(LATEST_LEGACY_REVISION, false).await,
            EraRequest::PinnedLegacy(rev) => conn.handshake(rev, true).await,
            EraRequest::Modern(rev) => conn.discover(rev).await,
            EraRequest::Auto => match conn.probe().await {
                Ok(true) => Ok(()),
                Ok(false) => {
                    let note = conn.negotiated.note.take();
                    // A fresh process (stdio) or session: the probe may have left state behind.
                    conn.close_transport().await;
                    conn.transport = Transport::open(target)?;
                    let mut r = conn.handshake(LATEST_LEGACY_REVISION, false).await;
                    if let (Err(e), Some(note)) = (&mut r, &note)
                        && e.kind == ConnectErrorKind::Unreachable
                    {
                        e.message.push_str(&format!(" (tried first: {note})"));
                    }
                    conn.negotiated.note = note;
                    r
                }
                Err(e) => Err(e),
            },
        };
        match result {
            Ok(()) => Ok(conn),
            Err(mut e) => {
                e.transcript = conn.take_log();
                e.stderr_tail = conn.stderr_tail();
                conn.close().await;
                Err(e)
            }
        }
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

    /// A request (or notification) for this era with no `_meta` or header overrides.
    pub fn build_plain(
        &mut self,
        method: &str,
        params: Option<Value>,
        id: Option<Value>,
    ) -> Outgoing {
        let timeout = self.target.timeout;
        self.build(
            method,
            params,
            id,
            &IndexMap::new(),
            &IndexMap::new(),
            timeout,
        )
    }

    /// Build a request (or notification when `id` is `None`) for this connection's era.
    pub fn build(
        &mut self,
        method: &str,
        params: Option<Value>,
        id: Option<Value>,
        meta_overrides: &IndexMap<String, Value>,
        header_overrides: &IndexMap<String, Option<String>>,
        timeout: Duration,
    ) -> Outgoing {
        if is_plain(params.as_ref(), meta_overrides) {
            return self.build_ref(
                method,
                params.as_ref(),
                id,
                meta_overrides,
                header_overrides,
                timeout,
            );
        }
        // Owned params go to the general path as they are (no copy).
        self.build_general(
            method,
            params,
            id,
            meta_overrides,
            header_overrides,
            timeout,
        )
    }

    /// [`Connection::build`] from borrowed params. The common case (object params with
    /// no `_meta` of their own, no `_meta` overrides) is written straight to text: no
    /// copy of the params, no intermediate message value.
    pub fn build_ref(
        &mut self,
        method: &str,
        params: Option<&Value>,
        id: Option<Value>,
        meta_overrides: &IndexMap<String, Value>,
        header_overrides: &IndexMap<String, Option<String>>,
        timeout: Duration,
    ) -> Outgoing {
        if is_plain(params, meta_overrides) {
            let params = params.and_then(Value::as_object);
            let body = self.plain_body(method, params, id.as_ref());
            // Headers travel over HTTP only; stdio skips making them.
            let headers = if self.is_http() {
                self.era_headers(method, None, params)
            } else {
                Vec::new()
            };
            return self.finish_text(body, id, header_overrides, headers, timeout);
        }
        self.build_general(
            method,
            params.cloned(),
            id,
            meta_overrides,
            header_overrides,
            timeout,
        )
    }

    /// The message text of [`Connection::build_ref`]'s common case, byte for byte what
    /// the general path serializes: `jsonrpc`, `id`, `method`, then `params` with the
    /// era's `_meta` appended (modern).
    fn plain_body(
        &mut self,
        method: &str,
        params: Option<&Map<String, Value>>,
        id: Option<&Value>,
    ) -> String {
        let modern = self.negotiated.kind == EraKind::Modern;
        let mut body: Vec<u8> = Vec::with_capacity(256);
        body.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
        if let Some(id) = id {
            body.extend_from_slice(b"\"id\":");
            let _ = serde_json::to_writer(&mut body, id);
            body.push(b',');
        }
        body.extend_from_slice(b"\"method\":");
        let _ = serde_json::to_writer(&mut body, method);
        if params.is_some() || modern {
            body.extend_from_slice(b",\"params\":{");
            let mut first = true;
            for (key, value) in params.into_iter().flatten() {
                if !first {
                    body.push(b',');
                }
                first = false;
                let _ = serde_json::to_writer(&mut body, key);
                body.push(b':');
                let _ = serde_json::to_writer(&mut body, value);
            }
            if modern {
                if !first {
                    body.push(b',');
                }
                body.extend_from_slice(b"\"_meta\":");
                body.extend_from_slice(self.modern_meta_text().as_bytes());
            }
            body.push(b'}');
        }
        body.push(b'}');
        // serde_json writes UTF-8 only.
        String::from_utf8(body).unwrap_or_default()
    }

    /// The modern `_meta` every request carries, serialized once per revision.
    fn modern_meta_text(&mut self) -> &str {
        let revision = &self.negotiated.revision;
        if self.meta_text.as_ref().is_none_or(|(r, _)| r != revision) {
            let text = Value::Object(modern_meta(revision)).to_string();
            self.meta_text = Some((revision.clone(), text));
        }
        self.meta_text.as_ref().map_or("", |(_, t)| t)
    }

    fn build_general(
        &mut self,
        method: &str,
        params: Option<Value>,
        id: Option<Value>,
        meta_overrides: &IndexMap<String, Value>,
        header_overrides: &IndexMap<String, Option<String>>,
        timeout: Duration,
    ) -> Outgoing {
        let mut params = match params {
            Some(Value::Object(m)) => Some(m),
            Some(other) => {
                // Non-object params go out as given (a deliberate probe).
                return self.finish(
                    method,
                    json_message(method, Some(other), id.clone()),
                    id,
                    header_overrides,
                    None,
                    timeout,
                );
            }
            None => None,
        };
        let mut protocol_header = None;
        if self.negotiated.kind == EraKind::Modern || !meta_overrides.is_empty() {
            let p = params.get_or_insert_with(Map::new);
            let mut meta = match p.remove("_meta") {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            if self.negotiated.kind == EraKind::Modern {
                let mut base = modern_meta(&self.negotiated.revision);
                base.extend(meta);
                meta = base;
            }
            for (key, value) in meta_overrides {
                let key = expand_meta_key(key);
                if value.is_null() {
                    meta.remove(&key);
                } else {
                    meta.insert(key, value.clone());
                }
            }
            protocol_header = meta
                .get(META_PROTOCOL_VERSION)
                .and_then(Value::as_str)
                .map(str::to_string);
            if !meta.is_empty() {
                p.insert("_meta".into(), Value::Object(meta));
            } else if p.is_empty() {
                params = None;
            }
        }
        let headers = self.era_headers(method, protocol_header, params.as_ref());
        let body = json_message(method, params.map(Value::Object), id.clone());
        self.finish(method, body, id, header_overrides, Some(headers), timeout)
    }

    /// The HTTP headers a message of this era carries (its `params` name the tool, prompt
    /// or resource and fill `Mcp-Param-*`).
    fn era_headers(
        &self,
        method: &str,
        protocol_header: Option<String>,
        params: Option<&Map<String, Value>>,
    ) -> Vec<(String, String)> {
        let name = params
            .and_then(|p| match method {
                "tools/call" | "prompts/get" => p.get("name"),
                "resources/read" => p.get("uri"),
                _ => None,
            })
            .and_then(Value::as_str);
        let modern_call = self.negotiated.kind == EraKind::Modern && method == "tools/call";
        let param_headers = match params {
            Some(p) if modern_call => self.param_headers(p),
            _ => Vec::new(),
        };
        let mut headers: Vec<(String, String)> = Vec::new();
        match self.negotiated.kind {
            EraKind::Modern => {
                let version = protocol_header.unwrap_or_else(|| self.negotiated.revision.clone());
                headers.push(("MCP-Protocol-Version".into(), version));
                headers.push(("Mcp-Method".into(), method.to_string()));
                if let Some(n) = name {
                    headers.push(("Mcp-Name".into(), encode_header_value(n)));
                }
                headers.extend(param_headers);
            }
            EraKind::Legacy => {
                if !self.negotiated.revision.is_empty() && method != "initialize" {
                    headers.push((
                        "MCP-Protocol-Version".into(),
                        self.negotiated.revision.clone(),
                    ));
                }
                if let Some(sid) = &self.session_id {
                    headers.push(("Mcp-Session-Id".into(), sid.clone()));
                }
            }
        }
        headers
    }

    fn finish(
        &self,
        _method: &str,
        body: Value,
        id: Option<Value>,
        header_overrides: &IndexMap<String, Option<String>>,
        headers: Option<Vec<(String, String)>>,
        timeout: Duration,
    ) -> Outgoing {
        let body = serde_json::to_string(&body).unwrap_or_default();
        self.finish_text(
            body,
            id,
            header_overrides,
            headers.unwrap_or_default(),
            timeout,
        )
    }

    fn finish_text(
        &self,
        body: String,
        id: Option<Value>,
        header_overrides: &IndexMap<String, Option<String>>,
        mut headers: Vec<(String, String)>,
        timeout: Duration,
    ) -> Outgoing {
        let mut drop_headers = Vec::new();
        apply_header_overrides(&mut headers, &mut drop_headers, header_overrides);
        Outgoing {
            body,
            expects_response: id.is_some(),
            id,
            headers,
            drop_headers,
            http_method: None,
            timeout,
            quiet_period: Duration::ZERO,
        }
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
            Transport::Http(t) => {
                let exchange = t.exchange(out);
                let mut exchange = std::pin::pin!(exchange);
                let first = futures::poll!(exchange.as_mut());
                while_waiting();
                match first {
                    std::task::Poll::Ready(result) => result,
                    std::task::Poll::Pending => exchange.await,
                }
            }
        };
        match &mut result {
            Ok(ex) => {
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
                    (None, Some(raw)) => {
                        self.record(Direction::Received, crate::redact::shorten(raw, 4096), http)
                    }
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
            self.record(Direction::Received, m.to_string(), None);
            if super::server_request_reply(m).is_some() {
                // The transport answered it, as during an exchange.
                self.server_requests.push(m.clone());
            }
            if self.target.wire_validation {
                let era = self.negotiated.kind;
                self.wire.record(crate::wire::check_server_message(era, m));
            }
        }
        Ok(messages)
    }

    /// Transcript entries for what came with (or instead of) a response: the kept
    /// messages and non-JSON lines, and how many more were not kept.
    fn record_received(&mut self, ex: &Exchange) {
        for m in &ex.other_messages {
            self.record(Direction::Received, m.to_string(), None);
            if super::server_request_reply(m).is_some() {
                self.server_requests.push(m.clone());
                self.record(
                    Direction::Note,
                    "a server-initiated request: answered with -32601 (mcpspec declares no client capabilities)".into(),
                    None,
                );
            }
        }
        if ex.other_messages.dropped() > 0 {
            let counts: Vec<String> = ex
                .other_messages
                .counts()
                .map(|(m, n)| format!("{} × {n}", m.unwrap_or("(no method)")))
                .collect();
            self.record(
                Direction::Note,
                format!(
                    "{} messages received, {} not kept in this transcript (the first and last {} are); by method: {}",
                    ex.other_messages.len(),
                    ex.other_messages.dropped(),
                    super::KEPT_EACH_END,
                    counts.join(", ")
                ),
                None,
            );
        }
        for line in &ex.stdout_noise {
            self.record(
                Direction::Note,
                format!("non-JSON output from the server: {line}"),
                None,
            );
        }
        if ex.stdout_noise.dropped() > 0 {
            self.record(
                Direction::Note,
                format!(
                    "{} non-JSON lines in all, {} not kept in this transcript",
                    ex.stdout_noise.len(),
                    ex.stdout_noise.dropped()
                ),
                None,
            );
        }
    }

    /// What the server wrote instead of answering the last failed exchange (non-JSON
    /// lines), once: the step's error shows it.
    pub fn take_unanswered(&mut self) -> Option<String> {
        self.unanswered.take()
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
        let method = match self.negotiated.kind {
            EraKind::Modern => "server/discover",
            EraKind::Legacy => "ping",
        };
        let id = self.next_id();
        let mut out = self.build_plain(method, None, Some(id));
        out.timeout = self.target.timeout.min(LIVENESS_WAIT);
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

    /// All pages of a list method, merged (`key` is e.g. `tools`).
    pub async fn list_all(&mut self, method: &str, key: &str) -> Result<Vec<Value>, String> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..10_000 {
            let params = cursor.take().map(|c| json!({ "cursor": c }));
            let result = self.call(method, params).await?;
            if let Some(page) = result.get(key).and_then(Value::as_array) {
                items.extend(page.iter().cloned());
            }
            match result.get("nextCursor") {
                Some(c) if !c.is_null() => cursor = Some(c.clone()),
                _ => return Ok(items),
            }
        }
        Err(format!(
            "{method}: pagination did not end after 10000 pages"
        ))
    }

    /// The declared tools (fetched once, then cached).
    pub async fn tools(&mut self) -> Result<Vec<Value>, String> {
        if let Some(t) = &self.tools {
            return Ok(t.clone());
        }
        let tools = self.list_all("tools/list", "tools").await?;
        self.tools = Some(tools.clone());
        Ok(tools)
    }

    fn remember_tools(&mut self, out: &Outgoing, result: &Map<String, Value>) {
        // Only a complete list (first page without a next one) is a safe cache.
        if !result.contains_key("tools") || result.get("nextCursor").is_some() || !lists_tools(out)
        {
            return;
        }
        let body: Option<Value> = serde_json::from_str(&out.body).ok();
        let is_first_page = body.as_ref().is_some_and(|b| {
            b.get("method").and_then(Value::as_str) == Some("tools/list")
                && b.pointer("/params/cursor").is_none()
        });
        if !is_first_page {
            return;
        }
        if let Some(tools) = result.get("tools").and_then(Value::as_array) {
            self.tools = Some(tools.clone());
        }
    }

    /// Send a raw message over a brand-new transport (stdio: a separate, short-lived
    /// server process; HTTP: no session), then close it. Logged with this connection.
    pub async fn send_fresh(&mut self, out: &Outgoing) -> Result<Exchange, TransportError> {
        let mut fresh = Transport::open(&self.target).map_err(|e| TransportError::Io(e.message))?;
        self.record(Direction::Note, "sent over a fresh connection".into(), None);
        std::mem::swap(&mut self.transport, &mut fresh);
        // A timeout here says nothing about this connection: no liveness probe.
        let probing = std::mem::replace(&mut self.probing, true);
        let result = self.send(out).await;
        self.probing = probing;
        std::mem::swap(&mut self.transport, &mut fresh);
        if let Transport::Stdio(mut t) = fresh {
            t.shutdown().await;
        }
        result
    }

    /// Validate what came back for `out` against its revision's message schema.
    fn validate_wire(&mut self, out: &Outgoing, ex: &Exchange) {
        let era = self.negotiated.kind;
        for m in &ex.other_messages {
            self.wire.record(crate::wire::check_server_message(era, m));
        }
        if let Some(response) = &ex.response {
            let body: Option<Value> = serde_json::from_str(&out.body).ok();
            let method = body
                .as_ref()
                .and_then(|b| b.get("method"))
                .and_then(Value::as_str);
            let era = body
                .as_ref()
                .map_or(era, |b| crate::wire::era_of_request(b, era));
            self.wire
                .record(crate::wire::check_response(era, method, response));
        }
    }

    /// Wire validation so far: messages checked and the violations found, oldest first.
    /// Wire-validate one message the server sent outside an exchange (`--wire-validate`).
    pub(super) fn validate_message(&mut self, msg: &Value) {
        if self.target.wire_validation {
            let era = self.negotiated.kind;
            self.wire
                .record(crate::wire::check_server_message(era, msg));
        }
    }

    pub fn wire_log(&self) -> &crate::wire::WireLog {
        &self.wire
    }

    /// Transcript entries since the last call.
    pub fn take_log(&mut self) -> Vec<TranscriptEntry> {
        self.log_started = Instant::now();
        std::mem::take(&mut self.log)
    }

    /// A note in the transcript (retries, probes).
    pub fn note(&mut self, text: String) {
        self.record(Direction::Note, text, None);
    }

    pub(super) fn record(&mut self, direction: Direction, body: String, http: Option<String>) {
        self.log.push(TranscriptEntry {
            direction,
            at_ms: self.log_started.elapsed().as_millis() as u64,
            body,
            http,
        });
    }

    pub fn stderr_tail(&self) -> Option<String> {
        match &self.transport {
            Transport::Stdio(t) => t.stderr_tail(),
            Transport::Http(_) => None,
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
            Transport::Http(_) => 0,
        }
    }

    pub fn is_broken(&self) -> bool {
        self.transport.closed_reason().is_some()
    }

    async fn close_transport(&mut self) {
        let delete = self.session_id.take().map(|sid| self.session_delete(sid));
        match &mut self.transport {
            Transport::Stdio(t) => t.shutdown().await,
            Transport::Http(t) => {
                // A legacy session is ended explicitly (servers may answer 405: fine).
                if let Some(out) = delete {
                    let _ = t.exchange(&out).await;
                }
            }
        }
    }

    /// The DELETE that ends legacy session `sid`.
    fn session_delete(&self, sid: String) -> Outgoing {
        Outgoing {
            body: String::new(),
            id: None,
            expects_response: false,
            headers: vec![
                ("Mcp-Session-Id".into(), sid),
                (
                    "MCP-Protocol-Version".into(),
                    self.negotiated.revision.clone(),
                ),
            ],
            drop_headers: vec!["content-type".into()],
            http_method: Some("DELETE".into()),
            timeout: self.target.timeout.min(Duration::from_secs(2)),
            quiet_period: Duration::ZERO,
        }
    }

    /// The legacy session id the server assigned at `initialize` (HTTP).
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// HTTP: end the legacy session with a DELETE (logged) and return its HTTP status;
    /// the connection keeps sending the (now terminated) session id. `None` without a
    /// session.
    pub async fn end_session(&mut self) -> Option<Result<u16, TransportError>> {
        let sid = self.session_id.clone()?;
        let out = self.session_delete(sid);
        Some(
            self.send(&out)
                .await
                .map(|ex| ex.http.map_or(0, |h| h.status)),
        )
    }

    /// Requests the server sent to the client on this connection so far.
    pub fn server_requests(&self) -> &[Value] {
        &self.server_requests
    }

    /// HTTP: the first SSE event of a GET on the endpoint (see
    /// [`HttpTransport::first_sse_event`]), logged. `None` over stdio.
    pub async fn first_sse_event(
        &mut self,
        wait: Duration,
    ) -> Option<Result<(u16, Option<(String, String)>), TransportError>> {
        let Transport::Http(t) = &self.transport else {
            return None;
        };
        let result = t.first_sse_event(wait).await;
        let note = match &result {
            Ok((status, Some((event, data)))) => {
                format!(
                    "GET (Accept: text/event-stream): HTTP {status}, first event `{event}`: {data}"
                )
            }
            Ok((status, None)) => {
                format!("GET (Accept: text/event-stream): HTTP {status}, no event")
            }
            Err(e) => format!("GET (Accept: text/event-stream): {e}"),
        };
        self.record(Direction::Note, note, None);
        Some(result)
    }

    /// HTTP: GET `path` on the endpoint's origin as JSON, logged. `None` over stdio.
    pub async fn get_json(
        &mut self,
        path: &str,
        wait: Duration,
    ) -> Option<Result<(u16, Option<Value>), TransportError>> {
        let Transport::Http(t) = &self.transport else {
            return None;
        };
        let result = t.get_json(path, wait).await;
        let note = match &result {
            Ok((status, body)) => format!(
                "GET {path}: HTTP {status}{}",
                body.as_ref()
                    .map(|b| format!(", {}", crate::redact::shorten(&b.to_string(), 500)))
                    .unwrap_or_default()
            ),
            Err(e) => format!("GET {path}: {e}"),
        };
        self.record(Direction::Note, note, None);
        Some(result)
    }

    /// Whether `Mcp-Param-*` headers can be derived (the tool list is known).
    pub fn knows_tools(&self) -> bool {
        self.tools.is_some()
    }

    /// `Mcp-Param-{X}` headers for arguments whose schema property has `x-mcp-header`.
    fn param_headers(&self, params: &Map<String, Value>) -> Vec<(String, String)> {
        let (Some(tools), Some(name), Some(args)) = (
            &self.tools,
            params.get("name").and_then(Value::as_str),
            params.get("arguments").and_then(Value::as_object),
        ) else {
            return Vec::new();
        };
        let Some(tool) = tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        else {
            return Vec::new();
        };
        let mut headers = Vec::new();
        collect_param_headers(
            tool.get("inputSchema"),
            Some(&Value::Object(args.clone())),
            &mut headers,
        );
        headers
    }

    /// End the connection (stdio: close stdin → wait → SIGTERM → SIGKILL).
    pub async fn close(mut self) {
        self.close_transport().await;
    }

    // ---- era negotiation ----

    async fn handshake(&mut self, offer: &str, pinned: bool) -> Result<(), ConnectError> {
        self.negotiated.kind = EraKind::Legacy;
        self.negotiated.revision = String::new();
        let id = self.next_id();
        let params = json!({
            "protocolVersion": offer,
            "capabilities": {},
            "clientInfo": client_info(),
        });
        let out = self.build_plain("initialize", Some(params), Some(id));
        let ex = self.connect_exchange(&out).await?;
        let result =
            result_of(&ex).map_err(|e| self.protocol_error(format!("initialize failed: {e}")))?;
        let answered = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if pinned && answered != offer {
            return Err(self.protocol_error(format!(
                "the server answered initialize with protocol revision `{answered}`, not the pinned `{offer}`: pin the revision it speaks, or use --era legacy"
            )));
        }
        if !LEGACY_REVISIONS.contains(&answered.as_str()) {
            return Err(self.protocol_error(format!(
                "the server answered initialize with protocol revision `{answered}`, which is not a legacy revision mcpspec knows ({})",
                LEGACY_REVISIONS.join(", ")
            )));
        }
        if let Some(sid) = ex.http.as_ref().and_then(|h| h.header("mcp-session-id")) {
            self.session_id = Some(sid.to_string());
        }
        self.negotiated.handshake_headers = ex.http.as_ref().map(|h| h.headers.clone());
        self.negotiated.revision = answered;
        self.negotiated.server_info = result.get("serverInfo").cloned();
        self.negotiated.handshake = Some(result.clone());
        self.negotiated.instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.negotiated.capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        if answered_differs(offer, &self.negotiated.revision) {
            self.negotiated.note = Some(format!(
                "offered {offer}; the server counter-offered {}",
                self.negotiated.revision
            ));
        }
        let out = self.build_plain("notifications/initialized", None, None);
        if let Transport::Stdio(t) = &mut self.transport {
            t.mark_handshake();
        }
        match self.connect_exchange(&out).await {
            // It started and answered: what went wrong next is the first step's to report.
            Err(e) if e.kind == ConnectErrorKind::Start => {
                if let Transport::Stdio(t) = &mut self.transport {
                    t.mark_closed(format!(
                        "the server closed the connection after the handshake: {}",
                        e.message
                            .strip_prefix("the server did not start: ")
                            .unwrap_or(&e.message)
                    ));
                }
                Ok(())
            }
            Err(e) => Err(e),
            Ok(_) => Ok(()),
        }
    }

    async fn discover(&mut self, revision: &str) -> Result<(), ConnectError> {
        self.negotiated.kind = EraKind::Modern;
        self.negotiated.revision = revision.to_string();
        let id = self.next_id();
        let out = self.build_plain("server/discover", None, Some(id));
        let ex = self.connect_exchange(&out).await?;
        let result = result_of(&ex).map_err(|e| {
            self.protocol_error(format!(
                "the server did not accept protocol {revision}: server/discover answered {e} ({})",
                refusal_hint(&ex)
            ))
        })?;
        self.adopt_discover(&result);
        self.negotiated.handshake_headers = ex.http.as_ref().map(|h| h.headers.clone());
        if !self
            .negotiated
            .supported_versions
            .iter()
            .any(|v| v == revision)
        {
            return Err(self.protocol_error(format!(
                "the server did not accept protocol {revision}: server/discover lists supportedVersions {:?}",
                self.negotiated.supported_versions
            )));
        }
        Ok(())
    }

    /// `auto`: true when the server is modern, false to fall back to legacy.
    async fn probe(&mut self) -> Result<bool, ConnectError> {
        self.negotiated.kind = EraKind::Modern;
        self.negotiated.revision = MODERN_REVISION.to_string();
        let id = self.next_id();
        let timeout = self.target.timeout.min(AUTO_PROBE_TIMEOUT);
        let out = self.build(
            "server/discover",
            None,
            Some(id),
            &IndexMap::new(),
            &IndexMap::new(),
            timeout,
        );
        let outcome = match self.send(&out).await {
            Ok(ex) => {
                if let Some(status @ (401 | 403)) = ex.http.as_ref().map(|h| h.status) {
                    return Err(self.auth_error(status));
                }
                match (
                    ex.response.as_ref().and_then(|r| r.get("result")),
                    error_of(&ex),
                ) {
                    (Some(result), _) => {
                        let result = result.clone();
                        self.adopt_discover(&result);
                        self.negotiated.handshake_headers =
                            ex.http.as_ref().map(|h| h.headers.clone());
                        if self
                            .negotiated
                            .supported_versions
                            .iter()
                            .any(|v| v == MODERN_REVISION)
                        {
                            self.negotiated.note =
                                Some(format!("auto: server/discover lists {MODERN_REVISION}"));
                            return Ok(true);
                        }
                        format!(
                            "server/discover lists only {:?}",
                            self.negotiated.supported_versions
                        )
                    }
                    (None, Some((code, message))) if MODERN_ERROR_CODES.contains(&code) => {
                        self.negotiated.note = Some(format!(
                            "auto: server/discover answered modern error {code} ({message})"
                        ));
                        return Ok(true);
                    }
                    (None, Some((code, message))) => {
                        format!("server/discover answered {code} ({message})")
                    }
                    (None, None) => match ex.http.as_ref() {
                        Some(h) => format!(
                            "server/discover got HTTP {} without a JSON-RPC response",
                            h.status
                        ),
                        None => "server/discover got no JSON-RPC response".into(),
                    },
                }
            }
            Err(TransportError::Unreachable(e)) => {
                return Err(ConnectError {
                    kind: ConnectErrorKind::Unreachable,
                    message: format!(
                        "cannot reach {} (POST server/discover): {e}",
                        self.target.location()
                    ),
                    stderr_tail: None,
                    transcript: Vec::new(),
                });
            }
            Err(e) => format!("server/discover: {e}"),
        };
        self.negotiated.note = Some(format!("auto: {outcome}; fell back to legacy"));
        self.negotiated.kind = EraKind::Legacy;
        self.negotiated.revision = String::new();
        Ok(false)
    }

    fn adopt_discover(&mut self, result: &Value) {
        self.negotiated.handshake = Some(result.clone());
        self.negotiated.supported_versions = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        self.negotiated.capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        self.negotiated.instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.negotiated.server_info = result
            .get("_meta")
            .and_then(|m| m.get(META_SERVER_INFO))
            .cloned();
    }

    /// An exchange during connection setup: transport failures become connect errors.
    async fn connect_exchange(&mut self, out: &Outgoing) -> Result<Exchange, ConnectError> {
        match self.send(out).await {
            Ok(ex) => {
                if let Some(status @ (401 | 403)) = ex.http.as_ref().map(|h| h.status) {
                    return Err(self.auth_error(status));
                }
                // A handshake answered 404 with no JSON-RPC message: nothing at this URL
                // speaks MCP (a mistyped path), whatever the era.
                if ex.response.is_none()
                    && ex.http.as_ref().is_some_and(|h| h.status == 404)
                    && matches!(out_method(out).as_str(), "initialize" | "server/discover")
                {
                    return Err(ConnectError {
                        kind: ConnectErrorKind::Unreachable,
                        message: format!(
                            "no MCP endpoint at {}: POST {} answered HTTP 404 (check the URL's path)",
                            self.target.location(),
                            out_method(out)
                        ),
                        stderr_tail: None,
                        transcript: Vec::new(),
                    });
                }
                Ok(ex)
            }
            Err(e) => {
                // Unreachable only when no connection could be made: a connection that
                // broke after reaching the server is the server's failure.
                let kind = match (&e, self.is_http()) {
                    (TransportError::Unreachable(_), _) => ConnectErrorKind::Unreachable,
                    (TransportError::Closed(_), false) => ConnectErrorKind::Start,
                    _ => ConnectErrorKind::Protocol,
                };
                let what = out_method(out);
                Err(ConnectError {
                    kind,
                    message: match kind {
                        ConnectErrorKind::Start => format!("the server did not start: {e}"),
                        ConnectErrorKind::Unreachable => match &e {
                            TransportError::Unreachable(detail) => format!(
                                "cannot reach {} (POST {what}): {detail}",
                                self.target.location()
                            ),
                            other => format!(
                                "cannot reach {} (POST {what}): {other}",
                                self.target.location()
                            ),
                        },
                        _ => format!("{what}: {e}"),
                    },
                    stderr_tail: None,
                    transcript: Vec::new(),
                })
            }
        }
    }

    fn auth_error(&self, status: u16) -> ConnectError {
        ConnectError {
            kind: ConnectErrorKind::Auth,
            message: format!(
                "the server requires authentication (HTTP {status}); pass a token with --bearer-env VAR or --header"
            ),
            stderr_tail: None,
            transcript: Vec::new(),
        }
    }

    fn protocol_error(&self, message: String) -> ConnectError {
        ConnectError {
            kind: ConnectErrorKind::Protocol,
            message,
            stderr_tail: None,
            transcript: Vec::new(),
        }
    }
}

/// Walk `properties` chains (only those: not items, combinators or refs) for
/// `x-mcp-header` annotations with a present, non-null value.
fn collect_param_headers(
    schema: Option<&Value>,
    value: Option<&Value>,
    out: &mut Vec<(String, String)>,
) {
    let (Some(props), Some(Value::Object(values))) = (
        schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object),
        value,
    ) else {
        return;
    };
    for (key, prop) in props {
        let v = values.get(key);
        if let (Some(header), Some(v)) = (prop.get("x-mcp-header").and_then(Value::as_str), v) {
            let text = match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            };
            if let Some(text) = text {
                out.push((format!("Mcp-Param-{header}"), encode_header_value(&text)));
            }
        }
        collect_param_headers(Some(prop), v, out);
    }
}

/// Header values that are not safe visible ASCII are sent as `=?base64?…?=`.
pub fn encode_header_value(value: &str) -> String {
    let safe = !value.is_empty()
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if safe {
        value.to_string()
    } else {
        format!("=?base64?{}?=", base64_encode(value.as_bytes()))
    }
}

fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn answered_differs(offer: &str, answered: &str) -> bool {
    offer != answered
}

/// Whether [`Connection::build_ref`] writes the message straight to text: object params
/// (or none) without a `_meta` of their own, and no `_meta` overrides.
fn is_plain(params: Option<&Value>, meta_overrides: &IndexMap<String, Value>) -> bool {
    meta_overrides.is_empty()
        && match params {
            None => true,
            Some(Value::Object(p)) => !p.contains_key("_meta"),
            Some(_) => false,
        }
}

/// Whether `out` is a `tools/list` request (a cheap look at its text).
fn lists_tools(out: &Outgoing) -> bool {
    out.body.contains("\"tools/list\"")
}

fn out_method(out: &Outgoing) -> String {
    serde_json::from_str::<Value>(&out.body)
        .ok()
        .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "request".into())
}

/// `mcpspec` as the client's `Implementation`.
pub fn client_info() -> Value {
    json!({ "name": "mcpspec", "version": env!("CARGO_PKG_VERSION") })
}

/// The `_meta` of a modern request: revision, (no) client capabilities, client info.
fn modern_meta(revision: &str) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(META_PROTOCOL_VERSION.into(), json!(revision));
    meta.insert(META_CLIENT_CAPABILITIES.into(), json!({}));
    meta.insert(META_CLIENT_INFO.into(), client_info());
    meta
}

/// Short `_meta` names → full `io.modelcontextprotocol/` keys.
pub fn expand_meta_key(key: &str) -> String {
    match key {
        "protocolVersion" | "clientCapabilities" | "clientInfo" | "logLevel" => {
            format!("io.modelcontextprotocol/{key}")
        }
        other => other.to_string(),
    }
}

fn json_message(method: &str, params: Option<Value>, id: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), json!("2.0"));
    if let Some(id) = id {
        m.insert("id".into(), id);
    }
    m.insert("method".into(), json!(method));
    if let Some(p) = params {
        m.insert("params".into(), p);
    }
    Value::Object(m)
}

fn apply_header_overrides(
    headers: &mut Vec<(String, String)>,
    drop_headers: &mut Vec<String>,
    overrides: &IndexMap<String, Option<String>>,
) {
    for (name, value) in overrides {
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        match value {
            Some(v) => headers.push((name.clone(), v.clone())),
            None => drop_headers.push(name.to_ascii_lowercase()),
        }
    }
}

/// The `result` of a response, or a one-line description of what came instead.
/// The non-JSON lines a failed exchange saw, for the step's error: what the server wrote
/// instead of a reply (already cut to a bounded length per line).
fn describe_unanswered(ex: &Exchange) -> Option<String> {
    let noise = &ex.stdout_noise;
    let first = noise.first()?;
    let mut text = format!(
        "instead of a reply the server wrote {} non-JSON line(s) on stdout, starting with: {first}",
        noise.len()
    );
    if noise.len() > 1 {
        text.push_str("\nlines kept:");
        for line in noise {
            text.push_str("\n  ");
            text.push_str(line);
        }
        if noise.dropped() > 0 {
            text.push_str(&format!("\n  … ({} more not kept)", noise.dropped()));
        }
    }
    Some(text)
}

pub fn result_of(ex: &Exchange) -> Result<Value, String> {
    if let Some(result) = ex.response.as_ref().and_then(|r| r.get("result")) {
        return Ok(result.clone());
    }
    if let Some((code, message)) = error_of(ex) {
        return Err(format!("error {code}: {message}"));
    }
    match (&ex.http, &ex.raw_body) {
        (Some(h), Some(body)) => Err(format!(
            "HTTP {} with a body that is not a JSON-RPC response: {}",
            h.status,
            crate::redact::shorten(body, 200)
        )),
        (Some(h), None) => Err(format!("HTTP {} without a JSON-RPC response", h.status)),
        _ => Err("no JSON-RPC response".into()),
    }
}

/// What to try after `server/discover` was refused: the revisions the server listed in an
/// unsupported-version error (`data.supported`), else the legacy-only guess.
fn refusal_hint(ex: &Exchange) -> String {
    let supported: Vec<&str> = ex
        .response
        .as_ref()
        .and_then(|r| r.pointer("/error/data/supported"))
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if supported.is_empty() {
        return "a legacy-only server? try --era legacy or --era auto".into();
    }
    let modern: Vec<&str> = supported
        .iter()
        .copied()
        .filter(|v| EraKind::of_revision(v) == EraKind::Modern)
        .collect();
    let advice = match modern.first() {
        Some(v) => format!("try --era {v}"),
        None => "try --era legacy".into(),
    };
    format!("the server supports {}: {advice}", supported.join(", "))
}

/// `(code, message)` of an error response.
pub fn error_of(ex: &Exchange) -> Option<(i64, String)> {
    let err = ex.response.as_ref()?.get("error")?;
    Some((
        err.get("code").and_then(Value::as_i64).unwrap_or(0),
        err.get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    ))
}

/// Build a raw message: the body exactly as given, no `_meta`, no MCP headers.
pub fn raw_outgoing(
    body: &Value,
    header_overrides: &IndexMap<String, Option<String>>,
    http_method: Option<String>,
    timeout: Duration,
) -> Outgoing {
    // Only a string or number id (or null) can be read back: an object, array or boolean
    // id makes the request invalid, and the answer rightly carries `id: null` (matched as
    // the reply to a message without a readable id).
    let readable = |id: Option<Value>| id.filter(|v| v.is_string() || v.is_number() || v.is_null());
    let (text, id, expects_response) = match body {
        Value::String(s) => {
            let parsed = serde_json::from_str::<Value>(s).ok();
            let id = parsed.as_ref().and_then(|v| v.get("id")).cloned();
            let is_notification = parsed
                .as_ref()
                .is_some_and(|v| v.get("method").is_some() && v.get("id").is_none());
            (s.clone(), readable(id), !is_notification)
        }
        other => {
            let id = other.get("id").cloned();
            let is_notification = other.get("method").is_some() && other.get("id").is_none();
            (other.to_string(), readable(id), !is_notification)
        }
    };
    let mut headers = Vec::new();
    let mut drop_headers = Vec::new();
    apply_header_overrides(&mut headers, &mut drop_headers, header_overrides);
    Outgoing {
        body: text,
        id,
        expects_response,
        headers,
        drop_headers,
        http_method,
        timeout,
        quiet_period: Duration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_encoded_when_unsafe() {
        assert_eq!(encode_header_value("get_weather"), "get_weather");
        assert_eq!(encode_header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
        assert_eq!(encode_header_value("caf\u{e9}"), "=?base64?Y2Fmw6k=?=");
        assert_eq!(base64_encode(b"ab"), "YWI=");
    }

    #[test]
    fn param_headers_follow_properties_only() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}}},
            "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Never"}}
        }});
        let args = json!({"region": "eu", "nested": {"id": 7}, "list": ["x"]});
        let mut out = Vec::new();
        collect_param_headers(Some(&schema), Some(&args), &mut out);
        assert_eq!(
            out,
            vec![
                ("Mcp-Param-Region".to_string(), "eu".to_string()),
                ("Mcp-Param-Id".to_string(), "7".to_string())
            ]
        );
    }
}
