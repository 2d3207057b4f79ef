//! Model profiles: how to reach a model (`models:` of an eval set), checked from the
//! document with `file:line:col`. Below the set, the model client and the recorder, which
//! all read a profile, so none of them imports another for it.

use std::sync::Arc;
use std::time::Duration;

use super::results::{ModelApi, Price};
use super::set::doc::{KeyHeader, ProfileDoc};
use crate::ground::load_error::{LoadError, LoadErrors};
use crate::ground::source::{Pos, SourceFile};

/// Longest a model reply may take unless the profile's `timeout` or `--model-timeout` says
/// otherwise: long enough for a slow local model's full reply, short enough that a hung
/// endpoint costs minutes, not hours.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Default model turns per trial (requests to the model API) before the trial fails.
pub const DEFAULT_MAX_TURNS: u32 = 8;
/// Default most tool calls one model reply may ask for: a reply asking for more fails its
/// trial with none executed.
pub const DEFAULT_MAX_CALLS_PER_TURN: u32 = 16;

/// A checked model profile.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Its key under `models:`.
    pub name: String,
    pub api: ModelApi,
    pub base_url: String,
    pub model: String,
    /// The variable named by `key: env:VAR`.
    pub key_env: Option<String>,
    pub key_header: KeyHeader,
    pub temperature: Option<f64>,
    pub seed: Option<u64>,
    pub max_turns: u32,
    /// `maxCallsPerTurn` (default [`DEFAULT_MAX_CALLS_PER_TURN`]).
    pub max_calls_per_turn: u32,
    pub max_tokens: u32,
    /// Longest one model request may take (`timeout`, default
    /// [`DEFAULT_REQUEST_TIMEOUT`]).
    pub timeout: Duration,
    /// USD per million tokens (`price`).
    pub price: Option<Price>,
}

/// Profile `name` (its key under `models:`) checked; the errors go to `errors`.
pub(super) fn compile(
    file: &Arc<SourceFile>,
    name: String,
    p: ProfileDoc,
    errors: &mut LoadErrors,
) -> Profile {
    let pos = |line: u32, col: u32| Pos::new(file, line, col);
    let base = p.base_url.trim();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        errors.push(
            LoadError::at(
                pos(p.base_url.line, p.base_url.col),
                format!("`baseUrl` of model `{name}` is not an http(s) URL"),
            )
            .with_help("e.g. `http://localhost:11434/v1` or `https://api.openai.com/v1`"),
        );
    }
    let key_env = match &p.key {
        Some(k) => match k.strip_prefix("env:").filter(|v| is_env_name(v)) {
            Some(var) => Some(var.to_string()),
            None => {
                // Never echo the value (no snippet): it may be a key pasted by mistake.
                errors.push(
                    LoadError::file(
                        format!("{}:{}:{}", file.name, k.line, k.col),
                        format!("`key` of model `{name}` must be `env:VARIABLE`"),
                    )
                    .with_help(
                        "keys are never written in files: put the key in an environment variable and name it, e.g. `key: env:OPENAI_API_KEY`",
                    ),
                );
                None
            }
        },
        None => None,
    };
    let max_turns = match &p.max_turns {
        Some(t) if t.value == 0 || t.value > 1000 => {
            errors.push(
                LoadError::at(pos(t.line, t.col), "`maxTurns` is out of range")
                    .with_help("give 1 to 1000"),
            );
            DEFAULT_MAX_TURNS
        }
        Some(t) => t.value,
        None => DEFAULT_MAX_TURNS,
    };
    let max_calls_per_turn = match &p.max_calls_per_turn {
        Some(t) if t.value == 0 || t.value > 1000 => {
            errors.push(
                LoadError::at(pos(t.line, t.col), "`maxCallsPerTurn` is out of range")
                    .with_help("give 1 to 1000"),
            );
            DEFAULT_MAX_CALLS_PER_TURN
        }
        Some(t) => t.value,
        None => DEFAULT_MAX_CALLS_PER_TURN,
    };
    let timeout = match &p.timeout {
        Some(t) => match crate::language::dsl::limits::duration(
            t.trim(),
            &crate::language::dsl::limits::TIMEOUT,
        ) {
            Ok(d) => d,
            Err(why) => {
                errors.push(
                    LoadError::at(
                        pos(t.line, t.col),
                        format!("`timeout` of model `{name}`: {why}"),
                    )
                    .with_help("a duration such as `90s` or `5m`"),
                );
                DEFAULT_REQUEST_TIMEOUT
            }
        },
        None => DEFAULT_REQUEST_TIMEOUT,
    };
    let price = match &p.price {
        Some(pr)
            if [pr.input, pr.output]
                .iter()
                .all(|v| v.is_finite() && *v >= 0.0) =>
        {
            Some(pr.value)
        }
        Some(pr) => {
            errors.push(
                LoadError::at(
                    pos(pr.line, pr.col),
                    format!("`price` of model `{name}` must be 0 or more"),
                )
                .with_help("USD per million tokens, e.g. `price: {input: 3, output: 15}`"),
            );
            None
        }
        None => None,
    };
    Profile {
        timeout,
        price,
        api: p.api,
        base_url: base.trim_end_matches('/').to_string(),
        model: p.model,
        key_env,
        key_header: p.key_header.unwrap_or(match p.api {
            ModelApi::Openai => KeyHeader::Bearer,
            ModelApi::Anthropic => KeyHeader::XApiKey,
        }),
        temperature: p.temperature,
        seed: p.seed,
        max_turns,
        max_calls_per_turn,
        max_tokens: p.max_tokens.unwrap_or(1024),
        name,
    }
}

/// A profile's API key, read from the variable its `key: env:VAR` names (`None`: it names
/// none), remembered for redaction everywhere; unset or empty: why, naming the variable.
pub fn key_from_env(profile: &Profile) -> Result<Option<String>, String> {
    let Some(var) = &profile.key_env else {
        return Ok(None);
    };
    match std::env::var(var) {
        Ok(k) if !k.is_empty() => {
            crate::ground::redact::remember(std::slice::from_ref(&k));
            Ok(Some(k))
        }
        _ => Err(format!(
            "model profile `{}` takes its API key from the environment variable {var}, which is not set (or empty)",
            profile.name
        )),
    }
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// The base URL without userinfo, query or fragment (a key can hide in any of them).
pub fn public_url(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or("");
    crate::ground::redact::without_userinfo(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_loses_credentials() {
        assert_eq!(
            public_url("https://user:sk-secret@api.example.com/v1?key=sk-x#f"),
            "https://api.example.com/v1"
        );
        assert_eq!(public_url("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }
}
