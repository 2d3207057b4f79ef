//! The replay's server over Streamable HTTP: one POST per client message, in the era each
//! message was recorded in. A legacy session (`initialize` first) gets the session id the
//! server hands out now, not the recorded one, and the negotiated version; a modern
//! message carries its `_meta` revision and the `Mcp-Method`/`Mcp-Name` headers. The
//! answer comes as JSON or on the POST's SSE stream (the server's requests there answered
//! as the recorded client did); an HTTP error with no JSON-RPC body is what came instead.

use serde_json::Value;
use tokio::time::Instant;

use super::{Came, Peer};
use crate::protocol::{headers as h, meta, methods};
use crate::run::client::connection::{encode_header_value, name_header};
use crate::run::record::http::SseLines;

/// The longest non-JSON body shown as what came instead of an answer.
const SHOWN_BODY: usize = 500;

pub struct HttpPeer {
    client: reqwest::Client,
    url: reqwest::Url,
    wait: std::time::Duration,
    /// The legacy session: the id the server handed out, the version it negotiated.
    session: Option<String>,
    revision: Option<String>,
    /// The reply being read: an SSE stream, or what a JSON body held not handed out yet.
    stream: Option<(reqwest::Response, SseLines)>,
    queued: Vec<Value>,
    instead: Option<String>,
}

impl HttpPeer {
    pub fn new(url: reqwest::Url, wait: std::time::Duration) -> std::io::Result<HttpPeer> {
        let client = crate::run::client::http::shared_client().map_err(std::io::Error::other)?;
        Ok(HttpPeer {
            client,
            url,
            wait,
            session: None,
            revision: None,
            stream: None,
            queued: Vec::new(),
            instead: None,
        })
    }

    /// The headers `msg` goes with: its era's.
    fn headers(&self, msg: &Value) -> Vec<(&'static str, String)> {
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let params = msg.get("params").and_then(Value::as_object);
        let modern = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(meta::PROTOCOL_VERSION))
            .and_then(Value::as_str);
        let mut headers = vec![
            ("content-type", "application/json".to_string()),
            ("accept", "application/json, text/event-stream".to_string()),
        ];
        match modern {
            Some(version) => {
                headers.push((h::PROTOCOL_VERSION, version.to_string()));
                headers.push((h::METHOD, method.to_string()));
                if let Some(name) = params.and_then(|p| name_header(method, p)) {
                    headers.push((h::NAME, encode_header_value(name)));
                }
            }
            None => {
                if let Some(r) = self
                    .revision
                    .as_ref()
                    .filter(|_| method != methods::INITIALIZE)
                {
                    headers.push((h::PROTOCOL_VERSION, r.clone()));
                }
                if let Some(s) = &self.session {
                    headers.push((h::SESSION_ID, s.clone()));
                }
            }
        }
        headers
    }

    async fn post(&self, msg: &Value, text: &str) -> Result<reqwest::Response, String> {
        let mut request = self.client.post(self.url.clone()).body(text.to_string());
        for (k, v) in self.headers(msg) {
            request = request.header(k, v);
        }
        match tokio::time::timeout(self.wait, request.send()).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(format!("the server could not be reached: {e}")),
            Err(_) => Err(format!("no reply within {:?}", self.wait)),
        }
    }

    /// A legacy session's version, from the answer to `initialize`.
    fn note_version(&mut self, messages: &[Value]) {
        for m in messages {
            let result = m.get("result");
            if let (Some(v), Some(_)) = (
                result
                    .and_then(|r| r.get("protocolVersion"))
                    .and_then(Value::as_str),
                result.and_then(|r| r.get("serverInfo")),
            ) {
                self.revision = Some(v.to_string());
            }
        }
    }
}

/// The JSON-RPC messages of a body: one, or each of a batch.
fn messages(body: &[u8]) -> Option<Vec<Value>> {
    match serde_json::from_slice::<Value>(body).ok()? {
        Value::Array(items) => Some(items),
        v @ Value::Object(_) => Some(vec![v]),
        _ => None,
    }
}

impl Peer for HttpPeer {
    async fn send(&mut self, msg: &Value, text: &str) -> Result<(), String> {
        self.stream = None;
        self.queued.clear();
        self.instead = None;
        let response = self.post(msg, text).await?;
        let initialize = msg.get("method").and_then(Value::as_str) == Some(methods::INITIALIZE);
        if initialize && let Some(sid) = response.headers().get(h::SESSION_ID) {
            self.session = sid.to_str().ok().map(str::to_string);
        }
        let status = response.status();
        let sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/event-stream"));
        if sse {
            self.stream = Some((response, SseLines::default()));
            return Ok(());
        }
        let body = match tokio::time::timeout(self.wait, response.bytes()).await {
            Ok(Ok(b)) => b,
            Ok(Err(e)) => return Err(format!("the reply broke off: {e}")),
            Err(_) => return Err(format!("no reply within {:?}", self.wait)),
        };
        match messages(&body) {
            Some(got) => self.queued = got,
            None if status.is_success() && body.iter().all(u8::is_ascii_whitespace) => {}
            None => {
                let text = String::from_utf8_lossy(&body);
                let text = text.trim();
                self.instead = Some(if text.is_empty() {
                    format!("HTTP {status} (no body)")
                } else {
                    format!(
                        "HTTP {status}: {}",
                        crate::ground::redact::shorten(text, SHOWN_BODY)
                    )
                });
            }
        }
        Ok(())
    }

    async fn next(&mut self, deadline: Instant) -> Came {
        if !self.queued.is_empty() {
            let got = std::mem::take(&mut self.queued);
            self.note_version(&got);
            return Came::Messages(got);
        }
        let Some((response, events)) = self.stream.as_mut() else {
            return Came::Done(self.instead.take());
        };
        match tokio::time::timeout_at(deadline, response.chunk()).await {
            Ok(Ok(Some(chunk))) => {
                let got: Vec<Value> = events
                    .push(&chunk)
                    .iter()
                    .filter_map(|d| messages(d.as_bytes()))
                    .flatten()
                    .collect();
                self.note_version(&got);
                Came::Messages(got)
            }
            Ok(_) => {
                self.stream = None;
                Came::Done(None)
            }
            Err(_) => Came::TimedOut,
        }
    }

    async fn answer(&mut self, text: &str) {
        let msg: Value = serde_json::from_str(text).unwrap_or_default();
        // Sent beside the stream that asked (which stays open for the answer it waits for).
        if let Ok(r) = self.post(&msg, text).await {
            let _ = tokio::time::timeout(self.wait, r.bytes()).await;
        }
    }

    async fn stop(&mut self) {
        self.stream = None;
        let Some(session) = self.session.take() else {
            return;
        };
        let request = self
            .client
            .delete(self.url.clone())
            .header(h::SESSION_ID, session);
        let _ = tokio::time::timeout(self.wait, request.send()).await;
    }
}
