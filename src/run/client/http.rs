//! Streamable HTTP transport: one POST per message; the reply is JSON, an SSE stream
//! scoped to the request, or 202 with no body. Headers go out exactly as built — the
//! engine may send inconsistent ones on purpose — and status, headers and raw body are
//! kept for expectations.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::{Outgoing, TransportError};
use crate::results::exchange::{Exchange, HttpMeta};
use std::time::Duration;

mod listen;
pub mod oauth;
mod probes;
mod reply;
mod reqwest_client;
mod sse;
pub mod stream;

use reqwest_client::send_once_more;
pub use reqwest_client::shared_client;
use sse::{Stamp, sse_events};

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
