//! Sessions (`session_terminated_not_found`): how a legacy HTTP session ends.

use super::outcome::CheckOutcome;
use crate::protocol::era::EraKind;
use crate::protocol::{headers, methods};
use crate::run::client::Connection;

/// A fresh legacy session, used once and ended by DELETE, must answer further requests with
/// 404.
pub async fn session_terminated_not_found(conn: &mut Connection) -> Result<CheckOutcome, String> {
    if !conn.is_http() || conn.negotiated.kind != EraKind::Legacy {
        return Ok(CheckOutcome::Skip(
            "applies to legacy sessions over HTTP".into(),
        ));
    }
    let mut other = conn
        .open_another()
        .await
        .map_err(|e| format!("the second connection failed: {e}"))?;
    let outcome = terminated_probe(&mut other).await;
    for entry in other.take_log() {
        conn.note(format!(
            "second connection, {} {}{}",
            entry.direction,
            entry.http.map(|h| format!("[{h}] ")).unwrap_or_default(),
            crate::ground::redact::shorten(&entry.body, 500)
        ));
    }
    other.close().await;
    outcome
}

async fn terminated_probe(other: &mut Connection) -> Result<CheckOutcome, String> {
    if other.session_id().is_none() {
        return Ok(CheckOutcome::Skip(format!(
            "the server assigns no {} at initialize",
            headers::SESSION_ID
        )));
    }
    // The session is used once before it ends, as a client's is: a DELETE racing the
    // server's handling of `initialized` tests nothing of the rule, and took mcp 1.9.4's
    // whole session manager down (tests/interop/FINDINGS.md).
    let id = other.next_id();
    let out = other.build_plain(methods::PING, None, Some(id));
    let _ = other.send(&out).await;
    let Some(deleted) = other.end_session().await else {
        return Ok(CheckOutcome::Skip("no session to end".into()));
    };
    match deleted.map_err(|e| format!("DELETE of the session: {e}"))? {
        405 => {
            return Ok(CheckOutcome::Skip(
                "the server does not let clients end sessions (DELETE answered 405)".into(),
            ));
        }
        200..=299 => {}
        status => {
            return Ok(CheckOutcome::fail(
                format!("the DELETE that ends the session answered HTTP {status}"),
                "2xx (or 405 when clients may not end sessions)",
                Some(status.to_string()),
            ));
        }
    }
    let id = other.next_id();
    let out = other.build_plain(methods::PING, None, Some(id));
    let status = match other.send(&out).await {
        Ok(ex) => ex.http.map_or(0, |h| h.status),
        Err(e) => return Err(format!("a request on the terminated session: {e}")),
    };
    if status == 404 {
        return Ok(CheckOutcome::Pass);
    }
    Ok(CheckOutcome::fail(
        format!(
            "a request on a terminated session answered HTTP {status}, not 404 (the client cannot tell it must re-initialize)"
        ),
        "HTTP 404",
        Some(format!("HTTP {status}")),
    ))
}
