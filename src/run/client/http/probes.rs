//! Requests beside the scenario's traffic, for the checks: a GET's first SSE event, a JSON
//! GET on the same origin, a POST with a token in the query string.

use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use super::HttpTransport;
use super::reqwest_client::send_once_more;
use super::sse::sse_events;
use crate::run::client::{Outgoing, TransportError};

impl HttpTransport {
    /// GET the endpoint asking for an event stream and read its first SSE event, waiting
    /// at most `wait`: `(status, Some((event name, data)))`, or no event in time.
    pub async fn first_sse_event(
        &self,
        wait: Duration,
    ) -> Result<(u16, Option<(String, String)>), TransportError> {
        let out = Outgoing {
            body: String::new(),
            id: None,
            expects_response: false,
            headers: vec![("Accept".into(), "text/event-stream".into())],
            drop_headers: vec!["content-type".into()],
            http_method: Some("GET".into()),
            timeout: wait,
            quiet_period: Duration::ZERO,
        };
        let token = self.access_token(&out).await?;
        let mut headers = self.headers_for(&out, token.as_deref())?;
        headers.remove(reqwest::header::CONTENT_TYPE);
        let request = send_once_more(&self.client, |client| {
            client.get(&self.url).headers(headers.clone())
        });
        let response = match tokio::time::timeout(wait, request).await {
            Ok(r) => r?.0,
            Err(_) => return Err(TransportError::Timeout(wait)),
        };
        let status = response.status().as_u16();
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            return Ok((status, None));
        }
        let limit = self.max_bytes;
        let mut events = std::pin::pin!(sse_events(response, limit, None));
        let first = tokio::time::timeout(wait, async {
            while let Some(Ok(event)) = events.next().await {
                let data = event.data.unwrap_or_default();
                if event.event.is_some() || !data.trim().is_empty() {
                    let data = crate::ground::redact::shorten(&data, limit.min(500));
                    return Some((event.event.unwrap_or_else(|| "message".into()), data));
                }
            }
            None
        })
        .await
        .unwrap_or(None);
        Ok((status, first))
    }

    /// GET a URL on the same origin as the endpoint (`path` from the root), JSON body:
    /// `(status, body)`, the body `None` when it is not JSON.
    pub async fn get_json(
        &self,
        path: &str,
        wait: Duration,
    ) -> Result<(u16, Option<Value>), TransportError> {
        let mut url =
            reqwest::Url::parse(&self.url).map_err(|e| TransportError::Io(e.to_string()))?;
        url.set_path(path);
        url.set_query(None);
        let send = send_once_more(&self.client, |client| {
            client
                .get(url.clone())
                .header(reqwest::header::ACCEPT, "application/json")
        });
        let response = match tokio::time::timeout(wait, send).await {
            Ok(r) => r?.0,
            Err(_) => return Err(TransportError::Timeout(wait)),
        };
        let status = response.status().as_u16();
        let body = match tokio::time::timeout(wait, self.read_body(response, None)).await {
            Ok(Ok(b)) => serde_json::from_slice(&b).ok(),
            _ => None,
        };
        Ok((status, body))
    }

    /// Send `out` with `name=value` added to the endpoint's query string, without the
    /// sign-in's token (`out` drops or sets `Authorization` itself): the HTTP status. For
    /// the check that tokens are never taken from the query string.
    pub async fn status_with_query(
        &self,
        out: &Outgoing,
        name: &str,
        value: &str,
    ) -> Result<u16, TransportError> {
        let mut url =
            reqwest::Url::parse(&self.url).map_err(|e| TransportError::Io(e.to_string()))?;
        url.query_pairs_mut().append_pair(name, value);
        let headers = self.headers_for(out, None)?;
        let send = send_once_more(&self.client, |client| {
            client
                .post(url.clone())
                .headers(headers.clone())
                .body(out.body.clone())
        });
        match tokio::time::timeout(out.timeout, send).await {
            Ok(r) => Ok(r?.0.status().as_u16()),
            Err(_) => Err(TransportError::Timeout(out.timeout)),
        }
    }
}
