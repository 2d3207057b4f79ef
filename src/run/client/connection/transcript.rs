//! What the connection records: the transcript of every message, wire validation, the
//! tools it saw listed, and how a failed exchange is described.

use std::time::Instant;

use serde_json::{Map, Value};

use super::Connection;
use super::request::lists_tools;
use crate::protocol::era::EraKind;
use crate::protocol::methods;
use crate::results::exchange::{Direction, Exchange, TranscriptEntry};
use crate::run::client::Outgoing;

impl Connection {
    /// Transcript entries for what came with (or instead of) a response: the kept
    /// messages and non-JSON lines, and how many more were not kept.
    pub(super) fn record_received(&mut self, ex: &Exchange) {
        self.seen.saw_exchange(ex);
        for m in &ex.other_messages {
            self.record(Direction::Received, m.to_string(), None);
            if crate::run::client::is_server_request(m) {
                self.server_requests.push(m.clone());
                // The answer the transport sent: answers are a pure function of the request.
                let answered = crate::run::client::answers::answer(self.answerer.as_deref(), m);
                self.record(
                    Direction::Note,
                    format!("a server-initiated request: {}", answered.note),
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
                    crate::results::exchange::KEPT_EACH_END,
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

    pub(super) fn remember_tools(&mut self, out: &Outgoing, result: &Map<String, Value>) {
        // Only a complete list (first page without a next one) is a safe cache.
        if !result.contains_key("tools")
            || result.contains_key(crate::protocol::fields::NEXT_CURSOR)
            || !lists_tools(out)
        {
            return;
        }
        let body: Option<Value> = serde_json::from_str(&out.body).ok();
        let is_first_page = body.as_ref().is_some_and(|b| {
            b.get("method").and_then(Value::as_str) == Some(methods::TOOLS_LIST)
                && b.pointer("/params/cursor").is_none()
        });
        if !is_first_page {
            return;
        }
        if let Some(tools) = result.get("tools").and_then(Value::as_array) {
            self.tools = Some(tools.clone());
        }
    }

    /// Validate what came back for `out` against its revision's message schema.
    pub(super) fn validate_wire(&mut self, out: &Outgoing, ex: &Exchange) {
        let era = self.negotiated.kind;
        for m in &ex.other_messages {
            self.wire
                .record(crate::protocol::wire::check_server_message(era, m));
        }
        if let Some(response) = &ex.response {
            let body: Option<Value> = serde_json::from_str(&out.body).ok();
            let method = body
                .as_ref()
                .and_then(|b| b.get("method"))
                .and_then(Value::as_str);
            let era = body
                .as_ref()
                .map_or(era, |b| crate::protocol::wire::era_of_request(b, era));
            self.wire
                .record(crate::protocol::wire::check_response(era, method, response));
        }
    }

    /// Wire-validate one message the server sent outside an exchange (`--wire-validate`).
    pub(in crate::run::client) fn validate_message(&mut self, msg: &Value) {
        if self.target.wire_validation {
            let era = self.negotiated.kind;
            self.wire
                .record(crate::protocol::wire::check_server_message(era, msg));
        }
    }

    /// Wire validation so far: messages checked and the violations found, oldest first.
    pub fn wire_log(&self) -> &crate::protocol::wire::WireLog {
        &self.wire
    }

    /// Transcript entries since the last call.
    pub fn take_log(&mut self) -> Vec<TranscriptEntry> {
        self.log_started = Instant::now();
        std::mem::take(&mut self.log)
    }

    /// The time the exchanges since the last call took (see `exchanged`).
    pub fn take_exchanged(&mut self) -> std::time::Duration {
        std::mem::take(&mut self.exchanged)
    }

    /// Entries read on another connection for this scenario's sake (what the server of a
    /// borrowed connection wrote after its last reply): they join this transcript.
    pub fn adopt(&mut self, entries: Vec<TranscriptEntry>) {
        self.log.extend(entries);
    }

    /// A note in the transcript (retries, probes).
    pub fn note(&mut self, text: String) {
        self.record(Direction::Note, text, None);
    }

    pub(in crate::run::client) fn record(
        &mut self,
        direction: Direction,
        body: String,
        http: Option<String>,
    ) {
        self.log.push(TranscriptEntry {
            direction,
            at_ms: self.log_started.elapsed().as_millis() as u64,
            body,
            http,
        });
    }
}

pub(super) fn out_method(out: &Outgoing) -> String {
    serde_json::from_str::<Value>(&out.body)
        .ok()
        .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "request".into())
}

/// The `result` of a response, or a one-line description of what came instead.
/// The non-JSON lines a failed exchange saw, for the step's error: what the server wrote
/// instead of a reply (already cut to a bounded length per line).
pub(super) fn describe_unanswered(ex: &Exchange) -> Option<String> {
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
            crate::ground::redact::shorten(body, 200)
        )),
        (Some(h), None) => Err(format!("HTTP {} without a JSON-RPC response", h.status)),
        _ => Err("no JSON-RPC response".into()),
    }
}

/// What to try after `server/discover` was refused: the revisions the server listed in an
/// unsupported-version error (`data.supported`), else the legacy-only guess.
pub(super) fn refusal_hint(ex: &Exchange) -> String {
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
