//! Cross-era (`cross_era_connect`, `cross_era_lists_match`,
//! `cross_era_capabilities_match`, `auto_picks_modern`): a dual-era server seen from both
//! eras, over fresh connections to the same target.

use super::outcome::CheckOutcome;
use crate::protocol::era::{EraKind, EraRequest, MODERN_REVISION};
use crate::run::client::Connection;
use crate::run::engine::pool::Pool;

/// What a cross-era check compares.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// Nothing: both eras connect.
    Connect,
    /// The four lists (definitions included).
    Lists,
    /// The declared capabilities.
    Capabilities,
}

/// Connect in the legacy and the modern era (fresh connections to the same target) and
/// compare what each sees, reusing the contract snapshot and diff.
pub async fn cross_era(
    conn: &mut Connection,
    compare: Compare,
    pool: &Pool,
) -> Result<CheckOutcome, String> {
    use crate::run::contract::{diff_snapshots, take_snapshot};
    let target = conn.target().clone();
    let mut snaps = Vec::new();
    let mut failures = Vec::new();
    for (label, era) in [
        ("legacy", EraRequest::Legacy),
        (MODERN_REVISION, EraRequest::Modern(MODERN_REVISION.into())),
    ] {
        match pool.borrow(&target, label, &era).await {
            Ok(mut c) => {
                let snap = take_snapshot(&mut c, None).await;
                conn.adopt(pool.give_back(c, "a cross-era snapshot").await);
                match snap {
                    Ok(s) => snaps.push(s),
                    Err(e) => failures.push(format!("{label}: snapshot failed: {e}")),
                }
            }
            Err(e) => failures.push(format!("{label}: {}", e.message)),
        }
    }
    if compare == Compare::Connect || !failures.is_empty() {
        return Ok(if failures.is_empty() {
            CheckOutcome::Pass
        } else if compare == Compare::Connect {
            CheckOutcome::fail(
                format!(
                    "the server does not connect in both eras: {}",
                    failures.join("; ")
                ),
                "a connection in legacy and in 2026-07-28",
                Some(failures.join("\n")),
            )
        } else {
            CheckOutcome::Skip(format!("not testable: {}", failures.join("; ")))
        });
    }
    let (legacy, modern) = (&snaps[0], &snaps[1]);
    let report = diff_snapshots(legacy, modern, ("legacy".into(), MODERN_REVISION.into()));
    let wanted = |c: &crate::run::contract::Change| match compare {
        Compare::Capabilities => {
            c.list == "server"
                && c.path
                    .as_deref()
                    .is_some_and(|p| p.starts_with("capabilities"))
        }
        // The rule (2026-07-28 server/tools: the set of tools "MUST NOT vary
        // per-connection") is about what clients rely on: a change the contract diff calls
        // harmless to clients (a description's wording, a title) is no difference here.
        _ => {
            c.list != "server" && c.breaks_clients != crate::run::contract::schema_diff::Breaks::No
        }
    };
    let diffs: Vec<String> = report
        .changes
        .iter()
        .filter(|c| wanted(c))
        .map(|c| {
            format!(
                "{}/{}: {}{}",
                c.list,
                c.name,
                c.kind,
                c.path
                    .as_ref()
                    .map(|p| format!(" at {p}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    if diffs.is_empty() {
        return Ok(CheckOutcome::Pass);
    }
    let what = if compare == Compare::Capabilities {
        "capabilities"
    } else {
        "lists"
    };
    Ok(CheckOutcome::fail(
        format!(
            "the legacy and modern eras see different {what} ({} difference(s), legacy → modern)",
            diffs.len()
        ),
        "the same contract in both eras",
        Some(diffs.join("\n")),
    ))
}

/// `auto` picks the modern era on a server that supports it.
pub async fn auto_picks_modern(conn: &mut Connection, pool: &Pool) -> Result<CheckOutcome, String> {
    let target = conn.target().clone();
    let c = pool
        .borrow(&target, "auto", &EraRequest::Auto)
        .await
        .map_err(|e| format!("auto did not connect: {}", e.message))?;
    let picked = (
        c.negotiated.kind,
        c.negotiated.revision.clone(),
        c.negotiated.note.clone(),
    );
    conn.adopt(pool.give_back(c, "`auto_picks_modern`").await);
    if picked.0 == EraKind::Modern {
        return Ok(CheckOutcome::Pass);
    }
    Ok(CheckOutcome::fail(
        format!(
            "auto picked legacy ({}) on a server that supports 2026-07-28",
            picked.1
        ),
        "modern",
        picked.2,
    ))
}
