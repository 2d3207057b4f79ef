//! Message-level defects: JSON-RPC rewrites of requests (before rmcp sees them) and of
//! responses (after rmcp wrote them), shared by stdio and HTTP.

use serde_json::Value;

use super::handler::wrong_id;
use super::{Defect, Defects};

// ---------------------------------------------------------------------------
// Message-level defects: JSON-RPC rewrites of requests (before rmcp sees them) and of
// responses (after rmcp wrote them), shared by stdio and HTTP.
// ---------------------------------------------------------------------------

pub(crate) const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO_META: &str = "io.modelcontextprotocol/clientInfo";
const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";
const MODERN_REVISION: &str = "2026-07-28";
/// Revisions this server speaks (`server::SUPPORTED_VERSIONS`, as strings).
pub(super) const SPOKEN_REVISIONS: &[&str] = &["2025-11-25", "2026-07-28"];

/// What a response defect needs to know about the request it answers.
#[derive(Clone, Debug)]
pub struct Seen {
    pub(super) method: String,
    params: Value,
}

impl Seen {
    /// The request (after the request defects), if `message` is a request with an id.
    pub fn of(message: &Value) -> Option<(String, Seen)> {
        let id = message.get("id")?;
        let method = message.get("method")?.as_str()?.to_owned();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        Some((id.to_string(), Seen { method, params }))
    }

    /// The `_meta` protocol version of a modern request.
    fn meta_version(&self) -> Option<&str> {
        self.params
            .get("_meta")?
            .get(PROTOCOL_VERSION_META)?
            .as_str()
    }

    fn is_modern(&self) -> bool {
        self.meta_version().is_some_and(|v| v >= MODERN_REVISION)
    }
}

/// The JSON-RPC rewrites the message-level defects make.
#[derive(Clone, Debug, Default)]
pub struct MessageDefects {
    no_result_type: bool,
    no_cache_hints: bool,
    no_server_info_meta: bool,
    no_server_info: bool,
    no_capabilities: bool,
    bad_counter_offer: bool,
    error_wrong_id: bool,
    error_codes: Vec<(i64, i64)>,
    resource_not_found_empty: bool,
    accept_unsupported_version: bool,
    accept_missing_client_capabilities: bool,
    require_client_info: bool,
    no_ping: bool,
    output_schema_not_object: bool,
    wire_tools_missing_input_schema: bool,
    wire_list_item_missing_name: bool,
    wire_wrong_type_content: bool,
    wire_error_code_string: bool,
    pub(super) answer_removed_methods: bool,
    initialize_invalid_params: bool,
    error_id_null: bool,
    description_varies: bool,
    /// A contract change, not a defect (`--change task-support-*`): `(tool, execution)`
    /// added to that tool's tools/list entry.
    tool_execution: Option<(&'static str, Value)>,
    /// Not a defect (`--max-revision`): the newest legacy revision `initialize` agrees to.
    max_revision: Option<&'static str>,
    /// `asks-nested-schema`, in the 2026-07-28 `inputRequests`.
    asks_nested_schema: bool,
}

/// Methods a modern-only server no longer serves (2026-07-28 changelog).
const REMOVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

impl MessageDefects {
    pub fn new(defects: &Defects) -> Self {
        Self {
            no_result_type: defects.has(&Defect::NoResultType),
            no_cache_hints: defects.has(&Defect::NoCacheHints),
            no_server_info_meta: defects.has(&Defect::NoServerInfoMeta),
            no_server_info: defects.has(&Defect::NoServerInfo),
            no_capabilities: defects.has(&Defect::NoCapabilities),
            bad_counter_offer: defects.has(&Defect::BadCounterOffer),
            error_wrong_id: defects.has(&Defect::ErrorWrongId),
            error_codes: defects
                .0
                .iter()
                .filter_map(|defect| match defect {
                    Defect::RewriteErrorCode(from, to) => Some((*from, *to)),
                    _ => None,
                })
                .collect(),
            resource_not_found_empty: defects.has(&Defect::ResourceNotFoundEmpty),
            accept_unsupported_version: defects.has(&Defect::AcceptUnsupportedVersion),
            accept_missing_client_capabilities: defects
                .has(&Defect::AcceptMissingClientCapabilities),
            require_client_info: defects.has(&Defect::RequireClientInfo),
            no_ping: defects.has(&Defect::NoPing),
            output_schema_not_object: defects.has(&Defect::OutputSchemaNotObject),
            wire_tools_missing_input_schema: defects.has(&Defect::WireToolsMissingInputSchema),
            wire_list_item_missing_name: defects.has(&Defect::WireListItemMissingName),
            wire_wrong_type_content: defects.has(&Defect::WireWrongTypeContent),
            wire_error_code_string: defects.has(&Defect::WireErrorCodeString),
            answer_removed_methods: defects.has(&Defect::AnswerRemovedMethods),
            initialize_invalid_params: defects.has(&Defect::InitializeInvalidParams),
            error_id_null: defects.has(&Defect::ErrorIdNull),
            description_varies: defects.has(&Defect::DescriptionVariesByConnection),
            tool_execution: None,
            max_revision: None,
            asks_nested_schema: defects.has(&Defect::AsksNestedSchema),
        }
    }

    pub fn requests_active(&self) -> bool {
        self.accept_unsupported_version
            || self.accept_missing_client_capabilities
            || self.require_client_info
            || self.no_ping
    }

    pub fn responses_active(&self) -> bool {
        self.no_result_type
            || self.description_varies
            || self.no_cache_hints
            || self.no_server_info_meta
            || self.no_server_info
            || self.no_capabilities
            || self.bad_counter_offer
            || self.error_wrong_id
            || !self.error_codes.is_empty()
            || self.resource_not_found_empty
            || self.output_schema_not_object
            || self.wire_tools_missing_input_schema
            || self.wire_list_item_missing_name
            || self.wire_wrong_type_content
            || self.wire_error_code_string
            || self.answer_removed_methods
            || self.initialize_invalid_params
            || self.error_id_null
            || self.tool_execution.is_some()
            || self.max_revision.is_some()
            || self.asks_nested_schema
    }

    /// Whether a legacy response is rewritten: over HTTP, buffering a legacy call's SSE
    /// stream would hold back the server's own requests on it (`asks-nested-schema`
    /// rewrites only 2026-07-28 `inputRequests`).
    pub fn legacy_responses_active(&self) -> bool {
        Self {
            asks_nested_schema: false,
            ..self.clone()
        }
        .responses_active()
    }

    /// Answers `initialize` as a server whose newest revision is `max` (`--max-revision`).
    pub fn with_max_revision(mut self, max: Option<&'static str>) -> Self {
        self.max_revision = max;
        self
    }

    /// Adds `execution` to a tool's listing (`Changes::tool_execution`).
    pub fn with_tool_execution(mut self, execution: Option<(&'static str, Value)>) -> Self {
        self.tool_execution = execution;
        self
    }

    /// Whether `answer-removed-methods` turns this refusal into a result.
    pub(super) fn answers_removed(&self, method: &str) -> bool {
        self.answer_removed_methods && REMOVED_METHODS.contains(&method)
    }

    /// Rewrites an inbound request or notification; true if it changed.
    pub fn rewrite_request(&self, message: &mut Value) -> bool {
        let mut changed = false;
        if self.no_ping && message.get("method").and_then(Value::as_str) == Some("ping") {
            message["method"] = Value::from("mcpspec/ping-disabled");
            changed = true;
        }
        let Some(meta) = message
            .pointer_mut("/params/_meta")
            .and_then(Value::as_object_mut)
        else {
            return changed;
        };
        let Some(version) = meta.get(PROTOCOL_VERSION_META).and_then(Value::as_str) else {
            return changed;
        };
        if self.accept_unsupported_version && !SPOKEN_REVISIONS.contains(&version) {
            meta.insert(PROTOCOL_VERSION_META.into(), Value::from(MODERN_REVISION));
            changed = true;
        }
        if self.accept_missing_client_capabilities && !meta.contains_key(CLIENT_CAPABILITIES_META) {
            meta.insert(CLIENT_CAPABILITIES_META.into(), serde_json::json!({}));
            changed = true;
        }
        if self.require_client_info && !meta.contains_key(CLIENT_INFO_META) {
            // Without clientCapabilities rmcp rejects the request with -32602.
            changed |= meta.remove(CLIENT_CAPABILITIES_META).is_some();
        }
        changed
    }

    /// Rewrites a response to `request`; true if it changed.
    pub fn rewrite_response(&self, request: Option<&Seen>, message: &mut Value) -> bool {
        let mut changed = false;
        let method = request.map_or("", |seen| seen.method.as_str());
        let modern = request.is_some_and(Seen::is_modern);
        if self.resource_not_found_empty
            && method == "resources/read"
            && let Some(object) = message.as_object_mut()
            && object.remove("error").is_some()
        {
            let mut result = serde_json::json!({"contents": []});
            if modern {
                result["resultType"] = Value::from("complete");
            }
            object.insert("result".into(), result);
            changed = true;
        }
        if self.answers_removed(method)
            && let Some(object) = message.as_object_mut()
            && object.remove("error").is_some()
        {
            object.insert("result".into(), serde_json::json!({}));
            changed = true;
        }
        if self.initialize_invalid_params
            && method == "initialize"
            && let Some(error) = message.get_mut("error").and_then(Value::as_object_mut)
        {
            error.insert("code".into(), Value::from(-32602));
            error.insert(
                "message".into(),
                Value::from(
                    "Invalid params: missing _meta io.modelcontextprotocol/protocolVersion",
                ),
            );
            error.remove("data");
            changed = true;
        }
        if self.error_id_null
            && message.get("error").is_some()
            && let Some(id) = message.get_mut("id")
            && !id.is_null()
        {
            *id = Value::Null;
            changed = true;
        }
        if let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) {
            if self.asks_nested_schema
                && let Some(requests) = result
                    .get_mut("inputRequests")
                    .and_then(Value::as_object_mut)
            {
                for asked in requests.values_mut() {
                    if asked.get("method").and_then(Value::as_str) == Some("elicitation/create")
                        && let Some(params) = asked.get_mut("params")
                    {
                        crate::interactive::nest_schema(params);
                        changed = true;
                    }
                }
            }
            if self.no_result_type {
                changed |= result.remove("resultType").is_some();
            }
            if self.no_cache_hints {
                changed |= result.remove("ttlMs").is_some();
                changed |= result.remove("cacheScope").is_some();
            }
            if self.no_server_info_meta
                && let Some(meta) = result.get_mut("_meta").and_then(Value::as_object_mut)
            {
                changed |= meta.remove(SERVER_INFO_META).is_some();
                if meta.is_empty() {
                    result.remove("_meta");
                }
            }
            if self.output_schema_not_object
                && method == "tools/list"
                && result.get("nextCursor").is_none()
                && let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut)
            {
                // The last page lists one more tool, whose outputSchema is no object schema.
                tools.push(serde_json::json!({
                    "name": "string_output",
                    "description": "Listed by a seeded defect; not callable.",
                    "inputSchema": {"type": "object"},
                    "outputSchema": {"type": "string"},
                }));
                changed = true;
            }
            if self.description_varies
                && method == "tools/list"
                && let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut)
            {
                for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
                    let text = tool
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let text = format!("{text} (served by process {})", std::process::id());
                    tool.insert("description".into(), Value::String(text));
                }
                changed = true;
            }
            changed |= self.break_wire(method, result);
            if let Some((tool, execution)) = &self.tool_execution
                && method == "tools/list"
                && let Some(item) = result
                    .get_mut("tools")
                    .and_then(Value::as_array_mut)
                    .and_then(|tools| tools.iter_mut().find(|t| t["name"] == *tool))
                    .and_then(Value::as_object_mut)
            {
                item.insert("execution".into(), execution.clone());
                changed = true;
            }
            if self.no_capabilities && matches!(method, "initialize" | "server/discover") {
                changed |= result.remove("capabilities").is_some();
            }
            if method == "initialize" {
                if self.no_server_info {
                    changed |= result.remove("serverInfo").is_some();
                }
                let offer = request.and_then(|seen| seen.params.get("protocolVersion"));
                if let Some(max) = self.max_revision {
                    // An older revision it knows is echoed; anything else gets its newest.
                    let answer = match offer.and_then(Value::as_str) {
                        Some(o) if o <= max && crate::server::LEGACY_REVISIONS.contains(&o) => o,
                        _ => max,
                    };
                    result.insert("protocolVersion".into(), Value::from(answer));
                    changed = true;
                }
                if self.bad_counter_offer
                    && let Some(offer) = offer.filter(|offer| offer.is_string())
                    && result.get("protocolVersion") != Some(offer)
                {
                    result.insert("protocolVersion".into(), offer.clone());
                    changed = true;
                }
            }
        }
        if let Some(error) = message.get_mut("error").and_then(Value::as_object_mut) {
            let code = error.get("code").and_then(Value::as_i64);
            if let Some((_, to)) = self
                .error_codes
                .iter()
                .find(|(from, _)| Some(*from) == code)
            {
                error.insert("code".into(), Value::from(*to));
                changed = true;
            }
            if self.wire_error_code_string
                && let Some(code) = error.get("code").and_then(Value::as_i64)
            {
                error.insert("code".into(), Value::from(code.to_string()));
                changed = true;
            }
            if self.error_wrong_id
                && let Some(id) = message.get_mut("id").filter(|id| !id.is_null())
            {
                *id = wrong_id(id);
                changed = true;
            }
        }
        changed
    }

    /// The `wire-*` defects on a result of `method`; true if it changed.
    fn break_wire(&self, method: &str, result: &mut serde_json::Map<String, Value>) -> bool {
        // Removes `field` from the first item of the list at `key`.
        let drop_first = |result: &mut serde_json::Map<String, Value>, key: &str, field: &str| {
            result
                .get_mut(key)
                .and_then(|items| items.get_mut(0))
                .and_then(Value::as_object_mut)
                .is_some_and(|item| item.remove(field).is_some())
        };
        let mut changed = false;
        if self.wire_tools_missing_input_schema && method == "tools/list" {
            changed |= drop_first(result, "tools", "inputSchema");
        }
        let list_key = match method {
            "prompts/list" => Some("prompts"),
            "resources/list" => Some("resources"),
            "resources/templates/list" => Some("resourceTemplates"),
            _ => None,
        };
        if self.wire_list_item_missing_name
            && let Some(key) = list_key
        {
            changed |= drop_first(result, key, "name");
        }
        if self.wire_wrong_type_content
            && method == "tools/call"
            && let Some(content) = result.get_mut("content")
        {
            let text: Vec<&str> = content
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect();
            *content = Value::from(text.join("\n"));
            changed = true;
        }
        changed
    }
}
