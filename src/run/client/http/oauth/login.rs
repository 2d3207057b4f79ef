//! `mcpspec auth login`: the `authorization_code` grant with PKCE (`S256`, RFC 7636) for a
//! person at a terminal. Discovery as for the run; then the authorization URL (to open in
//! a browser), a one-shot listener on a loopback redirect (`127.0.0.1`, a random port,
//! RFC 8252 §7.3) that checks the `state` it gets back, and the code exchanged with the
//! verifier and `resource` (RFC 8707). The tokens become a [`cache::Entry`].

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::cache;
use super::discover::{self, ClientAuth, DiscoveryStep, SignInError};
use super::jwt::{random_token, s256_challenge};

/// What `auth login` was asked for.
pub struct Login<'a> {
    /// The MCP endpoint.
    pub url: &'a str,
    pub client_id: &'a str,
    /// A confidential client's secret; `None`: a public client (the usual case).
    pub client_secret: Option<&'a str>,
    /// The scope to ask for (default: the challenge's, else the metadata's).
    pub scope: Option<&'a str>,
    /// Bound of each request of the flow.
    pub timeout: Duration,
    /// How long the person has to finish in the browser.
    pub wait: Duration,
}

/// Largest request head the loopback listener reads (a redirect is one short GET).
const MAX_REQUEST_BYTES: usize = 16 * 1024;

/// Sign in: `show` gets the authorization URL (to print, or to open); the tokens are the
/// entry returned (not yet cached).
pub async fn login(
    login: &Login<'_>,
    show: impl FnOnce(&str),
) -> Result<cache::Entry, SignInError> {
    let client = super::super::reqwest_client::shared_client()
        .map_err(|e| SignInError::new(DiscoveryStep::Challenge, login.url, e))?;
    let flow = discover::Flow {
        client: &client,
        timeout: login.timeout,
    };
    let endpoint = flow.token_endpoint(login.url).await?;
    let issuer_fail =
        |why: &str| SignInError::new(DiscoveryStep::ServerMetadata, &endpoint.issuer, why);
    let Some(authorize) = endpoint.authorization_endpoint.clone() else {
        return Err(issuer_fail(
            "its metadata names no `authorization_endpoint`: a person cannot sign in there",
        ));
    };
    if !endpoint.s256 {
        // MCP authorization: a client MUST refuse to go on without PKCE S256.
        return Err(issuer_fail(
            "its metadata does not list `S256` in `code_challenge_methods_supported`: no sign-in without PKCE",
        ));
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| {
            SignInError::new(
                DiscoveryStep::Authorization,
                "http://127.0.0.1/",
                format!("cannot listen: {e}"),
            )
        })?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let random = |n| {
        random_token(n)
            .map_err(|e| SignInError::new(DiscoveryStep::Authorization, &redirect_uri, e))
    };
    let state = random(24)?;
    let verifier = random(48)?;
    crate::ground::redact::remember(&[state.clone(), verifier.clone()]);
    let scope = login.scope.or(endpoint.scope.as_deref());
    let mut url = reqwest::Url::parse(&authorize).map_err(|e| issuer_fail(&e.to_string()))?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", login.client_id)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("code_challenge", &s256_challenge(&verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("resource", &endpoint.resource);
        if let Some(scope) = scope {
            query.append_pair("scope", scope);
        }
    }
    show(url.as_str());
    let code = tokio::time::timeout(login.wait, redirected(&listener, &redirect_uri, &state))
        .await
        .map_err(|_| {
            SignInError::new(
                DiscoveryStep::Authorization,
                &redirect_uri,
                format!("no redirect came back within {:?}", login.wait),
            )
        })??;
    crate::ground::redact::remember(std::slice::from_ref(&code));
    let auth = match login.client_secret {
        Some(secret) => ClientAuth::Secret {
            id: login.client_id,
            secret,
        },
        None => ClientAuth::Public {
            id: login.client_id,
        },
    };
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", redirect_uri.as_str()),
        ("code_verifier", verifier.as_str()),
    ];
    let granted = flow
        .grant(DiscoveryStep::CodeExchange, &endpoint, &form, None, &auth)
        .await?;
    Ok(cache::Entry {
        resource: endpoint.resource.clone(),
        issuer: endpoint.issuer.clone(),
        client_id: login.client_id.to_owned(),
        access_token: granted.access_token,
        refresh_token: granted.refresh_token,
        expires_at: granted.expires_in.map(|s| cache::now() + s),
        scope: granted.scope.or_else(|| scope.map(str::to_owned)),
    })
}

/// Wait for the browser's redirect to `/callback`: its `code`, once its `state` is the
/// one sent. Other requests (a favicon) get 404 and the wait goes on.
async fn redirected(
    listener: &tokio::net::TcpListener,
    redirect_uri: &str,
    state: &str,
) -> Result<String, SignInError> {
    let fail = |why: String| SignInError::new(DiscoveryStep::Authorization, redirect_uri, why);
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let mut head = Vec::new();
        let mut buf = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST_BYTES {
            match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => head.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        let head = String::from_utf8_lossy(&head);
        let target = head
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("GET "))
            .and_then(|l| l.split(' ').next())
            .unwrap_or("");
        let parsed = reqwest::Url::parse(&format!("http://127.0.0.1{target}")).ok();
        let Some(parsed) = parsed.filter(|u| u.path() == "/callback") else {
            let _ = reply(&mut stream, "404 Not Found", "Not found.").await;
            continue;
        };
        let param = |name: &str| {
            parsed
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if param("state").as_deref() != Some(state) {
            let _ = reply(
                &mut stream,
                "400 Bad Request",
                "Sign-in refused: the state does not match.",
            )
            .await;
            return Err(fail(
                "the redirect's `state` is not the one sent: refused (a forged or stale redirect)"
                    .into(),
            ));
        }
        if let Some(error) = param("error") {
            let _ = reply(
                &mut stream,
                "400 Bad Request",
                "Sign-in refused by the authorization server.",
            )
            .await;
            let description =
                param("error_description").map_or(String::new(), |d| format!(" ({d})"));
            return Err(fail(format!(
                "the authorization server refused: {}",
                crate::ground::redact::excerpt(&format!("{error}{description}"))
            )));
        }
        let Some(code) = param("code").filter(|c| !c.is_empty()) else {
            let _ = reply(&mut stream, "400 Bad Request", "Sign-in failed: no code.").await;
            return Err(fail("the redirect has no `code`".into()));
        };
        let _ = reply(
            &mut stream,
            "200 OK",
            "Signed in: you can close this tab and go back to mcpspec.",
        )
        .await;
        return Ok(code);
    }
}

async fn reply(
    stream: &mut tokio::net::TcpStream,
    status: &str,
    text: &str,
) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}
