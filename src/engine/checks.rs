//! Built-in checks that need more than one request: two traversals of a list, a
//! second connection, every page of a list, stdout purity under load.

use serde_json::{Value, json};

use crate::client::Connection;
use crate::dsl::Step;
use crate::dsl::model::CheckKind;
use crate::report::model::Outcome;

/// Requests in the `stdout_clean` burst.
const BURST: usize = 32;

pub async fn run_check(
    step: &Step,
    conn: &mut Connection,
    kind: CheckKind,
    method: &str,
) -> Outcome {
    let key = list_key(method);
    let result = match kind {
        CheckKind::ListDeterministic => deterministic(conn, method, key).await,
        CheckKind::ListStableAcrossConnections => across_connections(conn, method, key).await,
        CheckKind::CacheScopeConsistentAcrossPages => cache_scope(conn, method).await,
        CheckKind::StdoutClean => stdout_clean(conn).await,
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

enum Verdict {
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

async fn stdout_clean(conn: &mut Connection) -> Result<Verdict, String> {
    let before = conn.stdout_noise_total();
    let Some(result) = conn.burst("tools/list", BURST).await else {
        return Ok(Verdict::Skip(
            "stdout purity applies to the stdio transport".into(),
        ));
    };
    let (answered, noise) = result?;
    let total = conn.stdout_noise_total();
    if total == 0 && answered == BURST {
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
        message: format!("only {answered} of {BURST} concurrent requests were answered"),
        expected: Some(format!("{BURST} responses")),
        actual: Some(answered.to_string()),
    })
}
