//! The reqwest side of the HTTP transport: one pooled client per run (and a fresh one
//! for the single re-send), TLS through `ring`, redirects kept within the endpoint's
//! origin (or followed back to it when the server built them from the `Host` sent), and
//! send failures told apart (unreachable, closed before the reply, other).

use super::TransportError;

/// One HTTP client for the whole run: building one loads the system's root
/// certificates (tens of milliseconds), and connections are pooled across scenarios.
pub fn shared_client() -> Result<reqwest::Client, String> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::Client, String>> =
        std::sync::OnceLock::new();
    CLIENT.get_or_init(|| build_client(usize::MAX)).clone()
}

/// A client that keeps no idle connection: each request it sends opens a new one. Built
/// on the first retry only.
fn fresh_client() -> Result<reqwest::Client, String> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::Client, String>> =
        std::sync::OnceLock::new();
    CLIENT.get_or_init(|| build_client(0)).clone()
}

fn build_client(max_idle: usize) -> Result<reqwest::Client, String> {
    crate::ground::tls::install_provider();
    reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(max_idle)
        .redirect(redirect_policy())
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// Send a request; when it fails before any response byte because the server had closed
/// the connection (a pooled keep-alive connection it dropped after a response, or on its
/// idle timeout, without `Connection: close`), send it once more on a fresh connection.
/// Returns the response and, when it was sent again, a transcript note saying so.
///
/// Any other failure is final, and so is a second one: a server that closes every fresh
/// connection without answering still fails the step. A failure to connect at all is
/// [`TransportError::Unreachable`]: the target was not reached.
///
/// A redirect out of the endpoint's origin is then followed only as
/// [`follow_echoed_host`] says.
pub(super) async fn send_once_more(
    client: &reqwest::Client,
    build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
) -> Result<(reqwest::Response, Option<String>), TransportError> {
    let (response, note) = send_retrying(client, &build).await?;
    let (response, followed) = follow_echoed_host(client, &build, response).await?;
    let notes: Vec<String> = note.into_iter().chain(followed).collect();
    Ok((response, (!notes.is_empty()).then(|| notes.join("; "))))
}

async fn send_retrying(
    client: &reqwest::Client,
    build: &impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
) -> Result<(reqwest::Response, Option<String>), TransportError> {
    let first = match build(client).send().await {
        Ok(response) => return Ok((response, None)),
        Err(e) => e,
    };
    if !closed_before_reply(&first) {
        return Err(send_error(&first));
    }
    let note = format!(
        "the server closed the connection before replying ({}); sent again once on a fresh connection",
        describe_reqwest(&first)
    );
    let fresh = fresh_client().map_err(TransportError::Io)?;
    match build(&fresh).send().await {
        Ok(response) => Ok((response, Some(note))),
        Err(e) => Err(TransportError::Io(format!(
            "{}; sent again on a fresh connection: {}",
            describe_reqwest(&first),
            describe_reqwest(&e)
        ))),
    }
}

/// A redirect the client did not follow because it leaves the endpoint's origin (see
/// [`redirect_policy`]) is an error, naming it — except one a request with a `Host` of its
/// own was sent, to a `Location` built from that `Host` (Starlette's trailing-slash
/// redirect echoes it): a browser that reached the server under that name (a DNS-rebound
/// page) would follow it to the same server, so it is followed to the endpoint's address,
/// the `Location`'s path and query, the `Host` kept. 307 and 308 only (method and body
/// unchanged). Returns the final response and a transcript note per redirect followed.
async fn follow_echoed_host(
    client: &reqwest::Client,
    build: &impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
    mut response: reqwest::Response,
) -> Result<(reqwest::Response, Vec<String>), TransportError> {
    let mut notes = Vec::new();
    loop {
        let status = response.status();
        if !status.is_redirection() {
            return Ok((response, notes));
        }
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .and_then(|l| response.url().join(l).ok());
        let Some(location) = location else {
            return Ok((response, notes));
        };
        let mut request = build(client)
            .build()
            .map_err(|e| TransportError::Io(describe_reqwest(&e)))?;
        if location.origin() == request.url().origin() {
            // Within the origin: the client stopped following for a reason of its own.
            return Ok((response, notes));
        }
        let echoed = request
            .headers()
            .get(reqwest::header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|host| host.eq_ignore_ascii_case(&authority(&location)));
        if !echoed || !matches!(status.as_u16(), 307 | 308) {
            return Err(TransportError::Io(cross_origin_refusal(&location, status)));
        }
        if notes.len() >= MAX_REDIRECTS {
            return Err(TransportError::Io(too_many_redirects()));
        }
        let url = request.url_mut();
        url.set_path(location.path());
        url.set_query(location.query());
        let path = match location.query() {
            Some(query) => format!("{}?{query}", location.path()),
            None => location.path().to_string(),
        };
        notes.push(format!(
            "HTTP {}: `Location: {location}` names the `Host` sent; followed to {path} at the \
             endpoint's address, with that `Host`",
            status.as_u16(),
        ));
        response = client.execute(request).await.map_err(|e| send_error(&e))?;
    }
}

/// `host[:port]` of a URL, as a `Host` header names it.
fn authority(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

fn too_many_redirects() -> String {
    format!("more than {MAX_REDIRECTS} redirects")
}

/// Why a redirect out of the endpoint's origin was not followed.
fn cross_origin_refusal(to: &reqwest::Url, status: reqwest::StatusCode) -> String {
    format!(
        "cross-origin redirect to {} ({} {}) not followed: credential headers and the \
         request body stay with the endpoint's origin",
        to.origin().ascii_serialization(),
        status.as_u16(),
        status.canonical_reason().unwrap_or("redirect")
    )
}

/// The request went out on a connection the peer had already closed (or closed before the
/// response began): hyper's incomplete-message error, or a reset / broken pipe on the
/// socket. Connection failures and timeouts are not this.
fn closed_before_reply(e: &reqwest::Error) -> bool {
    if e.is_connect() || e.is_timeout() || e.is_builder() || e.is_redirect() {
        return false;
    }
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        if let Some(io) = inner.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            )
        {
            return true;
        }
        // hyper::Error::IncompleteMessage (hyper is not a direct dependency: its text).
        if inner
            .to_string()
            .contains("connection closed before message completed")
        {
            return true;
        }
        source = inner.source();
    }
    false
}

/// A send that failed: `Unreachable` when no connection could be made.
fn send_error(e: &reqwest::Error) -> TransportError {
    if e.is_connect() {
        TransportError::Unreachable(describe_reqwest(e))
    } else {
        TransportError::Io(describe_reqwest(e))
    }
}

/// Most redirects followed in a row (reqwest's default).
const MAX_REDIRECTS: usize = 10;

/// Redirects are followed within the endpoint's origin only. reqwest alone would follow a
/// redirect to another origin with everything but `Authorization`/`Cookie`: the other
/// credential headers (`X-Api-Key`, `*token*`… — [`crate::ground::redact::is_sensitive_header`])
/// and the body (tool arguments) would reach it. Such a redirect stops here and comes back
/// as the response; [`follow_echoed_host`] makes it an error naming it, or follows it back
/// to the endpoint.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(too_many_redirects());
        }
        let from = attempt.previous().last().map(reqwest::Url::origin);
        if from.is_none_or(|from| from == attempt.url().origin()) {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

pub(super) fn describe_reqwest(e: &reqwest::Error) -> String {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        msg.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    // rustls's words for a first reply that is no TLS record: an http:// server behind an
    // https:// URL.
    if msg.contains("InvalidContentType") && e.url().is_some_and(|u| u.scheme() == "https") {
        msg.push_str(" — the server does not speak TLS here; did you mean http://?");
    }
    msg
}
