//! `mcpspec auth`: a person signs in to a server behind OAuth (`login`, the
//! authorization code grant with PKCE), sees the sign-ins cached for later runs
//! (`status`, never the tokens) and removes them (`logout`).

use std::path::Path;

use crate::face::cli::{AuthCommand, AuthLoginArgs, DEFAULT_TIMEOUT, Format, UsageError, exit};
use crate::face::config::Config;
use crate::run::client::http::oauth::{self, DiscoveryStep, cache, login};

pub(super) fn main(command: AuthCommand) -> i32 {
    match command {
        AuthCommand::Login(args) => sign_in(&args),
        AuthCommand::Logout { target, config } => logout(target.as_deref(), config.as_deref()),
        AuthCommand::Status { format } => status(format),
    }
}

/// A target as `auth` takes it: a URL, or a target of the configuration file.
struct Resolved {
    url: String,
    client_id: Option<String>,
    scope: Option<String>,
}

fn resolve(target: &str, config: Option<&Path>) -> Result<Resolved, i32> {
    if target.contains("://") {
        return Ok(Resolved {
            url: target.to_owned(),
            client_id: None,
            scope: None,
        });
    }
    let config = match Config::find(config) {
        Ok(Some(c)) => c,
        Ok(None) => {
            return Err(super::inputs::usage(UsageError(format!(
                "`{target}` is neither a URL nor a target of a configuration file (no mcpspec.yaml here)"
            ))));
        }
        Err(errors) => return Err(super::inputs::invalid(&errors, Format::Text)),
    };
    let Some(doc) = config.doc.targets.get(target) else {
        let known: Vec<&str> = config.doc.targets.keys().map(String::as_str).collect();
        return Err(super::inputs::usage(UsageError(format!(
            "`{target}` is neither a URL nor a target of {} (targets: {})",
            config.file.name,
            known.join(", ")
        ))));
    };
    let Some(url) = &doc.url else {
        return Err(super::inputs::usage(UsageError(format!(
            "target `{target}` has no `url:`: OAuth sign-in applies to HTTP servers"
        ))));
    };
    Ok(Resolved {
        url: url.clone(),
        client_id: doc.auth.as_ref().map(|a| a.value.client_id.clone()),
        scope: doc.auth.as_ref().and_then(|a| a.value.scope.clone()),
    })
}

fn sign_in(args: &AuthLoginArgs) -> i32 {
    let target = match resolve(&args.target, args.config.as_deref()) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let Some(client_id) = args.client_id.clone().or(target.client_id) else {
        return super::inputs::usage(UsageError(
            "no client id: pass --client-id ID (the client registered with the server's authorization server), or give the target an `auth: clientId`"
                .into(),
        ));
    };
    let client_secret = match &args.client_secret_env {
        Some(var) => match std::env::var(var) {
            Ok(secret) if !secret.is_empty() => {
                crate::ground::redact::remember(std::slice::from_ref(&secret));
                Some(secret)
            }
            _ => {
                return super::inputs::usage(UsageError(format!(
                    "--client-secret-env {var}: the environment variable is not set or empty"
                )));
            }
        },
        None => None,
    };
    let scope = args.scope.clone().or(target.scope);
    let request = login::Login {
        url: &target.url,
        client_id: &client_id,
        client_secret: client_secret.as_deref(),
        scope: scope.as_deref(),
        timeout: args.timeout.unwrap_or(DEFAULT_TIMEOUT),
        wait: args.wait,
    };
    let open = args.open;
    let signed_in = super::runtime::runtime().block_on(login::login(&request, |url| {
        outln!("Open this URL in a browser to sign in:\n\n  {url}\n");
        outln!(
            "Waiting for the browser's redirect (up to {:?})…",
            request.wait
        );
        if open {
            open_browser(url);
        }
    }));
    let entry = match signed_in {
        Ok(entry) => entry,
        Err(e) => return failed(&e),
    };
    let shown = describe(&entry);
    if let Err(e) = cache::save(entry) {
        errln!("error: the tokens were not cached: {e}");
        return exit::FAILED;
    }
    let path = cache::path().map_or_else(|e| e, |p| p.display().to_string());
    outln!("Signed in: {shown}");
    outln!("Cached in {path}; runs against this server use it (`mcpspec auth logout` removes it).");
    exit::OK
}

/// A failed sign-in: one error naming its step; not reaching the server itself is exit 4.
fn failed(e: &oauth::SignInError) -> i32 {
    errln!(
        "error: {}",
        crate::ground::redact::known().redact(&e.to_string())
    );
    if e.step == DiscoveryStep::Challenge {
        exit::UNREACHABLE
    } else {
        exit::AUTH_REQUIRED
    }
}

/// The default browser, asked to open `url` (only with `--open`); a failure is a note.
fn open_browser(url: &str) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        errln!("note: could not open a browser ({program}: {e}); open the URL above yourself");
    }
}

fn logout(target: Option<&str>, config: Option<&Path>) -> i32 {
    let resource = match target {
        Some(target) => match resolve(target, config) {
            Ok(t) => match oauth::canonical_uri(&t.url) {
                Ok(r) => Some(r),
                Err(e) => return super::inputs::usage(UsageError(format!("`{target}`: {e}"))),
            },
            Err(code) => return code,
        },
        None => None,
    };
    match cache::remove(resource.as_deref()) {
        Ok(removed) if removed.is_empty() => {
            outln!(
                "No cached sign-in{}.",
                resource.map_or(String::new(), |r| format!(" for {r}"))
            );
            exit::OK
        }
        Ok(removed) => {
            for entry in removed {
                outln!("Signed out of {} (its tokens removed)", entry.resource);
            }
            exit::OK
        }
        Err(e) => {
            errln!("error: {e}");
            exit::FAILED
        }
    }
}

fn status(format: Format) -> i32 {
    let entries = match cache::list() {
        Ok(e) => e,
        Err(e) => {
            errln!("error: {e}");
            return exit::FAILED;
        }
    };
    match format {
        Format::Json => {
            let now = cache::now();
            let list: Vec<_> = entries
                .iter()
                .map(|e| {
                    serde_json::json!({
                        "resource": e.resource,
                        "issuer": e.issuer,
                        "clientId": e.client_id,
                        "scope": e.scope,
                        "expiresAt": e.expires_at,
                        "expired": e.expires_at.is_some_and(|at| at <= now),
                        "refreshable": e.refresh_token.is_some(),
                    })
                })
                .collect();
            outln!("{}", serde_json::json!({ "signedIn": list }));
        }
        Format::Text if entries.is_empty() => outln!("No cached sign-ins."),
        Format::Text => {
            for entry in &entries {
                outln!("{}", describe(entry));
            }
        }
    }
    exit::OK
}

/// One entry as `login` and `status` show it: never its tokens.
fn describe(entry: &cache::Entry) -> String {
    let expiry = match entry.expires_at {
        None => "no expiry given".to_owned(),
        Some(at) => {
            let now = cache::now();
            let when = chrono::DateTime::from_timestamp(at as i64, 0).map_or(String::new(), |t| {
                format!(" ({})", t.format("%Y-%m-%d %H:%M:%S UTC"))
            });
            if at > now {
                format!(
                    "expires in {}{when}",
                    humantime::format_duration(std::time::Duration::from_secs(at - now))
                )
            } else {
                format!("expired{when}")
            }
        }
    };
    format!(
        "{}  issuer {}  client {}  scope {}  {expiry}{}",
        entry.resource,
        entry.issuer,
        entry.client_id,
        entry.scope.as_deref().unwrap_or("-"),
        if entry.refresh_token.is_some() {
            ", refreshable"
        } else {
            ""
        }
    )
}
