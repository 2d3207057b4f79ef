//! Engine support for the built-in `security` pack: parameters derived from the bearer
//! token (an unsigned `alg: none` copy of it), the preconditions that need the target or
//! a probe (`requires: { parameters, loopback, authRequired }`), and that probe, shared
//! with the checks in `engine::checks` (auth, exposure, rate limit).
//!
//! Everything derived from a secret is itself a secret: it is added to the run's redaction
//! list before anything is sent, so no report, transcript or message can show it.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::language::dsl::scenario::Requires;
use crate::protocol::era::EraKind;
use crate::protocol::methods;
use crate::run::client::{Connection, Target, TargetKind};

/// Derived parameter: the valid bearer token re-signed with `alg: none` (no signature).
pub const ALG_NONE_TOKEN: &str = "alg_none_token";

/// Add the parameters derived from the target's credentials (unless `--set` gave them),
/// registering them as secrets.
pub fn add_derived_params(
    target: &Target,
    params: &mut Map<String, Value>,
    secrets: &mut Vec<String>,
) {
    let TargetKind::Http {
        bearer: Some(bearer),
        ..
    } = &target.kind
    else {
        return;
    };
    if params.contains_key(ALG_NONE_TOKEN) {
        return;
    }
    if let Some(token) = alg_none_token(bearer) {
        secrets.push(token.clone());
        // The claims segment is the valid token's own: secret on its own too.
        if let Some(claims) = token.split('.').nth(1) {
            secrets.push(claims.to_string());
        }
        params.insert(ALG_NONE_TOKEN.into(), Value::String(token));
    }
}

/// The unsigned `alg: none` variant of a JWT (same header fields and claims, empty
/// signature), or `None` when `token` is not a JWT (three base64url segments, JSON header
/// with `alg`, JSON object claims).
pub fn alg_none_token(token: &str) -> Option<String> {
    let parts: Vec<&str> = token.split('.').collect();
    let [head, claims, _signature] = parts[..] else {
        return None;
    };
    let header: Value = serde_json::from_slice(&b64url_decode(head)?).ok()?;
    let mut header = header.as_object()?.clone();
    header.get("alg")?.as_str()?;
    let payload: Value = serde_json::from_slice(&b64url_decode(claims)?).ok()?;
    payload.as_object()?;
    header.insert("alg".into(), Value::String("none".into()));
    let header = serde_json::to_vec(&Value::Object(header)).ok()?;
    Some(format!("{}.{claims}.", b64url_encode(&header)))
}

/// Why a required parameter is missing, for the skip reason.
pub fn unset_reason(name: &str) -> String {
    if name == ALG_NONE_TOKEN {
        return format!(
            "parameter {name} is not set: the bearer token (--bearer-env) is missing or is not a JWT, so no alg:none token can be derived"
        );
    }
    format!("parameter {name} is not set (--set {name}=…)")
}

/// Preconditions known before connecting: required parameters and a loopback target.
pub fn static_unmet(
    requires: &Requires,
    target: &Target,
    params: &Map<String, Value>,
) -> Option<String> {
    if let Some(name) = requires.unset_parameter(params) {
        return Some(unset_reason(name));
    }
    if requires.loopback {
        match &target.kind {
            TargetKind::Http { url, .. } if !is_loopback_url(url) => {
                return Some(format!(
                    "the target {} is not on a loopback host: this check runs only against a local test server",
                    host_of(url).unwrap_or_else(|| url.clone())
                ));
            }
            TargetKind::Stdio { .. } => return Some("needs the HTTP transport".into()),
            _ => {}
        }
    }
    None
}

fn host_of(url: &str) -> Option<String> {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
}

/// Whether an HTTP URL points at this machine: `localhost` (and `*.localhost`, RFC 6761)
/// or a loopback IP address.
pub fn is_loopback_url(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    let Some(host) = parsed.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return ip.is_loopback();
    }
    let domain = host.trim_end_matches('.').to_ascii_lowercase();
    domain == "localhost" || domain.ends_with(".localhost")
}

/// Cached result of the unauthenticated probe on one connection.
#[derive(Default)]
pub struct AuthProbe(Option<Result<Option<u16>, String>>);

impl AuthProbe {
    /// `Ok(None)`: the endpoint refused the request without credentials (401/403);
    /// `Ok(Some(status))`: it answered with `status`.
    pub async fn answered_status(&mut self, conn: &mut Connection) -> Result<Option<u16>, String> {
        if self.0.is_none() {
            self.0 = Some(probe_without_credentials(conn).await);
        }
        self.0.clone().expect("just set")
    }

    /// Why an `authRequired` step does not apply (`Ok(None)`: it does).
    pub async fn unmet(&mut self, conn: &mut Connection) -> Result<Option<String>, String> {
        if !conn.is_http() {
            return Ok(Some("needs the HTTP transport".into()));
        }
        Ok(self.answered_status(conn).await?.map(|status| {
            format!(
                "endpoint is unauthenticated: a request without credentials got HTTP {status}, so token checks do not apply"
            )
        }))
    }
}

/// One request with the target's `Authorization` header removed.
async fn probe_without_credentials(conn: &mut Connection) -> Result<Option<u16>, String> {
    let mut headers = IndexMap::new();
    headers.insert("Authorization".to_string(), None);
    let ex = probe(conn, &headers).await?;
    let status = ex.http.as_ref().map(|h| h.status).unwrap_or(0);
    Ok((!matches!(status, 401 | 403)).then_some(status))
}

/// A harmless request valid in the connection's era (`server/discover`, legacy `ping`),
/// with `headers` changed: the probe of the auth, exposure and rate-limit checks.
pub(super) async fn probe(
    conn: &mut Connection,
    headers: &IndexMap<String, Option<String>>,
) -> Result<crate::results::exchange::Exchange, String> {
    let method = probe_method(conn);
    let id = conn.next_id();
    let timeout = conn.target().timeout;
    let out = conn.build(method, None, Some(id), &IndexMap::new(), headers, timeout);
    conn.send(&out).await.map_err(|e| e.to_string())
}

/// The probe's method: harmless and valid in the connection's era (`server/discover`,
/// legacy `ping`).
pub(super) fn probe_method(conn: &Connection) -> &'static str {
    match conn.negotiated.kind {
        EraKind::Modern => methods::SERVER_DISCOVER,
        EraKind::Legacy => methods::PING,
    }
}

/// Unpadded base64url (RFC 4648 §5), as JWTs use it.
fn b64url_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn b64url_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .ok()
}

/// Words of a failed connection in a tool's answer (an OS error, a runtime's error code,
/// a resolver's failure): under `--sandbox`, the tool tried to reach beyond the machine.
const CONNECTION_FAILED: &[&str] = &[
    "network is unreachable",
    "enetunreach",
    "connection refused",
    "econnrefused",
    "no route to host",
    "ehostunreach",
    "temporary failure in name resolution",
    "name or service not known",
    "enotfound",
    "eai_again",
    "failed to resolve",
    "dns error",
];

/// `--sandbox`: the tools whose answers in `steps` (a result's text or a JSON-RPC error)
/// show a failed connection, each with the first such answer (cut), added to `found`
/// unless already there.
pub fn reached_out(
    steps: &[crate::results::report::result::StepResult],
    found: &mut IndexMap<String, String>,
) {
    use crate::results::exchange::Direction;
    for step in steps {
        let mut calls: IndexMap<String, String> = IndexMap::new();
        for entry in &step.transcript {
            let Ok(msg) = serde_json::from_str::<Value>(&entry.body) else {
                continue;
            };
            let id = msg.get("id").map(Value::to_string).unwrap_or_default();
            match entry.direction {
                Direction::Sent
                    if msg.get("method").and_then(Value::as_str) == Some(methods::TOOLS_CALL) =>
                {
                    if let Some(name) = msg.pointer("/params/name").and_then(Value::as_str) {
                        calls.insert(id, name.to_string());
                    }
                }
                Direction::Received => {
                    let Some(name) = calls.get(&id) else {
                        continue;
                    };
                    let said = answer_text(&msg);
                    let lower = said.to_lowercase();
                    if found.contains_key(name)
                        || !CONNECTION_FAILED.iter().any(|w| lower.contains(w))
                    {
                        continue;
                    }
                    let said = said.split_whitespace().collect::<Vec<_>>().join(" ");
                    found.insert(name.clone(), crate::ground::redact::shorten(&said, 160));
                }
                _ => {}
            }
        }
    }
}

/// The text of a tool's answer: its text content, or its JSON-RPC error's message.
fn answer_text(msg: &Value) -> String {
    if let Some(error) = msg.get("error") {
        return error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
    }
    msg.pointer("/result/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips() {
        for s in ["", "a", "ab", "abc", "abcd", "{\"alg\":\"none\"}"] {
            assert_eq!(
                b64url_decode(&b64url_encode(s.as_bytes())).unwrap(),
                s.as_bytes()
            );
        }
        assert_eq!(b64url_encode(b"\xfb\xff"), "-_8");
    }

    #[test]
    fn derives_alg_none_from_a_jwt_only() {
        let head = b64url_encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let claims = b64url_encode(br#"{"sub":"a","aud":"b"}"#);
        let token = format!("{head}.{claims}.c2ln");
        let none = alg_none_token(&token).unwrap();
        let parts: Vec<&str> = none.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(
            b64url_decode(parts[0]).unwrap(),
            br#"{"alg":"none","typ":"JWT"}"#
        );
        assert_eq!(parts[1], claims);
        assert_eq!(parts[2], "");
        assert!(alg_none_token("opaque-token").is_none());
        assert!(alg_none_token("a.b.c").is_none());
    }

    #[test]
    fn loopback_urls() {
        for url in [
            "http://localhost:3000/mcp",
            "http://127.0.0.1/mcp",
            "http://127.8.0.1/",
            "http://[::1]:80/mcp",
            "http://api.localhost/mcp",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "https://example.com/mcp",
            "http://10.0.0.1/",
            "http://localhost.example/",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }
}
