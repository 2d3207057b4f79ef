//! Exposure (`foreign_host_rejected`, `foreign_origin_refused`): a local server must not
//! answer a DNS-rebound page.

use indexmap::IndexMap;

use super::outcome::CheckOutcome;
use crate::run::client::Connection;
use crate::run::engine::security::probe;

/// The `Host` a DNS-rebound page would carry: a domain no local server serves.
const FOREIGN_HOST: &str = "mcpspec-rebinding.invalid";
/// The `Origin` of a page on a foreign site.
const FOREIGN_ORIGIN: &str = "http://mcpspec-rebinding.invalid";

/// A request whose `Host` names a foreign domain is refused.
pub async fn foreign_host_rejected(conn: &mut Connection) -> Result<CheckOutcome, String> {
    refused(conn, "Host", FOREIGN_HOST).await
}

/// A request whose `Origin` is foreign is refused: every revision says to validate the
/// Origin; 2025-11-25 added the status (403, the `invalid_origin_rejected` step), so this
/// step is the rule of the revisions before it.
pub async fn foreign_origin_refused(conn: &mut Connection) -> Result<CheckOutcome, String> {
    refused(conn, "Origin", FOREIGN_ORIGIN).await
}

/// A request carrying `header: value` is refused. The rule is to refuse, not one status:
/// any 4xx that carries no result passes (400, 403 and 421 Misdirected Request are all in
/// use), a served request fails. One implementation for the security and the conformance
/// packs.
async fn refused(conn: &mut Connection, header: &str, value: &str) -> Result<CheckOutcome, String> {
    if !conn.is_http() {
        return Ok(CheckOutcome::Skip("needs the HTTP transport".into()));
    }
    let mut headers = IndexMap::new();
    headers.insert(header.to_string(), Some(value.to_string()));
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
            "a request with `{header}: {value}` was not refused (HTTP {status}{}): a DNS-rebound page can reach the server",
            if served { ", with a result" } else { "" }
        ),
        "an HTTP 4xx refusal (e.g. 400, 403, 421) with no result",
        Some(format!("HTTP {status}")),
    ))
}
