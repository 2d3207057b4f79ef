//! Every defect's name, scope and description (`--help`, `--defect NAME`), and how a
//! flag's text becomes a [`Defect`].

mod conformance_features;
mod conformance_wire;

use std::str::FromStr;

use super::{Defect, DefectInfo, Scope, parse_code};

use conformance_features::FEATURES;
use conformance_wire::{HTTP, MESSAGES};

/// The transport faults: crashes, hangs, stray output, a required token.
const FAULTS: &[DefectInfo] = &[
    DefectInfo {
        name: "crash-on-call",
        value: None,
        scope: Scope::Any,
        description: "any tools/call exits the process (code 3) without replying",
    },
    DefectInfo {
        name: "crash-after-calls",
        value: Some("N"),
        scope: Scope::Any,
        description: "the Nth tools/call of the process (and any later one) exits it (code 3) without replying",
    },
    DefectInfo {
        name: "hang-on-call",
        value: None,
        scope: Scope::Any,
        description: "tools/call never replies; other requests still work",
    },
    DefectInfo {
        name: "garbage-stdout",
        value: None,
        scope: Scope::Stdio,
        description: "write the non-JSON line `DEBUG: handling request` before every stdout line",
    },
    DefectInfo {
        name: "wrong-id",
        value: None,
        scope: Scope::Any,
        description: "responses to tools/call carry another id (number+1000 or \"wrong-<id>\")",
    },
    DefectInfo {
        name: "oversized-reply",
        value: None,
        scope: Scope::Any,
        description: "tools/call returns a 40 MiB text content",
    },
    DefectInfo {
        name: "exit-at-start",
        value: None,
        scope: Scope::Any,
        description: "print `fatal: config file missing` to stderr and exit 1 before serving",
    },
    DefectInfo {
        name: "require-token",
        value: Some("TOKEN"),
        scope: Scope::Http,
        description: "requests without `Authorization: Bearer TOKEN` get 401 + WWW-Authenticate",
    },
];

/// Misses seen on third-party servers (issue 27).
const MISSES: &[DefectInfo] = &[
    DefectInfo {
        name: "parse-error",
        value: Some("MODE"),
        scope: Scope::Any,
        description: "a message that is not JSON: `silent` (stdio: no answer; HTTP: 400 text/plain), `invented-id` (the -32700 error has id 0) `fatal` (answered, then stdio input is dropped / every HTTP request gets 503), or `late`, not a defect (stdio: answered after the answer to the next request; HTTP: as the clean server)",
    },
    DefectInfo {
        name: "undeclared-logging",
        value: None,
        scope: Scope::Any,
        description: "tools/list sends a notifications/message without the `logging` capability declared",
    },
    DefectInfo {
        name: "log-after-malformed",
        value: None,
        scope: Scope::Stdio,
        description: "a line that is not JSON gets a notifications/message (then its -32700) without the `logging` capability declared",
    },
    DefectInfo {
        name: "log-after-invalid-request",
        value: None,
        scope: Scope::Stdio,
        description: "a request without `jsonrpc` gets a notifications/message (then its answer) without the `logging` capability declared",
    },
    DefectInfo {
        name: "log-on-read",
        value: None,
        scope: Scope::Any,
        description: "resources/read (found or not) sends a notifications/message with its answer without the `logging` capability declared",
    },
    DefectInfo {
        name: "notify-undeclared",
        value: None,
        scope: Scope::Any,
        description: "legacy era: resources/read (found or not) sends notifications/tools/list_changed and notifications/resources/updated without `tools.listChanged` nor `resources.subscribe` declared",
    },
    DefectInfo {
        name: "invalid-request-ignored",
        value: None,
        scope: Scope::Stdio,
        description: "JSON that is no valid Request (no `jsonrpc: \"2.0\"`, a method that is no string, an object id) is dropped unanswered, not -32600",
    },
    DefectInfo {
        name: "prompt-missing-argument-served",
        value: None,
        scope: Scope::Any,
        description: "prompts/get without a required argument is served (the argument empty), not -32602",
    },
    DefectInfo {
        name: "malformed-call-internal-error",
        value: None,
        scope: Scope::Any,
        description: "tools/call whose params fail the CallToolRequest schema (e.g. no `name`) gets -32603, not -32602",
    },
    DefectInfo {
        name: "no-sse-priming",
        value: None,
        scope: Scope::Http,
        description: "SSE streams answering a POST lack the priming event (an event id and empty data)",
    },
    DefectInfo {
        name: "get-stream-garbage",
        value: None,
        scope: Scope::Http,
        description: "the GET stream of a session sends an event whose data is not JSON-RPC",
    },
];

/// `parts` one after another, as one array of `N` (their total length).
const fn concat<const N: usize>(parts: &[&[DefectInfo]]) -> [DefectInfo; N] {
    let mut out = [parts[0][0]; N];
    let (mut part, mut at) = (0, 0);
    while part < parts.len() {
        let mut i = 0;
        while i < parts[part].len() {
            out[at] = parts[part][i];
            at += 1;
            i += 1;
        }
        part += 1;
    }
    assert!(at == N, "N is the parts' total length");
    out
}

impl Defect {
    /// Every defect, in the order `--help` lists them: the transport faults, the
    /// conformance defects (one broken rule of the built-in conformance packs each), the
    /// misses seen on third-party servers.
    pub const CATALOG: &'static [DefectInfo] = &concat::<
        { FAULTS.len() + MESSAGES.len() + HTTP.len() + FEATURES.len() + MISSES.len() },
    >(&[FAULTS, MESSAGES, HTTP, FEATURES, MISSES]);

    pub fn name(&self) -> &'static str {
        match self {
            Defect::CrashOnCall => "crash-on-call",
            Defect::CrashAfterCalls(_) => "crash-after-calls",
            Defect::HangOnCall => "hang-on-call",
            Defect::GarbageStdout => "garbage-stdout",
            Defect::WrongId => "wrong-id",
            Defect::OversizedReply => "oversized-reply",
            Defect::ExitAtStart => "exit-at-start",
            Defect::RequireToken(_) => "require-token",
            Defect::NoResultType => "no-result-type",
            Defect::NoCacheHints => "no-cache-hints",
            Defect::NoServerInfoMeta => "no-server-info-meta",
            Defect::NoServerInfo => "no-server-info",
            Defect::NoCapabilities => "no-capabilities",
            Defect::BadCounterOffer => "bad-counter-offer",
            Defect::ErrorWrongId => "error-wrong-id",
            Defect::RewriteErrorCode(..) => "rewrite-error-code",
            Defect::ResourceNotFoundEmpty => "resource-not-found-empty",
            Defect::AcceptUnsupportedVersion => "accept-unsupported-version",
            Defect::AcceptMissingClientCapabilities => "accept-missing-client-capabilities",
            Defect::RequireClientInfo => "require-client-info",
            Defect::NoPing => "no-ping",
            Defect::UnknownToolIsError => "unknown-tool-is-error",
            Defect::UnknownMethodInvalidRequest => "unknown-method-invalid-request",
            Defect::UnstableToolOrder => "unstable-tool-order",
            Defect::ToolsVaryByConnection => "tools-vary-by-connection",
            Defect::DescriptionVariesByConnection => "description-varies-by-connection",
            Defect::MixedCacheScope => "mixed-cache-scope",
            Defect::UndeclaredCapability(_) => "undeclared-capability",
            Defect::UnservedCapability(_) => "unserved-capability",
            Defect::BadToolName => "bad-tool-name",
            Defect::DuplicateToolName => "duplicate-tool-name",
            Defect::InvalidInputSchema => "invalid-input-schema",
            Defect::InputSchemaNotObject => "input-schema-not-object",
            Defect::InvalidOutputSchema => "invalid-output-schema",
            Defect::OutputSchemaNotObject => "output-schema-not-object",
            Defect::IgnoreInvalidCursor => "ignore-invalid-cursor",
            Defect::DeclareLogging => "declare-logging",
            Defect::LenientHeader(_) => "lenient-header",
            Defect::ErrorHttp200(_) => "error-http-200",
            Defect::MintSessionId => "mint-session-id",
            Defect::AnswerNotifications => "answer-notifications",
            Defect::SessionIdWithSpace => "session-id-with-space",
            Defect::AllowAnyOrigin => "allow-any-origin",
            Defect::OriginRefused400 => "origin-refused-400",
            Defect::WireToolsMissingInputSchema => "wire-tools-missing-input-schema",
            Defect::WireListItemMissingName => "wire-list-item-missing-name",
            Defect::WireWrongTypeContent => "wire-wrong-type-content",
            Defect::WireErrorCodeString => "wire-error-code-string",
            Defect::AllowForeignHost => "allow-foreign-host",
            Defect::AuthAnyToken => "auth-any-token",
            Defect::AuthIgnoreAudience => "auth-ignore-audience",
            Defect::AuthIgnoreExpiry => "auth-ignore-expiry",
            Defect::AuthAlgNone => "auth-alg-none",
            Defect::AuthNoChallenge => "auth-no-challenge",
            Defect::AuthNoResourceMetadata => "auth-no-resource-metadata",
            Defect::AuthMetadataOffWellKnown => "auth-metadata-off-well-known",
            Defect::AuthServerNoPkce => "auth-server-no-pkce",
            Defect::AuthServerIncomplete => "auth-server-incomplete",
            Defect::AuthScope401 => "auth-scope-401",
            Defect::AuthQueryToken => "auth-query-token",
            Defect::CrashOnWrongType => "crash-on-wrong-type",
            Defect::HangOnOversized => "hang-on-oversized",
            Defect::IgnoreInputSchema => "ignore-input-schema",
            Defect::ValidationProtocolError => "validation-protocol-error",
            Defect::StructuredContentMismatch => "structured-content-mismatch",
            Defect::NoStructuredText => "no-structured-text",
            Defect::SequentialHandles => "sequential-handles",
            Defect::InjectedDescription(_) => "injected-description",
            Defect::InjectedResult => "injected-result",
            Defect::UnboundHandles => "unbound-handles",
            Defect::AnswerRemovedMethods => "answer-removed-methods",
            Defect::ServeLegacyHttp => "serve-legacy-http",
            Defect::SessionOptional => "session-optional",
            Defect::TerminatedSession400 => "terminated-session-400",
            Defect::ServerRequest(_) => "server-request",
            Defect::LegacySseEndpoint => "legacy-sse-endpoint",
            Defect::DynamicClientRegistration => "dynamic-client-registration",
            Defect::CloseAfterResponse => "close-after-response",
            Defect::LegacyOnly => "legacy-only",
            Defect::Host421 => "host-421",
            Defect::InitializeInvalidParams => "initialize-invalid-params",
            Defect::ErrorIdNull => "error-id-null",
            Defect::LeakSecret(_) => "leak-secret",
            Defect::ProgressWrongToken => "progress-wrong-token",
            Defect::LogWithoutLevel => "log-without-level",
            Defect::LogLevelIgnored => "log-level-ignored",
            Defect::CompletionOverLimit => "completion-over-limit",
            Defect::MissingCapabilityOldCode => "missing-capability-old-code",
            Defect::InputRequiredEmpty => "input-required-empty",
            Defect::InputRequiredUnanswered => "input-required-unanswered",
            Defect::AsksUndeclared => "asks-undeclared",
            Defect::AsksForever => "asks-forever",
            Defect::AsksHugeSchema => "asks-huge-schema",
            Defect::AsksNestedSchema => "asks-nested-schema",
            Defect::DeclinedIsError => "declined-is-error",
            Defect::ExtraResponseBreaks => "extra-response-breaks",
            Defect::TrustsRequestState => "trusts-request-state",
            Defect::TaskStatusRegresses => "task-status-regresses",
            Defect::SubscribeRefused => "subscribe-refused",
            Defect::UnrequestedListChanged => "unrequested-list-changed",
            Defect::SetLevelRefused => "set-level-refused",
            Defect::SlowReadTool(_) => "slow-read-tool",
            Defect::FlakyOnePercent => "flaky-one-percent",
            Defect::ListenNoAck => "listen-no-ack",
            Defect::UnknownMethodSilent => "unknown-method-silent",
            Defect::IgnoreBeforeInitialize => "ignore-before-initialize",
            Defect::ExitOnDiscover => "exit-on-discover",
            Defect::ListenUnrequested => "listen-unrequested",
            Defect::ListenIgnoresCancel => "listen-ignores-cancel",
            Defect::ListChangedNeverSent => "list-changed-never-sent",
            Defect::ProgressDecreasing => "progress-decreasing",
            Defect::ListenNoSubscriptionId => "listen-no-subscription-id",
            Defect::ParseError(_) => "parse-error",
            Defect::UndeclaredLogging => "undeclared-logging",
            Defect::LogAfterMalformed => "log-after-malformed",
            Defect::LogAfterInvalidRequest => "log-after-invalid-request",
            Defect::LogOnRead => "log-on-read",
            Defect::NotifyUndeclared => "notify-undeclared",
            Defect::InvalidRequestIgnored => "invalid-request-ignored",
            Defect::PromptMissingArgumentServed => "prompt-missing-argument-served",
            Defect::MalformedCallInternalError => "malformed-call-internal-error",
            Defect::NoSsePriming => "no-sse-priming",
            Defect::GetStreamGarbage => "get-stream-garbage",
        }
    }

    /// The defect named `name`; `value` is present exactly when the catalog wants one.
    fn from_name(name: &str, value: Option<&str>) -> Result<Self, String> {
        let value = || value.ok_or_else(|| format!("defect `{name}` needs a value"));
        Ok(match name {
            "crash-on-call" => Defect::CrashOnCall,
            "crash-after-calls" => Defect::CrashAfterCalls(
                value()?
                    .parse::<u32>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| "expected a count of at least 1".to_owned())?,
            ),
            "hang-on-call" => Defect::HangOnCall,
            "garbage-stdout" => Defect::GarbageStdout,
            "wrong-id" => Defect::WrongId,
            "oversized-reply" => Defect::OversizedReply,
            "exit-at-start" => Defect::ExitAtStart,
            "require-token" => Defect::RequireToken(value()?.to_owned()),
            "no-result-type" => Defect::NoResultType,
            "no-cache-hints" => Defect::NoCacheHints,
            "no-server-info-meta" => Defect::NoServerInfoMeta,
            "no-server-info" => Defect::NoServerInfo,
            "no-capabilities" => Defect::NoCapabilities,
            "bad-counter-offer" => Defect::BadCounterOffer,
            "error-wrong-id" => Defect::ErrorWrongId,
            "rewrite-error-code" => {
                let value = value()?;
                let (from, to) = value
                    .split_once(':')
                    .ok_or_else(|| format!("`{value}`: expected FROM:TO, e.g. -32602:-32002"))?;
                Defect::RewriteErrorCode(parse_code(from)?, parse_code(to)?)
            }
            "resource-not-found-empty" => Defect::ResourceNotFoundEmpty,
            "accept-unsupported-version" => Defect::AcceptUnsupportedVersion,
            "accept-missing-client-capabilities" => Defect::AcceptMissingClientCapabilities,
            "require-client-info" => Defect::RequireClientInfo,
            "no-ping" => Defect::NoPing,
            "unknown-tool-is-error" => Defect::UnknownToolIsError,
            "unknown-method-invalid-request" => Defect::UnknownMethodInvalidRequest,
            "unstable-tool-order" => Defect::UnstableToolOrder,
            "tools-vary-by-connection" => Defect::ToolsVaryByConnection,
            "description-varies-by-connection" => Defect::DescriptionVariesByConnection,
            "mixed-cache-scope" => Defect::MixedCacheScope,
            "undeclared-capability" => Defect::UndeclaredCapability(value()?.parse()?),
            "unserved-capability" => Defect::UnservedCapability(value()?.parse()?),
            "bad-tool-name" => Defect::BadToolName,
            "duplicate-tool-name" => Defect::DuplicateToolName,
            "invalid-input-schema" => Defect::InvalidInputSchema,
            "input-schema-not-object" => Defect::InputSchemaNotObject,
            "invalid-output-schema" => Defect::InvalidOutputSchema,
            "output-schema-not-object" => Defect::OutputSchemaNotObject,
            "ignore-invalid-cursor" => Defect::IgnoreInvalidCursor,
            "declare-logging" => Defect::DeclareLogging,
            "lenient-header" => Defect::LenientHeader(value()?.parse()?),
            "error-http-200" => Defect::ErrorHttp200(parse_code(value()?)?),
            "mint-session-id" => Defect::MintSessionId,
            "answer-notifications" => Defect::AnswerNotifications,
            "session-id-with-space" => Defect::SessionIdWithSpace,
            "allow-any-origin" => Defect::AllowAnyOrigin,
            "origin-refused-400" => Defect::OriginRefused400,
            "wire-tools-missing-input-schema" => Defect::WireToolsMissingInputSchema,
            "wire-list-item-missing-name" => Defect::WireListItemMissingName,
            "wire-wrong-type-content" => Defect::WireWrongTypeContent,
            "wire-error-code-string" => Defect::WireErrorCodeString,
            "allow-foreign-host" => Defect::AllowForeignHost,
            "auth-any-token" => Defect::AuthAnyToken,
            "auth-ignore-audience" => Defect::AuthIgnoreAudience,
            "auth-ignore-expiry" => Defect::AuthIgnoreExpiry,
            "auth-alg-none" => Defect::AuthAlgNone,
            "auth-no-challenge" => Defect::AuthNoChallenge,
            "auth-no-resource-metadata" => Defect::AuthNoResourceMetadata,
            "auth-metadata-off-well-known" => Defect::AuthMetadataOffWellKnown,
            "auth-server-no-pkce" => Defect::AuthServerNoPkce,
            "auth-server-incomplete" => Defect::AuthServerIncomplete,
            "auth-scope-401" => Defect::AuthScope401,
            "auth-query-token" => Defect::AuthQueryToken,
            "crash-on-wrong-type" => Defect::CrashOnWrongType,
            "hang-on-oversized" => Defect::HangOnOversized,
            "ignore-input-schema" => Defect::IgnoreInputSchema,
            "validation-protocol-error" => Defect::ValidationProtocolError,
            "structured-content-mismatch" => Defect::StructuredContentMismatch,
            "no-structured-text" => Defect::NoStructuredText,
            "sequential-handles" => Defect::SequentialHandles,
            "injected-description" => Defect::InjectedDescription(value()?.parse()?),
            "injected-result" => Defect::InjectedResult,
            "unbound-handles" => Defect::UnboundHandles,
            "answer-removed-methods" => Defect::AnswerRemovedMethods,
            "serve-legacy-http" => Defect::ServeLegacyHttp,
            "session-optional" => Defect::SessionOptional,
            "terminated-session-400" => Defect::TerminatedSession400,
            "server-request" => Defect::ServerRequest(value()?.parse()?),
            "legacy-sse-endpoint" => Defect::LegacySseEndpoint,
            "dynamic-client-registration" => Defect::DynamicClientRegistration,
            "close-after-response" => Defect::CloseAfterResponse,
            "legacy-only" => Defect::LegacyOnly,
            "host-421" => Defect::Host421,
            "initialize-invalid-params" => Defect::InitializeInvalidParams,
            "error-id-null" => Defect::ErrorIdNull,
            "leak-secret" => Defect::LeakSecret(match value()?.strip_prefix("env:") {
                Some(var) => std::env::var(var)
                    .map_err(|_| format!("leak-secret=env:{var}: the variable is not set"))?,
                None => value()?.to_owned(),
            }),
            "progress-wrong-token" => Defect::ProgressWrongToken,
            "log-without-level" => Defect::LogWithoutLevel,
            "log-level-ignored" => Defect::LogLevelIgnored,
            "completion-over-limit" => Defect::CompletionOverLimit,
            "missing-capability-old-code" => Defect::MissingCapabilityOldCode,
            "input-required-empty" => Defect::InputRequiredEmpty,
            "input-required-unanswered" => Defect::InputRequiredUnanswered,
            "asks-undeclared" => Defect::AsksUndeclared,
            "asks-forever" => Defect::AsksForever,
            "asks-huge-schema" => Defect::AsksHugeSchema,
            "asks-nested-schema" => Defect::AsksNestedSchema,
            "declined-is-error" => Defect::DeclinedIsError,
            "extra-response-breaks" => Defect::ExtraResponseBreaks,
            "trusts-request-state" => Defect::TrustsRequestState,
            "task-status-regresses" => Defect::TaskStatusRegresses,
            "subscribe-refused" => Defect::SubscribeRefused,
            "unrequested-list-changed" => Defect::UnrequestedListChanged,
            "set-level-refused" => Defect::SetLevelRefused,
            "slow-read-tool" => Defect::SlowReadTool(
                value()?
                    .parse()
                    .map_err(|e| format!("expected whole seconds: {e}"))?,
            ),
            "flaky-one-percent" => Defect::FlakyOnePercent,
            "listen-no-ack" => Defect::ListenNoAck,
            "unknown-method-silent" => Defect::UnknownMethodSilent,
            "ignore-before-initialize" => Defect::IgnoreBeforeInitialize,
            "exit-on-discover" => Defect::ExitOnDiscover,
            "listen-unrequested" => Defect::ListenUnrequested,
            "listen-ignores-cancel" => Defect::ListenIgnoresCancel,
            "list-changed-never-sent" => Defect::ListChangedNeverSent,
            "progress-decreasing" => Defect::ProgressDecreasing,
            "listen-no-subscription-id" => Defect::ListenNoSubscriptionId,
            "parse-error" => Defect::ParseError(value()?.parse()?),
            "undeclared-logging" => Defect::UndeclaredLogging,
            "log-after-malformed" => Defect::LogAfterMalformed,
            "log-after-invalid-request" => Defect::LogAfterInvalidRequest,
            "log-on-read" => Defect::LogOnRead,
            "notify-undeclared" => Defect::NotifyUndeclared,
            "invalid-request-ignored" => Defect::InvalidRequestIgnored,
            "prompt-missing-argument-served" => Defect::PromptMissingArgumentServed,
            "malformed-call-internal-error" => Defect::MalformedCallInternalError,
            "no-sse-priming" => Defect::NoSsePriming,
            "get-stream-garbage" => Defect::GetStreamGarbage,
            other => return Err(format!("unknown defect `{other}`")),
        })
    }

    pub fn info(&self) -> &'static DefectInfo {
        Self::CATALOG
            .iter()
            .find(|info| info.name == self.name())
            .expect("every defect has a catalog entry")
    }

    /// The catalog as help text, one defect a line.
    pub fn catalog_help() -> String {
        let mut text = String::from("Defects (--defect NAME[=VALUE], repeatable):\n");
        for info in Self::CATALOG {
            let flag = match info.value {
                Some(value) => format!("{}={value}", info.name),
                None => info.name.to_owned(),
            };
            text.push_str(&format!(
                "  {flag:<22} {} [{}]\n",
                info.description, info.scope
            ));
        }
        text
    }
}

impl FromStr for Defect {
    type Err = String;

    fn from_str(flag: &str) -> Result<Self, Self::Err> {
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (flag, None),
        };
        let Some(info) = Self::CATALOG.iter().find(|info| info.name == name) else {
            let names: Vec<&str> = Self::CATALOG.iter().map(|info| info.name).collect();
            return Err(format!(
                "unknown defect `{name}`; valid defects: {}",
                names.join(", ")
            ));
        };
        match (info.value, value) {
            (Some(placeholder), None | Some("")) => Err(format!(
                "defect `{name}` needs a value: {name}={placeholder}"
            )),
            (None, Some(_)) => Err(format!("defect `{name}` takes no value")),
            _ => Self::from_name(name, value).map_err(|error| format!("--defect {flag}: {error}")),
        }
    }
}
