//! Seeded defects for mcpspec's fault tests.
//!
//! Each defect is one `--defect NAME[=VALUE]` flag. To add one:
//! 1. add a variant to [`Defect`],
//! 2. add its [`DefectInfo`] to [`Defect::CATALOG`] and its arm to [`Defect::name`] and
//!    [`Defect::from_name`],
//! 3. implement it where it bites: before the tool runs ([`before_tool_call`], both
//!    transports), on the stdio wire ([`StdioWire`], driven by `wire.rs`) or in the HTTP
//!    stack ([`http_layers`]).

use std::{
    collections::HashSet,
    fmt,
    str::FromStr,
    sync::{Arc, Mutex},
};

use serde_json::Value;

/// Which transport a defect applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Any,
    Stdio,
    Http,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scope::Any => "any transport",
            Scope::Stdio => "stdio only",
            Scope::Http => "HTTP only",
        })
    }
}

/// Static description of one defect flag.
#[derive(Debug)]
pub struct DefectInfo {
    pub name: &'static str,
    /// Placeholder of the required `=VALUE` part, if the defect takes one.
    pub value: Option<&'static str>,
    pub scope: Scope,
    pub description: &'static str,
}

/// One seeded defect, as parsed from `--defect`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Defect {
    CrashOnCall,
    HangOnCall,
    GarbageStdout,
    WrongId,
    OversizedReply,
    ExitAtStart,
    RequireToken(String),
}

impl Defect {
    pub const CATALOG: &'static [DefectInfo] = &[
        DefectInfo {
            name: "crash-on-call",
            value: None,
            scope: Scope::Any,
            description: "any tools/call exits the process (code 3) without replying",
        },
        DefectInfo {
            name: "hang-on-call",
            value: None,
            scope: Scope::Any,
            description: "tools/call never replies; other requests still work",
        },
        DefectInfo {
            name: "garbage-stdout",
            value: None,
            scope: Scope::Stdio,
            description: "write the non-JSON line `DEBUG: handling request` before every stdout line",
        },
        DefectInfo {
            name: "wrong-id",
            value: None,
            scope: Scope::Any,
            description: "responses to tools/call carry another id (number+1000 or \"wrong-<id>\")",
        },
        DefectInfo {
            name: "oversized-reply",
            value: None,
            scope: Scope::Any,
            description: "tools/call returns a 40 MiB text content",
        },
        DefectInfo {
            name: "exit-at-start",
            value: None,
            scope: Scope::Any,
            description: "print `fatal: config file missing` to stderr and exit 1 before serving",
        },
        DefectInfo {
            name: "require-token",
            value: Some("TOKEN"),
            scope: Scope::Http,
            description: "requests without `Authorization: Bearer TOKEN` get 401 + WWW-Authenticate",
        },
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Defect::CrashOnCall => "crash-on-call",
            Defect::HangOnCall => "hang-on-call",
            Defect::GarbageStdout => "garbage-stdout",
            Defect::WrongId => "wrong-id",
            Defect::OversizedReply => "oversized-reply",
            Defect::ExitAtStart => "exit-at-start",
            Defect::RequireToken(_) => "require-token",
        }
    }

    fn from_name(name: &str, value: Option<&str>) -> Option<Self> {
        Some(match name {
            "crash-on-call" => Defect::CrashOnCall,
            "hang-on-call" => Defect::HangOnCall,
            "garbage-stdout" => Defect::GarbageStdout,
            "wrong-id" => Defect::WrongId,
            "oversized-reply" => Defect::OversizedReply,
            "exit-at-start" => Defect::ExitAtStart,
            "require-token" => Defect::RequireToken(value?.to_owned()),
            _ => return None,
        })
    }

    pub fn info(&self) -> &'static DefectInfo {
        Self::CATALOG
            .iter()
            .find(|info| info.name == self.name())
            .expect("every defect has a catalog entry")
    }

    /// The catalog as help text, one defect a line.
    pub fn catalog_help() -> String {
        let mut text = String::from("Defects (--defect NAME[=VALUE], repeatable):\n");
        for info in Self::CATALOG {
            let flag = match info.value {
                Some(value) => format!("{}={value}", info.name),
                None => info.name.to_owned(),
            };
            text.push_str(&format!(
                "  {flag:<22} {} [{}]\n",
                info.description, info.scope
            ));
        }
        text
    }
}

impl FromStr for Defect {
    type Err = String;

    fn from_str(flag: &str) -> Result<Self, Self::Err> {
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (flag, None),
        };
        let Some(info) = Self::CATALOG.iter().find(|info| info.name == name) else {
            let names: Vec<&str> = Self::CATALOG.iter().map(|info| info.name).collect();
            return Err(format!(
                "unknown defect `{name}`; valid defects: {}",
                names.join(", ")
            ));
        };
        match (info.value, value) {
            (Some(placeholder), None | Some("")) => Err(format!(
                "defect `{name}` needs a value: {name}={placeholder}"
            )),
            (None, Some(_)) => Err(format!("defect `{name}` takes no value")),
            _ => Ok(Self::from_name(name, value).expect("catalog and from_name agree")),
        }
    }
}

/// The set of defects a process runs with.
#[derive(Clone, Debug, Default)]
pub struct Defects(Vec<Defect>);

impl Defects {
    pub fn new(defects: Vec<Defect>) -> Self {
        Self(defects)
    }

    pub fn has(&self, defect: &Defect) -> bool {
        self.0.contains(defect)
    }

    pub fn required_token(&self) -> Option<&str> {
        self.0.iter().find_map(|defect| match defect {
            Defect::RequireToken(token) => Some(token.as_str()),
            _ => None,
        })
    }

    /// Defects that do not apply to the chosen transport.
    pub fn misplaced(&self, http: bool) -> Vec<&Defect> {
        let wrong = if http { Scope::Stdio } else { Scope::Http };
        self.0
            .iter()
            .filter(|defect| defect.info().scope == wrong)
            .collect()
    }
}

// ---------------------------------------------------------------------------
// Handler-level defects (shared by both transports).
// ---------------------------------------------------------------------------

/// Size of the `oversized-reply` text content.
pub const OVERSIZED_REPLY_BYTES: usize = 40 * 1024 * 1024;

/// Runs the `tools/call` defects that act before the tool does. Returns the oversized
/// text if `oversized-reply` is set; never returns for `crash-on-call` / `hang-on-call`.
pub async fn before_tool_call(defects: &Defects) -> Option<String> {
    if defects.has(&Defect::CrashOnCall) {
        std::process::exit(3);
    }
    if defects.has(&Defect::HangOnCall) {
        std::future::pending::<()>().await;
    }
    defects
        .has(&Defect::OversizedReply)
        .then(|| "x".repeat(OVERSIZED_REPLY_BYTES))
}

// ---------------------------------------------------------------------------
// Wire-level defects: JSON-RPC line rewriting, shared by stdio and HTTP.
// ---------------------------------------------------------------------------

/// Tracks the ids of in-flight `tools/call` requests so their responses can be rewritten.
#[derive(Clone, Default)]
pub struct CallIds(Arc<Mutex<HashSet<String>>>);

impl CallIds {
    /// Records `message`'s id if it is a `tools/call` request.
    pub fn observe_request(&self, message: &Value) {
        if message.get("method").and_then(Value::as_str) == Some("tools/call")
            && let Some(id) = message.get("id")
        {
            self.0.lock().expect("lock").insert(id.to_string());
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.lock().expect("lock").is_empty()
    }

    /// If `message` answers a recorded `tools/call`, replaces its id with a wrong one.
    pub fn corrupt_response(&self, message: &mut Value) -> bool {
        let is_response = message.get("result").is_some() || message.get("error").is_some();
        let Some(id) = message.get_mut("id").filter(|_| is_response) else {
            return false;
        };
        if !self.0.lock().expect("lock").remove(&id.to_string()) {
            return false;
        }
        *id = wrong_id(id);
        true
    }
}

fn wrong_id(id: &Value) -> Value {
    match id {
        Value::Number(n) => match n.as_i64() {
            Some(n) => Value::from(n.wrapping_add(1000)),
            None => Value::String(format!("wrong-{n}")),
        },
        Value::String(s) => Value::String(format!("wrong-{s}")),
        other => Value::String(format!("wrong-{other}")),
    }
}

/// Rewrites one JSON-RPC line (without its newline) if it answers a recorded `tools/call`.
/// Lines that are not JSON are returned unchanged.
fn rewrite_line(ids: &CallIds, line: &str) -> Option<String> {
    let mut message: Value = serde_json::from_str(line).ok()?;
    ids.corrupt_response(&mut message)
        .then(|| message.to_string())
}

// ---------------------------------------------------------------------------
// stdio: hooks called by the line pump in `wire.rs`.
// ---------------------------------------------------------------------------

/// The non-JSON line `garbage-stdout` writes before each message.
pub const GARBAGE_LINE: &str = "DEBUG: handling request";

/// The stdio wire defects (`garbage-stdout`, `wrong-id`).
#[derive(Clone, Default)]
pub struct StdioWire {
    garbage: bool,
    wrong_id: bool,
    ids: CallIds,
}

impl StdioWire {
    pub fn new(defects: &Defects) -> Self {
        Self {
            garbage: defects.has(&Defect::GarbageStdout),
            wrong_id: defects.has(&Defect::WrongId),
            ids: CallIds::default(),
        }
    }

    /// Sees every parsed inbound message before rmcp does.
    pub fn on_inbound(&self, message: &Value) {
        if self.wrong_id {
            self.ids.observe_request(message);
        }
    }

    /// Maps one outbound line (no newline) to the text written in its place (no final
    /// newline; may span several lines).
    pub fn on_outbound(&self, line: &str) -> String {
        let line = match self.wrong_id.then(|| rewrite_line(&self.ids, line)) {
            Some(Some(rewritten)) => rewritten,
            _ => line.to_owned(),
        };
        if self.garbage {
            format!("{GARBAGE_LINE}\n{line}")
        } else {
            line
        }
    }
}

// ---------------------------------------------------------------------------
// HTTP: axum middleware.
// ---------------------------------------------------------------------------

pub mod http_layers {
    use axum::{
        body::{Body, to_bytes},
        extract::{Request, State},
        http::{HeaderValue, StatusCode, header},
        middleware::Next,
        response::{IntoResponse, Response},
    };

    use super::{CallIds, rewrite_line};

    /// `require-token`: 401 with `WWW-Authenticate: Bearer` unless the bearer token matches.
    pub async fn require_token(
        State(token): State<String>,
        request: Request,
        next: Next,
    ) -> Response {
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

    /// `wrong-id`: rewrites the id of responses to `tools/call` POSTs, in JSON and SSE bodies.
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
}
