//! Streamable HTTP transport: one POST per message; the reply is JSON, an SSE stream
//! scoped to the request, or 202 with no body. Headers go out exactly as built — the
//! engine may send inconsistent ones on purpose — and status, headers and raw body are
//! kept for expectations.

use std::time::Instant;

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::{Exchange, HttpMeta, Outgoing, TransportError, id_key, is_response};
use std::time::Duration;

mod listen;
pub mod oauth;
mod reqwest_client;

pub use reqwest_client::install_tls_provider;
pub use reqwest_client::shared_client;
use reqwest_client::{describe_reqwest, send_once_more};

const OVERSIZED: &str = "reply exceeds the message size limit";
/// The longest wait for a session's GET stream to open before the request that opened it
/// goes (a server slow to open it still gets the request, a little later).
const LISTEN_WAIT: Duration = Duration::from_secs(2);

pub struct HttpTransport {
    client: reqwest::Client,
    url: String,
    /// Target-level headers (`--header`, bearer), sent with every message.
    base_headers: Vec<(String, String)>,
    max_bytes: usize,
    /// Why this target is given up on (it stopped answering even a liveness probe):
    /// later messages fail at once instead of each waiting out its timeout.
    closed: Option<String>,
    /// The scenario's answers to server requests (none: every one gets -32601).
    pub(super) answerer: Option<std::sync::Arc<super::answers::Answerer>>,
    /// The run's OAuth sign-in: its access token goes with every message (unless the
    /// step sends or drops `Authorization` itself).
    auth: Option<std::sync::Arc<oauth::OAuth>>,
    /// The legacy session's GET stream, while open ([`HttpTransport::listen`]).
    listener: Option<listen::Listener>,
    /// The session (id, revision) whose GET stream opens with the next exchange.
    listen_later: Option<(String, String)>,
}

impl HttpTransport {
    pub fn new(
        url: &str,
        headers: &[(String, String)],
        bearer: Option<&str>,
        auth: Option<std::sync::Arc<oauth::OAuth>>,
        max_bytes: usize,
    ) -> Result<HttpTransport, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("invalid URL `{url}`: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!(
                "invalid URL `{url}`: expected an http:// or https:// URL"
            ));
        }
        let client = shared_client()?;
        let mut base_headers = headers.to_vec();
        if let Some(token) = bearer {
            base_headers.push(("Authorization".into(), format!("Bearer {token}")));
        }
        Ok(HttpTransport {
            client,
            url: url.to_string(),
            base_headers,
            max_bytes,
            closed: None,
            answerer: None,
            auth,
            listener: None,
            listen_later: None,
        })
    }

    /// Open the GET stream of legacy session `session` with the next exchange (a session
    /// no step uses gets none) and answer the server's requests that come on it, until
    /// the session ends ([`HttpTransport::stop_listening`]) or the client changes
    /// ([`HttpTransport::set_answerer`]).
    pub fn listen(&mut self, session: &str, revision: &str) {
        self.listen_later = Some((session.to_string(), revision.to_string()));
    }

    /// Open the GET stream asked for by [`HttpTransport::listen`], if not yet, and wait
    /// (a little) until it is there.
    async fn start_listening(&mut self, wait: Duration) {
        let Some((session, revision)) = self.listen_later.take() else {
            return;
        };
        let copy = HttpTransport {
            client: self.client.clone(),
            url: self.url.clone(),
            base_headers: self.base_headers.clone(),
            max_bytes: self.max_bytes,
            closed: None,
            answerer: self.answerer.clone(),
            auth: self.auth.clone(),
            listener: None,
            listen_later: None,
        };
        let mut listener = listen::Listener::open(copy, session, revision);
        listener.opened(wait).await;
        self.listener = Some(listener);
    }

    /// Close the GET stream (the session ends).
    pub fn stop_listening(&mut self) {
        self.listener = None;
        self.listen_later = None;
    }

    /// Answer the server's requests from `answerer` from now on. An open GET stream
    /// answered as the client before: it is closed.
    pub fn set_answerer(&mut self, answerer: Option<std::sync::Arc<super::answers::Answerer>>) {
        let same = match (&self.answerer, &answerer) {
            (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.stop_listening();
        }
        self.answerer = answerer;
    }

    /// What came on the GET stream since the last exchange goes with this one; a stream
    /// that failed fails it: why, once.
    fn take_listened(&self, ex: &mut Exchange) -> Option<String> {
        let listener = self.listener.as_ref()?;
        let (messages, notes, failure) = listener.take();
        ex.notes.extend(notes);
        if !messages.is_empty() {
            ex.notes.push(format!(
                "{} message(s) came on the session's GET stream (server requests there were answered)",
                messages.len()
            ));
        }
        for m in messages {
            ex.other_messages.push(m);
        }
        failure
    }

    /// Why the target cannot be used any more, if it cannot.
    pub fn closed_reason(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    /// Give up on the target: every later message fails with `why`.
    pub fn mark_closed(&mut self, why: String) {
        self.closed.get_or_insert(why);
    }

    pub async fn exchange(&mut self, out: &Outgoing) -> Result<Exchange, TransportError> {
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        self.start_listening(out.timeout.min(LISTEN_WAIT)).await;
        let token = self.access_token(out).await?;
        let mut ex = self.send_exchange(out, token.as_deref()).await?;
        // A token that expired mid-run: one new token, the message sent once more.
        if let (Some(refused), Some(auth)) = (&token, &self.auth)
            && refused_as_invalid(&ex)
        {
            let renewed = auth
                .renew(refused)
                .await
                .map_err(|e| self.sign_in_failed(&e))?;
            let mut again = self.send_exchange(out, Some(&renewed)).await?;
            again.notes.insert(
                0,
                "the access token was refused (401 invalid_token): a new one was fetched and the message sent again"
                    .into(),
            );
            ex = again;
        }
        match self.take_listened(&mut ex) {
            Some(why) => Err(listen::failed(why)),
            None => Ok(ex),
        }
    }

    /// The sign-in's token for `out`: `None` without a sign-in, or when the step sends or
    /// drops `Authorization` itself (the security checks send wrong tokens on purpose).
    async fn access_token(&self, out: &Outgoing) -> Result<Option<String>, TransportError> {
        let Some(auth) = &self.auth else {
            return Ok(None);
        };
        let own = out
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            || out
                .drop_headers
                .iter()
                .any(|d| d.eq_ignore_ascii_case("authorization"));
        if own {
            return Ok(None);
        }
        auth.token()
            .await
            .map(Some)
            .map_err(|e| self.sign_in_failed(&e))
    }

    fn sign_in_failed(&self, e: &oauth::SignInError) -> TransportError {
        TransportError::Closed(e.to_string())
    }

    /// Send `out` once (with `token` as the bearer, when given) and read the reply.
    async fn send_exchange(
        &self,
        out: &Outgoing,
        token: Option<&str>,
    ) -> Result<Exchange, TransportError> {
        let method = out.http_method.as_deref().unwrap_or("POST");
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|_| TransportError::Io(format!("invalid HTTP method `{method}`")))?;
        let headers = self.headers_for(out, token)?;
        let with_body = method != reqwest::Method::GET && method != reqwest::Method::DELETE;
        // The latency: from the request handed to the client (stamped here, right before it
        // is sent) to the reply's last byte read (stamped as each chunk of the body comes,
        // before any parsing). The body is a plain one, not a stream that stamps when hyper
        // takes it: reqwest follows a 307/308 only with a body it can clone (mcp 1.9.4
        // redirects `/mcp` to `/mcp/`).
        let sent = Stamp::now();
        let build = |client: &reqwest::Client| {
            let request = client
                .request(method.clone(), &self.url)
                .headers(headers.clone());
            if with_body {
                request.body(out.body.clone())
            } else {
                request
            }
        };
        let fut = async {
            let (response, retried) = send_once_more(&self.client, build).await?;
            let received = Stamp::now();
            let mut ex = self.read_reply(response, out, &received).await?;
            ex.elapsed = received.get().saturating_duration_since(sent.get());
            ex.notes.extend(retried);
            Ok(ex)
        };
        match tokio::time::timeout(out.timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(TransportError::Timeout(out.timeout)),
        }
    }

    #[allow(
        clippy::result_large_err,
        reason = "the error of a failed request, made once per failure; boxing it would cost every caller"
    )]
    fn headers_for(
        &self,
        out: &Outgoing,
        token: Option<&str>,
    ) -> Result<HeaderMap, TransportError> {
        let mut map = HeaderMap::new();
        let mut defaults = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        defaults.retain(|(k, _)| !out.drop_headers.iter().any(|d| d == k));
        let overridden = |name: &str| {
            out.headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case(name))
        };
        for (k, v) in defaults {
            if !overridden(k) {
                map.insert(HeaderName::from_static(k), HeaderValue::from_static(v));
            }
        }
        let signed_in = token.map(|t| ("Authorization".to_string(), format!("Bearer {t}")));
        let base = self
            .base_headers
            .iter()
            .chain(signed_in.iter())
            .filter(|(k, _)| {
                !overridden(k) && !out.drop_headers.iter().any(|d| d.eq_ignore_ascii_case(k))
            });
        for (k, v) in base.chain(out.headers.iter()) {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| TransportError::Io(format!("invalid header name `{k}`")))?;
            let value = HeaderValue::from_bytes(v.as_bytes())
                .map_err(|_| TransportError::Io(format!("invalid value for header `{k}`")))?;
            map.append(name, value);
        }
        Ok(map)
    }

    /// The reply to `out`; `received` is stamped as its bytes come.
    async fn read_reply(
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

    async fn read_body(
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
                super::server_request_reply(&msg, answerer.as_deref(), out.timeout).await
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
}

impl HttpTransport {
    /// POST the answer to a server request that came on a response stream, with the
    /// request's session and version headers; best effort, bounded in time.
    async fn answer(&self, reply: String, out: &Outgoing) {
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
}

impl HttpTransport {
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

/// What an HTTP request left open got back: an SSE stream to read on, or a complete
/// reply (JSON, an error status, 202) when the server did not stream.
pub enum Opened {
    Stream(HttpMeta, OpenStream),
    Reply(Box<Exchange>),
}

/// The SSE stream of a request left open (see [`super::open`]). Dropping it closes the
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

/// A 401 whose challenge says the token is invalid or expired (RFC 6750 §3.1).
fn refused_as_invalid(ex: &Exchange) -> bool {
    ex.http.as_ref().is_some_and(|meta| {
        meta.status == 401
            && meta
                .header("www-authenticate")
                .is_some_and(oauth::is_invalid_token)
    })
}

/// Status and headers of a response, as kept for expectations (a header that is not
/// UTF-8 is kept lossily rather than dropped).
fn meta_of(response: &reqwest::Response) -> HttpMeta {
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    HttpMeta {
        status: response.status().as_u16(),
        headers,
    }
}

/// The body as SSE events; the stream fails once one event (message) is longer than
/// `limit` bytes. A stream as a whole is not capped: like stdio, a server may send any
/// number of messages before its reply (each one is judged and counted as it comes).
/// `received`, when given, is stamped as each chunk comes (before the SSE parsing).
fn sse_events(
    response: reqwest::Response,
    limit: usize,
    received: Option<Stamp>,
) -> sse_stream::SseByteStream<
    impl futures::Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + use<>,
> {
    let mut event = EventSize::default();
    let bytes = response.bytes_stream().map(move |chunk| {
        if let Some(stamp) = &received {
            stamp.set_now();
        }
        match chunk {
            Ok(c) if event.feed(&c) > limit => Err(std::io::Error::other(OVERSIZED)),
            Ok(c) => Ok(c),
            Err(e) => Err(std::io::Error::other(describe_reqwest(&e))),
        }
    });
    sse_stream::SseByteStream::new(bytes)
}

/// A moment of an exchange, set from wherever its bytes pass (hyper's connection task for
/// the request body, the reply's stream for its chunks).
#[derive(Clone)]
struct Stamp(std::sync::Arc<std::sync::Mutex<Instant>>);

impl Stamp {
    fn now() -> Stamp {
        Stamp(std::sync::Arc::new(std::sync::Mutex::new(Instant::now())))
    }

    fn set_now(&self) {
        if let Ok(mut at) = self.0.lock() {
            *at = Instant::now();
        }
    }

    fn get(&self) -> Instant {
        self.0.lock().map_or_else(|e| *e.into_inner(), |at| *at)
    }
}

/// The size of the SSE event being received: the bytes of its lines (line ends left out)
/// since the blank line that ended the one before. Line ends are `\n`, `\r\n` or `\r`,
/// and may be split across chunks.
#[derive(Default)]
struct EventSize {
    /// Bytes of the current event so far.
    event: usize,
    /// Bytes of the current line so far.
    line: usize,
    /// The last byte was `\r` (a `\n` right after it ends no other line).
    after_cr: bool,
}

impl EventSize {
    /// Count `chunk`; the largest size the current event reached within it.
    fn feed(&mut self, chunk: &[u8]) -> usize {
        let mut most = self.event;
        for &b in chunk {
            if b == b'\n' && self.after_cr {
                self.after_cr = false;
                continue;
            }
            self.after_cr = b == b'\r';
            if b == b'\n' || b == b'\r' {
                if self.line == 0 {
                    // A blank line: the event is complete.
                    self.event = 0;
                }
                self.line = 0;
            } else {
                self.line += 1;
                self.event += 1;
                most = most.max(self.event);
            }
        }
        most
    }
}

#[cfg(test)]
mod tests {
    use super::EventSize;

    #[test]
    fn event_size_restarts_at_each_blank_line() {
        let mut e = EventSize::default();
        assert_eq!(e.feed(b"data: abc\n\n"), 9);
        assert_eq!(e.event, 0);
        // Any number of events: each is counted alone.
        for _ in 0..1000 {
            assert!(e.feed(b"data: {\"x\":1}\r\n\r\n") <= 14);
        }
        // One event split over chunks and lines (CR LF split between chunks too).
        assert_eq!(e.feed(b"data: 1234\r"), 10);
        assert_eq!(e.feed(b"\ndata: 5678"), 20);
        assert_eq!(e.feed(b"\r\r"), 20);
        assert_eq!(e.event, 0);
        assert_eq!(e.feed(b"data: x\n\ndata: yy\n"), 8);
    }
}
