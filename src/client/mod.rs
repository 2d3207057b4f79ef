//! The MCP client: transports (stdio, Streamable HTTP) × eras (legacy session, modern
//! stateless). The engine's traffic goes through this thin raw layer so that a step can
//! send anything (malformed probes included) and see exactly what came back.

pub mod connection;
pub mod http;
pub mod open;
pub mod stdio;
pub mod tree;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

pub use connection::{ConnectError, ConnectErrorKind, Connection, Negotiated};
pub use open::{OpenRequest, OpenedBy, StreamItem};

/// `now + after` without the panic of `Instant + Duration` on overflow: a deadline that
/// far away is as good as never. (Timeouts are bounded at load; this is the last guard.)
pub(crate) fn deadline_after(after: Duration) -> std::time::Instant {
    deadline_from(std::time::Instant::now(), after)
}

/// `start + after`, saturating like [`deadline_after`].
pub(crate) fn deadline_from(start: std::time::Instant, after: Duration) -> std::time::Instant {
    start
        .checked_add(after)
        .or_else(|| start.checked_add(Duration::from_secs(u32::MAX.into())))
        .unwrap_or(start)
}

/// Upper bound on one message from the server, unless `--max-message-size` says otherwise.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How to reach the server.
#[derive(Debug, Clone)]
pub struct Target {
    pub kind: TargetKind,
    /// Per-request timeout (steps may override).
    pub timeout: Duration,
    pub max_message_bytes: usize,
    /// Validate every message the server sends against its revision's message schema
    /// (for `wire_valid` checks and `--wire-validate`). Off otherwise: it costs time on
    /// every response.
    pub wire_validation: bool,
}

#[derive(Debug, Clone)]
pub enum TargetKind {
    Stdio {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// Bearer token (value of `--bearer-env`); never printed.
        bearer: Option<String>,
    },
}

impl Target {
    pub fn transport_name(&self) -> &'static str {
        match self.kind {
            TargetKind::Stdio { .. } => "stdio",
            TargetKind::Http { .. } => "http",
        }
    }

    /// Human-readable description (callers redact secrets before printing).
    pub fn describe(&self) -> String {
        match &self.kind {
            TargetKind::Stdio { program, args, .. } => {
                let mut words = vec![program.clone()];
                words.extend(args.iter().cloned());
                format!("stdio: {}", shell_words::join(words))
            }
            TargetKind::Http { url, .. } => format!("http: {url}"),
        }
    }

    /// The URL (HTTP) or program (stdio), for messages.
    pub fn location(&self) -> &str {
        match &self.kind {
            TargetKind::Stdio { program, .. } => program,
            TargetKind::Http { url, .. } => url,
        }
    }

    pub fn is_http(&self) -> bool {
        matches!(self.kind, TargetKind::Http { .. })
    }
}

/// A message to send, fully built (body bytes exactly as they go on the wire).
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub body: String,
    /// The JSON-RPC id to match the response by; `None` for notifications.
    pub id: Option<Value>,
    /// Whether a response is expected at all (false for notifications).
    pub expects_response: bool,
    /// HTTP only: headers, in order; the transport adds nothing else but
    /// `Content-Type`/`Accept` unless they are listed in `drop_headers`.
    pub headers: Vec<(String, String)>,
    /// HTTP only: default headers to leave out (lower-case names).
    pub drop_headers: Vec<String>,
    /// HTTP only: request method, default POST.
    pub http_method: Option<String>,
    pub timeout: Duration,
    /// stdio, messages without a response: how long to watch for an (erroneous) reply
    /// before moving on. Zero unless a step checks `noResponse`.
    pub quiet_period: Duration,
}

/// HTTP status and headers of a reply.
#[derive(Debug, Clone)]
pub struct HttpMeta {
    pub status: u16,
    /// Lower-cased header names, in arrival order.
    pub headers: Vec<(String, String)>,
}

impl HttpMeta {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What came back for one outgoing message.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    /// The JSON-RPC response (matched by id), if any.
    pub response: Option<Value>,
    /// The response exactly as received, when the transport kept it (transcripts).
    pub response_text: Option<String>,
    /// Raw reply body when it was not a JSON-RPC message (or any body on HTTP errors).
    pub raw_body: Option<String>,
    pub http: Option<HttpMeta>,
    /// Other messages received meanwhile (notifications, server requests): counted,
    /// the first and last few kept in order.
    pub other_messages: Received,
    /// Lines on stdout that were not JSON (stdio), seen during this exchange: counted,
    /// the first and last few kept.
    pub stdout_noise: Kept<String>,
    pub elapsed: Duration,
    /// The response was matched by its id alone and `response_text` still has to be
    /// parsed into `response` (see [`Exchange::settle`]).
    pub unsettled: bool,
    /// Transport events worth a transcript note (an HTTP request sent again on a fresh
    /// connection).
    pub notes: Vec<String>,
}

impl Exchange {
    /// Parse a response that was matched by id only. A text that then turns out not to be
    /// JSON (a number out of range, say) is kept as the raw body.
    pub fn settle(&mut self) {
        if !std::mem::take(&mut self.unsettled) {
            return;
        }
        if let Some(text) = &self.response_text {
            match serde_json::from_str(text) {
                Ok(value) => self.response = Some(value),
                Err(_) => self.raw_body = Some(text.clone()),
            }
        }
    }
}

/// How many items a [`Kept`] record keeps at each end.
pub const KEPT_EACH_END: usize = 16;

/// A count of items with only the first and last [`KEPT_EACH_END`] kept: whatever a
/// server sends during one exchange (a flood of notifications, endless noise), memory
/// stays flat.
#[derive(Debug, Clone)]
pub struct Kept<T> {
    total: usize,
    head: Vec<T>,
    tail: std::collections::VecDeque<T>,
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept {
            total: 0,
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
        }
    }
}

impl<T> Kept<T> {
    pub fn push(&mut self, item: T) {
        self.total += 1;
        if self.head.len() < KEPT_EACH_END {
            self.head.push(item);
            return;
        }
        if self.tail.len() == KEPT_EACH_END {
            self.tail.pop_front();
        }
        self.tail.push_back(item);
    }

    /// How many were pushed (kept or not).
    pub fn len(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// How many were pushed but not kept (between the first and the last few).
    pub fn dropped(&self) -> usize {
        self.total - self.head.len() - self.tail.len()
    }

    pub fn first(&self) -> Option<&T> {
        self.head.first()
    }

    /// The kept items, in arrival order (the first few, then the last few).
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Kept<T> {
    type Item = &'a T;
    type IntoIter =
        std::iter::Chain<std::slice::Iter<'a, T>, std::collections::vec_deque::Iter<'a, T>>;
    fn into_iter(self) -> Self::IntoIter {
        self.head.iter().chain(self.tail.iter())
    }
}

/// How many distinct methods [`Received`] counts by name (the rest are counted together,
/// so a server inventing a method name per message cannot grow the map).
const METHODS_COUNTED: usize = 64;

/// Messages other than the response received during one exchange: the first and last
/// few kept, and a count per method (`None`: a message without a method, e.g. a late
/// reply, or a method beyond the first [`METHODS_COUNTED`] names).
#[derive(Debug, Clone, Default)]
pub struct Received {
    pub kept: Kept<Value>,
    per_method: Vec<(Option<String>, usize)>,
}

impl Received {
    pub fn push(&mut self, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str);
        let slot = match self
            .per_method
            .iter()
            .position(|(m, _)| m.as_deref() == method)
        {
            Some(i) => Some(i),
            None if method.is_some() && self.per_method.len() >= METHODS_COUNTED => {
                self.per_method.iter().position(|(m, _)| m.is_none())
            }
            None => None,
        };
        match slot {
            Some(i) => self.per_method[i].1 += 1,
            None if method.is_some() && self.per_method.len() >= METHODS_COUNTED => {
                self.per_method.push((None, 1))
            }
            None => self.per_method.push((method.map(str::to_string), 1)),
        }
        self.kept.push(msg);
    }

    /// How many messages of `method` arrived (kept or not).
    pub fn count(&self, method: &str) -> usize {
        self.per_method
            .iter()
            .find(|(m, _)| m.as_deref() == Some(method))
            .map_or(0, |(_, n)| *n)
    }

    /// Counts per method, in order of first arrival (`None`: no method, or uncounted).
    pub fn counts(&self) -> impl Iterator<Item = (Option<&str>, usize)> {
        self.per_method.iter().map(|(m, n)| (m.as_deref(), *n))
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    pub fn dropped(&self) -> usize {
        self.kept.dropped()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Value> {
        self.kept.iter()
    }
}

impl FromIterator<Value> for Received {
    fn from_iter<I: IntoIterator<Item = Value>>(messages: I) -> Self {
        let mut received = Received::default();
        received.extend(messages);
        received
    }
}

impl Extend<Value> for Received {
    fn extend<I: IntoIterator<Item = Value>>(&mut self, messages: I) {
        for msg in messages {
            self.push(msg);
        }
    }
}

impl<'a> IntoIterator for &'a Received {
    type Item = &'a Value;
    type IntoIter = <&'a Kept<Value> as IntoIterator>::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        (&self.kept).into_iter()
    }
}

/// Why an exchange broke down (the step errors with this reason).
#[derive(Debug, Clone)]
pub enum TransportError {
    Timeout(Duration),
    /// The server closed the connection / exited.
    Closed(String),
    /// A reply larger than the limit.
    Oversized {
        limit: usize,
    },
    /// A response whose id matches no request in flight. The request it was sent for
    /// is the only one in flight, so the reply is attributed to it: `error` is the
    /// reply's JSON-RPC `error` object when it is an error response.
    WrongId {
        expected: Value,
        got: Value,
        error: Option<Box<Value>>,
    },
    Io(String),
    /// HTTP: no connection could be made (refused, DNS, TLS): the target was not reached.
    Unreachable(String),
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Timeout(d) => write!(
                f,
                "timed out after {} waiting for the response",
                humantime::format_duration(*d)
            ),
            TransportError::Closed(why) => write!(f, "connection closed: {why}"),
            TransportError::Oversized { limit } => write!(
                f,
                "the server sent a message larger than {} bytes (limit: --max-message-size)",
                limit
            ),
            TransportError::WrongId { expected, got, .. } => write!(
                f,
                "the server answered with id {got}, but the request in flight has id {expected}"
            ),
            TransportError::Io(e) | TransportError::Unreachable(e) => {
                write!(f, "transport error: {e}")
            }
        }
    }
}

/// Canonical key for matching ids (`1` and `"1"` are different ids).
pub fn id_key(id: &Value) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// The client's answer to a server-initiated request (it has a `method` and an `id`):
/// mcpspec declares no client capabilities (no sampling, roots or elicitation), so every
/// such request gets -32601 at once and the server never waits on it. `None` for
/// anything else.
pub(crate) fn server_request_reply(msg: &Value) -> Option<String> {
    let method = msg.get("method")?.as_str()?;
    let id = msg.get("id")?;
    Some(
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": -32601,
                "message": format!("mcpspec declares no client capabilities and does not serve `{method}`"),
            },
        })
        .to_string(),
    )
}

/// Classify one JSON message from the server.
pub(crate) fn is_response(msg: &Value) -> bool {
    msg.get("method").is_none() && (msg.get("result").is_some() || msg.get("error").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn received_keeps_both_ends_and_counts_everything() {
        let mut r = Received::default();
        for i in 0..100_000 {
            r.push(serde_json::json!({"method": "notifications/progress", "params": {"i": i}}));
        }
        r.push(serde_json::json!({"id": 1, "result": {}}));
        assert_eq!(r.len(), 100_001);
        assert_eq!(r.count("notifications/progress"), 100_000);
        assert_eq!(r.iter().count(), 2 * KEPT_EACH_END);
        assert_eq!(r.dropped(), 100_001 - 2 * KEPT_EACH_END);
        let kept: Vec<&Value> = r.iter().collect();
        assert_eq!(kept[0]["params"]["i"], 0);
        assert_eq!(kept[KEPT_EACH_END - 1]["params"]["i"], 15);
        assert_eq!(kept[2 * KEPT_EACH_END - 1]["id"], 1);
        // Invented method names cannot grow the counts beyond a bound.
        let mut r = Received::default();
        for i in 0..1000 {
            r.push(serde_json::json!({"method": format!("m{i}")}));
        }
        assert!(r.counts().count() <= METHODS_COUNTED + 1);
        assert_eq!(r.counts().map(|(_, n)| n).sum::<usize>(), 1000);
        assert_eq!(r.count("m0"), 1);
    }

    #[test]
    fn only_server_requests_get_an_answer() {
        let request = serde_json::json!({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"});
        let reply: Value =
            serde_json::from_str(&server_request_reply(&request).expect("answered")).unwrap();
        assert_eq!(reply["id"], "s1");
        assert_eq!(reply["error"]["code"], -32601);
        let notification = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message"});
        assert!(server_request_reply(&notification).is_none());
        let response = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert!(server_request_reply(&response).is_none());
    }
}
