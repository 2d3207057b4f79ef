//! The built-in conformance packs against the real example server, no mocks:
//!
//! 1. the clean server passes both packs (`conformance-2026-07-28`, `conformance-2025-11-25`)
//!    in both eras, over stdio and over HTTP, with no warning and no failure; the skips
//!    are exactly the expected ones;
//! 2. every check fails at its level (MUST → `failed`, SHOULD → `warning`) under a
//!    seeded `--defect` that breaks its rule ([`CASES`]);
//! 3. `mcpspec list conformance` lists every check id ([`CHECKS`]).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::thread;

use common::{HttpServer, Run, read_json, run, stdio_target};
use serde_json::Value;

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "legacy";

/// Every check of both packs, as `scenario:step` (the check id is the step name).
const CHECKS: &[&str] = &[
    // conformance-2026-07-28
    "modern-discovery:discover_succeeds",
    "modern-discovery:result_type_present",
    "modern-discovery:cache_hints_present",
    "modern-discovery:discover_server_info",
    "modern-discovery:deprecated_logging_capability",
    "modern-discovery:client_info_optional",
    "modern-discovery:unsupported_version_rejected",
    "modern-discovery:missing_meta_rejected",
    "modern-deprecated:deprecated_sampling",
    "modern-deprecated:deprecated_roots",
    "modern-deprecated:deprecated_include_context",
    "modern-deprecated:deprecated_http_sse_transport",
    "modern-deprecated:deprecated_dynamic_client_registration",
    "modern-only:removed_initialize_rejected",
    "modern-only:removed_initialize_error_code",
    "modern-only:removed_ping_not_found",
    "modern-only:removed_logging_set_level_not_found",
    "modern-only:removed_resources_subscribe_not_found",
    "modern-only:removed_resources_unsubscribe_not_found",
    "modern-only-http:http_get_405",
    "modern-only-http:http_delete_405",
    "modern-only-http:removed_method_http_404",
    "modern-only-http:initialize_no_session_id",
    "modern-errors:unknown_method_not_found",
    "modern-errors:error_id_echoed",
    "modern-errors:notification_no_response",
    "modern-http:header_mismatch_rejected",
    "modern-http:name_header_mismatch_rejected",
    "modern-http:missing_method_header_rejected",
    "modern-http:version_header_mismatch_rejected",
    "modern-http:http_status_unsupported_version_400",
    "modern-http:http_status_missing_meta_400",
    "modern-http:http_status_method_not_found_404",
    "modern-http:no_session_id",
    "modern-http:invalid_origin_rejected",
    "modern-http:foreign_host_rejected",
    "modern-prompts:prompts_list_served",
    "modern-prompts:result_type_present",
    "modern-prompts:cache_hints_present",
    "modern-prompts:result_server_info",
    "modern-prompts:cache_scope_consistent_across_pages",
    "modern-prompts:unknown_prompt_invalid_params",
    "modern-resource-templates:resource_templates_list_served",
    "modern-resource-templates:result_type_present",
    "modern-resource-templates:cache_hints_present",
    "modern-resource-templates:result_server_info",
    "modern-resource-templates:cache_scope_consistent_across_pages",
    "modern-resources:resources_list_served",
    "modern-resources:result_type_present",
    "modern-resources:cache_hints_present",
    "modern-resources:result_server_info",
    "modern-resources:cache_scope_consistent_across_pages",
    "modern-resources:resource_not_found_error",
    "modern-resources:reserved_error_codes",
    "modern-resources:read_result_type_present",
    "modern-resources:read_cache_hints_present",
    "modern-stdio:stdout_clean",
    "modern-tools:tools_list_served",
    "modern-tools:result_type_present",
    "modern-tools:cache_hints_present",
    "modern-tools:result_server_info",
    "modern-tools:tool_names_format",
    "modern-tools:tool_names_unique",
    "modern-tools:input_schema_valid",
    "modern-tools:input_schema_root_object",
    "modern-tools:output_schema_valid",
    "modern-tools:output_schema_root_object",
    "modern-tools:unknown_tool_protocol_error",
    "modern-tools:reserved_error_codes",
    "modern-tools:invalid_cursor_rejected",
    "modern-tools:tools_list_deterministic",
    "modern-tools:tools_list_stable_across_connections",
    "modern-tools:cache_scope_consistent_across_pages",
    "modern-tool-calls:input_validation_is_error_result",
    "modern-tool-calls:structured_content_conforms",
    "modern-tool-calls:structured_content_text_block",
    "modern-undeclared:undeclared_tools_not_served",
    "modern-undeclared:undeclared_prompts_not_served",
    "modern-undeclared:undeclared_resources_not_served",
    "modern-wire:discover_wire_valid",
    "modern-wire:tools_list_wire_valid",
    "modern-wire:prompts_list_wire_valid",
    "modern-wire:resources_list_wire_valid",
    "modern-wire:resource_templates_list_wire_valid",
    "modern-wire:error_wire_valid",
    "modern-utilities:progress_token_echoed",
    "modern-utilities:log_requires_log_level",
    "modern-utilities:log_level_respected",
    "modern-utilities:completion_prompt_listed",
    "modern-utilities:completion_values_valid",
    "modern-utilities:tools_list_changed_only_when_subscribed",
    "modern-utilities:prompts_list_changed_only_when_subscribed",
    "modern-utilities:resources_list_changed_only_when_subscribed",
    "modern-utilities:missing_capability_rejected",
    "modern-utilities:input_required_result_valid",
    "modern-utilities:input_required_state",
    "modern-utilities:input_required_reasks",
    "modern-utilities:progress_increases",
    "modern-utilities:listen_acknowledged",
    "modern-utilities:listen_delivers_list_changed",
    "modern-utilities:listen_only_requested",
    "modern-utilities:listen_ends_on_cancel",
    // conformance-2025-11-25
    "legacy-deprecated:deprecated_sampling",
    "legacy-deprecated:deprecated_roots",
    "legacy-deprecated:deprecated_include_context",
    "legacy-deprecated:deprecated_http_sse_transport",
    "legacy-deprecated:deprecated_dynamic_client_registration",
    "legacy-sessions:missing_session_id_rejected",
    "legacy-sessions:terminated_session_not_found",
    "legacy-errors:unknown_method_not_found",
    "legacy-errors:error_id_echoed",
    "legacy-errors:notification_no_response",
    "legacy-handshake:initialize_result_valid",
    "legacy-handshake:server_info_present",
    "legacy-handshake:version_negotiation_counter_offer",
    "legacy-handshake:ping_succeeds",
    "legacy-http:session_id_visible_ascii",
    "legacy-http:unsupported_version_header_rejected",
    "legacy-http:invalid_origin_rejected",
    "legacy-http:foreign_host_rejected",
    "legacy-prompts:prompts_list_served",
    "legacy-prompts:unknown_prompt_invalid_params",
    "legacy-resources:resources_list_served",
    "legacy-resources:resource_templates_list_served",
    "legacy-resources:resource_not_found_error",
    "legacy-stdio:stdout_clean",
    "legacy-tools:tools_list_served",
    "legacy-tools:tool_names_format",
    "legacy-tools:tool_names_unique",
    "legacy-tools:input_schema_valid",
    "legacy-tools:input_schema_root_object",
    "legacy-tools:output_schema_valid",
    "legacy-tools:output_schema_root_object",
    "legacy-tools:unknown_tool_protocol_error",
    "legacy-tools:invalid_cursor_rejected",
    "legacy-tools:tools_list_deterministic",
    "legacy-tools:tools_list_stable_across_connections",
    "legacy-tool-calls:input_validation_is_error_result",
    "legacy-tool-calls:structured_content_conforms",
    "legacy-tool-calls:structured_content_text_block",
    "legacy-undeclared:undeclared_tools_not_served",
    "legacy-undeclared:undeclared_prompts_not_served",
    "legacy-undeclared:undeclared_resources_not_served",
    "legacy-wire:initialize_wire_valid",
    "legacy-wire:tools_list_wire_valid",
    "legacy-wire:prompts_list_wire_valid",
    "legacy-wire:resources_list_wire_valid",
    "legacy-wire:resource_templates_list_wire_valid",
    "legacy-wire:error_wire_valid",
    "legacy-utilities:progress_token_echoed",
    "legacy-utilities:set_level_served",
    "legacy-utilities:log_level_respected",
    "legacy-utilities:completion_prompt_listed",
    "legacy-utilities:completion_values_valid",
    "legacy-utilities:subscribe_resource_listed",
    "legacy-utilities:resources_subscribe_served",
    "legacy-utilities:resources_unsubscribe_served",
    "legacy-utilities:progress_increases",
    "legacy-utilities:tools_list_changed_sent",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Transport {
    Stdio,
    Http,
}

/// Where a case runs.
#[derive(Clone, Copy, Debug)]
enum On {
    Stdio,
    Http,
    Both,
}

impl On {
    fn transports(self) -> &'static [Transport] {
        match self {
            On::Stdio => &[Transport::Stdio],
            On::Http => &[Transport::Http],
            On::Both => &[Transport::Stdio, Transport::Http],
        }
    }
}

/// The expected (non-passing) status of a check under a defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// A MUST check whose expectation failed.
    Failed,
    /// A SHOULD check whose expectation failed.
    Warning,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Failed => "failed",
            Status::Warning => "warning",
        }
    }
}

use On::{Both, Http as HttpOnly, Stdio as StdioOnly};
use Status::{Failed, Warning};

/// One seeded defect (server flags) and one check it must break:
/// `(server flags, era, transport, check, status)`. `check` is `scenario:step`;
/// `*:step` means every scenario of that era holding the step.
type Case = (&'static str, &'static str, On, &'static str, Status);

/// A modern-only server that still serves the methods 2026-07-28 removed.
const ANSWER_REMOVED: &str = "--change drop-legacy --defect answer-removed-methods";
/// A modern-only server that still serves GET/DELETE and mints sessions.
const SERVE_LEGACY_HTTP: &str = "--change drop-legacy --defect serve-legacy-http";
/// A modern-only server that refuses initialize with -32602 (it validates `_meta` first):
/// conformant to the MUST (an error, no result), short of the SHOULD (-32601 / -32022).
const INITIALIZE_32602: &str = "--change drop-legacy --defect initialize-invalid-params";

/// The eras a run against a server started with `flags` covers: a modern-only server
/// (`--change drop-legacy`) refuses `initialize`, so it runs in the modern era alone.
fn eras_for(flags: &str) -> &'static [&'static str] {
    if flags.contains("drop-legacy") {
        &[MODERN]
    } else {
        &[MODERN, LEGACY]
    }
}

#[rustfmt::skip]
const CASES: &[Case] = &[
    // ---- conformance-2026-07-28 ------------------------------------------------------
    ("--defect no-capabilities", MODERN, Both, "modern-discovery:discover_succeeds", Failed),
    ("--defect no-result-type", MODERN, Both, "*:result_type_present", Failed),
    ("--defect no-result-type", MODERN, Both, "modern-resources:read_result_type_present", Failed),
    ("--defect no-cache-hints", MODERN, Both, "*:cache_hints_present", Failed),
    ("--defect no-cache-hints", MODERN, Both, "modern-resources:read_cache_hints_present", Failed),
    ("--defect no-server-info-meta", MODERN, Both, "modern-discovery:discover_server_info", Warning),
    ("--defect no-server-info-meta", MODERN, Both, "*:result_server_info", Warning),
    ("--defect declare-logging", MODERN, Both, "modern-discovery:deprecated_logging_capability", Warning),
    ("--defect require-client-info", MODERN, Both, "modern-discovery:client_info_optional", Failed),
    ("--defect accept-unsupported-version", MODERN, Both, "modern-discovery:unsupported_version_rejected", Failed),
    ("--defect accept-missing-client-capabilities", MODERN, Both, "modern-discovery:missing_meta_rejected", Failed),
    ("--defect unserved-capability=tools", MODERN, Both, "modern-tools:tools_list_served", Failed),
    ("--defect unserved-capability=prompts", MODERN, Both, "modern-prompts:prompts_list_served", Failed),
    ("--defect unserved-capability=resources", MODERN, Both, "modern-resources:resources_list_served", Failed),
    ("--defect unserved-capability=resources", MODERN, Both, "modern-resource-templates:resource_templates_list_served", Failed),
    ("--defect bad-tool-name", MODERN, Both, "modern-tools:tool_names_format", Warning),
    ("--defect duplicate-tool-name", MODERN, Both, "modern-tools:tool_names_unique", Warning),
    ("--defect invalid-input-schema", MODERN, Both, "modern-tools:input_schema_valid", Failed),
    ("--defect input-schema-not-object", MODERN, Both, "modern-tools:input_schema_root_object", Failed),
    ("--defect invalid-output-schema", MODERN, Both, "modern-tools:output_schema_valid", Failed),
    ("--defect output-schema-not-object", MODERN, Both, "modern-tools:output_schema_root_object", Failed),
    ("--defect unknown-tool-is-error", MODERN, Both, "modern-tools:unknown_tool_protocol_error", Warning),
    ("--defect rewrite-error-code=-32602:-32050", MODERN, Both, "*:reserved_error_codes", Failed),
    ("--defect rewrite-error-code=-32602:-32002", MODERN, Both, "*:reserved_error_codes", Failed),
    ("--defect rewrite-error-code=-32602:-32002", MODERN, Both, "modern-resources:resource_not_found_error", Failed),
    ("--defect resource-not-found-empty", MODERN, Both, "modern-resources:resource_not_found_error", Failed),
    ("--defect ignore-invalid-cursor", MODERN, Both, "modern-tools:invalid_cursor_rejected", Warning),
    ("--defect unstable-tool-order", MODERN, Both, "modern-tools:tools_list_deterministic", Warning),
    ("--defect tools-vary-by-connection", MODERN, StdioOnly, "modern-tools:tools_list_stable_across_connections", Failed),
    ("--page-size 1 --change add-template --defect mixed-cache-scope", MODERN, Both, "*:cache_scope_consistent_across_pages", Failed),
    ("--defect undeclared-capability=tools", MODERN, Both, "modern-undeclared:undeclared_tools_not_served", Failed),
    ("--defect undeclared-capability=prompts", MODERN, Both, "modern-undeclared:undeclared_prompts_not_served", Failed),
    ("--defect undeclared-capability=resources", MODERN, Both, "modern-undeclared:undeclared_resources_not_served", Failed),
    ("--defect unknown-method-invalid-request", MODERN, Both, "modern-errors:unknown_method_not_found", Failed),
    ("--defect error-wrong-id", MODERN, Both, "modern-errors:error_id_echoed", Failed),
    ("--defect answer-notifications", MODERN, Both, "modern-errors:notification_no_response", Failed),
    ("--defect lenient-header=method", MODERN, HttpOnly, "modern-http:header_mismatch_rejected", Failed),
    ("--defect lenient-header=method", MODERN, HttpOnly, "modern-http:missing_method_header_rejected", Failed),
    ("--defect lenient-header=name", MODERN, HttpOnly, "modern-http:name_header_mismatch_rejected", Failed),
    ("--defect lenient-header=version", MODERN, HttpOnly, "modern-http:version_header_mismatch_rejected", Failed),
    ("--defect error-http-200=-32020", MODERN, HttpOnly, "modern-http:header_mismatch_rejected", Failed),
    ("--defect error-http-200=-32020", MODERN, HttpOnly, "modern-http:name_header_mismatch_rejected", Failed),
    ("--defect error-http-200=-32020", MODERN, HttpOnly, "modern-http:missing_method_header_rejected", Failed),
    ("--defect error-http-200=-32020", MODERN, HttpOnly, "modern-http:version_header_mismatch_rejected", Failed),
    ("--defect error-http-200=-32022", MODERN, HttpOnly, "modern-http:http_status_unsupported_version_400", Failed),
    ("--defect error-http-200=-32602", MODERN, HttpOnly, "modern-http:http_status_missing_meta_400", Failed),
    ("--defect error-http-200=-32601", MODERN, HttpOnly, "modern-http:http_status_method_not_found_404", Failed),
    ("--defect mint-session-id", MODERN, HttpOnly, "modern-http:no_session_id", Warning),
    ("--defect allow-any-origin", MODERN, HttpOnly, "modern-http:invalid_origin_rejected", Failed),
    ("--defect allow-foreign-host", MODERN, HttpOnly, "modern-http:foreign_host_rejected", Failed),
    ("--defect rewrite-error-code=-32602:-32603", MODERN, Both, "modern-prompts:unknown_prompt_invalid_params", Warning),
    ("--defect error-id-null", MODERN, Both, "modern-errors:error_id_echoed", Failed),
    ("--defect garbage-stdout", MODERN, StdioOnly, "modern-stdio:stdout_clean", Failed),
    ("--defect no-cache-hints", MODERN, Both, "modern-wire:discover_wire_valid", Failed),
    ("--defect wire-tools-missing-input-schema", MODERN, Both, "modern-wire:tools_list_wire_valid", Failed),
    ("--defect no-result-type", MODERN, Both, "modern-wire:prompts_list_wire_valid", Failed),
    ("--defect wire-list-item-missing-name", MODERN, Both, "modern-wire:prompts_list_wire_valid", Failed),
    ("--defect wire-list-item-missing-name", MODERN, Both, "modern-wire:resources_list_wire_valid", Failed),
    ("--defect wire-list-item-missing-name", MODERN, Both, "modern-wire:resource_templates_list_wire_valid", Failed),
    ("--defect wire-error-code-string", MODERN, Both, "modern-wire:error_wire_valid", Failed),
    ("--defect validation-protocol-error", MODERN, Both, "modern-tool-calls:input_validation_is_error_result", Warning),
    ("--defect ignore-input-schema", MODERN, Both, "modern-tool-calls:input_validation_is_error_result", Warning),
    ("--defect structured-content-mismatch", MODERN, Both, "modern-tool-calls:structured_content_conforms", Failed),
    ("--defect no-structured-text", MODERN, Both, "modern-tool-calls:structured_content_text_block", Warning),
    // Deprecated features (server requests: stdio, where the example server sends them).
    ("--defect server-request=sampling", MODERN, StdioOnly, "modern-deprecated:deprecated_sampling", Warning),
    ("--defect server-request=roots", MODERN, StdioOnly, "modern-deprecated:deprecated_roots", Warning),
    ("--defect server-request=include-context", MODERN, StdioOnly, "modern-deprecated:deprecated_include_context", Warning),
    ("--defect legacy-sse-endpoint", MODERN, HttpOnly, "modern-deprecated:deprecated_http_sse_transport", Warning),
    ("--defect dynamic-client-registration", MODERN, HttpOnly, "modern-deprecated:deprecated_dynamic_client_registration", Warning),
    // A modern-only server (`drop-legacy`: runs in the modern era only).
    (ANSWER_REMOVED, MODERN, Both, "modern-only:removed_initialize_rejected", Failed),
    (ANSWER_REMOVED, MODERN, Both, "modern-only:removed_initialize_error_code", Warning),
    (INITIALIZE_32602, MODERN, Both, "modern-only:removed_initialize_error_code", Warning),
    (ANSWER_REMOVED, MODERN, Both, "modern-only:removed_ping_not_found", Failed),
    (ANSWER_REMOVED, MODERN, Both, "modern-only:removed_logging_set_level_not_found", Failed),
    (ANSWER_REMOVED, MODERN, Both, "modern-only:removed_resources_subscribe_not_found", Failed),
    (ANSWER_REMOVED, MODERN, Both, "modern-only:removed_resources_unsubscribe_not_found", Failed),
    (ANSWER_REMOVED, MODERN, HttpOnly, "modern-only-http:removed_method_http_404", Failed),
    (SERVE_LEGACY_HTTP, MODERN, HttpOnly, "modern-only-http:http_get_405", Warning),
    (SERVE_LEGACY_HTTP, MODERN, HttpOnly, "modern-only-http:http_delete_405", Warning),
    (SERVE_LEGACY_HTTP, MODERN, HttpOnly, "modern-only-http:initialize_no_session_id", Warning),
    // ---- conformance-2025-11-25 ------------------------------------------------------
    ("--defect no-capabilities", LEGACY, Both, "legacy-handshake:initialize_result_valid", Failed),
    ("--defect no-server-info", LEGACY, Both, "legacy-handshake:server_info_present", Failed),
    ("--defect bad-counter-offer", LEGACY, Both, "legacy-handshake:version_negotiation_counter_offer", Failed),
    ("--defect no-ping", LEGACY, Both, "legacy-handshake:ping_succeeds", Failed),
    ("--defect unserved-capability=tools", LEGACY, Both, "legacy-tools:tools_list_served", Failed),
    ("--defect bad-tool-name", LEGACY, Both, "legacy-tools:tool_names_format", Warning),
    ("--defect duplicate-tool-name", LEGACY, Both, "legacy-tools:tool_names_unique", Warning),
    ("--defect invalid-input-schema", LEGACY, Both, "legacy-tools:input_schema_valid", Failed),
    ("--defect input-schema-not-object", LEGACY, Both, "legacy-tools:input_schema_root_object", Failed),
    ("--defect invalid-output-schema", LEGACY, Both, "legacy-tools:output_schema_valid", Failed),
    ("--defect output-schema-not-object", LEGACY, Both, "legacy-tools:output_schema_root_object", Failed),
    ("--defect unknown-tool-is-error", LEGACY, Both, "legacy-tools:unknown_tool_protocol_error", Warning),
    ("--defect ignore-invalid-cursor", LEGACY, Both, "legacy-tools:invalid_cursor_rejected", Warning),
    ("--defect unstable-tool-order", LEGACY, Both, "legacy-tools:tools_list_deterministic", Warning),
    ("--defect tools-vary-by-connection", LEGACY, StdioOnly, "legacy-tools:tools_list_stable_across_connections", Failed),
    ("--defect unserved-capability=prompts", LEGACY, Both, "legacy-prompts:prompts_list_served", Failed),
    ("--defect unserved-capability=resources", LEGACY, Both, "legacy-resources:resources_list_served", Failed),
    ("--defect unserved-capability=resources", LEGACY, Both, "legacy-resources:resource_templates_list_served", Failed),
    ("--defect resource-not-found-empty", LEGACY, Both, "legacy-resources:resource_not_found_error", Failed),
    ("--defect undeclared-capability=tools", LEGACY, Both, "legacy-undeclared:undeclared_tools_not_served", Warning),
    ("--defect undeclared-capability=prompts", LEGACY, Both, "legacy-undeclared:undeclared_prompts_not_served", Warning),
    ("--defect undeclared-capability=resources", LEGACY, Both, "legacy-undeclared:undeclared_resources_not_served", Warning),
    ("--defect unknown-method-invalid-request", LEGACY, Both, "legacy-errors:unknown_method_not_found", Failed),
    ("--defect error-wrong-id", LEGACY, Both, "legacy-errors:error_id_echoed", Failed),
    ("--defect answer-notifications", LEGACY, Both, "legacy-errors:notification_no_response", Failed),
    ("--defect session-id-with-space", LEGACY, HttpOnly, "legacy-http:session_id_visible_ascii", Failed),
    ("--defect lenient-header=version", LEGACY, HttpOnly, "legacy-http:unsupported_version_header_rejected", Failed),
    ("--defect allow-any-origin", LEGACY, HttpOnly, "legacy-http:invalid_origin_rejected", Failed),
    ("--defect allow-foreign-host", LEGACY, HttpOnly, "legacy-http:foreign_host_rejected", Failed),
    ("--defect rewrite-error-code=-32602:0", LEGACY, Both, "legacy-prompts:unknown_prompt_invalid_params", Warning),
    ("--defect error-id-null", LEGACY, Both, "legacy-errors:error_id_echoed", Failed),
    ("--defect garbage-stdout", LEGACY, StdioOnly, "legacy-stdio:stdout_clean", Failed),
    ("--defect no-server-info", LEGACY, Both, "legacy-wire:initialize_wire_valid", Failed),
    ("--defect wire-tools-missing-input-schema", LEGACY, Both, "legacy-wire:tools_list_wire_valid", Failed),
    ("--defect wire-list-item-missing-name", LEGACY, Both, "legacy-wire:prompts_list_wire_valid", Failed),
    ("--defect wire-list-item-missing-name", LEGACY, Both, "legacy-wire:resources_list_wire_valid", Failed),
    ("--defect wire-list-item-missing-name", LEGACY, Both, "legacy-wire:resource_templates_list_wire_valid", Failed),
    ("--defect wire-error-code-string", LEGACY, Both, "legacy-wire:error_wire_valid", Failed),
    ("--defect validation-protocol-error", LEGACY, Both, "legacy-tool-calls:input_validation_is_error_result", Warning),
    ("--defect ignore-input-schema", LEGACY, Both, "legacy-tool-calls:input_validation_is_error_result", Warning),
    ("--defect structured-content-mismatch", LEGACY, Both, "legacy-tool-calls:structured_content_conforms", Failed),
    ("--defect no-structured-text", LEGACY, Both, "legacy-tool-calls:structured_content_text_block", Warning),
    ("--defect server-request=sampling", LEGACY, StdioOnly, "legacy-deprecated:deprecated_sampling", Warning),
    ("--defect server-request=roots", LEGACY, StdioOnly, "legacy-deprecated:deprecated_roots", Warning),
    ("--defect server-request=include-context", LEGACY, StdioOnly, "legacy-deprecated:deprecated_include_context", Warning),
    ("--defect legacy-sse-endpoint", LEGACY, HttpOnly, "legacy-deprecated:deprecated_http_sse_transport", Warning),
    ("--defect dynamic-client-registration", LEGACY, HttpOnly, "legacy-deprecated:deprecated_dynamic_client_registration", Warning),
    ("--defect session-optional", LEGACY, HttpOnly, "legacy-sessions:missing_session_id_rejected", Warning),
    ("--defect terminated-session-400", LEGACY, HttpOnly, "legacy-sessions:terminated_session_not_found", Failed),
];

// ---------------------------------------------------------------------------
// Running the packs
// ---------------------------------------------------------------------------

/// One run of both packs in both eras: the exit code and the `--json` report.
struct PackRun {
    run: Run,
    report: Value,
}

impl PackRun {
    /// `(suite id, step name) → (status, level)` of every step.
    fn outcomes(&self) -> BTreeMap<(String, String), (String, String)> {
        let mut out = BTreeMap::new();
        for suite in self.report["suites"].as_array().expect("suites") {
            let id = suite["id"].as_str().expect("suite id").to_string();
            for step in suite["steps"].as_array().expect("steps") {
                let name = step["name"].as_str().expect("step name").to_string();
                let status = step["outcome"]["status"].as_str().expect("status");
                let level = step["level"].as_str().unwrap_or("must");
                out.insert((id.clone(), name), (status.to_string(), level.to_string()));
            }
        }
        out
    }

    /// Setup errors of suites (none expected: every defect leaves the connection usable).
    fn setup_errors(&self) -> Vec<String> {
        self.report["suites"]
            .as_array()
            .expect("suites")
            .iter()
            .filter(|suite| !suite["setupError"].is_null())
            .map(|suite| format!("{}: {}", suite["id"], suite["setupError"]))
            .collect()
    }

    /// The steps that did not pass or skip, one per line (for failure messages).
    fn non_passing(&self) -> String {
        self.outcomes()
            .into_iter()
            .filter(|(_, (status, _))| status != "passed" && status != "skipped")
            .map(|((suite, step), (status, _))| format!("  {status:8} {suite}:{step}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Runs `mcpspec run conformance` against the example server started with `flags`;
/// `filters` (`--filter`) select scenarios (none: all of them).
fn run_packs(flags: &str, transport: Transport, filters: &[String]) -> PackRun {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let json = json.to_str().expect("utf-8 path");
    let words: Vec<&str> = flags.split_whitespace().collect();
    let mut common = vec!["--timeout", "10s"];
    for era in eras_for(flags) {
        common.extend(["--era", era]);
    }
    common.extend(["--jobs", "4", "--json", json]);
    for filter in filters {
        common.extend(["--filter", filter.as_str()]);
    }
    let run = match transport {
        Transport::Stdio => {
            let target = stdio_target(&words);
            let mut args = vec!["run", "conformance", "--stdio", &target];
            args.extend(&common);
            run(&args)
        }
        Transport::Http => {
            let server = HttpServer::start(&words);
            let mut args = vec!["run", "conformance", "--url", &server.url];
            args.extend(&common);
            run(&args)
        }
    };
    assert!(
        std::path::Path::new(json).exists(),
        "no JSON report for `{flags}` over {transport:?}: {run:?}"
    );
    let report = read_json(std::path::Path::new(json));
    PackRun { run, report }
}

/// One run: server flags, transport and the scenarios to run (`--filter`; empty: all).
type Job = (&'static str, Transport, Vec<String>);

/// Runs every job once, several at a time (they mostly wait on processes and pipes).
fn run_all(jobs: Vec<Job>) -> BTreeMap<(&'static str, Transport), PackRun> {
    let queue = Mutex::new(jobs);
    let done = Mutex::new(BTreeMap::new());
    let workers = thread::available_parallelism()
        .map_or(4, |n| n.get() * 2)
        .clamp(4, 12);
    thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let Some((flags, transport, filters)) = queue.lock().expect("queue").pop()
                    else {
                        break;
                    };
                    let result = run_packs(flags, transport, &filters);
                    done.lock()
                        .expect("results")
                        .insert((flags, transport), result);
                }
            });
        }
    });
    done.into_inner().expect("results")
}

/// The era a check's scenario runs in (`modern-*` or `legacy-*`).
fn era_of_scenario(scenario: &str) -> &'static str {
    if scenario.starts_with("modern-") {
        MODERN
    } else {
        LEGACY
    }
}

/// The scenarios a case's `check` names in `era` (`*:step`: all that hold the step).
fn scenarios_of(check: &str, era: &str) -> Vec<String> {
    let (scenario, step) = check.split_once(':').expect("scenario:step");
    if scenario != "*" {
        return vec![scenario.to_string()];
    }
    CHECKS
        .iter()
        .filter_map(|c| c.split_once(':'))
        .filter(|(s, name)| *name == step && era_of_scenario(s) == era)
        .map(|(s, _)| s.to_string())
        .collect()
}

/// The era part of a suite id (`scenario@era`).
fn era_of_suite(suite: &str) -> &str {
    suite.rsplit_once('@').map_or("", |(_, era)| era)
}

// ---------------------------------------------------------------------------
// 1. The clean server
// ---------------------------------------------------------------------------

/// Checks the clean server legitimately skips: HTTP-only rules over stdio (and the
/// reverse), undeclared-capability rules (it declares tools, prompts and resources), and
/// the page comparison of lists that fit in one page.
fn expected_skips(transport: Transport, paginated: bool) -> BTreeSet<String> {
    let mut skips: Vec<&str> = vec![
        "modern-undeclared@2026-07-28:undeclared_tools_not_served",
        "modern-undeclared@2026-07-28:undeclared_prompts_not_served",
        "modern-undeclared@2026-07-28:undeclared_resources_not_served",
        "legacy-undeclared@legacy:undeclared_tools_not_served",
        "legacy-undeclared@legacy:undeclared_prompts_not_served",
        "legacy-undeclared@legacy:undeclared_resources_not_served",
        // The clean server is dual-era: the modern-only rules do not apply.
        "modern-only@2026-07-28:removed_initialize_rejected",
        "modern-only@2026-07-28:removed_initialize_error_code",
        "modern-only@2026-07-28:removed_ping_not_found",
        "modern-only@2026-07-28:removed_logging_set_level_not_found",
        "modern-only@2026-07-28:removed_resources_subscribe_not_found",
        "modern-only@2026-07-28:removed_resources_unsubscribe_not_found",
        "modern-only-http@2026-07-28:http_get_405",
        "modern-only-http@2026-07-28:http_delete_405",
        "modern-only-http@2026-07-28:removed_method_http_404",
        "modern-only-http@2026-07-28:initialize_no_session_id",
        // The utilities (tests/coverage.rs): undeclared without `--utilities`, and no
        // `elicitation_tool` set.
        "modern-utilities@2026-07-28:log_requires_log_level",
        "modern-utilities@2026-07-28:log_level_respected",
        "modern-utilities@2026-07-28:completion_prompt_listed",
        "modern-utilities@2026-07-28:completion_values_valid",
        "modern-utilities@2026-07-28:tools_list_changed_only_when_subscribed",
        "modern-utilities@2026-07-28:prompts_list_changed_only_when_subscribed",
        "modern-utilities@2026-07-28:resources_list_changed_only_when_subscribed",
        "modern-utilities@2026-07-28:missing_capability_rejected",
        "modern-utilities@2026-07-28:input_required_result_valid",
        "modern-utilities@2026-07-28:input_required_state",
        "modern-utilities@2026-07-28:input_required_reasks",
        "legacy-utilities@legacy:set_level_served",
        "legacy-utilities@legacy:log_level_respected",
        "legacy-utilities@legacy:completion_prompt_listed",
        "legacy-utilities@legacy:completion_values_valid",
        "legacy-utilities@legacy:subscribe_resource_listed",
        "legacy-utilities@legacy:resources_subscribe_served",
        "legacy-utilities@legacy:resources_unsubscribe_served",
        // ... nor `progress_tool` / `list_change_tool`, and no `listChanged` is declared.
        "modern-utilities@2026-07-28:progress_increases",
        "modern-utilities@2026-07-28:listen_acknowledged",
        "modern-utilities@2026-07-28:listen_delivers_list_changed",
        "modern-utilities@2026-07-28:listen_only_requested",
        "modern-utilities@2026-07-28:listen_ends_on_cancel",
        "legacy-utilities@legacy:progress_increases",
        "legacy-utilities@legacy:tools_list_changed_sent",
        // HTTP-only probes (stdio), or no OAuth metadata served (HTTP).
        "modern-deprecated@2026-07-28:deprecated_dynamic_client_registration",
        "legacy-deprecated@legacy:deprecated_dynamic_client_registration",
    ];
    if !paginated {
        skips.extend([
            "modern-tools@2026-07-28:cache_scope_consistent_across_pages",
            "modern-prompts@2026-07-28:cache_scope_consistent_across_pages",
            "modern-resources@2026-07-28:cache_scope_consistent_across_pages",
            "modern-resource-templates@2026-07-28:cache_scope_consistent_across_pages",
        ]);
    }
    match transport {
        Transport::Stdio => skips.extend([
            "modern-http@2026-07-28:header_mismatch_rejected",
            "modern-http@2026-07-28:name_header_mismatch_rejected",
            "modern-http@2026-07-28:missing_method_header_rejected",
            "modern-http@2026-07-28:version_header_mismatch_rejected",
            "modern-http@2026-07-28:http_status_unsupported_version_400",
            "modern-http@2026-07-28:http_status_missing_meta_400",
            "modern-http@2026-07-28:http_status_method_not_found_404",
            "modern-http@2026-07-28:no_session_id",
            "modern-http@2026-07-28:invalid_origin_rejected",
            "modern-http@2026-07-28:foreign_host_rejected",
            "legacy-http@legacy:session_id_visible_ascii",
            "legacy-http@legacy:unsupported_version_header_rejected",
            "legacy-http@legacy:invalid_origin_rejected",
            "legacy-http@legacy:foreign_host_rejected",
            "legacy-sessions@legacy:missing_session_id_rejected",
            "legacy-sessions@legacy:terminated_session_not_found",
            "modern-deprecated@2026-07-28:deprecated_http_sse_transport",
            "legacy-deprecated@legacy:deprecated_http_sse_transport",
        ]),
        Transport::Http => skips.extend([
            "modern-stdio@2026-07-28:stdout_clean",
            "legacy-stdio@legacy:stdout_clean",
        ]),
    }
    skips.into_iter().map(str::to_string).collect()
}

/// Asserts a clean run in `eras`: exit 0, no setup error, every step passed or skipped,
/// no warning, and exactly `skips` skipped.
fn assert_clean(label: &str, pack: &PackRun, eras: &[&str], skips: &BTreeSet<String>) {
    assert_eq!(pack.run.code, 0, "{label}: exit code\n{:?}", pack.run);
    assert!(
        pack.setup_errors().is_empty(),
        "{label}: {:?}",
        pack.setup_errors()
    );
    let outcomes = pack.outcomes();
    let checks_in_eras = CHECKS
        .iter()
        .filter(|c| {
            eras.contains(&era_of_scenario(
                c.split_once(':').expect("scenario:step").0,
            ))
        })
        .count();
    assert_eq!(
        outcomes.len(),
        checks_in_eras,
        "{label}: every check runs once in its era"
    );
    let mut skipped = BTreeSet::new();
    for ((suite, step), (status, _)) in &outcomes {
        match status.as_str() {
            "passed" => {}
            "skipped" => {
                skipped.insert(format!("{suite}:{step}"));
            }
            other => panic!(
                "{label}: {suite}:{step} is {other}\n{}\n{:?}",
                pack.non_passing(),
                pack.run
            ),
        }
    }
    assert_eq!(&skipped, skips, "{label}: skipped steps");
    let summary = &pack.report["summary"];
    for key in ["failed", "errors", "warnings"] {
        if let Some(n) = summary.get(key) {
            assert_eq!(n.as_u64(), Some(0), "{label}: summary.{key} in {summary}");
        }
    }
}

#[test]
fn clean_server_passes_both_packs_in_both_eras_over_stdio_and_http() {
    let runs = run_all(vec![
        ("", Transport::Stdio, vec![]),
        ("", Transport::Http, vec![]),
        // Pagination (delivery only) lets the cacheScope-per-page checks run and pass;
        // `add-template` gives the templates list a second page.
        (
            "--page-size 1 --change add-template",
            Transport::Stdio,
            vec![],
        ),
        (
            "--page-size 1 --change add-template",
            Transport::Http,
            vec![],
        ),
        // Without the prompts capability, prompts/* are unknown methods: the
        // undeclared-prompts checks run and pass.
        ("--change remove-capability", Transport::Stdio, vec![]),
        ("--change remove-capability", Transport::Http, vec![]),
        // A modern-only server: the modern-only rules run and pass (modern era only).
        ("--change drop-legacy", Transport::Stdio, vec![]),
        ("--change drop-legacy", Transport::Http, vec![]),
    ]);
    for ((flags, transport), pack) in &runs {
        let label = format!("clean server `{flags}` over {transport:?}");
        let mut skips = expected_skips(*transport, flags.contains("--page-size"));
        if flags.contains("remove-capability") {
            skips.remove("modern-undeclared@2026-07-28:undeclared_prompts_not_served");
            skips.remove("legacy-undeclared@legacy:undeclared_prompts_not_served");
            // The prompts checks are skipped instead: the capability is not declared.
            skips.extend(
                [
                    "modern-prompts@2026-07-28:prompts_list_served",
                    "modern-prompts@2026-07-28:result_type_present",
                    "modern-prompts@2026-07-28:cache_hints_present",
                    "modern-prompts@2026-07-28:result_server_info",
                    "modern-prompts@2026-07-28:cache_scope_consistent_across_pages",
                    "modern-prompts@2026-07-28:unknown_prompt_invalid_params",
                    "legacy-prompts@legacy:prompts_list_served",
                    "legacy-prompts@legacy:unknown_prompt_invalid_params",
                    "modern-wire@2026-07-28:prompts_list_wire_valid",
                    "legacy-wire@legacy:prompts_list_wire_valid",
                ]
                .map(str::to_string),
            );
        }
        let eras = eras_for(flags);
        if flags.contains("drop-legacy") {
            skips.retain(|s| !s.starts_with("modern-only@"));
            if *transport == Transport::Http {
                skips.retain(|s| !s.starts_with("modern-only-http@"));
            }
        }
        skips.retain(|s| eras.contains(&era_of_suite(s.split_once(':').expect("suite:step").0)));
        assert_clean(&label, pack, eras, &skips);
    }
}

// ---------------------------------------------------------------------------
// 2. Every check under its seeded defect
// ---------------------------------------------------------------------------

#[test]
fn every_check_fails_at_its_level_under_its_seeded_defect() {
    // One run per (defect, transport), limited to the scenarios its cases look at.
    let mut jobs: BTreeMap<(&'static str, Transport), BTreeSet<String>> = BTreeMap::new();
    for (flags, era, on, check, _) in CASES {
        for transport in on.transports() {
            jobs.entry((flags, *transport))
                .or_default()
                .extend(scenarios_of(check, era));
        }
    }
    // Exit 1 when a MUST check fails (or errors); warnings alone exit 0.
    let expected_exit: BTreeMap<(&str, Transport), i32> = jobs
        .keys()
        .map(|&(flags, transport)| {
            let fails = CASES.iter().any(|(f, _, on, _, status)| {
                *f == flags && on.transports().contains(&transport) && *status != Warning
            });
            ((flags, transport), i32::from(fails))
        })
        .collect();
    let runs = run_all(
        jobs.into_iter()
            .map(|((flags, transport), scenarios)| {
                (flags, transport, scenarios.into_iter().collect())
            })
            .collect(),
    );
    let mut problems = Vec::new();
    for (flags, era, on, check, status) in CASES {
        let (scenario, step) = check.split_once(':').expect("scenario:step");
        for transport in on.transports() {
            let pack = &runs[&(*flags, *transport)];
            let label = format!("`{flags}` over {transport:?}, {check}@{era}");
            if !pack.setup_errors().is_empty() {
                problems.push(format!("{label}: setup errors {:?}", pack.setup_errors()));
                continue;
            }
            let exit = expected_exit[&(*flags, *transport)];
            if pack.run.code != exit {
                problems.push(format!(
                    "{label}: exit code {} (expected {exit})",
                    pack.run.code
                ));
            }
            let outcomes = pack.outcomes();
            let matching: Vec<_> = outcomes
                .iter()
                .filter(|((suite, name), _)| {
                    name == step
                        && era_of_suite(suite) == *era
                        && (scenario == "*" || suite.starts_with(&format!("{scenario}@")))
                })
                .collect();
            if matching.is_empty() {
                problems.push(format!("{label}: no such check in the run"));
            }
            for ((suite, name), (got, level)) in matching {
                if got != status.as_str() {
                    problems.push(format!(
                        "{label}: {suite}:{name} is {got}, expected {}\n{}",
                        status.as_str(),
                        pack.non_passing()
                    ));
                }
                let expected_level = if *status == Warning { "should" } else { "must" };
                if level != expected_level {
                    problems.push(format!(
                        "{label}: {suite}:{name} has level {level}, expected {expected_level}"
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `(suite:step) → (status, skip or failure reason)` of a `--json` report.
fn statuses(pack: &PackRun) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    for suite in pack.report["suites"].as_array().expect("suites") {
        let id = suite["id"].as_str().expect("suite id");
        for step in suite["steps"].as_array().expect("steps") {
            let outcome = &step["outcome"];
            let reason = outcome["reason"]
                .as_str()
                .or_else(|| outcome["message"].as_str())
                .or_else(|| outcome["failures"][0]["message"].as_str())
                .unwrap_or("");
            out.insert(
                format!("{id}:{}", step["name"].as_str().expect("step name")),
                (
                    outcome["status"].as_str().expect("status").to_string(),
                    reason.to_string(),
                ),
            );
        }
    }
    out
}

/// Refusals that differ from the usual ones are still refusals: a foreign `Host`
/// answered with 421 Misdirected Request passes the DNS-rebinding check, and a
/// modern-only server refusing `initialize` with -32602 passes the MUST (an error, no
/// result) and only misses the SHOULD of -32601 / -32022.
#[test]
fn conformant_refusals_with_other_codes_pass() {
    let runs = run_all(vec![
        ("--defect host-421", Transport::Http, vec!["*-http".into()]),
        (
            INITIALIZE_32602,
            Transport::Stdio,
            vec!["modern-only".into()],
        ),
        (
            INITIALIZE_32602,
            Transport::Http,
            vec!["modern-only".into()],
        ),
    ]);
    let mut problems = Vec::new();
    for ((flags, transport), pack) in &runs {
        let outcomes = statuses(pack);
        let expected: &[(&str, &str)] = if flags.contains("host-421") {
            &[
                ("modern-http@2026-07-28:foreign_host_rejected", "passed"),
                ("legacy-http@legacy:foreign_host_rejected", "passed"),
            ]
        } else {
            &[
                (
                    "modern-only@2026-07-28:removed_initialize_rejected",
                    "passed",
                ),
                (
                    "modern-only@2026-07-28:removed_initialize_error_code",
                    "warning",
                ),
            ]
        };
        for (check, want) in expected {
            match outcomes.get(*check) {
                Some((got, _)) if got == want => {}
                other => problems.push(format!(
                    "`{flags}` over {transport:?}: {check} is {other:?}, expected {want}"
                )),
            }
        }
        if pack.run.code != 0 {
            problems.push(format!(
                "`{flags}` over {transport:?}: exit {}\n{}",
                pack.run.code,
                pack.non_passing()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A server with empty lists (`--empty`: the capabilities declared, nothing listed) is
/// correct: the steps whose input would come from a list (the first resource to read)
/// are skipped with the reason, nothing errors, in both eras and over both transports.
#[test]
fn empty_lists_skip_the_steps_that_need_an_item() {
    let runs = run_all(vec![
        ("--empty", Transport::Stdio, vec![]),
        ("--empty", Transport::Http, vec![]),
    ]);
    for ((flags, transport), pack) in &runs {
        let label = format!("`{flags}` over {transport:?}");
        assert_eq!(
            pack.run.code,
            0,
            "{label}: {}\n{:?}",
            pack.non_passing(),
            pack.run
        );
        assert!(
            pack.setup_errors().is_empty(),
            "{label}: {:?}",
            pack.setup_errors()
        );
        let outcomes = statuses(pack);
        for (check, (status, reason)) in &outcomes {
            assert!(
                status == "passed" || status == "skipped",
                "{label}: {check} is {status}: {reason}"
            );
        }
        for step in ["read_result_type_present", "read_cache_hints_present"] {
            let (status, reason) = &outcomes[&format!("modern-resources@2026-07-28:{step}")];
            assert_eq!(status, "skipped", "{label}: {step}");
            assert!(
                reason.starts_with("no resource to read: resources/list is empty"),
                "{label}: {step}: {reason}"
            );
        }
    }
}

/// The table covers every check of both packs, in the check's own era (the utilities
/// checks need `--utilities` and `--set elicitation_tool=…`: tests/coverage.rs has their
/// table).
#[test]
fn every_check_has_a_seeded_defect() {
    let uncovered: Vec<&&str> = CHECKS
        .iter()
        .filter(|check| !check.contains("-utilities:"))
        .filter(|check| {
            let (scenario, step) = check.split_once(':').expect("scenario:step");
            let era = era_of_scenario(scenario);
            !CASES.iter().any(|(_, case_era, _, case, _)| {
                *case_era == era && (case == *check || *case == format!("*:{step}"))
            })
        })
        .collect();
    assert!(
        uncovered.is_empty(),
        "checks without a defect: {uncovered:?}"
    );
}

// ---------------------------------------------------------------------------
// 3. Listing
// ---------------------------------------------------------------------------

/// `scenario:step` lines of `mcpspec list`.
fn listed_checks(pack: &str) -> BTreeSet<String> {
    let out = run(&["list", pack]);
    assert_eq!(out.code, 0, "{out:?}");
    // Check lines are `  scenario:step` (pack lines, `pack ...` and their details, are not).
    out.stdout
        .lines()
        .filter_map(|line| line.strip_prefix("  "))
        .map(str::trim)
        .filter(|check| check.contains(':') && !check.contains(' '))
        .map(str::to_string)
        .collect()
}

#[test]
fn list_conformance_lists_every_check_id() {
    let listed = listed_checks("conformance");
    let expected: BTreeSet<String> = CHECKS.iter().map(|c| c.to_string()).collect();
    assert_eq!(listed, expected);
    let modern = listed_checks("conformance-2026-07-28");
    assert!(
        modern.iter().all(|c| c.starts_with("modern-")),
        "{modern:?}"
    );
    let legacy = listed_checks("conformance-2025-11-25");
    assert!(
        legacy.iter().all(|c| c.starts_with("legacy-")),
        "{legacy:?}"
    );
    assert_eq!(modern.len() + legacy.len(), CHECKS.len());
}

#[test]
fn every_pack_file_pins_its_era_and_schema() {
    for (dir, era) in [
        ("specs/conformance-2026-07-28", MODERN),
        ("specs/conformance-2025-11-25", LEGACY),
    ] {
        let dir = common::repo_root().join(dir);
        for entry in std::fs::read_dir(&dir).expect("pack folder") {
            let path = entry.expect("entry").path();
            if path.file_name().is_some_and(|n| n == "pack.yaml") {
                continue; // the manifest, not a scenario
            }
            let text = std::fs::read_to_string(&path).expect("pack file");
            assert!(
                text.starts_with(
                    "# yaml-language-server: $schema=../../schema/scenario.schema.json\n"
                ),
                "{} lacks the schema modeline",
                path.display()
            );
            assert!(
                text.contains(&format!("\neras: [{era}]\n")),
                "{} is not pinned to eras: [{era}]",
                path.display()
            );
        }
    }
}
