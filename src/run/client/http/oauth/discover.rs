//! The discovery a real MCP client does, and the token request (MCP authorization,
//! "Authorization Server Discovery"): the server's 401 `WWW-Authenticate` names its
//! protected-resource metadata (RFC 9728; else the well-known path), whose
//! `authorization_servers[0]` serves authorization-server metadata (RFC 8414, else OpenID
//! discovery), whose `token_endpoint` takes the `client_credentials` grant (RFC 6749
//! §4.4) with `resource` = the server's canonical URI (RFC 8707).
//!
//! Every request is bounded by the run's timeout, every body by [`MAX_DOCUMENT_BYTES`],
//! and redirects by the transport's policy; each failure names its step of the flow.

use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use super::ClientCredentials;
use crate::run::client::http::reqwest_client::describe_reqwest;

/// Largest metadata document or token response read: real ones are a few kilobytes.
pub const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// A step of the sign-in flow, as errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoveryStep {
    Challenge,
    ResourceMetadata,
    ServerMetadata,
    TokenRequest,
    /// The `refresh_token` grant (a stored refresh token, or the cached sign-in's).
    Refresh,
    /// `auth login`: the browser's redirect back to the loopback listener.
    Authorization,
    /// `auth login`: the `authorization_code` grant (the code and the PKCE verifier).
    CodeExchange,
}

impl std::fmt::Display for DiscoveryStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DiscoveryStep::Challenge => "the server's 401 challenge",
            DiscoveryStep::ResourceMetadata => "the protected resource metadata (RFC 9728)",
            DiscoveryStep::ServerMetadata => "the authorization server metadata (RFC 8414)",
            DiscoveryStep::TokenRequest => "the token request (client_credentials)",
            DiscoveryStep::Refresh => "the token request (refresh_token)",
            DiscoveryStep::Authorization => {
                "the authorization (the browser's redirect to the loopback)"
            }
            DiscoveryStep::CodeExchange => "the token request (authorization_code)",
        })
    }
}

/// Why the sign-in failed: the step, the URL it was at, and what went wrong.
#[derive(Debug, Clone)]
pub struct SignInError {
    pub step: DiscoveryStep,
    pub url: String,
    pub why: String,
}

impl SignInError {
    pub fn new(step: DiscoveryStep, url: &str, why: impl Into<String>) -> SignInError {
        SignInError {
            step,
            url: crate::ground::redact::safe_url(url),
            why: why.into(),
        }
    }
}

impl std::fmt::Display for SignInError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "OAuth sign-in failed at {} ({}): {}",
            self.step, self.url, self.why
        )
    }
}

/// The token endpoint found, and the scope the server asked for along the way.
#[derive(Debug, Clone)]
pub struct TokenEndpoint {
    pub url: String,
    /// The `resource` parameter: the MCP server's canonical URI.
    pub resource: String,
    /// From the challenge's `scope`, else the resource metadata's `scopes_supported`.
    pub scope: Option<String>,
    /// The authorization server, as the resource names it and its metadata confirms.
    pub issuer: String,
    /// Where a person signs in (`auth login`), if the metadata names it.
    pub authorization_endpoint: Option<String>,
    /// `S256` is among the metadata's `code_challenge_methods_supported`.
    pub s256: bool,
    /// Its `grant_types_supported` (RFC 8414 §2: absent means `authorization_code` and
    /// `implicit`).
    pub grant_types: Vec<String>,
}

/// A token response's fields that matter here.
pub struct Granted {
    pub access_token: String,
    pub expires_in: Option<u64>,
    /// A refresh token, when the authorization server issued one.
    pub refresh_token: Option<String>,
    /// The scope granted, when the response says.
    pub scope: Option<String>,
}

/// How the client proves who it is at the token endpoint.
pub enum ClientAuth<'a> {
    /// `client_secret_basic` (RFC 6749 §2.3.1).
    Secret { id: &'a str, secret: &'a str },
    /// A public client: its `client_id` in the form, no secret.
    Public { id: &'a str },
    /// `private_key_jwt` (RFC 7523 §2.2): a client assertion signed with its key.
    Jwt {
        id: &'a str,
        key: &'a super::jwt::SigningKey,
    },
}

/// The requests of the flow, on the run's HTTP client.
pub struct Flow<'a> {
    pub client: &'a reqwest::Client,
    pub timeout: Duration,
}

impl Flow<'_> {
    /// From the MCP endpoint to its authorization server's token endpoint.
    pub async fn token_endpoint(&self, mcp_url: &str) -> Result<TokenEndpoint, SignInError> {
        let resource = canonical_uri(mcp_url)
            .map_err(|e| SignInError::new(DiscoveryStep::Challenge, mcp_url, e))?;
        let challenge = self.challenge(mcp_url).await?;
        let challenge_scope = challenge.as_deref().and_then(|c| auth_param(c, "scope"));
        let metadata_urls = match challenge
            .as_deref()
            .and_then(|c| auth_param(c, "resource_metadata"))
        {
            Some(url) => vec![url],
            None => well_known(&resource, "oauth-protected-resource", true),
        };
        let (metadata_url, metadata) = self
            .first_document(DiscoveryStep::ResourceMetadata, &metadata_urls)
            .await?;
        let fail =
            |why: String| SignInError::new(DiscoveryStep::ResourceMetadata, &metadata_url, why);
        // RFC 9728 §3.3: the document must name the resource it was fetched for.
        match metadata.get("resource").and_then(Value::as_str) {
            Some(named) if same_uri(named, &resource) => {}
            Some(named) => {
                return Err(fail(format!(
                    "it names the resource `{named}`, not this server (`{resource}`)"
                )));
            }
            None => return Err(fail("it has no `resource`".into())),
        }
        let issuer = metadata
            .get("authorization_servers")
            .and_then(Value::as_array)
            .and_then(|servers| servers.first())
            .and_then(Value::as_str)
            .ok_or_else(|| fail("it names no `authorization_servers`".into()))?
            .to_owned();
        let metadata_scope = metadata
            .get("scopes_supported")
            .and_then(Value::as_array)
            .map(|s| {
                s.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .filter(|s| !s.is_empty());
        let server_urls = server_metadata_urls(&issuer);
        let (server_url, server) = self
            .first_document(DiscoveryStep::ServerMetadata, &server_urls)
            .await?;
        let fail = |why: String| SignInError::new(DiscoveryStep::ServerMetadata, &server_url, why);
        // RFC 8414 §3.3: the issuer is the one the resource named.
        match server.get("issuer").and_then(Value::as_str) {
            Some(named) if same_uri(named, &issuer) => {}
            named => {
                return Err(fail(format!(
                    "its `issuer` is {}, not `{issuer}` (the authorization server the resource names)",
                    named.map_or("missing".into(), |n| format!("`{n}`"))
                )));
            }
        }
        let url = server
            .get("token_endpoint")
            .and_then(Value::as_str)
            .ok_or_else(|| fail("it has no `token_endpoint`".into()))?;
        let url = endpoint_of(&issuer, "token_endpoint", url).map_err(fail)?;
        let authorization_endpoint =
            match server.get("authorization_endpoint").and_then(Value::as_str) {
                Some(at) => Some(endpoint_of(&issuer, "authorization_endpoint", at).map_err(fail)?),
                None => None,
            };
        let s256 = server
            .get("code_challenge_methods_supported")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|m| m.as_str() == Some("S256")));
        let grant_types = match server
            .get("grant_types_supported")
            .and_then(Value::as_array)
        {
            Some(grants) => grants
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            None => vec!["authorization_code".into(), "implicit".into()],
        };
        Ok(TokenEndpoint {
            url,
            resource,
            scope: challenge_scope.or(metadata_scope),
            issuer,
            authorization_endpoint,
            s256,
            grant_types,
        })
    }

    /// The `client_credentials` grant (client_secret_basic, RFC 6749 §2.3.1).
    pub async fn client_credentials(
        &self,
        endpoint: &TokenEndpoint,
        client: &ClientCredentials,
    ) -> Result<Granted, SignInError> {
        let auth = ClientAuth::Secret {
            id: &client.client_id,
            secret: &client.client_secret,
        };
        let scope = client.scope.as_deref().or(endpoint.scope.as_deref());
        self.grant(
            DiscoveryStep::TokenRequest,
            endpoint,
            &[("grant_type", "client_credentials")],
            scope,
            &auth,
        )
        .await
    }

    /// A token request of any grant: `form` (the grant's fields) with `resource` = the
    /// server (RFC 8707) and `scope` when given, the client authenticated as `auth` says.
    pub async fn grant(
        &self,
        step: DiscoveryStep,
        endpoint: &TokenEndpoint,
        form: &[(&str, &str)],
        scope: Option<&str>,
        auth: &ClientAuth<'_>,
    ) -> Result<Granted, SignInError> {
        let fail = |why: String| SignInError::new(step, &endpoint.url, why);
        let mut form = form.to_vec();
        form.push(("resource", endpoint.resource.as_str()));
        if let Some(scope) = scope {
            form.push(("scope", scope));
        }
        let assertion;
        let mut request = self.client.post(&endpoint.url);
        match auth {
            ClientAuth::Secret { id, secret } => {
                request = request.basic_auth(form_encode(id), Some(form_encode(secret)));
            }
            ClientAuth::Public { id } => form.push(("client_id", id)),
            ClientAuth::Jwt { id, key } => {
                assertion = key
                    .client_assertion(id, &endpoint.url)
                    .map_err(|e| fail(format!("cannot sign the client assertion: {e}")))?;
                crate::ground::redact::remember(std::slice::from_ref(&assertion));
                form.push(("client_id", id));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                ));
                form.push(("client_assertion", &assertion));
            }
        }
        let request = request
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(form_body(&form));
        let (status, body) = self.send(request).await.map_err(fail)?;
        let json: Option<Value> = serde_json::from_slice(&body).ok();
        if !(200..300).contains(&status) {
            let said = json
                .as_ref()
                .and_then(|j| {
                    let error = j.get("error")?.as_str()?;
                    let description = j.get("error_description").and_then(Value::as_str);
                    Some(match description {
                        Some(d) => format!("{error} ({d})"),
                        None => error.to_owned(),
                    })
                })
                .unwrap_or_else(|| "no OAuth error in the body".into());
            return Err(fail(format!(
                "the authorization server refused it: HTTP {status}, {}",
                crate::ground::redact::excerpt(&said)
            )));
        }
        let json = json.ok_or_else(|| fail("the response is not JSON".into()))?;
        let access_token = json
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| fail("the response has no `access_token`".into()))?;
        let text = |name: &str| {
            json.get(name)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        let granted = Granted {
            access_token: access_token.to_owned(),
            expires_in: json.get("expires_in").and_then(Value::as_u64),
            refresh_token: text("refresh_token"),
            scope: text("scope"),
        };
        let mut secrets = vec![granted.access_token.clone()];
        secrets.extend(granted.refresh_token.clone());
        secrets.extend(text("id_token"));
        crate::ground::redact::remember(&secrets);
        Ok(granted)
    }

    /// Whether a request without a token gets 401.
    pub async fn refuses_without_token(&self, url: &str) -> Result<bool, SignInError> {
        let request = self.unauthenticated(url);
        let response = tokio::time::timeout(self.timeout, request.send())
            .await
            .map_err(|_| SignInError::new(DiscoveryStep::Challenge, url, self.timed_out()))?
            .map_err(|e| SignInError::new(DiscoveryStep::Challenge, url, describe_reqwest(&e)))?;
        Ok(response.status() == reqwest::StatusCode::UNAUTHORIZED)
    }

    /// A harmless JSON-RPC request without a token.
    fn unauthenticated(&self, url: &str) -> reqwest::RequestBuilder {
        self.client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .body(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#)
    }

    /// A request without a token: the 401's `WWW-Authenticate`, if it came with one.
    async fn challenge(&self, url: &str) -> Result<Option<String>, SignInError> {
        let request = self.unauthenticated(url);
        let response = tokio::time::timeout(self.timeout, request.send())
            .await
            .map_err(|_| SignInError::new(DiscoveryStep::Challenge, url, self.timed_out()))?
            .map_err(|e| SignInError::new(DiscoveryStep::Challenge, url, describe_reqwest(&e)))?;
        if response.status() != reqwest::StatusCode::UNAUTHORIZED {
            return Ok(None);
        }
        Ok(response
            .headers()
            .get_all(reqwest::header::WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"))
            .map(str::to_owned))
    }

    /// The first of `urls` that answers 2xx with a JSON object.
    async fn first_document(
        &self,
        step: DiscoveryStep,
        urls: &[String],
    ) -> Result<(String, Value), SignInError> {
        let mut tried = Vec::new();
        for url in urls {
            let request = self
                .client
                .get(url)
                .header(reqwest::header::ACCEPT, "application/json");
            let (status, body) = self
                .send(request)
                .await
                .map_err(|why| SignInError::new(step, url, why))?;
            if (200..300).contains(&status) {
                return match serde_json::from_slice::<Value>(&body) {
                    Ok(doc) if doc.is_object() => Ok((url.clone(), doc)),
                    _ => Err(SignInError::new(
                        step,
                        url,
                        "the document is not a JSON object",
                    )),
                };
            }
            tried.push(format!(
                "{} (HTTP {status})",
                crate::ground::redact::safe_url(url)
            ));
        }
        let first = urls.first().map_or("", String::as_str);
        Err(SignInError::new(
            step,
            first,
            format!("no metadata document found; tried {}", tried.join(", ")),
        ))
    }

    /// GET `url` as JSON: `(status, body)`, the body `None` when it is not JSON (the
    /// security-auth-flow checks judge what a document says; the sign-in only uses it).
    pub async fn document(&self, url: &str) -> Result<(u16, Option<Value>), String> {
        let request = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json");
        let (status, body) = self.send(request).await?;
        Ok((status, serde_json::from_slice(&body).ok()))
    }

    /// Send and read the body, both within the timeout, the body within
    /// [`MAX_DOCUMENT_BYTES`].
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<(u16, Vec<u8>), String> {
        let exchange = async {
            let response = request.send().await.map_err(|e| describe_reqwest(&e))?;
            let status = response.status().as_u16();
            let mut body = Vec::new();
            let mut stream = response.bytes_stream();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| describe_reqwest(&e))?;
                if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                    return Err(format!(
                        "the response is larger than {MAX_DOCUMENT_BYTES} bytes: refused"
                    ));
                }
                body.extend_from_slice(&chunk);
            }
            Ok((status, body))
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| self.timed_out())?
    }

    fn timed_out(&self) -> String {
        format!("no answer within the timeout ({:?})", self.timeout)
    }
}

/// The server's canonical URI (RFC 8707 §2, MCP "Canonical Server URI"): the endpoint
/// URL, scheme and host lower case, without fragment.
pub fn canonical_uri(url: &str) -> Result<String, String> {
    let mut parsed = reqwest::Url::parse(url).map_err(|e| format!("invalid URL: {e}"))?;
    parsed.set_fragment(None);
    Ok(parsed.to_string())
}

/// An endpoint the authorization server's metadata names, checked against its issuer: an
/// http(s) URL, on the issuer's own origin unless both are https (then the TLS-checked
/// metadata vouches for it). A plain-HTTP issuer naming another origin, or an https issuer
/// naming a plain-HTTP endpoint, would send the client's credentials where nobody checked.
fn endpoint_of(issuer: &str, field: &str, url: &str) -> Result<String, String> {
    let parsed = reqwest::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| format!("its `{field}` `{url}` is not an http(s) URL"))?;
    let issuer = reqwest::Url::parse(issuer)
        .map_err(|e| format!("the issuer `{issuer}` is not a URL: {e}"))?;
    let same_origin = parsed.origin() == issuer.origin();
    let both_tls = parsed.scheme() == "https" && issuer.scheme() == "https";
    if !same_origin && !both_tls {
        return Err(format!(
            "its `{field}` `{}` is on another origin than the issuer `{}` (only an https issuer may name an endpoint elsewhere, and only an https one): refused, the credentials would go there",
            crate::ground::redact::safe_url(url),
            issuer.origin().ascii_serialization()
        ));
    }
    Ok(parsed.to_string())
}

/// Two URIs the same but for a trailing slash.
pub fn same_uri(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// The well-known URL of `name` for `base` (RFC 8414 §3.1, RFC 9728 §3.1): inserted
/// between the host and the path; with `root_too`, the root form after it (a resource
/// with a path may publish its metadata at the root).
pub fn well_known(base: &str, name: &str, root_too: bool) -> Vec<String> {
    let Ok(url) = reqwest::Url::parse(base) else {
        return Vec::new();
    };
    let path = url.path().trim_end_matches('/');
    let origin = url.origin().ascii_serialization();
    let mut urls = vec![format!("{origin}/.well-known/{name}{path}")];
    if root_too && !path.is_empty() {
        urls.push(format!("{origin}/.well-known/{name}"));
    }
    urls
}

/// Where the metadata of authorization server `issuer` may be, in the order an MCP client
/// tries them: RFC 8414, OpenID discovery path-inserted, OpenID discovery appended.
pub fn server_metadata_urls(issuer: &str) -> Vec<String> {
    [
        well_known(issuer, "oauth-authorization-server", false),
        well_known(issuer, "openid-configuration", false),
        openid_appended(issuer),
    ]
    .concat()
}

/// OpenID Connect Discovery's own form for an issuer with a path: appended to it.
fn openid_appended(issuer: &str) -> Vec<String> {
    match reqwest::Url::parse(issuer) {
        Ok(url) if url.path().trim_end_matches('/').is_empty() => Vec::new(),
        Ok(_) => vec![format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        )],
        Err(_) => Vec::new(),
    }
}

/// The value of `name` in a `WWW-Authenticate` challenge (RFC 9110 §11.2 auth-params,
/// quoted or not).
pub fn auth_param(challenge: &str, name: &str) -> Option<String> {
    let mut rest = challenge;
    while let Some(at) = find_ignore_case(rest, name) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + name.len()..].trim_start();
        rest = &rest[at + name.len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let Some(value) = after.strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        if let Some(quoted) = value.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.chars();
            while let Some(c) = chars.next() {
                match c {
                    '"' => return Some(out),
                    '\\' => out.extend(chars.next()),
                    c => out.push(c),
                }
            }
            return None;
        }
        let end = value.find([',', ' ', '\t']).unwrap_or(value.len());
        return Some(value[..end].to_owned());
    }
    None
}

fn find_ignore_case(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .to_ascii_lowercase()
        .find(&needle.to_ascii_lowercase())
}

/// `application/x-www-form-urlencoded` of one value (RFC 6749 Appendix B).
pub(super) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(byte as char);
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

fn form_body(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_auth_params_quoted_or_not() {
        let c = r#"Bearer resource_metadata="http://h/.well-known/x", scope="a b", error=invalid_token"#;
        assert_eq!(
            auth_param(c, "resource_metadata").unwrap(),
            "http://h/.well-known/x"
        );
        assert_eq!(auth_param(c, "scope").unwrap(), "a b");
        assert_eq!(auth_param(c, "error").unwrap(), "invalid_token");
        assert_eq!(auth_param(r#"Bearer xscope="no""#, "scope"), None);
        assert_eq!(auth_param(r#"Bearer error="unterminated"#, "error"), None);
    }

    #[test]
    fn well_known_urls_insert_before_the_path() {
        assert_eq!(
            well_known("http://h:1/mcp", "oauth-protected-resource", true),
            [
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            well_known("http://h:1/", "oauth-authorization-server", false),
            ["http://h:1/.well-known/oauth-authorization-server"]
        );
        assert_eq!(
            openid_appended("http://h/tenant"),
            ["http://h/tenant/.well-known/openid-configuration"]
        );
    }

    #[test]
    fn endpoints_elsewhere_than_an_http_issuer_are_refused() {
        let issuer = "http://127.0.0.1:4000";
        assert!(endpoint_of(issuer, "token_endpoint", "http://127.0.0.1:4000/token").is_ok());
        let elsewhere = endpoint_of(issuer, "token_endpoint", "http://127.0.0.1:4001/token");
        assert!(elsewhere.unwrap_err().contains("another origin"));
        // An https issuer vouches for an https endpoint on another host, never a plain one.
        let tls = "https://accounts.example.com";
        assert!(endpoint_of(tls, "token_endpoint", "https://oauth2.example.net/token").is_ok());
        assert!(endpoint_of(tls, "token_endpoint", "http://oauth2.example.net/token").is_err());
        assert!(endpoint_of(tls, "token_endpoint", "ftp://accounts.example.com/t").is_err());
    }

    #[test]
    fn form_encodes_reserved_characters() {
        assert_eq!(
            form_body(&[("scope", "a b"), ("r", "http://h/x?y=1&z")]),
            "scope=a+b&r=http%3A%2F%2Fh%2Fx%3Fy%3D1%26z"
        );
    }
}
