//! The reqwest side of the HTTP transport: one pooled client per run (and a fresh one
//! for the single re-send), TLS through `ring`, redirects kept within the endpoint's
//! origin, and send failures told apart (unreachable, closed before the reply, other).

use super::TransportError;

/// One HTTP client for the whole run: building one loads the system's root
/// certificates (tens of milliseconds), and connections are pooled across scenarios.
pub(super) fn shared_client() -> Result<reqwest::Client, String> {
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
    install_tls_provider();
    reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(max_idle)
        .redirect(redirect_policy())
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// Where the transport's TLS provider comes from (kept under this name for its callers).
pub use crate::ground::tls::install_provider as install_tls_provider;

/// Send a request; when it fails before any response byte because the server had closed
/// the connection (a pooled keep-alive connection it dropped after a response, or on its
/// idle timeout, without `Connection: close`), send it once more on a fresh connection.
/// Returns the response and, when it was sent again, a transcript note saying so.
///
/// Any other failure is final, and so is a second one: a server that closes every fresh
/// connection without answering still fails the step. A failure to connect at all is
/// [`TransportError::Unreachable`]: the target was not reached.
pub(super) async fn send_once_more(
    client: &reqwest::Client,
    build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
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
/// and the body (tool arguments) would reach it. Such a redirect fails the request with
/// a message naming it.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        let from = attempt.previous().last().map(reqwest::Url::origin);
        let to = attempt.url().origin();
        if from.is_none_or(|from| from == to) {
            attempt.follow()
        } else {
            let error = format!(
                "cross-origin redirect to {} ({} {}) not followed: credential headers and the \
                 request body stay with the endpoint's origin",
                to.ascii_serialization(),
                attempt.status().as_u16(),
                attempt.status().canonical_reason().unwrap_or("redirect")
            );
            attempt.error(error)
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
