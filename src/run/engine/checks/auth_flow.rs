//! The server's side of the OAuth flow (`security-auth-flow`): the metadata a client
//! discovers the authorization server through (RFC 9728, RFC 8414), and how the server
//! answers tokens mcpspec fetches itself through the target's `auth:` sign-in — one for
//! another resource, one with too narrow a scope — and a token sent in the query string.
//!
//! Every check but the query-string one needs the sign-in (`auth:`): it judges the flow
//! mcpspec signs in through, and gets its second tokens from the same client. Without it
//! the check is skipped with the reason.

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::outcome::CheckOutcome;
use crate::language::dsl::document::check::NARROW_SCOPE;
use crate::results::outcome::Finding;
use crate::run::client::http::oauth::{self, OAuth};
use crate::run::client::{Connection, TargetKind};
use crate::run::engine::security::{probe, probe_method};

/// The `resource` of the token for another resource: a URI no MCP server is (RFC 2606
/// `.invalid`), so no authorization server can mistake it for this one.
pub const OTHER_RESOURCE: &str = "https://other-resource.mcpspec.invalid/mcp";

/// The target's sign-in, or why the check does not apply.
fn sign_in(conn: &Connection) -> Result<Arc<OAuth>, CheckOutcome> {
    match &conn.target().kind {
        TargetKind::Http {
            auth: Some(auth), ..
        } => Ok(auth.clone()),
        TargetKind::Http { .. } => Err(CheckOutcome::Skip(
            "the target has no OAuth sign-in (`auth:`): the flow checks judge the flow mcpspec signs in through and get their tokens from it".into(),
        )),
        TargetKind::Stdio { .. } => Err(CheckOutcome::Skip("needs the HTTP transport".into())),
    }
}

/// The first of `urls` that answers 2xx with a JSON object, or what each answered.
async fn first_document(
    auth: &OAuth,
    urls: &[String],
) -> Result<(String, Map<String, Value>), String> {
    let mut tried = Vec::new();
    for url in urls {
        match auth.document(url).await {
            Ok((status, Some(Value::Object(doc)))) if (200..300).contains(&status) => {
                return Ok((url.clone(), doc));
            }
            Ok((status, _)) => tried.push(format!("{url} (HTTP {status}, no JSON object)")),
            Err(e) => tried.push(format!("{url} ({e})")),
        }
    }
    Err(tried.join(", "))
}

/// The protected-resource metadata at its well-known URI (RFC 9728 §3.1: path-inserted,
/// else at the root), as a client falls back to it.
async fn resource_metadata(auth: &OAuth) -> Result<(String, Map<String, Value>), String> {
    let resource = oauth::canonical_uri(auth.url())?;
    first_document(
        auth,
        &oauth::well_known(&resource, "oauth-protected-resource", true),
    )
    .await
}

/// RFC 9728 / MCP authorization: the metadata is served at its well-known URI, names
/// this server as its `resource` and lists at least one authorization server.
pub async fn resource_metadata_served(conn: &mut Connection) -> Result<CheckOutcome, String> {
    let auth = match sign_in(conn) {
        Ok(auth) => auth,
        Err(skip) => return Ok(skip),
    };
    let resource = oauth::canonical_uri(auth.url())?;
    let (url, doc) = match resource_metadata(&auth).await {
        Ok(found) => found,
        Err(tried) => {
            return Ok(CheckOutcome::fail(
                format!("no protected-resource metadata at its well-known URI: tried {tried}"),
                "a JSON object at /.well-known/oauth-protected-resource (path-inserted or at the root)",
                None,
            ));
        }
    };
    conn.note(format!("protected-resource metadata: {url}"));
    let mut findings = Vec::new();
    match doc.get("resource").and_then(Value::as_str) {
        Some(named) if oauth::same_uri(named, &resource) => {}
        named => findings.push(Finding::new(
            format!("the metadata at {url} does not name this server as its `resource`"),
            format!("resource: {resource}"),
            named.map_or("no `resource`".into(), |n| format!("resource: {n}")),
        )),
    }
    let servers: Vec<&str> = doc
        .get("authorization_servers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if servers.is_empty() {
        findings.push(Finding::new(
            format!("the metadata at {url} lists no `authorization_servers`"),
            "authorization_servers: [at least one issuer URL]",
            doc.get("authorization_servers")
                .map_or("absent".into(), Value::to_string),
        ));
    }
    for server in servers {
        if !is_http_url(server) {
            findings.push(Finding::new(
                format!("an authorization server of {url} is not an http(s) URL"),
                "an issuer URL",
                server.to_string(),
            ));
        }
    }
    Ok(verdict(findings))
}

/// Which check of the authorization server's metadata.
#[derive(Clone, Copy)]
pub enum ServerCheck {
    /// RFC 8414 §2/§3.3: `issuer` is the one named, `token_endpoint` and
    /// `response_types_supported` present.
    Valid,
    /// MCP authorization (2025-11-25): `S256` among `code_challenge_methods_supported`.
    PkceS256,
}

/// The authorization server's metadata, found as a client finds it (the first
/// authorization server of the resource metadata; RFC 8414, then OpenID discovery).
pub async fn authorization_server(
    conn: &mut Connection,
    which: ServerCheck,
) -> Result<CheckOutcome, String> {
    let auth = match sign_in(conn) {
        Ok(auth) => auth,
        Err(skip) => return Ok(skip),
    };
    // As a client finds it: the well-known URI, else the URL the challenge names.
    let mut found = resource_metadata(&auth).await.ok().map(|(_, doc)| doc);
    if found.is_none() {
        let (_, challenge) = send_without_token(conn).await?;
        if let Some(url) = challenge.and_then(|c| oauth::auth_param(&c, "resource_metadata")) {
            found = first_document(&auth, &[url]).await.ok().map(|(_, doc)| doc);
        }
    }
    let issuer = found.and_then(|doc| {
        doc.get("authorization_servers")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    let Some(issuer) = issuer else {
        return Ok(CheckOutcome::Skip(
            "the protected-resource metadata names no authorization server (see resource_metadata_served)".into(),
        ));
    };
    let (url, doc) = match first_document(&auth, &oauth::server_metadata_urls(&issuer)).await {
        Ok(found) => found,
        Err(tried) => {
            return Ok(CheckOutcome::fail(
                format!("the authorization server `{issuer}` serves no metadata: tried {tried}"),
                "RFC 8414 or OpenID Connect Discovery metadata",
                None,
            ));
        }
    };
    conn.note(format!("authorization server metadata: {url}"));
    let mut findings = Vec::new();
    match which {
        ServerCheck::Valid => {
            match doc.get("issuer").and_then(Value::as_str) {
                Some(named) if oauth::same_uri(named, &issuer) => {}
                named => findings.push(Finding::new(
                    format!(
                        "the `issuer` of {url} is not the authorization server the resource names"
                    ),
                    format!("issuer: {issuer}"),
                    named.map_or("no `issuer`".into(), |n| format!("issuer: {n}")),
                )),
            }
            match doc.get("token_endpoint").and_then(Value::as_str) {
                Some(endpoint) if is_http_url(endpoint) => {}
                endpoint => findings.push(Finding::new(
                    format!("{url} has no http(s) `token_endpoint`"),
                    "token_endpoint: an http(s) URL",
                    endpoint.map_or("absent".into(), str::to_owned),
                )),
            }
            let response_types = doc
                .get("response_types_supported")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            if !response_types {
                findings.push(Finding::new(
                    format!("{url} has no `response_types_supported` (REQUIRED, RFC 8414 §2)"),
                    "response_types_supported: a non-empty array",
                    doc.get("response_types_supported")
                        .map_or("absent".into(), Value::to_string),
                ));
            }
        }
        ServerCheck::PkceS256 => {
            let methods = doc.get("code_challenge_methods_supported");
            let s256 = methods
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|m| m.as_str() == Some("S256")));
            if !s256 {
                findings.push(Finding::new(
                    format!("{url} does not list `S256` among `code_challenge_methods_supported`: MCP clients refuse to proceed without it"),
                    "code_challenge_methods_supported containing \"S256\"",
                    methods.map_or("absent".into(), Value::to_string),
                ));
            }
        }
    }
    Ok(verdict(findings))
}

/// MCP authorization, RFC 8707: a token issued for another resource gets 401.
pub async fn other_resource_token_rejected(conn: &mut Connection) -> Result<CheckOutcome, String> {
    let auth = match sign_in(conn) {
        Ok(auth) => auth,
        Err(skip) => return Ok(skip),
    };
    let token = match auth.other_token(Some(OTHER_RESOURCE), None).await {
        Ok((token, _)) => token,
        Err(e) => {
            return Ok(CheckOutcome::Skip(format!(
                "the authorization server issued no token for another resource ({OTHER_RESOURCE}): {e} — set wrong_audience_token for security-auth instead"
            )));
        }
    };
    let (status, challenge) = send_with_token(conn, &token).await?;
    Ok(match status {
        401 if challenge.as_deref().is_some_and(is_bearer) => CheckOutcome::Pass,
        401 => CheckOutcome::fail(
            "a token for another resource got 401 without a Bearer challenge".into(),
            "HTTP 401 with WWW-Authenticate: Bearer …",
            Some("HTTP 401, no Bearer challenge".into()),
        ),
        status => CheckOutcome::fail(
            format!(
                "a token issued for another resource ({OTHER_RESOURCE}) got HTTP {status}: the server does not check the token's audience"
            ),
            "HTTP 401",
            Some(format!("HTTP {status}")),
        ),
    })
}

/// The longest a token may live for `expired_token_refused` to wait until it expires.
pub const LONGEST_WAIT_SECS: u64 = 10;

/// MCP authorization: "Invalid or expired tokens MUST receive a HTTP 401 response". A
/// token of the sign-in's client that lives at most [`LONGEST_WAIT_SECS`] is waited out and
/// sent; an authorization server whose tokens live longer makes the check skip (then
/// `security-auth`'s `expired_token_rejected` takes an expired token as a parameter).
pub async fn expired_token_refused(conn: &mut Connection) -> Result<CheckOutcome, String> {
    let auth = match sign_in(conn) {
        Ok(auth) => auth,
        Err(skip) => return Ok(skip),
    };
    let (token, expires_in) = match auth.other_token(None, None).await {
        Ok(granted) => granted,
        Err(e) => return Err(e.to_string()),
    };
    let life = match expires_in {
        Some(secs) if secs <= LONGEST_WAIT_SECS => secs,
        life => {
            return Ok(CheckOutcome::Skip(format!(
                "the authorization server's tokens live {}: too long to wait until one expires (at most {LONGEST_WAIT_SECS}s); security-auth's expired_token_rejected takes an expired token (--set expired_token=env:VAR)",
                life.map_or("without an expires_in".into(), |s| format!("{s}s"))
            )));
        }
    };
    conn.note(format!(
        "waiting {}s for a token that lives {life}s to expire",
        life + 1
    ));
    tokio::time::sleep(std::time::Duration::from_secs(life + 1)).await;
    let (status, challenge) = send_with_token(conn, &token).await?;
    Ok(match status {
        401 if challenge.as_deref().is_some_and(is_bearer) => CheckOutcome::Pass,
        status => CheckOutcome::fail(
            format!(
                "a token past its expiry got HTTP {status}{}",
                if status == 401 {
                    " without a Bearer challenge"
                } else {
                    ": the server does not check `exp`"
                }
            ),
            "HTTP 401 with WWW-Authenticate: Bearer …",
            Some(format!(
                "HTTP {status}, {}",
                challenge.map_or("no WWW-Authenticate".into(), |c| format!(
                    "WWW-Authenticate: {c}"
                ))
            )),
        ),
    })
}

/// 2025-11-25 step-up: a token without the scope a request needs gets 403 with
/// `error="insufficient_scope"` and the `scope` needed.
pub async fn insufficient_scope_step_up(
    conn: &mut Connection,
    params: &Map<String, Value>,
) -> Result<CheckOutcome, String> {
    let auth = match sign_in(conn) {
        Ok(auth) => auth,
        Err(skip) => return Ok(skip),
    };
    let narrow = params.get(NARROW_SCOPE).and_then(Value::as_str);
    let asked = narrow.map_or("no scope".to_string(), |s| format!("scope `{s}`"));
    let token = match auth.other_token(None, Some(narrow)).await {
        Ok((token, _)) => token,
        Err(e) => {
            return Ok(CheckOutcome::Skip(format!(
                "the authorization server issued no token with {asked}: {e}"
            )));
        }
    };
    let (status, challenge) = send_with_token(conn, &token).await?;
    if (200..300).contains(&status) {
        return Ok(CheckOutcome::Skip(format!(
            "a token with {asked} was accepted (HTTP {status}): this request needs no more scope than that (set {NARROW_SCOPE} to a scope that does not grant it)"
        )));
    }
    let error = challenge
        .as_deref()
        .and_then(|c| oauth::auth_param(c, "error"));
    let scope = challenge
        .as_deref()
        .and_then(|c| oauth::auth_param(c, "scope"));
    let actual = format!(
        "HTTP {status}, {}",
        challenge
            .as_deref()
            .map_or("no WWW-Authenticate".into(), |c| format!(
                "WWW-Authenticate: {c}"
            ))
    );
    let expected =
        "HTTP 403 with WWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"…\"";
    Ok(match (status, error.as_deref(), scope) {
        (403, Some("insufficient_scope"), Some(scope)) if !scope.trim().is_empty() => {
            conn.note(format!("scope needed: {scope}"));
            CheckOutcome::Pass
        }
        (403, Some("insufficient_scope"), _) => CheckOutcome::fail(
            "the insufficient_scope challenge does not name the `scope` needed: the client cannot step up".into(),
            expected,
            Some(actual),
        ),
        _ => CheckOutcome::fail(
            format!(
                "a valid token with {asked} got HTTP {status}, not 403 insufficient_scope: the client cannot tell it needs a wider scope (a 401 makes it fetch the same token again)"
            ),
            expected,
            Some(actual),
        ),
    })
}

/// MCP authorization (OAuth 2.1 §5): a token in the URI query string (`?access_token=`)
/// is not taken: the request gets what it gets without a token.
pub async fn query_token_rejected(conn: &mut Connection) -> Result<CheckOutcome, String> {
    let token = match &conn.target().kind {
        TargetKind::Http {
            auth: Some(auth), ..
        } => auth.token().await.map_err(|e| e.to_string())?,
        TargetKind::Http {
            bearer: Some(bearer),
            ..
        } => bearer.clone(),
        TargetKind::Http { .. } => {
            return Ok(CheckOutcome::Skip(
                "needs a valid token (`auth:` or --bearer-env) to put in the query string".into(),
            ));
        }
        TargetKind::Stdio { .. } => {
            return Ok(CheckOutcome::Skip("needs the HTTP transport".into()));
        }
    };
    let method = probe_method(conn);
    let id = conn.next_id();
    let timeout = conn.target().timeout;
    let out = conn.build(
        method,
        None,
        Some(id),
        &IndexMap::new(),
        &no_authorization(),
        timeout,
    );
    let status = match conn.status_with_query(&out, "access_token", &token).await {
        Some(result) => result.map_err(|e| e.to_string())?,
        None => return Ok(CheckOutcome::Skip("needs the HTTP transport".into())),
    };
    Ok(if matches!(status, 400 | 401 | 403) {
        CheckOutcome::Pass
    } else {
        CheckOutcome::fail(
            format!(
                "a request with the valid token only in the query string (`?access_token=`) got HTTP {status}: the server takes tokens from URLs, which end up in logs and Referer headers"
            ),
            "HTTP 401, as without a token",
            Some(format!("HTTP {status}")),
        )
    })
}

/// The harmless probe request sent with `Bearer token`: its status and challenge.
async fn send_with_token(
    conn: &mut Connection,
    token: &str,
) -> Result<(u16, Option<String>), String> {
    let mut headers = IndexMap::new();
    headers.insert("Authorization".to_string(), Some(format!("Bearer {token}")));
    send_probe(conn, &headers).await
}

/// The probe without a token: its status and challenge.
async fn send_without_token(conn: &mut Connection) -> Result<(u16, Option<String>), String> {
    send_probe(conn, &no_authorization()).await
}

async fn send_probe(
    conn: &mut Connection,
    headers: &IndexMap<String, Option<String>>,
) -> Result<(u16, Option<String>), String> {
    let ex = probe(conn, headers).await?;
    let http = ex.http.as_ref();
    Ok((
        http.map_or(0, |h| h.status),
        http.and_then(|h| h.header("www-authenticate"))
            .map(str::to_owned),
    ))
}

fn no_authorization() -> IndexMap<String, Option<String>> {
    let mut headers = IndexMap::new();
    headers.insert("Authorization".to_string(), None);
    headers
}

fn is_bearer(challenge: &str) -> bool {
    challenge
        .trim_start()
        .get(..6)
        .is_some_and(|s| s.eq_ignore_ascii_case("bearer"))
}

fn is_http_url(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

fn verdict(findings: Vec<Finding>) -> CheckOutcome {
    if findings.is_empty() {
        CheckOutcome::Pass
    } else {
        CheckOutcome::Fail(findings)
    }
}
