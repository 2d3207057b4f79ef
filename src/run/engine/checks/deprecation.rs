//! Deprecation (`deprecated_feature_unused`): the server does not use a feature the
//! registry of deprecated features lists. The registry is data: `specs/deprecations.yaml`.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::Value;

use super::outcome::CheckOutcome;
use crate::language::dsl::document::check::DeprecatedFeature;
use crate::protocol::methods;
use crate::run::client::Connection;

/// How long the HTTP probes of deprecated transports and metadata wait at most.
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// One entry of the registry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Deprecation {
    feature: DeprecatedFeature,
    /// The feature's name in messages.
    name: String,
    /// The revision that deprecated it.
    deprecated_in: String,
    /// Its earliest removal.
    earliest_removal: String,
}

/// The registry, parsed once (a test holds it to one entry per feature).
static REGISTRY: LazyLock<Vec<Deprecation>> = LazyLock::new(|| {
    crate::ground::yaml::from_str(include_str!("../../../../specs/deprecations.yaml"))
        .expect("specs/deprecations.yaml parses (tested)")
});

fn deprecation(feature: DeprecatedFeature) -> &'static Deprecation {
    REGISTRY
        .iter()
        .find(|d| d.feature == feature)
        .expect("every deprecated feature is in the registry (tested)")
}

pub async fn deprecated_feature_unused(
    conn: &mut Connection,
    feature: DeprecatedFeature,
) -> Result<CheckOutcome, String> {
    let Deprecation {
        name,
        deprecated_in: since,
        earliest_removal: removal,
        ..
    } = deprecation(feature);
    let uses = |what: String, actual: Option<String>| {
        CheckOutcome::fail(
            format!(
                "the server uses {name} (deprecated in {since}; earliest removal: {removal}): {what}"
            ),
            format!("no use of {name}"),
            actual,
        )
    };
    let wait = conn.target().timeout.min(PROBE_WAIT);
    match feature {
        DeprecatedFeature::Sampling
        | DeprecatedFeature::Roots
        | DeprecatedFeature::IncludeContext => {
            // One more harmless request, so that server requests sent after the last
            // response (e.g. right after the handshake) have arrived and been answered.
            let flush = conn.harmless_method();
            let _ = conn.call(flush, None).await;
            let method = match feature {
                DeprecatedFeature::Roots => methods::ROOTS_LIST,
                _ => methods::SAMPLING_CREATE_MESSAGE,
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
                None => CheckOutcome::Pass,
                Some(first) => uses(
                    format!(
                        "it sent {} `{method}` request(s) on this connection",
                        seen.len()
                    ),
                    Some(crate::language::assert::compact(first, 500)),
                ),
            })
        }
        DeprecatedFeature::HttpSse => {
            let Some(probe) = conn.first_sse_event(wait).await else {
                return Ok(CheckOutcome::Skip("applies to the HTTP transport".into()));
            };
            match probe {
                Ok((status, Some((event, data)))) if event == "endpoint" => Ok(uses(
                    format!(
                        "a GET on the endpoint opens an SSE stream whose first event is `endpoint` (HTTP {status})"
                    ),
                    Some(format!("event: endpoint, data: {data}")),
                )),
                Ok(_) | Err(crate::run::client::TransportError::Timeout(_)) => {
                    Ok(CheckOutcome::Pass)
                }
                Err(e) => Err(format!("GET on the endpoint: {e}")),
            }
        }
        DeprecatedFeature::DynamicClientRegistration => {
            const METADATA: &str = "/.well-known/oauth-authorization-server";
            let Some(probe) = conn.get_json(METADATA, wait).await else {
                return Ok(CheckOutcome::Skip("applies to the HTTP transport".into()));
            };
            match probe.map_err(|e| format!("GET {METADATA}: {e}"))? {
                (200, Some(Value::Object(meta))) => Ok(match meta.get("registration_endpoint") {
                    Some(endpoint) => uses(
                        format!("{METADATA} advertises a registration_endpoint"),
                        Some(format!("registration_endpoint: {endpoint}")),
                    ),
                    None => CheckOutcome::Pass,
                }),
                (status, _) => Ok(CheckOutcome::Skip(format!(
                    "the server exposes no OAuth authorization server metadata ({METADATA}: HTTP {status}, no JSON object)"
                ))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every feature, by an exhaustive match: a new feature fails to compile here until
    /// it is listed, and then fails the test until the registry has it.
    fn every_feature() -> Vec<DeprecatedFeature> {
        use DeprecatedFeature as F;
        let all = [
            F::Sampling,
            F::Roots,
            F::IncludeContext,
            F::HttpSse,
            F::DynamicClientRegistration,
        ];
        for f in all {
            match f {
                F::Sampling
                | F::Roots
                | F::IncludeContext
                | F::HttpSse
                | F::DynamicClientRegistration => {}
            }
        }
        all.to_vec()
    }

    #[test]
    fn the_registry_has_one_entry_per_feature() {
        assert_eq!(REGISTRY.len(), every_feature().len());
        for feature in every_feature() {
            let entries = REGISTRY.iter().filter(|d| d.feature == feature).count();
            assert_eq!(entries, 1, "{feature:?}");
            let d = deprecation(feature);
            assert!(!d.name.is_empty() && !d.earliest_removal.is_empty());
            assert!(
                chrono::NaiveDate::parse_from_str(&d.deprecated_in, "%Y-%m-%d").is_ok(),
                "{feature:?}: revision {}",
                d.deprecated_in
            );
        }
        let include_context = deprecation(DeprecatedFeature::IncludeContext);
        assert_eq!(include_context.deprecated_in, "2025-11-25");
    }
}
