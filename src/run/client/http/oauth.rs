//! OAuth 2.1 sign-in for the run (MCP authorization): the access token every request of
//! an HTTP target carries, fetched after discovering the token endpoint as any client does
//! ([`discover`]) — with the `client_credentials` grant (a secret, or a key:
//! [`jwt`]), a stored refresh token, or the sign-in `mcpspec auth login` cached
//! ([`login`], [`cache`]) — and fetched again once when it expires in the middle of the
//! run (with the refresh token the server issued, when it issued one).
//!
//! One [`OAuth`] is shared by every connection of the run: a token renewed by one is the
//! token of all, and a refused token request ends the sign-in for all ([`OAuth::failure`]),
//! so a run does not go on sending requests that can only get 401.

pub mod cache;
mod discover;
pub mod jwt;
pub mod login;

use std::time::{Duration, Instant};

use discover::ClientAuth;
pub use discover::{
    DiscoveryStep, SignInError, TokenEndpoint, auth_param, canonical_uri, same_uri,
    server_metadata_urls, well_known,
};

/// How the run gets its tokens.
#[derive(Debug)]
pub enum TokenSource {
    /// `client_credentials` with a client secret (CI).
    ClientCredentials(ClientCredentials),
    /// `client_credentials` with `private_key_jwt` client authentication (CI, no shared
    /// secret).
    ClientAssertion {
        client_id: String,
        key: jwt::SigningKey,
        scope: Option<String>,
    },
    /// A stored refresh token (CI against servers whose tokens belong to a user).
    RefreshToken(RefreshToken),
    /// The sign-in `mcpspec auth login` cached: its access token while it lasts, then its
    /// refresh token; each new token written back to the cache.
    Cached(cache::Entry),
}

/// A refresh token stored for CI, and the client it was issued to.
#[derive(Clone)]
pub struct RefreshToken {
    pub client_id: String,
    /// A confidential client's secret; `None`: a public client.
    pub client_secret: Option<String>,
    pub refresh_token: String,
    pub scope: Option<String>,
}

impl std::fmt::Debug for RefreshToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefreshToken")
            .field("client_id", &self.client_id)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// A confidential client registered with the authorization server.
#[derive(Clone)]
pub struct ClientCredentials {
    pub client_id: String,
    /// Read from an environment variable or a file; never printed (registered as a secret).
    pub client_secret: String,
    /// The scope asked for; `None`: the challenge's, else the metadata's `scopes_supported`.
    pub scope: Option<String>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// An access token and when to stop using it.
#[derive(Clone)]
struct Token {
    value: String,
    /// `expires_in` from the token response, less a margin; `None`: until refused.
    renew_at: Option<Instant>,
}

/// Where tokens come from once discovered, and the token of the moment.
#[derive(Default)]
struct State {
    endpoint: Option<discover::TokenEndpoint>,
    token: Option<Token>,
    failure: Option<SignInError>,
    /// The latest refresh token the authorization server issued (it may rotate them).
    refresh_token: Option<String>,
    /// The cached sign-in's own access token was taken (later ones are fetched).
    cached_used: bool,
}

/// The sign-in of one HTTP target (see the module doc).
pub struct OAuth {
    /// The MCP endpoint: where the challenge comes from, and the `resource` (RFC 8707).
    url: String,
    grant: TokenSource,
    /// Bound of each request of the flow (`--timeout`).
    timeout: Duration,
    state: tokio::sync::Mutex<State>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("url", &self.url)
            .field("grant", &self.grant)
            .finish_non_exhaustive()
    }
}

/// A token is renewed this long before its `expires_in` runs out (a request in flight
/// should not arrive with a token that expired on the way).
const EXPIRY_MARGIN: Duration = Duration::from_secs(5);

impl OAuth {
    pub fn new(url: &str, credentials: ClientCredentials, timeout: Duration) -> OAuth {
        OAuth::with_grant(url, TokenSource::ClientCredentials(credentials), timeout)
    }

    /// The sign-in of `url` with any [`TokenSource`].
    pub fn with_grant(url: &str, grant: TokenSource, timeout: Duration) -> OAuth {
        OAuth {
            url: url.to_owned(),
            grant,
            timeout,
            state: tokio::sync::Mutex::default(),
        }
    }

    /// Sign in before the run: discover the token endpoint and fetch the first token.
    pub async fn sign_in(&self) -> Result<(), SignInError> {
        self.token().await.map(drop)
    }

    /// The token to send: the current one, or a new one when there is none or its
    /// `expires_in` has passed.
    pub async fn token(&self) -> Result<String, SignInError> {
        let mut state = self.state.lock().await;
        if let Some(token) = &state.token
            && token.renew_at.is_none_or(|at| Instant::now() < at)
        {
            return Ok(token.value.clone());
        }
        self.fetch(&mut state).await
    }

    /// `refused` got 401 `invalid_token`: fetch a new token, once — unless another
    /// connection already did (then its token is the answer).
    pub async fn renew(&self, refused: &str) -> Result<String, SignInError> {
        let mut state = self.state.lock().await;
        match &state.token {
            Some(token) if token.value != refused => Ok(token.value.clone()),
            _ => self.fetch(&mut state).await,
        }
    }

    /// Why the sign-in failed for good, if it did (the run ends with this error).
    pub fn failure(&self) -> Option<SignInError> {
        self.state.try_lock().ok()?.failure.clone()
    }

    /// The MCP endpoint signed in to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// GET a document of the flow (metadata) as JSON, bounded like the sign-in's own
    /// requests: `(status, body)`, the body `None` when it is not JSON.
    pub async fn document(&self, url: &str) -> Result<(u16, Option<serde_json::Value>), String> {
        let client = super::reqwest_client::shared_client()?;
        discover::Flow {
            client: &client,
            timeout: self.timeout,
        }
        .document(url)
        .await
    }

    /// A token other than the run's, for the checks that need one (security-auth-flow):
    /// through the same token endpoint and client, for `resource` instead of this
    /// server's canonical URI, and with `scope` instead of the sign-in's (`Some(None)`: no
    /// `scope` at all). Never cached; registered as a secret. With its `expires_in`.
    pub async fn other_token(
        &self,
        resource: Option<&str>,
        scope: Option<Option<&str>>,
    ) -> Result<(String, Option<u64>), SignInError> {
        let client = super::reqwest_client::shared_client()
            .map_err(|e| SignInError::new(DiscoveryStep::Challenge, &self.url, e))?;
        let flow = discover::Flow {
            client: &client,
            timeout: self.timeout,
        };
        let mut endpoint = {
            let mut state = self.state.lock().await;
            if state.endpoint.is_none() {
                state.endpoint = Some(flow.token_endpoint(&self.url).await?);
            }
            state.endpoint.clone().expect("set above")
        };
        let TokenSource::ClientCredentials(credentials) = &self.grant else {
            return Err(SignInError::new(
                DiscoveryStep::TokenRequest,
                &self.url,
                "another token (another resource or scope) needs the client_credentials grant \
                 with a client secret"
                    .to_string(),
            ));
        };
        let mut credentials = credentials.clone();
        if let Some(resource) = resource {
            endpoint.resource = resource.to_owned();
        }
        if let Some(scope) = scope {
            credentials.scope = scope.map(str::to_owned);
            endpoint.scope = None;
        }
        let granted = flow.client_credentials(&endpoint, &credentials).await?;
        crate::ground::redact::remember(std::slice::from_ref(&granted.access_token));
        Ok((granted.access_token, granted.expires_in))
    }

    async fn fetch(&self, state: &mut State) -> Result<String, SignInError> {
        if let Some(failure) = &state.failure {
            return Err(failure.clone());
        }
        let result = self.discover_and_fetch(state).await;
        match result {
            Ok(token) => {
                crate::ground::redact::remember(std::slice::from_ref(&token.value));
                let value = token.value.clone();
                state.token = Some(token);
                Ok(value)
            }
            Err(e) => {
                state.token = None;
                state.failure = Some(e.clone());
                Err(e)
            }
        }
    }

    async fn discover_and_fetch(&self, state: &mut State) -> Result<Token, SignInError> {
        // The cached sign-in's own token first, while it lasts: no request at all.
        if let TokenSource::Cached(entry) = &self.grant
            && !state.cached_used
        {
            state.cached_used = true;
            let left = entry.expires_at.map(|at| at.saturating_sub(cache::now()));
            if left.is_none_or(|left| Duration::from_secs(left) > EXPIRY_MARGIN) {
                return Ok(Token {
                    value: entry.access_token.clone(),
                    renew_at: left.map(|left| renew_at(Some(left)).expect("some")),
                });
            }
        }
        // Held until the renewed sign-in is cached (see `cache::Locked`); a cache that
        // cannot be locked does not stop the run.
        let locked = match &self.grant {
            TokenSource::Cached(_) => cache::locked().ok(),
            _ => None,
        };
        let client = super::reqwest_client::shared_client()
            .map_err(|e| SignInError::new(DiscoveryStep::Challenge, &self.url, e))?;
        let flow = discover::Flow {
            client: &client,
            timeout: self.timeout,
        };
        if state.endpoint.is_none() {
            state.endpoint = Some(flow.token_endpoint(&self.url).await?);
        }
        let endpoint = state.endpoint.as_ref().expect("set above");
        let granted = match &self.grant {
            TokenSource::ClientCredentials(credentials) => {
                flow.client_credentials(endpoint, credentials).await?
            }
            TokenSource::ClientAssertion {
                client_id,
                key,
                scope,
            } => {
                let auth = ClientAuth::Jwt { id: client_id, key };
                let scope = scope.as_deref().or(endpoint.scope.as_deref());
                let form = [("grant_type", "client_credentials")];
                flow.grant(DiscoveryStep::TokenRequest, endpoint, &form, scope, &auth)
                    .await?
            }
            TokenSource::RefreshToken(stored) => {
                let refresh = state
                    .refresh_token
                    .clone()
                    .unwrap_or_else(|| stored.refresh_token.clone());
                let auth = match &stored.client_secret {
                    Some(secret) => ClientAuth::Secret {
                        id: &stored.client_id,
                        secret,
                    },
                    None => ClientAuth::Public {
                        id: &stored.client_id,
                    },
                };
                let form = [("grant_type", "refresh_token"), ("refresh_token", &refresh)];
                flow.grant(
                    DiscoveryStep::Refresh,
                    endpoint,
                    &form,
                    stored.scope.as_deref(),
                    &auth,
                )
                .await?
            }
            TokenSource::Cached(entry) => {
                let again = format!(
                    "sign in again with `mcpspec auth login {}`",
                    crate::ground::redact::safe_url(&self.url)
                );
                // The latest refresh token: the cache's (another run sharing this sign-in
                // may have rotated it; the lock keeps it so until this renewal is cached),
                // else this run's, else the one it started with.
                let latest = locked
                    .as_ref()
                    .and_then(|l| l.find(&entry.resource).ok().flatten())
                    .and_then(|e| e.refresh_token);
                let Some(refresh) = latest
                    .or_else(|| state.refresh_token.clone())
                    .or_else(|| entry.refresh_token.clone())
                else {
                    return Err(SignInError::new(
                        DiscoveryStep::Refresh,
                        &endpoint.url,
                        format!("the cached sign-in expired and has no refresh token: {again}"),
                    ));
                };
                crate::ground::redact::remember(std::slice::from_ref(&refresh));
                let auth = ClientAuth::Public {
                    id: &entry.client_id,
                };
                let form = [("grant_type", "refresh_token"), ("refresh_token", &refresh)];
                let granted = flow
                    .grant(DiscoveryStep::Refresh, endpoint, &form, None, &auth)
                    .await
                    .map_err(|mut e| {
                        e.why = format!("{}; {again}", e.why);
                        e
                    })?;
                let renewed = cache::Entry {
                    access_token: granted.access_token.clone(),
                    refresh_token: granted.refresh_token.clone().or(Some(refresh)),
                    expires_at: granted.expires_in.map(|s| cache::now() + s),
                    scope: granted.scope.clone().or_else(|| entry.scope.clone()),
                    ..entry.clone()
                };
                let saved = match &locked {
                    Some(locked) => locked.save(renewed),
                    None => cache::save(renewed),
                };
                if let Err(e) = saved {
                    errln!("warning: the renewed sign-in was not cached: {e}");
                }
                granted
            }
        };
        if let Some(refresh) = &granted.refresh_token {
            state.refresh_token = Some(refresh.clone());
        }
        Ok(Token {
            value: granted.access_token,
            renew_at: renew_at(granted.expires_in),
        })
    }
}

/// When a token that lives `expires_in` seconds from now is renewed.
fn renew_at(expires_in: Option<u64>) -> Option<Instant> {
    expires_in.map(|secs| Instant::now() + Duration::from_secs(secs).saturating_sub(EXPIRY_MARGIN))
}

/// The authorization an MCP endpoint declares, found as a client finds it (its 401
/// challenge, the protected-resource metadata, the authorization server's metadata):
/// what `mcpspec init` writes an `auth:` block from. `Ok(None)`: the endpoint answered
/// a request without a token with something else than 401.
pub async fn discover_authorization(
    url: &str,
    timeout: Duration,
) -> Result<Option<TokenEndpoint>, SignInError> {
    let client = super::reqwest_client::shared_client()
        .map_err(|e| SignInError::new(DiscoveryStep::Challenge, url, e))?;
    let flow = discover::Flow {
        client: &client,
        timeout,
    };
    if !flow.refuses_without_token(url).await? {
        return Ok(None);
    }
    flow.token_endpoint(url).await.map(Some)
}

/// Whether a `WWW-Authenticate` value says the token was refused as invalid or expired
/// (RFC 6750 §3.1 `error="invalid_token"`), the one refusal a new token can cure.
pub fn is_invalid_token(challenge: &str) -> bool {
    discover::auth_param(challenge, "error").as_deref() == Some("invalid_token")
}
