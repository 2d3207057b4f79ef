//! The HTTP session of the legacy era and the other HTTP-only exchanges (SSE stream, GET).

use std::time::Duration;

use serde_json::Value;

use super::Connection;
use super::transport::Transport;
use crate::protocol::headers as h;
use crate::results::exchange::Direction;
use crate::run::client::{Outgoing, TransportError};

impl Connection {
    /// The DELETE that ends legacy session `sid`.
    pub(super) fn session_delete(&self, sid: String) -> Outgoing {
        Outgoing {
            body: String::new(),
            id: None,
            expects_response: false,
            headers: vec![
                (h::SESSION_ID.into(), sid),
                (h::PROTOCOL_VERSION.into(), self.negotiated.revision.clone()),
            ],
            drop_headers: vec!["content-type".into()],
            http_method: Some("DELETE".into()),
            timeout: self.target.timeout.min(Duration::from_secs(2)),
            quiet_period: Duration::ZERO,
        }
    }

    /// HTTP, legacy session, a client that answers: open the session's GET stream, where
    /// the server sends the requests that belong to no call of the client's.
    pub(super) fn listen_to_session(&mut self) {
        let (Transport::Http(t), Some(sid), Some(_)) =
            (&mut self.transport, &self.session_id, &self.answerer)
        else {
            return;
        };
        t.listen(sid, &self.negotiated.revision);
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
        if let Transport::Http(t) = &mut self.transport {
            t.stop_listening();
        }
        let out = self.session_delete(sid);
        Some(
            self.send(&out)
                .await
                .map(|ex| ex.http.map_or(0, |h| h.status)),
        )
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

    /// HTTP: send `out` with `name=value` in the query string instead of a token in the
    /// header (see `HttpTransport::status_with_query`): the status; `None` over stdio.
    /// The value is left out of the transcript.
    pub async fn status_with_query(
        &mut self,
        out: &Outgoing,
        name: &str,
        value: &str,
    ) -> Option<Result<u16, TransportError>> {
        let Transport::Http(t) = &self.transport else {
            return None;
        };
        let result = t.status_with_query(out, name, value).await;
        let note = match &result {
            Ok(status) => format!("POST ?{name}=…: HTTP {status}"),
            Err(e) => format!("POST ?{name}=…: {e}"),
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
                    .map(|b| format!(", {}", crate::ground::redact::shorten(&b.to_string(), 500)))
                    .unwrap_or_default()
            ),
            Err(e) => format!("GET {path}: {e}"),
        };
        self.record(Direction::Note, note, None);
        Some(result)
    }
}
