//! The built-in checks (`check: { kind: … }`): one file per family, one outcome type
//! ([`CheckOutcome`]), one exhaustive dispatch ([`run`]) from the DSL's [`CheckKind`].
//!
//! Adding a check (the recipe, also on [`CheckKind`]):
//! 1. a variant of [`CheckKind`] (`src/language/dsl/document`), with a doc line: its YAML name is
//!    the variant in snake_case, and the JSON Schema and `validate` list it from there
//!    (the parameters it reads go in `CheckKind::parameters`);
//! 2. a function in its family's file here (or a new file for a new family) returning
//!    `Result<CheckOutcome, String>` (`Err`: the check could not run);
//! 3. its arm in [`run`] (the match is exhaustive: the compiler asks for it);
//! 4. a YAML step that uses it in a pack under `specs/` or a test scenario, run against a
//!    server with and without the defect it finds (`examples/server --defect`).
//!
//! Families depend on [`outcome`], [`calls`] (tool calling), `engine::security` (the
//! unauthenticated probe) and `engine::tasks` (a task carried to its end), never on each
//! other or on the step runner; the step runner reaches them only through [`run`].

mod asks;
mod auth;
mod auth_flow;
mod calls;
mod cross_era;
mod deprecation;
mod exposure;
mod handles;
mod injection;
mod invalid_request;
mod lists;
mod logging;
mod outcome;
mod parse_error;
mod prompts;
mod rate_limit;
mod sessions;
mod streams;
mod subscriptions;
mod tasks;
mod tool_calls;
mod wire;

pub use calls::ToolCalls;
pub use outcome::CheckOutcome;

use serde_json::{Map, Value};

use self::calls::CallCtx;
use self::cross_era::Compare;
use super::failure::{outcome_for, step_failure};
use super::security::AuthProbe;
use crate::language::dsl::Step;
use crate::language::dsl::document::check::CheckKind;
use crate::language::dsl::scenario::CheckOptions;
use crate::protocol::ListKind;
use crate::results::outcome::Finding;
use crate::results::outcome::Outcome;
use crate::run::client::Connection;

/// At most this many findings are reported per step (the rest are counted).
const MAX_FINDINGS: usize = 20;

/// What the built-in checks keep across the steps of a scenario: the unauthenticated probe
/// (per connection), the parse-error probe (its three checks judge one probe) and the
/// run's shared tool calls.
pub struct CheckState<'a> {
    pub auth: AuthProbe,
    pub parse_probe: Option<Result<parse_error::ParseProbe, String>>,
    /// The invalid-request probe (its check and the undeclared-logging judgement share it).
    pub invalid_probe: Option<Result<invalid_request::InvalidProbe, String>>,
    pub calls: &'a ToolCalls,
    /// Where a check gets a connection besides its own (warm when one is idle).
    pub pool: &'a super::pool::Pool,
    /// The run's golden-response sink (`snapshot` expectations of any step).
    pub snapshots: std::sync::Arc<crate::language::assert::golden::Snapshots>,
}

/// What a check step has to work with besides the connection.
pub struct CheckInput<'a> {
    /// The list method it applies to (`wire_valid`: any method, or none).
    pub method: &'a str,
    pub options: &'a CheckOptions,
    /// The scenario's variables (tool-calling checks read their settings there).
    pub vars: &'a Map<String, Value>,
    /// The run's parameters (`--set`, the pack's).
    pub params: &'a Map<String, Value>,
}

/// Run the built-in check `kind` and judge what it concludes: pass, skip, findings
/// (failed, or warnings for `level: should`) or an error when it could not run.
pub async fn run(
    step: &Step,
    conn: &mut Connection,
    kind: CheckKind,
    input: &CheckInput<'_>,
    state: &mut CheckState<'_>,
) -> Outcome {
    let CheckInput {
        method,
        options,
        vars,
        params,
    } = *input;
    // The loader admits list methods only (`wire_valid` aside, which reads `method` itself).
    let list = ListKind::from_method(method).unwrap_or(ListKind::Tools);
    let timeout = step.timeout.unwrap_or(conn.target().timeout);
    let calls = state.calls;
    let tools = || CallCtx::new(options, vars, timeout, calls);
    let result = async {
        use CheckKind as K;
        match kind {
            K::ListDeterministic => lists::deterministic(conn, list).await,
            K::ListStableAcrossConnections => {
                lists::across_connections(conn, list, state.pool).await
            }
            K::CacheScopeConsistentAcrossPages => lists::cache_scope(conn, list).await,
            K::StdoutClean => wire::stdout_clean(conn, options.count).await,
            K::WireValid => wire::wire_valid(conn, method).await,
            K::CrossEraConnect => cross_era::cross_era(conn, Compare::Connect, state.pool).await,
            K::CrossEraListsMatch => cross_era::cross_era(conn, Compare::Lists, state.pool).await,
            K::CrossEraCapabilitiesMatch => {
                cross_era::cross_era(conn, Compare::Capabilities, state.pool).await
            }
            K::AutoPicksModern => cross_era::auto_picks_modern(conn, state.pool).await,
            K::EndpointRequiresAuth => auth::endpoint_requires_auth(conn, &mut state.auth).await,
            K::ResourceMetadataServed => auth_flow::resource_metadata_served(conn).await,
            K::AuthorizationServerMetadataValid => {
                auth_flow::authorization_server(conn, auth_flow::ServerCheck::Valid).await
            }
            K::PkceS256Advertised => {
                auth_flow::authorization_server(conn, auth_flow::ServerCheck::PkceS256).await
            }
            K::OtherResourceTokenRejected => auth_flow::other_resource_token_rejected(conn).await,
            K::ExpiredTokenRefused => auth_flow::expired_token_refused(conn).await,
            K::InsufficientScopeStepUp => auth_flow::insufficient_scope_step_up(conn, params).await,
            K::QueryTokenRejected => auth_flow::query_token_rejected(conn).await,
            K::RateLimit => rate_limit::rate_limit(conn, params).await,
            K::ForeignHostRejected => exposure::foreign_host_rejected(conn).await,
            K::ForeignOriginRefused => exposure::foreign_origin_refused(conn).await,
            K::DeprecatedFeatureUnused => match options.feature {
                Some(feature) => deprecation::deprecated_feature_unused(conn, feature).await,
                None => Err("`deprecated_feature_unused` needs a `feature`".into()),
            },
            K::SessionTerminatedNotFound => sessions::session_terminated_not_found(conn).await,
            K::ListenAcknowledged
            | K::ListenDeliversListChanged
            | K::ListenOnlyRequested
            | K::ListenEndsOnCancel => subscriptions::run(conn, kind, params).await,
            K::ToolInputErrorsAreResults => {
                tool_calls::input_errors_are_results(conn, &tools()?).await
            }
            K::ToolOutputSchema => tool_calls::output(conn, &tools()?, false).await,
            K::ToolOutputText => tool_calls::output(conn, &tools()?, true).await,
            K::ToolInputFuzz => tool_calls::fuzz(conn, &tools()?).await,
            K::HandlesUnguessable => handles::unguessable(conn, &tools()?).await,
            K::HandleBinding => handles::binding(conn, &tools()?).await,
            K::DescriptionInjection => injection::descriptions(conn, &tools()?).await,
            K::ResultInjection => injection::results(conn, &tools()?).await,
            K::ParseErrorAnswered | K::ParseErrorIdNull | K::ParseErrorSurvived => {
                if state.parse_probe.is_none() {
                    state.parse_probe = Some(parse_error::probe(conn, state.pool).await);
                }
                match state.parse_probe.as_ref() {
                    Some(Ok(probe)) => Ok(match kind {
                        K::ParseErrorAnswered => parse_error::answered(probe),
                        K::ParseErrorIdNull => parse_error::id_null(probe),
                        _ => parse_error::survived(probe),
                    }),
                    Some(Err(e)) => Err(e.clone()),
                    None => unreachable!("the probe was just run"),
                }
            }
            K::InvalidRequestAnswered => {
                if state.invalid_probe.is_none() {
                    state.invalid_probe =
                        Some(invalid_request::invalid_request_probe(conn, state.pool).await);
                }
                match state.invalid_probe.as_ref() {
                    Some(Ok(probe)) => Ok(invalid_request::invalid_request_answered(probe)),
                    Some(Err(e)) => Err(e.clone()),
                    None => unreachable!("the probe was just run"),
                }
            }
            K::LogMessagesAbsent => {
                // Malformed input is provoked too (the parse-error and invalid-request
                // probes, each on a connection of its own): what a server sends there is
                // judged like the rest.
                if state.parse_probe.is_none() {
                    state.parse_probe = Some(parse_error::probe(conn, state.pool).await);
                }
                if state.invalid_probe.is_none() {
                    state.invalid_probe =
                        Some(invalid_request::invalid_request_probe(conn, state.pool).await);
                }
                let probed = [
                    logging::Probed {
                        during: "a request cut short (not JSON), on the parse-error probe's connection",
                        logs: match state.parse_probe.as_ref() {
                            Some(Ok(probe)) => Ok(probe.logs()),
                            Some(Err(e)) => Err(e.as_str()),
                            None => unreachable!("the probe was just run"),
                        },
                    },
                    logging::Probed {
                        during: "invalid requests (JSON, no valid Request object), on the invalid-request probe's connection",
                        logs: match state.invalid_probe.as_ref() {
                            Some(Ok(probe)) => Ok(probe.logs()),
                            Some(Err(e)) => Err(e.as_str()),
                            None => unreachable!("the probe was just run"),
                        },
                    },
                ];
                let others = state.pool.seen_in(conn.negotiated.kind);
                logging::log_messages_absent(conn, &tools()?, &probed, &others).await
            }
            K::UndeclaredNotificationsAbsent => Ok(logging::undeclared_notifications_absent(
                conn,
                &state.pool.seen_in(conn.negotiated.kind),
            )),
            K::AsksOnlyDeclared => asks::asks_only_declared(conn, &tools()?).await,
            K::ElicitationSchemaRestricted => {
                asks::elicitation_schema_restricted(conn, &tools()?).await
            }
            K::DeclinedElicitationAnswered => {
                asks::declined_elicitation_answered(conn, &tools()?).await
            }
            K::ExtraResponsesIgnored => asks::extra_responses_ignored(conn, &tools()?).await,
            K::RequestStateTamperedRefused => {
                asks::request_state_tampered_refused(conn, &tools()?).await
            }
            K::TaskStatusForward => tasks::task_status_forward(conn, &tools()?).await,
            K::SsePrimingEvent => streams::sse_priming_event(conn).await,
            K::PromptMissingArgumentRejected => prompts::missing_argument_rejected(conn).await,
        }
    }
    .await;
    match result {
        Ok(CheckOutcome::Pass) => Outcome::Passed,
        Ok(CheckOutcome::Skip(reason)) => Outcome::Skipped { reason },
        Ok(CheckOutcome::Fail(found)) => {
            let total = found.len();
            let mut failures: Vec<_> = found
                .into_iter()
                .take(MAX_FINDINGS)
                .map(|f| step_failure(step, "check", f))
                .collect();
            if total > MAX_FINDINGS {
                failures.push(step_failure(
                    step,
                    "check",
                    Finding::message(format!("… and {} more finding(s)", total - MAX_FINDINGS)),
                ));
            }
            outcome_for(step, failures)
        }
        Err(message) => {
            // A check that calls tools may have made the server fail: its last words.
            let tail = if kind.calls_tools() {
                conn.stderr_tail().await
            } else {
                None
            };
            Outcome::Error {
                message,
                detail: tail.map(|t| format!("server stderr (last lines):\n{t}")),
            }
        }
    }
}
