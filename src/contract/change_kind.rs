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
}
