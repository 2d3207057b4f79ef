//! The MCP handler: identity, tools dispatch, resources, prompts, pagination, and the
//! modern-era result decorations (`_meta` serverInfo, cache hints).
//!
//! The lists are built once at start, with the `--change` contract changes applied and
//! in delivery order (`--reverse-order`); reads and prompt gets are driven by them.

mod handler;

use std::{
    collections::HashMap,
    hash::{BuildHasher, Hasher, RandomState},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{SystemTime, UNIX_EPOCH},
};

use rmcp::{
    ErrorData as McpError, RoleServer,
    handler::server::router::tool::ToolRouter,
    model::{
        CacheScope, ErrorCode, GetPromptRequestParams, Implementation, MetaObject,
        PaginatedRequestParams, Prompt, PromptArgument, ProtocolVersion, Resource,
        ResourceContents, ResourceTemplate, Tool,
    },
    service::RequestContext,
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
