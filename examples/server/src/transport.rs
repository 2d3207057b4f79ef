//! The two transports: stdio (default) and Streamable HTTP at `/mcp` (`/mcp/` redirects
//! there, as Starlette's trailing-slash redirect does).

use std::{io::Write, net::SocketAddr};

use axum::serve::ListenerExt;
use axum::{
    Router,
    body::{Body, to_bytes},
    extract::Request,
    http::{Method, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use rmcp::{
    RoleServer, ServiceExt,
    service::{RunningService, ServerInitializeError},
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};

use serde_json::{Value, json};

use crate::{
    defects::{Defect, StdioWire, http_layers},
    server::{ExampleServer, Settings},
    wire,
};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// Same cap as rmcp's default `max_request_body_bytes`.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Serves newline-delimited JSON-RPC on stdin/stdout until stdin closes.
pub async fn serve_stdio(settings: Settings) -> Result<(), BoxError> {
    let modern_only = settings.changes.has(crate::changes::Change::DropLegacy);
    let (stdin, stdout) = rmcp::transport::stdio();
    let tasks = settings.interactive.then(|| {
        crate::tasks::TaskWire::new(
            settings
                .defects
                .has(&crate::defects::Defect::TaskStatusRegresses),
        )
    });
    let tool_execution = settings
        .changes
        .tool_execution()
        .or_else(|| settings.interactive.then(crate::tasks::execution));
    let max_revision = settings.max_revision;
    let server = ExampleServer::new(settings);
    let hooks = StdioWire::new(server.defects())
        .modern_only(modern_only)
        .tool_execution(tool_execution)
        .max_revision(max_revision);
    let (pipes, flushed) = wire::install(hooks, tasks, stdin, stdout);
    run_until_closed(server.serve(pipes).await).await?;
    flushed.await?;
    Ok(())
}

/// Waits for a started stdio service to end. Stdin closing before any lifecycle was
/// chosen (e.g. after only `server/discover`) is a normal end, not an error; so is a
/// refused `initialize` (`--change drop-legacy`): the refusal went out as the reply, and
/// rmcp ends the connection after it.
async fn run_until_closed(
    started: Result<RunningService<RoleServer, ExampleServer>, ServerInitializeError>,
) -> Result<(), BoxError> {
    match started {
        Ok(service) => {
            service.waiting().await?;
            Ok(())
        }
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(ServerInitializeError::InitializeFailed(error)) => {
            eprintln!("initialize refused: {error}");
            Ok(())
        }
        Err(error) => Err(error.into()),
    }
}

/// Access control of the HTTP transport (off by default).
#[derive(Clone, Debug, Default)]
pub struct HttpSecurity {
    /// `(keys, audience, rules)`: require JWT bearer tokens ([`crate::auth`]); no
    /// audience: the endpoint's own URL.
    pub jwt: Option<(crate::auth::Keys, Option<String>, crate::auth::Rules)>,
    /// At most this many requests per second; more get HTTP 429.
    pub rate_limit: Option<u32>,
}

/// Serves Streamable HTTP on `addr` (loopback) at `/mcp` until interrupted.
pub async fn serve_http(
    settings: Settings,
    addr: SocketAddr,
    json_response: bool,
    security: HttpSecurity,
) -> Result<(), BoxError> {
    let users: Vec<String> = settings
        .auth_tokens
        .iter()
        .map(|(t, _)| t.clone())
        .collect();
    let modern_only = settings.changes.has(crate::changes::Change::DropLegacy);
    let tool_execution = settings.changes.tool_execution();
    let max_revision = settings.max_revision;
    let server = ExampleServer::new(settings);
    let defects = server.defects().clone();
    // Loopback only, so only loopback browser origins are legitimate (others get 403);
    // rmcp's default allowed hosts (localhost, 127.0.0.1, ::1) reject foreign `Host`s.
    let mut config = StreamableHttpServerConfig::default()
        .with_json_response(json_response)
        .with_allowed_origins(LOOPBACK_ORIGINS.iter().copied());
    if defects.has(&Defect::AllowAnyOrigin) {
        config = config.disable_allowed_origins();
    }
    if defects.has(&Defect::AllowForeignHost) {
        config = config.disable_allowed_hosts();
    }
    let mut listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    if defects.has(&Defect::CloseAfterResponse) {
        // The server moves behind a front that closes each connection after one response.
        let backend = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let front = std::mem::replace(&mut listener, backend);
        tokio::spawn(crate::close_after::serve(front, listener.local_addr()?));
    }
    let service: StreamableHttpService<ExampleServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config);

    let mut app = Router::new()
        .route_service("/mcp", service)
        .route("/mcp/", axum::routing::any(redirect_to_endpoint))
        .layer(middleware::from_fn(jsonrpc_body_errors));
    if defects.has(&Defect::WrongId) {
        app = app.layer(middleware::from_fn(http_layers::wrong_id));
    }
    if let Some(parse_errors) = http_layers::ParseErrors::new(&defects) {
        app = app.layer(middleware::from_fn_with_state(
            parse_errors,
            http_layers::parse_error,
        ));
    }
    if defects.has(&Defect::OriginRefused400) {
        app = app.layer(middleware::from_fn(http_layers::origin_refused_400));
    }
    if defects.has(&Defect::GetStreamGarbage) {
        app = app.layer(middleware::from_fn(http_layers::get_stream_garbage));
    }
    if defects.has(&Defect::NoSsePriming) {
        app = app.layer(middleware::from_fn(http_layers::no_sse_priming));
    }
    if modern_only {
        app = app.layer(middleware::from_fn_with_state(
            defects.has(&Defect::ServeLegacyHttp),
            http_layers::modern_only,
        ));
    }
    if let Some(sessions) = http_layers::Sessions::new(&defects) {
        app = app.layer(middleware::from_fn_with_state(
            sessions,
            http_layers::sessions,
        ));
    }
    if defects.has(&Defect::LegacySseEndpoint) {
        app = app.layer(middleware::from_fn(http_layers::legacy_sse_endpoint));
    }
    if let Some(secret) = defects.leaked_secret() {
        app = app.layer(middleware::from_fn_with_state(
            secret.to_owned(),
            http_layers::leak_http500,
        ));
    }
    if defects.has(&Defect::DynamicClientRegistration) {
        app = app.route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(http_layers::authorization_server_metadata),
        );
    }
    if let Some(conformance) =
        http_layers::conformance::Conformance::new(&defects, tool_execution, max_revision)
    {
        app = app.layer(middleware::from_fn_with_state(
            conformance,
            http_layers::conformance::conformance,
        ));
    }
    if !users.is_empty() {
        app = app.layer(middleware::from_fn_with_state(
            users,
            http_layers::require_user_token,
        ));
    }
    // Added last so it runs first: unauthenticated requests never reach the MCP service.
    if let Some(token) = defects.required_token() {
        app = app.layer(middleware::from_fn_with_state(
            token.to_owned(),
            http_layers::require_token,
        ));
    }
    if let Some((keys, audience, rules)) = &security.jwt {
        let audience = audience
            .clone()
            .unwrap_or_else(|| format!("http://{local}/mcp"));
        let auth = crate::auth::JwtAuth::new(
            keys.clone(),
            &audience,
            format!("http://{local}"),
            rules.clone(),
            &defects,
        );
        app = app
            .route_service(crate::auth::METADATA_PATH, service_unavailable())
            .layer(middleware::from_fn_with_state(
                auth,
                crate::auth::require_jwt,
            ));
    }
    if let Some(limit) = security.rate_limit {
        app = app.layer(middleware::from_fn_with_state(
            RateLimit::new(limit),
            rate_limit,
        ));
    }
    // Added last so it runs first: the Host is checked before anything else.
    if defects.has(&Defect::Host421) {
        app = app.layer(middleware::from_fn(http_layers::host_421));
    }
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on http://{local}/mcp")?;
        stdout.flush()?;
    }
    tokio::select! {
        // TCP_NODELAY: SSE replies are several small writes; without it Nagle's algorithm
        // and delayed ACKs add ~40 ms to every request.
        served = axum::serve(listener.tap_io(|tcp| { let _ = tcp.set_nodelay(true); }), app) => served?,
        _ = shutdown_signal() => {}
    }
    Ok(())
}

/// `/mcp/` → `307` to `/mcp`, the absolute URL built from the request's `Host` as
/// Starlette's `redirect_slashes` builds it (so a foreign `Host` is echoed into the
/// `Location`); the query is kept.
async fn redirect_to_endpoint(request: Request) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost")
        .to_owned();
    let query = request
        .uri()
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    (
        StatusCode::TEMPORARY_REDIRECT,
        [(header::LOCATION, format!("http://{host}/mcp{query}"))],
    )
        .into_response()
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn jsonrpc_error(status: StatusCode, id: Option<Value>, code: i32, message: &str) -> Response {
    let mut body = json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
    if let Some(id) = id {
        body["id"] = id;
    }
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// rmcp answers a JSON POST body it cannot read with `415` and plain text. JSON-RPC wants
/// `-32700` for unparsable JSON and `-32600` for JSON that is no JSON-RPC message; the
/// transport spec wants `400` for both.
async fn jsonrpc_body_errors(request: Request, next: Next) -> Response {
    let is_json_post = request.method() == Method::POST
        && request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.trim_start().starts_with("application/json"));
    if !is_json_post {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_BODY_BYTES).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").into_response();
    };
    let Ok(message) = serde_json::from_slice::<Value>(&bytes) else {
        return jsonrpc_error(StatusCode::BAD_REQUEST, None, -32700, "Parse error");
    };
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let id = message
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned();
    jsonrpc_error(StatusCode::BAD_REQUEST, id, -32600, "Invalid Request")
}

/// The metadata route exists so the router knows it; the auth layer answers it.
fn service_unavailable() -> axum::routing::MethodRouter {
    axum::routing::get(|| async { StatusCode::NOT_FOUND })
}

/// A fixed one-second window shared by all clients: the simplest throttle to observe.
#[derive(Clone)]
struct RateLimit {
    limit: u32,
    window: std::sync::Arc<std::sync::Mutex<(std::time::Instant, u32)>>,
}

impl RateLimit {
    fn new(limit: u32) -> Self {
        RateLimit {
            limit,
            window: std::sync::Arc::new(std::sync::Mutex::new((std::time::Instant::now(), 0))),
        }
    }
}

/// `--rate-limit N`: more than N requests within a second get 429 with `Retry-After`.
async fn rate_limit(
    axum::extract::State(limit): axum::extract::State<RateLimit>,
    request: Request,
    next: Next,
) -> Response {
    let over = {
        let mut window = limit.window.lock().unwrap_or_else(|e| e.into_inner());
        if window.0.elapsed() >= std::time::Duration::from_secs(1) {
            *window = (std::time::Instant::now(), 0);
        }
        window.1 += 1;
        window.1 > limit.limit
    };
    if over {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "1")],
            "429 Too Many Requests\n",
        )
            .into_response();
    }
    next.run(request).await
}
