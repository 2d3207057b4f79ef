//! SSE streams (`sse_priming_event`): 2025-11-25 basic/transports, Sending Messages to the
//! Server: "If the server initiates an SSE stream: The server SHOULD immediately send an
//! SSE event consisting of an event ID and an empty `data` field in order to prime the
//! client to reconnect (using that event ID as `Last-Event-ID`)." The rule is new in
//! 2025-11-25 (SEP-1699) and gone in 2026-07-28, which has no resumption; the official
//! conformance suite checks it on the stream of a POST, as here.

use std::time::Instant;

use super::outcome::CheckOutcome;
use crate::run::client::{Connection, OpenedBy};

pub async fn sse_priming_event(conn: &mut Connection) -> Result<CheckOutcome, String> {
    if !conn.is_http() {
        return Ok(CheckOutcome::Skip("stdio has no SSE streams".into()));
    }
    let method = conn.harmless_method();
    let id = conn.next_id();
    let out = conn.build_plain(method, None, Some(id));
    let timeout = out.timeout;
    let open = conn
        .open_request(&out)
        .await
        .map_err(|e| format!("`{method}` failed: {e}"))?;
    let status = open.http_status.unwrap_or(0);
    let OpenedBy::Stream(mut stream) = open.by else {
        return Ok(CheckOutcome::Skip(format!(
            "the server answered `{method}` with a complete reply (HTTP {status}), not an SSE stream: there is no stream to prime"
        )));
    };
    let first = stream
        .next_event(Instant::now() + timeout)
        .await
        .map_err(|e| format!("reading the SSE stream of `{method}`: {e}"))?;
    // Closing the stream ends the request's reading here; `ping` has no effect to cancel.
    drop(stream);
    let expected = "first on the stream: an event with an `id:` and an empty `data:` field";
    let Some(event) = first else {
        return Ok(CheckOutcome::fail(
            format!(
                "the SSE stream of `{method}` (HTTP {status}) brought no event within {}",
                humantime::format_duration(timeout)
            ),
            expected,
            None,
        ));
    };
    let id = event.id.as_deref().filter(|id| !id.is_empty());
    let shown = format!(
        "id: {}, data: `{}`",
        id.unwrap_or("(none)"),
        crate::ground::redact::shorten(&event.data, 200)
    );
    conn.note(format!(
        "first event of the SSE stream of `{method}`: {shown}"
    ));
    if id.is_some() && event.data.trim().is_empty() {
        return Ok(CheckOutcome::Pass);
    }
    Ok(CheckOutcome::fail(
        format!(
            "the SSE stream of `{method}` does not open with a priming event (an event id and empty data)"
        ),
        expected,
        Some(shown),
    ))
}
