//! Requests that stay open: sent, then read as a stream of messages until the client
//! cancels them (`subscriptions/listen` of 2026-07-28, or any long-lived request).
//!
//! The connection goes on serving other requests meanwhile. Over stdio every message shares
//! stdout: the transport holds the request's id open (its late response is no wrong id),
//! [`Connection::next_on`] reads whatever arrives, and cancelling sends
//! `notifications/cancelled`. Over Streamable HTTP the request's own SSE stream is kept
//! unread until asked; cancelling closes it, which the transport defines as the
//! cancellation. Every wait has a deadline: nothing here outlives the caller's budget.

use std::time::Instant;

use serde_json::{Value, json};

use super::connection::Connection;
use super::connection::transport::Transport;
use super::http::stream::{OpenStream, Opened, StreamNext};
use super::{Outgoing, TransportError};
use crate::protocol::methods;
use crate::results::exchange::Direction;
use crate::results::exchange::Exchange;

/// How the open request is carried.
pub enum OpenedBy {
    /// stdio: the shared stdout, read by [`Connection::next_on`].
    Stdio,
    /// HTTP: the request's own SSE stream.
    Stream(OpenStream),
    /// HTTP: the server answered at once instead of streaming (an error, a JSON reply):
    /// the reply is the whole stream.
    Reply,
}

/// A request left open. Created by [`Connection::open_request`], ended by
/// [`Connection::cancel`] (or dropped, which over HTTP closes its stream).
pub struct OpenRequest {
    pub id: Value,
    pub by: OpenedBy,
    /// Messages already received for it and not yet handed out.
    queued: std::collections::VecDeque<Value>,
    /// The server ended it (its response arrived, or its HTTP stream closed).
    pub ended: bool,
    /// HTTP status of the reply that opened it.
    pub http_status: Option<u16>,
    /// Non-JSON events seen on its HTTP stream.
    pub noise: usize,
}

/// One thing read while a request is open.
#[derive(Debug)]
pub enum StreamItem {
    /// A message: over HTTP, one on the request's own stream; over stdio, any message
    /// the server sent (the caller tells a subscription's by its `_meta`).
    Message(Value),
    /// The server ended the request (over stdio: its response, given as a message first).
    Ended,
    /// The deadline passed with nothing more.
    Quiet,
}

impl OpenRequest {
    /// Whether `msg` is the response that ends this request.
    pub fn is_end(&self, msg: &Value) -> bool {
        super::is_response(msg) && msg.get("id") == Some(&self.id)
    }
}

impl Connection {
    /// stdio: a handle that reads what the server sends without any request open (after a
    /// cancellation, to see what still comes). `None` over HTTP, where nothing arrives
    /// outside a request's own stream.
    pub fn watch_only(&self) -> Option<OpenRequest> {
        matches!(self.transport, Transport::Stdio(_)).then(|| OpenRequest {
            id: Value::Null,
            by: OpenedBy::Stdio,
            queued: Default::default(),
            ended: false,
            http_status: None,
            noise: 0,
        })
    }

    /// Send `out` (a request with an id) and leave it open: its messages are read with
    /// [`Connection::next_on`]. Over HTTP, waits for the stream's headers (at most
    /// `out.timeout`).
    pub async fn open_request(&mut self, out: &Outgoing) -> Result<OpenRequest, TransportError> {
        let id = out.id.clone().unwrap_or(Value::Null);
        self.record(Direction::Sent, out.body.clone(), None);
        let mut open = OpenRequest {
            id: id.clone(),
            by: OpenedBy::Stdio,
            queued: Default::default(),
            ended: false,
            http_status: None,
            noise: 0,
        };
        match &mut self.transport {
            Transport::Stdio(t) => {
                t.hold_open(&id);
                t.send(out).await?;
            }
            Transport::Shared(_) => return Err(TransportError::Io(SHARED_OPEN.into())),
            Transport::Http(t) => match t.open_stream(out).await? {
                Opened::Stream(meta, stream) => {
                    open.http_status = Some(meta.status);
                    open.by = OpenedBy::Stream(stream);
                    self.note(format!(
                        "HTTP {}: the request's SSE stream is open",
                        meta.status
                    ));
                }
                Opened::Reply(ex) => {
                    open.http_status = ex.http.as_ref().map(|h| h.status);
                    open.by = OpenedBy::Reply;
                    self.queue_reply(&mut open, *ex);
                }
            },
        }
        Ok(open)
    }

    fn queue_reply(&mut self, open: &mut OpenRequest, ex: Exchange) {
        let status = ex.http.as_ref().map(|h| format!("HTTP {}", h.status));
        open.queued.extend(ex.other_messages.iter().cloned());
        open.queued.extend(ex.response);
        if open.queued.is_empty() {
            let body = ex.raw_body.unwrap_or_default();
            self.record(
                Direction::Received,
                crate::ground::redact::shorten(&body, 4096),
                status,
            );
        }
    }

    /// The next message for (or, over stdio, during) the open request, waiting until
    /// `deadline` at most.
    pub async fn next_on(
        &mut self,
        open: &mut OpenRequest,
        deadline: Instant,
    ) -> Result<StreamItem, TransportError> {
        if let Some(msg) = open.queued.pop_front() {
            self.record(Direction::Received, msg.to_string(), None);
            self.validate_message(&msg);
            if open.is_end(&msg) {
                open.ended = true;
            }
            return Ok(StreamItem::Message(msg));
        }
        if open.ended {
            return Ok(StreamItem::Ended);
        }
        let next = match (&mut self.transport, &mut open.by) {
            (Transport::Stdio(t), _) => match t.next_message(deadline).await? {
                Some(msg) => StreamNext::Message(msg),
                None => StreamNext::Quiet,
            },
            (Transport::Http(_), OpenedBy::Stream(stream)) => {
                stream.next(deadline, &mut open.noise).await?
            }
            (Transport::Http(_) | Transport::Shared(_), _) => StreamNext::Ended,
        };
        Ok(match next {
            StreamNext::Message(msg) => {
                self.record(Direction::Received, msg.to_string(), None);
                self.validate_message(&msg);
                if open.is_end(&msg) {
                    open.ended = true;
                }
                StreamItem::Message(msg)
            }
            StreamNext::Ended => {
                if !open.ended {
                    self.note("the server ended the open request's stream".into());
                }
                open.ended = true;
                StreamItem::Ended
            }
            StreamNext::Quiet => StreamItem::Quiet,
        })
    }

    /// Cancel the open request: over stdio, `notifications/cancelled` naming it (a late
    /// response to it is then ignored); over HTTP, close its stream.
    pub async fn cancel(&mut self, open: OpenRequest, reason: &str) -> Result<(), TransportError> {
        match (&mut self.transport, open.by) {
            (Transport::Stdio(t), _) => {
                t.release(&open.id);
                let params = json!({"requestId": open.id, "reason": reason});
                let out = self.build_plain(methods::NOTIFICATIONS_CANCELLED, Some(params), None);
                self.send(&out).await.map(|_| ())
            }
            (Transport::Http(_), OpenedBy::Stream(stream)) => {
                drop(stream);
                self.note(format!(
                    "closed the SSE stream of request {} (over HTTP that is its cancellation)",
                    open.id
                ));
                Ok(())
            }
            (Transport::Http(_) | Transport::Shared(_), _) => Ok(()),
        }
    }
}

/// Why a request cannot be left open on a shared process.
const SHARED_OPEN: &str = "a request left open (a stream) is not supported on a shared server process (--stdio-mode shared): run this scenario with a process per client";
