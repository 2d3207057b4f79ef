//! The HTTP side of the conformance defects: message rewrites (as on stdio), header
//! leniency, status codes and session ids.

use axum::http::{HeaderMap, Method};
use axum::{
    body::{Body, to_bytes},
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use serde_json::Value;

use super::{
    LATEST_LEGACY_REVISION, MAX_BODY_BYTES, MINTED_SESSION_ID, NOTIFICATION_REPLY,
    PROTOCOL_VERSION, SESSION_ID, SESSION_SUFFIX, set_header, with_length,
};
use crate::defects::messages::{MessageDefects, PROTOCOL_VERSION_META, SPOKEN_REVISIONS, Seen};
use crate::defects::{Defect, Defects, McpHeader};

/// The HTTP side of the conformance defects: message rewrites (as on stdio), header
/// leniency, status codes and session ids.
#[derive(Clone, Debug)]
pub struct Conformance {
    messages: MessageDefects,
    accept_unsupported_version: bool,
    lenient_version: bool,
    lenient_method: bool,
    lenient_name: bool,
    http_200_codes: Vec<i64>,
    mint_session_id: bool,
    answer_notifications: bool,
    session_id_with_space: bool,
}

impl Conformance {
    /// The layer's state, or `None` when no defect needs it.
    pub fn new(
        defects: &Defects,
        tool_execution: Option<(&'static str, Value)>,
        max_revision: Option<&'static str>,
    ) -> Option<Self> {
        let layer = Self {
            messages: MessageDefects::new(defects)
                .with_tool_execution(tool_execution)
                .with_max_revision(max_revision),
            accept_unsupported_version: defects.has(&Defect::AcceptUnsupportedVersion),
            lenient_version: defects.lenient_header(McpHeader::Version),
            lenient_method: defects.lenient_header(McpHeader::Method),
            lenient_name: defects.lenient_header(McpHeader::Name),
            http_200_codes: defects.http_200_codes(),
            mint_session_id: defects.has(&Defect::MintSessionId),
            answer_notifications: defects.has(&Defect::AnswerNotifications),
            session_id_with_space: defects.has(&Defect::SessionIdWithSpace),
        };
        let active = layer.messages.requests_active()
            || layer.messages.responses_active()
            || layer.lenient_version
            || layer.lenient_method
            || layer.lenient_name
            || !layer.http_200_codes.is_empty()
            || layer.mint_session_id
            || layer.answer_notifications
            || layer.session_id_with_space;
        active.then_some(layer)
    }

    fn buffers_responses(&self, modern: bool) -> bool {
        let rewrites = if modern {
            self.messages.responses_active()
        } else {
            self.messages.legacy_responses_active()
        };
        rewrites || !self.http_200_codes.is_empty()
    }

    /// Makes the MCP headers agree with the (rewritten) body, per the lenient defects.
    fn fix_headers(&self, headers: &mut HeaderMap, message: &Value) {
        let meta_version = message
            .pointer("/params/_meta")
            .and_then(|meta| meta.get(PROTOCOL_VERSION_META))
            .and_then(Value::as_str);
        let header_version = headers
            .get(PROTOCOL_VERSION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let unspoken = header_version
            .as_deref()
            .is_some_and(|v| !SPOKEN_REVISIONS.contains(&v));
        let version = match meta_version {
            Some(version) if self.lenient_version => Some(version),
            Some(version) if self.accept_unsupported_version && unspoken => Some(version),
            None if self.lenient_version && unspoken => Some(LATEST_LEGACY_REVISION),
            _ => None,
        };
        set_header(headers, PROTOCOL_VERSION, version);
        if meta_version.is_none() {
            return;
        }
        let method = message.get("method").and_then(Value::as_str);
        if self.lenient_method {
            set_header(headers, "mcp-method", method);
        }
        if self.lenient_name {
            let name = match method {
                Some("tools/call" | "prompts/get") => message.pointer("/params/name"),
                Some("resources/read") => message.pointer("/params/uri"),
                _ => None,
            };
            set_header(headers, "mcp-name", name.and_then(Value::as_str));
        }
    }

    /// Rewrites the responses in a JSON or SSE body; true if any changed.
    fn rewrite_body(&self, seen: &Seen, text: &str, is_sse: bool) -> (String, bool) {
        let mut changed = false;
        let mut rewrite = |data: &str| -> Option<String> {
            let mut message: Value = serde_json::from_str(data).ok()?;
            let rewritten = self.messages.rewrite_response(Some(seen), &mut message);
            changed |= rewritten;
            rewritten.then(|| message.to_string())
        };
        let out = if is_sse {
            text.split_inclusive('\n')
                .map(|line| {
                    line.strip_prefix("data:")
                        .and_then(|data| rewrite(data.trim()))
                        .map(|data| format!("data: {data}\n"))
                        .unwrap_or_else(|| line.to_owned())
                })
                .collect()
        } else {
            rewrite(text.trim()).unwrap_or_else(|| text.to_owned())
        };
        (out, changed)
    }

    /// Whether the body holds a JSON-RPC error whose code gets HTTP 200.
    fn answers_200(&self, text: &str) -> bool {
        text.lines()
            .map(|line| line.strip_prefix("data:").unwrap_or(line).trim())
            .filter_map(|data| serde_json::from_str::<Value>(data).ok())
            .filter_map(|message| message.pointer("/error/code").and_then(Value::as_i64))
            .any(|code| self.http_200_codes.contains(&code))
    }
}

/// The conformance defects over HTTP (see [`Conformance`]).
pub async fn conformance(
    State(layer): State<Conformance>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    if layer.session_id_with_space
        && let Some(id) = parts
            .headers
            .get(SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_suffix(SESSION_SUFFIX))
            .map(str::to_owned)
    {
        set_header(&mut parts.headers, SESSION_ID, Some(&id));
    }
    let Ok(mut bytes) = to_bytes(body, MAX_BODY_BYTES).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let mut message = (parts.method == Method::POST)
        .then(|| serde_json::from_slice::<Value>(&bytes).ok())
        .flatten()
        .filter(Value::is_object);
    if let Some(message) = message.as_mut() {
        if layer.messages.rewrite_request(message) {
            bytes = message.to_string().into();
            parts.headers.remove(header::CONTENT_LENGTH);
        }
        layer.fix_headers(&mut parts.headers, message);
    }
    let seen = message.as_ref().and_then(Seen::of).map(|(_, seen)| seen);
    let modern = message
        .as_ref()
        .and_then(|m| m.pointer("/params/_meta"))
        .and_then(|meta| meta.get(PROTOCOL_VERSION_META))
        .is_some();
    let is_notification = message
        .as_ref()
        .is_some_and(|m| m.get("method").is_some() && m.get("id").is_none());

    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let (mut parts, body) = response.into_parts();
    if layer.mint_session_id && modern {
        set_header(&mut parts.headers, SESSION_ID, Some(MINTED_SESSION_ID));
    }
    if layer.session_id_with_space
        && let Some(id) = parts
            .headers
            .get(SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(|id| format!("{id}{SESSION_SUFFIX}"))
    {
        set_header(&mut parts.headers, SESSION_ID, Some(&id));
    }
    if layer.answer_notifications && is_notification && parts.status == StatusCode::ACCEPTED {
        parts.status = StatusCode::OK;
        parts.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return with_length(parts, NOTIFICATION_REPLY.to_owned());
    }
    let Some(seen) = seen.filter(|_| layer.buffers_responses(modern)) else {
        return Response::from_parts(parts, body);
    };
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if matches!(
        parts.status,
        StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND
    ) && layer.answers_200(&text)
    {
        parts.status = StatusCode::OK;
    }
    let is_sse = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    let (text, changed) = layer.rewrite_body(&seen, &text, is_sse);
    if changed && layer.messages.answers_removed(&seen.method) {
        // `answer-removed-methods`: served as if the method existed.
        parts.status = StatusCode::OK;
    }
    with_length(parts, text)
}
