//! Every kind of change `mcpspec diff` reports, as one enum: the comparators emit it, the
//! rules file names it (checked against [`ChangeKind::ALL`]), the reports print
//! [`ChangeKind::as_str`]. A new kind is one line below; every `match` on the enum is
//! exhaustive, so the compiler lists what must decide about it.

use std::fmt;

/// Declares the enum, [`ChangeKind::ALL`] and [`ChangeKind::as_str`] from one list, so
/// none of the three can miss a kind.
macro_rules! change_kinds {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// One kind of change between two snapshots.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ChangeKind {
            $($(#[$doc])* $variant,)*
        }

        impl ChangeKind {
            /// Every kind, in the order the docs list them (items, tool input schemas,
            /// tool output schemas, prompts, server).
            pub const ALL: &[ChangeKind] = &[$(ChangeKind::$variant,)*];

            /// The kind's name in reports and rules files: `required_parameter_added`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ChangeKind::$variant => $name,)*
                }
            }
        }
    };
}

change_kinds! {
    // items
    Removed = "removed",
    Added = "added",
    Renamed = "renamed",
    TitleChanged = "title_changed",
    DescriptionChanged = "description_changed",
    AnnotationsChanged = "annotations_changed",
    NameChanged = "name_changed",
    UriChanged = "uri_changed",
    UriTemplateChanged = "uri_template_changed",
    MimeTypeChanged = "mime_type_changed",
    // tool input schemas
    RequiredParameterAdded = "required_parameter_added",
    OptionalParameterAdded = "optional_parameter_added",
    ParameterRemoved = "parameter_removed",
    ParameterRenamed = "parameter_renamed",
    ParameterBecameRequired = "parameter_became_required",
    ParameterBecameOptional = "parameter_became_optional",
    TypeChanged = "type_changed",
    TypeWidened = "type_widened",
    EnumAdded = "enum_added",
    EnumValuesRemoved = "enum_values_removed",
    EnumValuesAdded = "enum_values_added",
    EnumRemoved = "enum_removed",
    ConstAdded = "const_added",
    ConstChanged = "const_changed",
    ConstRemoved = "const_removed",
    BoundNarrowed = "bound_narrowed",
    BoundWidened = "bound_widened",
    PatternAdded = "pattern_added",
    PatternChanged = "pattern_changed",
    PatternRemoved = "pattern_removed",
    FormatAdded = "format_added",
    FormatChanged = "format_changed",
    FormatRemoved = "format_removed",
    AdditionalPropertiesRestricted = "additional_properties_restricted",
    AdditionalPropertiesRelaxed = "additional_properties_relaxed",
    ParameterDescriptionChanged = "parameter_description_changed",
    ParameterTitleChanged = "parameter_title_changed",
    DefaultChanged = "default_changed",
    UnknownSchemaChange = "unknown_schema_change",
    InvalidXMcpHeader = "invalid_x_mcp_header",
    XMcpHeaderAdded = "x_mcp_header_added",
    XMcpHeaderChanged = "x_mcp_header_changed",
    XMcpHeaderRemoved = "x_mcp_header_removed",
    TaskSupportNarrowed = "task_support_narrowed",
    TaskSupportWidened = "task_support_widened",
    ExecutionChanged = "execution_changed",
    // tool output schemas
    OutputPropertyRemoved = "output_property_removed",
    OutputPropertyRenamed = "output_property_renamed",
    OutputPropertyAdded = "output_property_added",
    OutputPropertyNoLongerRequired = "output_property_no_longer_required",
    OutputPropertyNowRequired = "output_property_now_required",
    OutputSchemaAdded = "output_schema_added",
    OutputSchemaRemoved = "output_schema_removed",
    // prompts
    RequiredArgumentAdded = "required_argument_added",
    OptionalArgumentAdded = "optional_argument_added",
    ArgumentRemoved = "argument_removed",
    ArgumentBecameRequired = "argument_became_required",
    ArgumentBecameOptional = "argument_became_optional",
    ArgumentDescriptionChanged = "argument_description_changed",
    ArgumentTitleChanged = "argument_title_changed",
    // server
    ProtocolVersionDropped = "protocol_version_dropped",
    ProtocolVersionAdded = "protocol_version_added",
    CapabilityRemoved = "capability_removed",
    CapabilityAdded = "capability_added",
    CapabilityChanged = "capability_changed",
    ExtensionRemoved = "extension_removed",
    ExtensionAdded = "extension_added",
    InstructionsChanged = "instructions_changed",
}

impl ChangeKind {
    /// The kind of that name, if there is one.
    pub fn parse(name: &str) -> Option<ChangeKind> {
        ChangeKind::ALL.iter().copied().find(|k| k.as_str() == name)
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ChangeKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One row of the change-kind table of the docs: the kinds (with notes, as Markdown) of one
/// list that share a verdict.
pub struct Row {
    pub list: &'static str,
    pub kinds: &'static str,
    pub breaks_clients: &'static str,
    pub affects_models: &'static str,
}

/// The change-kind table of the docs, row by row: the one place it is written. Tests hold
/// it to [`ChangeKind::ALL`] (every kind has a row) and to the schema comparator's
/// verdicts (a schema row says what the comparator decides).
pub const TABLE: &[Row] = &[
    Row {
        list: "any",
        kinds: "`removed`",
        breaks_clients: "true",
        affects_models: "true",
    },
    Row {
        list: "any",
        kinds: "`added`",
        breaks_clients: "false",
        affects_models: "true",
    },
    Row {
        list: "tools, prompts",
        kinds: "`renamed` (a removed and an added item with equal schemas/arguments: a probable rename)",
        breaks_clients: "true",
        affects_models: "true",
    },
    Row {
        list: "tools, prompts, resources",
        kinds: "`title_changed`, `description_changed`",
        breaks_clients: "false",
        affects_models: "true",
    },
    Row {
        list: "tools",
        kinds: "`annotations_changed`",
        breaks_clients: "false",
        affects_models: "possibly",
    },
    Row {
        list: "resources",
        kinds: "`uri_changed` (same name, new URI) / templates: `uri_template_changed`",
        breaks_clients: "true",
        affects_models: "possibly",
    },
    Row {
        list: "resources, templates",
        kinds: "`mime_type_changed`",
        breaks_clients: "true",
        affects_models: "possibly",
    },
    Row {
        list: "resources, templates",
        kinds: "`name_changed`",
        breaks_clients: "false",
        affects_models: "possibly",
    },
    Row {
        list: "tools (input)",
        kinds: "`required_parameter_added`, `parameter_removed`, `parameter_renamed`, `parameter_became_required`",
        breaks_clients: "true",
        affects_models: "true",
    },
    Row {
        list: "tools (input)",
        kinds: "`optional_parameter_added`, `parameter_became_optional`",
        breaks_clients: "false",
        affects_models: "possibly",
    },
    Row {
        list: "tools (input)",
        kinds: "`type_changed` (narrowed or incompatible), `enum_added`, `enum_values_removed`, `const_added`, `const_changed`",
        breaks_clients: "true",
        affects_models: "true",
    },
    Row {
        list: "tools (input)",
        kinds: "`type_widened`, `enum_values_added`, `enum_removed`, `const_removed`",
        breaks_clients: "false",
        affects_models: "possibly",
    },
    Row {
        list: "tools (input)",
        kinds: "`bound_narrowed` (lower `maximum`, higher `minimum`, length/items/properties bounds, `multipleOf`, `uniqueItems`), `pattern_added`/`_changed`, `format_added`/`_changed`, `additional_properties_restricted`",
        breaks_clients: "true",
        affects_models: "true",
    },
    Row {
        list: "tools (input)",
        kinds: "`bound_widened`, `pattern_removed`, `format_removed`, `additional_properties_relaxed`",
        breaks_clients: "false",
        affects_models: "false",
    },
    Row {
        list: "tools (input)",
        kinds: "`parameter_description_changed`, `parameter_title_changed`",
        breaks_clients: "false",
        affects_models: "true",
    },
    Row {
        list: "tools (input)",
        kinds: "`default_changed`",
        breaks_clients: "false",
        affects_models: "possibly",
    },
    Row {
        list: "tools (output)",
        kinds: "`parameter_description_changed`",
        breaks_clients: "false",
        affects_models: "possibly",
    },
    Row {
        list: "tools (output)",
        kinds: "`parameter_title_changed`, `default_changed`",
        breaks_clients: "false",
        affects_models: "false",
    },
    Row {
        list: "tools (output)",
        kinds: "`output_property_removed`, `output_property_renamed`, `output_property_no_longer_required`, `type_changed` (any), `output_schema_removed`",
        breaks_clients: "true",
        affects_models: "possibly",
    },
    Row {
        list: "tools (output)",
        kinds: "changes that let the output hold more values: `enum_values_added`, `enum_removed`, `const_removed`, `const_changed`, `bound_widened`, `pattern_removed`/`_changed`, `format_removed`/`_changed`, `additional_properties_relaxed`",
        breaks_clients: "true",
        affects_models: "possibly",
    },
    Row {
        list: "tools (output)",
        kinds: "`output_property_added`, `output_schema_added`",
        breaks_clients: "false",
        affects_models: "possibly",
    },
    Row {
        list: "tools (output)",
        kinds: "`output_property_now_required` and changes that narrow the output",
        breaks_clients: "false",
        affects_models: "false",
    },
    Row {
        list: "tools",
        kinds: "`unknown_schema_change` (`$ref`, `$defs`, `oneOf`/`anyOf`/`allOf`/`not`, `if`/`then`/`else`, `patternProperties`, … differ: one change at that node, nothing guessed below it)",
        breaks_clients: "unknown",
        affects_models: "possibly",
    },
    Row {
        list: "tools",
        kinds: "`task_support_narrowed` (`execution.taskSupport` — absent means `forbidden` — becomes `required`, or `forbidden` where tasks were allowed: a call that worked is refused)",
        breaks_clients: "true",
        affects_models: "false",
    },
    Row {
        list: "tools",
        kinds: "`task_support_widened` (`forbidden` → `optional`, `required` → `optional`)",
        breaks_clients: "false",
        affects_models: "false",
    },
    Row {
        list: "tools",
        kinds: "`execution_changed` (another field of `execution`)",
        breaks_clients: "unknown",
        affects_models: "false",
    },
    Row {
        list: "tools",
        kinds: "`invalid_x_mcp_header` (HTTP clients must drop the tool: non-`tchar` value, duplicate, wrong type, not reachable through `properties`, integer range)",
        breaks_clients: "true",
        affects_models: "true",
    },
    Row {
        list: "tools",
        kinds: "`x_mcp_header_added` / `_changed` / `_removed` (clients re-fetch on -32020)",
        breaks_clients: "false",
        affects_models: "false",
    },
    Row {
        list: "prompts",
        kinds: "`required_argument_added`, `argument_removed`, `argument_became_required`",
        breaks_clients: "true",
        affects_models: "true",
    },
    Row {
        list: "prompts",
        kinds: "`optional_argument_added`, `argument_became_optional`",
        breaks_clients: "false",
        affects_models: "possibly",
    },
    Row {
        list: "prompts",
        kinds: "`argument_description_changed`, `argument_title_changed`",
        breaks_clients: "false",
        affects_models: "true",
    },
    Row {
        list: "server",
        kinds: "`protocol_version_dropped` (breaks that era's clients)",
        breaks_clients: "true",
        affects_models: "false",
    },
    Row {
        list: "server",
        kinds: "`protocol_version_added`",
        breaks_clients: "false",
        affects_models: "false",
    },
    Row {
        list: "server",
        kinds: "`capability_removed` (also a flag turned off), `extension_removed`",
        breaks_clients: "true",
        affects_models: "possibly",
    },
    Row {
        list: "server",
        kinds: "`capability_added`, `capability_changed`, `extension_added`",
        breaks_clients: "false",
        affects_models: "possibly",
    },
    Row {
        list: "server",
        kinds: "`instructions_changed`",
        breaks_clients: "false",
        affects_models: "true",
    },
];

/// [`TABLE`] as the Markdown table the docs print.
pub fn markdown_table() -> String {
    let mut out =
        String::from("| list | kind | breaks clients | affects models |\n|---|---|---|---|\n");
    for row in TABLE {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            row.list, row.kinds, row.breaks_clients, row.affects_models
        ));
    }
    out
}

impl Row {
    /// The kinds the row names: its backticked words that are kinds, and the short forms
    /// after one (`pattern_added`/`_changed` names `pattern_changed`).
    pub fn named(&self) -> Vec<ChangeKind> {
        let mut out: Vec<ChangeKind> = Vec::new();
        for word in self.kinds.split('`').skip(1).step_by(2) {
            let full = match (word.strip_prefix('_'), out.last()) {
                (Some(_), Some(prev)) => {
                    let stem = prev.as_str().rsplit_once('_').map_or("", |(s, _)| s);
                    format!("{stem}{word}")
                }
                _ => word.to_string(),
            };
            out.extend(ChangeKind::parse(&full));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        let mut seen = std::collections::HashSet::new();
        for kind in ChangeKind::ALL {
            assert!(seen.insert(kind.as_str()), "{kind} twice");
            assert_eq!(ChangeKind::parse(kind.as_str()), Some(*kind));
        }
        assert_eq!(ChangeKind::parse("no_such_kind"), None);
    }

    #[test]
    fn every_kind_has_a_row_of_the_table() {
        let named: std::collections::HashSet<ChangeKind> =
            TABLE.iter().flat_map(Row::named).collect();
        let missing: Vec<&str> = ChangeKind::ALL
            .iter()
            .filter(|k| !named.contains(k))
            .map(|k| k.as_str())
            .collect();
        assert!(missing.is_empty(), "kinds without a row: {missing:?}");
    }

    #[test]
    fn the_markdown_table_has_a_line_per_row() {
        let table = markdown_table();
        assert_eq!(table.lines().count(), TABLE.len() + 2);
        assert!(table.contains("| any | `removed` | true | true |"));
    }
}
