//! Contract changes for mcpspec's snapshot and breaking-change tests.
//!
//! Each `--change NAME` flag turns the server into a "next release" that differs from the
//! clean one by exactly one contract change (one list, one item, one path), visible in
//! both eras and on both transports. Flags combine; they are applied in catalog order,
//! item edits before removals, renames and additions.
//!
//! To add one:
//! 1. add a line to the [`changes!`] invocation below (variant, flag name, description),
//! 2. implement it in the one transformation that sees it: [`Changes::apply_tools`] (with
//!    [`tool_edits::tool_edit`] for edits of one tool), [`Changes::prompts`], [`Changes::resources`],
//!    [`Changes::resource_templates`], or the server-level methods
//!    ([`Changes::capabilities`], [`Changes::instructions`],
//!    [`Changes::supported_versions`], [`Changes::serves_prompts`]),
//! 3. if calls must follow the new contract, adapt them in [`Changes::adapt_call`].
//!
//! What reads or gets a changed item (resources/read, prompts/get) is driven by the
//! advertised lists in `server.rs`, so those follow the lists without further code.

mod tool_edits;

use std::{fmt, str::FromStr};

use rmcp::{
    handler::server::router::tool::ToolRouter,
    model::{
        CallToolRequestParams, CallToolResult, JsonObject, Prompt, PromptArgument, ProtocolVersion,
        Resource, ResourceTemplate, ServerCapabilities,
    },
};
use serde_json::{Value, json};

use crate::{server::ExampleServer, tools};

use tool_edits::tool_edit;

/// Defines [`Change`] and its catalog from one list, so the two cannot drift apart.
macro_rules! changes {
    ($($group:literal { $($variant:ident = $name:literal : $description:literal,)+ })+) => {
        /// One contract change, as parsed from `--change`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[allow(clippy::enum_variant_names, reason = "named after the flags")]
        pub enum Change {
            $($($variant,)+)+
        }

        impl Change {
            /// Every change, in the order of `--help`.
            pub const CATALOG: &'static [ChangeInfo] = &[
                $($(ChangeInfo {
                    change: Change::$variant,
                    name: $name,
                    group: $group,
                    description: $description,
                },)+)+
            ];
        }
    };
}

changes! {
    "tools (tools/list)" {
        RemoveTool = "remove-tool": "tool `divide` removed",
        RenameTool = "rename-tool": "tool `get_weather` renamed `get_forecast` (same schemas and description)",
        AddTool = "add-tool": "new read-only tool `multiply` {a, b} -> {product}",
        AddRequiredParam = "add-required-param": "get_weather gains required parameter `country` (string)",
        AddOptionalParam = "add-optional-param": "get_weather gains optional parameter `lang` (string)",
        ParamBecameRequired = "param-became-required": "get_weather.units becomes required",
        ParamBecameOptional = "param-became-optional": "add.b is no longer required (defaults to 0)",
        RemoveParam = "remove-param": "get_weather.units removed",
        AddEnum = "add-enum": "echo.text gets enum [hello, world]",
        ShrinkEnum = "shrink-enum": "get_weather.units enum loses `fahrenheit`",
        WidenEnum = "widen-enum": "get_weather.units enum gains `kelvin`",
        ChangeType = "change-type": "add.a type number -> string (numeric strings are added)",
        WidenType = "widen-type": "add.a type number -> [number, string]",
        AddMaximum = "add-maximum": "slow.ms gets maximum 1000",
        RaiseMinimum = "raise-minimum": "slow.ms minimum 0 -> 10",
        LowerMinimum = "lower-minimum": "slow.ms minimum 0 -> -5 (negative sleeps are 0 ms)",
        AddMaxLength = "add-max-length": "echo.text gets maxLength 100",
        AddPattern = "add-pattern": "get_weather.city gets pattern ^[A-Z]",
        AddFormat = "add-format": "create_note.title gets format `email`",
        CloseAdditionalProperties = "close-additional-properties": "add's inputSchema gets additionalProperties: false",
        AddConst = "add-const": "echo.text gets const \"hi\"",
        AddOneOf = "add-oneof": "add.a type number -> oneOf [{type: number}, {type: string}]",
        AddRef = "add-ref": "get_weather.units moves to $defs.units, the property becomes {$ref: #/$defs/units}",
    }
    "tool output schemas (tools/list; calls follow)" {
        RemoveOutputProperty = "remove-output-property": "get_weather output drops `conditions`",
        RenameOutputProperty = "rename-output-property": "get_weather output `temperature` -> `temp`",
        ChangeOutputType = "change-output-type": "add output `sum` number -> string (and returns a string)",
        OutputPropertyOptional = "output-property-optional": "get_weather output `conditions` leaves required",
        AddOutputProperty = "add-output-property": "get_weather output gains optional `humidity` (and returns it)",
        RemoveOutputSchema = "remove-output-schema": "add loses its outputSchema",
        AddOutputSchema = "add-output-schema": "echo gains outputSchema {text: string} (and returns structuredContent)",
    }
    "tool metadata (tools/list)" {
        ChangeDescription = "change-description": "echo's description edited",
        ChangeTitle = "change-title": "echo's title edited",
        ChangeAnnotations = "change-annotations": "get_weather annotations.openWorldHint false -> true",
        ChangeParamDescription = "change-param-description": "add.a description edited",
    }
    "x-mcp-header (tools/list)" {
        InvalidXMcpHeader = "invalid-x-mcp-header": "get_weather.city gets \"x-mcp-header\": \"City Name\" (invalid: space)",
        ValidXMcpHeader = "valid-x-mcp-header": "get_weather.city gets \"x-mcp-header\": \"City\"",
    }
    "tool execution (tools/list, 2025-11-25 ToolExecution; listed only)" {
        TaskSupportOptional = "task-support-optional": "slow gets execution.taskSupport \"optional\" (from the default \"forbidden\")",
        TaskSupportRequired = "task-support-required": "slow gets execution.taskSupport \"required\" (from the default \"forbidden\")",
    }
    "prompts (prompts/list)" {
        RemovePrompt = "remove-prompt": "prompt `summarize` removed",
        AddPrompt = "add-prompt": "new prompt `translate` with required argument `text`",
        RenamePrompt = "rename-prompt": "prompt `summarize` renamed `summarise`",
        PromptRequiredArg = "prompt-required-arg": "greet gains required argument `language`",
        PromptOptionalArg = "prompt-optional-arg": "greet gains optional argument `emoji`",
        PromptArgBecameRequired = "prompt-arg-became-required": "greet.style becomes required",
        PromptDescription = "prompt-description": "greet's description edited",
    }
    "resources (resources/list)" {
        RemoveResource = "remove-resource": "resource example://logo removed",
        AddResource = "add-resource": "new resource example://changelog",
        ChangeResourceUri = "change-resource-uri": "example://readme -> example://docs/readme (same name)",
        ChangeResourceMime = "change-resource-mime": "readme mimeType text/markdown -> text/plain",
        ChangeResourceDescription = "change-resource-description": "readme's description edited",
    }
    "resource templates (resources/templates/list)" {
        RemoveTemplate = "remove-template": "template example://items/{id} removed",
        AddTemplate = "add-template": "new template example://users/{id}",
        ChangeTemplateUri = "change-template-uri": "example://items/{id} -> example://items/{itemId} (same name)",
    }
    "server (server/discover, initialize)" {
        RemoveCapability = "remove-capability": "prompts capability dropped; prompts/* answer -32601",
        AddCapabilityFlag = "add-capability-flag": "capabilities.tools.listChanged: true",
        AddExtension = "add-extension": "capabilities.extensions gains \"io.example/audit\": {}",
        DropLegacy = "drop-legacy": "supportedVersions [2026-07-28] only; initialize is refused",
        ChangeInstructions = "change-instructions": "instructions edited",
    }
    "eval (tool descriptions a model reads; see examples/model-server)" {
        EchoClaimsWeather = "echo-claims-weather": "echo's description edited to claim weather reports: a model now picks echo for weather tasks",
        AddGreetingTool = "add-greeting-tool": "new tool `send_greeting` that a model wrongly calls when asked only to write a greeting",
    }
}

/// Static description of one change flag.
#[derive(Debug)]
pub struct ChangeInfo {
    pub change: Change,
    pub name: &'static str,
    /// Heading of the `--help` section the change is listed under.
    pub group: &'static str,
    pub description: &'static str,
}

impl Change {
    pub fn info(self) -> &'static ChangeInfo {
        Self::CATALOG
            .iter()
            .find(|info| info.change == self)
            .expect("every change has a catalog entry")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The catalog, one change a line, grouped by what it changes.
    fn catalog_lines() -> String {
        let mut text = String::new();
        let mut group = "";
        for info in Self::CATALOG {
            if info.group != group {
                group = info.group;
                text.push_str(&format!(" {group}:\n"));
            }
            text.push_str(&format!("  {:<29} {}\n", info.name, info.description));
        }
        text
    }

    /// The catalog as help text.
    pub fn catalog_help() -> String {
        format!(
            "Contract changes (--change NAME, repeatable; each makes this a \"next release\" \
             with exactly one contract change):\n{}",
            Self::catalog_lines()
        )
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Change {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::CATALOG
            .iter()
            .find(|info| info.name == name)
            .map(|info| info.change)
            .ok_or_else(|| {
                format!(
                    "unknown change `{name}`; valid changes:\n{}",
                    Self::catalog_lines()
                )
            })
    }
}

/// The set of changes a process runs with.
#[derive(Clone, Debug, Default)]
pub struct Changes(Vec<Change>);

impl Changes {
    /// Keeps each change once, in catalog order (the order they are applied in).
    pub fn new(changes: Vec<Change>) -> Self {
        Self(
            Change::CATALOG
                .iter()
                .map(|info| info.change)
                .filter(|change| changes.contains(change))
                .collect(),
        )
    }

    pub fn has(&self, change: Change) -> bool {
        self.0.contains(&change)
    }

    // -----------------------------------------------------------------------
    // Lists.
    // -----------------------------------------------------------------------

    /// Applies the tool changes to the router, so `tools/list`, the tool lookups of the
    /// HTTP header checks and `tools/call` dispatch all see the same tools.
    pub fn apply_tools(&self, router: &mut ToolRouter<ExampleServer>) {
        for &change in &self.0 {
            if let Some((name, edit)) = tool_edit(change)
                && let Some(route) = router.map.get_mut(name)
            {
                edit(&mut route.attr);
            }
        }
        if self.has(Change::RemoveTool) {
            router.remove_route("divide");
        }
        if self.has(Change::RenameTool)
            && let Some(mut route) = router.map.remove("get_weather")
        {
            route.attr.name = RENAMED_WEATHER_TOOL.into();
            router.add_route(route);
        }
        if self.has(Change::AddTool) {
            router.add_route(tools::multiply_route());
        }
        if self.has(Change::AddGreetingTool) {
            router.add_route(tools::greeting_route());
        }
    }

    pub fn prompts(&self, mut prompts: Vec<Prompt>) -> Vec<Prompt> {
        for &change in &self.0 {
            let greet = prompts.iter_mut().find(|prompt| prompt.name == "greet");
            match (change, greet) {
                (Change::PromptRequiredArg, Some(greet)) => {
                    greet.arguments.get_or_insert_default().push(
                        PromptArgument::new("language")
                            .with_description("Language of the greeting")
                            .with_required(true),
                    )
                }
                (Change::PromptOptionalArg, Some(greet)) => {
                    greet.arguments.get_or_insert_default().push(
                        PromptArgument::new("emoji")
                            .with_description("An emoji to end the greeting with")
                            .with_required(false),
                    )
                }
                (Change::PromptArgBecameRequired, Some(greet)) => {
                    for argument in greet.arguments.iter_mut().flatten() {
                        if argument.name == "style" {
                            argument.required = Some(true);
                        }
                    }
                }
                (Change::PromptDescription, Some(greet)) => {
                    greet.description = Some("Ask the model to greet someone by name".to_owned());
                }
                _ => {}
            }
        }
        if self.has(Change::RemovePrompt) {
            prompts.retain(|prompt| prompt.name != "summarize");
        }
        if self.has(Change::RenamePrompt) {
            for prompt in &mut prompts {
                if prompt.name == "summarize" {
                    prompt.name = "summarise".to_owned();
                }
            }
        }
        if self.has(Change::AddPrompt) {
            prompts.push(
                Prompt::new(
                    "translate",
                    Some("Ask the model to translate a text into English"),
                    Some(vec![
                        PromptArgument::new("text")
                            .with_description("Text to translate")
                            .with_required(true),
                    ]),
                )
                .with_title("Translate"),
            );
        }
        prompts
    }

    pub fn resources(&self, mut resources: Vec<Resource>) -> Vec<Resource> {
        for resource in resources.iter_mut().filter(|r| r.name == "readme") {
            if self.has(Change::ChangeResourceUri) {
                resource.uri = "example://docs/readme".to_owned();
            }
            if self.has(Change::ChangeResourceMime) {
                resource.mime_type = Some("text/plain".to_owned());
            }
            if self.has(Change::ChangeResourceDescription) {
                resource.description = Some("What this server is and what it is for".to_owned());
            }
        }
        if self.has(Change::RemoveResource) {
            resources.retain(|resource| resource.name != "logo");
        }
        if self.has(Change::AddResource) {
            resources.push(
                Resource::new(CHANGELOG_URI, "changelog")
                    .with_title("Changelog")
                    .with_description("What changed in this release")
                    .with_mime_type("text/markdown")
                    .with_size(CHANGELOG_TEXT.len() as u64),
            );
        }
        resources
    }

    pub fn resource_templates(
        &self,
        mut templates: Vec<ResourceTemplate>,
    ) -> Vec<ResourceTemplate> {
        if self.has(Change::ChangeTemplateUri) {
            for template in templates.iter_mut().filter(|t| t.name == "item") {
                template.uri_template = "example://items/{itemId}".to_owned();
            }
        }
        if self.has(Change::RemoveTemplate) {
            templates.retain(|template| template.name != "item");
        }
        if self.has(Change::AddTemplate) {
            templates.push(
                ResourceTemplate::new("example://users/{id}", "user")
                    .with_title("User")
                    .with_description("A user by id; reading example://users/7 returns \"user 7\"")
                    .with_mime_type("text/plain"),
            );
        }
        templates
    }

    // -----------------------------------------------------------------------
    // Server level.
    // -----------------------------------------------------------------------

    pub fn capabilities(&self, mut capabilities: ServerCapabilities) -> ServerCapabilities {
        if self.has(Change::RemoveCapability) {
            capabilities.prompts = None;
        }
        if self.has(Change::AddCapabilityFlag)
            && let Some(tools) = capabilities.tools.as_mut()
        {
            tools.list_changed = Some(true);
        }
        if self.has(Change::AddExtension) {
            capabilities
                .extensions
                .get_or_insert_default()
                .insert("io.example/audit".to_owned(), JsonObject::new());
        }
        capabilities
    }

    pub fn instructions(&self, clean: &'static str) -> &'static str {
        if self.has(Change::ChangeInstructions) {
            "Example server for mcpspec. All tools are deterministic."
        } else {
            clean
        }
    }

    /// `drop-legacy` keeps only the modern revision: rmcp then advertises it alone in
    /// `server/discover` and refuses `initialize` (no version with a handshake is left).
    pub fn supported_versions(
        &self,
        clean: &'static [ProtocolVersion],
    ) -> &'static [ProtocolVersion] {
        if self.has(Change::DropLegacy) {
            &[ProtocolVersion::V_2026_07_28]
        } else {
            clean
        }
    }

    /// The `execution` a tool's listing gains (`task-support-*`): rmcp's `Tool` has no
    /// such field, so the listed JSON is rewritten (see `defects::MessageDefects`).
    pub fn tool_execution(&self) -> Option<(&'static str, Value)> {
        if self.has(Change::TaskSupportRequired) {
            Some(("slow", json!({"taskSupport": "required"})))
        } else if self.has(Change::TaskSupportOptional) {
            Some(("slow", json!({"taskSupport": "optional"})))
        } else {
            None
        }
    }

    /// False under `remove-capability`: prompts/list and prompts/get are then unknown
    /// methods (-32601), as for a server without the prompts capability.
    pub fn serves_prompts(&self) -> bool {
        !self.has(Change::RemoveCapability)
    }

    // -----------------------------------------------------------------------
    // Calls: a next release's tools honour their new contract.
    // -----------------------------------------------------------------------

    /// Rewrites a `tools/call` so the clean tool implementation can serve the changed
    /// contract; returns what to do to the tool's result.
    pub fn adapt_call(&self, request: &mut CallToolRequestParams) -> ResultFix {
        let mut fix = ResultFix::default();
        let tool = match request.name.as_ref() {
            RENAMED_WEATHER_TOOL if self.has(Change::RenameTool) => "get_weather",
            name => name,
        };
        // An absent `arguments` stays absent (such a call fails as it did before).
        let mut no_arguments = JsonObject::new();
        let arguments = request.arguments.as_mut().unwrap_or(&mut no_arguments);
        match tool {
            "add" => {
                if self.has(Change::ChangeType)
                    || self.has(Change::WidenType)
                    || self.has(Change::AddOneOf)
                {
                    // A numeric string is a number to add; any other string stays an error.
                    if let Some(a) = arguments.get_mut("a")
                        && let Some(number) = a.as_str().and_then(|s| s.trim().parse().ok())
                    {
                        *a = tools::number(number);
                    }
                }
                if self.has(Change::ParamBecameOptional) && !arguments.contains_key("b") {
                    arguments.insert("b".to_owned(), json!(0));
                }
                fix.sum_as_string = self.has(Change::ChangeOutputType);
            }
            "slow" => {
                if self.has(Change::LowerMinimum)
                    && let Some(ms) = arguments.get_mut("ms")
                    && ms.as_i64().is_some_and(|ms| ms < 0)
                {
                    *ms = json!(0);
                }
            }
            "get_weather" => {
                if self.has(Change::WidenEnum)
                    && arguments.get("units").and_then(Value::as_str) == Some("kelvin")
                {
                    arguments.insert("units".to_owned(), json!("celsius"));
                    fix.kelvin = true;
                }
                fix.drop_conditions = self.has(Change::RemoveOutputProperty);
                fix.rename_temperature = self.has(Change::RenameOutputProperty);
                fix.add_humidity = self.has(Change::AddOutputProperty);
            }
            "echo" => fix.echo_structured = self.has(Change::AddOutputSchema),
            _ => {}
        }
        fix
    }
}

/// Rewrites of one successful tool result, so it matches the changed output schema.
#[derive(Debug, Default)]
pub struct ResultFix {
    kelvin: bool,
    drop_conditions: bool,
    rename_temperature: bool,
    add_humidity: bool,
    sum_as_string: bool,
    echo_structured: bool,
}

impl ResultFix {
    fn any(&self) -> bool {
        self.kelvin
            || self.drop_conditions
            || self.rename_temperature
            || self.add_humidity
            || self.sum_as_string
            || self.echo_structured
    }

    /// Applies the rewrites to `result` (a tool error is left alone).
    pub fn apply(&self, result: &mut CallToolResult) {
        if !self.any() || result.is_error == Some(true) {
            return;
        }
        if self.echo_structured {
            let text = result
                .content
                .first()
                .and_then(|block| block.as_text())
                .map(|text| text.text.clone())
                .unwrap_or_default();
            *result = CallToolResult::structured(json!({ "text": text }));
            return;
        }
        let Some(Value::Object(mut object)) = result.structured_content.clone() else {
            return;
        };
        if self.kelvin
            && let Some(celsius) = object.get("temperature").and_then(Value::as_f64)
        {
            let kelvin = ((celsius + 273.15) * 100.0).round() / 100.0;
            object.insert("temperature".to_owned(), tools::number(kelvin));
        }
        if self.drop_conditions {
            object.remove("conditions");
        }
        if self.add_humidity {
            let city_len = object
                .get("city")
                .and_then(Value::as_str)
                .map_or(0, |city| city.chars().count());
            object.insert("humidity".to_owned(), json!(40 + city_len * 7 % 50));
        }
        if self.rename_temperature
            && let Some(temperature) = object.remove("temperature")
        {
            object.insert("temp".to_owned(), temperature);
        }
        if self.sum_as_string
            && let Some(sum) = object.get_mut("sum")
        {
            *sum = Value::String(sum.to_string());
        }
        *result = CallToolResult::structured(Value::Object(object));
    }
}

/// `rename-tool`'s new name of `get_weather`.
const RENAMED_WEATHER_TOOL: &str = "get_forecast";

/// `add-resource`'s resource.
pub const CHANGELOG_URI: &str = "example://changelog";
pub const CHANGELOG_TEXT: &str =
    "# Changelog\n\n## 1.1.0\n\n- Next release of the mcpspec example server.\n";

// ---------------------------------------------------------------------------
// Tool edits: each changes one path of one tool.
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        for (i, info) in Change::CATALOG.iter().enumerate() {
            assert_eq!(info.name.parse::<Change>(), Ok(info.change));
            assert_eq!(info.change.name(), info.name);
            assert!(
                Change::CATALOG[..i]
                    .iter()
                    .all(|other| other.name != info.name),
                "duplicate {}",
                info.name
            );
        }
    }

    #[test]
    fn unknown_name_lists_every_change() {
        let error = "nope".parse::<Change>().unwrap_err();
        for info in Change::CATALOG {
            assert!(error.contains(info.name) && error.contains(info.description));
        }
    }
}
