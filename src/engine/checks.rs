//! Built-in checks that need more than one request: two traversals of a list, a
//! second connection, every page of a list, stdout purity under load, deprecated
//! features in use, a terminated legacy session.

use serde_json::{Value, json};

use crate::client::Connection;
use crate::dsl::Step;
use crate::dsl::model::{CheckKind, DeprecatedFeature};
use crate::report::model::Outcome;

/// Requests in the `stdout_clean` burst (unless the step sets `count`).
const BURST: usize = 32;

pub async fn run_check(
    step: &Step,
    conn: &mut Connection,
    kind: CheckKind,
    method: &str,
    params: &serde_json::Map<String, Value>,
    auth: &mut super::security::AuthProbe,
    options: &crate::dsl::scenario::CheckOptions,
) -> Outcome {
    let (count, feature) = (options.count, options.feature);
    let key = list_key(method);
    let result = match kind {
        CheckKind::ListDeterministic => deterministic(conn, method, key).await,
        CheckKind::ListStableAcrossConnections => across_connections(conn, method, key).await,
        CheckKind::CacheScopeConsistentAcrossPages => cache_scope(conn, method).await,
        CheckKind::StdoutClean => stdout_clean(conn, count.map_or(BURST, |n| n as usize)).await,
        CheckKind::CrossEraConnect
        | CheckKind::CrossEraListsMatch
        | CheckKind::CrossEraCapabilitiesMatch => cross_era(conn, kind).await,
        CheckKind::AutoPicksModern => auto_picks_modern(conn).await,
        CheckKind::WireValid => wire_valid(conn, method).await,
        CheckKind::EndpointRequiresAuth => {
            super::security::endpoint_requires_auth(conn, auth).await
        }
        CheckKind::RateLimit => super::security::rate_limit(conn, params).await,
        CheckKind::ForeignHostRejected => super::security::foreign_host_rejected(conn).await,
        CheckKind::DeprecatedFeatureUnused => match feature {
            Some(feature) => deprecated_feature_unused(conn, feature).await,
            None => Err("`deprecated_feature_unused` needs a `feature`".into()),
        },
        CheckKind::SessionTerminatedNotFound => session_terminated_not_found(conn).await,
        CheckKind::ListenAcknowledged
        | CheckKind::ListenDeliversListChanged
        | CheckKind::ListenOnlyRequested
        | CheckKind::ListenEndsOnCancel => super::subscriptions::run(conn, kind, params).await,
        other => Err(format!("{other:?} is not a list check")),
    };
    match result {
        Ok(Verdict::Pass) => Outcome::Passed,
        Ok(Verdict::Skip(reason)) => Outcome::Skipped { reason },
        Ok(Verdict::Fail {
            message,
            expected,
            actual,
        }) => {
            let failure = super::step::step_failure(step, "check", message, expected, actual);
            super::step::outcome_for(step, vec![failure])
        }
        Err(e) => Outcome::Error {
            message: e,
            detail: None,
        },
    }
}

pub(super) enum Verdict {
    Pass,
    Skip(String),
    Fail {
        message: String,
        expected: Option<String>,
        actual: Option<String>,
    },
}

fn list_key(method: &str) -> &'static str {
    match method {
        "prompts/list" => "prompts",
        "resources/list" => "resources",
        "resources/templates/list" => "resourceTemplates",
        _ => "tools",
    }
}

/// The stable identity of a list item.
fn item_id(item: &Value) -> String {
    ["name", "uri", "uriTemplate"]
        .iter()
        .find_map(|k| item.get(*k).and_then(Value::as_str))
        .unwrap_or("?")
        .to_string()
}

fn ids(items: &[Value]) -> Vec<String> {
    items.iter().map(item_id).collect()
}

async fn deterministic(conn: &mut Connection, method: &str, key: &str) -> Result<Verdict, String> {
    let first = ids(&conn.list_all(method, key).await?);
    let second = ids(&conn.list_all(method, key).await?);
    if first == second {
        return Ok(Verdict::Pass);
    }
    Ok(Verdict::Fail {
        message: format!("{method} returned a different order the second time"),
        expected: Some(json!(first).to_string()),
        actual: Some(json!(second).to_string()),
    })
}

async fn across_connections(
    conn: &mut Connection,
    method: &str,
    key: &str,
) -> Result<Verdict, String> {
    let mine = conn.list_all(method, key).await?;
    let target = conn.target().clone();
    let era = conn.era_request.clone();
    let label = conn.negotiated.requested.clone();
    let mut other = Connection::open(&target, &label, &era)
        .await
        .map_err(|e| format!("the second connection failed: {}", e.message))?;
    let theirs = other.list_all(method, key).await;
    other.close().await;
    let theirs = theirs.map_err(|e| format!("on the second connection: {e}"))?;
    let sorted = |items: &[Value]| {
        let mut v: Vec<(String, String)> =
            items.iter().map(|i| (item_id(i), i.to_string())).collect();
        v.sort();
        v
    };
    let (a, b) = (sorted(&mine), sorted(&theirs));
    if a == b {
        return Ok(Verdict::Pass);
    }
    let (na, nb): (Vec<&String>, Vec<&String>) = (
        a.iter().map(|x| &x.0).collect(),
        b.iter().map(|x| &x.0).collect(),
    );
    let message = if na == nb {
        format!("a second connection sees the same {key} with different definitions")
    } else {
        format!("a second connection sees a different set of {key}")
    };
    Ok(Verdict::Fail {
        message,
        expected: Some(json!(na).to_string()),
        actual: Some(json!(nb).to_string()),
    })
}

async fn cache_scope(conn: &mut Connection, method: &str) -> Result<Verdict, String> {
    let mut scopes: Vec<Value> = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..10_000 {
        let params = cursor.take().map(|c| json!({ "cursor": c }));
        let result = conn.call(method, params).await?;
        scopes.push(result.get("cacheScope").cloned().unwrap_or(Value::Null));
        match result.get("nextCursor") {
            Some(c) if !c.is_null() => cursor = Some(c.clone()),
            _ => break,
        }
    }
    if scopes.len() < 2 {
        return Ok(Verdict::Skip(format!(
            "{method} returned a single page: nothing to compare"
        )));
    }
    if scopes.iter().all(|s| s == &scopes[0]) && !scopes[0].is_null() {
        return Ok(Verdict::Pass);
    }
    Ok(Verdict::Fail {
        message: format!("the pages of {method} do not all carry the same cacheScope"),
        expected: Some("one cacheScope on every page".into()),
        actual: Some(json!(scopes).to_string()),
    })
}

async fn stdout_clean(conn: &mut Connection, burst: usize) -> Result<Verdict, String> {
    let before = conn.stdout_noise_total();
    let Some(result) = conn.burst("tools/list", burst).await else {
        return Ok(Verdict::Skip(
            "stdout purity applies to the stdio transport".into(),
        ));
    };
    let (answered, noise) = result?;
    let total = conn.stdout_noise_total();
    if total == 0 && answered == burst {
        return Ok(Verdict::Pass);
    }
    if total > 0 {
        return Ok(Verdict::Fail {
            message: format!("the server wrote {total} non-JSON line(s) on stdout"),
            expected: Some("only JSON-RPC messages on stdout".into()),
            actual: noise
                .first()
                .cloned()
                .or_else(|| (before > 0).then(|| format!("{before} line(s) before this check"))),
        });
    }
    Ok(Verdict::Fail {
        message: format!("only {answered} of {burst} concurrent requests were answered"),
        expected: Some(format!("{burst} responses")),
        actual: Some(answered.to_string()),
    })
}

/// Connect in the legacy and the modern era (fresh connections to the same target) and
/// compare what each sees, reusing the contract snapshot and diff.
async fn cross_era(conn: &mut Connection, kind: CheckKind) -> Result<Verdict, String> {
    use crate::contract::{diff_snapshots, take_snapshot};
    use crate::era::{EraRequest, MODERN_REVISION};
    let target = conn.target().clone();
    let mut snaps = Vec::new();
    let mut failures = Vec::new();
    for (label, era) in [
        ("legacy", EraRequest::Legacy),
        (MODERN_REVISION, EraRequest::Modern(MODERN_REVISION.into())),
    ] {
        match Connection::open(&target, label, &era).await {
            Ok(mut c) => {
                let snap = take_snapshot(&mut c, None).await;
                c.close().await;
                match snap {
                    Ok(s) => snaps.push(s),
                    Err(e) => failures.push(format!("{label}: snapshot failed: {e}")),
                }
            }
            Err(e) => failures.push(format!("{label}: {}", e.message)),
        }
    }
    if kind == CheckKind::CrossEraConnect || !failures.is_empty() {
        return Ok(if failures.is_empty() {
            Verdict::Pass
        } else if kind == CheckKind::CrossEraConnect {
            Verdict::Fail {
                message: format!(
                    "the server does not connect in both eras: {}",
                    failures.join("; ")
                ),
                expected: Some("a connection in legacy and in 2026-07-28".into()),
                actual: Some(failures.join("\n")),
            }
        } else {
            Verdict::Skip(format!("not testable: {}", failures.join("; ")))
        });
    }
    let (legacy, modern) = (&snaps[0], &snaps[1]);
    let report = diff_snapshots(legacy, modern, ("legacy".into(), MODERN_REVISION.into()));
    let wanted = |c: &crate::contract::Change| match kind {
        CheckKind::CrossEraCapabilitiesMatch => {
            c.list == "server"
                && c.path
                    .as_deref()
                    .is_some_and(|p| p.starts_with("capabilities"))
        }
        _ => c.list != "server",
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
        return Ok(Verdict::Pass);
    }
    let what = if kind == CheckKind::CrossEraCapabilitiesMatch {
        "capabilities"
    } else {
        "lists"
    };
    Ok(Verdict::Fail {
        message: format!(
            "the legacy and modern eras see different {what} ({} difference(s), legacy → modern)",
            diffs.len()
        ),
        expected: Some("the same contract in both eras".into()),
        actual: Some(diffs.join("\n")),
    })
}

async fn auto_picks_modern(conn: &mut Connection) -> Result<Verdict, String> {
    use crate::era::{EraKind, EraRequest};
    let target = conn.target().clone();
    let c = Connection::open(&target, "auto", &EraRequest::Auto)
        .await
        .map_err(|e| format!("auto did not connect: {}", e.message))?;
    let picked = (
        c.negotiated.kind,
        c.negotiated.revision.clone(),
        c.negotiated.note.clone(),
    );
    c.close().await;
    if picked.0 == EraKind::Modern {
        return Ok(Verdict::Pass);
    }
    Ok(Verdict::Fail {
        message: format!(
            "auto picked legacy ({}) on a server that supports 2026-07-28",
            picked.1
        ),
        expected: Some("modern".into()),
        actual: picked.2,
    })
}

/// The wire violations recorded on this connection (see `crate::wire`): all of them, or
/// with a `method`, those in the responses to it (every page of a list method).
async fn wire_valid(conn: &mut Connection, method: &str) -> Result<Verdict, String> {
    let (checked, seen) = (conn.wire_log().checked, conn.wire_log().violations.len());
    if !method.is_empty() {
        match list_key_of(method) {
            Some(key) => conn.list_all(method, key).await.map(drop),
            None => conn.call(method, None).await.map(drop),
        }
        // An error answer is judged by its shape like any other response.
        .or_else(|e| {
            if conn.wire_log().checked > checked {
                Ok(())
            } else {
                Err(e)
            }
        })?;
    }
    let log = conn.wire_log();
    let (violations, messages) = if method.is_empty() {
        (&log.violations[..], log.checked)
    } else {
        (&log.violations[seen..], log.checked - checked)
    };
    let Some(first) = violations.first() else {
        return Ok(Verdict::Pass);
    };
    Ok(Verdict::Fail {
        message: format!(
            "{} wire violation(s) in {messages} message(s) from the server; first: {first}",
            violations.len(),
        ),
        expected: Some("every message valid against the schema of its revision".into()),
        actual: Some(
            violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    })
}

/// The list key of a paginated method, if it is one.
fn list_key_of(method: &str) -> Option<&'static str> {
    matches!(
        method,
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list"
    )
    .then(|| list_key(method))
}
/// The 2026-07-28 registry of deprecated features (`deprecated.mdx`, SEP-2596): the
/// feature's name, the revision that deprecated it and its earliest removal.
fn deprecation(feature: DeprecatedFeature) -> (&'static str, &'static str, &'static str) {
    const AFTER_2027: &str = "the first revision released on or after 2027-07-28";
    match feature {
        DeprecatedFeature::Sampling => ("Sampling", "2026-07-28", AFTER_2027),
        DeprecatedFeature::Roots => ("Roots", "2026-07-28", AFTER_2027),
        DeprecatedFeature::IncludeContext => (
            "the includeContext values thisServer and allServers",
            "2025-11-25",
            "no later than Sampling (the first revision released on or after 2027-07-28)",
        ),
        DeprecatedFeature::HttpSse => (
            "the HTTP+SSE transport",
            "2025-03-26",
            "three months after SEP-2596 reaches Final",
        ),
        DeprecatedFeature::DynamicClientRegistration => {
            ("Dynamic Client Registration", "2026-07-28", AFTER_2027)
        }
    }
}

/// How long the HTTP probes of deprecated transports and metadata wait at most.
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

async fn deprecated_feature_unused(
    conn: &mut Connection,
    feature: DeprecatedFeature,
) -> Result<Verdict, String> {
    let (name, since, removal) = deprecation(feature);
    let uses = |what: String, actual: Option<String>| Verdict::Fail {
        message: format!(
            "the server uses {name} (deprecated in {since}; earliest removal: {removal}): {what}"
        ),
        expected: Some(format!("no use of {name}")),
        actual,
    };
    let wait = conn.target().timeout.min(PROBE_WAIT);
    match feature {
        DeprecatedFeature::Sampling
        | DeprecatedFeature::Roots
        | DeprecatedFeature::IncludeContext => {
            // One more harmless request, so that server requests sent after the last
            // response (e.g. right after the handshake) have arrived and been answered.
            let flush = match conn.negotiated.kind {
                crate::era::EraKind::Legacy => "ping",
                crate::era::EraKind::Modern => "server/discover",
            };
            let _ = conn.call(flush, None).await;
            let method = match feature {
                DeprecatedFeature::Roots => "roots/list",
                _ => "sampling/createMessage",
            };
            let seen: Vec<&Value> = conn
                .server_requests()
                .iter()
                .filter(|r| r.get("method").and_then(Value::as_str) == Some(method))
                .filter(|r| {
                    feature != DeprecatedFeature::IncludeContext
                        || matches!(
                            r.pointer("/params/includeContext").and_then(Value::as_str),
                            Some("thisServer" | "allServers")
                        )
                })
                .collect();
            Ok(match seen.first() {
                None => Verdict::Pass,
                Some(first) => uses(
                    format!(
                        "it sent {} `{method}` request(s) on this connection",
                        seen.len()
                    ),
                    Some(crate::assert::compact(first, 500)),
                ),
            })
        }
        DeprecatedFeature::HttpSse => {
            let Some(probe) = conn.first_sse_event(wait).await else {
                return Ok(Verdict::Skip("applies to the HTTP transport".into()));
            };
            match probe {
                Ok((status, Some((event, data)))) if event == "endpoint" => Ok(uses(
                    format!(
                        "a GET on the endpoint opens an SSE stream whose first event is `endpoint` (HTTP {status})"
                    ),
                    Some(format!("event: endpoint, data: {data}")),
                )),
                Ok(_) | Err(crate::client::TransportError::Timeout(_)) => Ok(Verdict::Pass),
                Err(e) => Err(format!("GET on the endpoint: {e}")),
            }
        }
        DeprecatedFeature::DynamicClientRegistration => {
            const METADATA: &str = "/.well-known/oauth-authorization-server";
            let Some(probe) = conn.get_json(METADATA, wait).await else {
                return Ok(Verdict::Skip("applies to the HTTP transport".into()));
            };
            match probe.map_err(|e| format!("GET {METADATA}: {e}"))? {
                (200, Some(Value::Object(meta))) => Ok(match meta.get("registration_endpoint") {
                    Some(endpoint) => uses(
                        format!("{METADATA} advertises a registration_endpoint"),
                        Some(format!("registration_endpoint: {endpoint}")),
                    ),
                    None => Verdict::Pass,
                }),
                (status, _) => Ok(Verdict::Skip(format!(
                    "the server exposes no OAuth authorization server metadata ({METADATA}: HTTP {status}, no JSON object)"
                ))),
            }
        }
    }
}

/// A fresh legacy session, ended by DELETE, must answer further requests with 404.
async fn session_terminated_not_found(conn: &mut Connection) -> Result<Verdict, String> {
    if !conn.is_http() || conn.negotiated.kind != crate::era::EraKind::Legacy {
        return Ok(Verdict::Skip("applies to legacy sessions over HTTP".into()));
    }
    let target = conn.target().clone();
    let era = conn.era_request.clone();
    let label = conn.negotiated.requested.clone();
    let mut other = Connection::open(&target, &label, &era)
        .await
        .map_err(|e| format!("the second connection failed: {}", e.message))?;
    let verdict = terminated_probe(&mut other).await;
    for entry in other.take_log() {
        conn.note(format!(
            "second connection, {} {}{}",
            entry.direction,
            entry.http.map(|h| format!("[{h}] ")).unwrap_or_default(),
            crate::redact::shorten(&entry.body, 500)
        ));
    }
    other.close().await;
    verdict
}

async fn terminated_probe(other: &mut Connection) -> Result<Verdict, String> {
    if other.session_id().is_none() {
        return Ok(Verdict::Skip(
            "the server assigns no Mcp-Session-Id at initialize".into(),
        ));
    }
    let Some(deleted) = other.end_session().await else {
        return Ok(Verdict::Skip("no session to end".into()));
    };
    match deleted.map_err(|e| format!("DELETE of the session: {e}"))? {
        405 => {
            return Ok(Verdict::Skip(
                "the server does not let clients end sessions (DELETE answered 405)".into(),
            ));
        }
        200..=299 => {}
        status => {
            return Ok(Verdict::Fail {
                message: format!("the DELETE that ends the session answered HTTP {status}"),
                expected: Some("2xx (or 405 when clients may not end sessions)".into()),
                actual: Some(status.to_string()),
            });
        }
    }
    let id = other.next_id();
    let out = other.build_plain("ping", None, Some(id));
    let status = match other.send(&out).await {
        Ok(ex) => ex.http.map_or(0, |h| h.status),
        Err(e) => return Err(format!("a request on the terminated session: {e}")),
    };
    if status == 404 {
        return Ok(Verdict::Pass);
    }
    Ok(Verdict::Fail {
        message: format!(
            "a request on a terminated session answered HTTP {status}, not 404 (the client cannot tell it must re-initialize)"
        ),
        expected: Some("HTTP 404".into()),
        actual: Some(format!("HTTP {status}")),
    })
}
