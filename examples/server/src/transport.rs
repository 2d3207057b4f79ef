//! The two transports: stdio (default) and Streamable HTTP at `/mcp`.

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
    let server = ExampleServer::new(settings);
    let (stdin, stdout) = rmcp::transport::stdio();
    let hooks = StdioWire::new(server.defects()).modern_only(modern_only);
    let (pipes, flushed) = wire::install(hooks, stdin, stdout);
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

/// Serves Streamable HTTP on `addr` (loopback) at `/mcp` until interrupted.
pub async fn serve_http(
    settings: Settings,
    addr: SocketAddr,
    json_response: bool,
) -> Result<(), BoxError> {
    let modern_only = settings.changes.has(crate::changes::Change::DropLegacy);
    let server = ExampleServer::new(settings);
    let defects = server.defects().clone();
    // Loopback only, so only loopback browser origins are legitimate (others get 403).
    let mut config = StreamableHttpServerConfig::default()
        .with_json_response(json_response)
        .with_allowed_origins(LOOPBACK_ORIGINS.iter().copied());
    if defects.has(&Defect::AllowAnyOrigin) {
        config = config.disable_allowed_origins();
    }
    let service: StreamableHttpService<ExampleServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config);

    let mut app = Router::new()
        .route_service("/mcp", service)
        .layer(middleware::from_fn(jsonrpc_body_errors));
    if defects.has(&Defect::WrongId) {
        app = app.layer(middleware::from_fn(http_layers::wrong_id));
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
    if defects.has(&Defect::DynamicClientRegistration) {
        app = app.route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(http_layers::authorization_server_metadata),
        );
    }
    if let Some(conformance) = http_layers::Conformance::new(&defects) {
        app = app.layer(middleware::from_fn_with_state(
            conformance,
            http_layers::conformance,
        ));
    }
    // Added last so it runs first: unauthenticated requests never reach the MCP service.
    if let Some(token) = defects.required_token() {
        app = app.layer(middleware::from_fn_with_state(
            token.to_owned(),
            http_layers::require_token,
        ));
    }

    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
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
