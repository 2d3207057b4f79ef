//! Exposure (`foreign_host_rejected`): a local server must not answer a DNS-rebound page.

use indexmap::IndexMap;

use super::outcome::CheckOutcome;
use crate::client::Connection;
use crate::engine::security::probe;

/// The `Host` a DNS-rebound page would carry: a domain no local server serves.
const FOREIGN_HOST: &str = "mcpspec-rebinding.invalid";

/// A request whose `Host` names a foreign domain is refused. The rule is to refuse, not
/// one status: any 4xx that carries no result passes (400, 403 and 421 Misdirected
/// Request are all in use), a served request fails. One implementation for the security
/// and the conformance packs.
pub async fn foreign_host_rejected(conn: &mut Connection) -> Result<CheckOutcome, String> {
    if !conn.is_http() {
        return Ok(CheckOutcome::Skip("needs the HTTP transport".into()));
    }
    let mut headers = IndexMap::new();
    headers.insert("Host".to_string(), Some(FOREIGN_HOST.to_string()));
    let ex = probe(conn, &headers).await?;
    let status = ex.http.as_ref().map_or(0, |h| h.status);
    let served = ex
        .response
        .as_ref()
        .is_some_and(|r| r.get("result").is_some());
    if (400..500).contains(&status) && !served {
        return Ok(CheckOutcome::Pass);
    }
    Ok(CheckOutcome::fail(
        format!(
            "a request with `Host: {FOREIGN_HOST}` was not refused (HTTP {status}{}): a DNS-rebound page can reach the server",
            if served { ", with a result" } else { "" }
        ),
        "an HTTP 4xx refusal (e.g. 400, 403, 421) with no result",
        Some(format!("HTTP {status}")),
    ))
}
