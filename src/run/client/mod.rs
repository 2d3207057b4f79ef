//! The MCP client: transports (stdio, Streamable HTTP) × eras (legacy session, modern
//! stateless). The engine's traffic goes through this thin raw layer so that a step can
//! send anything (malformed probes included) and see exactly what came back.
//!
//! Its modules in layers, bottom up (a module imports only from its own layer or a lower one; `tests/layers.rs`):
//!
//! 0. `answers`, `http`, `stdio`
//! 1. `connection`
//! 2. `open`

pub mod answers;
pub mod connection;
pub mod http;
pub mod open;
pub mod stdio;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

pub use connection::seen::{LogsSeen, NotificationsSeen};
pub use connection::{ConnectError, ConnectErrorKind, Connection};
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
    /// `--era auto`: what the first probe of this server decided, shared by every copy of
    /// the target (every warm and fresh process of the run): see [`AutoEra`].
    pub auto_era: AutoEra,
}

/// `--era auto` decides once per run and server: the first connection probes (the others
/// wait for it), and every later one of the same target opens in the era it found. A
/// server that ignores requests before `initialize` then costs the probe's wait once, not
/// once per process.
pub type AutoEra = std::sync::Arc<tokio::sync::Mutex<Option<AutoDecision>>>;

/// What the `auto` probe found.
#[derive(Debug, Clone)]
pub enum AutoDecision {
    /// The server is modern: later connections probe again (an answered request, which
    /// also gives each connection its own `server/discover` result).
    Modern,
    /// The server is legacy (why, as the first connection's note said): later connections
    /// take the legacy handshake at once.
    Legacy(String),
}

#[derive(Debug, Clone)]
pub enum TargetKind {
    Stdio {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
        /// `--sandbox`: the server runs with no route out of the machine and a private
        /// HOME (see [`crate::ground::platform::BeforeExec`]).
        sandbox: bool,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// Bearer token (value of `--bearer-env`); never printed.
        bearer: Option<String>,
        /// OAuth sign-in (`auth:`): the token of every message comes from it.
        auth: Option<std::sync::Arc<http::oauth::OAuth>>,
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
            TargetKind::Http { url, .. } => {
                format!("http: {}", crate::ground::redact::safe_url(url))
            }
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

    /// A stdio server run under `--sandbox`.
    pub fn sandboxed(&self) -> bool {
        matches!(self.kind, TargetKind::Stdio { sandbox: true, .. })
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

/// The client's answer to a server-initiated request (it has a `method` and an `id`), as
/// the text to send: from the scenario's script (`answerer`), else -32601 at once, so the
/// server never waits on it. `None` for anything else.
/// A model's answer is awaited, within `timeout`, and kept for the transcript.
pub(crate) async fn server_request_reply(
    msg: &Value,
    answerer: Option<&answers::Answerer>,
    timeout: std::time::Duration,
) -> Option<String> {
    msg.get("method")?.as_str()?;
    let id = msg.get("id")?;
    let answered = answers::answer_now(answerer, msg, timeout, true).await;
    Some(
        match answered.outcome {
            Ok(mut result) => {
                crate::protocol::tasks::relate_answer(msg, &mut result);
                crate::protocol::jsonrpc::result_response(id, result)
            }
            Err((code, message)) => crate::protocol::jsonrpc::error_response(id, code, &message),
        }
        .to_string(),
    )
}

/// Whether a message is a request from the server (a `method` and an `id`).
pub(crate) fn is_server_request(msg: &Value) -> bool {
    msg.get("method").is_some_and(Value::is_string) && msg.get("id").is_some()
}

/// Classify one JSON message from the server.
pub(crate) fn is_response(msg: &Value) -> bool {
    msg.get("method").is_none() && (msg.get("result").is_some() || msg.get("error").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: std::time::Duration = std::time::Duration::from_secs(1);

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn only_server_requests_get_an_answer() {
        let request = serde_json::json!({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"});
        let reply: Value = serde_json::from_str(
            &block_on(server_request_reply(&request, None, T)).expect("answered"),
        )
        .unwrap();
        assert_eq!(reply["id"], "s1");
        assert_eq!(reply["error"]["code"], -32601);
        let notification = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message"});
        assert!(block_on(server_request_reply(&notification, None, T)).is_none());
        let response = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert!(block_on(server_request_reply(&response, None, T)).is_none());
    }
}
