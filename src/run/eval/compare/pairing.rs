//! Which question a comparison answers. Two runs pair either
//! - **two servers through one model** (`servers`): the same model profile, API, model name,
//!   temperature and seed; the server (or its build, or its tools) may differ — "did my
//!   server change what the model does?"; or
//! - **two models on one server** (`models`): the same server name, version and tool list
//!   (`toolsHash`); the model differs — "which model works better with my server?".
//!
//! Runs that differ in both the model and the server mix the two causes: they are refused.

use serde::Serialize;

use super::super::results::EvalResults;
use super::Mismatch;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PairingKind {
    Servers,
    Models,
}

/// The pairing a comparison makes, and what stays fixed in it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pairing {
    pub kind: PairingKind,
    /// One line: what is compared and what is held fixed.
    pub description: String,
}

/// How the runs' models differ (profile, API, model name, temperature, seed).
fn model_differences(base: &EvalResults, cand: &EvalResults) -> Vec<String> {
    let (b, c) = (&base.model, &cand.model);
    let opt = |v: Option<String>| v.unwrap_or_else(|| "unset".into());
    let fields = [
        ("profile", b.profile.clone(), c.profile.clone()),
        (
            "API",
            format!("{:?}", b.api).to_lowercase(),
            format!("{:?}", c.api).to_lowercase(),
        ),
        ("model", b.model.clone(), c.model.clone()),
        (
            "temperature",
            opt(b.temperature.map(|t| t.to_string())),
            opt(c.temperature.map(|t| t.to_string())),
        ),
        (
            "seed",
            opt(b.seed.map(|t| t.to_string())),
            opt(c.seed.map(|t| t.to_string())),
        ),
    ];
    differences(&fields)
}

/// How the runs' servers differ (name, version, the tool list the model was sent).
fn server_differences(base: &EvalResults, cand: &EvalResults) -> Vec<String> {
    let (b, c) = (&base.server, &cand.server);
    let fields = [
        ("server", b.name.clone(), c.name.clone()),
        ("version", b.version.clone(), c.version.clone()),
        (
            "tools (toolsHash)",
            short(&b.tools_hash).to_string(),
            short(&c.tools_hash).to_string(),
        ),
    ];
    differences(&fields)
}

fn differences(fields: &[(&str, String, String)]) -> Vec<String> {
    fields
        .iter()
        .filter(|(_, a, b)| a != b)
        .map(|(what, a, b)| format!("{what} {a} → {b}"))
        .collect()
}

fn short(h: &str) -> &str {
    h.get(..12).unwrap_or(h)
}

/// The pairing of `base` and `cand`, or why they cannot be paired.
pub(super) fn pairing(base: &EvalResults, cand: &EvalResults) -> Result<Pairing, Mismatch> {
    let models = model_differences(base, cand);
    let servers = server_differences(base, cand);
    let model = |r: &EvalResults| format!("{} ({})", r.model.profile, r.model.model);
    let server = |r: &EvalResults| format!("{} {}", r.server.name, r.server.version);
    match (models.is_empty(), servers.is_empty()) {
        (true, _) => Ok(Pairing {
            kind: PairingKind::Servers,
            description: format!(
                "two servers through one model, {}: {}",
                model(base),
                if servers.is_empty() {
                    format!("{} both times, the same tools", server(base))
                } else {
                    servers.join(", ")
                }
            ),
        }),
        (false, true) => Ok(Pairing {
            kind: PairingKind::Models,
            description: format!(
                "two models on one server, {} with the same tools: {} → {}",
                server(base),
                model(base),
                model(cand)
            ),
        }),
        (false, false) => Err(Mismatch(format!(
            "the runs differ in the model ({}) and in the server ({}): a change could come from either. Compare two servers through one model, or two models on one server with the same tools (`eval run --model A --model B` runs both against one server)",
            models.join(", "),
            servers.join(", ")
        ))),
    }
}
