//! Building era-correct requests: the modern `_meta`, the HTTP headers of each era
//! (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`, sessions), and raw messages for probes.

use std::time::Duration;

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

impl Connection {
    /// A request (or notification) for this era with no `_meta` or header overrides.
    pub fn build_plain(
        &mut self,
        method: &str,
        params: Option<Value>,
        id: Option<Value>,
    ) -> Outgoing {
        let timeout = self.target.timeout;
        self.build(
            method,
            params,
            id,
            &IndexMap::new(),
            &IndexMap::new(),
            timeout,
        )
    }

    /// Build a request (or notification when `id` is `None`) for this connection's era.
    pub fn build(
        &mut self,
        method: &str,
        params: Option<Value>,
        id: Option<Value>,
        meta_overrides: &IndexMap<String, Value>,
        header_overrides: &IndexMap<String, Option<String>>,
        timeout: Duration,
    ) -> Outgoing {
        if is_plain(params.as_ref(), meta_overrides) {
            return self.build_ref(
                method,
                params.as_ref(),
                id,
                meta_overrides,
                header_overrides,
                timeout,
            );
        }
        // Owned params go to the general path as they are (no copy).
        self.build_general(
            method,
            params,
            id,
            meta_overrides,
            header_overrides,
            timeout,
        )
    }

    /// [`Connection::build`] from borrowed params. The common case (object params with
    /// no `_meta` of their own, no `_meta` overrides) is written straight to text: no
    /// copy of the params, no intermediate message value.
    pub fn build_ref(
        &mut self,
        method: &str,
        params: Option<&Value>,
        id: Option<Value>,
        meta_overrides: &IndexMap<String, Value>,
        header_overrides: &IndexMap<String, Option<String>>,
        timeout: Duration,
    ) -> Outgoing {
        if is_plain(params, meta_overrides) {
            let params = params.and_then(Value::as_object);
            let body = self.plain_body(method, params, id.as_ref());
            // Headers travel over HTTP only; stdio skips making them.
            let headers = if self.is_http() {
                self.era_headers(method, None, params)
            } else {
                Vec::new()
            };
            return self.finish_text(body, id, header_overrides, headers, timeout);
        }
        self.build_general(
            method,
            params.cloned(),
            id,
            meta_overrides,
            header_overrides,
            timeout,
        )
    }

    /// The message text of [`Connection::build_ref`]'s common case, byte for byte what
    /// the general path serializes: `jsonrpc`, `id`, `method`, then `params` with the
    /// era's `_meta` appended (modern).
    pub(super) fn plain_body(
        &mut self,
        method: &str,
        params: Option<&Map<String, Value>>,
        id: Option<&Value>,
    ) -> String {
        let modern = self.negotiated.kind == EraKind::Modern;
        let mut body: Vec<u8> = Vec::with_capacity(256);
        body.extend_from_slice(b"{\"");
        body.extend_from_slice(jsonrpc::JSONRPC.as_bytes());
        body.extend_from_slice(b"\":\"");
        body.extend_from_slice(jsonrpc::VERSION.as_bytes());
        body.extend_from_slice(b"\",");
        if let Some(id) = id {
            body.extend_from_slice(b"\"id\":");
            let _ = serde_json::to_writer(&mut body, id);
            body.push(b',');
        }
        body.extend_from_slice(b"\"method\":");
        let _ = serde_json::to_writer(&mut body, method);
        if params.is_some() || modern {
            body.extend_from_slice(b",\"params\":{");
            let mut first = true;
            for (key, value) in params.into_iter().flatten() {
                if !first {
                    body.push(b',');
                }
                first = false;
                let _ = serde_json::to_writer(&mut body, key);
                body.push(b':');
                let _ = serde_json::to_writer(&mut body, value);
            }
            if modern {
                if !first {
                    body.push(b',');
                }
                body.extend_from_slice(b"\"_meta\":");
                body.extend_from_slice(self.modern_meta_text().as_bytes());
            }
            body.push(b'}');
        }
        body.push(b'}');
        // serde_json writes UTF-8 only.
        String::from_utf8(body).unwrap_or_default()
    }

    /// The modern `_meta` every request carries, serialized once per revision.
    pub(super) fn modern_meta_text(&mut self) -> &str {
        let revision = &self.negotiated.revision;
        if self.meta_text.as_ref().is_none_or(|(r, _)| r != revision) {
            let text = Value::Object(modern_meta(revision, self.client_capabilities())).to_string();
            self.meta_text = Some((revision.clone(), text));
        }
        self.meta_text.as_ref().map_or("", |(_, t)| t)
    }

    pub(super) fn build_general(
        &mut self,
        method: &str,
        params: Option<Value>,
        id: Option<Value>,
        meta_overrides: &IndexMap<String, Value>,
        header_overrides: &IndexMap<String, Option<String>>,
        timeout: Duration,
    ) -> Outgoing {
        let mut params = match params {
            Some(Value::Object(m)) => Some(m),
            Some(other) => {
                // Non-object params go out as given (a deliberate probe).
                return self.finish(
                    method,
                    json_message(method, Some(other), id.clone()),
                    id,
                    header_overrides,
                    None,
                    timeout,
                );
            }
            None => None,
        };
        let mut protocol_header = None;
        if self.negotiated.kind == EraKind::Modern || !meta_overrides.is_empty() {
            let p = params.get_or_insert_with(Map::new);
            let mut meta = match p.remove("_meta") {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            if self.negotiated.kind == EraKind::Modern {
                let mut base = modern_meta(&self.negotiated.revision, self.client_capabilities());
                base.extend(meta);
                meta = base;
            }
            for (key, value) in meta_overrides {
                let key = expand_meta_key(key);
                if value.is_null() {
                    meta.remove(&key);
                } else {
                    meta.insert(key, value.clone());
                }
            }
            protocol_header = meta
                .get(meta::PROTOCOL_VERSION)
                .and_then(Value::as_str)
                .map(str::to_string);
            if !meta.is_empty() {
                p.insert("_meta".into(), Value::Object(meta));
            } else if p.is_empty() {
                params = None;
            }
        }
        let headers = self.era_headers(method, protocol_header, params.as_ref());
        let body = json_message(method, params.map(Value::Object), id.clone());
        self.finish(method, body, id, header_overrides, Some(headers), timeout)
    }

    /// The HTTP headers a message of this era carries (its `params` name the tool, prompt
    /// or resource and fill `Mcp-Param-*`).
    pub(super) fn era_headers(
        &self,
        method: &str,
        protocol_header: Option<String>,
        params: Option<&Map<String, Value>>,
    ) -> Vec<(String, String)> {
        let name = params.and_then(|p| name_header(method, p));
        let modern_call = self.negotiated.kind == EraKind::Modern && method == methods::TOOLS_CALL;
        let param_headers = match params {
            Some(p) if modern_call => self.param_headers(p),
            _ => Vec::new(),
        };
        let mut headers: Vec<(String, String)> = Vec::new();
        match self.negotiated.kind {
            EraKind::Modern => {
                let version = protocol_header.unwrap_or_else(|| self.negotiated.revision.clone());
                headers.push((h::PROTOCOL_VERSION.into(), version));
                headers.push((h::METHOD.into(), method.to_string()));
                if let Some(n) = name {
                    headers.push((h::NAME.into(), encode_header_value(n)));
                }
                headers.extend(param_headers);
            }
            EraKind::Legacy => {
                if !self.negotiated.revision.is_empty() && method != methods::INITIALIZE {
                    headers.push((h::PROTOCOL_VERSION.into(), self.negotiated.revision.clone()));
                }
                if let Some(sid) = &self.session_id {
                    headers.push((h::SESSION_ID.into(), sid.clone()));
                }
            }
        }
        headers
    }

    pub(super) fn finish(
        &self,
        _method: &str,
        body: Value,
        id: Option<Value>,
        header_overrides: &IndexMap<String, Option<String>>,
        headers: Option<Vec<(String, String)>>,
        timeout: Duration,
    ) -> Outgoing {
        let body = serde_json::to_string(&body).unwrap_or_default();
        self.finish_text(
            body,
            id,
            header_overrides,
            headers.unwrap_or_default(),
            timeout,
        )
    }

    pub(super) fn finish_text(
        &self,
        body: String,
        id: Option<Value>,
        header_overrides: &IndexMap<String, Option<String>>,
        mut headers: Vec<(String, String)>,
        timeout: Duration,
    ) -> Outgoing {
        let mut drop_headers = Vec::new();
        apply_header_overrides(&mut headers, &mut drop_headers, header_overrides);
        Outgoing {
            body,
            expects_response: id.is_some(),
            id,
            headers,
            drop_headers,
            http_method: None,
            timeout,
            quiet_period: Duration::ZERO,
        }
    }

    /// `Mcp-Param-{X}` headers for arguments whose schema property has `x-mcp-header`.
    pub(super) fn param_headers(&self, params: &Map<String, Value>) -> Vec<(String, String)> {
        let (Some(tools), Some(name), Some(args)) = (
            &self.tools,
            params.get("name").and_then(Value::as_str),
            params.get("arguments").and_then(Value::as_object),
        ) else {
            return Vec::new();
        };
        let Some(tool) = tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        else {
            return Vec::new();
        };
        let mut headers = Vec::new();
        collect_param_headers(
            crate::protocol::fields::input_schema(tool),
            Some(&Value::Object(args.clone())),
            &mut headers,
        );
        headers
    }
}

/// Walk `properties` chains (only those: not items, combinators or refs) for
/// `x-mcp-header` annotations with a present, non-null value.
pub(super) fn collect_param_headers(
    schema: Option<&Value>,
    value: Option<&Value>,
    out: &mut Vec<(String, String)>,
) {
    let (Some(props), Some(Value::Object(values))) = (
        schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object),
        value,
    ) else {
        return;
    };
    for (key, prop) in props {
        let v = values.get(key);
        if let (Some(header), Some(v)) = (prop.get("x-mcp-header").and_then(Value::as_str), v) {
            let text = match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            };
            if let Some(text) = text {
                out.push((
                    format!("{}{header}", h::PARAM_PREFIX),
                    encode_header_value(&text),
                ));
            }
        }
        collect_param_headers(Some(prop), v, out);
    }
}

/// What `Mcp-Name` carries for a modern request: the tool's or prompt's name, the
/// resource's URI (other methods have none).
pub fn name_header<'a>(method: &str, params: &'a Map<String, Value>) -> Option<&'a str> {
    match method {
        methods::TOOLS_CALL | methods::PROMPTS_GET => params.get("name"),
        methods::RESOURCES_READ => params.get("uri"),
        _ => None,
    }
    .and_then(Value::as_str)
}

/// Header values that are not safe visible ASCII are sent as `=?base64?…?=`.
pub fn encode_header_value(value: &str) -> String {
    let safe = !value.is_empty()
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if safe {
        value.to_string()
    } else {
        format!("=?base64?{}?=", base64_encode(value.as_bytes()))
    }
}

pub(super) fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Whether [`Connection::build_ref`] writes the message straight to text: object params
/// (or none) without a `_meta` of their own, and no `_meta` overrides.
pub(super) fn is_plain(params: Option<&Value>, meta_overrides: &IndexMap<String, Value>) -> bool {
    meta_overrides.is_empty()
        && match params {
            None => true,
            Some(Value::Object(p)) => !p.contains_key("_meta"),
            Some(_) => false,
        }
}

/// Whether `out` is a `tools/list` request (a cheap look at its text).
pub(super) fn lists_tools(out: &Outgoing) -> bool {
    out.body.contains("\"tools/list\"")
}

/// `mcpspec` as the client's `Implementation`.
pub fn client_info() -> Value {
    json!({ "name": "mcpspec", "version": env!("CARGO_PKG_VERSION") })
}

/// The `_meta` of a modern request: revision, the client capabilities declared, client info.
pub(super) fn modern_meta(revision: &str, capabilities: &Value) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(meta::PROTOCOL_VERSION.into(), json!(revision));
    meta.insert(meta::CLIENT_CAPABILITIES.into(), capabilities.clone());
    meta.insert(meta::CLIENT_INFO.into(), client_info());
    meta
}

/// Short `_meta` names → full `io.modelcontextprotocol/` keys.
pub fn expand_meta_key(key: &str) -> String {
    match key {
        "protocolVersion" | "clientCapabilities" | "clientInfo" | "logLevel" => {
            format!("{}{key}", meta::PREFIX)
        }
        other => other.to_string(),
    }
}

use super::Connection;
use crate::protocol::era::EraKind;
use crate::protocol::{headers as h, jsonrpc, meta, methods};
use crate::run::client::Outgoing;
use jsonrpc::message as json_message;

pub(super) fn apply_header_overrides(
    headers: &mut Vec<(String, String)>,
    drop_headers: &mut Vec<String>,
    overrides: &IndexMap<String, Option<String>>,
) {
    for (name, value) in overrides {
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        match value {
            Some(v) => headers.push((name.clone(), v.clone())),
            None => drop_headers.push(name.to_ascii_lowercase()),
        }
    }
}

/// Build a raw message: the body exactly as given, no `_meta`, no MCP headers.
pub fn raw_outgoing(
    body: &Value,
    header_overrides: &IndexMap<String, Option<String>>,
    http_method: Option<String>,
    timeout: Duration,
) -> Outgoing {
    // Only a string or number id (or null) can be read back: an object, array or boolean
    // id makes the request invalid, and the answer rightly carries `id: null` (matched as
    // the reply to a message without a readable id).
    let readable = |id: Option<Value>| id.filter(|v| v.is_string() || v.is_number() || v.is_null());
    let (text, id, expects_response) = match body {
        Value::String(s) => {
            let parsed = serde_json::from_str::<Value>(s).ok();
            let id = parsed.as_ref().and_then(|v| v.get("id")).cloned();
            let is_notification = parsed
                .as_ref()
                .is_some_and(|v| v.get("method").is_some() && v.get("id").is_none());
            (s.clone(), readable(id), !is_notification)
        }
        other => {
            let id = other.get("id").cloned();
            let is_notification = other.get("method").is_some() && other.get("id").is_none();
            (other.to_string(), readable(id), !is_notification)
        }
    };
    let mut headers = Vec::new();
    let mut drop_headers = Vec::new();
    apply_header_overrides(&mut headers, &mut drop_headers, header_overrides);
    Outgoing {
        body: text,
        id,
        expects_response,
        headers,
        drop_headers,
        http_method,
        timeout,
        quiet_period: Duration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_encoded_when_unsafe() {
        assert_eq!(encode_header_value("get_weather"), "get_weather");
        assert_eq!(encode_header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
        assert_eq!(encode_header_value("caf\u{e9}"), "=?base64?Y2Fmw6k=?=");
        assert_eq!(base64_encode(b"ab"), "YWI=");
    }

    #[test]
    fn param_headers_follow_properties_only() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}}},
            "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Never"}}
        }});
        let args = json!({"region": "eu", "nested": {"id": 7}, "list": ["x"]});
        let mut out = Vec::new();
        collect_param_headers(Some(&schema), Some(&args), &mut out);
        assert_eq!(
            out,
            vec![
                ("Mcp-Param-Region".to_string(), "eu".to_string()),
                ("Mcp-Param-Id".to_string(), "7".to_string())
            ]
        );
    }
}
