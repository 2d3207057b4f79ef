//! A sound OAuth-protected resource for mcpspec's security pack: with `--auth-jwt-secret`
//! and `--auth-audience`, every HTTP request needs `Authorization: Bearer <JWT>` signed
//! HS256 with the secret, whose `aud` names the audience and whose `exp` is in the future.
//! With `--auth-jwks URL` instead, tokens are RS256/ES256 JWTs of a real authorization
//! server (tests/oauth/authserver), checked against its key set, its `--auth-issuer` and
//! the `--auth-scope` they must grant (403 `insufficient_scope` otherwise).
//! Anything else gets 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 6750,
//! RFC 9728, MCP authorization). The protected-resource metadata document is served at
//! `/.well-known/oauth-protected-resource/mcp`.
//!
//! The `auth-*` defects (`defects.rs`) weaken one rule each, so that each check of the
//! `security` pack has a server it fails on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::{
    extract::{Request, State},
    http::{StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::defects::{Defect, Defects};
use crate::jwks::Jwks;

/// Path of the protected-resource metadata document (RFC 9728 §3.1, for the `/mcp` resource).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// How token signatures are checked.
#[derive(Clone, Debug)]
pub enum Keys {
    /// `--auth-jwt-secret`: HS256 with a shared secret (tokens minted by `--mint-jwt`).
    Secret(Vec<u8>),
    /// `--auth-jwks`: the authorization server's public keys, and who it is.
    Jwks { keys: Arc<Jwks>, issuer: String },
}

/// What `--auth-*` asked of tokens, beyond their signature.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    /// The scope every token must grant (`--auth-scope`).
    pub scope: Option<String>,
    /// Each token is refused as expired after this many requests (`--auth-token-uses`):
    /// how the tests make a token expire in the middle of a run.
    pub token_uses: Option<u32>,
}

/// The resource server's configuration plus the weaknesses seeded by `--defect auth-*`.
#[derive(Clone, Debug)]
pub struct JwtAuth {
    keys: Keys,
    audience: String,
    rules: Rules,
    /// Requests served per token, for `rules.token_uses`.
    uses: Arc<Mutex<HashMap<String, u32>>>,
    /// `http://ADDR`: where the metadata document is served.
    pub origin: String,
    any_token: bool,
    ignore_audience: bool,
    ignore_expiry: bool,
    alg_none: bool,
    no_challenge: bool,
    no_resource_metadata: bool,
    metadata_off_well_known: bool,
    /// `auth-server-no-pkce` / `auth-server-incomplete`: the server names itself as
    /// authorization server and re-serves the real one's metadata, weakened.
    self_served_server: Option<ServerWeakness>,
    scope_401: bool,
    query_token: bool,
}

/// How the re-served authorization-server metadata is weakened.
#[derive(Clone, Copy, Debug)]
enum ServerWeakness {
    NoPkce,
    Incomplete,
}

impl JwtAuth {
    pub fn new(
        keys: Keys,
        audience: &str,
        origin: String,
        rules: Rules,
        defects: &Defects,
    ) -> JwtAuth {
        JwtAuth {
            keys,
            audience: audience.to_owned(),
            rules,
            uses: Arc::default(),
            origin,
            any_token: defects.has(&Defect::AuthAnyToken),
            ignore_audience: defects.has(&Defect::AuthIgnoreAudience),
            ignore_expiry: defects.has(&Defect::AuthIgnoreExpiry),
            alg_none: defects.has(&Defect::AuthAlgNone),
            no_challenge: defects.has(&Defect::AuthNoChallenge),
            no_resource_metadata: defects.has(&Defect::AuthNoResourceMetadata),
            metadata_off_well_known: defects.has(&Defect::AuthMetadataOffWellKnown),
            self_served_server: if defects.has(&Defect::AuthServerNoPkce) {
                Some(ServerWeakness::NoPkce)
            } else if defects.has(&Defect::AuthServerIncomplete) {
                Some(ServerWeakness::Incomplete)
            } else {
                None
            },
            scope_401: defects.has(&Defect::AuthScope401),
            query_token: defects.has(&Defect::AuthQueryToken),
        }
    }

    /// The RFC 9728 document: which resource this is and who issues its tokens.
    pub fn metadata(&self) -> Value {
        let issuer = match &self.keys {
            Keys::Secret(_) => format!("{}/", self.origin),
            Keys::Jwks { .. } if self.self_served_server.is_some() => self.origin.clone(),
            Keys::Jwks { issuer, .. } => issuer.clone(),
        };
        let mut doc = serde_json::json!({
            "resource": format!("{}/mcp", self.origin),
            "authorization_servers": [issuer],
            "bearer_methods_supported": ["header"],
        });
        if let Some(scope) = &self.rules.scope {
            doc["scopes_supported"] = serde_json::json!([scope]);
        }
        doc
    }

    /// Why the request's credentials are refused, if they are.
    fn refusal(&self, authorization: Option<&[u8]>) -> Option<&'static str> {
        let Some(value) = authorization else {
            return Some("missing");
        };
        if self.any_token {
            return None;
        }
        let Ok(value) = std::str::from_utf8(value) else {
            return Some("malformed");
        };
        let Some((scheme, token)) = value.trim().split_once(' ') else {
            return Some("malformed");
        };
        if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
            return Some("malformed");
        }
        let claims = match self.verify(token.trim()) {
            Ok(claims) => claims,
            Err(why) => return Some(why),
        };
        if !self.ignore_audience && !audience_matches(claims.get("aud"), &self.audience) {
            return Some("wrong audience");
        }
        if !self.ignore_expiry {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            match claims.get("exp").and_then(Value::as_u64) {
                Some(exp) if exp > now => {}
                _ => return Some("expired"),
            }
        }
        if let Keys::Jwks { issuer, .. } = &self.keys
            && claims.get("iss").and_then(Value::as_str) != Some(issuer.as_str())
        {
            return Some("wrong issuer");
        }
        if let Some(needed) = &self.rules.scope {
            let granted = claims.get("scope").and_then(Value::as_str).unwrap_or("");
            if !granted.split(' ').any(|s| s == needed) {
                return Some(INSUFFICIENT_SCOPE);
            }
        }
        if self.used_up(token.trim()) {
            return Some("expired");
        }
        None
    }

    /// Count a use of `token`: whether it is past `--auth-token-uses`.
    fn used_up(&self, token: &str) -> bool {
        let Some(limit) = self.rules.token_uses else {
            return false;
        };
        let mut uses = self.uses.lock().unwrap_or_else(|e| e.into_inner());
        let count = uses.entry(token.to_owned()).or_insert(0);
        *count += 1;
        *count > limit
    }

    /// Check the signature (HS256; `alg: none` only under the defect) and return the claims.
    fn verify(&self, token: &str) -> Result<Value, &'static str> {
        let parts: Vec<&str> = token.split('.').collect();
        let [head, payload, signature] = parts[..] else {
            return Err("not a JWT");
        };
        let header: Value = b64url_decode(head)
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or("not a JWT")?;
        let claims: Value = b64url_decode(payload)
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or("not a JWT")?;
        let alg = header.get("alg").and_then(Value::as_str);
        if let (Keys::Jwks { keys, .. }, Some(alg @ ("RS256" | "ES256"))) = (&self.keys, alg) {
            let kid = header.get("kid").and_then(Value::as_str);
            let signature = b64url_decode(signature).ok_or("bad signature")?;
            let signed = format!("{head}.{payload}");
            return if keys.verify(alg, kid, signed.as_bytes(), &signature) {
                Ok(claims)
            } else {
                Err("bad signature")
            };
        }
        match alg {
            Some("HS256") => {
                let Keys::Secret(secret) = &self.keys else {
                    return Err("unsupported alg");
                };
                let expected = hmac_sha256(secret, format!("{head}.{payload}").as_bytes());
                let given = b64url_decode(signature).ok_or("bad signature")?;
                // Constant-time comparison: no early exit on the first differing byte.
                let same = given.len() == expected.len()
                    && given
                        .iter()
                        .zip(expected.iter())
                        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                        == 0;
                if same {
                    Ok(claims)
                } else {
                    Err("bad signature")
                }
            }
            Some("none") if self.alg_none => Ok(claims),
            _ => Err("unsupported alg"),
        }
    }

    /// Where the protected-resource metadata is served: its well-known URI, or under
    /// `auth-metadata-off-well-known` only the path the challenge names.
    fn metadata_path(&self) -> &'static str {
        if self.metadata_off_well_known {
            OFF_WELL_KNOWN_METADATA_PATH
        } else {
            METADATA_PATH
        }
    }

    /// Under `auth-server-*`: the real authorization server's metadata (OpenID discovery
    /// of `--auth-issuer`), with this server as `issuer` and the weakness applied.
    async fn self_served_server_metadata(&self) -> Result<Value, String> {
        let Some(weakness) = self.self_served_server else {
            return Err("not an authorization server".into());
        };
        let mut doc = self.real_server_metadata().await?;
        doc["issuer"] = Value::String(self.origin.clone());
        // Its endpoints on this origin too (a client refuses to send credentials to
        // another origin than the issuer's): the token endpoint forwarded, the
        // authorization endpoint redirected to the real ones.
        doc["token_endpoint"] = Value::String(format!("{}{PROXIED_TOKEN_PATH}", self.origin));
        if doc.get("authorization_endpoint").is_some() {
            doc["authorization_endpoint"] =
                Value::String(format!("{}{PROXIED_AUTHORIZE_PATH}", self.origin));
        }
        match weakness {
            ServerWeakness::NoPkce => {
                doc["code_challenge_methods_supported"] = serde_json::json!(["plain"]);
            }
            ServerWeakness::Incomplete => {
                if let Some(doc) = doc.as_object_mut() {
                    doc.remove("response_types_supported");
                }
            }
        }
        Ok(doc)
    }

    /// The real authorization server's metadata (OpenID discovery of `--auth-issuer`).
    async fn real_server_metadata(&self) -> Result<Value, String> {
        let Keys::Jwks { issuer, .. } = &self.keys else {
            return Err("not an authorization server".into());
        };
        let url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|e| e.to_string())?;
        let response = client
            .get(&url)
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        let body = response
            .bytes()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        serde_json::from_slice(&body).map_err(|e| format!("GET {url}: not JSON: {e}"))
    }

    /// The real endpoint `name` of the authorization server's metadata.
    async fn real_endpoint(&self, name: &str) -> Result<String, String> {
        let doc = self.real_server_metadata().await?;
        doc.get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("the authorization server's metadata has no `{name}`"))
    }

    /// A token request to this origin, forwarded to the real token endpoint.
    async fn forward_token_request(&self, request: Request) -> Response {
        let forwarded = async {
            let endpoint = self.real_endpoint("token_endpoint").await?;
            let mut out = reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(10))
                .build()
                .map_err(|e| e.to_string())?
                .post(&endpoint);
            for name in ["content-type", "authorization", "accept"] {
                if let Some(value) = request.headers().get(name) {
                    out = out.header(name, value.as_bytes());
                }
            }
            let body = axum::body::to_bytes(request.into_body(), 1 << 20)
                .await
                .map_err(|e| e.to_string())?;
            let answer = out
                .body(body.to_vec())
                .send()
                .await
                .map_err(|e| format!("POST {endpoint}: {e}"))?;
            let status =
                StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
            let body = answer
                .bytes()
                .await
                .map_err(|e| format!("POST {endpoint}: {e}"))?;
            Ok::<_, String>(
                (
                    status,
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    body.to_vec(),
                )
                    .into_response(),
            )
        };
        forwarded
            .await
            .unwrap_or_else(|e| (StatusCode::BAD_GATEWAY, e).into_response())
    }

    /// An authorization request to this origin, redirected to the real endpoint.
    async fn redirect_authorization(&self, query: Option<&str>) -> Response {
        match self.real_endpoint("authorization_endpoint").await {
            Ok(endpoint) => {
                let target = match query {
                    Some(q) => format!("{endpoint}?{q}"),
                    None => endpoint,
                };
                (StatusCode::FOUND, [(axum::http::header::LOCATION, target)]).into_response()
            }
            Err(e) => (StatusCode::BAD_GATEWAY, e).into_response(),
        }
    }

    fn challenge(&self, why: &str) -> String {
        if why == INSUFFICIENT_SCOPE && !self.scope_401 {
            // RFC 6750 §3.1: 403 with the scope the request needs.
            let scope = self.rules.scope.as_deref().unwrap_or("");
            return format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\"");
        }
        let mut challenge = String::from("Bearer");
        if !self.no_resource_metadata {
            challenge.push_str(&format!(
                " resource_metadata=\"{}{}\"",
                self.origin,
                self.metadata_path()
            ));
        }
        if why != "missing" {
            let sep = if self.no_resource_metadata { " " } else { ", " };
            challenge.push_str(&format!("{sep}error=\"invalid_token\""));
        }
        challenge
    }
}

/// Where `auth-metadata-off-well-known` serves the protected-resource metadata.
const OFF_WELL_KNOWN_METADATA_PATH: &str = "/oauth/resource-metadata";

/// Where the token endpoint is forwarded from under `auth-server-*`.
const PROXIED_TOKEN_PATH: &str = "/oauth/token";
/// Where the authorization endpoint is redirected from under `auth-server-*`.
const PROXIED_AUTHORIZE_PATH: &str = "/oauth/authorize";

/// The authorization-server metadata path (RFC 8414 §3) served under `auth-server-*`.
const SERVER_METADATA_PATH: &str = "/.well-known/oauth-authorization-server";

/// The refusal answered 403 (the token is good, its scope too narrow), not 401.
const INSUFFICIENT_SCOPE: &str = "insufficient scope";

fn audience_matches(aud: Option<&Value>, audience: &str) -> bool {
    match aud {
        Some(Value::String(s)) => s == audience,
        Some(Value::Array(items)) => items.iter().any(|a| a.as_str() == Some(audience)),
        _ => false,
    }
}

/// The middleware: refuse with 401 (and the challenge) or pass the request on.
pub async fn require_jwt(State(auth): State<JwtAuth>, request: Request, next: Next) -> Response {
    if request.uri().path() == auth.metadata_path() {
        return axum::Json(auth.metadata()).into_response();
    }
    if auth.self_served_server.is_some() {
        match request.uri().path() {
            PROXIED_TOKEN_PATH => return auth.forward_token_request(request).await,
            PROXIED_AUTHORIZE_PATH => {
                return auth.redirect_authorization(request.uri().query()).await;
            }
            _ => {}
        }
    }
    if request.uri().path() == SERVER_METADATA_PATH && auth.self_served_server.is_some() {
        return match auth.self_served_server_metadata().await {
            Ok(doc) => axum::Json(doc).into_response(),
            Err(e) => (StatusCode::BAD_GATEWAY, e).into_response(),
        };
    }
    // `auth-query-token`: the query string's `access_token` stands in for the header.
    let from_query = auth
        .query_token
        .then(|| query_token(request.uri().query()))
        .flatten()
        .map(|t| format!("Bearer {t}"));
    let supplied = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes())
        .or(from_query.as_deref().map(str::as_bytes));
    let Some(why) = auth.refusal(supplied) else {
        return next.run(request).await;
    };
    let status = if why == INSUFFICIENT_SCOPE && !auth.scope_401 {
        StatusCode::FORBIDDEN
    } else {
        StatusCode::UNAUTHORIZED
    };
    let body = format!("{status}: {why} bearer token\n");
    if auth.no_challenge {
        return (status, body).into_response();
    }
    (
        status,
        [(header::WWW_AUTHENTICATE, auth.challenge(why))],
        body,
    )
        .into_response()
}

/// The `access_token` of a query string (RFC 6750 §2.3), as sent.
fn query_token(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("access_token="))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

/// An HS256 JWT with these claims (a JSON object), signed with `secret`.
pub fn mint(secret: &str, claims: &str) -> Result<String, String> {
    let claims: Value = serde_json::from_str(claims).map_err(|e| format!("invalid JSON: {e}"))?;
    if !claims.is_object() {
        return Err("the claims must be a JSON object".into());
    }
    let head = b64url_encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = b64url_encode(claims.to_string().as_bytes());
    let signature = hmac_sha256(secret.as_bytes(), format!("{head}.{payload}").as_bytes());
    Ok(format!("{head}.{payload}.{}", b64url_encode(&signature)))
}

/// HMAC-SHA256 (RFC 2104) over the `sha2` crate.
fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    const BLOCK: usize = 64;
    let mut k = if key.len() > BLOCK {
        Sha256::digest(key).to_vec()
    } else {
        key.to_vec()
    };
    k.resize(BLOCK, 0);
    let pad = |byte: u8| k.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .to_vec()
}

/// Unpadded base64url (RFC 4648 §5), as JWTs use it.
fn b64url_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

pub(crate) fn b64url_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn minted_tokens_verify() {
        let defects = Defects::default();
        let auth = JwtAuth::new(
            Keys::Secret(b"s3cret".to_vec()),
            "aud-a",
            "http://127.0.0.1:1".into(),
            Rules::default(),
            &defects,
        );
        let good = mint("s3cret", r#"{"aud":"aud-a","exp":99999999999}"#).unwrap();
        assert_eq!(
            auth.refusal(Some(format!("Bearer {good}").as_bytes())),
            None
        );
        let other = mint("s3cret", r#"{"aud":"aud-b","exp":99999999999}"#).unwrap();
        assert_eq!(
            auth.refusal(Some(format!("Bearer {other}").as_bytes())),
            Some("wrong audience")
        );
        let old = mint("s3cret", r#"{"aud":"aud-a","exp":1}"#).unwrap();
        assert_eq!(
            auth.refusal(Some(format!("Bearer {old}").as_bytes())),
            Some("expired")
        );
        let forged = mint("other", r#"{"aud":"aud-a","exp":99999999999}"#).unwrap();
        assert_eq!(
            auth.refusal(Some(format!("Bearer {forged}").as_bytes())),
            Some("bad signature")
        );
        assert_eq!(auth.refusal(Some(b"Bearer")), Some("malformed"));
        assert_eq!(auth.refusal(None), Some("missing"));
    }

    #[test]
    fn decodes_base64url() {
        assert_eq!(b64url_decode("eyJhIjoxfQ").unwrap(), br#"{"a":1}"#);
        assert!(b64url_decode("a+b").is_none());
    }
}
