//! stdio wire defects: hooks called by the line pump in `wire.rs`.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::handler::{CallIds, LEAK_MARK, rewrite_line};
use super::messages::{MessageDefects, Seen};
use super::{Defect, Defects, ParseErrorMode, SERVER_REQUEST_ID, ServerRequestKind, http_layers};

// ---------------------------------------------------------------------------
// stdio: hooks called by the line pump in `wire.rs`.
// ---------------------------------------------------------------------------

/// The non-JSON line `garbage-stdout` writes before each message.
pub const GARBAGE_LINE: &str = "DEBUG: handling request";

/// The stdio wire defects (`garbage-stdout`, `wrong-id` and the message-level ones).
#[derive(Clone, Default)]
pub struct StdioWire {
    garbage: bool,
    wrong_id: bool,
    ids: CallIds,
    messages: MessageDefects,
    answer_notifications: bool,
    /// `--change drop-legacy`: rmcp still answers `ping` on stdio, which 2026-07-28
    /// removed; the pump answers it with -32601 instead (unless `answer-removed-methods`).
    refuse_ping: bool,
    /// `server-request`: the request line, until it has been sent once.
    server_request: Arc<Mutex<Option<String>>>,
    /// Requests in flight (by id), for the response defects.
    pending: Arc<Mutex<std::collections::HashMap<String, Seen>>>,
    /// `leak-secret`: the credential its `leak:stdout` line shows.
    leak: Option<String>,
    /// `listen-no-ack`: the acknowledgement line is dropped.
    drop_ack: bool,
    /// `parse-error`: how a line that is not JSON is mishandled.
    parse_error: Option<ParseErrorMode>,
    /// `log-after-malformed`: a line that is not JSON gets a log message first.
    log_after_malformed: bool,
    /// `log-after-invalid-request`: a request without `jsonrpc` gets a log message first.
    log_after_invalid: bool,
    /// `invalid-request-ignored`: invalid requests are dropped.
    ignore_invalid: bool,
    /// `unknown-method-silent`: requests for methods outside MCP's are swallowed.
    unknown_silent: bool,
    /// `ignore-before-initialize`: requests are swallowed until `initialize` is seen
    /// (`Some(seen)`).
    before_initialize: Option<Arc<std::sync::atomic::AtomicBool>>,
    /// `exit-on-discover`: `server/discover` ends the process.
    exit_on_discover: bool,
}

/// The method families MCP defines (any revision): a method outside them is unknown.
const MCP_METHOD_PREFIXES: &[&str] = &[
    "initialize",
    "ping",
    "tools/",
    "prompts/",
    "resources/",
    "completion/",
    "logging/",
    "server/",
    "tasks/",
    "subscriptions/",
    "notifications/",
    "roots/",
    "sampling/",
    "elicitation/",
];

impl StdioWire {
    pub fn new(defects: &Defects) -> Self {
        Self {
            garbage: defects.has(&Defect::GarbageStdout),
            wrong_id: defects.has(&Defect::WrongId),
            ids: CallIds::default(),
            messages: MessageDefects::new(defects),
            pending: Arc::default(),
            answer_notifications: defects.has(&Defect::AnswerNotifications),
            refuse_ping: false,
            server_request: Arc::new(Mutex::new(
                defects.server_request().map(ServerRequestKind::message),
            )),
            leak: defects.leaked_secret().map(str::to_owned),
            drop_ack: defects.has(&Defect::ListenNoAck),
            parse_error: defects.parse_error(),
            log_after_malformed: defects.has(&Defect::LogAfterMalformed),
            log_after_invalid: defects.has(&Defect::LogAfterInvalidRequest),
            ignore_invalid: defects.has(&Defect::InvalidRequestIgnored),
            unknown_silent: defects.has(&Defect::UnknownMethodSilent),
            before_initialize: defects
                .has(&Defect::IgnoreBeforeInitialize)
                .then(Arc::default),
            exit_on_discover: defects.has(&Defect::ExitOnDiscover),
        }
    }

    /// The line answering an input line that is not JSON (`None`: none, `parse-error=silent`).
    pub fn parse_error_reply(&self) -> Option<&'static str> {
        ParseErrorMode::reply(self.parse_error)
    }

    /// `log-after-malformed`: the `notifications/message` written when a line is not JSON.
    pub fn malformed_log(&self) -> Option<&'static str> {
        self.log_after_malformed.then_some(
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"example","data":"could not parse the input line"}}"#,
        )
    }

    /// `log-after-invalid-request`: the `notifications/message` written when a request
    /// comes without `jsonrpc`.
    pub fn invalid_request_log(&self, message: &Value) -> Option<&'static str> {
        (self.log_after_invalid && message.get("method").is_some() && message.get("jsonrpc").is_none())
            .then_some(
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"example","data":"a request without jsonrpc"}}"#,
            )
    }

    /// `invalid-request-ignored`: whether `message` is an invalid request to drop unanswered.
    pub fn drops_invalid(&self, message: &Value) -> bool {
        self.ignore_invalid
            && message.get("method").is_some()
            && (message.get("jsonrpc").and_then(Value::as_str) != Some("2.0")
                || !message["method"].is_string()
                || message
                    .get("id")
                    .is_some_and(|id| !(id.is_string() || id.is_number() || id.is_null())))
    }

    /// `parse-error=late`: the answer to a line that is not JSON waits for the next line
    /// rmcp writes.
    pub fn parse_error_late(&self) -> bool {
        self.parse_error == Some(ParseErrorMode::Late)
    }

    /// `parse-error=fatal`: after a line that is not JSON, nothing more is read into the
    /// session.
    pub fn parse_error_fatal(&self) -> bool {
        self.parse_error == Some(ParseErrorMode::Fatal)
    }

    /// `--change task-support-*`: a tool's listing gains `execution`.
    pub fn tool_execution(mut self, execution: Option<(&'static str, Value)>) -> Self {
        self.messages = self.messages.with_tool_execution(execution);
        self
    }

    /// `--max-revision`: the newest legacy revision `initialize` agrees to.
    pub fn max_revision(mut self, max: Option<&'static str>) -> Self {
        self.messages = self.messages.with_max_revision(max);
        self
    }

    /// A modern-only server (`--change drop-legacy`): the removed `ping` gets -32601.
    pub fn modern_only(mut self, modern_only: bool) -> Self {
        self.refuse_ping = modern_only && !self.messages.answer_removed_methods;
        self
    }

    /// What the pump does besides forwarding an inbound message: a line to write back
    /// (`answer-notifications` replies to a notification), or swallow it (the client's
    /// answer to the `server-request` request, which rmcp never sent).
    pub fn inbound_effects(&self, message: &Value) -> (Option<String>, bool) {
        let is_notification = message.get("method").is_some() && message.get("id").is_none();
        let method = message.get("method").and_then(Value::as_str);
        let reply = (self.answer_notifications
            && is_notification
            && method != Some("notifications/initialized"))
        .then(|| http_layers::NOTIFICATION_REPLY.to_owned());
        let answers_ours = message.get("method").is_none()
            && message.get("id").and_then(Value::as_str) == Some(SERVER_REQUEST_ID);
        let is_request = message.get("id").is_some();
        if let (Some(method), true) = (method, is_request) {
            if self.exit_on_discover && method == "server/discover" {
                // As rmcp's `serve_server` does when the first message is not `initialize`.
                eprintln!("Error: expect initialize request, but received: {message}");
                std::process::exit(1);
            }
            if self.unknown_silent && !MCP_METHOD_PREFIXES.iter().any(|p| method.starts_with(p)) {
                return (None, true);
            }
            if let Some(seen) = &self.before_initialize {
                use std::sync::atomic::Ordering::SeqCst;
                if method == "initialize" {
                    seen.store(true, SeqCst);
                } else if !seen.load(SeqCst) {
                    return (None, true);
                }
            }
        }
        if self.refuse_ping
            && method == Some("ping")
            && let Some(id) = message.get("id")
        {
            let refusal = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601, "message": "Method not found: ping (removed in 2026-07-28)"}});
            return (Some(refusal.to_string()), true);
        }
        (reply, answers_ours)
    }

    /// Sees every parsed inbound message before rmcp does; true if a request defect
    /// rewrote it (the pump then forwards the rewritten message instead of the line).
    pub fn on_inbound(&self, message: &mut Value) -> bool {
        if self.wrong_id {
            self.ids.observe_request(message);
        }
        let changed = self.messages.requests_active() && self.messages.rewrite_request(message);
        if self.messages.responses_active()
            && let Some((id, seen)) = Seen::of(message)
        {
            self.pending.lock().expect("lock").insert(id, seen);
        }
        changed
    }

    /// Applies the response defects to one outbound line, if it is a response.
    fn rewrite_response_line(&self, line: &str) -> Option<String> {
        let mut message: Value = serde_json::from_str(line).ok()?;
        let is_response = message.get("result").is_some() || message.get("error").is_some();
        if !is_response {
            return None;
        }
        let seen = message
            .get("id")
            .and_then(|id| self.pending.lock().expect("lock").remove(&id.to_string()));
        self.messages
            .rewrite_response(seen.as_ref(), &mut message)
            .then(|| message.to_string())
    }

    /// Maps one outbound line (no newline) to the text written in its place (no final
    /// newline; may span several lines).
    pub fn on_outbound(&self, line: &str) -> String {
        if self.drop_ack && crate::listen::is_ack(line) {
            return String::new();
        }
        let line = match self
            .messages
            .responses_active()
            .then(|| self.rewrite_response_line(line))
        {
            Some(Some(rewritten)) => rewritten,
            _ => line.to_owned(),
        };
        let line = match self.wrong_id.then(|| rewrite_line(&self.ids, &line)) {
            Some(Some(rewritten)) => rewritten,
            _ => line,
        };
        let is_response = line.contains("\"result\"") || line.contains("\"error\"");
        let line = match is_response
            .then(|| self.server_request.lock().expect("lock").take())
            .flatten()
        {
            Some(request) => format!("{line}\n{request}"),
            None => line,
        };
        let line = match &self.leak {
            Some(secret) if line.contains(LEAK_MARK) => {
                format!("debug: {}{secret} end\n{line}", "x".repeat(483))
            }
            _ => line,
        };
        if self.garbage {
            format!("{GARBAGE_LINE}\n{line}")
        } else {
            line
        }
    }
}
