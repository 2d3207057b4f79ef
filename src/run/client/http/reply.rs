//! Reading a reply as it comes: JSON, an SSE stream (answering the server's requests on
//! it), or no body.

use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use super::reqwest_client::{describe_reqwest, send_once_more};
use super::sse::{Stamp, sse_events};
use super::{HttpTransport, OVERSIZED, meta_of};
use crate::results::exchange::Exchange;
use crate::run::client::{Outgoing, TransportError, id_key, is_response};

impl HttpTransport {
    /// The reply to `out`; `received` is stamped as its bytes come.
    pub(super) async fn read_reply(
        &self,
        response: reqwest::Response,
        out: &Outgoing,
        received: &Stamp,
    ) -> Result<Exchange, TransportError> {
        let meta = meta_of(&response);
        let content_type = meta
            .header("content-type")
            .unwrap_or("")
            .to_ascii_lowercase();
        let mut ex = Exchange {
            http: Some(meta),
            ..Exchange::default()
        };
        if content_type.starts_with("text/event-stream") {
            self.read_sse(response, out, &mut ex, received).await?;
            return Ok(ex);
        }
        let body = self.read_body(response, Some(received)).await?;
        if body.is_empty() {
            return Ok(ex);
        }
        match serde_json::from_slice::<Value>(&body) {
            Ok(msg) if msg.is_object() && is_response(&msg) => {
                let got = msg.get("id").cloned().unwrap_or(Value::Null);
                if let Some(expected) = &out.id
                    && id_key(expected) != id_key(&got)
                    && !got.is_null()
                {
                    let error = msg.get("error").cloned().map(Box::new);
                    ex.other_messages.push(msg);
                    return Err(TransportError::WrongId {
                        expected: expected.clone(),
                        got,
                        error,
                    });
                }
                ex.response = Some(msg);
            }
            Ok(other) => {
                ex.raw_body = Some(String::from_utf8_lossy(&body).into_owned());
                ex.other_messages.push(other);
            }
            Err(_) => ex.raw_body = Some(String::from_utf8_lossy(&body).into_owned()),
        }
        Ok(ex)
    }

    pub(super) async fn read_body(
        &self,
        response: reqwest::Response,
        received: Option<&Stamp>,
    ) -> Result<Vec<u8>, TransportError> {
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            if let Some(stamp) = received {
                stamp.set_now();
            }
            let chunk = chunk.map_err(|e| TransportError::Io(describe_reqwest(&e)))?;
            if body.len() + chunk.len() > self.max_bytes {
                return Err(TransportError::Oversized {
                    limit: self.max_bytes,
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// Read SSE events until the response to this request arrives (then drop the stream).
    async fn read_sse(
        &self,
        response: reqwest::Response,
        out: &Outgoing,
        ex: &mut Exchange,
        received: &Stamp,
    ) -> Result<(), TransportError> {
        let limit = self.max_bytes;
        let mut events = std::pin::pin!(sse_events(response, limit, Some(received.clone())));
        let expected = out.id.as_ref().map(id_key);
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| {
                if e.to_string().contains(OVERSIZED) {
                    TransportError::Oversized { limit }
                } else {
                    TransportError::Io(format!("SSE stream broke: {e}"))
                }
            })?;
            let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                continue;
            };
            if data.len() > limit {
                return Err(TransportError::Oversized { limit });
            }
            let msg: Value = match serde_json::from_str(&data) {
                Ok(v) => v,
                Err(_) => {
                    ex.stdout_noise
                        .push(crate::ground::redact::shorten(&data, 500));
                    continue;
                }
            };
            if is_response(&msg) {
                let got = msg.get("id").cloned().unwrap_or(Value::Null);
                match &expected {
                    Some(key) if *key == id_key(&got) => {
                        ex.response = Some(msg);
                        return Ok(());
                    }
                    Some(_) if !got.is_null() => {
                        return Err(TransportError::WrongId {
                            expected: out.id.clone().unwrap_or(Value::Null),
                            got,
                            error: msg.get("error").cloned().map(Box::new),
                        });
                    }
                    _ => {
                        ex.response = Some(msg);
                        return Ok(());
                    }
                }
            }
            let answerer = self.answerer.clone();
            if let Some(reply) =
                crate::run::client::server_request_reply(&msg, answerer.as_deref(), out.timeout)
                    .await
            {
                self.answer(reply, out).await;
            }
            ex.other_messages.push(msg);
        }
        if out.expects_response {
            return Err(TransportError::Closed(
                "the SSE stream ended before the response arrived".into(),
            ));
        }
        Ok(())
    }

    /// POST the answer to a server request that came on a response stream, with the
    /// request's session and version headers; best effort, bounded in time.
    pub(super) async fn answer(&self, reply: String, out: &Outgoing) {
        let mut answer = Outgoing {
            body: reply,
            id: None,
            expects_response: false,
            headers: out
                .headers
                .iter()
                .filter(|(k, _)| {
                    k.eq_ignore_ascii_case(crate::protocol::headers::SESSION_ID)
                        || k.eq_ignore_ascii_case(crate::protocol::headers::PROTOCOL_VERSION)
                })
                .cloned()
                .collect(),
            drop_headers: Vec::new(),
            http_method: None,
            timeout: out.timeout.min(Duration::from_secs(5)),
            quiet_period: Duration::ZERO,
        };
        answer.headers.shrink_to_fit();
        let token = self.access_token(&answer).await.ok().flatten();
        let Ok(headers) = self.headers_for(&answer, token.as_deref()) else {
            return;
        };
        let send = send_once_more(&self.client, |client| {
            client
                .post(&self.url)
                .headers(headers.clone())
                .body(answer.body.clone())
        });
        let _ = tokio::time::timeout(answer.timeout, send).await;
    }
}
