//! The target of a run: a stdio command line or an HTTP endpoint, with its headers,
//! environment, timeout and message bound; checked and turned into a [`Target`], its
//! secrets collected for redaction.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::ground::redact::{is_sensitive_header, is_sensitive_name};
use crate::language::dsl::limits;
use crate::run::client::http::oauth::{self, ClientCredentials, OAuth, RefreshToken, TokenSource};
use crate::run::client::{DEFAULT_MAX_MESSAGE_BYTES, Target, TargetKind};

#[derive(Args, Debug, Clone)]
pub struct TargetArgs {
    /// Target: spawn this server command line over stdio.
    #[arg(long, value_name = "COMMAND LINE", conflicts_with = "url")]
    pub stdio: Option<String>,
    /// Target: Streamable HTTP endpoint URL.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// HTTP header sent with every request, `"Name: value"` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Name of an environment variable holding a bearer token (never printed).
    #[arg(long, value_name = "VAR")]
    pub bearer_env: Option<String>,
    /// OAuth sign-in for the run (`client_credentials`): the client id registered with
    /// the server's authorization server (found from the server's 401 challenge).
    #[arg(long, value_name = "ID", conflicts_with = "bearer_env")]
    pub oauth_client_id: Option<String>,
    /// Name of an environment variable holding the OAuth client secret (never printed).
    #[arg(long, value_name = "VAR", requires = "oauth_client_id")]
    pub oauth_client_secret_env: Option<String>,
    /// File holding the OAuth client secret (never printed).
    #[arg(
        long,
        value_name = "FILE",
        requires = "oauth_client_id",
        conflicts_with = "oauth_client_secret_env"
    )]
    pub oauth_client_secret_file: Option<PathBuf>,
    /// OAuth scope to ask for (default: the challenge's, else the server's metadata's).
    #[arg(long, value_name = "SCOPE", requires = "oauth_client_id")]
    pub oauth_scope: Option<String>,
    /// OAuth `refresh_token` grant: name of an environment variable holding a stored
    /// refresh token (never printed); the client secret is then optional (public client).
    #[arg(long, value_name = "VAR", requires = "oauth_client_id")]
    pub oauth_refresh_token_env: Option<String>,
    /// OAuth `refresh_token` grant: file holding a stored refresh token (never printed).
    #[arg(
        long,
        value_name = "FILE",
        requires = "oauth_client_id",
        conflicts_with = "oauth_refresh_token_env"
    )]
    pub oauth_refresh_token_file: Option<PathBuf>,
    /// OAuth `private_key_jwt` client authentication: a PKCS#8 PEM private key file (RSA:
    /// RS256, P-256: ES256) signing the client assertion, instead of a client secret.
    #[arg(
        long,
        value_name = "FILE",
        requires = "oauth_client_id",
        conflicts_with_all = ["oauth_client_secret_env", "oauth_client_secret_file", "oauth_refresh_token_env", "oauth_refresh_token_file"]
    )]
    pub oauth_client_key_file: Option<PathBuf>,
    /// Environment variable for the stdio server, `K=V` (repeatable).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Working directory for the stdio server.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Run the stdio server in a sandbox (Linux): no route out of the machine (loopback
    /// only), every file read-only but a private temporary HOME and TMPDIR. Where that is
    /// not possible, the command stops with the reason (never runs unsandboxed).
    #[arg(long)]
    pub sandbox: bool,
    /// Per-request timeout, e.g. `500ms`, `30s` (default 30s; 1ms to 1day).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Largest message accepted from the server, in bytes (1024 to 1073741824).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES,
          value_parser = |s: &str| limits::number(s, &limits::MESSAGE_BYTES))]
    pub max_message_size: usize,
}

/// Per-request timeout when neither a flag nor the configuration sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

fn parse_duration(s: &str) -> Result<Duration, String> {
    limits::duration(s, &limits::TIMEOUT).map_err(|e| format!("{e} (expected e.g. `500ms`, `30s`)"))
}

/// A secret named by a flag: an environment variable or a file (its trailing line end
/// dropped). `None`: neither given.
fn read_secret(
    what: &str,
    env: &Option<String>,
    file: &Option<PathBuf>,
) -> Result<Option<String>, UsageError> {
    let secret = match (env, file) {
        (Some(var), _) => std::env::var(var).map_err(|_| {
            UsageError(format!(
                "--oauth-{what}-env {var}: the environment variable is not set"
            ))
        })?,
        (None, Some(path)) => std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("--oauth-{what}-file {}: {e}", path.display())))?
            .trim_end_matches(['\r', '\n'])
            .to_string(),
        (None, None) => return Ok(None),
    };
    if secret.is_empty() {
        return Err(UsageError(format!(
            "the OAuth {} is empty",
            what.replace('-', " ")
        )));
    }
    Ok(Some(secret))
}

/// The sign-in `mcpspec auth login` cached for the server `url`, its tokens registered
/// as secrets.
fn cached(url: &str) -> Result<Option<oauth::cache::Entry>, UsageError> {
    let Ok(resource) = oauth::canonical_uri(url) else {
        return Ok(None);
    };
    let entry = oauth::cache::find(&resource).map_err(UsageError)?;
    if let Some(entry) = &entry {
        let mut secrets = vec![entry.access_token.clone()];
        secrets.extend(entry.refresh_token.clone());
        crate::ground::redact::remember(&secrets);
    }
    Ok(entry)
}

/// A usage error (exit 2).
#[derive(Debug)]
pub struct UsageError(pub String);

/// A target URL is absolute http(s): `127.0.0.1:8080/mcp` is a usage mistake (exit 2) told
/// with its fix, not a connection failure (exit 4, "relative URL without a base"). The URL
/// is quoted without its credentials ([`shown_url`]).
fn check_url(url: &str) -> Result<(), UsageError> {
    let shown = shown_url(url);
    let hidden = if shown == url {
        ""
    } else {
        " (credentials not shown)"
    };
    let fix = |why: &str| {
        let bare = shown
            .split_once("://")
            .map_or(shown.as_str(), |(_, rest)| rest);
        UsageError(format!(
            "the target URL `{shown}`{hidden} {why}: add http:// (or https:// for TLS), e.g. `--url http://{bare}`"
        ))
    };
    if !url.contains("://") {
        return Err(fix("has no scheme"));
    }
    match reqwest::Url::parse(url) {
        Err(e) => Err(UsageError(format!(
            "the target URL `{shown}`{hidden} is not a URL: {e}"
        ))),
        Ok(u) if !matches!(u.scheme(), "http" | "https") => Err(fix(&format!(
            "has the scheme `{}:`, not http or https",
            u.scheme()
        ))),
        Ok(_) => Ok(()),
    }
}

/// A target URL as a usage error quotes it: no userinfo, credential-like query values
/// masked ([`crate::ground::redact::safe_url`]). A URL that is wrong may hold a password
/// anywhere before its last `@` (`alice:pa/ss@host`, no scheme), so all of that goes.
fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let host_on = rest[..end].rfind('@').map_or(0, |at| at + 1);
    let shown = crate::ground::redact::safe_url(&format!("{scheme}://{}", &rest[host_on..]));
    if url.contains("://") {
        shown
    } else {
        shown.trim_start_matches("://").to_string()
    }
}

/// `--header "Name: value"` split. A malformed one is not quoted: its text may be a
/// credential (`Authorization Bearer …`, the `:` forgotten).
pub(crate) fn split_header(header: &str) -> Result<(String, String), UsageError> {
    let Some((name, value)) = header.split_once(':') else {
        return Err(UsageError(
            "--header: expected \"Name: value\", got text without `:` (not shown: it may hold a credential)"
                .into(),
        ));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(UsageError(
            "--header: expected \"Name: value\", got nothing before the `:`".into(),
        ));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

impl TargetArgs {
    /// The OAuth sign-in the flags ask for, its secrets added to `secrets`: a client
    /// secret (`client_credentials`), a key (`private_key_jwt`), a stored refresh token,
    /// or — a client id alone, or nothing at all — the sign-in `mcpspec auth login` cached
    /// for this server.
    fn oauth(
        &self,
        url: &str,
        headers: &[(String, String)],
        secrets: &mut Vec<String>,
    ) -> Result<Option<std::sync::Arc<OAuth>>, UsageError> {
        let timeout = self.timeout.unwrap_or(DEFAULT_TIMEOUT);
        let signed_in = |grant| {
            Ok(Some(std::sync::Arc::new(OAuth::with_grant(
                url, grant, timeout,
            ))))
        };
        let Some(client_id) = &self.oauth_client_id else {
            let authorized = self.bearer_env.is_some()
                || headers
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
            // Unasked, an unreadable cache is no sign-in rather than an error.
            return match cached(url) {
                Ok(Some(entry)) if !authorized => signed_in(TokenSource::Cached(entry)),
                _ => Ok(None),
            };
        };
        let client_id = client_id.clone();
        let scope = self.oauth_scope.clone();
        if let Some(path) = &self.oauth_client_key_file {
            let pem = std::fs::read_to_string(path).map_err(|e| {
                UsageError(format!("--oauth-client-key-file {}: {e}", path.display()))
            })?;
            let key = oauth::jwt::SigningKey::from_pem(&pem).map_err(|e| {
                UsageError(format!("--oauth-client-key-file {}: {e}", path.display()))
            })?;
            return signed_in(TokenSource::ClientAssertion {
                client_id,
                key,
                scope,
            });
        }
        let client_secret = read_secret(
            "client-secret",
            &self.oauth_client_secret_env,
            &self.oauth_client_secret_file,
        )?;
        secrets.extend(client_secret.clone());
        let refresh_token = read_secret(
            "refresh-token",
            &self.oauth_refresh_token_env,
            &self.oauth_refresh_token_file,
        )?;
        secrets.extend(refresh_token.clone());
        match (client_secret, refresh_token) {
            (client_secret, Some(refresh_token)) => {
                signed_in(TokenSource::RefreshToken(RefreshToken {
                    client_id,
                    client_secret,
                    refresh_token,
                    scope,
                }))
            }
            (Some(client_secret), None) => {
                signed_in(TokenSource::ClientCredentials(ClientCredentials {
                    client_id,
                    client_secret,
                    scope,
                }))
            }
            (None, None) => match cached(url)? {
                Some(entry) => signed_in(TokenSource::Cached(entry)),
                None => Err(UsageError(format!(
                    "--oauth-client-id {client_id} without a secret, a key or a refresh token: no cached sign-in for {} either; run `mcpspec auth login {} --client-id {client_id}` first, or give --oauth-client-secret-env VAR",
                    shown_url(url),
                    shown_url(url)
                ))),
            },
        }
    }

    /// Build the target; also returns the secrets it holds (to redact from all output).
    pub fn to_target(&self) -> Result<(Target, Vec<String>), UsageError> {
        let mut secrets = Vec::new();
        let kind = match (&self.stdio, &self.url) {
            (Some(cmd), None) => {
                let words = crate::ground::platform::split_command(cmd).map_err(|e| {
                    UsageError(format!("--stdio: cannot split the command line: {e}"))
                })?;
                let Some((program, args)) = words.split_first() else {
                    return Err(UsageError("--stdio: the command line is empty".into()));
                };
                let env = self
                    .env
                    .iter()
                    .map(|kv| {
                        kv.split_once('=')
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .ok_or_else(|| {
                                UsageError(
                                    "--env: expected K=V, got text without `=` (not shown: it may hold a credential)"
                                        .into(),
                                )
                            })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                TargetKind::Stdio {
                    program: program.clone(),
                    args: args.to_vec(),
                    env,
                    cwd: self.cwd.clone(),
                    sandbox: self.sandbox,
                }
            }
            (None, Some(url)) => {
                check_url(url)?;
                let headers = self
                    .headers
                    .iter()
                    .map(|h| split_header(h))
                    .collect::<Result<Vec<_>, _>>()?;
                for (k, v) in &headers {
                    if is_sensitive_header(k) && !v.is_empty() {
                        secrets.push(v.clone());
                        // `Scheme credentials` (any scheme, any case): the credential alone too.
                        if let Some((_, credential)) = v.split_once(char::is_whitespace) {
                            let credential = credential.trim();
                            if !credential.is_empty() {
                                secrets.push(credential.to_string());
                            }
                        }
                    }
                }
                let bearer = match &self.bearer_env {
                    Some(var) => {
                        let token = std::env::var(var).map_err(|_| {
                            UsageError(format!(
                                "--bearer-env {var}: the environment variable is not set"
                            ))
                        })?;
                        if token.is_empty() {
                            return Err(UsageError(format!(
                                "--bearer-env {var}: the variable is empty"
                            )));
                        }
                        secrets.push(token.clone());
                        Some(token)
                    }
                    None => None,
                };
                let auth = self.oauth(url, &headers, &mut secrets)?;
                TargetKind::Http {
                    url: url.clone(),
                    headers,
                    bearer,
                    auth,
                }
            }
            (None, None) => {
                return Err(UsageError(
                    "no target: pass --stdio \"<command line>\" or --url <URL>".into(),
                ));
            }
            (Some(_), Some(_)) => return Err(UsageError("give --stdio or --url, not both".into())),
        };
        if !self.headers.is_empty() && matches!(kind, TargetKind::Stdio { .. }) {
            return Err(UsageError("--header applies to --url targets".into()));
        }
        if self.oauth_client_id.is_some() && matches!(kind, TargetKind::Stdio { .. }) {
            return Err(UsageError(
                "OAuth sign-in (--oauth-client-id, `auth:`) applies to --url targets".into(),
            ));
        }
        if self.sandbox {
            if !matches!(kind, TargetKind::Stdio { .. }) {
                return Err(UsageError(
                    "--sandbox applies to --stdio targets (an HTTP server runs where it was started)".into(),
                ));
            }
            // Asked for and impossible: the run stops here, it never goes unsandboxed.
            if let Some(why) = crate::ground::platform::sandbox_unavailable() {
                return Err(UsageError(format!(
                    "--sandbox is not available here: {why}"
                )));
            }
        }
        for (k, v) in self.env.iter().filter_map(|kv| kv.split_once('=')) {
            if is_sensitive_name(k) && !v.is_empty() {
                secrets.push(v.to_string());
            }
        }
        // Known to every excerpt cut from here on (see `crate::ground::redact`).
        crate::ground::redact::remember(&secrets);
        Ok((
            Target {
                kind,
                timeout: self.timeout.unwrap_or(DEFAULT_TIMEOUT),
                max_message_bytes: self.max_message_size,
                wire_validation: false,
                auto_era: Default::default(),
            },
            secrets,
        ))
    }
}
