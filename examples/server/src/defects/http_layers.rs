//! HTTP defects: axum middleware (headers, status codes, session ids).

pub mod conformance;

use axum::{
    body::{Body, to_bytes},
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use axum::http::{HeaderMap, Method};
use serde_json::Value;

use super::handler::{CallIds, rewrite_line};
use super::{Defect, Defects, ParseErrorMode};

/// Same cap as rmcp's default `max_request_body_bytes`.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// What `session-id-with-space` appends to the session id rmcp minted.
const SESSION_SUFFIX: &str = " session";
const MINTED_SESSION_ID: &str = "mcpspec-minted-session";
const LATEST_LEGACY_REVISION: &str = "2025-11-25";
pub(super) const NOTIFICATION_REPLY: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a notification got a reply"}}"#;

fn set_header(headers: &mut HeaderMap, name: &'static str, value: Option<&str>) {
    if let Some(value) = value.and_then(|value| HeaderValue::from_str(value).ok()) {
        headers.insert(name, value);
    }
}

fn with_length(mut parts: axum::http::response::Parts, body: String) -> Response {
    parts.headers.remove(header::CONTENT_LENGTH);
    if let Ok(length) = HeaderValue::from_str(&body.len().to_string()) {
        parts.headers.insert(header::CONTENT_LENGTH, length);
    }
    Response::from_parts(parts, Body::from(body))
}

/// A modern-only server (`--change drop-legacy`) over HTTP: GET and DELETE get 405 and
/// no response carries an `Mcp-Session-Id` (rmcp would still answer GET with 400 and
/// mint a session for a refused `initialize`). `serve_legacy` (`serve-legacy-http`)
/// answers GET/DELETE with 200 and keeps the minted session id instead.
pub async fn modern_only(
    State(serve_legacy): State<bool>,
    request: Request,
    next: Next,
) -> Response {
    let get_or_delete = matches!(*request.method(), Method::GET | Method::DELETE);
    if get_or_delete {
        return if serve_legacy {
            StatusCode::OK.into_response()
        } else {
            (
                StatusCode::METHOD_NOT_ALLOWED,
                [(header::ALLOW, "POST")],
                "Method Not Allowed: this server speaks 2026-07-28 only\n",
            )
                .into_response()
        };
    }
    let mut response = next.run(request).await;
    if !serve_legacy {
        response.headers_mut().remove(SESSION_ID);
    }
    response
}

/// The legacy session defects: `session-optional` serves a request without
/// `Mcp-Session-Id` on the latest session; `terminated-session-400` answers a request
/// on a DELETEd session with 400 instead of 404.
#[derive(Clone, Debug)]
pub struct Sessions {
    optional: bool,
    terminated_400: bool,
    latest: std::sync::Arc<std::sync::Mutex<Option<HeaderValue>>>,
}

impl Sessions {
    pub fn new(defects: &Defects) -> Option<Self> {
        let optional = defects.has(&Defect::SessionOptional);
        let terminated_400 = defects.has(&Defect::TerminatedSession400);
        (optional || terminated_400).then(|| Self {
            optional,
            terminated_400,
            latest: Default::default(),
        })
    }
}

pub async fn sessions(State(layer): State<Sessions>, mut request: Request, next: Next) -> Response {
    let had_session = request.headers().contains_key(SESSION_ID);
    // After initialize (which carries no MCP-Protocol-Version header yet).
    let after_initialize = request.headers().contains_key(PROTOCOL_VERSION);
    if layer.optional
        && !had_session
        && after_initialize
        && request.method() == Method::POST
        && let Some(latest) = layer.latest.lock().expect("lock").clone()
    {
        request.headers_mut().insert(SESSION_ID, latest);
    }
    let mut response = next.run(request).await;
    if let Some(minted) = response.headers().get(SESSION_ID) {
        *layer.latest.lock().expect("lock") = Some(minted.clone());
    }
    if layer.terminated_400 && had_session && response.status() == StatusCode::NOT_FOUND {
        *response.status_mut() = StatusCode::BAD_REQUEST;
    }
    response
}

/// `legacy-sse-endpoint`: a GET asking for an event stream gets the deprecated HTTP+SSE
/// transport's opening event, `endpoint`, naming where to POST.
pub async fn legacy_sse_endpoint(request: Request, next: Next) -> Response {
    let wants_sse = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("text/event-stream"));
    if request.method() != Method::GET || !wants_sse {
        return next.run(request).await;
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/event-stream")],
        "event: endpoint\ndata: /mcp?sessionId=mcpspec-example-sse\n\n",
    )
        .into_response()
}

/// `dynamic-client-registration`: RFC 8414 metadata advertising an RFC 7591
/// registration endpoint (Dynamic Client Registration, deprecated in 2026-07-28).
pub async fn authorization_server_metadata() -> Response {
    let body = serde_json::json!({
        "issuer": "http://127.0.0.1",
        "authorization_endpoint": "http://127.0.0.1/authorize",
        "token_endpoint": "http://127.0.0.1/token",
        "registration_endpoint": "http://127.0.0.1/register",
        "response_types_supported": ["code"],
    });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `require-token`: 401 with `WWW-Authenticate: Bearer` unless the bearer token matches.
pub async fn require_token(State(token): State<String>, request: Request, next: Next) -> Response {
    let expected = format!("Bearer {token}");
    match request.headers().get(header::AUTHORIZATION) {
        Some(value) if value.as_bytes() == expected.as_bytes() => next.run(request).await,
        supplied => {
            let challenge = if supplied.is_some() {
                r#"Bearer error="invalid_token""#
            } else {
                "Bearer"
            };
            (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, challenge)],
                "401 Unauthorized: missing or invalid bearer token\n",
            )
                .into_response()
        }
    }
}

/// `--auth-tokens` (not a defect): every request needs one of the users' tokens.
pub async fn require_user_token(
    State(tokens): State<Vec<String>>,
    request: Request,
    next: Next,
) -> Response {
    let supplied = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match supplied {
        Some(token) if tokens.iter().any(|t| t == token) => next.run(request).await,
        _ => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, r#"Bearer error="invalid_token""#)],
            "401 Unauthorized: missing or unknown bearer token\n",
        )
            .into_response(),
    }
}

/// `wrong-id`: rewrites the id of responses to `tools/call` POSTs, in JSON and SSE bodies.
/// `host-421`: a `Host` other than a loopback name gets 421 Misdirected Request
/// before anything else runs (the Python SDK's answer to DNS rebinding).
pub async fn host_421(request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    if matches!(name, "localhost" | "127.0.0.1" | "::1") {
        return next.run(request).await;
    }
    (StatusCode::MISDIRECTED_REQUEST, "Invalid Host header").into_response()
}

pub async fn wrong_id(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let ids = CallIds::default();
    if let Ok(message) = serde_json::from_slice(&bytes) {
        ids.observe_request(&message);
    }
    let request = Request::from_parts(parts, Body::from(bytes));
    if ids.is_empty() {
        // Not a tools/call: pass through untouched (and unbuffered, e.g. GET streams).
        return next.run(request).await;
    }
    let response = next.run(request).await;
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let is_sse = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    let text = String::from_utf8_lossy(&bytes);
    let rewritten = if is_sse {
        text.split_inclusive('\n')
            .map(|line| {
                line.strip_prefix("data:")
                    .and_then(|data| rewrite_line(&ids, data.trim()))
                    .map(|data| format!("data: {data}\n"))
                    .unwrap_or_else(|| line.to_owned())
            })
            .collect()
    } else {
        rewrite_line(&ids, text.trim()).unwrap_or_else(|| text.into_owned())
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    if let Ok(length) = HeaderValue::from_str(&rewritten.len().to_string()) {
        parts.headers.insert(header::CONTENT_LENGTH, length);
    }
    Response::from_parts(parts, Body::from(rewritten))
}

/// `leak-secret`: a POST whose body holds `leak:http500` gets HTTP 500 with the
/// credential in a plain-text body (after padding: mcpspec cuts bodies at 300 chars).
pub async fn leak_http500(State(secret): State<String>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_BODY_BYTES).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    if String::from_utf8_lossy(&bytes).contains("leak:http500") {
        let body = format!("internal error: {}{secret} end", "x".repeat(265));
        return (StatusCode::INTERNAL_SERVER_ERROR, body).into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// `parse-error` over HTTP: a POST body that is not JSON gets a plain-text 400 (`silent`)
/// or a -32700 with an invented id (`invented-id`); `fatal` answers it as the clean server
/// does, then answers every later request with 503; `late` is the clean server.
#[derive(Clone, Debug)]
pub struct ParseErrors {
    mode: ParseErrorMode,
    stopped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl ParseErrors {
    pub fn new(defects: &Defects) -> Option<Self> {
        defects.parse_error().map(|mode| Self {
            mode,
            stopped: Default::default(),
        })
    }
}

pub async fn parse_error(
    State(layer): State<ParseErrors>,
    request: Request,
    next: Next,
) -> Response {
    use std::sync::atomic::Ordering;
    if layer.stopped.load(Ordering::SeqCst) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "503 Service Unavailable: stopped after a parse error\n",
        )
            .into_response();
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_BODY_BYTES).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    if serde_json::from_slice::<Value>(&bytes).is_err() {
        match ParseErrorMode::reply(Some(layer.mode)) {
            None => {
                return (
                    StatusCode::BAD_REQUEST,
                    [(header::CONTENT_TYPE, "text/plain")],
                    "Bad Request: invalid JSON\n",
                )
                    .into_response();
            }
            Some(reply) if layer.mode == ParseErrorMode::InventedId => {
                return (
                    StatusCode::BAD_REQUEST,
                    [(header::CONTENT_TYPE, "application/json")],
                    reply,
                )
                    .into_response();
            }
            Some(_) if layer.mode == ParseErrorMode::Fatal => {
                layer.stopped.store(true, Ordering::SeqCst)
            }
            Some(_) => {}
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// `no-sse-priming`: the SSE stream answering a POST loses its priming event (an event
/// whose `data` is empty). The stream is buffered to its end, which a POST's stream
/// reaches once its response is sent.
pub async fn no_sse_priming(request: Request, next: Next) -> Response {
    let post = request.method() == Method::POST;
    let response = next.run(request).await;
    let is_sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if !post || !is_sse {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let text = String::from_utf8_lossy(&bytes);
    let kept: String = text
        .split_inclusive("\n\n")
        .filter(|event| {
            event.lines().any(|line| {
                line.strip_prefix("data:")
                    .is_some_and(|data| !data.trim().is_empty())
            })
        })
        .collect();
    with_length(parts, kept)
}

/// `get-stream-garbage`: a GET for a session's event stream is answered with an event
/// stream whose one event is not JSON-RPC (then it ends).
pub async fn get_stream_garbage(request: Request, next: Next) -> Response {
    let wants_stream = request.method() == Method::GET
        && request
            .headers()
            .get(header::ACCEPT)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.contains("text/event-stream"));
    if !wants_stream {
        return next.run(request).await;
    }
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from("id: 1\ndata: this is not JSON-RPC\n\n"))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// `origin-refused-400`: a request whose `Origin` is not a loopback origin is refused with
/// 400 Bad Request before rmcp's own check (which answers 403).
pub async fn origin_refused_400(request: Request, next: Next) -> Response {
    let foreign = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|value| value.to_str().ok())
        .and_then(|origin| origin.split("://").nth(1))
        .is_some_and(|rest| {
            let host = rest.rsplit_once(':').map_or(rest, |(host, _)| host);
            !matches!(host, "localhost" | "127.0.0.1" | "[::1]")
        });
    if foreign {
        return (StatusCode::BAD_REQUEST, "foreign Origin").into_response();
    }
    next.run(request).await
}
