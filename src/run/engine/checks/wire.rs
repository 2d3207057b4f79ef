//! Wire (`wire_valid`, `stdout_clean`): what the server puts on the wire, beyond what any
//! one step expects.

use super::outcome::CheckOutcome;
use crate::protocol::{ListKind, errors, methods};
use crate::results::exchange::Exchange;
use crate::run::client::Connection;
use crate::run::client::connection::result_of;

/// Requests in the `stdout_clean` burst (unless the step sets `count`).
const BURST: usize = 32;

/// The wire violations recorded on this connection (see `crate::protocol::wire`): all of them, or
/// with a `method`, those in the responses to it (every page of a list method).
pub async fn wire_valid(conn: &mut Connection, method: &str) -> Result<CheckOutcome, String> {
    let (checked, seen) = (conn.wire_log().checked, conn.wire_log().violations.len());
    if !method.is_empty() {
        match ListKind::from_method(method) {
            // A list answered with an error (on its first page or a later one) was answered.
            Some(list) => match conn.list_all(list.method(), list.result_key()).await {
                Ok(_) => Ok(()),
                Err(_) if conn.wire_log().checked > checked => Ok(()),
                Err(e) => Err(e),
            },
            // An error answer is judged by its shape like any other response; no answer at
            // all leaves nothing of this request to judge (the ping sent before or after it
            // does not stand in for it).
            None if method.starts_with(errors::UNKNOWN_METHOD_PREFIX) => conn
                .exchange_due_at_once(method, &format!("an unknown method (`{method}`)"))
                .await
                .and_then(answered),
            None => {
                let id = conn.next_id();
                let out = conn.build_plain(method, None, Some(id));
                conn.send(&out)
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(answered)
            }
        }?;
    }
    let log = conn.wire_log();
    let (violations, messages) = if method.is_empty() {
        (&log.violations[..], log.checked)
    } else {
        (&log.violations[seen..], log.checked - checked)
    };
    let Some(first) = violations.first() else {
        return Ok(CheckOutcome::Pass);
    };
    Ok(CheckOutcome::fail(
        format!(
            "{} wire violation(s) in {messages} message(s) from the server; first: {first}",
            violations.len(),
        ),
        "every message valid against the schema of its revision",
        Some(
            violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    ))
}

/// Nothing but JSON-RPC on the server's stdout, also under a burst of `count` concurrent
/// requests (stdio only).
pub async fn stdout_clean(
    conn: &mut Connection,
    count: Option<u32>,
) -> Result<CheckOutcome, String> {
    let burst = count.map_or(BURST, |n| n as usize);
    let before = conn.stdout_noise_total();
    let Some(result) = conn.burst(methods::TOOLS_LIST, burst).await else {
        return Ok(CheckOutcome::Skip(
            "stdout purity applies to the stdio transport".into(),
        ));
    };
    let (answered, noise) = result?;
    let total = conn.stdout_noise_total();
    if total == 0 && answered == burst {
        return Ok(CheckOutcome::Pass);
    }
    if total > 0 {
        let cut = |text: &str| {
            crate::ground::redact::shorten(&crate::ground::redact::redact_shapes(text), 200)
        };
        let first = match conn.first_stdout_noise() {
            Some((line, Some(request))) => format!(
                "; the first, `{}`, after the client wrote `{}`",
                cut(line),
                cut(request)
            ),
            Some((line, None)) => format!("; the first, `{}`, before any request", cut(line)),
            None => String::new(),
        };
        let during = if before > 0 {
            format!(" ({before} before this check's burst)")
        } else {
            String::new()
        };
        return Ok(CheckOutcome::fail(
            format!("the server wrote {total} non-JSON line(s) on stdout{during}{first}"),
            "only JSON-RPC messages on stdout",
            noise
                .first()
                .map(|line| cut(line))
                .or_else(|| (before > 0).then(|| format!("{before} line(s) before this check"))),
        ));
    }
    Ok(CheckOutcome::fail(
        format!("only {answered} of {burst} concurrent requests were answered"),
        format!("{burst} responses"),
        Some(answered.to_string()),
    ))
}

/// `Ok` when the server answered the request (a result or a JSON-RPC error: both are judged
/// by their shape), else why there is nothing to judge.
fn answered(ex: Exchange) -> Result<(), String> {
    match (&ex.response, result_of(&ex)) {
        (Some(_), _) | (None, Ok(_)) => Ok(()),
        (None, Err(e)) => Err(e),
    }
}
