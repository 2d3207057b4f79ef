//! The MCP handler: identity, tools dispatch, resources, prompts, pagination, and the
//! modern-era result decorations (`_meta` serverInfo, cache hints).
//!
//! The lists are built once at start, with the `--change` contract changes applied and
//! in delivery order (`--reverse-order`); reads and prompt gets are driven by them.

use std::{
    borrow::Cow,
    collections::HashMap,
    hash::{BuildHasher, Hasher, RandomState},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{SystemTime, UNIX_EPOCH},
};

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    handler::server::{router::tool::ToolRouter, tool::ToolCallContext},
    model::{
        CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestMethod,
        CompleteRequestParams, CompleteResult, ContentBlock, CustomRequest, CustomResult,
        DiscoverResult, ErrorCode, GetPromptRequestMethod, GetPromptRequestParams,
        GetPromptResponse, GetPromptResult, Implementation, ListPromptsRequestMethod,
        ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
        MetaObject, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ProtocolVersion,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
        ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
        SetLevelRequestMethod, SubscribeRequestParams, SubscriptionFilter, Tool,
        UnsubscribeRequestParams,
    },
    service::{RequestContext, SubscriptionContext},
};
use serde_json::json;

use crate::{
    changes::{self, Changes},
    defects::{self, Capability, Defect, Defects},
    interactive, listen, orders,
    paging::{Page, page},
    tools, utilities,
};

pub const NAME: &str = "mcpspec-example-server";
pub const VERSION: &str = "1.0.0";
pub const INSTRUCTIONS: &str = "Example server for mcpspec.";

/// Versions served: the last legacy revision (initialize handshake) and the first modern one.
pub const SUPPORTED_VERSIONS: &[ProtocolVersion] =
    &[ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

/// Default `ttlMs` of every cacheable result (modern era only; `--ttl-ms`).
pub const DEFAULT_TTL_MS: u64 = 60_000;

const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

const README_URI: &str = "example://readme";
const LOGO_URI: &str = "example://logo";
const ITEM_TEMPLATE: &str = "example://items/{id}";
const README_TEXT: &str = "# mcpspec example server\n\nA small MCP server with tools, resources \
and prompts, used by mcpspec's quickstart and tests.\n";
/// A 1x1 PNG.
const LOGO_PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// The legacy revisions the server can be limited to (`--max-revision`).
pub const LEGACY_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Command-line settings that shape the server.
#[derive(Clone, Debug)]
pub struct Settings {
    pub page_size: usize,
    pub extra_tools: usize,
    pub defects: Defects,
    /// Contract changes (`--change`).
    pub changes: Changes,
    /// `ttlMs` of cacheable results; delivery only, not part of the contract.
    pub ttl_ms: u64,
    /// Return the lists in reverse order; delivery only, not part of the contract.
    pub reverse_order: bool,
    /// HTTP `--auth-tokens`: static bearer token → user name. Empty: no users.
    pub auth_tokens: Vec<(String, String)>,
    /// `--empty`: list no tools, resources, templates or prompts (the capabilities stay
    /// declared): a correct server with nothing to offer yet.
    pub empty: bool,
    /// `--utilities`: declare and serve logging, completions, subscriptions, listChanged.
    pub utilities: bool,
    /// `--interactive`: the tools that ask the client back (elicitation, sampling, roots).
    pub interactive: bool,
    /// `--ask-on-session-stream`: the interactive tools' legacy requests go out unrelated
    /// to the call (over HTTP, on the session's GET stream).
    pub ask_on_session_stream: bool,
    /// `--orders`: the `create_order` / `get_order` tools (a handle and its consumer).
    pub orders: bool,
    /// `--reach-out HOST:PORT`: the mislabelled `reach_out` tool (see `reach_out`).
    pub reach_out: Option<String>,
    /// `--max-revision`: the newest legacy revision `initialize` agrees to (an older
    /// server's counter-offer); `None`: the SDK's own.
    pub max_revision: Option<&'static str>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            page_size: 0,
            extra_tools: 0,
            defects: Defects::default(),
            changes: Changes::default(),
            ttl_ms: DEFAULT_TTL_MS,
            reverse_order: false,
            auth_tokens: Vec::new(),
            empty: false,
            utilities: false,
            interactive: false,
            ask_on_session_stream: false,
            max_revision: None,
            orders: false,
            reach_out: None,
        }
    }
}

/// A stored note: `create_note`'s side effect, readable as `note://ID` by its owner.
pub struct Note {
    pub title: String,
    pub body: String,
    /// The user who created it (`--auth-tokens`); `None` without users.
    pub owner: Option<String>,
}

/// URI prefix of stored notes (`note://ID`; not listed, readable by the note's owner).
pub const NOTE_URI_PREFIX: &str = "note://";

struct Shared {
    settings: Settings,
    router: ToolRouter<ExampleServer>,
    /// `router`'s tools, sorted by name (the `tools/list` order).
    tools: Vec<Tool>,
    resources: Vec<Resource>,
    resource_templates: Vec<ResourceTemplate>,
    prompts: Vec<Prompt>,
    notes: Mutex<HashMap<String, Note>>,
    /// `tools/list` calls so far (the `unstable-tool-order` defect rotates by it).
    tool_lists: AtomicUsize,
    /// Notes stored so far (the `sequential-handles` defect numbers them by it).
    note_count: AtomicUsize,
    /// Legacy `logging/setLevel` (`--utilities`); shared by the process's sessions.
    log_level: Mutex<Option<utilities::LogLevel>>,
    /// Run-time changes of the tools list and the listen subscriptions (`--utilities`).
    live: Arc<listen::Changes>,
    /// `--orders`: the orders `create_order` placed.
    orders: orders::Orders,
}

/// Cheap to clone; every clone (e.g. one per HTTP session) shares the tools and notes.
#[derive(Clone)]
pub struct ExampleServer(Arc<Shared>);

impl ExampleServer {
    pub fn new(settings: Settings) -> Self {
        let changes = &settings.changes;
        let mut router = tools::router(settings.extra_tools);
        changes.apply_tools(&mut router);
        let mut tools = router.list_all();
        let extra = defects::extra_tools(&settings.defects, &tools);
        tools.extend(extra);
        defects::describe_tools(&settings.defects, &mut tools);
        if settings.utilities {
            tools.push(utilities::confirm_tool());
            tools.push(listen::toggle_tool());
            tools.sort_by(|a, b| a.name.cmp(&b.name));
        }
        if settings.interactive {
            tools.extend(interactive::tools());
            tools.push(crate::tasks::tool());
            tools.sort_by(|a, b| a.name.cmp(&b.name));
        }
        if settings.orders {
            tools.extend(orders::tools());
            tools.sort_by(|a, b| a.name.cmp(&b.name));
        }
        if settings.reach_out.is_some() {
            tools.push(crate::reach_out::tool());
            tools.sort_by(|a, b| a.name.cmp(&b.name));
        }
        let mut resources = changes.resources(resources());
        let mut resource_templates = changes.resource_templates(resource_templates());
        let mut prompts = changes.prompts(prompts());
        if settings.empty {
            tools.clear();
            resources.clear();
            resource_templates.clear();
            prompts.clear();
        }
        if settings.reverse_order {
            tools.reverse();
            resources.reverse();
            resource_templates.reverse();
            prompts.reverse();
        }
        Self(Arc::new(Shared {
            settings,
            router,
            tools,
            resources,
            resource_templates,
            prompts,
            notes: Mutex::new(HashMap::new()),
            tool_lists: AtomicUsize::new(0),
            note_count: AtomicUsize::new(0),
            log_level: Mutex::new(None),
            live: Arc::default(),
            orders: Default::default(),
        }))
    }

    pub fn defects(&self) -> &Defects {
        &self.0.settings.defects
    }

    fn changes(&self) -> &Changes {
        &self.0.settings.changes
    }

    /// `resources/subscribe` and `unsubscribe`: served with `--utilities` for a resource
    /// that exists.
    fn subscription(&self, method: &str, uri: &str) -> Result<(), McpError> {
        if !self.0.settings.utilities || self.defects().has(&Defect::SubscribeRefused) {
            return Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
                None,
            ));
        }
        if self.read(uri).is_none() {
            return Err(McpError::resource_not_found(
                format!("Resource not found: {uri}"),
                Some(json!({"uri": uri})),
            ));
        }
        Ok(())
    }

    fn supported_versions(&self) -> &'static [ProtocolVersion] {
        self.changes().supported_versions(SUPPORTED_VERSIONS)
    }

    /// Modern-era cache hints (`ttlMs`, `cacheScope`); legacy results carry none.
    fn cache_hints(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> (Option<u64>, Option<CacheScope>) {
        if is_modern(context) {
            (Some(self.0.settings.ttl_ms), Some(CacheScope::Public))
        } else {
            (None, None)
        }
    }

    /// Cache hints of one page of a list: `mixed-cache-scope` makes later pages private.
    fn page_cache_hints(
        &self,
        context: &RequestContext<RoleServer>,
        request: Option<&PaginatedRequestParams>,
    ) -> (Option<u64>, Option<CacheScope>) {
        let (ttl_ms, scope) = self.cache_hints(context);
        let later_page = request.is_some_and(|request| request.cursor.is_some());
        if later_page && scope.is_some() && self.defects().has(&Defect::MixedCacheScope) {
            (ttl_ms, Some(CacheScope::Private))
        } else {
            (ttl_ms, scope)
        }
    }

    /// `unserved-capability`: the capability's methods are unknown (-32601).
    fn check_served(&self, capability: Capability, method: &str) -> Result<(), McpError> {
        if self.defects().unserved(capability) {
            Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
                None,
            ))
        } else {
            Ok(())
        }
    }

    /// The contents at `uri`: a listed resource, or a match of a listed template.
    fn read(&self, uri: &str) -> Option<ResourceContents> {
        match self.0.resources.iter().find(|resource| resource.uri == uri) {
            Some(resource) => resource_contents(resource),
            None => self
                .0
                .resource_templates
                .iter()
                .find_map(|template| template_contents(template, uri)),
        }
    }

    pub fn store_note(&self, note: Note) -> String {
        let n = self.0.note_count.fetch_add(1, Ordering::Relaxed) + 1;
        let id = if self.defects().has(&Defect::SequentialHandles) {
            format!("note-{n}")
        } else {
            uuid_like()
        };
        self.0
            .notes
            .lock()
            .expect("notes lock")
            .insert(id.clone(), note);
        id
    }

    /// The user a request runs as (`--auth-tokens`, from its bearer token).
    pub fn user(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        let parts = context.extensions.get::<axum::http::request::Parts>()?;
        let token = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)?
            .to_str()
            .ok()?
            .strip_prefix("Bearer ")?;
        self.0
            .settings
            .auth_tokens
            .iter()
            .find(|(t, _)| t == token)
            .map(|(_, user)| user.clone())
    }

    /// `note://ID` for its owner (anyone without users, or under `unbound-handles`).
    fn read_note(&self, uri: &str, user: Option<&str>) -> Option<ResourceContents> {
        let id = uri.strip_prefix(NOTE_URI_PREFIX)?;
        let notes = self.0.notes.lock().expect("notes lock");
        let note = notes.get(id)?;
        let bound = !self.defects().has(&Defect::UnboundHandles);
        if bound && note.owner.as_deref() != user {
            return None;
        }
        Some(ResourceContents::text(
            format!("{}\n\n{}", note.title, note.body),
            uri,
        ))
    }

    fn page<T: Clone>(
        &self,
        items: &[T],
        request: Option<&PaginatedRequestParams>,
    ) -> Result<Page<T>, McpError> {
        let cursor = request.and_then(|request| request.cursor.as_deref());
        let paged = page(items, self.0.settings.page_size, cursor);
        if paged.is_err() && self.defects().has(&Defect::IgnoreInvalidCursor) {
            return page(items, self.0.settings.page_size, None);
        }
        paged
    }
}

/// A random version-4-shaped UUID, from std's randomly keyed hasher.
fn uuid_like() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut words = [0u64; 2];
    for (i, word) in words.iter_mut().enumerate() {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u128(nanos);
        hasher.write_usize(i);
        *word = hasher.finish();
    }
    let bits =
        (u128::from(words[0]) << 64 | u128::from(words[1])) & !(0xf000 << 64) | (0x4000 << 64);
    let bits = bits & !(0xc << 60) | (0x8 << 60);
    let hex = format!("{bits:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// True when the request runs on protocol 2026-07-28 or later (modern era).
fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

fn implementation() -> Implementation {
    Implementation::new(NAME, VERSION)
}

/// Result `_meta` for the modern era: `io.modelcontextprotocol/serverInfo`.
fn result_meta(context: &RequestContext<RoleServer>) -> Option<MetaObject> {
    is_modern(context).then(|| {
        let mut meta = MetaObject::new();
        meta.0.insert(
            SERVER_INFO_META.to_owned(),
            serde_json::to_value(implementation()).expect("serializable"),
        );
        meta
    })
}

fn resources() -> Vec<Resource> {
    vec![
        Resource::new(README_URI, "readme")
            .with_title("README")
            .with_description("What this server is")
            .with_mime_type("text/markdown")
            .with_size(README_TEXT.len() as u64),
        Resource::new(LOGO_URI, "logo")
            .with_title("Logo")
            .with_description("A tiny PNG image")
            .with_mime_type("image/png"),
    ]
}

fn resource_templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(ITEM_TEMPLATE, "item")
            .with_title("Item")
            .with_description("An item by id; reading example://items/42 returns \"item 42\"")
            .with_mime_type("text/plain"),
    ]
}

/// The contents of a listed resource, by its name (its URI may be changed).
fn resource_contents(resource: &Resource) -> Option<ResourceContents> {
    let uri = resource.uri.as_str();
    let contents = match resource.name.as_str() {
        "readme" => ResourceContents::text(README_TEXT, uri),
        "logo" => ResourceContents::blob(LOGO_PNG_BASE64, uri),
        "changelog" => ResourceContents::text(changes::CHANGELOG_TEXT, uri),
        _ => return None,
    };
    Some(match &resource.mime_type {
        Some(mime_type) => contents.with_mime_type(mime_type),
        None => contents,
    })
}

/// The contents at `uri` if it matches `template` (`PREFIX{var}`, one path segment).
fn template_contents(template: &ResourceTemplate, uri: &str) -> Option<ResourceContents> {
    let (prefix, _) = template.uri_template.split_once('{')?;
    let id = uri.strip_prefix(prefix)?;
    if id.is_empty() || id.contains('/') {
        return None;
    }
    let text = match template.name.as_str() {
        "item" => format!("item {id}"),
        "user" => format!("user {id}"),
        _ => return None,
    };
    Some(ResourceContents::text(text, uri))
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "greet",
            Some("Ask the model to greet someone"),
            Some(vec![
                PromptArgument::new("name")
                    .with_description("Who to greet")
                    .with_required(true),
                PromptArgument::new("style")
                    .with_description("Greeting style, e.g. formal")
                    .with_required(false),
            ]),
        )
        .with_title("Greet"),
        Prompt::new(
            "summarize",
            Some("Ask the model to summarize the conversation"),
            None,
        )
        .with_title("Summarize"),
    ]
}

fn prompt_arg(
    request: &GetPromptRequestParams,
    name: &str,
    required: bool,
) -> Result<Option<String>, McpError> {
    match request.arguments.as_ref().and_then(|args| args.get(name)) {
        Some(serde_json::Value::String(value)) => Ok(Some(value.clone())),
        Some(other) => Err(McpError::invalid_params(
            format!("prompt argument `{name}` must be a string, got {other}"),
            None,
        )),
        None if required => Err(McpError::invalid_params(
            format!("missing required prompt argument `{name}`"),
            None,
        )),
        None => Ok(None),
    }
}

/// The advertised arguments of `prompt` that `request` must and does not supply.
fn missing_required_argument<'a>(
    prompt: &'a Prompt,
    request: &GetPromptRequestParams,
) -> Option<&'a str> {
    prompt
        .arguments
        .iter()
        .flatten()
        .filter(|argument| argument.required == Some(true))
        .map(|argument| argument.name.as_str())
        .find(|name| {
            request
                .arguments
                .as_ref()
                .is_none_or(|arguments| !arguments.contains_key(*name))
        })
}

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
            if n % 100 == 0 {
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
