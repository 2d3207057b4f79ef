//! The MCP requests as this server answers them: rmcp's `ServerHandler`, with the defects
//! and changes applied.

use std::{borrow::Cow, sync::atomic::Ordering};

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    handler::server::tool::ToolCallContext,
    model::{
        CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestMethod,
        CompleteRequestParams, CompleteResult, ContentBlock, CustomRequest, CustomResult,
        DiscoverResult, ErrorCode, GetPromptRequestMethod, GetPromptRequestParams,
        GetPromptResponse, GetPromptResult, ListPromptsRequestMethod, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
        PromptMessage, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
        ReadResourceResult, Role, ServerCapabilities, ServerConfig, SetLevelRequestMethod,
        SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
    },
    service::{RequestContext, SubscriptionContext},
};
use serde_json::json;

use super::{
    ExampleServer, INSTRUCTIONS, implementation, is_modern, missing_required_argument, prompt_arg,
    result_meta, uuid_like,
};
use crate::{
    defects::{self, Capability, Defect},
    interactive, listen, utilities,
};

/// Methods rmcp knows. rmcp turns a request whose params do not fit the method's shape
/// into a custom request; for these methods that is bad params, not an unknown method.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
];

impl ServerHandler for ExampleServer {
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        if request.method == "tools/call" && self.defects().has(&Defect::MalformedCallInternalError)
        {
            Err(McpError::internal_error(
                format!("Internal error: {} failed", request.method),
                None,
            ))
        } else if KNOWN_METHODS.contains(&request.method.as_str()) {
            Err(McpError::invalid_params(
                format!("Invalid params for {}", request.method),
                None,
            ))
        } else if self.defects().has(&Defect::UnknownMethodInvalidRequest) {
            Err(McpError::invalid_request(
                format!("Invalid request: {}", request.method),
                None,
            ))
        } else {
            Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {}", request.method),
                None,
            ))
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let accepted = self.0.settings.utilities.then(|| requested.clone());
        if accepted.is_some() {
            self.0.live.accepted();
        }
        accepted
    }

    /// Hold an acknowledged subscription open until the client cancels it; `toggle_tool`
    /// announces its changes to it meanwhile.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let _registered = self.0.live.subscribe(self.defects(), &context);
        context.cancelled().await;
        Ok(())
    }

    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .build();
        if self.0.settings.utilities {
            capabilities = utilities::capabilities(capabilities);
        }
        ServerConfig::new(defects::capabilities(
            self.defects(),
            self.changes().capabilities(capabilities),
        ))
        .with_server_info(implementation())
        .with_instructions(defects::instructions(
            self.defects(),
            self.changes().instructions(INSTRUCTIONS),
        ))
    }

    /// Also what `initialize` may negotiate: without a legacy version (`drop-legacy`),
    /// rmcp refuses the handshake.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(self.supported_versions())
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        if self.defects().has(&Defect::LegacyOnly) {
            return Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                "Method not found: server/discover",
                None,
            ));
        }
        let mut result =
            DiscoverResult::from_server_info(self.supported_versions().to_vec(), self.get_info());
        result.ttl_ms = self.0.settings.ttl_ms;
        result.cache_scope = CacheScope::Public;
        Ok(result)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.check_served(Capability::Tools, "tools/list")?;
        utilities::report_progress(self.defects(), &context).await;
        if self.0.settings.utilities {
            let level = *self.0.log_level.lock().expect("lock");
            utilities::log(
                self.defects(),
                level,
                is_modern(&context),
                &context,
                "tools/list",
            )
            .await;
            utilities::unrequested_list_changed(
                self.defects(),
                is_modern(&context),
                "tools",
                &context,
            )
            .await;
        }
        if self.defects().has(&Defect::UndeclaredLogging) && !self.0.settings.utilities {
            utilities::log_undeclared(&context, "tools/list").await;
        }
        let mut tools = Cow::Borrowed(&self.0.tools);
        if self.defects().has(&Defect::UnstableToolOrder) && !tools.is_empty() {
            let calls = self.0.tool_lists.fetch_add(1, Ordering::Relaxed);
            tools.to_mut().rotate_left(calls % self.0.tools.len());
        }
        if self.0.live.ephemeral() {
            tools.to_mut().push(listen::ephemeral_tool());
        }
        let page = self.page(&tools, request.as_ref())?;
        let mut result = ListToolsResult::with_all_items(page.items);
        result.next_cursor = page.next_cursor;
        (result.ttl_ms, result.cache_scope) = self.page_cache_hints(&context, request.as_ref());
        result.meta = result_meta(&context);
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.router.get(name).cloned()
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let oversized = defects::before_tool_call(self.defects()).await;
        self.check_served(Capability::Tools, "tools/call")?;
        if self.0.settings.utilities && request.name == utilities::CONFIRM_TOOL {
            let mut response =
                utilities::confirm(self.defects(), &request, is_modern(&context), &context)?;
            if let CallToolResponse::Complete(result) = &mut response {
                result.meta = result_meta(&context);
            }
            return Ok(response);
        }
        if self.0.settings.interactive && request.name == crate::tasks::TOOL {
            let mut result = crate::tasks::plain_result(request.arguments.as_ref());
            result.meta = result_meta(&context);
            return Ok(result.into());
        }
        if self.0.settings.interactive && interactive::is_interactive(&request.name) {
            let modern = is_modern(&context);
            let mut response = interactive::call(
                self.defects(),
                &request,
                modern,
                &context,
                self.0.settings.ask_on_session_stream,
            )
            .await?;
            if let CallToolResponse::Complete(result) = &mut response {
                result.meta = result_meta(&context);
            }
            return Ok(response);
        }
        if request.name == "slow" {
            utilities::report_progress(self.defects(), &context).await;
        }
        if let Some(address) = &self.0.settings.reach_out
            && request.name == crate::reach_out::REACH_OUT
        {
            let mut result = crate::reach_out::call(address).await;
            result.meta = result_meta(&context);
            return Ok(result.into());
        }
        if self.0.settings.orders {
            let user = self.user(&context);
            let unbound = self.defects().has(&Defect::UnboundHandles);
            let answer = self.0.orders.call(
                &request.name,
                request.arguments.as_ref(),
                user,
                unbound,
                uuid_like,
            );
            if let Some(mut result) = answer {
                result.meta = result_meta(&context);
                return Ok(result.into());
            }
        }
        if self.0.settings.utilities
            && (request.name == listen::TOGGLE_TOOL
                || (request.name == listen::EPHEMERAL_TOOL && self.0.live.ephemeral()))
        {
            let text = if request.name == listen::EPHEMERAL_TOOL {
                "here for now".to_owned()
            } else {
                let modern = is_modern(&context);
                let listed = self.0.live.toggle(self.defects(), modern, &context).await;
                format!(
                    "{} is {}",
                    listen::EPHEMERAL_TOOL,
                    if listed { "listed" } else { "gone" }
                )
            };
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.meta = result_meta(&context);
            return Ok(result.into());
        }
        if !self.0.router.has_route(&request.name)
            && self.defects().has(&Defect::UnknownToolIsError)
        {
            let text = format!("Unknown tool: {}", request.name);
            return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
        }
        if !self.0.router.has_route(&request.name) {
            return Err(McpError::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        }
        let meta = result_meta(&context);
        if let Some(tool) = self.get_tool(&request.name)
            && let Some(answer) = defects::argument_defects(
                self.defects(),
                &tool.input_schema,
                request.arguments.as_ref(),
            )
            .await
        {
            let mut result = answer?;
            result.meta = meta;
            return Ok(result.into());
        }
        let name = request.name.clone();
        if name == "slow"
            && let Some(at_least) = self.defects().slow_read_tool()
        {
            tokio::time::sleep(at_least).await;
        }
        if name == "echo" && self.defects().has(&Defect::FlakyOnePercent) {
            // Process-wide: over HTTP each session has its own server value.
            static ECHO_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = ECHO_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if n.is_multiple_of(100) {
                let text = format!("flaky failure (echo call {n})");
                let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
                result.meta = meta;
                return Ok(result.into());
            }
        }
        let fix = self.changes().adapt_call(&mut request);
        let mut response = match oversized {
            Some(text) => CallToolResult::success(vec![ContentBlock::text(text)]).into(),
            None => {
                let call = ToolCallContext::new(self, request, context);
                let mut response = self.0.router.call(call).await?;
                if let CallToolResponse::Complete(result) = &mut response {
                    fix.apply(result);
                }
                response
            }
        };
        if let CallToolResponse::Complete(result) = &mut response {
            defects::result_defects(self.defects(), &name, result);
            result.meta = meta;
        }
        Ok(response)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        if !self.0.settings.utilities {
            return Err(McpError::method_not_found::<CompleteRequestMethod>());
        }
        let mut result = utilities::complete(self.defects(), &request)?;
        result.meta = result_meta(&context);
        Ok(result)
    }

    /// Legacy only: 2026-07-28 removed it (the level comes in each request's `_meta`).
    #[allow(
        deprecated,
        reason = "logging is deprecated (SEP-2577) but still served"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.0.settings.utilities
            || is_modern(&context)
            || self.defects().has(&Defect::SetLevelRefused)
        {
            return Err(McpError::method_not_found::<SetLevelRequestMethod>());
        }
        *self.0.log_level.lock().expect("lock") = Some(request.level);
        Ok(())
    }

    /// Legacy only (rmcp refuses it on modern requests). The resource "changes" at once:
    /// a `notifications/resources/updated` follows the reply 50 ms later (what scenarios
    /// wait for with `within`).
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscription("resources/subscribe", &request.uri)?;
        let peer = context.peer.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let updated =
                serde_json::from_value(json!({"uri": request.uri})).expect("a valid notification");
            let _ = peer.notify_resource_updated(updated).await;
        });
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscription("resources/unsubscribe", &request.uri)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.check_served(Capability::Resources, "resources/list")?;
        if self.0.settings.utilities {
            let modern = is_modern(&context);
            utilities::unrequested_list_changed(self.defects(), modern, "resources", &context)
                .await;
        }
        let page = self.page(&self.0.resources, request.as_ref())?;
        let mut result = ListResourcesResult::with_all_items(page.items);
        result.next_cursor = page.next_cursor;
        (result.ttl_ms, result.cache_scope) = self.page_cache_hints(&context, request.as_ref());
        result.meta = result_meta(&context);
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.check_served(Capability::Resources, "resources/templates/list")?;
        let page = self.page(&self.0.resource_templates, request.as_ref())?;
        let mut result = ListResourceTemplatesResult::with_all_items(page.items);
        result.next_cursor = page.next_cursor;
        (result.ttl_ms, result.cache_scope) = self.page_cache_hints(&context, request.as_ref());
        result.meta = result_meta(&context);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.check_served(Capability::Resources, "resources/read")?;
        // Sent with any read, found or not.
        if self.defects().has(&Defect::LogOnRead) && !self.0.settings.utilities {
            utilities::log_undeclared(&context, "resources/read").await;
        }
        if self.defects().has(&Defect::NotifyUndeclared)
            && !self.0.settings.utilities
            && !is_modern(&context)
        {
            utilities::notify_undeclared(&context, &request.uri).await;
        }
        // -32002 here; rmcp turns it into -32602 for 2026-07-28+ requests.
        let user = self.user(&context);
        let contents = self
            .read(&request.uri)
            .or_else(|| self.read_note(&request.uri, user.as_deref()))
            .ok_or_else(|| {
                McpError::resource_not_found(
                    format!("Resource not found: {}", request.uri),
                    Some(json!({"uri": request.uri})),
                )
            })?;
        let mut result = ReadResourceResult::new(vec![contents]);
        (result.ttl_ms, result.cache_scope) = self.cache_hints(&context);
        result.meta = result_meta(&context);
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        if !self.changes().serves_prompts() {
            return Err(McpError::method_not_found::<ListPromptsRequestMethod>());
        }
        self.check_served(Capability::Prompts, "prompts/list")?;
        if self.0.settings.utilities {
            let modern = is_modern(&context);
            utilities::unrequested_list_changed(self.defects(), modern, "prompts", &context).await;
        }
        let page = self.page(&self.0.prompts, request.as_ref())?;
        let mut result = ListPromptsResult::with_all_items(page.items);
        result.next_cursor = page.next_cursor;
        (result.ttl_ms, result.cache_scope) = self.page_cache_hints(&context, request.as_ref());
        result.meta = result_meta(&context);
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if !self.changes().serves_prompts() {
            return Err(McpError::method_not_found::<GetPromptRequestMethod>());
        }
        self.check_served(Capability::Prompts, "prompts/get")?;
        let Some(prompt) = self.0.prompts.iter().find(|p| p.name == request.name) else {
            return Err(McpError::invalid_params(
                format!("Unknown prompt: {}", request.name),
                None,
            ));
        };
        let advertises = |argument: &str| {
            prompt
                .arguments
                .iter()
                .flatten()
                .any(|advertised| advertised.name == argument)
        };
        let (description, text) = match prompt.name.as_str() {
            "greet" => {
                let lenient = self.defects().has(&Defect::PromptMissingArgumentServed);
                let name = prompt_arg(&request, "name", !lenient)?.unwrap_or_default();
                if let Some(missing) = missing_required_argument(prompt, &request)
                    && !lenient
                {
                    return Err(McpError::invalid_params(
                        format!("missing required prompt argument `{missing}`"),
                        None,
                    ));
                }
                let mut text = match prompt_arg(&request, "style", false)? {
                    Some(style) => format!("Say hello to {name} in a {style} style"),
                    None => format!("Say hello to {name}"),
                };
                // Arguments only a next release has (`changes.rs`).
                if advertises("language")
                    && let Some(language) = prompt_arg(&request, "language", false)?
                {
                    text.push_str(&format!(", in {language}"));
                }
                if advertises("emoji")
                    && let Some(emoji) = prompt_arg(&request, "emoji", false)?
                {
                    text.push_str(&format!(", ending with {emoji}"));
                }
                ("Greet someone", text)
            }
            // `summarise` is `summarize` renamed by `--change rename-prompt`.
            "summarize" | "summarise" => (
                "Summarize the conversation",
                "Summarize the conversation so far.".to_owned(),
            ),
            "translate" => {
                let text = prompt_arg(&request, "text", true)?.unwrap_or_default();
                (
                    "Translate a text",
                    format!("Translate into English: {text}"),
                )
            }
            other => {
                return Err(McpError::invalid_params(
                    format!("Unknown prompt: {other}"),
                    None,
                ));
            }
        };
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(description);
        result.meta = result_meta(&context);
        Ok(result.into())
    }
}
