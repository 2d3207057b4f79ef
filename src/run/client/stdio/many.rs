//! More than one request at a time: a burst written without waiting, and requests left open
//! (a `subscriptions/listen` stream) whose messages are read as they come.

use serde_json::Value;
use std::time::{Duration, Instant};

use super::framing::Incoming;
use super::{EXIT_GRACE, Next, StdioTransport};
use crate::results::exchange::Kept;
use crate::run::client::{Outgoing, TransportError, id_key, server_request_reply};

impl StdioTransport {
    /// Write several requests without waiting, then collect their responses (any order).
    /// Returns the responses by request index and the non-JSON lines seen meanwhile.
    pub async fn burst(
        &mut self,
        outs: &[Outgoing],
        timeout: Duration,
    ) -> Result<(Vec<Option<Value>>, Kept<String>), TransportError> {
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        if self.stdin.is_none() {
            return Err(self.stdin_gone().await);
        }
        for out in outs {
            self.queue(out.body.as_bytes());
        }
        let request_end = self.queued;
        self.write_now();
        let keys: Vec<Option<String>> = outs.iter().map(|o| o.id.as_ref().map(id_key)).collect();
        let mut responses: Vec<Option<Value>> = vec![None; outs.len()];
        let mut noise = Kept::default();
        let deadline = super::super::deadline_after(timeout);
        while responses
            .iter()
            .zip(&keys)
            .any(|(r, k)| r.is_none() && k.is_some())
        {
            match self.next_event(deadline).await {
                Next::Exited => {}
                Next::WriteFailed(e) if !self.sent(request_end) => {
                    let why = self
                        .close_reason(&format!("writing to the server's stdin failed: {e}"))
                        .await;
                    return Err(TransportError::Closed(why));
                }
                Next::WriteFailed(_) => {}
                Next::Timeout if !self.sent(request_end) => {
                    let why = format!(
                        "timed out after {} writing the requests: the server did not read its stdin",
                        humantime::format_duration(timeout)
                    );
                    self.closed = Some(why.clone());
                    return Err(TransportError::Closed(why));
                }
                Next::Timeout => return Err(TransportError::Timeout(timeout)),
                Next::Event(Incoming::Closed) => {
                    let why = self.close_reason("the server closed its stdout").await;
                    return Err(TransportError::Closed(why));
                }
                Next::Event(Incoming::Oversized) => {
                    self.closed = Some(format!("message larger than {} bytes", self.max_bytes));
                    return Err(TransportError::Oversized {
                        limit: self.max_bytes,
                    });
                }
                Next::Event(Incoming::Noise(line)) => {
                    self.noise_seen(Some(line.as_str()));
                    noise.push(line);
                }
                Next::Event(message @ (Incoming::Message(..) | Incoming::Response(..))) => {
                    if let Incoming::Message(msg, _) = message.parsed() {
                        let answerer = self.answerer.clone();
                        let left = deadline.saturating_duration_since(Instant::now());
                        if let Some(reply) =
                            server_request_reply(&msg, answerer.as_deref(), left).await
                        {
                            self.reply(&reply);
                            continue;
                        }
                        let key = msg.get("id").map(id_key);
                        if let Some(i) = keys.iter().position(|k| k.is_some() && *k == key) {
                            responses[i] = Some(msg);
                        }
                    }
                }
            }
        }
        Ok((responses, noise))
    }

    /// Leave the request `id` open: its response may arrive at any time later.
    pub fn hold_open(&mut self, id: &Value) {
        self.open.insert(id_key(id));
    }

    /// The open request `id` was cancelled: a late response to it is still no wrong id.
    pub fn release(&mut self, id: &Value) {
        let key = id_key(id);
        if self.open.remove(&key) {
            self.abandoned.insert(key);
        }
    }

    /// Wait for the next message from the server until `deadline`, sending nothing new
    /// (queued output is still written): `None` at the deadline. Server requests are
    /// answered as during an exchange; non-JSON lines are counted and skipped.
    pub async fn next_message(
        &mut self,
        deadline: Instant,
    ) -> Result<Option<Value>, TransportError> {
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        let mut deadline = deadline;
        loop {
            match self.next_event(deadline).await {
                Next::Exited => deadline = deadline.min(Instant::now() + EXIT_GRACE),
                Next::WriteFailed(_) => {}
                Next::Timeout if self.exited.is_some() => {
                    let why = self.close_reason("the server process exited").await;
                    return Err(TransportError::Closed(why));
                }
                Next::Timeout => return Ok(None),
                Next::Event(Incoming::Closed) => {
                    let why = self.close_reason("the server closed its stdout").await;
                    return Err(TransportError::Closed(why));
                }
                Next::Event(Incoming::Oversized) => {
                    self.closed = Some(format!("message larger than {} bytes", self.max_bytes));
                    self.shutdown_now().await;
                    return Err(TransportError::Oversized {
                        limit: self.max_bytes,
                    });
                }
                Next::Event(Incoming::Noise(line)) => self.noise_seen(Some(line.as_str())),
                Next::Event(event @ (Incoming::Message(..) | Incoming::Response(..))) => {
                    let Incoming::Message(msg, _) = event.parsed() else {
                        self.noise_seen(None);
                        continue;
                    };
                    let answerer = self.answerer.clone();
                    let left = deadline.saturating_duration_since(Instant::now());
                    if let Some(reply) = server_request_reply(&msg, answerer.as_deref(), left).await
                    {
                        self.reply(&reply);
                    }
                    return Ok(Some(msg));
                }
            }
        }
    }
}
