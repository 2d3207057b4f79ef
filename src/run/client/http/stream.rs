//! A request left open (`subscriptions/listen`): its SSE stream, read event by event as it comes.

use std::time::Instant;

use futures::StreamExt;
use serde_json::Value;

use super::reqwest_client::send_once_more;
use super::sse::Stamp;
use super::sse::sse_events;
use super::{HttpTransport, OVERSIZED, meta_of};
use crate::results::exchange::{Exchange, HttpMeta};
use crate::run::client::{Outgoing, TransportError};

/// What an HTTP request left open got back: an SSE stream to read on, or a complete
/// reply (JSON, an error status, 202) when the server did not stream.
pub enum Opened {
    Stream(HttpMeta, OpenStream),
    Reply(Box<Exchange>),
}

/// The SSE stream of a request left open (see [`crate::run::client::open`]). Dropping it closes the
/// stream, which over Streamable HTTP is the cancellation of the request.
pub struct OpenStream {
    events: std::pin::Pin<
        Box<dyn futures::Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>,
    >,
    limit: usize,
}

/// The next thing an [`OpenStream`] gave.
pub enum StreamNext {
    Message(Value),
    /// The server ended the stream.
    Ended,
    /// Nothing arrived before the deadline.
    Quiet,
}

/// An SSE event as sent: its `id:` and its `data:` (empty when it had none).
pub struct RawEvent {
    pub id: Option<String>,
    pub data: String,
}

impl OpenStream {
    /// The next SSE event as sent, whatever its data, waiting until `deadline` at most:
    /// `None` when the stream ended or nothing came (the priming event of 2025-11-25 is
    /// an event with an id and empty data, which [`OpenStream::next`] skips).
    pub async fn next_event(
        &mut self,
        deadline: Instant,
    ) -> Result<Option<RawEvent>, TransportError> {
        match tokio::time::timeout_at(deadline.into(), self.events.next()).await {
            Err(_) | Ok(None) => Ok(None),
            Ok(Some(Err(e))) if e.to_string().contains(OVERSIZED) => {
                Err(TransportError::Oversized { limit: self.limit })
            }
            Ok(Some(Err(e))) => Err(TransportError::Io(format!("SSE stream broke: {e}"))),
            Ok(Some(Ok(event))) => Ok(Some(RawEvent {
                id: event.id,
                data: event.data.unwrap_or_default(),
            })),
        }
    }

    /// The next JSON message on the stream, waiting until `deadline` at most. Events that
    /// are not JSON are skipped (counted in `noise`).
    pub async fn next(
        &mut self,
        deadline: Instant,
        noise: &mut usize,
    ) -> Result<StreamNext, TransportError> {
        loop {
            let event = match tokio::time::timeout_at(deadline.into(), self.events.next()).await {
                Err(_) => return Ok(StreamNext::Quiet),
                Ok(None) => return Ok(StreamNext::Ended),
                Ok(Some(Err(e))) if e.to_string().contains(OVERSIZED) => {
                    return Err(TransportError::Oversized { limit: self.limit });
                }
                Ok(Some(Err(e))) => {
                    return Err(TransportError::Io(format!("SSE stream broke: {e}")));
                }
                Ok(Some(Ok(event))) => event,
            };
            let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                continue;
            };
            if data.len() > self.limit {
                return Err(TransportError::Oversized { limit: self.limit });
            }
            match serde_json::from_str::<Value>(&data) {
                Ok(msg) => return Ok(StreamNext::Message(msg)),
                Err(_) => *noise += 1,
            }
        }
    }
}

impl HttpTransport {
    /// POST `out` and hand back its SSE stream unread, for a request that stays open while
    /// messages arrive (`subscriptions/listen`). Reaching the stream's headers is bounded
    /// by `out.timeout`; a reply that is not a stream is read whole, as an exchange.
    pub async fn open_stream(&mut self, out: &Outgoing) -> Result<Opened, TransportError> {
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        let started = Instant::now();
        let token = self.access_token(out).await?;
        let headers = self.headers_for(out, token.as_deref())?;
        let build = |client: &reqwest::Client| {
            client
                .post(&self.url)
                .headers(headers.clone())
                .body(out.body.clone())
        };
        let (response, _) =
            match tokio::time::timeout(out.timeout, send_once_more(&self.client, build)).await {
                Ok(r) => r?,
                Err(_) => return Err(TransportError::Timeout(out.timeout)),
            };
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
        if !is_sse {
            let left = out.timeout.saturating_sub(started.elapsed());
            let received = Stamp::now();
            let mut ex =
                match tokio::time::timeout(left, self.read_reply(response, out, &received)).await {
                    Ok(r) => r?,
                    Err(_) => return Err(TransportError::Timeout(out.timeout)),
                };
            ex.elapsed = started.elapsed();
            return Ok(Opened::Reply(Box::new(ex)));
        }
        let meta = meta_of(&response);
        let limit = self.max_bytes;
        let events = Box::pin(sse_events(response, limit, None));
        Ok(Opened::Stream(meta, OpenStream { events, limit }))
    }
}
