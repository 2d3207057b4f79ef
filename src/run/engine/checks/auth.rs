//! Auth (`endpoint_requires_auth`): whether the HTTP endpoint lets anyone in. The probe
//! itself is shared with the `authRequired` precondition (`engine::security`).

use super::outcome::CheckOutcome;
use crate::run::client::Connection;
use crate::run::engine::security::AuthProbe;

/// Informational report of an endpoint anyone can use.
pub async fn endpoint_requires_auth(
    conn: &mut Connection,
    probe: &mut AuthProbe,
) -> Result<CheckOutcome, String> {
    if !conn.is_http() {
        return Ok(CheckOutcome::Skip("needs the HTTP transport".into()));
    }
    Ok(match probe.answered_status(conn).await? {
        None => CheckOutcome::Pass,
        Some(status) => CheckOutcome::fail(
            format!(
                "endpoint is unauthenticated: a request without credentials got HTTP {status} (informational: anything that can reach it can use it)"
            ),
            "HTTP 401 (or 403) without credentials",
            Some(format!("HTTP {status}")),
        ),
    })
}
