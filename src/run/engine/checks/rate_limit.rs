//! Rate limit (`rate_limit`): whether a bounded burst gets throttled.

use std::time::{Duration, Instant};

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::outcome::CheckOutcome;
use crate::run::client::Connection;
use crate::run::engine::security::{probe, unset_reason};

/// Upper bound of `rate_limit_requests`: a burst, not a load test.
const MAX_BURST: u64 = 1000;
/// Upper bound of `rate_limit_seconds`.
const MAX_BURST_SECONDS: f64 = 60.0;

/// Send up to `rate_limit_requests` requests, stopping after `rate_limit_seconds`, and
/// report whether any was throttled (HTTP 429 or a JSON-RPC error). Sequential, so the
/// burst stays bounded whatever the server does.
pub async fn rate_limit(
    conn: &mut Connection,
    params: &Map<String, Value>,
) -> Result<CheckOutcome, String> {
    if !conn.is_http() {
        return Ok(CheckOutcome::Skip("needs the HTTP transport".into()));
    }
    let number = |name: &str| -> Result<f64, String> {
        let v = params.get(name).ok_or_else(|| unset_reason(name))?;
        let n = match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        n.filter(|n| n.is_finite() && *n > 0.0)
            .ok_or_else(|| format!("parameter {name} must be a positive number, got `{v}`"))
    };
    let requests = number("rate_limit_requests")?;
    let seconds = number("rate_limit_seconds")?;
    if requests.fract() != 0.0 || requests > MAX_BURST as f64 {
        return Err(format!(
            "parameter rate_limit_requests must be a whole number from 1 to {MAX_BURST}"
        ));
    }
    if seconds > MAX_BURST_SECONDS {
        return Err(format!(
            "parameter rate_limit_seconds must be at most {MAX_BURST_SECONDS}"
        ));
    }
    let (requests, window) = (requests as u64, Duration::from_secs_f64(seconds));
    let started = Instant::now();
    let mut sent = 0;
    let mut throttled: Option<(u64, String)> = None;
    while sent < requests && started.elapsed() < window {
        sent += 1;
        let ex = probe(conn, &IndexMap::new()).await?;
        let status = ex.http.as_ref().map(|h| h.status).unwrap_or(0);
        let error = ex.response.as_ref().and_then(|r| r.get("error"));
        if status == 429 {
            throttled = Some((sent, "HTTP 429".into()));
        } else if let Some(e) = error {
            throttled = Some((
                sent,
                format!(
                    "JSON-RPC error {}",
                    crate::language::assert::compact(e, 200)
                ),
            ));
        }
        if throttled.is_some() {
            break;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    Ok(match throttled {
        Some((n, how)) => {
            conn.note(format!(
                "rate limit: request {n} of the burst was throttled ({how}) after {elapsed:.2}s"
            ));
            CheckOutcome::Pass
        }
        None => CheckOutcome::fail(
            format!(
                "no throttling observed: {sent} requests in {elapsed:.2}s all succeeded (informational)"
            ),
            "HTTP 429 or an error within the burst",
            Some(format!("{sent} successful responses")),
        ),
    })
}
